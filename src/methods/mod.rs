//! The seeds' other near-duplicate methods (issue "The seeds' other methods", SPEC §2.8,
//! `METHODS.md`): signatures and similarities of each method, as pure functions over a page's
//! normalized main text. They are the pieces the method interface of the index is built from;
//! the LCS method of seed 000 stays the index's own (`crate::verify`).
//!
//! Where a paper gives no value, the default is ours and says so (**choice**), as `METHODS.md`
//! proposes; the evaluation sweeps them.

pub mod agt;
pub mod df;
pub mod imatch;
pub mod punct;
pub mod shingle;
pub mod terms;
pub mod tfidf;
pub mod topic;
pub mod topn;
pub mod winnow;

use serde::{Deserialize, Serialize};

use crate::fingerprint::hamming;
use crate::storage::{kind, posting_key};

pub use agt::AgtConfig;
pub use df::{DocFreq, DocFreqs, NoDocFreq, PageTerms};
pub use imatch::ImatchConfig;
pub use punct::PunctConfig;
pub use shingle::ShingleConfig;
pub use terms::tokens;
pub use tfidf::{SemanticConfig, TfidfConfig};
pub use topic::TopicConfig;
pub use winnow::WinnowConfig;

/// The near-duplicate method an index runs, chosen when it is created and stored in its
/// configuration (a reopen with another method is refused). Each method says how a page is
/// signed (from its normalized main text), which posting keys it stores and looks up, and when
/// two pages are similar; everything else — clusters and representatives, delete and hand-over,
/// batch ingest, `check()`, compaction, the C ABI, the CLI — is the index's and the same for all.
///
/// What a method compares is recomputed from a stored page's text (or asked of the text source
/// when the index keeps no texts): it is a pure function of the text and the method's
/// parameters, so nothing else needs storing and nothing can drift. The methods built on corpus
/// statistics (I-Match, the semantic fingerprint, TF-IDF: [`Method::uses_df`]) weigh both pages
/// of a comparison under the index's document frequencies of the moment ([`df`]). Exact copies
/// (equal normalized texts) are duplicates under every method.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Method {
    /// Seed 000: sentence fingerprints, the simhash tables as fallback, and trustable-LCS
    /// verification (`crate::verify`). The default.
    #[default]
    Lcs,
    /// Shingling with min-hash super-shingles and Jaccard (seed 001 §3.1; [`shingle`]).
    Shingle(ShingleConfig),
    /// Winnowing over sentences and k-token blocks (seed 002; [`winnow`]).
    Winnow(WinnowConfig),
    /// The punctuation-anchored abstract, seed 004's framework 1 ([`punct`]): equal abstracts
    /// are mirrors.
    Punct(PunctConfig),
    /// Agglomerate terms (seed 004; [`agt`]): top-N agglomerated keywords hashed for N = 3, 4,
    /// 5 as candidates, cosine of term frequencies as similarity.
    Agt(AgtConfig),
    /// I-Match (seed 001 §3.2; [`imatch`]): one hash of the page's words in a lexicon of
    /// mid-frequency words; with `lexicons` > 0, multi-lexicon I-Match (named `imatch_multi`).
    Imatch(ImatchConfig),
    /// The semantic fingerprint (seed 002; [`tfidf`]): MD5 of the top-n TF-IDF words, sorted.
    Semantic(SemanticConfig),
    /// The TF-IDF baseline of seed 004 ([`tfidf`]): cosine of the top-10 TF-IDF vectors.
    Tfidf(TfidfConfig),
    /// The topic-sentence hierarchy of seed 003 ([`topic`]): title, then sub-titles, then topic
    /// sentences. Its normalized text keeps the title and the blocks on lines of their own.
    Topic(TopicConfig),
    /// Simhash alone (seed 001 §3.3, seed 002): the block tables give every page within
    /// `simhash_max_distance` bits ([`crate::IndexOptions::simhash_max_distance`], 3 as the
    /// seeds say); a page is a near duplicate of the closest of them.
    Simhash,
    /// Simhash with Single-Pass clustering around cluster centres (seed 002): a page joins the
    /// nearest centre (a cluster's representative) within `simhash_max_distance` bits and is
    /// never compared with members; farther from every centre, it founds a cluster.
    SinglePass,
}

/// One side of a comparison: a page's normalized text, what the method compares of it when
/// already known (computed from the text otherwise), and its simhash.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// The normalized main text.
    pub text: &'a str,
    /// Its features, when known.
    pub features: Option<&'a Features>,
    /// Its simhash.
    pub simhash: u64,
}

/// What a method compares of a page (see [`Method::features`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Features {
    /// Nothing beyond the text and the simhash (LCS, simhash methods).
    None,
    /// The min-hash sketch.
    Sketch(shingle::Sketch),
    /// The winnowed fingerprints with their positions.
    Winnow(Vec<winnow::Fingerprint>),
    /// The abstract's MD5 (`None`: the page has no abstract).
    Abstract(Option<u128>),
    /// AgT's linear-comparison hashes and term frequencies.
    Agt(agt::Agt),
    /// The page's distinct words with their frequencies (the methods on corpus statistics,
    /// which weigh them at comparison time).
    Terms(PageTerms),
    /// The title, sub-title and topic-sentence vectors.
    Topic(topic::Topic),
}

impl Method {
    /// Every method's name, the default first (as [`Method::from_name`] takes them).
    pub const NAMES: [&'static str; 12] = [
        "lcs",
        "shingle",
        "winnow",
        "punct",
        "agt",
        "imatch",
        "imatch_multi",
        "semantic",
        "tfidf",
        "topic",
        "simhash",
        "single_pass",
    ];

    /// The method of this name with its default parameters (`-` and `_` are the same).
    pub fn from_name(name: &str) -> Option<Method> {
        Some(match name.replace('-', "_").as_str() {
            "lcs" => Method::Lcs,
            "shingle" | "shingling" | "minhash" => Method::Shingle(ShingleConfig::default()),
            "winnow" | "winnowing" => Method::Winnow(WinnowConfig::default()),
            "punct" | "punctuation" => Method::Punct(PunctConfig::default()),
            "agt" => Method::Agt(AgtConfig::default()),
            "imatch" | "i_match" => Method::Imatch(ImatchConfig::default()),
            "imatch_multi" | "multi_imatch" => Method::Imatch(ImatchConfig::multi()),
            "semantic" | "semantic_fingerprint" => Method::Semantic(SemanticConfig::default()),
            "tfidf" | "tf_idf" => Method::Tfidf(TfidfConfig::default()),
            "topic" | "topic_sentence" => Method::Topic(TopicConfig::default()),
            "simhash" => Method::Simhash,
            "single_pass" | "singlepass" => Method::SinglePass,
            _ => return None,
        })
    }

    /// The method's name.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Lcs => "lcs",
            Method::Shingle(_) => "shingle",
            Method::Winnow(_) => "winnow",
            Method::Punct(_) => "punct",
            Method::Agt(_) => "agt",
            Method::Imatch(c) if c.lexicons > 0 => "imatch_multi",
            Method::Imatch(_) => "imatch",
            Method::Semantic(_) => "semantic",
            Method::Tfidf(_) => "tfidf",
            Method::Topic(_) => "topic",
            Method::Simhash => "simhash",
            Method::SinglePass => "single_pass",
        }
    }

    /// True for the default method.
    pub fn is_lcs(&self) -> bool {
        matches!(self, Method::Lcs)
    }

    /// Does the method find candidates in the simhash tables (always; for LCS only as the
    /// fallback of pages without fingerprints)?
    pub fn uses_simhash(&self) -> bool {
        matches!(self, Method::Simhash | Method::SinglePass)
    }

    /// The width of a page's main text (GBK bytes, see [`crate::text::width`]) that
    /// [`crate::IndexOptions::min_text_width`] is measured on: the body, without the topic
    /// method's title line.
    pub fn main_width(&self, text: &str) -> u32 {
        match self {
            Method::Topic(_) => crate::text::width(topic::body(text)),
            _ => crate::text::width(text),
        }
    }

    /// Does the method work on words ([`terms`]: AgT, I-Match, the semantic fingerprint, TF-IDF,
    /// topic sentences)? Its index stores the word splitter's versions ([`terms::WORDS`]).
    pub fn uses_words(&self) -> bool {
        self.uses_df() || matches!(self, Method::Agt(_) | Method::Topic(_))
    }

    /// Does the method weigh words by the collection's document frequencies (I-Match, the
    /// semantic fingerprint, TF-IDF)? An index running one keeps a posting per word (kind `T`)
    /// and the frequencies in memory.
    pub fn uses_df(&self) -> bool {
        matches!(
            self,
            Method::Imatch(_) | Method::Semantic(_) | Method::Tfidf(_)
        )
    }

    /// Is a page compared with cluster centres only, never with members (Single-Pass)?
    pub fn centres_only(&self) -> bool {
        matches!(self, Method::SinglePass)
    }

    /// Checks the parameters are usable.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming the first parameter out of range.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |what: &str| Err(crate::Error::InvalidArgument(what.to_string()));
        match self {
            Method::Shingle(c) => {
                if c.width == 0 || c.hashes == 0 || c.rows == 0 || c.hashes % c.rows != 0 {
                    return bad(
                        "shingle: width, hashes and rows must be positive, rows dividing hashes",
                    );
                }
            }
            Method::Winnow(c) => {
                if c.k == 0 || c.g < c.k {
                    return bad("winnow: k must be positive and g at least k");
                }
            }
            Method::Punct(c) => {
                if c.occurrence == 0 || c.side == 0 {
                    return bad("punct: occurrence and side must be positive");
                }
            }
            Method::Agt(c) => {
                if c.tau.is_nan() || c.tau <= 0.0 || c.lengths.is_empty() || c.lengths.contains(&0)
                {
                    return bad("agt: tau must be positive and lengths non-empty and positive");
                }
            }
            Method::Imatch(c) => {
                if !(0.0..1.0).contains(&c.drop) || c.max_df_share.is_nan() || c.min_terms == 0 {
                    return bad("imatch: drop must be in [0, 1) and min_terms positive");
                }
            }
            Method::Semantic(c) => {
                if c.n == 0 {
                    return bad("semantic: n must be positive");
                }
            }
            Method::Tfidf(c) => {
                if c.dims == 0 || c.lookup == 0 || c.min_cosine.is_nan() {
                    return bad("tfidf: dims and lookup must be positive");
                }
            }
            Method::Topic(c) => {
                if c.sentences == 0 || [c.title, c.subtitle, c.topic].iter().any(|x| x.is_nan()) {
                    return bad("topic: sentences must be positive and thresholds numbers");
                }
            }
            Method::Lcs | Method::Simhash | Method::SinglePass => {}
        }
        Ok(())
    }

    /// What the method compares of a normalized text.
    pub fn features(&self, text: &str) -> Features {
        match self {
            Method::Lcs | Method::Simhash | Method::SinglePass => Features::None,
            Method::Shingle(c) => Features::Sketch(shingle::sketch(text, c)),
            Method::Winnow(c) => Features::Winnow(winnow::fingerprints(text, c)),
            Method::Punct(c) => Features::Abstract(punct::abstract_md5(text, c)),
            Method::Agt(c) => Features::Agt(agt::signature(text, c)),
            Method::Imatch(_) | Method::Semantic(_) | Method::Tfidf(_) => {
                Features::Terms(PageTerms::of(text))
            }
            Method::Topic(c) => Features::Topic(topic::topic(text, c)),
        }
    }

    /// The posting keys of a page's features, sorted and distinct (none for LCS, whose keys are
    /// its sentence fingerprints, and for the simhash methods, whose candidates come from the
    /// simhash tables).
    pub(crate) fn keys(&self, f: &Features) -> Vec<[u8; 9]> {
        let key = |kind: u8, h: u64| posting_key(kind, u128::from(h) << 64);
        let mut keys: Vec<[u8; 9]> = match (self, f) {
            (Method::Shingle(c), Features::Sketch(s)) => shingle::super_shingles(s, c)
                .into_iter()
                .map(|h| key(kind::BAND, h))
                .collect(),
            (Method::Winnow(_), Features::Winnow(fps)) => {
                fps.iter().map(|x| key(kind::WINNOW, x.hash)).collect()
            }
            (Method::Punct(_), Features::Abstract(Some(h))) => {
                vec![posting_key(kind::ABSTRACT, *h)]
            }
            (Method::Agt(_), Features::Agt(a)) => {
                a.keys.iter().map(|&h| posting_key(kind::AGT, h)).collect()
            }
            (Method::Topic(_), Features::Topic(t)) => topic::title_keys(t)
                .into_iter()
                .map(|h| key(kind::TITLE, h))
                .collect(),
            (_, Features::Terms(t)) if self.uses_df() => {
                t.0.iter().map(|t| key(kind::TERM, t.key)).collect()
            }
            _ => Vec::new(),
        };
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The posting keys a page's candidates are looked up under: its stored keys
    /// ([`Method::keys`]) but for the methods on corpus statistics, which store a posting per
    /// word and look up only the words every page they can match must hold, chosen under the
    /// document frequencies of the moment.
    pub(crate) fn lookup_keys(&self, f: &Features, df: &dyn DocFreq) -> Vec<[u8; 9]> {
        let key = |h: u64| posting_key(kind::TERM, u128::from(h) << 64);
        let mut keys: Vec<[u8; 9]> = match (self, f) {
            (Method::Imatch(c), Features::Terms(t)) => imatch::signatures(t, c, df)
                .into_iter()
                .flatten()
                .flat_map(|s| s.rarest)
                .map(key)
                .collect(),
            (Method::Semantic(c), Features::Terms(t)) => tfidf::fingerprint(t, c, df)
                .map(|(_, words)| words)
                .unwrap_or_default()
                .into_iter()
                .map(key)
                .collect(),
            (Method::Tfidf(c), Features::Terms(t)) => {
                tfidf::lookup(t, c, df).into_iter().map(key).collect()
            }
            _ => return self.keys(f),
        };
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Are two pages similar under the method? `Some((resemble, contain))` when they are. LCS
    /// verifies the texts (`a` against `b`, seed 000 §3); the other methods compare their
    /// features, computed from the texts where not given; simhashes are compared within
    /// `max_distance` bits, words weighed under `df`.
    pub fn similar_sides(
        &self,
        a: Side<'_>,
        b: Side<'_>,
        verify: &crate::VerifyConfig,
        max_distance: u32,
        df: &dyn DocFreq,
    ) -> Option<(f64, f64)> {
        // Exact copies are duplicates under every method, whatever their features say (a
        // page with no I-Match signature or no abstract is still a copy of itself).
        if a.text == b.text {
            return Some((1.0, 1.0));
        }
        if self.is_lcs() {
            let sim = crate::verify::verify(a.text, b.text, verify);
            return sim.similar.then_some((sim.resemble, sim.contain));
        }
        let (fa, fb) = (self.features_of(&a), self.features_of(&b));
        self.compare((&fa, a.simhash), (&fb, b.simhash), max_distance, df)
    }

    /// A side's features: as given, or computed from its text.
    pub(crate) fn features_of<'s>(&self, s: &Side<'s>) -> std::borrow::Cow<'s, Features> {
        match s.features {
            Some(f) => std::borrow::Cow::Borrowed(f),
            None => std::borrow::Cow::Owned(self.features(s.text)),
        }
    }

    /// Are two pages' features similar under the method? `Some((resemble, contain))` when they are.
    /// `a` is the newcomer, `b` the stored page; simhashes are compared within `max_distance`
    /// bits; words are weighed under `df` (the methods on corpus statistics). Not for LCS, whose
    /// verification needs the texts (`crate::verify`): `None`.
    pub fn compare(
        &self,
        a: (&Features, u64),
        b: (&Features, u64),
        max_distance: u32,
        df: &dyn DocFreq,
    ) -> Option<(f64, f64)> {
        match (self, a.0, b.0) {
            (Method::Simhash | Method::SinglePass, _, _) => {
                let d = hamming(a.1, b.1);
                let s = 1.0 - f64::from(d) / 64.0;
                (d <= max_distance).then_some((s, s))
            }
            (Method::Shingle(c), Features::Sketch(x), Features::Sketch(y)) => {
                shingle::similar(x, y, c).then(|| {
                    (
                        shingle::jaccard(x, y),
                        shingle::containment(x, y).max(shingle::containment(y, x)),
                    )
                })
            }
            (Method::Winnow(c), Features::Winnow(x), Features::Winnow(y)) => {
                winnow::similar(x, y, c).then(|| winnow::rates(x, y))
            }
            (Method::Punct(_), Features::Abstract(Some(x)), Features::Abstract(Some(y))) => {
                (x == y).then_some((1.0, 1.0))
            }
            (Method::Agt(c), Features::Agt(x), Features::Agt(y)) => {
                let cos = agt::cosine(&x.tf, &y.tf);
                (cos >= c.min_cosine).then_some((cos, cos))
            }
            (Method::Imatch(c), Features::Terms(x), Features::Terms(y)) => {
                let (sx, sy) = (imatch::signatures(x, c, df), imatch::signatures(y, c, df));
                imatch::similar(&sx, &sy).then_some((1.0, 1.0))
            }
            (Method::Semantic(c), Features::Terms(x), Features::Terms(y)) => {
                let fx = tfidf::fingerprint(x, c, df)?;
                let fy = tfidf::fingerprint(y, c, df)?;
                (fx.0 == fy.0).then_some((1.0, 1.0))
            }
            (Method::Topic(c), Features::Topic(x), Features::Topic(y)) => {
                topic::similar(x, y, c).map(|s| (s, s))
            }
            (Method::Tfidf(c), Features::Terms(x), Features::Terms(y)) => {
                let cos = tfidf::cosine(&tfidf::vector(x, c, df), &tfidf::vector(y, c, df));
                (cos >= c.min_cosine).then_some((cos, cos))
            }
            _ => None,
        }
    }
}
