//! The format 7 partition database (SCALEOUT §4 "Partitioning", issue #34 item 5): one key or
//! doc partition of a distributed index whose page and cluster ids are global `u64`s.
//!
//! A distributed index gives out its ids in one sequence, in the order one machine would (so
//! that ties broken by id fall as on one node); a page's doc partition is `id mod J`. One `u32`
//! space runs out in about four days at 10⁹ pages a day, so these partitions store the wide
//! codecs of [`crate::storage::width`]: `u64` ids in keys and values, page records `0xD4`,
//! cluster records `0xC2`, postings of `u64` ids (`0x54` lists, `0x56` roaring treemaps) changed
//! by the wide merge operands (`a`, `r`, `d`), 17-byte simhash keys (FORMAT.md "Format 7:
//! partitions with 64-bit ids").
//!
//! A partition never decides a page: the work units decide in scratch [`crate::Index`]es and
//! the partitions apply the batch's log. So a [`WidePartition`] is storage operations only, with
//! nothing in memory beyond its database: created or opened ([`WidePartition::create`],
//! [`WidePartition::open`]), a batch log applied once in effect ([`WidePartition::apply_log`]),
//! its state or a seed read back as a log ([`WidePartition::state_log`],
//! [`WidePartition::seed_log`]), the look-ups of S0–S2 ([`WidePartition::posting_ids`],
//! [`WidePartition::simhash_ids`], [`WidePartition::key_ids`], [`WidePartition::page_clusters`],
//! [`WidePartition::cluster_member_ids`], [`WidePartition::filed_pages`]), and the whole-index
//! operations of SCALEOUT §9 — the distributed check ([`WidePartition::partition_check`]) and
//! export ([`WidePartition::export_asks`] and the steps after it) — whose walks are a format 6
//! partition's, over `merge/store.rs`'s `PartitionDb`, and whose digests, messages and parts
//! are the same bytes in both widths. The database has the column families, options, block
//! cache and merge operator of an index ([`crate::storage::open_db`]); its `meta` holds format
//! version 7, the stored configuration, the partition record and 8-byte counters.
//! [`crate::Index`] refuses it ([`Error::IncompatibleFormat`] naming format 7), and a
//! `WidePartition` refuses every other format.

mod apply;
mod reads;
mod state;
mod store;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rocksdb::{ColumnFamily, IteratorMode, WriteBatch, WriteOptions, DB};

use super::layout::Partition;
use crate::index::open::{is_rocksdb_file, StoredConfig};
use crate::index::registry::Registration;
use crate::options::IndexOptions;
use crate::storage::{self, cf, meta, SimhashTables, FORMAT_VERSION_WIDE};
use crate::{Error, Result};

/// One partition of a distributed index with global `u64` page and cluster ids (SCALEOUT §4,
/// issue #34 item 5): a database of on-disk format 7 (FORMAT.md "Format 7: partitions with 64-bit
/// ids"), written only by batch logs of `u64` ids. `Send + Sync`.
///
/// Ids are one allocated sequence, in the order one machine gives them out; a page's doc
/// partition is `id mod J`. A partition never decides a page (the work units decide in scratch
/// [`crate::Index`]es), so it keeps nothing in memory and offers storage operations only:
/// [`WidePartition::create`] / [`WidePartition::open`], [`WidePartition::apply_log`] (once in
/// effect, as [`crate::Index::apply_log`]), [`WidePartition::state_log`] and
/// [`WidePartition::seed_log`], the look-ups of S0–S3, the distributed check
/// ([`WidePartition::partition_check`]) and export ([`WidePartition::export_asks`]).
/// [`crate::Index`] refuses its database
/// ([`Error::IncompatibleFormat`] naming format 7), and it refuses every other format.
pub struct WidePartition {
    /// The database. Shared only so that [`Drop`] can leak it in a process that did not open
    /// it (as [`crate::Index`]'s).
    db: Arc<DB>,
    /// The block cache its tables read through.
    cache: rocksdb::Cache,
    path: PathBuf,
    /// The stored configuration (signature, simhash distance, texts or posting keys) with
    /// defaults for the rest.
    opts: IndexOptions,
    tables: SimhashTables,
    partition: Partition,
    /// Held by a write: one batch log at a time.
    writer: Mutex<()>,
    /// A write failed: the partition refuses writes until reopened.
    poisoned: AtomicBool,
    /// Opened with [`WidePartition::open_read_only`]: every write is refused.
    read_only: bool,
    /// Declared after `db`: released after RocksDB has closed.
    registration: Registration,
}

/// The counters every partition of a distributed index holds in its `meta` (8-byte big-endian
/// values; [`WidePartition::counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WideCounters {
    /// The next page id the index gives out (past every id given).
    pub next_doc: u64,
    /// The next cluster id.
    pub next_cluster: u64,
    /// Pages the whole index holds.
    pub live_docs: u64,
    /// Clusters the whole index holds.
    pub live_clusters: u64,
    /// The next insertion number.
    pub next_seq: u64,
}

impl WidePartition {
    /// Creates partition `partition` of a distributed index in the new or empty directory
    /// `path`, with the stored configuration of `opts` (signature parameters, simhash distance,
    /// representative policy, whether texts are stored) and its memory budget: format version 7,
    /// the configuration, the partition record and zero counters are written in one synced
    /// write, so a crash leaves either no partition or a whole empty one.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for unusable options, a layout cut for another simhash
    /// distance, or a directory that holds a database or other files already;
    /// [`Error::AlreadyOpen`], [`Error::Io`], storage errors.
    pub fn create(
        path: impl AsRef<Path>,
        opts: &IndexOptions,
        partition: Partition,
    ) -> Result<WidePartition> {
        let path = path.as_ref().to_path_buf();
        opts.signature.validate()?;
        let tables = SimhashTables::for_format(opts.simhash_max_distance, FORMAT_VERSION_WIDE)?;
        if partition.layout.tables != tables {
            return Err(Error::InvalidArgument(format!(
                "the layout is cut for simhash distance {} ({} tables), the options ask for \
                 distance {} ({} tables)",
                partition.layout.simhash_max_distance(),
                partition.layout.tables.tables,
                opts.simhash_max_distance,
                tables.tables
            )));
        }
        if path.exists() && !path.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                path.display()
            )));
        }
        // A creation cut short (RocksDB's files without a format version) is taken over; any
        // other file, or a database, is not ours to overwrite.
        let foreign = std::fs::read_dir(&path).is_ok_and(|d| {
            d.filter_map(|e| e.ok())
                .any(|e| !is_rocksdb_file(&e.file_name().to_string_lossy()))
        });
        if foreign {
            return Err(Error::InvalidArgument(format!(
                "{} is not empty and holds no database",
                path.display()
            )));
        }
        if path.join("CURRENT").exists() {
            storage::process::claim()?;
            if storage::read_meta(&path)?.0.is_some() {
                return Err(Error::InvalidArgument(format!(
                    "{} holds a database already: open it (WidePartition::open)",
                    path.display()
                )));
            }
        }
        std::fs::create_dir_all(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        storage::process::claim()?;
        let registration = Registration::acquire(&path)?;
        let (db, cache) = storage::open_db(&path, true, tables, &opts.budget())?;
        let config = serde_json::to_vec(&StoredConfig::of(opts))
            .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))?;
        let read_only = false;
        let part = WidePartition {
            db: Arc::new(db),
            cache,
            path,
            opts: StoredConfig::of(opts).existing(),
            tables,
            partition,
            writer: Mutex::new(()),
            poisoned: AtomicBool::new(false),
            read_only,
            registration,
        };
        if part
            .db
            .iterator_cf(part.cf(cf::DOCS), IteratorMode::Start)
            .next()
            .is_some()
        {
            return Err(Error::corruption(
                cf::META,
                meta::FORMAT,
                "pages present but no format version",
            ));
        }
        let m = part.cf(cf::META);
        let mut b = WriteBatch::default();
        b.put_cf(m, meta::CONFIG, config);
        b.put_cf(m, meta::PARTITION, partition.encode());
        for key in [
            meta::NEXT_DOC,
            meta::NEXT_CLUSTER,
            meta::LIVE_DOCS,
            meta::LIVE_CLUSTERS,
            meta::NEXT_SEQ,
        ] {
            b.put_cf(m, key, 0u64.to_be_bytes());
        }
        // The format version with the rest: a database without it is no partition yet.
        b.put_cf(m, meta::FORMAT, FORMAT_VERSION_WIDE.to_be_bytes());
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        part.db
            .write_opt(b, &wo)
            .map_err(|e| Error::storage("creating the partition", e))?;
        log::info!(
            "neardup: created {} as {} of a distributed index (format {FORMAT_VERSION_WIDE})",
            part.path.display(),
            partition.role
        );
        Ok(part)
    }

    /// Opens the format 7 partition in `path` with its stored configuration and the default
    /// memory budget ([`WidePartition::open_with`]).
    ///
    /// # Errors
    /// As [`WidePartition::open_with`].
    pub fn open(path: impl AsRef<Path>) -> Result<WidePartition> {
        Self::open_with(path, &IndexOptions::default())
    }

    /// Opens the format 7 partition in `path` with its stored configuration; of `budget`, only
    /// the memory budget (block cache, write buffers, open files) is used. Nothing is written
    /// before the format is checked: a database of another format is left as it was.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when there is no database at `path`, or one whose creation
    /// was cut short (no format version: create it again);
    /// [`Error::IncompatibleFormat`] for a format other than 7 (a single-node index, or a
    /// partition of `u32` ids: [`crate::Index`]'s); [`Error::Corruption`] for a configuration
    /// or partition record that does not decode; [`Error::AlreadyOpen`], storage errors.
    pub fn open_with(path: impl AsRef<Path>, budget: &IndexOptions) -> Result<WidePartition> {
        Self::open_inner(path.as_ref(), budget, false)
    }

    /// Opens the format 7 partition in `path` read-only, with its stored configuration and the
    /// default memory budget: for a reader beside the writer (in this process or another) or a
    /// checkpoint on read-only storage. Nothing in `path` is written; [`WidePartition::apply_log`]
    /// and the other writes fail with [`Error::ReadOnly`]. The handle sees the partition as it
    /// was when opened (RocksDB's read-only mode).
    ///
    /// # Errors
    /// As [`WidePartition::open_with`] ([`Error::AlreadyOpen`] aside: a reader is not
    /// registered as the directory's writer).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<WidePartition> {
        Self::open_inner(path.as_ref(), &IndexOptions::default(), true)
    }

    fn open_inner(path: &Path, budget: &IndexOptions, read_only: bool) -> Result<WidePartition> {
        let path = path.to_path_buf();
        if !path.join("CURRENT").exists() {
            return Err(Error::InvalidArgument(format!(
                "no partition at {}",
                path.display()
            )));
        }
        storage::process::claim()?;
        let registration = if read_only {
            Registration::read_only()
        } else {
            Registration::acquire(&path)?
        };
        let (format, config) = storage::read_meta(&path)?;
        let Some(format) = format else {
            return Err(Error::InvalidArgument(format!(
                "{} has no format version: a partition whose creation was cut short (create it \
                 again), or no partition",
                path.display()
            )));
        };
        let found = storage::decode_u32(cf::META, meta::FORMAT, &format)?;
        if found != FORMAT_VERSION_WIDE {
            return Err(Error::IncompatibleFormat {
                found,
                supported: FORMAT_VERSION_WIDE,
            });
        }
        let config = config
            .ok_or_else(|| Error::corruption(cf::META, meta::CONFIG, "missing configuration"))?;
        let stored: StoredConfig = serde_json::from_slice(&config).map_err(|e| {
            Error::corruption(
                cf::META,
                meta::CONFIG,
                format!("bad configuration JSON: {e}"),
            )
        })?;
        let opts = IndexOptions {
            block_cache_bytes: budget.block_cache_bytes,
            write_buffer_bytes: budget.write_buffer_bytes,
            max_open_files: budget.max_open_files,
            sync_writes: budget.sync_writes,
            ..stored.existing()
        };
        let tables = SimhashTables::for_format(opts.simhash_max_distance, FORMAT_VERSION_WIDE)?;
        let (db, cache) = if read_only {
            storage::open_db_read_only(&path, tables, &opts.budget())?
        } else {
            storage::open_db(&path, false, tables, &opts.budget())?
        };
        let record = db
            .get_cf(
                db.cf_handle(cf::META)
                    .ok_or_else(|| Error::corruption(cf::META, b"", "missing column family"))?,
                meta::PARTITION,
            )
            .map_err(|e| Error::storage("reading the partition", e))?;
        let partition = record
            .as_deref()
            .and_then(Partition::decode)
            .filter(|p| p.layout.tables == tables)
            .ok_or_else(|| {
                Error::corruption(cf::META, meta::PARTITION, "not a partition record")
            })?;
        Ok(WidePartition {
            db: Arc::new(db),
            cache,
            path,
            opts,
            tables,
            partition,
            writer: Mutex::new(()),
            poisoned: AtomicBool::new(false),
            read_only,
            registration,
        })
    }

    /// The partition's place in the distributed index.
    pub fn partition(&self) -> Partition {
        self.partition
    }

    /// The directory of the partition.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored configuration as options (defaults for the rest, the budget opened with).
    pub fn options(&self) -> &IndexOptions {
        &self.opts
    }

    /// The stored configuration as JSON (as [`crate::Index::config_json`]).
    ///
    /// # Errors
    /// None in practice (the configuration serializes).
    pub fn config_json(&self) -> Result<String> {
        serde_json::to_string(&StoredConfig::of(&self.opts))
            .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))
    }

    /// The number of live pages, as the last applied log set it.
    ///
    /// # Errors
    /// Storage errors, [`Error::Corruption`] for a counter that is not 8 bytes.
    pub fn len(&self) -> Result<u64> {
        Ok(self.counters()?.live_docs)
    }

    /// Whether the partition counts no live page.
    ///
    /// # Errors
    /// As [`WidePartition::len`].
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Flushes every column family's memtable and compacts it whole (the bottommost level
    /// forced, so every posting's merge operands are folded into its value): what a partition
    /// does before it is checkpointed or measured.
    ///
    /// # Errors
    /// [`Error::Storage`], [`Error::Poisoned`] after a failed write, [`Error::ReadOnly`].
    pub fn compact(&self) -> Result<()> {
        let _writer = self.writer.lock();
        self.check_writable()?;
        let mut co = rocksdb::CompactOptions::default();
        co.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        for name in cf::ALL {
            let h = self.cf(name);
            self.db
                .flush_cf(h)
                .map_err(|e| Error::storage("flushing", e))?;
            self.db
                .compact_range_cf_opt(h, None::<&[u8]>, None::<&[u8]>, &co);
        }
        Ok(())
    }

    pub(crate) fn cf(&self, name: &str) -> &ColumnFamily {
        // Every column family in `cf::ALL` is created by `open_db`; a missing one is a bug.
        #[allow(clippy::expect_used)]
        self.db
            .cf_handle(name)
            .expect("column family created at open")
    }

    /// A `meta` value, `None` when absent.
    fn meta_value(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.registration.check_process()?;
        self.db
            .get_cf(self.cf(cf::META), key)
            .map_err(|e| Error::storage("reading meta", e))
    }

    /// The counters as stored (absent ones 0): the whole index's, as every partition holds
    /// them after the same batches.
    ///
    /// # Errors
    /// Storage errors, [`Error::Corruption`] for a value that is not 8 bytes.
    pub fn counters(&self) -> Result<WideCounters> {
        self.registration.check_process()?;
        self.counters_at(&self.db.snapshot())
    }

    /// Writes a consistent snapshot of the partition to `dir`, which must not exist (RocksDB's
    /// checkpoint: hard links to the tables where `dir` is on the same file system), as
    /// [`crate::Index::checkpoint`]; what `neardup.ray` uploads after a committed batch and
    /// restores a lost partition from.
    ///
    /// # Errors
    /// Storage errors (among them an existing `dir`).
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        self.registration.check_process()?;
        storage::checkpoint(&self.db, dir.as_ref())
    }

    /// Refuses a write in a child after `fork`, after a failed write, or in a read-only handle.
    fn check_writable(&self) -> Result<()> {
        self.registration.check_process()?;
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone(), "a write"));
        }
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        Ok(())
    }

    /// Writes one chunk atomically; a failure poisons the partition.
    fn write(&self, batch: WriteBatch) -> Result<()> {
        self.db.write(batch).map_err(|e| {
            self.poisoned.store(true, Ordering::Release);
            Error::storage("applying a batch log", e)
        })
    }

    /// Syncs the write-ahead log when the partition syncs its writes.
    fn sync_wal(&self) -> Result<()> {
        if !self.opts.sync_writes {
            return Ok(());
        }
        self.db.flush_wal(true).map_err(|e| {
            self.poisoned.store(true, Ordering::Release);
            Error::storage("syncing the write-ahead log", e)
        })
    }
}

impl std::fmt::Debug for WidePartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WidePartition")
            .field("path", &self.path)
            .field("partition", &self.partition)
            .finish_non_exhaustive()
    }
}

impl Drop for WidePartition {
    /// Closes the database; in a process other than the one that opened it (a child after
    /// `fork`) it is leaked instead, as [`crate::Index`]'s is.
    fn drop(&mut self) {
        if self.registration.is_foreign() {
            std::mem::forget(Arc::clone(&self.db));
            std::mem::forget(self.cache.clone());
        }
    }
}
