//! The one public error type of neardup.

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in neardup.
///
/// New variants may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller passed something neardup cannot use (an empty key, a bad option value…).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The page is larger than [`crate::SignatureConfig::max_page_bytes`].
    #[error("page too large: {size} bytes, the limit is {limit} bytes")]
    PageTooLarge {
        /// Size of the page in bytes.
        size: usize,
        /// The configured limit in bytes.
        limit: usize,
    },

    /// The page is binary data (images, archives…), not HTML or text.
    #[error("page is binary: {control_share:.0}% control bytes in its first {sampled} bytes")]
    BinaryPage {
        /// Percentage of control bytes found in the sample.
        control_share: f64,
        /// How many bytes were sampled.
        sampled: usize,
    },

    /// RocksDB reported an error.
    #[error("storage error while {context}: {source}")]
    Storage {
        /// What neardup was doing.
        context: String,
        /// The RocksDB error.
        #[source]
        source: rocksdb::Error,
    },

    /// A stored value failed its checksum or could not be decoded.
    #[error("corruption in column family `{cf}` at key {key}: {reason}")]
    Corruption {
        /// The column family the value was read from.
        cf: &'static str,
        /// The key, hex-encoded.
        key: String,
        /// What was wrong.
        reason: String,
    },

    /// The index on disk was written by an incompatible format version.
    #[error(
        "incompatible on-disk format: found version {found}, this build supports \
         {supported}{}",
        format_hint(*found, *supported)
    )]
    IncompatibleFormat {
        /// The version found on disk.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },

    /// The index was created with signature parameters that differ from the ones requested.
    #[error(
        "incompatible configuration: `{field}` is {stored} in the index but {requested} was requested; \
         open with the stored configuration or build a new index"
    )]
    IncompatibleConfig {
        /// The configuration field that differs.
        field: String,
        /// The stored value.
        stored: String,
        /// The requested value.
        requested: String,
    },

    /// An index built by neardup (a compacted snapshot) failed its invariant check; it was removed.
    #[error("the new index failed its check: {problems} problems, the first: {first}")]
    CheckFailed {
        /// How many problems the check found.
        problems: u64,
        /// The first of them, in words.
        first: String,
    },

    /// A previous write failed; the index refuses further writes until it is reopened.
    #[error("the index is poisoned by an earlier failed write; reopen it")]
    Poisoned,

    /// No page with this key is in the index.
    #[error("no page with key {0:?}")]
    NotFound(String),

    /// The index holds the maximum number of pages (ids are `u32`).
    #[error("the index is full: no more document ids")]
    Full,

    /// The index does not store texts and its text source could not give the text of a page it
    /// had to verify against.
    #[error("the text of page {key:?} is unavailable: {reason}")]
    TextUnavailable {
        /// The page's key.
        key: String,
        /// Why.
        reason: String,
    },

    /// The index was opened read-only ([`crate::Index::open_read_only`]): it refuses writes.
    #[error("the index at {0} is open read-only: {1} is refused")]
    ReadOnly(PathBuf, &'static str),

    /// This process has the index open already, under the same or another path (a trailing
    /// slash, `.` or `..`, a symbolic link): one handle per index per process.
    #[error("the index at {path} is already open in this process (as {open_as})")]
    AlreadyOpen {
        /// The path given.
        path: PathBuf,
        /// The path it is open under.
        open_as: PathBuf,
    },

    /// The handle was opened by another process (this one is a child after `fork`): it can
    /// neither read nor write here.
    #[error("the index was opened by process {opened_by}, not by this process ({current}); open it again here")]
    WrongProcess {
        /// The process that opened it.
        opened_by: u32,
        /// This process.
        current: u32,
    },

    /// No index can be opened in this process: it is a child after `fork` of a process that
    /// had opened one, and RocksDB's process-wide state (background threads, the table of held
    /// locks) is the parent's — a database opened here would wait forever for its first flush,
    /// and RocksDB's exit handler would then crash the child. Open the index in a process
    /// forked before any index was opened, or in a new program (`exec`); or have the parent do
    /// the work.
    #[error(
        "cannot open an index in process {current}: RocksDB was started by process \
         {started_by} before a fork, and its background threads do not exist in this one; open \
         indexes in a process forked before any index was opened, or after exec"
    )]
    ForkedStorage {
        /// The process that started RocksDB's background threads.
        started_by: u32,
        /// This process.
        current: u32,
    },

    /// The change feed no longer holds every change after the sequence number asked for: the
    /// ones up to `trimmed` were dropped (see [`crate::IndexOptions::change_retention`]). A
    /// follower that gets it has missed changes: it must copy the index again (a checkpoint)
    /// and follow from that copy's [`crate::Index::last_change`].
    #[error(
        "the change feed was trimmed: changes after {since} are gone up to {trimmed} (the \
         oldest kept is {}); copy the index again and follow from its last change",
        trimmed + 1
    )]
    ChangesTrimmed {
        /// The sequence number asked for (changes after it were wanted).
        since: u64,
        /// The last trimmed sequence number: every change up to it is gone.
        trimmed: u64,
    },

    /// A file-system error.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps a RocksDB error with what neardup was doing.
    pub(crate) fn storage(context: impl Into<String>, source: rocksdb::Error) -> Self {
        Error::Storage {
            context: context.into(),
            source,
        }
    }

    /// A corruption error for a key in a column family.
    pub(crate) fn corruption(cf: &'static str, key: &[u8], reason: impl Into<String>) -> Self {
        Error::Corruption {
            cf,
            key: hex(key),
            reason: reason.into(),
        }
    }
}

/// Lower-case hex of a byte string (for messages).
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// What a format refused for another tells the user to open it with: a partition of 64-bit ids
/// (format 7) is a [`crate::merge::WidePartition`]'s, any older format an [`crate::Index`]'s.
fn format_hint(found: u32, supported: u32) -> &'static str {
    use crate::storage::{FORMAT_VERSION, FORMAT_VERSION_WIDE};
    if found == FORMAT_VERSION_WIDE {
        " (format 7 is a partition of a distributed index with 64-bit ids: open it with \
         neardup::merge::WidePartition)"
    } else if supported == FORMAT_VERSION_WIDE && found <= FORMAT_VERSION {
        " (a single-node index or a partition of 32-bit ids: open it with neardup::Index)"
    } else {
        ""
    }
}
