//! Batch logs written to and read from files one operation at a time (issue #34: a work unit's
//! log of a million-page day is gigabytes, never held in memory): the bytes of
//! [`super::encode_log`], the same checks as [`super::decode_log`].

use std::marker::PhantomData;

use super::log::LogOp;
use super::logfile::{
    decode_op_as, encode_op, not_a_log, version, wide_version, LogReader, LogWriter, MAGIC,
};
use crate::storage::codec::DocId;
use crate::storage::width::IdWidth;
use crate::{Error, Result};

/// Where a log's operations go, one at a time: [`LogWriter`] (memory) or [`LogFileWriter`]
/// (a file).
pub(crate) trait OpSink<I: IdWidth = DocId> {
    /// Appends one operation.
    fn put(&mut self, op: &LogOp<I>) -> Result<()>;
}

impl<I: IdWidth> OpSink<I> for LogWriter<I> {
    fn put(&mut self, op: &LogOp<I>) -> Result<()> {
        self.push(op);
        Ok(())
    }
}

impl<I: IdWidth> OpSink<I> for LogFileWriter<I> {
    fn put(&mut self, op: &LogOp<I>) -> Result<()> {
        self.push(op)
    }
}

fn io_error(path: &std::path::Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A batch log of ids of width `I` written to a file one operation at a time: the bytes
/// [`encode_log`] gives, never held in memory (a work unit's log of a million-page day is
/// gigabytes).
pub struct LogFileWriter<I: IdWidth = DocId> {
    out: std::io::BufWriter<std::fs::File>,
    hash: xxhash_rust::xxh3::Xxh3,
    body: Vec<u8>,
    path: std::path::PathBuf,
    ops: u64,
    bytes: u64,
    width: PhantomData<I>,
}

impl<I: IdWidth> std::fmt::Debug for LogFileWriter<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogFileWriter")
            .field("path", &self.path)
            .field("ops", &self.ops)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl<I: IdWidth> LogFileWriter<I> {
    /// Creates (or truncates) the file at `path` and writes the log's header.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn create(path: &std::path::Path) -> Result<LogFileWriter<I>> {
        let file = std::fs::File::create(path).map_err(|e| io_error(path, e))?;
        let mut w = LogFileWriter {
            out: std::io::BufWriter::with_capacity(1 << 20, file),
            hash: xxhash_rust::xxh3::Xxh3::new(),
            body: Vec::new(),
            path: path.to_path_buf(),
            ops: 0,
            bytes: 0,
            width: PhantomData,
        };
        let mut head = MAGIC.to_vec();
        head.push(version::<I>());
        w.write(&head)?;
        Ok(w)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        self.hash.update(bytes);
        self.bytes += bytes.len() as u64;
        self.out
            .write_all(bytes)
            .map_err(|e| io_error(&self.path, e))
    }

    /// Appends one operation.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn push(&mut self, op: &LogOp<I>) -> Result<()> {
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        let t = encode_op(op, &mut body);
        let mut head = [0u8; 5];
        head[0] = t;
        head[1..].copy_from_slice(&(body.len() as u32).to_be_bytes());
        self.write(&head)?;
        self.write(&body)?;
        self.body = body;
        self.ops += 1;
        Ok(())
    }

    /// How many operations were pushed.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// Writes the checksum and flushes the file; returns the log's size in bytes.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn finish(mut self) -> Result<u64> {
        use std::io::Write;
        let sum = self.hash.digest().to_be_bytes();
        self.out
            .write_all(&sum)
            .and_then(|()| self.out.flush())
            .map_err(|e| io_error(&self.path, e))?;
        Ok(self.bytes + 8)
    }
}

/// Calls `f` with each operation of the batch log in the file at `path`, in order, its ids in
/// width `I` (a log of either width, as [`super::decode_log`]), reading it twice and never whole:
/// first to check its header and checksum (nothing is passed to `f` from a damaged log), then to
/// decode it.
///
/// # Errors
/// [`Error::Io`]; [`Error::InvalidArgument`] as [`super::decode_log`]; what `f` returns.
pub fn read_log_file<I: IdWidth>(
    path: &std::path::Path,
    f: &mut dyn FnMut(LogOp<I>) -> Result<()>,
) -> Result<()> {
    verify_log_file(path)?;
    for op in LogFileOps::<I>::open(path)? {
        f(op?)?;
    }
    Ok(())
}

/// Calls `f` with each operation of the batch log in the file at `path`, in order, in one pass
/// that checks the checksum at the end: the operations of a damaged log reach `f` before its
/// error. For a reader that throws away what it made when this fails (a work unit's log routed
/// into files that nothing applies before every unit's routing succeeded); [`read_log_file`]
/// passes nothing of a damaged log, at the cost of reading the file twice.
///
/// # Errors
/// As [`read_log_file`].
pub fn scan_log_file<I: IdWidth>(
    path: &std::path::Path,
    f: &mut dyn FnMut(LogOp<I>) -> Result<()>,
) -> Result<()> {
    let mut ops = LogFileOps::<I>::open(path)?;
    for op in ops.by_ref() {
        f(op?)?;
    }
    ops.check_sum()
}

/// A partition's part of a batch log joined from its pieces (issue #34): the operations of the
/// log `head` (bytes: the partition's part of the batch's counters), then those of each log
/// file of `inputs` in order (logs of either width), written as one log of width `I` to the
/// file at `out` — the bytes [`super::encode_log`] gives of them all — one operation at a time.
/// Neither the pieces nor the joined log is held in memory: a doc partition's part of a
/// 10⁶-page day is over a gigabyte, and joining it in memory held three times that. Returns the
/// joined log's size in bytes. On an error (a damaged piece, found by the end of its read at
/// the latest; an I/O error) no file is left at `out`.
///
/// # Errors
/// [`Error::InvalidArgument`] for a `head` or a piece that is not a log (as
/// [`super::decode_log`]), or an id too wide for `I`; [`Error::Io`].
pub fn join_log_files<I: IdWidth>(
    head: &[u8],
    inputs: &[std::path::PathBuf],
    out: &std::path::Path,
) -> Result<u64> {
    let joined = (|| {
        let mut w = LogFileWriter::<I>::create(out)?;
        for op in LogReader::<I>::new(head)? {
            w.push(&op?)?;
        }
        for path in inputs {
            scan_log_file::<I>(path, &mut |op| w.push(&op))?;
        }
        w.finish()
    })();
    if joined.is_err() {
        // Nothing to keep of a log that stopped part way (it may not even have been made).
        let _ = std::fs::remove_file(out);
    }
    joined
}

/// Checks the header and the checksum of the batch log in the file at `path`, reading it once.
///
/// # Errors
/// As [`read_log_file`].
pub(crate) fn verify_log_file(path: &std::path::Path) -> Result<()> {
    use std::io::Read;
    let mut ops = LogFileOps::<DocId>::open(path)?;
    // Every byte the checksum covers read through the hashing reader, none decoded.
    let body = ops.data - ops.at;
    ops.at += std::io::copy(&mut (&mut ops.r).take(body), &mut std::io::sink())
        .map_err(|e| io_error(path, e))?;
    ops.check_sum()
}

/// The length of a log's header: its magic and version.
const HEAD_LEN: u64 = MAGIC.len() as u64 + 1;

/// A log file being read, its bytes hashed as they are read.
struct Hashing {
    r: std::io::BufReader<std::fs::File>,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl std::io::Read for Hashing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.r.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// The operations of a batch log file, decoded one at a time as they are read (its header
/// checked on opening; its checksum only by [`LogFileOps::check_sum`] once every operation was
/// read, or by [`verify_log_file`] beforehand).
pub(crate) struct LogFileOps<I: IdWidth = DocId> {
    r: Hashing,
    path: std::path::PathBuf,
    /// The length the checksum covers (the header included).
    data: u64,
    /// Bytes read so far.
    at: u64,
    /// Operations read so far.
    n: usize,
    body: Vec<u8>,
    failed: bool,
    /// Whether the log's ids are `u64`s.
    wide: bool,
    width: PhantomData<I>,
}

impl<I: IdWidth> LogFileOps<I> {
    /// The log file at `path` opened, its header read and checked.
    ///
    /// # Errors
    /// As [`read_log_file`].
    pub(crate) fn open(path: &std::path::Path) -> Result<LogFileOps<I>> {
        use std::io::Read;
        let len = std::fs::metadata(path)
            .map_err(|e| io_error(path, e))?
            .len();
        if len < HEAD_LEN + 8 {
            return Err(not_a_log("no NDLOG header".into()));
        }
        let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
        let mut r = Hashing {
            r: std::io::BufReader::with_capacity(1 << 20, file),
            hash: xxhash_rust::xxh3::Xxh3::new(),
        };
        let mut head = [0u8; HEAD_LEN as usize];
        r.read_exact(&mut head).map_err(|e| io_error(path, e))?;
        if &head[..MAGIC.len()] != MAGIC {
            return Err(not_a_log("no NDLOG header".into()));
        }
        let wide = wide_version(head[MAGIC.len()])?;
        Ok(LogFileOps {
            r,
            path: path.to_path_buf(),
            data: len - 8,
            at: HEAD_LEN,
            n: 0,
            body: Vec::new(),
            failed: false,
            wide,
            width: PhantomData,
        })
    }

    /// Reads the checksum that ends the log, every operation read, and compares it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a damaged log; [`Error::Io`].
    pub(crate) fn check_sum(mut self) -> Result<()> {
        use std::io::Read;
        if self.at != self.data {
            return Err(not_a_log("checksum read before the operations".into()));
        }
        let mut sum = [0u8; 8];
        self.r
            .r
            .read_exact(&mut sum)
            .map_err(|e| io_error(&self.path, e))?;
        if self.r.hash.digest() != u64::from_be_bytes(sum) {
            return Err(not_a_log("checksum mismatch (truncated or damaged)".into()));
        }
        Ok(())
    }

    fn read_op(&mut self) -> Result<LogOp<I>> {
        use std::io::Read;
        let (n, left) = (self.n, self.data - self.at);
        let mut frame = [0u8; 5];
        if left < 5 {
            return Err(not_a_log(format!("operation {n} cut short")));
        }
        self.r
            .read_exact(&mut frame)
            .map_err(|e| io_error(&self.path, e))?;
        let t = frame[0];
        let blen = u32::from_be_bytes([frame[1], frame[2], frame[3], frame[4]]) as u64;
        if left - 5 < blen {
            return Err(not_a_log(format!("operation {n} cut short")));
        }
        self.body.resize(blen as usize, 0);
        self.r
            .read_exact(&mut self.body)
            .map_err(|e| io_error(&self.path, e))?;
        self.at += 5 + blen;
        self.n += 1;
        decode_op_as(self.wide, n, t, &self.body)
    }
}

impl<I: IdWidth> Iterator for LogFileOps<I> {
    type Item = Result<LogOp<I>>;

    fn next(&mut self) -> Option<Result<LogOp<I>>> {
        if self.failed || self.at >= self.data {
            return None;
        }
        let op = self.read_op();
        self.failed = op.is_err();
        Some(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::{encode_log, LogCounter};

    #[test]
    fn a_log_file_is_the_log_s_bytes_and_a_damaged_one_gives_no_operation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.ndlog");
        let ops: Vec<LogOp> = (0..1000u32)
            .map(|i| LogOp::FreeDoc {
                id: i,
                free: i % 3 == 0,
            })
            .chain([LogOp::Counter(LogCounter::NextDoc(1000))])
            .collect();
        let mut w = LogFileWriter::create(&path).unwrap();
        for op in &ops {
            w.push(op).unwrap();
        }
        assert_eq!(w.ops(), ops.len() as u64);
        let size = w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, encode_log(&ops));
        assert_eq!(size, bytes.len() as u64);
        let mut read = Vec::new();
        read_log_file(&path, &mut |op| {
            read.push(op);
            Ok(())
        })
        .unwrap();
        assert_eq!(read, ops);
        // In one pass: the same operations.
        let mut scanned = Vec::new();
        scan_log_file(&path, &mut |op| {
            scanned.push(op);
            Ok(())
        })
        .unwrap();
        assert_eq!(scanned, ops);
        // A flipped byte, a cut file: refused before any operation is passed on.
        for damage in [0usize, 1] {
            let mut bad = bytes.clone();
            if damage == 0 {
                let mid = bad.len() / 2;
                bad[mid] ^= 1;
            } else {
                bad.truncate(bad.len() - 3);
            }
            std::fs::write(&path, &bad).unwrap();
            let mut called = false;
            let r = read_log_file(&path, &mut |_: LogOp| {
                called = true;
                Ok(())
            });
            assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
            assert!(!called);
            // In one pass: refused too, at the latest once the whole file is read.
            let r = scan_log_file(&path, &mut |_: LogOp| Ok(()));
            assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
        }
    }

    fn write_log(path: &std::path::Path, ops: &[LogOp<u64>]) {
        let mut w = LogFileWriter::<u64>::create(path).unwrap();
        for op in ops {
            w.push(op).unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn joined_log_files_are_the_log_of_every_operation_and_a_damaged_piece_leaves_none() {
        let dir = tempfile::tempdir().unwrap();
        let frees = |from: u64, n: u64| -> Vec<LogOp<u64>> {
            (from..from + n)
                .map(|id| LogOp::FreeDoc {
                    id,
                    free: id % 2 == 0,
                })
                .collect()
        };
        let head = vec![LogOp::Counter(LogCounter::NextDoc(1 << 40))];
        let pieces = [frees(0, 700), frees(5_000_000_000, 3), Vec::new()];
        let paths: Vec<_> = (0..pieces.len())
            .map(|i| dir.path().join(format!("{i}.ndlog")))
            .collect();
        for (p, ops) in paths.iter().zip(&pieces) {
            write_log(p, ops);
        }
        let out = dir.path().join("joined.ndlog");
        let size = join_log_files::<u64>(&encode_log(&head), &paths, &out).unwrap();
        let all: Vec<LogOp<u64>> = head
            .iter()
            .chain(pieces.iter().flatten())
            .cloned()
            .collect();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes, encode_log(&all));
        assert_eq!(size, bytes.len() as u64);
        // No piece: the head alone.
        join_log_files::<u64>(&encode_log(&head), &[], &out).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), encode_log(&head));
        // A piece with a flipped byte, a head that is no log, an id too wide, a missing piece:
        // an error, and no joined file.
        let mut bad = std::fs::read(&paths[0]).unwrap();
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        std::fs::write(&paths[0], &bad).unwrap();
        let r = join_log_files::<u64>(&encode_log(&head), &paths, &out);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
        assert!(!out.exists());
        let r = join_log_files::<u64>(b"no log", &paths[1..], &out);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
        assert!(!out.exists());
        let r = join_log_files::<DocId>(&encode_log(&head), &paths[1..2], &out);
        assert!(r.is_err(), "{r:?}");
        assert!(!out.exists());
        let r = join_log_files::<u64>(&encode_log(&head), &[dir.path().join("none")], &out);
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        assert!(!out.exists());
    }
}
