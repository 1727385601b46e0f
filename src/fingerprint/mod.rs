//! Signatures of a page: main text, normalized text, sentences, sentence fingerprints, simhash
//! and exact content hash — everything the index needs to find and verify candidates.

mod sentence;
mod simhash;

pub use sentence::{md5_u128, sentence_digest, sentence_fingerprints, Fingerprint};
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
    /// 64-bit simhash of the normalized text.
    pub simhash: u64,
    /// 128-bit hash of the normalized text (exact-duplicate detection).
    pub content_hash: u128,
}

impl Signatures {
    /// Computes the signatures of a page.
    ///
    /// # Errors
    /// [`Error::PageTooLarge`] beyond `cfg.max_page_bytes`, [`Error::BinaryPage`] for binary data,
    /// [`Error::InvalidArgument`] for a configuration that does not validate. An empty or
    /// text-less page is not an error: it gives empty signatures.
    pub fn compute(content: Content<'_>, cfg: &SignatureConfig) -> Result<Signatures> {
        cfg.validate()?;
        let main = match content {
            Content::Html(bytes) => {
                check_size(bytes.len(), cfg)?;
                let html = text::decode(bytes)?;
                text::extract(&html)
            }
            Content::Text(t) => {
                check_size(t.len(), cfg)?;
                MainText::from_plain_text(t)
            }
        };
        Ok(Self::from_main_text(main, cfg))
    }

    /// Computes the signatures from an already extracted main text.
    pub fn from_main_text(main: MainText, cfg: &SignatureConfig) -> Signatures {
        let text = text::normalize(&main.body(), cfg.fold_traditional);
        let sentences = text::split_sentences(&text);
        let fingerprints = sentence_fingerprints(&text, &sentences, cfg);
        let simhash = simhash(&text, cfg.simhash_cjk_ngram as usize);
        let content_hash = xxh3_128(text.as_bytes());
        Signatures {
            main,
            text,
            sentences,
            fingerprints,
            simhash,
            content_hash,
        }
    }

    /// True when the page gave no sentence fingerprint (short pages): the index then relies on
    /// the simhash and the content hash alone.
    pub fn lacks_fingerprints(&self) -> bool {
        self.fingerprints.is_empty()
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
