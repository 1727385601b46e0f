//! Debug aid: prints, for every page of a bench corpus (JSONL, `html` or `text`), its id, its
//! normalized text's length in chars, and its fingerprint units' digests in text order (the top
//! 64 bits, hex), as the sentence fingerprints and clause keys see them — one JSON object a line.
//! For studying candidate keys offline (which pages share which units).
//!
//! Usage: `cargo run --release --example unit_digests -- DOCS.jsonl.gz > units.jsonl`

#[path = "support/corpus.rs"]
mod corpus;

use neardup::fingerprint::sentence_digest;
use neardup::{Content, SignatureConfig, Signatures};

fn main() {
    let path = std::env::args().nth(1).expect("corpus path");
    let cfg = SignatureConfig::default();
    let p = cfg.sentence_params();
    for d in corpus::read_jsonl(&path) {
        let id = d["id"].as_str().unwrap_or("");
        let content = match (d["html"].as_str(), d["text"].as_str()) {
            (Some(h), _) => Content::Html(h.as_bytes()),
            (None, Some(t)) => Content::Text(t),
            _ => continue,
        };
        let Ok(s) = Signatures::compute(content, &cfg) else {
            continue;
        };
        let mut units: Vec<String> = Vec::new();
        for sent in &s.sentences {
            let st = sent.text(&s.text);
            for clause in st.split([',', ':']) {
                let w = neardup::text::width(clause)
                    - clause.bytes().filter(|&b| b == b' ').count() as u32;
                if w >= p.min_sentence_width {
                    units.push(format!("{:016x}", (sentence_digest(clause) >> 64) as u64));
                }
            }
        }
        println!(
            "{}",
            serde_json::json!({"id": id, "chars": s.text.chars().count(), "fps": s.fingerprints.len(),
                "sketch": s.sketch.iter().map(|k| format!("{:016x}", (k >> 64) as u64)).collect::<Vec<_>>(),
                "units": units})
        );
    }
}
