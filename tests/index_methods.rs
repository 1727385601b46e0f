//! Every method behind one index (issue #15): on a small hand-made corpus, in English and in
//! Chinese, each method finds a copy on another site and an edited copy of an article, keeps a
//! sibling page of the same site template (a shared lead sentence, another article) apart,
//! hands a cluster over when its representative is deleted, survives a reopen, and refuses to
//! open under another method.
mod common;
use common::*;

use neardup::{Error, Index, IndexOptions, Method, SignatureConfig};

fn options(method: &Method) -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        signature: SignatureConfig {
            method: method.clone(),
            ..SignatureConfig::default()
        },
        ..IndexOptions::default()
    }
}

/// A Chinese article over a few thousand characters (so unrelated articles share little).
fn article_zh_rich(seed: u64, paras: usize) -> Vec<String> {
    let mut r = Rng(seed);
    (0..paras)
        .map(|_| {
            (0..4 + r.below(3))
                .map(|_| {
                    let n = 12 + r.below(16);
                    let mut s: String = (0..n)
                        .map(|_| char::from_u32(0x4E00 + r.below(3000) as u32).unwrap())
                        .collect();
                    s.push('。');
                    s
                })
                .collect::<String>()
        })
        .collect()
}

/// The article with one token of its last sentence changed.
fn edit_last(paras: &[String], zh: bool) -> Vec<String> {
    let mut out = paras.to_vec();
    let last = out.last_mut().unwrap();
    if zh {
        let mut chars: Vec<char> = last.chars().collect();
        let i = chars.len() - 3;
        chars[i] = '改';
        *last = chars.into_iter().collect();
    } else {
        let mut words: Vec<&str> = last.split(' ').collect();
        let i = words.len() - 2;
        words[i] = "changed";
        *last = words.join(" ");
    }
    out
}

struct Corpus {
    original: String,
    copy: String,
    edited: String,
    sibling: String,
}

fn corpus(zh: bool) -> Corpus {
    let (a, b) = if zh {
        (article_zh_rich(11, 8), article_zh_rich(12, 8))
    } else {
        (article_rich(11, 8), article_rich(12, 8))
    };
    let lead = if zh {
        "本站所有文章均由编辑部整理发布欢迎转载请注明出处。"
    } else {
        "Every story on this site is edited by the newsroom and may be shared with credit."
    };
    let mut sibling = vec![lead.to_string()];
    sibling.extend(b);
    let mut original = vec![lead.to_string()];
    original.extend(a);
    Corpus {
        original: html(0, "Story one", &original),
        copy: html(1, "Story one", &original),
        edited: html(2, "Story one", &edit_last(&original, zh)),
        sibling: html(0, "Story two", &sibling),
    }
}

fn run(method: &Method, zh: bool) {
    let name = format!("{} ({})", method.name(), if zh { "zh" } else { "en" });
    let c = corpus(zh);
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), options(method)).unwrap();
    let v = ix
        .insert(&page("a/original", "a.example", &c.original))
        .unwrap();
    assert!(!v.duplicate, "{name}: the first page");
    let v = ix.insert(&page("b/copy", "b.example", &c.copy)).unwrap();
    assert!(v.duplicate, "{name}: the copy on another site");
    assert_eq!(
        v.representative.as_deref(),
        Some("a/original"),
        "{name}: copy"
    );
    let v = ix
        .insert(&page("c/edited", "c.example", &c.edited))
        .unwrap();
    assert!(v.duplicate, "{name}: the edited copy");
    assert_eq!(
        v.representative.as_deref(),
        Some("a/original"),
        "{name}: edited"
    );
    let v = ix
        .insert(&page("a/sibling", "a.example", &c.sibling))
        .unwrap();
    assert!(
        !v.duplicate,
        "{name}: the template sibling matched {:?}",
        v.similar_to
    );
    assert_clean(&ix);

    // Hand-over: the copy (first seen of the rest) leads; the edited copy stays with it.
    let d = ix.delete("a/original").unwrap();
    assert!(d.was_representative, "{name}");
    assert_eq!(
        d.representative.as_deref(),
        Some("b/copy"),
        "{name}: hand-over"
    );
    assert!(d.moved.is_empty(), "{name}: nobody moves: {:?}", d.moved);
    assert_clean(&ix);

    // Reopen: the method is stored; another one is refused.
    drop(ix);
    let ix = Index::open_existing(dir.path()).unwrap();
    assert_eq!(
        &ix.options().signature.method,
        method,
        "{name}: stored method"
    );
    let v = ix
        .query(neardup::Content::Html(c.edited.as_bytes()))
        .unwrap();
    assert!(v.duplicate, "{name}: query after reopen");
    drop(ix);
    let other = if method.is_lcs() {
        Method::Simhash
    } else {
        Method::Lcs
    };
    match Index::open(dir.path(), options(&other)) {
        Err(Error::IncompatibleConfig { .. }) => {}
        Err(e) => panic!("{name}: reopen under another method: {e}"),
        Ok(_) => panic!("{name}: reopened under another method"),
    }
}

#[test]
fn every_method_finds_copies_and_keeps_template_siblings_apart() {
    for name in Method::NAMES {
        let method = Method::from_name(name).unwrap();
        run(&method, false);
        run(&method, true);
    }
}

#[test]
fn method_names_round_trip_and_unknown_names_are_refused() {
    for name in Method::NAMES {
        assert_eq!(Method::from_name(name).unwrap().name(), name);
    }
    assert_eq!(Method::from_name("single-pass"), Some(Method::SinglePass));
    assert!(Method::from_name("nope").is_none());
}

#[test]
fn bad_method_parameters_are_refused() {
    let bad = Method::Shingle(neardup::methods::ShingleConfig {
        rows: 5,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Index::open(dir.path(), options(&bad)),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn the_default_configuration_is_stored_as_before() {
    // An LCS index writes no method into its configuration: indexes made before methods
    // existed, and their configuration JSON, read the same.
    let json = serde_json::to_string(&SignatureConfig::default()).unwrap();
    assert!(!json.contains("method"), "{json}");
    let shingle = SignatureConfig {
        method: Method::from_name("shingle").unwrap(),
        ..SignatureConfig::default()
    };
    let json = serde_json::to_string(&shingle).unwrap();
    assert!(json.contains(r#""method":{"name":"shingle""#), "{json}");
    let back: SignatureConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(back, shingle);
}
