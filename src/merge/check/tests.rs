//! The distributed check's unit tests.

use super::*;
use crate::merge::export::tests::{partitioned, wide_partitioned};
use crate::merge::log::LogOp;
use crate::merge::Partition;
use crate::options::IndexOptions;
use crate::storage::merge::WideDelta;

/// The key partitions of `whole`'s state cut by `layout`, under `dir`.
fn key_partitions(dir: &std::path::Path, whole: &Index, layout: Layout) -> Vec<Index> {
    let routed = layout.route(&whole.state_log().unwrap());
    (0..layout.key_parts())
        .map(|n| {
            let ix = Index::open(dir.join(format!("key-{n}")), IndexOptions::default()).unwrap();
            ix.set_partition(Partition::new(layout, Role::Key(n)).unwrap())
                .unwrap();
            ix.apply_log(1, &routed.key[n as usize]).unwrap();
            ix
        })
        .collect()
}

/// Filed and held digests by (kind, filing doc partition, holder), partitions numbered key
/// partitions first (`k` of them), as the driver pairs them.
type Paired = BTreeMap<(u8, u32, u32), Vec<(u64, u64)>>;

fn paired(reports: &[PartitionCheck], k: u32) -> (Paired, Paired) {
    let mut filed = BTreeMap::new();
    let mut held = BTreeMap::new();
    for (i, r) in reports.iter().enumerate() {
        let i = i as u32;
        for d in &r.digests {
            let holder = |doc: u32| if d.kind >= KIND_MEMBER { k + doc } else { doc };
            if d.filed {
                filed.insert((d.kind, i, holder(d.peer)), d.buckets.clone());
            } else {
                held.insert((d.kind, k + d.peer, i), d.buckets.clone());
            }
        }
    }
    (filed, held)
}

#[test]
fn a_partitioned_index_checks_clean_and_its_digests_agree() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, layout, docs) = partitioned(dir.path(), 2);
    // The key partitions too, from the same state.
    let keys = key_partitions(dir.path(), &whole, layout);
    let frequent: Vec<[u8; 9]> = keys
        .iter()
        .flat_map(|k| k.partition_frequent().unwrap())
        .collect();
    let reports: Vec<PartitionCheck> = keys
        .iter()
        .chain(&docs)
        .map(|p| p.partition_check(&layout, &frequent).unwrap())
        .collect();
    for r in &reports {
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }
    let doc_reports = &reports[keys.len()..];
    assert_eq!(
        doc_reports.iter().map(|r| r.pages).sum::<u64>(),
        whole.len()
    );
    // Every digest filed by a doc partition equals the one its holder keeps of it.
    let (filed, held) = paired(&reports, keys.len() as u32);
    assert!(!filed.is_empty());
    assert_eq!(filed, held);
    // A page record taken out of a doc partition: its postings are held but not filed.
    let (id, _) = docs[0]
        .partition_rows()
        .unwrap()
        .0
        .first()
        .map(|p| (p.doc, p.cluster))
        .unwrap();
    docs[0]
        .db
        .delete_cf(docs[0].cf(cf::DOCS), storage::id_key(id))
        .unwrap();
    let after = docs[0].partition_check(&layout, &frequent).unwrap();
    assert!(
        !after.problems.is_empty(),
        "its text is left without a page"
    );
    assert_ne!(
        after
            .digests
            .iter()
            .find(|d| d.kind == KIND_POSTING && d.filed),
        reports[keys.len()]
            .digests
            .iter()
            .find(|d| d.kind == KIND_POSTING && d.filed)
    );
    // A whole index is not a partition to check.
    assert!(matches!(
        whole.partition_check(&layout, &frequent),
        Err(Error::InvalidArgument(_))
    ));
}

/// Issue #34 item 5: format 7 partitions holding the state of format 6 ones report the same
/// counts, counters, free ids and digests (the entries' ids are `u64`s in both), and no
/// problem; with every id above 2³² they check clean and their digests pair up; a posting taken
/// out of a wide key partition is found, and narrowed to its entry.
#[test]
fn wide_partitions_check_as_format_6_ones_do() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, layout, docs) = partitioned(dir.path(), 2);
    let keys = key_partitions(dir.path(), &whole, layout);
    let (wkeys, wdocs) = wide_partitioned(dir.path(), &whole, layout, 0, "w-");
    let frequent: Vec<[u8; 9]> = keys
        .iter()
        .flat_map(|k| k.partition_frequent().unwrap())
        .collect();
    let wide_frequent: Vec<[u8; 9]> = wkeys
        .iter()
        .flat_map(|k| k.partition_frequent().unwrap())
        .collect();
    assert_eq!(wide_frequent, frequent);
    let narrow: Vec<PartitionCheck> = keys
        .iter()
        .chain(&docs)
        .map(|p| p.partition_check(&layout, &frequent).unwrap())
        .collect();
    let wide = |keys: &[WidePartition], docs: &[WidePartition]| -> Vec<PartitionCheck> {
        keys.iter()
            .chain(docs)
            .map(|p| p.partition_check(&layout, &frequent).unwrap())
            .collect()
    };
    let reports = wide(&wkeys, &wdocs);
    assert_eq!(reports, narrow);
    assert!(reports.iter().all(|r| r.problems.is_empty()));
    assert!(reports[2..].iter().all(|r| r.pages > 0 && r.clusters > 0));
    assert!(reports[..2].iter().all(|r| r.postings > 0));

    // Every id above 2³²: clean, the same counts, the allocators moved, the digests paired.
    let by = 1u64 << 33;
    let (hkeys, hdocs) = wide_partitioned(dir.path(), &whole, layout, by, "h-");
    let high = wide(&hkeys, &hdocs);
    let k = layout.key_parts();
    for (h, n) in high.iter().zip(&narrow) {
        assert!(h.problems.is_empty(), "{:?}", h.problems);
        assert_eq!(
            (h.pages, h.clusters, h.postings),
            (n.pages, n.clusters, n.postings)
        );
        assert_eq!(h.counters.0, n.counters.0 + by);
        assert_eq!(h.counters.1, n.counters.1 + by);
        assert_eq!(h.free, n.free);
    }
    let (filed, held) = paired(&high, k);
    assert!(!filed.is_empty());
    assert_eq!(filed, held);

    // One page taken out of one posting of a wide key partition (a batch log that lost an
    // operation): its doc partition still files it.
    let (key, id) = {
        let state = wkeys[0].state_log().unwrap();
        state
            .iter()
            .find_map(|op| match op {
                LogOp::Posting { key, delta } if !frequent.contains(key) => {
                    delta.add.iter().next().map(|id| (*key, id))
                }
                _ => None,
            })
            .unwrap()
    };
    let mut remove = WideDelta::default();
    remove.remove.insert(id);
    wkeys[0]
        .apply_log(2, &[LogOp::Posting { key, delta: remove }])
        .unwrap();
    let damaged = wkeys[0].partition_check(&layout, &frequent).unwrap();
    assert!(damaged.problems.is_empty(), "its own rows are sound");
    assert_eq!(damaged.postings + 1, reports[0].postings);
    let doc = layout.doc_part(id);
    let digest = |r: &PartitionCheck, filed: bool| {
        r.digests
            .iter()
            .find(|d| {
                d.kind == KIND_POSTING && d.peer == if filed { 0 } else { doc } && d.filed == filed
            })
            .unwrap()
            .buckets
            .clone()
    };
    let (mine, theirs) = (
        digest(&reports[(k + doc) as usize], true),
        digest(&damaged, false),
    );
    let bad: HashSet<usize> = (0..DIGEST_BUCKETS)
        .filter(|&b| mine[b] != theirs[b])
        .collect();
    assert_eq!(bad.len(), 1);
    let filed_entries = wdocs[doc as usize]
        .partition_check_entries(&layout, &frequent, (KIND_POSTING, 0, true), &bad)
        .unwrap();
    let held_entries = wkeys[0]
        .partition_check_entries(&layout, &frequent, (KIND_POSTING, doc, false), &bad)
        .unwrap();
    let missing: Vec<&Vec<u8>> = filed_entries
        .iter()
        .filter(|e| !held_entries.contains(e))
        .collect();
    assert_eq!(missing, vec![&pair(&key, id)]);
    assert!(held_entries.iter().all(|e| filed_entries.contains(e)));
    // The format 6 partition lists the same entries of the same buckets.
    assert_eq!(
        docs[doc as usize]
            .partition_check_entries(&layout, &frequent, (KIND_POSTING, 0, true), &bad)
            .unwrap(),
        filed_entries
    );
}
