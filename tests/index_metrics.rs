//! `Index::metrics` (issue #33, item 5): exact counts per operation and per insert outcome,
//! errors counted apart, histograms whose counts are the operations', ordered percentiles, and
//! RocksDB's figures and the memory by part beside them. No timing is asserted.
mod common;
use common::*;

use neardup::{BatchOptions, Content, Index, Latency, Metrics, NearOptions, OpMetrics};

/// A latency summary is consistent: `count` latencies, percentiles in order, none above the
/// largest.
fn assert_latency(name: &str, l: &Latency, count: u64) {
    assert_eq!(l.count, count, "{name}: latencies recorded");
    assert!(
        l.p50_us <= l.p90_us && l.p90_us <= l.p99_us && l.p99_us <= l.max_us,
        "{name}: percentiles out of order: {l:?}"
    );
    assert!(l.mean_us <= l.max_us as f64, "{name}: {l:?}");
    if count == 0 {
        assert_eq!(l, &Latency::default(), "{name}");
    }
}

fn assert_op(name: &str, op: &OpMetrics, count: u64, errors: u64) {
    assert_eq!((op.count, op.errors), (count, errors), "{name}: {op:?}");
    assert_latency(name, &op.latency, count);
}

fn figure(parts: &[(String, u64)], name: &str) -> Option<u64> {
    parts.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// The memory and RocksDB parts are there, by name.
fn assert_parts(m: &Metrics) {
    for part in [
        "block_cache",
        "block_cache_pinned",
        "memtables",
        "table_readers",
        "frequent_set",
        "doc_freqs",
    ] {
        assert!(figure(&m.memory, part).is_some(), "memory part {part}");
    }
    for part in [
        "pending_compaction_bytes",
        "immutable_memtables",
        "delayed_write_rate",
        "writes_stopped",
        "write_stall_delays",
        "write_stall_stops",
        "live_sst_bytes",
    ] {
        assert!(figure(&m.rocksdb, part).is_some(), "rocksdb figure {part}");
    }
}

#[test]
fn counts_are_exact_and_histograms_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let fresh = ix.metrics().unwrap();
    assert_op("query", &fresh.query, 0, 0);
    assert_eq!(
        fresh.insert.count + fresh.batch.count + fresh.delete.count,
        0
    );
    assert_parts(&fresh);

    // Four versions of one article (near duplicates of the first), one other article.
    let a = article(10, 10);
    let docs: Vec<(String, String)> = (0..4)
        .map(|i| (format!("a{i}"), html(i, "A", &edited(&a, i as u64))))
        .collect();
    let b = html(0, "B", &article(77, 10));
    let b2 = html(0, "B", &article(78, 10));
    let mut duplicates = 0;
    for (k, h) in &docs {
        duplicates += u64::from(ix.insert(&page(k, "h", h)).unwrap().duplicate);
    }
    assert!(duplicates >= 1, "the edited versions are near duplicates");
    ix.insert(&page("b", "h", &b)).unwrap();
    // Two unchanged recrawls, one replace, one refused insert.
    assert!(ix.insert(&page("a0", "h", &docs[0].1)).unwrap().unchanged);
    assert!(ix.insert(&page("a1", "h", &docs[1].1)).unwrap().unchanged);
    let replaced = ix.insert(&page("b", "h", &b2)).unwrap();
    assert!(replaced.replaced && !replaced.unchanged);
    duplicates += u64::from(replaced.duplicate);
    assert!(ix.insert(&page("", "h", &b)).is_err());

    // Queries: two alone, three in a batch (each one query), one refused.
    ix.query(Content::Html(docs[2].1.as_bytes())).unwrap();
    ix.query_page(&page("q", "h", &b)).unwrap();
    for r in ix
        .query_batch(&[
            Content::Html(docs[0].1.as_bytes()),
            Content::Html(b.as_bytes()),
            Content::Html(b2.as_bytes()),
        ])
        .unwrap()
    {
        r.unwrap();
    }
    assert!(ix.query_page(&page("", "h", &b)).is_err());

    // Near: two look-ups, one with bad options.
    let near = NearOptions::default();
    assert!(!ix
        .near(Content::Html(docs[1].1.as_bytes()), &near)
        .unwrap()
        .is_empty());
    ix.near_page(&page("a1", "h", &docs[1].1), &near).unwrap();
    let bad = NearOptions { k: 0, ..near };
    assert!(ix.near(Content::Html(b.as_bytes()), &bad).is_err());

    // Deletes: one done, one of an absent key.
    ix.delete("a3").unwrap();
    assert!(ix.delete("a3").is_err());

    // A batch of four pages: one new, one unchanged recrawl, one replace, one refused.
    let c = html(1, "C", &article(90, 10));
    let a2_new = html(2, "A", &edited(&a, 22));
    let batch = [
        page("c", "h", &c),
        page("a0", "h", &docs[0].1),
        page("a2", "h", &a2_new),
        page("", "h", &c),
    ];
    let results = ix
        .insert_batch(&batch, &BatchOptions::default(), &mut |_, _| {})
        .unwrap();
    let batch_duplicates = results
        .iter()
        .flatten()
        .filter(|v| v.duplicate && !v.unchanged)
        .count() as u64;
    assert!(results[3].is_err());

    let m = ix.metrics().unwrap();
    assert_eq!(m.insert.count, 8, "{:?}", m.insert);
    assert_eq!(m.insert.errors, 1);
    assert_eq!(m.insert.unchanged, 2);
    assert_eq!(m.insert.replaced, 1);
    assert_eq!(m.insert.duplicates, duplicates);
    assert_latency("insert", &m.insert.latency, 8);
    assert_op("query", &m.query, 5, 1);
    assert_op("near", &m.near, 2, 1);
    assert_op("delete", &m.delete, 1, 1);
    assert_eq!((m.batch.count, m.batch.errors), (1, 0));
    assert_eq!((m.batch.pages, m.batch.page_errors), (4, 1));
    assert_eq!((m.batch.unchanged, m.batch.replaced), (1, 1));
    assert_eq!(m.batch.duplicates, batch_duplicates);
    assert_latency("batch", &m.batch.latency, 1);
    assert_parts(&m);
    assert!(m.uptime_secs >= fresh.uptime_secs);

    // The wire form is one JSON object with every part.
    let json: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
    assert_eq!(json["insert"]["count"], 8);
    assert_eq!(json["insert"]["latency"]["count"], 8);
    assert_eq!(json["query"]["errors"], 1);
    assert!(json["memory"].is_array() && json["rocksdb"].is_array());
    let back: Metrics = serde_json::from_str(&m.to_json()).unwrap();
    assert_eq!(back.insert, m.insert);

    // Reading the metrics is no operation; they start over when the index is reopened.
    assert_eq!(ix.metrics().unwrap().insert, m.insert);
    drop(ix);
    let ix = open(dir.path());
    let again = ix.metrics().unwrap();
    assert_op("query", &again.query, 0, 0);
    assert_eq!(again.insert.count, 0);
}

#[test]
fn counts_stay_exact_under_threads_and_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let pages: Vec<(String, String)> = (0..8)
        .map(|i| (format!("p{i}"), html(0, "P", &article(100 + i, 6))))
        .collect();
    std::thread::scope(|s| {
        for chunk in pages.chunks(2) {
            let ix = &ix;
            s.spawn(move || {
                for (k, h) in chunk {
                    ix.insert(&page(k, "h", h)).unwrap();
                    for _ in 0..5 {
                        ix.query(Content::Html(h.as_bytes())).unwrap();
                    }
                }
            });
        }
    });
    let m = ix.metrics().unwrap();
    assert_eq!((m.insert.count, m.insert.errors), (8, 0));
    assert_latency("insert", &m.insert.latency, 8);
    assert_op("query", &m.query, 40, 0);
    drop(ix);

    // A read-only index has metrics too; its refused writes are errors.
    let ro = Index::open_read_only(dir.path()).unwrap();
    ro.query(Content::Html(pages[0].1.as_bytes())).unwrap();
    assert!(ro.insert(&page("new", "h", &pages[1].1)).is_err());
    let m = ro.metrics().unwrap();
    assert_op("query", &m.query, 1, 0);
    assert_eq!((m.insert.count, m.insert.errors), (0, 1));
    assert_parts(&m);
}
