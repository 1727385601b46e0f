//! Texts supplied by the embedding engine instead of stored in the index (SPEC §3: "texts … or
//! not stored at all when the embedding engine supplies text through a callback").

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::chrome::strip;
use super::Index;
use crate::signature::{main_text, page_text, posting_keys_of_text};
use crate::storage::codec::{self, DocId, DocRecord, PageBlocks, TextValue};
use crate::storage::{cf, id_key};
use crate::{Content, Error, Result};

/// A page's content handed back by a [`TextSource`], as it was inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourcedContent {
    /// HTML bytes.
    Html(Vec<u8>),
    /// Plain text.
    Text(String),
}

/// Which stored page a [`TextSource`] is asked for: its key, and the version the index holds,
/// so that a store keeping several versions of a page can give the one that was inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourcedPage<'a> {
    /// The page's key.
    pub key: &'a str,
    /// Its internal id.
    pub doc: DocId,
    /// Its insertion number (unique for the index's life: a replace of the key gets a new one).
    pub seq: u64,
    /// The hash of its normalized main text (xxh3-128), as stored.
    pub content_hash: u128,
}

/// Gives the content of pages on demand, for an index opened with
/// [`crate::IndexOptions::store_texts`] off. The index calls it whenever it must verify a page
/// against one it holds (on insert, query, and when re-verifying members after a representative
/// is deleted), from the calling thread, possibly from several threads at once. An insert asks
/// for the texts it needs before it takes the index's writer lock, so a slow source slows the
/// inserting threads that wait for it, not every writer (re-verification after a
/// representative's delete still asks under the lock).
///
/// The index recomputes the normalized text from the content and checks it against the content
/// hash it stored, so a source that returns another version of the page is caught
/// ([`Error::TextUnavailable`]).
pub trait TextSource: Send + Sync {
    /// The content of this page, as it was inserted (`page` names the version); `None` when the
    /// source does not have it.
    fn content(&self, page: &SourcedPage<'_>) -> Option<SourcedContent>;
}

/// Texts given by the text source during one insert on this thread: (depth of
/// [`Index::with_prefetch`], (id, content hash) → text).
type Prefetch = (u32, HashMap<(DocId, u128), Arc<str>>);

thread_local! {
    static PREFETCH: RefCell<Prefetch> = RefCell::new((0, HashMap::new()));
}

/// A text kept for this thread's insert, if any.
fn prefetched(id: DocId, hash: u128) -> Option<Arc<str>> {
    PREFETCH
        .try_with(|p| p.borrow().1.get(&(id, hash)).cloned())
        .ok()
        .flatten()
}

/// Keeps a text for this thread's insert, when one is running.
fn remember(id: DocId, hash: u128, text: &Arc<str>) {
    let _ = PREFETCH.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.0 > 0 {
            p.1.insert((id, hash), Arc::clone(text));
        }
    });
}

impl Index {
    /// Opens the index in `path` with a source of page texts: with
    /// [`crate::IndexOptions::store_texts`] off, the index stores no texts and asks `source`.
    /// With it on, `source` is not used.
    ///
    /// # Errors
    /// As [`Index::open`].
    pub fn open_with_text_source(
        path: impl AsRef<std::path::Path>,
        opts: crate::IndexOptions,
        source: Arc<dyn TextSource>,
    ) -> Result<Index> {
        Index::open_inner(path.as_ref(), opts, Some(source))
    }

    /// The normalized text of stored page `id` (record `rec`, chrome record `blocks`) from the
    /// text source, checked against its stored content hash.
    pub(crate) fn sourced_text(
        &self,
        id: DocId,
        rec: &DocRecord,
        blocks: Option<PageBlocks>,
    ) -> Result<Arc<str>> {
        let unavailable = |reason: &str| Error::TextUnavailable {
            key: rec.key.clone(),
            reason: reason.to_string(),
        };
        let source = self
            .source
            .as_ref()
            .ok_or_else(|| unavailable("the index stores no texts and has no text source"))?;
        let asked = SourcedPage {
            key: &rec.key,
            doc: id,
            seq: rec.seq,
            content_hash: rec.content_hash,
        };
        if let Some(text) = prefetched(id, rec.content_hash) {
            return Ok(text);
        }
        let content = source
            .content(&asked)
            .ok_or_else(|| unavailable("the text source does not have it"))?;
        let content = match &content {
            SourcedContent::Html(b) => Content::Html(b),
            SourcedContent::Text(t) => Content::Text(t),
        };
        // The text the page was inserted with: its main text without the blocks dropped as
        // site chrome then (its chrome record), whatever has been learned since.
        let cfg = &self.opts.signature;
        let main = main_text(content, cfg)
            .map_err(|e| unavailable(&format!("the text source gave a page that fails: {e}")))?;
        let main = match blocks {
            Some(b) if !b.dropped.is_empty() => strip(&main, &b.dropped, cfg.folding()),
            _ => main,
        };
        let text = page_text(&main, cfg);
        if xxhash_rust::xxh3::xxh3_128(text.as_bytes()) != rec.content_hash {
            return Err(unavailable(
                "the text source gave another version of the page (its text does not match the \
                 stored content hash)",
            ));
        }
        let text: Arc<str> = Arc::from(text);
        remember(id, rec.content_hash, &text);
        Ok(text)
    }

    /// Runs `f` (an insert) with the texts a text source gives kept for this thread: the
    /// decision made before the writer lock fetches them, the one under it reuses them (by id
    /// and content hash, so a page replaced meanwhile is asked for again).
    pub(crate) fn with_prefetch<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.opts.store_texts || self.source.is_none() {
            return f();
        }
        struct Clear;
        impl Drop for Clear {
            fn drop(&mut self) {
                let _ = PREFETCH.try_with(|p| {
                    let mut p = p.borrow_mut();
                    p.0 = p.0.saturating_sub(1);
                    if p.0 == 0 {
                        p.1.clear();
                    }
                });
            }
        }
        let _ = PREFETCH.try_with(|p| p.borrow_mut().0 += 1);
        let _clear = Clear;
        f()
    }

    /// The posting keys of a stored page (fingerprints and sketch): recomputed from its text, or
    /// read from the record kept instead of the text.
    pub(crate) fn posting_keys_of(&self, id: DocId) -> Result<Option<Vec<[u8; 9]>>> {
        let k = id_key(id);
        let value = self.get_at(cf::TEXTS, &k, None, "a text", |v| {
            codec::decode_text_value(cf::TEXTS, &k, v)
        })?;
        value.map(|v| self.posting_keys_in(id, &v)).transpose()
    }

    /// The posting keys of page `id` from its value in the texts column family: recomputed from
    /// the text, or the keys kept instead of it.
    pub(crate) fn posting_keys_in(&self, id: DocId, value: &TextValue) -> Result<Vec<[u8; 9]>> {
        match value {
            TextValue::Text(t) if self.opts.store_texts => {
                Ok(posting_keys_of_text(t, &self.opts.signature))
            }
            TextValue::PostingKeys(keys) if !self.opts.store_texts => Ok(keys.clone()),
            _ => Err(Error::corruption(
                cf::TEXTS,
                &id_key(id),
                if self.opts.store_texts {
                    "posting keys where the index stores texts"
                } else {
                    "a text where the index stores posting keys"
                },
            )),
        }
    }
}
