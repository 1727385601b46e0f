//! Stage 1 of batch ingest, its first half (see `super::batch`): each page's main text —
//! extracted here, or given when an earlier stage extracted it (a distributed merge's S1,
//! SCALEOUT §5: [`Index::insert_batch_extracted`]) — then the chrome decisions in input order,
//! then the signatures of what is left.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::schedule::Board;
use crate::index::chrome::{Extracted, Learned};
use crate::index::types::Page;
use crate::index::{check_page, Index};
use crate::signature::Signatures;
use crate::storage::codec::PageBlocks;
use crate::text::MainText;
use crate::{Error, Result};

/// The main texts of a batch's pages extracted before, aligned with its pages (`None` for the
/// whole batch, or for a page, when it is to be extracted here).
pub(super) type Mains<'a> = Option<&'a [Option<MainText>]>;

/// A window's pages after the first half of stage 1.
pub(super) struct Signed {
    /// Signatures by page (`None` for a page that cannot be inserted).
    pub(crate) sigs: Vec<Option<Signatures>>,
    /// The chrome record of each page that is counted.
    pub(crate) blocks: Vec<Option<PageBlocks>>,
    /// Why a page cannot be inserted.
    pub(crate) errors: Vec<Option<Error>>,
    /// Time the signatures took, per page.
    pub(crate) signature: Duration,
}

/// For each page, whether it is the last of its key among `pages` (an earlier one is
/// superseded).
pub(super) fn last_of_each_key(pages: &[Page<'_>]) -> Vec<bool> {
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (i, p) in pages.iter().enumerate() {
        last.insert(p.key, i);
    }
    (0..pages.len())
        .map(|i| last.get(pages[i].key) == Some(&i))
        .collect()
}

/// A page after its chrome decision: its main text and what it counts and drops.
pub(super) type Decided = (Extracted, Option<PageBlocks>);

impl Index {
    /// Stage 1, first half: signatures in parallel (main texts, then the chrome decisions in
    /// input order — see [`crate::index::chrome`] — then the signatures of what is left). A page whose
    /// `keep` is false is superseded by a later page of the same key; a page whose main text
    /// `mains` gives is not extracted again. Returns the pages' signatures and errors, and the
    /// block statistics learned up to the end of the window.
    pub(super) fn sign_window<'env>(
        &'env self,
        pages: &'env [Page<'env>],
        mains: Mains<'env>,
        keep: &[bool],
        board: &Board<'env>,
        here: bool,
        chrome: (Option<&'env rocksdb::Snapshot<'env>>, Learned),
    ) -> (Signed, Learned) {
        let (snapshot, mut learned) = chrome;
        let t0 = Instant::now();
        let extracted: Vec<Result<Extracted>> = board
            .map(pages.len(), here, move |i| {
                let given = mains.and_then(|m| m[i].as_ref());
                check_page(&pages[i]).and_then(|_| self.extract_page(&pages[i], given, snapshot))
            })
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(worker_panicked())))
            .collect();
        let (mut extracted, mut errors): (Vec<Option<Extracted>>, Vec<Option<Error>>) = extracted
            .into_iter()
            .map(|r| match r {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(e)),
            })
            .unzip();
        // A key given twice: only its last page is inserted (the order within the window may
        // change, the outcome must not).
        for (i, p) in pages.iter().enumerate() {
            if !keep[i] && extracted[i].is_some() {
                extracted[i] = None;
                errors[i] = Some(Error::InvalidArgument(format!(
                    "page {:?} superseded by a later page with the same key in the batch",
                    p.key
                )));
            }
        }
        // Chrome decisions, in input order, each on the statistics left by the pages before it.
        let decided: Vec<Option<Decided>> = extracted
            .into_iter()
            .enumerate()
            .map(|(i, ex)| {
                let ex = ex?;
                let rec = learned.decide(&self.opts.chrome, &pages[i], &ex);
                Some((ex, rec))
            })
            .collect();
        let decided: Arc<Vec<Mutex<Option<Decided>>>> =
            Arc::new(decided.into_iter().map(Mutex::new).collect());
        let signed = board.map(pages.len(), here, move |i| {
            decided[i].lock().take().map(|(ex, rec)| self.sign(ex, rec))
        });
        let signature = t0.elapsed() / pages.len().max(1) as u32;
        let mut sigs: Vec<Option<Signatures>> = Vec::with_capacity(pages.len());
        let mut blocks: Vec<Option<PageBlocks>> = Vec::with_capacity(pages.len());
        for (i, s) in signed.into_iter().enumerate() {
            match s {
                Some(Some((sig, rec))) => {
                    sigs.push(Some(sig));
                    blocks.push(rec);
                }
                Some(None) => {
                    sigs.push(None);
                    blocks.push(None);
                }
                None => {
                    sigs.push(None);
                    blocks.push(None);
                    errors[i] = Some(worker_panicked());
                }
            }
        }
        let signed = Signed {
            sigs,
            blocks,
            errors,
            signature,
        };
        (signed, learned)
    }
}

/// The error of a page whose work panicked in a batch worker.
pub(super) fn worker_panicked() -> Error {
    Error::InvalidArgument("a batch worker panicked on this page".into())
}
