//! How many calls on any index handle the current thread is inside: a text source or progress
//! callback that calls back into an index is refused (the index may be holding its writer lock).

use std::cell::Cell;

thread_local! {
    /// How many calls on any handle the current thread is inside (a callback calling back in).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Counts the current thread inside a call on an index while it lives.
pub(crate) struct DepthGuard;

impl DepthGuard {
    /// Enters a call.
    pub(crate) fn enter() -> DepthGuard {
        DEPTH.with(|d| d.set(d.get() + 1));
        DepthGuard
    }

    /// Is the current thread inside a call on an index (so in a callback of one)?
    pub(crate) fn inside() -> bool {
        DEPTH.with(|d| d.get()) > 0
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}
