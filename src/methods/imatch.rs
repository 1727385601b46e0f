//! I-Match and multi-lexicon I-Match (seed 001 §3.2 and its 「算法改进」; seed 002 related work
//! [13][14]; METHODS.md card 2).
//!
//! 1. A lexicon from corpus statistics: 「将单词按照IDF值排序,并且去掉得分过高或者过低的单词」 — here
//!    the words whose document frequency in the index lies between `min_df` and `max_df_share` of
//!    the pages (**choice**: 3 and 10 %, the card's defaults; the seed gives no cut-offs).
//! 2. A page's feature set: its distinct words found in the lexicon.
//! 3. One hash of the whole set; equal hashes are near duplicates (「将指纹与存量指纹比对是否相同」).
//! 4. Multi-lexicon: 「从主词典中随机抽取很小比例的词典项丢弃,剩下的特征构成辅助词典」 — `lexicons` extra
//!    lexicons, each dropping `drop` of the main one (**choice**: 10 and 10 %), decided per word
//!    by a seeded hash so that no lexicon needs storing; pages are near duplicates when any one
//!    of their signatures is equal (「只要有一个重复的,就被认为是相似网页」).
//!
//! The paper's first problem, short texts (「单词的数量很少的时候很容易出现误判」), is met by the card's
//! guard: a lexicon under which a page has fewer than `min_terms` words (**choice**: 10) gives it
//! no signature.
//!
//! The lexicon is the index's of the moment (see [`super::df`]): both pages of a comparison are
//! signed under the same frequencies, and candidates are the pages holding the 3 rarest words of
//! each of the probe's feature sets (**choice**) — every page with an equal set holds all 3.

use xxhash_rust::xxh3::{xxh3_64_with_seed, Xxh3};

use super::df::{rarest, DocFreq, PageTerms};

/// Parameters of I-Match (all **choices**, METHODS.md card 2; the seed gives none).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ImatchConfig {
    /// Extra lexicons (0: plain I-Match; 10 for multi-lexicon I-Match).
    pub lexicons: u32,
    /// The share of the main lexicon each extra lexicon drops (0.1).
    pub drop: f64,
    /// Words held by fewer pages are out of the lexicon (3: typos and hapaxes).
    pub min_df: u64,
    /// Words held by more than this share of the pages are out of the lexicon (0.1); never
    /// below `min_df` pages, so that a young index has a lexicon at all.
    pub max_df_share: f64,
    /// A page with fewer words in a lexicon has no signature under it (10).
    pub min_terms: usize,
}

impl Default for ImatchConfig {
    fn default() -> Self {
        ImatchConfig {
            lexicons: 0,
            drop: 0.1,
            min_df: 3,
            max_df_share: 0.1,
            min_terms: 10,
        }
    }
}

impl ImatchConfig {
    /// Multi-lexicon I-Match with its default extra lexicons.
    pub fn multi() -> ImatchConfig {
        ImatchConfig {
            lexicons: 10,
            ..ImatchConfig::default()
        }
    }
}

/// Words of a feature set looked up for candidates (**choice**).
pub const LOOKUP_WORDS: usize = 3;

/// A page's signature under one lexicon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The hash of the page's words in the lexicon.
    pub hash: u64,
    /// The keys of the [`LOOKUP_WORDS`] words among them that the fewest pages hold (the
    /// candidate look-up).
    pub rarest: Vec<u64>,
}

/// Is a word of document frequency `df` in the main lexicon, in a collection of `docs` pages?
fn in_lexicon(df: u64, docs: u64, cfg: &ImatchConfig) -> bool {
    let most = (cfg.max_df_share * docs as f64).max(cfg.min_df as f64);
    df >= cfg.min_df && df as f64 <= most
}

/// Does extra lexicon `j` (1-based) keep a word of the main lexicon?
fn kept(key: u64, j: u32, cfg: &ImatchConfig) -> bool {
    let u = xxh3_64_with_seed(&key.to_le_bytes(), u64::from(j)) as f64 / 2f64.powi(64);
    u >= cfg.drop
}

/// A page's signatures: the main lexicon's first, then each extra lexicon's (`None` where the
/// page has fewer than `min_terms` words in it).
pub fn signatures(
    page: &PageTerms,
    cfg: &ImatchConfig,
    df: &dyn DocFreq,
) -> Vec<Option<Signature>> {
    let docs = df.docs();
    let main: Vec<_> = page
        .0
        .iter()
        .filter(|t| in_lexicon(df.df(t.key), docs, cfg))
        .collect();
    (0..=cfg.lexicons)
        .map(|j| {
            let set: Vec<_> = main
                .iter()
                .copied()
                .filter(|t| j == 0 || kept(t.key, j, cfg))
                .collect();
            if set.len() < cfg.min_terms.max(1) {
                return None;
            }
            // The set is sorted by key (`PageTerms` is): one hash of the lexicon number and
            // the sorted keys.
            let mut h = Xxh3::new();
            h.update(&j.to_le_bytes());
            for t in &set {
                h.update(&t.key.to_le_bytes());
            }
            Some(Signature {
                hash: h.digest(),
                rarest: rarest(df, set.iter().copied(), LOOKUP_WORDS),
            })
        })
        .collect()
}

/// Are two pages' signatures equal under any one lexicon?
pub fn similar(a: &[Option<Signature>], b: &[Option<Signature>]) -> bool {
    a.iter()
        .zip(b)
        .any(|(x, y)| matches!((x, y), (Some(x), Some(y)) if x.hash == y.hash))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::df::DocFreqs;

    fn words(prefix: &str, n: usize) -> String {
        (0..n).map(|i| format!("{prefix}{i} ")).collect()
    }

    /// A collection where the words `w0 … w39` are each held by 5 of 100 pages.
    fn collection() -> DocFreqs {
        let mut df = DocFreqs::new();
        for p in 0..100 {
            let text: String = (0..40)
                .filter(|i| (i + p) % 20 < 1 || (i + p) % 20 == 10)
                .map(|i| format!("w{i} "))
                .collect();
            df.add_text(&format!("{text} filler{p}"));
        }
        df
    }

    #[test]
    fn equal_lexicon_sets_match_and_words_outside_the_lexicon_do_not_count() {
        let df = collection();
        let cfg = ImatchConfig::default();
        let a = PageTerms::of(&format!("{} unique1 unique2", words("w", 20)));
        let b = PageTerms::of(&format!("{} unique3", words("w", 20)));
        let (sa, sb) = (signatures(&a, &cfg, &df), signatures(&b, &cfg, &df));
        assert!(sa[0].is_some());
        assert!(similar(&sa, &sb), "rare words are outside the lexicon");
        let c = PageTerms::of(&words("w", 19));
        assert!(!similar(&sa, &signatures(&c, &cfg, &df)), "one word less");
    }

    #[test]
    fn extra_lexicons_forgive_most_single_missing_words() {
        let df = collection();
        let (plain, multi) = (ImatchConfig::default(), ImatchConfig::multi());
        let full: Vec<usize> = (0..30).collect();
        let page =
            |ws: &[usize]| PageTerms::of(&ws.iter().map(|i| format!("w{i} ")).collect::<String>());
        let a = page(&full);
        let (pa, ma) = (signatures(&a, &plain, &df), signatures(&a, &multi, &df));
        assert_eq!(ma.len(), 11);
        let mut forgiven = 0;
        for gone in 0..30 {
            let rest: Vec<usize> = full.iter().copied().filter(|&i| i != gone).collect();
            let b = page(&rest);
            assert!(
                !similar(&pa, &signatures(&b, &plain, &df)),
                "plain: w{gone}"
            );
            forgiven += usize::from(similar(&ma, &signatures(&b, &multi, &df)));
        }
        // Each missing word is out of at least one of 10 lexicons dropping 10 % with
        // probability 1 − 0.9^10 ≈ 0.65.
        assert!((12..=28).contains(&forgiven), "{forgiven} of 30 forgiven");
    }

    #[test]
    fn short_pages_have_no_signature() {
        let df = collection();
        let a = PageTerms::of(&words("w", 5));
        let s = signatures(&a, &ImatchConfig::default(), &df);
        assert_eq!(s, vec![None]);
        assert!(!similar(&s, &s));
    }
}
