//! Storage roles of a distributed index (SCALEOUT §4 "Partitioning", §11 item 3).
//!
//! A distributed index is K **key partitions** and J **doc partitions**, each an ordinary
//! neardup database with today's column families, codecs and merge operator, holding the rows
//! one [`Layout`] routes to it:
//!
//! - key partitions: `postings` and `frequent` by a hash of the 9-byte posting key, `simhash`
//!   entries by a hash of their table's block key (the prefix a look-up scans);
//! - doc partitions: `keys` by a hash of the external key; `docs` and `texts` (and site-chrome
//!   page records) by page id mod J; `clusters` by cluster id mod J;
//! - every partition: the counters and free ids of `meta`, the same everywhere.
//!
//! Ids stay the single node's global `u32`s, allocated in the global order by the one scratch
//! index that decides a batch ([`crate::Index::seed_log`]): the issue asks for the existing
//! codecs, so postings keep `RoaringBitmap`s and a distributed index holds at most 2³² page
//! ids in its life, as one index does (§4's `u64` ids in `RoaringTreemap`s are for later).
//!
//! A partition is written only by batch logs ([`crate::Index::apply_log`]), which refuse an
//! operation routed elsewhere; inserts and deletes are refused. The union of the partitions'
//! rows is the single node's database, so the union of their state logs
//! ([`crate::Index::state_log`]) describes the whole index.

use std::collections::{BTreeMap, BTreeSet};

use roaring::RoaringBitmap;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::apply::{LogCounter, LogOp};
use crate::storage::codec::{ClusterId, DocId};
use crate::storage::merge::Delta;
use crate::storage::SimhashTables;
use crate::{Error, Result};

/// How a distributed index is cut into key and doc partitions (see the [module](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    key_parts: u32,
    doc_parts: u32,
    tables: SimhashTables,
}

/// Which of a layout's partitions a database is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Key partition `n` (postings, over-frequent keys, simhash tables).
    Key(u32),
    /// Doc partition `n` (keys, page records, texts, clusters).
    Doc(u32),
}

/// A database's place in a distributed index: the layout and its role in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// The layout of the whole index.
    pub layout: Layout,
    /// This database's role.
    pub role: Role,
}

/// Where one operation of a batch log goes ([`Layout::target`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// One partition.
    One(Role),
    /// Every partition (counters and free ids).
    All,
}

/// A page's simhash and the posting keys it is filed under ([`crate::Index::filed_pages`]).
pub type FiledPage = (u64, Vec<[u8; 9]>);

/// A batch log cut by partition ([`Layout::route`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoutedLog {
    /// The operations of each key partition, in log order.
    pub key: Vec<Vec<LogOp>>,
    /// The operations of each doc partition, in log order.
    pub doc: Vec<Vec<LogOp>>,
}

/// The most partitions of either kind a layout has.
pub const MAX_PARTS: u32 = 1 << 16;

/// Seeds of the routing hashes, so that the key and doc hashes are independent.
const KEY_SEED: u64 = 0x6b65_792d_7061_7274;
const DOC_SEED: u64 = 0x646f_632d_7061_7274;

fn part(hash: u64, parts: u32) -> u32 {
    // Lemire's multiply-shift: uniform over the parts without a division.
    ((u128::from(hash) * u128::from(parts)) >> 64) as u32
}

impl Layout {
    /// A layout of `key_parts` key and `doc_parts` doc partitions for indexes whose
    /// [`crate::IndexOptions::simhash_max_distance`] is `simhash_max_distance`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a count is 0 or above [`MAX_PARTS`], or for a simhash
    /// distance the index refuses.
    pub fn new(key_parts: u32, doc_parts: u32, simhash_max_distance: u32) -> Result<Layout> {
        for (n, what) in [(key_parts, "key"), (doc_parts, "doc")] {
            if n == 0 || n > MAX_PARTS {
                return Err(Error::InvalidArgument(format!(
                    "the number of {what} partitions must be 1 to {MAX_PARTS}, not {n}"
                )));
            }
        }
        Ok(Layout {
            key_parts,
            doc_parts,
            tables: SimhashTables::new(simhash_max_distance)?,
        })
    }

    /// The number of key partitions.
    pub fn key_parts(&self) -> u32 {
        self.key_parts
    }

    /// The number of doc partitions.
    pub fn doc_parts(&self) -> u32 {
        self.doc_parts
    }

    /// The simhash distance the layout's tables are cut for.
    pub fn simhash_max_distance(&self) -> u32 {
        u32::from(self.tables.tables) - 1
    }

    /// The key partition of a posting key (its posting and its over-frequent mark).
    pub fn posting_part(&self, key: &[u8; 9]) -> u32 {
        part(xxh3_64_with_seed(key, KEY_SEED), self.key_parts)
    }

    /// The key partition holding simhash `simhash`'s entry in table `table`: by the block key a
    /// look-up in that table scans, so the entries a look-up reads are in one partition.
    pub fn simhash_part(&self, table: u8, simhash: u64) -> u32 {
        let block = &self.tables.block_keys(simhash)[usize::from(table % self.tables.tables)];
        part(xxh3_64_with_seed(block, KEY_SEED), self.key_parts)
    }

    /// The key partitions a simhash look-up of `simhash` reads (one per table, fewer when
    /// tables share a partition), ascending.
    pub fn simhash_parts(&self, simhash: u64) -> Vec<u32> {
        let parts: BTreeSet<u32> = (0..self.tables.tables)
            .map(|t| self.simhash_part(t, simhash))
            .collect();
        parts.into_iter().collect()
    }

    /// The doc partition of an external key (its `keys` entry).
    pub fn key_part(&self, key: &str) -> u32 {
        part(xxh3_64_with_seed(key.as_bytes(), DOC_SEED), self.doc_parts)
    }

    /// The doc partition of a page id (its record and text): `id mod J`.
    pub fn doc_part(&self, id: DocId) -> u32 {
        id % self.doc_parts
    }

    /// The doc partition of a cluster id (its record): `id mod J`.
    pub fn cluster_part(&self, id: ClusterId) -> u32 {
        id % self.doc_parts
    }

    /// Where an operation of a batch log goes.
    pub fn target(&self, op: &LogOp) -> Target {
        match op {
            LogOp::Posting { key, .. } | LogOp::Frequent { key, .. } => {
                Target::One(Role::Key(self.posting_part(key)))
            }
            LogOp::Simhash { table, simhash, .. } => {
                Target::One(Role::Key(self.simhash_part(*table, *simhash)))
            }
            LogOp::Key { key, .. } => Target::One(Role::Doc(self.key_part(key))),
            LogOp::Doc { id, .. } | LogOp::Text { id, .. } | LogOp::PageBlocks { id, .. } => {
                Target::One(Role::Doc(self.doc_part(*id)))
            }
            LogOp::Cluster { id, .. } => Target::One(Role::Doc(self.cluster_part(*id))),
            LogOp::HostPages { host, .. } | LogOp::BlockPages { host, .. } => {
                Target::One(Role::Doc(self.key_part(host)))
            }
            LogOp::FreeDoc { .. } | LogOp::FreeCluster { .. } | LogOp::Counter(_) => Target::All,
        }
    }

    /// Cuts a batch log by partition, each partition's operations in log order.
    pub fn route(&self, ops: &[LogOp]) -> RoutedLog {
        let mut out = RoutedLog {
            key: vec![Vec::new(); self.key_parts as usize],
            doc: vec![Vec::new(); self.doc_parts as usize],
        };
        for op in ops {
            match self.target(op) {
                Target::One(Role::Key(p)) => out.key[p as usize].push(op.clone()),
                Target::One(Role::Doc(p)) => out.doc[p as usize].push(op.clone()),
                Target::All => {
                    for list in out.key.iter_mut().chain(out.doc.iter_mut()) {
                        list.push(op.clone());
                    }
                }
            }
        }
        out
    }

    /// Whether an operation belongs to the partition of role `role`.
    pub fn holds(&self, role: Role, op: &LogOp) -> bool {
        match self.target(op) {
            Target::All => true,
            Target::One(r) => r == role,
        }
    }
}

impl Partition {
    /// Size of the encoded form ([`Partition::encode`]).
    pub(crate) const ENCODED_LEN: usize = 1 + 4 * 4;

    /// The place of a database: `role` must name a partition the layout has.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when it does not.
    pub fn new(layout: Layout, role: Role) -> Result<Partition> {
        let (n, parts, what) = match role {
            Role::Key(n) => (n, layout.key_parts, "key"),
            Role::Doc(n) => (n, layout.doc_parts, "doc"),
        };
        if n >= parts {
            return Err(Error::InvalidArgument(format!(
                "{what} partition {n} is not one of the layout's {parts}"
            )));
        }
        Ok(Partition { layout, role })
    }

    /// Whether an operation of a batch log belongs here.
    pub fn holds(&self, op: &LogOp) -> bool {
        self.layout.holds(self.role, op)
    }

    /// The `meta` value recording the partition: the role byte (0 key, 1 doc), the partition
    /// number, the numbers of key and doc partitions and the simhash distance, each a big-endian
    /// `u32` (FORMAT.md "Partitions").
    pub(crate) fn encode(&self) -> Vec<u8> {
        let (kind, n) = match self.role {
            Role::Key(n) => (0u8, n),
            Role::Doc(n) => (1u8, n),
        };
        let mut out = Vec::with_capacity(Self::ENCODED_LEN);
        out.push(kind);
        for v in [
            n,
            self.layout.key_parts,
            self.layout.doc_parts,
            self.layout.simhash_max_distance(),
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out
    }

    /// Reads [`Partition::encode`]'s form; `None` when it is not one.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Partition> {
        if bytes.len() != Self::ENCODED_LEN || bytes[0] > 1 {
            return None;
        }
        let word = |i: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&bytes[1 + 4 * i..5 + 4 * i]);
            u32::from_be_bytes(w)
        };
        let layout = Layout::new(word(1), word(2), word(3)).ok()?;
        let role = if bytes[0] == 0 {
            Role::Key(word(0))
        } else {
            Role::Doc(word(0))
        };
        Partition::new(layout, role).ok()
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Role::Key(n) => write!(f, "key partition {n}"),
            Role::Doc(n) => write!(f, "doc partition {n}"),
        }
    }
}

/// One seed log for a scratch index from the seed logs of the partitions
/// ([`crate::Index::seed_log`] on each doc partition with the pages and clusters it holds, and
/// on each key partition with none, for its over-frequent keys): the counters once (the
/// allocators and sequence are the same everywhere; the live counts are summed), the free ids
/// and over-frequent keys once each, every page's and cluster's rows, and one posting operand
/// per key with the seeded pages of all partitions.
///
/// # Errors
/// [`Error::InvalidArgument`] when the partitions disagree on an allocator or the sequence.
pub fn combine_seed_logs(logs: Vec<Vec<LogOp>>) -> Result<Vec<LogOp>> {
    let mut next: Option<(DocId, ClusterId, u64)> = None;
    let mut alloc = (None, None, None);
    let (mut live_docs, mut live_clusters) = (0u64, 0u64);
    let mut free_docs = BTreeSet::new();
    let mut free_clusters = BTreeSet::new();
    let mut frequent = BTreeMap::new();
    let mut postings: BTreeMap<[u8; 9], RoaringBitmap> = BTreeMap::new();
    let mut rows = Vec::new();
    for log in logs {
        let mut seen = (None, None, None);
        for op in log {
            match op {
                LogOp::Counter(LogCounter::NextDoc(n)) => seen.0 = Some(n),
                LogOp::Counter(LogCounter::NextCluster(n)) => seen.1 = Some(n),
                LogOp::Counter(LogCounter::NextSeq(n)) => seen.2 = Some(n),
                LogOp::Counter(LogCounter::LiveDocs(n)) => live_docs = live_docs.saturating_add(n),
                LogOp::Counter(LogCounter::LiveClusters(n)) => {
                    live_clusters = live_clusters.saturating_add(n)
                }
                LogOp::FreeDoc { id, free: true } => {
                    free_docs.insert(id);
                }
                LogOp::FreeCluster { id, free: true } => {
                    free_clusters.insert(id);
                }
                LogOp::Frequent {
                    key,
                    reason: Some(r),
                } => {
                    frequent.insert(key, r);
                }
                LogOp::Posting { key, delta } => {
                    *postings.entry(key).or_default() |= delta.add;
                }
                other => rows.push(other),
            }
        }
        for (have, got, what) in [
            (&mut alloc.0, seen.0.map(u64::from), "page id allocator"),
            (&mut alloc.1, seen.1.map(u64::from), "cluster id allocator"),
            (&mut alloc.2, seen.2, "insertion sequence"),
        ] {
            match (*have, got) {
                (Some(a), Some(b)) if a != b => {
                    return Err(Error::InvalidArgument(format!(
                        "the partitions' seed logs disagree on the {what}: {a} and {b}"
                    )))
                }
                (None, Some(b)) => *have = Some(b),
                _ => {}
            }
        }
    }
    if let (Some(d), Some(c), Some(s)) = alloc {
        // Narrowed back: both came from u32 counters.
        next = Some((d as DocId, c as ClusterId, s));
    }
    let mut out = Vec::new();
    if let Some((d, c, s)) = next {
        out.push(LogOp::Counter(LogCounter::NextDoc(d)));
        out.push(LogOp::Counter(LogCounter::NextCluster(c)));
        out.push(LogOp::Counter(LogCounter::NextSeq(s)));
    }
    out.push(LogOp::Counter(LogCounter::LiveDocs(live_docs)));
    out.push(LogOp::Counter(LogCounter::LiveClusters(live_clusters)));
    out.extend(
        free_docs
            .into_iter()
            .map(|id| LogOp::FreeDoc { id, free: true }),
    );
    out.extend(
        free_clusters
            .into_iter()
            .map(|id| LogOp::FreeCluster { id, free: true }),
    );
    out.extend(frequent.into_iter().map(|(key, r)| LogOp::Frequent {
        key,
        reason: Some(r),
    }));
    out.extend(rows);
    out.extend(postings.into_iter().map(|(key, add)| LogOp::Posting {
        key,
        delta: Delta {
            add,
            remove: RoaringBitmap::new(),
        },
    }));
    Ok(out)
}

/// Partitions as databases: their role, and the bulk reads a distributed merge asks of them
/// (SCALEOUT §5 S0–S2).
impl super::Index {
    /// Reads the recorded partition at open.
    pub(crate) fn load_partition(&self) -> Result<Option<Partition>> {
        use crate::storage::{cf, meta};
        self.get_decoded(cf::META, meta::PARTITION, "the partition", |v| {
            Partition::decode(v).ok_or_else(|| {
                Error::corruption(cf::META, meta::PARTITION, "not a partition record")
            })
        })
    }

    /// This database's place in a distributed index, `None` for a whole index.
    pub fn partition(&self) -> Option<Partition> {
        *self.partition.read()
    }

    /// Makes this empty index partition `partition` of a distributed index: from now on it is
    /// written only by batch logs ([`super::Index::apply_log`]) holding its operations, and
    /// inserts and deletes are refused. Recording the same partition again does nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when another partition is recorded, or the index holds pages,
    /// clusters or an applied batch; [`Error::ReadOnly`], storage errors.
    pub fn set_partition(&self, partition: Partition) -> Result<()> {
        use crate::storage::{cf, meta};
        let counters = self.lock_writer()?;
        match *self.partition.read() {
            Some(p) if p == partition => return Ok(()),
            Some(p) => {
                return Err(Error::InvalidArgument(format!(
                    "{} is {} of a layout of {} key and {} doc partitions already",
                    self.path.display(),
                    p.role,
                    p.layout.key_parts,
                    p.layout.doc_parts
                )))
            }
            None => {}
        }
        if partition.layout.simhash_max_distance() != self.opts.simhash_max_distance {
            return Err(Error::InvalidArgument(format!(
                "the layout is cut for simhash distance {}, the index uses {}",
                partition.layout.simhash_max_distance(),
                self.opts.simhash_max_distance
            )));
        }
        if counters.next_doc > 0 || counters.next_cluster > 0 || self.applied_batch()?.is_some() {
            return Err(Error::InvalidArgument(format!(
                "{} holds pages: only an empty index can become a partition",
                self.path.display()
            )));
        }
        let mut b = rocksdb::WriteBatch::default();
        b.put_cf(self.cf(cf::META), meta::PARTITION, partition.encode());
        self.db
            .write(b)
            .map_err(|e| Error::storage("writing the partition", e))?;
        *self.partition.write() = Some(partition);
        drop(counters);
        self.sync_wal()
    }

    /// Refuses `what` (an insert or a delete) on a partition.
    pub(crate) fn refuse_if_partition(&self, what: &str) -> Result<()> {
        match *self.partition.read() {
            Some(p) => Err(Error::InvalidArgument(format!(
                "{what} on {}: a partition of a distributed index is written by batch logs only",
                p.role
            ))),
            None => Ok(()),
        }
    }

    /// The pages filed under each of `keys`, none for an over-frequent key (no decision reads
    /// it): what a key partition answers for the day's probes (SCALEOUT §5 S2).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn posting_ids(&self, keys: &[[u8; 9]]) -> Result<Vec<RoaringBitmap>> {
        self.registration.check_process()?;
        let frequent: Vec<bool> = {
            let f = self.frequent.read();
            keys.iter().map(|k| f.contains(k)).collect()
        };
        let read: Vec<[u8; 9]> = keys
            .iter()
            .zip(&frequent)
            .filter(|(_, &f)| !f)
            .map(|(k, _)| *k)
            .collect();
        let mut postings = self.postings(&read)?.into_iter();
        Ok(frequent
            .into_iter()
            .map(|f| {
                if f {
                    RoaringBitmap::new()
                } else {
                    postings.next().unwrap_or_default()
                }
            })
            .collect())
    }

    /// The pages filed under any of `keys`, over-frequent keys left out
    /// ([`Self::posting_ids`] united).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn posting_reach(&self, keys: &[[u8; 9]]) -> Result<RoaringBitmap> {
        Ok(self
            .posting_ids(keys)?
            .into_iter()
            .fold(RoaringBitmap::new(), |a, b| a | b))
    }

    /// Of each simhash, the pages within the simhash distance of it among the simhash entries
    /// this database holds (SCALEOUT §5 S2 "Simhash").
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn simhash_ids(&self, simhashes: &[u64]) -> Result<Vec<RoaringBitmap>> {
        self.registration.check_process()?;
        simhashes
            .iter()
            .map(|&h| {
                Ok(self
                    .simhash_near(h)?
                    .into_iter()
                    .map(|(id, _)| id)
                    .collect())
            })
            .collect()
    }

    /// The pages within the simhash distance of any of `simhashes` ([`Self::simhash_ids`]
    /// united).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn simhash_reach(&self, simhashes: &[u64]) -> Result<RoaringBitmap> {
        Ok(self
            .simhash_ids(simhashes)?
            .into_iter()
            .fold(RoaringBitmap::new(), |a, b| a | b))
    }

    /// The page id of each external key, `None` for a key this database does not hold.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn key_ids(&self, keys: &[&str]) -> Result<Vec<Option<DocId>>> {
        self.registration.check_process()?;
        keys.iter().map(|k| self.key_id(k)).collect()
    }

    /// The cluster of each page, `None` for a page this database does not hold.
    pub fn page_clusters(&self, ids: &[DocId]) -> Vec<Option<ClusterId>> {
        ids.iter().map(|&id| self.cluster_of(id)).collect()
    }

    /// The members of each cluster, `None` for a cluster this database does not hold.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn cluster_member_ids(&self, clusters: &[ClusterId]) -> Result<Vec<Option<RoaringBitmap>>> {
        self.registration.check_process()?;
        clusters
            .iter()
            .map(|&c| Ok(self.cluster(c)?.map(|r| r.members)))
            .collect()
    }

    /// Of each page, its simhash and every posting key it is filed under (content key first),
    /// `None` for a page this database does not hold: where a page placed again after a
    /// hand-over looks for candidates (SCALEOUT §5 S0).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn filed_pages(&self, ids: &[DocId]) -> Result<Vec<Option<FiledPage>>> {
        self.registration.check_process()?;
        ids.iter()
            .map(|&id| {
                let Some(rec) = self.doc(id)? else {
                    return Ok(None);
                };
                let keys = self.filed_keys(id, rec.content_hash)?.unwrap_or_default();
                Ok(Some((rec.simhash, keys)))
            })
            .collect()
    }
}

/// The pages and clusters (id and representative's page id) a doc partition holds
/// ([`crate::Index::partition_rows`]).
pub type PartitionRows = (Vec<PageRow>, Vec<(ClusterId, DocId)>);

/// A page a doc partition holds, as [`crate::Index::partition_rows`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRow {
    /// The page id.
    pub doc: DocId,
    /// Its external key.
    pub key: String,
    /// Its cluster.
    pub cluster: ClusterId,
    /// Its insertion number.
    pub seq: u64,
    /// The page it was judged a near duplicate of when placed, with that page's insertion
    /// number (the export names it while a page of that id and number is held), `None` for
    /// none.
    pub similar_to: Option<(DocId, u64)>,
}

impl super::Index {
    /// The pages (by id) and clusters (id and representative's page id) this database holds,
    /// at one snapshot: what a distributed export joins across doc partitions (a cluster's
    /// representative may be held by another partition).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn partition_rows(&self) -> Result<PartitionRows> {
        use crate::storage::codec::{ClusterRecord, DocRecord};
        use crate::storage::{cf, scan_options};
        self.registration.check_process()?;
        let snap = self.db.snapshot();
        let id_of = |name: &'static str, k: &[u8]| -> Result<u32> {
            <[u8; 4]>::try_from(k)
                .map(u32::from_be_bytes)
                .map_err(|_| Error::corruption(name, k, "key is not 4 bytes"))
        };
        let mut pages = Vec::new();
        let mut ro = scan_options();
        ro.set_snapshot(&snap);
        for item in self
            .db
            .iterator_cf_opt(self.cf(cf::DOCS), ro, rocksdb::IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading page records", e))?;
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            pages.push(PageRow {
                doc: id_of(cf::DOCS, &k)?,
                seq: rec.seq,
                similar_to: (rec.similar_to != crate::storage::codec::NO_DOC)
                    .then_some((rec.similar_to, rec.similar_seq)),
                key: rec.key,
                cluster: rec.cluster,
            });
        }
        let mut clusters = Vec::new();
        let mut ro = scan_options();
        ro.set_snapshot(&snap);
        for item in self
            .db
            .iterator_cf_opt(self.cf(cf::CLUSTERS), ro, rocksdb::IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading clusters", e))?;
            let rec = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            clusters.push((id_of(cf::CLUSTERS, &k)?, rec.representative));
        }
        Ok((pages, clusters))
    }
}

/// The allocators and live counts of a standing index when a batch starts: where the new ids
/// of the batch's work units begin ([`combine_unit_logs`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchBase {
    /// The page id allocator.
    pub next_doc: DocId,
    /// The cluster id allocator.
    pub next_cluster: ClusterId,
    /// The insertion sequence.
    pub next_seq: u64,
    /// Live pages.
    pub live_docs: u64,
    /// Live clusters.
    pub live_clusters: u64,
}

/// The ids a work unit gave out, or the offsets its ids move by.
#[derive(Clone, Copy, Debug, Default)]
struct Ids {
    docs: u32,
    clusters: u32,
    seq: u64,
}

/// One batch log from the batch logs of several work units (SCALEOUT §5 S4–S5), each decided
/// in its own scratch index seeded from `base` with [`crate::IndexOptions::reuse_ids`] off, so
/// that each numbered its new pages, clusters and insertion sequence from `base`'s allocators
/// up (each log as [`crate::index::StateDiff::into_log`] gives it with `base`'s live counts).
/// Unit `u`'s new ids are moved past those of units `0..u`: in each unit they keep their order,
/// and every new id stays above every standing one, so each tie-break by id decides as it did.
/// The result: the counters (the allocators past every unit's ids, the live counts changed by
/// every unit), then each unit's operations.
///
/// The units must be disjoint components (no page, cluster or key written by two of them, but
/// for postings of over-frequent keys, whose changes compose).
///
/// # Errors
/// [`Error::InvalidArgument`] when a unit's allocators are below `base`'s; [`Error::Full`] when
/// the ids overflow.
pub fn combine_unit_logs(base: BatchBase, logs: Vec<Vec<LogOp>>) -> Result<Vec<LogOp>> {
    combine(base, logs, None)
}

/// [`combine_unit_logs`] with each unit's new ids mapped by `maps[u]` instead of moved past the
/// units before it: the batch's ids numbered in the order one machine gives them out (from each
/// unit's [`crate::Index::take_allocations`] and the day's processing order). Each map must be
/// increasing (a unit's ids keep their order) and cover the ids the unit gave out.
///
/// # Errors
/// As [`combine_unit_logs`]; [`Error::InvalidArgument`] when the maps are not one per unit, do
/// not cover a unit's ids, or are not increasing.
pub fn combine_unit_logs_mapped(
    base: BatchBase,
    logs: Vec<Vec<LogOp>>,
    maps: &[IdMap],
) -> Result<Vec<LogOp>> {
    if maps.len() != logs.len() {
        return Err(Error::InvalidArgument(format!(
            "{} id maps for {} work units",
            maps.len(),
            logs.len()
        )));
    }
    for (u, m) in maps.iter().enumerate() {
        let increasing = m.docs.windows(2).all(|w| w[0] < w[1])
            && m.clusters.windows(2).all(|w| w[0] < w[1])
            && m.seqs.windows(2).all(|w| w[0] < w[1]);
        if !increasing {
            return Err(Error::InvalidArgument(format!(
                "the id map of work unit {u} is not increasing"
            )));
        }
    }
    combine(base, logs, Some(maps))
}

fn combine(base: BatchBase, logs: Vec<Vec<LogOp>>, maps: Option<&[IdMap]>) -> Result<Vec<LogOp>> {
    let mut offset = Ids::default();
    let (mut live_docs, mut live_clusters) =
        (i128::from(base.live_docs), i128::from(base.live_clusters));
    let mut ops = Vec::new();
    for (u, log) in logs.into_iter().enumerate() {
        let mut gave = Ids::default();
        let mut unit = Vec::with_capacity(log.len());
        for op in log {
            match op {
                LogOp::Counter(c) => {
                    let below = || {
                        Error::InvalidArgument(format!(
                            "work unit {u}'s allocators are below the batch's start"
                        ))
                    };
                    match c {
                        LogCounter::NextDoc(n) => {
                            gave.docs = n.checked_sub(base.next_doc).ok_or_else(below)?
                        }
                        LogCounter::NextCluster(n) => {
                            gave.clusters = n.checked_sub(base.next_cluster).ok_or_else(below)?
                        }
                        LogCounter::NextSeq(n) => {
                            gave.seq = n.checked_sub(base.next_seq).ok_or_else(below)?
                        }
                        LogCounter::LiveDocs(n) => {
                            live_docs += i128::from(n) - i128::from(base.live_docs)
                        }
                        LogCounter::LiveClusters(n) => {
                            live_clusters += i128::from(n) - i128::from(base.live_clusters)
                        }
                    }
                }
                other => unit.push(other),
            }
        }
        let how = match maps {
            Some(maps) => {
                let m = &maps[u];
                if (m.docs.len(), m.clusters.len()) != (gave.docs as usize, gave.clusters as usize)
                    || m.seqs.len() as u64 != gave.seq
                {
                    return Err(Error::InvalidArgument(format!(
                        "the id map of work unit {u} covers {} pages, {} clusters and {} \
                         insertion numbers; the unit gave out {}, {} and {}",
                        m.docs.len(),
                        m.clusters.len(),
                        m.seqs.len(),
                        gave.docs,
                        gave.clusters,
                        gave.seq
                    )));
                }
                Remap::Map(m)
            }
            None => Remap::Shift(offset),
        };
        for op in &mut unit {
            remap_op(op, &base, &how)?;
        }
        ops.extend(unit);
        offset.docs = offset.docs.checked_add(gave.docs).ok_or(Error::Full)?;
        offset.clusters = offset
            .clusters
            .checked_add(gave.clusters)
            .ok_or(Error::Full)?;
        offset.seq = offset.seq.checked_add(gave.seq).ok_or(Error::Full)?;
    }
    let count = |v: i128| v.clamp(0, i128::from(u64::MAX)) as u64;
    let mut out = vec![
        LogOp::Counter(LogCounter::NextDoc(
            base.next_doc.checked_add(offset.docs).ok_or(Error::Full)?,
        )),
        LogOp::Counter(LogCounter::NextCluster(
            base.next_cluster
                .checked_add(offset.clusters)
                .ok_or(Error::Full)?,
        )),
        LogOp::Counter(LogCounter::NextSeq(
            base.next_seq.checked_add(offset.seq).ok_or(Error::Full)?,
        )),
        LogOp::Counter(LogCounter::LiveDocs(count(live_docs))),
        LogOp::Counter(LogCounter::LiveClusters(count(live_clusters))),
    ];
    out.extend(ops);
    Ok(out)
}

/// How a unit's new ids move: by an offset, or through a map.
enum Remap<'a> {
    Shift(Ids),
    Map(&'a IdMap),
}

/// Moves the new ids of one operation (those at or above `base`'s allocators) as `how` says.
fn remap_op(op: &mut LogOp, base: &BatchBase, how: &Remap<'_>) -> Result<()> {
    use crate::storage::codec::NO_DOC;
    fn mapped<T: Copy>(table: &[T], at: u64, what: &str) -> Result<T> {
        usize::try_from(at)
            .ok()
            .and_then(|i| table.get(i).copied())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "a work unit's new {what} {at} is not in its id map"
                ))
            })
    }
    let doc = |id: DocId| -> Result<DocId> {
        if id == NO_DOC || id < base.next_doc {
            return Ok(id);
        }
        match how {
            Remap::Shift(by) => id.checked_add(by.docs).ok_or(Error::Full),
            Remap::Map(m) => mapped(&m.docs, u64::from(id - base.next_doc), "page id"),
        }
    };
    let cluster = |id: ClusterId| -> Result<ClusterId> {
        if id < base.next_cluster {
            return Ok(id);
        }
        match how {
            Remap::Shift(by) => id.checked_add(by.clusters).ok_or(Error::Full),
            Remap::Map(m) => mapped(&m.clusters, u64::from(id - base.next_cluster), "cluster id"),
        }
    };
    let seq = |s: u64| -> Result<u64> {
        if s < base.next_seq {
            return Ok(s);
        }
        match how {
            Remap::Shift(by) => s.checked_add(by.seq).ok_or(Error::Full),
            Remap::Map(m) => mapped(&m.seqs, s - base.next_seq, "insertion number"),
        }
    };
    let docs = |b: &RoaringBitmap| -> Result<RoaringBitmap> {
        if b.max().is_none_or(|m| m < base.next_doc) {
            return Ok(b.clone());
        }
        b.iter().map(doc).collect()
    };
    match op {
        LogOp::Posting { delta, .. } => {
            delta.add = docs(&delta.add)?;
            delta.remove = docs(&delta.remove)?;
        }
        LogOp::Simhash { doc: d, .. } => *d = doc(*d)?,
        LogOp::Key { doc: d, .. } => {
            if let Some(d) = d {
                *d = doc(*d)?;
            }
        }
        LogOp::Doc { id, record } => {
            *id = doc(*id)?;
            if let Some(r) = record {
                r.cluster = cluster(r.cluster)?;
                r.seq = seq(r.seq)?;
                if r.similar_to != NO_DOC {
                    r.similar_to = doc(r.similar_to)?;
                    r.similar_seq = seq(r.similar_seq)?;
                }
            }
        }
        LogOp::Text { id, .. } | LogOp::PageBlocks { id, .. } => *id = doc(*id)?,
        LogOp::FreeDoc { id, .. } => *id = doc(*id)?,
        LogOp::Cluster { id, record } => {
            *id = cluster(*id)?;
            if let Some(r) = record {
                r.representative = doc(r.representative)?;
                r.members = docs(&r.members)?;
            }
        }
        LogOp::FreeCluster { id, .. } => *id = cluster(*id)?,
        LogOp::Frequent { .. }
        | LogOp::HostPages { .. }
        | LogOp::BlockPages { .. }
        | LogOp::Counter(_) => {}
    }
    Ok(())
}

/// An id a committed write gave out ([`crate::Index::take_allocations`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The key of the page being inserted when it was given out; `None` during a delete.
    pub key: Option<std::sync::Arc<str>>,
    /// The id.
    pub id: AllocatedId,
}

/// What an [`Allocation`] gave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatedId {
    /// A page id with its insertion number.
    Page {
        /// The page id.
        doc: DocId,
        /// The insertion number.
        seq: u64,
    },
    /// A cluster id.
    Cluster(ClusterId),
}

impl super::Index {
    /// Starts (`true`) or stops recording the ids committed writes give out, each with the key
    /// of the page being inserted then (SCALEOUT §5 S4–S5: a work unit reports which event gave
    /// out each of its new ids, so that the batch's ids can be numbered in the single node's
    /// order). Stopping drops what was recorded.
    pub fn record_allocations(&self, on: bool) {
        let mut a = self.allocations.lock();
        *a = on.then(Vec::new);
        self.recording
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// The ids given out since the last call (or since recording started), in the order they
    /// were given out.
    pub fn take_allocations(&self) -> Vec<Allocation> {
        self.allocations
            .lock()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    pub(crate) fn recording_allocations(&self) -> bool {
        self.recording.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// Where each of a work unit's new ids goes in the batch ([`combine_unit_logs_mapped`]): the
/// unit gave out `base + i` as its `i`-th new id of each kind; `docs[i]`, `clusters[i]` and
/// `seqs[i]` are the ids they become.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdMap {
    /// Page ids.
    pub docs: Vec<DocId>,
    /// Cluster ids.
    pub clusters: Vec<ClusterId>,
    /// Insertion numbers.
    pub seqs: Vec<u64>,
}
