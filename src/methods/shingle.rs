//! Shingling with min-hash sketches and super-shingles, compared by Jaccard (seed 001 §3.1;
//! seed 000 §2; METHODS.md card 1).
//!
//! 1. *Features* (001 §3.1.1): the set of hashed runs of `w` consecutive tokens (shingles).
//! 2. *Compression* (001 §3.1.2, its 「SuperShingle」): `n` hash functions, the minimum of each
//!    over the shingle set — a sketch of `n` min-hashes.
//! 3. *Candidates*: super-shingles in Broder's sense — a hash of each band of `r` consecutive
//!    sketch entries (`b` bands, `b·r = n`); pages sharing a super-shingle are candidates.
//! 4. *Similarity* (001 §3.1.3): Jaccard. The printed `|C|/|A + B|` is read as |A∩B|/|A∪B|,
//!    estimated from two sketches by the share of positions with equal minima (the unbiased
//!    estimator; **choice** — Jaccard of the two n-element sets is biased). Containment (seed
//!    000 §2, Broder) is estimated from the Jaccard and the two shingle-set sizes.
//!
//! The paper gives no parameters but an illustration (a window of 2 CJK characters, 2 hash
//! functions) and no threshold: the defaults are **choices** (METHODS.md card 1).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::terms::tokens;

/// Parameters of shingling (all **choices**; METHODS.md card 1).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ShingleConfig {
    /// Tokens per shingle (w = 3; sweep 2–5).
    pub width: usize,
    /// Min-hashes per sketch (n = 128).
    pub hashes: usize,
    /// Rows per band: a super-shingle hashes `rows` consecutive min-hashes (r = 4, so 32 bands;
    /// the LSH knee is near (1/32)^(1/4) ≈ 0.42).
    pub rows: usize,
    /// Similar when the estimated Jaccard is at least this (0.5; sweep 0.2–0.9).
    pub min_jaccard: f64,
}

impl Default for ShingleConfig {
    fn default() -> Self {
        ShingleConfig {
            width: 3,
            hashes: 128,
            rows: 4,
            min_jaccard: 0.5,
        }
    }
}

/// A page's shingling signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Sketch {
    /// The minimum of each of the `n` hash functions over the shingle set (`u64::MAX` for an
    /// empty set).
    pub minima: Vec<u64>,
    /// The number of distinct shingles.
    pub shingles: usize,
}

/// The hashed shingles of a token sequence (fewer tokens than `width`: one shingle of them all,
/// none for no tokens).
pub fn shingles(tokens: &[u32], width: usize) -> Vec<u64> {
    let width = width.max(1);
    if tokens.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<u64> = if tokens.len() < width {
        vec![hash_run(tokens)]
    } else {
        tokens.windows(width).map(hash_run).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

fn hash_run(run: &[u32]) -> u64 {
    let mut bytes = Vec::with_capacity(run.len() * 4);
    for t in run {
        bytes.extend_from_slice(&t.to_le_bytes());
    }
    xxh3_64_with_seed(&bytes, 0x5349_4e47_4c45)
}

/// The min-hash sketch of a normalized text.
pub fn sketch(text: &str, cfg: &ShingleConfig) -> Sketch {
    let set = shingles(&tokens(text), cfg.width);
    // Hash function i: the shingle's hash re-hashed with seed i (a seeded xxh3 per function).
    let minima = (0..cfg.hashes as u64)
        .map(|i| {
            set.iter()
                .map(|s| xxh3_64_with_seed(&s.to_le_bytes(), i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
                .min()
                .unwrap_or(u64::MAX)
        })
        .collect();
    Sketch {
        minima,
        shingles: set.len(),
    }
}

/// The super-shingles of a sketch: one hash per band of `rows` consecutive min-hashes, with the
/// band's number hashed in (pages sharing one are candidates). None for an empty page.
pub fn super_shingles(s: &Sketch, cfg: &ShingleConfig) -> Vec<u64> {
    if s.shingles == 0 {
        return Vec::new();
    }
    s.minima
        .chunks(cfg.rows.max(1))
        .enumerate()
        .map(|(band, rows)| {
            let mut bytes = Vec::with_capacity(8 + rows.len() * 8);
            bytes.extend_from_slice(&(band as u64).to_le_bytes());
            for m in rows {
                bytes.extend_from_slice(&m.to_le_bytes());
            }
            xxh3_64_with_seed(&bytes, 0x4241_4e44)
        })
        .collect()
}

/// Estimated Jaccard of two pages' shingle sets: the share of positions where the sketches
/// agree (0 when either page has no shingle).
pub fn jaccard(a: &Sketch, b: &Sketch) -> f64 {
    if a.shingles == 0 || b.shingles == 0 || a.minima.len() != b.minima.len() {
        return 0.0;
    }
    let same = a
        .minima
        .iter()
        .zip(&b.minima)
        .filter(|(x, y)| x == y)
        .count();
    same as f64 / a.minima.len() as f64
}

/// Estimated containment of `a` in `b` (Broder's measure, seed 000 §2): |A∩B| / |A|, from the
/// Jaccard J and the set sizes: |A∩B| = J(|A|+|B|)/(1+J).
pub fn containment(a: &Sketch, b: &Sketch) -> f64 {
    let j = jaccard(a, b);
    if a.shingles == 0 {
        return 0.0;
    }
    let inter = j * (a.shingles + b.shingles) as f64 / (1.0 + j);
    (inter / a.shingles as f64).min(1.0)
}

/// The method's decision: similar when the estimated Jaccard reaches the threshold.
pub fn similar(a: &Sketch, b: &Sketch, cfg: &ShingleConfig) -> bool {
    jaccard(a, b) >= cfg.min_jaccard
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(seed: u64, n: usize) -> Vec<String> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("w{}", x % 5000)
            })
            .collect()
    }

    #[test]
    fn identical_texts_agree_everywhere_and_share_every_band() {
        let cfg = ShingleConfig::default();
        let t = words(1, 300).join(" ");
        let (a, b) = (sketch(&t, &cfg), sketch(&t, &cfg));
        assert_eq!(jaccard(&a, &b), 1.0);
        assert_eq!(super_shingles(&a, &cfg), super_shingles(&b, &cfg));
        assert_eq!(super_shingles(&a, &cfg).len(), 32);
        assert!((containment(&a, &b) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_estimate_follows_the_true_jaccard() {
        let cfg = ShingleConfig {
            hashes: 512,
            ..ShingleConfig::default()
        };
        let base = words(2, 1000);
        // Replace a tenth of the words: true Jaccard of the 3-shingle sets, computed exactly.
        let mut edited = base.clone();
        for (i, w) in edited.iter_mut().enumerate() {
            if i % 10 == 0 {
                *w = format!("x{i}");
            }
        }
        let (ta, tb) = (base.join(" "), edited.join(" "));
        let (sa, sb) = (
            shingles(&tokens(&ta), cfg.width),
            shingles(&tokens(&tb), cfg.width),
        );
        let inter = sa.iter().filter(|h| sb.binary_search(h).is_ok()).count();
        let truth = inter as f64 / (sa.len() + sb.len() - inter) as f64;
        let est = jaccard(&sketch(&ta, &cfg), &sketch(&tb, &cfg));
        assert!((est - truth).abs() < 0.08, "estimate {est}, truth {truth}");
    }

    #[test]
    fn unrelated_texts_are_not_similar_and_an_excerpt_is_contained() {
        let cfg = ShingleConfig::default();
        let a = words(3, 400);
        let b = words(4, 400);
        let (sa, sb) = (sketch(&a.join(" "), &cfg), sketch(&b.join(" "), &cfg));
        assert!(!similar(&sa, &sb, &cfg));
        assert!(jaccard(&sa, &sb) < 0.1);
        let excerpt = sketch(&a[..100].join(" "), &cfg);
        assert!(
            containment(&excerpt, &sa) > 0.6,
            "{}",
            containment(&excerpt, &sa)
        );
        assert!(jaccard(&excerpt, &sa) < 0.5);
    }

    #[test]
    fn empty_and_short_texts() {
        let cfg = ShingleConfig::default();
        let e = sketch("", &cfg);
        assert_eq!(e.shingles, 0);
        assert!(super_shingles(&e, &cfg).is_empty());
        assert_eq!(jaccard(&e, &e), 0.0);
        // Fewer tokens than the width: one shingle, and CJK counts per character.
        assert_eq!(sketch("两字", &cfg).shingles, 1);
        assert_eq!(sketch("一二三四", &cfg).shingles, 2);
    }
}
