//! Quality regression: ingest the first pages of the bench's dev corpus in corpus order, export
//! the cluster assignments, score them with the bench's `score.py` against the truth restricted
//! to those pages, and fail when duplicate-detection F1 falls more than 0.02 below the figure
//! measured when the index landed. Skipped (with a message) when the bench folder is absent.

mod common;

use std::io::Write;
use std::path::PathBuf;

use common::{assert_f1_holds, export_tsv, gz_lines, run_scorer};
use neardup::{BatchOptions, BatchOrder, Content, Index, IndexOptions, Page};
use serde_json::Value;

/// Pages of the slice.
const PAGES: usize = 5000;
/// Duplicate-detection F1 on that slice when the index landed (see CHANGELOG / closing notes).
const BASELINE_F1: f64 = 0.9908;

fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench")
}

fn read_gz_lines(path: &std::path::Path, limit: usize) -> Vec<Value> {
    gz_lines(path)
        .take(limit)
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect()
}

#[test]
fn dev_slice_f1_does_not_regress() {
    let bench = bench_dir();
    if !bench.join("dev/docs.jsonl.gz").exists() {
        eprintln!("bench corpus not found at {}; skipping", bench.display());
        return;
    }
    let docs = read_gz_lines(&bench.join("dev/docs.jsonl.gz"), PAGES);
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path().join("index"), IndexOptions::default()).unwrap();
    let pages: Vec<Page<'_>> = docs
        .iter()
        .map(|d| Page {
            key: d["id"].as_str().unwrap(),
            host: d["host"].as_str().unwrap_or(""),
            time: d["time"].as_i64().unwrap_or(0),
            content: Content::Html(d["html"].as_str().unwrap().as_bytes()),
        })
        .collect();
    let opts = BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    };
    let results = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
    assert!(results.iter().all(|r| r.is_ok()));

    let system = dir.path().join("system.tsv");
    export_tsv(&ix, &system);

    // The truth restricted to the slice.
    let ids: std::collections::HashSet<&str> =
        docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
    let truth = dir.path().join("truth.jsonl");
    let mut t = std::fs::File::create(&truth).unwrap();
    for mut fam in read_gz_lines(&bench.join("dev/truth.jsonl.gz"), usize::MAX) {
        let kept: Vec<Value> = fam["ids"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| ids.contains(i.as_str().unwrap()))
            .cloned()
            .collect();
        if kept.is_empty() {
            continue;
        }
        if let Some(tr) = fam["transforms"].as_object_mut() {
            tr.retain(|k, _| ids.contains(k.as_str()));
        }
        fam["ids"] = Value::Array(kept);
        writeln!(t, "{fam}").unwrap();
    }
    drop(t);

    let res = run_scorer(&[
        bench.join("score.py").as_os_str(),
        truth.as_os_str(),
        system.as_os_str(),
    ]);
    assert_f1_holds(
        &format!("dev slice of {PAGES}"),
        &res["duplicate_detection"],
        BASELINE_F1,
    );
    assert!(ix.check().unwrap().is_clean());
}
