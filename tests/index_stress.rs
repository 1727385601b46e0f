//! Concurrency stress (issue "Reliability you can prove", point 5): 8 threads of mixed
//! operations on one index for a bounded time — inserts, replaces, unchanged recrawls, deletes of
//! members and representatives, batches, queries, look-ups and cursors — then `check()`, and
//! every thread's own keys are exactly as it left them. `NEARDUP_STRESS_SECONDS` sets the time
//! (default 4; `scripts/stress.sh` runs it long).

mod common;
use common::{article, assert_clean, edited, html, page, Rng};

use std::collections::HashMap;
use std::time::{Duration, Instant};

use neardup::{BatchOptions, BatchOrder, Content, Index, IndexOptions, Page};

const THREADS: u64 = 8;

/// A page of family `f`, variant `v`: families are shared by all threads, so threads verify
/// against, join and hand over each other's clusters.
fn body(f: u64, v: u64) -> String {
    html(v as usize % 4, "T", &edited(&article(7_000 + f, 6), v))
}

#[derive(Default, Debug)]
struct Counts {
    inserts: u64,
    replaces: u64,
    unchanged: u64,
    deletes: u64,
    batches: u64,
    queries: u64,
    reads: u64,
}

#[test]
fn eight_threads_of_mixed_operations_leave_a_consistent_index() {
    let secs: u64 = std::env::var("NEARDUP_STRESS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(
        dir.path(),
        IndexOptions {
            sync_writes: false,
            ..IndexOptions::default()
        },
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let results: Vec<(HashMap<String, u64>, Counts)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let ix = &ix;
                s.spawn(move || {
                    let mut r = Rng(0x5EED + t);
                    // This thread's keys and the variant each holds now.
                    let mut mine: HashMap<String, u64> = HashMap::new();
                    let mut c = Counts::default();
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        n += 1;
                        let f = r.below(12) as u64;
                        let key = format!("t{t}-k{}", r.below(40));
                        match r.below(100) {
                            0..=39 => {
                                let v = r.below(1_000) as u64;
                                let verdict =
                                    ix.insert(&page(&key, "h.example", &body(f, v))).unwrap();
                                if verdict.replaced {
                                    c.replaces += 1;
                                } else if verdict.unchanged {
                                    c.unchanged += 1;
                                } else {
                                    c.inserts += 1;
                                }
                                mine.insert(key, f * 1_000 + v);
                            }
                            40..=49 => {
                                // An unchanged recrawl of a page this thread holds.
                                if let Some((k, &fv)) = mine.iter().next() {
                                    let k = k.clone();
                                    let v = ix
                                        .insert(&page(
                                            &k,
                                            "h.example",
                                            &body(fv / 1_000, fv % 1_000),
                                        ))
                                        .unwrap();
                                    assert!(v.unchanged, "{k}: {v:?}");
                                    c.unchanged += 1;
                                }
                            }
                            50..=64 => match ix.delete(&key) {
                                Ok(_) => {
                                    assert!(mine.remove(&key).is_some(), "{key} deleted twice");
                                    c.deletes += 1;
                                }
                                Err(neardup::Error::NotFound(_)) => {
                                    assert!(!mine.contains_key(&key), "{key} lost");
                                }
                                Err(e) => panic!("delete {key}: {e}"),
                            },
                            65..=72 => {
                                // A batch of this thread's keys (distinct within the batch).
                                let keys: Vec<String> =
                                    (0..6).map(|i| format!("t{t}-b{}-{i}", n % 5)).collect();
                                let bodies: Vec<(u64, String)> = (0..6)
                                    .map(|i| {
                                        let v = r.below(1_000) as u64;
                                        (v, body((f + i) % 12, v))
                                    })
                                    .collect();
                                let pages: Vec<Page<'_>> = keys
                                    .iter()
                                    .zip(&bodies)
                                    .map(|(k, (_, b))| page(k, "h.example", b))
                                    .collect();
                                let opts = BatchOptions {
                                    order: BatchOrder::Input,
                                    ..BatchOptions::default()
                                };
                                let out = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
                                for ((k, (v, _)), res) in keys.iter().zip(&bodies).zip(out) {
                                    let i = keys.iter().position(|x| x == k).unwrap() as u64;
                                    res.unwrap();
                                    mine.insert(k.clone(), ((f + i) % 12) * 1_000 + v);
                                }
                                c.batches += 1;
                            }
                            73..=84 => {
                                let b = body(f, r.below(1_000) as u64);
                                ix.query(Content::Html(b.as_bytes())).unwrap();
                                c.queries += 1;
                            }
                            85..=94 => {
                                let got = ix.get(&key).unwrap();
                                assert_eq!(got.is_some(), mine.contains_key(&key), "{key}");
                                if let Some(rec) = got {
                                    // Its representative is a page held now or a moment ago.
                                    assert!(!rec.representative.is_empty());
                                }
                                c.reads += 1;
                            }
                            _ => {
                                // A cursor walk at a snapshot: every cluster has a member.
                                for cl in ix.clusters().unwrap().take(20) {
                                    let cl = cl.unwrap();
                                    assert!(cl.size > 0);
                                }
                                c.reads += 1;
                            }
                        }
                    }
                    (mine, c)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_clean(&ix);
    let mut total = Counts::default();
    let mut live = 0;
    for (mine, c) in &results {
        for (k, fv) in mine {
            let rec = ix.get(k).unwrap().unwrap_or_else(|| panic!("{k} lost"));
            // The page held is the last version this thread wrote.
            let expected = neardup::Signatures::compute(
                Content::Html(body(fv / 1_000, fv % 1_000).as_bytes()),
                &ix.options().signature,
            )
            .unwrap();
            assert_eq!(rec.content_hash, expected.content_hash, "{k}");
        }
        live += mine.len() as u64;
        total.inserts += c.inserts;
        total.replaces += c.replaces;
        total.unchanged += c.unchanged;
        total.deletes += c.deletes;
        total.batches += c.batches;
        total.queries += c.queries;
        total.reads += c.reads;
    }
    assert_eq!(ix.len(), live);
    println!("{secs} s, {THREADS} threads: {total:?}; {live} pages live");
}
