//! Time of each step of the signature stage on the bench's dev corpus, one thread: decoding,
//! main-text extraction, the body, normalization, sentences, sentence fingerprints and sketch,
//! simhash and the content hash, in µs a page (the first 3,000 pages, three rounds). The
//! breakdown behind the criterion `signatures` figure (issue "Speed"):
//!
//! ```sh
//! cargo run --release --example stage_times [PAGES]
//! ```

#[allow(dead_code)]
#[path = "support/corpus.rs"]
mod corpus;

use std::time::Instant;

use neardup::fingerprint::{fingerprints_and_sketch, simhash};
use neardup::{text, SignatureConfig};

fn main() {
    let limit: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3_000);
    let docs = corpus::dev_pages(limit);
    let htmls: Vec<&str> = docs
        .iter()
        .map(|d| d["html"].as_str().unwrap_or(""))
        .collect();
    let cfg = SignatureConfig::default();
    let names = [
        "decode",
        "extract",
        "body",
        "normalize",
        "sentences",
        "fingerprints and sketch",
        "simhash",
        "content hash",
    ];
    let mut spent = [0f64; 8];
    let rounds = 3;
    for _ in 0..rounds {
        for h in &htmls {
            let mut t = [Instant::now(); 9];
            let Ok(html) = text::decode(h.as_bytes()) else {
                continue;
            };
            t[1] = Instant::now();
            let main = text::extract(&html);
            t[2] = Instant::now();
            let body = main.body();
            t[3] = Instant::now();
            let norm = text::normalize(&body, cfg.folding());
            t[4] = Instant::now();
            let sentences = text::split_sentences(&norm);
            t[5] = Instant::now();
            let params = cfg.sentence_params();
            let keys =
                fingerprints_and_sketch(&norm, &sentences, &params, cfg.sketch_size as usize);
            t[6] = Instant::now();
            let sim = simhash(&norm, cfg.simhash_cjk_ngram as usize);
            t[7] = Instant::now();
            let hash = xxhash_rust::xxh3::xxh3_128(norm.as_bytes());
            t[8] = Instant::now();
            std::hint::black_box((keys, sim, hash));
            for (k, s) in spent.iter_mut().enumerate() {
                *s += (t[k + 1] - t[k]).as_secs_f64();
            }
        }
    }
    let per_page = |s: f64| s / (htmls.len() * rounds) as f64 * 1e6;
    let bytes = htmls.iter().map(|h| h.len()).sum::<usize>() as f64 / htmls.len() as f64;
    for (name, s) in names.iter().zip(spent) {
        println!("{name:<24} {:>7.1} µs", per_page(s));
    }
    let total = per_page(spent.iter().sum());
    println!(
        "{:<24} {total:>7.1} µs a page of {bytes:.0} bytes: {:.1} MB/s",
        "total",
        bytes / total
    );
}
