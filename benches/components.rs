//! Benchmark of S3's connected components (`neardup::merge::Components`, SCALEOUT §5 S3).
//!
//! Measures one union-find over a synthetic edge list of 10,000,000 edges between about 5 million
//! sparse `u64` node ids (a kind tag in the top byte, as the merge's nodes), in bulk
//! (`add_edges`) then `labels`; the edges are shaped like S3's: stars from a key node to the
//! pages on it (posting sizes 1–32) plus random page–page edges. Throughput is in edges. The
//! input comes from a fixed-seed LCG, so every run measures the same graph. Run with
//! `cargo bench --target-dir /work/main/target --bench components`; on a 2-core machine shared
//! with other builds (load ≈ 10), 2026-11-28: 4.4 s for 10 M edges, ≈ 2.3 M edges/s (11.2 s,
//! 0.9 M edges/s, with std's SipHash `HashMap` as the node-id map instead of `FxHashMap`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neardup::merge::Components;
use std::hint::black_box;

const EDGES: usize = 10_000_000;
const PAGES: u64 = 3_000_000;

/// Knuth's MMIX linear congruential generator.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 16) % n.max(1)
    }
}

/// Key stars (key node → its pages) for three quarters of the edges, page–page edges for the rest.
fn edges() -> (Vec<u64>, Vec<u64>) {
    let mut rng = Lcg(0x5DEE_CE66_D1CE_4E5B);
    let (mut a, mut b) = (Vec::with_capacity(EDGES), Vec::with_capacity(EDGES));
    let mut key = 0u64;
    while a.len() < EDGES * 3 / 4 {
        key += 1;
        for _ in 0..=rng.below(32) {
            a.push((4 << 56) | key);
            b.push(rng.below(PAGES));
        }
    }
    while a.len() < EDGES {
        a.push((1 << 56) | rng.below(PAGES));
        b.push(rng.below(PAGES));
    }
    (a, b)
}

fn bench(c: &mut Criterion) {
    let (a, b) = edges();
    let mut g = c.benchmark_group("components");
    g.sample_size(10);
    g.throughput(Throughput::Elements(a.len() as u64));
    g.bench_function("add_edges_10m_then_labels", |bench| {
        bench.iter(|| {
            let mut uf = Components::new();
            uf.add_edges(black_box(&a), black_box(&b));
            black_box(uf.labels().2.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
