//! Benchmark of a work unit's dense scratch ids (`neardup::merge::ScratchIds`, issue #34
//! item 5; SCALEOUT §5 S4): renumbering a seed of 1,000,000 standing pages, scattered over an
//! index of 4,000,000 ids, then mapping a log of the same size back to the standing ids (a
//! stand-in for a unit's diff, which `state_diff_file_mapped` maps an operation at a time).
//!
//! Each page is named by its key and by one entry in each of 4 simhash tables (5 operations a
//! page, 5 M in all). The standing ids are global (`u64`) and start past 2³², as a distributed
//! index's do after a few days. Throughput is in pages. Run with `cargo bench --bench scratch`.
//! On a quiet 2-core machine, 2026-11-29, with `u64` standing ids: `from_seed` 0.43 s for the
//! 10⁶ pages (0.4 µs a page, against ≈ 700 µs a page for a unit's decisions), `to_global`
//! 0.20 s (with `u32` standing ids, earlier the same day on a shared machine: 0.41 s and
//! 0.11 s). Ids in a `RoaringBitmap` with `rank`/`select` instead of a sorted `Vec` took 3.6 s
//! and 6.0 s.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neardup::merge::{LogCounter, LogOp, ScratchIds};
use std::hint::black_box;

const PAGES: u64 = 1_000_000;
const SPREAD: u64 = 4;
/// Where the seed's ids start: past the `u32` space.
const FAR: u64 = 1 << 33;

/// The seed: the allocators, then each page's key and simhash entries.
fn seed() -> Vec<LogOp<u64>> {
    let mut log = vec![
        LogOp::Counter(LogCounter::NextDoc(FAR + PAGES * SPREAD)),
        LogOp::Counter(LogCounter::NextCluster(FAR + PAGES * SPREAD)),
    ];
    for p in 0..PAGES {
        let doc = FAR + p * SPREAD + (p % 3);
        log.push(LogOp::Key {
            key: format!("https://example.com/{p}"),
            doc: Some(doc),
        });
        let simhash = p.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for table in 0..4 {
            log.push(LogOp::Simhash {
                table,
                simhash,
                doc,
                present: true,
            });
        }
    }
    log
}

fn bench(c: &mut Criterion) {
    let seed = seed();
    let mut g = c.benchmark_group("scratch_ids");
    g.sample_size(10);
    g.throughput(Throughput::Elements(PAGES));
    g.bench_function("from_seed_1m_pages", |b| {
        b.iter_batched(
            || seed.clone(),
            |s| black_box(ScratchIds::from_seed(s).unwrap().1.len()),
            BatchSize::LargeInput,
        )
    });
    let (ids, dense) = ScratchIds::from_seed(seed.clone()).unwrap();
    g.bench_function("to_global_1m_pages", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for op in &dense {
                n += usize::from(ids.to_global(op.clone()).is_ok());
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
