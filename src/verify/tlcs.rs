//! Trustable LCS (TLCS) extraction (seed 000 §4.4, Fig. 3 and Fig. 4).
//!
//! Input: for every char position of document A, whether it belongs to the LCS (after mapping the
//! skeleton alignment back to A's original offsets; chars dropped by the filter skeleton count as
//! not in the LCS, which is the paper's "skeleton SES merged with the skeleton's own edit script").
//!
//! **The SES curve and its slope (Fig. 3).** `d(x)` is the number of positions of A before `x`
//! that are *not* in the LCS — the paper's "文档与 LCS 的差异长度" (difference between the document
//! and the LCS); insertions of B's chars occupy no position of A and are not counted. So `d` is
//! non-decreasing, flat where A runs along the LCS and rising by 1 per char where it does not.
//! The slope of a region `[p, q)` is the slope of the chord between its ends,
//! `(d(q) - d(p)) / (q - p)`: the fraction of the region's chars that are not in the LCS, a number
//! in `[0, 1]`. `θ = 0.10` thus means "at most 10 % of the region is outside the LCS". A site
//! template (header, footer) shared by two different pages is flat only at A's two ends, so the
//! centred, continuous region with slope ≤ θ does not include it.
//!
//! Positions are 0-based and regions half-open here; the paper's 1-based block numbers are kept
//! for the weights.

/// Prefix counts of positions not in the LCS: `d[x]` = number of `i < x` with `!matched[i]`
/// (the SES curve of seed 000 Fig. 3), `d.len() == matched.len() + 1`.
pub fn ses_curve(matched: &[bool]) -> Vec<usize> {
    let mut d = Vec::with_capacity(matched.len() + 1);
    let mut acc = 0usize;
    d.push(0);
    for &m in matched {
        acc += usize::from(!m);
        d.push(acc);
    }
    d
}

/// The trustable region of document A (seed 000 §4.4, Fig. 4), as a half-open range of A's
/// positions, or `None` when no base region has slope ≤ `theta` (then the TLCS is empty).
///
/// `matched[x]` says whether A's position `x` is in the LCS; `block_size` is the paper's `s` in
/// chars (0 is treated as 1); `theta` the slope threshold θ.
///
/// Steps, following Fig. 4:
/// 1. Split A into `k = ⌈|A| / s⌉` blocks of `s` chars (the last may be shorter); block `i`
///    (1-based) weighs `w_i = ⌈k/2⌉ − |⌈k/2⌉ − i|` (largest at the centre).
/// 2. Base regions `r_ij` = blocks `i..=j` whose slope is ≤ θ; keep those of largest total weight
///    `W_ij = Σ w_t`, then those covering the fewest blocks. The figure's loop bounds read
///    `0 < i < k, i < j ≤ k` (regions of two blocks or more), but the text counts `(k² + k) / 2`
///    base regions, i.e. `1 ≤ i ≤ j ≤ k`; we follow the count, so a single block can be a base
///    region (and a one-block document has one).
/// 3. Extend each kept base region within its neighbouring blocks: its left end moves to the
///    smallest position `x_l` at most `s` positions before it such that `[x_l, end)` still has
///    slope ≤ θ; then its right end moves to the largest position `x_r` at most `s` positions
///    after it such that `[x_l, x_r)` has slope ≤ θ. The paper counts "at most s − 1
///    computations" per end: the s − 1 positions inside the neighbouring block; the block's far
///    boundary is a base-region end whose slope is already known. Admitting it matters in one
///    case only: when `k` is even the last block weighs 0, so "fewest blocks" drops it even when
///    it is all LCS, and it must be recoverable here (else `verify(a, a)` would miss one char).
///    Only positions where `d` changes can be optimal; scanning all of them gives the same
///    answer at O(s) cost.
/// 4. The longest extended region is the trustable region (ties: the leftmost).
///
/// Cost: O(|A|) for the curve plus O(k²) for the base regions in the worst case (the scan stops
/// early for each `i` once no larger weight is possible).
pub fn trustable_region(matched: &[bool], block_size: usize, theta: f64) -> Option<(usize, usize)> {
    let n = matched.len();
    if n == 0 {
        return None;
    }
    let s = block_size.max(1);
    let d = ses_curve(matched);
    // Slope of [p, q) ≤ θ, i.e. (d(q) − d(p)) ≤ θ · (q − p); NaN θ never holds.
    let slope_ok = |p: usize, q: usize| q > p && ((d[q] - d[p]) as f64) <= theta * (q - p) as f64;

    // Step 1: blocks and weights (seed 000 §4.4, Fig. 4 "计算基础区域" 1).
    let k = n.div_ceil(s);
    let centre = k.div_ceil(2);
    let start = |i: usize| (i - 1) * s; // block i = [start(i), end(i)), 1-based i
    let end = |j: usize| (j * s).min(n);
    // wsum[i] = w_1 + … + w_i.
    let mut wsum = Vec::with_capacity(k + 1);
    wsum.push(0usize);
    for i in 1..=k {
        let w = centre - centre.abs_diff(i);
        wsum.push(wsum[i - 1] + w);
    }
    let weight = |i: usize, j: usize| wsum[j] - wsum[i - 1];

    // Steps 2–5: base regions of largest weight, then fewest blocks (Fig. 4 "计算基础区域" 2–5).
    // For a fixed i, W_ij is non-decreasing in j, so scan j downwards and stop once the weight
    // falls below the best found.
    let mut best: Option<(usize, usize)> = None; // (weight, blocks)
    let mut kept: Vec<(usize, usize)> = Vec::new(); // (i, j)
    for i in 1..=k {
        if best.is_some_and(|(bw, _)| weight(i, k) < bw) {
            continue;
        }
        let mut found: Option<usize> = None; // weight of the best valid j for this i
        for j in (i..=k).rev() {
            let w = weight(i, j);
            if found.is_some_and(|fw| w < fw) || best.is_some_and(|(bw, _)| w < bw) {
                break;
            }
            if !slope_ok(start(i), end(j)) {
                continue;
            }
            found = Some(w);
            let cand = (w, j - i + 1);
            match best {
                Some((bw, bb)) if (w, cand.1) == (bw, bb) => kept.push((i, j)),
                Some((bw, bb)) if w < bw || (w == bw && cand.1 > bb) => {}
                _ => {
                    best = Some(cand);
                    kept.clear();
                    kept.push((i, j));
                }
            }
        }
    }

    // Trustable region: extend each kept base region and take the longest (Fig. 4 "计算可信区域").
    let mut region: Option<(usize, usize)> = None;
    for &(i, j) in &kept {
        let (p, q) = (start(i), end(j));
        let left_limit = p.saturating_sub(s);
        let xl = (left_limit..=p).find(|&x| slope_ok(x, q)).unwrap_or(p);
        let right_limit = q.saturating_add(s).min(n);
        let xr = (q..=right_limit)
            .rev()
            .find(|&y| slope_ok(xl, y))
            .unwrap_or(q);
        if region.is_none_or(|(a, b)| xr - xl > b - a) {
            region = Some((xl, xr));
        }
    }
    region
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == '=').collect()
    }

    #[test]
    fn curve() {
        assert_eq!(ses_curve(&pattern("==x=xx")), vec![0, 0, 0, 1, 1, 2, 3]);
        assert_eq!(ses_curve(&[]), vec![0]);
    }

    #[test]
    fn all_matched_is_whole_text() {
        let m = vec![true; 1000];
        assert_eq!(trustable_region(&m, 64, 0.1), Some((0, 1000)));
        assert_eq!(trustable_region(&m[..5], 64, 0.1), Some((0, 5)));
        assert_eq!(trustable_region(&[], 64, 0.1), None);
        assert_eq!(trustable_region(&m, 0, 0.1), Some((0, 1000)));
    }

    #[test]
    fn nothing_matched_has_no_region() {
        assert_eq!(trustable_region(&[false; 300], 64, 0.1), None);
        assert_eq!(trustable_region(&[true; 300], 64, f64::NAN), None);
    }

    #[test]
    fn template_ends_lose_to_centre() {
        // Header and footer matched, body not matched except a centred run: the centre wins even
        // though the header is longer. The left end extends over 16 unmatched chars (16/166 ≤ θ).
        let mut m = vec![false; 1000];
        m[..200].iter_mut().for_each(|x| *x = true);
        m[900..].iter_mut().for_each(|x| *x = true);
        m[450..600].iter_mut().for_each(|x| *x = true);
        assert_eq!(trustable_region(&m, 50, 0.1), Some((434, 600)));
        assert_eq!(trustable_region(&m, 50, 0.0), Some((450, 600)));
    }

    #[test]
    fn extension_reaches_into_partial_blocks() {
        // Matched run [30, 170) with s = 64: base region is block 2 [64, 128); extension moves the
        // ends to 30 and 170.
        let mut m = vec![false; 256];
        m[30..170].iter_mut().for_each(|x| *x = true);
        let r = trustable_region(&m, 64, 0.0);
        assert_eq!(r, Some((30, 170)));
    }

    #[test]
    fn zero_weight_last_block_is_recovered() {
        // k = 10 (even): block 10 weighs 0, so the base region is blocks 2..=9 [10, 90) (block 1
        // holds the bad char, θ = 0); the extension reaches the bad char's neighbour on the left
        // and the whole zero-weight last block on the right.
        let mut m = vec![true; 100];
        m[0] = false;
        assert_eq!(trustable_region(&m, 10, 0.0), Some((1, 100)));
        // k = 2, all matched: base region is block 1 alone; extension gives the whole text.
        assert_eq!(trustable_region(&[true; 128], 64, 0.1), Some((0, 128)));
    }

    #[test]
    fn loose_theta_takes_everything() {
        // Blocks of 10, θ = 0.5. Matched: [20, 60). Region [20, 60) is blocks 3..=6 (k = 8,
        // weights 1 2 3 4 3 2 1 0). Left: [10, 60) has slope 10/50 ≤ 0.5 and [0, 60) 20/60 ≤ 0.5,
        // but the heavier base region 1..=6 is itself valid, so it is the base region, and the
        // right end moves at most one block: 60 → 70 would give 30/70 ≤ 0.5 but 70 is block 7's
        // end, weight 1, so 1..=7 is the base region; 1..=8 = 40/80 ≤ 0.5 has the same weight
        // (block 8 weighs 0) and more blocks. Extension right from 70 reaches 80 (slope 0.5).
        let mut m = vec![false; 80];
        m[20..60].iter_mut().for_each(|x| *x = true);
        assert_eq!(trustable_region(&m, 10, 0.5), Some((0, 80)));
    }
}
