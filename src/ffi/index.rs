//! `nd_index`: the handle and every call on an index.

use std::ffi::c_char;
use std::sync::Arc;

use parking_lot::RwLock;

use super::depth::DepthGuard;
use super::nd_status::{self, *};
use super::options::{nd_options, CallbackSource};
use super::types::{
    content_arg, nd_deletion, nd_key_list, nd_page, nd_record, nd_str, nd_verdict, page_arg,
};
use super::{guard, guard_void, out_arg, str_arg, Fail, FfiResult};
use crate::{Index, IndexOptions};

/// An open index. Opaque; thread-safe: any number of threads may call into one handle at once.
/// It belongs to the process that opened it: in a child after `fork`, every call on the
/// inherited handle returns `ND_WRONG_PROCESS` and [`nd_index_free`] leaves it alone.
#[allow(non_camel_case_types)]
pub struct nd_index {
    /// `None` once closed. Calls hold the read lock for their whole duration, so
    /// [`nd_index_close`] (the write lock) waits for the calls in flight.
    inner: RwLock<Option<Arc<Index>>>,
    /// The process that opened the index. Checked before the lock is touched: a child's copy of
    /// the lock may have been held by a thread of the parent at the time of the `fork`.
    pid: u32,
}

/// Fails with `ND_WRONG_PROCESS` in a process other than `pid` (a child after `fork`).
pub(crate) fn check_process(pid: u32) -> FfiResult {
    let current = std::process::id();
    if pid != current {
        return Err(crate::Error::WrongProcess {
            opened_by: pid,
            current,
        }
        .into());
    }
    Ok(())
}

/// True in a process other than `pid`: a handle inherited over `fork`, which must not be
/// released here (its RocksDB objects would join threads that exist only in the parent).
pub(crate) fn is_foreign(pid: u32) -> bool {
    pid != std::process::id()
}

/// Refuses a call made from inside a callback (a text source or progress callback) running in
/// a call on an index.
fn refuse_inside_callback(what: &str) -> FfiResult {
    if DepthGuard::inside() {
        return Err(Fail::new(
            ND_INVALID_ARGUMENT,
            format!(
                "{what} was made from inside a callback of another call on an index; callbacks \
                 must not call into an index"
            ),
        ));
    }
    Ok(())
}

/// Runs `f` on the open index behind a handle.
///
/// # Safety
/// `h` is NULL or a live handle from `nd_index_open`.
pub(crate) unsafe fn with_index(
    h: *const nd_index,
    f: impl FnOnce(&Index) -> FfiResult,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { with_index_arc(h, |ix| f(ix)) }
}

/// Runs `f` on the open index behind a handle, as the `Arc` the handle holds (for what must
/// keep the index alive beyond the call: cursors).
///
/// # Safety
/// `h` is NULL or a live handle from `nd_index_open`.
pub(crate) unsafe fn with_index_arc(
    h: *const nd_index,
    f: impl FnOnce(&Arc<Index>) -> FfiResult,
) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { h.as_ref() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "index is NULL"))?;
        check_process(h.pid)?;
        // A callback runs while the index holds its writer lock: calling back in would wait for
        // itself. Refused, never a hang.
        refuse_inside_callback("this call")?;
        // Calls queue behind a waiting close, so a stream of calls cannot starve it.
        let g = h.inner.read();
        let ix = g
            .as_ref()
            .ok_or_else(|| Fail::new(ND_CLOSED, "the index is closed"))?;
        let _depth = DepthGuard::enter();
        f(ix)
    })
}

/// Opens (or creates, by default) the index in the directory `path` (UTF-8, `path_len` bytes).
/// `opts` may be NULL for the defaults; the options are copied.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_INVALID_ARGUMENT` (bad options, missing index with
/// create-if-missing off), `ND_INCOMPATIBLE_CONFIG`, `ND_INCOMPATIBLE_FORMAT`, `ND_ALREADY_OPEN`
/// (this process has the directory open already, under this or another spelling of its path),
/// `ND_STORAGE` (among others: another process has it open), `ND_IO`, `ND_CORRUPTION`,
/// `ND_WRONG_PROCESS` in a child after `fork` of a process that had opened an index (RocksDB's
/// process-wide state is the parent's: open indexes in a process forked before any index was
/// opened, or after `exec`). Every call on a handle fails with `ND_WRONG_PROCESS` in a process
/// other than the one that opened it (a child after `fork`).
///
/// # Safety
/// `path` points at `path_len` readable bytes; `opts` is NULL or live; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_open(
    path: *const c_char,
    path_len: usize,
    opts: *const nd_options,
    out: *mut *mut nd_index,
) -> nd_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        // SAFETY: per the contract.
        let path = unsafe { path_arg(path, path_len)? };
        // SAFETY: per the contract.
        let (options, source) = match unsafe { opts.as_ref() } {
            Some(o) => (o.opts.clone(), o.text_source),
            None => (IndexOptions::default(), None),
        };
        let ix = match source {
            Some((callback, user)) => Index::open_with_text_source(
                path,
                options,
                Arc::new(CallbackSource { callback, user }),
            )?,
            None => Index::open(path, options)?,
        };
        // SAFETY: checked non-null, writable per the contract.
        unsafe { *out = handle(ix) };
        Ok(())
    })
}

/// A new handle on an open index.
fn handle(ix: Index) -> *mut nd_index {
    Box::into_raw(Box::new(nd_index {
        inner: RwLock::new(Some(Arc::new(ix))),
        pid: std::process::id(),
    }))
}

/// Reads an index path: UTF-8, not empty, no NUL byte; refused inside a callback (a handle
/// opened there could not be released there).
///
/// # Safety
/// `path` points at `len` readable bytes.
unsafe fn path_arg<'a>(path: *const c_char, len: usize) -> FfiResult<&'a str> {
    refuse_inside_callback("opening an index")?;
    // SAFETY: per the contract.
    let path = unsafe { str_arg(path, len, "path")? };
    if path.is_empty() {
        return Err(Fail::new(ND_INVALID_ARGUMENT, "path is empty"));
    }
    if path.contains('\0') {
        return Err(Fail::new(ND_INVALID_ARGUMENT, "path contains a NUL byte"));
    }
    Ok(path)
}

/// Opens the existing index in `path` with the configuration stored in it (signature
/// parameters, simhash distance, representative policy, whether texts are stored) and default
/// values for the rest — no need to know the options it was created with
/// (`nd_index_config_json` tells them).
///
/// # Errors
/// As `nd_index_open`; `ND_INVALID_ARGUMENT` when there is no index at `path`, or when it was
/// created without stored texts (it needs a text source: use `nd_index_open` with options).
///
/// # Safety
/// `path` points at `path_len` readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_open_existing(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut nd_index,
) -> nd_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        // SAFETY: per the contract.
        let path = unsafe { path_arg(path, path_len)? };
        let ix = Index::open_existing(path)?;
        if !ix.options().store_texts {
            return Err(Fail::new(
                ND_INVALID_ARGUMENT,
                "the index does not store texts: open it with nd_index_open and a text source",
            ));
        }
        // SAFETY: checked non-null, writable per the contract.
        unsafe { *out = handle(ix) };
        Ok(())
    })
}

/// Opens an index or a checkpoint read-only, with its stored configuration: for a serving
/// process beside the writer (this process or another) or a snapshot on read-only storage.
/// Nothing in `path` is written; the handle sees the index as it was when opened (reopen it to
/// see later writes); insert, batch, delete and compact return `ND_READ_ONLY`. Queries, `nd_index_get`, cursors, stats and check work.
///
/// # Errors
/// As `nd_index_open_existing`.
///
/// # Safety
/// `path` points at `path_len` readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_open_read_only(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut nd_index,
) -> nd_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        // SAFETY: per the contract.
        let path = unsafe { path_arg(path, path_len)? };
        let ix = Index::open_read_only(path)?;
        // SAFETY: checked non-null, writable per the contract.
        unsafe { *out = handle(ix) };
        Ok(())
    })
}

/// The configuration stored in an open index, as JSON (`signature`, `simhash_max_distance`,
/// `representative`, `store_texts`). On `ND_OK`, `*out` is filled; free it with `nd_str_free`.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_config_json(h: *const nd_index, out: *mut nd_str) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = nd_str::from_str(&ix.config_json()?);
            Ok(())
        })
    }
}

/// The configuration stored in the (closed, or open in another process) index at `path`, as
/// JSON, read without opening it for writing. On `ND_OK`, `*out` is filled; free it with
/// `nd_str_free`.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_INVALID_ARGUMENT` (no index at `path`),
/// `ND_STORAGE`, `ND_CORRUPTION`.
///
/// # Safety
/// `path` points at `path_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_stored_config_json(
    path: *const c_char,
    path_len: usize,
    out: *mut nd_str,
) -> nd_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        // SAFETY: per the contract.
        let path = unsafe { path_arg(path, path_len)? };
        let json = Index::stored_config_json(path)?;
        // SAFETY: checked non-null, writable per the contract.
        unsafe { *out = nd_str::from_str(&json) };
        Ok(())
    })
}

/// Closes the index: waits for the calls in flight on this handle, flushes and closes the
/// database. The handle stays valid: later calls return `ND_CLOSED` (a second close too) until
/// it is freed with [`nd_index_free`]. When two threads close at once, the second returns
/// `ND_CLOSED` at once, possibly before the first has released the directory. When this
/// returns `ND_OK`, the directory is released: `nd_index_open` on it in this process succeeds
/// (the C++ `Index::reopen` relies on it).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED` when already closed, `ND_INVALID_ARGUMENT` when called from a
/// callback or while cursors on the index are open, `ND_STORAGE` when the final flush fails
/// (the index is closed all the same), `ND_WRONG_PROCESS` on a handle inherited over `fork`
/// (the parent's index is left as it is).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn nd_index_close(h: *mut nd_index) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { h.as_ref() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "index is NULL"))?;
        check_process(h.pid)?;
        refuse_inside_callback("nd_index_close")?;
        let mut inner = h.inner.write();
        let ix = inner
            .as_ref()
            .ok_or_else(|| Fail::new(ND_CLOSED, "the index is already closed"))?;
        // Cursors hold the index too: closing under them would leave the database open.
        let cursors = Arc::strong_count(ix) - 1;
        if cursors > 0 {
            return Err(Fail::new(
                ND_INVALID_ARGUMENT,
                format!("{cursors} cursor(s) on the index are open: free them first"),
            ));
        }
        let ix = inner.take();
        drop(inner);
        if let Some(ix) = ix {
            // Flush only when read-write (a read-only index has nothing to flush).
            if !ix.is_read_only() {
                ix.flush()?;
            }
        }
        Ok(())
    })
}

/// Closes the index and opens it again in the same handle: under the path it was opened with,
/// with the same options and text source (a handle from `nd_index_open_read_only` is reopened
/// read-only, and then sees the writes made since it was opened). Waits for the calls in flight
/// on the handle, flushes and closes the database — releasing the directory — then opens it;
/// calls made on the handle meanwhile wait and run on the reopened index.
///
/// This is the reopen idiom for one handle per index per process: opening the directory again
/// while the handle is open returns `ND_ALREADY_OPEN`, so a new handle cannot be opened before
/// the old one is closed (the C++ `ix = Index::open(path)` does exactly that; `Index::reopen`
/// calls this).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED` when the handle is closed, `ND_INVALID_ARGUMENT` when called
/// from a callback or while cursors on the index are open (the index stays open as it was),
/// `ND_WRONG_PROCESS` on a handle inherited over `fork`. When the final flush fails
/// (`ND_STORAGE`) or the open fails (its errors, as `nd_index_open`), the handle is left closed:
/// later calls return `ND_CLOSED` until it is freed.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn nd_index_reopen(h: *mut nd_index) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let h = unsafe { h.as_ref() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "index is NULL"))?;
        check_process(h.pid)?;
        refuse_inside_callback("nd_index_reopen")?;
        // Held until the new index is in place: calls made meanwhile wait for it.
        let mut inner = h.inner.write();
        let ix = inner
            .as_ref()
            .ok_or_else(|| Fail::new(ND_CLOSED, "the index is closed"))?;
        let cursors = Arc::strong_count(ix) - 1;
        if cursors > 0 {
            return Err(Fail::new(
                ND_INVALID_ARGUMENT,
                format!("{cursors} cursor(s) on the index are open: free them first"),
            ));
        }
        let Some(ix) = inner.take() else {
            return Err(Fail::new(ND_CLOSED, "the index is closed"));
        };
        let path = ix.path().to_path_buf();
        let read_only = ix.is_read_only();
        let options = ix.options().clone();
        let source = ix.source.clone();
        let flushed = if read_only { Ok(()) } else { ix.flush() };
        // The last reference (no cursor, calls excluded by the lock): the database closes and
        // the directory is released here.
        drop(ix);
        flushed?;
        let fresh = if read_only {
            Index::open_read_only(&path)?
        } else {
            match source {
                Some(source) => Index::open_with_text_source(&path, options, source)?,
                None => Index::open(&path, options)?,
            }
        };
        *inner = Some(Arc::new(fresh));
        Ok(())
    })
}

/// Releases a handle, closing the index first if [`nd_index_close`] was not called. Accepts
/// NULL. Must be the last use of the handle on every thread: unlike a closed handle, a freed
/// one cannot be detected. Called from inside a callback it does nothing. Cursors still open on
/// the index keep it open (not flushed, still registered: opening it again in this process
/// returns `ND_ALREADY_OPEN`) until the last of them is freed.
///
/// On a handle inherited over `fork` (in the child) it does nothing: the handle's memory and
/// RocksDB objects are the child's copy of the parent's and are left as they are (a leak of
/// the child's copy, reclaimed when the child exits), since releasing them would join threads
/// that exist only in the parent. The child may call it and then `exit` safely.
///
/// # Safety
/// `h` is NULL or a live handle no other thread uses any more.
#[no_mangle]
pub unsafe extern "C" fn nd_index_free(h: *mut nd_index) {
    guard_void(|| {
        // From inside a callback the handle is in use by the call around it: leave it (a leak,
        // not a use after free).
        if h.is_null() || refuse_inside_callback("nd_index_free").is_err() {
            return;
        }
        // SAFETY: a live handle per the contract; only its immutable `pid` is read.
        if is_foreign(unsafe { (*h).pid }) {
            // Inherited over fork: leave the whole handle untouched (a leak, not a RocksDB
            // destructor in the child).
            return;
        }
        // SAFETY: made by Box::into_raw in nd_index_open; the caller frees it once.
        drop(unsafe { Box::from_raw(h) });
    })
}

/// Inserts a page: compares it with the pages held, stores it and joins it to the best
/// verified cluster or founds a new one, in one atomic write. Inserting a key that is present
/// replaces its page. On `ND_OK`, `*out` is overwritten (free the strings of a verdict before
/// reusing it) and its strings are freed with `nd_verdict_free`.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_INVALID_ARGUMENT` (empty key or one over 65,536
/// bytes, host — given or taken from the URL — over 255 bytes, unknown content kind),
/// `ND_PAGE_TOO_LARGE`, `ND_BINARY_PAGE`, `ND_TEXT_UNAVAILABLE` (the text source could not give
/// the text of a page this one had to be verified against; nothing is stored), `ND_POISONED`,
/// `ND_FULL`, `ND_STORAGE`, `ND_CORRUPTION`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `page` is NULL or points at a page whose buffers are readable for their
/// lengths; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_insert(
    h: *mut nd_index,
    page: *const nd_page,
    out: *mut nd_verdict,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            let page = page_arg(page)?;
            let v = ix.insert(&page)?;
            *out = nd_verdict::from_verdict(&v);
            Ok(())
        })
    }
}

/// The verdict [`nd_index_insert`] would give for this content, without storing anything.
/// `kind` is `ND_CONTENT_HTML` or `ND_CONTENT_TEXT`.
///
/// # Errors
/// As `nd_index_insert`, except the key errors.
///
/// # Safety
/// `h` is NULL or live; `content` points at `len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_query(
    h: *const nd_index,
    content: *const u8,
    len: usize,
    kind: u32,
    out: *mut nd_verdict,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            let c = content_arg(content, len, kind)?;
            let v = ix.query(c)?;
            *out = nd_verdict::from_verdict(&v);
            Ok(())
        })
    }
}

/// Deletes the page with this key. A deleted representative hands its cluster over to the
/// member the policy prefers, and members no longer similar to it are re-placed, in one write.
/// When `out` is not NULL, on `ND_OK` it is filled with what changed (free it with
/// `nd_deletion_free`): whether the page led its cluster, the cluster's representative now, and
/// the members re-placed with where each went.
///
/// # Errors
/// `ND_NOT_FOUND` when the key is absent, `ND_NULL_POINTER`, `ND_INVALID_UTF8`,
/// `ND_TEXT_UNAVAILABLE`, `ND_POISONED`, `ND_READ_ONLY`, `ND_STORAGE`, `ND_CORRUPTION`,
/// `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `key` points at `key_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_delete(
    h: *mut nd_index,
    key: *const c_char,
    key_len: usize,
    out: *mut nd_deletion,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let key = str_arg(key, key_len, "key")?;
            let d = ix.delete(key)?;
            if !out.is_null() {
                *out = nd_deletion::from_deletion(&d);
            }
            Ok(())
        })
    }
}

/// The stored record of a key — id, cluster, representative, the page it was judged similar to
/// with the rates then, content hash, time, text length — without sending the page again. On
/// `ND_OK`, `*out` is filled; free it with `nd_record_free`.
///
/// # Errors
/// `ND_NOT_FOUND` when the key is absent, `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_STORAGE`,
/// `ND_CORRUPTION`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `key` points at `key_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_get(
    h: *const nd_index,
    key: *const c_char,
    key_len: usize,
    out: *mut nd_record,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            let key = str_arg(key, key_len, "key")?;
            let r = ix
                .get(key)?
                .ok_or_else(|| Fail::new(ND_NOT_FOUND, format!("no page with key {key:?}")))?;
            *out = nd_record::from_record(&r);
            Ok(())
        })
    }
}

/// The cluster of a key and its representative's key. On `ND_OK`, `*cluster_out` and
/// `*representative_out` are filled (free the string with `nd_str_free`); `cluster_out` may be
/// NULL when not wanted.
///
/// # Errors
/// `ND_NOT_FOUND` when the key is absent, `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_STORAGE`,
/// `ND_CORRUPTION`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `key` points at `key_len` readable bytes; the outs are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_representative(
    h: *const nd_index,
    key: *const c_char,
    key_len: usize,
    cluster_out: *mut u32,
    representative_out: *mut nd_str,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let rep_out = out_arg(representative_out, "representative_out")?;
            let key = str_arg(key, key_len, "key")?;
            let (cluster, rep) = ix
                .representative_of(key)?
                .ok_or_else(|| Fail::new(ND_NOT_FOUND, format!("no page with key {key:?}")))?;
            if !cluster_out.is_null() {
                *cluster_out = cluster;
            }
            *rep_out = nd_str::from_str(&rep);
            Ok(())
        })
    }
}

/// The keys of a cluster's members in id order: at most `limit` of them, from position
/// `offset` (page through a large cluster by raising `offset` by `limit` until fewer than `limit`
/// come back; each page is read from its own snapshot, so writes between pages can shift
/// members). On `ND_OK`, `*out` is filled; free it with `nd_key_list_free`.
///
/// # Errors
/// `ND_NOT_FOUND` when no cluster has this id, `ND_INVALID_ARGUMENT` when `limit` is 0,
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CORRUPTION`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_cluster_members(
    h: *const nd_index,
    cluster: u32,
    offset: usize,
    limit: usize,
    out: *mut nd_key_list,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            if limit == 0 {
                return Err(Fail::new(ND_INVALID_ARGUMENT, "limit is 0"));
            }
            let keys = ix
                .cluster_members(cluster, offset, limit)?
                .ok_or_else(|| Fail::new(ND_NOT_FOUND, format!("no cluster {cluster}")))?;
            *out = nd_key_list::from_keys(&keys);
            Ok(())
        })
    }
}

/// Number of live pages. On `ND_OK`, `*out` is filled.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED`, `ND_WRONG_PROCESS` (as every call on an index handle in a
/// process other than the one that opened it).
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_len(h: *const nd_index, out: *mut u64) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = ix.len();
            Ok(())
        })
    }
}

// The handle is shared across threads by the caller.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<nd_index>();
};
