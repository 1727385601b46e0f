//! Storage roles (SCALEOUT §4, §11 item 3): a whole index's state cut by a `Layout` into key
//! and doc partitions, each an ordinary database written by its part of the batch log, holds
//! exactly that part; the partitions' seed logs combine into the seed the whole index gives;
//! partitions refuse what is not theirs.
mod common;
use std::path::Path;

use common::*;
use neardup::merge::{
    batch_counters, combine_seed_logs, combine_unit_logs, combine_unit_logs_mapped, remap_unit_log,
    AllocatedId, BatchBase, IdMap, Layout, LogCounter, LogOp, Partition, Role,
};
use neardup::{BatchOptions, BatchOrder, Index, IndexOptions, OrderScope};

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
        // Whole-batch order is a sort by fingerprint count, named: the default is input order.
        order: BatchOrder::FingerprintCount,
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
            neardup::merge::ApplyOutcome::Applied { .. }
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
    assert_eq!(
        home.page_clusters(&[id]).unwrap()[0],
        Some(reach.clusters[0])
    );
    assert_eq!(other.page_clusters(&[id]).unwrap()[0], None);
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
            .all(|r| p.partition().unwrap().unwrap().role == Role::Doc(layout.doc_part(r.doc))));
        pages.extend(pg);
        clusters.extend(cl);
    }
    pages.sort_by_key(|r| r.doc);
    clusters.sort_unstable();
    assert_eq!((pages, clusters), ix.partition_rows().unwrap());
    // Reopened, a partition keeps its role.
    let role = docs[0].partition().unwrap();
    let path = docs[0].path().to_path_buf();
    drop(docs);
    let again = Index::open(&path, options()).unwrap();
    assert_eq!(again.partition().unwrap(), role);
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
    let mut logs: Vec<Vec<LogOp<u64>>> = keys
        .iter()
        .map(|p| wide(p.seed_log(&[], &[]).unwrap()))
        .collect();
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
        logs.push(wide(p.seed_log(&pages, &clusters).unwrap()));
    }
    // The same seed combined and numbered densely from the partitions' files, streamed: the
    // same ids and bytes as in memory (what a work unit of a large component does).
    let files: Vec<std::path::PathBuf> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            let f = dir.path().join(format!("seed-{i}.ndlog"));
            std::fs::write(&f, neardup::merge::encode_log(log)).unwrap();
            f
        })
        .collect();
    let out = dir.path().join("seed.ndlog");
    let streamed = neardup::merge::ScratchIds::from_seed_files(&files, &out).unwrap();
    let (ids, dense) =
        neardup::merge::ScratchIds::from_seed(combine_seed_logs(logs.clone()).unwrap()).unwrap();
    assert_eq!(streamed, ids);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        neardup::merge::encode_log(&dense)
    );
    assert!(ids.seeded_pages() > 3);
    let combined = narrow(combine_seed_logs(logs).unwrap());
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

/// Options of a distributed index: ids never given out again.
fn no_reuse() -> IndexOptions {
    IndexOptions {
        reuse_ids: false,
        ..options()
    }
}

type Pages = Vec<(String, String, String)>;

fn family_pages(
    families: std::ops::Range<u64>,
    versions: std::ops::Range<u64>,
    tag: &str,
) -> Pages {
    let mut out = Vec::new();
    for f in families {
        for v in versions.clone() {
            let (host, html) = family_page(f, v);
            out.push((format!("{tag}f{f}-v{v}"), host, html));
        }
    }
    out
}

/// Chinese near duplicates: they share neither keys nor simhash blocks with the English
/// families, so a day of both has at least two components.
fn zh_pages(families: std::ops::Range<u64>, versions: std::ops::Range<u64>) -> Pages {
    let mut out = Vec::new();
    for f in families {
        let text = article_zh(500 + f, 4);
        for v in versions.clone() {
            let paras = if v % 2 == 0 {
                text.clone()
            } else {
                edited(&text, f * 7 + v)
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

fn insert_whole(ix: &Index, pages: &Pages) {
    let opts = BatchOptions {
        // Whole-batch order is a sort by fingerprint count, named: the default is input order.
        order: BatchOrder::FingerprintCount,
        scope: OrderScope::Batch,
        ..BatchOptions::default()
    };
    insert_pages(ix, pages, &opts);
}

/// Export pairs and clusters as (representative, members), sorted.
type Shape = (Vec<(String, String)>, Vec<(String, Vec<String>)>);

/// An export as a set, and the clusters as (representative, members) sets: ids may differ.
fn shape(ix: &Index) -> Shape {
    let (mut pairs, clusters) = exports(ix);
    pairs.sort();
    let mut clusters: Vec<(String, Vec<String>)> = clusters
        .into_iter()
        .map(|(_, r, mut m)| {
            m.sort();
            (r, m)
        })
        .collect();
    clusters.sort();
    (pairs, clusters)
}

#[test]
fn components_decided_in_separate_scratch_indexes_give_the_single_nodes_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let mut day1 = family_pages(0..10, 0..3, "");
    day1.extend(zh_pages(0..8, 0..3));
    // Day 2: new versions of every family, and new families.
    let mut day2 = zh_pages(0..8, 3..5);
    day2.extend(family_pages(0..10, 3..5, ""));
    day2.extend(family_pages(30..33, 0..3, ""));
    day2.extend(zh_pages(20..23, 0..3));
    let gone: Vec<String> = ["f2-v0", "z5-v1", "f7-v0", "z3-v0", "f9-v2"]
        .map(String::from)
        .to_vec();
    let reference = Index::open(dir.path().join("ref"), no_reuse()).unwrap();
    insert_whole(&reference, &day1);
    reference.checkpoint(dir.path().join("standing")).unwrap();
    for k in &gone {
        reference.delete(k).unwrap();
    }
    insert_whole(&reference, &day2);
    assert_clean(&reference);

    let standing = Index::open(dir.path().join("standing"), no_reuse()).unwrap();
    let stats = standing.stats().unwrap();
    let state = standing.state_log().unwrap();
    let counter = |f: fn(&LogOp) -> Option<u64>| state.iter().find_map(f).unwrap();
    let base = BatchBase {
        next_doc: counter(|op| match op {
            LogOp::Counter(LogCounter::NextDoc(n)) => Some(u64::from(*n)),
            _ => None,
        }),
        next_cluster: counter(|op| match op {
            LogOp::Counter(LogCounter::NextCluster(n)) => Some(u64::from(*n)),
            _ => None,
        }),
        next_seq: counter(|op| match op {
            LogOp::Counter(LogCounter::NextSeq(n)) => Some(*n),
            _ => None,
        }),
        live_docs: stats.pages,
        live_clusters: stats.clusters,
        wide: false,
    };
    // The components of the day (SCALEOUT §5 S3): pages and deletes joined when what they reach
    // in the standing index meets, or when two pages share a key or a simhash block; packed into
    // two work units, components alternately.
    let cfg = options().signature;
    let sigs: Vec<neardup::Signatures> = day2
        .iter()
        .map(|(_, _, h)| {
            neardup::Signatures::compute(neardup::Content::Html(h.as_bytes()), &cfg).unwrap()
        })
        .collect();
    let items = day2.len() + gone.len();
    let mut parent: Vec<usize> = (0..items).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut owner: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
    let mut join = |parent: &mut Vec<usize>, key: Vec<u8>, i: usize| {
        let j = *owner.entry(key).or_insert(i);
        let (a, b) = (find(parent, i), find(parent, j));
        parent[a] = b;
    };
    let mut blocks: std::collections::HashMap<Vec<u8>, Vec<usize>> = Default::default();
    for i in 0..items {
        let reach = if i < day2.len() {
            for k in sigs[i].posting_keys(&cfg.method) {
                join(&mut parent, k.to_vec(), i);
            }
            for b in sigs[i].simhash_keys(3).unwrap() {
                blocks.entry(b).or_default().push(i);
            }
            standing
                .decision_reach(&sigs[i..=i], &[day2[i].0.as_str()], &[])
                .unwrap()
        } else {
            standing
                .decision_reach(&[], &[], &[gone[i - day2.len()].as_str()])
                .unwrap()
        };
        for p in reach.pages {
            join(&mut parent, p.to_be_bytes().to_vec(), i);
        }
    }
    // Pages within the simhash distance of each other (they share a block).
    for members in blocks.values() {
        for (n, &i) in members.iter().enumerate() {
            for &j in &members[n + 1..] {
                if (sigs[i].simhash ^ sigs[j].simhash).count_ones() <= 3 {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a] = b;
                }
            }
        }
    }
    let roots: Vec<usize> = (0..items).map(|i| find(&mut parent, i)).collect();
    let mut order: Vec<usize> = roots.clone();
    order.sort_unstable();
    order.dedup();
    assert!(order.len() >= 2, "the day has one component");
    let in_unit = |i: usize, u: usize| order.binary_search(&roots[i]).unwrap() % 2 == u;
    let mut logs = Vec::new();
    let mut reached = Vec::new();
    // The single node's processing order of day 2 (one run, one body kind): descending
    // fingerprint count, then input order.
    let mut order: Vec<usize> = (0..day2.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sigs[i].fingerprints.len()));
    let processing: std::collections::HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(pos, &i)| (day2[i].0.as_str(), pos))
        .collect();
    let mut events: Vec<((u8, usize, usize), usize, AllocatedId)> = Vec::new();
    for u in 0..2 {
        let pages: Pages = (0..day2.len())
            .filter(|&i| in_unit(i, u))
            .map(|i| day2[i].clone())
            .collect();
        let deletes: Vec<&str> = (0..gone.len())
            .filter(|&i| in_unit(day2.len() + i, u))
            .map(|i| gone[i].as_str())
            .collect();
        let probes: Vec<neardup::Signatures> = (0..day2.len())
            .filter(|&i| in_unit(i, u))
            .map(|i| sigs[i].clone())
            .collect();
        let keys: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
        let reach = standing.decision_reach(&probes, &keys, &deletes).unwrap();
        reached.push(reach.pages.clone());
        let scratch = Index::open(dir.path().join(format!("scratch-{u}")), no_reuse()).unwrap();
        scratch
            .apply_log(
                1,
                &standing.seed_log(&reach.pages, &reach.clusters).unwrap(),
            )
            .unwrap();
        let before = scratch.state_log().unwrap();
        // The same state on disk, in the order the diff reads it.
        let before_file = dir.path().join(format!("before-{u}.ndlog"));
        scratch.state_file(&before_file).unwrap();
        // Which event gave out each new id: a delete (by its place in the delete list) or the
        // insert of a page (by its key).
        scratch.record_allocations(true);
        for k in &deletes {
            scratch.delete(k).unwrap();
            let at = gone.iter().position(|g| g == k).unwrap();
            for a in scratch.take_allocations() {
                events.push(((0, at, 0), u, a.id));
            }
        }
        insert_whole(&scratch, &pages);
        for a in scratch.take_allocations() {
            let key = a.key.expect("a page's allocation names its page");
            events.push(((1, processing[&*key], 0), u, a.id));
        }
        let diff = neardup::merge::state_diff(&before, &scratch.state_log().unwrap());
        let log = diff.into_log(base.live_docs, base.live_clusters);
        // Read one operation at a time, the diff is the same bytes (what a work unit returns),
        // in memory or written to a file.
        assert_eq!(
            scratch
                .state_diff_log(&before, base.live_docs, base.live_clusters)
                .unwrap(),
            neardup::merge::encode_log(&log)
        );
        let file = dir.path().join(format!("unit-{u}.ndlog"));
        let size = scratch
            .state_diff_file(&before, base.live_docs, base.live_clusters, &file)
            .unwrap();
        assert_eq!(
            std::fs::read(&file).unwrap(),
            neardup::merge::encode_log(&log)
        );
        assert_eq!(size, std::fs::metadata(&file).unwrap().len());
        // Read from the file as the diff goes: the same bytes.
        let since = dir.path().join(format!("unit-{u}-since.ndlog"));
        scratch
            .state_diff_file_since(
                &before_file,
                base.live_docs,
                base.live_clusters,
                &since,
                None,
            )
            .unwrap();
        assert_eq!(
            std::fs::read(&since).unwrap(),
            std::fs::read(&file).unwrap()
        );
        logs.push(wide(log));
    }
    // The units are disjoint components of the standing index.
    assert!(reached[0].iter().all(|p| !reached[1].contains(p)));
    assert!(!reached[0].is_empty() && !reached[1].is_empty());
    // Numbered unit after unit: the batch's clusters.
    let mapped_dir = dir.path().join("standing-mapped");
    standing.checkpoint(&mapped_dir).unwrap();
    let log = narrow(combine_unit_logs(base, logs.clone()).unwrap());
    standing.apply_log(1, &log).unwrap();
    assert_clean(&standing);
    assert_eq!(shape(&standing), shape(&reference));
    // Numbered in the single node's order (events sorted stably, each event's ids in the order
    // it gave them out): its ids and state too.
    events.sort_by_key(|e| e.0);
    let mut maps = vec![IdMap::default(); 2];
    let (mut docs, mut clusters) = (base.next_doc, base.next_cluster);
    let mut seq = base.next_seq;
    for (_, u, id) in &events {
        match *id {
            AllocatedId::Page { .. } => {
                maps[*u].docs.push(docs);
                maps[*u].seqs.push(seq);
                docs += 1;
                seq += 1;
            }
            AllocatedId::Cluster(_) => {
                maps[*u].clusters.push(clusters);
                clusters += 1;
            }
        }
    }
    let joined = combine_unit_logs_mapped(base, logs.clone(), &maps).unwrap();
    // Unit by unit (what a distributed merge writes without joining the units' logs in one
    // place): the counters, then each unit's operations mapped, give the same log.
    let mut pieces = Vec::new();
    let mut totals = Vec::new();
    for (u, (log, map)) in logs.into_iter().zip(&maps).enumerate() {
        let bytes = neardup::merge::encode_log(&log);
        let (ops, t) = remap_unit_log(base, u, log, map).unwrap();
        // Mapped and cut by partition one operation at a time, the same pieces.
        let layout = neardup::merge::Layout::new(3, 2, 3).unwrap();
        let (routed, t2) = neardup::merge::route_unit_log(base, u, &bytes, map, &layout).unwrap();
        let whole = layout.route(&ops);
        let encode = |logs: &[Vec<neardup::merge::LogOp<u64>>]| -> Vec<Vec<u8>> {
            logs.iter().map(|l| neardup::merge::encode_log(l)).collect()
        };
        assert_eq!(
            (routed.key, routed.doc),
            (encode(&whole.key), encode(&whole.doc))
        );
        assert_eq!(t2, t);
        // From a file to files: a file for each partition the unit changes, the same bytes.
        let (src, out) = (
            dir.path().join(format!("route-{u}.ndlog")),
            dir.path().join(format!("routed-{u}")),
        );
        std::fs::write(&src, &bytes).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let (files, t3) =
            neardup::merge::route_unit_log_file(base, u, &src, map, &layout, &out).unwrap();
        assert_eq!(t3, t);
        let named: Vec<(String, &Vec<neardup::merge::LogOp<u64>>)> = (0..3)
            .map(|p| (format!("key-{p:03}"), &whole.key[p]))
            .chain((0..2).map(|p| (format!("doc-{p:03}"), &whole.doc[p])))
            .collect();
        let want: Vec<&str> = named
            .iter()
            .filter(|(_, ops)| !ops.is_empty())
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), want);
        for (name, ops) in &named {
            let path = out.join(format!("{name}.ndlog"));
            if ops.is_empty() {
                assert!(!path.exists());
            } else {
                assert_eq!(
                    std::fs::read(&path).unwrap(),
                    neardup::merge::encode_log(ops)
                );
            }
        }
        // A damaged log, or a map covering more ids than the unit gave out: refused (what
        // was written is the caller's to throw away).
        let mut bad = bytes.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x5A;
        std::fs::write(&src, &bad).unwrap();
        let r = neardup::merge::route_unit_log_file(base, u, &src, map, &layout, &out);
        assert!(
            matches!(r, Err(neardup::Error::InvalidArgument(_))),
            "{r:?}"
        );
        std::fs::write(&src, &bytes).unwrap();
        let mut longer = map.clone();
        longer
            .docs
            .push(longer.docs.last().map_or(1 << 20, |d| d + 1));
        let r = neardup::merge::route_unit_log_file(base, u, &src, &longer, &layout, &out);
        assert!(
            matches!(r, Err(neardup::Error::InvalidArgument(ref m)) if m.contains("covers")),
            "{r:?}"
        );
        pieces.extend(ops);
        totals.push(t);
    }
    let mut piecewise = batch_counters(base, &totals).unwrap();
    piecewise.extend(pieces);
    assert_eq!(piecewise, joined);
    let mapped = Index::open(&mapped_dir, no_reuse()).unwrap();
    mapped.apply_log(1, &narrow(joined)).unwrap();
    assert_clean(&mapped);
    assert_eq!(exports(&mapped), exports(&reference));
    assert_eq!(
        normalized(mapped.state_log().unwrap()),
        normalized(reference.state_log().unwrap())
    );
    assert_eq!(
        standing.stats().unwrap().pages,
        reference.stats().unwrap().pages
    );
    assert_eq!(
        standing.stats().unwrap().clusters,
        reference.stats().unwrap().clusters
    );
}

#[test]
fn unit_logs_below_the_batch_start_are_refused() {
    let base = BatchBase {
        next_doc: 10,
        next_cluster: 5,
        next_seq: 10,
        live_docs: 8,
        live_clusters: 4,
        wide: false,
    };
    let low = vec![LogOp::<u64>::Counter(LogCounter::NextDoc(3))];
    assert!(combine_unit_logs(base, vec![low]).is_err());
    let none = combine_unit_logs(base, vec![]).unwrap();
    assert_eq!(none[0], LogOp::Counter(LogCounter::NextDoc(10)));
}

/// The partitions store 32-bit ids: a batch that would give out ids past them is refused when
/// its counters are made, before any partition's log is written.
#[test]
fn a_batch_past_the_partitions_ids_is_full() {
    let limit = neardup::merge::MAX_PARTITION_ALLOCATOR;
    let base = BatchBase {
        next_doc: limit - 2,
        next_cluster: 5,
        next_seq: 10,
        live_docs: 8,
        live_clusters: 4,
        wide: false,
    };
    let units = |docs| {
        [neardup::merge::UnitTotals {
            docs,
            clusters: 1,
            seqs: docs,
            live_docs: 0,
            live_clusters: 0,
        }]
    };
    let last = batch_counters(base, &units(2)).unwrap();
    assert_eq!(last[0], LogOp::Counter(LogCounter::NextDoc(limit)));
    assert!(matches!(
        batch_counters(base, &units(3)),
        Err(neardup::Error::Full)
    ));
    // Partitions of 64-bit ids (format 7) take the batch, up to S3's node space.
    let wide = BatchBase { wide: true, ..base };
    let past = batch_counters(wide, &units(3)).unwrap();
    assert_eq!(past[0], LogOp::Counter(LogCounter::NextDoc(limit + 1)));
    let top = neardup::merge::MAX_WIDE_ALLOCATOR;
    let near_top = BatchBase {
        next_doc: top - 2,
        ..wide
    };
    assert!(batch_counters(near_top, &units(2)).is_ok());
    assert!(matches!(
        batch_counters(near_top, &units(3)),
        Err(neardup::Error::Full)
    ));
}

#[test]
fn without_reuse_new_ids_are_above_every_id_given_out() {
    let dir = tempfile::tempdir().unwrap();
    for (name, reuse) in [("reuse", true), ("no-reuse", false)] {
        let ix = Index::open(
            dir.path().join(name),
            IndexOptions {
                reuse_ids: reuse,
                ..options()
            },
        )
        .unwrap();
        insert_whole(&ix, &family_pages(0..3, 0..1, ""));
        let gone = ix.get("f0-v0").unwrap().unwrap();
        ix.delete("f0-v0").unwrap();
        insert_whole(&ix, &family_pages(7..8, 0..1, ""));
        let new = ix.get("f7-v0").unwrap().unwrap();
        if reuse {
            assert_eq!((new.doc, new.cluster), (gone.doc, gone.cluster));
        } else {
            assert_eq!((new.doc, new.cluster), (3, 3));
        }
        assert_clean(&ix);
    }
}

/// S2–S3 on the key partitions (issue #34 item 4): each keeps the probes it holds and returns
/// the partial forest of their joins; merged, the forests give the components that the whole
/// index's postings and simhash tables give as edges.
#[test]
fn the_key_partitions_forests_merge_into_the_whole_indexs_components() {
    use neardup::merge::{Components, ProbeJoin};
    const ROW: u64 = 1 << 56;
    const DOC: u64 = 0;
    let dir = tempfile::tempdir().unwrap();
    let ix = whole(&dir.path().join("whole"));
    let layout = Layout::new(3, 2, 3).unwrap();
    let routed = layout.route(&ix.state_log().unwrap());
    let (keys, _docs) = partitions(dir.path(), layout);
    for (p, log) in keys.iter().zip(&routed.key) {
        p.apply_log(1, log).unwrap();
    }
    // Probes: rows of a day filed under the keys and simhashes of some standing pages (every
    // third), and two rows of unknown keys, one of them on a key of another row.
    let (pages, _) = ix.partition_rows().unwrap();
    let mut probe_keys = Vec::new();
    let mut owners = Vec::new();
    let mut simhashes = Vec::new();
    let mut sim_owners = Vec::new();
    for (row, page) in pages.iter().step_by(3).enumerate() {
        let (sim, filed) = ix.filed_pages(&[page.doc]).unwrap()[0].clone().unwrap();
        for k in filed.iter().step_by(2) {
            probe_keys.push(*k);
            owners.push(ROW | row as u64);
        }
        simhashes.push(sim ^ 1);
        sim_owners.push(ROW | row as u64);
    }
    let lone = [b'F', 1, 2, 3, 4, 5, 6, 7, 8];
    probe_keys.extend([lone, lone]);
    owners.extend([ROW | 1000, ROW | 1001]);
    // The whole index's edges, as S3 joined them centrally.
    let mut whole_c = Components::new();
    for (k, standing) in probe_keys.iter().zip(ix.posting_ids(&probe_keys).unwrap()) {
        let first = owners[probe_keys.iter().position(|x| x == k).unwrap()];
        for (o, _) in owners.iter().zip(&probe_keys).filter(|(_, x)| *x == k) {
            whole_c.add_edges(&[first], &[*o]);
        }
        for d in standing {
            whole_c.add_edges(&[first], &[DOC | u64::from(d)]);
        }
    }
    for (o, near) in sim_owners.iter().zip(ix.simhash_ids(&simhashes).unwrap()) {
        for d in near {
            whole_c.add_edges(&[*o], &[DOC | u64::from(d)]);
        }
    }
    // The partitions' forests, merged.
    let mut merged = Components::new();
    let (mut kept_keys, mut kept_sims) = (0, 0);
    for (n, p) in keys.iter().enumerate() {
        // What S1 routes to partition n.
        let n = n as u32;
        let (mut k, mut o, mut h, mut ho) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (key, owner) in probe_keys.iter().zip(&owners) {
            if layout.posting_part(key) == n {
                k.push(*key);
                o.push(*owner);
            }
        }
        for (sim, owner) in simhashes.iter().zip(&sim_owners) {
            if layout.simhash_parts(*sim).contains(&n) {
                h.push(*sim);
                ho.push(*owner);
            }
        }
        kept_keys += k.len();
        kept_sims += h.len();
        // Added in two blocks, as a partition reads S1's files.
        let mut join = ProbeJoin::new();
        let (ka, kb) = (k.len() / 2, h.len() / 2);
        join.add_keys(&k[..ka], &o[..ka]).unwrap();
        join.add_simhashes(&h[..kb], &ho[..kb]).unwrap();
        join.add_keys(&k[ka..], &o[ka..]).unwrap();
        join.add_simhashes(&h[kb..], &ho[kb..]).unwrap();
        let f = p.probe_forest(join, DOC).unwrap();
        merged.merge_forest(&f.nodes, &f.roots);
    }
    assert_eq!(kept_keys, probe_keys.len(), "each key to one partition");
    assert!(
        kept_sims >= simhashes.len(),
        "each simhash to its tables' partitions"
    );
    let (nodes, _, _) = whole_c.labels();
    assert!(
        nodes.iter().filter(|&&n| n >> 56 == 0).count() >= pages.len() / 3,
        "the probes reach standing pages"
    );
    for &a in &nodes {
        for &b in nodes.iter().step_by(7) {
            assert_eq!(
                whole_c.connected(a, b),
                merged.connected(a, b),
                "{a:x} {b:x}"
            );
        }
    }
    assert!(merged.connected(ROW | 1000, ROW | 1001));
    // Arrays of unequal lengths are refused.
    assert!(ProbeJoin::new().add_keys(&[lone], &[]).is_err());
    assert!(ProbeJoin::new().add_simhashes(&[1, 2], &[3]).is_err());
}
