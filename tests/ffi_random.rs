//! Random calls through the C ABI (the `extern "C"` functions, called from Rust): arbitrary bytes
//! as keys, hosts, URLs and pages, arbitrary content kinds, inserts, queries, deletes and
//! look-ups. Every call returns a documented status — never `ND_PANIC` — and the index stays
//! check-clean. (The toolchain here is stable-only, so this property test stands in for a
//! coverage-guided fuzzer of the FFI surface.)

use std::ptr;

use neardup::ffi::nd_status::*;
use neardup::ffi::*;
use proptest::prelude::*;

/// One call with its arguments.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        key: Vec<u8>,
        host: Vec<u8>,
        url: Vec<u8>,
        content: Vec<u8>,
        kind: u32,
    },
    Query {
        content: Vec<u8>,
        kind: u32,
    },
    Delete {
        key: Vec<u8>,
    },
    Representative {
        key: Vec<u8>,
    },
    Members {
        cluster: u32,
        offset: usize,
        limit: usize,
    },
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Mostly text the index will take…
        "[a-z0-9 ,.<>/=\"]{0,40}".prop_map(String::into_bytes),
        // …short keys that collide, so deletes and replaces happen…
        "k[0-3]".prop_map(String::into_bytes),
        // …and anything at all.
        prop::collection::vec(any::<u8>(), 0..max),
    ]
}

fn content() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes(300),
        (0..4usize).prop_map(|i| {
            let body = [
                "The river rose two metres overnight, and the council closed the old bridge \
                 before dawn. Engineers will inspect its piers once the water falls.",
                "Engineers will inspect the piers of the old bridge once the water falls, the \
                 mayor said. The river rose two metres overnight.",
                "西湖的春天来得很早，柳树发芽，桃花盛开。游客们沿着苏堤散步，拍照留念。",
                "Short.",
            ][i];
            format!("<html><body><article><p>{body}</p></article></body></html>").into_bytes()
        }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (bytes(20), bytes(20), bytes(30), content(), 0u32..3).prop_map(
            |(key, host, url, content, kind)| Op::Insert { key, host, url, content, kind }
        ),
        1 => (content(), 0u32..3).prop_map(|(content, kind)| Op::Query { content, kind }),
        2 => bytes(8).prop_map(|key| Op::Delete { key }),
        1 => bytes(8).prop_map(|key| Op::Representative { key }),
        1 => (0u32..6, 0usize..4, 0usize..4)
            .prop_map(|(cluster, offset, limit)| Op::Members { cluster, offset, limit }),
    ]
}

/// Statuses a call on good handles may return for bad input; anything else fails the test.
const EXPECTED: &[nd_status] = &[
    ND_OK,
    ND_INVALID_ARGUMENT,
    ND_INVALID_UTF8,
    ND_BINARY_PAGE,
    ND_NOT_FOUND,
    ND_PAGE_TOO_LARGE,
];

fn run(ops: &[Op]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ix");
    let path = path.to_str().expect("UTF-8 path");
    let mut opts = ptr::null_mut();
    let mut ix = ptr::null_mut();
    // SAFETY: every pointer below points at live locals for the length given; every value the
    // library fills is freed with its _free function.
    unsafe {
        assert_eq!(nd_options_new(&mut opts), ND_OK);
        assert_eq!(nd_options_set_sync_writes(opts, false), ND_OK);
        assert_eq!(
            nd_index_open(path.as_ptr().cast(), path.len(), opts, &mut ix),
            ND_OK
        );
        nd_options_free(opts);
        for op in ops {
            let status = match op {
                Op::Insert {
                    key,
                    host,
                    url,
                    content,
                    kind,
                } => {
                    let page = nd_page {
                        key: key.as_ptr().cast(),
                        key_len: key.len(),
                        url: url.as_ptr().cast(),
                        url_len: url.len(),
                        host: host.as_ptr().cast(),
                        host_len: host.len(),
                        time: 0,
                        content: content.as_ptr(),
                        content_len: content.len(),
                        content_kind: *kind,
                    };
                    let mut v: nd_verdict = std::mem::zeroed();
                    let s = nd_index_insert(ix, &page, &mut v);
                    if s == ND_OK {
                        assert!(v.cluster_id != ND_NO_ID && !v.representative.ptr.is_null());
                    }
                    nd_verdict_free(&mut v);
                    s
                }
                Op::Query { content, kind } => {
                    let mut v: nd_verdict = std::mem::zeroed();
                    let s = nd_index_query(ix, content.as_ptr(), content.len(), *kind, &mut v);
                    nd_verdict_free(&mut v);
                    s
                }
                Op::Delete { key } => {
                    nd_index_delete(ix, key.as_ptr().cast(), key.len(), std::ptr::null_mut())
                }
                Op::Representative { key } => {
                    let mut rep: nd_str = std::mem::zeroed();
                    let mut cluster = 0u32;
                    let s = nd_index_representative(
                        ix,
                        key.as_ptr().cast(),
                        key.len(),
                        &mut cluster,
                        &mut rep,
                    );
                    nd_str_free(&mut rep);
                    s
                }
                Op::Members {
                    cluster,
                    offset,
                    limit,
                } => {
                    let mut list: nd_key_list = std::mem::zeroed();
                    let s = nd_index_cluster_members(ix, *cluster, *offset, *limit, &mut list);
                    nd_key_list_free(&mut list);
                    s
                }
            };
            assert!(
                EXPECTED.contains(&status),
                "{op:?} gave {status:?}: {:?}",
                std::ffi::CStr::from_ptr(nd_last_error())
            );
        }
        let mut problems = u64::MAX;
        let mut report: nd_str = std::mem::zeroed();
        assert_eq!(nd_index_check(ix, &mut problems, &mut report), ND_OK);
        let text = if report.ptr.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(report.ptr)
                .to_string_lossy()
                .into_owned()
        };
        nd_str_free(&mut report);
        assert_eq!(problems, 0, "{text}");
        assert_eq!(nd_index_close(ix), ND_OK);
        nd_index_free(ix);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_calls_never_panic_and_keep_the_index_clean(ops in prop::collection::vec(op(), 1..40)) {
        run(&ops);
    }
}
