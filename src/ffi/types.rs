//! The plain structs of the C ABI and the library-owned buffers with their free functions.

use std::ffi::c_char;

use super::{bytes_arg, guard_void, str_arg, FfiResult};
use crate::{Content, Page, Verdict};

/// `content_kind` of a page whose content is HTML (decoded as UTF-8, or as its declared or
/// sniffed encoding).
pub const ND_CONTENT_HTML: u32 = 0;
/// `content_kind` of a page whose content is plain UTF-8 text (no extraction).
pub const ND_CONTENT_TEXT: u32 = 1;
/// The value of an id field that holds no id (no cluster, no document).
pub const ND_NO_ID: u32 = 0xFFFF_FFFF;
/// The value of `nd_verdict::seq` for a query (no page stored).
pub const ND_NO_SEQ: u64 = u64::MAX;

/// A string owned by the library: `len` bytes of UTF-8 at `ptr`, followed by a NUL byte that is
/// not counted (so `ptr` is also a C string when the text holds no NUL). `{NULL, 0}` is the
/// empty value. Free with [`nd_str_free`].
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_str {
    /// The bytes, or NULL.
    pub ptr: *mut c_char,
    /// The length in bytes, without the terminating NUL.
    pub len: usize,
}

impl nd_str {
    /// The empty value.
    pub(crate) const NONE: nd_str = nd_str {
        ptr: std::ptr::null_mut(),
        len: 0,
    };

    /// Copies a string into a library-owned buffer.
    pub(crate) fn from_str(s: &str) -> nd_str {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        let len = s.len();
        let raw = Box::into_raw(v.into_boxed_slice());
        nd_str {
            ptr: raw.cast(),
            len,
        }
    }

    pub(crate) fn from_opt(s: Option<&str>) -> nd_str {
        s.map_or(nd_str::NONE, nd_str::from_str)
    }

    /// Releases the buffer and leaves the empty value.
    ///
    /// # Safety
    /// `self` is empty or was made by [`nd_str::from_str`] and not released since.
    pub(crate) unsafe fn release(&mut self) {
        if !self.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(self.ptr.cast::<u8>(), self.len + 1);
            // SAFETY: `ptr` and `len + 1` are exactly the boxed slice `from_str` leaked.
            drop(unsafe { Box::from_raw(slice) });
        }
        *self = nd_str::NONE;
    }
}

/// Frees the buffer of an [`nd_str`] the library filled and resets it to `{NULL, 0}`. Accepts
/// NULL and the empty value, so freeing twice is harmless.
///
/// # Safety
/// `s` is NULL or points at an `nd_str` that is empty or was filled by the library.
#[no_mangle]
pub unsafe extern "C" fn nd_str_free(s: *mut nd_str) {
    guard_void(|| {
        // SAFETY: per the contract above.
        if let Some(s) = unsafe { s.as_mut() } {
            // SAFETY: as above.
            unsafe { s.release() }
        }
    })
}

/// A list of keys owned by the library. Free with [`nd_key_list_free`].
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_key_list {
    /// `len` keys, or NULL when `len` is 0.
    pub keys: *mut nd_str,
    /// Number of keys.
    pub len: usize,
}

impl nd_key_list {
    pub(crate) fn from_keys(keys: &[String]) -> nd_key_list {
        if keys.is_empty() {
            return nd_key_list {
                keys: std::ptr::null_mut(),
                len: 0,
            };
        }
        let v: Vec<nd_str> = keys.iter().map(|k| nd_str::from_str(k)).collect();
        let len = v.len();
        nd_key_list {
            keys: Box::into_raw(v.into_boxed_slice()).cast(),
            len,
        }
    }
}

/// Frees a key list the library filled (every key and the array) and resets it to `{NULL, 0}`.
/// Accepts NULL and the empty value.
///
/// # Safety
/// `list` is NULL or points at an `nd_key_list` that is empty or was filled by the library.
#[no_mangle]
pub unsafe extern "C" fn nd_key_list_free(list: *mut nd_key_list) {
    guard_void(|| {
        // SAFETY: per the contract above.
        let Some(list) = (unsafe { list.as_mut() }) else {
            return;
        };
        if !list.keys.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(list.keys, list.len);
            // SAFETY: exactly the boxed slice `from_keys` leaked.
            let mut keys = unsafe { Box::from_raw(slice) };
            for k in keys.iter_mut() {
                // SAFETY: each key was made by `nd_str::from_str`.
                unsafe { k.release() };
            }
        }
        list.keys = std::ptr::null_mut();
        list.len = 0;
    })
}

/// A page handed to the index. Every buffer is pointer + length, read only during the call, and
/// needs no NUL terminator; a NULL pointer is allowed with length 0.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy)]
pub struct nd_page {
    /// The external key (UTF-8, 1 to 65,536 bytes): unique in the index; inserting it again
    /// replaces the page.
    pub key: *const c_char,
    /// Length of `key` in bytes.
    pub key_len: usize,
    /// The page's URL (UTF-8, may be empty): used for the host when `host` is empty.
    pub url: *const c_char,
    /// Length of `url` in bytes.
    pub url_len: usize,
    /// The host (UTF-8, may be empty, at most 255 bytes): pages concentrated on few hosts mark
    /// template fingerprints.
    pub host: *const c_char,
    /// Length of `host` in bytes.
    pub host_len: usize,
    /// Publish time in Unix seconds, 0 when unknown.
    pub time: i64,
    /// The content: HTML bytes or UTF-8 text, as `content_kind` says.
    pub content: *const u8,
    /// Length of `content` in bytes.
    pub content_len: usize,
    /// [`ND_CONTENT_HTML`] or [`ND_CONTENT_TEXT`].
    pub content_kind: u32,
}

/// Reads the content of a page.
///
/// # Safety
/// `ptr` points at `len` readable bytes (or is NULL with `len == 0`).
pub(crate) unsafe fn content_arg<'a>(
    ptr: *const u8,
    len: usize,
    kind: u32,
) -> FfiResult<Content<'a>> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { bytes_arg(ptr, len, "content")? };
    match kind {
        ND_CONTENT_HTML => Ok(Content::Html(bytes)),
        ND_CONTENT_TEXT => Ok(Content::Text(super::utf8_arg(bytes, "text content")?)),
        other => Err(super::Fail::new(
            super::nd_status::ND_INVALID_ARGUMENT,
            format!("content_kind {other} is neither ND_CONTENT_HTML (0) nor ND_CONTENT_TEXT (1)"),
        )),
    }
}

/// Reads a page argument.
///
/// # Safety
/// `page` is NULL or points at a page whose buffers are readable for their lengths.
pub(crate) unsafe fn page_arg<'a>(page: *const nd_page) -> FfiResult<Page<'a>> {
    // SAFETY: per the contract.
    let page = unsafe { page.as_ref() }
        .ok_or_else(|| super::Fail::new(super::nd_status::ND_NULL_POINTER, "page is NULL"))?;
    // SAFETY: forwarded contract.
    unsafe { page.read() }
}

impl nd_page {
    /// The page as the library sees it.
    ///
    /// # Safety
    /// Every pointer of the page points at as many readable bytes as its length says.
    pub(crate) unsafe fn read<'a>(&self) -> FfiResult<Page<'a>> {
        // SAFETY: forwarded contract, field by field.
        let key = unsafe { str_arg(self.key, self.key_len, "key")? };
        // SAFETY: as above.
        let url = unsafe { str_arg(self.url, self.url_len, "url")? };
        // SAFETY: as above.
        let mut host = unsafe { str_arg(self.host, self.host_len, "host")? };
        if host.is_empty() {
            host = crate::index::host_of(url);
        }
        // SAFETY: as above.
        let content = unsafe { content_arg(self.content, self.content_len, self.content_kind)? };
        Ok(Page {
            key,
            host,
            time: self.time,
            content,
        })
    }
}

/// The answer for one page. The caller owns the struct; its strings and `replaced_page` are owned
/// by the library and freed with [`nd_verdict_free`]. Zero-initialize it (`nd_verdict v = {0};` or
/// `nd_verdict v{};`) so that freeing is safe whether or not a call filled it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_verdict {
    /// True when the page was verified similar to a page already held (`similar_to`); it joins
    /// that page's cluster only when it verifies against the cluster's representative too.
    pub duplicate: bool,
    /// True when the normalized texts of the page and `similar_to` are identical.
    pub exact: bool,
    /// True when the key was present and its page was replaced (insert only).
    pub replaced: bool,
    /// True when the page has (almost) no main text: stored in a cluster of its own, never
    /// compared, never a duplicate (ABI version 2).
    pub no_main_text: bool,
    /// True when the key was present with the same main text and host: nothing was decided
    /// again, and the verdict is the stored one (an unchanged recrawl; insert only; ABI version
    /// 3). The page's record was refreshed in place unless `unchanged_html` is true and the
    /// publish time is the same.
    pub unchanged: bool,
    /// When `replaced`: what taking the old page out changed, as `nd_index_delete` reports it
    /// (owned by the library, freed by `nd_verdict_free`); NULL otherwise (ABI version 4).
    pub replaced_page: *mut nd_deletion,
    /// The page's internal id, [`ND_NO_ID`] for a query.
    pub doc_id: u32,
    /// The cluster the page joined or founded; [`ND_NO_ID`] for a query that found no duplicate.
    pub cluster_id: u32,
    /// Length of the page's normalized main text, in characters (ABI version 3).
    pub text_chars: u32,
    /// The page's insertion number, [`ND_NO_SEQ`] for a query (ABI version 4): unique for the
    /// index's life — a replace gets a new one — and what `nd_text_request::seq` names.
    pub seq: u64,
    /// Key of the cluster's representative after the call (empty when `cluster_id` is
    /// [`ND_NO_ID`]).
    pub representative: nd_str,
    /// Key of the closest page this one was verified similar to, when a duplicate (else empty):
    /// the representative of the cluster it joined, or a member of any cluster.
    pub similar_to: nd_str,
    /// Resemble rate with `similar_to`, 0 to 1 (0 when not a duplicate).
    pub resemble: f64,
    /// Contain rate with `similar_to`, 0 to 1 (0 when not a duplicate).
    pub contain: f64,
    /// Key of a stored page whose main text is identical to this page's (the one of lowest id),
    /// whatever `similar_to` and the cluster say; empty when there is none and for pages without
    /// main text (ABI version 3).
    pub identical_to: nd_str,
    /// Candidate pages found.
    pub candidates: u64,
    /// Pairs verified.
    pub verified: u64,
    /// Nanoseconds spent on main text and signatures.
    pub signature_ns: u64,
    /// Nanoseconds spent gathering candidates.
    pub candidates_ns: u64,
    /// Nanoseconds spent verifying.
    pub verify_ns: u64,
    /// Nanoseconds spent writing (0 for a query).
    pub write_ns: u64,
    /// True when `unchanged` is true and the raw page is byte-identical to the one stored (the
    /// same content kind and bytes, by their hash); it implies `unchanged`. False when only the
    /// main text is the same (a navigation or footer change): the stored page hash and time
    /// were then updated in place. False too at the first recrawl of a page stored by a build
    /// that kept no page hash (ABI version 6).
    pub unchanged_html: bool,
}

impl nd_verdict {
    pub(crate) fn from_verdict(v: &Verdict) -> nd_verdict {
        let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        nd_verdict {
            duplicate: v.duplicate,
            exact: v.exact,
            replaced: v.replaced,
            no_main_text: v.no_main_text,
            unchanged: v.unchanged,
            replaced_page: match &v.replaced_page {
                Some(d) => Box::into_raw(Box::new(nd_deletion::from_deletion(d))),
                None => std::ptr::null_mut(),
            },
            doc_id: v.doc.unwrap_or(ND_NO_ID),
            cluster_id: v.cluster.unwrap_or(ND_NO_ID),
            text_chars: v.text_chars,
            seq: v.seq.unwrap_or(ND_NO_SEQ),
            representative: nd_str::from_opt(v.representative.as_deref()),
            similar_to: nd_str::from_opt(v.similar_to.as_deref()),
            resemble: v.resemble,
            contain: v.contain,
            identical_to: nd_str::from_opt(v.identical_to.as_deref()),
            candidates: v.candidates as u64,
            verified: v.verified as u64,
            signature_ns: ns(v.timing.signature),
            candidates_ns: ns(v.timing.candidates),
            verify_ns: ns(v.timing.verify),
            write_ns: ns(v.timing.write),
            unchanged_html: v.unchanged_html,
        }
    }
}

/// Frees the strings of a verdict the library filled and resets them to `{NULL, 0}`; the struct
/// itself belongs to the caller. Accepts NULL and zeroed verdicts, so freeing twice is harmless.
///
/// # Safety
/// `v` is NULL or points at a verdict that is zeroed or was filled by the library.
#[no_mangle]
pub unsafe extern "C" fn nd_verdict_free(v: *mut nd_verdict) {
    guard_void(|| {
        if v.is_null() {
            return;
        }
        // SAFETY: `v` points at a verdict (per the contract); only its string fields are
        // touched, so the other fields need not hold valid values.
        unsafe {
            (*std::ptr::addr_of_mut!((*v).representative)).release();
            (*std::ptr::addr_of_mut!((*v).similar_to)).release();
            (*std::ptr::addr_of_mut!((*v).identical_to)).release();
            let d = std::ptr::addr_of_mut!((*v).replaced_page);
            if !(*d).is_null() {
                let mut b = Box::from_raw(*d);
                b.release();
                *d = std::ptr::null_mut();
            }
        }
    })
}

/// A member moved to another cluster by a representative's delete.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_moved {
    /// The member's key.
    pub key: nd_str,
    /// The cluster it is in now.
    pub cluster_id: u32,
    /// That cluster's representative (its own key when it founded the cluster).
    pub representative: nd_str,
}

/// What a delete changed (ABI version 4). The caller owns the struct; the strings and the
/// `moved` array are the library's, freed by [`nd_deletion_free`]. Zero-initialize it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_deletion {
    /// The deleted page's internal id (free now).
    pub doc_id: u32,
    /// The cluster it was in.
    pub cluster_id: u32,
    /// True when it was that cluster's representative.
    pub was_representative: bool,
    /// True when the cluster is gone (it had no other member).
    pub cluster_gone: bool,
    /// The cluster's representative after the delete (the same page after a member's delete,
    /// the member the policy prefers after a representative's); empty when the cluster is gone.
    pub representative: nd_str,
    /// After a representative's delete, the members that no longer verified against the new
    /// representative, and where each went; NULL when `moved_len` is 0.
    pub moved: *mut nd_moved,
    /// Number of entries of `moved`.
    pub moved_len: usize,
}

impl nd_deletion {
    pub(crate) fn from_deletion(d: &crate::Deletion) -> nd_deletion {
        let moved: Vec<nd_moved> = d
            .moved
            .iter()
            .map(|m| nd_moved {
                key: nd_str::from_str(&m.key),
                cluster_id: m.cluster,
                representative: nd_str::from_str(&m.representative),
            })
            .collect();
        let moved_len = moved.len();
        nd_deletion {
            doc_id: d.doc,
            cluster_id: d.cluster,
            was_representative: d.was_representative,
            cluster_gone: d.representative.is_none(),
            representative: nd_str::from_opt(d.representative.as_deref()),
            moved: if moved.is_empty() {
                std::ptr::null_mut()
            } else {
                Box::into_raw(moved.into_boxed_slice()).cast()
            },
            moved_len,
        }
    }

    /// Releases the strings and the array and leaves empty values.
    ///
    /// # Safety
    /// `self` is zeroed or was made by [`nd_deletion::from_deletion`] and not released since.
    pub(crate) unsafe fn release(&mut self) {
        // SAFETY: per the contract.
        unsafe {
            self.representative.release();
            if !self.moved.is_null() {
                let slice = std::ptr::slice_from_raw_parts_mut(self.moved, self.moved_len);
                let mut moved = Box::from_raw(slice);
                for m in moved.iter_mut() {
                    m.key.release();
                    m.representative.release();
                }
            }
        }
        self.moved = std::ptr::null_mut();
        self.moved_len = 0;
    }
}

/// Frees what the library put in a deletion result and resets it. Accepts NULL and zeroed
/// values, so freeing twice is harmless.
///
/// # Safety
/// `d` is NULL or points at a deletion result that is zeroed or was filled by the library.
#[no_mangle]
pub unsafe extern "C" fn nd_deletion_free(d: *mut nd_deletion) {
    guard_void(|| {
        // SAFETY: per the contract.
        if let Some(d) = unsafe { d.as_mut() } {
            // SAFETY: as above.
            unsafe { d.release() }
        }
    })
}

/// A stored page as the index holds it (`nd_index_get`; ABI version 4). The caller owns the
/// struct; its strings are the library's, freed by [`nd_record_free`]. Zero-initialize it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct nd_record {
    /// The page's internal id.
    pub doc_id: u32,
    /// The cluster it is in.
    pub cluster_id: u32,
    /// Length of its normalized main text, in characters.
    pub text_chars: u32,
    /// True when it leads its cluster.
    pub is_representative: bool,
    /// Its insertion number: unique for the index's life, in insertion order.
    pub seq: u64,
    /// Its publish time, Unix seconds (0: unknown).
    pub time: i64,
    /// The high 64 bits of the hash of its normalized main text.
    pub content_hash_hi: u64,
    /// The low 64 bits of that hash.
    pub content_hash_lo: u64,
    /// Resemble rate with `similar_to` when placed (0 with none).
    pub resemble: f64,
    /// Contain rate with `similar_to` when placed (0 with none).
    pub contain: f64,
    /// The page's key.
    pub key: nd_str,
    /// Its cluster's representative.
    pub representative: nd_str,
    /// The page it was judged a near duplicate of when placed, while held; empty otherwise.
    pub similar_to: nd_str,
    /// The host it came from (may be empty).
    pub host: nd_str,
}

impl nd_record {
    pub(crate) fn from_record(r: &crate::Record) -> nd_record {
        nd_record {
            doc_id: r.doc,
            cluster_id: r.cluster,
            text_chars: r.text_chars,
            is_representative: r.representative == r.key,
            seq: r.seq,
            time: r.time,
            content_hash_hi: (r.content_hash >> 64) as u64,
            content_hash_lo: r.content_hash as u64,
            resemble: r.resemble,
            contain: r.contain,
            key: nd_str::from_str(&r.key),
            representative: nd_str::from_str(&r.representative),
            similar_to: nd_str::from_opt(r.similar_to.as_deref()),
            host: nd_str::from_str(&r.host),
        }
    }
}

/// Frees the strings of a record the library filled and resets them. Accepts NULL and zeroed
/// records, so freeing twice is harmless.
///
/// # Safety
/// `r` is NULL or points at a record that is zeroed or was filled by the library.
#[no_mangle]
pub unsafe extern "C" fn nd_record_free(r: *mut nd_record) {
    guard_void(|| {
        // SAFETY: per the contract.
        if let Some(r) = unsafe { r.as_mut() } {
            // SAFETY: each string is empty or library-made.
            unsafe {
                r.key.release();
                r.representative.release();
                r.similar_to.release();
                r.host.release();
            }
        }
    })
}

/// Figures about an index.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Default, Clone, Copy)]
pub struct nd_stats {
    /// Live pages.
    pub pages: u64,
    /// Live clusters.
    pub clusters: u64,
    /// Over-frequent fingerprints kept out of candidate generation.
    pub frequent_fingerprints: u64,
    /// Bytes on disk and in memtables, all column families.
    pub bytes: u64,
    /// Page ids given out so far: the high-water mark (ids of deleted pages are given out again
    /// first; ABI version 4).
    pub page_ids: u32,
    /// Cluster ids given out so far: the high-water mark (ABI version 4).
    pub cluster_ids: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_and_free_twice() {
        let mut s = nd_str::from_str("héllo");
        assert_eq!(s.len, 6);
        // SAFETY: made by from_str; NUL-terminated.
        let c = unsafe { std::ffi::CStr::from_ptr(s.ptr) };
        assert_eq!(c.to_str().ok(), Some("héllo"));
        // SAFETY: library-made, then empty.
        unsafe {
            nd_str_free(&mut s);
            nd_str_free(&mut s);
            nd_str_free(std::ptr::null_mut());
        }
        assert!(s.ptr.is_null());
    }

    #[test]
    fn key_lists_free_every_key() {
        let mut l = nd_key_list::from_keys(&["a".to_string(), "bc".to_string()]);
        assert_eq!(l.len, 2);
        // SAFETY: library-made.
        unsafe {
            assert_eq!((*l.keys.add(1)).len, 2);
            nd_key_list_free(&mut l);
            nd_key_list_free(&mut l);
        }
        assert!(l.keys.is_null());
        let mut empty = nd_key_list::from_keys(&[]);
        // SAFETY: empty value.
        unsafe { nd_key_list_free(&mut empty) };
    }
}
