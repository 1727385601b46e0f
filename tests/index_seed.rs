//! Scratch-index seeding and the diff read back (SCALEOUT §11 item 4, §5 S4): a day decided in
//! a scratch index seeded with part of the standing index gives, once its diff is applied to the
//! standing index as a batch log, exactly what deciding the day in the standing index gives.
//!
//! A reference index takes day 1 (families of near duplicates and pages alone), then a delete
//! list (representatives, so members hand over, and members) and day 2 (new versions of day 1's
//! families, a re-crawled key, new families), all in whole-batch order. The standing index is
//! the reference after day 1. The day is decided in a scratch index seeded with what
//! `Index::decision_reach` finds (SCALEOUT §5 S0–S3 on one machine): the standing pages on the
//! keys (or simhash blocks) of the day's pages, the pages deleted or replaced, the members of
//! every cluster touched (and, for a cluster that may hand over, what its members' keys reach),
//! and those clusters. Its state diff,
//! applied to the standing index, gives the reference's export, clusters and stored state.
mod common;
use std::path::Path;

use common::*;
use neardup::merge::{state_diff, LogOp, ScratchIds};
use neardup::{
    BatchOptions, BatchOrder, Content, FrequentConfig, Index, IndexOptions, OrderScope, Signatures,
};

fn options() -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        frequent: FrequentConfig {
            max_pages: 8,
            ..FrequentConfig::default()
        },
        ..IndexOptions::default()
    }
}

type Pages = Vec<(String, String, String)>;

fn day1() -> Pages {
    let mut out = Vec::new();
    for f in 0..20u64 {
        for v in 0..(1 + f % 5) {
            let (host, html) = family_page(f, v);
            out.push((format!("f{f}-v{v}"), host, html));
        }
    }
    // Short pages, without sentence fingerprints: the day's copies of them are found by
    // simhash alone.
    for i in 0..4u64 {
        out.push((format!("s{i}"), "s.example".into(), short_page(i, "")));
    }
    // Chinese pages in pairs, which the day does not touch: its English pages share neither
    // keys nor simhash neighbourhoods with them.
    for f in 0..15u64 {
        let text = article_zh(500 + f, 4);
        for v in 0..2 {
            let paras = if v == 0 {
                text.clone()
            } else {
                edited(&text, f)
            };
            out.push((
                format!("z{f}-v{v}"),
                "zh.example".into(),
                html(f as usize % 3, &format!("报道 {f}"), &paras),
            ));
        }
    }
    out
}

/// A short page (one sentence, too short for a fingerprint), `extra` appended to it.
fn short_page(i: u64, extra: &str) -> String {
    html(
        0,
        &format!("Note {i}"),
        &[format!(
            "Opening hours of branch {i} change next week while the counters are rebuilt and \
             the hall is painted{extra}. Customers of branch {i} can use the machines in the \
             station until the work is over. We are sorry for the trouble this causes."
        )],
    )
}

fn day2() -> Pages {
    let mut out = Vec::new();
    // New versions of day 1's families: they join, or lead, standing clusters.
    for f in (0..20u64).step_by(2) {
        let (host, html) = family_page(f, 7);
        out.push((format!("f{f}-new"), host, html));
    }
    // A re-crawled key: the page of another family now.
    let (host, html) = family_page(13, 1);
    out.push(("f4-v0".into(), host, html));
    // Copies of the short pages, a word added.
    for i in 0..4u64 {
        out.push((
            format!("s{i}-copy"),
            "s.example".into(),
            short_page(i, " today"),
        ));
    }
    // New families.
    for f in 60..66u64 {
        for v in 0..3 {
            let (host, html) = family_page(f, v);
            out.push((format!("g{f}-v{v}"), host, html));
        }
    }
    out
}

/// Two days of pages and the delete list between them.
struct Days {
    day1: Pages,
    day2: Pages,
    /// Keys whose representatives are deleted (their clusters' members hand over).
    leaders_of: Vec<String>,
    /// Keys deleted as they are.
    members: Vec<String>,
}

impl Days {
    /// The delete list, read from the standing index (the representatives of `leaders_of`).
    fn deletes(&self, standing: &Index) -> Vec<String> {
        let mut out: Vec<String> = self
            .leaders_of
            .iter()
            .filter_map(|k| standing.representative_of(k).unwrap())
            .map(|(_, rep)| rep)
            .collect();
        out.extend(self.members.iter().cloned());
        out.sort();
        out.dedup();
        out
    }
}

/// Synthetic days: families of near duplicates, half of them touched by day 2.
fn synthetic() -> Days {
    Days {
        day1: day1(),
        day2: day2(),
        leaders_of: vec!["f1-v0".into(), "f3-v0".into(), "f5-v0".into()],
        members: vec!["f9-v2".into(), "f14-v3".into()],
    }
}

/// Days from the bench's dev corpus: 2,400 pages, then 800 more with re-crawls of day 1's keys
/// (another page's content under the key), after a delete list of the representatives of 12
/// pages' clusters and of 12 pages.
fn dev() -> Option<Days> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/dev/docs.jsonl.gz");
    if !path.exists() {
        return None;
    }
    let pages: Pages = gz_lines(&path)
        .take(3_200)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["host"].as_str().unwrap_or("").to_string(),
                v["html"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let (day1, rest) = pages.split_at(2_400);
    let mut day2 = rest.to_vec();
    for i in 0..6 {
        let (key, host, _) = &day1[i * 301];
        day2.push((key.clone(), host.clone(), rest[i * 97].2.clone()));
    }
    Some(Days {
        day1: day1.to_vec(),
        day2,
        leaders_of: (0..12).map(|i| day1[i * 199 + 3].0.clone()).collect(),
        members: (0..12).map(|i| day1[i * 173 + 11].0.clone()).collect(),
    })
}

/// Inserts pages in one batch, in whole-batch order (the reference of a distributed merge).
fn insert_all(ix: &Index, pages: &Pages) {
    let opts = BatchOptions {
        // Whole-batch order is a sort by fingerprint count, named: the default is input order.
        order: BatchOrder::FingerprintCount,
        scope: OrderScope::Batch,
        ..BatchOptions::default()
    };
    insert_pages(ix, pages, &opts);
}

/// Every page and cluster id of an index, from its state log.
fn all_ids(ix: &Index) -> (Vec<u32>, Vec<u32>) {
    let (mut pages, mut clusters) = (Vec::new(), Vec::new());
    for op in ix.state_log().unwrap() {
        match op {
            LogOp::Doc {
                id,
                record: Some(_),
            } => pages.push(id),
            LogOp::Cluster {
                id,
                record: Some(_),
            } => clusters.push(id),
            _ => {}
        }
    }
    (pages, clusters)
}

/// The pages and clusters to seed for the day (SCALEOUT §5 S0–S3 on one machine): what the
/// day's pages and its deleted and replaced keys reach.
fn seed_set(ix: &Index, day: &Pages, deleted: &[String]) -> (Vec<u32>, Vec<u32>) {
    let cfg = options().signature;
    let probes: Vec<Signatures> = day
        .iter()
        .map(|(_, _, html)| Signatures::compute(Content::Html(html.as_bytes()), &cfg).unwrap())
        .collect();
    let keys: Vec<&str> = day.iter().map(|(k, _, _)| k.as_str()).collect();
    let gone: Vec<&str> = deleted.iter().map(String::as_str).collect();
    let reach = ix.decision_reach(&probes, &keys, &gone).unwrap();
    (reach.pages, reach.clusters)
}

/// Decides day 2 in a scratch index seeded with `pages` and `clusters` of the standing index at
/// `standing`, and applies the diff to the standing index as batch 1.
fn decide_in_scratch(
    days: &Days,
    standing: &Path,
    scratch: &Path,
    pages: &[u32],
    clusters: &[u32],
) {
    let ix = Index::open(standing, options()).unwrap();
    let stats = ix.stats().unwrap();
    let deleted = days.deletes(&ix);
    let seed = ix.seed_log(pages, clusters).unwrap();
    // Written to a file as it is read, the seed has the same bytes (what a doc partition gives a
    // work unit).
    let file = scratch.with_extension("seed.ndlog");
    let size = ix.seed_log_file(pages, clusters, &file).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(size, bytes.len() as u64);
    assert_eq!(
        bytes,
        neardup::merge::encode_log(&seed),
        "the seed file differs"
    );
    std::fs::remove_file(&file).unwrap();
    let sc = Index::open(scratch, options()).unwrap();
    sc.apply_log(1, &seed).unwrap();
    let before = sc.state_log().unwrap();
    for k in &deleted {
        sc.delete(k).unwrap();
    }
    insert_all(&sc, &days.day2);
    let after = sc.state_log().unwrap();
    let log = state_diff(&before, &after).into_log(stats.pages, stats.clusters);
    // The diff read one operation at a time gives the same bytes (what a work unit returns).
    assert_eq!(
        sc.state_diff_log(&before, stats.pages, stats.clusters)
            .unwrap(),
        neardup::merge::encode_log(&log),
        "the streamed diff differs from the whole-state diff"
    );
    // Decided again in a scratch index numbered densely (issue #34 item 5: a work unit's ids
    // need not be as wide as the standing index's), mapped back: the same log, byte for byte.
    let (ids, dense) = ScratchIds::from_seed(wide(seed.clone())).unwrap();
    assert!(ids.seeded_pages() >= pages.len());
    let sc = Index::open(scratch.with_extension("dense"), options()).unwrap();
    sc.apply_log(1, &dense).unwrap();
    let before = sc.state_log().unwrap();
    let before_file = scratch.with_extension("before");
    sc.state_file(&before_file).unwrap();
    for k in &deleted {
        sc.delete(k).unwrap();
    }
    insert_all(&sc, &days.day2);
    assert_eq!(
        sc.state_diff_log_mapped(&before, stats.pages, stats.clusters, &ids)
            .unwrap(),
        neardup::merge::encode_log(&wide(log.clone())),
        "the densely numbered scratch index decided otherwise"
    );
    // What a work unit writes: the state it was seeded with read from a file as the diff goes.
    let since = scratch.with_extension("since");
    sc.state_diff_file_since(
        &before_file,
        stats.pages,
        stats.clusters,
        &since,
        Some(&ids),
    )
    .unwrap();
    assert_eq!(
        std::fs::read(&since).unwrap(),
        neardup::merge::encode_log(&wide(log.clone())),
        "the diff read from a file differs"
    );
    // A state log in address order (not the order `state_file` writes) is refused.
    let unordered = scratch.with_extension("unordered");
    let mut w = neardup::merge::LogFileWriter::<u32>::create(&unordered).unwrap();
    for op in &before {
        w.push(op).unwrap();
    }
    w.finish().unwrap();
    assert!(matches!(
        sc.state_diff_file_since(&unordered, stats.pages, stats.clusters, &since, Some(&ids)),
        Err(neardup::Error::InvalidArgument(_))
    ));
    ix.apply_log(1, &log).unwrap();
    let report = ix.check().unwrap();
    assert!(report.is_clean(), "{:#?}", report.problems);
}

/// The reference after both days, and a copy of it after day 1 at `standing`.
fn reference(days: &Days, dir: &Path, standing: &Path) -> (Exports, Vec<LogOp>) {
    reference_index(days, dir, standing)
}

/// The reference's export and state, with its short-page copies checked for the synthetic days.
fn reference_index(days: &Days, dir: &Path, standing: &Path) -> (Exports, Vec<LogOp>) {
    let ix = Index::open(dir, options()).unwrap();
    insert_all(&ix, &days.day1);
    ix.checkpoint(standing).unwrap();
    for k in days.deletes(&ix) {
        ix.delete(&k).unwrap();
    }
    insert_all(&ix, &days.day2);
    assert_clean(&ix);
    let ex = exports(&ix);
    if days.day2.iter().any(|(k, _, _)| k == "s0-copy") {
        // The copy of a short page joins it (found by simhash: it has no fingerprint).
        let target = |k: &str| ex.0.iter().find(|(key, _)| key == k).map(|p| p.1.clone());
        assert_eq!(target("s0-copy"), target("s0"), "{:?}", ex.0);
    }
    (ex, normalized(ix.state_log().unwrap()))
}

/// Day 2 decided in a scratch index seeded with the whole standing index (`partial` false) or
/// with the part [`seed_set`] finds, applied to the standing index, gives the reference. Returns
/// the pages seeded and the pages standing.
fn decided_in_scratch_is_decided_in_place(days: &Days, partial: bool) -> (usize, u64) {
    let dir = tempfile::tempdir().unwrap();
    let standing = dir.path().join("standing");
    let (want, state) = reference(days, &dir.path().join("reference"), &standing);
    let (pages, clusters, all) = {
        let ix = Index::open(&standing, options()).unwrap();
        let (p, c) = if partial {
            seed_set(&ix, &days.day2, &days.deletes(&ix))
        } else {
            all_ids(&ix)
        };
        (p, c, ix.stats().unwrap().pages)
    };
    decide_in_scratch(
        days,
        &standing,
        &dir.path().join("scratch"),
        &pages,
        &clusters,
    );
    let ix = Index::open(&standing, options()).unwrap();
    assert_eq!(exports(&ix), want);
    assert_eq!(normalized(ix.state_log().unwrap()), state);
    (pages.len(), all)
}

#[test]
fn a_day_decided_in_a_whole_seed_is_the_day_decided_in_place() {
    let (seeded, all) = decided_in_scratch_is_decided_in_place(&synthetic(), false);
    assert_eq!(seeded as u64, all);
}

#[test]
fn a_day_decided_in_a_partial_seed_is_the_day_decided_in_place() {
    let (seeded, all) = decided_in_scratch_is_decided_in_place(&synthetic(), true);
    // The seed is a part: families the day does not touch stay out.
    assert!((seeded as u64) < all, "{seeded} of {all}");
    // The short pages have no fingerprint: their copies were found by simhash, in the scratch
    // index as in place.
    let cfg = options().signature;
    let short = Signatures::compute(Content::Html(short_page(0, "").as_bytes()), &cfg).unwrap();
    assert!(short.fingerprints.is_empty());
}

#[test]
fn dev_days_decided_in_a_partial_seed_are_the_days_decided_in_place() {
    let Some(days) = dev() else {
        eprintln!("the bench's dev corpus is absent: skipped");
        return;
    };
    let (seeded, all) = decided_in_scratch_is_decided_in_place(&days, true);
    eprintln!("seeded {seeded} of {all} standing pages");
    assert!((seeded as u64) < all, "{seeded} of {all}");
}

#[test]
fn seeding_refuses_what_a_part_cannot_reproduce() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path().join("a"), options()).unwrap();
    insert_all(&ix, &day1()[..4].to_vec());
    assert!(ix.seed_log(&[999], &[]).is_err());
    // A refused seed leaves no file behind.
    let file = dir.path().join("seed.ndlog");
    assert!(ix.seed_log_file(&[999], &[], &file).is_err());
    assert!(!file.exists());
    assert!(ix.seed_log(&[], &[999]).is_err());
    let chrome = Index::open(
        dir.path().join("b"),
        IndexOptions {
            chrome: neardup::ChromeConfig {
                enabled: true,
                ..Default::default()
            },
            ..options()
        },
    )
    .unwrap();
    assert!(matches!(
        chrome.seed_log(&[], &[]),
        Err(neardup::Error::InvalidArgument(_))
    ));
}
