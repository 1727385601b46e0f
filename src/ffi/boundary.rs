//! The boundary itself: status codes and their names, the per-thread error message, the panic
//! guard every entry point runs under, and the checks of the arguments a caller passes.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::Error;

/// Version of the C ABI described by `include/neardup.h`. It changes whenever a declaration
/// changes incompatibly; compare it with [`nd_abi_version`] at start-up.
pub const ND_ABI_VERSION: u32 = 6;

/// Status of a C ABI call. Values are explicit and never reused for another meaning.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum nd_status {
    /// Success.
    ND_OK = 0,
    /// An argument is out of range: an empty key, an unknown constant, a bad option value.
    ND_INVALID_ARGUMENT = 1,
    /// A required pointer is NULL (or NULL with a non-zero length).
    ND_NULL_POINTER = 2,
    /// A key, host, URL, path or text page is not valid UTF-8.
    ND_INVALID_UTF8 = 3,
    /// The page is larger than the configured limit (16 MiB by default).
    ND_PAGE_TOO_LARGE = 4,
    /// The page is binary data, not HTML or text.
    ND_BINARY_PAGE = 5,
    /// No page with this key, or no such cluster.
    ND_NOT_FOUND = 6,
    /// RocksDB reported an error (the message says what neardup was doing).
    ND_STORAGE = 7,
    /// A stored value failed its checksum or could not be decoded.
    ND_CORRUPTION = 8,
    /// The index on disk has an on-disk format this build does not read.
    ND_INCOMPATIBLE_FORMAT = 9,
    /// The index was created with a configuration that differs from the options given.
    ND_INCOMPATIBLE_CONFIG = 10,
    /// A compacted snapshot failed its invariant check and was removed.
    ND_CHECK_FAILED = 11,
    /// An earlier write failed; the index refuses writes until it is reopened.
    ND_POISONED = 12,
    /// The index holds the maximum number of pages.
    ND_FULL = 13,
    /// A file-system error.
    ND_IO = 14,
    /// The handle was closed with `nd_index_close`.
    ND_CLOSED = 15,
    /// A bug inside neardup: a panic was caught at the boundary. The index stays consistent
    /// (nothing half-written is committed); the message says where.
    ND_PANIC = 16,
    /// The text source (`nd_options_set_text_source`) could not give a page's text.
    ND_TEXT_UNAVAILABLE = 17,
    /// This process has the index open already, under this or another path (a trailing slash,
    /// `.`, `..`, a symbolic link): one handle per index per process. The message names the
    /// path it is open under.
    ND_ALREADY_OPEN = 18,
    /// The handle (or a cursor on it) was opened by another process: in a child after `fork`,
    /// every call on an inherited handle fails with it, and freeing one is a no-op. Also
    /// returned by every open (`nd_index_open`, `_open_existing`, `_open_read_only`,
    /// `nd_stored_config_json`, `nd_compact_snapshot`) in a child after `fork` of a process
    /// that had opened an index: RocksDB's process-wide state is the parent's and cannot run in
    /// the child. Open indexes in a process forked before any index was opened, or after
    /// `exec`.
    ND_WRONG_PROCESS = 19,
    /// The index was opened read-only (`nd_index_open_read_only`): writes are refused.
    ND_READ_ONLY = 20,
    /// The change feed no longer holds every change after the sequence number asked for
    /// (`nd_index_changes`): they were trimmed past the retention
    /// (`nd_options_set_change_retention`). The follower missed changes: copy the index again
    /// and follow the copy from its last change.
    ND_CHANGES_TRIMMED = 21,
}

use nd_status::*;

/// The status of a library error.
pub(crate) fn status_of(e: &Error) -> nd_status {
    match e {
        Error::InvalidArgument(_) => ND_INVALID_ARGUMENT,
        Error::PageTooLarge { .. } => ND_PAGE_TOO_LARGE,
        Error::BinaryPage { .. } => ND_BINARY_PAGE,
        Error::Storage { .. } => ND_STORAGE,
        Error::Corruption { .. } => ND_CORRUPTION,
        Error::IncompatibleFormat { .. } => ND_INCOMPATIBLE_FORMAT,
        Error::IncompatibleConfig { .. } => ND_INCOMPATIBLE_CONFIG,
        Error::CheckFailed { .. } => ND_CHECK_FAILED,
        Error::Poisoned => ND_POISONED,
        Error::NotFound(_) => ND_NOT_FOUND,
        Error::Full => ND_FULL,
        Error::Io { .. } => ND_IO,
        Error::TextUnavailable { .. } => ND_TEXT_UNAVAILABLE,
        Error::AlreadyOpen { .. } => ND_ALREADY_OPEN,
        Error::WrongProcess { .. } | Error::ForkedStorage { .. } => ND_WRONG_PROCESS,
        Error::ReadOnly(..) => ND_READ_ONLY,
        Error::ChangesTrimmed { .. } => ND_CHANGES_TRIMMED,
    }
}

/// A failed call: its status and message.
pub(crate) struct Fail {
    pub(crate) status: nd_status,
    pub(crate) message: String,
}

impl Fail {
    pub(crate) fn new(status: nd_status, message: impl Into<String>) -> Self {
        Fail {
            status,
            message: message.into(),
        }
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::new(status_of(&e), e.to_string())
    }
}

pub(crate) type FfiResult<T = ()> = std::result::Result<T, Fail>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // Interior NUL bytes (from a key in a message) would cut the C string short: replace them.
    let clean = message.replace('\0', "\\0");
    let c = CString::new(clean).unwrap_or_default();
    // During thread teardown the thread-local may be gone: the message is dropped then.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = c);
}

/// Runs one entry point: no panic crosses, the status and the thread's message are set.
pub(crate) fn guard(f: impl FnOnce() -> FfiResult) -> nd_status {
    super::sink::install_panic_hook();
    match catch_unwind(AssertUnwindSafe(|| crate::quiet::within(f))) {
        Ok(Ok(())) => {
            set_last_error("");
            ND_OK
        }
        Ok(Err(fail)) => {
            set_last_error(&fail.message);
            fail.status
        }
        Err(payload) => {
            set_last_error(&format!(
                "internal error (panic): {}",
                panic_text(&*payload)
            ));
            ND_PANIC
        }
    }
}

/// Like [`guard`] for entry points that cannot report a status (the `_free` functions): a panic
/// is caught and dropped.
pub(crate) fn guard_void(f: impl FnOnce()) {
    super::sink::install_panic_hook();
    let _ = catch_unwind(AssertUnwindSafe(|| crate::quiet::within(f)));
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The text of the last call that returned a status on the calling thread: empty after `ND_OK`,
/// a sentence saying what went wrong otherwise. Never NULL. The string is owned by the library
/// and stays valid until the next `nd_` call on the same thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn nd_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// The name of a status code (`"ND_NOT_FOUND"`…), a static string; `"ND_UNKNOWN"` for a value
/// that is not a status.
#[no_mangle]
pub extern "C" fn nd_status_name(status: u32) -> *const c_char {
    let name: &'static [u8] = match status {
        0 => b"ND_OK\0",
        1 => b"ND_INVALID_ARGUMENT\0",
        2 => b"ND_NULL_POINTER\0",
        3 => b"ND_INVALID_UTF8\0",
        4 => b"ND_PAGE_TOO_LARGE\0",
        5 => b"ND_BINARY_PAGE\0",
        6 => b"ND_NOT_FOUND\0",
        7 => b"ND_STORAGE\0",
        8 => b"ND_CORRUPTION\0",
        9 => b"ND_INCOMPATIBLE_FORMAT\0",
        10 => b"ND_INCOMPATIBLE_CONFIG\0",
        11 => b"ND_CHECK_FAILED\0",
        12 => b"ND_POISONED\0",
        13 => b"ND_FULL\0",
        14 => b"ND_IO\0",
        15 => b"ND_CLOSED\0",
        16 => b"ND_PANIC\0",
        17 => b"ND_TEXT_UNAVAILABLE\0",
        18 => b"ND_ALREADY_OPEN\0",
        19 => b"ND_WRONG_PROCESS\0",
        20 => b"ND_READ_ONLY\0",
        21 => b"ND_CHANGES_TRIMMED\0",
        _ => b"ND_UNKNOWN\0",
    };
    name.as_ptr().cast()
}

/// The version of the neardup library, e.g. `"0.1.0"`: a static string.
#[no_mangle]
pub extern "C" fn nd_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The version of the C ABI this library implements; equal to the header's `ND_ABI_VERSION`
/// when header and library match.
#[no_mangle]
pub extern "C" fn nd_abi_version() -> u32 {
    ND_ABI_VERSION
}

// ----- reading caller buffers -----

/// Borrows a caller buffer.
///
/// # Safety
/// When `len > 0` and `ptr` is not NULL, `ptr` must point at `len` readable bytes that stay
/// unchanged for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(ptr: *const u8, len: usize, what: &str) -> FfiResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Fail::new(
            ND_NULL_POINTER,
            format!("{what} is NULL with length {len}"),
        ));
    }
    if len > isize::MAX as usize {
        return Err(Fail::new(
            ND_INVALID_ARGUMENT,
            format!("{what} has length {len}, above PTRDIFF_MAX"),
        ));
    }
    // SAFETY: non-null, length within isize::MAX, readable for `len` bytes per the caller's
    // contract documented on every entry point.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Borrows a caller buffer that must be UTF-8.
///
/// # Safety
/// As [`bytes_arg`].
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, len: usize, what: &str) -> FfiResult<&'a str> {
    // SAFETY: forwarded contract.
    let b = unsafe { bytes_arg(ptr.cast(), len, what)? };
    utf8_arg(b, what)
}

/// Checks that caller bytes are UTF-8.
pub(crate) fn utf8_arg<'a>(bytes: &'a [u8], what: &str) -> FfiResult<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        Fail::new(
            ND_INVALID_UTF8,
            format!("{what} is not UTF-8 (byte {})", e.valid_up_to()),
        )
    })
}

/// Checks an out-parameter.
pub(crate) fn out_arg<T>(ptr: *mut T, what: &str) -> FfiResult<*mut T> {
    if ptr.is_null() {
        Err(Fail::new(ND_NULL_POINTER, format!("{what} is NULL")))
    } else {
        Ok(ptr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: nd_last_error never returns NULL and the string lives until the next call.
        unsafe { CStr::from_ptr(nd_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let s = guard(|| panic!("boom"));
        assert_eq!(s, ND_PANIC);
        assert!(last().contains("boom"), "{}", last());
        assert_eq!(guard(|| Ok(())), ND_OK);
        assert_eq!(last(), "");
    }

    #[test]
    fn messages_with_nul_bytes_are_kept_whole() {
        let s = guard(|| Err(Fail::new(ND_NOT_FOUND, "key a\0b")));
        assert_eq!(s, ND_NOT_FOUND);
        assert_eq!(last(), "key a\\0b");
    }

    #[test]
    fn every_status_has_its_name() {
        for code in 0..=21u32 {
            // SAFETY: static NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(nd_status_name(code)) };
            assert_ne!(name.to_str().ok(), Some("ND_UNKNOWN"), "code {code}");
        }
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(nd_status_name(999)) };
        assert_eq!(unknown.to_str().ok(), Some("ND_UNKNOWN"));
    }

    #[test]
    fn buffers_are_checked() {
        // SAFETY: the pointers are NULL or point at live data.
        unsafe {
            assert!(bytes_arg(std::ptr::null(), 0, "x").is_ok());
            assert!(matches!(
                bytes_arg(std::ptr::null(), 3, "x"),
                Err(Fail {
                    status: ND_NULL_POINTER,
                    ..
                })
            ));
            let bad = [0xffu8, 0xfe];
            assert!(matches!(
                str_arg(bad.as_ptr().cast(), 2, "key"),
                Err(Fail {
                    status: ND_INVALID_UTF8,
                    ..
                })
            ));
            assert!(matches!(
                bytes_arg(bad.as_ptr(), usize::MAX, "x"),
                Err(Fail {
                    status: ND_INVALID_ARGUMENT,
                    ..
                })
            ));
        }
    }
}
