//! One handle per index per process, whatever the spelling of its path, and no use of a handle
//! from another process (issue "Embedding-grade", point 1).
//!
//! RocksDB keys its in-process lock table by the path string, and a POSIX `fcntl` lock does not
//! exclude its own process, so `dir/`, `dir/.`, a symbolic link to `dir` or
//! `parent/../parent/dir` could each open a second, independent writer of the same database, and
//! acknowledged writes through one of them were lost. Opening registers the directory by its
//! identity — device and inode on Unix, the canonical path elsewhere — in a process-wide table,
//! and a second open of the same directory fails with [`Error::AlreadyOpen`] naming the path it
//! is open under. The entry is removed when the handle is dropped, after RocksDB has closed.
//!
//! A handle also remembers the process that opened it: after `fork`, the child's copy of the
//! handle refuses every call with [`Error::WrongProcess`] (RocksDB's background threads do not
//! exist in the child, and its writes would race the parent's).

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

/// Open indexes of this process: directory identity → the path it was opened under.
static OPEN: LazyLock<Mutex<HashMap<DirId, PathBuf>>> = LazyLock::new(Default::default);

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
        let md = std::fs::metadata(dir).map_err(|e| io_error(dir, e))?;
        if !md.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let id = dir_id(dir)?;
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(first) = open.get(&id) {
            return Err(Error::AlreadyOpen {
                path: dir.to_path_buf(),
                open_as: first.clone(),
            });
        }
        // `DirId` is `Copy` on Unix only.
        #[cfg_attr(unix, allow(clippy::clone_on_copy))]
        let key = id.clone();
        open.insert(key, dir.to_path_buf());
        Ok(Registration {
            id: Some(id),
            pid: std::process::id(),
        })
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
}

impl Drop for Registration {
    fn drop(&mut self) {
        // A child after fork holds a copy of the table and of the handle: what it removes is
        // its own copy.
        if let Some(id) = &self.id {
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            open.remove(id);
        }
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

    #[test]
    #[cfg(unix)]
    fn another_process_is_refused() {
        // As a child after fork sees its copy: the pid it was opened by is not its own.
        let other = Registration {
            id: None,
            pid: std::process::id().wrapping_add(1),
        };
        assert!(matches!(
            other.check_process(),
            Err(Error::WrongProcess { .. })
        ));
    }
}
