//! The pipeline of [`super::verify`] (module doc of `verify`): each thread's reusable buffers,
//! the work budgets, the core comparison of two unit sequences in the canonical orientation
//! (skeletons, early reject, bounded LCS, trustable LCS, rounds) and the located window of a
//! long text.

use super::config::ScriptParams;
use super::*;

/// Reusable working memory of the pipeline: kept per thread between calls, so a verification
/// allocates (and page-faults) nothing once the buffers have grown to the texts' sizes.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) units_a: Vec<u32>,
    pub(super) units_b: Vec<u32>,
    pub(super) work: Work,
}

/// The buffers of [`compare`].
#[derive(Default)]
pub(super) struct Work {
    skel: skeleton::SkeletonBuf,
    sk_a: Skeleton,
    sk_b: Skeleton,
    myers: myers::MyersBuf,
    anchors: anchored::AnchorBuf,
    votes: Vec<u32>,
    pairs: Vec<(usize, usize)>,
    matched: Vec<bool>,
    curve: Vec<usize>,
    /// This round's alignment in positions of the current A and of B (refilled in round 1).
    full: Vec<(usize, usize)>,
    /// Scratch of the gap refill.
    dp: Vec<u16>,
    aligned: Vec<(usize, usize)>,
}

/// Myers' smallest work budget per pair (diagonals visited plus units compared, all rounds
/// together): 262,144, well under a millisecond. The budget is [`EXACT_WORK_PER_UNIT`] per unit
/// of the two skeletons, within `EXACT_WORK..=EXACT_WORK_MAX`, so a wasted search never costs
/// more than a pass over the texts. Skeletons of a few thousand units whose edit distance is up
/// to about 700 fit (the search's work is about `D²` plus the lengths), those of 100,000 units
/// with a few thousand scattered edits too; past it the LCS comes from the bit-parallel
/// programme when one skeleton has at most 1,024 units (exact), else from anchors (module doc,
/// "Long texts"). On natural-dev (every 8th labeled pair) 39 % of the pairs are approximated,
/// mostly PaddleX pages built from one template (tables of model names); the sample's
/// verification takes 74 s of CPU with a fixed budget of 2²⁴ (on a loaded machine), 11.5 s with
/// 2¹⁸, and the verdicts of the approximated pairs differ from the exact ones in 17 of 7,852 (6
/// near duplicates lost, 5 gained; 5 false pairs fewer, 1 more).
const EXACT_WORK: u64 = 1 << 18;

/// Myers' work budget grows with the skeletons' total length by this much per unit, up to
/// [`EXACT_WORK_MAX`].
const EXACT_WORK_PER_UNIT: u64 = 16;

/// The largest work budget of Myers' search, whatever the lengths.
const EXACT_WORK_MAX: u64 = 1 << 24;

/// [`locate`] samples the shared windows when the shorter text has more windows than this.
const LOCATE_SAMPLE_ABOVE: usize = 4096;

/// Traceback table limit of the bit-parallel LCS used when Myers' budget runs out and one
/// skeleton has at most 1,024 units, in words (32 MiB).
const BIT_WORDS: usize = 1 << 22;

/// Rounds beyond two run only while `rounds · (|A| + |B|)` stays within this many units.
const ROUND_UNITS: usize = 1 << 24;

/// The located window of a long text is this many times the short text's length, plus two
/// blocks (module doc, "Long texts").
const WINDOW_FACTOR: usize = 2;

/// The longest located window, in multiples of the shorter text (a text copied in pieces
/// spread over the longer one; see [`locate`]).
const WINDOW_MAX_FACTOR: usize = 4;

/// [`locate`] compares the whole texts when its densest band has fewer votes than this.
const LOCATE_MIN_VOTES: usize = 2;

/// Buffers grown past this many units by a very long text are freed after the call rather than
/// kept for the thread's lifetime.
const SCRATCH_KEEP_UNITS: usize = 1 << 18;

/// The longest gap [`VerifyConfig::refill_gaps`] refills, in skeleton windows (`S` units): the
/// skeleton drops the text between two edits closer than `S` units, so a gap of two windows
/// holds two close edits and the text between them (see the table on the field).
pub const REFILL_GAP_WINDOWS: usize = 2;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's [`Scratch`] (a fresh one if it is unavailable, e.g. during thread
/// teardown). The buffers are moved out for the call, so nothing is borrowed while `f` runs.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut sc = SCRATCH
        .try_with(|c| c.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).ok())
        .ok()
        .flatten()
        .unwrap_or_default();
    let r = f(&mut sc);
    if sc.units_a.capacity().max(sc.units_b.capacity()) <= SCRATCH_KEEP_UNITS
        && sc.work.matched.capacity() <= SCRATCH_KEEP_UNITS
    {
        // Ignoring failure only drops the buffers.
        let _ = SCRATCH.try_with(|c| {
            if let Ok(mut s) = c.try_borrow_mut() {
                *s = sc;
            }
        });
    }
    r
}

/// [`verify_units`] with given buffers.
pub(super) fn verify_with(
    a: &[u32],
    b: &[u32],
    cfg: &VerifyConfig,
    work: &mut Work,
    texts: Option<(&str, &str)>,
) -> Similarity {
    // The longer text plays the paper's A (module doc, "Which text is A").
    let swap = b.len() > a.len() || (a.len() == b.len() && b < a);
    let (big, small) = if swap { (b, a) } else { (a, b) };
    let core = compare(big, small, cfg, work);
    let (resemble, contain) = rates(core.tlcs, a.len(), b.len());
    let lcs_resemble_weighted = weight::weighted_resemble(core.lcs_weight, a, b);
    let (skeleton_a, skeleton_b) = if swap {
        (core.skeleton_small, core.skeleton_big)
    } else {
        (core.skeleton_big, core.skeleton_small)
    };
    let similar = !core.early_reject
        && !core.bound_exceeded
        && (is_similar(resemble, contain, cfg)
            || lcs_similar(core.lcs, a.len(), b.len(), cfg)
            || weighted_lcs_similar(lcs_resemble_weighted, cfg));
    // Located containment (seed 000 §3.2 in chars, `located.rs`): only for a pair kept apart
    // whose alignment covers most of the shorter text, and a shorter text of one TLCS block or
    // more (module doc, "Very short texts": tiny pages are never contained by accident).
    let small_len = a.len().min(b.len());
    let located_contain = match texts {
        Some((ta, tb))
            if !similar
                && !core.early_reject
                && !core.bound_exceeded
                && small_len >= cfg.params_for(if swap { a } else { b }).block_size.max(1)
                && core.lcs as f64 >= cfg.located_contain_min_lcs * small_len as f64 =>
        {
            let (big_text, small_text) = if swap { (tb, ta) } else { (ta, tb) };
            located::located_contain(
                big_text,
                small_text,
                &work.aligned,
                cfg.located_contain_threshold,
            )
            .unwrap_or(0.0)
        }
        _ => 0.0,
    };
    Similarity {
        len_a: a.len(),
        len_b: b.len(),
        skeleton_a,
        skeleton_b,
        lcs: core.lcs,
        tlcs: core.tlcs,
        resemble,
        contain,
        similar: similar
            || (located_contain > 0.0 && located_contain >= cfg.located_contain_threshold),
        located_contain,
        lcs_resemble_weighted,
        region_side: if swap { Side::B } else { Side::A },
        region: core.regions.first().copied(),
        regions: core.regions,
        rounds: core.rounds,
        early_reject: core.early_reject,
        bound_exceeded: core.bound_exceeded,
        approximate: core.approximate,
        window: core.window,
        tlcs_shorter: core.tlcs_shorter,
        region_shorter: core.region_shorter,
    }
}

/// What [`compare`] found, in the canonical orientation (A = `big`).
#[derive(Default)]
struct Core {
    skeleton_big: usize,
    skeleton_small: usize,
    lcs: usize,
    /// The [`unit_weight`] of the `lcs` units.
    lcs_weight: usize,
    tlcs: usize,
    regions: Vec<(usize, usize)>,
    rounds: usize,
    early_reject: bool,
    bound_exceeded: bool,
    approximate: bool,
    window: Option<(usize, usize)>,
    tlcs_shorter: usize,
    region_shorter: Option<(usize, usize)>,
}

/// Skeleton, early reject, bounded LCS and (iterated) TLCS with `a` as the paper's document A:
/// on a located window of `a` when `a` is so much longer than `b` that only containment can make
/// them similar (module doc, "Long texts"), else on the whole of `a`.
fn compare(a: &[u32], b: &[u32], cfg: &VerifyConfig, work: &mut Work) -> Core {
    let mut core = Core::default();
    work.aligned.clear();
    let (la, lb) = (a.len(), b.len());
    let Some(l_min) = min_common_len(la, lb, cfg) else {
        // No TLCS length can reach a threshold (e.g. an empty text).
        core.early_reject = true;
        return core;
    };
    if la == 0 || lb == 0 {
        // Thresholds ≤ 0 make even an empty pair "similar"; nothing to compute.
        return core;
    }
    let params = cfg.params_for(b);
    match locate(a, b, params, cfg, work) {
        Located::Whole => compare_in(a, b, l_min, params, cfg, work),
        Located::Window(w0, w1) => {
            let mut core = compare_in(&a[w0..w1], b, l_min, params, cfg, work);
            for r in &mut core.regions {
                r.0 += w0;
                r.1 += w0;
            }
            for p in &mut work.aligned {
                p.0 += w0;
            }
            core.window = Some((w0, w1));
            core
        }
    }
}

/// Where [`compare`] looks for the TLCS in the longer text.
enum Located {
    /// The whole text.
    Whole,
    /// Units `[w0, w1)` only.
    Window(usize, usize),
}

/// The located window of `a` for containment (module doc, "Long texts"): used when even a TLCS
/// as long as `b` gives a resemble rate below its threshold, so only `c = |TLCS| / |b|` can make
/// the pair similar, and `a` is longer than the window, [`WINDOW_FACTOR`] · |b| plus two blocks.
/// `b`'s windows (those the filter skeleton would keep, §4.3) found in `a` vote: every window of
/// `b` unique within `b` votes for its diagonal (position in `a` minus position in `b`). The
/// window is centred on the band of `|b| / 2` diagonals with the most votes (the first on ties);
/// text copied into `a` votes for one band, chance matches of common phrases spread over all of
/// them. `b` copied in pieces with other content between them votes for several bands, each at
/// most a piece's length from the next: bands next to the window's with an eighth of the best
/// band's votes or more extend it, up to [`WINDOW_MAX_FACTOR`] · |b|, so that the trustable
/// region on `b`'s own curve (module doc, "Both curves") sees every piece. With fewer than
/// [`LOCATE_MIN_VOTES`] votes in the best band nothing says where `b` sits (a text made of
/// repeats has no window unique in it) and the whole of `a` is used. When `b` has more than
/// [`LOCATE_SAMPLE_ABOVE`] units, a fixed eighth of the windows by hash value stands for all.
/// O(|a| + |b| + V log V) for V votes.
fn locate(
    a: &[u32],
    b: &[u32],
    params: ScriptParams,
    cfg: &VerifyConfig,
    work: &mut Work,
) -> Located {
    let (la, lb) = (a.len(), b.len());
    let (r_max, _) = rates(lb, la, lb);
    let len = lb
        .saturating_mul(WINDOW_FACTOR)
        .saturating_add(params.block_size.max(1).saturating_mul(2));
    if r_max >= cfg.resemble_threshold || la <= len {
        return Located::Whole;
    }
    let window = params.window.min(lb).max(1);
    let votes = &mut work.votes;
    skeleton::shared_window_diagonals(
        a,
        b,
        window,
        lb > LOCATE_SAMPLE_ABOVE,
        &mut work.skel,
        votes,
    );
    votes.sort_unstable();
    // Densest band [d, d + lb / 2] of diagonals (two pointers over the sorted votes).
    let band = lb / 2;
    let (mut best, mut best_at, mut j) = (0usize, lb, 0usize);
    for (i, &d) in votes.iter().enumerate() {
        let end = d as usize + band;
        while votes.get(j).is_some_and(|&q| q as usize <= end) {
            j += 1;
        }
        if j - i > best {
            (best, best_at) = (j - i, d as usize);
        }
    }
    if best < LOCATE_MIN_VOTES {
        // No shared window unique in `b` (a text made of repeats) or next to none: nothing
        // says where `b` sits, so the whole text is compared (the work budget bounds it).
        return Located::Whole;
    }
    // `b` copied in pieces with other content between them (paragraphs spread over a longer
    // text) votes for several bands, one per piece, a piece's length apart or less: extend the
    // band over neighbouring bands of diagonals with real support (an eighth of the densest
    // band's votes), while the window stays within `WINDOW_MAX_FACTOR · |b|`.
    let support = (best / 8).max(LOCATE_MIN_VOTES);
    let max_span = lb.saturating_mul(WINDOW_MAX_FACTOR - 1);
    let (mut lo, mut hi) = (best_at, best_at + band);
    loop {
        let count = |x: usize, y: usize| {
            votes.partition_point(|&q| (q as usize) <= y)
                - votes.partition_point(|&q| (q as usize) < x)
        };
        let up = (count(hi + 1, hi + lb) >= support).then(|| {
            let k = votes.partition_point(|&q| (q as usize) <= hi + lb);
            votes[k - 1] as usize
        });
        let down = (lo > 0 && count(lo.saturating_sub(lb), lo - 1) >= support).then(|| {
            votes[votes.partition_point(|&q| (q as usize) < lo.saturating_sub(lb))] as usize
        });
        match (up, down) {
            (Some(h), _) if h - lo <= max_span => hi = h,
            (_, Some(l)) if hi - l <= max_span => lo = l,
            _ => break,
        }
    }
    // Votes are diagonals + |b|: `b`'s unit `x` at diagonal `v − |b|` sits at `a`'s unit
    // `v − |b| + x`, so the pieces span `a`'s units `lo − |b|` to `hi`, plus a block each side.
    let s = params.block_size.max(1);
    let (span0, span1) = (lo.saturating_sub(lb + s), hi.saturating_add(s).min(la));
    if span1 - span0 > len {
        return Located::Window(span0, span1);
    }
    let centre = (span0 + span1) / 2;
    let w0 = centre.saturating_sub(len / 2).min(la - len);
    Located::Window(w0, w0 + len)
}

/// [`compare`] on `a` (the whole longer text or its located window) and `b`, with `l_min` the
/// shortest TLCS that makes the *whole* texts similar.
fn compare_in(
    a: &[u32],
    b: &[u32],
    l_min: usize,
    params: ScriptParams,
    cfg: &VerifyConfig,
    work: &mut Work,
) -> Core {
    let mut core = Core::default();
    let (la, lb) = (a.len(), b.len());
    let Work {
        skel,
        sk_a: cur_a,
        sk_b: cur_b,
        myers: myers_buf,
        anchors: anchor_buf,
        pairs,
        votes: _,
        matched,
        curve,
        full,
        dp,
        aligned,
    } = work;
    aligned.clear();

    // Filter skeleton (seed 000 §4.3, Fig. 2); the window shrinks for texts shorter than S.
    let window = params.window.min(la.min(lb)).max(1);
    skeleton::skeleton_into(a, b, window, skel, cur_a, cur_b);
    core.skeleton_big = cur_a.len();
    core.skeleton_small = cur_b.len();

    // Early reject (seed 000 §4.3, last paragraph): |TLCS| ≤ min(|A'|, |B'|), also across
    // iteration rounds (each skeleton unit is matched at most once). The gap refill (round 1)
    // matches at most the units of each text in its skeleton's short gaps besides.
    let max_gap = REFILL_GAP_WINDOWS.saturating_mul(window);
    let refill_extra = if cfg.refill_gaps {
        (cur_a.len() + refill::short_gap_units(&cur_a.offsets, max_gap))
            .min(cur_b.len() + refill::short_gap_units(&cur_b.offsets, max_gap))
            .saturating_sub(cur_a.len().min(cur_b.len()))
    } else {
        0
    };
    if cur_a.len().min(cur_b.len()) + refill_extra < l_min {
        core.early_reject = true;
        return core;
    }

    // Iteration state (seed 000 §4.4, last paragraph): `rank[o]` is the position in the current
    // document A (original A minus earlier regions) of A's original unit `o`, `usize::MAX` when
    // cut; `None` while nothing is cut (identity). The skeletons keep original offsets.
    let mut rank: Option<Vec<usize>> = None;
    let mut cur_len = la;
    // Each round costs O(|A| + |B|) besides its LCS: rounds beyond two are allowed while their
    // total stays within ROUND_UNITS (module doc, "Long texts").
    let rounds = cfg
        .max_iterations
        .max(1)
        .min((ROUND_UNITS / (la + lb)).max(2));
    // Myers' work budget, shared by the rounds; past it the LCS is approximated by anchors.
    let mut budget = (EXACT_WORK_PER_UNIT * (cur_a.len() + cur_b.len()) as u64)
        .clamp(EXACT_WORK, EXACT_WORK_MAX);
    let min_gain = params.min_gain.max(1);
    let mut first_tlcs = 0;
    for round in 1..=rounds {
        // Myers bound (SPEC §2.6). Each later round's LCS is at most this round's (its inputs
        // are subsequences of this round's), and a round's TLCS is at most its LCS, so the
        // `left` remaining rounds add at most `left · L`; reaching `need` more units requires
        // L ≥ ⌈need / left⌉. On the skeletons |A'| + |B'| = 2L + D, so D ≤ |A'| + |B'| − 2L.
        let need = l_min.saturating_sub(core.tlcs + if round == 1 { refill_extra } else { 0 });
        let bound = if cfg.d_bound && need > 0 {
            let per_round = need.div_ceil(rounds - round + 1);
            match (cur_a.len() + cur_b.len()).checked_sub(per_round.saturating_mul(2)) {
                Some(max_d) => Some(max_d),
                None => {
                    core.bound_exceeded = true;
                    break;
                }
            }
        } else {
            None
        };
        // LCS of the skeletons (seed 000 §4.4: Myers' O(ND) on the filter skeletons), within
        // the work budget; past it, the anchored approximation (module doc, "Long texts").
        pairs.clear();
        match myers::lcs_into(
            &cur_a.units,
            &cur_b.units,
            bound,
            &mut budget,
            myers_buf,
            pairs,
        ) {
            Ok(_) => {}
            Err(myers::Stop::Bound(_)) => {
                core.bound_exceeded = true;
                break;
            }
            Err(myers::Stop::Budget) => {
                pairs.clear();
                // A short skeleton against a long one: exact and linear in the long one;
                // else the anchored approximation.
                if bitlcs::bit_lcs(&cur_a.units, &cur_b.units, BIT_WORDS, pairs).is_none() {
                    anchored::anchored_lcs(
                        &cur_a.units,
                        &cur_b.units,
                        window * 4,
                        anchor_buf,
                        pairs,
                    );
                    core.approximate = true;
                }
            }
        }
        if round > 1 && pairs.len() < min_gain {
            break;
        }
        if pairs.is_empty() {
            break;
        }
        // The alignment in positions of the current document A and of B, through the skeletons'
        // offsets (seed 000 §4.4: TLCS on document A); in the first round with its short gaps
        // refilled ([`VerifyConfig::refill_gaps`]). Ascending in both texts.
        let offsets = &cur_a.offsets;
        let offs_b = &cur_b.offsets;
        let pos_of = |ia: usize| -> usize {
            let Some(&o) = offsets.get(ia) else {
                return usize::MAX;
            };
            match &rank {
                None => o as usize,
                Some(r) => r.get(o as usize).copied().unwrap_or(usize::MAX),
            }
        };
        if round == 1 && cfg.refill_gaps {
            refill::refill_into((a, offsets), (b, offs_b), pairs, max_gap, dp, full);
        } else {
            full.clear();
            full.extend(pairs.iter().map(|&(ia, ib)| {
                (
                    pos_of(ia),
                    offs_b.get(ib).map_or(usize::MAX, |&o| o as usize),
                )
            }));
        }
        if round == 1 {
            core.lcs = full.len();
            core.lcs_weight = weight::weight_b(b, full);
            aligned.extend_from_slice(full);
        }
        if round == 1 && cfg.shorter_side && lb >= params.block_size.max(1) {
            // The trustable region on B's curve (module doc, "Both curves"). Pairs ascend in
            // both texts, so the region's pairs are one run.
            matched.clear();
            matched.resize(lb, false);
            for &(_, pb) in full.iter() {
                if let Some(m) = matched.get_mut(pb) {
                    *m = true;
                }
            }
            if let Some((yl, yr)) =
                tlcs::trustable_region_with(matched, params.block_size, cfg.theta, curve)
            {
                let gain = full.partition_point(|&(_, pb)| pb < yr)
                    - full.partition_point(|&(_, pb)| pb < yl);
                core.tlcs_shorter = gain;
                core.region_shorter = Some((yl, yr));
            }
        }

        matched.clear();
        matched.resize(cur_len, false);
        for &(pa, _) in full.iter() {
            if let Some(m) = matched.get_mut(pa) {
                *m = true;
            }
        }

        // Trustable region and TLCS (seed 000 §4.4, Fig. 4).
        let Some((xl, xr)) =
            tlcs::trustable_region_with(matched, params.block_size, cfg.theta, curve)
        else {
            break;
        };
        // The pairs' positions in A increase, so the region's pairs are one run.
        let gain =
            full.partition_point(|&(pa, _)| pa < xr) - full.partition_point(|&(pa, _)| pa < xl);
        if gain == 0 || (round > 1 && gain < min_gain) {
            break;
        }
        core.tlcs += gain;
        core.rounds = round;
        if round == 1 {
            first_tlcs = gain;
        }
        // The region's first and last original offsets.
        let orig_of = |p: usize| -> Option<usize> {
            match &rank {
                None => Some(p),
                Some(r) => r.iter().position(|&q| q == p),
            }
        };
        if let (Some(s), Some(e)) = (orig_of(xl), orig_of(xr.saturating_sub(1))) {
            core.regions.push((s, e + 1));
        }
        if round == rounds {
            break;
        }

        // Next round: cut the region from A and the TLCS units from B (seed 000 §4.4: "将它从
        // 文档 A 中删除, 并将 TLCS 从文档 B 中删除"). The skeletons are filtered rather than
        // recomputed (windows straddling a cut are not re-examined).
        // B's units of the region's pairs, refilled ones included when they are skeleton
        // units (each unit of B counts once over the rounds, as the early reject assumes).
        let mut drop_b = vec![false; cur_b.len()];
        let (f0, f1) = (
            full.partition_point(|&(pa, _)| pa < xl),
            full.partition_point(|&(pa, _)| pa < xr),
        );
        for &(_, pb) in &full[f0..f1] {
            let Ok(pb) = u32::try_from(pb) else { continue };
            if let Ok(ib) = cur_b.offsets.binary_search(&pb) {
                if let Some(flag) = drop_b.get_mut(ib) {
                    *flag = true;
                }
            }
        }
        let old = rank.take().unwrap_or_else(|| (0..la).collect());
        let mut next = 0usize;
        let new_rank: Vec<usize> = old
            .into_iter()
            .map(|p| {
                if p == usize::MAX || (xl <= p && p < xr) {
                    usize::MAX
                } else {
                    next += 1;
                    next - 1
                }
            })
            .collect();
        cur_len = next;
        filter_skeleton(cur_a, |_, off| {
            new_rank.get(off as usize).is_some_and(|&p| p != usize::MAX)
        });
        filter_skeleton(cur_b, |i, _| !drop_b.get(i).copied().unwrap_or(false));
        rank = Some(new_rank);
    }
    // Later rounds count only when some trustable region holds the centre of A. The TLCS is the
    // central part of the page (seed 000 §4.4); regions that all sit off the centre mean the
    // pages share their edges — a site template's header and footer — not moved paragraphs,
    // which leave the centre matched.
    if core.rounds > 1 && !core.regions.iter().any(|&(s, e)| s <= la / 2 && la / 2 < e) {
        core.tlcs = first_tlcs;
        core.regions.truncate(1);
        core.rounds = 1;
    }
    if core.tlcs_shorter > core.tlcs {
        core.tlcs = core.tlcs_shorter;
    }
    core
}

/// Keeps (in place) the skeleton entries `(index, original offset)` for which `keep` holds.
fn filter_skeleton(s: &mut Skeleton, keep: impl Fn(usize, u32) -> bool) {
    let mut w = 0;
    for i in 0..s.units.len().min(s.offsets.len()) {
        if keep(i, s.offsets[i]) {
            s.units[w] = s.units[i];
            s.offsets[w] = s.offsets[i];
            w += 1;
        }
    }
    s.units.truncate(w);
    s.offsets.truncate(w);
}
