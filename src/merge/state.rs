//! Scratch-index seeding and the diff a scratch index reads back (SCALEOUT §11 item 4; the spec
//! is §5 S4 "Per-component decision", steps 2 and 5).
//!
//! A distributed merge decides each component of the day's candidate graph in a scratch index:
//! it is seeded, deciding nothing, with the standing pages and clusters the component's decisions
//! read ([`Index::seed_log`], applied with [`Index::apply_log`]); the day's deletes and inserts run
//! on it with the ordinary [`Index::delete`] and [`Index::insert_batch`]; and what they changed
//! is read back as the difference of two state logs ([`state_diff`]), which becomes the batch log
//! of the standing partitions ([`StateDiff::into_log`]).
//!
//! The seed keeps every page's and cluster's own id, the standing allocators, free ids and
//! insertion sequence, so the scratch index gives a new page the id, and breaks a tie, as the
//! standing index would.

use std::collections::BTreeMap;

use roaring::RoaringBitmap;

use super::log::{LogCounter, LogOp};
use super::logio::LogFileWriter;
use super::seedsort::{PostingRuns, RUN_PAIRS};
use crate::index::{Index, View};
use crate::signature::Signatures;
use crate::storage::codec::{self, ClusterId, DocId, DocRecord, TextValue};
use crate::storage::merge::Delta;
use crate::storage::width::IdWidth;
use crate::storage::{self, cf, id_key};
use crate::{Error, Result};

impl Index {
    /// The log that seeds an empty scratch index with some of this index's pages and clusters,
    /// deciding nothing (SCALEOUT §5 S4.2): each page's key, record, text (or posting keys),
    /// postings and simhash entries; each cluster's record, members and representative included
    /// (seed every member a decision may read: the members of a cluster that may lose its
    /// representative); this index's over-frequent fingerprints with their reasons, its free ids
    /// and its allocators and insertion sequence, so that the scratch index gives out the ids
    /// this one would. The live counts are those of the seed. Apply it with
    /// [`Index::apply_log`] to a scratch index opened with this index's options.
    ///
    /// A page's postings in the seed hold the seeded pages only: a decision that reads a key
    /// reads exactly the pages seeded under it, so every page on the keys of the pages to
    /// decide must be seeded ([`Index::decision_reach`] finds them).
    ///
    /// The scratch index must be opened with this index's options (and, when it stores no
    /// texts, the same [`crate::TextSource`]). One scratch index decides a batch for a standing
    /// index: each seed starts from the same allocators, so two scratch indexes would give the
    /// same new ids to different pages. This index must not be written between the seed and the
    /// batch log that commits the decisions.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a page or cluster this index does not hold, or when the
    /// index counts site chrome or its method uses document frequencies (both are counts over
    /// all of a host's or the index's pages, which a part cannot reproduce); storage and
    /// corruption errors.
    pub fn seed_log(&self, pages: &[DocId], clusters: &[ClusterId]) -> Result<Vec<LogOp>> {
        seed_vec(|runs, emit| self.seed_into(pages, clusters, runs, emit))
    }

    /// [`Index::seed_log`] written to a new file at `path` as it is read (the bytes
    /// [`crate::merge::encode_log`] gives of it), never whole in memory: the pages' rows as
    /// they are read, their postings sorted in runs of a bounded size written beside `path`
    /// and merged back in key order (issue #34: a doc partition seeding a unit that reaches
    /// most of a large index). Returns the file's size; on an error no file is left at
    /// `path`.
    ///
    /// # Errors
    /// As [`Index::seed_log`]; [`Error::Io`] writing the file or its runs.
    pub fn seed_log_file(
        &self,
        pages: &[DocId],
        clusters: &[ClusterId],
        path: &std::path::Path,
    ) -> Result<u64> {
        seed_file(path, |runs, emit| {
            self.seed_into(pages, clusters, runs, emit)
        })
    }

    /// [`Index::seed_log`]'s operations in order, to `emit`; the postings through `runs`.
    fn seed_into(
        &self,
        pages: &[DocId],
        clusters: &[ClusterId],
        mut runs: PostingRuns,
        emit: &mut dyn FnMut(LogOp) -> Result<()>,
    ) -> Result<()> {
        self.registration.check_process()?;
        if self.opts.chrome.enabled {
            return Err(Error::InvalidArgument(
                "an index that learns site chrome cannot be seeded in part: its counts are \
                 per host"
                    .into(),
            ));
        }
        if self.opts.signature.method.uses_df() {
            return Err(Error::InvalidArgument(
                "an index whose method weighs words by document frequency cannot be seeded in \
                 part"
                    .into(),
            ));
        }
        // The allocators first: commits happen under the writer lock, so the counters and the
        // free ids read with it agree.
        let (next_doc, next_cluster, next_seq, free_docs, free_clusters) = {
            // Read under the writer lock without taking it for writing: a read-only index can be
            // seeded too.
            let c = self.writer.lock();
            (
                c.next_doc,
                c.next_cluster,
                c.next_seq,
                c.free_docs.all(),
                c.free_clusters.all(),
            )
        };
        let pages: std::collections::BTreeSet<DocId> = pages.iter().copied().collect();
        let clusters: std::collections::BTreeSet<ClusterId> = clusters.iter().copied().collect();
        for counter in [
            LogCounter::NextDoc(next_doc),
            LogCounter::NextCluster(next_cluster),
            LogCounter::NextSeq(next_seq),
            LogCounter::LiveDocs(pages.len() as u64),
            LogCounter::LiveClusters(clusters.len() as u64),
        ] {
            emit(LogOp::Counter(counter))?;
        }
        for id in free_docs.iter() {
            emit(LogOp::FreeDoc { id, free: true })?;
        }
        for id in free_clusters.iter() {
            emit(LogOp::FreeCluster { id, free: true })?;
        }
        for (key, reason) in self.frequent_reasons()? {
            emit(LogOp::Frequent {
                key,
                reason: Some(reason),
            })?;
        }
        let mut rows = Vec::new();
        for &id in &pages {
            let record = self
                .doc(id)?
                .ok_or_else(|| Error::InvalidArgument(format!("no page has id {id}")))?;
            let k = id_key(id);
            let value = self
                .get_at(cf::TEXTS, &k, None, "a text", |v| {
                    codec::decode_text_value(cf::TEXTS, &k, v)
                })?
                .ok_or_else(|| Error::corruption(cf::TEXTS, &k, "the page has no text"))?;
            let content = storage::posting_key(storage::kind::CONTENT, record.content_hash);
            // Over-frequent keys too: a delete takes the page out of every key it was filed
            // under, and the diff can only take out what the seed held.
            for key in std::iter::once(content).chain(self.posting_keys_in(id, &value)?) {
                runs.push(key, id.into())?;
            }
            push_page_rows(&mut rows, self.tables.tables, id, record, value);
            rows.drain(..).try_for_each(&mut *emit)?;
        }
        for &cid in &clusters {
            let record = self
                .cluster(cid)?
                .ok_or_else(|| Error::InvalidArgument(format!("no cluster has id {cid}")))?;
            emit(LogOp::Cluster {
                id: cid,
                record: Some(record),
            })?;
        }
        runs.drain(emit)
    }

    /// The pages and clusters of this index that deciding a day reads (SCALEOUT §5 S0–S3 on
    /// one machine, §6): what [`Index::seed_log`] must seed for the day's deletes and inserts in
    /// a scratch index to decide as they would here. `probes` are the signatures of the day's
    /// pages and `keys` their keys (a key this index holds is a re-crawl: its page is replaced);
    /// `gone` the keys the day deletes. Keys this index lacks are ignored.
    ///
    /// - The pages on each probe's posting keys (over-frequent keys, which no decision reads,
    ///   left out) and the pages within the simhash distance of it.
    /// - The pages of `gone`, and every member of their clusters with what its own keys reach
    ///   the same way: a cluster that loses a page may hand over, and its members are placed
    ///   again.
    /// - Every cluster of those pages, with all its members.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn decision_reach(
        &self,
        probes: &[Signatures],
        keys: &[&str],
        gone: &[&str],
    ) -> Result<Reach> {
        self.registration.check_process()?;
        let method = &self.opts.signature.method;
        let mut pages = std::collections::BTreeSet::new();
        for sig in probes {
            self.reach_of(&sig.posting_keys(method), sig.simhash, &mut pages)?;
        }
        // Clusters whose members were placed again already (two gone pages may share one).
        let mut handed_over = std::collections::BTreeSet::new();
        for key in gone.iter().chain(keys) {
            let Some(id) = self.key_id(key)? else {
                continue;
            };
            pages.insert(id);
            let Some(cid) = self.cluster_of(id)?.filter(|&c| handed_over.insert(c)) else {
                continue;
            };
            let Some(cluster) = self.cluster(cid)? else {
                continue;
            };
            for m in &cluster.members {
                let Some(rec) = self.doc(m)? else { continue };
                let keys = self.filed_keys(m, rec.content_hash)?.unwrap_or_default();
                self.reach_of(&keys, rec.simhash, &mut pages)?;
                pages.insert(m);
            }
        }
        let clusters: std::collections::BTreeSet<ClusterId> = self
            .clusters_at(&pages.iter().copied().collect::<Vec<_>>(), None)?
            .into_iter()
            .flatten()
            .collect();
        for &cid in &clusters {
            if let Some(c) = self.cluster(cid)? {
                pages.extend(&c.members);
            }
        }
        Ok(Reach {
            pages: pages.into_iter().collect(),
            clusters: clusters.into_iter().collect(),
        })
    }

    /// Every posting key a stored page is filed under: its content key, then its fingerprint and
    /// sketch keys (`None` when the page has no text).
    pub(crate) fn filed_keys(&self, id: DocId, content_hash: u128) -> Result<Option<Vec<[u8; 9]>>> {
        let content = storage::posting_key(storage::kind::CONTENT, content_hash);
        Ok(self
            .posting_keys_of(id)?
            .map(|keys| std::iter::once(content).chain(keys).collect()))
    }

    /// Adds the pages a decision on these keys and this simhash reads (see
    /// [`Index::decision_reach`]).
    pub(crate) fn reach_of(
        &self,
        keys: &[[u8; 9]],
        simhash: u64,
        out: &mut std::collections::BTreeSet<DocId>,
    ) -> Result<()> {
        // Over-frequent keys are left out: no decision reads them.
        out.extend(&self.posting_reach(keys)?);
        // The simhash neighbours always: a decision reads them for a page without sentence
        // fingerprints, under the simhash methods, and whenever its postings give no candidate
        // at decision time — which the standing postings cannot tell (the day's deletes take
        // pages out of them, and the day's inserts can make a key over-frequent).
        out.extend(&self.simhash_reach(&[simhash])?);
        Ok(())
    }

    /// The over-frequent fingerprints with their reason bytes.
    pub(crate) fn frequent_reasons(&self) -> Result<BTreeMap<[u8; 9], u8>> {
        let mut out = BTreeMap::new();
        for item in self.db.iterator_cf_opt(
            self.cf(cf::FREQUENT),
            storage::scan_options(),
            rocksdb::IteratorMode::Start,
        ) {
            let (k, v) = item.map_err(|e| Error::storage("reading over-frequent keys", e))?;
            let key = <[u8; 9]>::try_from(k.as_ref())
                .map_err(|_| Error::corruption(cf::FREQUENT, &k, "key is not 9 bytes"))?;
            let reason = *v
                .first()
                .ok_or_else(|| Error::corruption(cf::FREQUENT, &k, "no reason byte"))?;
            out.insert(key, reason);
        }
        Ok(out)
    }
}

/// The pages and clusters deciding a day reads ([`Index::decision_reach`]), sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Page ids.
    pub pages: Vec<DocId>,
    /// Cluster ids.
    pub clusters: Vec<ClusterId>,
}

/// What a scratch index's deletes and inserts changed (SCALEOUT §5 S4.5): the operations that
/// take the standing index from the seeded state to the decided one, and the changes of its
/// counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateDiff {
    /// Keys the decisions removed (deleted pages, dissolved clusters, ids given out again),
    /// then values they wrote whole, then posting changes (the ids they took out and put in).
    pub ops: Vec<LogOp>,
    /// The allocators and insertion sequence after the decisions (absolute: the seed started
    /// from the standing index's).
    pub next: Option<(DocId, ClusterId, u64)>,
    /// Change of the number of live pages.
    pub live_docs: i64,
    /// Change of the number of live clusters.
    pub live_clusters: i64,
}

impl StateDiff {
    /// The batch log of a standing index (the one scratch index of its batch, see
    /// [`Index::seed_log`]) whose live counts were `live_docs` and
    /// `live_clusters` when the batch started: every counter as an absolute value (so that the
    /// log applied again after a crash gives the same counts), first, so that any prefix of the
    /// log raises the allocators above the ids it writes; then the operations.
    pub fn into_log(self, live_docs: u64, live_clusters: u64) -> Vec<LogOp> {
        let mut log = Vec::with_capacity(self.ops.len() + 5);
        if let Some((doc, cluster, seq)) = self.next {
            log.push(LogOp::Counter(LogCounter::NextDoc(doc)));
            log.push(LogOp::Counter(LogCounter::NextCluster(cluster)));
            log.push(LogOp::Counter(LogCounter::NextSeq(seq)));
        }
        let moved = |base: u64, by: i64| base.saturating_add_signed(by);
        log.push(LogOp::Counter(LogCounter::LiveDocs(moved(
            live_docs,
            self.live_docs,
        ))));
        log.push(LogOp::Counter(LogCounter::LiveClusters(moved(
            live_clusters,
            self.live_clusters,
        ))));
        log.extend(self.ops);
        log
    }
}

/// Which stored key an operation of a state log sets, as bytes that sort by column family and
/// key.
pub(super) fn address(op: &LogOp) -> Vec<u8> {
    let mut a = Vec::with_capacity(16);
    match op {
        LogOp::Posting { key, .. } => {
            a.push(0);
            a.extend_from_slice(key);
        }
        LogOp::Simhash {
            table,
            simhash,
            doc,
            ..
        } => {
            a.push(1);
            a.push(*table);
            a.extend_from_slice(&simhash.to_be_bytes());
            a.extend_from_slice(&doc.to_be_bytes());
        }
        LogOp::Frequent { key, .. } => {
            a.push(2);
            a.extend_from_slice(key);
        }
        LogOp::Key { key, .. } => {
            a.push(3);
            a.extend_from_slice(key.as_bytes());
        }
        LogOp::Doc { id, .. } => {
            a.push(4);
            a.extend_from_slice(&id.to_be_bytes());
        }
        LogOp::Text { id, .. } => {
            a.push(5);
            a.extend_from_slice(&id.to_be_bytes());
        }
        LogOp::Cluster { id, .. } => {
            a.push(6);
            a.extend_from_slice(&id.to_be_bytes());
        }
        LogOp::PageBlocks { id, .. } => {
            a.push(7);
            a.extend_from_slice(&id.to_be_bytes());
        }
        LogOp::HostPages { host, .. } => {
            a.push(8);
            a.extend_from_slice(host.as_bytes());
        }
        LogOp::BlockPages { host, block, .. } => {
            a.push(9);
            a.extend_from_slice(&block.to_be_bytes());
            a.extend_from_slice(host.as_bytes());
        }
        LogOp::FreeDoc { id, .. } => {
            a.push(10);
            a.extend_from_slice(&id.to_be_bytes());
        }
        LogOp::FreeCluster { id, .. } => {
            a.push(11);
            a.extend_from_slice(&id.to_be_bytes());
        }
        LogOp::Counter(c) => {
            a.push(12);
            a.push(match c {
                LogCounter::NextDoc(_) => 0,
                LogCounter::NextCluster(_) => 1,
                LogCounter::LiveDocs(_) => 2,
                LogCounter::LiveClusters(_) => 3,
                LogCounter::NextSeq(_) => 4,
            });
        }
    }
    a
}

/// The operation that takes away what `op` stored.
pub(super) fn undo(op: &LogOp) -> Option<LogOp> {
    Some(match op.clone() {
        LogOp::Posting { key, delta } => LogOp::Posting {
            key,
            delta: Delta {
                add: RoaringBitmap::new(),
                remove: delta.add,
            },
        },
        LogOp::Simhash {
            table,
            simhash,
            doc,
            ..
        } => LogOp::Simhash {
            table,
            simhash,
            doc,
            present: false,
        },
        LogOp::Frequent { key, .. } => LogOp::Frequent { key, reason: None },
        LogOp::Key { key, .. } => LogOp::Key { key, doc: None },
        LogOp::Doc { id, .. } => LogOp::Doc { id, record: None },
        LogOp::Text { id, .. } => LogOp::Text { id, value: None },
        LogOp::Cluster { id, .. } => LogOp::Cluster { id, record: None },
        LogOp::PageBlocks { id, .. } => LogOp::PageBlocks { id, blocks: None },
        LogOp::HostPages { host, .. } => LogOp::HostPages { host, pages: 0 },
        LogOp::BlockPages { host, block, .. } => LogOp::BlockPages {
            host,
            block,
            pages: 0,
        },
        LogOp::FreeDoc { id, .. } => LogOp::FreeDoc { id, free: false },
        LogOp::FreeCluster { id, .. } => LogOp::FreeCluster { id, free: false },
        LogOp::Counter(_) => return None,
    })
}

/// The live page and cluster counts the counters of a state log hold (0 for one it lacks; the
/// first of each).
pub(super) fn live_counts<'a>(log: impl IntoIterator<Item = &'a LogOp>) -> (u64, u64) {
    let (mut docs, mut clusters) = (None, None);
    for op in log {
        match op {
            LogOp::Counter(LogCounter::LiveDocs(n)) => docs = docs.or(Some(*n)),
            LogOp::Counter(LogCounter::LiveClusters(n)) => clusters = clusters.or(Some(*n)),
            _ => {}
        }
    }
    (docs.unwrap_or(0), clusters.unwrap_or(0))
}

/// `a - b` as a change of a count. Counts from a decoded log may be anything: the change
/// saturates instead of overflowing.
pub(super) fn count_change(a: u64, b: u64) -> i64 {
    (i128::from(a) - i128::from(b)).clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

/// The change of a posting from what a state log `before` held at its address (nothing, or a
/// posting) to `now`: the ids taken out and put in, `None` when there are none (the seed's
/// postings hold part of the standing ones, so only the change is written).
pub(super) fn posting_change(
    key: &[u8; 9],
    now: &RoaringBitmap,
    before: Option<&LogOp>,
) -> Option<LogOp> {
    let empty = RoaringBitmap::new();
    let had = match before {
        Some(LogOp::Posting { delta, .. }) => &delta.add,
        _ => &empty,
    };
    let change = Delta {
        add: now - had,
        remove: had - now,
    };
    (!change.add.is_empty() || !change.remove.is_empty()).then_some(LogOp::Posting {
        key: *key,
        delta: change,
    })
}

/// The change from state `before` to state `after`, both state logs of one scratch index
/// ([`Index::state_log`]; SCALEOUT §5 S4.5): what `after` no longer holds taken away, values
/// that changed written whole, a posting's ids taken out and put in (only those: the seed's
/// postings hold part of the standing ones), the allocators as `after` leaves them, and the
/// live counts as changes.
pub fn state_diff(before: &[LogOp], after: &[LogOp]) -> StateDiff {
    let old: BTreeMap<Vec<u8>, &LogOp> = before.iter().map(|op| (address(op), op)).collect();
    let new: BTreeMap<Vec<u8>, &LogOp> = after.iter().map(|op| (address(op), op)).collect();
    let mut diff = StateDiff::default();
    let counter = |log: &BTreeMap<Vec<u8>, &LogOp>, which: fn(&LogCounter) -> Option<u64>| {
        log.values()
            .find_map(|op| match op {
                LogOp::Counter(c) => which(c),
                _ => None,
            })
            .unwrap_or(0)
    };
    let (new_docs, new_clusters) = live_counts(new.values().copied());
    let (old_docs, old_clusters) = live_counts(old.values().copied());
    diff.live_docs = count_change(new_docs, old_docs);
    diff.live_clusters = count_change(new_clusters, old_clusters);
    diff.next = Some((
        counter(&new, |c| match c {
            LogCounter::NextDoc(v) => Some(u64::from(*v)),
            _ => None,
        }) as DocId,
        counter(&new, |c| match c {
            LogCounter::NextCluster(v) => Some(u64::from(*v)),
            _ => None,
        }) as ClusterId,
        counter(&new, |c| match c {
            LogCounter::NextSeq(v) => Some(*v),
            _ => None,
        }),
    ));
    let mut postings = Vec::new();
    for (address, op) in &old {
        if !new.contains_key(address) {
            diff.ops.extend(undo(op));
        }
    }
    for (address, op) in &new {
        match (op, old.get(address)) {
            (LogOp::Counter(_), _) => {}
            (LogOp::Posting { key, delta }, before) => {
                postings.extend(posting_change(key, &delta.add, before.copied()));
            }
            (op, Some(before)) if op == before => {}
            (op, _) => diff.ops.push((*op).clone()),
        }
    }
    diff.ops.extend(postings);
    diff
}

/// The rows of seeded page `id` (SCALEOUT §5 S4.2), for an index or a partition of either id
/// width: its entry in each of `tables` simhash tables, its key, its text value and its record.
/// A seed held in memory, made by `seed` (given runs that never spill and where its operations
/// go).
pub(super) fn seed_vec<I: IdWidth>(
    seed: impl FnOnce(PostingRuns, &mut dyn FnMut(LogOp<I>) -> Result<()>) -> Result<()>,
) -> Result<Vec<LogOp<I>>> {
    let mut log = Vec::new();
    seed(PostingRuns::in_memory(), &mut |op| {
        log.push(op);
        Ok(())
    })?;
    Ok(log)
}

/// A seed written to a new file at `path` by `seed` (given the spilling runs of its postings
/// and where its operations go): its size, or the error with no file left at `path`.
pub(super) fn seed_file<I: IdWidth>(
    path: &std::path::Path,
    seed: impl FnOnce(PostingRuns, &mut dyn FnMut(LogOp<I>) -> Result<()>) -> Result<()>,
) -> Result<u64> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let written = LogFileWriter::<I>::create(path).and_then(|mut w| {
        seed(PostingRuns::spilling(dir, RUN_PAIRS), &mut |op| w.push(&op))?;
        w.finish()
    });
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

pub(super) fn push_page_rows<I: IdWidth>(
    log: &mut Vec<LogOp<I>>,
    tables: u8,
    id: I,
    record: DocRecord<I>,
    value: TextValue,
) {
    for t in 0..tables {
        log.push(LogOp::Simhash {
            table: t,
            simhash: record.simhash,
            doc: id,
            present: true,
        });
    }
    log.push(LogOp::Key {
        key: record.key.clone(),
        doc: Some(id),
    });
    log.push(LogOp::Text {
        id,
        value: Some(value),
    });
    log.push(LogOp::Doc {
        id,
        record: Some(record),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posting(key: u8, ids: &[u32]) -> LogOp {
        LogOp::Posting {
            key: [key; 9],
            delta: Delta {
                add: ids.iter().copied().collect(),
                remove: RoaringBitmap::new(),
            },
        }
    }

    #[test]
    fn the_diff_takes_out_and_puts_in_only_what_changed() {
        let before = vec![
            LogOp::Counter(LogCounter::LiveDocs(5)),
            LogOp::Counter(LogCounter::LiveClusters(3)),
            LogOp::Counter(LogCounter::NextDoc(9)),
            posting(1, &[1, 2]),
            posting(2, &[4]),
            posting(3, &[5]),
            LogOp::FreeDoc { id: 7, free: true },
        ];
        let after = vec![
            LogOp::Counter(LogCounter::LiveDocs(7)),
            LogOp::Counter(LogCounter::LiveClusters(2)),
            LogOp::Counter(LogCounter::NextDoc(11)),
            posting(1, &[2, 3]),
            posting(3, &[5]),
            posting(4, &[8]),
        ];
        let d = state_diff(&before, &after);
        assert_eq!((d.live_docs, d.live_clusters), (2, -1));
        let change = |key: u8, add: &[u32], remove: &[u32]| LogOp::Posting {
            key: [key; 9],
            delta: Delta {
                add: add.iter().copied().collect(),
                remove: remove.iter().copied().collect(),
            },
        };
        assert_eq!(
            d.ops,
            vec![
                change(2, &[], &[4]),
                LogOp::FreeDoc { id: 7, free: false },
                change(1, &[3], &[1]),
                change(4, &[8], &[]),
            ]
        );
        let log = d.into_log(1_000, 400);
        assert!(log.contains(&LogOp::Counter(LogCounter::NextDoc(11))));
        assert!(log.contains(&LogOp::Counter(LogCounter::LiveDocs(1_002))));
        assert!(log.contains(&LogOp::Counter(LogCounter::LiveClusters(399))));
    }

    #[test]
    fn a_seed_whose_postings_spill_to_runs_is_the_seed_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::IndexOptions {
            sync_writes: false,
            ..crate::IndexOptions::default()
        };
        let ix = Index::open(dir.path().join("ix"), opts).unwrap();
        for i in 0..12 {
            let text = format!(
                "Branch {i} of the library closes for two weeks while the reading room is \
                 painted. Readers of branch {} can borrow from the station hall. Returns go to \
                 the box by the door until the work is over.",
                i % 4
            );
            let key = format!("k{i}");
            ix.insert(&crate::Page {
                key: &key,
                host: "h",
                time: 0,
                content: crate::Content::Text(&text),
            })
            .unwrap();
        }
        let pages: Vec<DocId> = (0..12).collect();
        let clusters = ix.clusters_at(&pages, None).unwrap();
        let clusters: Vec<ClusterId> = clusters.into_iter().flatten().collect();
        let whole = ix.seed_log(&pages, &clusters).unwrap();
        let mut spilled = Vec::new();
        let runs = PostingRuns::spilling(dir.path(), 5);
        ix.seed_into(&pages, &clusters, runs, &mut |op| {
            spilled.push(op);
            Ok(())
        })
        .unwrap();
        assert!(
            whole
                .iter()
                .filter(|op| matches!(op, LogOp::Posting { .. }))
                .count()
                > 20
        );
        assert_eq!(spilled, whole);
    }
}
