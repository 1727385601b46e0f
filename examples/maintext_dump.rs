//! Dev tool: the normalized main text of every page of a JSONL corpus, for measuring extraction
//! against a reference outside the library.
//!
//! Reads a JSONL file, gzip-compressed or not, one page a line with an `id` and either `html` or
//! `text`, and prints one JSON line per page: `{"id": ..., "text": ...}` where `text` is exactly
//! what the index works on ([`neardup::signature::normalized_text`] with the default
//! configuration). A page that fails (too large, binary) gets `"error"` instead of `"text"`.
//!
//! Usage: `cargo run --release --example maintext_dump -- DOCS.jsonl[.gz] [--html-only] > OUT.jsonl`

use std::io::{BufRead, BufReader, BufWriter, Read, Write};

use flate2::read::MultiGzDecoder;
use neardup::signature::normalized_text;
use neardup::{Content, SignatureConfig};

fn main() {
    let mut path = None;
    let mut html_only = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--html-only" => html_only = true,
            _ => path = Some(arg),
        }
    }
    let path = path.expect("usage: maintext_dump DOCS.jsonl[.gz] [--html-only]");
    let file = std::fs::File::open(&path).expect("open corpus");
    let reader: Box<dyn Read> = if path.ends_with(".gz") {
        Box::new(MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let cfg = SignatureConfig::default();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in BufReader::new(reader).lines() {
        let line = line.expect("read line");
        if line.trim().is_empty() {
            continue;
        }
        let d: serde_json::Value = serde_json::from_str(&line).expect("json line");
        let id = d["id"].as_str().unwrap_or("");
        let content = match (d["html"].as_str(), d["text"].as_str()) {
            (Some(html), _) => Content::Html(html.as_bytes()),
            (None, Some(text)) if !html_only => Content::Text(text),
            _ => continue,
        };
        let record = match normalized_text(content, &cfg) {
            Ok(text) => serde_json::json!({"id": id, "text": text}),
            Err(e) => serde_json::json!({"id": id, "error": e.to_string()}),
        };
        writeln!(out, "{record}").expect("write");
    }
    out.flush().expect("flush");
}
