//! Refilling the short gaps of the skeleton alignment (a deviation from seed 000 §4.3–§4.4,
//! issue #35; [`super::VerifyConfig::refill_gaps`]).
//!
//! The filter skeleton (§4.3, Fig. 2) keeps only text under `S`-unit windows the other text
//! shares, so — the paper's own "property 1" — when two differences lie closer than `S` units,
//! the text between them leaves the skeleton although it belongs to the LCS. The paper accepts
//! the loss ("isolated common words do not help the TLCS"), but on pages edited every few words
//! — two releases of a help page, template siblings with a different name or number in every
//! sentence, a partial translation — the lost text is a third or more of the page, and with it
//! the LCS the trustable region (§4.4) is measured on: every stretch then has more than θ of its
//! units outside the LCS and the TLCS breaks up.
//!
//! The refill gives that text back where the alignment already says it belongs: between two
//! consecutive pairs of the skeletons' LCS whose gaps in *both* texts are at most `max_gap`
//! units, the exact LCS of the two gaps is added to the alignment. Nothing is matched outside
//! such a gap, so a refilled unit always sits between two matched skeleton units at most
//! `max_gap` units apart: the refill densifies stretches that are already aligned and cannot
//! create a new one (unrelated pages sharing a template keep their skeletons, and their gaps, to
//! the template). Cost: O(g_a · g_b) per gap, at most `(max_gap + 1)²` cells, so O(L · max_gap²)
//! for an alignment of L pairs.

/// Units of a text outside its skeleton that lie in runs of at most `max_gap` units between
/// two skeleton units (`offsets` ascending): with the skeleton's length, an upper bound of the
/// units of that text a refilled alignment can match ([`refill_into`] only matches inside gaps
/// of at most `max_gap` units between matched skeleton units).
pub(crate) fn short_gap_units(offsets: &[u32], max_gap: usize) -> usize {
    offsets
        .windows(2)
        .map(|w| (w[1].saturating_sub(w[0]) as usize).saturating_sub(1))
        .filter(|&g| g <= max_gap)
        .sum()
}

/// The alignment `pairs` (indices into the skeletons whose original offsets are `offs_a`,
/// `offs_b`, ascending in both) in original offsets of `a` and `b`, refilled: between two
/// consecutive pairs whose gaps in `a` and `b` both hold 1..=`max_gap` units, an LCS of the two
/// gaps is inserted. Writes `out` (cleared first) ascending in both texts; `dp` is scratch. Pairs
/// whose indices or offsets are out of range are skipped.
pub(crate) fn refill_into(
    (a, offs_a): (&[u32], &[u32]),
    (b, offs_b): (&[u32], &[u32]),
    pairs: &[(usize, usize)],
    max_gap: usize,
    dp: &mut Vec<u16>,
    out: &mut Vec<(usize, usize)>,
) {
    out.clear();
    let mut prev: Option<(usize, usize)> = None;
    for &(ia, ib) in pairs {
        let (Some(&pa), Some(&pb)) = (offs_a.get(ia), offs_b.get(ib)) else {
            continue;
        };
        let (pa, pb) = (pa as usize, pb as usize);
        if pa >= a.len() || pb >= b.len() {
            continue;
        }
        if let Some((qa, qb)) = prev {
            if pa <= qa || pb <= qb {
                continue;
            }
            let (ga, gb) = (pa - qa - 1, pb - qb - 1);
            if (1..=max_gap).contains(&ga) && (1..=max_gap).contains(&gb) {
                gap_lcs(&a[qa + 1..pa], &b[qb + 1..pb], (qa + 1, qb + 1), dp, out);
            }
        }
        out.push((pa, pb));
        prev = Some((pa, pb));
    }
}

/// Appends to `out` an LCS of the short sequences `x` and `y` (each at most `u16::MAX - 1`
/// long), as pairs of offsets shifted by `base`, ascending. Plain dynamic programme with a
/// traceback: O(|x| · |y|).
fn gap_lcs(
    x: &[u32],
    y: &[u32],
    base: (usize, usize),
    dp: &mut Vec<u16>,
    out: &mut Vec<(usize, usize)>,
) {
    let (n, m) = (x.len(), y.len());
    if n == 0 || m == 0 || n >= u16::MAX as usize || m >= u16::MAX as usize {
        return;
    }
    let w = m + 1;
    dp.clear();
    dp.resize((n + 1) * w, 0);
    for i in 1..=n {
        for j in 1..=m {
            dp[i * w + j] = if x[i - 1] == y[j - 1] {
                dp[(i - 1) * w + j - 1] + 1
            } else {
                dp[(i - 1) * w + j].max(dp[i * w + j - 1])
            };
        }
    }
    let start = out.len();
    let (mut i, mut j) = (n, m);
    while i > 0 && j > 0 {
        if x[i - 1] == y[j - 1] {
            out.push((base.0 + i - 1, base.1 + j - 1));
            i -= 1;
            j -= 1;
        } else if dp[(i - 1) * w + j] >= dp[i * w + j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    out[start..].reverse();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Identity skeleton offsets for the listed positions.
    fn offs(p: &[u32]) -> Vec<u32> {
        p.to_vec()
    }

    #[test]
    fn gap_lcs_is_exact_and_ascending() {
        let mut dp = Vec::new();
        let mut out = Vec::new();
        gap_lcs(&[1, 2, 3, 4], &[2, 9, 4], (10, 20), &mut dp, &mut out);
        assert_eq!(out, vec![(11, 20), (13, 22)]);
        out.clear();
        gap_lcs(&[], &[1], (0, 0), &mut dp, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn short_gaps_between_matched_units_are_refilled() {
        // a = 0 1 [7 2] 3 4, b = 0 1 [8 2] 3 4: the skeleton kept 0 1 and 3 4 in both; the gaps
        // `7 2` and `8 2` share the unit 2, which the refill matches.
        let a = [0, 1, 7, 2, 3, 4];
        let b = [0, 1, 8, 2, 3, 4];
        let (oa, ob) = (offs(&[0, 1, 4, 5]), offs(&[0, 1, 4, 5]));
        let pairs = [(0, 0), (1, 1), (2, 2), (3, 3)];
        let (mut dp, mut out) = (Vec::new(), Vec::new());
        refill_into((&a, &oa), (&b, &ob), &pairs, 2, &mut dp, &mut out);
        assert_eq!(out, vec![(0, 0), (1, 1), (3, 3), (4, 4), (5, 5)]);
        // A gap longer than `max_gap` on either side stays empty.
        refill_into((&a, &oa), (&b, &ob), &pairs, 1, &mut dp, &mut out);
        assert_eq!(out, vec![(0, 0), (1, 1), (4, 4), (5, 5)]);
    }

    #[test]
    fn nothing_is_matched_outside_aligned_gaps() {
        // Common units before the first pair, after the last one, or across a pure insertion
        // (gap empty on one side) are never matched.
        let a = [5, 0, 6, 1, 5];
        let b = [5, 0, 1, 5];
        let (oa, ob) = (offs(&[1, 3]), offs(&[1, 2]));
        let pairs = [(0, 0), (1, 1)];
        let (mut dp, mut out) = (Vec::new(), Vec::new());
        refill_into((&a, &oa), (&b, &ob), &pairs, 8, &mut dp, &mut out);
        assert_eq!(out, vec![(1, 1), (3, 2)]);
    }

    /// Exact LCS length (test oracle).
    fn lcs_len(x: &[u32], y: &[u32]) -> usize {
        let mut prev = vec![0usize; y.len() + 1];
        for &u in x {
            let mut cur = vec![0usize; y.len() + 1];
            for (j, &v) in y.iter().enumerate() {
                cur[j + 1] = if u == v {
                    prev[j] + 1
                } else {
                    prev[j + 1].max(cur[j])
                };
            }
            prev = cur;
        }
        prev[y.len()]
    }

    #[test]
    fn a_page_edited_every_few_words_keeps_the_words_between_its_edits() {
        use crate::verify::{units, verify, VerifyConfig};
        // Words 0 and 2 of every 6 are replaced: the 3-word skeleton window keeps words 3–5 of
        // each group and drops word 1, which lies between two edits; the refill gives it back.
        let a: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
        let b: Vec<String> = (0..60)
            .map(|i| {
                if i % 6 == 0 || i % 6 == 2 {
                    format!("x{i}")
                } else {
                    format!("w{i}")
                }
            })
            .collect();
        let (a, b) = (a.join(" "), b.join(" "));
        // Located containment off: in chars, "w1" and "x1" share their digit (located.rs).
        let on = VerifyConfig {
            located_contain_min_lcs: 1.0,
            ..VerifyConfig::default()
        };
        let off = VerifyConfig {
            refill_gaps: false,
            ..on.clone()
        };
        let (with, without) = (verify(&a, &b, &on), verify(&a, &b, &off));
        assert_eq!(without.lcs, 30);
        // Every group but the first gets its word 1 back (the first has no pair before it).
        assert_eq!(with.lcs, 39);
        assert!(with.lcs <= lcs_len(&units(&a), &units(&b)));
        assert!(with.tlcs >= without.tlcs);
        // 39 / (60 + 60 − 39) = 0.48: the whole-LCS rule now holds.
        assert!(with.similar && !without.similar);
        // The bound allows for the refill: it never changes the verdict.
        let unbounded = VerifyConfig {
            d_bound: false,
            ..on.clone()
        };
        assert_eq!(verify(&a, &b, &unbounded).similar, with.similar);
        // Symmetric, like every verification.
        assert_eq!(verify(&b, &a, &on).lcs, with.lcs);
    }

    #[test]
    fn unrelated_texts_gain_nothing() {
        use crate::verify::{verify, VerifyConfig};
        let a: String = (0..80).map(|i| format!("a{i} ")).collect();
        let b: String = (0..80).map(|i| format!("b{i} ")).collect();
        let s = verify(&a, &b, &VerifyConfig::default());
        assert_eq!(s.lcs, 0);
        assert!(!s.similar);
    }

    #[test]
    fn short_gap_units_bound_the_refill() {
        assert_eq!(short_gap_units(&[0, 1, 4, 5, 20], 2), 2);
        assert_eq!(short_gap_units(&[0, 1, 4, 5, 20], 14), 16);
        assert_eq!(short_gap_units(&[], 4), 0);
        assert_eq!(short_gap_units(&[3], 4), 0);
    }
}
