//! `nd_options`: the settings an index is opened with, and the text source callback.

use std::ffi::{c_char, c_void};

use super::nd_status::{self, *};

use super::{guard, guard_void, out_arg, Fail, FfiResult};
use crate::{IndexOptions, RepresentativePolicy};

mod keys;
mod verify;
pub use keys::*;
pub use verify::*;

/// Representative policy: the first page inserted leads its cluster (the default).
pub const ND_POLICY_FIRST_SEEN: u32 = 0;
/// Representative policy: the page with the earliest publish time leads.
pub const ND_POLICY_EARLIEST_TIME: u32 = 1;
/// Representative policy: the page with the longest main text leads.
pub const ND_POLICY_LONGEST_TEXT: u32 = 2;

/// Where the text source puts a page's content: pass it to [`nd_text_sink_put`].
#[allow(non_camel_case_types)]
pub struct nd_text_sink {
    pub(crate) content: Option<crate::SourcedContent>,
}

/// Which stored page the text source is asked for (ABI version 4): its key and the version the
/// index holds, so that a store keeping several versions of a page gives the inserted one.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct nd_text_request {
    /// The page's key (UTF-8, not NUL-terminated), valid during the call.
    pub key: *const c_char,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// The page's internal id.
    pub doc_id: u32,
    /// Its insertion number: unique for the index's life (a replace of the key gets a new one).
    pub seq: u64,
    /// The high 64 bits of the xxh3-128 hash of its normalized main text, as stored.
    pub content_hash_hi: u64,
    /// The low 64 bits of that hash.
    pub content_hash_lo: u64,
}

/// The text source callback: called with a page the index holds when it needs that page's text
/// (to verify a newcomer against it, or to re-verify members after a representative is
/// deleted). It hands the page's content, as it was inserted, to [`nd_text_sink_put`] and
/// returns true; it returns false when it does not have the page (the call that needed it then
/// fails with `ND_TEXT_UNAVAILABLE`, and nothing is stored: give the version of the page that
/// was inserted — `req` names it by insertion number and content hash — or the index refuses it
/// by its content hash). It is called from the threads that call into the index, several at
/// once, and from the library's worker threads (a batch query, a batch's pre-decisions): an
/// insert asks for the texts it needs before it takes the index's writer lock (a delete's
/// re-verification, and a batch's writer, still ask under it). It must not call into
/// any index (such calls return `ND_INVALID_ARGUMENT`; only `nd_text_sink_put` is for it) and
/// must not throw (mark it `noexcept`; an exception aborts).
///
/// **Lock order: the index may call the text source while it holds its writer lock. Never hold
/// a lock that the text source takes while calling into the index** (e.g. the engine's store
/// lock across `nd_index_insert` when the source takes the same lock to read the store): that
/// deadlocks. Take such a lock in the source only, or release it before calling the index.
#[allow(non_camel_case_types)]
pub type nd_text_fn = Option<
    unsafe extern "C-unwind" fn(
        user: *mut c_void,
        req: *const nd_text_request,
        sink: *mut nd_text_sink,
    ) -> bool,
>;

/// Options an index is opened with. Create with [`nd_options_new`], free with
/// [`nd_options_free`]; the index copies them, so they may be freed right after opening.
#[allow(non_camel_case_types)]
pub struct nd_options {
    pub(crate) opts: IndexOptions,
    pub(crate) text_source: Option<(RawTextFn, *mut c_void)>,
}

/// New options with the defaults (the papers' parameters; create the index when missing; sync
/// every write; texts stored in the index).
///
/// # Errors
/// `ND_NULL_POINTER` when `out` is NULL.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_options_new(out: *mut *mut nd_options) -> nd_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        let b = Box::new(nd_options {
            opts: IndexOptions::default(),
            text_source: None,
        });
        // SAFETY: checked non-null; writable per the contract.
        unsafe { *out = Box::into_raw(b) };
        Ok(())
    })
}

/// Frees options made by [`nd_options_new`]. Accepts NULL.
///
/// # Safety
/// `opts` is NULL or came from `nd_options_new` and was not freed before.
#[no_mangle]
pub unsafe extern "C" fn nd_options_free(opts: *mut nd_options) {
    guard_void(|| {
        if !opts.is_null() {
            // SAFETY: made by Box::into_raw in nd_options_new, freed once.
            drop(unsafe { Box::from_raw(opts) });
        }
    })
}

/// Applies a setter to options.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
unsafe fn set(opts: *mut nd_options, f: impl FnOnce(&mut nd_options) -> FfiResult) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let o = unsafe { opts.as_mut() }
            .ok_or_else(|| Fail::new(ND_NULL_POINTER, "options is NULL"))?;
        f(o)
    })
}

/// Applies a setter that cannot fail to options.
///
/// # Safety
/// As [`set`].
unsafe fn assign(opts: *mut nd_options, f: impl FnOnce(&mut nd_options)) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            f(o);
            Ok(())
        })
    }
}

fn invalid(msg: String) -> Fail {
    Fail::new(ND_INVALID_ARGUMENT, msg)
}

fn unit(name: &str, v: f64) -> FfiResult<f64> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(invalid(format!("{name} must be within 0 and 1, got {v}")))
    }
}

/// Create the index when the directory holds none (default true).
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_create_if_missing(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.create_if_missing = value) }
}

/// Sync the write-ahead log on every write, and once per batch before it returns (default
/// true): an acknowledged page survives a power loss. Off, writes are faster and survive process
/// crashes only.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_sync_writes(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.sync_writes = value) }
}

/// Treat pages whose headings name different model codes as never similar (default true).
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_heading_codes(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.heading_codes = value) }
}

/// Fold traditional Chinese to simplified before fingerprinting (default true; stored in the
/// index, must match when reopening).
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_fold_traditional(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.signature.fold_traditional = value) }
}

/// Fold traditional Chinese only in text written in Chinese, not in Japanese or Korean text
/// (kana or hangul a tenth of its CJK characters), whose kanji are not traditional Chinese
/// (default true; stored). An index made before this option folds every text and keeps doing
/// so whatever is set here.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_fold_only_chinese(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.signature.fold_only_chinese = value) }
}

/// Store each page's normalized text in the index (default true; stored, must match). Off,
/// the index keeps only signatures and asks the text source (`nd_options_set_text_source`)
/// for a page's content when it must verify against it.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_store_texts(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.store_texts = value) }
}

/// Under `ND_POLICY_FIRST_SEEN`, a representative keeps its cluster across a changed recrawl
/// (default true; not stored, may change from one opening to the next): when a new version of
/// the page that leads a cluster of other members verifies against the old version's text, it
/// leads that cluster in the same write, and only the members that do not verify against it
/// are placed again. Off, or when it does not verify, the member the policy prefers takes over
/// and the new version is decided as a new page. The other policies are not affected, nor is an
/// index that does not store texts.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_sticky_representative(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.sticky_representative = value) }
}

/// How many of the last changes the change feed keeps (`nd_index_changes`; default 100,000;
/// not stored, may change from one opening to the next): at least this many, trimmed from the
/// oldest in steps of an eighth of it. 0 keeps none (sequence numbers still advance, so a
/// follower learns it missed changes: `ND_CHANGES_TRIMMED`).
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_change_retention(
    opts: *mut nd_options,
    changes: u64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.change_retention = changes) }
}

/// No longer used (kept so that existing callers build): the index keeps no posting-key filter
/// of its own; RocksDB's filters, read through the block cache
/// (`nd_options_set_block_cache_bytes`), answer for the keys no page has.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_posting_filter_bytes(
    opts: *mut nd_options,
    bytes: u64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        #[allow(deprecated)]
        assign(opts, |o| {
            o.opts.posting_filter_bytes = usize::try_from(bytes).unwrap_or(usize::MAX)
        })
    }
}

/// The block cache, in bytes, shared by every column family: recently read blocks, the texts
/// read to verify, and the index and filter blocks of the table files (default 256 MiB). It
/// changes no decision.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_block_cache_bytes(
    opts: *mut nd_options,
    bytes: u64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        assign(opts, |o| {
            o.opts.block_cache_bytes = usize::try_from(bytes).unwrap_or(usize::MAX)
        })
    }
}

/// The memtables of all column families together, in bytes (default 256 MiB). It changes no
/// decision.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_write_buffer_bytes(
    opts: *mut nd_options,
    bytes: u64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        assign(opts, |o| {
            o.opts.write_buffer_bytes = usize::try_from(bytes).unwrap_or(usize::MAX)
        })
    }
}

/// How many table files are kept open (default 1,024; 0: all, each opened when the index
/// opens). It changes no decision.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_max_open_files(
    opts: *mut nd_options,
    files: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.max_open_files = files) }
}

/// Read a page's clause-sketch keys only when its content and fingerprint keys found no
/// candidate (default false): the sketch keys then join only pages the other keys left alone,
/// and no longer chain most of a crawl into one component of the candidate graph. It may change
/// from one opening to the next.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_sketch_fallback(
    opts: *mut nd_options,
    value: bool,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { assign(opts, |o| o.opts.sketch_fallback = value) }
}

/// Representative policy: [`ND_POLICY_FIRST_SEEN`], [`ND_POLICY_EARLIEST_TIME`] or
/// [`ND_POLICY_LONGEST_TEXT`] (stored in the index, must match when reopening).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for another value.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_representative_policy(
    opts: *mut nd_options,
    policy: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.opts.representative = match policy {
                ND_POLICY_FIRST_SEEN => RepresentativePolicy::FirstSeen,
                ND_POLICY_EARLIEST_TIME => RepresentativePolicy::EarliestTime,
                ND_POLICY_LONGEST_TEXT => RepresentativePolicy::LongestText,
                p => return Err(invalid(format!("unknown representative policy {p}"))),
            };
            Ok(())
        })
    }
}

/// The near-duplicate method, by name (ABI version 5; stored when the index is created, must
/// match on reopen): `lcs` (the default), `shingle`, `winnow`, `punct`, `agt`, `imatch`,
/// `imatch_multi`, `semantic`, `tfidf`, `topic`, `simhash` or `single_pass`, each with its
/// default parameters (see the README's "Methods").
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_INVALID_ARGUMENT` for an unknown name.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`; `name` points to `name_len` readable bytes (NULL only
/// with `name_len` 0).
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_method(
    opts: *mut nd_options,
    name: *const c_char,
    name_len: usize,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            let name = super::str_arg(name, name_len, "the method name")?;
            o.opts.signature.method = crate::Method::from_name(name).ok_or_else(|| {
                invalid(format!(
                    "unknown method {name:?}; the methods are {}",
                    crate::Method::NAMES.join(", ")
                ))
            })?;
            Ok(())
        })
    }
}

/// Maximum Hamming distance of simhash candidates: 1, 3 (default) or 7 (stored, must match).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for another value.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_simhash_max_distance(
    opts: *mut nd_options,
    distance: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            if ![1, 3, 7].contains(&distance) {
                return Err(invalid(format!(
                    "simhash max distance must be 1, 3 or 7, got {distance}"
                )));
            }
            o.opts.simhash_max_distance = distance;
            Ok(())
        })
    }
}

/// At most this many candidate clusters are verified per page, best first (default 8, at
/// least 1).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for 0.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_max_clusters_verified(
    opts: *mut nd_options,
    clusters: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            if clusters == 0 {
                return Err(invalid("max clusters verified must be at least 1".into()));
            }
            o.opts.max_clusters_verified = clusters as usize;
            Ok(())
        })
    }
}

/// Pages larger than this many bytes are refused with `ND_PAGE_TOO_LARGE` (default 16 MiB;
/// stored, must match).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for 0.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_max_page_bytes(
    opts: *mut nd_options,
    bytes: u64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            if bytes == 0 {
                return Err(invalid("max page bytes must be at least 1".into()));
            }
            o.opts.signature.max_page_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
            Ok(())
        })
    }
}

/// Over-frequent fingerprints (seed 000 §4.2): one carried by more than `max_pages` pages, or
/// by more than `few_hosts_pages` pages that sit on at most `few_hosts` hosts, is kept out of
/// candidate generation (defaults 10,000, 400, 8).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` when `few_hosts_pages` exceeds `max_pages`.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_frequent(
    opts: *mut nd_options,
    max_pages: u64,
    few_hosts_pages: u64,
    few_hosts: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            if few_hosts_pages > max_pages {
                return Err(invalid(format!(
                    "few_hosts_pages ({few_hosts_pages}) exceeds max_pages ({max_pages})"
                )));
            }
            o.opts.frequent.max_pages = max_pages;
            o.opts.frequent.few_hosts_pages = few_hosts_pages;
            o.opts.frequent.few_hosts = few_hosts as usize;
            Ok(())
        })
    }
}

/// Sets the text source: `callback(user, req, sink)` gives the content of a page the index
/// holds (see [`nd_text_fn`], and its **lock order** rule). Needed when texts are not stored
/// (`nd_options_set_store_texts(opts, false)`); ignored otherwise. Without it such an index
/// still opens — check, stats, export-like look-ups and deleting members work — but every call
/// that must verify against a held page fails with `ND_TEXT_UNAVAILABLE`. `user` is passed back as is;
/// it and the callback must stay valid, and be safe to call from several threads at once, until
/// the index is closed. A NULL callback removes the source.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`; `callback` follows the contract above.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_text_source(
    opts: *mut nd_options,
    callback: nd_text_fn,
    user: *mut c_void,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.text_source = callback.map(|cb| (cb, user));
            Ok(())
        })
    }
}

/// Hands a page's content to the index from inside a text source callback. The bytes are
/// copied. `kind` is `ND_CONTENT_HTML` or `ND_CONTENT_TEXT`, as when the page was inserted.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for an unknown kind, `ND_INVALID_UTF8` for text that
/// is not UTF-8.
///
/// # Safety
/// `sink` is the sink passed to the running callback; `content` points at `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn nd_text_sink_put(
    sink: *mut nd_text_sink,
    content: *const u8,
    len: usize,
    kind: u32,
) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let sink =
            unsafe { sink.as_mut() }.ok_or_else(|| Fail::new(ND_NULL_POINTER, "sink is NULL"))?;
        // SAFETY: per the contract.
        let c = unsafe { super::types::content_arg(content, len, kind)? };
        sink.content = Some(match c {
            crate::Content::Html(b) => crate::SourcedContent::Html(b.to_vec()),
            crate::Content::Text(t) => crate::SourcedContent::Text(t.to_string()),
        });
        Ok(())
    })
}

/// The text source callback without its `Option`.
pub(crate) type RawTextFn =
    unsafe extern "C-unwind" fn(*mut c_void, *const nd_text_request, *mut nd_text_sink) -> bool;

/// The text source of a handle, as the library's [`crate::TextSource`].
pub(crate) struct CallbackSource {
    pub(crate) callback: RawTextFn,
    pub(crate) user: *mut c_void,
}

// SAFETY: the caller promised (nd_options_set_text_source) that the callback and `user` may be
// used from any thread, at once, until the index is closed.
unsafe impl Send for CallbackSource {}
// SAFETY: as above.
unsafe impl Sync for CallbackSource {}

impl crate::TextSource for CallbackSource {
    fn content(&self, page: &crate::SourcedPage<'_>) -> Option<crate::SourcedContent> {
        let mut sink = nd_text_sink { content: None };
        let req = nd_text_request {
            key: page.key.as_ptr().cast(),
            key_len: page.key.len(),
            doc_id: page.doc,
            seq: page.seq,
            content_hash_hi: (page.content_hash >> 64) as u64,
            content_hash_lo: page.content_hash as u64,
        };
        // The source may run on a pool thread (a batch query): calls into an index from it are
        // refused there too, as on the calling thread.
        let _inside = super::depth::DepthGuard::enter();
        // SAFETY: the callback follows nd_text_fn's contract; req, the key and sink outlive the
        // call.
        let ok = unsafe { (self.callback)(self.user, &req, &mut sink) };
        if ok {
            sink.content
        } else {
            None
        }
    }
}
