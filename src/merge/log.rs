//! The vocabulary of batch logs (SCALEOUT §5 S5, §9): one storage operation per key of one
//! column family, each idempotent, so a log applied again after a crash takes effect once.

use crate::index::{FREQUENT_HOSTS, FREQUENT_PAGES};
use crate::storage::codec::{ClusterRecord, DocId, DocRecord, PageBlocks, TextValue};
use crate::storage::merge::PostingDelta;
use crate::storage::width::{IdSet, IdWidth};

/// The size of the chunks [`Index::apply_log`] writes, in bytes (estimated from the operations'
/// encoded sizes): each chunk is one atomic `WriteBatch`.
pub const APPLY_CHUNK_BYTES: usize = 16 << 20;

/// One storage operation of a batch log (SCALEOUT §5 S5, §9). Each names one key of one column
/// family and sets it whatever it held: applying an operation twice is applying it once, which
/// is what makes a log safe to apply again after a crash.
///
/// Its page and cluster ids are of width `I` (SCALEOUT §4): `u32` for what one index holds (a
/// single-node index, a work unit's scratch index, a partition of format 6), `u64` for the global
/// ids of a distributed index, which one `u32` space cannot hold for long (about four days at 10⁹
/// pages a day). [`LogOp::to_width`] converts between the two; the log files carry their width
/// (`logfile`: version 1 for `u32`, 2 for `u64`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LogOp<I: IdWidth = DocId> {
    /// Changes the posting of a 9-byte posting key ([`crate::storage::posting_key`]): the ids of
    /// `delta.remove` out, then those of `delta.add` in.
    Posting {
        /// The posting key.
        key: [u8; 9],
        /// The ids to remove and to add.
        delta: PostingDelta<I>,
    },
    /// Writes (`present`) or deletes the entry of a page in one simhash table.
    Simhash {
        /// The table, below the index's number of tables ([`crate::storage::SimhashTables`]).
        table: u8,
        /// The page's simhash (unrotated).
        simhash: u64,
        /// The page.
        doc: I,
        /// Written when true, deleted when false.
        present: bool,
    },
    /// Marks a posting key over-frequent with its reason ([`LogOp::FREQUENT_PAGES`] or
    /// [`LogOp::FREQUENT_HOSTS`]), or unmarks it (`None`).
    Frequent {
        /// The posting key.
        key: [u8; 9],
        /// The reason byte, `None` to unmark.
        reason: Option<u8>,
    },
    /// Maps an external key to a page id, or deletes the key (`None`).
    Key {
        /// The external key (non-empty, at most 64 KiB).
        key: String,
        /// The page id, `None` to delete.
        doc: Option<I>,
    },
    /// Writes a page's record whole, or deletes it (`None`).
    Doc {
        /// The page id.
        id: I,
        /// The record, `None` to delete.
        record: Option<DocRecord<I>>,
    },
    /// Writes a page's value of the `texts` column family whole, or deletes it (`None`): its
    /// normalized text when the index stores texts, its posting keys otherwise.
    Text {
        /// The page id.
        id: I,
        /// The value, `None` to delete.
        value: Option<TextValue>,
    },
    /// Writes a cluster's record whole, or deletes it (`None`).
    Cluster {
        /// The cluster id.
        id: I,
        /// The record, `None` to delete.
        record: Option<ClusterRecord<I>>,
    },
    /// Writes a page's site-chrome record whole ([`crate::ChromeConfig`]), or deletes it.
    PageBlocks {
        /// The page id.
        id: I,
        /// The record, `None` to delete.
        blocks: Option<PageBlocks>,
    },
    /// Sets the number of a host's counted pages (site chrome); 0 deletes the count.
    HostPages {
        /// The host, at most 255 bytes.
        host: String,
        /// The absolute count.
        pages: u32,
    },
    /// Sets the number of a host's counted pages that carry a block (site chrome); 0 deletes
    /// the count.
    BlockPages {
        /// The host, at most 255 bytes.
        host: String,
        /// The block's digest ([`crate::text::block_digest`]).
        block: u64,
        /// The absolute count.
        pages: u32,
    },
    /// Marks a page id free (`true`: given to a later page) or given out (`false`).
    FreeDoc {
        /// The page id.
        id: I,
        /// Free when true.
        free: bool,
    },
    /// Marks a cluster id free (`true`) or given out (`false`).
    FreeCluster {
        /// The cluster id.
        id: I,
        /// Free when true.
        free: bool,
    },
    /// Sets a counter to an absolute value.
    Counter(LogCounter<I>),
}

/// A counter of the `meta` column family, with the absolute value a [`LogOp::Counter`] sets; the
/// allocators are ids of width `I`, as [`LogOp`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogCounter<I: IdWidth = DocId> {
    /// `next_doc_id`: the page id allocator.
    NextDoc(I),
    /// `next_cluster_id`: the cluster id allocator.
    NextCluster(I),
    /// `live_docs`: the number of live pages.
    LiveDocs(u64),
    /// `live_clusters`: the number of live clusters.
    LiveClusters(u64),
    /// `next_seq`: the next page insertion number.
    NextSeq(u64),
}

/// What [`Index::apply_log`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// The log was written in `chunks` atomic writes, the last one recording the batch.
    Applied {
        /// The number of `WriteBatch`es written.
        chunks: usize,
    },
    /// The index had recorded this batch already: nothing was written.
    AlreadyApplied,
}

impl LogOp {
    /// Reason byte of an over-frequent fingerprint ([`LogOp::Frequent`]): carried by too many
    /// pages.
    pub const FREQUENT_PAGES: u8 = FREQUENT_PAGES;
    /// Reason byte of an over-frequent fingerprint ([`LogOp::Frequent`]): many pages on few
    /// hosts.
    pub const FREQUENT_HOSTS: u8 = FREQUENT_HOSTS;
}

impl<I: IdWidth> LogOp<I> {
    /// About how many bytes the operation adds to a `WriteBatch` (for chunking only).
    pub(crate) fn weight(&self) -> usize {
        16 + match self {
            LogOp::Posting { delta, .. } => {
                9 + delta.add.serialized_size() + delta.remove.serialized_size()
            }
            LogOp::Simhash { .. } => 13,
            LogOp::Frequent { .. } => 10,
            LogOp::Key { key, .. } => key.len() + 4,
            LogOp::Doc { record, .. } => {
                4 + record
                    .as_ref()
                    .map_or(0, |r| 96 + r.key.len() + r.host.len() + 4 * r.codes.len())
            }
            LogOp::Text { value, .. } => {
                4 + match value {
                    Some(TextValue::Text(t)) => t.len(),
                    Some(TextValue::PostingKeys(k)) => 9 * k.len(),
                    None => 0,
                }
            }
            LogOp::Cluster { record, .. } => {
                4 + record
                    .as_ref()
                    .map_or(0, |r| 8 + r.members.serialized_size())
            }
            LogOp::PageBlocks { blocks, .. } => {
                5 + blocks.as_ref().map_or(0, |b| {
                    b.host.len() + 8 * (b.counted.len() + b.dropped.len()) + 16
                })
            }
            LogOp::HostPages { host, .. } => host.len() + 7,
            LogOp::BlockPages { host, .. } => host.len() + 15,
            LogOp::FreeDoc { .. } | LogOp::FreeCluster { .. } => 17,
            LogOp::Counter(_) => 24,
        }
    }
}
