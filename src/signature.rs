//! A page's signatures (SPEC §2.1–§2.4): its main text, normalized text and sentences, sentence
//! fingerprints and clause keys (seed 000 §4.2), simhash (seed 001 §3.3), content hash and the
//! features of the index's method — and the posting keys they make, the one place that says
//! which keys a page is filed under.

use xxhash_rust::xxh3::{xxh3_128, xxh3_64_with_seed};

use crate::fingerprint::{fingerprints_and_sketch, heading_codes, simhash, Fingerprint};
use crate::methods::{Features, Method};
use crate::options::SignatureConfig;
use crate::storage::posting_key;

/// The kind bytes that open a posting key ([`Signatures::posting_keys`]; FORMAT.md "Postings").
pub use crate::storage::kind;
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

impl Content<'_> {
    /// The hash of the raw page as given: xxh3-64 of its bytes, seeded 0 for HTML and 1 for
    /// text (the same bytes handed as the other kind are another page). The index keeps it with
    /// each page to tell a byte-identical recrawl from one whose main text only is the same
    /// ([`crate::Verdict::unchanged_html`]).
    pub fn raw_hash(&self) -> u64 {
        match self {
            Content::Html(b) => xxh3_64_with_seed(b, 0),
            Content::Text(t) => xxh3_64_with_seed(t.as_bytes(), 1),
        }
    }
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
    pub features: Features,
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
        let heading = if main.heading.is_empty() {
            &main.title
        } else {
            &main.heading
        };
        let codes = heading_codes(heading);
        Self::from_text_and_codes(main, text, codes, cfg)
    }

    /// The signatures of a page of which only its normalized text and heading codes are known
    /// (as the change feed keeps them, [`crate::PageChange`]): exactly those
    /// [`Signatures::from_main_text`] computed, the main text left empty.
    pub fn from_normalized_text(
        text: String,
        codes: Vec<u32>,
        cfg: &SignatureConfig,
    ) -> Signatures {
        Self::from_text_and_codes(MainText::default(), text, codes, cfg)
    }

    fn from_text_and_codes(
        main: MainText,
        text: String,
        codes: Vec<u32>,
        cfg: &SignatureConfig,
    ) -> Signatures {
        let sentences = text::split_sentences(&text);
        let (fingerprints, sketch) = if cfg.method.is_lcs() {
            fingerprints_and_sketch(
                &text,
                &sentences,
                &cfg.sentence_params(),
                cfg.sketch_size as usize,
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let features = cfg.method.features(&text);
        let simhash = simhash(&text, cfg.simhash_cjk_ngram as usize);
        let content_hash = xxh3_128(text.as_bytes());
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
    pub fn posting_keys(&self, method: &Method) -> Vec<[u8; 9]> {
        std::iter::once(posting_key(kind::CONTENT, self.content_hash))
            .chain(page_keys(
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

/// The main text of a page extracted before — by [`main_text`] of the same content, in another
/// process or stage (a distributed merge keeps it from its first stage, SCALEOUT §5 S1) — with
/// the checks [`main_text`] makes of the content: the configuration, the size of the bytes as
/// given and, for HTML, that they are not binary. The text itself is trusted: a main text that
/// is not the content's gives the signatures of that text.
///
/// # Errors
/// As [`main_text`].
pub(crate) fn given_main_text(
    content: Content<'_>,
    main: &MainText,
    cfg: &SignatureConfig,
) -> Result<MainText> {
    cfg.validate()?;
    match content {
        Content::Html(bytes) => {
            check_size(bytes.len(), cfg)?;
            text::check_not_binary(bytes)?;
        }
        Content::Text(t) => check_size(t.len(), cfg)?,
    }
    Ok(main.clone())
}

/// A page's main text as a reader sees it (what `neardup extract` prints): before normalization,
/// with the page's title and first heading and the text's language.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Extracted {
    /// The page's `<title>` (empty for plain text).
    pub title: String,
    /// Its first `<h1>` (empty when it has none).
    pub heading: String,
    /// The main text, one paragraph a line, as extracted: not normalized (no case, width,
    /// punctuation or script folding), so it reads as the page does.
    pub text: String,
    /// The text's language as an ISO 639-3 code ([`crate::text::language`]), `None` when it
    /// cannot be told.
    pub lang: Option<&'static str>,
}

/// The main text of a page as [`Signatures::compute`] finds it (decoded, extracted), with its
/// title, heading and language, for a reader or an extraction benchmark.
///
/// # Errors
/// As [`Signatures::compute`]: a page too large, binary, or of an unknown encoding.
pub fn extract_page(content: Content<'_>, cfg: &SignatureConfig) -> Result<Extracted> {
    let main = main_text(content, cfg)?;
    let text = main.body();
    Ok(Extracted {
        lang: text::language(&text),
        title: main.title,
        heading: main.heading,
        text,
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
        Method::Topic(_) => crate::methods::topic::structured_text(main, cfg.folding()),
        _ => text::normalize(&main.body(), cfg.folding()),
    }
}

/// Sentence fingerprints and sketch recomputed from a stored normalized text (for deletes,
/// re-placement and checks).
pub(crate) fn signature_sets_of(text: &str, cfg: &SignatureConfig) -> (Vec<u128>, Vec<u128>) {
    fingerprints_and_sketch(
        text,
        &text::split_sentences(text),
        &cfg.sentence_params(),
        cfg.sketch_size as usize,
    )
}

/// The signature of a stored normalized text under the configured method (recomputed): its
/// sentence fingerprints and sketch (LCS only; empty for the other methods) and the method's
/// features.
pub(crate) fn text_signature(
    text: &str,
    cfg: &SignatureConfig,
) -> (Vec<u128>, Vec<u128>, Features) {
    let (fps, sketch) = if cfg.method.is_lcs() {
        signature_sets_of(text, cfg)
    } else {
        (Vec::new(), Vec::new())
    };
    (fps, sketch, cfg.method.features(text))
}

/// The posting keys of a normalized text under the configured method (recomputed).
pub(crate) fn posting_keys_of_text(text: &str, cfg: &SignatureConfig) -> Vec<[u8; 9]> {
    let (fps, sketch, features) = text_signature(text, cfg);
    page_keys(&fps, &sketch, &features, &cfg.method)
}

/// The posting keys of a page under `method` (the content key aside): its sentence fingerprints
/// and sketch for LCS, the method's own keys otherwise.
pub(crate) fn page_keys(
    fingerprints: &[u128],
    sketch: &[u128],
    features: &Features,
    method: &Method,
) -> Vec<[u8; 9]> {
    if method.is_lcs() {
        fingerprints
            .iter()
            .map(|fp| posting_key(kind::SENTENCE, *fp))
            .chain(sketch.iter().map(|d| posting_key(kind::SKETCH, *d)))
            .collect()
    } else {
        method.keys(features)
    }
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
}
