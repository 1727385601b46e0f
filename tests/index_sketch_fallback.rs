//! `IndexOptions::sketch_fallback`: the clause-sketch keys are read only when the content and
//! fingerprint keys found nobody. Pages that only the sketch joins are still found; pages the
//! fingerprints join are decided as before; the setting may change between openings.
mod common;
use common::*;
use neardup::{Index, IndexOptions, Signatures};

fn opts(fallback: bool) -> IndexOptions {
    IndexOptions {
        sketch_fallback: fallback,
        ..IndexOptions::default()
    }
}

/// A short page: a few long sentences (clauses of the sketch) and too few of them for any
/// sentence fingerprint, with `own` sentences of its own.
fn short_page(shared: &[String], own: u64) -> String {
    let mut paras: Vec<String> = shared.to_vec();
    paras.push(format!(
        "Page {own} adds a closing remark about its own subject, number {own}, at the end."
    ));
    html(0, "t", &[paras.join(" ")])
}

#[test]
fn a_pair_only_the_sketch_joins_is_still_found() {
    let shared: Vec<String> = (0..4)
        .map(|i| format!("The committee met on day {i} to discuss the river crossing and the new toll road plans."))
        .collect();
    let (a, b) = (short_page(&shared, 1), short_page(&shared, 2));
    let cfg = neardup::SignatureConfig::default();
    let sa = Signatures::compute(neardup::Content::Html(a.as_bytes()), &cfg).unwrap();
    let sb = Signatures::compute(neardup::Content::Html(b.as_bytes()), &cfg).unwrap();
    // The premise: no fingerprint, shared sketch keys, different content.
    assert!(sa.fingerprints.is_empty() && sb.fingerprints.is_empty());
    assert!(sa.sketch.iter().any(|k| sb.sketch.contains(k)));
    assert_ne!(sa.content_hash, sb.content_hash);
    for fallback in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let ix = Index::open(dir.path(), opts(fallback)).unwrap();
        ix.insert(&page("a", "h", &a)).unwrap();
        let v = ix.insert(&page("b", "h", &b)).unwrap();
        assert!(v.candidates > 0, "fallback {fallback}");
        assert!(v.duplicate, "fallback {fallback}");
        assert_eq!(v.similar_to.as_deref(), Some("a"));
        assert_clean(&ix);
    }
}

#[test]
fn fingerprint_families_are_decided_alike_and_the_setting_can_change() {
    let mut docs = Vec::new();
    for f in 0..6u64 {
        let base = article(700 + f, 6);
        docs.push((format!("f{f}"), html(0, "t", &base)));
        docs.push((format!("f{f}-e"), html(1, "t", &edited(&base, f))));
        docs.push((format!("f{f}-c"), html(2, "t", &base)));
    }
    let export = |fallback: bool| {
        let dir = tempfile::tempdir().unwrap();
        {
            let ix = Index::open(dir.path(), opts(fallback)).unwrap();
            for (k, h) in &docs[..9] {
                ix.insert(&page(k, "h", h)).unwrap();
            }
        }
        // Reopened with the other setting: the index takes it.
        let ix = Index::open(dir.path(), opts(!fallback)).unwrap();
        assert_eq!(ix.options().sketch_fallback, !fallback);
        for (k, h) in &docs[9..] {
            ix.insert(&page(k, "h", h)).unwrap();
        }
        assert_clean(&ix);
        let mut e = Vec::new();
        ix.export(|k, r| e.push((k.to_string(), r.to_string())))
            .unwrap();
        e
    };
    let (off, on) = (export(false), export(true));
    assert_eq!(off, on);
    for f in 0..6 {
        let rep = |k: String| off.iter().find(|(x, _)| *x == k).unwrap().1.clone();
        assert_eq!(rep(format!("f{f}-e")), format!("f{f}"));
        assert_eq!(rep(format!("f{f}-c")), format!("f{f}"));
    }
}
