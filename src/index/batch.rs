//! Batch ingest for daily merges (issue "The index" §5): signatures in parallel, the batch in
//! descending fingerprint count (seed 000 §4.2: large clusters form first and similarity spreads
//! one way, larger to smaller), grouped `WriteBatch`es.
//!
//! The writer is the serial part: it must decide page after page, each on the state the pages
//! before it built. To keep it short, each window of the batch goes through three stages:
//!
//! 1. **Prepare** (in the background while the writer inserts the previous window): signatures,
//!    the insertion order, and the window's own postings — which pages of the window share
//!    which keys.
//! 2. **Pre-decide** (on every worker): each page is decided against the index as it stands, and
//!    verified against the pages of its own window it is likely to meet — the earliest one it
//!    shares a key with (the founder of their cluster, when the window forms one) and the one it
//!    shares the most keys with. Every verification outcome found is kept in the page's
//!    [`Memo`].
//! 3. **Insert** (the writer): the real decision, which verifies only against pages the
//!    outcomes do not cover. An outcome depends on the two pages alone (see
//!    [`super::cluster::Outcome`]), so the writer's decisions are exactly those it would make
//!    on its own; the stages change only where the work is done.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use roaring::RoaringBitmap;

use super::cluster::{Memo, Outcome, MEMBER_FALLBACK, STRONG_MATCH};
use super::txn::Txn;
use super::{check_page, signature_keys, Index, Known, Page, Probe, Timing, Verdict};
use crate::fingerprint::Signatures;
use crate::storage::codec::{ClusterId, DocId};
use crate::storage::merge::Delta;
use crate::storage::{kind, posting_key};
use crate::{Error, Result};

/// Order in which a batch is inserted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchOrder {
    /// Descending number of sentence fingerprints, so that large clusters form first and
    /// similarity spreads one way, larger to smaller (seed 000 §4.2). The default.
    #[default]
    FingerprintCount,
    /// The order given (corpus order).
    Input,
}

/// Options of [`Index::insert_batch`].
#[derive(Clone, Copy, Debug)]
pub struct BatchOptions {
    /// Insertion order.
    pub order: BatchOrder,
    /// Pages per committed `WriteBatch`.
    pub group: usize,
    /// Pages prepared and pre-decided together; the next window's signatures are computed
    /// while this one is inserted.
    pub window: usize,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            order: BatchOrder::FingerprintCount,
            group: 256,
            window: 1024,
        }
    }
}

/// A window of a batch, prepared off the writer.
struct Window {
    /// Signatures by page (an `Err` for a page that cannot be inserted, including a page
    /// superseded by a later one with the same key).
    sigs: Vec<Option<Result<Signatures>>>,
    /// Insertion order (indexes into `sigs`).
    order: Vec<usize>,
    /// Rank of each page in `order`.
    rank: Vec<u32>,
    /// The window's own postings: posting key → pages carrying it, in insertion order.
    postings: HashMap<[u8; 9], Vec<u32>>,
    /// Time the signatures took, per page.
    signature: Duration,
}

/// A page a pre-decision verifies against.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// A page in the index, of this cluster.
    Index(ClusterId, DocId),
    /// A page of the window.
    Window(u32),
}

/// The pages of its window a page shares posting keys with, inserted before it.
#[derive(Default)]
struct Near {
    /// The earliest of them.
    earliest: Option<u32>,
    /// The one sharing the most fingerprints.
    most: Option<u32>,
    /// How many it shares.
    shared: u32,
    /// One of them has the same content.
    exact: bool,
}

/// An outcome as a match: `(exact, resemble)`, `None` for no match.
fn outcome_match(o: Outcome) -> Option<(bool, f64)> {
    match o {
        Outcome::Conflict | Outcome::Verified(None) => None,
        Outcome::Exact => Some((true, 1.0)),
        Outcome::Verified(Some((resemble, _))) => Some((false, resemble)),
    }
}

/// What a page's pre-decision found.
#[derive(Default)]
struct Pre {
    /// Outcomes against pages already in the index.
    memo: Memo,
    /// Outcomes against pages of the same window (by index in the window).
    in_window: Vec<(u32, Outcome)>,
    /// The postings its candidate search read, sorted by key.
    postings: Vec<([u8; 9], RoaringBitmap)>,
    /// Time spent on candidates and verification.
    timing: Timing,
}

impl Index {
    /// Inserts many pages: signatures in parallel, then insertion in `opts.order`, committed in
    /// groups of `opts.group` pages per write. Pages are taken in windows of `opts.window`: the
    /// signatures of the next window are computed while the current one is inserted, and the
    /// fingerprint-count order applies within a window. Returns one result per page, in input
    /// order; a page that fails (bad content) does not stop the others. `progress(done, total)` is
    /// called after every committed group. With [`crate::IndexOptions::sync_writes`] the groups
    /// are committed without syncing and the WAL is synced once before the batch returns: every
    /// page of a batch that returned `Ok` survives a power loss; a committed group survives a
    /// crash of the process at once.
    ///
    /// Verification runs on rayon's global pool ahead of the writer, except for an index that
    /// takes its texts from a [`super::TextSource`], whose callback is only ever called from the
    /// caller's thread. The decisions are the same either way.
    ///
    /// # Errors
    /// The outer error is a storage failure that stopped the batch (the index is then poisoned;
    /// groups committed before it stay, durable against a crash of the process).
    pub fn insert_batch(
        &self,
        pages: &[Page<'_>],
        opts: &BatchOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<Result<Verdict>>> {
        self.check_writable()?;
        let window = opts.window.max(1);
        let ranges: Vec<std::ops::Range<usize>> = (0..pages.len())
            .step_by(window)
            .map(|a| a..(a + window).min(pages.len()))
            .collect();
        let mut results: Vec<Option<Result<Verdict>>> = (0..pages.len()).map(|_| None).collect();
        let mut done = 0;
        std::thread::scope(|scope| -> Result<()> {
            let spawn = |r: &std::ops::Range<usize>| {
                let r = r.clone();
                scope.spawn(move || self.prepare(&pages[r], opts.order))
            };
            let mut pending = ranges.first().map(spawn);
            for (wi, range) in ranges.iter().enumerate() {
                let Some(handle) = pending.take() else { break };
                let w = handle
                    .join()
                    .map_err(|_| Error::InvalidArgument("a signature worker panicked".into()))?;
                // Pre-decisions first, on every worker, then the next window's preparation in
                // the background while the writer inserts this one: the workers never hold a
                // job the writer waits for behind one it does not.
                let start = self.commits.load(Ordering::Acquire);
                let (pre, current) = self.pre_decide(&w);
                pending = ranges.get(wi + 1).map(spawn);
                self.insert_window(
                    &pages[range.clone()],
                    w,
                    pre,
                    current.then_some(start),
                    opts,
                    &mut results[range.clone()],
                    &mut |n| {
                        done += n;
                        progress(done, pages.len());
                    },
                )?;
            }
            Ok(())
        })?;
        // Groups were committed without syncing the WAL: one sync makes the whole batch
        // durable before it returns.
        if self.opts.sync_writes && done > 0 {
            if let Err(e) = self.db.flush_wal(true) {
                self.poisoned.store(true, Ordering::Release);
                return Err(Error::storage("syncing the write-ahead log", e));
            }
        }
        Ok(results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(Error::InvalidArgument("page was not processed".into())))
            })
            .collect())
    }

    /// Stage 1: signatures in parallel, pages superseded within the window, insertion order,
    /// and the window's own postings.
    fn prepare(&self, pages: &[Page<'_>], order_by: BatchOrder) -> Window {
        let cfg = &self.opts.signature;
        let t0 = Instant::now();
        let mut sigs: Vec<Option<Result<Signatures>>> = pages
            .par_iter()
            .map(|p| Some(check_page(p).and_then(|_| Signatures::compute(p.content, cfg))))
            .collect();
        let signature = t0.elapsed() / pages.len().max(1) as u32;
        // A key given twice in one window: only its last page is inserted (the order within the
        // window may change, the outcome must not).
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, p) in pages.iter().enumerate() {
            last.insert(p.key, i);
        }
        for (i, p) in pages.iter().enumerate() {
            if last.get(p.key) != Some(&i) && matches!(sigs[i], Some(Ok(_))) {
                sigs[i] = Some(Err(Error::InvalidArgument(format!(
                    "page {:?} superseded by a later page with the same key in the batch",
                    p.key
                ))));
            }
        }
        let mut order: Vec<usize> = (0..pages.len()).collect();
        if order_by == BatchOrder::FingerprintCount {
            let count = |i: usize| match &sigs[i] {
                Some(Ok(s)) => s.fingerprints.len(),
                _ => 0,
            };
            order.sort_by_key(|&i| std::cmp::Reverse(count(i)));
        }
        let mut rank = vec![0u32; pages.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        let mut postings: HashMap<[u8; 9], Vec<u32>> = HashMap::new();
        if self.source.is_none() {
            let frequent = self.frequent.read();
            for &i in &order {
                if let Some(Ok(s)) = &sigs[i] {
                    let keys = signature_keys(&s.fingerprints, &s.sketch);
                    let content = posting_key(kind::CONTENT, s.content_hash);
                    for key in keys.into_iter().chain(std::iter::once(content)) {
                        if !frequent.contains(&key) {
                            postings.entry(key).or_default().push(i as u32);
                        }
                    }
                }
            }
        }
        Window {
            sigs,
            order,
            rank,
            postings,
            signature,
        }
    }

    /// Stage 2: each page of the window pre-decided in parallel (see the module docs). An error
    /// is left for the writer to meet. An index that takes texts from a [`super::TextSource`]
    /// skips this stage.
    ///
    /// Returns the pre-decisions and whether the postings they read are the index's current
    /// ones (no write was committed while they were read).
    fn pre_decide(&self, w: &Window) -> (Vec<Pre>, bool) {
        if self.source.is_some() {
            return (w.sigs.iter().map(|_| Pre::default()).collect(), false);
        }
        let before = self.commits.load(Ordering::Acquire);
        let pre = (0..w.sigs.len())
            .into_par_iter()
            .map(|i| {
                let mut pre = Pre::default();
                if let Some(Ok(sig)) = &w.sigs[i] {
                    let _ = self.pre_decide_one(w, i, sig, &mut pre);
                }
                pre
            })
            .collect();
        (pre, self.commits.load(Ordering::Acquire) == before)
    }

    /// Verifies page `i` the way the writer is likely to: against the representatives of the
    /// clusters it ranks first in the index, and against the earliest page of its window it
    /// shares a key with, best ranked first (exact content, then most shared fingerprints), until
    /// a strong match, as [`Index::decide`] does; with no match at all, against the best
    /// candidate members too.
    fn pre_decide_one(&self, w: &Window, i: usize, sig: &Signatures, pre: &mut Pre) -> Result<()> {
        let probe = Probe::of(sig);
        let tc = Instant::now();
        let (ranked, _) = self.rank(None, &probe, None, None, Some(&mut pre.postings))?;
        pre.postings.sort_unstable_by_key(|p| p.0);
        pre.postings.dedup_by(|a, b| a.0 == b.0);
        let near = self.in_window(w, i, sig);
        let mut targets: Vec<(bool, u32, Target)> = Vec::with_capacity(ranked.len() + 1);
        for &(cid, rank) in &ranked {
            if let Some(cl) = self.cluster(cid)? {
                let t = Target::Index(cid, cl.representative);
                targets.push((rank.exact, rank.shared, t));
            }
        }
        if let Some(j) = near.earliest {
            targets.push((near.exact, near.shared, Target::Window(j)));
        }
        // Stable: on a tie the index's clusters stay first.
        targets.sort_by_key(|t| std::cmp::Reverse((t.0, t.1)));
        targets.truncate(self.opts.max_clusters_verified);
        pre.timing.candidates += tc.elapsed();

        let tv = Instant::now();
        let mut found = None;
        for &(_, _, target) in &targets {
            let m = self.pre_match(w, &probe, target, pre)?;
            found = found.max(m);
            if m == Some(true) {
                break;
            }
        }
        if found.is_none() {
            for (cid, rank) in ranked.iter().take(MEMBER_FALLBACK) {
                self.pre_match(w, &probe, Target::Index(*cid, rank.best_member), pre)?;
            }
            if let Some(j) = near.most.filter(|&j| Some(j) != near.earliest) {
                self.pre_match(w, &probe, Target::Window(j), pre)?;
            }
        }
        pre.timing.verify += tv.elapsed();
        Ok(())
    }

    /// Verifies a probe against one target, recording the outcome: `None` for no match,
    /// `Some(strong)` for a match.
    fn pre_match(
        &self,
        w: &Window,
        probe: &Probe<'_>,
        target: Target,
        pre: &mut Pre,
    ) -> Result<Option<bool>> {
        let strong = |exact: bool, resemble: f64| exact || resemble >= STRONG_MATCH;
        match target {
            Target::Index(cid, against) => {
                let m =
                    self.try_match(None, probe, cid, against, against, &mut 0, &mut pre.memo)?;
                Ok(m.map(|m| strong(m.exact, m.resemble)))
            }
            Target::Window(j) => {
                if let Some(&(_, o)) = pre.in_window.iter().find(|(k, _)| *k == j) {
                    return Ok(outcome_match(o).map(|(e, r)| strong(e, r)));
                }
                let Some(Ok(other)) = &w.sigs[j as usize] else {
                    return Ok(None);
                };
                let text = Some(other.text.as_str());
                let o = self.outcome(probe, &other.codes, other.content_hash, text);
                pre.in_window.push((j, o));
                Ok(outcome_match(o).map(|(e, r)| strong(e, r)))
            }
        }
    }

    /// The pages of the window inserted before page `i` that share posting keys with it.
    fn in_window(&self, w: &Window, i: usize, sig: &Signatures) -> Near {
        let me = w.rank[i];
        let mut shared: HashMap<u32, u32> = HashMap::new();
        let mut near = Near::default();
        let content = posting_key(kind::CONTENT, sig.content_hash);
        if let Some(pages) = w.postings.get(&content) {
            for &j in pages.iter().take_while(|&&j| w.rank[j as usize] < me) {
                near.exact = true;
                shared.entry(j).or_default();
            }
        }
        for key in signature_keys(&sig.fingerprints, &sig.sketch) {
            let Some(pages) = w.postings.get(&key) else {
                continue;
            };
            // Pages are listed in insertion order: the ones before page `i` come first.
            for &j in pages.iter().take_while(|&&j| w.rank[j as usize] < me) {
                *shared.entry(j).or_default() += 1;
            }
        }
        near.earliest = shared.keys().copied().min_by_key(|&j| w.rank[j as usize]);
        if let Some((&j, &n)) = shared
            .iter()
            .max_by_key(|&(&j, &n)| (n, std::cmp::Reverse(w.rank[j as usize])))
        {
            near.most = Some(j);
            near.shared = n;
        }
        near
    }

    /// Stage 3: the writer inserts the window in its order, a group per write.
    #[allow(clippy::too_many_arguments)]
    fn insert_window(
        &self,
        pages: &[Page<'_>],
        mut w: Window,
        mut pre: Vec<Pre>,
        read_at: Option<u64>,
        opts: &BatchOptions,
        results: &mut [Option<Result<Verdict>>],
        progress: &mut dyn FnMut(usize),
    ) -> Result<()> {
        // The id each page of the window got, once inserted: outcomes against pages of the
        // window join a page's memo under those ids.
        let mut doc_of: Vec<Option<DocId>> = vec![None; pages.len()];
        // The postings the pre-decisions read stay usable, with the changes this window commits
        // applied on top, as long as no other write comes between (`read_at` counts commits).
        let mut since: Vec<HashMap<[u8; 9], Delta>> = Vec::new();
        let order = std::mem::take(&mut w.order);
        for chunk in order.chunks(opts.group.max(1)) {
            let mut counters = self.lock_writer()?;
            let first_id = counters.next_doc;
            let current = |since: &[HashMap<[u8; 9], Delta>]| {
                read_at
                    .is_some_and(|c| self.commits.load(Ordering::Acquire) == c + since.len() as u64)
            };
            let mut txn = Txn::new(self, &counters);
            let mut verdicts = Vec::with_capacity(chunk.len());
            let mut failed = false;
            let use_reads = current(&since);
            for &i in chunk {
                if let Some(Ok(sig)) = &w.sigs[i] {
                    let (memo, known) = known_outcomes(&mut pre[i], &doc_of, use_reads, &since);
                    match self.insert_in(&mut txn, &pages[i], sig, memo, known) {
                        Ok(v) => {
                            doc_of[i] = v.doc;
                            verdicts.push((i, v));
                        }
                        Err(_) => {
                            failed = true;
                            break;
                        }
                    }
                }
            }
            if failed {
                // One page failed inside the shared write: redo the group page by page, so that
                // only that page is left out. The ids the failed write gave out are given anew.
                drop(txn);
                for &i in chunk {
                    doc_of[i] = None;
                    pre[i].memo.forget_from(first_id);
                }
                for &i in chunk {
                    if let Some(Ok(sig)) = &w.sigs[i] {
                        let mut one = Txn::new(self, &counters);
                        let use_reads = current(&since);
                        let (memo, known) = known_outcomes(&mut pre[i], &doc_of, use_reads, &since);
                        let r = self.insert_in(&mut one, &pages[i], sig, memo, known);
                        let r = match r {
                            Ok(v) => match self.commit(one, &mut counters, false) {
                                Ok(changes) => {
                                    since.push(changes);
                                    Ok(v)
                                }
                                Err(e) => Err(e),
                            },
                            Err(e) => Err(e),
                        };
                        if matches!(r, Err(Error::Storage { .. }))
                            && self.poisoned.load(Ordering::Acquire)
                        {
                            return r.map(|_| ());
                        }
                        if let Ok(v) = &r {
                            doc_of[i] = v.doc;
                        }
                        results[i] = Some(r);
                    }
                }
            } else {
                let tw = Instant::now();
                since.push(self.commit(txn, &mut counters, false)?);
                // The group's commit is shared by its pages.
                let share = tw.elapsed() / verdicts.len().max(1) as u32;
                for (i, mut v) in verdicts {
                    v.timing.write += share;
                    results[i] = Some(Ok(v));
                }
            }
            drop(counters);
            for &i in chunk {
                if results[i].is_none() {
                    if let Some(Err(e)) = w.sigs[i].take() {
                        results[i] = Some(Err(e));
                    }
                }
                if let Some(Ok(v)) = results[i].as_mut() {
                    // Work done for the page ahead of the writer counts as its own.
                    v.timing.signature = w.signature;
                    v.timing.candidates += pre[i].timing.candidates;
                    v.timing.verify += pre[i].timing.verify;
                }
            }
            progress(chunk.len());
        }
        Ok(())
    }
}

/// What the writer takes from a page's pre-decision: its memo, with its outcomes against pages
/// of its window that are in the index by now, and the postings it read when `current`.
fn known_outcomes<'m>(
    pre: &'m mut Pre,
    doc_of: &[Option<DocId>],
    current: bool,
    since: &'m [HashMap<[u8; 9], Delta>],
) -> (&'m mut Memo, Option<Known<'m>>) {
    for &(j, o) in &pre.in_window {
        if let Some(id) = doc_of[j as usize] {
            pre.memo.insert(id, o);
        }
    }
    let known = current.then_some(Known {
        read: &pre.postings,
        since,
    });
    (&mut pre.memo, known)
}
