//! The index: comparison on insert, incremental clusters and representatives, over RocksDB
//! (SPEC §2.5, §2.7, §3).
//!
//! Every insert, delete or replace is decided inside one exclusive writer section and committed as
//! one atomic `WriteBatch` with the WAL on; signatures are computed before the section, in
//! parallel. Readers (`query`, look-ups, `export`) never take the writer lock.

mod apply;
mod batch;
mod check;
mod chrome;
mod cluster;
mod compact;
mod explain;
mod filter;
mod logfile;
mod partition;
mod read;
mod registry;
mod seed;
mod source;
mod txn;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use roaring::RoaringBitmap;
use rocksdb::{
    BottommostLevelCompaction, ColumnFamily, CompactOptions, Direction, IteratorMode, ReadOptions,
    WriteOptions, DB,
};
use serde::{Deserialize, Serialize};

pub use apply::{ApplyOutcome, LogCounter, LogOp, APPLY_CHUNK_BYTES};
pub use batch::{BatchOptions, BatchOrder, OrderScope};
pub use check::CheckReport;
pub use cluster::Match;
use cluster::Memo;
pub use compact::{dir_bytes, CompactReport};
pub use explain::{explain_pair, ExplainedPage, Explanation};
pub use logfile::{decode_log, encode_log};
pub use partition::{
    combine_seed_logs, combine_unit_logs, combine_unit_logs_mapped, AllocatedId, Allocation,
    BatchBase, FiledPage, IdMap, Layout, PageRow, Partition, PartitionRows, Role, RoutedLog,
    Target, MAX_PARTS,
};
pub use read::{ClusterInfo, Clusters, Keys, Members, Record};
pub use seed::{state_diff, Reach, StateDiff};
pub use source::{SourcedContent, SourcedPage, TextSource};

use crate::fingerprint::{fingerprints_and_sketch, hamming, Content, Signatures};
use crate::methods::df::Overlaid;
use crate::methods::{DocFreq, DocFreqs, Features, Method, NoDocFreq};
use crate::options::{IndexOptions, RepresentativePolicy, SignatureConfig};
use crate::storage::codec::{self, ClusterId, ClusterRecord, DocId, DocRecord, NO_DOC};
use crate::storage::merge::Delta;
use crate::storage::{self, cf, id_key, kind, meta, posting_key, SimhashTables, FORMAT_VERSION};
use crate::text::split_sentences;
use crate::{Error, Result};
use txn::Txn;

/// A page handed to the index.
#[derive(Clone, Copy, Debug)]
pub struct Page<'a> {
    /// The external key (a URL, a crawl id…): unique in the index; inserting it again replaces
    /// the page.
    pub key: &'a str,
    /// The host the page came from (used to spot template fingerprints); may be empty.
    pub host: &'a str,
    /// Publish time in Unix seconds, 0 when unknown.
    pub time: i64,
    /// The page's content.
    pub content: Content<'a>,
}

/// Where the time of one insert or query went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    /// Main text and signatures.
    pub signature: Duration,
    /// Candidate generation (postings, simhash tables, cluster look-ups).
    pub candidates: Duration,
    /// Verification (skeleton, LCS, TLCS).
    pub verify: Duration,
    /// Building and committing the write (zero for a query).
    pub write: Duration,
}

/// The answer for one page: is it a near duplicate, of what, how similar.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// True when the page was verified similar to a page already held (`similar_to`). The page
    /// joins that page's cluster only when it also verifies against the cluster's representative;
    /// otherwise it founds a cluster of its own (see `representative`).
    pub duplicate: bool,
    /// The page's internal id (`None` for a query).
    pub doc: Option<DocId>,
    /// The page's insertion number (`None` for a query): unique for the index's life — a
    /// replace gets a new one — so an engine that keeps several versions of a page can tell its
    /// text source which one the index holds (see [`SourcedPage`]).
    pub seq: Option<u64>,
    /// The cluster the page joined or founded (`None` for a query that found no duplicate).
    pub cluster: Option<ClusterId>,
    /// Key of the cluster's representative after this operation (`None` for a query that found
    /// no duplicate).
    pub representative: Option<String>,
    /// Key of the closest page this one was verified similar to, when a duplicate: the
    /// representative of the cluster it joined, or a member of any cluster that it resembles
    /// more.
    pub similar_to: Option<String>,
    /// Resemble rate with `similar_to` (0 when not a duplicate).
    pub resemble: f64,
    /// Contain rate with `similar_to` (0 when not a duplicate).
    pub contain: f64,
    /// True when the normalized texts of this page and `similar_to` are identical.
    pub exact: bool,
    /// Key of a stored page whose main text is identical to this page's (the one of lowest id),
    /// whatever `similar_to` and the cluster say; `None` when there is none, and for pages
    /// without main text (their empty extractions are not "identical" to anything).
    pub identical_to: Option<String>,
    /// Length of the page's normalized main text, in characters.
    pub text_chars: u32,
    /// True when the key was already present and its page was replaced.
    pub replaced: bool,
    /// When the page replaced another under its key: what taking the old page out changed
    /// (as [`Index::delete`] reports it; the new page is placed after).
    pub replaced_page: Option<Box<Deletion>>,
    /// True when the key was already present with the same main text (same content hash, same
    /// host): an unchanged recrawl. Nothing was written — no new id, no verification, no change
    /// of cluster or role — and the verdict is the stored one: `duplicate` and `similar_to` as
    /// decided when the page was inserted (when that page is still held), its cluster and
    /// representative now; `resemble` and `contain` as stored then (in single precision).
    pub unchanged: bool,
    /// True when the page has (almost) no main text — narrower than
    /// [`IndexOptions::min_text_width`]: it was stored, in a cluster of its own, without being
    /// compared, and is never a duplicate (an empty extraction says nothing about the page).
    pub no_main_text: bool,
    /// How many candidate pages were found.
    pub candidates: usize,
    /// How many pairs were verified.
    pub verified: usize,
    /// Where the time went.
    pub timing: Timing,
}

/// What a delete changed (the result of [`Index::delete`], and of the replace of a page).
#[derive(Clone, Debug, PartialEq)]
pub struct Deletion {
    /// The deleted page's key.
    pub key: String,
    /// Its internal id (free now, and given to a later page).
    pub doc: DocId,
    /// The cluster it was in.
    pub cluster: ClusterId,
    /// True when it was that cluster's representative.
    pub was_representative: bool,
    /// The key of the cluster's representative after the delete: the same page when a member
    /// was deleted, the member the policy prefers after a representative's delete; `None` when
    /// the cluster is gone (it had no other member).
    pub representative: Option<String>,
    /// After a representative's delete, the members that did not verify against the new
    /// representative: each was re-placed into another cluster it verifies against, or founded
    /// its own. The other members stayed.
    pub moved: Vec<Moved>,
}

/// A member moved to another cluster by a representative's delete.
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    /// Its key.
    pub key: String,
    /// The cluster it is in now.
    pub cluster: ClusterId,
    /// That cluster's representative (its own key when it founded the cluster).
    pub representative: String,
}

/// Figures about an index.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Live pages.
    pub pages: u64,
    /// Live clusters.
    pub clusters: u64,
    /// Over-frequent fingerprints (posting keys, hex) with the reason (`pages` or `few_hosts`).
    pub frequent: Vec<(String, String)>,
    /// Bytes on disk (SST files) and in memtables per column family.
    pub bytes: Vec<(String, u64)>,
    /// Page ids given out so far (the high-water mark: ids of deleted pages are given out again
    /// before it grows, so it stays near the most pages ever held at once).
    pub page_ids: u32,
    /// Cluster ids given out so far (the high-water mark, as for pages).
    pub cluster_ids: u32,
    /// Number of clusters by size bucket (`1`, `2`, `3-5`, `6-10`, `11-50`, `51-`).
    pub cluster_sizes: Vec<(String, u64)>,
    /// Site chrome learned per host (see [`crate::ChromeConfig`]).
    pub chrome: ChromeStats,
    /// Memory the in-memory filter of posting keys takes, in bytes (0 when it is off; see
    /// [`crate::IndexOptions::posting_filter_bytes`]).
    pub posting_filter_bytes: u64,
}

/// Figures about the site chrome learned per host.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ChromeStats {
    /// Hosts with counted pages.
    pub hosts: u64,
    /// Blocks counted (distinct per host).
    pub blocks: u64,
    /// Live pages counted for their host.
    pub pages_counted: u64,
    /// Live pages that had blocks dropped as chrome when inserted.
    pub pages_stripped: u64,
    /// Blocks dropped from those pages (distinct per page, summed).
    pub blocks_dropped: u64,
}

/// The writer's state: id allocators and counts (persisted in the `meta` column family with
/// every commit).
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    next_doc: DocId,
    next_cluster: ClusterId,
    live_docs: u64,
    live_clusters: u64,
    /// The next page insertion number ([`DocRecord::seq`]).
    next_seq: u64,
    /// Ids of deleted pages, given out again before `next_doc` grows.
    free_docs: FreeIds,
    /// Ids of dissolved clusters, given out again before `next_cluster` grows.
    free_clusters: FreeIds,
    /// The commit count at the start of each batch in flight (see [`FreeIds::held`]).
    batches: Vec<u64>,
}

/// The free ids of one kind, in memory; each is also a key in the `meta` column family
/// (`storage::meta::free_key`), written in the same batch as the delete that frees it and the
/// insert that takes it again.
#[derive(Clone, Debug, Default)]
pub(crate) struct FreeIds {
    /// Ids that can be given out now (shared with transactions without a copy).
    ready: Arc<RoaringBitmap>,
    /// Ids freed while a batch was in flight, with the number of the commit that freed each. A
    /// batch decides pages on outcomes it computed ahead against the pages it read
    /// (`cluster::Memo`, keyed by id): an id freed after it started must not name another page
    /// before it has ended. An id joins `ready` once every batch in flight started after the
    /// commit that freed it (overlapping batches do not hold ids forever).
    held: Vec<(u64, u32)>,
}

impl FreeIds {
    /// Takes out the ids commit `number` gave out, and adds the ids it freed (held while
    /// `hold`: a batch is in flight).
    fn settle(&mut self, taken: &[u32], freed: &[u32], number: u64, hold: bool) {
        if taken.is_empty() && freed.is_empty() {
            return;
        }
        let ready = Arc::make_mut(&mut self.ready);
        for &t in taken {
            ready.remove(t);
        }
        for &f in freed {
            if hold {
                self.held.push((number, f));
            } else {
                ready.insert(f);
            }
        }
    }

    /// Makes ready the held ids freed before `oldest`, the start of the oldest batch in flight
    /// (all of them when none is).
    fn release(&mut self, oldest: Option<u64>) {
        if self.held.is_empty() {
            return;
        }
        let ready = Arc::make_mut(&mut self.ready);
        self.held.retain(|&(n, id)| {
            let go = oldest.is_none_or(|o| n <= o);
            if go {
                ready.insert(id);
            }
            !go
        });
    }

    /// Every free id, ready or held.
    pub(crate) fn all(&self) -> RoaringBitmap {
        let mut all = (*self.ready).clone();
        all.extend(self.held.iter().map(|&(_, id)| id));
        all
    }
}

/// The parts of the configuration that shape what is stored.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct StoredConfig {
    signature: SignatureConfig,
    simhash_max_distance: u32,
    representative: RepresentativePolicy,
    /// Absent (true) in configurations written before texts could be left out.
    #[serde(default = "stored_texts_default", skip_serializing_if = "is_true")]
    store_texts: bool,
    /// The word splitter of a word-based method ([`crate::methods::terms::WORDS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    words: Option<String>,
}

fn stored_texts_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl StoredConfig {
    /// Reads the configuration stored in the index at `path`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when there is no index at `path`, storage and corruption
    /// errors.
    fn read(path: &Path) -> Result<StoredConfig> {
        if !path.join("CURRENT").exists() {
            return Err(Error::InvalidArgument(format!(
                "no index at {}",
                path.display()
            )));
        }
        let v = storage::read_config(path)?;
        serde_json::from_slice(&v).map_err(|e| {
            Error::corruption(
                cf::META,
                meta::CONFIG,
                format!("bad configuration JSON: {e}"),
            )
        })
    }

    /// Options to open the existing index with: these stored parts, defaults for the rest,
    /// never creating one.
    fn existing(self) -> IndexOptions {
        IndexOptions {
            create_if_missing: false,
            ..self.options()
        }
    }

    /// Index options with these stored parts and defaults for the rest.
    fn options(self) -> IndexOptions {
        IndexOptions {
            signature: self.signature,
            simhash_max_distance: self.simhash_max_distance,
            representative: self.representative,
            store_texts: self.store_texts,
            ..IndexOptions::default()
        }
    }
}

/// Reason byte of an over-frequent fingerprint: carried by too many pages.
const FREQUENT_PAGES: u8 = b'P';
/// Reason byte of an over-frequent fingerprint: many pages on few hosts.
const FREQUENT_HOSTS: u8 = b'H';

/// A near-duplicate index in one RocksDB database. `Send + Sync`: share it with an `Arc`.
pub struct Index {
    db: DB,
    path: PathBuf,
    opts: IndexOptions,
    tables: SimhashTables,
    writer: Mutex<Counters>,
    /// Writes committed since the index was opened: batch ingest checks it to know whether
    /// postings it read ahead are still current.
    commits: AtomicU64,
    /// The number of commits known durable (the WAL synced after them; see
    /// [`Index::sync_wal`]).
    durable: AtomicU64,
    poisoned: AtomicBool,
    frequent: RwLock<rustc_hash::FxHashSet<[u8; 9]>>,
    /// The posting keys stored (with false positives): reads skip the others.
    posting_filter: filter::PostingFilter,
    /// Document frequencies by word, under a method on corpus statistics (the sizes of the
    /// postings of kind `T`, kept current by every commit; empty otherwise).
    df: RwLock<DocFreqs>,
    /// The cluster of every live page, by `DocId` ([`NO_CLUSTER`] for none): candidates are
    /// mapped to clusters without reading their records.
    page_cluster: RwLock<Vec<ClusterId>>,
    /// Where texts come from when they are not stored.
    source: Option<Arc<dyn TextSource>>,
    /// Opened with [`Index::open_read_only`]: every write is refused.
    read_only: bool,
    /// A format 2 index opened read-only: its free ids exist in memory only (`check()` compares
    /// with those).
    free_in_memory_only: AtomicBool,
    /// The database's place in a distributed index, when it is a partition of one: written by
    /// batch logs only.
    partition: RwLock<Option<Partition>>,
    /// The ids committed writes gave out, while recorded ([`Index::record_allocations`]).
    allocations: Mutex<Option<Vec<partition::Allocation>>>,
    /// Whether `allocations` records (read without its lock on every allocation).
    recording: AtomicBool,
    /// This process's registration of the directory (declared after `db`, so it is released
    /// after RocksDB has closed).
    registration: registry::Registration,
}

/// Whether a file name is one RocksDB writes in a database directory.
fn is_rocksdb_file(name: &str) -> bool {
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

/// A normalized text's length in characters, saturated to `u32`.
fn text_chars(text: &str) -> u32 {
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

/// Marks a `DocId` without a live page in [`Index::page_cluster`].
const NO_CLUSTER: ClusterId = ClusterId::MAX;

/// What candidate search needs of a page.
pub(crate) struct Probe<'p> {
    pub(crate) text: &'p str,
    /// The posting keys of the page under the index's method (see [`page_keys`]).
    pub(crate) keys: Vec<[u8; 9]>,
    /// Candidates come from the simhash tables too: always for the simhash methods; for LCS
    /// when the page has no sentence fingerprint (and, below, when its keys found nobody).
    pub(crate) simhash_always: bool,
    /// Candidates come from the simhash tables when the keys found nobody (LCS, SPEC §2.3).
    pub(crate) simhash_fallback: bool,
    /// What the method compares (see [`crate::Method::features`]).
    pub(crate) features: &'p Features,
    pub(crate) simhash: u64,
    pub(crate) content_hash: u128,
    pub(crate) codes: &'p [u32],
    /// Postings of the probe's keys read ahead of the writer (batch ingest), if still valid.
    pub(crate) known: Option<Known<'p>>,
}

impl<'p> Probe<'p> {
    /// The probe of a new page, under `method`.
    pub(crate) fn of(sig: &'p Signatures, method: &Method) -> Self {
        Probe::parts(
            &sig.text,
            &sig.fingerprints,
            &sig.sketch,
            &sig.features,
            (sig.simhash, sig.content_hash),
            &sig.codes,
            method,
        )
    }

    /// The probe of a page given by its parts (a stored page is re-placed from its text).
    pub(crate) fn parts(
        text: &'p str,
        fingerprints: &[u128],
        sketch: &[u128],
        features: &'p Features,
        (simhash, content_hash): (u64, u128),
        codes: &'p [u32],
        method: &Method,
    ) -> Self {
        Probe {
            text,
            keys: page_keys(fingerprints, sketch, features, method),
            simhash_always: method.uses_simhash() || (method.is_lcs() && fingerprints.is_empty()),
            simhash_fallback: method.is_lcs(),
            features,
            simhash,
            content_hash,
            codes,
            known: None,
        }
    }
}

/// Postings read for one page ahead of the writer, and the posting changes committed since by
/// the writer that uses them. Valid only while no other write has been committed since the
/// read: the batch checks the index's commit count before handing them over.
#[derive(Clone, Copy)]
pub(crate) struct Known<'p> {
    /// Postings as they were read, sorted by key.
    pub(crate) read: &'p [([u8; 9], RoaringBitmap)],
    /// Posting changes committed since, oldest first, with their commits' numbers.
    pub(crate) since: &'p [Committed],
}

/// A commit's number and the posting changes it committed.
pub(crate) type Committed = (u64, rustc_hash::FxHashMap<[u8; 9], Delta>);

/// A candidate search made ahead of the writer: it reads postings at `snapshot` and keeps them.
pub(crate) struct Ahead<'a, 's> {
    /// Where to read.
    pub(crate) snapshot: &'a rocksdb::Snapshot<'s>,
    /// Every posting read.
    pub(crate) keep: &'a mut Vec<([u8; 9], RoaringBitmap)>,
}

impl Known<'_> {
    /// The posting of a key as committed now, when it was read ahead.
    pub(crate) fn get(&self, key: &[u8; 9]) -> Option<RoaringBitmap> {
        let i = self.read.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        let mut bm = self.read[i].1.clone();
        for (_, changes) in self.since {
            if let Some(d) = changes.get(key) {
                d.apply(&mut bm);
            }
        }
        Some(bm)
    }
}

impl Index {
    /// Opens the index in `path`, creating it when `opts.create_if_missing` is set.
    ///
    /// # Errors
    /// [`Error::Storage`] when RocksDB cannot open it, [`Error::IncompatibleFormat`] for another
    /// on-disk format, [`Error::IncompatibleConfig`] when the stored signature parameters,
    /// simhash distance or representative policy differ from `opts`,
    /// [`Error::InvalidArgument`] for unusable options.
    pub fn open(path: impl AsRef<Path>, opts: IndexOptions) -> Result<Index> {
        Index::open_inner(path.as_ref(), opts, None)
    }

    fn open_inner(
        path: &Path,
        opts: IndexOptions,
        source: Option<Arc<dyn TextSource>>,
    ) -> Result<Index> {
        let path = path.to_path_buf();
        opts.signature.validate()?;
        opts.verify.validate()?;
        opts.chrome.validate()?;
        let tables = SimhashTables::new(opts.simhash_max_distance)?;
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
        // One handle per directory per process, whatever the path's spelling.
        let registration = registry::Registration::acquire(&path)?;
        let db = storage::open_db(&path, opts.create_if_missing, tables)?;
        Index::with_db(db, path, opts, source, registration, false)
    }

    /// The index over an opened database: checks the format and configuration and loads the
    /// in-memory state.
    fn with_db(
        db: DB,
        path: PathBuf,
        opts: IndexOptions,
        source: Option<Arc<dyn TextSource>>,
        registration: registry::Registration,
        read_only: bool,
    ) -> Result<Index> {
        let tables = SimhashTables::new(opts.simhash_max_distance)?;
        let mut ix = Index {
            db,
            path,
            opts,
            tables,
            writer: Mutex::new(Counters::default()),
            commits: AtomicU64::new(0),
            durable: AtomicU64::new(0),
            poisoned: AtomicBool::new(false),
            frequent: RwLock::new(rustc_hash::FxHashSet::default()),
            posting_filter: filter::PostingFilter::new(0, 0),
            df: RwLock::new(DocFreqs::new()),
            page_cluster: RwLock::new(Vec::new()),
            source,
            read_only,
            free_in_memory_only: AtomicBool::new(false),
            partition: RwLock::new(None),
            allocations: Mutex::new(None),
            recording: AtomicBool::new(false),
            registration,
        };
        let format = ix.check_or_write_meta()?;
        *ix.frequent.write() = ix.load_frequent()?;
        ix.posting_filter = ix.load_posting_filter()?;
        *ix.page_cluster.write() = ix.load_page_clusters()?;
        *ix.partition.write() = ix.load_partition()?;
        let mut counters = ix.load_counters()?;
        if format == storage::FORMAT_VERSION_2 {
            ix.upgrade_from_2(&mut counters)?;
        }
        if ix.opts.signature.method.uses_df() {
            let mut df = ix.load_df()?;
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
        let opts = StoredConfig::read(path)?.existing();
        let tables = SimhashTables::new(opts.simhash_max_distance)?;
        let db = storage::open_db_read_only(path, tables)?;
        if let Some(missing) = cf::ALL.iter().find(|n| db.cf_handle(n).is_none()) {
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
            None,
            registry::Registration::read_only(),
            true,
        )
    }

    /// True when the index was opened with [`Index::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
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

    /// The options the index was opened with.
    pub fn options(&self) -> &IndexOptions {
        &self.opts
    }

    /// The directory of the index.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn stored_config(&self) -> StoredConfig {
        StoredConfig {
            signature: self.opts.signature.clone(),
            simhash_max_distance: self.opts.simhash_max_distance,
            representative: self.opts.representative,
            store_texts: self.opts.store_texts,
            words: self
                .opts
                .signature
                .method
                .uses_words()
                .then(|| crate::methods::terms::WORDS.to_string()),
        }
    }

    /// Checks the stored format and configuration (writes them into a new index); returns the
    /// format version found.
    fn check_or_write_meta(&self) -> Result<u32> {
        let m = self.cf(cf::META);
        let get = |k: &[u8]| {
            self.db
                .get_cf(m, k)
                .map_err(|e| Error::storage("reading meta", e))
        };
        match get(meta::FORMAT)? {
            Some(v) => {
                let found = storage::decode_u32(cf::META, meta::FORMAT, &v)?;
                if found != FORMAT_VERSION && found != storage::FORMAT_VERSION_2 {
                    return Err(Error::IncompatibleFormat {
                        found,
                        supported: FORMAT_VERSION,
                    });
                }
                let stored = get(meta::CONFIG)?.ok_or_else(|| {
                    Error::corruption(cf::META, meta::CONFIG, "missing configuration")
                })?;
                let stored: serde_json::Value = serde_json::from_slice(&stored).map_err(|e| {
                    Error::corruption(
                        cf::META,
                        meta::CONFIG,
                        format!("bad configuration JSON: {e}"),
                    )
                })?;
                let wanted = serde_json::to_value(self.stored_config())
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

    /// Upgrades an index of format 2, where ids were never reused: every id below the
    /// allocators that no live page or cluster holds becomes free, and the insertion numbers
    /// start at the page allocator (a format 2 page's number is its id) — in one write.
    fn upgrade_from_2(&self, counters: &mut Counters) -> Result<()> {
        let m = self.cf(cf::META);
        let mut b = rocksdb::WriteBatch::default();
        let live_docs: RoaringBitmap = {
            let map = self.page_cluster.read();
            (0..map.len() as u32)
                .filter(|&i| map[i as usize] != NO_CLUSTER)
                .collect()
        };
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
        b.put_cf(m, meta::FORMAT, FORMAT_VERSION.to_be_bytes());
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
                "neardup: upgraded {} from format 2 to {FORMAT_VERSION} ({} free page ids, {} \
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
    fn load_free(&self, prefix: &[u8]) -> Result<RoaringBitmap> {
        let mut ids = RoaringBitmap::new();
        let it = self.db.iterator_cf(
            self.cf(cf::META),
            IteratorMode::From(prefix, Direction::Forward),
        );
        for item in it {
            let (k, _) = item.map_err(|e| Error::storage("reading free ids", e))?;
            let Some(id) = k.strip_prefix(prefix) else {
                break;
            };
            ids.insert(storage::decode_u32(cf::META, &k, id)?);
        }
        Ok(ids)
    }

    fn load_counters(&self) -> Result<Counters> {
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
        Ok(Counters {
            next_doc,
            next_cluster: u32_of(meta::NEXT_CLUSTER)?,
            live_docs: u64_of(meta::LIVE_DOCS)?,
            live_clusters: u64_of(meta::LIVE_CLUSTERS)?,
            next_seq: match get(meta::NEXT_SEQ)? {
                None => u64::from(next_doc),
                Some(_) => u64_of(meta::NEXT_SEQ)?,
            },
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

    fn load_page_clusters(&self) -> Result<Vec<ClusterId>> {
        let mut map = Vec::new();
        for item in self.db.iterator_cf(self.cf(cf::DOCS), IteratorMode::Start) {
            let (k, v) = item.map_err(|e| Error::storage("reading pages", e))?;
            let id = storage::decode_u32(cf::DOCS, &k, &k)? as usize;
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            if map.len() <= id {
                map.resize(id + 1, NO_CLUSTER);
            }
            map[id] = rec.cluster;
        }
        Ok(map)
    }

    /// The cluster of a live page, from the in-memory map.
    pub(crate) fn cluster_of(&self, id: DocId) -> Option<ClusterId> {
        self.page_cluster
            .read()
            .get(id as usize)
            .copied()
            .filter(|&c| c != NO_CLUSTER)
    }

    /// Postings of several keys in one batched read.
    pub(crate) fn postings(&self, keys: &[[u8; 9]]) -> Result<Vec<RoaringBitmap>> {
        self.postings_at(keys, None)
    }

    /// Postings of several keys in one batched read, at a snapshot when one is given.
    pub(crate) fn postings_at(
        &self,
        keys: &[[u8; 9]],
        snapshot: Option<&rocksdb::Snapshot<'_>>,
    ) -> Result<Vec<RoaringBitmap>> {
        // Only the keys the filter does not rule out are read.
        let maybe: Vec<bool> = keys
            .iter()
            .map(|k| self.posting_filter.may_contain(k))
            .collect();
        let wanted: Vec<&[u8; 9]> = keys
            .iter()
            .zip(&maybe)
            .filter_map(|(k, &m)| m.then_some(k))
            .collect();
        let read = self.multi_get_at(
            cf::POSTINGS,
            &wanted,
            snapshot,
            "reading postings",
            |key, v| match v {
                None => Ok(RoaringBitmap::new()),
                Some(v) => {
                    codec::decode_posting(v).map_err(|r| Error::corruption(cf::POSTINGS, key, r))
                }
            },
        )?;
        let mut read = read.into_iter();
        Ok(maybe
            .into_iter()
            .map(|m| {
                if m {
                    read.next().unwrap_or_default()
                } else {
                    RoaringBitmap::new()
                }
            })
            .collect())
    }

    /// The filter of stored posting keys, from a scan of the keys (see [`filter`]).
    fn load_posting_filter(&self) -> Result<filter::PostingFilter> {
        let budget = self.opts.posting_filter_bytes;
        if budget == 0 {
            return Ok(filter::PostingFilter::new(0, 0));
        }
        let h = self.cf(cf::POSTINGS);
        let estimate = self
            .db
            .property_int_value_cf(h, "rocksdb.estimate-num-keys")
            .ok()
            .flatten()
            .unwrap_or(0);
        let f = filter::PostingFilter::new(usize::try_from(estimate).unwrap_or(usize::MAX), budget);
        let mut it = self.db.raw_iterator_cf_opt(h, storage::scan_options());
        it.seek_to_first();
        while f.is_on() && it.valid() {
            if let Some(key) = it.key().and_then(|k| <&[u8; 9]>::try_from(k).ok()) {
                f.insert(key);
            }
            it.next();
        }
        it.status()
            .map_err(|e| Error::storage("reading the posting keys", e))?;
        Ok(f)
    }

    /// Values of several keys of column family `name` in one batched read, at a snapshot when
    /// one is given, each decoded by `decode(key, value)` (`None` for an absent key); `doing`
    /// says what a storage error interrupted.
    pub(crate) fn multi_get_at<K: AsRef<[u8]>, T>(
        &self,
        name: &str,
        keys: &[K],
        snapshot: Option<&rocksdb::Snapshot<'_>>,
        doing: &str,
        decode: impl Fn(&[u8], Option<&[u8]>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let h = self.cf(name);
        let mut ro = ReadOptions::default();
        if let Some(s) = snapshot {
            ro.set_snapshot(s);
        }
        let mut out = Vec::with_capacity(keys.len());
        for (key, v) in
            keys.iter()
                .zip(self.db.batched_multi_get_cf_opt(h, keys.iter(), false, &ro))
        {
            let v = v.map_err(|e| Error::storage(doing, e))?;
            out.push(decode(key.as_ref(), v.as_deref())?);
        }
        Ok(out)
    }

    /// Document frequencies from the postings of kind `T`: a word's is its posting's size.
    pub(crate) fn load_df(&self) -> Result<DocFreqs> {
        let mut df = DocFreqs::new();
        let mode = IteratorMode::From(&[kind::TERM], rocksdb::Direction::Forward);
        for item in self
            .db
            .iterator_cf_opt(self.cf(cf::POSTINGS), storage::scan_options(), mode)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading word postings", e))?;
            let Some(key) = <[u8; 9]>::try_from(k.as_ref()).ok() else {
                return Err(Error::corruption(cf::POSTINGS, &k, "key is not 9 bytes"));
            };
            let Some(word) = txn::term_of_key(&key) else {
                break;
            };
            let ids =
                codec::decode_posting(&v).map_err(|r| Error::corruption(cf::POSTINGS, &k, r))?;
            df.change(word, ids.len() as i64);
        }
        Ok(df)
    }

    /// Calls `f` with the document frequencies as `txr` sees them (the committed ones, with a
    /// write's pending changes); with none under a method that needs none.
    pub(crate) fn with_df<R>(&self, txr: Option<&Txn<'_>>, f: impl FnOnce(&dyn DocFreq) -> R) -> R {
        if !self.opts.signature.method.uses_df() {
            return f(&NoDocFreq);
        }
        let base = self.df.read();
        let view = Overlaid {
            base: &base,
            delta: txr.map(|t| &t.df_delta),
            docs: txr.map_or(base.docs(), |t| t.live_docs),
        };
        f(&view)
    }

    fn load_frequent(&self) -> Result<rustc_hash::FxHashSet<[u8; 9]>> {
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

    pub(crate) fn cf(&self, name: &str) -> &ColumnFamily {
        // Every column family in `cf::ALL` is created by `open_db`; a missing one is a bug.
        #[allow(clippy::expect_used)]
        self.db
            .cf_handle(name)
            .expect("column family created at open")
    }

    // ----- point reads -----

    /// Reads one value and decodes it; `None` when the key is absent.
    fn get_decoded<T>(
        &self,
        cf_name: &'static str,
        key: &[u8],
        what: &str,
        decode: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<Option<T>> {
        let v = self
            .db
            .get_pinned_cf(self.cf(cf_name), key)
            .map_err(|e| Error::storage(format!("reading {what}"), e))?;
        v.map(|v| decode(&v)).transpose()
    }

    pub(crate) fn key_id(&self, key: &str) -> Result<Option<DocId>> {
        let k = key.as_bytes();
        self.get_decoded(cf::KEYS, k, "a key", |v| {
            storage::decode_u32(cf::KEYS, k, v)
        })
    }

    pub(crate) fn doc(&self, id: DocId) -> Result<Option<DocRecord>> {
        let k = id_key(id);
        self.get_decoded(cf::DOCS, &k, "a page record", |v| {
            DocRecord::decode(cf::DOCS, &k, v)
        })
    }

    pub(crate) fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        let k = id_key(cid);
        self.get_decoded(cf::CLUSTERS, &k, "a cluster", |v| {
            ClusterRecord::decode(cf::CLUSTERS, &k, v)
        })
    }

    pub(crate) fn posting(&self, key: &[u8; 9]) -> Result<RoaringBitmap> {
        if !self.posting_filter.may_contain(key) {
            return Ok(RoaringBitmap::new());
        }
        let bm = self.get_decoded(cf::POSTINGS, key, "a posting", |v| {
            codec::decode_posting(v).map_err(|r| Error::corruption(cf::POSTINGS, key, r))
        })?;
        Ok(bm.unwrap_or_default())
    }

    /// The pages whose simhash is within the configured distance of `h`, with their distance,
    /// by id.
    pub(crate) fn simhash_near(&self, h: u64) -> Result<Vec<(DocId, u32)>> {
        let k = self.opts.simhash_max_distance;
        let mut out = Vec::new();
        for prefix in self.tables.block_keys(h) {
            let prefix = prefix.as_slice();
            let mut ro = ReadOptions::default();
            ro.set_prefix_same_as_start(true);
            let it = self.db.iterator_cf_opt(
                self.cf(cf::SIMHASH),
                ro,
                IteratorMode::From(prefix, Direction::Forward),
            );
            for item in it {
                let (key, _) = item.map_err(|e| Error::storage("reading simhash tables", e))?;
                if !key.starts_with(prefix) {
                    break;
                }
                let (_, s, id) = self
                    .tables
                    .decode(&key)
                    .ok_or_else(|| Error::corruption(cf::SIMHASH, &key, "key is not 13 bytes"))?;
                let d = hamming(s, h);
                if d <= k {
                    out.push((id, d));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    // ----- public look-ups -----

    /// The internal id of a key, if present.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn id_of(&self, key: &str) -> Result<Option<DocId>> {
        self.registration.check_process()?;
        self.key_id(key)
    }

    /// The cluster of a key and the key of its representative, if the key is present.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn representative_of(&self, key: &str) -> Result<Option<(ClusterId, String)>> {
        Ok(self.get(key)?.map(|r| (r.cluster, r.representative)))
    }

    /// The keys of a cluster's members in id order, `limit` of them from position `offset`;
    /// `None` when the cluster does not exist.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn cluster_members(
        &self,
        cluster: ClusterId,
        offset: usize,
        limit: usize,
    ) -> Result<Option<Vec<String>>> {
        self.registration.check_process()?;
        let snap = self.db.snapshot();
        let view = SnapshotView {
            ix: self,
            snap: &snap,
        };
        let k = id_key(cluster);
        let Some(v) = view.get(cf::CLUSTERS, &k)? else {
            return Ok(None);
        };
        let cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
        let mut keys = Vec::new();
        for id in cl.members.iter().skip(offset).take(limit) {
            keys.push(view.doc(id)?.key);
        }
        Ok(Some(keys))
    }

    /// Number of live pages.
    pub fn len(&self) -> u64 {
        self.writer.lock().live_docs
    }

    /// True when the index holds no page.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // ----- candidates and decisions -----

    /// Candidate pages of a probe: id → (shared fingerprints, exact content, simhash near).
    /// Without a transaction, `ahead` reads postings at its snapshot and keeps them.
    fn gather(
        &self,
        txn: Option<&mut Txn<'_>>,
        probe: &Probe<'_>,
        ahead: Option<Ahead<'_, '_>>,
    ) -> Result<rustc_hash::FxHashMap<DocId, (u32, bool)>> {
        let mut cands = rustc_hash::FxHashMap::<DocId, (u32, bool)>::default();
        let mut txn = txn;
        let freq = &self.opts.frequent;
        let method = &self.opts.signature.method;
        let lookup = if method.uses_df() {
            let keys = self.with_df(txn.as_deref(), |df| method.lookup_keys(probe.features, df));
            std::borrow::Cow::Owned(keys)
        } else {
            std::borrow::Cow::Borrowed(&probe.keys)
        };
        // The content hash's posting first, then the fingerprints', in one read.
        let keys: Vec<[u8; 9]> = {
            let frequent = self.frequent.read();
            std::iter::once(posting_key(kind::CONTENT, probe.content_hash))
                .chain(lookup.iter().copied().filter(|key| {
                    !frequent.contains(key)
                        && !txn.as_ref().is_some_and(|t| t.frequent_added.contains(key))
                }))
                .collect()
        };
        // With `sketch_fallback`, the sketch keys are read only when the content and fingerprint
        // keys found nobody (a second read), as the simhash tables are below.
        let (keys, sketch): (Vec<[u8; 9]>, Vec<[u8; 9]>) = if self.opts.sketch_fallback {
            let (sketch, other) = keys[1..].iter().partition(|k| k[0] == kind::SKETCH);
            (std::iter::once(keys[0]).chain(other).collect(), sketch)
        } else {
            (keys, Vec::new())
        };
        let mut ahead = ahead;
        for (round, keys) in [keys, sketch].into_iter().enumerate() {
            if round == 1 && (!cands.is_empty() || keys.is_empty()) {
                break;
            }
            // The first read leads with the content key.
            let with_content = round == 0;
            let postings = match txn.as_deref() {
                Some(t) => t.postings_known(&keys, probe.known)?,
                None => {
                    let read = self.postings_at(&keys, ahead.as_ref().map(|a| a.snapshot))?;
                    if let Some(a) = ahead.as_mut() {
                        a.keep
                            .extend(keys.iter().copied().zip(read.iter().cloned()));
                    }
                    read
                }
            };
            let mut postings = postings.into_iter();
            if with_content {
                for id in &postings.next().unwrap_or_default() {
                    cands.entry(id).or_default().1 = true;
                }
            }
            for (key, ids) in keys
                .into_iter()
                .skip(usize::from(with_content))
                .zip(postings)
            {
                let n = ids.len();
                // A word's posting is its document frequency: never marked over-frequent.
                let word = key[0] == kind::TERM;
                if !word && n > freq.max_pages {
                    if let Some(t) = txn.as_deref_mut() {
                        t.mark_frequent(key, FREQUENT_PAGES);
                    }
                    continue;
                }
                if !word && n > freq.few_hosts_pages && self.few_hosts(txn.as_deref(), &ids)? {
                    if let Some(t) = txn.as_deref_mut() {
                        t.mark_frequent(key, FREQUENT_HOSTS);
                    }
                    continue;
                }
                for id in &ids {
                    cands.entry(id).or_default().0 += 1;
                }
            }
        }
        // The simhash tables are the fallback of SPEC §2.3: for pages without sentence
        // fingerprints, or whose postings found nobody; and the simhash methods' own look-up,
        // where the closest pages rank first.
        if probe.simhash_always || (probe.simhash_fallback && cands.is_empty()) {
            let near = match txn.as_deref() {
                Some(t) => t.simhash_near(probe.simhash)?,
                None => self.simhash_near(probe.simhash)?,
            };
            let by_distance = self.opts.signature.method.uses_simhash();
            for (id, d) in near {
                let c = cands.entry(id).or_default();
                if by_distance {
                    c.0 = c.0.max(64 - d);
                }
            }
        }
        Ok(cands)
    }

    /// Do the pages of a posting sit on at most `few_hosts` hosts?
    /// Pages with no host tell nothing: the answer is "few hosts" only when more than
    /// `few_hosts_pages` of the pages have a host and those hosts are at most `few_hosts`.
    fn few_hosts(&self, txn: Option<&Txn<'_>>, ids: &RoaringBitmap) -> Result<bool> {
        let mut hosts: HashSet<String> = HashSet::new();
        let mut with_host = 0u64;
        for id in ids {
            let rec = match txn {
                Some(t) => t.doc(id)?,
                None => self.doc(id)?,
            };
            if let Some(rec) = rec.filter(|r| !r.host.is_empty()) {
                with_host += 1;
                hosts.insert(rec.host);
                if hosts.len() > self.opts.frequent.few_hosts {
                    return Ok(false);
                }
            }
        }
        Ok(with_host > self.opts.frequent.few_hosts_pages)
    }

    // ----- insert, query, delete -----

    /// Takes the writer lock, refusing when the index is poisoned (checked after the lock is
    /// held, so a writer that waited behind a failed commit does not write).
    fn lock_writer(&self) -> Result<parking_lot::MutexGuard<'_, Counters>> {
        let guard = self.writer.lock();
        self.check_writable()?;
        Ok(guard)
    }

    fn check_writable(&self) -> Result<()> {
        self.registration.check_process()?;
        self.refuse_if_read_only("a write")?;
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        Ok(())
    }

    /// Syncs the write-ahead log when the index syncs its writes (see
    /// [`IndexOptions::sync_writes`]): everything committed before is durable when it returns.
    /// A failed sync poisons the index (a write it acknowledged could be lost).
    ///
    /// A sync after a failed one must not acknowledge anything: the WAL may have lost what came
    /// before (after a failed fsync the kernel may drop the dirty pages), so once poisoned, this
    /// fails. A sync that another thread's sync already covered is skipped.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        if !self.opts.sync_writes {
            return Ok(());
        }
        let upto = self.commits.load(Ordering::Acquire);
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        if self.durable.load(Ordering::Acquire) >= upto {
            return Ok(());
        }
        let synced = self.db.flush_wal(true);
        if synced.is_ok() && self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        if let Err(e) = synced {
            self.poisoned.store(true, Ordering::Release);
            log::error!(
                "neardup: syncing the write-ahead log of {} failed ({e}); the index refuses \
                 writes until reopened",
                self.path.display()
            );
            return Err(Error::storage("syncing the write-ahead log", e));
        }
        self.durable.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    /// Commits a transaction in one atomic write. `sync` syncs the WAL before returning (the
    /// groups of a batch are written without it, and the batch syncs once at its end).
    /// Returns the commit's number (see [`Index::commits`]) and the posting changes it committed.
    fn commit(&self, mut txn: Txn<'_>, counters: &mut Counters, sync: bool) -> Result<Committed> {
        // Nothing is written yet when this fails: the index stays writable.
        txn.resolve_chrome()?;
        txn.finish();
        let frequent_added = std::mem::take(&mut txn.frequent_added);
        let frequent_deleted = txn.frequent_deleted();
        let df_delta = std::mem::take(&mut txn.df_delta);
        let mut ids = txn.take_ids();
        let journal = std::mem::take(&mut ids.journal);
        let mut wo = WriteOptions::default();
        wo.set_sync(sync && self.opts.sync_writes);
        let batch = std::mem::take(&mut txn.batch);
        // Into the filter before the write: no reader may see a posting the filter denies.
        for key in txn.posting_keys_added() {
            self.posting_filter.insert(key);
        }
        if let Err(e) = self.db.write_opt(batch, &wo) {
            self.poisoned.store(true, Ordering::Release);
            log::error!(
                "neardup: a write to {} failed ({e}); the index refuses writes until reopened",
                self.path.display()
            );
            return Err(Error::storage("committing a write batch", e));
        }
        let number = self.commits.fetch_add(1, Ordering::AcqRel) + 1;
        if !journal.is_empty() {
            if let Some(recorded) = self.allocations.lock().as_mut() {
                recorded.extend(journal);
            }
        }
        counters.next_doc = txn.next_doc;
        counters.next_cluster = txn.next_cluster;
        counters.live_docs = txn.live_docs;
        counters.live_clusters = txn.live_clusters;
        counters.next_seq = txn.next_seq;
        let hold = !counters.batches.is_empty();
        counters
            .free_docs
            .settle(&ids.taken_docs, &ids.freed_docs, number, hold);
        counters
            .free_clusters
            .settle(&ids.taken_clusters, &ids.freed_clusters, number, hold);
        if !frequent_added.is_empty() || !frequent_deleted.is_empty() {
            let mut frequent = self.frequent.write();
            frequent.extend(frequent_added);
            for key in &frequent_deleted {
                frequent.remove(key);
            }
        }
        if self.opts.signature.method.uses_df() {
            let mut df = self.df.write();
            for (word, by) in df_delta {
                df.change(word, by);
            }
            df.set_docs(txn.live_docs);
        }
        let changes = txn.page_changes();
        if !changes.is_empty() {
            let mut map = self.page_cluster.write();
            for (id, cluster) in changes {
                let i = id as usize;
                if map.len() <= i {
                    map.resize(i + 1, NO_CLUSTER);
                }
                map[i] = cluster.unwrap_or(NO_CLUSTER);
            }
        }
        Ok((number, txn.take_postings()))
    }

    /// Inserts a page: compares it with the pages already held, stores it, and joins it to the
    /// best verified cluster or founds a new one, in one atomic write. Inserting a key that is
    /// present replaces its page (delete and insert in the same write).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key, the page errors of [`Signatures::compute`],
    /// [`Error::Poisoned`] after a failed write, storage and corruption errors.
    pub fn insert(&self, page: &Page<'_>) -> Result<Verdict> {
        check_page(page)?;
        let t0 = Instant::now();
        let (sig, blocks) = self.signatures_of(page)?;
        let signature = t0.elapsed();
        self.with_prefetch(|| {
            if !self.opts.store_texts && self.source.is_some() {
                self.check_writable()?;
                // The texts this page will be verified against, asked of the text source before
                // the writer lock (the decision under it reuses them): a slow source then holds
                // up this thread only. Not for an unchanged recrawl (nothing is verified), and
                // never the page's own old version (a replace takes it out first). Errors
                // surface, if still relevant, under the lock.
                let old = match self.key_id(page.key)? {
                    Some(id) => self.doc(id)?.map(|r| (id, r)),
                    None => None,
                };
                let unchanged = old.as_ref().is_some_and(|(_, r)| {
                    r.content_hash == sig.content_hash && r.host == page.host
                });
                if !unchanged {
                    let _ = self.decide(
                        None,
                        &Probe::of(&sig, &self.opts.signature.method),
                        old.map(|(id, _)| id),
                        None,
                        &mut Timing::default(),
                        &mut Memo::default(),
                    );
                }
            }
            let mut counters = self.lock_writer()?;
            self.refuse_if_partition("an insert")?;
            let mut txn = Txn::new(self, &counters);
            let mut verdict = self.insert_in(
                &mut txn,
                page,
                &sig,
                blocks.as_ref(),
                &mut Memo::default(),
                None,
            )?;
            if verdict.unchanged {
                // An unchanged recrawl: nothing to write. The stored page may come from a
                // commit another thread has not synced yet: acknowledged only once durable
                // (nothing to do when it is).
                drop(counters);
                self.sync_wal()?;
                verdict.timing.signature = signature;
                return Ok(verdict);
            }
            let tw = Instant::now();
            self.commit(txn, &mut counters, false)?;
            // The WAL is synced after the writer lock is let go: the next writer decides and
            // writes meanwhile, and the page is acknowledged only once its write is durable.
            drop(counters);
            self.sync_wal()?;
            verdict.timing.write += tw.elapsed();
            verdict.timing.signature = signature;
            Ok(verdict)
        })
    }

    /// The verdict [`Index::insert`] would give, without storing anything.
    ///
    /// # Errors
    /// The page errors of [`Signatures::compute`], storage and corruption errors.
    ///
    /// The content comes without a host, so no site chrome learned for a host is dropped from it
    /// (see [`crate::ChromeConfig`]); [`Index::query_page`] drops it as an insert would.
    pub fn query(&self, content: Content<'_>) -> Result<Verdict> {
        self.registration.check_process()?;
        let t0 = Instant::now();
        let sig = Signatures::compute(content, &self.opts.signature)?;
        self.query_signed(&sig, t0.elapsed())
    }

    /// The verdict [`Index::insert`] would give this page, without storing anything: the site
    /// chrome learned for its host is dropped from it as an insert would drop it (the page's key
    /// only tells its own stored version apart from the host's other pages).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key or an overlong host, the page errors of
    /// [`Signatures::compute`], storage and corruption errors.
    pub fn query_page(&self, page: &Page<'_>) -> Result<Verdict> {
        self.registration.check_process()?;
        check_page(page)?;
        let t0 = Instant::now();
        let (sig, _) = self.signatures_of(page)?;
        self.query_signed(&sig, t0.elapsed())
    }

    fn query_signed(&self, sig: &Signatures, signature: Duration) -> Result<Verdict> {
        let mut timing = Timing {
            signature,
            ..Timing::default()
        };
        let (decision, cands) = self.decide(
            None,
            &Probe::of(sig, &self.opts.signature.method),
            None,
            None,
            &mut timing,
            &mut Memo::default(),
        )?;
        let mut v = Verdict {
            duplicate: false,
            doc: None,
            seq: None,
            cluster: None,
            representative: None,
            similar_to: None,
            resemble: 0.0,
            contain: 0.0,
            exact: false,
            identical_to: None,
            text_chars: text_chars(&sig.text),
            replaced: false,
            replaced_page: None,
            unchanged: false,
            no_main_text: decision.no_main_text,
            candidates: cands,
            verified: 0,
            timing,
        };
        if let Some(id) = decision.identical {
            v.identical_to = self.doc(id)?.map(|r| r.key);
        }
        if let Some(m) = &decision.best {
            v.cluster = Some(m.cluster);
            v.representative = self.doc(m.representative)?.map(|r| r.key);
        }
        if let Some(m) = decision.nearest {
            v.duplicate = true;
            v.similar_to = self.doc(m.against)?.map(|r| r.key);
            v.resemble = m.resemble;
            v.contain = m.contain;
            v.exact = m.exact;
        }
        v.verified = decision.verified;
        Ok(v)
    }

    /// Deletes a page. A member leaves its cluster; a deleted representative hands over to the
    /// member the policy prefers, and members no longer similar to the new representative are
    /// re-placed — all in one atomic write.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the key is absent, [`Error::Poisoned`] after a failed write,
    /// storage and corruption errors.
    pub fn delete(&self, key: &str) -> Result<Deletion> {
        let mut counters = self.lock_writer()?;
        self.refuse_if_partition("a delete")?;
        let mut txn = Txn::new(self, &counters);
        let id = txn
            .key_id(key)?
            .ok_or_else(|| Error::NotFound(key.to_string()))?;
        let deletion = self.delete_in(&mut txn, id)?;
        self.commit(txn, &mut counters, false)?;
        drop(counters);
        self.sync_wal()?;
        Ok(deletion)
    }

    fn insert_in(
        &self,
        txn: &mut Txn<'_>,
        page: &Page<'_>,
        sig: &Signatures,
        blocks: Option<&codec::PageBlocks>,
        memo: &mut Memo,
        known: Option<Known<'_>>,
    ) -> Result<Verdict> {
        let mut timing = Timing::default();
        if self.recording_allocations() {
            txn.current_key = Some(Arc::from(page.key));
        }
        let replaced = match txn.key_id(page.key)? {
            Some(old) => {
                if let Some(rec) = txn.doc(old)? {
                    // An unchanged recrawl: the stored verdict, nothing written.
                    if rec.content_hash == sig.content_hash && rec.host == page.host {
                        let method = &self.opts.signature.method;
                        let no_text = method.main_width(&sig.text) < self.opts.min_text_width;
                        return self.stored_verdict(txn, old, rec, no_text, timing);
                    }
                }
                Some(self.delete_in(txn, old)?)
            }
            None => None,
        };
        let probe = Probe {
            known,
            ..Probe::of(sig, &self.opts.signature.method)
        };
        let (decision, cands) = self.decide(Some(txn), &probe, None, None, &mut timing, memo)?;
        let identical_to = match decision.identical {
            Some(i) => txn.doc(i)?.map(|r| r.key),
            None => None,
        };
        let tw = Instant::now();
        let (id, seq) = txn.alloc_doc()?;
        let nearest = match &decision.nearest {
            Some(m) => txn.doc(m.against)?.map(|r| (m.against, r)),
            None => None,
        };
        let mut rec = DocRecord {
            key: page.key.to_string(),
            host: page.host.to_string(),
            time: page.time,
            cluster: 0,
            text_chars: text_chars(&sig.text),
            fingerprints: sig.fingerprints.len() as u16,
            simhash: sig.simhash,
            content_hash: sig.content_hash,
            codes: sig.codes.clone(),
            similar_to: nearest.as_ref().map_or(NO_DOC, |(i, _)| *i),
            seq,
            similar_seq: nearest.as_ref().map_or(0, |(_, r)| r.seq),
            resemble: decision.nearest.as_ref().map_or(0.0, |m| m.resemble as f32),
            contain: decision.nearest.as_ref().map_or(0.0, |m| m.contain as f32),
        };
        let rec_chars = rec.text_chars;
        // Under document frequencies the page's words count before it is placed: placing it
        // may judge members against it, and the page count (`alloc_doc`) counts it already.
        let words_first = self.opts.signature.method.uses_df();
        if words_first {
            for &key in &probe.keys {
                txn.posting_add(key, id);
            }
        }
        let placed = self.place(txn, id, &mut rec, &sig.text, decision.best.as_ref())?;
        txn.put_key(page.key, id);
        txn.put_doc(id, rec);
        txn.put_text(id, Arc::from(sig.text.as_str()), &probe.keys);
        if !words_first {
            for &key in &probe.keys {
                txn.posting_add(key, id);
            }
        }
        txn.posting_add(posting_key(kind::CONTENT, sig.content_hash), id);
        txn.simhash_add(sig.simhash, id);
        if let Some(blocks) = blocks {
            txn.chrome_add(id, blocks);
        }
        timing.write = tw.elapsed();
        let representative = txn.doc(placed.representative)?.map(|r| r.key);
        let (similar_to, resemble, contain, exact) = match &decision.nearest {
            Some(m) => (nearest.map(|(_, r)| r.key), m.resemble, m.contain, m.exact),
            None => (None, 0.0, 0.0, false),
        };
        Ok(Verdict {
            duplicate: decision.nearest.is_some(),
            doc: Some(id),
            seq: Some(seq),
            cluster: Some(placed.cluster),
            representative,
            similar_to,
            resemble,
            contain,
            exact,
            identical_to,
            text_chars: rec_chars,
            replaced: replaced.is_some(),
            replaced_page: replaced.map(Box::new),
            unchanged: false,
            no_main_text: decision.no_main_text,
            candidates: cands,
            verified: decision.verified,
            timing,
        })
    }

    /// The key of the held page of lowest id with content hash `hash` other than `except` (a stored
    /// page's own verdict; a new page's comes with its candidates, `Decision::identical`).
    fn identical_in(&self, txn: &Txn<'_>, hash: u128, except: DocId) -> Result<Option<String>> {
        let key = posting_key(kind::CONTENT, hash);
        let ids = txn.postings_known(&[key], None)?.pop().unwrap_or_default();
        match ids.iter().find(|&i| i != except) {
            Some(i) => Ok(txn.doc(i)?.map(|r| r.key)),
            None => Ok(None),
        }
    }

    /// The verdict of page `id` as stored (an unchanged re-insert of its key).
    fn stored_verdict(
        &self,
        txn: &Txn<'_>,
        id: DocId,
        rec: DocRecord,
        no_main_text: bool,
        timing: Timing,
    ) -> Result<Verdict> {
        let cluster = txn.cluster(rec.cluster)?;
        let representative = match &cluster {
            Some(c) => txn.doc(c.representative)?.map(|r| r.key),
            None => None,
        };
        let similar = similar_of(&rec, |i| txn.doc(i))?;
        let (resemble, contain, exact) = match &similar {
            Some(s) => (
                f64::from(rec.resemble),
                f64::from(rec.contain),
                s.content_hash == rec.content_hash,
            ),
            None => (0.0, 0.0, false),
        };
        let similar_to = similar.map(|r| r.key);
        let identical_to = if no_main_text {
            None
        } else {
            self.identical_in(txn, rec.content_hash, id)?
        };
        Ok(Verdict {
            duplicate: similar_to.is_some(),
            doc: Some(id),
            seq: Some(rec.seq),
            cluster: Some(rec.cluster),
            representative,
            similar_to,
            resemble,
            contain,
            exact,
            identical_to,
            text_chars: rec.text_chars,
            replaced: false,
            replaced_page: None,
            unchanged: true,
            no_main_text,
            candidates: 0,
            verified: 0,
            timing,
        })
    }

    fn delete_in(&self, txn: &mut Txn<'_>, id: DocId) -> Result<Deletion> {
        let rec = txn.doc(id)?.ok_or_else(|| {
            Error::corruption(cf::DOCS, &id_key(id), "key points at a missing page")
        })?;
        for key in txn.posting_keys(id)?.unwrap_or_default() {
            txn.posting_remove(key, id);
        }
        txn.posting_remove(posting_key(kind::CONTENT, rec.content_hash), id);
        if let Some(blocks) = txn.page_blocks(id)? {
            txn.chrome_remove(id, &blocks);
        }
        txn.forget_doc(id, &rec);
        let left = self.leave_cluster(txn, id, rec.cluster)?;
        let key_of = |i: DocId| -> Result<String> {
            txn.doc(i)?.map(|r| r.key).ok_or_else(|| {
                Error::corruption(cf::DOCS, &id_key(i), "a cluster member is missing")
            })
        };
        let mut moved = Vec::with_capacity(left.moved.len());
        for (m, placed) in &left.moved {
            // The cluster's representative after every move (a member placed later may have
            // taken it over).
            let rep = match txn.cluster(placed.cluster)? {
                Some(c) => c.representative,
                None => placed.representative,
            };
            moved.push(Moved {
                key: key_of(*m)?,
                cluster: placed.cluster,
                representative: key_of(rep)?,
            });
        }
        Ok(Deletion {
            doc: id,
            cluster: rec.cluster,
            was_representative: left.was_representative,
            representative: left.representative.map(key_of).transpose()?,
            moved,
            key: rec.key,
        })
    }

    // ----- maintenance -----

    /// Writes a consistent snapshot of the index (a RocksDB checkpoint) to `dir`, which must not
    /// exist. The index stays in use meanwhile.
    ///
    /// # Errors
    /// [`Error::Storage`] when the checkpoint cannot be made.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        self.registration.check_process()?;
        let cp = rocksdb::checkpoint::Checkpoint::new(&self.db)
            .map_err(|e| Error::storage("preparing a checkpoint", e))?;
        cp.create_checkpoint(dir.as_ref()).map_err(|e| {
            Error::storage(
                format!("writing a checkpoint to {}", dir.as_ref().display()),
                e,
            )
        })
    }

    fn refuse_if_read_only(&self, what: &'static str) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone(), what));
        }
        Ok(())
    }

    /// Compacts every column family down to the last level.
    ///
    /// # Errors
    /// [`Error::Storage`] when flushing fails, [`Error::ReadOnly`].
    pub fn compact(&self) -> Result<()> {
        self.registration.check_process()?;
        self.refuse_if_read_only("compaction")?;
        for name in cf::ALL {
            let h = self.cf(name);
            self.db
                .flush_cf(h)
                .map_err(|e| Error::storage("flushing", e))?;
            // Force the bottommost level too: files already there are rewritten, so every
            // merge operand is folded and every block gets the bottommost compression.
            let mut co = CompactOptions::default();
            co.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
            self.db
                .compact_range_cf_opt(h, None::<&[u8]>, None::<&[u8]>, &co);
        }
        Ok(())
    }

    /// Flushes memtables to disk (the WAL already makes writes durable against a crash of the
    /// process; this makes the SST files reflect them).
    ///
    /// # Errors
    /// [`Error::Storage`] when flushing fails, [`Error::ReadOnly`].
    pub fn flush(&self) -> Result<()> {
        self.registration.check_process()?;
        self.refuse_if_read_only("a flush")?;
        for name in cf::ALL {
            self.db
                .flush_cf(self.cf(name))
                .map_err(|e| Error::storage("flushing", e))?;
        }
        Ok(())
    }

    /// Figures about the index.
    ///
    /// # Errors
    /// Storage errors while reading properties.
    pub fn stats(&self) -> Result<Stats> {
        self.registration.check_process()?;
        let (live_docs, live_clusters, page_ids, cluster_ids) = {
            let c = self.writer.lock();
            (c.live_docs, c.live_clusters, c.next_doc, c.next_cluster)
        };
        let mut bytes = Vec::new();
        for name in cf::ALL {
            let h = self.cf(name);
            let prop = |p: &str| -> Result<u64> {
                Ok(self
                    .db
                    .property_int_value_cf(h, p)
                    .map_err(|e| Error::storage("reading properties", e))?
                    .unwrap_or(0))
            };
            bytes.push((
                name.to_string(),
                prop("rocksdb.total-sst-files-size")? + prop("rocksdb.cur-size-all-mem-tables")?,
            ));
        }
        let mut frequent = Vec::new();
        for item in self
            .db
            .iterator_cf(self.cf(cf::FREQUENT), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading frequent fingerprints", e))?;
            let reason = if v.first() == Some(&FREQUENT_HOSTS) {
                "few_hosts"
            } else {
                "pages"
            };
            frequent.push((crate::error::hex(&k), reason.to_string()));
        }
        const BUCKETS: [(u64, &str); 6] = [
            (1, "1"),
            (2, "2"),
            (5, "3-5"),
            (10, "6-10"),
            (50, "11-50"),
            (u64::MAX, "51-"),
        ];
        let mut sizes = [0u64; 6];
        for item in self
            .db
            .iterator_cf(self.cf(cf::CLUSTERS), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading clusters", e))?;
            let n = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?.members.len();
            if let Some(b) = BUCKETS.iter().position(|(max, _)| n <= *max) {
                sizes[b] += 1;
            }
        }
        let cluster_sizes = BUCKETS
            .iter()
            .zip(sizes)
            .map(|((_, name), n)| (name.to_string(), n))
            .collect();
        let mut chrome = ChromeStats::default();
        for item in self
            .db
            .iterator_cf(self.cf(cf::CHROME), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading block statistics", e))?;
            match storage::chrome_key::decode(&k) {
                Some(storage::chrome_key::Decoded::Host(_)) => chrome.hosts += 1,
                Some(storage::chrome_key::Decoded::Block(..)) => chrome.blocks += 1,
                Some(storage::chrome_key::Decoded::Page(_)) => {
                    let b = codec::PageBlocks::decode(cf::CHROME, &k, &v)?;
                    chrome.pages_counted += 1;
                    chrome.pages_stripped += u64::from(!b.dropped.is_empty());
                    chrome.blocks_dropped += b.dropped.len() as u64;
                }
                None => return Err(Error::corruption(cf::CHROME, &k, "malformed key")),
            }
        }
        Ok(Stats {
            chrome,
            pages: live_docs,
            clusters: live_clusters,
            page_ids,
            cluster_ids,
            frequent,
            bytes,
            cluster_sizes,
            posting_filter_bytes: self.posting_filter.bytes() as u64,
        })
    }

    /// Calls `f(key, target_key)` for every page, in id order: the input of the bench's
    /// scorers. The target is the page this one was judged a near duplicate of — the closest page
    /// it verified against when it was placed (see [`Verdict::similar_to`]) — or, when that page
    /// has been deleted since or there was none, its cluster's representative (the page itself
    /// when it leads its cluster). Every target is a page the key verified against, or the
    /// representative of its cluster, which it verified against too.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn export(&self, mut f: impl FnMut(&str, &str)) -> Result<()> {
        self.registration.check_process()?;
        // One snapshot for the walk and the look-ups: a merge running meanwhile changes nothing
        // that the export sees.
        let snap = self.db.snapshot();
        let view = SnapshotView {
            ix: self,
            snap: &snap,
        };
        let mut reps: HashMap<ClusterId, String> = HashMap::new();
        for item in snap.iterator_cf(self.cf(cf::DOCS), IteratorMode::Start) {
            let (k, v) = item.map_err(|e| Error::storage("reading pages", e))?;
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            if let Some(near) = similar_of(&rec, |i| view.doc_if_live(i))? {
                f(&rec.key, &near.key);
                continue;
            }
            let rep = match reps.entry(rec.cluster) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let cl = view.cluster(rec.cluster)?;
                    e.insert(view.doc(cl.representative)?.key)
                }
            };
            f(&rec.key, rep);
        }
        Ok(())
    }

    /// Calls `f(cluster, representative_key, member_keys)` for every cluster, in cluster-id
    /// order, members in id order, from one consistent snapshot.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn export_clusters(&self, mut f: impl FnMut(ClusterId, &str, &[String])) -> Result<()> {
        self.registration.check_process()?;
        let snap = self.db.snapshot();
        let view = SnapshotView {
            ix: self,
            snap: &snap,
        };
        for item in snap.iterator_cf(self.cf(cf::CLUSTERS), IteratorMode::Start) {
            let (k, v) = item.map_err(|e| Error::storage("reading clusters", e))?;
            let cid = storage::decode_u32(cf::CLUSTERS, &k, &k)?;
            let cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            let mut members = Vec::with_capacity(cl.members.len() as usize);
            let mut rep = String::new();
            for id in cl.members.iter() {
                let rec = view.doc(id)?;
                if id == cl.representative {
                    rep = rec.key.clone();
                }
                members.push(rec.key);
            }
            f(cid, &rep, &members);
        }
        Ok(())
    }
}

/// Point reads of live records through one RocksDB snapshot.
struct SnapshotView<'a> {
    ix: &'a Index,
    snap: &'a rocksdb::Snapshot<'a>,
}

impl SnapshotView<'_> {
    fn get(&self, name: &'static str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.snap
            .get_cf(self.ix.cf(name), key)
            .map_err(|e| Error::storage("reading a snapshot", e))
    }

    /// A live page's record; its absence is corruption.
    fn doc(&self, id: DocId) -> Result<DocRecord> {
        let k = id_key(id);
        let v = self
            .get(cf::DOCS, &k)?
            .ok_or_else(|| Error::corruption(cf::DOCS, &k, "a cluster member is missing"))?;
        DocRecord::decode(cf::DOCS, &k, &v)
    }

    /// A page's record, `None` when no page has this id.
    fn doc_if_live(&self, id: DocId) -> Result<Option<DocRecord>> {
        let k = id_key(id);
        self.get(cf::DOCS, &k)?
            .map(|v| DocRecord::decode(cf::DOCS, &k, &v))
            .transpose()
    }

    /// A live page's cluster; its absence is corruption.
    fn cluster(&self, cid: ClusterId) -> Result<ClusterRecord> {
        let k = id_key(cid);
        let v = self.get(cf::CLUSTERS, &k)?.ok_or_else(|| {
            Error::corruption(cf::CLUSTERS, &k, "cluster of a live page is missing")
        })?;
        ClusterRecord::decode(cf::CLUSTERS, &k, &v)
    }
}

/// The page `rec` was judged similar to, while it is held: its id may have been given to
/// another page since, told apart by the insertion number.
fn similar_of(
    rec: &DocRecord,
    doc: impl FnOnce(DocId) -> Result<Option<DocRecord>>,
) -> Result<Option<DocRecord>> {
    if rec.similar_to == NO_DOC {
        return Ok(None);
    }
    Ok(doc(rec.similar_to)?.filter(|r| r.seq == rec.similar_seq))
}

/// Sentence fingerprints and sketch recomputed from a stored normalized text (for deletes,
/// re-placement and checks).
pub(crate) fn signature_sets_of(text: &str, cfg: &SignatureConfig) -> (Vec<u128>, Vec<u128>) {
    fingerprints_and_sketch(text, &split_sentences(text), cfg, cfg.sketch_size as usize)
}

/// The signature of a stored normalized text under the configured method (recomputed): its
/// sentence fingerprints and sketch (LCS only; empty for the other methods) and the method's
/// features.
pub(crate) fn text_signature(
    text: &str,
    cfg: &SignatureConfig,
) -> (Vec<u128>, Vec<u128>, Features) {
    let (fps, sketch) = if cfg.method.is_lcs() {
        signature_sets_of(text, cfg)
    } else {
        (Vec::new(), Vec::new())
    };
    (fps, sketch, cfg.method.features(text))
}

/// The posting keys of a normalized text under the configured method (recomputed).
pub(crate) fn posting_keys_of_text(text: &str, cfg: &SignatureConfig) -> Vec<[u8; 9]> {
    let (fps, sketch, features) = text_signature(text, cfg);
    page_keys(&fps, &sketch, &features, &cfg.method)
}

/// The posting keys of a page under `method`: its sentence fingerprints and sketch for LCS,
/// the method's own keys otherwise.
pub(crate) fn page_keys(
    fingerprints: &[u128],
    sketch: &[u128],
    features: &Features,
    method: &Method,
) -> Vec<[u8; 9]> {
    if method.is_lcs() {
        signature_keys(fingerprints, sketch)
    } else {
        method.keys(features)
    }
}

/// The posting keys of a page's fingerprints and sketch.
pub(crate) fn signature_keys(fingerprints: &[u128], sketch: &[u128]) -> Vec<[u8; 9]> {
    fingerprints
        .iter()
        .map(|fp| posting_key(kind::SENTENCE, *fp))
        .chain(sketch.iter().map(|d| posting_key(kind::SKETCH, *d)))
        .collect()
}

/// The host part of a URL (`https://a.b/c` → `a.b`; a string without a scheme is taken from its
/// start), for pages handed in without a host.
pub fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or("")
}

/// The longest host accepted, in bytes.
const MAX_HOST: usize = 255;

fn check_page(page: &Page<'_>) -> Result<()> {
    check_key(page.key)?;
    if page.host.len() > MAX_HOST {
        return Err(Error::InvalidArgument(format!(
            "the host is {} bytes, the limit is {MAX_HOST}",
            page.host.len()
        )));
    }
    Ok(())
}

fn check_key(key: &str) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::FreeIds;

    #[test]
    fn held_ids_wait_for_the_batches_that_started_before_they_were_freed() {
        let mut f = FreeIds::default();
        // Commit 3 frees 7 with no batch in flight: ready at once.
        f.settle(&[], &[7], 3, false);
        assert!(f.ready.contains(7));
        // Commits 5 and 9 free 8 and 9 while batches are in flight.
        f.settle(&[], &[8], 5, true);
        f.settle(&[], &[9], 9, true);
        assert_eq!(f.all().iter().collect::<Vec<_>>(), vec![7, 8, 9]);
        // The oldest batch in flight started at commit 6: 8 (freed at 5) is safe, 9 is not.
        f.release(Some(6));
        assert!(f.ready.contains(8) && !f.ready.contains(9));
        // No batch in flight: everything.
        f.release(None);
        assert!(f.ready.contains(9) && f.held.is_empty());
        // Taken ids leave.
        f.settle(&[7, 8], &[], 10, false);
        assert_eq!(f.all().iter().collect::<Vec<_>>(), vec![9]);
    }
}
