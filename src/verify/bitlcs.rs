//! Bit-parallel LCS with its alignment, for a long sequence against a short one (Crochemore,
//! Iliopoulos, Pinzon, Reid 2001; traceback as in Hyyrö 2004).
//!
//! Myers' O((N + M) · D) search (seed 000 §4.4) is quadratic when one side is much longer than the
//! other (`D ≥ N − M`); the bit-parallel dynamic programme costs O(N · ⌈M / 64⌉) whatever the
//! differences, so a box of 10,000 × 150 units takes 30,000 word operations instead of ~10⁸.
//! Bit `i` of column `j`'s vector is 0 when `LCS(short[..=i], long[..j])` exceeds
//! `LCS(short[..i], long[..j])`; the columns are kept for the traceback, so memory is
//! `(N + 1) · ⌈M / 64⌉` words.

/// The shorter side may have at most this many units (16 words per column).
pub(crate) const MAX_SHORT: usize = 1024;

/// Appends to `pairs` the pairs `(index in a, index in b)` of a longest common subsequence of `a`
/// and `b`, in increasing order, and returns its length; `None` (nothing appended) when the
/// shorter side is longer than [`MAX_SHORT`] or the traceback table would exceed `max_words`
/// words.
pub(crate) fn bit_lcs(
    a: &[u32],
    b: &[u32],
    max_words: usize,
    pairs: &mut Vec<(usize, usize)>,
) -> Option<usize> {
    // `long` runs along the columns, `short` along the bits.
    let swapped = b.len() > a.len();
    let (long, short) = if swapped { (b, a) } else { (a, b) };
    let (n, m) = (long.len(), short.len());
    if m > MAX_SHORT {
        return None;
    }
    if m == 0 {
        return Some(0);
    }
    let w = m.div_ceil(64);
    if (n + 1).saturating_mul(w) > max_words {
        return None;
    }
    // Match masks of the short side's distinct units, sorted by unit.
    let mut units: Vec<u32> = short.to_vec();
    units.sort_unstable();
    units.dedup();
    let mut masks = vec![0u64; units.len() * w];
    for (i, u) in short.iter().enumerate() {
        if let Ok(k) = units.binary_search(u) {
            masks[k * w + i / 64] |= 1 << (i % 64);
        }
    }
    // cols[j * w..(j + 1) * w]: the vector after long[..j].
    let mut cols = vec![u64::MAX; (n + 1) * w];
    for (j, u) in long.iter().enumerate() {
        let (done, rest) = cols.split_at_mut((j + 1) * w);
        let prev = &done[j * w..];
        let next = &mut rest[..w];
        match units.binary_search(u) {
            Ok(k) => {
                next.copy_from_slice(prev);
                advance(next, &masks[k * w..(k + 1) * w]);
            }
            Err(_) => next.copy_from_slice(prev),
        }
    }
    // D(i, j) = LCS(short[..i], long[..j]) = zero bits among the first i of column j.
    let d = |i: usize, j: usize| -> usize {
        let col = &cols[j * w..(j + 1) * w];
        let full = i / 64;
        let mut z: usize = col[..full].iter().map(|x| x.count_zeros() as usize).sum();
        if !i.is_multiple_of(64) {
            let low = (1u64 << (i % 64)) - 1;
            z += (!col[full] & low).count_ones() as usize;
        }
        z
    };
    let start = pairs.len();
    let (mut i, mut j) = (m, n);
    let mut here = d(i, j);
    while i > 0 && j > 0 && here > 0 {
        if short[i - 1] == long[j - 1] && d(i - 1, j - 1) + 1 == here {
            pairs.push(if swapped {
                (i - 1, j - 1)
            } else {
                (j - 1, i - 1)
            });
            i -= 1;
            j -= 1;
            here -= 1;
        } else if d(i, j - 1) == here {
            j -= 1;
        } else {
            i -= 1;
        }
    }
    pairs[start..].reverse();
    Some(pairs.len() - start)
}

/// One column of the bit-parallel LCS, in place: `V' = (V + (V & M)) | (V & !M)` over the
/// words of `v` (least significant first, the carry passed on), `mask` the match bits of the
/// long side's element at this column. A bit of `v` is 0 where the LCS grew (module doc).
pub(crate) fn advance(v: &mut [u64], mask: &[u64]) {
    let mut carry = false;
    for (vt, &mt) in v.iter_mut().zip(mask) {
        let x = *vt & mt;
        let (s1, c1) = vt.overflowing_add(x);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        carry = c1 || c2;
        *vt = s2 | (*vt & !x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::myers::dp_lcs_len;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn matches_the_dynamic_programme(
            a in prop::collection::vec(0u32..5, 0..300),
            b in prop::collection::vec(0u32..5, 0..200),
        ) {
            let mut pairs = Vec::new();
            let len = bit_lcs(&a, &b, usize::MAX, &mut pairs);
            prop_assert_eq!(len, Some(dp_lcs_len(&a, &b)));
            prop_assert_eq!(pairs.len(), dp_lcs_len(&a, &b));
            prop_assert!(pairs.windows(2).all(|p| p[0].0 < p[1].0 && p[0].1 < p[1].1));
            prop_assert!(pairs.iter().all(|&(i, j)| a[i] == b[j]));
        }
    }

    #[test]
    fn limits() {
        let long = vec![1u32; 2000];
        let mut pairs = Vec::new();
        assert_eq!(bit_lcs(&long, &long[..1500], usize::MAX, &mut pairs), None);
        assert_eq!(bit_lcs(&long, &long[..100], 10, &mut pairs), None);
        assert!(pairs.is_empty());
        assert_eq!(
            bit_lcs(&long, &long[..100], usize::MAX, &mut pairs),
            Some(100)
        );
        assert_eq!(bit_lcs(&[], &[], usize::MAX, &mut pairs), Some(0));
    }
}
