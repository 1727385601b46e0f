//! Quality regression on real documents: ingest the first pages of the bench's natural-dev corpus
//! in corpus order, export, score with the corpus's `score_natural.py` against its truth
//! restricted to those pages, and fail when duplicate-detection F1 falls more than 0.02 below the
//! figure measured when this test landed. Skipped (with a message) when the corpus is absent.

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{assert_f1_holds, export_tsv, gz_lines, run_scorer};
use neardup::{BatchOptions, BatchOrder, Content, Index, IndexOptions, Page};
use serde_json::Value;

/// Pages of the slice (in corpus order: releases by date, so versions of one page meet).
const PAGES: usize = 2000;
/// Duplicate-detection F1 on that slice, raised with each change that lifts it (see CHANGELOG):
/// 0.9074 when this test landed, 0.9194 with the trustable region on both curves.
const BASELINE_F1: f64 = 0.9194;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/natural-dev")
}

/// Writes meta.tsv, pairs.tsv and maintext.jsonl.gz of the corpus, restricted to `ids`, into
/// `out`: the truth of the slice (a pair with a page outside the slice cannot be found).
fn restrict_truth(dir: &Path, ids: &HashSet<String>, out: &Path) {
    let keep_rows = |name: &str, cols: &[usize]| {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let mut w = std::fs::File::create(out.join(name)).unwrap();
        for (i, line) in text.lines().enumerate() {
            let f: Vec<&str> = line.split('\t').collect();
            if i == 0 || cols.iter().all(|&c| ids.contains(f[c])) {
                writeln!(w, "{line}").unwrap();
            }
        }
    };
    keep_rows("meta.tsv", &[0]);
    keep_rows("pairs.tsv", &[0, 1]);
    let f = std::fs::File::create(out.join("maintext.jsonl.gz")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    for line in gz_lines(&dir.join("maintext.jsonl.gz")) {
        let v: Value = serde_json::from_str(&line).unwrap();
        if ids.contains(v["id"].as_str().unwrap()) {
            writeln!(gz, "{line}").unwrap();
        }
    }
    gz.finish().unwrap();
}

#[test]
fn natural_slice_f1_does_not_regress() {
    let dir = corpus_dir();
    if !dir.join("docs.jsonl.gz").exists() {
        eprintln!(
            "natural-dev corpus not found at {}; skipping",
            dir.display()
        );
        return;
    }
    let docs: Vec<Value> = gz_lines(&dir.join("docs.jsonl.gz"))
        .take(PAGES)
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let ix = Index::open(tmp.path().join("index"), IndexOptions::default()).unwrap();
    let pages: Vec<Page<'_>> = docs
        .iter()
        .map(|d| Page {
            key: d["id"].as_str().unwrap(),
            host: d["host"].as_str().unwrap_or(""),
            time: d["time"].as_i64().unwrap_or(0),
            content: match (d["html"].as_str(), d["text"].as_str()) {
                (Some(h), _) => Content::Html(h.as_bytes()),
                (None, Some(t)) => Content::Text(t),
                (None, None) => panic!("page without content"),
            },
        })
        .collect();
    let opts = BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    };
    let results = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
    assert!(results.iter().all(|r| r.is_ok()));

    let system = tmp.path().join("system.tsv");
    export_tsv(&ix, &system);

    let ids: HashSet<String> = docs
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    let truth = tmp.path().join("truth");
    std::fs::create_dir(&truth).unwrap();
    restrict_truth(&dir, &ids, &truth);

    let cache = tmp.path().join("cache.tsv");
    let res = run_scorer(&[
        dir.join("score_natural.py").as_os_str(),
        truth.as_os_str(),
        system.as_os_str(),
        "--cache".as_ref(),
        cache.as_os_str(),
    ]);
    assert_f1_holds(
        &format!("natural-dev slice of {PAGES}"),
        &res["overall"],
        BASELINE_F1,
    );
    assert!(ix.check().unwrap().is_clean());
}
