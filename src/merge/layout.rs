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
//! Ids are global: one allocated sequence, in the order one machine gives them out (so ties
//! broken by id fall as on one node), routed `id mod J`. The merge's logs carry them as `u64`s
//! (log version 2). A partition of format 6 (an [`crate::Index`]) stores them as `u32`s, so a
//! distributed index of such partitions holds at most 2³² − 1 page ids in its life
//! ([`super::MAX_PARTITION_ALLOCATOR`]); a format 7 partition ([`super::WidePartition`]) stores
//! `u64`s, its postings and members in `RoaringTreemap`s (SCALEOUT §4).
//!
//! A partition is written only by batch logs ([`crate::Index::apply_log`]), which refuse an
//! operation routed elsewhere; inserts and deletes are refused. The union of the partitions'
//! rows is the single node's database, so the union of their state logs
//! ([`crate::Index::state_log`]) describes the whole index.

use std::collections::BTreeSet;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::log::LogOp;
use crate::index::Index;
use crate::storage::codec::DocId;
use crate::storage::width::IdWidth;
use crate::storage::{SimhashTables, TableScheme};
use crate::{Error, Result};

/// How a distributed index is cut into key and doc partitions (see the [module](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub(crate) key_parts: u32,
    pub(crate) doc_parts: u32,
    pub(crate) tables: SimhashTables,
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

/// A batch log cut by partition ([`Layout::route`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoutedLog<I: IdWidth = DocId> {
    /// The operations of each key partition, in log order.
    pub key: Vec<Vec<LogOp<I>>>,
    /// The operations of each doc partition, in log order.
    pub doc: Vec<Vec<LogOp<I>>>,
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
        self.tables.max_distance
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

    /// The doc partition of a page id (its record and text): `id mod J`, the same for an id of
    /// either width.
    pub fn doc_part<I: IdWidth>(&self, id: I) -> u32 {
        (id.to_u64() % u64::from(self.doc_parts)) as u32
    }

    /// The doc partition of a cluster id (its record): `id mod J`.
    pub fn cluster_part<I: IdWidth>(&self, id: I) -> u32 {
        (id.to_u64() % u64::from(self.doc_parts)) as u32
    }

    /// Where an operation of a batch log goes.
    pub fn target<I: IdWidth>(&self, op: &LogOp<I>) -> Target {
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
    pub fn route<I: IdWidth>(&self, ops: &[LogOp<I>]) -> RoutedLog<I> {
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
    pub fn holds<I: IdWidth>(&self, role: Role, op: &LogOp<I>) -> bool {
        match self.target(op) {
            Target::All => true,
            Target::One(r) => r == role,
        }
    }
}

impl Partition {
    /// Size of the encoded form of a layout of rotated simhash tables ([`Partition::encode`]);
    /// one byte more for the tables of block pairs.
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
    pub fn holds<I: IdWidth>(&self, op: &LogOp<I>) -> bool {
        self.layout.holds(self.role, op)
    }

    /// The `meta` value recording the partition: the role byte (0 key, 1 doc), the partition
    /// number, the numbers of key and doc partitions and the simhash distance, each a big-endian
    /// `u32`, then the byte 1 when the simhash tables are those of block pairs (format 4)
    /// (FORMAT.md "Partitions").
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
        if self.layout.tables.scheme == TableScheme::Pairs {
            out.push(1);
        }
        out
    }

    /// Reads [`Partition::encode`]'s form; `None` when it is not one.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Partition> {
        let pairs = match bytes.get(Self::ENCODED_LEN..) {
            Some([]) => false,
            Some([1]) => true,
            _ => return None,
        };
        if bytes[0] > 1 {
            return None;
        }
        let word = |i: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&bytes[1 + 4 * i..5 + 4 * i]);
            u32::from_be_bytes(w)
        };
        let mut layout = Layout::new(word(1), word(2), word(3)).ok()?;
        // A layout recorded without the byte was cut for format 3's tables.
        let format = if pairs {
            crate::storage::FORMAT_VERSION
        } else {
            crate::storage::FORMAT_VERSION_3
        };
        layout.tables = SimhashTables::for_format(word(3), format).ok()?;
        if pairs && layout.tables.scheme != TableScheme::Pairs {
            return None;
        }
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

/// Partitions as databases: their role in a layout.
impl Index {
    /// This database's place in a distributed index, `None` for a whole index.
    ///
    /// # Errors
    /// [`Error::Corruption`] when the recorded partition does not decode.
    pub fn partition(&self) -> Result<Option<Partition>> {
        use crate::storage::{cf, meta};
        self.partition
            .read()
            .as_deref()
            .map(|v| {
                Partition::decode(v).ok_or_else(|| {
                    Error::corruption(cf::META, meta::PARTITION, "not a partition record")
                })
            })
            .transpose()
    }

    /// Makes this empty index partition `partition` of a distributed index: from now on it is
    /// written only by batch logs ([`Index::apply_log`]) holding its operations, and
    /// inserts and deletes are refused. Recording the same partition again does nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when another partition is recorded, or the index holds pages,
    /// clusters or an applied batch; [`Error::ReadOnly`], storage errors.
    pub fn set_partition(&self, partition: Partition) -> Result<()> {
        use crate::storage::{cf, meta};
        let counters = self.lock_writer()?;
        match self.partition()? {
            Some(p) if p == partition => return Ok(()),
            Some(p)
                if p.role == partition.role
                    && (p.layout.key_parts, p.layout.doc_parts)
                        == (partition.layout.key_parts, partition.layout.doc_parts) =>
            {
                return Err(Error::InvalidArgument(format!(
                    "{} is {} of a layout whose simhash tables are those of format 3 ({} \
                     tables); this build cuts layouts for format {} ({} tables): merge into it \
                     with the build that made it, or make the partitions anew",
                    self.path.display(),
                    p.role,
                    p.layout.tables.tables,
                    crate::storage::FORMAT_VERSION,
                    partition.layout.tables.tables
                )))
            }
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
        if partition.layout.tables != self.tables {
            return Err(Error::InvalidArgument(format!(
                "{} keeps the simhash tables of an older format ({} tables, the layout {}): \
                 compact it, or make the partitions anew",
                self.path.display(),
                self.tables.tables,
                partition.layout.tables.tables
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
        *self.partition.write() = Some(partition.encode());
        drop(counters);
        self.sync_wal()
    }
}
