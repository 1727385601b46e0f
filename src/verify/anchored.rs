//! Anchored approximation of the LCS, for pairs whose exact Myers search (seed 000 §4.4: "LCS
//! 计算采用的是 Myers 的 O(ND) 算法") would exceed its work budget: two long texts that differ in
//! many places, or a long text against a short one. Myers' O((N + M) · D) is then quadratic in
//! the length (SPEC §2.6 asks for every super-linear step to be bounded).
//!
//! **Anchors.** An anchor is a window of `k` units that occurs exactly once in each sequence (the
//! idea of "patience" diff): in a near duplicate most windows are unique and line up. The longest
//! chain of anchors increasing in both sequences (a longest increasing subsequence, O(A log A))
//! pairs the first unit of each chained window and splits the problem into the boxes between
//! consecutive anchors. Each box loses its common prefix and suffix (paired), then is solved by
//! Myers under a budget proportional to its size ([`GAP_WORK`], [`GAP_SMALL`]), or, when that
//! runs out and one side is short, by the bit-parallel LCS ([`bitlcs`], linear in the long
//! side); a box still unsolved is split again by anchors unique *within the box* (at most
//! [`MAX_DEPTH`] levels), and one that still is keeps only its prefix and suffix pairs. Boxes
//! larger than [`BIG_BOX`] try the anchors first and the direct search only when no anchor
//! splits them.
//!
//! **Result.** A common subsequence: never longer than the LCS, equal to it when the chained
//! anchors lie on an optimal alignment and every box is solved by Myers. Where it is shorter, the
//! lost pairs sit in boxes whose two sides differ so much that the SES slope there is far above
//! θ, so the trustable region (§4.4) rarely loses anything.
//!
//! **Cost.** Per level: hashing both sequences and one hash table of the shorter one's windows,
//! O(N + M); sorting and chaining the anchors, O(A log A); Myers in the boxes, each with a budget
//! of `max(GAP_WORK · size, min(size², GAP_SMALL))` (so up to about 256 units of work per unit in
//! boxes of a few hundred units), and a bit-parallel attempt (up to 16 words per unit) where that
//! runs out; the boxes of one level are disjoint and a unit meets at most `MAX_DEPTH` levels. So
//! linear in N + M with a constant of a few hundred, times log N for the sorting, whatever the
//! texts. Above [`SAMPLE_ABOVE`] windows only a fixed quarter of the windows
//! (chosen by hash, the same in both sequences) can be anchors, which keeps the table small.

use super::bitlcs;
use super::myers::{self, MyersBuf, Stop};
use super::skeleton::fill_hashes;

/// Myers' budget in a box between anchors: this many units of work per unit of the box.
/// Enough for a box of `n` units whose edit distance is up to about `√(GAP_WORK · n)` (the
/// search's work is about `D²` plus the box); a box with more differences is split by anchors.
pub(crate) const GAP_WORK: u64 = 32;

/// A box of `n + m` units may always use up to `min((n + m)², GAP_SMALL)` units of work: boxes of
/// up to 256 units are solved exactly, and as the boxes of a level are disjoint, these add up to
/// at most `√GAP_SMALL · (N + M)`.
pub(crate) const GAP_SMALL: u64 = 1 << 16;

/// Traceback table limit of the bit-parallel LCS in a box ([`bitlcs::bit_lcs`]), in words
/// (16 MiB): a box whose Myers search runs out of budget is solved by it when its shorter side
/// has at most [`bitlcs::MAX_SHORT`] units.
pub(crate) const BIT_WORDS: usize = 1 << 21;

/// Boxes of more units than this are split by anchors before any direct search.
pub(crate) const BIG_BOX: usize = 4096;

/// Levels of anchoring: the whole pair, then boxes, then boxes within boxes.
pub(crate) const MAX_DEPTH: usize = 3;

/// A box whose shorter side has more windows than this anchors on a quarter of them only.
pub(crate) const SAMPLE_ABOVE: usize = 1 << 16;

/// Marks a window seen more than once (`px`, `py`), or not seen in the probing sequence (`py`).
const MANY: u32 = u32::MAX;
const NONE: u32 = u32::MAX - 1;

/// One slot of the window table: `key` 0 is an empty slot.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    px: u32,
    py: u32,
}

/// Reusable memory of [`anchored_lcs`].
#[derive(Default)]
pub(crate) struct AnchorBuf {
    slots: Vec<Slot>,
    hx: Vec<u64>,
    hy: Vec<u64>,
    found: Vec<(u32, u32)>,
    tails: Vec<u32>,
    prev: Vec<u32>,
    myers: MyersBuf,
}

/// Appends to `pairs` a common subsequence of `a` and `b` (pairs increasing in both coordinates)
/// found by anchors of `k` units (module doc). Never panics; `k == 0` is treated as 1.
pub(crate) fn anchored_lcs(
    a: &[u32],
    b: &[u32],
    k: usize,
    buf: &mut AnchorBuf,
    pairs: &mut Vec<(usize, usize)>,
) {
    let k = k.max(1);
    // Offsets are stored as u32 in the table.
    let a = &a[..a.len().min(NONE as usize - 1)];
    let b = &b[..b.len().min(NONE as usize - 1)];
    align(a, b, (0, a.len()), (0, b.len()), 0, k, buf, pairs);
}

/// Aligns the box `a[ra] × b[rb]` at anchoring level `depth` (0: the whole pair, where Myers
/// has already failed).
#[allow(clippy::too_many_arguments)]
fn align(
    a: &[u32],
    b: &[u32],
    (mut a0, a1): (usize, usize),
    (mut b0, b1): (usize, usize),
    depth: usize,
    k: usize,
    buf: &mut AnchorBuf,
    pairs: &mut Vec<(usize, usize)>,
) {
    let (Some(xa), Some(xb)) = (a.get(a0..a1), b.get(b0..b1)) else {
        return;
    };
    let pre = xa.iter().zip(xb).take_while(|(x, y)| x == y).count();
    pairs.extend((0..pre).map(|i| (a0 + i, b0 + i)));
    a0 += pre;
    b0 += pre;
    let suf = a[a0..a1]
        .iter()
        .rev()
        .zip(b[b0..b1].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ae, be) = (a1 - suf, b1 - suf);
    if a0 < ae && b0 < be {
        let size = (ae - a0) + (be - b0);
        // Small boxes: Myers (or the bit-parallel programme) first. Large ones: anchors first,
        // the direct search only when no anchor splits them (so each unit meets at most one
        // budgeted search per level).
        let direct_first = depth > 0 && size <= BIG_BOX;
        let mut solved = direct_first && solve(a, b, (a0, ae), (b0, be), buf, pairs);
        if !solved && depth < MAX_DEPTH {
            let chain = chain(&a[a0..ae], &b[b0..be], k, buf);
            let (mut pa, mut pb) = (a0, b0);
            for &(x, y) in &chain {
                let (x, y) = (a0 + x as usize, b0 + y as usize);
                // Anchors are hash matches: keep only those whose windows are equal, so the
                // result stays a common subsequence whatever the hashes do.
                if a.get(x..x + k) != b.get(y..y + k) {
                    continue;
                }
                align(a, b, (pa, x), (pb, y), depth + 1, k, buf, pairs);
                pairs.push((x, y));
                (pa, pb) = (x + 1, y + 1);
            }
            if (pa, pb) != (a0, b0) {
                align(a, b, (pa, ae), (pb, be), depth + 1, k, buf, pairs);
                solved = true;
            }
        }
        if !solved && depth > 0 && !direct_first {
            solve(a, b, (a0, ae), (b0, be), buf, pairs);
        }
    }
    pairs.extend((0..suf).map(|i| (ae + i, be + i)));
}

/// Solves the box `a[a0..ae] × b[b0..be]` (first and last units differing) by Myers within a
/// budget ([`GAP_WORK`], [`GAP_SMALL`]), else by the bit-parallel programme when one side is
/// short; appends the pairs and returns true, or appends nothing and returns false.
fn solve(
    a: &[u32],
    b: &[u32],
    (a0, ae): (usize, usize),
    (b0, be): (usize, usize),
    buf: &mut AnchorBuf,
    pairs: &mut Vec<(usize, usize)>,
) -> bool {
    let start = pairs.len();
    let size = ((ae - a0) + (be - b0)) as u64;
    let mut budget = GAP_WORK
        .saturating_mul(size)
        .max(size.saturating_mul(size).min(GAP_SMALL));
    let (xa, xb) = (&a[a0..ae], &b[b0..be]);
    let found = match myers::lcs_into(xa, xb, None, &mut budget, &mut buf.myers, pairs) {
        Ok(_) => true,
        Err(Stop::Budget | Stop::Bound(_)) => {
            pairs.truncate(start);
            // A long side against a short one: the bit-parallel programme is exact and
            // linear in the long side.
            bitlcs::bit_lcs(xa, xb, BIT_WORDS, pairs).is_some()
        }
    };
    for p in &mut pairs[start..] {
        p.0 += a0;
        p.1 += b0;
    }
    found
}

/// The longest chain of anchors of `a` and `b` (windows of `k` units unique in each), as the
/// start positions `(in a, in b)` of the chained windows, strictly increasing in both.
fn chain(a: &[u32], b: &[u32], k: usize, buf: &mut AnchorBuf) -> Vec<(u32, u32)> {
    let AnchorBuf {
        slots,
        hx,
        hy,
        found,
        tails,
        prev,
        ..
    } = buf;
    // The table holds the windows of the shorter sequence `x`; `y` probes it.
    let swapped = b.len() < a.len();
    let (x, y) = if swapped { (b, a) } else { (a, b) };
    fill_hashes(x, k, hx);
    fill_hashes(y, k, hy);
    found.clear();
    if hx.is_empty() || hy.is_empty() {
        return Vec::new();
    }
    // A fixed quarter of the hash values when the box is large (the same windows in both).
    let sample = hx.len() > SAMPLE_ABOVE;
    let sampled =
        |h: u64| !sample || ((h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 62) == 0;
    let expected = if sample { hx.len() / 4 + 1 } else { hx.len() };
    let size = (2 * expected).next_power_of_two().max(16);
    let mask = size - 1;
    let shift = 64 - size.trailing_zeros();
    slots.clear();
    slots.resize(size, Slot::default());
    let home = |h: u64| (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize & mask;
    // Keys in the table; at most half the slots are filled, so probes end at an empty slot.
    let mut filled = 0usize;
    for (i, &h) in hx.iter().enumerate() {
        if !sampled(h) {
            continue;
        }
        let key = h.max(1);
        let mut at = home(h);
        while let Some(s) = slots.get_mut(at) {
            if s.key == 0 {
                if 2 * filled >= size {
                    break;
                }
                filled += 1;
                *s = Slot {
                    key,
                    px: i as u32,
                    py: NONE,
                };
                break;
            }
            if s.key == key {
                s.px = MANY;
                break;
            }
            at = (at + 1) & mask;
        }
    }
    for (j, &h) in hy.iter().enumerate() {
        if !sampled(h) {
            continue;
        }
        let key = h.max(1);
        let mut at = home(h);
        while let Some(s) = slots.get_mut(at) {
            if s.key == 0 {
                break;
            }
            if s.key == key {
                if s.px != MANY {
                    s.py = if s.py == NONE { j as u32 } else { MANY };
                }
                break;
            }
            at = (at + 1) & mask;
        }
    }
    for s in slots.iter() {
        if s.key != 0 && s.px != MANY && s.py != MANY && s.py != NONE {
            found.push(if swapped { (s.py, s.px) } else { (s.px, s.py) });
        }
    }
    found.sort_unstable();

    // Longest strictly increasing subsequence of the positions in b (patience sorting):
    // `tails[l]` is the anchor ending the best chain of length l + 1 found so far.
    tails.clear();
    prev.clear();
    prev.resize(found.len(), MANY);
    for (i, &(_, pb)) in found.iter().enumerate() {
        let l = tails.partition_point(|&t| found[t as usize].1 < pb);
        if l > 0 {
            prev[i] = tails[l - 1];
        }
        if l == tails.len() {
            tails.push(i as u32);
        } else {
            tails[l] = i as u32;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied().unwrap_or(MANY);
    while let Some(&p) = found.get(at as usize) {
        out.push(p);
        at = prev[at as usize];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::myers::{dp_lcs_len, myers_lcs};
    use proptest::prelude::*;

    fn run(a: &[u32], b: &[u32], k: usize) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        anchored_lcs(a, b, k, &mut AnchorBuf::default(), &mut pairs);
        pairs
    }

    fn valid(a: &[u32], b: &[u32], p: &[(usize, usize)]) -> bool {
        p.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
            && p.iter()
                .all(|&(i, j)| i < a.len() && j < b.len() && a[i] == b[j])
    }

    #[test]
    fn near_duplicate_is_aligned_exactly() {
        // Distinct units with a few edits: every window is unique, so the anchors lie on the
        // optimal alignment and the result is the LCS.
        let a: Vec<u32> = (0..5000).collect();
        let mut b = a.clone();
        b.remove(100);
        b.insert(2000, 99_999);
        b[3000] = 88_888;
        b.drain(4000..4100);
        let p = run(&a, &b, 4);
        assert!(valid(&a, &b, &p));
        assert_eq!(
            p.len(),
            myers_lcs(&a, &b, None).map(|x| x.len()).unwrap_or(0)
        );
    }

    #[test]
    fn moved_block_keeps_the_longest_order() {
        let a: Vec<u32> = (0..3000).collect();
        let mut b: Vec<u32> = (1000..3000).collect();
        b.extend(0..1000);
        let p = run(&a, &b, 3);
        assert!(valid(&a, &b, &p));
        assert_eq!(p.len(), 2000);
    }

    #[test]
    fn empty_and_tiny() {
        assert!(run(&[], &[1, 2, 3], 3).is_empty());
        assert!(run(&[1, 2], &[3, 4], 3).is_empty());
        assert_eq!(run(&[1, 2], &[1, 2], 3).len(), 2);
        assert_eq!(run(&[5, 1, 2], &[1, 2, 5], 0).len(), 2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn is_a_common_subsequence(
            a in prop::collection::vec(0u32..6, 0..400),
            b in prop::collection::vec(0u32..6, 0..400),
            k in 1usize..6,
        ) {
            let p = run(&a, &b, k);
            prop_assert!(valid(&a, &b, &p));
            prop_assert!(p.len() <= dp_lcs_len(&a, &b));
        }
    }
}
