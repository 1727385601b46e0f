//! The two TF-IDF methods: seed 002's semantic fingerprint and seed 004's TF-IDF baseline
//! (METHODS.md cards 4 and 9).
//!
//! - **Semantic fingerprint** (seed 002, 「语义指纹生成算法」): words weighted by TF×IDF
//!   (「使用TF*IDF作为每个特征项的权值」), sorted by weight, the top n taken and sorted again by the
//!   word (「选取前n个特征项,然后重新按照字符排序」), the string hashed by MD5; equal fingerprints are
//!   near duplicates. n is not given in the seed: 8 (**choice**: the seed's only count, 「选取8个
//!   关键词」). The noun boost and the synonym step are left out (**choice**: the seed names no
//!   dictionary, and no maintained synonym list for Chinese exists as a crate).
//! - **TF-IDF baseline** (seed 004 §1, §3): each page is its `dims` heaviest words with their
//!   TF-IDF weights; two pages are near duplicates when the cosine of those vectors is at least
//!   `min_cosine` (the seed's 10 dimensions and 0.95).
//!
//! IDF is the index's of the moment ([`super::df::idf`]); both pages are weighed under it.
//! Candidates are the pages holding the fingerprint's n words (every page with the same
//! fingerprint holds them all, so it ranks first), or the baseline's `lookup` heaviest words.

use super::df::{idf, DocFreq, PageTerms, Term};
use super::topn::sorted_top_n_md5;

/// Parameters of the semantic fingerprint.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SemanticConfig {
    /// Keywords in the fingerprint (8, **choice**).
    pub n: usize,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        SemanticConfig { n: 8 }
    }
}

/// Parameters of the TF-IDF baseline.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TfidfConfig {
    /// Dimensions of a page's vector (10, seed 004).
    pub dims: usize,
    /// Similar when the cosine is at least this (0.95, seed 004).
    pub min_cosine: f64,
    /// Candidates come from the postings of this many heaviest words (5, **choice**).
    pub lookup: usize,
}

impl Default for TfidfConfig {
    fn default() -> Self {
        TfidfConfig {
            dims: 10,
            min_cosine: 0.95,
            lookup: 5,
        }
    }
}

/// A page's words by TF-IDF weight, heaviest first (ties to the smaller word).
pub fn weighted<'a>(page: &'a PageTerms, df: &dyn DocFreq) -> Vec<(&'a Term, f64)> {
    let mut w: Vec<(&Term, f64)> = page
        .0
        .iter()
        .map(|t| (t, f64::from(t.tf) * idf(df, t.key)))
        .collect();
    w.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.word.cmp(&b.0.word)));
    w
}

/// The semantic fingerprint: MD5 of the top-n words, sorted, and the keys of those words;
/// `None` for a page with fewer than n words.
pub fn fingerprint(
    page: &PageTerms,
    cfg: &SemanticConfig,
    df: &dyn DocFreq,
) -> Option<(u128, Vec<u64>)> {
    let w = weighted(page, df);
    let scored: Vec<(&str, f64)> = w.iter().map(|(t, s)| (t.word.as_str(), *s)).collect();
    let md5 = sorted_top_n_md5(&scored, cfg.n)?;
    let top: Vec<u64> = w.iter().take(cfg.n).map(|(t, _)| t.key).collect();
    Some((md5, top))
}

/// A page's TF-IDF vector: its `dims` heaviest words with their weights, sorted by key.
pub fn vector(page: &PageTerms, cfg: &TfidfConfig, df: &dyn DocFreq) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = weighted(page, df)
        .into_iter()
        .take(cfg.dims)
        .map(|(t, s)| (t.key, s))
        .collect();
    v.sort_unstable_by_key(|&(k, _)| k);
    v
}

/// The keys of a page's `lookup` heaviest words.
pub fn lookup(page: &PageTerms, cfg: &TfidfConfig, df: &dyn DocFreq) -> Vec<u64> {
    weighted(page, df)
        .into_iter()
        .take(cfg.lookup.min(cfg.dims))
        .map(|(t, _)| t.key)
        .collect()
}

/// Cosine of two sparse vectors sorted by key (0 when either is empty).
pub fn cosine<T: Copy + Into<f64>>(a: &[(u64, T)], b: &[(u64, T)]) -> f64 {
    let norm = |v: &[(u64, T)]| v.iter().map(|&(_, x)| x.into().powi(2)).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    let (mut i, mut j, mut dot) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += a[i].1.into() * b[j].1.into();
                i += 1;
                j += 1;
            }
        }
    }
    (dot / (na * nb)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::df::DocFreqs;

    fn collection() -> DocFreqs {
        let mut df = DocFreqs::new();
        for p in 0..50 {
            df.add_text(&format!("common shared everyday page{p}"));
        }
        df
    }

    #[test]
    fn fingerprints_take_the_heaviest_words_whatever_their_order() {
        let df = collection();
        let cfg = SemanticConfig { n: 3 };
        let a = PageTerms::of("orbit orbit comet comet nebula nebula common shared");
        let b = PageTerms::of("nebula comet orbit nebula comet orbit everyday");
        let c = PageTerms::of("orbit orbit comet comet quasar quasar common");
        let fa = fingerprint(&a, &cfg, &df).expect("a fingerprint");
        assert_eq!(Some(fa.0), fingerprint(&b, &cfg, &df).map(|f| f.0));
        assert_eq!(fa.1.len(), 3, "the look-up words are the fingerprint's");
        assert_ne!(fa.0, fingerprint(&c, &cfg, &df).expect("c").0);
        assert_eq!(fingerprint(&PageTerms::of("orbit comet"), &cfg, &df), None);
    }

    #[test]
    fn common_words_weigh_less_and_vectors_compare_by_cosine() {
        let df = collection();
        let cfg = TfidfConfig::default();
        let a = PageTerms::of("orbit comet nebula common common common");
        let w = weighted(&a, &df);
        assert_eq!(w.last().map(|(t, _)| t.word.as_str()), Some("common"));
        let va = vector(&a, &cfg, &df);
        assert!((cosine(&va, &va) - 1.0).abs() < 1e-9);
        let vb = vector(&PageTerms::of("quasar pulsar"), &cfg, &df);
        assert_eq!(cosine(&va, &vb), 0.0);
        assert_eq!(lookup(&a, &cfg, &df).len(), 4, "every word of a page of 4");
    }
}
