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
use std::sync::Once;

use super::nd_status::{self, *};
use super::sink::*;
use super::{guard, Fail};

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
