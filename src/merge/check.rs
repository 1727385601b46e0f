//! The distributed check of one partition (SCALEOUT §9 "Check"): what a partition verifies of
//! its own column families, and the order-independent digests by which the driver reconciles
//! the references between partitions without gathering the index.
//!
//! A doc partition walks its page records and files, for each page, the entries other
//! partitions must hold for it — its (posting key, id) pairs and simhash entries on the key
//! partitions, its (page, cluster) membership on the cluster's doc partition, its (key, id)
//! entry on the key's doc partition — into a digest per (kind, holding partition); each
//! partition files what it holds into a digest per (kind, source doc partition) the same way.
//! The driver compares the two digests of every pair of partitions. A digest is, per bucket of
//! the entries' hashes, their count and the wrapping sum of their hashes (a multiset hash), so a
//! mismatch is narrowed to its buckets, whose entries both sides then list
//! ([`Index::partition_check_entries`]).
//!
//! Over-frequent keys are left out on both sides, as [`Index::check`] does: the key partitions
//! hold the marks ([`Index::partition_frequent`]), and the doc partitions are given them.

use std::collections::{BTreeMap, HashSet};

use roaring::{RoaringBitmap, RoaringTreemap};
use rocksdb::IteratorMode;
use rustc_hash::FxHashSet;
use xxhash_rust::xxh3::xxh3_64;

use super::layout::{Layout, Role};
use crate::index::Index;
use crate::storage::codec::{self, ClusterRecord, DocRecord};
use crate::storage::{self, cf};
use crate::{Error, Result};

/// Buckets of a digest: a mismatch is listed again in its buckets only.
pub const DIGEST_BUCKETS: usize = 64;

/// A (posting key, page id) pair a page is filed under, on a key partition.
pub const KIND_POSTING: u8 = 0;
/// A simhash table entry of a page, on a key partition.
pub const KIND_SIMHASH: u8 = 1;
/// A (page, cluster) membership, on the cluster's doc partition.
pub const KIND_MEMBER: u8 = 2;
/// An (external key, page id) entry, on the key's doc partition.
pub const KIND_KEY: u8 = 3;

/// The kinds' names, by kind.
pub const KIND_NAMES: [&str; 4] = ["posting", "simhash", "member", "key"];

/// One side's digest of the entries of one kind shared with one other partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// `KIND_POSTING`, `KIND_SIMHASH`, `KIND_MEMBER` or `KIND_KEY`.
    pub kind: u8,
    /// The other partition: the holder (a key partition for postings and simhash entries, a doc
    /// partition for members and keys) on the filing side, the source doc partition on the
    /// holding side.
    pub peer: u32,
    /// True on the filing side (a doc partition's pages), false on the holding side.
    pub filed: bool,
    /// Per bucket: (entries, wrapping sum of their hashes).
    pub buckets: Vec<(u64, u64)>,
}

/// What one partition's check found: its local problems, its counters and its digests.
#[derive(Clone, Debug, Default)]
pub struct PartitionCheck {
    /// Problems found within the partition.
    pub problems: Vec<String>,
    /// Page records held.
    pub pages: u64,
    /// Cluster records held.
    pub clusters: u64,
    /// (posting key, id) pairs held.
    pub postings: u64,
    /// The counters every partition holds: next page id, next cluster id, next insertion
    /// number, live pages, live clusters.
    pub counters: (u32, u32, u64, u64, u64),
    /// Free page and cluster ids held.
    pub free: (u64, u64),
    /// A hash of the free page and cluster ids (every partition holds them all).
    pub free_hash: u64,
    /// The digests, by (kind, peer, filed).
    pub digests: Vec<Digest>,
}

/// Where a walk puts each entry: into digests, or into a list when in the asked buckets.
enum Sink<'a> {
    Digests(BTreeMap<(u8, u32, bool), Vec<(u64, u64)>>),
    List {
        kind: u8,
        peer: u32,
        filed: bool,
        buckets: &'a HashSet<usize>,
        out: Vec<Vec<u8>>,
    },
}

impl Sink<'_> {
    fn bucket(h: u64) -> usize {
        (h >> 58) as usize % DIGEST_BUCKETS
    }

    fn add(&mut self, kind: u8, peer: u32, filed: bool, entry: &[u8]) {
        let h = xxh3_64(entry);
        match self {
            Sink::Digests(d) => {
                let b = &mut d
                    .entry((kind, peer, filed))
                    .or_insert_with(|| vec![(0, 0); DIGEST_BUCKETS])[Self::bucket(h)];
                b.0 += 1;
                b.1 = b.1.wrapping_add(h);
            }
            Sink::List {
                kind: k,
                peer: p,
                filed: f,
                buckets,
                out,
            } => {
                if *k == kind && *p == peer && *f == filed && buckets.contains(&Self::bucket(h)) {
                    out.push(entry.to_vec());
                }
            }
        }
    }
}

/// `a` then `b`, big-endian.
fn pair(a: &[u8], b: u32) -> Vec<u8> {
    let mut e = Vec::with_capacity(a.len() + 4);
    e.extend_from_slice(a);
    e.extend_from_slice(&b.to_be_bytes());
    e
}

impl Index {
    /// The over-frequent keys this partition marks (a key partition's; none in a doc
    /// partition): what the doc partitions' checks leave out.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn partition_frequent(&self) -> Result<Vec<[u8; 9]>> {
        self.registration.check_process()?;
        Ok(self.frequent_reasons()?.into_keys().collect())
    }

    /// Checks this partition of a distributed index on its own (SCALEOUT §9 "Check"): every
    /// record, posting and simhash entry decodes (checksums included) and belongs to this
    /// partition by `layout`; a page has its text, an insertion number below the counter and
    /// unique here, an id below the allocator and not free, its page → cluster entry; a cluster
    /// is not empty, its representative is a member, its id is below the allocator and not
    /// free. Returns those problems with the counters, the free ids' hash and the digests the
    /// driver compares across partitions (module docs). `frequent`: every over-frequent key of
    /// the index (the key partitions' [`Index::partition_frequent`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a database that is not a partition; storage errors that
    /// stop the walk (problems in the data are reported, not returned).
    pub fn partition_check(&self, layout: &Layout, frequent: &[[u8; 9]]) -> Result<PartitionCheck> {
        let mut rep = PartitionCheck::default();
        let mut sink = Sink::Digests(BTreeMap::new());
        self.partition_walk(layout, frequent, &mut sink, Some(&mut rep))?;
        if let Sink::Digests(d) = sink {
            rep.digests = d
                .into_iter()
                .map(|((kind, peer, filed), buckets)| Digest {
                    kind,
                    peer,
                    filed,
                    buckets,
                })
                .collect();
        }
        Ok(rep)
    }

    /// The entries of one digest ([`Index::partition_check`]) in `buckets`: how a mismatch
    /// between two partitions is narrowed to the entries at fault. Each entry is the bytes the
    /// digest hashed: a posting key then the page id; a simhash table key; a page id then its
    /// cluster id; an external key then the page id (ids big-endian).
    ///
    /// # Errors
    /// As [`Index::partition_check`].
    pub fn partition_check_entries(
        &self,
        layout: &Layout,
        frequent: &[[u8; 9]],
        (kind, peer, filed): (u8, u32, bool),
        buckets: &HashSet<usize>,
    ) -> Result<Vec<Vec<u8>>> {
        let mut sink = Sink::List {
            kind,
            peer,
            filed,
            buckets,
            out: Vec::new(),
        };
        self.partition_walk(layout, frequent, &mut sink, None)?;
        match sink {
            Sink::List { out, .. } => Ok(out),
            Sink::Digests(_) => Ok(Vec::new()),
        }
    }

    /// One walk of the partition's column families at one snapshot: every entry to `sink`, the
    /// local problems and counts into `rep` when given.
    fn partition_walk(
        &self,
        layout: &Layout,
        frequent: &[[u8; 9]],
        sink: &mut Sink<'_>,
        rep: Option<&mut PartitionCheck>,
    ) -> Result<()> {
        self.registration.check_process()?;
        let role = self
            .partition()?
            .ok_or_else(|| {
                Error::InvalidArgument("a whole index is not a partition to check".into())
            })?
            .role;
        let frequent: FxHashSet<[u8; 9]> = frequent.iter().copied().collect();
        let (snap, counters, free_docs, free_clusters) = {
            // Commits happen under the writer lock: the snapshot and the counters agree.
            let c = self.writer.lock();
            (
                self.db.snapshot(),
                (
                    c.next_doc,
                    c.next_cluster,
                    c.next_seq,
                    c.live_docs,
                    c.live_clusters,
                ),
                c.free_docs.all(),
                c.free_clusters.all(),
            )
        };
        let mut problems: Vec<String> = Vec::new();
        let scan = |name: &'static str| {
            snap.iterator_cf_opt(self.cf(name), storage::scan_options(), IteratorMode::Start)
                .map(|item| item.map_err(|e| Error::storage("checking the partition", e)))
        };
        let mut counts = (0u64, 0u64, 0u64);
        match role {
            Role::Doc(me) => {
                let mut live = RoaringBitmap::new();
                let mut seqs = RoaringTreemap::new();
                let mut page_cluster: BTreeMap<u32, u32> = BTreeMap::new();
                for item in scan(cf::DOCS) {
                    let (k, v) = item?;
                    let (id, rec) = match storage::decode_u32(cf::DOCS, &k, &k)
                        .and_then(|id| DocRecord::decode(cf::DOCS, &k, &v).map(|r| (id, r)))
                    {
                        Ok(r) => r,
                        Err(e) => {
                            problems.push(e.to_string());
                            continue;
                        }
                    };
                    counts.0 += 1;
                    live.insert(id);
                    page_cluster.insert(id, rec.cluster);
                    if layout.doc_part(id) != me {
                        problems.push(format!(
                            "page {id} is held by doc partition {me}, not its own ({})",
                            layout.doc_part(id)
                        ));
                    }
                    if id >= counters.0 {
                        problems.push(format!(
                            "page {id} is at or above the id allocator ({})",
                            counters.0
                        ));
                    }
                    if free_docs.contains(id) {
                        problems.push(format!("page {id} is live but its id is free"));
                    }
                    if rec.seq >= counters.2 {
                        problems.push(format!(
                            "page {id} has insertion number {}, at or above the next one ({})",
                            rec.seq, counters.2
                        ));
                    }
                    if !seqs.insert(rec.seq) {
                        problems.push(format!(
                            "page {id} has the insertion number {} of another page",
                            rec.seq
                        ));
                    }
                    match self.filed_keys(id, rec.content_hash) {
                        Ok(Some(mut keys)) => {
                            keys.retain(|k| !frequent.contains(k));
                            keys.sort_unstable();
                            keys.dedup();
                            for key in &keys {
                                sink.add(
                                    KIND_POSTING,
                                    layout.posting_part(key),
                                    true,
                                    &pair(key, id),
                                );
                            }
                        }
                        Ok(None) => problems.push(format!("page {id} has no text")),
                        Err(e) => problems.push(e.to_string()),
                    }
                    for t in 0..self.tables.tables {
                        let e = self.tables.key(t, rec.simhash, id);
                        sink.add(KIND_SIMHASH, layout.simhash_part(t, rec.simhash), true, &e);
                    }
                    sink.add(
                        KIND_MEMBER,
                        layout.cluster_part(rec.cluster),
                        true,
                        &pair(&id.to_be_bytes(), rec.cluster),
                    );
                    sink.add(
                        KIND_KEY,
                        layout.key_part(&rec.key),
                        true,
                        &pair(rec.key.as_bytes(), id),
                    );
                }
                for item in scan(cf::TEXTS) {
                    let (k, v) = item?;
                    match storage::decode_u32(cf::TEXTS, &k, &k) {
                        Ok(id) if !live.contains(id) => {
                            problems.push(format!("text of deleted page {id}"));
                        }
                        Ok(_) => {
                            if let Err(e) = codec::decode_text_value(cf::TEXTS, &k, &v) {
                                problems.push(e.to_string());
                            }
                        }
                        Err(e) => problems.push(e.to_string()),
                    }
                }
                if self.cluster_map {
                    let mut seen = 0u64;
                    for item in scan(cf::PAGE_CLUSTERS) {
                        let (k, v) = item?;
                        let entry = storage::decode_u32(cf::PAGE_CLUSTERS, &k, &k).and_then(|id| {
                            storage::decode_u32(cf::PAGE_CLUSTERS, &k, &v).map(|c| (id, c))
                        });
                        match entry {
                            Ok((id, cid)) => match page_cluster.get(&id) {
                                None => problems.push(format!(
                                    "the page → cluster map names deleted page {id} (cluster \
                                     {cid})"
                                )),
                                Some(&recorded) => {
                                    seen += 1;
                                    if recorded != cid {
                                        problems.push(format!(
                                            "the page → cluster map puts page {id} in cluster \
                                             {cid}, its record in {recorded}"
                                        ));
                                    }
                                }
                            },
                            Err(e) => problems.push(e.to_string()),
                        }
                    }
                    if seen != live.len() {
                        problems.push(format!(
                            "the page → cluster map has {seen} of the {} pages held",
                            live.len()
                        ));
                    }
                }
                for item in scan(cf::CLUSTERS) {
                    let (k, v) = item?;
                    let (cid, cl) = match storage::decode_u32(cf::CLUSTERS, &k, &k)
                        .and_then(|c| ClusterRecord::decode(cf::CLUSTERS, &k, &v).map(|r| (c, r)))
                    {
                        Ok(c) => c,
                        Err(e) => {
                            problems.push(e.to_string());
                            continue;
                        }
                    };
                    counts.1 += 1;
                    if layout.cluster_part(cid) != me {
                        problems.push(format!(
                            "cluster {cid} is held by doc partition {me}, not its own ({})",
                            layout.cluster_part(cid)
                        ));
                    }
                    if cid >= counters.1 {
                        problems.push(format!(
                            "cluster {cid} is at or above the cluster allocator ({})",
                            counters.1
                        ));
                    }
                    if free_clusters.contains(cid) {
                        problems.push(format!("cluster {cid} is live but its id is free"));
                    }
                    if cl.members.is_empty() {
                        problems.push(format!("cluster {cid} is empty"));
                    }
                    if !cl.members.contains(cl.representative) {
                        problems.push(format!(
                            "cluster {cid}: representative {} is not a member",
                            cl.representative
                        ));
                    }
                    for m in &cl.members {
                        sink.add(
                            KIND_MEMBER,
                            layout.doc_part(m),
                            false,
                            &pair(&m.to_be_bytes(), cid),
                        );
                    }
                }
                for item in scan(cf::KEYS) {
                    let (k, v) = item?;
                    let id = match storage::decode_u32(cf::KEYS, &k, &v) {
                        Ok(id) => id,
                        Err(e) => {
                            problems.push(e.to_string());
                            continue;
                        }
                    };
                    let key = String::from_utf8_lossy(&k);
                    if layout.key_part(&key) != me {
                        problems.push(format!(
                            "key {key:?} is held by doc partition {me}, not its own ({})",
                            layout.key_part(&key)
                        ));
                    }
                    sink.add(KIND_KEY, layout.doc_part(id), false, &pair(&k, id));
                }
            }
            Role::Key(me) => {
                for item in scan(cf::POSTINGS) {
                    let (k, v) = item?;
                    let (key, ids) = match codec::decode_posting_entry(&k, &v) {
                        Ok(entry) => entry,
                        Err(problem) => {
                            problems.push(problem);
                            continue;
                        }
                    };
                    counts.2 += ids.len();
                    if layout.posting_part(&key) != me {
                        problems.push(format!(
                            "posting {} is held by key partition {me}, not its own ({})",
                            crate::error::hex(&k),
                            layout.posting_part(&key)
                        ));
                    }
                    if frequent.contains(&key) {
                        continue;
                    }
                    for id in &ids {
                        sink.add(KIND_POSTING, layout.doc_part(id), false, &pair(&key, id));
                    }
                }
                for item in scan(cf::SIMHASH) {
                    let (k, _) = item?;
                    match self.tables.decode(&k) {
                        Some((t, simhash, id)) => {
                            if layout.simhash_part(t, simhash) != me {
                                problems.push(format!(
                                    "simhash entry of page {id} in table {t} is held by key \
                                     partition {me}, not its own ({})",
                                    layout.simhash_part(t, simhash)
                                ));
                            }
                            sink.add(KIND_SIMHASH, layout.doc_part(id), false, &k);
                        }
                        None => problems.push(format!(
                            "simhash key {} is malformed",
                            crate::error::hex(&k)
                        )),
                    }
                }
                for item in scan(cf::FREQUENT) {
                    let (k, _) = item?;
                    match <[u8; 9]>::try_from(k.as_ref()) {
                        Ok(key) if layout.posting_part(&key) != me => problems.push(format!(
                            "over-frequent key {} is held by key partition {me}, not its own ({})",
                            crate::error::hex(&k),
                            layout.posting_part(&key)
                        )),
                        Ok(_) => {}
                        Err(_) => problems.push(format!(
                            "over-frequent key {} is not 9 bytes",
                            crate::error::hex(&k)
                        )),
                    }
                }
                for name in [cf::DOCS, cf::CLUSTERS, cf::KEYS, cf::TEXTS] {
                    if let Some(item) = scan(name).next() {
                        item?;
                        problems.push(format!("a key partition holds entries of {name}"));
                    }
                }
            }
        }
        if let Some(rep) = rep {
            let mut free = Vec::new();
            for bitmap in [&free_docs, &free_clusters] {
                bitmap
                    .serialize_into(&mut free)
                    .map_err(|e| Error::InvalidArgument(e.to_string()))?;
            }
            rep.problems = problems;
            rep.pages = counts.0;
            rep.clusters = counts.1;
            rep.postings = counts.2;
            rep.counters = counters;
            rep.free = (free_docs.len(), free_clusters.len());
            rep.free_hash = xxh3_64(&free);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::export::tests::partitioned;
    use crate::merge::Partition;
    use crate::options::IndexOptions;

    #[test]
    fn a_partitioned_index_checks_clean_and_its_digests_agree() {
        let dir = tempfile::tempdir().unwrap();
        let (whole, layout, docs) = partitioned(dir.path(), 2);
        // The key partitions too, from the same state.
        let routed = layout.route(&whole.state_log().unwrap());
        let keys: Vec<Index> = (0..layout.key_parts())
            .map(|n| {
                let ix = Index::open(dir.path().join(format!("key-{n}")), IndexOptions::default())
                    .unwrap();
                ix.set_partition(Partition::new(layout, Role::Key(n)).unwrap())
                    .unwrap();
                ix.apply_log(1, &routed.key[n as usize]).unwrap();
                ix
            })
            .collect();
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
        let k = keys.len() as u32;
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
}
