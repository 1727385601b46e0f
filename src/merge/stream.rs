//! A partition's batch log applied from its bytes or its file, decoded one chunk at a time (issue #34: a
//! partition's share of a million-page day is gigabytes of operations, which
//! [`Index::apply_log`] would hold decoded).

use super::log::{ApplyOutcome, LogOp, APPLY_CHUNK_BYTES};
use super::logio::{verify_log_file, LogFileOps};
use super::LogReader;
use crate::index::{Counters, Index};
use crate::{Error, Result};

impl Index {
    /// [`Index::apply_log`] of a log's bytes ([`super::encode_log`]), decoded one chunk at a
    /// time: the same checks, chunks and result, without the whole log held decoded (a
    /// partition's share of a million-page day, issue #34).
    ///
    /// # Errors
    /// As [`Index::apply_log_chunked`]; [`Error::InvalidArgument`] for bytes that are not a
    /// batch log (before anything is written).
    pub fn apply_log_bytes(&self, batch: u64, log: &[u8]) -> Result<ApplyOutcome> {
        let mut counters = self.lock_writer()?;
        if self.batch_done(batch)? {
            return Ok(ApplyOutcome::AlreadyApplied);
        }
        // The checksum checked once; the checks and the writes read copies of the reader.
        let reader = LogReader::new(log)?;
        self.check_ops(&counters, || Ok(reader.clone()))?;
        let chunks = self.apply_stream(&mut counters, batch, reader)?;
        drop(counters);
        self.sync_wal()?;
        Ok(ApplyOutcome::Applied { chunks })
    }

    /// [`Index::apply_log_bytes`] of the log in the file at `path` (written by
    /// [`super::LogFileWriter`] or copied from a store), read three times and never whole: its
    /// checksum, the checks, the writes. A partition's share of a large day is applied without
    /// its bytes in memory.
    ///
    /// # Errors
    /// As [`Index::apply_log_bytes`]; [`Error::Io`] when the file cannot be read.
    pub fn apply_log_file(&self, batch: u64, path: &std::path::Path) -> Result<ApplyOutcome> {
        let mut counters = self.lock_writer()?;
        if self.batch_done(batch)? {
            return Ok(ApplyOutcome::AlreadyApplied);
        }
        verify_log_file(path)?;
        self.check_ops(&counters, || LogFileOps::open(path))?;
        let chunks = self.apply_stream(&mut counters, batch, LogFileOps::open(path)?)?;
        drop(counters);
        self.sync_wal()?;
        Ok(ApplyOutcome::Applied { chunks })
    }

    /// The operations of a checked log written a chunk of [`APPLY_CHUNK_BYTES`] at a time, the
    /// batch recorded with the last; returns the chunks written.
    fn apply_stream(
        &self,
        counters: &mut Counters,
        batch: u64,
        ops: impl Iterator<Item = Result<LogOp>>,
    ) -> Result<usize> {
        let mut ops = ops.peekable();
        let mut chunks = 0;
        loop {
            let mut chunk = Vec::new();
            let mut bytes = 0;
            while bytes < APPLY_CHUNK_BYTES {
                let Some(op) = ops.next() else { break };
                let op = op?;
                bytes += op.weight();
                chunk.push(op);
            }
            let last = ops.peek().is_none();
            chunks += self.apply_chunks(counters, &chunk, usize::MAX, last.then_some(batch))?;
            if last {
                break;
            }
        }
        Ok(chunks)
    }

    /// Whether `batch` is the batch recorded applied already; refuses one that is neither it
    /// nor the next.
    pub(super) fn batch_done(&self, batch: u64) -> Result<bool> {
        match self.applied_batch_stored()? {
            Some(p) if p == batch => Ok(true),
            Some(p) if p.checked_add(1) != Some(batch) => Err(Error::InvalidArgument(format!(
                "batch {batch} refused: the index last applied batch {p}, so it takes batch {} \
                 next",
                p.saturating_add(1)
            ))),
            _ => Ok(false),
        }
    }
}
