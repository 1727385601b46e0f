//! Debug aid: prints the title, heading and normalized text of the given page ids of a bench
//! corpus, one JSON object a line.
//!
//! Usage: `cargo run --release --example dump_text -- DOCS.jsonl.gz ID...`

use std::io::{BufRead, BufReader};

use flate2::read::MultiGzDecoder;
use neardup::{Content, SignatureConfig, Signatures};

fn main() {
    let mut args = std::env::args().skip(1);
    let corpus = args.next().expect("corpus path");
    let ids: std::collections::HashSet<String> = args.collect();
    let f = std::fs::File::open(&corpus).expect("open corpus");
    for line in BufReader::new(MultiGzDecoder::new(f)).lines() {
        let d: serde_json::Value = serde_json::from_str(&line.expect("line")).expect("json");
        let id = d["id"].as_str().unwrap_or("");
        if !ids.contains(id) {
            continue;
        }
        let html = d["html"].as_str().unwrap_or("");
        let s = Signatures::compute(Content::Html(html.as_bytes()), &SignatureConfig::default())
            .expect("signatures");
        let paras: Vec<&str> = s.main.paragraphs.iter().map(|p| p.text.as_str()).collect();
        println!(
            "{}",
            serde_json::json!({"id": id, "title": s.main.title, "heading": s.main.heading, "text": s.text, "paragraphs": paras, "fps": s.fingerprints.len()})
        );
    }
}
