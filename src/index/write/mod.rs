//! Writing: the writer gate (one writer at a time, refused once poisoned), the commit of a write
//! transaction as one atomic `WriteBatch`, and the WAL sync after it.
//!
//! - `txn`: the write transaction, a `WriteBatch` with a read-your-writes overlay;
//! - `insert`: insert, replace and delete of one page;
//! - `place`: cluster placement and the hand-over of a deleted representative (SPEC §2.7);
//! - `batch`: batch ingest, with its look-ahead (`ahead`) and scheduler (`schedule`), and its
//!   pages' main texts, chrome decisions and signatures (`sign`);
//! - `feed`: the change feed's records of a write, its trim, and the ids a change applied to a
//!   copy gives out again; `replay`: a change of another index's feed applied to this one.

mod ahead;
mod batch;
mod feed;
mod insert;
mod place;
mod replay;
mod schedule;
mod sign;
mod txn;
mod window;

use std::sync::atomic::Ordering;

use rocksdb::WriteOptions;

pub use batch::{BatchOptions, BatchOrder, OrderScope};
pub(crate) use txn::{term_of_key, Txn};

use super::ids::Counters;
use super::view::Committed;
use super::Index;
use crate::{Error, Result};

impl Index {
    /// Takes the writer lock, refusing when the index is poisoned (checked after the lock is
    /// held, so a writer that waited behind a failed commit does not write).
    pub(crate) fn lock_writer(&self) -> Result<parking_lot::MutexGuard<'_, Counters>> {
        let guard = self.writer.lock();
        self.check_writable()?;
        Ok(guard)
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        self.registration.check_process()?;
        self.refuse_if_read_only("a write")?;
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        Ok(())
    }

    /// Syncs the write-ahead log when the index syncs its writes (see
    /// [`IndexOptions::sync_writes`]): everything committed before is durable when it returns.
    /// A failed sync poisons the index (a write it acknowledged could be lost).
    ///
    /// A sync after a failed one must not acknowledge anything: the WAL may have lost what came
    /// before (after a failed fsync the kernel may drop the dirty pages), so once poisoned, this
    /// fails. A sync that another thread's sync already covered is skipped.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        if !self.opts.sync_writes {
            return Ok(());
        }
        let upto = self.commits.load(Ordering::Acquire);
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        if self.durable.load(Ordering::Acquire) >= upto {
            return Ok(());
        }
        let synced = self.db.flush_wal(true);
        if synced.is_ok() && self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        if let Err(e) = synced {
            self.poisoned.store(true, Ordering::Release);
            log::error!(
                "neardup: syncing the write-ahead log of {} failed ({e}); the index refuses \
                 writes until reopened",
                self.path.display()
            );
            return Err(Error::storage("syncing the write-ahead log", e));
        }
        self.durable.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    /// Commits a transaction in one atomic write. `sync` syncs the WAL before returning (the
    /// groups of a batch are written without it, and the batch syncs once at its end).
    /// Returns the commit's number (see [`Index::commits`]) and the posting changes it committed.
    pub(crate) fn commit(
        &self,
        mut txn: Txn<'_>,
        counters: &mut Counters,
        sync: bool,
    ) -> Result<Committed> {
        // Nothing is written yet when this fails: the index stays writable.
        txn.resolve_chrome()?;
        txn.resolve_feed()?;
        txn.finish();
        let frequent_added = std::mem::take(&mut txn.frequent_added);
        let frequent_deleted = txn.frequent_deleted();
        let df_delta = std::mem::take(&mut txn.df_delta);
        let mut ids = txn.take_ids();
        let journal = std::mem::take(&mut ids.journal);
        let mut wo = WriteOptions::default();
        wo.set_sync(sync && self.opts.sync_writes);
        let batch = std::mem::take(&mut txn.batch);
        if let Err(e) = self.db.write_opt(batch, &wo) {
            self.poisoned.store(true, Ordering::Release);
            log::error!(
                "neardup: a write to {} failed ({e}); the index refuses writes until reopened",
                self.path.display()
            );
            return Err(Error::storage("committing a write batch", e));
        }
        let number = self.commits.fetch_add(1, Ordering::AcqRel) + 1;
        if !journal.is_empty() {
            if let Some(recorded) = self.allocations.lock().as_mut() {
                recorded.extend(journal);
            }
        }
        counters.next_doc = txn.next_doc;
        counters.next_cluster = txn.next_cluster;
        counters.live_docs = txn.live_docs;
        counters.live_clusters = txn.live_clusters;
        counters.next_seq = txn.next_seq;
        counters.next_change = txn.next_change;
        counters.changes_trimmed = txn.changes_trimmed;
        let hold = !counters.batches.is_empty();
        counters
            .free_docs
            .settle(&ids.taken_docs, &ids.freed_docs, number, hold);
        counters
            .free_clusters
            .settle(&ids.taken_clusters, &ids.freed_clusters, number, hold);
        if !frequent_added.is_empty() || !frequent_deleted.is_empty() {
            let mut frequent = self.frequent.write();
            frequent.extend(frequent_added);
            for key in &frequent_deleted {
                frequent.remove(key);
            }
        }
        if self.opts.signature.method.uses_df() {
            let mut df = self.df.write();
            for (word, by) in df_delta {
                df.change(word, by);
            }
            df.set_docs(txn.live_docs);
        }
        Ok((number, txn.take_postings()))
    }

    pub(crate) fn refuse_if_read_only(&self, what: &'static str) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone(), what));
        }
        Ok(())
    }

    /// Refuses `what` (an insert or a delete) on a partition of a distributed index, which only
    /// batch logs write.
    pub(crate) fn refuse_if_partition(&self, what: &str) -> Result<()> {
        if self.partition.read().is_some() {
            return Err(Error::InvalidArgument(format!(
                "{what} on {}: a partition of a distributed index is written by batch logs only",
                self.path.display()
            )));
        }
        Ok(())
    }
}
