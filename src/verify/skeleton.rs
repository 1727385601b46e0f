//! Filter skeleton (seed 000 §4.3, Fig. 2).
//!
//! Both unit sequences are scanned with a sliding window of `S` units; every window gets a
//! Rabin–Karp polynomial hash. A unit of A stays in A's skeleton when at least one window covering
//! it has a hash that also occurs among B's window hashes, and vice versa. Time and space are
//! O(|A| + |B|).
//!
//! Units (see [`super::units()`]): the paper slides a window of 16 GBK bytes, i.e. 8 Chinese
//! characters; here the window is counted in units — one per CJK char, one per word — and chosen
//! by script ([`super::VerifyConfig::window`], [`super::VerifyConfig::window_alphabetic`]).
//!
//! Hash collisions are harmless for correctness: a colliding window only keeps a few extra units
//! in the skeleton, and the LCS that follows compares the units themselves.

/// Base of the Rabin–Karp polynomial (odd, so multiplication is a bijection modulo 2^64).
pub const RABIN_BASE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Longest sequence (in units) the skeleton looks at: offsets are stored as `u32`. Units beyond
/// this are ignored.
pub const MAX_SKELETON_INPUT: usize = u32::MAX as usize;

/// The filter skeleton of one unit sequence: the kept units, in order, and where each came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skeleton {
    /// The kept units, in text order.
    pub units: Vec<u32>,
    /// `offsets[i]` is the position in the original sequence of `units[i]` (strictly
    /// increasing).
    pub offsets: Vec<u32>,
}

impl Skeleton {
    /// Number of kept units.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// True when no unit was kept.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }
}

/// Rabin–Karp rolling hashes of every window of `s` units of `text` (seed 000 §4.3, after
/// Rabin 1981): `h = Σ u_i · B^(s-1-i)` with wrapping `u64` arithmetic, `B` = [`RABIN_BASE`].
///
/// Returns `text.len() - s + 1` hashes (window `i` covers `text[i..i + s]`), none when the text
/// is shorter than the window or `s == 0`.
pub fn window_hashes(text: &[u32], s: usize) -> Vec<u64> {
    let mut out = Vec::new();
    fill_hashes(text, s, &mut out);
    out
}

/// Replaces `out` with the [`window_hashes`] of `text`.
pub(crate) fn fill_hashes(text: &[u32], s: usize, out: &mut Vec<u64>) {
    out.clear();
    out.extend(rolling_hashes(text, s));
}

/// The Rabin hash of every `s`-unit window of `text`, in order, computed by rolling (seed 000
/// §4.3); nothing when `s` is 0 or the text is shorter than `s`.
fn rolling_hashes(text: &[u32], s: usize) -> impl Iterator<Item = u64> + '_ {
    let valid = s > 0 && text.len() >= s;
    let (text, s) = if valid { (text, s) } else { (&[][..], 0) };
    // B^(s-1), the weight of the unit that leaves the window.
    let mut top = 1u64;
    for _ in 1..s {
        top = top.wrapping_mul(RABIN_BASE);
    }
    let (head, tail) = text.split_at(s);
    let mut h = head.iter().fold(0u64, |h, &c| {
        h.wrapping_mul(RABIN_BASE).wrapping_add(u64::from(c))
    });
    let first = valid.then_some(h);
    first
        .into_iter()
        .chain(text.iter().zip(tail).map(move |(&gone, &new)| {
            h = h
                .wrapping_sub(u64::from(gone).wrapping_mul(top))
                .wrapping_mul(RABIN_BASE)
                .wrapping_add(u64::from(new));
            h
        }))
}

/// End of a chain of windows with the same hash; also marks an entry whose chain was visited.
const NONE: u32 = u32::MAX;

/// Reusable working memory of [`skeleton`]: an open-addressing (linear probing) table of the
/// shorter text's window hashes, the hashes themselves, and per-window flags.
///
/// A slot packs a 32-bit key (see [`locate`]; never 0, and an all-zero slot is empty) in its high
/// half and the index of the last window with that key in its low half (one memory access per
/// probe); earlier windows with the same key are chained through `next`. Keys of 32 bits plus the slot position make false matches rare,
/// and a false match only keeps a few extra units (module doc).
#[derive(Default)]
pub(crate) struct SkeletonBuf {
    slots: Vec<u64>,
    next: Vec<u32>,
    hashes: Vec<u64>,
    hashes_big: Vec<u64>,
    dup: Vec<bool>,
    win_small: Vec<bool>,
    win_big: Vec<bool>,
}

/// Key and home slot of window hash `h` in a table of `2^(64 - shift)` slots: the key is the
/// polynomial's low 32 bits (a hash of the window mod 2^32 on its own; 0 is reserved for empty
/// slots), the slot the high bits of a multiplicative (Fibonacci) hash of all 64 bits.
#[inline]
fn locate(h: u64, shift: u32) -> (u32, usize) {
    (
        (h as u32).max(1),
        (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize,
    )
}

/// Filter skeletons of `a` and `b` with a window of `s` units (seed 000 §4.3, Fig. 2).
///
/// A unit of `a` is kept when at least one window of `s` units covering it hashes to a value that
/// is also a window hash of `b`; likewise for `b`. `s == 0` is treated as 1. A text shorter than
/// `s` has no window and so an empty skeleton (the caller, [`super::verify_units`], shrinks the
/// window to the shorter text's length). Identical texts of length ≥ `s` keep every unit.
///
/// The windows of the shorter text go into a hash table, those of the longer one look theirs up;
/// a hit marks both windows (all windows of the shorter text with that hash). Near duplicates
/// mostly skip the look-up: the window after the last match is compared first (a diagonal
/// guess; windows whose hash repeats in the shorter text always go through the table, so the
/// result is exactly that of the table alone).
pub fn skeleton(a: &[u32], b: &[u32], s: usize) -> (Skeleton, Skeleton) {
    let (mut sa, mut sb) = (Skeleton::default(), Skeleton::default());
    skeleton_into(a, b, s, &mut SkeletonBuf::default(), &mut sa, &mut sb);
    (sa, sb)
}

/// [`skeleton`] into `out_a` and `out_b` (cleared first), with reusable buffers.
pub(crate) fn skeleton_into(
    a: &[u32],
    b: &[u32],
    s: usize,
    buf: &mut SkeletonBuf,
    out_a: &mut Skeleton,
    out_b: &mut Skeleton,
) {
    for out in [&mut *out_a, &mut *out_b] {
        out.units.clear();
        out.offsets.clear();
    }
    let s = s.max(1);
    let a = &a[..a.len().min(MAX_SKELETON_INPUT)];
    let b = &b[..b.len().min(MAX_SKELETON_INPUT)];
    if a.len() < s || b.len() < s {
        return;
    }
    let swapped = b.len() > a.len();
    let (small, big) = if swapped { (a, b) } else { (b, a) };
    let (ns, nb) = (small.len() - s + 1, big.len() - s + 1);

    // Table of the shorter text's windows; load factor ≤ 1/2 keeps probes short.
    let size = (2 * ns).next_power_of_two().max(16);
    let mask = size - 1;
    let shift = 64 - size.trailing_zeros();
    let SkeletonBuf {
        slots,
        next,
        hashes,
        hashes_big,
        dup,
        win_small,
        win_big,
    } = buf;
    slots.clear();
    slots.resize(size, 0);
    // `next[i]` is only read once window `i` is in the table, so it needs no clearing.
    if next.len() < ns {
        next.resize(ns, NONE);
    }
    fill_hashes(small, s, hashes);
    fill_hashes(big, s, hashes_big);
    dup.clear();
    dup.resize(ns, false);
    for (i, &h) in hashes.iter().enumerate() {
        let (key, mut at) = locate(h, shift);
        // Window indices fit in u32 (texts are cut to MAX_SKELETON_INPUT units).
        let idx = u32::try_from(i).unwrap_or(NONE);
        while let Some(e) = slots.get_mut(at) {
            let first = *e == 0;
            if first || (*e >> 32) as u32 == key {
                let head = if first { NONE } else { *e as u32 };
                if let Some(nx) = next.get_mut(i) {
                    *nx = head;
                }
                if !first {
                    for w in [head as usize, i] {
                        if let Some(d) = dup.get_mut(w) {
                            *d = true;
                        }
                    }
                }
                *e = (u64::from(key) << 32) | u64::from(idx);
                break;
            }
            at = (at + 1) & mask;
        }
    }

    // Look up the longer text's windows; the first hit of a key marks its whole chain (its
    // head's flag then says the chain was visited).
    win_small.clear();
    win_small.resize(ns, false);
    win_big.clear();
    win_big.resize(nb, false);
    let mut guess = usize::MAX;
    for (j, &h) in hashes_big.iter().enumerate() {
        if hashes.get(guess) == Some(&h) && dup.get(guess) == Some(&false) {
            // Diagonal guess hit: the only window of the shorter text with this hash.
            if let (Some(ws), Some(wb)) = (win_small.get_mut(guess), win_big.get_mut(j)) {
                *ws = true;
                *wb = true;
            }
            guess += 1;
            continue;
        }
        guess = guess.wrapping_add(1);
        let (key, mut at) = locate(h, shift);
        while let Some(&e) = slots.get(at) {
            if e == 0 {
                break;
            }
            if (e >> 32) as u32 == key {
                if let Some(w) = win_big.get_mut(j) {
                    *w = true;
                }
                let head = e as u32;
                guess = head as usize + 1;
                if win_small.get(head as usize) == Some(&false) {
                    let mut i = head;
                    while let Some(w) = win_small.get_mut(i as usize) {
                        *w = true;
                        i = next.get(i as usize).copied().unwrap_or(NONE);
                    }
                }
                break;
            }
            at = (at + 1) & mask;
        }
    }

    let (out_small, out_big) = if swapped {
        (out_a, out_b)
    } else {
        (out_b, out_a)
    };
    keep(small, win_small, s, out_small);
    keep(big, win_big, s, out_big);
}

/// Diagonals `j − i + |small|` of the pairs (window `j` of `big`, window `i` of `small`) with
/// equal hashes, where window `i`'s hash occurs only once in `small` (windows repeated within
/// `small` — table rules, repeated phrases — say nothing about where it sits): used to locate
/// where `small`'s content sits in a much longer `big` (its windows there vote for one narrow
/// band of diagonals; chance matches spread out). With `sample`, only windows whose hash falls
/// in a fixed eighth of the hash values are considered, the same ones in both texts (a
/// content-defined sample, as in winnowing), which makes the look-ups eight times fewer.
/// O(|big| + |small|); `big`'s hashes are rolled, not stored. `s == 0` is treated as 1.
pub(crate) fn shared_window_diagonals(
    big: &[u32],
    small: &[u32],
    s: usize,
    sample: bool,
    buf: &mut SkeletonBuf,
    out: &mut Vec<u32>,
) {
    out.clear();
    let s = s.max(1);
    let big = &big[..big.len().min(MAX_SKELETON_INPUT)];
    let small = &small[..small.len().min(MAX_SKELETON_INPUT / 2)];
    if big.len() < s || small.len() < s {
        return;
    }
    // Fibonacci hashing of the whole 64 bits picks the slot (top bits); an independent mix picks
    // the sample.
    let mix = |h: u64| h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let kept = |h: u64| !sample || ((h ^ (h >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 61) == 0;
    fill_hashes(small, s, &mut buf.hashes);
    let n = buf.hashes.iter().filter(|&&h| kept(h)).count();
    let size = (2 * n).next_power_of_two().max(16);
    let mask = size - 1;
    let shift = 64 - size.trailing_zeros();
    let SkeletonBuf {
        slots,
        next: pos,
        hashes,
        ..
    } = buf;
    slots.clear();
    slots.resize(size, 0);
    pos.clear();
    pos.resize(size, NONE);
    for (i, &h) in hashes.iter().enumerate() {
        if !kept(h) {
            continue;
        }
        let key = h.max(1);
        let mut at = (mix(h) >> shift) as usize;
        while let Some(e) = slots.get_mut(at) {
            if *e == 0 {
                *e = key;
                if let Some(p) = pos.get_mut(at) {
                    *p = u32::try_from(i).unwrap_or(NONE);
                }
                break;
            }
            if *e == key {
                if let Some(p) = pos.get_mut(at) {
                    *p = NONE; // repeated within `small`
                }
                break;
            }
            at = (at + 1) & mask;
        }
    }
    let lsmall = small.len();
    let probe = |h: u64, out: &mut Vec<u32>, j: usize| {
        if !kept(h) {
            return;
        }
        let key = h.max(1);
        let mut at = (mix(h) >> shift) as usize;
        while let Some(&e) = slots.get(at) {
            if e == 0 {
                return;
            }
            if e == key {
                let i = pos.get(at).copied().unwrap_or(NONE);
                if i != NONE {
                    // j + |small| − i ≤ |big| + |small| fits: both are cut above.
                    out.push(u32::try_from(j + lsmall - i as usize).unwrap_or(u32::MAX));
                }
                return;
            }
            at = (at + 1) & mask;
        }
    };
    // The windows of `big`, hashed as they roll by (not stored).
    for (j, h) in rolling_hashes(big, s).enumerate() {
        probe(h, out, j);
    }
}

/// Appends to `out` the units of `text` covered by a matched window (`matched[i]`: window `i`,
/// covering `text[i..i + s]`, also occurs in the other text). Copies whole runs of covered units.
fn keep(text: &[u32], matched: &[bool], s: usize, out: &mut Skeleton) {
    let mut flush = |start: usize, end: usize| {
        if let Some(run) = text.get(start..end) {
            out.units.extend_from_slice(run);
            // `text` is cut to MAX_SKELETON_INPUT units, so offsets fit.
            let to32 = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
            out.offsets.extend(to32(start)..to32(end));
        }
    };
    // The current run of covered units, [start, end).
    let (mut start, mut end) = (0usize, 0usize);
    for (i, &m) in matched.iter().enumerate() {
        if m {
            if i > end {
                flush(start, end);
                start = i;
            }
            end = i + s;
        }
    }
    flush(start, end);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    fn string(u: &[u32]) -> String {
        u.iter().filter_map(|&c| char::from_u32(c)).collect()
    }

    #[test]
    fn rolling_equals_direct() {
        let t = chars("the quick brown fox 中文字符 jumps");
        let s = 5;
        let rolled = window_hashes(&t, s);
        for (i, h) in rolled.iter().enumerate() {
            let direct = window_hashes(&t[i..i + s], s);
            assert_eq!(direct, vec![*h]);
        }
        assert!(window_hashes(&t[..3], s).is_empty());
        assert!(window_hashes(&t, 0).is_empty());
    }

    #[test]
    fn keeps_shared_runs_only() {
        let a = chars("xxxxSHAREDPARTyyyy");
        let b = chars("zzSHAREDPARTwwwwwww");
        let (sa, sb) = skeleton(&a, &b, 4);
        assert_eq!(string(&sa.units), "SHAREDPART");
        assert_eq!(string(&sb.units), "SHAREDPART");
        assert_eq!(sa.offsets, (4..14).collect::<Vec<u32>>());
        assert_eq!(sb.offsets, (2..12).collect::<Vec<u32>>());
    }

    #[test]
    fn empty_and_short_inputs() {
        let (sa, sb) = skeleton(&[], &[], 8);
        assert!(sa.is_empty() && sb.is_empty());
        let a = chars("abc");
        let (sa, sb) = skeleton(&a, &a, 8);
        assert!(sa.is_empty() && sb.is_empty());
        let (sa, _) = skeleton(&a, &a, 0);
        assert_eq!(sa.len(), 3);
    }

    #[test]
    fn isolated_edit_loses_only_the_edited_char() {
        // Seed 000 §4.3, property 2: edits further than S apart lose only the edited units.
        let a = chars("abcdefghijklmnopqrstuvwxyz0123456789");
        let mut b = a.clone();
        b[18] = '#' as u32;
        let (sa, sb) = skeleton(&a, &b, 8);
        assert_eq!(sa.len(), a.len() - 1);
        assert_eq!(sb.len(), b.len() - 1);
        assert!(!sa.offsets.contains(&18));
    }
}
