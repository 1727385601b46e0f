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
//!
//! One walk serves both id widths (issue #34 item 5): a format 6 partition ([`Index`], `u32`
//! ids) and a format 7 one ([`WidePartition`], `u64` ids) are read through
//! [`super::store::PartitionDb`]. The entries hash their ids as `u64`s, simhash entries as a
//! format 7 partition keys them, and the counters and free ids are `u64`s: two partitions of
//! either width holding the same state give the same report, and their digests compare.

use std::collections::{BTreeMap, HashSet};

use roaring::RoaringTreemap;
use rocksdb::IteratorMode;
use rustc_hash::FxHashSet;
use xxhash_rust::xxh3::xxh3_64;

use super::layout::{Layout, Role};
use super::store::{Consistent, PartitionDb};
use super::wide::WidePartition;
use crate::index::Index;
use crate::storage::codec::{self, ClusterRecord, DocRecord};
use crate::storage::width::{decode_id, IdSet, IdWidth};
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// number, live pages, live clusters (`u64`s whatever the width of the partition's ids).
    pub counters: (u64, u64, u64, u64, u64),
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

/// An entry of a digest: `a` then the id `b` as a `u64`, big-endian — the same bytes whatever
/// width the partition stores its ids in, so that a format 6 and a format 7 partition's digests
/// of the same state are equal.
fn pair(a: &[u8], b: u64) -> Vec<u8> {
    let mut e = Vec::with_capacity(a.len() + 8);
    e.extend_from_slice(a);
    e.extend_from_slice(&b.to_be_bytes());
    e
}

/// The over-frequent keys a partition marks ([`Index::partition_frequent`]).
fn frequent<P: PartitionDb>(p: &P) -> Result<Vec<[u8; 9]>> {
    p.check_process()?;
    p.frequent_keys()
}

/// A partition's check ([`Index::partition_check`]).
fn check<P: PartitionDb>(p: &P, layout: &Layout, frequent: &[[u8; 9]]) -> Result<PartitionCheck> {
    let mut rep = PartitionCheck::default();
    let mut sink = Sink::Digests(BTreeMap::new());
    walk(p, layout, frequent, &mut sink, Some(&mut rep))?;
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

/// The entries of one digest in `buckets` ([`Index::partition_check_entries`]).
fn check_entries<P: PartitionDb>(
    p: &P,
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
    walk(p, layout, frequent, &mut sink, None)?;
    match sink {
        Sink::List { out, .. } => Ok(out),
        Sink::Digests(_) => Ok(Vec::new()),
    }
}

impl Index {
    /// The over-frequent keys this partition marks (a key partition's; none in a doc
    /// partition): what the doc partitions' checks leave out.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn partition_frequent(&self) -> Result<Vec<[u8; 9]>> {
        frequent(self)
    }

    /// Checks this partition of a distributed index on its own (SCALEOUT §9 "Check"): every
    /// record, posting and simhash entry decodes (checksums included) and belongs to this
    /// partition by `layout`; a page has its text, an insertion number below the counter and
    /// unique here, an id below the allocator and not free, its page → cluster entry; a cluster
    /// is not empty, its representative is a member, its id is below the allocator and not
    /// free. Returns those problems with the counters, the free ids' hash and the digests the
    /// driver compares across partitions (module docs). `frequent`: every over-frequent key of
    /// the index (the key partitions' [`Index::partition_frequent`]). The report is the same
    /// for a format 7 partition holding the same state ([`WidePartition::partition_check`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a database that is not a partition; storage errors that
    /// stop the walk (problems in the data are reported, not returned).
    pub fn partition_check(&self, layout: &Layout, frequent: &[[u8; 9]]) -> Result<PartitionCheck> {
        check(self, layout, frequent)
    }

    /// The entries of one digest ([`Index::partition_check`]) in `buckets`: how a mismatch
    /// between two partitions is narrowed to the entries at fault. Each entry is the bytes the
    /// digest hashed, ids as `u64`s big-endian whatever the partition's width: a posting key
    /// then the page id (17 bytes); a simhash table entry as a format 7 partition keys it (the
    /// table, the permuted simhash, the page id: 17 bytes); a page id then its cluster id (16
    /// bytes); an external key then the page id.
    ///
    /// # Errors
    /// As [`Index::partition_check`].
    pub fn partition_check_entries(
        &self,
        layout: &Layout,
        frequent: &[[u8; 9]],
        digest: (u8, u32, bool),
        buckets: &HashSet<usize>,
    ) -> Result<Vec<Vec<u8>>> {
        check_entries(self, layout, frequent, digest, buckets)
    }
}

/// The distributed check of a format 7 partition (SCALEOUT §9 "Check"; issue #34 item 5): the
/// same walk, problems, counters and digests as a format 6 partition's, so that a driver
/// compares the digests of partitions of either width.
impl WidePartition {
    /// The over-frequent keys this partition marks (a key partition's; none in a doc
    /// partition), as [`Index::partition_frequent`].
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn partition_frequent(&self) -> Result<Vec<[u8; 9]>> {
        frequent(self)
    }

    /// Checks this partition on its own, as [`Index::partition_check`] checks a format 6 one:
    /// the same problems, counts, counters and digests for the same state (the entries'
    /// ids are `u64`s in either width).
    ///
    /// # Errors
    /// Storage errors that stop the walk (problems in the data are reported, not returned).
    pub fn partition_check(&self, layout: &Layout, frequent: &[[u8; 9]]) -> Result<PartitionCheck> {
        check(self, layout, frequent)
    }

    /// The entries of one digest ([`WidePartition::partition_check`]) in `buckets`, as
    /// [`Index::partition_check_entries`] lists them.
    ///
    /// # Errors
    /// As [`WidePartition::partition_check`].
    pub fn partition_check_entries(
        &self,
        layout: &Layout,
        frequent: &[[u8; 9]],
        digest: (u8, u32, bool),
        buckets: &HashSet<usize>,
    ) -> Result<Vec<Vec<u8>>> {
        check_entries(self, layout, frequent, digest, buckets)
    }
}

/// One walk of a partition's column families at one snapshot: every entry to `sink`, the
/// local problems and counts into `rep` when given.
fn walk<P: PartitionDb>(
    p: &P,
    layout: &Layout,
    frequent: &[[u8; 9]],
    sink: &mut Sink<'_>,
    rep: Option<&mut PartitionCheck>,
) -> Result<()> {
    p.check_process()?;
    let role = p.role()?.ok_or_else(|| {
        Error::InvalidArgument("a whole index is not a partition to check".into())
    })?;
    let frequent: FxHashSet<[u8; 9]> = frequent.iter().copied().collect();
    let Consistent {
        snap,
        counters,
        free_docs,
        free_clusters,
    } = p.consistent()?;
    let tables = p.simhash_tables();
    let mut problems: Vec<String> = Vec::new();
    let scan = |name: &'static str| {
        snap.iterator_cf_opt(p.column(name), storage::scan_options(), IteratorMode::Start)
            .map(|item| item.map_err(|e| Error::storage("checking the partition", e)))
    };
    let mut counts = (0u64, 0u64, 0u64);
    match role {
        Role::Doc(me) => {
            let mut live = RoaringTreemap::new();
            let mut seqs = RoaringTreemap::new();
            let mut page_cluster: BTreeMap<u64, u64> = BTreeMap::new();
            for item in scan(cf::DOCS) {
                let (k, v) = item?;
                let (id, rec) = match decode_id::<P::Id>(cf::DOCS, &k, &k)
                    .and_then(|id| DocRecord::<P::Id>::decode_as(cf::DOCS, &k, &v).map(|r| (id, r)))
                {
                    Ok(r) => r,
                    Err(e) => {
                        problems.push(e.to_string());
                        continue;
                    }
                };
                let (page, part, cluster) = (id, layout.doc_part(id), rec.cluster.to_u64());
                let id = id.to_u64();
                counts.0 += 1;
                live.insert(id);
                page_cluster.insert(id, cluster);
                if part != me {
                    problems.push(format!(
                        "page {id} is held by doc partition {me}, not its own ({part})"
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
                match p.filed_keys_at(&snap, page, rec.content_hash) {
                    Ok(Some(mut keys)) => {
                        keys.retain(|k| !frequent.contains(k));
                        keys.sort_unstable();
                        keys.dedup();
                        for key in &keys {
                            sink.add(KIND_POSTING, layout.posting_part(key), true, &pair(key, id));
                        }
                    }
                    Ok(None) => problems.push(format!("page {id} has no text")),
                    Err(e) => problems.push(e.to_string()),
                }
                for t in 0..tables.tables {
                    let e = tables.wide_key(t, rec.simhash, id);
                    sink.add(KIND_SIMHASH, layout.simhash_part(t, rec.simhash), true, &e);
                }
                sink.add(
                    KIND_MEMBER,
                    layout.cluster_part(cluster),
                    true,
                    &pair(&id.to_be_bytes(), cluster),
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
                match decode_id::<P::Id>(cf::TEXTS, &k, &k) {
                    Ok(id) if !live.contains(id.to_u64()) => {
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
            if p.keeps_page_clusters() {
                let mut seen = 0u64;
                for item in scan(cf::PAGE_CLUSTERS) {
                    let (k, v) = item?;
                    let entry = decode_id::<P::Id>(cf::PAGE_CLUSTERS, &k, &k).and_then(|id| {
                        decode_id::<P::Id>(cf::PAGE_CLUSTERS, &k, &v).map(|c| (id, c))
                    });
                    match entry {
                        Ok((id, cid)) => match page_cluster.get(&id.to_u64()) {
                            None => problems.push(format!(
                                "the page → cluster map names deleted page {id} (cluster {cid})"
                            )),
                            Some(&recorded) => {
                                seen += 1;
                                if recorded != cid.to_u64() {
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
                let (cid, cl) = match decode_id::<P::Id>(cf::CLUSTERS, &k, &k).and_then(|c| {
                    ClusterRecord::<P::Id>::decode_as(cf::CLUSTERS, &k, &v).map(|r| (c, r))
                }) {
                    Ok(c) => c,
                    Err(e) => {
                        problems.push(e.to_string());
                        continue;
                    }
                };
                counts.1 += 1;
                let part = layout.cluster_part(cid);
                let cid = cid.to_u64();
                if part != me {
                    problems.push(format!(
                        "cluster {cid} is held by doc partition {me}, not its own ({part})"
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
                for m in cl.members.ids() {
                    sink.add(
                        KIND_MEMBER,
                        layout.doc_part(m),
                        false,
                        &pair(&m.to_u64().to_be_bytes(), cid),
                    );
                }
            }
            for item in scan(cf::KEYS) {
                let (k, v) = item?;
                let id = match decode_id::<P::Id>(cf::KEYS, &k, &v) {
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
                sink.add(KIND_KEY, layout.doc_part(id), false, &pair(&k, id.to_u64()));
            }
        }
        Role::Key(me) => {
            for item in scan(cf::POSTINGS) {
                let (k, v) = item?;
                let entry = <[u8; 9]>::try_from(k.as_ref())
                    .map_err(|_| format!("posting key {} is not 9 bytes", crate::error::hex(&k)))
                    .and_then(|key| {
                        codec::decode_posting_as::<P::Id>(&v)
                            .map(|ids| (key, ids))
                            .map_err(|r| format!("posting {}: {r}", crate::error::hex(&k)))
                    });
                let (key, ids) = match entry {
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
                for id in ids.ids() {
                    let e = pair(&key, id.to_u64());
                    sink.add(KIND_POSTING, layout.doc_part(id), false, &e);
                }
            }
            for item in scan(cf::SIMHASH) {
                let (k, _) = item?;
                match p.decode_simhash(&k) {
                    Some((t, simhash, id)) => {
                        if layout.simhash_part(t, simhash) != me {
                            problems.push(format!(
                                "simhash entry of page {id} in table {t} is held by key \
                                 partition {me}, not its own ({})",
                                layout.simhash_part(t, simhash)
                            ));
                        }
                        let e = tables.wide_key(t, simhash, id.to_u64());
                        sink.add(KIND_SIMHASH, layout.doc_part(id), false, &e);
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
        // The free ids as `u64` sets whatever the width: one hash for the same free ids.
        let mut free = Vec::new();
        IdSet::serialize(&free_docs, &mut free);
        IdSet::serialize(&free_clusters, &mut free);
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

#[cfg(test)]
mod tests;
