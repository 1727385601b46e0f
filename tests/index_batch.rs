//! Batch insert: results in input order, bad pages do not stop the others, a key given twice in
//! one batch keeps its last page whatever the insertion order; the default order is the order
//! given.
mod common;
use common::*;
use neardup::{BatchOptions, BatchOrder, Content, Error, OrderScope, Page};

#[test]
fn the_last_page_of_a_repeated_key_wins() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    // v1 is short (few fingerprints), v2 long (many): the fingerprint order puts v2 first.
    let v1 = html(0, "t", &article(60, 3));
    let v2 = html(0, "t", &article(61, 12));
    let long_host = "h".repeat(300);
    let pages = vec![
        page("k", "h", &v1),
        page("other", "h", &v2),
        page("k", "h", &v2),
        Page {
            key: "",
            host: "h",
            time: 0,
            content: Content::Html(v1.as_bytes()),
        },
        Page {
            key: "bad-host",
            host: &long_host,
            time: 0,
            content: Content::Html(v1.as_bytes()),
        },
    ];
    let opts = BatchOptions {
        order: BatchOrder::FingerprintCount,
        ..BatchOptions::default()
    };
    let results = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
    assert!(matches!(&results[0], Err(Error::InvalidArgument(m)) if m.contains("superseded")));
    assert!(results[1].is_ok() && results[2].is_ok());
    assert!(matches!(results[3], Err(Error::InvalidArgument(_))));
    assert!(matches!(results[4], Err(Error::InvalidArgument(_))));
    // "k" holds v2: it is an exact duplicate of "other".
    assert_eq!(ix.representative_of("k").unwrap().unwrap().1, "other");
    assert_eq!(ix.len(), 2);
    assert_clean(&ix);
}

/// Issue #33, item 7: by default a batch is inserted in the order given, what a crawler means by
/// "first seen": of two near duplicates the one given first leads their cluster, even when the
/// later one has more fingerprints (the fingerprint order, asked for, puts that one first).
/// Whole-batch scope names a sort, so it is refused with input order rather than ignored.
#[test]
fn the_default_order_is_the_order_given() {
    assert_eq!(BatchOptions::default().order, BatchOrder::Input);
    assert_eq!(BatchOrder::default(), BatchOrder::Input);
    assert_eq!(BatchOptions::default().scope, OrderScope::Window);
    // The same first eight paragraphs; the later page has four more.
    let short = html(0, "t", &article(62, 8));
    let long = html(0, "t", &article(62, 12));
    let pages = [page("short", "h", &short), page("long", "h", &long)];
    let leader = |opts: &BatchOptions| {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        let vs = ix.insert_batch(&pages, opts, &mut |_, _| {}).unwrap();
        assert!(vs
            .iter()
            .all(|v| v.as_ref().is_ok_and(|v| v.cluster.is_some())));
        assert_clean(&ix);
        let (s, l) = (
            ix.representative_of("short").unwrap().unwrap().1,
            ix.representative_of("long").unwrap().unwrap().1,
        );
        assert_eq!(s, l, "one cluster");
        s
    };
    assert_eq!(leader(&BatchOptions::default()), "short");
    let by_count = BatchOptions {
        order: BatchOrder::FingerprintCount,
        ..BatchOptions::default()
    };
    assert_eq!(leader(&by_count), "long");

    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let whole_input = BatchOptions {
        scope: OrderScope::Batch,
        ..BatchOptions::default()
    };
    let e = ix
        .insert_batch(&pages, &whole_input, &mut |_, _| {})
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("FingerprintCount")),
        "{e}"
    );
    assert_eq!(ix.len(), 0, "nothing inserted");
}

#[test]
fn pages_without_host_are_never_few_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let ix = neardup::Index::open(
        dir.path(),
        neardup::IndexOptions {
            frequent: neardup::FrequentConfig {
                max_pages: 1_000,
                few_hosts_pages: 3,
                few_hosts: 1,
            },
            ..neardup::IndexOptions::default()
        },
    )
    .unwrap();
    let base = article(70, 8);
    for i in 0..8u64 {
        let h = html(i as usize, "t", &edited(&base, i));
        ix.insert(&page(&format!("p{i}"), "", &h)).unwrap();
    }
    assert!(ix.stats().unwrap().frequent.is_empty());
    assert_eq!(ix.stats().unwrap().clusters, 1);
}

/// Pages for the batch tests: articles with variants (another template, a few words edited,
/// an excerpt), near-duplicates landing in the same window and across windows, and a few keys
/// given again later (a replace inside the batch).
fn corpus_with_variants(n: u64) -> Vec<(String, String)> {
    let mut pages = Vec::new();
    for a in 0..n {
        let paras = article(1_000 + a, 6 + (a % 5) as usize);
        let title = format!("Article {a}");
        pages.push((format!("a{a}"), html(a as usize, &title, &paras)));
        pages.push((format!("a{a}-t"), html(a as usize + 1, &title, &paras)));
        pages.push((
            format!("a{a}-e"),
            html(a as usize, &title, &edited(&paras, 77 + a)),
        ));
        pages.push((format!("a{a}-x"), html(2, &title, &paras[..3])));
    }
    let mut r = Rng(5);
    for i in (1..pages.len()).rev() {
        let j = r.below(i + 1);
        pages.swap(i, j);
    }
    // Some keys come back later with another page: the batch replaces them.
    for a in (0..n).step_by(7) {
        let paras = article(5_000 + a, 5);
        pages.push((format!("a{a}-e"), html(0, "Replaced", &paras)));
    }
    pages
}

#[test]
fn batch_decides_as_single_inserts_do() {
    let docs = corpus_with_variants(60);
    let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, "h", h)).collect();
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (batch_ix, single_ix) = (open(da.path()), open(db.path()));
    // Small windows and groups: pre-decisions, window-local outcomes and postings read ahead
    // are used across many windows and groups.
    let opts = BatchOptions {
        order: BatchOrder::Input,
        group: 7,
        window: 40,
        ..BatchOptions::default()
    };
    let batch = batch_ix
        .insert_batch(&pages, &opts, &mut |_, _| {})
        .unwrap();
    let mut duplicates = 0;
    let mut doc_ids = std::collections::HashMap::new();
    let mut cluster_ids = std::collections::HashMap::new();
    for (p, b) in pages.iter().zip(batch) {
        // A key given twice in one window keeps its last page only: insert that one alone.
        let b = match b {
            Err(Error::InvalidArgument(m)) if m.contains("superseded") => continue,
            b => b.unwrap(),
        };
        let s = single_ix.insert(p).unwrap();
        duplicates += usize::from(s.duplicate);
        assert_eq!(
            (b.duplicate, b.exact, b.replaced),
            (s.duplicate, s.exact, s.replaced),
            "page {}",
            p.key
        );
        // Ids: single inserts give a freed id out again at once, a batch only after it ends, so
        // the same page may get another id; each batch id (never reused within the batch)
        // stands for one single-insert id.
        for (map, bid, sid) in [
            (&mut doc_ids, b.doc, s.doc),
            (&mut cluster_ids, b.cluster, s.cluster),
        ] {
            let (bid, sid) = (bid.unwrap(), sid.unwrap());
            assert_eq!(*map.entry(bid).or_insert(sid), sid, "page {}", p.key);
        }
        assert_eq!(
            (&b.representative, &b.similar_to, b.candidates, b.verified),
            (&s.representative, &s.similar_to, s.candidates, s.verified),
            "page {}",
            p.key
        );
        assert_eq!(b.resemble.to_bits(), s.resemble.to_bits(), "page {}", p.key);
        assert_eq!(b.contain.to_bits(), s.contain.to_bits(), "page {}", p.key);
    }
    assert!(
        duplicates > 100,
        "the corpus has near-duplicates: {duplicates}"
    );
    assert_clean(&batch_ix);
}

#[test]
fn a_batch_beside_another_writer_stays_consistent() {
    let docs = corpus_with_variants(40);
    let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, "h", h)).collect();
    // Copies of the originals under a third template, inserted one by one meanwhile: postings
    // read ahead by the batch go stale and must not be used.
    let copies: Vec<(String, String)> = (0..40u64)
        .map(|a| {
            let paras = article(1_000 + a, 6 + (a % 5) as usize);
            (
                format!("copy{a}"),
                html(a as usize + 2, &format!("Article {a}"), &paras),
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let opts = BatchOptions {
        order: BatchOrder::FingerprintCount,
        group: 5,
        window: 24,
        ..BatchOptions::default()
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            for (k, h) in &copies {
                ix.insert(&page(k, "h", h)).unwrap();
            }
        });
        for r in ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap() {
            if let Err(e) = r {
                assert!(matches!(e, Error::InvalidArgument(m) if m.contains("superseded")));
            }
        }
    });
    for a in 0..40u64 {
        let original = ix.representative_of(&format!("a{a}")).unwrap().unwrap().0;
        let copy = ix
            .representative_of(&format!("copy{a}"))
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(original, copy, "article {a} and its copy");
    }
    assert_clean(&ix);
}

/// The group (pages per committed write) changes where work is done, never a decision: the
/// same batch in groups of 1, 7 and a whole window gives the same clusters, under both orders.
#[test]
fn the_group_changes_no_decision() {
    let mut docs = Vec::new();
    for a in 0..15u64 {
        let base = article(200 + a, 4 + (a as usize % 5));
        docs.push((format!("a{a}"), html(0, "t", &base)));
        docs.push((format!("a{a}-c"), html(1, "t", &base)));
        docs.push((format!("a{a}-e"), html(2, "t", &edited(&base, a))));
        docs.push((format!("a{a}-f"), html(0, "t", &edited(&base, a + 50))));
    }
    let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, "h", h)).collect();
    for order in [BatchOrder::FingerprintCount, BatchOrder::Input] {
        let exports: Vec<Vec<(String, String)>> = [1, 7, 20]
            .into_iter()
            .map(|group| {
                let dir = tempfile::tempdir().unwrap();
                let ix = open(dir.path());
                let opts = BatchOptions {
                    order,
                    group,
                    window: 20,
                    ..BatchOptions::default()
                };
                let results = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
                assert!(results.iter().all(|r| r.is_ok()));
                assert_clean(&ix);
                let mut e = Vec::new();
                ix.export(|k, t| e.push((k.to_string(), t.to_string())))
                    .unwrap();
                e
            })
            .collect();
        assert!(exports.iter().all(|e| e == &exports[0]), "{order:?}");
        // Some pages did join others.
        assert!(exports[0].iter().any(|(k, t)| k != t));
    }
}

/// The whole-batch order is one sort of the whole batch: the clusters do not depend on where
/// the windows fall, they are those of the pages inserted one window at a time in that sorted
/// order, and the results come back in input order. A key given twice in the batch keeps its
/// last page even when the two copies are windows apart.
#[test]
fn the_whole_batch_order_does_not_depend_on_the_window() {
    let mut docs = Vec::new();
    for a in 0..12u64 {
        // Copies far apart in the input and of other lengths, so that windows split them.
        let base = article(300 + a, 3 + (a as usize % 7));
        docs.push((format!("a{a}"), html(0, "t", &base)));
    }
    for a in 0..12u64 {
        let base = article(300 + a, 3 + (a as usize % 7));
        docs.push((format!("a{a}-e"), html(1, "t", &edited(&base, a))));
        docs.push((format!("a{a}-l"), html(2, "t", &article(300 + a, 9))));
    }
    // The same key again, 20 pages after its first copy.
    docs.push(("a3".to_string(), html(2, "t", &article(999, 6))));
    let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, "h", h)).collect();
    let run = |pages: &[Page<'_>], order, scope, window| {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        let opts = BatchOptions {
            order,
            scope,
            group: 3,
            window,
        };
        let results = ix.insert_batch(pages, &opts, &mut |_, _| {}).unwrap();
        assert_clean(&ix);
        let mut e = Vec::new();
        ix.export(|k, t| e.push((k.to_string(), t.to_string())))
            .unwrap();
        e.sort();
        (results, e)
    };
    let whole = |window| {
        run(
            &pages,
            BatchOrder::FingerprintCount,
            OrderScope::Batch,
            window,
        )
    };
    let (results, reference) = whole(pages.len());
    // Input order of the results; the first "a3" was superseded by the last page.
    assert_eq!(results.len(), pages.len());
    assert!(matches!(results[3], Err(Error::InvalidArgument(_))));
    assert!(results.iter().enumerate().all(|(i, r)| i == 3 || r.is_ok()));
    assert!(reference.iter().any(|(k, t)| k != t));
    for window in [1, 5, 8, 17] {
        let (r, e) = whole(window);
        assert_eq!(e, reference, "window {window}");
        assert!(matches!(r[3], Err(Error::InvalidArgument(_))));
    }
    // The same as the pages sorted by descending fingerprint count beforehand (stable), then
    // inserted in that order.
    let cfg = neardup::SignatureConfig::default();
    let count = |p: &Page<'_>| {
        neardup::Signatures::compute(p.content, &cfg).map_or(0, |s| s.fingerprints.len())
    };
    let mut sorted: Vec<Page<'_>> = pages
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 3)
        .map(|(_, p)| *p)
        .collect();
    sorted.sort_by_key(|p| std::cmp::Reverse(count(p)));
    let (_, by_hand) = run(&sorted, BatchOrder::Input, OrderScope::Window, 4);
    assert_eq!(by_hand, reference);
}
