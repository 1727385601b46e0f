//! Which process RocksDB belongs to (issue #33, point 1).
//!
//! RocksDB keeps process-wide state in its default environment: background thread pools
//! (flushes, compactions), started by the first database opened and never stopped, and a table
//! of the `LOCK` files this process holds, keyed by path. A child after `fork` inherits that
//! state without the threads. Seen in a child of a process that had opened an index: a
//! database opened for writing there waits forever for its first flush, the parent's lock table
//! refuses the child's open even after the parent closed the index, and even a read-only open
//! leaves RocksDB's exit handler joining threads that are not the child's (SIGSEGV at `exit`).
//!
//! So the first process to open a database in this process image is recorded, and every later
//! open of a database in another process (a child, a grandchild) fails with
//! [`Error::ForkedStorage`] before RocksDB is called: in such a process neardup runs no RocksDB
//! code at all, and the child can `exit` cleanly — unless it has threads of its own still
//! running then: RocksDB's exit handler, inherited from the parent, joins the parent's pool
//! threads, whose thread records glibc gives to the child's new threads, and waits forever. Such
//! a child ends with `_exit` (documented in `crate::ffi` and the README). A process forked before any index was opened
//! (or one that `exec`s) has RocksDB to itself.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::{Error, Result};

/// The process that first opened a database in this process image; 0 before that.
static STARTED_BY: AtomicU32 = AtomicU32::new(0);

/// Records that this process opens a database, which starts RocksDB's process-wide state.
///
/// # Errors
/// [`Error::ForkedStorage`] when another process started it: this process is a child after
/// `fork` (or a grandchild) of a process that had opened a database.
pub(crate) fn claim() -> Result<()> {
    claim_as(std::process::id())
}

/// [`claim`] on behalf of process `pid` (the tests play a child with it).
fn claim_as(pid: u32) -> Result<()> {
    match STARTED_BY.compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Ok(()),
        Err(owner) if owner == pid => Ok(()),
        Err(owner) => Err(Error::ForkedStorage {
            started_by: owner,
            current: pid,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_belongs_to_the_process_that_started_it() {
        let me = std::process::id();
        // This process opens databases (other tests may have done so already).
        claim_as(me).unwrap();
        claim_as(me).unwrap();
        // A child after fork inherits the record: its opens are refused, and the record stays.
        let child = me.wrapping_add(1);
        assert!(matches!(
            claim_as(child),
            Err(Error::ForkedStorage { started_by, current }) if started_by == me && current == child
        ));
        assert_eq!(STARTED_BY.load(Ordering::Acquire), me);
        claim_as(me).unwrap();
    }
}
