//! Located containment: how much of the shorter text sits, in order, in the stretch of the longer
//! text where the alignment found it, counted in characters (seed 000 §3.2: `c(A, B) = |LCS| /
//! |B|` over the documents' characters, "A contains B"; §4.4 for the alignment it starts from).
//!
//! The trustable region (§4.4) asks for one continuous stretch with at most θ of it outside the
//! LCS. A page rendered twice (reStructuredText and its Sphinx HTML, a chapter and the one-page
//! manual) or extended by a later release is contained with differences spread all through it —
//! a code block rendered, a word changed in every other sentence — and every stretch of it
//! exceeds θ, although most of its text is in the other page, in order. Counted in units (one per
//! word), each changed word is lost whole; the paper counts characters.
//!
//! So when the unit alignment already covers most of the shorter text
//! ([`super::VerifyConfig::located_contain_min_lcs`]), the pair is measured once more in
//! characters, on the window of the longer text where the alignment placed the shorter one:
//! [`WINDOW_CHARS`] times the shorter text's length, on the densest run of aligned units.
//! 1. *Merged* (§4.4 merges the skeletons' script with the script that made the skeletons): the
//!    aligned units that lie in runs of [`ANCHOR_RUN`] or more are anchors; their chars, plus
//!    the exact char LCS of the text between two consecutive anchors (white space and
//!    punctuation, a changed word, a rendered code block), over the shorter text's length in
//!    chars. A common subsequence of the shorter text and the window, so at most their LCS.
//! 2. *Exact*, when the merged rate falls short of the threshold by at most [`EXACT_BELOW`]: the
//!    unit alignment maximizes shared words, not chars, and in text built from one template
//!    (tables, repeated phrases) it may tie the shorter text to the wrong repeat; the exact char
//!    LCS of the shorter text against the window then decides, when it costs at most
//!    [`MAX_EXACT_WORK`].
//!
//! A template sibling shares chrome and layout, which the unit alignment seldom finds over half of
//! the shorter page; a page that shares only words found by chance is never aligned that far.
//!
//! Cost: O(|A| + |B|) to map units to chars, a bit-parallel LCS (Hyyrö 2004) of each pair of
//! gaps, `|gap of A| · ⌈|gap of B| / 64⌉` word operations (pairs whose gaps would cost more than
//! [`MAX_WORK`] in all are not measured), and the exact LCS within its own bound.

use std::collections::HashMap;

use super::bitlcs::advance;
use super::units::unit_spans;

/// The window of the longer text is this many times the shorter text's length, in chars: the
/// shorter text plus as much again of other content on each side at most.
pub const WINDOW_CHARS: usize = 3;

/// The most word operations the gaps' LCS may cost a pair (about 30 ms); a pair beyond it gets
/// no located containment.
pub const MAX_WORK: usize = 1 << 25;

/// Aligned units count as anchors in runs of at least this many units aligned one after another
/// in both texts.
pub const ANCHOR_RUN: usize = 3;

/// A merged measure this far below the threshold or less is measured again exactly: the char
/// LCS of the shorter text against the whole window.
pub const EXACT_BELOW: f64 = 0.20;

/// The most word operations the exact LCS of the window may cost (about 4 ms: a shorter text
/// of about 9,000 chars in its window of 27,000).
pub const MAX_EXACT_WORK: usize = 1 << 22;

/// The located containment of `small` in `big` (module doc), from `aligned`, the pairs `(unit
/// of big, unit of small)` of their unit alignment in increasing order: the aligned units' chars
/// and their gaps' char LCS inside the window of `big` holding most of them, over `small`'s
/// length in chars. `None` when `small` is empty, nothing is aligned, or the gaps are too large
/// to measure ([`MAX_WORK`]).
pub fn located_contain(
    big: &str,
    small: &str,
    aligned: &[(usize, usize)],
    threshold: f64,
) -> Option<f64> {
    let short: Vec<char> = small.chars().collect();
    let m = short.len();
    if m == 0 || aligned.is_empty() {
        return None;
    }
    let long: Vec<char> = big.chars().collect();
    let (sa, sb) = (unit_spans(big), unit_spans(small));
    // The aligned units as char spans: (start, end) in big, (start, end) in small.
    let spans: Vec<((usize, usize), (usize, usize))> = aligned
        .iter()
        .filter_map(|&(a, b)| Some((*sa.get(a)?, *sb.get(b)?)))
        .collect();
    if spans.len() != aligned.len() {
        return None;
    }
    let len = m.saturating_mul(WINDOW_CHARS);
    let (w0, w1) = if long.len() <= len {
        (0, long.len())
    } else {
        let starts: Vec<usize> = spans.iter().map(|s| s.0 .0).collect();
        let (x0, x1) = densest(&starts, len)?;
        // Centre the window on the run it holds.
        let slack = len - (x1 - x0).min(len);
        let w0 = x0.saturating_sub(slack / 2).min(long.len() - len);
        (w0, w0 + len)
    };
    // Anchors: the aligned units inside the window that lie in runs of at least
    // `ANCHOR_RUN` consecutive units of both texts (a phrase, not a common word on its own);
    // the text between two anchors is compared exactly.
    let run_of = |i: usize| {
        let step = |j: usize| {
            aligned
                .get(j)
                .zip(aligned.get(j + 1))
                .is_some_and(|(x, y)| y.0 == x.0 + 1 && y.1 == x.1 + 1)
        };
        let (mut lo, mut hi) = (i, i);
        while lo > 0 && step(lo - 1) {
            lo -= 1;
        }
        while step(hi) {
            hi += 1;
        }
        hi + 1 - lo
    };
    let mut inside = Vec::with_capacity(spans.len());
    let mut i = 0;
    while i < spans.len() {
        let n = run_of(i).max(1);
        if n >= ANCHOR_RUN {
            inside.extend(
                spans[i..(i + n).min(spans.len())]
                    .iter()
                    .filter(|&&((a0, a1), _)| w0 <= a0 && a1 <= w1),
            );
        }
        i += n;
    }
    // The segments to compare: each gap, then each aligned unit, then the last gap.
    let mut segments: Vec<((usize, usize), (usize, usize))> =
        Vec::with_capacity(2 * inside.len() + 1);
    let (mut pa, mut pb) = (w0, 0usize);
    for &((a0, a1), (b0, b1)) in &inside {
        if a0 < pa || b0 < pb {
            continue;
        }
        segments.push(((pa, a0), (pb, b0)));
        segments.push(((a0, a1), (b0, b1)));
        (pa, pb) = (a1, b1);
    }
    segments.push(((pa, w1), (pb, m)));
    let cost: usize = segments
        .iter()
        .map(|&((a0, a1), (b0, b1))| {
            let (x, y) = (a1.saturating_sub(a0), b1.saturating_sub(b0));
            x.max(y).saturating_mul(x.min(y).div_ceil(64))
        })
        .fold(0usize, usize::saturating_add);
    if cost > MAX_WORK {
        return None;
    }
    let common: usize = segments
        .iter()
        .map(
            |&((a0, a1), (b0, b1))| match (long.get(a0..a1), short.get(b0..b1)) {
                (Some(x), Some(y)) if x == y => x.len(),
                (Some(x), Some(y)) if x.len() < y.len() => lcs_len(x, y),
                (Some(x), Some(y)) => lcs_len(y, x),
                _ => 0,
            },
        )
        .sum();
    let merged = common as f64 / m as f64;
    if merged >= threshold || merged < threshold - EXACT_BELOW {
        return Some(merged);
    }
    // Just below: the alignment of units may have chosen matches that cost chars elsewhere;
    // the exact char LCS of the window decides, when it is affordable.
    let window = long.get(w0..w1)?;
    if window.len().saturating_mul(m.div_ceil(64)) > MAX_EXACT_WORK {
        return Some(merged);
    }
    Some(lcs_len(&short, window) as f64 / m as f64)
}

/// The first and last of the most values of `sorted` (ascending) within a span of `len`.
fn densest(sorted: &[usize], len: usize) -> Option<(usize, usize)> {
    let (mut best, mut at, mut j) = (0usize, (0, 0), 0usize);
    for (i, &x) in sorted.iter().enumerate() {
        j = j.max(i);
        while sorted.get(j + 1).is_some_and(|&y| y < x + len) {
            j += 1;
        }
        if j + 1 - i > best {
            best = j + 1 - i;
            at = (x, sorted[j]);
        }
    }
    (best > 0).then_some(at)
}

/// The length of a longest common subsequence of `short` and `long` (bit-parallel, Hyyrö 2004:
/// [`advance`] a column at a time, the LCS being the zero bits of the last column; only the last
/// column kept, where `bit_lcs` keeps them all for its traceback).
pub fn lcs_len(short: &[char], long: &[char]) -> usize {
    let m = short.len();
    if m == 0 || long.is_empty() {
        return 0;
    }
    if m <= 64 {
        // One word; a short pattern's match mask is found by a scan rather than a map.
        let mut v = u64::MAX;
        for c in long {
            let mut x = 0u64;
            for (i, &s) in short.iter().enumerate() {
                if s == *c {
                    x |= 1 << i;
                }
            }
            let x = v & x;
            v = v.wrapping_add(x) | (v & !x);
        }
        return v.count_zeros() as usize;
    }
    let w = m.div_ceil(64);
    let mut masks: HashMap<char, Vec<u64>> = HashMap::new();
    for (i, &c) in short.iter().enumerate() {
        let mask = masks.entry(c).or_insert_with(|| vec![0u64; w]);
        mask[i / 64] |= 1 << (i % 64);
    }
    let mut v = vec![u64::MAX; w];
    for c in long {
        if let Some(mask) = masks.get(c) {
            advance(&mut v, mask);
        }
    }
    // Bits past `m` are never in a mask, so `V & !M` keeps them 1: the zeros are the LCS.
    v.iter().map(|x| x.count_zeros() as usize).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::myers::dp_lcs_len;

    #[test]
    fn lcs_len_is_exact_across_word_boundaries() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..60 {
            let (m, n) = (1 + next() % 150, next() % 400);
            let a: Vec<char> = (0..m)
                .map(|_| (b'a' + (next() % 4) as u8) as char)
                .collect();
            let b: Vec<char> = (0..n)
                .map(|_| (b'a' + (next() % 4) as u8) as char)
                .collect();
            assert_eq!(lcs_len(&a, &b), dp_lcs_len(&a, &b), "m {m} n {n}");
        }
    }

    /// The unit alignment of two texts, as the verification's first round gives it.
    fn aligned(big: &str, small: &str) -> Vec<(usize, usize)> {
        let (a, b) = (crate::verify::units(big), crate::verify::units(small));
        let mut pairs = Vec::new();
        let mut budget = u64::MAX;
        let mut buf = crate::verify::myers::MyersBuf::default();
        crate::verify::myers::lcs_into(&a, &b, None, &mut budget, &mut buf, &mut pairs)
            .expect("no bound");
        pairs
    }

    #[test]
    fn a_page_contained_with_spread_edits_is_located_and_measured_in_chars() {
        // A later release extends a page and changes one word in each sentence: every word
        // changed is a unit lost, but in chars most of the page is found in order.
        let s: Vec<String> = (0..40)
            .map(|i| format!("The function number {i} returns the configured value of its option."))
            .collect();
        let small = s.join(" ");
        let edited: Vec<String> = s.iter().map(|x| x.replace("returns", "return")).collect();
        let extra = "Other content added by the later release, quite unlike the rest. ".repeat(30);
        let big = format!("{extra}{} {extra}", edited.join(" "));
        let c = located_contain(&big, &small, &aligned(&big, &small), 0.8).expect("measured");
        assert!(c > 0.95, "{c}");
        // Nothing aligned, nothing measured.
        assert_eq!(located_contain(&big, &small, &[], 0.8), None);
        assert_eq!(located_contain(&big, "", &[(0, 0)], 0.8), None);
    }

    #[test]
    fn verification_finds_it_from_the_texts_only() {
        // The same page in a longer rendering, three words of each sentence changed by a letter:
        // no trustable region holds it, the located containment does; from units alone it is
        // not measured.
        let s: Vec<String> = (0..30)
            .map(|i| format!("Step {i} of the guide sets the option and prints its value."))
            .collect();
        let small = s.join(" ");
        let big: Vec<String> = s
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let x = x.replace("sets", "set").replace("option", "options");
                format!(
                    "{} Code block {i}: run --verbose now.",
                    x.replace("prints", "print")
                )
            })
            .collect();
        let big = big.join(" ");
        let cfg = crate::verify::VerifyConfig::default();
        let v = crate::verify::verify(&big, &small, &cfg);
        assert!(v.similar && v.located_contain >= 0.8, "{v:?}");
        assert!(v.contain < cfg.contain_threshold, "{v:?}");
        let (ub, us) = (crate::verify::units(&big), crate::verify::units(&small));
        assert_eq!(
            crate::verify::verify_units_texts(&ub, &big, &small, &cfg),
            v
        );
        let u = crate::verify::verify_units(&ub, &us, &cfg);
        assert!(!u.similar && u.located_contain == 0.0, "{u:?}");
        // Off: the alignment must cover all of the shorter text first.
        let off = crate::verify::VerifyConfig {
            located_contain_min_lcs: 1.0,
            ..cfg
        };
        assert!(!crate::verify::verify(&big, &small, &off).similar);
    }

    #[test]
    fn the_window_is_where_the_alignment_is_densest() {
        // The short text sits at the end of a long one; a few of its words also occur early.
        let small = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
        let filler = "lorem ipsum dolor sit amet consectetur adipiscing elit ".repeat(40);
        let big = format!("alpha beta {filler}{small}");
        let al = aligned(&big, small);
        let c = located_contain(&big, small, &al, 0.8).expect("measured");
        assert!(c > 0.99, "{c}");
        // Only the scattered early matches: they lie in one window, the rest of the short text
        // is not found there.
        let early: Vec<_> = al.iter().copied().filter(|&(a, _)| a < 2).collect();
        let c = located_contain(&big, small, &early, 0.8).expect("measured");
        assert!(c < 0.8, "{c}");
    }
}
