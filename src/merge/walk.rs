//! A scratch index's state read back one operation at a time (SCALEOUT §5 S4.5): the state log
//! ([`Index::state_log`]) and the diff a work unit returns ([`Index::state_diff_log`]), both
//! from one walk over the column families in address order.
//!
//! The diff of two whole state logs ([`super::state_diff`]) holds both states decoded, and a
//! work unit of a million-page day (one component chained by shared clauses, SCALEOUT §7.1)
//! held tens of gigabytes that way; [`Index::state_diff_log`] holds the state it started from
//! (the seed's) and the bytes of the log it writes, and reads the index twice. With the state it
//! started from on disk ([`Index::state_file`], in the order the diff reads it),
//! [`Index::state_diff_file_since`] reads that file in step with the two walks and holds a bit
//! an operation of it: a unit seeded with most of a large index keeps it on disk.

use std::borrow::Cow;

use roaring::RoaringBitmap;
use rocksdb::{IteratorMode, SnapshotWithThreadMode, DB};

use super::log::{LogCounter, LogOp};
use super::logfile::LogWriter;
use super::logio::{verify_log_file, LogFileOps, LogFileWriter, OpSink};
use super::scratch::ScratchIds;
use super::state::{address, count_change, posting_change, undo, StateDiff};
use crate::index::Index;
use crate::storage::codec::{self, ClusterId, ClusterRecord, DocId, DocRecord, PageBlocks};
use crate::storage::merge::Delta;
use crate::storage::{self, cf, chrome_key, meta};
use crate::{Error, Result};

/// The operation tags of a state log in address order (the first byte of [`address`]): postings,
/// simhash entries, over-frequent keys, keys, pages, texts, clusters, chrome (a page's blocks, a
/// host's pages, a block's pages), free page ids, free cluster ids.
const ADDRESS_ORDER: [u8; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/// The order [`super::state_diff`] writes a diff's values in: everything but postings, then the
/// postings.
const DIFF_ORDER: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0];

/// Where an address comes in [`DIFF_ORDER`].
fn diff_rank(address: &[u8]) -> (bool, &[u8]) {
    (address.first() == Some(&0), address)
}

type Snapshot<'a> = SnapshotWithThreadMode<'a, DB>;

/// A sink that maps each operation to the standing index's ids before passing it on.
struct Mapped<'a, S>(&'a mut S, &'a ScratchIds);

impl<S: OpSink<u64>> OpSink for Mapped<'_, S> {
    fn put(&mut self, op: &LogOp) -> Result<()> {
        self.0.put(&self.1.to_global(op.clone())?)
    }
}

/// An index's counters at a snapshot.
#[derive(Clone, Copy)]
struct Counters {
    next_doc: DocId,
    next_cluster: ClusterId,
    live_docs: u64,
    live_clusters: u64,
    next_seq: u64,
}

impl Counters {
    /// As a state log lists them.
    fn ops(self) -> [LogOp; 5] {
        [
            LogOp::Counter(LogCounter::NextDoc(self.next_doc)),
            LogOp::Counter(LogCounter::NextCluster(self.next_cluster)),
            LogOp::Counter(LogCounter::LiveDocs(self.live_docs)),
            LogOp::Counter(LogCounter::LiveClusters(self.live_clusters)),
            LogOp::Counter(LogCounter::NextSeq(self.next_seq)),
        ]
    }
}

impl Index {
    /// The snapshot a state is read from, with the counters of that moment.
    fn state_snapshot(&self) -> Result<(Snapshot<'_>, Counters)> {
        self.registration.check_process()?;
        // Commits happen under the writer lock: the snapshot and the counters agree.
        let c = self.writer.lock();
        let counters = Counters {
            next_doc: c.next_doc,
            next_cluster: c.next_cluster,
            live_docs: c.live_docs,
            live_clusters: c.live_clusters,
            next_seq: c.next_seq,
        };
        Ok((self.db.snapshot(), counters))
    }

    /// The log that gives an empty index this index's state: its counters, then every key of
    /// every column family but `meta`'s other keys (free ids included) in address order
    /// (postings, simhash entries, over-frequent keys, keys, pages, texts, clusters, chrome,
    /// free page ids, free cluster ids; each by key), read from one snapshot. Two states are
    /// equal when their logs are; [`super::state_diff`] compares two.
    ///
    /// # Errors
    /// Storage errors, [`Error::Corruption`] for a value that does not decode.
    pub fn state_log(&self) -> Result<Vec<LogOp>> {
        let (snap, counters) = self.state_snapshot()?;
        let mut log: Vec<LogOp> = counters.ops().into();
        self.walk_state(&snap, &ADDRESS_ORDER, &mut |op| {
            log.push(op);
            Ok(())
        })?;
        Ok(log)
    }

    /// The bytes of the batch log [`super::state_diff`] of `before` (this index's
    /// [`Index::state_log`] taken earlier, when it was seeded) and its state now gives, made
    /// into a log for a standing index whose live counts were `live_docs` and `live_clusters`
    /// ([`super::StateDiff::into_log`], then [`super::encode_log`]) — the same bytes, without
    /// holding the state now: it is read twice from one snapshot, once to find which of
    /// `before`'s keys are still held, once to write the log (issue #34: a work unit of a
    /// million-page day).
    ///
    /// # Errors
    /// Storage errors, [`Error::Corruption`] for a value that does not decode.
    pub fn state_diff_log(
        &self,
        before: &[LogOp],
        live_docs: u64,
        live_clusters: u64,
    ) -> Result<Vec<u8>> {
        let mut w = LogWriter::new();
        self.state_diff_into(&Before::slice(before), live_docs, live_clusters, &mut w)?;
        Ok(w.finish())
    }

    /// [`Index::state_diff_log`] written to the file at `path` as it is read, never held in
    /// memory (what a work unit of a million-page day writes). Returns the log's size in bytes.
    ///
    /// # Errors
    /// As [`Index::state_diff_log`]; [`Error::Io`].
    pub fn state_diff_file(
        &self,
        before: &[LogOp],
        live_docs: u64,
        live_clusters: u64,
        path: &std::path::Path,
    ) -> Result<u64> {
        let mut w = LogFileWriter::create(path)?;
        self.state_diff_into(&Before::slice(before), live_docs, live_clusters, &mut w)?;
        w.finish()
    }

    /// [`Index::state_diff_file`] of a scratch index seeded densely ([`ScratchIds::from_seed`]):
    /// each operation mapped to the standing index's global ids ([`ScratchIds::to_global`]) as
    /// it is written, in a log of `u64` ids — the operations a scratch index that kept the
    /// standing ids would write, each one the same.
    ///
    /// # Errors
    /// As [`Index::state_diff_file`]; [`Error::Full`] when a new id passes the id space.
    pub fn state_diff_file_mapped(
        &self,
        before: &[LogOp],
        live_docs: u64,
        live_clusters: u64,
        path: &std::path::Path,
        ids: &ScratchIds,
    ) -> Result<u64> {
        let mut w = LogFileWriter::<u64>::create(path)?;
        self.state_diff_into(
            &Before::slice(before),
            live_docs,
            live_clusters,
            &mut Mapped(&mut w, ids),
        )?;
        w.finish()
    }

    /// [`Index::state_diff_log`] of a scratch index seeded densely, in the standing index's ids
    /// (see [`Index::state_diff_file_mapped`]).
    ///
    /// # Errors
    /// As [`Index::state_diff_file_mapped`].
    pub fn state_diff_log_mapped(
        &self,
        before: &[LogOp],
        live_docs: u64,
        live_clusters: u64,
        ids: &ScratchIds,
    ) -> Result<Vec<u8>> {
        let mut w = LogWriter::<u64>::new();
        self.state_diff_into(
            &Before::slice(before),
            live_docs,
            live_clusters,
            &mut Mapped(&mut w, ids),
        )?;
        Ok(w.finish())
    }

    /// This index's state log written to the file at `path` (a log of `u32` ids) in the order
    /// a diff reads it: every non-posting operation in address order, the counters, then the
    /// postings — what a work unit keeps of the state it was seeded with, on disk, not in
    /// memory ([`Index::state_diff_file_since`]; issue #34: a unit held about 90 KB a
    /// standing page its component reached, most of it this state decoded). Returns the
    /// file's size in bytes.
    ///
    /// # Errors
    /// Storage errors, [`Error::Corruption`] for a value that does not decode; [`Error::Io`].
    pub fn state_file(&self, path: &std::path::Path) -> Result<u64> {
        let (snap, counters) = self.state_snapshot()?;
        let mut w = LogFileWriter::create(path)?;
        self.walk_state(&snap, &DIFF_ORDER[..DIFF_ORDER.len() - 1], &mut |op| {
            w.put(&op)
        })?;
        for op in counters.ops() {
            w.put(&op)?;
        }
        self.walk_state(&snap, &DIFF_ORDER[DIFF_ORDER.len() - 1..], &mut |op| {
            w.put(&op)
        })?;
        w.finish()
    }

    /// [`Index::state_diff_file`] (with `ids`, [`Index::state_diff_file_mapped`]) of the state
    /// [`Index::state_file`] wrote to the file `before`, read from it as the diff goes, never
    /// held: the same log, byte for byte, in memory of a bit an operation of `before`.
    ///
    /// # Errors
    /// As [`Index::state_diff_file`]; [`Error::InvalidArgument`] when `before` is not in the
    /// order [`Index::state_file`] writes (a log file of another kind); a damaged file as
    /// [`super::read_log_file`] refuses it.
    pub fn state_diff_file_since(
        &self,
        before: &std::path::Path,
        live_docs: u64,
        live_clusters: u64,
        path: &std::path::Path,
        ids: Option<&ScratchIds>,
    ) -> Result<u64> {
        verify_log_file(before)?;
        let before = Before::File(before);
        match ids {
            Some(ids) => {
                let mut w = LogFileWriter::<u64>::create(path)?;
                self.state_diff_into(&before, live_docs, live_clusters, &mut Mapped(&mut w, ids))?;
                w.finish()
            }
            None => {
                let mut w = LogFileWriter::create(path)?;
                self.state_diff_into(&before, live_docs, live_clusters, &mut w)?;
                w.finish()
            }
        }
    }

    /// The operations of [`Index::state_diff_log`], into `w`: `before` read three times, in
    /// step with two walks of the state now (each of them in [`DIFF_ORDER`]).
    fn state_diff_into(
        &self,
        before: &Before<'_>,
        live_docs: u64,
        live_clusters: u64,
        w: &mut impl OpSink,
    ) -> Result<()> {
        let (snap, counters) = self.state_snapshot()?;
        // `before`'s live counts, how many operations it has and where its postings start.
        let (mut n, mut first_posting) = (0usize, None);
        let (mut old_docs, mut old_clusters) = (None, None);
        let mut last: Option<Cow<'_, [u8]>> = None;
        for item in before.ops()? {
            let (a, op) = item?;
            if last.as_ref().is_some_and(|l| diff_rank(l) >= diff_rank(&a)) {
                return Err(Error::InvalidArgument(
                    "the state a diff starts from is not in the order Index::state_file writes"
                        .into(),
                ));
            }
            if a.first() == Some(&0) && first_posting.is_none() {
                first_posting = Some(n);
            }
            match *op {
                LogOp::Counter(LogCounter::LiveDocs(c)) => old_docs = old_docs.or(Some(c)),
                LogOp::Counter(LogCounter::LiveClusters(c)) => {
                    old_clusters = old_clusters.or(Some(c))
                }
                _ => {}
            }
            n += 1;
            last = Some(a);
        }
        let first_posting = first_posting.unwrap_or(n);
        let (old_docs, old_clusters) = (old_docs.unwrap_or(0), old_clusters.unwrap_or(0));
        // Pass 1: which of `before`'s addresses the state still holds.
        let mut held = vec![false; n];
        let mut c = Cursor::new(before)?;
        self.walk_state(&snap, &DIFF_ORDER, &mut |op| {
            if let Some((at, _)) = c.seek(&address(&op))? {
                held[at] = true;
            }
            Ok(())
        })?;
        // The counters first, as [`StateDiff::into_log`] writes them: the allocators as they
        // are now, then the live counts moved by the change.
        let head = StateDiff {
            ops: Vec::new(),
            next: Some((counters.next_doc, counters.next_cluster, counters.next_seq)),
            live_docs: count_change(counters.live_docs, old_docs),
            live_clusters: count_change(counters.live_clusters, old_clusters),
        };
        for op in head.into_log(live_docs, live_clusters) {
            w.put(&op)?;
        }
        // What the state no longer holds, taken away, in address order: the postings (last in
        // `before`), then the rest.
        for postings in [true, false] {
            for (at, item) in before.ops()?.enumerate() {
                if (at >= first_posting) == postings && !held[at] {
                    if let Some(u) = undo(&item?.1) {
                        w.put(&u)?;
                    }
                }
            }
        }
        // Pass 2: the values that are new or changed, then the postings' changes.
        let mut c = Cursor::new(before)?;
        self.walk_state(&snap, &DIFF_ORDER, &mut |op| {
            let was = c.seek(&address(&op))?.map(|(_, was)| was);
            match (&op, was) {
                (LogOp::Posting { key, delta }, was) => {
                    if let Some(change) = posting_change(key, &delta.add, was) {
                        w.put(&change)?;
                    }
                }
                (op, Some(was)) if op == was => {}
                (op, _) => w.put(op)?,
            }
            Ok(())
        })
    }

    /// Calls `f` with every operation of this index's state log but the counters, read from
    /// `snap`, the groups in the order of `tags` (see [`ADDRESS_ORDER`]), each in address order.
    fn walk_state(
        &self,
        snap: &Snapshot<'_>,
        tags: &[u8],
        f: &mut dyn FnMut(LogOp) -> Result<()>,
    ) -> Result<()> {
        /// Called with each key and value of a scan; `false` stops it.
        type Visit<'v> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'v;
        let scan = |name: &'static str, from: &[u8], f: &mut Visit<'_>| -> Result<()> {
            let mode = IteratorMode::From(from, rocksdb::Direction::Forward);
            for item in snap.iterator_cf_opt(self.cf(name), storage::scan_options(), mode) {
                let (k, v) = item.map_err(|e| Error::storage("reading the state", e))?;
                if !f(&k, &v)? {
                    break;
                }
            }
            Ok(())
        };
        for &t in tags {
            match t {
                0 => scan(cf::POSTINGS, b"", &mut |k, v| {
                    let key = <[u8; 9]>::try_from(k)
                        .map_err(|_| Error::corruption(cf::POSTINGS, k, "key is not 9 bytes"))?;
                    let add = codec::decode_posting(v)
                        .map_err(|r| Error::corruption(cf::POSTINGS, k, r))?;
                    f(LogOp::Posting {
                        key,
                        delta: Delta {
                            add,
                            remove: RoaringBitmap::new(),
                        },
                    })?;
                    Ok(true)
                })?,
                1 => {
                    // Stored under the tables' own key order: sorted here by address.
                    let mut entries = Vec::new();
                    scan(cf::SIMHASH, b"", &mut |k, _| {
                        entries.push(self.tables.decode(k).ok_or_else(|| {
                            Error::corruption(cf::SIMHASH, k, "key is not 13 bytes")
                        })?);
                        Ok(true)
                    })?;
                    entries.sort_unstable();
                    for (table, simhash, doc) in entries {
                        f(LogOp::Simhash {
                            table,
                            simhash,
                            doc,
                            present: true,
                        })?;
                    }
                }
                2 => scan(cf::FREQUENT, b"", &mut |k, v| {
                    let key = <[u8; 9]>::try_from(k)
                        .map_err(|_| Error::corruption(cf::FREQUENT, k, "key is not 9 bytes"))?;
                    let reason = *v
                        .first()
                        .ok_or_else(|| Error::corruption(cf::FREQUENT, k, "no reason byte"))?;
                    f(LogOp::Frequent {
                        key,
                        reason: Some(reason),
                    })?;
                    Ok(true)
                })?,
                3 => scan(cf::KEYS, b"", &mut |k, v| {
                    let key = std::str::from_utf8(k)
                        .map_err(|_| Error::corruption(cf::KEYS, k, "key is not UTF-8"))?;
                    f(LogOp::Key {
                        key: key.to_string(),
                        doc: Some(storage::decode_u32(cf::KEYS, k, v)?),
                    })?;
                    Ok(true)
                })?,
                4 => scan(cf::DOCS, b"", &mut |k, v| {
                    f(LogOp::Doc {
                        id: storage::decode_u32(cf::DOCS, k, k)?,
                        record: Some(DocRecord::decode(cf::DOCS, k, v)?),
                    })?;
                    Ok(true)
                })?,
                5 => scan(cf::TEXTS, b"", &mut |k, v| {
                    f(LogOp::Text {
                        id: storage::decode_u32(cf::TEXTS, k, k)?,
                        value: Some(codec::decode_text_value(cf::TEXTS, k, v)?),
                    })?;
                    Ok(true)
                })?,
                6 => scan(cf::CLUSTERS, b"", &mut |k, v| {
                    f(LogOp::Cluster {
                        id: storage::decode_u32(cf::CLUSTERS, k, k)?,
                        record: Some(ClusterRecord::decode(cf::CLUSTERS, k, v)?),
                    })?;
                    Ok(true)
                })?,
                7..=9 => {
                    // One column family for the three, in its own key order: each kind sorted
                    // here by address.
                    let mut ops = Vec::new();
                    scan(cf::CHROME, b"", &mut |k, v| {
                        use storage::chrome_key::Decoded;
                        let op = match chrome_key::decode(k) {
                            Some(Decoded::Page(id)) if t == 7 => LogOp::PageBlocks {
                                id,
                                blocks: Some(PageBlocks::decode(cf::CHROME, k, v)?),
                            },
                            Some(Decoded::Host(host)) if t == 8 => LogOp::HostPages {
                                host: host.to_string(),
                                pages: codec::decode_count(cf::CHROME, k, v)?,
                            },
                            Some(Decoded::Block(host, block)) if t == 9 => LogOp::BlockPages {
                                host: host.to_string(),
                                block,
                                pages: codec::decode_count(cf::CHROME, k, v)?,
                            },
                            Some(_) => return Ok(true),
                            None => return Err(Error::corruption(cf::CHROME, k, "malformed key")),
                        };
                        ops.push((address(&op), op));
                        Ok(true)
                    })?;
                    ops.sort_by(|a, b| a.0.cmp(&b.0));
                    for (_, op) in ops {
                        f(op)?;
                    }
                }
                10 | 11 => {
                    let (prefix, doc) = if t == 10 {
                        (meta::FREE_DOC, true)
                    } else {
                        (meta::FREE_CLUSTER, false)
                    };
                    scan(cf::META, prefix, &mut |k, _| {
                        let Some(id) = k.strip_prefix(prefix) else {
                            return Ok(false);
                        };
                        let id = storage::decode_u32(cf::META, k, id)?;
                        f(if doc {
                            LogOp::FreeDoc { id, free: true }
                        } else {
                            LogOp::FreeCluster { id, free: true }
                        })?;
                        Ok(true)
                    })?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The state a scratch index started from, as [`Index::state_diff_into`] reads it: its
/// operations in [`DIFF_ORDER`] (the counters after the other non-postings), each address once.
enum Before<'a> {
    /// A state log in memory, sorted so, the last of equal addresses kept.
    Slice(Vec<(Vec<u8>, &'a LogOp)>),
    /// A file [`Index::state_file`] wrote.
    File(&'a std::path::Path),
}

/// `before`'s operations, each with its address: borrowed from a log in memory, read from a
/// file.
type BeforeOps<'b> = Box<dyn Iterator<Item = Result<(Cow<'b, [u8]>, Cow<'b, LogOp>)>> + 'b>;

impl<'a> Before<'a> {
    /// A state log in memory, sorted by [`diff_rank`], the last of equal addresses kept (as a
    /// map collected from it).
    fn slice(log: &'a [LogOp]) -> Before<'a> {
        let mut old: Vec<(Vec<u8>, &LogOp)> = log.iter().map(|op| (address(op), op)).collect();
        old.reverse();
        old.sort_by(|a, b| diff_rank(&a.0).cmp(&diff_rank(&b.0)));
        old.dedup_by(|later, earlier| later.0 == earlier.0);
        Before::Slice(old)
    }

    /// The operations from the first, with their addresses.
    fn ops(&self) -> Result<BeforeOps<'_>> {
        Ok(match self {
            Before::Slice(v) => Box::new(
                v.iter()
                    .map(|(a, op)| Ok((Cow::Borrowed(a.as_slice()), Cow::Borrowed(*op)))),
            ),
            Before::File(path) => Box::new(
                LogFileOps::<DocId>::open(path)?
                    .map(|r| r.map(|op| (Cow::Owned(address(&op)), Cow::Owned(op)))),
            ),
        })
    }
}

/// A reading of `before` in step with a walk of the state now: both in [`DIFF_ORDER`].
struct Cursor<'b> {
    ops: BeforeOps<'b>,
    /// The operation read last (its address, itself), `None` at the end.
    cur: Option<(Cow<'b, [u8]>, Cow<'b, LogOp>)>,
    /// Its position among `before`'s operations.
    at: usize,
}

impl<'b> Cursor<'b> {
    fn new(before: &'b Before<'_>) -> Result<Cursor<'b>> {
        let mut ops = before.ops()?;
        let cur = ops.next().transpose()?;
        Ok(Cursor { ops, cur, at: 0 })
    }

    /// Moves past every operation ranked before address `a`; the one at `a`, with its
    /// position, when `before` has one.
    ///
    /// # Errors
    /// What reading `before` returns (its order is checked before: [`Index::state_diff_into`]).
    fn seek(&mut self, a: &[u8]) -> Result<Option<(usize, &LogOp)>> {
        while let Some((addr, _)) = &self.cur {
            if diff_rank(addr) >= diff_rank(a) {
                break;
            }
            self.cur = self.ops.next().transpose()?;
            self.at += 1;
        }
        Ok(match &self.cur {
            Some((addr, op)) if addr.as_ref() == a => Some((self.at, op.as_ref())),
            _ => None,
        })
    }
}
