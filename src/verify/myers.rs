//! Myers' O(ND) LCS in linear space (seed 000 §3.1 and §4.4, after Myers 1986 §4b).
//!
//! The divide-and-conquer "middle snake" version: a forward and a reverse greedy search meet on a
//! snake of an optimal path; the two halves left and right of it are solved recursively. Space is
//! O(N + M), time O((N + M) · D) where D is the length of the shortest edit script (SES). Common
//! prefixes and suffixes are stripped at every level before searching.
//!
//! With a bound `max_d`, the search stops as soon as it knows that the SES is longer than the
//! bound (the top-level middle-snake search finds D itself: it is `2d - 1` or `2d` in round `d`).
//! The bound is only checked at the top level, so a bounded run that succeeds returns exactly the
//! alignment of an unbounded run.
//!
//! Inside the crate the search can also be given a *work budget* (diagonals visited plus units
//! compared, summed over the whole recursion): the O(ND) worst case of two long texts that differ
//! a lot is then cut off after a known amount of work rather than run for minutes, and the caller
//! falls back to an anchored approximation (`super::anchored`). A run that stays within its budget
//! returns exactly the alignment of an unbounded run.

use std::fmt;

/// An optimal alignment of two sequences: the matched pairs of a longest common subsequence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Alignment {
    /// `(i, j)` pairs with `a[i] == b[j]`, strictly increasing in both coordinates.
    pub pairs: Vec<(usize, usize)>,
    /// Length of the shortest edit script: `|a| + |b| - 2 · pairs.len()`.
    pub d: usize,
}

impl Alignment {
    /// Length of the LCS.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when the sequences have nothing in common.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// The shortest edit script is longer than the bound that was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundExceeded {
    /// The bound that was exceeded.
    pub max_d: usize,
}

impl fmt::Display for BoundExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shortest edit script longer than {}", self.max_d)
    }
}

impl std::error::Error for BoundExceeded {}

/// Longest common subsequence of `a` and `b` by Myers' linear-space O(ND) algorithm, with its
/// alignment (seed 000 §4.4: "LCS 计算采用的是 Myers 的 O(ND) 算法").
///
/// `max_d`: when `Some(m)`, returns `Err(BoundExceeded)` as soon as the SES is known to be longer
/// than `m`, after O((N + M) · m) work at most. A run that returns `Ok` returns the same alignment
/// as an unbounded run.
pub fn myers_lcs<T: PartialEq>(
    a: &[T],
    b: &[T],
    max_d: Option<usize>,
) -> Result<Alignment, BoundExceeded> {
    let mut pairs = Vec::with_capacity(a.len().min(b.len()));
    let mut unlimited = u64::MAX;
    match lcs_into(
        a,
        b,
        max_d,
        &mut unlimited,
        &mut MyersBuf::default(),
        &mut pairs,
    ) {
        Ok(d) => Ok(Alignment { pairs, d }),
        Err(Stop::Bound(e)) => Err(e),
        // An unlimited budget is never exhausted: u64::MAX units of work are out of reach.
        Err(Stop::Budget) => Err(BoundExceeded {
            max_d: max_d.unwrap_or(usize::MAX),
        }),
    }
}

/// Why a bounded search stopped without an alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The shortest edit script is longer than the bound `max_d`.
    Bound(BoundExceeded),
    /// The work budget ran out before the alignment was found (nothing known about `D`).
    Budget,
}

impl From<BoundExceeded> for Stop {
    fn from(e: BoundExceeded) -> Self {
        Stop::Bound(e)
    }
}

/// Reusable working memory of [`myers_lcs`]: the forward and reverse V arrays.
#[derive(Default)]
pub(crate) struct MyersBuf {
    vf: Vec<isize>,
    vb: Vec<isize>,
}

/// [`myers_lcs`] appending the pairs to `pairs` with reusable buffers; returns the SES length.
/// `budget`: the work (diagonals visited plus units compared) the search may still do; the work
/// done is subtracted from it, and exhausting it gives `Err(Stop::Budget)`. On `Err`, `pairs`
/// holds a partial result past its old length (the caller truncates).
pub(crate) fn lcs_into<T: PartialEq>(
    a: &[T],
    b: &[T],
    max_d: Option<usize>,
    budget: &mut u64,
    buf: &mut MyersBuf,
    pairs: &mut Vec<(usize, usize)>,
) -> Result<usize, Stop> {
    let before = pairs.len();
    let mut ctx = Ctx {
        a,
        b,
        vf: &mut buf.vf,
        vb: &mut buf.vb,
        pairs,
        work: 0,
        budget: *budget,
    };
    let r = ctx.diff(0, a.len(), 0, b.len(), max_d);
    *budget = budget.saturating_sub(ctx.work);
    r?;
    Ok(a.len() + b.len() - 2 * (ctx.pairs.len() - before))
}

/// Working state shared by the recursion.
struct Ctx<'s, T> {
    a: &'s [T],
    b: &'s [T],
    vf: &'s mut Vec<isize>,
    vb: &'s mut Vec<isize>,
    pairs: &'s mut Vec<(usize, usize)>,
    /// Work done so far: diagonals visited plus units compared (prefixes, suffixes, snakes).
    work: u64,
    /// The most work allowed ([`lcs_into`]).
    budget: u64,
}

/// Where the middle-snake search says to split a sub-problem.
enum Split {
    /// A point `(x, y)` (absolute coordinates) on an optimal path, strictly inside the box.
    At(usize, usize),
    /// No usable point was found (not expected; handled by a safe fallback).
    Degenerate,
}

/// Half-width of the V arrays a middle-snake search starts with; they grow (doubling) only when
/// the search goes further, so memory is O(D) rather than O(N + M).
const INITIAL_HALF_WIDTH: isize = 256;

/// Makes `vf` and `vb`, indexed by `k + off`, hold diagonals `±new_off` (`new_off ≥ off`), moving
/// the entries of `±off` to their new indices.
fn regrow(vf: &mut Vec<isize>, vb: &mut Vec<isize>, off: isize, new_off: isize) {
    let (old_len, new_len) = ((2 * off + 1) as usize, (2 * new_off + 1) as usize);
    let shift = (new_off - off) as usize;
    for v in [vf, vb] {
        if v.len() < new_len {
            v.resize(new_len, 0);
        }
        v.copy_within(0..old_len, shift);
    }
}

impl<T: PartialEq> Ctx<'_, T> {
    /// Appends the LCS pairs of `a[a0..a1]` and `b[b0..b1]` to `self.pairs`, in order.
    fn diff(
        &mut self,
        mut a0: usize,
        a1: usize,
        mut b0: usize,
        b1: usize,
        bound: Option<usize>,
    ) -> Result<(), Stop> {
        let pre = prefix_len(&self.a[a0..a1], &self.b[b0..b1]);
        self.pairs.extend((0..pre).map(|i| (a0 + i, b0 + i)));
        a0 += pre;
        b0 += pre;
        let suf = suffix_len(&self.a[a0..a1], &self.b[b0..b1]);
        self.work += (pre + suf) as u64 + 1;
        let (ae, be) = (a1 - suf, b1 - suf);
        if a0 == ae || b0 == be {
            let d = (ae - a0) + (be - b0);
            if let Some(m) = bound {
                if d > m {
                    return Err(BoundExceeded { max_d: m }.into());
                }
            }
        } else {
            match self.middle_snake(a0, ae, b0, be, bound)? {
                Split::At(x, y) => {
                    self.diff(a0, x, b0, y, None)?;
                    self.diff(x, ae, y, be, None)?;
                }
                Split::Degenerate => {
                    // Safe fallback: drop a[a0] and go on (valid, maybe not optimal alignment).
                    self.diff(a0 + 1, ae, b0, be, None)?;
                }
            }
        }
        self.pairs.extend((0..suf).map(|i| (ae + i, be + i)));
        Ok(())
    }

    /// Myers' middle snake of `a[a0..a1]` × `b[b0..b1]` (both non-empty, first and last elements
    /// differing). Returns a split point on an optimal path.
    fn middle_snake(
        &mut self,
        a0: usize,
        a1: usize,
        b0: usize,
        b1: usize,
        bound: Option<usize>,
    ) -> Result<Split, Stop> {
        let (a, b) = (&self.a[a0..a1], &self.b[b0..b1]);
        let n = a.len() as isize;
        let m = b.len() as isize;
        let delta = n - m;
        let odd = delta & 1 != 0;
        let dmax = (n + m + 1) / 2;
        // V arrays are indexed by diagonal k = x - y, shifted by `off`; round d reads and writes
        // diagonals within ±(d + 1), so `off ≥ d + 2` suffices and grows with d.
        let mut off = dmax.min(INITIAL_HALF_WIDTH) + 2;
        let need = (2 * off + 1) as usize;
        let (vf, vb) = (&mut *self.vf, &mut *self.vb);
        if vf.len() < need {
            vf.resize(need, 0);
            vb.resize(need, 0);
        }
        vf[(1 + off) as usize] = 0;
        vb[(1 + off) as usize] = 0;
        for d in 0..=dmax {
            if d + 2 > off {
                let new_off = (2 * off).min(dmax + 2);
                regrow(vf, vb, off, new_off);
                off = new_off;
            }
            let ix = |k: isize| (k + off) as usize;
            // Forward search, round d: an overlap here means D = 2d - 1.
            if let Some(mx) = bound.filter(|&mx| exceeds(2 * d - 1, mx)) {
                return Err(BoundExceeded { max_d: mx }.into());
            }
            // Both searches of round d visit 2d + 1 diagonals each (snakes are counted below).
            self.work += 4 * d as u64 + 2;
            if self.work > self.budget {
                return Err(Stop::Budget);
            }
            let mut k = -d;
            while k <= d {
                let mut x = if k == -d || (k != d && vf[ix(k - 1)] < vf[ix(k + 1)]) {
                    vf[ix(k + 1)]
                } else {
                    vf[ix(k - 1)] + 1
                };
                let mut y = x - k;
                let (x0, y0) = (x, y);
                // A negative y wraps to a huge index, which `get` refuses.
                while let (Some(p), Some(q)) = (a.get(x as usize), b.get(y as usize)) {
                    if p != q {
                        break;
                    }
                    x += 1;
                    y += 1;
                }
                self.work += (x - x0) as u64;
                vf[ix(k)] = x;
                if odd && (k - delta).abs() < d && x + vb[ix(delta - k)] >= n {
                    return Ok(split(x0, y0, n, m, a0, b0));
                }
                k += 2;
            }
            // Reverse search, round d: an overlap here means D = 2d.
            if let Some(mx) = bound.filter(|&mx| exceeds(2 * d, mx)) {
                return Err(BoundExceeded { max_d: mx }.into());
            }
            let mut k = -d;
            while k <= d {
                let mut x = if k == -d || (k != d && vb[ix(k - 1)] < vb[ix(k + 1)]) {
                    vb[ix(k + 1)]
                } else {
                    vb[ix(k - 1)] + 1
                };
                let mut y = x - k;
                let x0 = x;
                // Positions n - 1 - x and m - 1 - y; -1 or less wraps and is refused by `get`.
                while let (Some(p), Some(q)) =
                    (a.get((n - 1 - x) as usize), b.get((m - 1 - y) as usize))
                {
                    if p != q {
                        break;
                    }
                    x += 1;
                    y += 1;
                }
                self.work += (x - x0) as u64;
                vb[ix(k)] = x;
                if !odd && (k - delta).abs() <= d && x + vf[ix(delta - k)] >= n {
                    return Ok(split(n - x, m - y, n, m, a0, b0));
                }
                k += 2;
            }
        }
        Ok(Split::Degenerate)
    }
}

/// Length of the common prefix of `a` and `b`.
fn prefix_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Length of the common suffix of `a` and `b`.
fn suffix_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// True when an edit-script length `d` (possibly negative in round 0) is over the bound `mx`.
fn exceeds(d: isize, mx: usize) -> bool {
    usize::try_from(d).is_ok_and(|d| d > mx)
}

/// Turns a relative split point into an absolute one, refusing points outside the box or at its
/// corners (which would not make progress).
fn split(x: isize, y: isize, n: isize, m: isize, a0: usize, b0: usize) -> Split {
    let inside = (0..=n).contains(&x) && (0..=m).contains(&y);
    let corner = (x == 0 && y == 0) || (x == n && y == m);
    if inside && !corner {
        Split::At(a0 + x as usize, b0 + y as usize)
    } else {
        Split::Degenerate
    }
}

/// Plain O(nm) dynamic-programming LCS length, for tests.
#[cfg(test)]
pub(crate) fn dp_lcs_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Checks that `al` is a valid common subsequence of `a` and `b`, for tests.
#[cfg(test)]
pub(crate) fn is_valid_alignment<T: PartialEq>(a: &[T], b: &[T], al: &Alignment) -> bool {
    let increasing = al
        .pairs
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1);
    let equal = al
        .pairs
        .iter()
        .all(|&(i, j)| i < a.len() && j < b.len() && a[i] == b[j]);
    increasing && equal && al.d == a.len() + b.len() - 2 * al.pairs.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lcs_str(a: &str, b: &str) -> String {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        match myers_lcs(&a, &b, None) {
            Ok(al) => al.pairs.iter().map(|&(i, _)| a[i]).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn paper_example() {
        // Seed 000 §3.1, Fig. 1: A = abcabba, B = cbabac, |LCS| = 4, |SES| = 5.
        let a: Vec<char> = "abcabba".chars().collect();
        let b: Vec<char> = "cbabac".chars().collect();
        let al = myers_lcs(&a, &b, None);
        assert_eq!(al.as_ref().map(|al| (al.len(), al.d)), Ok((4, 5)));
        assert_eq!(myers_lcs(&a, &b, Some(4)), Err(BoundExceeded { max_d: 4 }));
        assert_eq!(myers_lcs(&a, &b, Some(5)), al);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(lcs_str("", ""), "");
        assert_eq!(lcs_str("abc", ""), "");
        assert_eq!(lcs_str("", "abc"), "");
        assert_eq!(lcs_str("abc", "abc"), "abc");
        assert_eq!(lcs_str("abc", "xyz"), "");
        assert_eq!(lcs_str("中文abc字符", "中abc文字符"), "中abc字符");
        let e: [u8; 0] = [];
        assert_eq!(myers_lcs(&e, &e, Some(0)).map(|a| a.d), Ok(0));
        assert!(myers_lcs(b"ab", b"ba", Some(1)).is_err());
        assert_eq!(myers_lcs(b"ab", b"ba", Some(2)).map(|a| a.len()), Ok(1));
    }

    #[test]
    fn work_budget_stops_the_search() {
        let a: Vec<u32> = (0..2000).map(|i| i % 7).collect();
        let b: Vec<u32> = (0..2000).map(|i| (i * 3) % 11).collect();
        let exact = myers_lcs(&a, &b, None).map(|al| al.pairs);
        let mut pairs = Vec::new();
        let mut budget = 1000u64;
        let r = lcs_into(
            &a,
            &b,
            None,
            &mut budget,
            &mut MyersBuf::default(),
            &mut pairs,
        );
        assert_eq!(r, Err(Stop::Budget));
        assert_eq!(budget, 0);
        // A large enough budget gives the exact alignment and reports the work done.
        let mut budget = 1u64 << 40;
        pairs.clear();
        let r = lcs_into(
            &a,
            &b,
            None,
            &mut budget,
            &mut MyersBuf::default(),
            &mut pairs,
        );
        assert!(r.is_ok() && budget < 1 << 40);
        assert_eq!(Ok(pairs), exact);
    }

    /// Strings over a small alphabet (long shared runs), ASCII or Chinese.
    fn text(max: usize) -> impl Strategy<Value = Vec<char>> {
        let ascii: Vec<char> = "ab c".chars().collect();
        let wide: Vec<char> = "abcdefghijklmnopqrstuvwxyz ".chars().collect();
        let zh: Vec<char> = "的一是在不了有和人这中大为上个国".chars().collect();
        let zh2: Vec<char> = "天地".chars().collect();
        prop_oneof![Just(ascii), Just(wide), Just(zh), Just(zh2)]
            .prop_flat_map(move |alpha| prop::collection::vec(prop::sample::select(alpha), 0..max))
    }

    /// A string and a mutated copy of it (substitutions, insertions, deletions, block moves).
    fn mutated_pair(max: usize) -> impl Strategy<Value = (Vec<char>, Vec<char>)> {
        (
            text(max),
            prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 0..40),
        )
            .prop_map(|(a, edits)| {
                let mut b = a.clone();
                for (at, op, c) in edits {
                    if b.is_empty() {
                        b.push(c);
                        continue;
                    }
                    let i = at.index(b.len());
                    match op {
                        0 => b[i] = c,
                        1 => b.insert(i, c),
                        2 => {
                            b.remove(i);
                        }
                        _ => {
                            let j = (i + 50).min(b.len());
                            let block: Vec<char> = b.drain(i..j).collect();
                            b.extend(block);
                        }
                    }
                }
                (a, b)
            })
    }

    fn check(a: &[char], b: &[char]) -> Result<(), TestCaseError> {
        let al = myers_lcs(a, b, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(is_valid_alignment(a, b, &al));
        prop_assert_eq!(al.len(), dp_lcs_len(a, b));
        // A bound at exactly D succeeds with the same alignment; one below fails.
        let again = myers_lcs(a, b, Some(al.d));
        prop_assert_eq!(again.as_ref(), Ok(&al));
        if al.d > 0 {
            prop_assert!(myers_lcs(a, b, Some(al.d - 1)).is_err());
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn random_long_matches_dp(a in text(2000), b in text(2000)) {
            check(&a, &b)?;
        }

        #[test]
        fn mutated_long_matches_dp((a, b) in mutated_pair(2000)) {
            check(&a, &b)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn random_short_matches_dp(a in text(40), b in text(40)) {
            check(&a, &b)?;
        }

        #[test]
        fn mutated_short_matches_dp((a, b) in mutated_pair(60)) {
            check(&a, &b)?;
        }
    }
}
