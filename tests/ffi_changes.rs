//! The change feed through the C ABI (issue #33, item 4): `nd_index_changes`,
//! `nd_changes_next`, `nd_changes_last`, `nd_changes_free`, `nd_index_last_change`,
//! `nd_index_apply_change` and `nd_options_set_change_retention`.
//!
//! - Called from Rust, the cursor gives what `Index::changes_since` gives (numbers, kinds, keys,
//!   clusters, representatives, texts, and bytes that read back as the same change).
//! - `tests/c/changes.c` drives the calls from C99 (`-pedantic -Wall -Wextra -Werror`): the
//!   feed of inserts, a replace, a new publish time and a representative's delete, applied to
//!   an empty copy that then holds the same pages; a trimmed feed, bad arguments and a closed
//!   handle give their statuses. It runs plainly, under ASan+UBSan and under valgrind; each run
//!   prints its "ok" line, exits 0 and writes nothing to stderr. The shared library is built by
//!   `cargo build --release` (the test command does it first); the test refuses a library older
//!   than the sources.

mod common;

use std::ptr;

use common::native::check_c_program;
use common::{family_page, page};
use neardup::ffi::nd_change_kind::*;
use neardup::ffi::nd_status::*;
use neardup::ffi::*;
use neardup::{Change, ChangeKind, Index, IndexOptions};

/// A string of an `nd_change`, copied out (checked NUL-terminated).
///
/// # Safety
/// `p` points at `len` bytes and a NUL, owned by a live cursor.
unsafe fn text(p: *const std::ffi::c_char, len: usize) -> String {
    // SAFETY: per the contract.
    unsafe {
        assert_eq!(*p.add(len), 0, "NUL-terminated");
        String::from_utf8(std::slice::from_raw_parts(p.cast::<u8>(), len).to_vec()).unwrap()
    }
}

#[test]
fn the_c_cursor_gives_the_rust_feed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ix");
    let path_s = path.to_str().unwrap();
    let mut h = ptr::null_mut();
    // SAFETY: every pointer handed over is live for its call; the handle is freed last.
    unsafe {
        let mut opts = ptr::null_mut();
        assert_eq!(nd_options_new(&mut opts), ND_OK);
        assert_eq!(nd_options_set_sync_writes(opts, false), ND_OK);
        assert_eq!(nd_options_set_change_retention(opts, 1000), ND_OK);
        assert_eq!(
            nd_options_set_change_retention(ptr::null_mut(), 1),
            ND_NULL_POINTER
        );
        assert_eq!(
            nd_index_open(path_s.as_ptr().cast(), path_s.len(), opts, &mut h),
            ND_OK
        );
        nd_options_free(opts);
    }
    // The writes, through Rust on the same database (closed and reopened by the handle after).
    // SAFETY: the handle is live.
    assert_eq!(unsafe { nd_index_close(h) }, ND_OK);
    // SAFETY: closed, not used again.
    unsafe { nd_index_free(h) };
    let expected: Vec<Change> = {
        let ix = Index::open(
            &path,
            IndexOptions {
                sync_writes: false,
                ..IndexOptions::default()
            },
        )
        .unwrap();
        for i in 0..9u64 {
            let (host, x) = family_page(i / 3, i % 3);
            ix.insert(&page(&format!("p{i}"), &host, &x)).unwrap();
        }
        let rep = ix.representative_of("p1").unwrap().unwrap().1;
        ix.delete(&rep).unwrap();
        ix.changes_since(0).unwrap().map(|c| c.unwrap()).collect()
    };
    assert!(expected
        .iter()
        .any(|c| matches!(c.kind, ChangeKind::RepresentativeChanged { .. })));
    let mut h = ptr::null_mut();
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            nd_index_open(path_s.as_ptr().cast(), path_s.len(), ptr::null(), &mut h),
            ND_OK
        );
        let mut last = 0;
        assert_eq!(nd_index_last_change(h, &mut last), ND_OK);
        assert_eq!(last, expected.len() as u64);
        let mut c = ptr::null_mut();
        assert_eq!(nd_index_changes(h, 0, &mut c), ND_OK);
        let mut got = Vec::new();
        loop {
            let mut item = std::mem::MaybeUninit::<nd_change>::uninit();
            let mut has = false;
            assert_eq!(nd_changes_next(c, item.as_mut_ptr(), &mut has), ND_OK);
            if !has {
                break;
            }
            // Written in full when there is an item.
            let item = item.assume_init();
            let bytes = std::slice::from_raw_parts(item.bytes, item.bytes_len);
            let change = Change::from_bytes(bytes).unwrap();
            assert_eq!(change.seq, item.seq);
            assert_eq!(change.committed_ms, item.committed_ms);
            let key = text(item.key, item.key_len);
            let rep = text(item.representative, item.representative_len);
            match &change.kind {
                ChangeKind::Inserted(p) => {
                    assert_eq!(item.kind, ND_CHANGE_INSERTED);
                    assert_eq!((key, rep), (p.key.clone(), p.representative.clone()));
                    assert_eq!(text(item.host, item.host_len), p.host);
                    assert_eq!(text(item.text, item.text_len), p.text);
                    assert_eq!((item.doc, item.cluster), (p.doc, p.cluster));
                }
                ChangeKind::Deleted {
                    key: k,
                    doc,
                    cluster,
                    ..
                } => {
                    assert_eq!(item.kind, ND_CHANGE_DELETED);
                    assert_eq!((&key, item.doc, item.cluster), (k, *doc, *cluster));
                }
                ChangeKind::RepresentativeChanged {
                    cluster,
                    previous,
                    representative,
                } => {
                    assert_eq!(item.kind, ND_CHANGE_REPRESENTATIVE_CHANGED);
                    assert_eq!(item.cluster, *cluster);
                    assert_eq!(&text(item.previous, item.previous_len), previous);
                    assert_eq!(&rep, representative);
                }
                ChangeKind::Moved { to, from, .. } => {
                    assert_eq!(item.kind, ND_CHANGE_MOVED);
                    assert_eq!((item.cluster, item.from_cluster), (*to, *from));
                }
                other => panic!("{other:?}"),
            }
            got.push(change);
        }
        let mut n = 0;
        assert_eq!(nd_changes_last(c, &mut n), ND_OK);
        assert_eq!(n, last);
        nd_changes_free(c);
        assert_eq!(got, expected);
        // Trimmed and ahead: statuses, `out` untouched.
        let mut c = ptr::null_mut();
        assert_eq!(nd_index_changes(h, last + 1, &mut c), ND_INVALID_ARGUMENT);
        assert!(c.is_null());
        assert_eq!(nd_index_close(h), ND_OK);
        nd_index_free(h);
    }
}

#[test]
fn c_program_follows_the_feed_plainly_under_sanitizers_and_valgrind() {
    check_c_program("changes");
}
