//! Agglomerate terms (AgT) with the extended linear comparison and the multi-dimensional
//! comparison (seed 004, Zhang, Zhang, Liu 2010; METHODS.md card 8).
//!
//! 1. *Keywords* (§2.1): a word scores when it clusters — 「某个词在小规模文本片断中多次出现」. Each
//!    occurrence `i` of word W carries `LS(W, i) = f(LS(W, i−1), ΔD(W, i))` with
//!    `f(a, b) = (a + m(b)) · k(b)`, ΔD the distance to the previous occurrence, and
//!    `score(W) = Σ_i LS(W, i)` (formulas 1–3). The paper leaves m and k to "empirical
//!    functions" with k decreasing and m continuous in b: here (**choice**, METHODS.md)
//!    `m(b) = 1`, `k(b) = exp(−b/τ)`, τ = 20 words, b in word positions, and a first occurrence
//!    scores 0 (a word seen once is not agglomerated). Stop words and single CJK characters are
//!    not keywords (the paper's Table 1 keywords all have two characters or more).
//! 2. *Extended linear comparison* (§2.2): for N = 3, 4, 5, the top-N keywords, sorted as
//!    strings, concatenated and hashed (MD5, framework 2) — 「当 N 取 3 ~ 5 时,过滤效果与召回效果较为平衡」;
//!    pages sharing any of the three hashes are candidates, and the results are merged (the
//!    index's cluster rule: a candidate's cluster is joined through its representative, which
//!    makes the merge transitive as in the paper's worked example).
//! 3. *Multi-dimensional comparison* (§2.3): cosine of the term-frequency vectors (TF, not the
//!    AgT scores: 「引入了过剩的词语级别区分度」). The paper gives no threshold: 0.85 (**choice**).

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::terms::{is_single_cjk, terms};
use super::topn::sorted_top_n_md5;

/// Parameters of AgT (the values are **choices**, METHODS.md card 8, but for N = 3, 4, 5).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AgtConfig {
    /// τ of `k(b) = exp(−b/τ)`, in words (20).
    pub tau: f64,
    /// The N of the linear comparisons (3, 4, 5: the paper's).
    pub lengths: Vec<usize>,
    /// Similar when the TF cosine is at least this (0.85).
    pub min_cosine: f64,
}

impl Default for AgtConfig {
    fn default() -> Self {
        AgtConfig {
            tau: 20.0,
            lengths: vec![3, 4, 5],
            min_cosine: 0.85,
        }
    }
}

/// A page's AgT signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Agt {
    /// The linear-comparison hashes, one per N (fewer when the page has fewer keywords).
    pub keys: Vec<u128>,
    /// Term frequencies by term hash, sorted by hash.
    pub tf: Vec<(u64, u32)>,
}

/// The AgT score of every agglomerated word of a word sequence (formulas 1–3), best first, ties
/// by the word.
pub fn scores(words: &[String], tau: f64) -> Vec<(String, f64)> {
    // Per word: the position of its last occurrence, its last LS, its score.
    let mut state: HashMap<&str, (usize, f64, f64)> = HashMap::new();
    for (p, w) in words.iter().enumerate() {
        match state.get_mut(w.as_str()) {
            Some((last, ls, score)) => {
                let gap = (p - *last) as f64;
                *ls = (*ls + 1.0) * (-gap / tau).exp();
                *score += *ls;
                *last = p;
            }
            None => {
                state.insert(w, (p, 0.0, 0.0));
            }
        }
    }
    let mut out: Vec<(String, f64)> = state
        .into_iter()
        .filter(|(w, (_, _, s))| *s > 0.0 && !is_single_cjk(w))
        .map(|(w, (_, _, s))| (w.to_string(), s))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// The AgT signature of a normalized text.
pub fn signature(text: &str, cfg: &AgtConfig) -> Agt {
    let words = terms(text);
    let scored = scores(&words, cfg.tau);
    let keys = cfg
        .lengths
        .iter()
        .filter_map(|&n| sorted_top_n_md5(&scored, n))
        .collect();
    let mut tf: HashMap<u64, u32> = HashMap::new();
    for w in &words {
        *tf.entry(xxh3_64(w.as_bytes())).or_default() += 1;
    }
    let mut tf: Vec<(u64, u32)> = tf.into_iter().collect();
    tf.sort_unstable();
    Agt { keys, tf }
}

/// Cosine of two term-frequency vectors sorted by key (0 when either is empty).
pub fn cosine(a: &[(u64, u32)], b: &[(u64, u32)]) -> f64 {
    super::tfidf::cosine(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn clustered_words_score_and_lone_words_do_not() {
        let s = scores(&words("a b a c a d e f g h b"), 20.0);
        let get = |w: &str| s.iter().find(|(x, _)| x == w).map(|x| x.1);
        assert!(get("a").unwrap() > get("b").unwrap(), "{s:?}");
        assert!(get("c").is_none() && get("h").is_none());
        // The same two occurrences score more when close together.
        let near = scores(&words("x x y z"), 20.0)[0].1;
        let far = scores(&words("x y z w v u x"), 20.0)[0].1;
        assert!(near > far);
    }

    #[test]
    fn linear_keys_are_the_sorted_top_n_and_copies_share_them() {
        let text = "The river market opened. The river market closed. Market traders met river \
                    boats and market stalls near the river bridge. Bridge tolls rose.";
        let a = signature(text, &AgtConfig::default());
        let b = signature(&text.replace("opened", "began"), &AgtConfig::default());
        assert!(!a.keys.is_empty());
        assert!(a.keys.iter().any(|k| b.keys.contains(k)));
        assert!(cosine(&a.tf, &b.tf) > 0.85);
        assert!((cosine(&a.tf, &a.tf) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn cosine_of_disjoint_vectors_is_zero() {
        assert_eq!(cosine(&[(1, 2)], &[(2, 2)]), 0.0);
        assert_eq!(cosine(&[], &[(2, 2)]), 0.0);
    }
}
