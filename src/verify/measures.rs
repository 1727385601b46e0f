//! Cheaper similarity measures used by the other methods of the seeds: cosine on term-frequency
//! vectors (seed 004 §2.3; seed 000 §3.4 compares it with LCS) and Jaccard on shingle sets
//! (seed 001 §3.1).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// Cosine of two sparse term vectors, `Σ a_k·b_k / (‖a‖·‖b‖)` (seed 004 §2.3).
///
/// Seed 004 weighs terms by `tf / len(P)`; that scaling does not change the cosine, so plain term
/// frequencies can be passed. Returns 0 when either vector is all zeros, and never NaN (non-finite
/// weights give 0). The result is clamped to `[-1, 1]` (to `[0, 1]` for non-negative weights).
pub fn cosine<K, S>(a: &HashMap<K, f64, S>, b: &HashMap<K, f64, S>) -> f64
where
    K: Eq + Hash,
    S: BuildHasher,
{
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let dot: f64 = small
        .iter()
        .filter_map(|(k, x)| large.get(k).map(|y| x * y))
        .sum();
    finish(dot, norm2(a.values().copied()), norm2(b.values().copied()))
}

/// Cosine of two sparse vectors given as `(term hash, weight)` pairs sorted by term hash with no
/// repeated term (merge join, no allocation). Unsorted input gives a wrong value, never a panic.
/// Same conventions as [`cosine`].
pub fn cosine_sorted(a: &[(u64, f32)], b: &[(u64, f32)]) -> f64 {
    let (mut i, mut j, mut dot) = (0, 0, 0.0f64);
    while let (Some(&(ka, wa)), Some(&(kb, wb))) = (a.get(i), b.get(j)) {
        match ka.cmp(&kb) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += f64::from(wa) * f64::from(wb);
                i += 1;
                j += 1;
            }
        }
    }
    let na = norm2(a.iter().map(|&(_, w)| f64::from(w)));
    let nb = norm2(b.iter().map(|&(_, w)| f64::from(w)));
    finish(dot, na, nb)
}

/// Squared Euclidean norm.
fn norm2(it: impl Iterator<Item = f64>) -> f64 {
    it.map(|x| x * x).sum()
}

/// `dot / sqrt(na2 · nb2)`, 0 for degenerate input, clamped to [-1, 1].
fn finish(dot: f64, na2: f64, nb2: f64) -> f64 {
    let den = (na2 * nb2).sqrt();
    let c = dot / den;
    if den > 0.0 && c.is_finite() {
        c.clamp(-1.0, 1.0)
    } else {
        0.0
    }
}

/// Jaccard coefficient `|a ∩ b| / |a ∪ b|` of two shingle sets given as sorted, deduplicated
/// `u64` slices (seed 001 §3.1). Two empty sets give 0 (no evidence of similarity), not 1.
/// Unsorted input gives a wrong value, never a panic.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let inter = intersection_len(a, b);
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// Size of the intersection of two sorted, deduplicated slices (merge join).
pub fn intersection_len(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tf(words: &str) -> HashMap<&str, f64> {
        let mut m = HashMap::new();
        for w in words.split_whitespace() {
            *m.entry(w).or_insert(0.0) += 1.0;
        }
        m
    }

    #[test]
    fn cosine_basics() {
        assert!((cosine(&tf("a b c"), &tf("a b c")) - 1.0).abs() < 1e-12);
        assert_eq!(cosine(&tf("a b"), &tf("c d")), 0.0);
        assert_eq!(cosine(&tf(""), &tf("a")), 0.0);
        // (1,1,0)·(1,0,1) / 2 = 0.5
        assert!((cosine(&tf("a b"), &tf("a c")) - 0.5).abs() < 1e-12);
        // Word order is ignored (seed 000 §3.4).
        assert!((cosine(&tf("x y z"), &tf("z y x")) - 1.0).abs() < 1e-12);
        let mut nan = HashMap::new();
        nan.insert("a", f64::NAN);
        assert_eq!(cosine(&nan, &tf("a")), 0.0);
    }

    #[test]
    fn cosine_sorted_basics() {
        let a = [(1u64, 1.0f32), (2, 1.0)];
        let b = [(1u64, 1.0f32), (3, 1.0)];
        assert!((cosine_sorted(&a, &b) - 0.5).abs() < 1e-12);
        assert_eq!(cosine_sorted(&[], &b), 0.0);
        assert!((cosine_sorted(&a, &a) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn jaccard_basics() {
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(jaccard(&[1], &[]), 0.0);
        assert_eq!(jaccard(&[5, 9], &[5, 9]), 1.0);
    }

    proptest! {
        #[test]
        fn cosine_forms_agree(a in prop::collection::btree_map(0u64..50, 0.0f32..10.0, 0..30),
                              b in prop::collection::btree_map(0u64..50, 0.0f32..10.0, 0..30)) {
            let va: Vec<(u64, f32)> = a.iter().map(|(&k, &v)| (k, v)).collect();
            let vb: Vec<(u64, f32)> = b.iter().map(|(&k, &v)| (k, v)).collect();
            let ma: HashMap<u64, f64> = a.iter().map(|(&k, &v)| (k, f64::from(v))).collect();
            let mb: HashMap<u64, f64> = b.iter().map(|(&k, &v)| (k, f64::from(v))).collect();
            let x = cosine_sorted(&va, &vb);
            let y = cosine(&ma, &mb);
            prop_assert!((x - y).abs() < 1e-9);
            prop_assert!((0.0..=1.0).contains(&x));
            prop_assert!((cosine(&ma, &mb) - cosine(&mb, &ma)).abs() < 1e-12);
        }

        #[test]
        fn jaccard_in_range(a in prop::collection::btree_set(0u64..100, 0..40),
                            b in prop::collection::btree_set(0u64..100, 0..40)) {
            let a: Vec<u64> = a.into_iter().collect();
            let b: Vec<u64> = b.into_iter().collect();
            let j = jaccard(&a, &b);
            prop_assert!((0.0..=1.0).contains(&j));
            prop_assert_eq!(j, jaccard(&b, &a));
        }
    }
}
