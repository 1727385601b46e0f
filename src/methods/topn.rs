//! The "sorted top-N keyword hash" (METHODS.md, shared building block): score a page's terms, take
//! the top N, sort the strings, concatenate, hash. Seed 002's semantic fingerprint (top-n TF-IDF
//! keywords, sorted, MD5), seed 004's framework 2 (`MD5(Conc(sort(T_i)))`) and each branch of its
//! extended linear comparison (N = 3, 4, 5) are this one operation with other scores and N.

use md5::{Digest, Md5};

/// The MD5 of the top `n` terms by score, sorted and concatenated (a NUL between terms, so that
/// `["ab", "c"]` and `["a", "bc"]` differ). Ties in score go to the smaller term, so the result
/// does not depend on the input order. `None` when there are fewer than `n` terms (the paper's
/// fingerprint needs n keywords) or `n` is 0.
pub fn sorted_top_n_md5<S: AsRef<str>>(scored: &[(S, f64)], n: usize) -> Option<u128> {
    if n == 0 || scored.len() < n {
        return None;
    }
    let mut by_score: Vec<(&str, f64)> = scored.iter().map(|(t, s)| (t.as_ref(), *s)).collect();
    by_score.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut top: Vec<&str> = by_score.iter().take(n).map(|(t, _)| *t).collect();
    top.sort_unstable();
    let mut h = Md5::new();
    for (i, t) in top.iter().enumerate() {
        if i > 0 {
            h.update([0u8]);
        }
        h.update(t.as_bytes());
    }
    Some(u128::from_be_bytes(h.finalize().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_input_and_of_the_top_terms_does_not_matter() {
        let a = [
            ("river", 3.0),
            ("stone", 2.0),
            ("market", 1.0),
            ("orbit", 0.5),
        ];
        let b = [
            ("orbit", 0.5),
            ("market", 1.5),
            ("river", 9.0),
            ("stone", 2.0),
        ];
        assert_eq!(sorted_top_n_md5(&a, 3), sorted_top_n_md5(&b, 3));
        assert_ne!(sorted_top_n_md5(&a, 3), sorted_top_n_md5(&a, 4));
        assert_eq!(sorted_top_n_md5(&a, 5), None);
        assert_eq!(sorted_top_n_md5(&a, 0), None);
    }

    #[test]
    fn terms_are_kept_apart_and_ties_are_stable() {
        let x = [("ab", 1.0), ("c", 1.0)];
        let y = [("a", 1.0), ("bc", 1.0)];
        assert_ne!(sorted_top_n_md5(&x, 2), sorted_top_n_md5(&y, 2));
        let t1 = [("b", 1.0), ("a", 1.0), ("c", 1.0)];
        let t2 = [("c", 1.0), ("b", 1.0), ("a", 1.0)];
        assert_eq!(sorted_top_n_md5(&t1, 2), sorted_top_n_md5(&t2, 2));
    }
}
