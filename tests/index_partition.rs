//! Storage roles (SCALEOUT §4, §11 item 3): a whole index's state cut by a `Layout` into key
//! and doc partitions, each an ordinary database written by its part of the batch log, holds
//! exactly that part; the partitions' seed logs combine into the seed the whole index gives;
//! partitions refuse what is not theirs.
mod common;
use std::path::Path;

use common::*;
use neardup::index::{combine_seed_logs, Layout, Partition, Role};
use neardup::{BatchOptions, Index, IndexOptions, LogOp, OrderScope};

fn options() -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        ..IndexOptions::default()
    }
}

/// A whole index with families of near duplicates, some pages deleted (free ids, hand-overs).
fn whole(dir: &Path) -> Index {
    let ix = Index::open(dir, options()).unwrap();
    let mut pages = Vec::new();
    for f in 0..24u64 {
        for v in 0..(1 + f % 4) {
            let (host, html) = family_page(f, v);
            pages.push((format!("f{f}-v{v}"), host, html));
        }
    }
    let opts = BatchOptions {
        scope: OrderScope::Batch,
        ..BatchOptions::default()
    };
    insert_pages(&ix, &pages, &opts);
    for k in ["f3-v0", "f7-v1", "f11-v0", "f22-v2"] {
        ix.delete(k).unwrap();
    }
    // Ids given out again after the deletes.
    let (host, html) = family_page(40, 0);
    insert_pages(&ix, &[("g40".into(), host, html)], &opts);
    assert_clean(&ix);
    ix
}

fn partitions(dir: &Path, layout: Layout) -> (Vec<Index>, Vec<Index>) {
    let open = |role: Role| {
        let name = match role {
            Role::Key(n) => format!("key-{n}"),
            Role::Doc(n) => format!("doc-{n}"),
        };
        let ix = Index::open(dir.join(name), options()).unwrap();
        ix.set_partition(Partition::new(layout, role).unwrap())
            .unwrap();
        ix
    };
    (
        (0..layout.key_parts())
            .map(|n| open(Role::Key(n)))
            .collect(),
        (0..layout.doc_parts())
            .map(|n| open(Role::Doc(n)))
            .collect(),
    )
}

#[test]
fn each_partition_holds_exactly_its_part_of_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let layout = Layout::new(3, 2, 3).unwrap();
    let state = ix.state_log().unwrap();
    let routed = layout.route(&state);
    // Every operation goes somewhere, the counters and free ids everywhere.
    let everywhere = state
        .iter()
        .filter(|op| {
            matches!(
                op,
                LogOp::Counter(_) | LogOp::FreeDoc { .. } | LogOp::FreeCluster { .. }
            )
        })
        .count();
    assert!(everywhere >= 5 + 2, "free ids expected after the deletes");
    let total: usize = routed.key.iter().chain(&routed.doc).map(Vec::len).sum();
    assert_eq!(total, state.len() + 4 * everywhere);
    let (keys, docs) = partitions(dir.path(), layout);
    for (p, log) in keys
        .iter()
        .zip(&routed.key)
        .chain(docs.iter().zip(&routed.doc))
    {
        assert!(!log.is_empty());
        assert!(matches!(
            p.apply_log(1, log).unwrap(),
            neardup::ApplyOutcome::Applied { .. }
        ));
        assert_eq!(
            normalized(p.state_log().unwrap()),
            normalized(log.clone()),
            "{:?}",
            p.partition()
        );
    }
    // Postings only in key partitions, records only in doc partitions.
    for p in &keys {
        assert!(p
            .state_log()
            .unwrap()
            .iter()
            .all(|op| !matches!(op, LogOp::Doc { .. } | LogOp::Key { .. })));
    }
    for p in &docs {
        assert!(p
            .state_log()
            .unwrap()
            .iter()
            .all(|op| !matches!(op, LogOp::Posting { .. } | LogOp::Simhash { .. })));
    }
    // The reads a merge asks of partitions answer from their part.
    let reach = ix.decision_reach(&[], &["f1-v0"], &[]).unwrap();
    let id = reach.pages[0];
    let home = &docs[layout.doc_part(id) as usize];
    let other = &docs[1 - layout.doc_part(id) as usize];
    assert_eq!(home.page_clusters(&[id])[0], Some(reach.clusters[0]));
    assert_eq!(other.page_clusters(&[id])[0], None);
    let filed = home.filed_pages(&[id]).unwrap()[0].clone().unwrap();
    let mut found = roaring::RoaringBitmap::new();
    for (n, p) in keys.iter().enumerate() {
        let mine: Vec<[u8; 9]> = filed
            .1
            .iter()
            .filter(|k| layout.posting_part(k) == n as u32)
            .copied()
            .collect();
        found |= p.posting_reach(&mine).unwrap();
    }
    assert!(found.contains(id));
    let near: roaring::RoaringBitmap = layout
        .simhash_parts(filed.0)
        .into_iter()
        .map(|n| keys[n as usize].simhash_reach(&[filed.0]).unwrap())
        .fold(roaring::RoaringBitmap::new(), |a, b| a | b);
    assert!(near.contains(id));
    // The doc partitions' rows are the whole index's, cut by id.
    let (mut pages, mut clusters) = (Vec::new(), Vec::new());
    for p in &docs {
        let (pg, cl) = p.partition_rows().unwrap();
        assert!(pg
            .iter()
            .all(|r| p.partition().unwrap().role == Role::Doc(layout.doc_part(r.doc))));
        pages.extend(pg);
        clusters.extend(cl);
    }
    pages.sort_by_key(|r| r.doc);
    clusters.sort_unstable();
    assert_eq!((pages, clusters), ix.partition_rows().unwrap());
    // Reopened, a partition keeps its role.
    let role = docs[0].partition();
    let path = docs[0].path().to_path_buf();
    drop(docs);
    let again = Index::open(&path, options()).unwrap();
    assert_eq!(again.partition(), role);
}

#[test]
fn the_partitions_seed_logs_combine_into_the_whole_seed() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let layout = Layout::new(2, 3, 3).unwrap();
    let (keys, docs) = partitions(dir.path(), layout);
    let routed = layout.route(&ix.state_log().unwrap());
    for (p, log) in keys
        .iter()
        .zip(&routed.key)
        .chain(docs.iter().zip(&routed.doc))
    {
        p.apply_log(1, log).unwrap();
    }
    let reach = ix
        .decision_reach(&[], &["f1-v0", "f5-v1", "f9-v0"], &["f13-v2"])
        .unwrap();
    assert!(reach.pages.len() > 3);
    let mut logs: Vec<Vec<LogOp>> = keys.iter().map(|p| p.seed_log(&[], &[]).unwrap()).collect();
    for (n, p) in docs.iter().enumerate() {
        let pages: Vec<u32> = reach
            .pages
            .iter()
            .copied()
            .filter(|&d| layout.doc_part(d) == n as u32)
            .collect();
        let clusters: Vec<u32> = reach
            .clusters
            .iter()
            .copied()
            .filter(|&c| layout.cluster_part(c) == n as u32)
            .collect();
        logs.push(p.seed_log(&pages, &clusters).unwrap());
    }
    let combined = combine_seed_logs(logs).unwrap();
    let whole_seed = ix.seed_log(&reach.pages, &reach.clusters).unwrap();
    let a = Index::open(dir.path().join("a"), options()).unwrap();
    let b = Index::open(dir.path().join("b"), options()).unwrap();
    a.apply_log(1, &combined).unwrap();
    b.apply_log(1, &whole_seed).unwrap();
    assert_eq!(
        normalized(a.state_log().unwrap()),
        normalized(b.state_log().unwrap())
    );
    assert_eq!(exports(&a), exports(&b));
}

#[test]
fn a_partition_refuses_what_is_not_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let layout = Layout::new(2, 2, 3).unwrap();
    let (keys, docs) = partitions(dir.path(), layout);
    let routed = layout.route(&ix.state_log().unwrap());
    // Another partition's log: refused before anything is written.
    let err = keys[0].apply_log(1, &routed.doc[0]).unwrap_err();
    assert!(err.to_string().contains("another partition"), "{err}");
    assert_eq!(keys[0].applied_batch().unwrap(), None);
    docs[1].apply_log(1, &routed.doc[1]).unwrap();
    // Inserts and deletes: a partition is written by batch logs only.
    let (host, html) = family_page(50, 0);
    let err = docs[1].insert(&page("new", &host, &html)).unwrap_err();
    assert!(err.to_string().contains("batch logs only"), "{err}");
    let key = routed.doc[1]
        .iter()
        .find_map(|op| match op {
            LogOp::Key { key, doc: Some(_) } => Some(key.clone()),
            _ => None,
        })
        .unwrap();
    assert!(docs[1].delete(&key).is_err());
    // Another role, or a layout that is not the one recorded.
    let other = Partition::new(layout, Role::Doc(0)).unwrap();
    assert!(docs[1].set_partition(other).is_err());
    assert!(docs[1]
        .set_partition(Partition::new(layout, Role::Doc(1)).unwrap())
        .is_ok());
    // A whole index with pages cannot become a partition; nor can a role name a missing one.
    assert!(ix
        .set_partition(Partition::new(layout, Role::Key(0)).unwrap())
        .is_err());
    assert!(Partition::new(layout, Role::Key(2)).is_err());
    assert!(Layout::new(0, 4, 3).is_err());
    assert!(Layout::new(4, 4, 5).is_err());
    // A layout cut for another simhash distance.
    let fresh = Index::open(dir.path().join("fresh"), options()).unwrap();
    let seven = Layout::new(2, 2, 7).unwrap();
    assert!(fresh
        .set_partition(Partition::new(seven, Role::Key(0)).unwrap())
        .is_err());
}
