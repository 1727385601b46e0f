//! Signatures of a page: main text, normalized text, sentences, sentence fingerprints, simhash
//! and exact content hash — everything the index needs to find and verify candidates.

mod md5x8;
mod sentence;
mod simhash;

pub use sentence::{
    fingerprints_and_sketch, local_minima, md5_u128, sentence_digest, sentence_fingerprints,
    unit_sketch, Fingerprint,
};
pub use simhash::{for_each_feature, hamming, simhash};

use xxhash_rust::xxh3::xxh3_128;

use crate::options::SignatureConfig;
use crate::text::{self, MainText, Sentence};
use crate::{Error, Result};

/// The content of a page handed to neardup.
#[derive(Clone, Copy, Debug)]
pub enum Content<'a> {
    /// HTML as fetched: bytes in any encoding (declared or sniffed).
    Html(&'a [u8]),
    /// Plain text: each line is a paragraph; no main-text extraction.
    Text(&'a str),
}

/// Everything computed from one page.
#[derive(Clone, Debug, PartialEq)]
pub struct Signatures {
    /// Title, heading and body paragraphs as extracted.
    pub main: MainText,
    /// The normalized body text (what sentences, fingerprints and verification work on).
    pub text: String,
    /// Sentences of [`Signatures::text`].
    pub sentences: Vec<Sentence>,
    /// Sentence fingerprints, sorted and distinct (at most rotations × groups).
    pub fingerprints: Vec<Fingerprint>,
    /// Clause keys: the smallest unit digests (see [`SignatureConfig::sketch_size`]) and, for
    /// long texts, the local keys of [`local_minima`]; sorted and distinct.
    pub sketch: Vec<u128>,
    /// 64-bit simhash of the normalized text.
    pub simhash: u64,
    /// 128-bit hash of the normalized text (exact-duplicate detection).
    pub content_hash: u128,
    /// Hashes of the model-code-like tokens of the page's heading (see [`heading_codes`]).
    pub codes: Vec<u32>,
    /// What the index's method compares ([`crate::Method::features`]; nothing for LCS, whose
    /// fingerprints and sketch above are its signature — they are left empty for the other
    /// methods).
    pub features: crate::Features,
}

impl Signatures {
    /// Computes the signatures of a page.
    ///
    /// # Errors
    /// [`Error::PageTooLarge`] beyond `cfg.max_page_bytes`, [`Error::BinaryPage`] for binary data,
    /// [`Error::InvalidArgument`] for a configuration that does not validate. An empty or
    /// text-less page is not an error: it gives empty signatures.
    pub fn compute(content: Content<'_>, cfg: &SignatureConfig) -> Result<Signatures> {
        Ok(Self::from_main_text(main_text(content, cfg)?, cfg))
    }

    /// Computes the signatures from an already extracted main text.
    pub fn from_main_text(main: MainText, cfg: &SignatureConfig) -> Signatures {
        let text = page_text(&main, cfg);
        let sentences = text::split_sentences(&text);
        let (fingerprints, sketch) = if cfg.method.is_lcs() {
            fingerprints_and_sketch(&text, &sentences, cfg, cfg.sketch_size as usize)
        } else {
            (Vec::new(), Vec::new())
        };
        let features = cfg.method.features(&text);
        let simhash = simhash(&text, cfg.simhash_cjk_ngram as usize);
        let content_hash = xxh3_128(text.as_bytes());
        let heading = if main.heading.is_empty() {
            &main.title
        } else {
            &main.heading
        };
        let codes = heading_codes(heading);
        Signatures {
            main,
            text,
            sentences,
            fingerprints,
            sketch,
            simhash,
            content_hash,
            codes,
            features,
        }
    }

    /// The posting keys an index under `method` files this page under (and looks it up by): the
    /// exact-content key first, then the sentence-fingerprint and clause-sketch keys (LCS) or
    /// the method's own keys. Each is 9 bytes: a kind byte and the top 64 bits of the hash, as
    /// stored in the `postings` column family (FORMAT.md). Keys an index has marked
    /// over-frequent are not in its postings; [`crate::Index`] skips them.
    pub fn posting_keys(&self, method: &crate::Method) -> Vec<[u8; 9]> {
        use crate::storage::{kind, posting_key};
        std::iter::once(posting_key(kind::CONTENT, self.content_hash))
            .chain(crate::index::page_keys(
                &self.fingerprints,
                &self.sketch,
                &self.features,
                method,
            ))
            .collect()
    }

    /// The simhash block keys of this page in an index whose `simhash_max_distance` is
    /// `max_distance` (1, 3 or 7): one per table, as stored in the `simhash` column family
    /// (FORMAT.md) — the keys a simhash partition is chosen by. Pages within `max_distance` bits
    /// share at least one.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for another distance.
    pub fn simhash_keys(&self, max_distance: u32) -> Result<Vec<Vec<u8>>> {
        Ok(crate::storage::SimhashTables::new(max_distance)?.block_keys(self.simhash))
    }

    /// True when the page gave no sentence fingerprint (short pages): the index then relies on
    /// the simhash and the content hash alone.
    pub fn lacks_fingerprints(&self) -> bool {
        self.fingerprints.is_empty()
    }
}

/// The main text of a page (checked for size and binary content, decoded, extracted), as
/// [`Signatures::compute`] takes it.
///
/// # Errors
/// As [`Signatures::compute`].
pub fn main_text(content: Content<'_>, cfg: &SignatureConfig) -> Result<MainText> {
    cfg.validate()?;
    Ok(match content {
        Content::Html(bytes) => {
            check_size(bytes.len(), cfg)?;
            let html = text::decode(bytes)?;
            text::extract(&html)
        }
        Content::Text(t) => {
            check_size(t.len(), cfg)?;
            MainText::from_plain_text(t)
        }
    })
}

/// The normalized text of a page, exactly [`Signatures::text`] of [`Signatures::compute`],
/// without computing the signatures.
///
/// # Errors
/// As [`Signatures::compute`].
pub fn normalized_text(content: Content<'_>, cfg: &SignatureConfig) -> Result<String> {
    let main = main_text(content, cfg)?;
    Ok(page_text(&main, cfg))
}

/// The normalized text of a main text: the body, normalized; under the topic-sentence method,
/// with the title and the blocks on lines of their own ([`crate::methods::topic::structured_text`]).
pub(crate) fn page_text(main: &MainText, cfg: &SignatureConfig) -> String {
    match cfg.method {
        crate::Method::Topic(_) => {
            crate::methods::topic::structured_text(main, cfg.fold_traditional)
        }
        _ => text::normalize(&main.body(), cfg.fold_traditional),
    }
}

/// The model-code-like tokens of a heading (`TK-P480`, `RTX3060`, `120Pa`: runs of ASCII
/// letters, digits, `-` and `_` holding at least one letter and one digit), lower-cased and
/// hashed, sorted and distinct. Pages whose headings name different codes are about different
/// objects (models of one product series share almost all their text); see
/// [`codes_conflict`].
pub fn heading_codes(heading: &str) -> Vec<u32> {
    use unicode_normalization::UnicodeNormalization;
    let h: String = heading.nfkc().collect();
    let mut out: Vec<u32> = h
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|t| t.trim_matches(|c| c == '-' || c == '_'))
        .filter(|t| {
            t.bytes().any(|b| b.is_ascii_digit()) && t.bytes().any(|b| b.is_ascii_alphabetic())
        })
        .map(|t| xxhash_rust::xxh3::xxh3_64(t.to_ascii_lowercase().as_bytes()) as u32)
        .collect();
    out.sort_unstable();
    out.dedup();
    // The page record keeps at most 255 codes.
    out.truncate(255);
    out
}

/// True when both code sets are non-empty and each holds a code the other lacks: the headings
/// name different models. A heading that only drops codes (a cut subtitle) does not conflict.
pub fn codes_conflict(a: &[u32], b: &[u32]) -> bool {
    let subset = |x: &[u32], y: &[u32]| x.iter().all(|c| y.binary_search(c).is_ok());
    !a.is_empty() && !b.is_empty() && !subset(a, b) && !subset(b, a)
}

fn check_size(size: usize, cfg: &SignatureConfig) -> Result<()> {
    if size > cfg.max_page_bytes {
        return Err(Error::PageTooLarge {
            size,
            limit: cfg.max_page_bytes,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posting_keys_are_the_content_key_then_fingerprints_and_sketch() {
        let text: String = (0..40)
            .map(|i| {
                format!("Sentence {i} of the page tells its own part of the story, at length. ")
            })
            .collect();
        let cfg = SignatureConfig::default();
        let s = Signatures::compute(Content::Text(&text), &cfg).unwrap();
        let keys = s.posting_keys(&cfg.method);
        assert!(!s.fingerprints.is_empty());
        assert_eq!(keys.len(), 1 + s.fingerprints.len() + s.sketch.len());
        assert_eq!(
            keys[0],
            crate::storage::posting_key(crate::storage::kind::CONTENT, s.content_hash)
        );
    }

    #[test]
    fn codes_of_product_headings() {
        let a = heading_codes("德宝 Pro显示器 TK-P480 31.5英寸");
        let b = heading_codes("德宝 Pro显示器 TK-P420 16英寸");
        assert_eq!(a.len(), 1);
        assert!(codes_conflict(&a, &b));
        let c = heading_codes("达尔 Pro扫地机器人 LJ-P420 120Pa");
        let d = heading_codes("达尔 Pro扫地机器人 LJ-P440 120Pa");
        assert_eq!(c.len(), 2);
        assert!(codes_conflict(&c, &d));
        // Same model at another shop, a cut subtitle, no codes at all: no conflict.
        assert!(!codes_conflict(
            &a,
            &heading_codes("【热卖】德宝 TK-P480 显示器")
        ));
        assert!(!codes_conflict(&c, &heading_codes("LJ-P420")));
        assert!(!codes_conflict(
            &heading_codes("What's New In Python 3.8"),
            &a
        ));
    }
}
