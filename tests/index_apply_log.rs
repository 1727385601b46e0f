//! The apply-log API (SCALEOUT §11 item 5, §5 S5, §9): a partition's operation list applied
//! once in effect.
//!
//! A source index takes two days of pages (batch inserts, deletes of members and
//! representatives, replaces, pages that take freed ids again), with site chrome learned and a
//! low over-frequent threshold, so its logs hold every kind of operation. Day 1's log is its whole
//! state; day 2's is the difference between the two states (deletes, whole overwrites, posting
//! removes and adds). An empty index that applies them as batches 1 and 2 holds the source's
//! state — the same export, clusters, stored keys and values, and state in memory (the same next
//! insert's verdict) — and passes `check()`. Applying a log twice writes nothing the second time;
//! batches out of order are refused; a crash part way through a log (a prefix written in chunks,
//! or a writer process killed with SIGKILL while applying) is repaired by applying the whole log
//! again.
mod common;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use neardup::merge::{ApplyOutcome, LogCounter, LogOp};
use neardup::{
    BatchOptions, ChromeConfig, Error, FrequentConfig, Index, IndexOptions, Method, Page,
    SignatureConfig,
};
use proptest::prelude::*;

fn options(method: &str) -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        signature: SignatureConfig {
            method: Method::from_name(method).unwrap(),
            ..SignatureConfig::default()
        },
        chrome: ChromeConfig {
            enabled: true,
            ..ChromeConfig::default()
        },
        frequent: FrequentConfig {
            max_pages: 5,
            ..FrequentConfig::default()
        },
        ..IndexOptions::default()
    }
}

/// Inserts `(key, host, html)` pages in one batch.
fn insert_all(ix: &Index, pages: &[(String, String, String)]) {
    insert_pages(ix, pages, &BatchOptions::default());
}

/// The source index after day 1 and after day 2, and the logs of the two days.
struct Source {
    day1: Vec<LogOp>,
    day2: Vec<LogOp>,
    /// The log of the state after day 2.
    state2: Vec<LogOp>,
    export2: Vec<(String, String)>,
    clusters2: Vec<(u32, String, Vec<String>)>,
}

fn build_source(dir: &Path, method: &str) -> Source {
    let ix = Index::open(dir, options(method)).unwrap();
    let mut day1 = Vec::new();
    for f in 0..24u64 {
        for v in 0..(2 + f % 6) {
            let (host, html) = family_page(f, v);
            day1.push((format!("f{f}-v{v}"), host, html));
        }
    }
    // Pages alone in their clusters, some deleted each day: their page and cluster ids are
    // freed, and day 2's new pages take day 1's again.
    for i in 0..10u64 {
        let (host, html) = family_page(1_000 + i, 0);
        day1.push((format!("solo-{i}"), host, html));
    }
    insert_all(&ix, &day1);
    for i in 0..4 {
        ix.delete(&format!("solo-{i}")).unwrap();
    }
    let state1 = ix.state_log().unwrap();
    ix.checkpoint(day1_dir(dir)).unwrap();
    // Day 2: deletes (the representatives of the first families, so members hand over, and
    // members), replaces, and new pages that take the freed ids again.
    for f in 0..8u64 {
        if let Some((_, rep)) = ix.representative_of(&format!("f{f}-v0")).unwrap() {
            ix.delete(&rep).unwrap();
        }
    }
    for f in 8..12u64 {
        ix.delete(&format!("f{f}-v1")).unwrap();
    }
    let mut day2 = Vec::new();
    for f in 12..16u64 {
        let (host, html) = family_page(f + 100, 0);
        day2.push((format!("f{f}-v0"), host, html));
    }
    for f in 20..30u64 {
        for v in 0..3 {
            let (host, html) = family_page(f, v + 10);
            day2.push((format!("g{f}-v{v}"), host, html));
        }
    }
    insert_all(&ix, &day2);
    for i in 4..10 {
        ix.delete(&format!("solo-{i}")).unwrap();
    }
    assert!(ix.check().unwrap().is_clean());
    let state2 = ix.state_log().unwrap();
    let (export2, clusters2) = exports(&ix);
    // The logs hold every kind of operation the source's writes make.
    let kinds = |log: &[LogOp]| -> Vec<&'static str> {
        let mut k: Vec<&'static str> = log.iter().map(kind_of).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    let all = kinds(&state2);
    for k in [
        "posting",
        "simhash",
        "frequent",
        "key",
        "doc",
        "text",
        "cluster",
        "page_blocks",
        "host",
        "block",
        "free_doc",
        "free_cluster",
        "counter",
    ] {
        // Word postings (methods on document frequencies) are never over-frequent.
        if k == "frequent" && Method::from_name(method).unwrap().uses_df() {
            continue;
        }
        assert!(all.contains(&k), "no {k} operation in the source's state");
    }
    let day2 = diff(&state1, &state2);
    // The kinds that only a day's difference holds.
    assert!(day2
        .iter()
        .any(|op| matches!(op, LogOp::Doc { record: None, .. })));
    assert!(day2
        .iter()
        .any(|op| matches!(op, LogOp::FreeDoc { free: false, .. })));
    assert!(day2
        .iter()
        .any(|op| matches!(op, LogOp::Posting { delta, .. } if !delta.remove.is_empty())));
    drop(ix);
    assert_eq!(
        day2_log(dir),
        day2,
        "the day 2 log derives from the directories alone"
    );
    Source {
        day2,
        day1: state1,
        state2,
        export2,
        clusters2,
    }
}

/// Where the source's state after day 1 is kept.
fn day1_dir(source: &Path) -> PathBuf {
    source.with_extension("day1")
}

/// Day 2's log, from the source's directory and its day 1 checkpoint (both opened read-only).
fn day2_log(source: &Path) -> Vec<LogOp> {
    let state = |dir: &Path| Index::open_read_only(dir).unwrap().state_log().unwrap();
    diff(&state(&day1_dir(source)), &state(source))
}

fn kind_of(op: &LogOp) -> &'static str {
    match op {
        LogOp::Posting { .. } => "posting",
        LogOp::Simhash { .. } => "simhash",
        LogOp::Frequent { .. } => "frequent",
        LogOp::Key { .. } => "key",
        LogOp::Doc { .. } => "doc",
        LogOp::Text { .. } => "text",
        LogOp::Cluster { .. } => "cluster",
        LogOp::PageBlocks { .. } => "page_blocks",
        LogOp::HostPages { .. } => "host",
        LogOp::BlockPages { .. } => "block",
        LogOp::FreeDoc { .. } => "free_doc",
        LogOp::FreeCluster { .. } => "free_cluster",
        LogOp::Counter(_) => "counter",
        _ => "other",
    }
}

/// The log that turns state `old` into state `new` (both whole state logs): the library's
/// state diff, counters absolute.
fn diff(old: &[LogOp], new: &[LogOp]) -> Vec<LogOp> {
    neardup::merge::state_diff(old, new).into_log(live(old, true), live(old, false))
}

/// The live page (`docs`) or cluster count a state log's counters hold (0 when none).
fn live(log: &[LogOp], docs: bool) -> u64 {
    log.iter()
        .find_map(|op| match op {
            LogOp::Counter(LogCounter::LiveDocs(v)) if docs => Some(*v),
            LogOp::Counter(LogCounter::LiveClusters(v)) if !docs => Some(*v),
            _ => None,
        })
        .unwrap_or(0)
}

/// `ix` holds the source's state after day 2.
fn assert_holds_day2(ix: &Index, source: &Source) {
    assert_eq!(
        normalized(ix.state_log().unwrap()),
        normalized(source.state2.clone())
    );
    let (pairs, clusters) = exports(ix);
    assert_eq!(pairs, source.export2);
    assert_eq!(clusters, source.clusters2);
    let report = ix.check().unwrap();
    assert!(report.is_clean(), "{:#?}", report.problems);
}

/// An empty index with `source`'s options, in `dir`.
fn empty(dir: &Path, method: &str) -> Index {
    Index::open(dir, options(method)).unwrap()
}

/// The two days applied as batches 1 and 2 give the source's state, on disk and in memory.
fn rebuilds(method: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let source_dir = tmp.path().join("source");
    let source = build_source(&source_dir, method);
    let target_dir = tmp.path().join("target");
    let ix = empty(&target_dir, method);
    assert!(matches!(
        ix.apply_log(1, &source.day1),
        Ok(ApplyOutcome::Applied { chunks: 1 })
    ));
    let chunks = ix.apply_log_chunked(2, &source.day2, 4096).unwrap();
    assert!(
        matches!(chunks, ApplyOutcome::Applied { chunks } if chunks > 1),
        "{chunks:?}"
    );
    assert_eq!(ix.applied_batch().unwrap(), Some(2));
    assert_holds_day2(&ix, &source);
    let stats = ix.stats().unwrap();
    let source_ix = Index::open(&source_dir, options(method)).unwrap();
    let source_stats = source_ix.stats().unwrap();
    assert_eq!(
        (stats.pages, stats.clusters, &stats.frequent, stats.page_ids),
        (
            source_stats.pages,
            source_stats.clusters,
            &source_stats.frequent,
            source_stats.page_ids
        )
    );
    // The state in memory is current: the next page gets the same verdict in both.
    for (key, (host, html)) in [
        ("next-1", family_page(3, 40)),
        ("next-2", family_page(21, 41)),
        ("next-3", family_page(500, 0)),
    ] {
        let p = page(key, &host, &html);
        let (mut a, mut b) = (source_ix.insert(&p).unwrap(), ix.insert(&p).unwrap());
        a.timing = Default::default();
        b.timing = Default::default();
        assert_eq!(a, b, "{key}");
    }
    assert!(ix.check().unwrap().is_clean());
    // And on disk: reopened, the same.
    drop(ix);
    let ix = Index::open(&target_dir, options(method)).unwrap();
    assert_eq!(exports(&ix), exports(&source_ix));
    assert!(ix.check().unwrap().is_clean());
}

#[test]
fn two_days_of_logs_rebuild_the_source() {
    rebuilds("lcs");
}

#[test]
fn two_days_of_logs_rebuild_the_source_under_document_frequencies() {
    rebuilds("tfidf");
}

#[test]
fn a_log_applied_twice_is_applied_once() {
    let tmp = tempfile::tempdir().unwrap();
    let source = build_source(&tmp.path().join("source"), "lcs");
    let ix = empty(&tmp.path().join("target"), "lcs");
    ix.apply_log(1, &source.day1).unwrap();
    ix.apply_log(2, &source.day2).unwrap();
    let state = ix.state_log().unwrap();
    assert_eq!(
        ix.apply_log(2, &source.day2).unwrap(),
        ApplyOutcome::AlreadyApplied
    );
    // Even with another list: the batch is what counts.
    assert_eq!(
        ix.apply_log(2, &source.day1).unwrap(),
        ApplyOutcome::AlreadyApplied
    );
    assert_eq!(ix.state_log().unwrap(), state);
    assert_holds_day2(&ix, &source);
}

#[test]
fn logs_read_and_written_one_operation_at_a_time_are_the_whole_logs() {
    use neardup::merge::encode_log;
    let tmp = tempfile::tempdir().unwrap();
    let source_dir = tmp.path().join("source");
    let source = build_source(&source_dir, "lcs");
    // Day 2's diff read from the source index one operation at a time (every kind of
    // operation, chrome included): the bytes of the whole-state diff.
    let day1 = Index::open_read_only(day1_dir(&source_dir))
        .unwrap()
        .state_log()
        .unwrap();
    let streamed = Index::open_read_only(&source_dir)
        .unwrap()
        .state_diff_log(&day1, live(&day1, true), live(&day1, false))
        .unwrap();
    assert_eq!(streamed, encode_log(&source.day2));
    // Applied from their bytes, a chunk decoded at a time: the source's state.
    let ix = empty(&tmp.path().join("target"), "lcs");
    let (one, two) = (encode_log(&source.day1), encode_log(&source.day2));
    assert!(matches!(
        ix.apply_log_bytes(1, &one),
        Ok(ApplyOutcome::Applied { .. })
    ));
    assert!(matches!(
        ix.apply_log_bytes(2, &two),
        Ok(ApplyOutcome::Applied { .. })
    ));
    assert_eq!(
        ix.apply_log_bytes(2, &two).unwrap(),
        ApplyOutcome::AlreadyApplied
    );
    assert_holds_day2(&ix, &source);
    // Damaged bytes are refused before anything is written.
    let other = empty(&tmp.path().join("other"), "lcs");
    let before = other.state_log().unwrap();
    let mut bad = one.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    assert!(matches!(
        other.apply_log_bytes(1, &bad),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(other.applied_batch().unwrap(), None);
    assert_eq!(other.state_log().unwrap(), before);
    // From files, read an operation at a time: the same state; a damaged or cut file is
    // refused before anything is written; a missing one is an I/O error.
    let files = empty(&tmp.path().join("files"), "lcs");
    let (f1, f2, fbad) = (
        tmp.path().join("1.ndlog"),
        tmp.path().join("2.ndlog"),
        tmp.path().join("bad.ndlog"),
    );
    std::fs::write(&f1, &one).unwrap();
    std::fs::write(&f2, &two).unwrap();
    for damaged in [bad.clone(), one[..one.len() - 5].to_vec()] {
        std::fs::write(&fbad, &damaged).unwrap();
        assert!(matches!(
            files.apply_log_file(1, &fbad),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(files.applied_batch().unwrap(), None);
    }
    assert!(matches!(
        files.apply_log_file(1, &tmp.path().join("missing.ndlog")),
        Err(Error::Io { .. })
    ));
    assert!(matches!(
        files.apply_log_file(1, &f1),
        Ok(ApplyOutcome::Applied { .. })
    ));
    assert!(matches!(
        files.apply_log_file(2, &f2),
        Ok(ApplyOutcome::Applied { .. })
    ));
    assert_eq!(
        files.apply_log_file(2, &f2).unwrap(),
        ApplyOutcome::AlreadyApplied
    );
    assert_eq!(files.state_log().unwrap(), ix.state_log().unwrap());
    assert_holds_day2(&files, &source);
    // The same logs in global (64-bit) ids, as the distributed merge writes them (version 2):
    // narrowed as they are applied, the same state.
    let wide_index = empty(&tmp.path().join("wide"), "lcs");
    let (w1, w2) = (
        encode_log(&wide(source.day1.clone())),
        encode_log(&wide(source.day2.clone())),
    );
    assert_ne!(w1, one);
    let fw2 = tmp.path().join("2w.ndlog");
    std::fs::write(&fw2, &w2).unwrap();
    wide_index.apply_log_bytes(1, &w1).unwrap();
    wide_index.apply_log_file(2, &fw2).unwrap();
    assert_eq!(wide_index.state_log().unwrap(), ix.state_log().unwrap());
    // An id past the 32-bit ids this index stores: refused, named, before anything is written.
    let far = (1u64 << 32) + 7;
    let mut past = wide(source.day1.clone());
    past.push(LogOp::FreeDoc {
        id: far,
        free: true,
    });
    let narrow_index = empty(&tmp.path().join("narrow"), "lcs");
    let before = narrow_index.state_log().unwrap();
    let e = narrow_index
        .apply_log_bytes(1, &encode_log(&past))
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument(ref m) if m.contains(&far.to_string())),
        "{e}"
    );
    assert_eq!(narrow_index.applied_batch().unwrap(), None);
    assert_eq!(narrow_index.state_log().unwrap(), before);
}

#[test]
fn batches_are_applied_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let source = build_source(&tmp.path().join("source"), "lcs");
    let ix = empty(&tmp.path().join("target"), "lcs");
    // Any first batch.
    ix.apply_log(41, &source.day1).unwrap();
    let state = ix.state_log().unwrap();
    for refused in [43, 40, 1, 0] {
        let e = ix.apply_log(refused, &source.day2).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    }
    assert_eq!(ix.state_log().unwrap(), state, "nothing written");
    assert_eq!(ix.applied_batch().unwrap(), Some(41));
    assert!(matches!(
        ix.apply_log(42, &source.day2),
        Ok(ApplyOutcome::Applied { .. })
    ));
    assert_holds_day2(&ix, &source);
    assert!(matches!(
        ix.apply_log(44, &[]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ix.apply_log(43, &[LogOp::Counter(LogCounter::NextSeq(u64::MAX - 1))]),
        Ok(ApplyOutcome::Applied { chunks: 1 })
    ));
}

/// A batch insert in flight holds back the ids freed meanwhile: a log, which sets free ids as
/// it says, waits for it to end.
#[test]
fn a_log_is_refused_while_a_batch_insert_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let ix = empty(tmp.path(), "lcs");
    let pages: Vec<(String, String, String)> = (0..6u64)
        .map(|f| {
            let (host, html) = family_page(f, 0);
            (format!("p{f}"), host, html)
        })
        .collect();
    let pages: Vec<Page<'_>> = pages.iter().map(|(k, h, html)| page(k, h, html)).collect();
    let mut refused = 0;
    let opts = BatchOptions {
        group: 2,
        ..BatchOptions::default()
    };
    ix.insert_batch(&pages, &opts, &mut |_, _| {
        let e = ix.apply_log(1, &[]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        refused += 1;
    })
    .unwrap();
    assert!(refused > 0);
    assert_eq!(ix.applied_batch().unwrap(), None);
    assert!(matches!(
        ix.apply_log(1, &[]),
        Ok(ApplyOutcome::Applied { chunks: 1 })
    ));
}

/// A crash after some chunks of day 2 (the writer stopped, the index reopened): the whole log
/// applied again gives day 2's state.
#[test]
fn a_crash_mid_apply_is_repaired_by_applying_again() {
    let tmp = tempfile::tempdir().unwrap();
    let source = build_source(&tmp.path().join("source"), "lcs");
    let n = source.day2.len();
    for (round, cut) in [1, n / 7, n / 3, n / 2, n - 1, n].into_iter().enumerate() {
        let dir = tmp.path().join(format!("target-{round}"));
        let ix = empty(&dir, "lcs");
        ix.apply_log(1, &source.day1).unwrap();
        let chunks = ix.apply_log_unrecorded(&source.day2[..cut], 2048).unwrap();
        assert!(chunks >= 1);
        assert_eq!(ix.applied_batch().unwrap(), Some(1));
        drop(ix);
        let ix = empty(&dir, "lcs");
        // Batch 1 is recorded, so the interrupted batch 2 is the one it takes.
        assert!(matches!(
            ix.apply_log(3, &source.day2),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            ix.apply_log_chunked(2, &source.day2, 2048),
            Ok(ApplyOutcome::Applied { .. })
        ));
        assert_holds_day2(&ix, &source);
    }
}

/// One source, built once for the property test's cases.
fn shared_source() -> &'static (tempfile::TempDir, Source) {
    static SOURCE: std::sync::OnceLock<(tempfile::TempDir, Source)> = std::sync::OnceLock::new();
    SOURCE.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let source = build_source(&tmp.path().join("source"), "lcs");
        (tmp, source)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Any prefix of day 2, written in any chunks (a crash, reopened or not), then the whole of
    /// day 2 in any chunks: day 2's state.
    #[test]
    fn any_prefix_then_the_whole_log_is_the_whole_log(
        cut in 0.0f64..=1.0,
        chunks in (1usize..20_000, 1usize..20_000),
        reopen in any::<bool>(),
    ) {
        let (_, source) = shared_source();
        let tmp = tempfile::tempdir().unwrap();
        let mut ix = empty(tmp.path(), "lcs");
        ix.apply_log(1, &source.day1).unwrap();
        let cut = (cut * source.day2.len() as f64) as usize;
        ix.apply_log_unrecorded(&source.day2[..cut], chunks.0).unwrap();
        if reopen {
            drop(ix);
            ix = empty(tmp.path(), "lcs");
        }
        let applied = ix.apply_log_chunked(2, &source.day2, chunks.1);
        prop_assert!(matches!(applied, Ok(ApplyOutcome::Applied { .. })), "{:?}", applied);
        assert_holds_day2(&ix, source);
    }
}

const CHILD_ENV: &str = "NEARDUP_APPLY_CHILD";

/// The writer of the kill test: run only as a child of `a_writer_killed_mid_apply_...` (it is
/// `#[ignore]`d otherwise). Applies day 2 in small chunks, then waits to be killed.
#[test]
#[ignore]
fn apply_log_child() {
    let Ok(dirs) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (source, target) = dirs.split_once('\n').unwrap();
    let log = day2_log(Path::new(source));
    let ix = Index::open(target, options("lcs")).unwrap();
    std::fs::write(Path::new(target).with_extension("started"), b"").unwrap();
    ix.apply_log_chunked(2, &log, 512).unwrap();
    std::fs::write(Path::new(target).with_extension("done"), b"").unwrap();
    std::thread::sleep(Duration::from_secs(600));
}

/// A writer process killed with SIGKILL while it applies day 2 (at several moments: before the
/// first chunk, part way, after the batch is recorded): reopened, the index holds batch 1 or
/// batch 2, and applying day 2 (again) gives day 2's state.
#[test]
fn a_writer_killed_mid_apply_is_repaired_by_applying_again() {
    let tmp = tempfile::tempdir().unwrap();
    let source_dir = tmp.path().join("source");
    let source = build_source(&source_dir, "lcs");
    let exe = std::env::current_exe().unwrap();
    let (mut before_the_record, mut part_way) = (0, 0);
    let mut rng = Rng(0xA991);
    // How long the child takes to apply the log, measured in round 0 (not killed before the
    // end); later rounds kill it at a random moment of that span.
    let mut span = Duration::ZERO;
    let rounds = 8u64;
    for round in 0..rounds {
        let target: PathBuf = tmp.path().join(format!("target-{round}"));
        {
            let ix = empty(&target, "lcs");
            ix.apply_log(1, &source.day1).unwrap();
        }
        let started = target.with_extension("started");
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "apply_log_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(
                CHILD_ENV,
                format!("{}\n{}", source_dir.display(), target.display()),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !started.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the child did not start"
            );
            if let Some(status) = child.try_wait().unwrap() {
                panic!("round {round}: the child stopped by itself ({status})");
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let t1 = Instant::now();
        if round == 0 {
            let done = target.with_extension("done");
            while !done.exists() {
                assert!(
                    t1.elapsed() < Duration::from_secs(60),
                    "the child did not end"
                );
                std::thread::sleep(Duration::from_micros(200));
            }
            span = t1.elapsed();
        } else {
            std::thread::sleep(Duration::from_micros(
                rng.below(span.as_micros() as usize) as u64
            ));
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let ix = empty(&target, "lcs");
        let applied = ix.applied_batch().unwrap();
        assert!(matches!(applied, Some(1) | Some(2)), "{applied:?}");
        if applied == Some(1) {
            before_the_record += 1;
            if normalized(ix.state_log().unwrap()) != normalized(source.day1.clone()) {
                part_way += 1;
            }
        }
        let outcome = ix.apply_log_chunked(2, &source.day2, 4096).unwrap();
        assert_eq!(
            outcome == ApplyOutcome::AlreadyApplied,
            applied == Some(2),
            "round {round}"
        );
        assert_holds_day2(&ix, &source);
    }
    eprintln!(
        "apply-log kills: {before_the_record} of {} before the batch was recorded ({part_way} \
         part way), span {span:?}",
        rounds - 1
    );
    assert!(
        before_the_record > 0,
        "no kill landed before the batch was recorded"
    );
}
