//! The sink of the library's records and of its caught panics: the host's log callback (see
//! `logging` for the call that sets it) and the panic hook that sends the library's own panics
//! there instead of stderr.

use std::ffi::c_void;
use std::sync::{Once, RwLock};

/// Level of a record: an error.
pub const ND_LOG_ERROR: u32 = 1;
/// Level of a record: a warning.
pub const ND_LOG_WARN: u32 = 2;
/// Level of a record: information (a format upgrade…).
pub const ND_LOG_INFO: u32 = 3;
/// Level of a record: debugging detail.
pub const ND_LOG_DEBUG: u32 = 4;

/// A log callback: `level` (`ND_LOG_ERROR` … `ND_LOG_DEBUG`), the message (`len` bytes of UTF-8,
/// not NUL-terminated, valid during the call). Called on any thread, possibly while an index is
/// locked for writing: it must be thread-safe, must not call into neardup (setting the callback
/// from inside it returns `ND_INVALID_ARGUMENT`), and must not throw (mark it `noexcept`).
#[allow(non_camel_case_types)]
pub type nd_log_fn = Option<
    unsafe extern "C-unwind" fn(user: *mut c_void, level: u32, message: *const u8, len: usize),
>;

pub(crate) struct Sink {
    pub(crate) f: unsafe extern "C-unwind" fn(*mut c_void, u32, *const u8, usize),
    pub(crate) user: *mut c_void,
}

// SAFETY: the caller of nd_set_log_callback promises the callback and its `user` may be used
// from any thread.
unsafe impl Send for Sink {}
// SAFETY: as above.
unsafe impl Sync for Sink {}

pub(crate) static SINK: RwLock<Option<Sink>> = RwLock::new(None);

pub(crate) fn level_code(l: log::Level) -> u32 {
    match l {
        log::Level::Error => ND_LOG_ERROR,
        log::Level::Warn => ND_LOG_WARN,
        log::Level::Info => ND_LOG_INFO,
        log::Level::Debug | log::Level::Trace => ND_LOG_DEBUG,
    }
}

thread_local! {
    /// The callback is running on this thread: a record it causes (a panic in it) is dropped,
    /// and setting the callback from inside it is refused.
    pub(crate) static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Hands a message to the callback, if one is set.
pub(crate) fn emit(level: u32, message: &str) {
    if IN_CALLBACK.try_with(|c| c.replace(true)).unwrap_or(true) {
        return;
    }
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let _ = IN_CALLBACK.try_with(|c| c.set(false));
        }
    }
    let _leave = Leave;
    let sink = SINK.read().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = sink.as_ref() {
        // SAFETY: the callback and `user` are the caller's, valid for as long as they are set.
        // A callback that unwinds (against the contract) must not unwind through the logger:
        // catch it here.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            (s.f)(s.user, level, message.as_ptr(), message.len())
        }));
    }
}

pub(crate) struct Forward;

impl log::Log for Forward {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        // Only the library's own records (and its dependencies'): the target is a module path.
        emit(level_code(record.level()), &record.args().to_string());
    }

    fn flush(&self) {}
}

pub(crate) static FORWARD: Forward = Forward;

/// Installs the panic hook once (see the module docs).
pub(crate) fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if crate::quiet::active() {
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                emit(ND_LOG_ERROR, &format!("internal error (panic){at}: {msg}"));
            } else {
                previous(info);
            }
        }));
    });
}
