//! Combining logs (SCALEOUT §5 S4–S5): the partitions' seed logs into one scratch seed, and
//! the work units' logs into the batch log, each unit's new ids mapped to those one machine
//! would give.

use std::collections::{BTreeMap, BTreeSet};

use roaring::RoaringTreemap;

use super::layout::{Layout, Role, Target};
use super::log::{LogCounter, LogOp};
use super::logfile::{LogReader, LogWriter};
use super::logio::{scan_log_file, LogFileWriter, OpSink};
use super::mapping::{map_ids, IdMapping};
use super::state::count_change;
use crate::storage::merge::PostingDelta;
use crate::storage::width::{WideDocId, NO_WIDE_DOC};
use crate::{Error, Result};

/// A global page or cluster id of the distributed index (SCALEOUT §4): one allocated sequence,
/// as one machine gives ids out, in `u64`.
type Gid = WideDocId;

/// One seed log for a scratch index from the seed logs of the partitions
/// ([`crate::Index::seed_log`] on each doc partition with the pages and clusters it holds, and
/// on each key partition with none, for its over-frequent keys): the counters once (the
/// allocators and sequence are the same everywhere; the live counts are summed), the free ids
/// and over-frequent keys once each, every page's and cluster's rows, and one posting operand
/// per key with the seeded pages of all partitions.
///
/// Ids are global (`u64`): a partition's seed log of `u32` ids is widened as it is read
/// ([`super::decode_log`]).
///
/// # Errors
/// [`Error::InvalidArgument`] when the partitions disagree on an allocator or the sequence.
pub fn combine_seed_logs(logs: Vec<Vec<LogOp<Gid>>>) -> Result<Vec<LogOp<Gid>>> {
    let mut head = SeedHead::default();
    let mut postings: BTreeMap<[u8; 9], RoaringTreemap> = BTreeMap::new();
    let mut rows = Vec::new();
    for log in logs {
        for op in log {
            match head.take(op) {
                Some(LogOp::Posting { key, delta }) => {
                    *postings.entry(key).or_default() |= delta.add;
                }
                Some(other) => rows.push(other),
                None => {}
            }
        }
        head.end_part()?;
    }
    let mut out = head.ops();
    out.extend(rows);
    out.extend(postings.into_iter().map(|(key, add)| LogOp::Posting {
        key,
        delta: PostingDelta {
            add,
            remove: RoaringTreemap::new(),
        },
    }));
    Ok(out)
}

/// What [`combine_seed_logs`] keeps once of the partitions' seeds: the counters (allocators and
/// sequence the same everywhere, live counts summed), the free ids, the over-frequent keys.
#[derive(Default)]
pub(crate) struct SeedHead {
    alloc: (Option<Gid>, Option<Gid>, Option<u64>),
    seen: (Option<Gid>, Option<Gid>, Option<u64>),
    live_docs: u64,
    live_clusters: u64,
    free_docs: BTreeSet<Gid>,
    free_clusters: BTreeSet<Gid>,
    frequent: BTreeMap<[u8; 9], u8>,
}

impl SeedHead {
    /// Takes in `op` of the current part's seed if it is one of what it keeps; otherwise gives
    /// it back (a row or a posting).
    pub(crate) fn take(&mut self, op: LogOp<Gid>) -> Option<LogOp<Gid>> {
        match op {
            LogOp::Counter(LogCounter::NextDoc(n)) => self.seen.0 = Some(n),
            LogOp::Counter(LogCounter::NextCluster(n)) => self.seen.1 = Some(n),
            LogOp::Counter(LogCounter::NextSeq(n)) => self.seen.2 = Some(n),
            LogOp::Counter(LogCounter::LiveDocs(n)) => {
                self.live_docs = self.live_docs.saturating_add(n)
            }
            LogOp::Counter(LogCounter::LiveClusters(n)) => {
                self.live_clusters = self.live_clusters.saturating_add(n)
            }
            LogOp::FreeDoc { id, free: true } => {
                self.free_docs.insert(id);
            }
            LogOp::FreeCluster { id, free: true } => {
                self.free_clusters.insert(id);
            }
            LogOp::Frequent {
                key,
                reason: Some(r),
            } => {
                self.frequent.insert(key, r);
            }
            other => return Some(other),
        }
        None
    }

    /// The end of one part's seed: its allocators and sequence must be the others'.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the partitions disagree on an allocator or the sequence.
    pub(crate) fn end_part(&mut self) -> Result<()> {
        let seen = std::mem::take(&mut self.seen);
        for (have, got, what) in [
            (&mut self.alloc.0, seen.0, "page id allocator"),
            (&mut self.alloc.1, seen.1, "cluster id allocator"),
            (&mut self.alloc.2, seen.2, "insertion sequence"),
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
        Ok(())
    }

    /// The combined seed's first operations: the counters, the free ids, the over-frequent
    /// keys (the rows and postings follow them).
    pub(crate) fn ops(self) -> Vec<LogOp<Gid>> {
        let mut out = Vec::new();
        if let (Some(d), Some(c), Some(s)) = self.alloc {
            out.push(LogOp::Counter(LogCounter::NextDoc(d)));
            out.push(LogOp::Counter(LogCounter::NextCluster(c)));
            out.push(LogOp::Counter(LogCounter::NextSeq(s)));
        }
        out.push(LogOp::Counter(LogCounter::LiveDocs(self.live_docs)));
        out.push(LogOp::Counter(LogCounter::LiveClusters(self.live_clusters)));
        out.extend(
            self.free_docs
                .into_iter()
                .map(|id| LogOp::FreeDoc { id, free: true }),
        );
        out.extend(
            self.free_clusters
                .into_iter()
                .map(|id| LogOp::FreeCluster { id, free: true }),
        );
        out.extend(self.frequent.into_iter().map(|(key, r)| LogOp::Frequent {
            key,
            reason: Some(r),
        }));
        out
    }
}

/// The allocators and live counts of a standing index when a batch starts: where the new ids
/// of the batch's work units begin ([`combine_unit_logs`]). Ids are global (`u64`, SCALEOUT §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchBase {
    /// The page id allocator.
    pub next_doc: WideDocId,
    /// The cluster id allocator.
    pub next_cluster: WideDocId,
    /// The insertion sequence.
    pub next_seq: u64,
    /// Live pages.
    pub live_docs: u64,
    /// Live clusters.
    pub live_clusters: u64,
    /// The partitions store `u64` ids (format 7, [`super::WidePartition`]): the batch's
    /// allocators may reach [`MAX_WIDE_ALLOCATOR`], not only [`MAX_PARTITION_ALLOCATOR`].
    pub wide: bool,
}

/// The ids a work unit gave out, or the offsets its ids move by.
#[derive(Clone, Copy, Debug, Default)]
struct Ids {
    pub(crate) docs: u64,
    pub(crate) clusters: u64,
    pub(crate) seq: u64,
}

/// What one work unit's log gave out and changed ([`remap_unit_log`]): the batch's counters
/// are those of all units' ([`batch_counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitTotals {
    /// New page ids.
    pub docs: u64,
    /// New cluster ids.
    pub clusters: u64,
    /// New insertion numbers.
    pub seqs: u64,
    /// The change of the live page count.
    pub live_docs: i64,
    /// The change of the live cluster count.
    pub live_clusters: i64,
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
pub fn combine_unit_logs(base: BatchBase, logs: Vec<Vec<LogOp<Gid>>>) -> Result<Vec<LogOp<Gid>>> {
    combine(base, logs, None)
}

/// [`combine_unit_logs`] with each unit's new ids mapped by `maps[u]` instead of moved past the
/// units before it: the batch's ids numbered in the order one machine gives them out (from each
/// unit's [`crate::Index::take_allocations`] and the day's processing order). Each map must be
/// increasing (a unit's ids keep their order) and cover the ids the unit gave out.
///
/// The same log, cut by partition, is [`batch_counters`] then each unit's [`remap_unit_log`] in
/// unit order: what a distributed merge writes without joining the units' logs in one place.
///
/// # Errors
/// As [`combine_unit_logs`]; [`Error::InvalidArgument`] when the maps are not one per unit, do
/// not cover a unit's ids, or are not increasing.
pub fn combine_unit_logs_mapped(
    base: BatchBase,
    logs: Vec<Vec<LogOp<Gid>>>,
    maps: &[IdMap],
) -> Result<Vec<LogOp<Gid>>> {
    if maps.len() != logs.len() {
        return Err(Error::InvalidArgument(format!(
            "{} id maps for {} work units",
            maps.len(),
            logs.len()
        )));
    }
    combine(base, logs, Some(maps))
}

/// Work unit `u`'s operations (its counters left out) with its new ids mapped by `map` (see
/// [`combine_unit_logs_mapped`]), and what it gave out and changed.
///
/// # Errors
/// As [`combine_unit_logs_mapped`] for one unit.
pub fn remap_unit_log(
    base: BatchBase,
    u: usize,
    log: Vec<LogOp<Gid>>,
    map: &IdMap,
) -> Result<(Vec<LogOp<Gid>>, UnitTotals)> {
    let (ops, totals) = unit_ops(&base, u, log)?;
    check_map(u, map, &totals)?;
    let how = Remap::Map(map);
    let ops = ops
        .into_iter()
        .map(|op| remap_op(op, &base, &how))
        .collect::<Result<Vec<_>>>()?;
    Ok((ops, totals))
}

/// The largest allocator value a batch may leave: the partitions (format 6) store `u32` ids,
/// and `u32::MAX` means "no page", so the ids they take end below it. A batch that would give
/// out more is refused ([`Error::Full`]) when its counters are made, in S4, before any
/// partition's log is written — not when a partition meets the first id it cannot store.
pub const MAX_PARTITION_ALLOCATOR: Gid = u32::MAX as Gid;

/// The largest allocator value a batch may leave when its partitions store `u64` ids (format 7,
/// [`BatchBase::wide`]): 2⁵⁶, the ids S3's nodes hold below their kind
/// ([`super::NODE_ID_BITS`]) — 7.2 × 10¹⁶ pages, some 2 × 10⁵ years at 10⁹ pages a day.
pub const MAX_WIDE_ALLOCATOR: Gid = 1 << super::NODE_ID_BITS;

/// The counters of a batch log whose units gave out and changed `units`: the allocators past
/// every unit's ids, the live counts changed by every unit.
///
/// # Errors
/// [`Error::Full`] when the ids overflow, or pass what the partitions store
/// ([`MAX_PARTITION_ALLOCATOR`], or [`MAX_WIDE_ALLOCATOR`] with [`BatchBase::wide`]).
pub fn batch_counters(base: BatchBase, units: &[UnitTotals]) -> Result<Vec<LogOp<Gid>>> {
    let mut gave = Ids::default();
    let (mut live_docs, mut live_clusters) =
        (i128::from(base.live_docs), i128::from(base.live_clusters));
    for t in units {
        gave.docs = gave.docs.checked_add(t.docs).ok_or(Error::Full)?;
        gave.clusters = gave.clusters.checked_add(t.clusters).ok_or(Error::Full)?;
        gave.seq = gave.seq.checked_add(t.seqs).ok_or(Error::Full)?;
        live_docs += i128::from(t.live_docs);
        live_clusters += i128::from(t.live_clusters);
    }
    let count = |v: i128| v.clamp(0, i128::from(u64::MAX)) as u64;
    let limit = if base.wide {
        MAX_WIDE_ALLOCATOR
    } else {
        MAX_PARTITION_ALLOCATOR
    };
    let allocator = |base: Gid, gave: u64| {
        base.checked_add(gave)
            .filter(|&n| n <= limit)
            .ok_or(Error::Full)
    };
    Ok(vec![
        LogOp::Counter(LogCounter::NextDoc(allocator(base.next_doc, gave.docs)?)),
        LogOp::Counter(LogCounter::NextCluster(allocator(
            base.next_cluster,
            gave.clusters,
        )?)),
        LogOp::Counter(LogCounter::NextSeq(
            base.next_seq.checked_add(gave.seq).ok_or(Error::Full)?,
        )),
        LogOp::Counter(LogCounter::LiveDocs(count(live_docs))),
        LogOp::Counter(LogCounter::LiveClusters(count(live_clusters))),
    ])
}

/// A unit's operations without its counters, and what its counters say it gave out and changed
/// from `base`.
fn unit_ops(
    base: &BatchBase,
    u: usize,
    log: Vec<LogOp<Gid>>,
) -> Result<(Vec<LogOp<Gid>>, UnitTotals)> {
    let mut totals = UnitTotals::default();
    let mut ops = Vec::with_capacity(log.len());
    for op in log {
        match op {
            LogOp::Counter(c) => count(&mut totals, base, u, c)?,
            other => ops.push(other),
        }
    }
    Ok((ops, totals))
}

/// What one counter of unit `u`'s log says it gave out and changed from `base`.
fn count(totals: &mut UnitTotals, base: &BatchBase, u: usize, c: LogCounter<Gid>) -> Result<()> {
    let below = || {
        Error::InvalidArgument(format!(
            "work unit {u}'s allocators are below the batch's start"
        ))
    };
    match c {
        LogCounter::NextDoc(n) => totals.docs = n.checked_sub(base.next_doc).ok_or_else(below)?,
        LogCounter::NextCluster(n) => {
            totals.clusters = n.checked_sub(base.next_cluster).ok_or_else(below)?
        }
        LogCounter::NextSeq(n) => totals.seqs = n.checked_sub(base.next_seq).ok_or_else(below)?,
        LogCounter::LiveDocs(n) => totals.live_docs = count_change(n, base.live_docs),
        LogCounter::LiveClusters(n) => totals.live_clusters = count_change(n, base.live_clusters),
    }
    Ok(())
}

/// A batch log's bytes cut by partition ([`route_unit_log`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoutedBytes {
    /// The log of each key partition.
    pub key: Vec<Vec<u8>>,
    /// The log of each doc partition.
    pub doc: Vec<Vec<u8>>,
}

/// Work unit `u`'s log (its bytes, [`super::encode_log`]) with its new ids mapped by `map`, cut
/// by partition: for each partition, the bytes [`remap_unit_log`] then [`Layout::route`] and
/// [`super::encode_log`] give (a partition the unit changes nothing of gets an empty log), read
/// and written one operation at a time, so that a large unit's log is never held decoded
/// (issue #34: a million-page day). Returns them with what the unit gave out and changed.
///
/// # Errors
/// As [`remap_unit_log`]; [`Error::InvalidArgument`] for bytes that are not a batch log.
pub fn route_unit_log(
    base: BatchBase,
    u: usize,
    log: &[u8],
    map: &IdMap,
    layout: &Layout,
) -> Result<(RoutedBytes, UnitTotals)> {
    let mut key: Vec<LogWriter<Gid>> = (0..layout.key_parts()).map(|_| LogWriter::new()).collect();
    let mut doc: Vec<LogWriter<Gid>> = (0..layout.doc_parts()).map(|_| LogWriter::new()).collect();
    // The checksum checked before anything is read.
    let reader = LogReader::<Gid>::new(log)?;
    let each = &mut |f: &mut dyn FnMut(LogOp<Gid>) -> Result<()>| -> Result<()> {
        for op in reader.clone() {
            f(op?)?;
        }
        Ok(())
    };
    let totals = route_into(base, u, each, map, layout, &mut key, &mut doc)?;
    let done = |ws: Vec<LogWriter<Gid>>| ws.into_iter().map(LogWriter::finish).collect();
    Ok((
        RoutedBytes {
            key: done(key),
            doc: done(doc),
        },
        totals,
    ))
}

/// A partition's file written by [`route_unit_log_file`]: its name (`key-000`, `doc-001`...),
/// operations and bytes.
pub type RoutedFile = (String, u64, u64);

/// Calls its argument with each operation of a log, in order.
type EachOp<'a> = dyn FnMut(&mut dyn FnMut(LogOp<Gid>) -> Result<()>) -> Result<()> + 'a;

/// [`route_unit_log`] from the log in the file `log` to files in the directory `out`, one a
/// partition the unit changes (`key-<p>.ndlog`, `doc-<p>.ndlog`, `p` in three digits), neither
/// log held in memory. Returns the files written, with each one's operations and bytes, and
/// what the unit gave out and changed.
///
/// # Errors
/// As [`route_unit_log`]; [`Error::Io`].
pub fn route_unit_log_file(
    base: BatchBase,
    u: usize,
    log: &std::path::Path,
    map: &IdMap,
    layout: &Layout,
    out: &std::path::Path,
) -> Result<(Vec<RoutedFile>, UnitTotals)> {
    let names: Vec<String> = (0..layout.key_parts())
        .map(|p| format!("key-{p:03}"))
        .chain((0..layout.doc_parts()).map(|p| format!("doc-{p:03}")))
        .collect();
    let mut writers = names
        .iter()
        .map(|n| LogFileWriter::<Gid>::create(&out.join(format!("{n}.ndlog"))))
        .collect::<Result<Vec<_>>>()?;
    let (key, doc) = writers.split_at_mut(layout.key_parts() as usize);
    // One pass over the file (its checksum checked at its end): what was written is thrown
    // away with the error of a damaged log, since nothing applies these files before every
    // unit's routing succeeded.
    let each = &mut |f: &mut dyn FnMut(LogOp<Gid>) -> Result<()>| scan_log_file(log, f);
    let totals = route_into(base, u, each, map, layout, key, doc)?;
    let mut written = Vec::new();
    for (name, w) in names.into_iter().zip(writers) {
        let ops = w.ops();
        let bytes = w.finish()?;
        let path = out.join(format!("{name}.ndlog"));
        if ops > 0 {
            written.push((name, ops, bytes));
        } else {
            std::fs::remove_file(&path).map_err(|e| Error::Io { path, source: e })?;
        }
    }
    Ok((written, totals))
}

/// The operations `each` gives of unit `u`'s log (called once), mapped and cut by partition
/// into `key` and `doc`; the map is checked against the unit's counters once they are all
/// read (an id the map does not cover fails the remapping before that).
fn route_into<S: OpSink<Gid>>(
    base: BatchBase,
    u: usize,
    each: &mut EachOp<'_>,
    map: &IdMap,
    layout: &Layout,
    key: &mut [S],
    doc: &mut [S],
) -> Result<UnitTotals> {
    let mut totals = UnitTotals::default();
    let how = Remap::Map(map);
    each(&mut |op| {
        if let LogOp::Counter(c) = op {
            return count(&mut totals, &base, u, c);
        }
        let op = remap_op(op, &base, &how)?;
        match layout.target(&op) {
            Target::One(Role::Key(p)) => key[p as usize].put(&op),
            Target::One(Role::Doc(p)) => doc[p as usize].put(&op),
            Target::All => {
                for w in key.iter_mut().chain(doc.iter_mut()) {
                    w.put(&op)?;
                }
                Ok(())
            }
        }
    })?;
    // The counters say how many ids the map must cover.
    check_map(u, map, &totals)?;
    Ok(totals)
}

/// Refuses a map that does not cover exactly the ids unit `u` gave out, or is not increasing.
fn check_map(u: usize, m: &IdMap, gave: &UnitTotals) -> Result<()> {
    let increasing = m.docs.windows(2).all(|w| w[0] < w[1])
        && m.clusters.windows(2).all(|w| w[0] < w[1])
        && m.seqs.windows(2).all(|w| w[0] < w[1]);
    if !increasing {
        return Err(Error::InvalidArgument(format!(
            "the id map of work unit {u} is not increasing"
        )));
    }
    if (m.docs.len() as u64, m.clusters.len() as u64) != (gave.docs, gave.clusters)
        || m.seqs.len() as u64 != gave.seqs
    {
        return Err(Error::InvalidArgument(format!(
            "the id map of work unit {u} covers {} pages, {} clusters and {} insertion numbers; \
             the unit gave out {}, {} and {}",
            m.docs.len(),
            m.clusters.len(),
            m.seqs.len(),
            gave.docs,
            gave.clusters,
            gave.seqs
        )));
    }
    Ok(())
}

fn combine(
    base: BatchBase,
    logs: Vec<Vec<LogOp<Gid>>>,
    maps: Option<&[IdMap]>,
) -> Result<Vec<LogOp<Gid>>> {
    let mut offset = Ids::default();
    let mut totals = Vec::with_capacity(logs.len());
    let mut ops = Vec::new();
    for (u, log) in logs.into_iter().enumerate() {
        let (unit, t) = unit_ops(&base, u, log)?;
        let how = match maps {
            Some(maps) => {
                check_map(u, &maps[u], &t)?;
                Remap::Map(&maps[u])
            }
            None => Remap::Shift(offset),
        };
        for op in unit {
            ops.push(remap_op(op, &base, &how)?);
        }
        offset.docs = offset.docs.checked_add(t.docs).ok_or(Error::Full)?;
        offset.clusters = offset.clusters.checked_add(t.clusters).ok_or(Error::Full)?;
        offset.seq = offset.seq.checked_add(t.seqs).ok_or(Error::Full)?;
        totals.push(t);
    }
    let mut out = batch_counters(base, &totals)?;
    out.extend(ops);
    Ok(out)
}

/// How a unit's new ids move: by an offset, or through a map.
enum Remap<'a> {
    Shift(Ids),
    Map(&'a IdMap),
}

/// Moves the new ids of one operation (those at or above `base`'s allocators) as `how` says.
fn remap_op(op: LogOp<Gid>, base: &BatchBase, how: &Remap<'_>) -> Result<LogOp<Gid>> {
    map_ids(op, &mut Moved { base, how })
}

/// A unit's new ids moved as [`Remap`] says; standing ids kept.
struct Moved<'a, 'm> {
    base: &'a BatchBase,
    how: &'a Remap<'m>,
}

/// `table[at]`: where a unit's `at`-th new id of a kind goes.
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

impl IdMapping<Gid, Gid> for Moved<'_, '_> {
    fn doc(&mut self, id: Gid) -> Result<Gid> {
        if id == NO_WIDE_DOC || id < self.base.next_doc {
            return Ok(id);
        }
        match self.how {
            Remap::Shift(by) => id
                .checked_add(by.docs)
                .filter(|&g| g != NO_WIDE_DOC)
                .ok_or(Error::Full),
            Remap::Map(m) => mapped(&m.docs, id - self.base.next_doc, "page id"),
        }
    }

    fn cluster(&mut self, id: Gid) -> Result<Gid> {
        if id < self.base.next_cluster {
            return Ok(id);
        }
        match self.how {
            Remap::Shift(by) => id.checked_add(by.clusters).ok_or(Error::Full),
            Remap::Map(m) => mapped(&m.clusters, id - self.base.next_cluster, "cluster id"),
        }
    }

    fn seq(&mut self, s: u64) -> Result<u64> {
        if s < self.base.next_seq {
            return Ok(s);
        }
        match self.how {
            Remap::Shift(by) => s.checked_add(by.seq).ok_or(Error::Full),
            Remap::Map(m) => mapped(&m.seqs, s - self.base.next_seq, "insertion number"),
        }
    }

    fn docs(&mut self, b: RoaringTreemap) -> Result<RoaringTreemap> {
        if b.max().is_none_or(|m| m < self.base.next_doc) {
            return Ok(b);
        }
        b.iter().map(|id| self.doc(id)).collect()
    }
}

/// Where each of a work unit's new ids goes in the batch ([`combine_unit_logs_mapped`]): the
/// unit gave out `base + i` as its `i`-th new id of each kind; `docs[i]`, `clusters[i]` and
/// `seqs[i]` are the ids they become (global ids, `u64`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdMap {
    /// Page ids.
    pub docs: Vec<WideDocId>,
    /// Cluster ids.
    pub clusters: Vec<WideDocId>,
    /// Insertion numbers.
    pub seqs: Vec<u64>,
}
