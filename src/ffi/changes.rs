//! `nd_changes`: the change feed from C — a cursor over the changes committed after a sequence
//! number, each with its fields and its bytes, and the call that applies those bytes to a copy
//! of the index.

use std::ffi::c_char;
use std::sync::Arc;

use super::index::{check_process, is_foreign, nd_index, with_index, with_index_arc};
use super::nd_status::{self, *};
use super::{bytes_arg, guard, guard_void, out_arg, Fail};
use crate::index::Changes;
use crate::{Change, ChangeKind, Index};

self_cell::self_cell!(
    struct ChangesCell {
        owner: Arc<Index>,
        #[not_covariant]
        dependent: Changes,
    }
);

/// What a change did (`nd_change::kind`). Values are explicit and never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum nd_change_kind {
    /// A page stored under a key the index did not hold.
    ND_CHANGE_INSERTED = 1,
    /// A page stored under a key the index held (its old version taken out in the same write).
    ND_CHANGE_REPLACED = 2,
    /// An unchanged recrawl's record refreshed in place: a new publish time (`time`), the hash
    /// of a raw page that is not byte-identical (carried in `bytes`), or both.
    ND_CHANGE_RETIMED = 3,
    /// A page deleted (`cluster`: the cluster it was in).
    ND_CHANGE_DELETED = 4,
    /// A page held before the commit moved from cluster `from_cluster` to `cluster`, whose
    /// representative is `representative` (a member placed again after a hand-over).
    ND_CHANGE_MOVED = 5,
    /// Cluster `cluster`'s representative changed from `previous` to `representative`.
    ND_CHANGE_REPRESENTATIVE_CHANGED = 6,
}

/// One change of the feed. Every pointer is owned by the cursor and valid until the next
/// `nd_changes_next` or `nd_changes_free` on it; strings are UTF-8, NUL-terminated, with their
/// length (without the NUL) beside them; a field a kind does not have is empty or 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct nd_change {
    /// Its sequence number: from 1, strictly increasing, never reused.
    pub seq: u64,
    /// When it was committed, Unix milliseconds (the writer's clock).
    pub committed_ms: i64,
    /// What it did.
    pub kind: nd_change_kind,
    /// The page's key (empty for `ND_CHANGE_REPRESENTATIVE_CHANGED`).
    pub key: *const c_char,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// Inserted, replaced: the page's host.
    pub host: *const c_char,
    /// The length of `host` in bytes.
    pub host_len: usize,
    /// Inserted, replaced, retimed: the page's publish time, Unix seconds.
    pub time: i64,
    /// The page's id (all kinds but `ND_CHANGE_REPRESENTATIVE_CHANGED`).
    pub doc: u32,
    /// Inserted, replaced: the page's cluster after the commit; deleted: the cluster it was
    /// in; moved: the cluster it moved to; representative changed: the cluster.
    pub cluster: u32,
    /// Moved: the cluster it left (the other kinds: `cluster`).
    pub from_cluster: u32,
    /// Inserted, replaced, moved: the page's cluster's representative after the commit;
    /// representative changed: the new representative.
    pub representative: *const c_char,
    /// The length of `representative` in bytes.
    pub representative_len: usize,
    /// Representative changed: the representative before.
    pub previous: *const c_char,
    /// The length of `previous` in bytes.
    pub previous_len: usize,
    /// Inserted, replaced: the page's normalized main text, as the index decided on it.
    pub text: *const c_char,
    /// The length of `text` in bytes.
    pub text_len: usize,
    /// The whole change as bytes (what `nd_index_apply_change` takes, on a copy of the index in
    /// this or another process).
    pub bytes: *const u8,
    /// The length of `bytes`.
    pub bytes_len: usize,
}

/// A cursor over the change feed (`nd_index_changes`). Opaque; used by one thread at a time
/// (it may move between threads). It keeps the index open: free it with [`nd_changes_free`]
/// before closing the index. Like its index it belongs to the process that opened it: in a
/// child after `fork`, `nd_changes_next` returns `ND_WRONG_PROCESS` and `nd_changes_free`
/// leaves it alone.
#[allow(non_camel_case_types)]
pub struct nd_changes {
    cell: ChangesCell,
    /// The process that opened it.
    pid: u32,
    /// The current change's strings, each NUL-terminated, and its bytes.
    strings: [Vec<u8>; 5],
    bytes: Vec<u8>,
}

/// Opens a cursor over every change committed after change `since`, in sequence order, at a
/// snapshot (changes committed meanwhile are not seen: open another from the last one read).
/// `since` 0 lists the feed from its first change. On `ND_OK`, `*out` is the cursor; free it
/// with [`nd_changes_free`].
///
/// # Errors
/// `ND_CHANGES_TRIMMED` when changes after `since` were trimmed (the follower missed them: copy
/// the index again), `ND_INVALID_ARGUMENT` when `since` is past the last change,
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CORRUPTION`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_changes(
    h: *const nd_index,
    since: u64,
    out: *mut *mut nd_changes,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index_arc(h, |ix| {
            let out = out_arg(out, "out")?;
            let cell = ChangesCell::try_new(Arc::clone(ix), |i| i.changes_since(since))?;
            *out = Box::into_raw(Box::new(nd_changes {
                cell,
                pid: std::process::id(),
                strings: Default::default(),
                bytes: Vec::new(),
            }));
            Ok(())
        })
    }
}

/// Fills `buf` with `s` and a NUL; returns the pointer and length of `s` in it.
fn hold(buf: &mut Vec<u8>, s: &str) -> (*const c_char, usize) {
    buf.clear();
    buf.extend_from_slice(s.as_bytes());
    buf.push(0);
    (buf.as_ptr().cast(), s.len())
}

/// The item of `change`, its strings and bytes held by `c`.
fn item(c: &mut nd_changes, change: &Change) -> nd_change {
    use nd_change_kind::*;
    let none = "";
    let (kind, key, host, time, doc, cluster, from, rep, previous, text) = match &change.kind {
        ChangeKind::Inserted(p) | ChangeKind::Replaced(p) => (
            if matches!(change.kind, ChangeKind::Inserted(_)) {
                ND_CHANGE_INSERTED
            } else {
                ND_CHANGE_REPLACED
            },
            p.key.as_str(),
            p.host.as_str(),
            p.time,
            p.doc,
            p.cluster,
            p.cluster,
            p.representative.as_str(),
            none,
            p.text.as_str(),
        ),
        ChangeKind::Retimed { key, doc, time, .. } => (
            ND_CHANGE_RETIMED,
            key.as_str(),
            none,
            *time,
            *doc,
            0,
            0,
            none,
            none,
            none,
        ),
        ChangeKind::Deleted {
            key, doc, cluster, ..
        } => (
            ND_CHANGE_DELETED,
            key.as_str(),
            none,
            0,
            *doc,
            *cluster,
            *cluster,
            none,
            none,
            none,
        ),
        ChangeKind::Moved {
            key,
            doc,
            from,
            to,
            representative,
        } => (
            ND_CHANGE_MOVED,
            key.as_str(),
            none,
            0,
            *doc,
            *to,
            *from,
            representative.as_str(),
            none,
            none,
        ),
        ChangeKind::RepresentativeChanged {
            cluster,
            previous,
            representative,
        } => (
            ND_CHANGE_REPRESENTATIVE_CHANGED,
            none,
            none,
            0,
            0,
            *cluster,
            *cluster,
            representative.as_str(),
            previous.as_str(),
            none,
        ),
    };
    let [k, h, r, p, t] = &mut c.strings;
    let (key, key_len) = hold(k, key);
    let (host, host_len) = hold(h, host);
    let (representative, representative_len) = hold(r, rep);
    let (previous, previous_len) = hold(p, previous);
    let (text, text_len) = hold(t, text);
    c.bytes = change.to_bytes();
    nd_change {
        seq: change.seq,
        committed_ms: change.committed_ms,
        kind,
        key,
        key_len,
        host,
        host_len,
        time,
        doc,
        cluster,
        from_cluster: from,
        representative,
        representative_len,
        previous,
        previous_len,
        text,
        text_len,
        bytes: c.bytes.as_ptr(),
        bytes_len: c.bytes.len(),
    }
}

/// Moves a changes cursor to its next change. On `ND_OK`, `*has_item` says whether there was
/// one and, when true, `*item` is filled (its strings and bytes owned by the cursor, valid until
/// the next call on it). At the end, `*has_item` is false (and stays false).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE` and `ND_CORRUPTION` from a read (the cursor then ends),
/// `ND_WRONG_PROCESS` on a cursor inherited over `fork`.
///
/// # Safety
/// `c` is NULL or a live cursor used by no other thread; `item` and `has_item` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn nd_changes_next(
    c: *mut nd_changes,
    item: *mut nd_change,
    has_item: *mut bool,
) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let c =
            unsafe { c.as_mut() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "cursor is NULL"))?;
        check_process(c.pid)?;
        let out = out_arg(item, "item")?;
        let has_item = out_arg(has_item, "has_item")?;
        let next = c.cell.with_dependent_mut(|_, d| d.next()).transpose()?;
        let filled = next.map(|change| self::item(c, &change));
        // SAFETY: checked non-null, writable per the contract.
        unsafe {
            match filled {
                None => *has_item = false,
                Some(it) => {
                    *out = it;
                    *has_item = true;
                }
            }
        }
        Ok(())
    })
}

/// The sequence number of the last change a changes cursor lists (the last committed when it
/// was opened): a follower that read them all opens the next cursor from it.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `c` is NULL or a live cursor used by no other thread; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_changes_last(c: *const nd_changes, out: *mut u64) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let c =
            unsafe { c.as_ref() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "cursor is NULL"))?;
        check_process(c.pid)?;
        let out = out_arg(out, "out")?;
        let last = c.cell.with_dependent(|_, d| d.last_change());
        // SAFETY: checked non-null, writable per the contract.
        unsafe { *out = last };
        Ok(())
    })
}

/// Releases a changes cursor. Accepts NULL. On a cursor inherited over `fork` (in the child) it
/// does nothing.
///
/// # Safety
/// `c` is NULL or a live cursor, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn nd_changes_free(c: *mut nd_changes) {
    guard_void(|| {
        if c.is_null() {
            return;
        }
        // SAFETY: a live cursor per the contract; only its immutable `pid` is read.
        if is_foreign(unsafe { (*c).pid }) {
            return;
        }
        // SAFETY: made by Box::into_raw in `nd_index_changes`; freed once per the contract.
        drop(unsafe { Box::from_raw(c) });
    })
}

/// The sequence number of the index's last committed change (0 when there is none): a copy
/// made now (a checkpoint) follows the index from it.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_last_change(h: *const nd_index, out: *mut u64) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = ix.last_change();
            Ok(())
        })
    }
}

/// Applies a change of another index's feed (`nd_change::bytes`, `len` bytes) to this index, a
/// copy of that one, in one atomic write: decided again from what the change kept, with the ids
/// the original gave out. Applied in sequence order to a copy that started empty with the
/// original (or from a checkpoint of it and its last change) under the same options, the copy
/// holds what the original holds, and its feed is the original's (each change recorded as it is,
/// under its number: its last change, `nd_index_last_change`, is where it follows from).
///
/// # Errors
/// `ND_INVALID_ARGUMENT` when the bytes are not a change, the change is not this copy's next one,
/// or it does not apply as it did where it was made (nothing is written), `ND_NULL_POINTER`, `ND_READ_ONLY`, `ND_POISONED`,
/// `ND_STORAGE`, `ND_CORRUPTION`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `bytes` points at `len` readable bytes (or is NULL with `len` 0).
#[no_mangle]
pub unsafe extern "C" fn nd_index_apply_change(
    h: *const nd_index,
    bytes: *const u8,
    len: usize,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let b = bytes_arg(bytes, len, "bytes")?;
            let change = Change::from_bytes(b)?;
            ix.apply_change(&change).map_err(Fail::from)
        })
    }
}

// A cursor may move between threads.
const _: () = {
    const fn send<T: Send>() {}
    send::<nd_changes>();
};
