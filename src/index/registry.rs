//! One handle per index per process, whatever the spelling of its path, and no use of a handle
//! from another process (issue "Embedding-grade", point 1; issue #33, point 1).
//!
//! RocksDB keys its in-process lock table by the path string, and a POSIX `fcntl` lock does not
//! exclude its own process, so `dir/`, `dir/.`, a symbolic link to `dir` or
//! `parent/../parent/dir` could each open a second, independent writer of the same database, and
//! acknowledged writes through one of them were lost. Opening registers the directory by its
//! identity — device and inode on Unix, the canonical path elsewhere — in a process-wide table,
//! and a second open of the same directory fails with [`Error::AlreadyOpen`] naming the path it
//! is open under. The entry is removed when the handle is dropped, after RocksDB has closed.
//!
//! # After `fork`
//! A handle remembers the process that opened it. In a child after `fork` the child's copy of
//! the handle is *foreign*: it refuses every call with [`Error::WrongProcess`], and dropping it
//! leaks its RocksDB objects instead of running their destructors there (`Index`'s `Drop`):
//! RocksDB's background threads do not exist in the child, and closing the database there
//! joins threads that are not the child's (a SIGSEGV at `exit`).
//!
//! The table is inherited by the child too, so each entry records the process that made it. An
//! entry of another process is stale here: it refuses no open and is replaced by this process's
//! open, and only the process that made an entry removes it. This pid check was chosen over a
//! `pthread_atfork` child handler that would clear the table: it needs no process-wide handler
//! (which a library unloaded with `dlclose` would leave dangling, and which a `fork` made by a
//! raw `clone` skips), no `unsafe`, and it holds in a grandchild as in a child. One limit is
//! shared with every lock a multithreaded program holds across `fork`: if another thread was
//! inside the table's few-instruction critical section at the instant of the fork, the child's
//! copy of the lock stays held and an open in the child waits forever.
//!
//! Whether the child can open the index itself is the storage layer's to say
//! (`storage::process`): RocksDB cannot run in a child of a process that had started it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use crate::{Error, Result};

/// The identity of a directory: (device, inode) on Unix.
#[cfg(unix)]
type DirId = (u64, u64);
/// The identity of a directory: its canonical path where there are no inodes.
#[cfg(not(unix))]
type DirId = PathBuf;

/// One open index in the table.
#[derive(Debug)]
struct Entry {
    /// The path it was opened under.
    path: PathBuf,
    /// The process that opened it: an entry of another process is stale (inherited over
    /// `fork`).
    pid: u32,
}

/// Open indexes: directory identity → the path it was opened under and the process that did.
static OPEN: LazyLock<Mutex<HashMap<DirId, Entry>>> = LazyLock::new(Default::default);

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(unix)]
fn dir_id(dir: &Path) -> Result<DirId> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dir).map_err(|e| io_error(dir, e))?;
    Ok((md.dev(), md.ino()))
}

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> Result<DirId> {
    std::fs::canonicalize(dir).map_err(|e| io_error(dir, e))
}

/// The registration of one open index: removed from the table when dropped.
#[derive(Debug)]
pub(crate) struct Registration {
    /// `None` for a read-only handle, which is not registered: it writes nothing, so it may sit
    /// beside the writer (and other readers) of the same directory.
    pub(crate) id: Option<DirId>,
    /// The process that opened the index.
    pub(crate) pid: u32,
}

impl Registration {
    /// Registers the index directory `dir` (which must exist) for this process.
    ///
    /// # Errors
    /// [`Error::AlreadyOpen`] when this process has it open already, under any path;
    /// [`Error::Io`] when the directory cannot be inspected; [`Error::InvalidArgument`] when
    /// `dir` is not a directory.
    pub(crate) fn acquire(dir: &Path) -> Result<Registration> {
        Registration::acquire_as(dir, std::process::id())
    }

    /// [`Registration::acquire`] on behalf of process `pid` (the tests play a child after
    /// `fork` with it).
    fn acquire_as(dir: &Path, pid: u32) -> Result<Registration> {
        let md = std::fs::metadata(dir).map_err(|e| io_error(dir, e))?;
        if !md.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let id = dir_id(dir)?;
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        // Another process's entry, inherited over `fork`, is not this process's open: it is
        // replaced (the parent's handle is foreign here and never removes it).
        if let Some(first) = open.get(&id).filter(|e| e.pid == pid) {
            return Err(Error::AlreadyOpen {
                path: dir.to_path_buf(),
                open_as: first.path.clone(),
            });
        }
        // `DirId` is `Copy` on Unix only.
        #[cfg_attr(unix, allow(clippy::clone_on_copy))]
        let key = id.clone();
        open.insert(
            key,
            Entry {
                path: dir.to_path_buf(),
                pid,
            },
        );
        Ok(Registration { id: Some(id), pid })
    }

    /// The registration of a read-only handle: the process only.
    pub(crate) fn read_only() -> Registration {
        Registration {
            id: None,
            pid: std::process::id(),
        }
    }

    /// Fails with [`Error::WrongProcess`] when called in a process other than the one that
    /// opened the index (a child after `fork`).
    pub(crate) fn check_process(&self) -> Result<()> {
        let now = std::process::id();
        if now != self.pid {
            return Err(Error::WrongProcess {
                opened_by: self.pid,
                current: now,
            });
        }
        Ok(())
    }

    /// True in a process other than the one that opened the index (a child after `fork`):
    /// nothing of the handle may be used or released here.
    pub(crate) fn is_foreign(&self) -> bool {
        self.pid != std::process::id()
    }

    /// Removes this registration's entry from the table as process `now` sees it: only when
    /// `now` made it. A handle inherited over `fork` leaves the child's table alone, which may
    /// hold the child's own open of the same directory by then.
    fn release_as(&self, now: u32) {
        let Some(id) = &self.id else { return };
        if self.pid != now {
            return;
        }
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if open.get(id).is_some_and(|e| e.pid == self.pid) {
            open.remove(id);
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.release_as(std::process::id());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_registered_once_whatever_its_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("ix");
        std::fs::create_dir(&d).unwrap();
        let first = Registration::acquire(&d).unwrap();
        for alias in [
            d.join("."),
            dir.path().join("ix/"),
            dir.path().join("ix").join("..").join("ix"),
        ] {
            match Registration::acquire(&alias) {
                Err(Error::AlreadyOpen { open_as, .. }) => assert_eq!(open_as, d),
                other => panic!("{alias:?}: {other:?}"),
            }
        }
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&d, &link).unwrap();
            assert!(matches!(
                Registration::acquire(&link),
                Err(Error::AlreadyOpen { .. })
            ));
        }
        first.check_process().unwrap();
        drop(first);
        let again = Registration::acquire(&d.join(".")).unwrap();
        drop(again);
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(
            Registration::acquire(&file),
            Err(Error::InvalidArgument(_))
        ));
    }

    /// A child after `fork` sees the parent's entry in its copy of the table: it is not the
    /// child's open, the child may open the directory, and neither process's handle removes the
    /// other's entry.
    #[test]
    fn an_entry_of_another_process_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("ix");
        std::fs::create_dir(&d).unwrap();
        let me = std::process::id();
        let parent = me.wrapping_add(7);
        // The parent's open, as the child's copy of the table holds it.
        let inherited = Registration::acquire_as(&d, parent).unwrap();
        assert!(inherited.is_foreign());
        assert!(matches!(
            inherited.check_process(),
            Err(Error::WrongProcess { opened_by, current }) if opened_by == parent && current == me
        ));
        // The child opens it (under another spelling, too): the parent's entry refuses nothing.
        let mine = Registration::acquire_as(&d.join("."), me).unwrap();
        assert!(!mine.is_foreign());
        // A second open in the child is refused, naming the child's path.
        match Registration::acquire(&d) {
            Err(Error::AlreadyOpen { open_as, .. }) => assert_eq!(open_as, d.join(".")),
            other => panic!("{other:?}"),
        }
        // The inherited handle, dropped in the child, leaves the child's entry alone.
        inherited.release_as(me);
        drop(inherited);
        assert!(matches!(
            Registration::acquire(&d),
            Err(Error::AlreadyOpen { .. })
        ));
        // The child's own close removes it.
        drop(mine);
        let again = Registration::acquire(&d).unwrap();
        drop(again);
        // An entry is removed only by the process that made it.
        let parents = Registration::acquire_as(&d, parent).unwrap();
        parents.release_as(me);
        let child = Registration::acquire_as(&d, me).unwrap();
        parents.release_as(parent);
        assert!(
            matches!(Registration::acquire(&d), Err(Error::AlreadyOpen { .. })),
            "the parent's release removed the child's entry"
        );
        drop(child);
    }

    #[test]
    #[cfg(unix)]
    fn another_process_is_refused() {
        // As a child after fork sees its copy: the pid it was opened by is not its own.
        let other = Registration {
            id: None,
            pid: std::process::id().wrapping_add(1),
        };
        assert!(other.is_foreign());
        assert!(matches!(
            other.check_process(),
            Err(Error::WrongProcess { .. })
        ));
    }
}
