//! Prints one checksum of every signature (normalized text, sentence fingerprints, sketch,
//! simhash, content hash) of the bench's dev corpus, and the single-thread speed. A change meant
//! only to make the signature stage faster must leave the checksum as it was:
//!
//! ```sh
//! cargo run --release --example signature_checksum [PAGES]
//! ```

#[allow(dead_code)]
#[path = "support/corpus.rs"]
mod corpus;

use std::time::Instant;

use neardup::{Content, SignatureConfig, Signatures};
use xxhash_rust::xxh3::xxh3_64;

fn main() {
    let limit: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(usize::MAX);
    let docs = corpus::dev_pages(limit);
    let cfg = SignatureConfig::default();
    let (mut checksum, mut bytes) = (0u64, 0usize);
    let start = Instant::now();
    for d in &docs {
        let html = d["html"].as_str().unwrap_or("");
        bytes += html.len();
        let mut buf = Vec::new();
        match Signatures::compute(Content::Html(html.as_bytes()), &cfg) {
            Ok(s) => {
                buf.extend(s.fingerprints.iter().flat_map(|f| f.to_le_bytes()));
                buf.extend(s.sketch.iter().flat_map(|f| f.to_le_bytes()));
                buf.extend_from_slice(&s.simhash.to_le_bytes());
                buf.extend_from_slice(&s.content_hash.to_le_bytes());
                buf.extend_from_slice(s.text.as_bytes());
            }
            Err(e) => buf.extend_from_slice(e.to_string().as_bytes()),
        }
        checksum = checksum.rotate_left(5) ^ xxh3_64(&buf);
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "pages {}  checksum {checksum:016x}  {:.1} MB/s (one thread, including the checksum)",
        docs.len(),
        bytes as f64 / 1e6 / secs
    );
}
