//! Shared by the bench reports: reading a gzip JSONL file of the bench corpus.

use std::io::{BufRead, BufReader};

use flate2::read::MultiGzDecoder;
use serde_json::Value;

/// Every line of a gzip JSONL file, parsed; panics with the path on a missing file.
pub fn read_jsonl(path: &str) -> Vec<Value> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
    BufReader::new(MultiGzDecoder::new(file))
        .lines()
        .map(|l| serde_json::from_str(&l.expect("read line")).expect("valid JSON line"))
        .collect()
}

/// The bench directory from the first argument (default `../shared/bench/dev`), and its pages
/// and truth.
#[allow(dead_code)] // not every report reads the bench corpus
pub fn load_bench() -> (Vec<Value>, Vec<Value>) {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/bench/dev".to_string());
    (
        read_jsonl(&format!("{dir}/docs.jsonl.gz")),
        read_jsonl(&format!("{dir}/truth.jsonl.gz")),
    )
}

/// The first `limit` pages of the bench's dev corpus (`../shared/bench/dev/docs.jsonl.gz`),
/// parsed.
#[allow(dead_code)] // not every report reads the dev corpus
pub fn dev_pages(limit: usize) -> Vec<Value> {
    let mut docs = read_jsonl(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/bench/dev/docs.jsonl.gz"
    ));
    docs.truncate(limit);
    docs
}
