//! The C ABI (SPEC §4): what `include/neardup.h` declares. The only module allowed `unsafe`.
//!
//! # Rules at the boundary
//! - **Status codes.** Every function that can fail returns an [`nd_status`]; the values are
//!   explicit and never reused. [`nd_last_error`] gives the text of the last call on the calling
//!   thread.
//! - **Out-parameters** are written only when the call returns `ND_OK`.
//! - **Memory.** Buffers the caller passes in (keys, pages, paths) are pointer + length and are
//!   only read during the call; they need no NUL terminator. Everything the library hands out
//!   ([`nd_str`], [`nd_key_list`], the strings of an [`nd_verdict`], [`nd_near_list`],
//!   [`nd_options`], [`nd_near_options`], [`nd_index`], the cursors [`nd_cursor`] and
//!   [`nd_changes`]) is freed by its own `_free` function,
//!   which accepts NULL and zeroed values.
//! - **Checks.** A null pointer with a non-zero length gives `ND_NULL_POINTER`, text that is not
//!   UTF-8 gives `ND_INVALID_UTF8`, a length above `PTRDIFF_MAX` or an unknown constant gives
//!   `ND_INVALID_ARGUMENT`, a page above the size limit `ND_PAGE_TOO_LARGE`. A length longer than
//!   the memory behind the pointer cannot be detected and is the caller's error.
//! - **Panics** never cross: every entry point runs under `catch_unwind` and turns a panic into
//!   `ND_PANIC` with the panic's message. The first call installs a panic hook that keeps the
//!   library's own panics off stderr (they go to the log callback, see [`nd_set_log_callback`])
//!   and passes every other panic of the process to the hook installed before.
//! - **Threads.** An [`nd_index`] may be used from any number of threads at once.
//!   [`nd_index_close`] waits for the calls in flight on the handle to finish, then closes the
//!   database; calls made after it return `ND_CLOSED`. [`nd_index_free`] releases the handle
//!   itself and must be the caller's last use of it, on any thread.
//! - **Processes.** A handle ([`nd_index`], [`nd_cursor`], [`nd_changes`]) belongs to the process that opened
//!   it. In a child after `fork`, every call on an inherited handle returns `ND_WRONG_PROCESS`
//!   (checked before anything of the handle is touched) and freeing it does nothing (its RocksDB
//!   objects are never released in the child), so the child may free it and `exit` — unless
//!   the child has threads of its own still running then: RocksDB's exit handler, inherited
//!   from the parent, joins the parent's background threads, whose thread records glibc hands
//!   to the child's new threads, and waits forever (5 of 5 children with 4 running threads
//!   hung at `exit`; none without an index opened in the parent). Such a child ends with
//!   `_exit` (or `exec`), as forked children commonly do. The open
//!   table is per process too: the parent's open does not count as the child's. But a child of
//!   a process that had opened an index cannot open one (`ND_WRONG_PROCESS`, read-only opens
//!   included): RocksDB's process-wide state — background threads, held locks — is the
//!   parent's, and no RocksDB code runs in the child. Fork before opening any index, or `exec`.
//!   Plain values ([`nd_options`], [`nd_str`], verdicts, records, lists) are ordinary memory:
//!   the child uses and frees its copies as usual.

mod batch;
mod boundary;
mod changes;
mod cursor;
mod depth;
mod index;
mod logging;
mod maintain;
mod near;
mod options;
mod sink;
mod types;

pub use batch::*;
pub(crate) use boundary::{
    bytes_arg, guard, guard_void, out_arg, str_arg, utf8_arg, Fail, FfiResult,
};
pub use boundary::{
    nd_abi_version, nd_last_error, nd_status, nd_status_name, nd_version, ND_ABI_VERSION,
};
pub use changes::*;
pub use cursor::*;
pub use index::*;
pub use logging::*;
pub use maintain::*;
pub use near::*;
pub use options::*;
pub use sink::{nd_log_fn, ND_LOG_DEBUG, ND_LOG_ERROR, ND_LOG_INFO, ND_LOG_WARN};
pub use types::*;
