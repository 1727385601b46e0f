//! Fuzzing the newer C ABI entry points with random arguments (`tests/ffi_random.rs` covers
//! insert, query, delete, representative and cluster members): `nd_index_get`,
//! `nd_index_delete` with an `nd_deletion`, the cursors (`nd_index_clusters`, `nd_index_members`,
//! `nd_index_keys`, `nd_cursor_next`, `nd_cursor_free`, a cursor freed early),
//! `nd_index_query_batch` with and without messages, `nd_index_open_read_only`,
//! `nd_index_config_json`, `nd_stored_config_json`, `nd_set_log_callback`, and `nd_index_near` /
//! `nd_index_near_page` with `nd_near_options` set to any k, threshold and score — with NULL
//! out-parameters, keys of any bytes, unknown cluster ids and levels, paths that name nothing,
//! a file or the open index. Every call returns one of its documented statuses, never
//! `ND_PANIC`; the strings handed out are UTF-8 of the length given; the index stays
//! check-clean. Run longer with `scripts/fuzz.sh SECONDS`.

mod fuzz_support;

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use fuzz_support::fuzz;
use neardup::ffi::nd_status::*;
use neardup::ffi::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert {
        key: Vec<u8>,
        content: usize,
    },
    Get {
        key: Vec<u8>,
        null_out: bool,
    },
    Delete {
        key: Vec<u8>,
        with_out: bool,
    },
    Cursor {
        kind: u8,
        cluster: u32,
        steps: usize,
        null_item: bool,
    },
    QueryBatch {
        pages: Vec<(Vec<u8>, u32)>,
        messages: bool,
    },
    ConfigJson {
        null_out: bool,
    },
    StoredConfigJson {
        path: Target,
    },
    OpenReadOnly {
        path: Target,
    },
    SetLog {
        callback: bool,
        level: u32,
    },
    Near {
        content: Vec<u8>,
        kind: u32,
        /// `nd_index_near_page` with this key; `nd_index_near` when none.
        page_key: Option<Vec<u8>>,
        k: usize,
        threshold: f64,
        by: u32,
        null_opts: bool,
        null_out: bool,
    },
}

/// A path argument: the open index, a checkpoint of it, a file, or a name of any bytes (no `/`
/// or `.`, so it stays inside the test's directory) that is nothing.
#[derive(Debug, Clone)]
enum Target {
    Index,
    Checkpoint,
    File,
    Nothing(Vec<u8>),
}

const PAGES: [&str; 4] = [
    "<html><body><article><p>The river rose two metres overnight, and the council closed the old \
     bridge before dawn. Engineers will inspect its piers once the water falls.</p></article></body></html>",
    "<html><body><article><p>Engineers will inspect the piers of the old bridge once the water \
     falls, the mayor said. The river rose two metres overnight.</p></article></body></html>",
    "<p>西湖的春天来得很早，柳树发芽，桃花盛开。游客们沿着苏堤散步，拍照留念。</p>",
    "Short.",
];

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "k[0-5]".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..12),
    ]
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        Just(Target::Index),
        Just(Target::Checkpoint),
        Just(Target::File),
        prop::collection::vec(
            any::<u8>().prop_filter("no / or .", |b| *b != b'/' && *b != b'.'),
            0..10
        )
        .prop_map(Target::Nothing),
    ]
}

/// A page's content: one of the test pages, or any bytes.
fn content_arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0..PAGES.len()).prop_map(|i| PAGES[i].as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..200),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let content = content_arg();
    prop_oneof![
        2 => (key(), 0..PAGES.len()).prop_map(|(key, content)| Op::Insert { key, content }),
        2 => (key(), any::<bool>()).prop_map(|(key, null_out)| Op::Get { key, null_out }),
        2 => (key(), any::<bool>()).prop_map(|(key, with_out)| Op::Delete { key, with_out }),
        3 => (0u8..4, prop_oneof![0u32..8, any::<u32>()], 0usize..8, prop::bool::weighted(0.1))
            .prop_map(|(kind, cluster, steps, null_item)| Op::Cursor { kind, cluster, steps, null_item }),
        2 => (prop::collection::vec((content, 0u32..3), 0..4), any::<bool>())
            .prop_map(|(pages, messages)| Op::QueryBatch { pages, messages }),
        1 => any::<bool>().prop_map(|null_out| Op::ConfigJson { null_out }),
        1 => target().prop_map(|path| Op::StoredConfigJson { path }),
        1 => target().prop_map(|path| Op::OpenReadOnly { path }),
        1 => (any::<bool>(), 0u32..7).prop_map(|(callback, level)| Op::SetLog { callback, level }),
        2 => (
            content_arg(),
            0u32..3,
            prop::option::of(key()),
            prop_oneof![Just(0usize), 1usize..4, Just(usize::MAX)],
            prop_oneof![Just(0.0), Just(1.0), -0.5f64..1.5, Just(f64::NAN)],
            0u32..3,
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(content, kind, page_key, k, threshold, by, null_opts, null_out)| {
                Op::Near { content, kind, page_key, k, threshold, by, null_opts, null_out }
            }),
    ]
}

static LOGGED: AtomicU64 = AtomicU64::new(0);

unsafe extern "C-unwind" fn log_cb(_user: *mut c_void, level: u32, msg: *const u8, len: usize) {
    // SAFETY: the library passes `len` readable bytes, valid during the call.
    let bytes = unsafe { std::slice::from_raw_parts(msg, len) };
    assert!((1..=4).contains(&level) && std::str::from_utf8(bytes).is_ok());
    LOGGED.fetch_add(1, Ordering::Relaxed);
}

fn last_error() -> String {
    // SAFETY: nd_last_error gives a NUL-terminated string valid until the next call here.
    unsafe { CStr::from_ptr(nd_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// An `nd_str` the library handed out: UTF-8 of its length, NUL after it.
unsafe fn check_str(s: &nd_str) -> Result<(), TestCaseError> {
    if s.ptr.is_null() {
        prop_assert_eq!(s.len, 0);
        return Ok(());
    }
    // SAFETY: the library gives `len` bytes and a NUL at `ptr`.
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len + 1) };
    prop_assert_eq!(bytes[s.len], 0);
    prop_assert!(std::str::from_utf8(&bytes[..s.len]).is_ok());
    Ok(())
}

fn expect(op: &Op, status: nd_status, allowed: &[nd_status]) -> Result<(), TestCaseError> {
    prop_assert!(
        status != ND_PANIC && allowed.contains(&status),
        "{:?} gave {:?}: {}",
        op,
        status,
        last_error()
    );
    Ok(())
}

struct Fixture {
    _dir: tempfile::TempDir,
    index: String,
    checkpoint: String,
    file: String,
    base: String,
    ix: *mut nd_index,
}

impl Fixture {
    fn path(&self, t: &Target) -> Vec<u8> {
        match t {
            Target::Index => self.index.clone().into_bytes(),
            Target::Checkpoint => self.checkpoint.clone().into_bytes(),
            Target::File => self.file.clone().into_bytes(),
            Target::Nothing(name) => [self.base.as_bytes(), b"/n-", name].concat(),
        }
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().to_str().expect("UTF-8 path").to_string();
    let index = format!("{base}/ix");
    let checkpoint = format!("{base}/snap");
    let file = format!("{base}/file");
    std::fs::write(&file, b"not an index").expect("write");
    let mut opts = ptr::null_mut();
    let mut ix = ptr::null_mut();
    // SAFETY: pointers to live locals, lengths of the buffers given.
    unsafe {
        assert_eq!(nd_options_new(&mut opts), ND_OK);
        assert_eq!(nd_options_set_sync_writes(opts, false), ND_OK);
        assert_eq!(
            nd_index_open(index.as_ptr().cast(), index.len(), opts, &mut ix),
            ND_OK
        );
        nd_options_free(opts);
        for (i, p) in PAGES.iter().enumerate() {
            let key = format!("k{i}");
            insert(ix, key.as_bytes(), p.as_bytes());
        }
        assert_eq!(
            nd_index_checkpoint(ix, checkpoint.as_ptr().cast(), checkpoint.len()),
            ND_OK
        );
    }
    Fixture {
        _dir: dir,
        index,
        checkpoint,
        file,
        base,
        ix,
    }
}

unsafe fn insert(ix: *mut nd_index, key: &[u8], content: &[u8]) -> nd_status {
    let page = nd_page {
        key: key.as_ptr().cast(),
        key_len: key.len(),
        url: ptr::null(),
        url_len: 0,
        host: ptr::null(),
        host_len: 0,
        time: 0,
        content: content.as_ptr(),
        content_len: content.len(),
        content_kind: ND_CONTENT_HTML,
    };
    // SAFETY: a zeroed verdict is the documented initial state; the page's buffers are live.
    unsafe {
        let mut v: nd_verdict = std::mem::zeroed();
        let s = nd_index_insert(ix, &page, &mut v);
        nd_verdict_free(&mut v);
        s
    }
}

const KEY_ERRORS: &[nd_status] = &[ND_OK, ND_NOT_FOUND, ND_INVALID_UTF8, ND_NULL_POINTER];
const PATH_ERRORS: &[nd_status] = &[
    ND_OK,
    ND_INVALID_UTF8,
    ND_INVALID_ARGUMENT,
    ND_STORAGE,
    ND_IO,
    ND_ALREADY_OPEN,
    ND_CORRUPTION,
];

/// One call (or a few, for a cursor and a read-only handle) on the fixture's index.
unsafe fn call(fx: &Fixture, op: &Op) -> Result<(), TestCaseError> {
    let ix = fx.ix;
    // SAFETY (the whole body): every pointer handed over points at a live local or buffer of
    // the length given, or is NULL where the function accepts NULL; everything the library
    // fills is freed with its _free function.
    unsafe {
        match op {
            Op::Insert { key, content } => {
                let s = insert(ix, key, PAGES[*content].as_bytes());
                expect(op, s, &[ND_OK, ND_INVALID_UTF8, ND_INVALID_ARGUMENT])?;
            }
            Op::Get { key, null_out } => {
                let mut r: nd_record = std::mem::zeroed();
                let out = if *null_out {
                    ptr::null_mut()
                } else {
                    &mut r as *mut _
                };
                let s = nd_index_get(ix, key.as_ptr().cast(), key.len(), out);
                expect(op, s, KEY_ERRORS)?;
                if s == ND_OK {
                    prop_assert_eq!(check_str(&r.key).is_ok(), true);
                    prop_assert_eq!(
                        std::slice::from_raw_parts(r.key.ptr.cast::<u8>(), r.key.len),
                        &key[..]
                    );
                    check_str(&r.representative)?;
                    check_str(&r.similar_to)?;
                    check_str(&r.host)?;
                }
                nd_record_free(&mut r);
            }
            Op::Delete { key, with_out } => {
                let mut d: nd_deletion = std::mem::zeroed();
                let out = if *with_out {
                    &mut d as *mut _
                } else {
                    ptr::null_mut()
                };
                let s = nd_index_delete(ix, key.as_ptr().cast(), key.len(), out);
                expect(op, s, KEY_ERRORS)?;
                if s == ND_OK && *with_out {
                    check_str(&d.representative)?;
                    prop_assert!(d.moved_len == 0 || !d.moved.is_null());
                    for m in std::slice::from_raw_parts(d.moved, d.moved_len) {
                        check_str(&m.key)?;
                        check_str(&m.representative)?;
                    }
                }
                nd_deletion_free(&mut d);
            }
            Op::Cursor {
                kind,
                cluster,
                steps,
                null_item,
            } => {
                let mut c = ptr::null_mut();
                let s = match kind {
                    0 => nd_index_clusters(ix, &mut c),
                    1 => nd_index_keys(ix, &mut c),
                    2 => nd_index_members(ix, *cluster, &mut c),
                    _ => nd_index_members(ix, *cluster, ptr::null_mut()),
                };
                expect(op, s, &[ND_OK, ND_NOT_FOUND, ND_NULL_POINTER])?;
                for _ in 0..*steps {
                    let mut item: nd_cursor_item = std::mem::zeroed();
                    let mut has = false;
                    let item_ptr = if *null_item {
                        ptr::null_mut()
                    } else {
                        &mut item as *mut _
                    };
                    let s = nd_cursor_next(c, item_ptr, &mut has);
                    expect(op, s, &[ND_OK, ND_NULL_POINTER])?;
                    if s != ND_OK || !has {
                        break;
                    }
                    let k = std::slice::from_raw_parts(item.key.cast::<u8>(), item.key_len + 1);
                    prop_assert_eq!(k[item.key_len], 0);
                    prop_assert!(std::str::from_utf8(&k[..item.key_len]).is_ok());
                }
                nd_cursor_free(c);
            }
            Op::QueryBatch { pages, messages } => {
                let ps: Vec<nd_page> = pages
                    .iter()
                    .map(|(content, kind)| nd_page {
                        key: ptr::null(),
                        key_len: 0,
                        url: ptr::null(),
                        url_len: 0,
                        host: ptr::null(),
                        host_len: 0,
                        time: 0,
                        content: content.as_ptr(),
                        content_len: content.len(),
                        content_kind: *kind,
                    })
                    .collect();
                let mut verdicts: Vec<nd_verdict> =
                    (0..ps.len()).map(|_| std::mem::zeroed()).collect();
                let mut statuses = vec![ND_PANIC; ps.len()];
                let mut msgs: Vec<nd_str> = (0..ps.len()).map(|_| std::mem::zeroed()).collect();
                let msg_ptr = if *messages {
                    msgs.as_mut_ptr()
                } else {
                    ptr::null_mut()
                };
                let s = nd_index_query_batch(
                    ix,
                    ps.as_ptr(),
                    ps.len(),
                    verdicts.as_mut_ptr(),
                    statuses.as_mut_ptr(),
                    msg_ptr,
                );
                expect(op, s, &[ND_OK, ND_NULL_POINTER, ND_INVALID_ARGUMENT])?;
                if s == ND_OK {
                    for (i, st) in statuses.iter().enumerate() {
                        expect(
                            op,
                            *st,
                            &[
                                ND_OK,
                                ND_INVALID_ARGUMENT,
                                ND_INVALID_UTF8,
                                ND_BINARY_PAGE,
                                ND_PAGE_TOO_LARGE,
                            ],
                        )?;
                        if *st != ND_OK && *messages {
                            prop_assert!(!msgs[i].ptr.is_null());
                        }
                        check_str(&msgs[i])?;
                    }
                }
                for (v, st) in verdicts.iter_mut().zip(&statuses) {
                    if *st == ND_OK {
                        check_str(&v.representative)?;
                        check_str(&v.similar_to)?;
                    }
                    nd_verdict_free(v);
                }
                for m in &mut msgs {
                    nd_str_free(m);
                }
            }
            Op::ConfigJson { null_out } => {
                let mut out: nd_str = std::mem::zeroed();
                let p = if *null_out {
                    ptr::null_mut()
                } else {
                    &mut out as *mut _
                };
                let s = nd_index_config_json(ix, p);
                expect(op, s, &[ND_OK, ND_NULL_POINTER])?;
                if s == ND_OK {
                    check_str(&out)?;
                    let json = std::slice::from_raw_parts(out.ptr.cast::<u8>(), out.len);
                    prop_assert!(serde_json::from_slice::<serde_json::Value>(json).is_ok());
                }
                nd_str_free(&mut out);
            }
            Op::StoredConfigJson { path } => {
                let p = fx.path(path);
                let mut out: nd_str = std::mem::zeroed();
                let s = nd_stored_config_json(p.as_ptr().cast(), p.len(), &mut out);
                expect(op, s, PATH_ERRORS)?;
                if matches!(path, Target::Checkpoint) {
                    prop_assert_eq!(s, ND_OK);
                }
                check_str(&out)?;
                nd_str_free(&mut out);
            }
            Op::OpenReadOnly { path } => {
                let p = fx.path(path);
                let mut ro = ptr::null_mut();
                let s = nd_index_open_read_only(p.as_ptr().cast(), p.len(), &mut ro);
                expect(op, s, PATH_ERRORS)?;
                if matches!(path, Target::Checkpoint) {
                    prop_assert_eq!(s, ND_OK, "{}", last_error());
                }
                if s == ND_OK {
                    prop_assert_eq!(insert(ro, b"k9", PAGES[0].as_bytes()), ND_READ_ONLY);
                    let mut d: nd_deletion = std::mem::zeroed();
                    prop_assert_eq!(
                        nd_index_delete(ro, b"k0".as_ptr().cast(), 2, &mut d),
                        ND_READ_ONLY
                    );
                    let mut r: nd_record = std::mem::zeroed();
                    let g = nd_index_get(ro, b"k1".as_ptr().cast(), 2, &mut r);
                    expect(op, g, &[ND_OK, ND_NOT_FOUND])?;
                    nd_record_free(&mut r);
                    prop_assert_eq!(nd_index_close(ro), ND_OK);
                    prop_assert_eq!(nd_index_close(ro), ND_CLOSED);
                    nd_index_free(ro);
                }
            }
            Op::SetLog { callback, level } => {
                let cb: nd_log_fn = if *callback { Some(log_cb) } else { None };
                let s = nd_set_log_callback(cb, ptr::null_mut(), *level);
                let ok = (1..=4).contains(level);
                expect(op, s, if ok { &[ND_OK] } else { &[ND_INVALID_ARGUMENT] })?;
            }
            Op::Near {
                content,
                kind,
                page_key,
                k,
                threshold,
                by,
                null_opts,
                null_out,
            } => near(
                ix,
                op,
                content,
                *kind,
                page_key.as_deref(),
                *k,
                *threshold,
                *by,
                *null_opts,
                *null_out,
            )?,
        }
    }
    Ok(())
}

/// `Op::Near`: the options are set (each refused value refused and left as it was), the call
/// returns a documented status, and a list keeps to the options that took.
#[allow(clippy::too_many_arguments)]
unsafe fn near(
    ix: *mut nd_index,
    op: &Op,
    content: &[u8],
    kind: u32,
    page_key: Option<&[u8]>,
    k: usize,
    threshold: f64,
    by: u32,
    null_opts: bool,
    null_out: bool,
) -> Result<(), TestCaseError> {
    let valid = |ok: bool| -> &'static [nd_status] {
        if ok {
            &[ND_OK]
        } else {
            &[ND_INVALID_ARGUMENT]
        }
    };
    let good_threshold = (0.0..=1.0).contains(&threshold);
    // SAFETY: the options and the list are locals freed below; the buffers are live.
    unsafe {
        let mut o = ptr::null_mut();
        prop_assert_eq!(nd_near_options_new(&mut o), ND_OK);
        expect(op, nd_near_options_set_k(o, k), valid(k > 0))?;
        expect(
            op,
            nd_near_options_set_threshold(o, threshold),
            valid(good_threshold),
        )?;
        expect(op, nd_near_options_set_by(o, by), valid(by < 2))?;
        // What the call runs with: the defaults but for the values that took.
        let (k, threshold, by) = if null_opts {
            (10, 0.0, ND_SCORE_RESEMBLE)
        } else {
            (
                if k > 0 { k } else { 10 },
                if good_threshold { threshold } else { 0.0 },
                if by < 2 { by } else { ND_SCORE_RESEMBLE },
            )
        };
        let opts: *const nd_near_options = if null_opts { ptr::null() } else { o };
        let mut list: nd_near_list = std::mem::zeroed();
        let out: *mut nd_near_list = if null_out { ptr::null_mut() } else { &mut list };
        let s = match page_key {
            None => nd_index_near(ix, content.as_ptr(), content.len(), kind, opts, out),
            Some(key) => {
                let page = nd_page {
                    key: key.as_ptr().cast(),
                    key_len: key.len(),
                    url: ptr::null(),
                    url_len: 0,
                    host: ptr::null(),
                    host_len: 0,
                    time: 0,
                    content: content.as_ptr(),
                    content_len: content.len(),
                    content_kind: kind,
                };
                nd_index_near_page(ix, &page, opts, out)
            }
        };
        expect(
            op,
            s,
            &[
                ND_OK,
                ND_NULL_POINTER,
                ND_INVALID_ARGUMENT,
                ND_INVALID_UTF8,
                ND_BINARY_PAGE,
                ND_PAGE_TOO_LARGE,
            ],
        )?;
        if null_out {
            prop_assert_eq!(s, ND_NULL_POINTER);
        }
        if s == ND_OK {
            prop_assert!(list.len <= k);
            prop_assert_eq!(list.items.is_null(), list.len == 0);
            for i in 0..list.len {
                let n = &*list.items.add(i);
                check_str(&n.key)?;
                check_str(&n.representative)?;
                prop_assert!((0.0..=1.0).contains(&n.resemble), "{:?}", n);
                prop_assert!((0.0..=1.0).contains(&n.contain), "{:?}", n);
                let score = if by == ND_SCORE_CONTAIN {
                    n.contain
                } else {
                    n.resemble
                };
                prop_assert!(score >= threshold, "{:?} under {}", n, threshold);
            }
        }
        nd_near_list_free(&mut list);
        nd_near_options_free(o);
    }
    Ok(())
}

#[test]
fn random_arguments_to_the_newer_entry_points() {
    let fx = fixture();
    fuzz(
        "ffi_arguments",
        800,
        prop::collection::vec(op(), 1..12),
        |ops| {
            for op in &ops {
                // SAFETY: the fixture's handle is live for the whole test.
                unsafe { call(&fx, op)? };
            }
            Ok(())
        },
    );
    // SAFETY: the handle is live; the report is freed.
    unsafe {
        assert_eq!(nd_set_log_callback(None, ptr::null_mut(), 1), ND_OK);
        let mut problems = u64::MAX;
        let mut report: nd_str = std::mem::zeroed();
        assert_eq!(nd_index_check(fx.ix, &mut problems, &mut report), ND_OK);
        nd_str_free(&mut report);
        assert_eq!(problems, 0);
        assert_eq!(nd_index_close(fx.ix), ND_OK);
        nd_index_free(fx.ix);
    }
}
