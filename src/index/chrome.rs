//! Site chrome learned per host (issue 18, mechanism 8; see [`crate::ChromeConfig`]).
//!
//! A page goes through three steps before the writer sees it:
//!
//! 1. **Extract** ([`Index::extract_page`], parallel in a batch): the main text, the digest of
//!    each paragraph ([`crate::text::block_digest`]), and the statistics the page needs — its
//!    host's counted pages, the count of each of its blocks, and the blocks its own earlier
//!    version (same key) counted — read from the live index or, in a batch, from the snapshot
//!    taken when the batch started.
//! 2. **Decide** ([`Learned::decide`], in input order): a block is chrome when the host's other
//!    pages carry it often enough. The view is the statistics read in step 1 plus the pages
//!    before this one in the batch (`Learned`), minus the page's own earlier version.
//! 3. **Sign** ([`Index::sign`], parallel in a batch): the chrome blocks are dropped from the
//!    main text, unless that would leave the page without main text, and the signatures are
//!    computed on what is left.
//!
//! **Snapshot rule.** A page sees the block statistics as they stood when its batch started (for
//! [`Index::insert`], when its signatures are computed), plus every page before it in the batch's
//! *input* order, minus its own earlier version. That is exactly what inserting the pages one by
//! one in input order gives (with no other writer meanwhile), whatever [`super::BatchOrder`] the
//! batch is inserted in; a page of the batch that fails at insert (after its signatures, e.g. a
//! storage error) still counts in the view of the pages after it.
//!
//! Counting does not depend on the decisions: every HTML page with a host counts each of its
//! distinct short blocks once, chrome or not, and records what it counted (and dropped) in the
//! `chrome` column family under its id, in the same write as its insert. A delete takes exactly
//! those counts back.

use std::collections::HashMap;

use super::{Index, Page};
use crate::signature::{given_main_text, main_text, Content, Signatures};
use crate::storage::codec::{self, PageBlocks};
use crate::storage::{cf, chrome_key};
use crate::text::{block_digest, BlockKind, Folding, MainText, Paragraph};
use crate::Result;

/// A page after step 1.
pub(crate) struct Extracted {
    /// The main text as extracted.
    pub(crate) main: MainText,
    /// The digest of each paragraph that can be chrome, when the page is counted (HTML with a
    /// host, chrome learning on).
    pub(crate) digests: Option<Vec<Option<u64>>>,
    /// The statistics read for the page.
    base: Base,
}

/// Statistics read for one page.
#[derive(Default)]
struct Base {
    /// Counted pages of the host.
    pub(crate) host_pages: u32,
    /// The page's distinct digests (sorted) with their counts.
    pub(crate) counts: Vec<(u64, u32)>,
    /// What the page's earlier version (same key) counted, if it was counted.
    pub(crate) old: Option<PageBlocks>,
}

/// The block statistics contributed by the pages of a batch so far (step 2's running state).
#[derive(Default)]
pub(crate) struct Learned {
    /// Change of each count key (host and block keys of [`chrome_key`]).
    pub(crate) counts: HashMap<Vec<u8>, i64>,
    /// The latest version of each key decided in the batch: what it counted (`None`: nothing).
    pub(crate) pages: HashMap<String, Option<PageBlocks>>,
}

impl Learned {
    pub(crate) fn delta(&self, key: &[u8]) -> i64 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    pub(crate) fn apply(&mut self, rec: &PageBlocks, sign: i64) {
        *self.counts.entry(chrome_key::host(&rec.host)).or_default() += sign;
        for &d in &rec.counted {
            *self
                .counts
                .entry(chrome_key::block(&rec.host, d))
                .or_default() += sign;
        }
    }

    /// Step 2 for one page: the blocks of `ex` that are chrome for its host, as the page's
    /// record (`None` when the page is not counted). The page's contribution joins the state,
    /// and its earlier version's leaves it.
    pub(crate) fn decide(
        &mut self,
        cfg: &crate::ChromeConfig,
        page: &Page<'_>,
        ex: &Extracted,
    ) -> Option<PageBlocks> {
        let old = match self.pages.get(page.key) {
            Some(v) => v.clone(),
            None => ex.base.old.clone(),
        };
        let Some(digests) = &ex.digests else {
            if let Some(old) = &old {
                self.apply(old, -1);
            }
            self.pages.insert(page.key.to_string(), None);
            return None;
        };
        let host = page.host;
        let own = old.as_ref().filter(|o| o.host == host);
        let view = |base: u32, key: &[u8], mine: bool| -> u32 {
            let v = i64::from(base) + self.delta(key) - i64::from(mine);
            v.clamp(0, i64::from(u32::MAX)) as u32
        };
        let host_pages = view(ex.base.host_pages, &chrome_key::host(host), own.is_some());
        let counted: Vec<u64> = ex.base.counts.iter().map(|&(d, _)| d).collect();
        let chrome: Vec<u64> = ex
            .base
            .counts
            .iter()
            .filter(|&&(d, base)| {
                let mine = own.is_some_and(|o| o.counted.binary_search(&d).is_ok());
                let count = view(base, &chrome_key::block(host, d), mine);
                cfg.is_chrome(count, host_pages)
            })
            .map(|&(d, _)| d)
            .collect();
        // Chrome frames the body: only the runs of chrome blocks that open and close the page
        // are dropped. A block the host's pages share between blocks of the page's own (the
        // section headings and stock sentences of a writing template) is the page's text.
        let is_chrome = |d: &Option<u64>| d.is_some_and(|d| chrome.binary_search(&d).is_ok());
        let lead = digests.iter().take_while(|d| is_chrome(d)).count();
        let trail = digests[lead..]
            .iter()
            .rev()
            .take_while(|d| is_chrome(d))
            .count();
        let mut dropped: Vec<u64> = digests[..lead]
            .iter()
            .chain(&digests[digests.len() - trail..])
            .flatten()
            .copied()
            .collect();
        dropped.sort_unstable();
        dropped.dedup();
        let rec = PageBlocks {
            host: host.to_string(),
            counted,
            dropped,
        };
        if let Some(old) = &old {
            self.apply(old, -1);
        }
        self.apply(&rec, 1);
        self.pages.insert(page.key.to_string(), Some(rec.clone()));
        Some(rec)
    }
}

/// The digest of a paragraph that may be chrome, with its length in characters: sub-titles are
/// never chrome — they open the sections of the page's own text (the stock headings of a writing
/// template, "Rules", "Goal", are shared by its pages but belong to each) — and stop a run.
fn digest_of(p: &Paragraph, fold: Folding) -> Option<(u64, usize)> {
    match p.kind {
        BlockKind::Heading(_) => None,
        BlockKind::Text | BlockKind::Pre => block_digest(&p.text, fold),
    }
}

/// The main text without the runs of paragraphs whose digest is in `dropped` (sorted) that open
/// and close it — the paragraphs [`Learned::decide`] dropped, found again from the record.
pub(crate) fn strip(main: &MainText, dropped: &[u64], fold: Folding) -> MainText {
    let is_dropped =
        |p: &&Paragraph| digest_of(p, fold).is_some_and(|(d, _)| dropped.binary_search(&d).is_ok());
    let ps = &main.paragraphs;
    let lead = ps.iter().take_while(is_dropped).count();
    let trail = ps[lead..].iter().rev().take_while(is_dropped).count();
    MainText {
        title: main.title.clone(),
        heading: main.heading.clone(),
        paragraphs: ps[lead..ps.len() - trail].to_vec(),
    }
}

impl Index {
    /// Step 1: the page's main text and block digests, and the statistics it needs, read at
    /// `snapshot` (the live index when `None`). The main text is `given` when it was extracted
    /// before ([`Index::insert_batch_extracted`]); the page's content is still checked as
    /// extraction checks it ([`given_main_text`]), and everything after is the same.
    ///
    /// # Errors
    /// The page errors of [`Signatures::compute`]; storage and corruption errors.
    pub(crate) fn extract_page(
        &self,
        page: &Page<'_>,
        given: Option<&MainText>,
        snapshot: Option<&rocksdb::Snapshot<'_>>,
    ) -> Result<Extracted> {
        let cfg = &self.opts.signature;
        let main = match given {
            Some(main) => given_main_text(page.content, main, cfg)?,
            None => main_text(page.content, cfg)?,
        };
        let chrome = &self.opts.chrome;
        if !chrome.enabled {
            return Ok(Extracted {
                main,
                digests: None,
                base: Base::default(),
            });
        }
        let counted = matches!(page.content, Content::Html(_)) && !page.host.is_empty();
        let digests: Option<Vec<Option<u64>>> = counted.then(|| {
            main.paragraphs
                .iter()
                .map(|p| {
                    digest_of(p, cfg.folding())
                        .filter(|&(_, chars)| chars <= chrome.max_block_chars as usize)
                        .map(|(d, _)| d)
                })
                .collect()
        });
        let mut base = Base {
            old: self.old_blocks(page.key, snapshot)?,
            ..Base::default()
        };
        if let Some(ds) = &digests {
            let mut distinct: Vec<u64> = ds.iter().flatten().copied().collect();
            distinct.sort_unstable();
            distinct.dedup();
            let keys: Vec<Vec<u8>> = std::iter::once(chrome_key::host(page.host))
                .chain(distinct.iter().map(|&d| chrome_key::block(page.host, d)))
                .collect();
            let counts = self.chrome_counts(&keys, snapshot)?;
            base.host_pages = counts.first().copied().unwrap_or(0);
            base.counts = distinct
                .into_iter()
                .zip(counts.into_iter().skip(1))
                .collect();
        }
        Ok(Extracted {
            main,
            digests,
            base,
        })
    }

    /// Step 3: the signatures of the page without its chrome blocks. When dropping them would
    /// leave the page narrower than [`crate::IndexOptions::min_text_width`] — a page that would
    /// then count as having no main text only because of what was learned — the page keeps its
    /// whole text and its record says nothing was dropped.
    pub(crate) fn sign(
        &self,
        ex: Extracted,
        rec: Option<PageBlocks>,
    ) -> (Signatures, Option<PageBlocks>) {
        let cfg = &self.opts.signature;
        match rec {
            Some(mut rec) if !rec.dropped.is_empty() => {
                let stripped = strip(&ex.main, &rec.dropped, cfg.folding());
                let sig = Signatures::from_main_text(stripped, cfg);
                if self.opts.signature.method.main_width(&sig.text) >= self.opts.min_text_width {
                    return (sig, Some(rec));
                }
                rec.dropped.clear();
                (Signatures::from_main_text(ex.main, cfg), Some(rec))
            }
            rec => (Signatures::from_main_text(ex.main, cfg), rec),
        }
    }

    /// Steps 1 to 3 for one page against the live index (a single insert or query).
    pub(crate) fn signatures_of(
        &self,
        page: &Page<'_>,
    ) -> Result<(Signatures, Option<PageBlocks>)> {
        let ex = self.extract_page(page, None, None)?;
        let rec = Learned::default().decide(&self.opts.chrome, page, &ex);
        Ok(self.sign(ex, rec))
    }

    /// Counts of the `chrome` column family (0 for an absent key).
    pub(crate) fn chrome_counts(
        &self,
        keys: &[Vec<u8>],
        snapshot: Option<&rocksdb::Snapshot<'_>>,
    ) -> Result<Vec<u32>> {
        self.multi_get_at(
            cf::CHROME,
            keys,
            snapshot,
            "reading block statistics",
            |key, v| match v {
                None => Ok(0),
                Some(v) => codec::decode_count(cf::CHROME, key, v),
            },
        )
    }

    /// What the page stored under `key` counted, if it was counted, at `snapshot`.
    pub(crate) fn old_blocks(
        &self,
        key: &str,
        snapshot: Option<&rocksdb::Snapshot<'_>>,
    ) -> Result<Option<PageBlocks>> {
        match self.key_id_at(key, snapshot)? {
            Some(id) => self.page_blocks_at(id, snapshot),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(host_pages: u32, counts: &[(u64, u32)], old: Option<PageBlocks>) -> Extracted {
        Extracted {
            main: MainText::default(),
            digests: Some(counts.iter().map(|&(d, _)| Some(d)).collect()),
            base: Base {
                host_pages,
                counts: counts.to_vec(),
                old,
            },
        }
    }

    fn page(key: &str) -> Page<'_> {
        Page {
            key,
            host: "h.example",
            time: 0,
            content: Content::Html(b""),
        }
    }

    #[test]
    fn a_block_is_chrome_at_k_pages_and_share_f() {
        let cfg = crate::ChromeConfig::default();
        let rec = Learned::default()
            .decide(&cfg, &page("a"), &ex(6, &[(1, 3), (3, 6)], None))
            .unwrap();
        assert_eq!(rec.counted, vec![1, 3]);
        assert_eq!(rec.dropped, vec![1, 3]);
        // Below K, or below the share F (3 of 20 pages), a block stays.
        let rec = Learned::default()
            .decide(&cfg, &page("a"), &ex(10, &[(2, 2)], None))
            .unwrap();
        assert!(rec.dropped.is_empty());
        let rec = Learned::default()
            .decide(&cfg, &page("a"), &ex(20, &[(1, 3), (3, 10)], None))
            .unwrap();
        assert_eq!(rec.dropped, vec![3]);
    }

    #[test]
    fn only_chrome_that_opens_or_closes_the_page_is_dropped() {
        let cfg = crate::ChromeConfig::default();
        // Paragraphs: chrome 1, own 2, chrome 3 (a template heading), own 4, chrome 5, chrome 6.
        let mut e = ex(10, &[(1, 9), (2, 0), (3, 9), (4, 0), (5, 9), (6, 9)], None);
        e.base.counts.sort_unstable();
        let rec = Learned::default().decide(&cfg, &page("a"), &e).unwrap();
        assert_eq!(rec.dropped, vec![1, 5, 6]);
    }

    #[test]
    fn earlier_pages_of_the_batch_count_and_the_own_old_version_does_not() {
        let cfg = crate::ChromeConfig::default();
        let mut l = Learned::default();
        // Three pages carrying block 7, then a fourth: only the fourth sees it as chrome.
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            let rec = l.decide(&cfg, &page(key), &ex(0, &[(7, 0)], None)).unwrap();
            assert!(rec.dropped.is_empty(), "page {i}");
        }
        let rec = l.decide(&cfg, &page("d"), &ex(0, &[(7, 0)], None)).unwrap();
        assert_eq!(rec.dropped, vec![7]);
        // "c" again: its own earlier version (from this batch) is not one of the others.
        let mut l2 = Learned::default();
        for key in ["a", "b", "c"] {
            l2.decide(&cfg, &page(key), &ex(0, &[(7, 0)], None));
        }
        let rec = l2
            .decide(&cfg, &page("c"), &ex(0, &[(7, 0)], None))
            .unwrap();
        assert!(rec.dropped.is_empty());
        // The same with the earlier version stored in the index (read with the statistics).
        let old = PageBlocks {
            host: "h.example".into(),
            counted: vec![7],
            dropped: vec![],
        };
        let rec = Learned::default()
            .decide(&cfg, &page("c"), &ex(3, &[(7, 3)], Some(old)))
            .unwrap();
        assert!(rec.dropped.is_empty());
    }

    #[test]
    fn strip_drops_by_masked_digest() {
        let p = |t: &str| Paragraph {
            text: t.to_string(),
            kind: BlockKind::Text,
        };
        let main = MainText {
            title: "T".into(),
            heading: String::new(),
            paragraphs: vec![
                p("Body text here."),
                p("More body."),
                p("© 2021 Acme Trading Company"),
            ],
        };
        let digest = |t: &str| block_digest(t, true).unwrap().0;
        let dropped = vec![digest("© 1999 Acme Trading Company")];
        let s = strip(&main, &dropped, true.into());
        assert_eq!(s.body(), "Body text here.\nMore body.");
        assert_eq!(s.title, "T");
        // The same block inside the body stays.
        let mut inside = main.clone();
        inside.paragraphs.swap(1, 2);
        assert_eq!(strip(&inside, &dropped, true.into()), inside);
    }
}
