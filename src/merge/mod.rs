//! The distributed merge protocol (SCALEOUT §4–§11): what a daily merge over a partitioned index
//! reads from and writes to each database, built on the single index ([`crate::Index`]) and never
//! imported by it.
//!
//! - [`log`](self::log): the batch-log vocabulary ([`LogOp`]), one idempotent operation per key;
//! - `logfile`: the bytes of a batch log ([`encode_log`], [`decode_log`]); `logio`: the same in
//!   files, one operation at a time;
//! - `apply`: a partition applies its part of a batch's log once in effect
//!   ([`crate::Index::apply_log`]);
//! - `mapping`: page and cluster ids passed through a mapping, an operation at a time (the
//!   scratch renumbering, the batch's numbering of new ids, a log's change of id width);
//! - `checks`: what a database checks of a log before it applies any of it (either id width);
//! - `stream`: a partition's log applied from its bytes a chunk at a time;
//! - `walk`: a scratch index's state log and diff, read one operation at a time;
//! - `seedsort`: a seed's postings sorted in bounded memory (runs on disk, merged by key);
//! - `state`: state and seed logs, the diff a scratch index reads back, the reach of a day's
//!   decisions;
//! - `layout`: key and doc partitions and where each operation goes ([`Layout`]);
//! - `combine`: the partitions' seeds into one, the work units' logs into the batch's;
//! - `reach`: the bulk reads a merge asks of its partitions;
//! - `store`: what the check and the export read of a partition's database, in either id width;
//! - `check`: a partition's own check and the digests the driver reconciles across partitions.
//! - `export`: a doc partition's part of the export, the references resolved between
//!   partitions in messages, and the parts merged by id ([`merge_export_parts`]).
//! - `components`: S3's connected components over bulk edges, with partial forests
//!   ([`Components`]), and the day's close simhashes ([`close_simhash_pairs`]).
//! - `wide`: the format 7 partition database, global `u64` ids in the wide codecs
//!   ([`WidePartition`]).

mod apply;
mod check;
mod checks;
mod combine;
mod components;
mod export;
mod layout;
pub mod log;
mod logfile;
mod logio;
mod mapping;
mod reach;
mod scratch;
mod seedsort;
mod stars;
mod state;
mod store;
mod stream;
mod walk;
mod wide;

pub use crate::index::{AllocatedId, Allocation};
/// The width of page and cluster ids (`u32`, or `u64` in a distributed index's partitions) that
/// the generic logs, rows and partitions take.
pub use crate::storage::width::IdWidth;
pub use check::{
    Digest, PartitionCheck, DIGEST_BUCKETS, KIND_KEY, KIND_MEMBER, KIND_NAMES, KIND_POSTING,
    KIND_SIMHASH,
};
pub use combine::{
    batch_counters, combine_seed_logs, combine_unit_logs, combine_unit_logs_mapped, remap_unit_log,
    route_unit_log, route_unit_log_file, BatchBase, IdMap, RoutedBytes, RoutedFile, UnitTotals,
    MAX_PARTITION_ALLOCATOR, MAX_WIDE_ALLOCATOR,
};
pub use components::{close_simhash_pairs, Components};
pub use export::{
    decode_cluster_row, decode_page_record, decode_page_row, merge_export_parts, merge_export_tsv,
    ExportKind, ANY_SEQ,
};
pub use layout::{Layout, Partition, Role, RoutedLog, Target, MAX_PARTS};
pub use log::{ApplyOutcome, LogCounter, LogOp, APPLY_CHUNK_BYTES};
pub use logfile::{decode_log, encode_log, LogReader, LogWriter};
pub use logio::{join_log_files, read_log_file, scan_log_file, LogFileWriter};
pub use reach::{
    FiledPage, PageRow, PartitionRows, ProbeForest, ProbeJoin, NODE_ID_BITS, PROBE_CHUNK,
};
pub use scratch::ScratchIds;
pub use stars::{KeyStars, StarEdges};
pub use state::{state_diff, Reach, StateDiff};
pub use wide::{WideCounters, WidePartition};
