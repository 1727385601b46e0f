//! Where the library's records and caught panics go: the host's log callback, never stderr.
//!
//! The library writes records with the `log` facade (a format upgrade, a write that poisoned the
//! index, a panic caught in a worker). [`nd_set_log_callback`] installs, once per process, a
//! `log` logger that hands each record to the callback. Panics: the first call into the C ABI
//! installs a panic hook that, for a panic on a thread doing the library's work (inside an `nd_`
//! call or one of its workers), sends the message to the log callback at level error instead of
//! printing it; any other panic in the process goes to the hook installed before. A panic caught
//! at the boundary becomes the call's status `ND_PANIC` and its message (`nd_last_error`).

use std::ffi::c_void;
use std::sync::{Once, RwLock};

use super::nd_status::{self, *};
use super::{guard, Fail};

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

struct Sink {
    f: unsafe extern "C-unwind" fn(*mut c_void, u32, *const u8, usize),
    user: *mut c_void,
}

// SAFETY: the caller of nd_set_log_callback promises the callback and its `user` may be used
// from any thread.
unsafe impl Send for Sink {}
// SAFETY: as above.
unsafe impl Sync for Sink {}

static SINK: RwLock<Option<Sink>> = RwLock::new(None);

fn level_code(l: log::Level) -> u32 {
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
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Hands a message to the callback, if one is set.
fn emit(level: u32, message: &str) {
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

struct Forward;

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

static FORWARD: Forward = Forward;

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

/// Sets the process-wide log callback (NULL removes it: records are then dropped) and the
/// most detailed level passed to it (`ND_LOG_ERROR` … `ND_LOG_DEBUG`). By default there is no
/// callback and the library writes nothing to stderr or stdout. `user` is passed back to every
/// call; it and the callback must stay valid until another callback is set.
///
/// # Errors
/// `ND_INVALID_ARGUMENT` for an unknown level, or when another logger of Rust's `log` facade
/// was installed in this process before (a Rust host: the library's records go to that logger).
///
/// # Safety
/// `callback` is NULL or a function that may be called from any thread with `user`.
#[no_mangle]
pub unsafe extern "C" fn nd_set_log_callback(
    callback: nd_log_fn,
    user: *mut c_void,
    max_level: u32,
) -> nd_status {
    guard(|| {
        if IN_CALLBACK.try_with(|c| c.get()).unwrap_or(false) {
            return Err(Fail::new(
                ND_INVALID_ARGUMENT,
                "nd_set_log_callback was called from inside the log callback",
            ));
        }
        let filter = match max_level {
            ND_LOG_ERROR => log::LevelFilter::Error,
            ND_LOG_WARN => log::LevelFilter::Warn,
            ND_LOG_INFO => log::LevelFilter::Info,
            ND_LOG_DEBUG => log::LevelFilter::Debug,
            l => return Err(Fail::new(ND_INVALID_ARGUMENT, format!("unknown level {l}"))),
        };
        static LOGGER: Once = Once::new();
        let mut installed = true;
        LOGGER.call_once(|| installed = log::set_logger(&FORWARD).is_ok());
        let ours = std::ptr::addr_eq(log::logger(), &FORWARD as &dyn log::Log);
        if !installed || !ours {
            return Err(Fail::new(
                ND_INVALID_ARGUMENT,
                "another logger of Rust's `log` facade is installed in this process: the \
                 library's records go to it",
            ));
        }
        *SINK.write().unwrap_or_else(|e| e.into_inner()) = callback.map(|f| Sink { f, user });
        log::set_max_level(if callback.is_some() {
            filter
        } else {
            log::LevelFilter::Off
        });
        Ok(())
    })
}
