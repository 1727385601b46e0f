//! Criterion benchmark of the signature stage, HTML in, one thread (issue "Signature pipeline"):
//! decoding, main-text extraction, normalization, sentences, sentence fingerprints, simhash and
//! content hash, over the first 300 pages of the bench's dev corpus (or generated pages when the
//! corpus is absent). Throughput is reported in MB (10⁶ bytes) of HTML per second, the unit of
//! the target (issue "Signature pipeline": 20 MB/s; issue "Speed": 150 MB/s). With
//! `NEARDUP_BENCH_LARGE=FILE` (a corpus made by `bench/inflate.py`) the same over its first 300
//! pages, at real-web sizes.

use std::io::{BufRead, BufReader};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neardup::{Content, SignatureConfig, Signatures};

/// The HTML of the first 300 pages of a corpus file, if it can be read.
fn first_pages(path: &str) -> Option<Vec<String>> {
    let f = std::fs::File::open(path).ok()?;
    Some(
        BufReader::new(flate2::read::MultiGzDecoder::new(f))
            .lines()
            .take(300)
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(&l.ok()?).ok()?;
                Some(v["html"].as_str()?.to_string())
            })
            .collect(),
    )
}

fn pages() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/bench/dev/docs.jsonl.gz"
    );
    if let Some(p) = first_pages(path) {
        return p;
    }
    // Fallback: generated pages, fixed seed.
    let mut x: u64 = 42;
    (0..300)
        .map(|_| {
            let body: String = (0..30)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    format!("<p>Paragraph {} about the index, the crawler and the pages, with a clause. And a second sentence.</p>", x >> 40)
                })
                .collect();
            format!("<html><head><title>t</title></head><body><div class=nav><a href=/>home</a></div><div class=content>{body}</div></body></html>")
        })
        .collect()
}

/// Signatures of every page, one thread, as a benchmark of `name` in group `group`.
fn run(c: &mut Criterion, group: &str, name: &str, pages: &[String]) {
    let bytes: usize = pages.iter().map(String::len).sum();
    let cfg = SignatureConfig::default();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::BytesDecimal(bytes as u64));
    g.sample_size(10);
    g.bench_function(name, |b| {
        b.iter(|| {
            for p in pages {
                let s = Signatures::compute(Content::Html(p.as_bytes()), &cfg);
                std::hint::black_box(s.ok());
            }
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    run(c, "signatures", "300 pages, HTML in", &pages());
    // Real-web page sizes: the first 300 pages of a corpus made by `bench/inflate.py` (50–150 KB
    // each), when `NEARDUP_BENCH_LARGE` names one.
    if let Some(large) = std::env::var("NEARDUP_BENCH_LARGE")
        .ok()
        .and_then(|p| first_pages(&p))
    {
        run(c, "signatures_large", "300 large pages, HTML in", &large);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
