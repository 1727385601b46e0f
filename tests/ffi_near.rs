//! Every near duplicate of a page through the C ABI (issue #33, item 7): `nd_index_near`,
//! `nd_index_near_page`, the `nd_near_options_*` calls and `nd_near_list_free`.
//!
//! - Called from Rust, the lists equal what `Index::near` and `Index::near_page` give for the
//!   same index, probes and options (keys, ids, clusters, representatives, rates, order): the
//!   options reach the library as set. Bad options, NULL arguments, unknown kinds and a closed
//!   handle give their statuses, and `out` is not written on a failure.
//! - `tests/c/near.c` drives the calls from C99 (`-pedantic -Wall -Wextra -Werror`): the near
//!   copies of a page found with their scores, an unrelated page not, k and the inclusive
//!   threshold, bad k and threshold refused with `ND_INVALID_ARGUMENT`. It runs plainly, under
//!   ASan+UBSan and under valgrind; each run prints its "ok" line, exits 0 and writes nothing to
//!   stderr. The shared library is built by `cargo build --release` (the test command does it
//!   first); the test refuses a library older than the sources.

mod common;

use std::ptr;

use common::native::check_c_program;
use common::{article_rich, edited, html};
use neardup::ffi::nd_status::*;
use neardup::ffi::*;
use neardup::{Content, Index, IndexOptions, NearDuplicate, NearOptions, Page, Score};

/// One near duplicate as the C list holds it, copied out.
fn from_list(list: &nd_near_list) -> Vec<NearDuplicate> {
    if list.len == 0 {
        assert!(list.items.is_null());
        return Vec::new();
    }
    // SAFETY: a list the library filled: `len` entries, each string `len` bytes of UTF-8.
    unsafe {
        std::slice::from_raw_parts(list.items, list.len)
            .iter()
            .map(|n| {
                let s = |s: &nd_str| {
                    let b = std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len);
                    assert_eq!(*s.ptr.add(s.len), 0, "NUL-terminated");
                    String::from_utf8(b.to_vec()).expect("UTF-8")
                };
                NearDuplicate {
                    key: s(&n.key),
                    doc: n.doc_id,
                    cluster: n.cluster_id,
                    representative: s(&n.representative),
                    resemble: n.resemble,
                    contain: n.contain,
                    exact: n.exact,
                }
            })
            .collect()
    }
}

/// The options as the C caller sets them.
fn c_options(o: &NearOptions) -> *mut nd_near_options {
    let mut h = ptr::null_mut();
    // SAFETY: `h` is written by nd_near_options_new and live for the setters.
    unsafe {
        assert_eq!(nd_near_options_new(&mut h), ND_OK);
        assert_eq!(nd_near_options_set_k(h, o.k), ND_OK);
        assert_eq!(nd_near_options_set_threshold(h, o.threshold), ND_OK);
        let by = match o.by {
            Score::Resemble => ND_SCORE_RESEMBLE,
            Score::Contain => ND_SCORE_CONTAIN,
        };
        assert_eq!(nd_near_options_set_by(h, by), ND_OK);
    }
    h
}

fn last_error() -> String {
    // SAFETY: never NULL, valid until the next call on this thread.
    unsafe { std::ffi::CStr::from_ptr(nd_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn c_page<'a>(key: &'a str, host: &'a str, content: &'a str) -> nd_page {
    nd_page {
        key: key.as_ptr().cast(),
        key_len: key.len(),
        url: ptr::null(),
        url_len: 0,
        host: host.as_ptr().cast(),
        host_len: host.len(),
        time: 0,
        content: content.as_ptr(),
        content_len: content.len(),
        content_kind: ND_CONTENT_HTML,
    }
}

/// The pages stored: two unrelated articles and a near copy of the first.
fn stored() -> Vec<(&'static str, &'static str, String)> {
    let a = article_rich(1, 6);
    vec![
        ("a", "a.example", html(0, "A", &a)),
        ("b", "b.example", html(1, "B", &article_rich(2, 6))),
        ("e", "e.example", html(2, "A", &edited(&a, 11))),
    ]
}

/// The probes: one holding both articles, a near copy of the copy, an unrelated page, and the
/// first article itself.
fn probes() -> Vec<String> {
    let a = article_rich(1, 6);
    let both: Vec<String> = a.iter().chain(&article_rich(2, 6)).cloned().collect();
    vec![
        html(2, "AB", &both),
        html(1, "A", &edited(&edited(&a, 11), 12)),
        html(0, "C", &article_rich(99, 6)),
        html(0, "A", &a),
    ]
}

fn option_sets() -> Vec<NearOptions> {
    let all = NearOptions {
        k: usize::MAX,
        ..NearOptions::default()
    };
    vec![
        NearOptions::default(),
        NearOptions { k: 1, ..all },
        NearOptions {
            by: Score::Contain,
            ..all
        },
        NearOptions {
            threshold: 0.9,
            by: Score::Contain,
            ..all
        },
        NearOptions {
            threshold: 0.9,
            ..all
        },
    ]
}

#[test]
fn the_c_lists_are_the_rust_api_lists() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ix");
    let path_s = path.to_str().expect("UTF-8 path");
    let pages = stored();
    let probes = probes();
    let sets = option_sets();
    // From C: near for every probe and option set, near_page for the stored pages.
    let mut from_c = Vec::new();
    let mut pages_from_c = Vec::new();
    // SAFETY: every pointer points at live locals for the length given; every list the library
    // fills is freed with nd_near_list_free, every handle with its _free function.
    unsafe {
        let mut opts = ptr::null_mut();
        assert_eq!(nd_options_new(&mut opts), ND_OK);
        assert_eq!(nd_options_set_sync_writes(opts, false), ND_OK);
        let mut ix = ptr::null_mut();
        assert_eq!(
            nd_index_open(path_s.as_ptr().cast(), path_s.len(), opts, &mut ix),
            ND_OK
        );
        nd_options_free(opts);
        for (key, host, h) in &pages {
            let p = c_page(key, host, h);
            let mut v: nd_verdict = std::mem::zeroed();
            assert_eq!(nd_index_insert(ix, &p, &mut v), ND_OK, "{}", last_error());
            nd_verdict_free(&mut v);
        }
        for probe in &probes {
            for o in &sets {
                let h = c_options(o);
                let mut list: nd_near_list = std::mem::zeroed();
                let s = nd_index_near(
                    ix,
                    probe.as_ptr(),
                    probe.len(),
                    ND_CONTENT_HTML,
                    h,
                    &mut list,
                );
                assert_eq!(s, ND_OK, "{}", last_error());
                from_c.push(from_list(&list));
                nd_near_list_free(&mut list);
                nd_near_list_free(&mut list);
                nd_near_options_free(h);
            }
            // NULL options: the defaults.
            let mut list: nd_near_list = std::mem::zeroed();
            let s = nd_index_near(
                ix,
                probe.as_ptr(),
                probe.len(),
                ND_CONTENT_HTML,
                ptr::null(),
                &mut list,
            );
            assert_eq!(s, ND_OK);
            assert_eq!(from_list(&list), from_c[from_c.len() - sets.len()]);
            nd_near_list_free(&mut list);
        }
        for (key, host, h) in &pages {
            let p = c_page(key, host, h);
            let mut list: nd_near_list = std::mem::zeroed();
            assert_eq!(
                nd_index_near_page(ix, &p, ptr::null(), &mut list),
                ND_OK,
                "{}",
                last_error()
            );
            pages_from_c.push(from_list(&list));
            nd_near_list_free(&mut list);
        }
        assert_eq!(nd_index_close(ix), ND_OK);
        nd_index_free(ix);
    }
    // From Rust, on the same index.
    let ix = Index::open(
        &path,
        IndexOptions {
            sync_writes: false,
            ..IndexOptions::default()
        },
    )
    .expect("open");
    let mut from_rust = Vec::new();
    for probe in &probes {
        for o in &sets {
            from_rust.push(ix.near(Content::Html(probe.as_bytes()), o).expect("near"));
        }
    }
    assert_eq!(from_c, from_rust);
    for ((key, host, h), c) in pages.iter().zip(&pages_from_c) {
        let p = Page {
            key,
            host,
            time: 0,
            content: Content::Html(h.as_bytes()),
        };
        let r = ix
            .near_page(&p, &NearOptions::default())
            .expect("near_page");
        assert_eq!(c, &r);
        assert_eq!(r[0].key, *key, "a stored page finds itself first");
        assert!(r[0].exact);
    }
    // The scenario has something to compare: the two-article probe finds both and the copy of
    // the first (a member of its cluster, verified beside the representative), the near copy
    // finds the article and its copy, the unrelated page nothing.
    let n = sets.len();
    let keys = |i: usize| {
        let mut k: Vec<String> = from_rust[i].iter().map(|d| d.key.clone()).collect();
        k.sort();
        k
    };
    assert_eq!(keys(2), ["a", "b", "e"], "{:?}", from_rust[2]);
    assert_eq!(keys(n + 2), ["a", "e"], "{:?}", from_rust[n + 2]);
    assert!(from_rust[2 * n..3 * n].iter().all(Vec::is_empty));
    assert_eq!(from_rust[1].len(), 1);
    // Contained at 0.9 or more: both articles and the copy (99 % of it in the probe).
    assert!(from_rust[4].is_empty() && from_rust[3].len() == 3);
}

#[test]
fn bad_arguments_give_statuses_and_leave_out_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ix");
    let path_s = path.to_str().expect("UTF-8 path");
    let probe = probes().swap_remove(0);
    // SAFETY: as above; the sentinel list is never freed (the library never filled it).
    unsafe {
        let mut ix = ptr::null_mut();
        assert_eq!(
            nd_index_open(path_s.as_ptr().cast(), path_s.len(), ptr::null(), &mut ix),
            ND_OK
        );
        let mut o = ptr::null_mut();
        assert_eq!(nd_near_options_new(&mut o), ND_OK);
        assert_eq!(nd_near_options_set_k(o, 0), ND_INVALID_ARGUMENT);
        assert!(last_error().contains("k is 0"), "{}", last_error());
        for t in [-0.5, 1.000_001, f64::NAN, f64::INFINITY] {
            assert_eq!(nd_near_options_set_threshold(o, t), ND_INVALID_ARGUMENT);
        }
        assert_eq!(nd_near_options_set_threshold(o, 0.0), ND_OK);
        assert_eq!(nd_near_options_set_threshold(o, 1.0), ND_OK);
        assert_eq!(nd_near_options_set_by(o, 2), ND_INVALID_ARGUMENT);
        assert_eq!(nd_near_options_set_by(o, u32::MAX), ND_INVALID_ARGUMENT);
        assert_eq!(nd_near_options_set_k(ptr::null_mut(), 1), ND_NULL_POINTER);
        assert_eq!(
            nd_near_options_set_threshold(ptr::null_mut(), 0.5),
            ND_NULL_POINTER
        );
        assert_eq!(nd_near_options_set_by(ptr::null_mut(), 0), ND_NULL_POINTER);
        assert_eq!(nd_near_options_new(ptr::null_mut()), ND_NULL_POINTER);

        let sentinel = || nd_near_list {
            items: ptr::dangling_mut(),
            len: 77,
        };
        let untouched = |l: &nd_near_list| l.len == 77 && l.items == ptr::dangling_mut();
        let mut l = sentinel();
        let near =
            |h: *const nd_index, c: *const u8, len: usize, kind: u32, l: *mut nd_near_list| {
                nd_index_near(h, c, len, kind, o, l)
            };
        assert_eq!(
            near(ptr::null(), probe.as_ptr(), probe.len(), 0, &mut l),
            ND_NULL_POINTER
        );
        assert_eq!(
            near(ix, probe.as_ptr(), probe.len(), 9, &mut l),
            ND_INVALID_ARGUMENT
        );
        assert_eq!(near(ix, ptr::null(), 4, 0, &mut l), ND_NULL_POINTER);
        assert_eq!(near(ix, b"\xff".as_ptr(), 1, 1, &mut l), ND_INVALID_UTF8);
        assert_eq!(
            near(ix, b"\x01\x02\x03\x04\x05\x06".as_ptr(), 6, 0, &mut l),
            ND_BINARY_PAGE
        );
        assert_eq!(
            near(ix, probe.as_ptr(), probe.len(), 0, ptr::null_mut()),
            ND_NULL_POINTER
        );
        let empty_key = c_page("", "a.example", &probe);
        assert_eq!(
            nd_index_near_page(ix, &empty_key, o, &mut l),
            ND_INVALID_ARGUMENT
        );
        assert_eq!(
            nd_index_near_page(ix, ptr::null(), o, &mut l),
            ND_NULL_POINTER
        );
        let long_host = "h".repeat(300);
        let p = c_page("k", &long_host, &probe);
        assert_eq!(nd_index_near_page(ix, &p, o, &mut l), ND_INVALID_ARGUMENT);
        assert!(untouched(&l));
        // An empty index: an empty list, not an error; the empty content too.
        let mut e: nd_near_list = std::mem::zeroed();
        assert_eq!(near(ix, probe.as_ptr(), probe.len(), 0, &mut e), ND_OK);
        assert!(e.items.is_null() && e.len == 0);
        assert_eq!(near(ix, ptr::null(), 0, 0, &mut e), ND_OK);
        assert!(e.len == 0);
        nd_near_list_free(&mut e);
        nd_near_list_free(ptr::null_mut());
        assert_eq!(nd_index_close(ix), ND_OK);
        assert_eq!(near(ix, probe.as_ptr(), probe.len(), 0, &mut l), ND_CLOSED);
        assert!(untouched(&l));
        nd_index_free(ix);
        nd_near_options_free(o);
        nd_near_options_free(ptr::null_mut());
    }
}

#[test]
fn c_program_finds_the_near_duplicates_plainly_under_sanitizers_and_valgrind() {
    check_c_program("near");
}
