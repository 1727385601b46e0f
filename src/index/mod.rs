//! The index: comparison on insert, incremental clusters and representatives, over RocksDB
//! (SPEC §2.5, §2.7, §3).
//!
//! Every insert, delete or replace is decided inside one exclusive writer section and committed as
//! one atomic `WriteBatch` with the WAL on; signatures are computed before the section, in
//! parallel. Readers (`query`, look-ups, `export`) never take the writer lock, and a query reads
//! one RocksDB snapshot from start to end.
//!
//! The rooms, by role (ARCHITECTURE.md):
//! - [`open`](self::open): opening, the stored configuration, format upgrades;
//! - `ids`: the writer's counters, free ids and the id journal;
//! - `view`: what decisions read — the latest state, a snapshot, a write's overlay;
//! - `decide`: candidate search, cluster ranking and verification (seed 000 §3.3, §4.2);
//! - `write`: the write transaction, its commit, insert, delete, cluster placement and batch
//!   ingest;
//! - `read`: queries, look-ups, exports and cursors;
//! - `maintain`: check, compaction, checkpoints, statistics, explanations;
//! - `metrics`: counters and latency histograms of the operations since the index was opened;
//! - `chrome` (site chrome learned per host), `source` (texts from the embedding engine),
//!   `registry` (one handle per directory).

pub(crate) mod chrome;
pub(crate) mod decide;
pub(crate) mod ids;
pub(crate) mod maintain;
pub(crate) mod metrics;
pub(crate) mod open;
pub(crate) mod read;
pub(crate) mod registry;
pub(crate) mod source;
pub(crate) mod types;
pub(crate) mod view;
pub(crate) mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rocksdb::{ColumnFamily, DB};

pub(crate) use decide::{Probe, FREQUENT_HOSTS, FREQUENT_PAGES};
pub(crate) use ids::Counters;
pub use ids::{AllocatedId, Allocation};
pub use maintain::{
    dir_bytes, explain_pair, CheckReport, CompactReport, ExplainedPage, Explanation, PairStage,
};
pub use metrics::{BatchMetrics, InsertMetrics, Latency, Metrics, OpMetrics};
pub use read::{Changes, Clusters, Keys, Members, NearDuplicate, NearOptions, Pages, Score};
pub use source::{SourcedContent, SourcedPage, TextSource};
pub use types::{ChromeStats, ClusterInfo, Deletion, Moved, Page, Record, Stats, Timing, Verdict};
pub(crate) use view::View;
pub(crate) use write::Txn;
pub use write::{BatchOptions, BatchOrder, OrderScope};

use crate::methods::DocFreqs;
use crate::options::IndexOptions;
use crate::storage::{cf, SimhashTables};
use crate::{Error, Result};

/// A near-duplicate index in one RocksDB database. `Send + Sync`: share it with an `Arc`.
pub struct Index {
    /// The database. Shared only so that [`Drop`] can leak it in a process that did not open
    /// it: nothing else holds another reference.
    pub(crate) db: Arc<DB>,
    /// The block cache the database's tables read through (see
    /// [`IndexOptions::block_cache_bytes`]).
    pub(crate) cache: rocksdb::Cache,
    pub(crate) path: PathBuf,
    pub(crate) opts: IndexOptions,
    pub(crate) tables: SimhashTables,
    pub(crate) writer: Mutex<Counters>,
    /// Writes committed since the index was opened: batch ingest checks it to know whether
    /// postings it read ahead are still current.
    pub(crate) commits: AtomicU64,
    /// The number of commits known durable (the WAL synced after them; see
    /// [`Index::sync_wal`]).
    pub(crate) durable: AtomicU64,
    pub(crate) poisoned: AtomicBool,
    pub(crate) frequent: RwLock<rustc_hash::FxHashSet<[u8; 9]>>,
    /// Document frequencies by word, under a method on corpus statistics (the sizes of the
    /// postings of kind `T`, kept current by every commit; empty otherwise).
    pub(crate) df: RwLock<DocFreqs>,
    /// Where texts come from when they are not stored.
    pub(crate) source: Option<Arc<dyn TextSource>>,
    /// Opened with [`Index::open_read_only`]: every write is refused.
    pub(crate) read_only: bool,
    /// The index keeps the page → cluster map (`cf::PAGE_CLUSTERS`, on-disk format 5 on): every
    /// write of a page record writes its entry, and clusters of candidates are read from it.
    pub(crate) cluster_map: bool,
    /// The index keeps the hash of each page's raw page in its record (on-disk format 6 on):
    /// what tells [`crate::Verdict::unchanged_html`]. An index of an older format that stays
    /// one (formats 3 and 4, and 5 opened read-only) keeps none.
    pub(crate) raw_hashes: bool,
    /// A format 2 index opened read-only: its free ids exist in memory only (`check()` compares
    /// with those).
    pub(crate) free_in_memory_only: AtomicBool,
    /// The database's place in a distributed index when it is a partition of one, as its `meta`
    /// record holds it (the merge protocol, `crate::merge`, reads and writes it): such a
    /// database is written by batch logs only.
    pub(crate) partition: RwLock<Option<Vec<u8>>>,
    /// The ids committed writes gave out, while recorded ([`Index::record_allocations`]).
    pub(crate) allocations: Mutex<Option<Vec<Allocation>>>,
    /// Whether `allocations` records (read without its lock on every allocation).
    pub(crate) recording: AtomicBool,
    /// Counts and latencies of the operations since the index was opened ([`Index::metrics`]).
    pub(crate) metrics: metrics::Recorder,
    /// This process's registration of the directory (declared after `db`, so it is released
    /// after RocksDB has closed).
    pub(crate) registration: registry::Registration,
}

impl Index {
    /// The options the index was opened with.
    pub fn options(&self) -> &IndexOptions {
        &self.opts
    }

    /// The directory of the index.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the index was opened with [`Index::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The column families this database has, with their handles: all of them, but
    /// `page_clusters` in a snapshot of an older format opened read-only.
    pub(crate) fn families(&self) -> impl Iterator<Item = (&'static str, &ColumnFamily)> {
        cf::ALL
            .into_iter()
            .filter_map(|name| self.db.cf_handle(name).map(|h| (name, h)))
    }

    pub(crate) fn cf(&self, name: &str) -> &ColumnFamily {
        // Every column family in `cf::ALL` is created by `open_db`; a missing one is a bug.
        #[allow(clippy::expect_used)]
        self.db
            .cf_handle(name)
            .expect("column family created at open")
    }

    /// Number of live pages.
    pub fn len(&self) -> u64 {
        self.writer.lock().live_docs
    }

    /// True when the index holds no page.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Index {
    /// Closes the database. In a process other than the one that opened the index (a child
    /// after `fork`), nothing of RocksDB is released: its destructors would join and signal
    /// background threads that exist only in the parent (SIGSEGV when the child then calls
    /// `exit`); the database and its cache are leaked there, and the parent's copy is untouched.
    fn drop(&mut self) {
        if self.registration.is_foreign() {
            // Each clone keeps one reference that is never released: the fields' own drops
            // after this one cannot reach zero.
            std::mem::forget(Arc::clone(&self.db));
            std::mem::forget(self.cache.clone());
        }
    }
}

/// A normalized text's length in characters, saturated to `u32`.
pub(crate) fn text_chars(text: &str) -> u32 {
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

/// The host part of a URL (`https://a.b/c` → `a.b`; a string without a scheme is taken from its
/// start), for pages handed in without a host.
pub fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or("")
}

/// The longest host accepted, in bytes.
pub(crate) const MAX_HOST: usize = 255;

pub(crate) fn check_page(page: &Page<'_>) -> Result<()> {
    check_key(page.key)?;
    if page.host.len() > MAX_HOST {
        return Err(Error::InvalidArgument(format!(
            "the host is {} bytes, the limit is {MAX_HOST}",
            page.host.len()
        )));
    }
    Ok(())
}

pub(crate) fn check_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::InvalidArgument("the page key is empty".into()));
    }
    if key.len() > 64 * 1024 {
        return Err(Error::InvalidArgument(format!(
            "the page key is {} bytes, the limit is 65536",
            key.len()
        )));
    }
    Ok(())
}
