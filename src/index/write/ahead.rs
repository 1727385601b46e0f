//! Stage 2 of batch ingest, the look-ahead: each page of a window decided against a snapshot
//! of the index and verified against the pages of its own window and of the one before, on
//! rayon's pool while the writer inserts the window before; the outcomes and the postings read
//! go to the writer (see `batch`).

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::schedule::Board;
use super::window::{Pre, Window};
use crate::index::decide::{shorter_share, ProbeSize, Stored, MEMBER_FALLBACK, STRONG_MATCH};
use crate::index::view::{Ahead, View};
use crate::index::{Index, Probe};
use crate::signature::{page_keys, Signatures};
use crate::storage::codec::{ClusterId, DocId, PageSize};
use crate::storage::{kind, posting_key};
use crate::Result;

/// A page a pre-decision verifies against.
#[derive(Clone, Copy, Debug)]
pub(super) enum Target {
    /// A page in the index, of this cluster.
    Index(ClusterId, DocId),
    /// A page of the window before (below [`Prepared::before`]) or of this one (the index minus
    /// `before`).
    Window(u32),
}

/// The pages of its window a page shares posting keys with, inserted before it.
#[derive(Default)]
pub(super) struct Near {
    /// The earliest of them.
    pub(crate) earliest: Option<u32>,
    /// The one sharing the most fingerprints.
    pub(crate) most: Option<u32>,
    /// How many it shares.
    pub(crate) shared: u32,
    /// One of them has the same content.
    pub(crate) exact: bool,
}

impl Index {
    /// Stage 2: each page of the window pre-decided in parallel (see the module docs), against
    /// a snapshot of the index and the pages of `before` and `w`. An error is left for the
    /// writer to meet. An index that does not store texts skips this stage.
    ///
    /// Returns the pre-decisions and the number of the last commit the snapshot holds.
    pub(super) fn pre_decide<'env>(
        &'env self,
        before: Option<Arc<Window>>,
        w: Arc<Window>,
        board: &Board<'env>,
        here: bool,
    ) -> (Vec<Pre>, Option<u64>) {
        if !self.verifies_ahead() {
            return (w.sigs.iter().map(|_| Pre::default()).collect(), None);
        }
        let (snapshot, read_at) = {
            // Commits happen under the writer lock: the snapshot and the count agree.
            let _writer = self.writer.lock();
            (self.db.snapshot(), self.commits.load(Ordering::Acquire))
        };
        let n = w.sigs.len();
        let pre = board.map(n, here, move |i| {
            let mut pre = Pre::default();
            if let Some(sig) = &w.sigs[i] {
                let b = before.as_deref();
                let _ = self.pre_decide_one(b, &w, i, sig, &snapshot, &mut pre);
            }
            pre
        });
        let pre = pre.into_iter().map(Option::unwrap_or_default).collect();
        (pre, Some(read_at))
    }

    /// Verifies page `i` the way the writer is likely to: against the representatives of the
    /// clusters it ranks first in the index, and against the earliest page of the two windows it
    /// shares a key with, best ranked first (exact content, then most shared fingerprints), until
    /// a strong match, as [`Index::decide`] does; without a strong match, against the best
    /// candidate members too.
    pub(super) fn pre_decide_one(
        &self,
        before: Option<&Window>,
        w: &Window,
        i: usize,
        sig: &Signatures,
        snapshot: &rocksdb::Snapshot<'_>,
        pre: &mut Pre,
    ) -> Result<()> {
        let probe = Probe::of(sig, &self.opts.signature.method);
        let tc = Instant::now();
        let view = Ahead {
            ix: self,
            snap: snapshot,
            keep: RefCell::new(std::mem::take(&mut pre.postings)),
        };
        let ranked = self.rank(&view, &probe, None, None);
        // Sorted even when the search failed: the writer looks keys up by binary search.
        pre.postings = view.keep.take();
        pre.postings.sort_unstable_by_key(|p| p.0);
        pre.postings.dedup_by(|a, b| a.0 == b.0);
        let ranked = ranked?.clusters;
        let near = near_pages(before, w, i, sig, &self.opts.signature.method);
        let mut targets: Vec<(bool, u32, u32, Target)> = Vec::with_capacity(ranked.len() + 1);
        for &(cid, rank) in &ranked {
            if let Some(cl) = view.cluster(cid)? {
                let t = Target::Index(cid, cl.representative);
                targets.push((rank.exact, rank.share, rank.shared, t));
            }
        }
        // The windows' pages rank as one cluster would: by any exact match and the share of
        // the page sharing the most keys among them (they are likely one cluster, led by the
        // earliest), measured as the index's candidates are (`shorter_share`).
        if let Some(g) = near.earliest {
            let share = match near.most.and_then(|m| window_page(before, w, m)) {
                Some(other) if self.opts.signature.method.is_lcs() => {
                    let size = PageSize {
                        cluster: 0,
                        text_chars: u32::try_from(other.text.chars().count()).unwrap_or(u32::MAX),
                        fingerprints: u16::try_from(other.fingerprints.len()).unwrap_or(u16::MAX),
                    };
                    let cfg = &self.opts.signature;
                    shorter_share(near.shared, ProbeSize::of(&probe, cfg), size, cfg)
                }
                _ => near.shared,
            };
            targets.push((near.exact, share, near.shared, Target::Window(g)));
        }
        // Stable: on a tie the index's clusters stay first.
        targets.sort_by_key(|t| std::cmp::Reverse((t.0, t.1, t.2)));
        targets.truncate(self.opts.max_clusters_verified);
        pre.timing.candidates += tc.elapsed();

        let tv = Instant::now();
        let mut found = None;
        for &(_, _, _, target) in &targets {
            let m = self.pre_match(&view, (before, w), &probe, target, pre)?;
            found = found.max(m);
            if m == Some(true) {
                break;
            }
        }
        // Without a strong match the writer verifies the best-sharing members too (not under
        // Single-Pass, which compares with centres only).
        if found != Some(true) && !self.opts.signature.method.centres_only() {
            for (cid, rank) in ranked.iter().take(MEMBER_FALLBACK) {
                for member in rank.members() {
                    let t = Target::Index(*cid, member);
                    self.pre_match(&view, (before, w), &probe, t, pre)?;
                }
            }
            if let Some(g) = near.most.filter(|&g| Some(g) != near.earliest) {
                self.pre_match(&view, (before, w), &probe, Target::Window(g), pre)?;
            }
        }
        pre.timing.verify += tv.elapsed();
        Ok(())
    }

    /// Verifies a probe against one target, recording the outcome: `None` for no match,
    /// `Some(strong)` for a match.
    pub(super) fn pre_match(
        &self,
        view: &impl View,
        (before, w): (Option<&Window>, &Window),
        probe: &Probe<'_>,
        target: Target,
        pre: &mut Pre,
    ) -> Result<Option<bool>> {
        let strong = |exact: bool, resemble: f64| exact || resemble >= STRONG_MATCH;
        match target {
            Target::Index(cid, against) => {
                let m =
                    self.try_match(view, probe, cid, against, against, &mut 0, &mut pre.memo)?;
                Ok(m.map(|m| strong(m.exact, m.resemble)))
            }
            Target::Window(g) => {
                let o = match pre.in_window.iter().find(|(k, _)| *k == g) {
                    Some(&(_, o)) => o,
                    None => {
                        let Some(other) = window_page(before, w, g) else {
                            return Ok(None);
                        };
                        let text = || Ok(Some(other.text.as_str()));
                        let stored = Stored {
                            codes: &other.codes,
                            content_hash: other.content_hash,
                            simhash: other.simhash,
                            features: Some(&other.features),
                        };
                        let Some(o) = self.outcome(view, probe, &stored, text)? else {
                            return Ok(None);
                        };
                        pre.in_window.push((g, o));
                        o
                    }
                };
                Ok(o.matched().map(|(e, r, _)| strong(e, r)))
            }
        }
    }
}

/// The signatures of page `g` of the two windows (see [`Target::Window`]).
fn window_page<'w>(before: Option<&'w Window>, w: &'w Window, g: u32) -> Option<&'w Signatures> {
    let n = before.map_or(0, |b| b.sigs.len());
    match before {
        Some(b) if (g as usize) < n => b.sigs[g as usize].as_ref(),
        _ => w.sigs.get(g as usize - n)?.as_ref(),
    }
}

/// The pages inserted before page `i` of `w`, in `w` and in the window before, that share
/// posting keys with it (indexes as in [`Target::Window`]).
fn near_pages(
    before: Option<&Window>,
    w: &Window,
    i: usize,
    sig: &Signatures,
    method: &crate::Method,
) -> Near {
    let n = before.map_or(0, |b| b.sigs.len() as u32);
    // Insertion rank over both windows: all of `before` comes first.
    let rank = |g: u32| match before {
        Some(b) if g < n => b.rank[g as usize],
        _ => n + w.rank[(g - n) as usize],
    };
    let me = n + w.rank[i];
    let mut shared = rustc_hash::FxHashMap::<u32, u32>::default();
    let mut near = Near::default();
    let mut visit = |key: &[u8; 9], content: bool| {
        let lists = before
            .map(|b| (0, b))
            .into_iter()
            .chain(std::iter::once((n, w)));
        for (offset, win) in lists {
            let Some(pages) = win.postings.get(key) else {
                continue;
            };
            // Pages are listed in insertion order: the ones before page `i` come first.
            for &j in pages.iter().take_while(|&&j| rank(offset + j) < me) {
                let count = shared.entry(offset + j).or_default();
                if content {
                    near.exact = true;
                } else {
                    *count += 1;
                }
            }
        }
    };
    visit(&posting_key(kind::CONTENT, sig.content_hash), true);
    for key in page_keys(&sig.fingerprints, &sig.sketch, &sig.features, method) {
        visit(&key, false);
    }
    near.earliest = shared.keys().copied().min_by_key(|&g| rank(g));
    if let Some((&g, &c)) = shared
        .iter()
        .max_by_key(|&(&g, &c)| (c, std::cmp::Reverse(rank(g))))
    {
        near.most = Some(g);
        near.shared = c;
    }
    near
}
