//! The in-memory posting-key filter (`IndexOptions::posting_filter_bytes`) only saves reads: an
//! index with it decides exactly as one without it, before and after a reopen (the filter is
//! rebuilt from the stored keys), through single inserts, batches and deletes.
mod common;
use common::*;
use neardup::{BatchOptions, Index, IndexOptions, Page};

fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for a in 0..12u64 {
        let base = article(100 + a, 6);
        out.push((format!("a{a}"), html(0, "t", &base)));
        out.push((format!("a{a}-copy"), html(1, "t", &base)));
        out.push((format!("a{a}-edit"), html(2, "t", &edited(&base, a))));
    }
    out
}

fn open_with(dir: &std::path::Path, bytes: usize) -> Index {
    Index::open(
        dir,
        IndexOptions {
            posting_filter_bytes: bytes,
            ..IndexOptions::default()
        },
    )
    .unwrap()
}

/// Inserts the first half one by one, reopens, deletes two pages, inserts the rest as a batch,
/// and returns every verdict with the final export.
fn run(bytes: usize) -> (Vec<String>, Vec<(String, String)>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus();
    let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, "h", h)).collect();
    let (first, rest) = pages.split_at(pages.len() / 2);
    let mut verdicts = Vec::new();
    {
        let ix = open_with(dir.path(), bytes);
        for p in first {
            let v = ix.insert(p).unwrap();
            verdicts.push(format!(
                "{:?} {:?} {}",
                v.representative, v.similar_to, v.exact
            ));
        }
    }
    let ix = open_with(dir.path(), bytes);
    let filter_bytes = ix.stats().unwrap().posting_filter_bytes;
    ix.delete("a0").unwrap();
    ix.delete("a3-copy").unwrap();
    for r in ix
        .insert_batch(rest, &BatchOptions::default(), &mut |_, _| {})
        .unwrap()
    {
        let v = r.unwrap();
        verdicts.push(format!(
            "{:?} {:?} {}",
            v.representative, v.similar_to, v.exact
        ));
    }
    assert_clean(&ix);
    let mut export = Vec::new();
    ix.export(|k, t| export.push((k.to_string(), t.to_string())))
        .unwrap();
    (verdicts, export, filter_bytes)
}

#[test]
fn the_filter_changes_no_decision() {
    let (v_on, e_on, bytes_on) = run(IndexOptions::default().posting_filter_bytes);
    let (v_off, e_off, bytes_off) = run(0);
    assert!(bytes_on > 0, "the filter is built on open");
    assert_eq!(bytes_off, 0);
    assert_eq!(v_on, v_off);
    assert_eq!(e_on, e_off);
    // Copies and edits found their originals (the filter let their keys through).
    assert!(e_on.iter().any(|(k, t)| k == "a5-copy" && t == "a5"));
}
