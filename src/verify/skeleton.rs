//! Filter skeleton (seed 000 §4.3, Fig. 2).
//!
//! Both texts are scanned with a sliding window of `S` chars; every window gets a Rabin–Karp
//! polynomial hash. A char of A stays in A's skeleton when at least one window covering it has a
//! hash that also occurs among B's window hashes, and vice versa. Time and space are O(|A| + |B|).
//!
//! Units: the paper slides a window of 16 GBK bytes (8 Chinese characters); here the window is
//! counted in Unicode scalar values (chars), so a Chinese and a Latin char weigh the same, and the
//! default is `S = 8` chars.
//!
//! Hash collisions are harmless for correctness: a colliding window only keeps a few extra chars
//! in the skeleton, and the LCS that follows compares the chars themselves.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Base of the Rabin–Karp polynomial (odd, so multiplication is a bijection modulo 2^64).
pub const RABIN_BASE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Longest text (in chars) the skeleton looks at: offsets are stored as `u32`. Chars beyond this
/// (over 4 Gi chars, i.e. at least 4 GiB of text) are ignored.
pub const MAX_SKELETON_INPUT: usize = u32::MAX as usize;

/// The filter skeleton of one text: the kept chars, in order, and where each came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skeleton {
    /// The kept chars, in text order.
    pub chars: Vec<char>,
    /// `offsets[i]` is the char offset in the original text of `chars[i]` (strictly increasing).
    pub offsets: Vec<u32>,
}

impl Skeleton {
    /// Number of kept chars.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// True when no char was kept.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }
}

/// Rabin–Karp rolling hashes of every window of `s` chars of `text` (seed 000 §4.3, after
/// Rabin 1981): `h = Σ c_i · B^(s-1-i)` with wrapping `u64` arithmetic, `B` = [`RABIN_BASE`].
///
/// Returns `text.len() - s + 1` hashes (window `i` covers `text[i..i + s]`), none when the text
/// is shorter than the window or `s == 0`.
pub fn window_hashes(text: &[char], s: usize) -> Vec<u64> {
    if s == 0 || text.len() < s {
        return Vec::new();
    }
    // B^(s-1), the weight of the char that leaves the window.
    let mut top = 1u64;
    for _ in 1..s {
        top = top.wrapping_mul(RABIN_BASE);
    }
    let mut out = Vec::with_capacity(text.len() - s + 1);
    let mut h = 0u64;
    for &c in &text[..s] {
        h = h.wrapping_mul(RABIN_BASE).wrapping_add(u64::from(c));
    }
    out.push(h);
    for (&gone, &new) in text.iter().zip(&text[s..]) {
        h = h
            .wrapping_sub(u64::from(gone).wrapping_mul(top))
            .wrapping_mul(RABIN_BASE)
            .wrapping_add(u64::from(new));
        out.push(h);
    }
    out
}

/// Hasher for sets of values that are already hashes: one multiply–xorshift finalizer spreads the
/// polynomial's weak low bits before the table uses them.
#[derive(Default, Clone, Copy)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0.rotate_left(8) ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = mix(v);
    }
}

/// MurmurHash3's 64-bit finalizer (a bijection).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

type HashSetU64 = HashSet<u64, BuildHasherDefault<PreHashed>>;

/// Filter skeletons of `a` and `b` with a window of `s` chars (seed 000 §4.3, Fig. 2).
///
/// A char of `a` is kept when at least one window of `s` chars covering it hashes to a value that
/// is also a window hash of `b`; likewise for `b`. `s == 0` is treated as 1. A text shorter than
/// `s` has no window and so an empty skeleton (the caller, [`super::verify_chars`], shrinks the
/// window to the shorter text's length). Identical texts of length ≥ `s` keep every char.
pub fn skeleton(a: &[char], b: &[char], s: usize) -> (Skeleton, Skeleton) {
    let s = s.max(1);
    let a = &a[..a.len().min(MAX_SKELETON_INPUT)];
    let b = &b[..b.len().min(MAX_SKELETON_INPUT)];
    let ha = window_hashes(a, s);
    let hb = window_hashes(b, s);
    let set_a: HashSetU64 = ha.iter().copied().collect();
    let set_b: HashSetU64 = hb.iter().copied().collect();
    (keep(a, &ha, &set_b, s), keep(b, &hb, &set_a, s))
}

/// Keeps the chars of `text` covered by a window whose hash is in `other` (one left-to-right pass:
/// `cover_end` is the end of the furthest-reaching matching window started so far).
fn keep(text: &[char], hashes: &[u64], other: &HashSetU64, s: usize) -> Skeleton {
    let mut out = Skeleton::default();
    let mut cover_end = 0usize;
    for (i, &c) in text.iter().enumerate() {
        if hashes.get(i).is_some_and(|h| other.contains(h)) {
            cover_end = i + s;
        }
        if i < cover_end {
            out.chars.push(c);
            // `text` is cut to MAX_SKELETON_INPUT chars, so `i` fits.
            out.offsets.push(u32::try_from(i).unwrap_or(u32::MAX));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
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
        assert_eq!(sa.chars.iter().collect::<String>(), "SHAREDPART");
        assert_eq!(sb.chars.iter().collect::<String>(), "SHAREDPART");
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
        // Seed 000 §4.3, property 2: edits further than S apart lose only the edited chars.
        let a = chars("abcdefghijklmnopqrstuvwxyz0123456789");
        let mut b = a.clone();
        b[18] = '#';
        let (sa, sb) = skeleton(&a, &b, 8);
        assert_eq!(sa.len(), a.len() - 1);
        assert_eq!(sb.len(), b.len() - 1);
        assert!(!sa.offsets.contains(&18));
    }
}
