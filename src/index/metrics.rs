//! Operation metrics since the index was opened: per operation a count, an error count and a
//! latency histogram, with the outcomes of inserts; [`Index::metrics`](crate::Index::metrics)
//! adds RocksDB's figures and the memory by part.
//!
//! Recording is a few relaxed atomic adds on the caller's thread (no lock, no allocation) and
//! cannot fail: a metric never changes the result of an operation. A reader sees each counter
//! as it was at some instant while it read; the counters of one operation may be a few calls
//! apart when other threads record meanwhile.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::types::Verdict;
use crate::Result;

/// Sub-buckets per power of two: a latency is known to within 25 %.
const SUB: usize = 4;
/// Powers of two held: the last bucket takes every latency from 7 · 2^37 µs (11 days) up.
const OCTAVES: usize = 40;
/// The histogram's buckets: `SUB` of one microsecond each for 0–3 µs, then `SUB` per power of
/// two.
const BUCKETS: usize = SUB * (OCTAVES - 1);

/// The bucket of a latency in microseconds.
fn bucket_of(us: u64) -> usize {
    if us < SUB as u64 {
        return us as usize;
    }
    // us >= 4: its highest bit `e` >= 2; the two bits below it pick the sub-bucket.
    let e = 63 - us.leading_zeros() as usize;
    let sub = ((us >> (e - 2)) & 3) as usize;
    (SUB * (e - 1) + sub).min(BUCKETS - 1)
}

/// The highest latency in microseconds bucket `b` holds (`u64::MAX` for the last).
fn bucket_top(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    if b == BUCKETS - 1 {
        return u64::MAX;
    }
    let e = b / SUB + 1;
    let sub = (b % SUB) as u64;
    ((SUB as u64 + sub + 1) << (e - 2)) - 1
}

/// A latency histogram in microseconds, log-scale buckets held in atomics.
struct Histogram {
    buckets: [AtomicU64; BUCKETS],
    sum_us: AtomicU64,
    max_us: AtomicU64,
}

impl Histogram {
    fn new() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_us: AtomicU64::new(0),
            max_us: AtomicU64::new(0),
        }
    }

    fn record(&self, us: u64) {
        self.max_us.fetch_max(us, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
        self.buckets[bucket_of(us)].fetch_add(1, Relaxed);
    }

    /// The summary of the latencies recorded so far. A percentile is the top of the bucket
    /// holding it, never above the largest latency seen.
    fn summary(&self) -> Latency {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        let count: u64 = counts.iter().sum();
        let sum = self.sum_us.load(Relaxed);
        let max = self.max_us.load(Relaxed);
        let percentile = |p: u64| -> u64 {
            if count == 0 {
                return 0;
            }
            // The rank of the percentile, 1-based: the smallest with rank / count >= p %.
            let rank = (count * p).div_ceil(100).max(1);
            let mut seen = 0;
            for (b, n) in counts.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return bucket_top(b).min(max);
                }
            }
            max
        };
        Latency {
            count,
            mean_us: if count == 0 {
                0.0
            } else {
                sum as f64 / count as f64
            },
            p50_us: percentile(50),
            p90_us: percentile(90),
            p99_us: percentile(99),
            max_us: max,
        }
    }
}

/// One operation's recorder: its latencies (successful calls) and its errors.
struct Op {
    latency: Histogram,
    errors: AtomicU64,
}

impl Op {
    fn new() -> Self {
        Op {
            latency: Histogram::new(),
            errors: AtomicU64::new(0),
        }
    }

    /// Records one call that started at `t0`.
    fn record<T>(&self, t0: Instant, r: &Result<T>) {
        match r {
            Ok(_) => {
                let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                self.latency.record(us);
            }
            Err(_) => {
                self.errors.fetch_add(1, Relaxed);
            }
        }
    }

    fn summary(&self) -> OpMetrics {
        let latency = self.latency.summary();
        OpMetrics {
            count: latency.count,
            errors: self.errors.load(Relaxed),
            latency,
        }
    }
}

/// What inserted pages turned out to be.
#[derive(Default)]
struct Outcomes {
    unchanged: AtomicU64,
    replaced: AtomicU64,
    duplicates: AtomicU64,
}

impl Outcomes {
    fn record(&self, v: &Verdict) {
        if v.unchanged {
            self.unchanged.fetch_add(1, Relaxed);
            return;
        }
        if v.replaced {
            self.replaced.fetch_add(1, Relaxed);
        }
        if v.duplicate {
            self.duplicates.fetch_add(1, Relaxed);
        }
    }
}

/// The index's recorder of operation metrics (one per open index).
pub(crate) struct Recorder {
    opened: Instant,
    insert: Op,
    inserted: Outcomes,
    batch: Op,
    batch_pages: AtomicU64,
    batch_page_errors: AtomicU64,
    batched: Outcomes,
    query: Op,
    near: Op,
    delete: Op,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Recorder {
            opened: Instant::now(),
            insert: Op::new(),
            inserted: Outcomes::default(),
            batch: Op::new(),
            batch_pages: AtomicU64::new(0),
            batch_page_errors: AtomicU64::new(0),
            batched: Outcomes::default(),
            query: Op::new(),
            near: Op::new(),
            delete: Op::new(),
        }
    }

    /// Runs one insert and records it.
    pub(crate) fn insert(&self, f: impl FnOnce() -> Result<Verdict>) -> Result<Verdict> {
        let t0 = Instant::now();
        let r = f();
        self.insert.record(t0, &r);
        if let Ok(v) = &r {
            self.inserted.record(v);
        }
        r
    }

    /// Runs one batch insert and records it and its pages.
    pub(crate) fn batch(
        &self,
        f: impl FnOnce() -> Result<Vec<Result<Verdict>>>,
    ) -> Result<Vec<Result<Verdict>>> {
        let t0 = Instant::now();
        let r = f();
        self.batch.record(t0, &r);
        if let Ok(pages) = &r {
            self.batch_pages.fetch_add(pages.len() as u64, Relaxed);
            for p in pages {
                match p {
                    Ok(v) => self.batched.record(v),
                    Err(_) => {
                        self.batch_page_errors.fetch_add(1, Relaxed);
                    }
                }
            }
        }
        r
    }

    /// Runs one query (`query`, `query_page`) and records it.
    pub(crate) fn query<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        timed(&self.query, f)
    }

    /// Runs one look-up of near duplicates (`near`, `near_page`) and records it.
    pub(crate) fn near<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        timed(&self.near, f)
    }

    /// Runs one delete and records it.
    pub(crate) fn delete<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        timed(&self.delete, f)
    }

    /// The operation metrics so far; `rocksdb` and `memory` as given.
    pub(crate) fn snapshot(
        &self,
        rocksdb: Vec<(String, u64)>,
        memory: Vec<(String, u64)>,
    ) -> Metrics {
        let insert = self.insert.summary();
        let batch = self.batch.summary();
        Metrics {
            uptime_secs: self.opened.elapsed().as_secs_f64(),
            insert: InsertMetrics {
                count: insert.count,
                errors: insert.errors,
                unchanged: self.inserted.unchanged.load(Relaxed),
                replaced: self.inserted.replaced.load(Relaxed),
                duplicates: self.inserted.duplicates.load(Relaxed),
                latency: insert.latency,
            },
            batch: BatchMetrics {
                count: batch.count,
                errors: batch.errors,
                pages: self.batch_pages.load(Relaxed),
                page_errors: self.batch_page_errors.load(Relaxed),
                unchanged: self.batched.unchanged.load(Relaxed),
                replaced: self.batched.replaced.load(Relaxed),
                duplicates: self.batched.duplicates.load(Relaxed),
                latency: batch.latency,
            },
            query: self.query.summary(),
            near: self.near.summary(),
            delete: self.delete.summary(),
            rocksdb,
            memory,
        }
    }
}

/// Runs `f` and records it under `op`.
fn timed<T>(op: &Op, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let t0 = Instant::now();
    let r = f();
    op.record(t0, &r);
    r
}

/// Metrics of an index since it was opened (see [`crate::Index::metrics`]). Serializes to JSON
/// with serde ([`Metrics::to_json`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Seconds since the index was opened.
    pub uptime_secs: f64,
    /// Single-page inserts ([`crate::Index::insert`]).
    pub insert: InsertMetrics,
    /// Batch inserts ([`crate::Index::insert_batch`]), each call one operation.
    pub batch: BatchMetrics,
    /// Queries ([`crate::Index::query`], [`crate::Index::query_page`]; each content of a
    /// `query_batch` or `query_pages` is one).
    pub query: OpMetrics,
    /// Look-ups of near duplicates ([`crate::Index::near`], [`crate::Index::near_page`]).
    pub near: OpMetrics,
    /// Deletes ([`crate::Index::delete`]; an absent key is an error).
    pub delete: OpMetrics,
    /// RocksDB's figures an operator watches, now: write stalls (`delayed_write_rate`,
    /// `writes_stopped`), compaction debt, immutable memtables, running jobs, live table bytes
    /// (as in [`crate::Stats::rocksdb`]).
    pub rocksdb: Vec<(String, u64)>,
    /// The memory the index holds now, in bytes, by part (see [`crate::Index::memory`]).
    pub memory: Vec<(String, u64)>,
}

impl Metrics {
    /// The metrics as one JSON object (the form of `nd_index_metrics_json`, `neardup stats
    /// --json` and the Python binding).
    pub fn to_json(&self) -> String {
        // Serializing plain numbers and strings into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The count, errors and latencies of one operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpMetrics {
    /// Calls that succeeded (the latency histogram's count).
    pub count: u64,
    /// Calls that returned an error (not in the latencies).
    pub errors: u64,
    /// Latencies of the calls that succeeded.
    pub latency: Latency,
}

/// [`OpMetrics`] of single-page inserts, with what the pages turned out to be.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InsertMetrics {
    /// Inserts that succeeded (the latency histogram's count).
    pub count: u64,
    /// Inserts that returned an error.
    pub errors: u64,
    /// Unchanged re-inserts: nothing written ([`crate::Verdict::unchanged`]).
    pub unchanged: u64,
    /// Pages that replaced another under their key ([`crate::Verdict::replaced`]).
    pub replaced: u64,
    /// Pages placed as near duplicates ([`crate::Verdict::duplicate`]; not counting unchanged
    /// re-inserts).
    pub duplicates: u64,
    /// Latencies of the inserts that succeeded.
    pub latency: Latency,
}

/// [`OpMetrics`] of batch inserts, with their pages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchMetrics {
    /// Batches that returned (their pages each with a result).
    pub count: u64,
    /// Batches stopped by an error.
    pub errors: u64,
    /// Pages in the batches that returned.
    pub pages: u64,
    /// Pages of those batches that failed on their own (bad content…).
    pub page_errors: u64,
    /// Unchanged re-inserts among the pages.
    pub unchanged: u64,
    /// Pages that replaced another under their key.
    pub replaced: u64,
    /// Pages placed as near duplicates (not counting unchanged re-inserts).
    pub duplicates: u64,
    /// Latencies of whole batches that returned.
    pub latency: Latency,
}

/// A latency histogram's summary, in microseconds. Buckets are a quarter of a power of two
/// wide: a percentile is the top of its bucket (within 25 % above the true value), never above
/// `max_us`, so `p50_us <= p90_us <= p99_us <= max_us`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Latencies recorded.
    pub count: u64,
    /// Their mean.
    pub mean_us: f64,
    /// The median.
    pub p50_us: u64,
    /// The 90th percentile.
    pub p90_us: u64,
    /// The 99th percentile.
    pub p99_us: u64,
    /// The largest.
    pub max_us: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_line_in_order() {
        let mut last = 0;
        for us in (0..5000).chain([u64::MAX / 2, u64::MAX]) {
            let b = bucket_of(us);
            assert!(b >= last && b < BUCKETS, "{us} -> {b}");
            assert!(us <= bucket_top(b), "{us} above the top of {b}");
            if b > 0 {
                assert!(us > bucket_top(b - 1), "{us} in {b}, not below it");
            }
            last = b;
        }
        // Within 25 %: the top of a bucket is less than 1.25 times its bottom.
        for b in SUB..BUCKETS - 1 {
            let bottom = bucket_top(b - 1) + 1;
            assert!(bucket_top(b) * 4 < bottom * 5, "bucket {b}");
        }
    }

    #[test]
    fn percentiles_are_ordered_and_capped_by_the_max() {
        let h = Histogram::new();
        for us in [1, 2, 3, 10, 10, 10, 100, 1000, 5000, 70_000] {
            h.record(us);
        }
        let l = h.summary();
        assert_eq!(l.count, 10);
        assert_eq!(l.max_us, 70_000);
        assert!((l.mean_us - 7613.6).abs() < 1e-9);
        // The median, 10, is in the bucket 10–11.
        assert_eq!(l.p50_us, 11);
        assert!(l.p50_us <= l.p90_us && l.p90_us <= l.p99_us && l.p99_us <= l.max_us);
        assert_eq!(l.p99_us, 70_000);
        assert_eq!(Histogram::new().summary(), Latency::default());
    }
}
