//! The format 7 partition (SCALEOUT §4, issue #34 item 5): a batch log applied to a partition of
//! `u32` ids (an `Index`, the log narrowed) and to a `WidePartition` (the log in `u64` ids) gives
//! the same state and seeds once widened; ids above 2³² apply and read back; a partial
//! application then the whole log gives the whole log's state; the batch-order rules; each
//! database refuses the other's format.
mod common;
use std::path::Path;

use common::*;
use neardup::merge::{
    encode_log, merge_export_parts, merge_export_tsv, ApplyOutcome, ExportKind, Layout,
    LogFileWriter, LogOp, PageRow, Partition, PartitionCheck, ProbeJoin, Role, WidePartition,
    KIND_MEMBER,
};
use neardup::{BatchOptions, BatchOrder, Error, Index, IndexOptions, OrderScope};

fn options() -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        ..IndexOptions::default()
    }
}

fn batch_options() -> BatchOptions {
    BatchOptions {
        order: BatchOrder::FingerprintCount,
        scope: OrderScope::Batch,
        ..BatchOptions::default()
    }
}

/// A whole index with families of near duplicates, some pages deleted (free ids, hand-overs),
/// ids given out again.
fn whole(dir: &Path) -> Index {
    let ix = Index::open(dir, options()).unwrap();
    let mut pages = Vec::new();
    for f in 0..16u64 {
        for v in 0..(1 + f % 4) {
            let (host, html) = family_page(f, v);
            pages.push((format!("f{f}-v{v}"), host, html));
        }
    }
    insert_pages(&ix, &pages, &batch_options());
    for k in ["f3-v0", "f7-v1", "f11-v0"] {
        ix.delete(k).unwrap();
    }
    let (host, html) = family_page(40, 0);
    insert_pages(&ix, &[("g40".into(), host, html)], &batch_options());
    assert_clean(&ix);
    ix
}

/// The second batch: what deletes and new versions change in the whole index, as the log of a
/// standing index (a diff with removes, records rewritten, clusters handed over).
fn second_batch(ix: &Index) -> Vec<LogOp> {
    let before = ix.state_log().unwrap();
    let stats = ix.stats().unwrap();
    for k in ["f1-v0", "f6-v2", "f9-v1", "g40"] {
        ix.delete(k).unwrap();
    }
    let mut pages = Vec::new();
    for f in [1u64, 6, 20, 21] {
        let (host, html) = family_page(f, 5);
        pages.push((format!("f{f}-v5"), host, html));
    }
    insert_pages(ix, &pages, &batch_options());
    assert_clean(ix);
    neardup::merge::state_diff(&before, &ix.state_log().unwrap())
        .into_log(stats.pages, stats.clusters)
}

/// A wide state log without empty postings (see [`normalized`]).
fn normalized_wide(log: Vec<LogOp<u64>>) -> Vec<LogOp<u64>> {
    log.into_iter()
        .filter(|op| !matches!(op, LogOp::Posting { delta, .. } if delta.add.is_empty()))
        .collect()
}

/// Every page and cluster id of a log (and its allocators) moved up by `by`; "no page" stays.
fn shifted(log: Vec<LogOp<u64>>, by: u64) -> Vec<LogOp<u64>> {
    mapped(log, &|i| i + by)
}

fn roles(layout: Layout) -> Vec<Role> {
    (0..layout.key_parts())
        .map(Role::Key)
        .chain((0..layout.doc_parts()).map(Role::Doc))
        .collect()
}

fn name(role: Role) -> String {
    match role {
        Role::Key(n) => format!("key-{n}"),
        Role::Doc(n) => format!("doc-{n}"),
    }
}

/// A role's part of a routed log.
fn part(routed: &neardup::merge::RoutedLog<u64>, role: Role) -> Vec<LogOp<u64>> {
    match role {
        Role::Key(n) => routed.key[n as usize].clone(),
        Role::Doc(n) => routed.doc[n as usize].clone(),
    }
}

#[test]
fn a_log_gives_the_same_state_and_seeds_in_either_width() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let first = ix.state_log().unwrap();
    let second = second_batch(&ix);
    let layout = Layout::new(3, 2, 3).unwrap();
    let (first, second) = (layout.route(&wide(first)), layout.route(&wide(second)));
    let reach = ix
        .decision_reach(&[], &["f2-v0", "f5-v1", "f13-v0"], &["f10-v2"])
        .unwrap();
    assert!(reach.pages.len() > 3);
    for role in roles(layout) {
        let p = Partition::new(layout, role).unwrap();
        let narrow_part =
            Index::open(dir.path().join(format!("n-{}", name(role))), options()).unwrap();
        narrow_part.set_partition(p).unwrap();
        let wide_part =
            WidePartition::create(dir.path().join(format!("w-{}", name(role))), &options(), p)
                .unwrap();
        assert_eq!(wide_part.partition(), p);
        let (a, b) = (part(&first, role), part(&second, role));
        assert!(!a.is_empty() && !b.is_empty());
        narrow_part.apply_log(1, &narrow(a.clone())).unwrap();
        assert!(matches!(
            wide_part.apply_log(1, &a).unwrap(),
            ApplyOutcome::Applied { .. }
        ));
        assert_eq!(
            wide_part.state_log().unwrap(),
            wide(narrow_part.state_log().unwrap()),
            "{role}"
        );
        assert_eq!(
            normalized_wide(wide_part.state_log().unwrap()),
            normalized_wide(a),
            "{role}: the partition holds its part of the state"
        );
        // The second batch, from its bytes: of version 1 (`u32` ids, read as `u64`) for the
        // doc partitions, from a file of version 2 for the key partitions.
        narrow_part.apply_log(2, &narrow(b.clone())).unwrap();
        let applied = match role {
            Role::Doc(_) => wide_part.apply_log_bytes(2, &encode_log(&narrow(b.clone()))),
            Role::Key(_) => {
                let file = dir.path().join(format!("{}.ndlog", name(role)));
                let mut w = LogFileWriter::<u64>::create(&file).unwrap();
                for op in &b {
                    w.push(op).unwrap();
                }
                w.finish().unwrap();
                wide_part.apply_log_file(2, &file)
            }
        };
        assert!(
            matches!(applied, Ok(ApplyOutcome::Applied { .. })),
            "{applied:?}"
        );
        assert_eq!(wide_part.applied_batch().unwrap(), Some(2));
        let state = wide_part.state_log().unwrap();
        assert_eq!(state, wide(narrow_part.state_log().unwrap()), "{role}");
        assert_same_reads(&narrow_part, &wide_part, &state, role);
        // Seeds alike: a key partition's (allocators, free ids, over-frequent keys), a doc
        // partition's with its pages and clusters.
        let (pages, clusters): (Vec<u32>, Vec<u32>) = match role {
            Role::Key(_) => (Vec::new(), Vec::new()),
            Role::Doc(n) => (
                reach
                    .pages
                    .iter()
                    .copied()
                    .filter(|&d| layout.doc_part(d) == n)
                    .collect(),
                reach
                    .clusters
                    .iter()
                    .copied()
                    .filter(|&c| layout.cluster_part(c) == n)
                    .collect(),
            ),
        };
        let wide_ids = |v: &[u32]| v.iter().map(|&i| u64::from(i)).collect::<Vec<u64>>();
        assert_eq!(
            wide_part
                .seed_log(&wide_ids(&pages), &wide_ids(&clusters))
                .unwrap(),
            wide(narrow_part.seed_log(&pages, &clusters).unwrap()),
            "{role}"
        );
        // The seed written to a file as it is read has the bytes of the seed in memory.
        let file = dir.path().join(format!("{role}.seed"));
        wide_part
            .seed_log_file(&wide_ids(&pages), &wide_ids(&clusters), &file)
            .unwrap();
        assert_eq!(
            std::fs::read(&file).unwrap(),
            encode_log(
                &wide_part
                    .seed_log(&wide_ids(&pages), &wide_ids(&clusters))
                    .unwrap()
            ),
            "{role}"
        );
        // A page or cluster the partition lacks.
        assert!(matches!(
            wide_part.seed_log(&[1 << 40], &[]),
            Err(Error::InvalidArgument(_))
        ));
        // The state read back, applied to a fresh partition, is the same state.
        let copy =
            WidePartition::create(dir.path().join(format!("c-{}", name(role))), &options(), p)
                .unwrap();
        copy.apply_log(1, &state).unwrap();
        assert_eq!(
            normalized_wide(copy.state_log().unwrap()),
            normalized_wide(state.clone())
        );
        // Compacted (every posting's operands folded), then reopened: the same partition and
        // state.
        wide_part.compact().unwrap();
        assert_eq!(wide_part.state_log().unwrap(), state);
        let path = wide_part.path().to_path_buf();
        drop(wide_part);
        let again = WidePartition::open(&path).unwrap();
        assert_eq!(again.partition(), p);
        assert_eq!(again.state_log().unwrap(), state);
        assert_eq!(
            again.apply_log(2, &[]).unwrap(),
            ApplyOutcome::AlreadyApplied
        );
    }
}

#[test]
fn ids_above_two_to_the_32_apply_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let by = 1u64 << 33;
    let log = shifted(wide(ix.state_log().unwrap()), by);
    assert!(log
        .iter()
        .any(|op| matches!(op, LogOp::Doc { id, .. } if *id > u64::from(u32::MAX))));
    let reach = ix.decision_reach(&[], &["f2-v0", "f5-v1"], &[]).unwrap();
    // Three doc partitions: 2³³ mod 3 = 2, so the shift moves pages between partitions.
    let layout = Layout::new(2, 3, 3).unwrap();
    let routed = layout.route(&log);
    for role in roles(layout) {
        let p = Partition::new(layout, role).unwrap();
        let wp = WidePartition::create(dir.path().join(name(role)), &options(), p).unwrap();
        let mine = part(&routed, role);
        wp.apply_log(1, &mine).unwrap();
        let state = wp.state_log().unwrap();
        assert_eq!(normalized_wide(state.clone()), normalized_wide(mine));
        // The look-ups read the ids above 2³² back: each page's cluster, each key's page, each
        // posting's pages, as the records and postings hold them.
        for op in &state {
            match op {
                LogOp::Doc {
                    id,
                    record: Some(r),
                } => {
                    assert_eq!(wp.page_clusters(&[*id]).unwrap(), vec![Some(r.cluster)]);
                    let filed = wp.filed_pages(&[*id]).unwrap().pop().flatten().unwrap();
                    assert_eq!(filed.0, r.simhash);
                    assert!(!filed.1.is_empty());
                }
                // A key's partition is its hash's, not its page's.
                LogOp::Key { key, doc } => assert_eq!(wp.key_ids(&[key]).unwrap(), vec![*doc]),
                LogOp::Posting { key, delta } => {
                    assert_eq!(wp.posting_ids(&[*key]).unwrap(), vec![delta.add.clone()]);
                }
                LogOp::Simhash { simhash, doc, .. } => {
                    assert!(wp.simhash_ids(&[*simhash]).unwrap()[0].contains(*doc));
                }
                _ => {}
            }
        }
        // The seed of shifted pages is the shifted seed (of the same pages in a partition of
        // the unshifted ids, which `u32`s hold).
        if let Role::Doc(n) = role {
            let pages: Vec<u64> = reach
                .pages
                .iter()
                .map(|&d| u64::from(d) + by)
                .filter(|&d| layout.doc_part(d) == n)
                .collect();
            let clusters: Vec<u64> = reach
                .clusters
                .iter()
                .map(|&c| u64::from(c) + by)
                .filter(|&c| layout.cluster_part(c) == n)
                .collect();
            let seed = wp.seed_log(&pages, &clusters).unwrap();
            // The same rows with their ids moved back down, in the one doc partition of a
            // layout (key partitions route by keys and hashes, not by ids).
            let one = Partition::new(Layout::new(2, 1, 3).unwrap(), Role::Doc(0)).unwrap();
            let q =
                WidePartition::create(dir.path().join(format!("u-{n}")), &options(), one).unwrap();
            q.apply_log(1, &mapped(part(&routed, role), &|i| i - by))
                .unwrap();
            let back = |v: &[u64]| v.iter().map(|&i| i - by).collect::<Vec<u64>>();
            assert_eq!(
                seed,
                shifted(q.seed_log(&back(&pages), &back(&clusters)).unwrap(), by)
            );
            assert!(seed.len() > 5);
        }
        // A doc partition's rows carry the ids above 2³²; a key partition's forest names
        // standing pages above 2³².
        match role {
            Role::Doc(_) => {
                let (pages, clusters) = wp.partition_rows().unwrap();
                assert!(pages.iter().all(|r| r.doc >= by && r.cluster >= by));
                assert!(clusters.iter().all(|&(c, d)| c >= by && d >= by));
            }
            Role::Key(_) => {
                let mut join = ProbeJoin::new();
                for op in &state {
                    if let LogOp::Posting { key, .. } = op {
                        join.add_keys(&[*key], &[1 << 56]).unwrap();
                    }
                }
                let f = wp.probe_forest(join, 0).unwrap();
                assert!(f.standing > 0);
                assert!(f.nodes.iter().any(|&n| n >= by && n < 1 << 56));
            }
        }
        // The state, its ids moved back down, fits a partition of `u32` ids.
        let down = mapped(state.clone(), &|i| i - by);
        assert!(narrow_fits(&down));
        drop(wp);
        assert_eq!(
            WidePartition::open(dir.path().join(name(role)))
                .unwrap()
                .state_log()
                .unwrap(),
            state
        );
    }
}

/// The look-ups a merge asks of a partition (S0–S2) answer alike in either width: the pages
/// under each posting key a key partition holds (and one it lacks) and near each simhash, the
/// page of each external
/// key, the cluster of each page and the members of each cluster a doc partition holds (and ids
/// it lacks).
fn assert_same_reads(narrow: &Index, wide_part: &WidePartition, state: &[LogOp<u64>], role: Role) {
    let treemap =
        |b: &roaring::RoaringBitmap| b.iter().map(u64::from).collect::<roaring::RoaringTreemap>();
    let treemaps = |v: Vec<roaring::RoaringBitmap>| v.iter().map(treemap).collect::<Vec<_>>();
    let mut simhashes: Vec<u64> = vec![0x5555_aaaa_5555_aaaa];
    let mut posting_keys: Vec<[u8; 9]> = vec![[0xEE; 9]];
    let mut keys: Vec<String> = vec!["no-such-key".into()];
    let mut pages: Vec<u32> = vec![u32::MAX - 1];
    let mut clusters: Vec<u32> = vec![u32::MAX - 1];
    for op in state {
        match op {
            LogOp::Posting { key, .. } | LogOp::Frequent { key, .. } => posting_keys.push(*key),
            LogOp::Key { key, .. } => keys.push(key.clone()),
            LogOp::Simhash { simhash, .. } => simhashes.push(*simhash ^ 1),
            LogOp::Doc { id, .. } => pages.push(u32::try_from(*id).unwrap()),
            LogOp::Cluster { id, .. } => clusters.push(u32::try_from(*id).unwrap()),
            _ => {}
        }
    }
    let wide_ids = |v: &[u32]| v.iter().map(|&i| u64::from(i)).collect::<Vec<u64>>();
    match role {
        Role::Key(_) => {
            assert!(posting_keys.len() > 1, "{role}");
            let want = treemaps(narrow.posting_ids(&posting_keys).unwrap());
            assert_eq!(
                wide_part.posting_ids(&posting_keys).unwrap(),
                want,
                "{role}"
            );
            assert_eq!(
                wide_part.posting_reach(&posting_keys).unwrap(),
                treemap(&narrow.posting_reach(&posting_keys).unwrap())
            );
            // Within the simhash distance (each hash one bit off an entry's, and one far).
            assert!(simhashes.len() > 1, "{role}");
            let want = treemaps(narrow.simhash_ids(&simhashes).unwrap());
            assert!(want.iter().skip(1).any(|w| !w.is_empty()));
            assert_eq!(wide_part.simhash_ids(&simhashes).unwrap(), want, "{role}");
            assert_eq!(
                wide_part.simhash_reach(&simhashes).unwrap(),
                treemap(&narrow.simhash_reach(&simhashes).unwrap())
            );
            // S3's partial forest: the same probes (two owners on each key and simhash) joined
            // through either width's postings and tables give the same forest.
            let forest = |f: &dyn Fn(ProbeJoin) -> neardup::merge::ProbeForest| {
                let mut join = ProbeJoin::new();
                let owners: Vec<u64> = (0..posting_keys.len() as u64)
                    .map(|i| (1 << 56) | i)
                    .collect();
                join.add_keys(&posting_keys, &owners).unwrap();
                join.add_keys(&posting_keys[1..], &owners[..owners.len() - 1])
                    .unwrap();
                let owners: Vec<u64> = (0..simhashes.len() as u64).map(|i| (2 << 56) | i).collect();
                join.add_simhashes(&simhashes, &owners).unwrap();
                f(join)
            };
            let want = forest(&|j| narrow.probe_forest(j, 0).unwrap());
            assert!(want.standing > 0 && !want.nodes.is_empty(), "{role}");
            assert_eq!(
                forest(&|j| wide_part.probe_forest(j, 0).unwrap()),
                want,
                "{role}"
            );
        }
        Role::Doc(_) => {
            assert!(
                keys.len() > 1 && pages.len() > 1 && clusters.len() > 1,
                "{role}"
            );
            let ks: Vec<&str> = keys.iter().map(String::as_str).collect();
            let widened = |v: Vec<Option<u32>>| -> Vec<Option<u64>> {
                v.into_iter().map(|d| d.map(u64::from)).collect()
            };
            let want = widened(narrow.key_ids(&ks).unwrap());
            assert_eq!(wide_part.key_ids(&ks).unwrap(), want, "{role}");
            assert_eq!(
                wide_part.filed_pages(&wide_ids(&pages)).unwrap(),
                narrow.filed_pages(&pages).unwrap(),
                "{role}"
            );
            let want = widened(narrow.page_clusters(&pages).unwrap());
            assert_eq!(
                wide_part.page_clusters(&wide_ids(&pages)).unwrap(),
                want,
                "{role}"
            );
            let want: Vec<_> = narrow
                .cluster_member_ids(&clusters)
                .unwrap()
                .iter()
                .map(|m| m.as_ref().map(treemap))
                .collect();
            assert_eq!(
                wide_part.cluster_member_ids(&wide_ids(&clusters)).unwrap(),
                want,
                "{role}"
            );
            // The rows a distributed export joins: the same pages and clusters, widened.
            let (pages, clusters) = narrow.partition_rows().unwrap();
            let widened_rows = (
                pages
                    .into_iter()
                    .map(|r| PageRow {
                        doc: u64::from(r.doc),
                        key: r.key,
                        cluster: u64::from(r.cluster),
                        seq: r.seq,
                        similar_to: r.similar_to.map(|(d, s)| (u64::from(d), s)),
                    })
                    .collect::<Vec<_>>(),
                clusters
                    .into_iter()
                    .map(|(c, d)| (u64::from(c), u64::from(d)))
                    .collect::<Vec<_>>(),
            );
            assert!(
                !widened_rows.0.is_empty() && !widened_rows.1.is_empty(),
                "{role}"
            );
            assert_eq!(wide_part.partition_rows().unwrap(), widened_rows, "{role}");
        }
    }
}

/// Whether every id of a log fits a `u32`.
fn narrow_fits(log: &[LogOp<u64>]) -> bool {
    log.iter().all(|op| op.clone().to_width::<u32>().is_ok())
}

#[test]
fn a_partial_application_then_the_whole_log_is_the_whole_log() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let layout = Layout::new(1, 2, 3).unwrap();
    let routed = layout.route(&shifted(wide(ix.state_log().unwrap()), 3 << 32));
    for role in roles(layout) {
        let p = Partition::new(layout, role).unwrap();
        let log = part(&routed, role);
        let once = WidePartition::create(
            dir.path().join(format!("once-{}", name(role))),
            &options(),
            p,
        )
        .unwrap();
        assert!(matches!(
            once.apply_log_chunked(4, &log, 4096).unwrap(),
            ApplyOutcome::Applied { chunks } if chunks > 1
        ));
        for cut in [0, 1, log.len() / 3, log.len() - 1] {
            let path = dir.path().join(format!("crash-{}-{cut}", name(role)));
            let crashed = WidePartition::create(&path, &options(), p).unwrap();
            let chunks = crashed.apply_log_unrecorded(&log[..cut], 512).unwrap();
            assert!(cut == 0 || chunks >= 1);
            assert_eq!(crashed.applied_batch().unwrap(), None);
            drop(crashed);
            let again = WidePartition::open(&path).unwrap();
            assert!(matches!(
                again.apply_log_chunked(4, &log, 1 << 20),
                Ok(ApplyOutcome::Applied { .. })
            ));
            assert_eq!(again.state_log().unwrap(), once.state_log().unwrap());
            assert_eq!(again.applied_batch().unwrap(), Some(4));
        }
    }
}

#[test]
fn batches_apply_in_order_and_foreign_operations_are_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let layout = Layout::new(2, 2, 3).unwrap();
    let routed = layout.route(&wide(ix.state_log().unwrap()));
    let p = Partition::new(layout, Role::Doc(1)).unwrap();
    let wp = WidePartition::create(dir.path().join("doc-1"), &options(), p).unwrap();
    let empty = wp.state_log().unwrap();
    // Another partition's operations: refused before anything is written.
    let mut log = routed.doc[1].clone();
    log.extend(
        routed.key[0]
            .iter()
            .filter(|op| matches!(op, LogOp::Posting { .. }))
            .take(1)
            .cloned(),
    );
    let e = wp.apply_log(1, &log).unwrap_err();
    assert!(e.to_string().contains("another partition"), "{e}");
    // An id at or above its allocator as the log leaves it.
    let mut log = routed.doc[1].clone();
    log.push(LogOp::FreeDoc {
        id: 1 << 40,
        free: true,
    });
    let e = wp.apply_log_chunked(1, &log, 1).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("page id allocator"), "{e}");
    // A record with an empty key.
    let mut log = routed.doc[1].clone();
    let mut bad = log
        .iter()
        .find(|op| matches!(op, LogOp::Doc { .. }))
        .unwrap()
        .clone();
    if let LogOp::Doc {
        record: Some(r), ..
    } = &mut bad
    {
        r.key.clear();
    }
    log.push(bad);
    let e = wp.apply_log(1, &log).unwrap_err();
    assert!(e.to_string().contains("key is empty"), "{e}");
    assert_eq!(
        wp.state_log().unwrap(),
        empty,
        "a refused log writes nothing"
    );
    assert_eq!(wp.applied_batch().unwrap(), None);
    // Any first batch; an empty log records it in one write.
    assert_eq!(
        wp.apply_log(7, &[]).unwrap(),
        ApplyOutcome::Applied { chunks: 1 }
    );
    for refused in [9, 6, 0, u64::MAX] {
        let e = wp.apply_log(refused, &routed.doc[1]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert!(e.to_string().contains("batch 8 next"), "{e}");
        let e = wp
            .apply_log_bytes(refused, &encode_log(&routed.doc[1]))
            .unwrap_err();
        assert!(e.to_string().contains("batch 8 next"), "{e}");
    }
    assert_eq!(
        wp.apply_log(7, &routed.doc[1]).unwrap(),
        ApplyOutcome::AlreadyApplied
    );
    assert_eq!(wp.applied_batch().unwrap(), Some(7));
    assert!(matches!(
        wp.apply_log(8, &routed.doc[1]),
        Ok(ApplyOutcome::Applied { .. })
    ));
    assert!(wp.len().unwrap() > 0);
    // Bytes that are not a log: refused, nothing written.
    let state = wp.state_log().unwrap();
    assert!(matches!(
        wp.apply_log_bytes(9, b"not a log"),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(wp.state_log().unwrap(), state);
    // A damaged log file (one byte flipped, or cut short): refused, nothing written.
    let file = dir.path().join("doc-1.ndlog");
    let mut w = LogFileWriter::<u64>::create(&file).unwrap();
    for op in &routed.doc[1] {
        w.push(op).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    for damaged in [
        {
            let mut b = bytes.clone();
            let at = b.len() / 2;
            b[at] ^= 0x40;
            b
        },
        bytes[..bytes.len() - 3].to_vec(),
    ] {
        std::fs::write(&file, &damaged).unwrap();
        assert!(matches!(
            wp.apply_log_file(9, &file),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(wp.state_log().unwrap(), state);
        assert_eq!(wp.applied_batch().unwrap(), Some(8));
    }
    // A reader beside the writer: the same state, every write refused.
    let r = WidePartition::open_read_only(wp.path()).unwrap();
    assert_eq!(r.state_log().unwrap(), wp.state_log().unwrap());
    assert_eq!(r.applied_batch().unwrap(), Some(8));
    assert_eq!(r.partition(), p);
    assert!(matches!(r.apply_log(9, &[]), Err(Error::ReadOnly(..))));
    assert!(matches!(
        r.apply_log_bytes(9, &encode_log::<u64>(&[])),
        Err(Error::ReadOnly(..))
    ));
    assert!(matches!(r.compact(), Err(Error::ReadOnly(..))));
    drop(r);
    // The last batch there is takes no successor.
    wp.apply_log(9, &[]).unwrap();
    let q = WidePartition::create(dir.path().join("last"), &options(), p).unwrap();
    q.apply_log(u64::MAX, &[]).unwrap();
    assert!(q.apply_log(0, &[]).is_err());
    assert_eq!(
        q.apply_log(u64::MAX, &[]).unwrap(),
        ApplyOutcome::AlreadyApplied
    );
}

#[test]
fn each_database_refuses_the_others_format() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(1, 1, 3).unwrap();
    let p = Partition::new(layout, Role::Doc(0)).unwrap();
    let wide_dir = dir.path().join("wide");
    let wp = WidePartition::create(&wide_dir, &options(), p).unwrap();
    let state = wp.state_log().unwrap();
    drop(wp);
    let before = dir_listing(&wide_dir);
    for r in [
        Index::open(&wide_dir, options()),
        Index::open_existing(&wide_dir),
        Index::open_read_only(&wide_dir),
    ] {
        let e = r.err().unwrap();
        assert!(
            matches!(
                e,
                Error::IncompatibleFormat {
                    found: 7,
                    supported: 6
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("WidePartition"), "{e}");
    }
    assert_eq!(
        dir_listing(&wide_dir),
        before,
        "a refused open writes nothing"
    );
    assert_eq!(
        WidePartition::open(&wide_dir).unwrap().state_log().unwrap(),
        state
    );
    // A creation over an existing partition or index is refused.
    assert!(matches!(
        WidePartition::create(&wide_dir, &options(), p),
        Err(Error::InvalidArgument(_))
    ));
    let narrow_dir = dir.path().join("narrow");
    let ix = Index::open(&narrow_dir, options()).unwrap();
    ix.set_partition(p).unwrap();
    drop(ix);
    let e = WidePartition::open(&narrow_dir).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IncompatibleFormat {
                found: 6,
                supported: 7
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("neardup::Index"), "{e}");
    assert!(matches!(
        WidePartition::open_read_only(&narrow_dir),
        Err(Error::IncompatibleFormat {
            found: 6,
            supported: 7
        })
    ));
    assert!(matches!(
        WidePartition::create(&narrow_dir, &options(), p),
        Err(Error::InvalidArgument(_))
    ));
    assert!(Index::open(&narrow_dir, options()).is_ok());
    // No database, or another file in the directory.
    assert!(matches!(
        WidePartition::open(dir.path().join("none")),
        Err(Error::InvalidArgument(_))
    ));
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "x").unwrap();
    assert!(matches!(
        WidePartition::create(&other, &options(), p),
        Err(Error::InvalidArgument(_))
    ));
    // A layout cut for another simhash distance.
    let seven = Partition::new(Layout::new(1, 1, 7).unwrap(), Role::Key(0)).unwrap();
    assert!(matches!(
        WidePartition::create(dir.path().join("seven"), &options(), seven),
        Err(Error::InvalidArgument(_))
    ));
}

/// The files of a directory with their sizes.
fn dir_listing(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The distributed whole-index operations on partitions of either width (SCALEOUT §9).
trait Distributed {
    fn frequent(&self) -> Vec<[u8; 9]>;
    fn check(&self, layout: &Layout, frequent: &[[u8; 9]]) -> PartitionCheck;
    fn asks(&self, layout: &Layout, kind: ExportKind) -> Vec<Vec<u8>>;
    fn replies(&self, layout: &Layout, asks: &[&[u8]]) -> Vec<Vec<u8>>;
    fn cluster_replies(&self, layout: &Layout, asks: &[&[u8]], replies: &[&[u8]]) -> Vec<Vec<u8>>;
    fn part(&self, layout: &Layout, kind: ExportKind, r: &[&[u8]], c: &[&[u8]]) -> Vec<u8>;
}

macro_rules! distributed {
    ($t:ty) => {
        impl Distributed for $t {
            fn frequent(&self) -> Vec<[u8; 9]> {
                self.partition_frequent().unwrap()
            }
            fn check(&self, layout: &Layout, frequent: &[[u8; 9]]) -> PartitionCheck {
                self.partition_check(layout, frequent).unwrap()
            }
            fn asks(&self, layout: &Layout, kind: ExportKind) -> Vec<Vec<u8>> {
                self.export_asks(layout, kind).unwrap()
            }
            fn replies(&self, layout: &Layout, asks: &[&[u8]]) -> Vec<Vec<u8>> {
                self.export_replies(layout, asks).unwrap()
            }
            fn cluster_replies(
                &self,
                layout: &Layout,
                asks: &[&[u8]],
                replies: &[&[u8]],
            ) -> Vec<Vec<u8>> {
                self.export_cluster_replies(layout, asks, replies).unwrap()
            }
            fn part(&self, layout: &Layout, kind: ExportKind, r: &[&[u8]], c: &[&[u8]]) -> Vec<u8> {
                let mut out = Vec::new();
                self.export_part(layout, kind, r, c, &mut out, "part".into())
                    .unwrap();
                out
            }
        }
    };
}
distributed!(Index);
distributed!(WidePartition);

/// Every partition's check (key partitions first), given every key partition's over-frequent
/// keys.
fn checks<D: Distributed>(layout: &Layout, parts: &[D]) -> Vec<PartitionCheck> {
    let frequent: Vec<[u8; 9]> = parts[..layout.key_parts() as usize]
        .iter()
        .flat_map(D::frequent)
        .collect();
    parts.iter().map(|p| p.check(layout, &frequent)).collect()
}

/// Whether every digest a doc partition files equals the one its holder keeps of it.
fn digests_pair(layout: &Layout, reports: &[PartitionCheck]) -> bool {
    let k = layout.key_parts();
    let (mut filed, mut held) = (Vec::new(), Vec::new());
    for (i, r) in reports.iter().enumerate() {
        for d in &r.digests {
            let holder = |n: u32| if d.kind >= KIND_MEMBER { k + n } else { n };
            if d.filed {
                filed.push(((d.kind, i as u32, holder(d.peer)), d.buckets.clone()));
            } else {
                held.push(((d.kind, k + d.peer, i as u32), d.buckets.clone()));
            }
        }
    }
    filed.sort();
    held.sort();
    !filed.is_empty() && filed == held
}

/// Steps 1–4 of the export over the doc partitions: each one's part.
fn export_parts<D: Distributed>(layout: &Layout, docs: &[D], kind: ExportKind) -> Vec<Vec<u8>> {
    let to =
        |msgs: &[Vec<Vec<u8>>], p: usize| msgs.iter().map(|m| m[p].clone()).collect::<Vec<_>>();
    let asks: Vec<Vec<Vec<u8>>> = docs.iter().map(|d| d.asks(layout, kind)).collect();
    let replies: Vec<Vec<Vec<u8>>> = (0..docs.len())
        .map(|p| docs[p].replies(layout, &refs(&to(&asks, p))))
        .collect();
    let cluster_replies: Vec<Vec<Vec<u8>>> = (0..docs.len())
        .map(|p| {
            let mine = to(&replies, p);
            docs[p].cluster_replies(layout, &refs(&to(&asks, p)), &refs(&mine))
        })
        .collect();
    (0..docs.len())
        .map(|p| {
            let (r, c) = (to(&replies, p), to(&cluster_replies, p));
            docs[p].part(layout, kind, &refs(&r), &refs(&c))
        })
        .collect()
}

fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(Vec::as_slice).collect()
}

fn export_tsv(parts: &[Vec<u8>]) -> String {
    let named = parts
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("doc-{i}"), p.as_slice()))
        .collect();
    let mut out = Vec::new();
    merge_export_tsv(named, &mut out, "out.tsv".into()).unwrap();
    String::from_utf8(out).unwrap()
}

/// Issue #34 item 5, SCALEOUT §9: after the two batches (deletes, hand-overs, postings changed
/// by operands), format 7 partitions report the same checks as format 6 ones holding the same
/// state — clean, their digests paired and equal — and exchange the same export messages and
/// parts, byte for byte, whose merge is the single node's export. With every id above 2³² the
/// check is as clean and the export the same.
#[test]
fn the_check_and_the_export_are_the_same_in_either_width() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let first = wide(ix.state_log().unwrap());
    let second = wide(second_batch(&ix));
    let mut expected = String::new();
    ix.export(|k, r| expected.push_str(&format!("{k}\t{r}\n")))
        .unwrap();
    let layout = Layout::new(3, 2, 3).unwrap();
    let build = |by: u64, prefix: &str| {
        let (a, b) = (
            layout.route(&shifted(first.clone(), by)),
            layout.route(&shifted(second.clone(), by)),
        );
        let mut narrow_parts = Vec::new();
        let mut wide_parts = Vec::new();
        for role in roles(layout) {
            let p = Partition::new(layout, role).unwrap();
            let w = dir.path().join(format!("{prefix}w-{}", name(role)));
            let w = WidePartition::create(w, &options(), p).unwrap();
            w.apply_log(1, &part(&a, role)).unwrap();
            w.apply_log(2, &part(&b, role)).unwrap();
            wide_parts.push(w);
            if by == 0 {
                let n = dir.path().join(format!("{prefix}n-{}", name(role)));
                let n = Index::open(n, options()).unwrap();
                n.set_partition(p).unwrap();
                n.apply_log(1, &narrow(part(&a, role))).unwrap();
                n.apply_log(2, &narrow(part(&b, role))).unwrap();
                narrow_parts.push(n);
            }
        }
        (narrow_parts, wide_parts)
    };
    let (narrow_parts, wide_parts) = build(0, "");
    let k = layout.key_parts() as usize;
    let reports = checks(&layout, &wide_parts);
    assert_eq!(reports, checks(&layout, &narrow_parts));
    assert!(reports.iter().all(|r| r.problems.is_empty()), "{reports:?}");
    assert!(digests_pair(&layout, &reports));
    assert_eq!(
        reports[k..].iter().map(|r| r.pages).sum::<u64>(),
        ix.stats().unwrap().pages
    );
    for kind in [ExportKind::Pages, ExportKind::Clusters, ExportKind::Rows] {
        assert_eq!(
            export_parts(&layout, &wide_parts[k..], kind),
            export_parts(&layout, &narrow_parts[k..], kind),
            "{kind:?}"
        );
    }
    assert_eq!(
        export_tsv(&export_parts(&layout, &wide_parts[k..], ExportKind::Pages)),
        expected
    );

    // Every id moved up by 2³³.
    let by = 1u64 << 33;
    let (_, high) = build(by, "h-");
    let high_reports = checks(&layout, &high);
    assert!(high_reports.iter().all(|r| r.problems.is_empty()));
    assert!(digests_pair(&layout, &high_reports));
    for (h, r) in high_reports.iter().zip(&reports) {
        assert_eq!(
            (h.pages, h.clusters, h.postings),
            (r.pages, r.clusters, r.postings)
        );
        assert_eq!(
            (h.counters.0, h.counters.1),
            (r.counters.0 + by, r.counters.1 + by)
        );
    }
    assert_eq!(
        export_tsv(&export_parts(&layout, &high[k..], ExportKind::Pages)),
        expected
    );
    let ids = |parts: &[Vec<u8>], kind| {
        let mut ids = Vec::new();
        let named = parts
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("doc-{i}"), p.as_slice()))
            .collect();
        merge_export_parts(kind, named, |id, _| {
            ids.push(id);
            Ok(())
        })
        .unwrap();
        ids
    };
    for kind in [ExportKind::Clusters, ExportKind::Rows] {
        let low = ids(&export_parts(&layout, &wide_parts[k..], kind), kind);
        let up = ids(&export_parts(&layout, &high[k..], kind), kind);
        assert!(!low.is_empty());
        assert_eq!(up, low.iter().map(|i| i + by).collect::<Vec<_>>());
    }
}
