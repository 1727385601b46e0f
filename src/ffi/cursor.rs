//! `nd_cursor`: streaming cursors over clusters, a cluster's members and all keys, each at one
//! snapshot of the index (issue "Embedding-grade", point 5).

use std::ffi::c_char;
use std::sync::Arc;

use super::index::{check_process, is_foreign, nd_index, with_index_arc};
use super::nd_status::{self, *};
use super::{guard, guard_void, out_arg, Fail, FfiResult};
use crate::index::{Clusters, Keys, Members};
use crate::{ClusterId, Index};

self_cell::self_cell!(
    struct ClustersCell {
        owner: Arc<Index>,
        #[not_covariant]
        dependent: Clusters,
    }
);

self_cell::self_cell!(
    struct KeysCell {
        owner: Arc<Index>,
        #[not_covariant]
        dependent: Keys,
    }
);

self_cell::self_cell!(
    struct MembersCell {
        owner: Arc<Index>,
        #[not_covariant]
        dependent: Members,
    }
);

enum Walk {
    Clusters(ClustersCell),
    Keys(KeysCell),
    Members(MembersCell, ClusterId),
}

/// A cursor. Opaque; used by one thread at a time (it may move between threads). It keeps the
/// index open: free every cursor with [`nd_cursor_free`] before closing the index
/// (`nd_index_close` refuses while cursors are open). Like its index, it belongs to the process
/// that opened it: in a child after `fork`, `nd_cursor_next` returns `ND_WRONG_PROCESS` and
/// `nd_cursor_free` leaves it alone.
#[allow(non_camel_case_types)]
pub struct nd_cursor {
    walk: Walk,
    /// The process that opened it.
    pid: u32,
    /// The current item's key, NUL-terminated (what `nd_cursor_item::key` points at).
    key: Vec<u8>,
}

/// One item of a cursor.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct nd_cursor_item {
    /// A cluster cursor: the representative's key; a members cursor: the member's key; a keys
    /// cursor: the page's key. NUL-terminated UTF-8, owned by the cursor: valid until the next
    /// `nd_cursor_next` or `nd_cursor_free` on it.
    pub key: *const c_char,
    /// The length of `key` in bytes, without the NUL.
    pub key_len: usize,
    /// The cluster (of the page, of the members, or the cluster itself).
    pub cluster: u32,
    /// A cluster cursor: the cluster's number of members; otherwise 0.
    pub size: u64,
}

fn make(
    ix: &Arc<Index>,
    f: impl FnOnce(Arc<Index>) -> FfiResult<Walk>,
) -> FfiResult<*mut nd_cursor> {
    let walk = f(Arc::clone(ix))?;
    Ok(Box::into_raw(Box::new(nd_cursor {
        walk,
        pid: std::process::id(),
        key: Vec::new(),
    })))
}

/// Opens a cursor over every cluster (id, representative, size), in id order, at a snapshot:
/// writes made meanwhile are not seen. On `ND_OK`, `*out` is the cursor; free it with
/// [`nd_cursor_free`].
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_clusters(
    h: *const nd_index,
    out: *mut *mut nd_cursor,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index_arc(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = make(ix, |a| {
                Ok(Walk::Clusters(ClustersCell::try_new(a, |i| i.clusters())?))
            })?;
            Ok(())
        })
    }
}

/// Opens a cursor over every page's key and cluster, in id order, at a snapshot. On `ND_OK`,
/// `*out` is the cursor; free it with [`nd_cursor_free`].
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_keys(h: *const nd_index, out: *mut *mut nd_cursor) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index_arc(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = make(ix, |a| Ok(Walk::Keys(KeysCell::try_new(a, |i| i.keys())?)))?;
            Ok(())
        })
    }
}

/// Opens a cursor over the keys of a cluster's members, in id order, at a snapshot. On
/// `ND_OK`, `*out` is the cursor; free it with [`nd_cursor_free`].
///
/// # Errors
/// `ND_NOT_FOUND` when there is no such cluster, `ND_NULL_POINTER`, `ND_STORAGE`,
/// `ND_CORRUPTION`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_members(
    h: *const nd_index,
    cluster: u32,
    out: *mut *mut nd_cursor,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index_arc(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = make(ix, |a| {
                let cell = MembersCell::try_new(a, |i| {
                    i.members(cluster)?
                        .ok_or_else(|| crate::Error::NotFound(format!("cluster {cluster}")))
                })
                .map_err(|e| match e {
                    crate::Error::NotFound(_) => {
                        Fail::new(ND_NOT_FOUND, format!("no cluster {cluster}"))
                    }
                    e => e.into(),
                })?;
                Ok(Walk::Members(cell, cluster))
            })?;
            Ok(())
        })
    }
}

/// Moves a cursor to its next item. On `ND_OK`, `*has_item` says whether there was one and,
/// when true, `*item` is filled (its key is owned by the cursor, valid until the next call on
/// it). At the end, `*has_item` is false (and stays false).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE` and `ND_CORRUPTION` from a read (the cursor then ends),
/// `ND_WRONG_PROCESS` on a cursor inherited over `fork`.
///
/// # Safety
/// `c` is NULL or a live cursor used by no other thread; `item` and `has_item` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn nd_cursor_next(
    c: *mut nd_cursor,
    item: *mut nd_cursor_item,
    has_item: *mut bool,
) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let c =
            unsafe { c.as_mut() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "cursor is NULL"))?;
        check_process(c.pid)?;
        let item = out_arg(item, "item")?;
        let has_item = out_arg(has_item, "has_item")?;
        let next: Option<(String, u32, u64)> = match &mut c.walk {
            Walk::Clusters(cell) => cell
                .with_dependent_mut(|_, d| d.next())
                .transpose()?
                .map(|ci| (ci.representative, ci.cluster, ci.size)),
            Walk::Keys(cell) => cell
                .with_dependent_mut(|_, d| d.next())
                .transpose()?
                .map(|(k, cl)| (k, cl, 0)),
            Walk::Members(cell, cluster) => {
                let cluster = *cluster;
                cell.with_dependent_mut(|_, d| d.next())
                    .transpose()?
                    .map(|k| (k, cluster, 0))
            }
        };
        // SAFETY: checked non-null, writable per the contract.
        unsafe {
            match next {
                None => *has_item = false,
                Some((key, cluster, size)) => {
                    c.key.clear();
                    c.key.extend_from_slice(key.as_bytes());
                    c.key.push(0);
                    *item = nd_cursor_item {
                        key: c.key.as_ptr().cast(),
                        key_len: key.len(),
                        cluster,
                        size,
                    };
                    *has_item = true;
                }
            }
        }
        Ok(())
    })
}

/// Releases a cursor. Accepts NULL. On a cursor inherited over `fork` (in the child) it does
/// nothing: its snapshot and iterator are the parent's RocksDB objects and are left as they are.
///
/// # Safety
/// `c` is NULL or a live cursor, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn nd_cursor_free(c: *mut nd_cursor) {
    guard_void(|| {
        if c.is_null() {
            return;
        }
        // SAFETY: a live cursor per the contract; only its immutable `pid` is read.
        if is_foreign(unsafe { (*c).pid }) {
            return;
        }
        // SAFETY: made by Box::into_raw in `make`; freed once per the contract.
        drop(unsafe { Box::from_raw(c) });
    })
}

// A cursor may move between threads.
const _: () = {
    const fn send<T: Send>() {}
    send::<nd_cursor>();
};
