//! Unit tests of the format 7 partition: differential against a partition of `u32` ids (an
//! [`Index`] applying the same log narrowed), idempotence, and its keys.

use proptest::prelude::*;

use super::*;
use crate::index::Index;
use crate::merge::layout::{Layout, Role};
use crate::merge::log::{ApplyOutcome, LogCounter, LogOp};
use crate::storage::codec::{ClusterRecord, DocRecord, PageBlocks, TextValue};
use crate::storage::merge::PostingDelta;
use crate::storage::wide_keys::{decode_wide_chrome_page_key, wide_chrome_page_key, wide_free_key};
use crate::storage::{chrome_key, kind, posting_key};

fn options() -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        ..IndexOptions::default()
    }
}

fn record(key: &str, cluster: u64, seq: u64) -> DocRecord<u64> {
    DocRecord {
        key: key.to_string(),
        host: "a.example".into(),
        time: 7,
        cluster,
        text_chars: 11,
        fingerprints: 1,
        simhash: 0x1234_5678_9abc_def0 ^ seq,
        content_hash: u128::from(seq) << 70,
        codes: vec![3, 1],
        similar_to: u64::MAX,
        seq,
        similar_seq: 0,
        resemble: 0.0,
        contain: 0.0,
        raw_hash: Some(seq),
    }
}

/// A log operation of `u64` ids over a small universe of keys and ids (`base` up), so that
/// operations meet.
fn op(base: u64) -> impl Strategy<Value = LogOp<u64>> {
    let id = move |n: u64| (0..n).prop_map(move |i| base + i);
    let ids = move || proptest::collection::vec(id(6), 0..4);
    let posting = (0u8..4, ids(), ids()).prop_map(|(k, add, remove)| LogOp::Posting {
        key: posting_key(kind::SENTENCE, u128::from(k) << 64),
        delta: PostingDelta {
            add: add.into_iter().collect(),
            remove: remove.into_iter().collect(),
        },
    });
    prop_oneof![
        3 => posting,
        1 => (0u8..4, 0u64..3, id(6), any::<bool>()).prop_map(|(table, simhash, doc, present)| {
            LogOp::Simhash { table, simhash, doc, present }
        }),
        1 => (0u8..3, proptest::option::of(prop_oneof![Just(b'P'), Just(b'H')]))
            .prop_map(|(k, reason)| LogOp::Frequent { key: [k; 9], reason }),
        1 => (0u32..4, proptest::option::of(id(6))).prop_map(|(k, doc)| LogOp::Key {
            key: format!("k{k}"),
            doc,
        }),
        1 => (id(6), proptest::option::of((id(4), 0u64..50))).prop_map(|(i, r)| LogOp::Doc {
            id: i,
            record: r.map(|(cluster, seq)| record(&format!("k{i}"), cluster, seq)),
        }),
        1 => (id(6), proptest::option::of(0u8..3)).prop_map(|(i, t)| LogOp::Text {
            id: i,
            value: t.map(|t| TextValue::Text(format!("text {t}"))),
        }),
        1 => (id(4), proptest::option::of(ids())).prop_map(move |(i, m)| LogOp::Cluster {
            id: i,
            record: m.map(|m| ClusterRecord {
                representative: m.first().copied().unwrap_or(base),
                members: m.into_iter().collect(),
            }),
        }),
        1 => (id(6), proptest::option::of(0u64..3)).prop_map(|(i, b)| LogOp::PageBlocks {
            id: i,
            blocks: b.map(|b| PageBlocks {
                host: "a.example".into(),
                counted: vec![b, b + 1],
                dropped: vec![b],
            }),
        }),
        1 => (0u32..3, 0u8..2).prop_map(|(pages, h)| LogOp::HostPages {
            host: format!("h{h}.example"),
            pages,
        }),
        1 => (0u64..3, 0u32..3).prop_map(|(block, pages)| LogOp::BlockPages {
            host: "a.example".into(),
            block,
            pages,
        }),
        1 => (id(8), any::<bool>()).prop_map(|(i, free)| LogOp::FreeDoc { id: i, free }),
        1 => (id(8), any::<bool>()).prop_map(|(i, free)| LogOp::FreeCluster { id: i, free }),
        1 => prop_oneof![
            (8u64..12).prop_map(move |n| LogCounter::NextDoc(base + n)),
            (8u64..12).prop_map(move |n| LogCounter::NextCluster(base + n)),
            (0u64..9).prop_map(LogCounter::LiveDocs),
            (0u64..9).prop_map(LogCounter::LiveClusters),
            (0u64..99).prop_map(LogCounter::NextSeq),
        ]
        .prop_map(LogOp::Counter),
    ]
}

/// A log with allocators above every id its operations name first.
fn log_of(base: u64, ops: Vec<LogOp<u64>>) -> Vec<LogOp<u64>> {
    let mut log = vec![
        LogOp::Counter(LogCounter::NextDoc(base + 8)),
        LogOp::Counter(LogCounter::NextCluster(base + 8)),
    ];
    log.extend(ops);
    log
}

fn without_empty_postings(log: Vec<LogOp<u64>>) -> Vec<LogOp<u64>> {
    log.into_iter()
        .filter(|op| !matches!(op, LogOp::Posting { delta, .. } if delta.add.is_empty()))
        .collect()
}

fn narrow(log: &[LogOp<u64>]) -> Vec<LogOp> {
    log.iter()
        .map(|op| op.clone().to_width().unwrap())
        .collect()
}

fn wide(log: Vec<LogOp>) -> Vec<LogOp<u64>> {
    log.into_iter().map(|op| op.to_width().unwrap()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Differential (SCALEOUT §4): a log applied to a partition of `u32` ids (an index, the log
    /// narrowed) and to a `WidePartition` gives the same state once widened, in whatever chunks;
    /// the state read back and applied to an empty partition is the same state.
    #[test]
    fn a_log_gives_an_index_partitions_state(
        ops in proptest::collection::vec(op(0), 0..40),
        chunks in (1usize..400, 1usize..400),
    ) {
        let log = log_of(0, ops);
        let layout = Layout::new(1, 1, 3).unwrap();
        let routed = layout.route(&log);
        for (role, mine) in [(Role::Key(0), &routed.key[0]), (Role::Doc(0), &routed.doc[0])] {
            let p = Partition::new(layout, role).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let ix = Index::open(dir.path().join("narrow"), options()).unwrap();
            ix.set_partition(p).unwrap();
            ix.apply_log_chunked(3, &narrow(mine), chunks.0).unwrap();
            let wp = WidePartition::create(dir.path().join("wide"), &options(), p).unwrap();
            wp.apply_log_chunked(3, mine, chunks.1).unwrap();
            let state = wp.state_log().unwrap();
            prop_assert_eq!(&state, &wide(ix.state_log().unwrap()));
            let copy = WidePartition::create(dir.path().join("copy"), &options(), p).unwrap();
            copy.apply_log(1, &state).unwrap();
            prop_assert_eq!(
                without_empty_postings(copy.state_log().unwrap()),
                without_empty_postings(state)
            );
        }
    }

    /// Whatever prefix of a log of ids above 2³² a crash left written, in whatever chunks,
    /// applying the whole log then gives the state one whole application gives.
    #[test]
    fn a_prefix_then_the_whole_log_is_the_whole_log(
        ops in proptest::collection::vec(op(5 << 32), 0..40),
        cut in 0usize..43,
        chunks in (1usize..400, 1usize..400, 1usize..400),
    ) {
        let log = log_of(5 << 32, ops);
        let cut = cut.min(log.len());
        let layout = Layout::new(1, 1, 3).unwrap();
        let routed = layout.route(&log);
        for (role, mine) in [(Role::Key(0), &routed.key[0]), (Role::Doc(0), &routed.doc[0])] {
            let p = Partition::new(layout, role).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let once = WidePartition::create(dir.path().join("once"), &options(), p).unwrap();
            once.apply_log_chunked(3, mine, chunks.0).unwrap();
            let path = dir.path().join("crashed");
            let crashed = WidePartition::create(&path, &options(), p).unwrap();
            let prefix: Vec<LogOp<u64>> = mine.iter().take(cut).cloned().collect();
            crashed.apply_log_unrecorded(&prefix, chunks.1).unwrap();
            prop_assert_eq!(crashed.applied_batch().unwrap(), None);
            drop(crashed);
            let again = WidePartition::open(&path).unwrap();
            let applied = again.apply_log_chunked(3, mine, chunks.2);
            prop_assert!(matches!(applied, Ok(ApplyOutcome::Applied { .. })), "{:?}", applied);
            prop_assert_eq!(again.state_log().unwrap(), once.state_log().unwrap());
            // Applied again: nothing changes.
            prop_assert_eq!(again.apply_log(3, mine).unwrap(), ApplyOutcome::AlreadyApplied);
        }
    }
}

#[test]
fn wide_keys_round_trip() {
    for id in [0u64, 7, u64::from(u32::MAX), 1 << 33, u64::MAX - 1] {
        let k = wide_chrome_page_key(id);
        assert_eq!(k[0], chrome_key::PAGE);
        assert_eq!(decode_wide_chrome_page_key(&k), Some(id));
        // Not a narrow page key, nor does a narrow one read as wide.
        assert_eq!(chrome_key::decode(&k), None);
        let f = wide_free_key(meta::FREE_DOC, id);
        assert_eq!(&f[..meta::FREE_DOC.len()], meta::FREE_DOC);
        assert_eq!(&f[meta::FREE_DOC.len()..], &id.to_be_bytes());
    }
    assert_eq!(decode_wide_chrome_page_key(&chrome_key::page(7)), None);
    assert_eq!(decode_wide_chrome_page_key(&chrome_key::host("a.b")), None);
    assert_eq!(decode_wide_chrome_page_key(&[]), None);
}

#[test]
fn a_value_of_u32_ids_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let p = Partition::new(Layout::new(1, 1, 3).unwrap(), Role::Doc(0)).unwrap();
    let wp = WidePartition::create(dir.path(), &options(), p).unwrap();
    // A narrow record under a wide key, a narrow key's id value, a 13-byte simhash key.
    let narrow = DocRecord::<u32> {
        key: "k".into(),
        host: "a.example".into(),
        time: 0,
        cluster: 0,
        text_chars: 1,
        fingerprints: 0,
        simhash: 0,
        content_hash: 0,
        codes: Vec::new(),
        similar_to: u32::MAX,
        seq: 0,
        similar_seq: 0,
        resemble: 0.0,
        contain: 0.0,
        raw_hash: None,
    };
    let cases: [(&str, Vec<u8>, Vec<u8>); 3] = [
        (cf::DOCS, 0u64.to_be_bytes().to_vec(), narrow.encode()),
        (cf::KEYS, b"k".to_vec(), 0u32.to_be_bytes().to_vec()),
        (cf::SIMHASH, wp.tables.key(0, 1, 2).to_vec(), Vec::new()),
    ];
    for (name, k, v) in cases {
        wp.db.put_cf(wp.cf(name), &k, &v).unwrap();
        let e = wp.state_log().unwrap_err();
        assert!(
            matches!(e, Error::Corruption { cf, .. } if cf == name),
            "{e}"
        );
        wp.db.delete_cf(wp.cf(name), &k).unwrap();
    }
    assert!(wp.state_log().is_ok());
    // A counter of 4 bytes (a format 6 allocator).
    wp.db
        .put_cf(wp.cf(cf::META), meta::NEXT_DOC, 3u32.to_be_bytes())
        .unwrap();
    assert!(matches!(
        wp.apply_log(1, &[]),
        Err(Error::Corruption { cf: "meta", .. })
    ));
}

#[test]
fn the_meta_of_a_new_partition() {
    let dir = tempfile::tempdir().unwrap();
    let p = Partition::new(Layout::new(4, 3, 3).unwrap(), Role::Key(2)).unwrap();
    let wp = WidePartition::create(dir.path(), &options(), p).unwrap();
    let m = wp.cf(cf::META);
    let get = |k: &[u8]| wp.db.get_cf(m, k).unwrap();
    assert_eq!(get(meta::FORMAT), Some(7u32.to_be_bytes().to_vec()));
    assert_eq!(get(meta::PARTITION), Some(p.encode()));
    for k in [
        meta::NEXT_DOC,
        meta::NEXT_CLUSTER,
        meta::LIVE_DOCS,
        meta::LIVE_CLUSTERS,
        meta::NEXT_SEQ,
    ] {
        assert_eq!(get(k), Some(vec![0; 8]));
    }
    assert_eq!(get(meta::APPLIED_BATCH), None);
    assert_eq!(wp.config_json().unwrap(), {
        let ix_dir = tempfile::tempdir().unwrap();
        Index::open(ix_dir.path(), options())
            .unwrap()
            .config_json()
            .unwrap()
    });
    // Counters set by a log are 8 bytes.
    wp.apply_log(1, &[LogOp::Counter(LogCounter::NextDoc(1 << 40))])
        .unwrap();
    assert_eq!(
        get(meta::NEXT_DOC),
        Some((1u64 << 40).to_be_bytes().to_vec())
    );
    assert_eq!(wp.counters().unwrap().next_doc, 1 << 40);
    assert!(wp.is_empty().unwrap());
    // One handle per directory per process.
    assert!(matches!(
        WidePartition::open(dir.path()),
        Err(Error::AlreadyOpen { .. })
    ));
}
