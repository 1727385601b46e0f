//! Batch calls on an index: `nd_index_insert_batch` (the daily merge) and
//! `nd_index_query_batch`, each page with its own result.

use std::ffi::c_void;

use super::index::{nd_index, with_index};
use super::nd_status::{self, *};
use super::types::{content_arg, nd_page, nd_str, nd_verdict};
use super::{Fail, FfiResult};
use crate::{BatchOptions, BatchOrder, OrderScope};

/// The caller's result arrays of a batch call: `count` elements each, `messages` may be NULL.
struct BatchOut {
    verdicts: *mut nd_verdict,
    statuses: *mut nd_status,
    messages: *mut nd_str,
}

/// A batch call over `count` pages: checks the arrays, reads each page with `read` (a page that
/// cannot be read gets that status), hands the pages read to `run`, then writes each page's
/// verdict or status and message. Nothing is written to the caller's arrays before `run` has
/// returned; when it fails, nothing is written at all.
///
/// # Safety
/// `pages` points at `count` pages and each array of `out` (but a NULL `messages`) at `count`
/// writable elements, as the batch calls' contracts say.
unsafe fn run_batch<'p, T>(
    pages: *const nd_page,
    count: usize,
    out: BatchOut,
    read: impl Fn(&'p nd_page) -> FfiResult<T>,
    run: impl FnOnce(&[T]) -> FfiResult<Vec<crate::Result<crate::Verdict>>>,
) -> FfiResult {
    if count == 0 {
        return Ok(());
    }
    if pages.is_null() || out.verdicts.is_null() || out.statuses.is_null() {
        return Err(Fail::new(
            ND_NULL_POINTER,
            "pages, verdicts and statuses must not be NULL",
        ));
    }
    if count > isize::MAX as usize / std::mem::size_of::<nd_verdict>() {
        return Err(Fail::new(ND_INVALID_ARGUMENT, "count is too large"));
    }
    // SAFETY: non-null, `count` pages per the contract.
    let raw: &'p [nd_page] = unsafe { std::slice::from_raw_parts(pages, count) };
    let mut fails: Vec<Option<Fail>> = Vec::with_capacity(count);
    let mut good = Vec::with_capacity(count);
    for p in raw {
        match read(p) {
            Ok(t) => {
                good.push(t);
                fails.push(None);
            }
            Err(f) => fails.push(Some(f)),
        }
    }
    let results = run(&good)?;
    if results.len() != good.len() {
        return Err(Fail::new(
            ND_PANIC,
            "the batch gave a result count unlike its pages",
        ));
    }
    let mut results = results.into_iter();
    for (i, fail) in fails.into_iter().enumerate() {
        let fail = match fail {
            Some(f) => Some(f),
            None => match results.next() {
                Some(Ok(v)) => {
                    // SAFETY: `i < count`, writable per the contract.
                    unsafe { *out.verdicts.add(i) = nd_verdict::from_verdict(&v) };
                    None
                }
                Some(Err(e)) => Some(Fail::from(e)),
                None => None,
            },
        };
        // SAFETY: as above.
        unsafe {
            *out.statuses.add(i) = fail.as_ref().map_or(ND_OK, |f| f.status);
            if let (Some(f), false) = (fail, out.messages.is_null()) {
                *out.messages.add(i) = nd_str::from_str(&f.message);
            }
        }
    }
    Ok(())
}

/// Batch order: descending number of sentence fingerprints, so large clusters form first
/// (seed 000 §4.2); under the first-seen policy the page with the most fingerprints leads a
/// cluster, not the one given first.
pub const ND_ORDER_FINGERPRINTS: u32 = 0;
/// Batch order: the order given, what a crawler means by "first seen" (the default of the Rust
/// API, the command line, Python and `neardup.hpp`; the recommended order).
pub const ND_ORDER_INPUT: u32 = 1;
/// Batch order: descending number of sentence fingerprints over the whole batch, not window by
/// window (every page's signatures are computed first and held): the clusters do not depend on
/// where windows fall.
pub const ND_ORDER_FINGERPRINTS_BATCH: u32 = 2;

/// The verdicts `nd_index_query` gives the contents of `count` pages (their keys are not
/// used and may be empty; a page's host is not used either), computed in parallel. Each page
/// has its own result: `statuses[i]` is its status and, when `ND_OK`, `verdicts[i]` its verdict
/// (free each filled one with `nd_verdict_free`); when `messages` is not NULL, `messages[i]` is
/// set to the error message of each failed page (free it with `nd_str_free`) and left alone for
/// the others. Nothing is stored.
///
/// # Errors
/// `ND_OK` when the batch ran (look at `statuses`); `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT`,
/// `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `pages` points at `count` pages; `verdicts` and `statuses` (and
/// `messages` when not NULL) point at `count` writable elements each.
#[no_mangle]
pub unsafe extern "C" fn nd_index_query_batch(
    h: *const nd_index,
    pages: *const nd_page,
    count: usize,
    verdicts: *mut nd_verdict,
    statuses: *mut nd_status,
    messages: *mut nd_str,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = BatchOut {
                verdicts,
                statuses,
                messages,
            };
            run_batch(
                pages,
                count,
                out,
                |p| content_arg(p.content, p.content_len, p.content_kind),
                |contents| Ok(ix.query_batch(contents)?),
            )
        })
    }
}

/// Progress of a batch: `done` of `total` pages handled. Called on the calling thread between
/// committed groups, inside the batch call: it must not call into any index (such calls return
/// `ND_INVALID_ARGUMENT`), and must not throw (mark it `noexcept`; an exception aborts).
#[allow(non_camel_case_types)]
pub type nd_progress_fn =
    Option<unsafe extern "C-unwind" fn(user: *mut c_void, done: usize, total: usize)>;

/// Inserts `count` pages as one batch (the daily merge): signatures in parallel, insertion in
/// `order` ([`ND_ORDER_FINGERPRINTS`], [`ND_ORDER_INPUT`] or [`ND_ORDER_FINGERPRINTS_BATCH`]),
/// committed in groups, the write-ahead log synced once before it returns (with sync on). Each
/// page has
/// its own result: `statuses[i]` is its status and, when `ND_OK`, `verdicts[i]` its verdict
/// (free each filled one with `nd_verdict_free`; the others are left as they were); when
/// `messages` is not NULL, `messages[i]` is set to the error message of each failed page (free
/// it with `nd_str_free`) and left alone for the others. A page that fails does not stop the
/// others. `progress` (may be NULL) is called after every committed
/// group with `user`.
///
/// # Errors
/// `ND_OK` when the batch ran (look at `statuses`: per page `ND_OK`, the page errors of
/// `nd_index_insert`, or `ND_INVALID_ARGUMENT` for a key given twice within 1,024 pages of one
/// another — the later one is inserted); `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` (an unknown
/// order), `ND_CLOSED`, `ND_POISONED`, `ND_STORAGE` when a failed write stopped it: then neither
/// array is written, and the groups committed before the failure stay in the index.
///
/// # Safety
/// `h` is NULL or live; `pages` points at `count` pages; `verdicts` and `statuses` (and
/// `messages` when not NULL) point at `count` writable elements each.
#[no_mangle]
pub unsafe extern "C" fn nd_index_insert_batch(
    h: *mut nd_index,
    pages: *const nd_page,
    count: usize,
    order: u32,
    verdicts: *mut nd_verdict,
    statuses: *mut nd_status,
    messages: *mut nd_str,
    progress: nd_progress_fn,
    user: *mut c_void,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let (order, scope) = match order {
                ND_ORDER_FINGERPRINTS => (BatchOrder::FingerprintCount, OrderScope::Window),
                ND_ORDER_INPUT => (BatchOrder::Input, OrderScope::Window),
                ND_ORDER_FINGERPRINTS_BATCH => (BatchOrder::FingerprintCount, OrderScope::Batch),
                o => return Err(Fail::new(ND_INVALID_ARGUMENT, format!("unknown order {o}"))),
            };
            let opts = BatchOptions {
                order,
                scope,
                ..BatchOptions::default()
            };
            let mut cb = |done: usize, total: usize| {
                if let Some(f) = progress {
                    f(user, done, total);
                }
            };
            let out = BatchOut {
                verdicts,
                statuses,
                messages,
            };
            run_batch(
                pages,
                count,
                out,
                |p| p.read(),
                |good| Ok(ix.insert_batch(good, &opts, &mut cb)?),
            )
        })
    }
}
