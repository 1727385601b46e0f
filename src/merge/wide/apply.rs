//! A batch log of `u64` ids applied to a format 7 partition once in effect (SCALEOUT §5 S5
//! "Commit", §9), with the checks and chunking of [`crate::Index::apply_log_chunked`]: every
//! operation checked before anything is written, chunks of about [`APPLY_CHUNK_BYTES`] each one
//! atomic `WriteBatch`, the batch recorded (`meta` `applied_batch`) in the last one, batch n + 1
//! only after n. The operations are idempotent (see [`LogOp`]), so a log applied again after a
//! crash part way gives the state one whole application gives.
//!
//! Unlike an index, a partition keeps nothing in memory: each operation becomes its key's put,
//! delete or merge operand in the chunk's `WriteBatch`, in log order (the last write of a key
//! wins, and a posting's operands apply in order).

use std::path::Path;

use rocksdb::WriteBatch;

use super::WidePartition;
use crate::merge::checks::{check_ops, Storable};
use crate::merge::log::{ApplyOutcome, LogCounter, LogOp, APPLY_CHUNK_BYTES};
use crate::merge::logio::{verify_log_file, LogFileOps};
use crate::merge::LogReader;
use crate::storage::codec::{self, TextValue};
use crate::storage::wide_keys::{wide_chrome_page_key, wide_free_key};
use crate::storage::width::wide_id_key;
use crate::storage::{self, cf, chrome_key, meta};
use crate::{Error, Result};

impl WidePartition {
    /// Applies batch `batch`'s operation list (its part of a distributed merge's batch log, in
    /// global `u64` ids) in chunks of about [`APPLY_CHUNK_BYTES`] bytes: see
    /// [`WidePartition::apply_log_chunked`].
    ///
    /// # Errors
    /// As [`WidePartition::apply_log_chunked`].
    pub fn apply_log(&self, batch: u64, ops: &[LogOp<u64>]) -> Result<ApplyOutcome> {
        self.apply_log_chunked(batch, ops, APPLY_CHUNK_BYTES)
    }

    /// Applies batch `batch`'s operation list in chunks of about `chunk_bytes` bytes (at least
    /// one operation each), each chunk one atomic `WriteBatch`; the last one also records
    /// `batch` ([`WidePartition::applied_batch`]). The semantics are
    /// [`crate::Index::apply_log_chunked`]'s: a recorded batch is not applied again
    /// ([`ApplyOutcome::AlreadyApplied`]); a partition with a recorded batch n accepts only
    /// batch n + 1, one with none any; after a failure or a crash part way, applying the same
    /// log again gives the whole log's state.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a batch other than the recorded one or the next is
    /// given, or for an operation that cannot be stored (one the layout routes to another
    /// partition, a page or cluster id at or above its allocator as the log leaves it, a
    /// simhash table the layout lacks, an empty or overlong key, a host over 255 bytes, an
    /// unknown over-frequent reason, a text where the partition stores posting keys or the
    /// reverse) — all before anything is written; [`Error::Poisoned`] after a failed write
    /// (reopen and apply the log again); [`Error::ReadOnly`] in a handle of
    /// [`WidePartition::open_read_only`]; storage and corruption errors.
    pub fn apply_log_chunked(
        &self,
        batch: u64,
        ops: &[LogOp<u64>],
        chunk_bytes: usize,
    ) -> Result<ApplyOutcome> {
        let _writer = self.writer.lock();
        self.check_writable()?;
        if self.batch_done(batch)? {
            return Ok(ApplyOutcome::AlreadyApplied);
        }
        self.check_ops(|| Ok(ops.iter().map(Ok)))?;
        let chunks = self.write_chunks(ops.iter().map(Ok), chunk_bytes, Some(batch))?;
        self.sync_wal()?;
        Ok(ApplyOutcome::Applied { chunks })
    }

    /// Writes `ops` as [`WidePartition::apply_log_chunked`] does but records no batch: what a
    /// crash after their chunks leaves. For crash tests only.
    ///
    /// # Errors
    /// As [`WidePartition::apply_log_chunked`].
    #[doc(hidden)]
    pub fn apply_log_unrecorded(&self, ops: &[LogOp<u64>], chunk_bytes: usize) -> Result<usize> {
        let _writer = self.writer.lock();
        self.check_writable()?;
        self.check_ops(|| Ok(ops.iter().map(Ok)))?;
        let chunks = self.write_chunks(ops.iter().map(Ok), chunk_bytes, None)?;
        self.sync_wal()?;
        Ok(chunks)
    }

    /// [`WidePartition::apply_log`] of a log's bytes ([`crate::merge::encode_log`]) of either
    /// version (version 1's `u32` ids read as `u64`), decoded a chunk at a time: the same checks,
    /// chunks and result without the whole log held decoded.
    ///
    /// # Errors
    /// As [`WidePartition::apply_log_chunked`]; [`Error::InvalidArgument`] for bytes that are
    /// not a batch log (before anything is written).
    pub fn apply_log_bytes(&self, batch: u64, log: &[u8]) -> Result<ApplyOutcome> {
        let _writer = self.writer.lock();
        self.check_writable()?;
        if self.batch_done(batch)? {
            return Ok(ApplyOutcome::AlreadyApplied);
        }
        let reader = LogReader::<u64>::new(log)?;
        self.check_ops(|| Ok(reader.clone()))?;
        let chunks = self.write_chunks(reader, APPLY_CHUNK_BYTES, Some(batch))?;
        self.sync_wal()?;
        Ok(ApplyOutcome::Applied { chunks })
    }

    /// [`WidePartition::apply_log_bytes`] of the log in the file at `path` (either version),
    /// read three times and never whole: its checksum, the checks, the writes.
    ///
    /// # Errors
    /// As [`WidePartition::apply_log_bytes`]; [`Error::Io`] when the file cannot be read.
    pub fn apply_log_file(&self, batch: u64, path: &Path) -> Result<ApplyOutcome> {
        let _writer = self.writer.lock();
        self.check_writable()?;
        if self.batch_done(batch)? {
            return Ok(ApplyOutcome::AlreadyApplied);
        }
        verify_log_file(path)?;
        self.check_ops(|| LogFileOps::<u64>::open(path))?;
        let chunks = self.write_chunks(
            LogFileOps::<u64>::open(path)?,
            APPLY_CHUNK_BYTES,
            Some(batch),
        )?;
        self.sync_wal()?;
        Ok(ApplyOutcome::Applied { chunks })
    }

    /// The last batch log applied, `None` when none has been.
    ///
    /// # Errors
    /// [`Error::Corruption`] when the stored value is not 8 bytes, storage errors.
    pub fn applied_batch(&self) -> Result<Option<u64>> {
        self.meta_value(meta::APPLIED_BATCH)?
            .map(|v| storage::decode_u64(cf::META, meta::APPLIED_BATCH, &v))
            .transpose()
    }

    /// Whether `batch` is the batch recorded applied already; refuses one that is neither it
    /// nor the next.
    fn batch_done(&self, batch: u64) -> Result<bool> {
        match self.applied_batch()? {
            Some(p) if p == batch => Ok(true),
            Some(p) if p.checked_add(1) != Some(batch) => Err(Error::InvalidArgument(format!(
                "batch {batch} refused: the partition last applied batch {p}, so it takes \
                 batch {} next",
                p.saturating_add(1)
            ))),
            _ => Ok(false),
        }
    }

    /// Refuses a log with an operation that cannot be stored here; `ops()` gives the log
    /// (called twice: the allocators the log leaves, then each operation).
    fn check_ops<T, J>(&self, ops: impl Fn() -> Result<J>) -> Result<()>
    where
        T: std::borrow::Borrow<LogOp<u64>>,
        J: Iterator<Item = Result<T>>,
    {
        let c = self.counters()?;
        let into = Storable {
            what: "partition",
            tables: self.tables.tables,
            store_texts: self.opts.store_texts,
            partition: Some(self.partition),
        };
        check_ops(&into, (c.next_doc, c.next_cluster), ops)
    }

    /// Writes checked operations in chunks of about `chunk_bytes` (at least one operation
    /// each), recording `mark` as the applied batch in the last; returns the chunks written (an
    /// empty log with a mark is one chunk: the mark).
    fn write_chunks<T>(
        &self,
        ops: impl Iterator<Item = Result<T>>,
        chunk_bytes: usize,
        mark: Option<u64>,
    ) -> Result<usize>
    where
        T: std::borrow::Borrow<LogOp<u64>>,
    {
        let mut ops = ops.peekable();
        if ops.peek().is_none() && mark.is_none() {
            return Ok(0);
        }
        let mut chunks = 0;
        loop {
            let mut b = WriteBatch::default();
            let mut bytes = 0;
            let mut len = 0;
            while len == 0 || bytes < chunk_bytes {
                let Some(op) = ops.next() else { break };
                let op = op?;
                let op = op.borrow();
                bytes += op.weight();
                len += 1;
                self.stage(&mut b, op);
            }
            let last = ops.peek().is_none();
            if let Some(batch) = mark.filter(|_| last) {
                b.put_cf(self.cf(cf::META), meta::APPLIED_BATCH, batch.to_be_bytes());
            }
            self.write(b)?;
            chunks += 1;
            if last {
                return Ok(chunks);
            }
        }
    }

    /// Puts one operation's write into the chunk's batch (format 7's keys and codecs, FORMAT.md
    /// "Format 7: partitions with 64-bit ids").
    fn stage(&self, b: &mut WriteBatch, op: &LogOp<u64>) {
        let put_or_delete =
            |b: &mut WriteBatch, name: &str, key: &[u8], value: Option<&[u8]>| match value {
                Some(v) => b.put_cf(self.cf(name), key, v),
                None => b.delete_cf(self.cf(name), key),
            };
        match op {
            LogOp::Posting { key, delta } => {
                if !delta.add.is_empty() || !delta.remove.is_empty() {
                    b.merge_cf(self.cf(cf::POSTINGS), key, delta.operand());
                }
            }
            LogOp::Simhash {
                table,
                simhash,
                doc,
                present,
            } => put_or_delete(
                b,
                cf::SIMHASH,
                &self.tables.wide_key(*table, *simhash, *doc),
                present.then_some(&[][..]),
            ),
            LogOp::Frequent { key, reason } => {
                put_or_delete(
                    b,
                    cf::FREQUENT,
                    key,
                    reason.as_ref().map(std::slice::from_ref),
                );
            }
            LogOp::Key { key, doc } => put_or_delete(
                b,
                cf::KEYS,
                key.as_bytes(),
                doc.map(wide_id_key).as_ref().map(|v| &v[..]),
            ),
            LogOp::Doc { id, record } => {
                let k = wide_id_key(*id);
                put_or_delete(
                    b,
                    cf::DOCS,
                    &k,
                    record.as_ref().map(|r| r.encode()).as_deref(),
                );
                // The page → cluster map follows the records.
                let cluster = record.as_ref().map(|r| wide_id_key(r.cluster));
                put_or_delete(b, cf::PAGE_CLUSTERS, &k, cluster.as_ref().map(|c| &c[..]));
            }
            LogOp::Text { id, value } => {
                let value = value.as_ref().map(|v| match v {
                    TextValue::Text(t) => codec::encode_text(t),
                    TextValue::PostingKeys(k) => codec::encode_posting_keys(k),
                });
                put_or_delete(b, cf::TEXTS, &wide_id_key(*id), value.as_deref());
            }
            LogOp::Cluster { id, record } => put_or_delete(
                b,
                cf::CLUSTERS,
                &wide_id_key(*id),
                record.as_ref().map(|r| r.encode()).as_deref(),
            ),
            LogOp::PageBlocks { id, blocks } => put_or_delete(
                b,
                cf::CHROME,
                &wide_chrome_page_key(*id),
                blocks.as_ref().map(|r| r.encode()).as_deref(),
            ),
            LogOp::HostPages { host, pages } => put_or_delete(
                b,
                cf::CHROME,
                &chrome_key::host(host),
                (*pages > 0)
                    .then(|| codec::encode_count(*pages))
                    .as_ref()
                    .map(|v| &v[..]),
            ),
            LogOp::BlockPages { host, block, pages } => put_or_delete(
                b,
                cf::CHROME,
                &chrome_key::block(host, *block),
                (*pages > 0)
                    .then(|| codec::encode_count(*pages))
                    .as_ref()
                    .map(|v| &v[..]),
            ),
            LogOp::FreeDoc { id, free } => put_or_delete(
                b,
                cf::META,
                &wide_free_key(meta::FREE_DOC, *id),
                free.then_some(&[][..]),
            ),
            LogOp::FreeCluster { id, free } => put_or_delete(
                b,
                cf::META,
                &wide_free_key(meta::FREE_CLUSTER, *id),
                free.then_some(&[][..]),
            ),
            LogOp::Counter(c) => {
                let (key, value) = match *c {
                    LogCounter::NextDoc(v) => (meta::NEXT_DOC, v),
                    LogCounter::NextCluster(v) => (meta::NEXT_CLUSTER, v),
                    LogCounter::LiveDocs(v) => (meta::LIVE_DOCS, v),
                    LogCounter::LiveClusters(v) => (meta::LIVE_CLUSTERS, v),
                    LogCounter::NextSeq(v) => (meta::NEXT_SEQ, v),
                };
                b.put_cf(self.cf(cf::META), key, value.to_be_bytes());
            }
        }
    }
}
