//! Trustable LCS (TLCS) extraction (seed 000 §4.4, Fig. 3 and Fig. 4).
//!
//! Input: for every unit position of document A (see [`super::units()`]), whether it belongs to
//! the LCS (after mapping the skeleton alignment back to A's original offsets; units dropped by
//! the filter skeleton count as not in the LCS, which is the paper's "skeleton SES merged with the
//! skeleton's own edit script").
//!
//! **The SES curve and its slope (Fig. 3).** `d(x)` is the number of positions of A before `x`
//! that are *not* in the LCS — the paper's "文档与 LCS 的差异长度" (difference between the document
//! and the LCS); insertions of B's units occupy no position of A and are not counted. So `d` is
//! non-decreasing, flat where A runs along the LCS and rising by 1 per unit where it does not.
//! The slope of a region `[p, q)` is the slope of the chord between its ends,
//! `(d(q) - d(p)) / (q - p)`: the fraction of the region's units that are not in the LCS, a number
//! in `[0, 1]`. `θ = 0.20` (the default) thus means "at most 20 % of the region is outside the LCS". A site
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
/// units (0 is treated as 1); `theta` the slope threshold θ.
///
/// Steps, following Fig. 4:
/// 1. Split A into `k = ⌈|A| / s⌉` blocks of `s` units (the last may be shorter); block `i`
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
///    it is all LCS, and it must be recoverable here (else `verify(a, a)` would miss one unit).
///    Only positions where `d` changes can be optimal; scanning all of them gives the same
///    answer at O(s) cost.
/// 4. The longest extended region is the trustable region (ties: the leftmost).
///
/// Cost: O(|A|) for the curve plus O(k log k) for the base regions (the paper's scan of all
/// `(k² + k) / 2` base regions is replaced by a search with the same result), plus O(s) per kept
/// base region for the extension.
pub fn trustable_region(matched: &[bool], block_size: usize, theta: f64) -> Option<(usize, usize)> {
    trustable_region_with(matched, block_size, theta, &mut Vec::new())
}

/// [`trustable_region`] with a reusable buffer for the SES curve.
pub(crate) fn trustable_region_with(
    matched: &[bool],
    block_size: usize,
    theta: f64,
    curve: &mut Vec<usize>,
) -> Option<(usize, usize)> {
    let n = matched.len();
    // No region has a negative slope, and NaN compares false: nothing can be trustable (and
    // the quadratic scan below must not run for nothing).
    if n == 0 || theta.is_nan() || theta < 0.0 {
        return None;
    }
    let s = block_size.max(1);
    curve.clear();
    curve.reserve(n + 1);
    curve.push(0);
    let mut acc = 0usize;
    curve.extend(matched.iter().map(|&m| {
        acc += usize::from(!m);
        acc
    }));
    let d = &curve[..];
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

    // Steps 2–5: base regions of largest weight, then fewest blocks (Fig. 4 "计算基础区域" 2–5).
    // Region `i..=j` spans block boundaries `a = i − 1` to `j`.
    let valid = |a: usize, j: usize| slope_ok(a * s, end(j));
    let kept = if theta.is_finite() && theta.abs() <= 1e6 {
        base_regions(
            k,
            &wsum,
            valid,
            |t| {
                let x = end(t);
                d[x] as f64 - theta * x as f64
            },
            1e-9 * (n as f64) * (1.0 + theta.abs()) + 1e-9,
        )
    } else {
        base_regions_quadratic(k, &wsum, valid)
    };

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

/// The base regions of largest weight, then fewest blocks, as 1-based block ranges `(i, j)` in
/// increasing `i`: O(k log k).
///
/// `wsum[t]` is the weight of blocks `1..=t`; `valid(a, j)` the exact slope test of blocks
/// `a + 1..=j`; `g(t)` = `d(x_t) − θ·x_t` at block boundary `x_t`, so that "slope ≤ θ" reads
/// `g(j) ≤ g(a)` up to rounding, which `tol` covers (a valid region always has
/// `g(j) ≤ g(a) + tol`; candidates are confirmed with `valid`). For each left boundary `a`, the
/// heaviest valid region ends at the largest valid `j`, found by binary search on the suffix
/// minima of `g`. Same result as [`base_regions_quadratic`].
fn base_regions(
    k: usize,
    wsum: &[usize],
    valid: impl Fn(usize, usize) -> bool,
    g: impl Fn(usize) -> f64,
    tol: f64,
) -> Vec<(usize, usize)> {
    let g: Vec<f64> = (0..=k).map(g).collect();
    // sm[t] = min(g[t..=k]), non-decreasing in t.
    let mut sm = g.clone();
    for t in (0..k).rev() {
        sm[t] = sm[t].min(sm[t + 1]);
    }
    let weight = |a: usize, j: usize| wsum[j] - wsum[a];

    // Largest weight W* of a valid region.
    let mut best: Option<usize> = None;
    for a in 0..k {
        let x = g[a] + tol;
        // The largest j > a with sm[j] ≤ x has g[j] ≤ x (sm[j + 1] > x).
        let below = sm[a + 1..=k].partition_point(|&v| v <= x);
        if below == 0 {
            continue;
        }
        let mut j = a + below;
        while j > a {
            if best.is_some_and(|bw| weight(a, j) <= bw) {
                break;
            }
            if g[j] <= x && valid(a, j) {
                best = Some(weight(a, j));
                break;
            }
            j -= 1;
        }
    }
    let Some(w_best) = best else {
        return Vec::new();
    };

    // Fewest blocks among valid regions of weight W* (wsum is increasing but for a last block of
    // weight 0, so each `a` has at most two such `j`).
    let mut fewest = usize::MAX;
    for a in 0..k {
        let target = wsum[a] + w_best;
        let first = wsum.partition_point(|&w| w < target).max(a + 1);
        for (j, &w) in wsum.iter().enumerate().skip(first) {
            if w != target {
                break;
            }
            if valid(a, j) {
                fewest = fewest.min(j - a);
            }
        }
    }
    (0..k)
        .filter_map(|a| {
            let j = a + fewest;
            (j <= k && weight(a, j) == w_best && valid(a, j)).then_some((a + 1, j))
        })
        .collect()
}

/// [`base_regions`] by the direct O(k²) scan of the paper (for non-finite or huge θ, where the
/// rounding bound does not hold, and as the reference in tests). For a fixed `i`, the weight is
/// non-decreasing in `j`, so `j` is scanned downwards and the scan stops once the weight falls
/// below the best found.
fn base_regions_quadratic(
    k: usize,
    wsum: &[usize],
    valid: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    let weight = |i: usize, j: usize| wsum[j] - wsum[i - 1];
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
            if !valid(i - 1, j) {
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
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == '=').collect()
    }

    type Regions = Vec<(usize, usize)>;

    /// Base regions by both searches, set up as in `trustable_region_with`.
    fn both(matched: &[bool], s: usize, theta: f64) -> (Regions, Regions) {
        let n = matched.len();
        let d = ses_curve(matched);
        let k = n.div_ceil(s);
        let centre = k.div_ceil(2);
        let mut wsum = vec![0usize];
        for i in 1..=k {
            wsum.push(wsum[i - 1] + centre - centre.abs_diff(i));
        }
        let end = |j: usize| (j * s).min(n);
        let valid = |a: usize, j: usize| {
            let (p, q) = (a * s, end(j));
            q > p && ((d[q] - d[p]) as f64) <= theta * (q - p) as f64
        };
        let g = |t: usize| d[end(t)] as f64 - theta * end(t) as f64;
        let tol = 1e-9 * (n as f64) * (1.0 + theta.abs()) + 1e-9;
        (
            base_regions(k, &wsum, valid, g, tol),
            base_regions_quadratic(k, &wsum, valid),
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn fast_base_regions_match_the_scan(
            runs in proptest::collection::vec((proptest::bool::ANY, 1usize..40), 0..60),
            s in 1usize..24,
            theta_pick in 0usize..8,
            theta_any in 0.0f64..1.0,
        ) {
            let matched: Vec<bool> =
                runs.iter().flat_map(|&(m, len)| std::iter::repeat_n(m, len)).collect();
            let theta = [0.0, 0.1, 0.2, 0.25, 1.0 / 3.0, 0.5, 1.0, theta_any][theta_pick];
            let (fast, slow) = both(&matched, s, theta);
            proptest::prop_assert_eq!(fast, slow);
        }
    }

    #[test]
    fn fast_base_regions_on_exact_boundaries() {
        // Slopes exactly θ at many block boundaries (θ = 0.1, blocks of 10 with one miss each).
        let m: Vec<bool> = (0..2000).map(|x| x % 10 != 3).collect();
        for s in [7, 10, 12, 64] {
            for theta in [0.1, 0.05, 0.0999999, 0.1000001] {
                let (fast, slow) = both(&m, s, theta);
                assert_eq!(fast, slow, "s={s} θ={theta}");
            }
        }
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
        // though the header is longer. The left end extends over 16 unmatched units (16/166 ≤ θ).
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
