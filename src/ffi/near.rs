//! Every near duplicate of a page through the C ABI (issue #33, item 7): `nd_near_options` (an
//! opaque handle with setters, as `nd_options`), `nd_index_near` and `nd_index_near_page`, and
//! the list they fill, `nd_near_list`, freed by `nd_near_list_free`.

use super::index::{nd_index, with_index};
use super::nd_status::{self, *};
use super::types::{content_arg, nd_page, nd_str, page_arg};
use super::{guard, guard_void, out_arg, Fail, FfiResult};
use crate::{NearDuplicate, NearOptions, Score};

/// `nd_near_options_set_by`: keep and order the near duplicates by their resemble rate (the
/// default).
pub const ND_SCORE_RESEMBLE: u32 = 0;
/// `nd_near_options_set_by`: keep and order the near duplicates by their contain rate (ABI
/// version 6).
pub const ND_SCORE_CONTAIN: u32 = 1;

/// What [`nd_index_near`] keeps and how many. Create with
/// [`nd_near_options_new`] (the defaults: at most 10, no threshold, by resemble), set with the
/// `nd_near_options_set_*` calls, free with [`nd_near_options_free`]; a call only reads them,
/// so one set may serve any number of calls, on any thread, as long as it is not changed
/// meanwhile.
#[allow(non_camel_case_types)]
pub struct nd_near_options {
    pub(crate) opts: NearOptions,
}

/// New near options with the defaults: `k` 10, `threshold` 0, by [`ND_SCORE_RESEMBLE`] (ABI
/// version 6).
///
/// # Errors
/// `ND_NULL_POINTER` when `out` is NULL.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_near_options_new(out: *mut *mut nd_near_options) -> nd_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        let b = Box::new(nd_near_options {
            opts: NearOptions::default(),
        });
        // SAFETY: checked non-null; writable per the contract.
        unsafe { *out = Box::into_raw(b) };
        Ok(())
    })
}

/// Frees near options made by [`nd_near_options_new`]. Accepts NULL.
///
/// # Safety
/// `opts` is NULL or came from `nd_near_options_new` and was not freed before.
#[no_mangle]
pub unsafe extern "C" fn nd_near_options_free(opts: *mut nd_near_options) {
    guard_void(|| {
        if !opts.is_null() {
            // SAFETY: made by Box::into_raw in nd_near_options_new, freed once.
            drop(unsafe { Box::from_raw(opts) });
        }
    })
}

/// Applies a setter to near options; the options are left as they were when it fails.
///
/// # Safety
/// `opts` is NULL or a live `nd_near_options`.
unsafe fn set(
    opts: *mut nd_near_options,
    f: impl FnOnce(&mut NearOptions) -> FfiResult,
) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let o = unsafe { opts.as_mut() }
            .ok_or_else(|| Fail::new(ND_NULL_POINTER, "near options is NULL"))?;
        let mut changed = o.opts;
        f(&mut changed)?;
        changed.validate()?;
        o.opts = changed;
        Ok(())
    })
}

/// At most this many near duplicates, the best first: at least 1 (default 10; `SIZE_MAX`: every
/// one found).
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL, `ND_INVALID_ARGUMENT` for 0 (the options are left as
/// they were).
///
/// # Safety
/// `opts` is NULL or a live `nd_near_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_near_options_set_k(opts: *mut nd_near_options, k: usize) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.k = k;
            Ok(())
        })
    }
}

/// Keep a near duplicate only when its score (see [`nd_near_options_set_by`]) is at least
/// `threshold`: inclusive, in `[0, 1]` (default 0: every page that verifies). Only pages that
/// verify under the index's thresholds are ever returned, so a threshold below them adds
/// nothing.
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL, `ND_INVALID_ARGUMENT` for a value outside `[0, 1]` or
/// NaN (the options are left as they were).
///
/// # Safety
/// `opts` is NULL or a live `nd_near_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_near_options_set_threshold(
    opts: *mut nd_near_options,
    threshold: f64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.threshold = threshold;
            Ok(())
        })
    }
}

/// The score the threshold applies to and the near duplicates are ordered by:
/// [`ND_SCORE_RESEMBLE`] (default) or [`ND_SCORE_CONTAIN`].
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL, `ND_INVALID_ARGUMENT` for another value.
///
/// # Safety
/// `opts` is NULL or a live `nd_near_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_near_options_set_by(opts: *mut nd_near_options, by: u32) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.by = match by {
                ND_SCORE_RESEMBLE => Score::Resemble,
                ND_SCORE_CONTAIN => Score::Contain,
                other => {
                    return Err(Fail::new(
                        ND_INVALID_ARGUMENT,
                        format!(
                            "unknown score {other}: ND_SCORE_RESEMBLE (0) or ND_SCORE_CONTAIN (1)"
                        ),
                    ))
                }
            };
            Ok(())
        })
    }
}

/// A stored page a probe verified similar to: one entry of an
/// [`nd_near_list`], whose strings the list owns.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_near_duplicate {
    /// The page's key.
    pub key: nd_str,
    /// Its internal id.
    pub doc_id: u32,
    /// The cluster it is in.
    pub cluster_id: u32,
    /// The key of that cluster's representative (its own key when it leads).
    pub representative: nd_str,
    /// Resemble rate of the probe with this page, 0 to 1 (1 when `exact`).
    pub resemble: f64,
    /// Contain rate of the probe with this page, 0 to 1 (1 when `exact`).
    pub contain: f64,
    /// True when the normalized texts of the probe and this page are identical.
    pub exact: bool,
}

/// The near duplicates of a page, best first: identical texts first, then by
/// the chosen score, then the other score, then by id. The caller owns the struct; the array
/// and its strings are the library's, freed by [`nd_near_list_free`]. Zero-initialize it
/// (`nd_near_list l = {0};`) so that freeing is safe whether or not a call filled it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_near_list {
    /// `len` near duplicates, or NULL when `len` is 0.
    pub items: *mut nd_near_duplicate,
    /// Number of near duplicates (0 when none was found).
    pub len: usize,
}

impl nd_near_list {
    fn from_near(found: &[NearDuplicate]) -> nd_near_list {
        if found.is_empty() {
            return nd_near_list {
                items: std::ptr::null_mut(),
                len: 0,
            };
        }
        let v: Vec<nd_near_duplicate> = found
            .iter()
            .map(|n| nd_near_duplicate {
                key: nd_str::from_str(&n.key),
                doc_id: n.doc,
                cluster_id: n.cluster,
                representative: nd_str::from_str(&n.representative),
                resemble: n.resemble,
                contain: n.contain,
                exact: n.exact,
            })
            .collect();
        let len = v.len();
        nd_near_list {
            items: Box::into_raw(v.into_boxed_slice()).cast(),
            len,
        }
    }
}

/// Frees what the library put in a near list (every string and the array) and resets it to
/// `{NULL, 0}`. Accepts NULL and the empty value, so freeing twice is harmless.
///
/// # Safety
/// `list` is NULL or points at an `nd_near_list` that is zeroed or was filled by the library.
#[no_mangle]
pub unsafe extern "C" fn nd_near_list_free(list: *mut nd_near_list) {
    guard_void(|| {
        // SAFETY: per the contract above.
        let Some(list) = (unsafe { list.as_mut() }) else {
            return;
        };
        if !list.items.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(list.items, list.len);
            // SAFETY: exactly the boxed slice `from_near` leaked.
            let mut items = unsafe { Box::from_raw(slice) };
            for n in items.iter_mut() {
                // SAFETY: each string was made by `nd_str::from_str`.
                unsafe {
                    n.key.release();
                    n.representative.release();
                }
            }
        }
        list.items = std::ptr::null_mut();
        list.len = 0;
    })
}

/// The options a call runs with: the caller's, or the defaults for NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_near_options`.
unsafe fn options_arg(opts: *const nd_near_options) -> NearOptions {
    // SAFETY: per the contract.
    unsafe { opts.as_ref() }.map_or_else(NearOptions::default, |o| o.opts)
}

/// Every stored page this content verifies similar to, best first: the
/// representatives of the clusters a query ranks (at most the index's max clusters verified)
/// and each one's best-sharing member, all verified with no early stop — not every member of
/// every cluster. At most `k` of them, each with its score at least `threshold` (see
/// `nd_near_options`; `opts` NULL: the defaults). `kind` is `ND_CONTENT_HTML` or
/// `ND_CONTENT_TEXT`. Nothing is stored; one snapshot is read. A content with (almost) no main
/// text has none. The `similar_to` of `nd_index_query`, when it names a page, is one of these,
/// with the same rates. As with `nd_index_query`, no site chrome learned for a host is dropped
/// (the content has no host): [`nd_index_near_page`] drops it.
///
/// On `ND_OK`, `*out` is overwritten (free a list before reusing it) and is freed with
/// [`nd_near_list_free`]; an empty list is `{NULL, 0}`.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_INVALID_ARGUMENT` (unknown content kind),
/// `ND_PAGE_TOO_LARGE`, `ND_BINARY_PAGE`, `ND_TEXT_UNAVAILABLE`, `ND_STORAGE`,
/// `ND_CORRUPTION`, `ND_CLOSED`, `ND_WRONG_PROCESS`.
///
/// # Safety
/// `h` is NULL or live; `content` points at `len` readable bytes; `opts` is NULL or live; `out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_near(
    h: *const nd_index,
    content: *const u8,
    len: usize,
    kind: u32,
    opts: *const nd_near_options,
    out: *mut nd_near_list,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            let c = content_arg(content, len, kind)?;
            let found = ix.near(c, &options_arg(opts))?;
            *out = nd_near_list::from_near(&found);
            Ok(())
        })
    }
}

/// [`nd_index_near`] for a page with its key and host: the site chrome learned
/// for the host (or the URL's host when `host` is empty) is dropped from it as
/// `nd_index_insert` would drop it. The key is checked but nothing is stored; when the key is
/// held, its stored version is not left out — it is one of the pages found when it still
/// verifies (identical, `exact`, when unchanged). The page's time is not used.
///
/// # Errors
/// As `nd_index_near`, and `ND_INVALID_ARGUMENT` for an empty key or one over 65,536 bytes, or a
/// host over 255 bytes.
///
/// # Safety
/// `h` is NULL or live; `page` is NULL or points at a page whose buffers are readable for their
/// lengths; `opts` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_near_page(
    h: *const nd_index,
    page: *const nd_page,
    opts: *const nd_near_options,
    out: *mut nd_near_list,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            let page = page_arg(page)?;
            let found = ix.near_page(&page, &options_arg(opts))?;
            *out = nd_near_list::from_near(&found);
            Ok(())
        })
    }
}

// The options may be shared by threads that only read them.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<nd_near_options>();
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_check_and_keep_the_old_value_on_failure() {
        let mut o = std::ptr::null_mut();
        // SAFETY: `o` is made by nd_near_options_new and freed once at the end.
        unsafe {
            assert_eq!(nd_near_options_new(&mut o), ND_OK);
            assert_eq!(nd_near_options_set_k(o, 3), ND_OK);
            assert_eq!(nd_near_options_set_k(o, 0), ND_INVALID_ARGUMENT);
            assert_eq!(nd_near_options_set_threshold(o, 1.0), ND_OK);
            assert_eq!(nd_near_options_set_threshold(o, 1.5), ND_INVALID_ARGUMENT);
            assert_eq!(
                nd_near_options_set_threshold(o, f64::NAN),
                ND_INVALID_ARGUMENT
            );
            assert_eq!(nd_near_options_set_threshold(o, -0.1), ND_INVALID_ARGUMENT);
            assert_eq!(nd_near_options_set_by(o, ND_SCORE_CONTAIN), ND_OK);
            assert_eq!(nd_near_options_set_by(o, 2), ND_INVALID_ARGUMENT);
            assert_eq!(
                (*o).opts,
                NearOptions {
                    k: 3,
                    threshold: 1.0,
                    by: Score::Contain
                }
            );
            assert_eq!(
                nd_near_options_set_k(std::ptr::null_mut(), 1),
                ND_NULL_POINTER
            );
            assert_eq!(
                nd_near_options_set_by(std::ptr::null_mut(), ND_SCORE_RESEMBLE),
                ND_NULL_POINTER
            );
            assert_eq!(nd_near_options_new(std::ptr::null_mut()), ND_NULL_POINTER);
            nd_near_options_free(o);
            nd_near_options_free(std::ptr::null_mut());
        }
    }

    #[test]
    fn lists_free_every_string_and_twice_is_harmless() {
        let found = vec![NearDuplicate {
            key: "a".into(),
            doc: 4,
            cluster: 2,
            representative: "r".into(),
            resemble: 0.5,
            contain: 0.75,
            exact: false,
        }];
        let mut l = nd_near_list::from_near(&found);
        assert_eq!(l.len, 1);
        // SAFETY: library-made, then empty.
        unsafe {
            let n = &*l.items;
            assert_eq!((n.doc_id, n.cluster_id, n.key.len), (4, 2, 1));
            nd_near_list_free(&mut l);
            nd_near_list_free(&mut l);
            nd_near_list_free(std::ptr::null_mut());
        }
        assert!(l.items.is_null() && l.len == 0);
        let empty = nd_near_list::from_near(&[]);
        assert!(empty.items.is_null() && empty.len == 0);
    }
}
