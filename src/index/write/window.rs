//! What batch ingest keeps of a window of pages between its stages: the window itself (stage 1,
//! `batch`) and each page's pre-decision (stage 2, `ahead`), which the writer (stage 3) uses.

use std::time::Duration;

use roaring::RoaringBitmap;

use crate::index::decide::{Memo, Outcome};
use crate::index::Timing;
use crate::signature::Signatures;
use crate::storage::codec::PageBlocks;

/// A window of a batch, prepared off the writer.
pub(super) struct Window {
    /// Signatures by page (`None` for a page that cannot be inserted; its error is in
    /// `Prepared::errors`).
    pub(crate) sigs: Vec<Option<Signatures>>,
    /// The chrome record of each page that is counted (see `crate::index::chrome`).
    pub(crate) blocks: Vec<Option<PageBlocks>>,
    /// Insertion order (indexes into `sigs`).
    pub(crate) order: Vec<usize>,
    /// Rank of each page in `order`.
    pub(crate) rank: Vec<u32>,
    /// The window's own postings: posting key → pages carrying it, in insertion order.
    pub(crate) postings: rustc_hash::FxHashMap<[u8; 9], Vec<u32>>,
    /// Time the signatures took, per page.
    pub(crate) signature: Duration,
}

/// What a page's pre-decision found.
#[derive(Default)]
pub(super) struct Pre {
    /// Outcomes against pages already in the index.
    pub(crate) memo: Memo,
    /// Outcomes against pages of this window and the one before (see `ahead::Target::Window`).
    pub(crate) in_window: Vec<(u32, Outcome)>,
    /// The postings its candidate search read, sorted by key.
    pub(crate) postings: Vec<([u8; 9], RoaringBitmap)>,
    /// Time spent on candidates and verification.
    pub(crate) timing: Timing,
}
