//! Opening an index: the directory checks, the stored format and configuration (refused when
//! incompatible), the format 2 upgrade, and the in-memory state loaded at open.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use roaring::RoaringBitmap;
use rocksdb::{Direction, IteratorMode, WriteOptions, DB};
use serde::{Deserialize, Serialize};

use super::ids::{Counters, FreeIds};
use super::{registry, Index, TextSource};
use crate::methods::DocFreqs;
use crate::options::{IndexOptions, RepresentativePolicy, SignatureConfig};
use crate::storage::{self, cf, meta, SimhashTables, FORMAT_VERSION};
use crate::{Error, Result};

/// The parts of the configuration that shape what is stored.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub(crate) struct StoredConfig {
    pub(crate) signature: SignatureConfig,
    pub(crate) simhash_max_distance: u32,
    pub(crate) representative: RepresentativePolicy,
    /// Absent (true) in configurations written before texts could be left out.
    #[serde(default = "stored_texts_default", skip_serializing_if = "is_true")]
    pub(crate) store_texts: bool,
    /// The word splitter of a word-based method ([`crate::methods::terms::WORDS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) words: Option<String>,
}

fn stored_texts_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl StoredConfig {
    /// The stored parts of `opts`.
    pub(crate) fn of(opts: &IndexOptions) -> StoredConfig {
        StoredConfig {
            signature: opts.signature.clone(),
            simhash_max_distance: opts.simhash_max_distance,
            representative: opts.representative,
            store_texts: opts.store_texts,
            words: opts
                .signature
                .method
                .uses_words()
                .then(|| crate::methods::terms::WORDS.to_string()),
        }
    }

    /// Reads the configuration stored in the index at `path`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when there is no index at `path`,
    /// [`Error::IncompatibleFormat`] for a format this build does not read, storage and
    /// corruption errors.
    pub(crate) fn read(path: &Path) -> Result<StoredConfig> {
        Ok(Self::read_with_format(path)?.1)
    }

    /// Reads the format version (the current one when none is stored yet) and the configuration
    /// stored in the index at `path`.
    ///
    /// # Errors
    /// As [`StoredConfig::read`].
    pub(crate) fn read_with_format(path: &Path) -> Result<(u32, StoredConfig)> {
        if !path.join("CURRENT").exists() {
            return Err(Error::InvalidArgument(format!(
                "no index at {}",
                path.display()
            )));
        }
        let (format, config) = storage::read_meta(path)?;
        let mut found = FORMAT_VERSION;
        if let Some(format) = format {
            found = storage::decode_u32(cf::META, meta::FORMAT, &format)?;
            if !storage::format_supported(found) {
                return Err(Error::IncompatibleFormat {
                    found,
                    supported: FORMAT_VERSION,
                });
            }
        }
        let v = config
            .ok_or_else(|| Error::corruption(cf::META, meta::CONFIG, "missing configuration"))?;
        let config = serde_json::from_slice(&v).map_err(|e| {
            Error::corruption(
                cf::META,
                meta::CONFIG,
                format!("bad configuration JSON: {e}"),
            )
        })?;
        Ok((found, config))
    }

    /// Options to open the existing index with: these stored parts, defaults for the rest,
    /// never creating one.
    pub(crate) fn existing(self) -> IndexOptions {
        IndexOptions {
            create_if_missing: false,
            ..self.options()
        }
    }

    /// Index options with these stored parts and defaults for the rest.
    pub(crate) fn options(self) -> IndexOptions {
        IndexOptions {
            signature: self.signature,
            simhash_max_distance: self.simhash_max_distance,
            representative: self.representative,
            store_texts: self.store_texts,
            ..IndexOptions::default()
        }
    }
}

/// Whether a file name is one RocksDB writes in a database directory.
pub(crate) fn is_rocksdb_file(name: &str) -> bool {
    [
        "LOCK",
        "LOG",
        "IDENTITY",
        "CURRENT",
        "MANIFEST-",
        "OPTIONS-",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || [".log", ".sst", ".dbtmp", ".blob"]
            .iter()
            .any(|s| name.ends_with(s))
}

impl Index {
    /// Opens the index in `path`, creating it when `opts.create_if_missing` is set.
    ///
    /// # Errors
    /// [`Error::Storage`] when RocksDB cannot open it, [`Error::IncompatibleFormat`] for another
    /// on-disk format, [`Error::IncompatibleConfig`] when the stored signature parameters,
    /// simhash distance or representative policy differ from `opts`,
    /// [`Error::InvalidArgument`] for unusable options, [`Error::AlreadyOpen`] when this process
    /// has the directory open already, [`Error::ForkedStorage`] in a child after `fork` of a
    /// process that had opened an index.
    pub fn open(path: impl AsRef<Path>, opts: IndexOptions) -> Result<Index> {
        Index::open_inner(path.as_ref(), opts, None)
    }

    pub(crate) fn open_inner(
        path: &Path,
        opts: IndexOptions,
        source: Option<Arc<dyn TextSource>>,
    ) -> Result<Index> {
        let path = path.to_path_buf();
        opts.signature.validate()?;
        opts.verify.validate()?;
        opts.chrome.validate()?;
        SimhashTables::new(opts.simhash_max_distance)?;
        if !opts.create_if_missing && !path.join("CURRENT").exists() {
            return Err(Error::InvalidArgument(format!(
                "no index at {}",
                path.display()
            )));
        }
        if path.exists() && !path.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                path.display()
            )));
        }
        if opts.create_if_missing {
            // A directory that holds other files is not made into an index behind the caller's
            // back: an index is created in a new or empty directory only.
            // (Files RocksDB writes before `CURRENT` — a creation cut short — are not foreign.)
            let foreign = !path.join("CURRENT").exists()
                && std::fs::read_dir(&path).is_ok_and(|d| {
                    d.filter_map(|e| e.ok())
                        .any(|e| !is_rocksdb_file(&e.file_name().to_string_lossy()))
                });
            if foreign {
                return Err(Error::InvalidArgument(format!(
                    "{} is not empty and holds no index",
                    path.display()
                )));
            }
            std::fs::create_dir_all(&path).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
        }
        // Nothing of RocksDB (nor the open table, whose lock a parent's thread may have held at
        // the fork) is touched in a child of a process that had opened a database.
        storage::process::claim()?;
        // One handle per directory per process, whatever the path's spelling.
        let registration = registry::Registration::acquire(&path)?;
        // An existing index's format and configuration are checked before it is opened for
        // writing: opening creates the column families an older build did not have, and a
        // refused open must leave the index as the build that wrote it can read it.
        // The simhash tables are those of the format found (FORMAT.md "simhash").
        let mut format = FORMAT_VERSION;
        let mut opts = opts;
        if path.join("CURRENT").exists() {
            let (stored, config) = storage::read_meta(&path)?;
            if let Some(stored) = stored {
                adopt_stored_folding(&mut opts, config.as_deref());
                format = check_stored(&stored, config.as_deref(), &StoredConfig::of(&opts))?;
            }
        }
        let tables = SimhashTables::for_format(opts.simhash_max_distance, format)?;
        let db = storage::open_db(&path, opts.create_if_missing, tables, &opts.budget())?;
        Index::with_db(db, path, opts, tables, source, registration, false)
    }

    /// The index over an opened database: checks the format and configuration and loads the
    /// in-memory state.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn with_db(
        (db, cache): (DB, rocksdb::Cache),
        path: PathBuf,
        opts: IndexOptions,
        tables: SimhashTables,
        source: Option<Arc<dyn TextSource>>,
        registration: registry::Registration,
        read_only: bool,
    ) -> Result<Index> {
        let mut ix = Index {
            db: Arc::new(db),
            cache,
            path,
            opts,
            tables,
            writer: Mutex::new(Counters::default()),
            commits: AtomicU64::new(0),
            durable: AtomicU64::new(0),
            poisoned: AtomicBool::new(false),
            frequent: RwLock::new(rustc_hash::FxHashSet::default()),
            df: RwLock::new(DocFreqs::new()),
            source,
            read_only,
            cluster_map: false,
            raw_hashes: false,
            free_in_memory_only: AtomicBool::new(false),
            partition: RwLock::new(None),
            allocations: Mutex::new(None),
            recording: AtomicBool::new(false),
            metrics: super::metrics::Recorder::new(),
            registration,
        };
        let mut format = ix.check_or_write_meta()?;
        if format == storage::FORMAT_VERSION_5 && !read_only {
            format = ix.upgrade_from_5()?;
        }
        ix.cluster_map = storage::has_cluster_map(format);
        ix.raw_hashes = storage::has_raw_hashes(format);
        if SimhashTables::for_format(ix.opts.simhash_max_distance, format)? != ix.tables {
            return Err(Error::corruption(
                cf::META,
                meta::FORMAT,
                format!("format {format} changed while the index was opened"),
            ));
        }
        *ix.frequent.write() = ix.load_frequent()?;
        *ix.partition.write() =
            ix.get_at(cf::META, meta::PARTITION, None, "the partition", |v| {
                Ok(v.to_vec())
            })?;
        let mut counters = ix.load_counters()?;
        if format == storage::FORMAT_VERSION_2 {
            ix.upgrade_from_2(&mut counters)?;
        }
        if !read_only {
            ix.start_feed(&counters)?;
        }
        if ix.opts.signature.method.uses_df() {
            let mut df = ix.load_df_at(None)?;
            df.set_docs(counters.live_docs);
            *ix.df.write() = df;
        }
        log::info!(
            "neardup: opened {}{}: {} pages in {} clusters",
            ix.path.display(),
            if read_only { " read-only" } else { "" },
            counters.live_docs,
            counters.live_clusters
        );
        *ix.writer.lock() = counters;
        Ok(ix)
    }

    /// Opens an index or a checkpoint read-only, with its stored configuration: for a serving
    /// process beside the writer (in this process or another), or for a snapshot on read-only
    /// storage. Nothing in `path` is written; every write (insert, batch, delete, compact,
    /// flush) fails with [`Error::ReadOnly`]. The handle sees the index as it was when opened
    /// (RocksDB's read-only mode): reopen it to see later writes. It is not registered as the
    /// directory's writer (see [`Error::AlreadyOpen`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when there is no index at `path` or it lacks a column family
    /// (written by an older build: open it for writing once), storage, format and corruption
    /// errors.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Index> {
        let path = path.as_ref();
        let (format, stored) = StoredConfig::read_with_format(path)?;
        let opts = stored.existing();
        let tables = SimhashTables::for_format(opts.simhash_max_distance, format)?;
        let db = storage::open_db_read_only(path, tables, &opts.budget())?;
        // An index of a format before the page → cluster map may lack its column family; one
        // written before the change feed lacks the feed's (it then has no change to list).
        let needed = |n: &str| {
            n != cf::CHANGES && (n != cf::PAGE_CLUSTERS || storage::has_cluster_map(format))
        };
        if let Some(missing) = cf::ALL
            .into_iter()
            .find(|&n| needed(n) && db.0.cf_handle(n).is_none())
        {
            return Err(Error::InvalidArgument(format!(
                "{} has no `{missing}` column family (written by an older build): open it for \
                 writing once, or compact it, before opening it read-only",
                path.display()
            )));
        }
        Index::with_db(
            db,
            path.to_path_buf(),
            opts,
            tables,
            None,
            registry::Registration::read_only(),
            true,
        )
    }

    /// Opens an existing index with the signature parameters, simhash distance and
    /// representative policy stored in it, and default values for the rest.
    ///
    /// # Errors
    /// As [`Index::open`]; [`Error::InvalidArgument`] when there is no index at `path`.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Index> {
        let path = path.as_ref();
        Index::open(path, StoredConfig::read(path)?.existing())
    }

    pub(crate) fn stored_config(&self) -> StoredConfig {
        StoredConfig::of(&self.opts)
    }

    /// Checks the stored format and configuration (writes them into a new index); returns the
    /// format version found.
    pub(crate) fn check_or_write_meta(&self) -> Result<u32> {
        let m = self.cf(cf::META);
        let get = |k: &[u8]| {
            self.db
                .get_cf(m, k)
                .map_err(|e| Error::storage("reading meta", e))
        };
        match get(meta::FORMAT)? {
            Some(v) => check_stored(&v, get(meta::CONFIG)?.as_deref(), &self.stored_config()),
            None if self.read_only => Err(Error::corruption(
                cf::META,
                meta::FORMAT,
                "no format version in an index opened read-only",
            )),
            None => {
                let mut it = self.db.iterator_cf(self.cf(cf::DOCS), IteratorMode::Start);
                if it.next().is_some() {
                    return Err(Error::corruption(
                        cf::META,
                        meta::FORMAT,
                        "pages present but no format version",
                    ));
                }
                let config = serde_json::to_vec(&self.stored_config())
                    .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))?;
                let mut b = rocksdb::WriteBatch::default();
                b.put_cf(m, meta::FORMAT, FORMAT_VERSION.to_be_bytes());
                b.put_cf(m, meta::CONFIG, config);
                self.db
                    .write(b)
                    .map_err(|e| Error::storage("writing meta", e))?;
                Ok(FORMAT_VERSION)
            }
        }
    }

    /// Upgrades an index of format 5 to the current one, opened for writing: the version number
    /// only, since every format 5 record reads as it is (its pages without a raw page hash,
    /// which each gets at its next insert). A build that reads format 5 only then refuses the
    /// index as a newer format instead of meeting records it cannot read.
    pub(crate) fn upgrade_from_5(&self) -> Result<u32> {
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        self.db
            .put_cf_opt(
                self.cf(cf::META),
                meta::FORMAT,
                FORMAT_VERSION.to_be_bytes(),
                &wo,
            )
            .map_err(|e| Error::storage("upgrading the index from format 5", e))?;
        log::info!(
            "neardup: upgraded {} from format 5 to {FORMAT_VERSION}",
            self.path.display()
        );
        Ok(FORMAT_VERSION)
    }

    /// Upgrades an index of format 2, where ids were never reused: every id below the
    /// allocators that no live page or cluster holds becomes free, and the insertion numbers
    /// start at the page allocator (a format 2 page's number is its id) — in one write.
    pub(crate) fn upgrade_from_2(&self, counters: &mut Counters) -> Result<()> {
        let m = self.cf(cf::META);
        let mut b = rocksdb::WriteBatch::default();
        let mut live_docs = RoaringBitmap::new();
        for item in self.db.iterator_cf_opt(
            self.cf(cf::DOCS),
            storage::scan_options(),
            IteratorMode::Start,
        ) {
            let (k, _) = item.map_err(|e| Error::storage("reading pages", e))?;
            live_docs.insert(storage::decode_u32(cf::DOCS, &k, &k)?);
        }
        let mut live_clusters = RoaringBitmap::new();
        for item in self
            .db
            .iterator_cf(self.cf(cf::CLUSTERS), IteratorMode::Start)
        {
            let (k, _) = item.map_err(|e| Error::storage("reading clusters", e))?;
            live_clusters.insert(storage::decode_u32(cf::CLUSTERS, &k, &k)?);
        }
        // The free keys in chunks (an old index may have hundreds of millions of free ids), the
        // format version last: a crash in between leaves format 2, and the upgrade runs again.
        let free = |n: u32, live: &RoaringBitmap, prefix: &[u8]| -> Result<RoaringBitmap> {
            let mut f = RoaringBitmap::new();
            f.insert_range(0..n);
            f -= live;
            if !self.read_only {
                let mut chunk = rocksdb::WriteBatch::default();
                for id in &f {
                    chunk.put_cf(m, meta::free_key(prefix, id), []);
                    if chunk.len() >= 100_000 {
                        self.db
                            .write(std::mem::take(&mut chunk))
                            .map_err(|e| Error::storage("upgrading the index from format 2", e))?;
                    }
                }
                self.db
                    .write(chunk)
                    .map_err(|e| Error::storage("upgrading the index from format 2", e))?;
            }
            Ok(f)
        };
        let free_docs = free(counters.next_doc, &live_docs, meta::FREE_DOC)?;
        let free_clusters = free(counters.next_cluster, &live_clusters, meta::FREE_CLUSTER)?;
        let next_seq = u64::from(counters.next_doc);
        b.put_cf(m, meta::NEXT_SEQ, next_seq.to_be_bytes());
        // Format 3, not the current one: the simhash tables stay those of format 2.
        b.put_cf(m, meta::FORMAT, storage::FORMAT_VERSION_3.to_be_bytes());
        // Read-only: the same state in memory, nothing written.
        if self.read_only {
            self.free_in_memory_only.store(true, Ordering::Release);
        } else {
            let mut wo = WriteOptions::default();
            wo.set_sync(true);
            self.db
                .write_opt(b, &wo)
                .map_err(|e| Error::storage("upgrading the index from format 2", e))?;
        }
        if !self.read_only {
            log::info!(
                "neardup: upgraded {} from format 2 to 3 ({} free page ids, {} \
                 free cluster ids)",
                self.path.display(),
                free_docs.len(),
                free_clusters.len()
            );
        }
        counters.next_seq = next_seq;
        counters.free_docs.ready = Arc::new(free_docs);
        counters.free_clusters.ready = Arc::new(free_clusters);
        Ok(())
    }

    /// The free ids stored under `prefix`.
    pub(crate) fn load_free(&self, prefix: &[u8]) -> Result<RoaringBitmap> {
        crate::index::ids::free_ids_from(
            prefix,
            self.db.iterator_cf(
                self.cf(cf::META),
                IteratorMode::From(prefix, Direction::Forward),
            ),
        )
    }

    pub(crate) fn load_counters(&self) -> Result<Counters> {
        let m = self.cf(cf::META);
        let get = |k: &'static [u8]| -> Result<Option<Vec<u8>>> {
            self.db
                .get_cf(m, k)
                .map_err(|e| Error::storage("reading counters", e))
        };
        let u32_of = |k: &'static [u8]| -> Result<u32> {
            get(k)?
                .map(|v| storage::decode_u32(cf::META, k, &v))
                .transpose()
                .map(|v| v.unwrap_or(0))
        };
        let u64_of = |k: &'static [u8]| -> Result<u64> {
            get(k)?
                .map(|v| storage::decode_u64(cf::META, k, &v))
                .transpose()
                .map(|v| v.unwrap_or(0))
        };
        let next_doc = u32_of(meta::NEXT_DOC)?;
        let next_seq = match get(meta::NEXT_SEQ)? {
            None => u64::from(next_doc),
            Some(_) => u64_of(meta::NEXT_SEQ)?,
        };
        // An index that held pages before its feed started: change 1 stands for that history,
        // trimmed (a follower of it must start from a copy).
        let (next_change, changes_trimmed) = match get(meta::NEXT_CHANGE)? {
            Some(_) => (u64_of(meta::NEXT_CHANGE)?, u64_of(meta::CHANGES_TRIMMED)?),
            None if next_doc > 0 || next_seq > 0 => (2, 1),
            None => (1, 0),
        };
        Ok(Counters {
            next_doc,
            next_cluster: u32_of(meta::NEXT_CLUSTER)?,
            live_docs: u64_of(meta::LIVE_DOCS)?,
            live_clusters: u64_of(meta::LIVE_CLUSTERS)?,
            next_seq,
            next_change,
            changes_trimmed,
            free_docs: FreeIds {
                ready: Arc::new(self.load_free(meta::FREE_DOC)?),
                held: Vec::new(),
            },
            free_clusters: FreeIds {
                ready: Arc::new(self.load_free(meta::FREE_CLUSTER)?),
                held: Vec::new(),
            },
            batches: Vec::new(),
        })
    }

    /// Writes the feed's counters into an index that has none yet (opened for writing for the
    /// first time by a build with the feed), so that every reader of the database, at any
    /// snapshot, finds where its feed starts.
    fn start_feed(&self, counters: &Counters) -> Result<()> {
        let m = self.cf(cf::META);
        let present = self
            .db
            .get_cf(m, meta::NEXT_CHANGE)
            .map_err(|e| Error::storage("reading meta", e))?
            .is_some();
        if present {
            return Ok(());
        }
        let mut b = rocksdb::WriteBatch::default();
        b.put_cf(m, meta::NEXT_CHANGE, counters.next_change.to_be_bytes());
        b.put_cf(
            m,
            meta::CHANGES_TRIMMED,
            counters.changes_trimmed.to_be_bytes(),
        );
        self.db
            .write(b)
            .map_err(|e| Error::storage("starting the change feed", e))
    }

    pub(crate) fn load_frequent(&self) -> Result<rustc_hash::FxHashSet<[u8; 9]>> {
        let mut set = rustc_hash::FxHashSet::default();
        for item in self
            .db
            .iterator_cf(self.cf(cf::FREQUENT), IteratorMode::Start)
        {
            let (k, _) = item.map_err(|e| Error::storage("reading frequent fingerprints", e))?;
            let key: [u8; 9] = k
                .as_ref()
                .try_into()
                .map_err(|_| Error::corruption(cf::FREQUENT, &k, "key is not 9 bytes"))?;
            set.insert(key);
        }
        Ok(set)
    }
}

impl Index {
    /// The configuration stored in the index at `path`, as JSON (signature parameters, simhash
    /// distance, representative policy, whether texts are stored): what
    /// [`Index::open_existing`] opens it with.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when there is no index at `path`, storage and corruption
    /// errors.
    pub fn stored_config_json(path: impl AsRef<std::path::Path>) -> Result<String> {
        let stored = StoredConfig::read(path.as_ref())?;
        serde_json::to_string(&stored)
            .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))
    }

    /// The stored part of this index's configuration, as JSON (see
    /// [`Index::stored_config_json`]).
    ///
    /// # Errors
    /// None in practice (the configuration serializes).
    pub fn config_json(&self) -> Result<String> {
        serde_json::to_string(&self.stored_config())
            .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))
    }
}

/// Checks a stored format version and configuration against what this build reads and the
/// configuration `wanted`; returns the format version.
///
/// # Errors
/// [`Error::IncompatibleFormat`], [`Error::IncompatibleConfig`], [`Error::Corruption`] for a
/// value that does not decode or a missing configuration.
fn check_stored(format: &[u8], config: Option<&[u8]>, wanted: &StoredConfig) -> Result<u32> {
    let found = storage::decode_u32(cf::META, meta::FORMAT, format)?;
    if !storage::format_supported(found) {
        return Err(Error::IncompatibleFormat {
            found,
            supported: FORMAT_VERSION,
        });
    }
    let stored =
        config.ok_or_else(|| Error::corruption(cf::META, meta::CONFIG, "missing configuration"))?;
    let stored: serde_json::Value = serde_json::from_slice(stored).map_err(|e| {
        Error::corruption(
            cf::META,
            meta::CONFIG,
            format!("bad configuration JSON: {e}"),
        )
    })?;
    let wanted = serde_json::to_value(wanted)
        .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))?;
    if let Some((field, s, w)) = first_difference("", &stored, &wanted) {
        return Err(Error::IncompatibleConfig {
            field,
            stored: s,
            requested: w,
        });
    }
    Ok(found)
}

/// Options an index made before them does not name in its stored configuration, and that it
/// is opened without, whatever `opts` asks: `fold_only_chinese` (its stored texts were folded
/// whole, see [`SignatureConfig::fold_only_chinese`]) and the containment keys
/// `short_page_keys` and `sampled_keys` (its pages were keyed without them, see
/// [`SignatureConfig::sampled_keys`]). Each is left out of a stored configuration when off, so
/// an index made with one off reads back the same.
fn adopt_stored_folding(opts: &mut IndexOptions, config: Option<&[u8]>) {
    let stored = config.and_then(|c| serde_json::from_slice::<serde_json::Value>(c).ok());
    let names = |field: &str| {
        stored
            .as_ref()
            .is_some_and(|v| v["signature"].get(field).is_some())
    };
    if !names("fold_only_chinese") {
        opts.signature.fold_only_chinese = false;
    }
    if !names("short_page_keys") {
        opts.signature.short_page_keys = false;
    }
    if !names("sampled_keys") {
        opts.signature.sampled_keys = 0;
    }
}

/// The first field where two JSON values differ: (path, stored, wanted).
fn first_difference(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_difference(&p, u, v) {
                            return Some(d);
                        }
                    }
                    (u, v) => {
                        return Some((
                            p,
                            u.map_or("absent".into(), |u| u.to_string()),
                            v.map_or("absent".into(), |v| v.to_string()),
                        ))
                    }
                }
            }
            None
        }
        _ if a == b => None,
        _ => Some((path.to_string(), a.to_string(), b.to_string())),
    }
}
