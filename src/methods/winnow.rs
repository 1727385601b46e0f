//! Winnowing over sentences and k-token blocks, with global positions (seed 002, 「本文算法」;
//! seed 000 §2, after Schleimer et al.; METHODS.md card 5).
//!
//! Input: the sentence sequence, the noise granularity k and the detection granularity g; output:
//! `[fingerprint, global position]`.
//! 1. Every sentence with at least k tokens is hashed; all such sentence hashes are fingerprints.
//! 2. Sentences are split into overlapping blocks of k consecutive tokens, each hashed by
//!    Karp-Rabin over token ids and given its global position; the hashes are covered by
//!    overlapping windows of g − k + 1.
//! 3. In each window the minimum is chosen, the rightmost on ties; a window that still holds the
//!    previous choice keeps it unless the new rightmost hash is not greater (seed 002's steps
//!    ①–④). Every match longer than g tokens shares a fingerprint (seed 000 §2: w + k − 1).
//!
//! The seed's k is both the noise granularity (tokens a sentence needs) and the block length: one
//! parameter here too. The seed counts keywords after word segmentation and stop-word removal;
//! until a segmenter is in, tokens are words and CJK characters (`super::tokens`), and k and g
//! count those (**choice**). It gives no similarity and no threshold: the measures below
//! (shared fingerprints over the smaller set, and over the union) and their thresholds are
//! **choices** (METHODS.md card 5).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::terms::tokens;
use crate::text::split_sentences;

/// Parameters of winnowing (all **choices**; METHODS.md card 5).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WinnowConfig {
    /// Noise granularity and block length k (4 tokens).
    pub k: usize,
    /// Detection granularity g (16 tokens): the window holds g − k + 1 block hashes.
    pub g: usize,
    /// Similar when shared fingerprints cover at least this share of the smaller set (0.5)…
    pub min_contain: f64,
    /// …or at least this share of the union (0.3).
    pub min_resemble: f64,
}

impl Default for WinnowConfig {
    fn default() -> Self {
        WinnowConfig {
            k: 4,
            g: 16,
            min_contain: 0.5,
            min_resemble: 0.3,
        }
    }
}

/// A fingerprint and its global position (the token index where its block or sentence starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// The hash (sentence hashes and block hashes are kept apart by a tag in the hash).
    pub hash: u64,
    /// The global position, in tokens.
    pub position: u32,
    /// True for a whole sentence's hash, false for a block's.
    pub sentence: bool,
}

/// Karp-Rabin base over token ids, mod 2^64 (**choice**: odd, the seed gives none).
const BASE: u64 = 0x100_0000_01B3;

fn token_id(t: u32) -> u64 {
    xxh3_64_with_seed(&t.to_le_bytes(), 0x574e)
}

/// The winnowed fingerprints of a normalized text, in position order.
pub fn fingerprints(text: &str, cfg: &WinnowConfig) -> Vec<Fingerprint> {
    let k = cfg.k.max(1);
    let window = cfg.g.saturating_sub(k) + 1;
    let mut out = Vec::new();
    let mut blocks: Vec<(u64, u32)> = Vec::new();
    let mut position = 0u32;
    for s in split_sentences(text) {
        let toks = tokens(s.text(text));
        if toks.len() >= k {
            // Step 1: the sentence's own hash (tagged apart from block hashes).
            let mut bytes = Vec::with_capacity(1 + toks.len() * 4);
            bytes.push(b'S');
            for t in &toks {
                bytes.extend_from_slice(&t.to_le_bytes());
            }
            out.push(Fingerprint {
                hash: xxh3_64_with_seed(&bytes, 0x574e),
                position,
                sentence: true,
            });
            // Step 2: rolling Karp-Rabin hashes of its k-token blocks.
            let ids: Vec<u64> = toks.iter().map(|&t| token_id(t)).collect();
            let top = BASE.wrapping_pow(k as u32 - 1);
            let mut h = 0u64;
            for (i, id) in ids.iter().enumerate() {
                if i >= k {
                    h = h.wrapping_sub(ids[i - k].wrapping_mul(top));
                }
                h = h.wrapping_mul(BASE).wrapping_add(*id);
                if i + 1 >= k {
                    blocks.push((h, position + (i + 1 - k) as u32));
                }
            }
        }
        position += toks.len() as u32;
    }
    // Step 3: winnowing with the rightmost minimum.
    for (h, p) in winnow(&blocks, window) {
        out.push(Fingerprint {
            hash: h,
            position: p,
            sentence: false,
        });
    }
    out.sort_by_key(|f| (f.position, !f.sentence));
    out
}

/// Seed 002's selection over hashes in windows of `w`: the rightmost minimum of the first window;
/// then, window by window, the previous choice is kept while it is in the window and smaller than
/// the newest hash, replaced by the newest hash when that is not greater, and otherwise (it left
/// the window) the window's rightmost minimum is chosen. Fewer hashes than `w`: one window.
pub fn winnow(hashes: &[(u64, u32)], w: usize) -> Vec<(u64, u32)> {
    let w = w.max(1);
    if hashes.is_empty() {
        return Vec::new();
    }
    let rightmost_min = |from: usize, to: usize| -> usize {
        let mut best = from;
        for i in from..to {
            if hashes[i].0 <= hashes[best].0 {
                best = i;
            }
        }
        best
    };
    let last_start = hashes.len().saturating_sub(w);
    let mut chosen = rightmost_min(0, w.min(hashes.len()));
    let mut out = vec![hashes[chosen]];
    for start in 1..=last_start {
        let end = start + w; // the window is [start, end)
        let newest = end - 1;
        if chosen < start {
            chosen = rightmost_min(start, end);
            out.push(hashes[chosen]);
        } else if hashes[newest].0 <= hashes[chosen].0 {
            chosen = newest;
            out.push(hashes[chosen]);
        }
    }
    out
}

/// Shared fingerprints of two pages (by hash, as sets): `(shared, |A|, |B|)`.
pub fn shared(a: &[Fingerprint], b: &[Fingerprint]) -> (usize, usize, usize) {
    let set = |f: &[Fingerprint]| {
        let mut v: Vec<u64> = f.iter().map(|x| x.hash).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (sa, sb) = (set(a), set(b));
    let common = sa.iter().filter(|h| sb.binary_search(h).is_ok()).count();
    (common, sa.len(), sb.len())
}

/// The rates of two pages: `(resemble, contain)` — shared fingerprints over the union and over
/// the smaller set.
pub fn rates(a: &[Fingerprint], b: &[Fingerprint]) -> (f64, f64) {
    let (common, la, lb) = shared(a, b);
    if la == 0 || lb == 0 {
        return (0.0, 0.0);
    }
    let union = la + lb - common;
    (
        common as f64 / union as f64,
        common as f64 / la.min(lb) as f64,
    )
}

/// The method's decision (thresholds are **choices**).
pub fn similar(a: &[Fingerprint], b: &[Fingerprint], cfg: &WinnowConfig) -> bool {
    let (r, c) = rates(a, b);
    r >= cfg.min_resemble || c >= cfg.min_contain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(seed: u64, sentences: usize) -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..sentences)
            .map(|_| {
                let n = 8 + next() % 10;
                let words: Vec<String> = (0..n).map(|_| format!("w{}", next() % 3000)).collect();
                words.join(" ") + "."
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn every_window_holds_a_chosen_hash() {
        // Schleimer's guarantee, as seed 002 states it: each window contributes its minimum.
        let hashes: Vec<(u64, u32)> = (0..500u32)
            .map(|i| (xxh3_64_with_seed(&i.to_le_bytes(), 7) % 1000, i))
            .collect();
        for w in [1, 4, 13] {
            let chosen = winnow(&hashes, w);
            for start in 0..=hashes.len() - w {
                let min = hashes[start..start + w].iter().map(|h| h.0).min().unwrap();
                assert!(
                    chosen
                        .iter()
                        .any(|&(h, p)| h == min && (start as u32..(start + w) as u32).contains(&p)),
                    "window {start} (w {w}) has no chosen minimum"
                );
            }
            // Positions increase.
            assert!(chosen.windows(2).all(|p| p[0].1 < p[1].1));
        }
    }

    #[test]
    fn ties_go_to_the_rightmost() {
        let h = [(5, 0), (3, 1), (3, 2), (9, 3)];
        assert_eq!(winnow(&h, 3)[0], (3, 2));
    }

    #[test]
    fn a_copied_passage_longer_than_g_is_found() {
        let cfg = WinnowConfig::default();
        let a = text(1, 40);
        let b = text(2, 40);
        // b with three sentences of a (longer than g tokens together) copied into its middle.
        let copied: String = a.split(". ").skip(5).take(3).collect::<Vec<_>>().join(". ") + ".";
        assert!(copied.split(' ').count() > cfg.g);
        let mid = b.len() / 2;
        let cut = b[..mid].rfind(". ").unwrap() + 2;
        let b2 = format!("{}{} {}", &b[..cut], copied, &b[cut..]);
        let (fa, fb, fb2) = (
            fingerprints(&a, &cfg),
            fingerprints(&b, &cfg),
            fingerprints(&b2, &cfg),
        );
        assert_eq!(shared(&fa, &fb).0, 0);
        // The three sentence hashes, and block hashes chosen inside the copied run.
        let found = fingerprints(&b2, &cfg)
            .iter()
            .filter(|f| !f.sentence && fa.iter().any(|x| x.hash == f.hash))
            .count();
        assert!(shared(&fa, &fb2).0 >= 3, "{:?}", shared(&fa, &fb2));
        assert!(found >= 1, "no block fingerprint of the copied passage");
        assert!(!similar(&fa, &fb, &cfg));
    }

    #[test]
    fn near_copies_are_similar_and_identical_texts_agree() {
        let cfg = WinnowConfig::default();
        let a = text(3, 30);
        let fa = fingerprints(&a, &cfg);
        assert_eq!(rates(&fa, &fa), (1.0, 1.0));
        // One sentence in ten rewritten.
        let b: Vec<String> = a
            .split(". ")
            .enumerate()
            .map(|(i, s)| {
                if i % 10 == 0 {
                    format!("changed words here {i}")
                } else {
                    s.to_string()
                }
            })
            .collect();
        let fb = fingerprints(&b.join(". "), &cfg);
        assert!(similar(&fa, &fb, &cfg), "{:?}", rates(&fa, &fb));
        assert!(fingerprints("", &cfg).is_empty());
        assert!(fingerprints("too short.", &cfg).is_empty());
    }
}
