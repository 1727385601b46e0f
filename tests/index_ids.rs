//! Ids of deleted pages and dissolved clusters are given out again (issue "Embedding-grade",
//! point 3): an engine that recrawls and replaces pages every day never runs out of `u32` ids,
//! and the free lists stay exact through deletes, replaces, batches, reopen and compaction.

mod common;
use common::{article, assert_clean, edited, html, open, page};
use neardup::{BatchOptions, BatchOrder, Content, Index, IndexOptions, Page};

fn text_page<'a>(key: &'a str, text: &'a str) -> Page<'a> {
    Page {
        key,
        host: "",
        time: 0,
        content: Content::Text(text),
    }
}

/// Twelve words drawn from a seed.
fn words(seed: u64) -> String {
    const WORDS: [&str; 16] = [
        "river", "stone", "market", "lantern", "orbit", "harbor", "signal", "meadow", "copper",
        "thunder", "silver", "garden", "window", "railway", "forest", "compass",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..12)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{}{}", WORDS[(x % 16) as usize], (x >> 8) % 1000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A million replace cycles of a few keys: every replace frees an id and takes one, so the
/// high-water marks of page and cluster ids stay near the number of live pages.
#[test]
fn a_million_replace_cycles_leave_the_id_high_water_mark_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(
        dir.path(),
        IndexOptions {
            // A killed process, not a lost machine: the WAL without a sync per write.
            sync_writes: false,
            ..IndexOptions::default()
        },
    )
    .unwrap();
    const KEYS: usize = 4;
    // `NEARDUP_ID_CYCLES` runs fewer (a quick look) or more.
    let cycles: usize = std::env::var("NEARDUP_ID_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let start = std::time::Instant::now();
    let keys: Vec<String> = (0..KEYS).map(|k| format!("k{k}")).collect();
    for cycle in 0..cycles {
        let k = cycle % KEYS;
        // Each version of a key differs from the last: a short text of words drawn anew (too
        // short for sentence fingerprints, so candidates come from the simhash tables, and
        // versions spread over them as recrawled pages do).
        let text = words(cycle as u64);
        let v = ix.insert(&text_page(&keys[k], &text)).unwrap();
        assert_eq!(v.replaced, cycle >= KEYS, "cycle {cycle}: {v:?}");
    }
    println!(
        "{cycles} replace cycles in {:.1} s ({:.1} µs each)",
        start.elapsed().as_secs_f64(),
        start.elapsed().as_secs_f64() * 1e6 / cycles as f64
    );
    let stats = ix.stats().unwrap();
    assert_eq!(stats.pages, KEYS as u64);
    // A replace takes its new id before its old one is free: at most twice the keys.
    assert!(
        stats.page_ids as usize <= 2 * KEYS,
        "page ids given out: {}",
        stats.page_ids
    );
    assert!(
        stats.cluster_ids as usize <= 2 * KEYS,
        "cluster ids given out: {}",
        stats.cluster_ids
    );
    assert_clean(&ix);
}

#[test]
fn freed_ids_are_reused_and_old_references_do_not_name_the_new_page() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(1, 6);
    let ha = html(0, "A", &a);
    let hb = html(1, "B", &edited(&a, 2));
    let va = ix.insert(&page("a", "x.example", &ha)).unwrap();
    let vb = ix.insert(&page("b", "y.example", &hb)).unwrap();
    assert_eq!(vb.similar_to.as_deref(), Some("a"));
    // "b" still leads nothing; delete "a": "b" takes its cluster over.
    let d = ix.delete("a").unwrap();
    assert!(d.was_representative);
    assert_eq!(d.representative.as_deref(), Some("b"));
    // A new, unrelated page gets "a"'s id…
    let hc = html(2, "C", &article(9, 6));
    let vc = ix.insert(&page("c", "z.example", &hc)).unwrap();
    assert_eq!(vc.doc, va.doc, "the freed id is given out again");
    // …and "b" is not said to be similar to "c", which took the id of the page it resembled.
    let rb = ix.get("b").unwrap().unwrap();
    assert_eq!(rb.similar_to, None, "{rb:?}");
    let mut exported = Vec::new();
    ix.export(|k, t| exported.push((k.to_string(), t.to_string())))
        .unwrap();
    assert!(exported.contains(&("b".into(), "b".into())), "{exported:?}");
    // First-seen policy: insertion numbers, not ids, decide who leads.
    assert!(ix.get("c").unwrap().unwrap().seq > rb.seq);
    assert_clean(&ix);
    drop(ix);
    // The free lists survive reopening.
    let ix = open(dir.path());
    assert_clean(&ix);
    ix.delete("c").unwrap();
    let again = ix.insert(&page("d", "z.example", &hc)).unwrap();
    assert_eq!(again.doc, va.doc);
    assert_clean(&ix);
}

#[test]
fn ids_freed_during_a_batch_wait_for_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let bodies: Vec<String> = (0..40)
        .map(|i| html(i % 3, &format!("P{i}"), &article(100 + i as u64, 5)))
        .collect();
    let keys: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
    let pages: Vec<Page<'_>> = keys
        .iter()
        .zip(&bodies)
        .map(|(k, b)| page(k, "h.example", b))
        .collect();
    let opts = BatchOptions {
        order: BatchOrder::Input,
        window: 8,
        group: 4,
        ..BatchOptions::default()
    };
    for r in ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap() {
        r.unwrap();
    }
    // A second batch replaces every page: the ids it frees are not given out again inside it.
    let bodies2: Vec<String> = (0..40)
        .map(|i| html(i % 3, &format!("Q{i}"), &article(500 + i as u64, 5)))
        .collect();
    let pages2: Vec<Page<'_>> = keys
        .iter()
        .zip(&bodies2)
        .map(|(k, b)| page(k, "h.example", b))
        .collect();
    let mut ids = std::collections::HashSet::new();
    for r in ix.insert_batch(&pages2, &opts, &mut |_, _| {}).unwrap() {
        let v = r.unwrap();
        assert!(v.replaced);
        assert!(ids.insert(v.doc.unwrap()));
        assert!(
            v.doc.unwrap() >= 40,
            "an id freed in the batch was reused in it: {v:?}"
        );
    }
    assert_clean(&ix);
    // After it, they are.
    let v = ix
        .insert(&page("new", "h.example", &html(0, "N", &article(999, 5))))
        .unwrap();
    assert!(v.doc.unwrap() < 40, "{v:?}");
    assert_clean(&ix);
}
