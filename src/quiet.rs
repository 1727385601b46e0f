//! Which threads are doing the library's work: a panic there is caught and reported by the
//! library (as an error, and through the C ABI's log callback), so the C ABI's panic hook keeps
//! it off the host's stderr (see `ffi::log`). Panics elsewhere in the process are left to the
//! hook that was installed before.

use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` marked as the library's work on this thread.
pub(crate) fn within<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
    let _leave = Leave;
    f()
}

/// True while this thread runs the library's work.
pub(crate) fn active() -> bool {
    DEPTH.try_with(|d| d.get() > 0).unwrap_or(false)
}
