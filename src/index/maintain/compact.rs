//! Offline compaction of a snapshot (SPEC §3): a consistent snapshot (checkpoint) is rewritten
//! into a fresh, smaller, verified index without touching the source or the live index.

use std::path::Path;

use roaring::RoaringBitmap;
use rocksdb::IteratorMode;
use serde::{Deserialize, Serialize};

use super::{CheckReport, Index};
use crate::storage::codec::{self, ClusterRecord, DocRecord};
use crate::storage::{self, cf, SimhashTables};
use crate::{Error, Result};

/// What [`Index::compact_snapshot`] did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CompactReport {
    /// Bytes of the source directory.
    pub bytes_before: u64,
    /// Bytes of the new index directory.
    pub bytes_after: u64,
    /// Live pages copied.
    pub pages: u64,
    /// Posting entries dropped because they named deleted pages.
    pub stale_ids_dropped: u64,
    /// Postings dropped because their fingerprint is over-frequent.
    pub frequent_postings_dropped: u64,
    /// Simhash entries dropped because they named deleted pages.
    pub stale_simhash_dropped: u64,
    /// The invariant check of the new index.
    pub check: CheckReport,
}

/// Total size of the files below a directory.
pub fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

impl Index {
    /// Compacts the snapshot in `from` (a checkpoint, opened read-only and never modified) into a
    /// new index in `to` (which must not exist): every record is decoded and its checksum
    /// verified, postings are rewritten without deleted pages and without over-frequent
    /// fingerprints and their bitmaps re-optimized, simhash entries of deleted pages are dropped,
    /// all levels are compacted, and the new index is checked.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `to` exists or `from` holds no index,
    /// [`Error::Corruption`] for any record that fails its checksum, [`Error::CheckFailed`] when
    /// the new index does not pass its check (in every error case the new directory is removed),
    /// storage errors.
    pub fn compact_snapshot(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<CompactReport> {
        let (from, to) = (from.as_ref(), to.as_ref());
        if to.exists() {
            return Err(Error::InvalidArgument(format!(
                "{} already exists",
                to.display()
            )));
        }
        // No index at `from`: `StoredConfig::read` says so before anything is written.
        let result = Self::compact_into(from, to);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(to);
        }
        result
    }

    pub(crate) fn compact_into(from: &Path, to: &Path) -> Result<CompactReport> {
        let stored = crate::index::open::StoredConfig::read(from)?;
        let tables = SimhashTables::new(stored.simhash_max_distance)?;
        let src = storage::open_db_read_only(from, tables)?;
        let handle = |name: &'static str| {
            src.cf_handle(name).ok_or_else(|| {
                Error::corruption(name, b"", "column family missing from the snapshot")
            })
        };
        let opts = stored.options();
        let mut report = CompactReport {
            bytes_before: dir_bytes(from),
            ..CompactReport::default()
        };
        let dst = Index::open(to, opts)?;

        let it_err = |e| Error::storage("reading the snapshot", e);
        let mut live = RoaringBitmap::new();
        let mut batch = rocksdb::WriteBatch::default();
        let flush = |batch: &mut rocksdb::WriteBatch, force: bool| -> Result<()> {
            if force || batch.len() >= 10_000 {
                let b = std::mem::take(batch);
                dst.db
                    .write(b)
                    .map_err(|e| Error::storage("writing the compacted index", e))?;
            }
            Ok(())
        };
        // Pages (and the ids that are live).
        for item in src.iterator_cf(handle(cf::DOCS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(it_err)?;
            let id = storage::decode_u32(cf::DOCS, &k, &k)?;
            DocRecord::decode(cf::DOCS, &k, &v)?;
            live.insert(id);
            batch.put_cf(dst.cf(cf::DOCS), &k, &v);
            flush(&mut batch, false)?;
        }
        report.pages = live.len();
        for item in src.iterator_cf(handle(cf::TEXTS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(it_err)?;
            codec::decode_text_value(cf::TEXTS, &k, &v)?;
            batch.put_cf(dst.cf(cf::TEXTS), &k, &v);
            flush(&mut batch, false)?;
        }
        for item in src.iterator_cf(handle(cf::CLUSTERS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(it_err)?;
            let mut cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            cl.members.optimize();
            batch.put_cf(dst.cf(cf::CLUSTERS), &k, cl.encode());
            flush(&mut batch, false)?;
        }
        // A snapshot of an index from before site chrome was learned has no `chrome` column
        // family: the new index starts learning from nothing, like the old one would have.
        let chrome = src.cf_handle(cf::CHROME).map(|_| cf::CHROME);
        for name in [cf::KEYS, cf::FREQUENT, cf::META].into_iter().chain(chrome) {
            for item in src.iterator_cf(handle(name)?, IteratorMode::Start) {
                let (k, v) = item.map_err(it_err)?;
                if name == cf::KEYS {
                    storage::decode_u32(cf::KEYS, &k, &v)?;
                }
                batch.put_cf(dst.cf(name), &k, &v);
                flush(&mut batch, false)?;
            }
        }
        let mut frequent = std::collections::HashSet::new();
        for item in src.iterator_cf(handle(cf::FREQUENT)?, IteratorMode::Start) {
            let (k, _) = item.map_err(it_err)?;
            frequent.insert(k.to_vec());
        }
        for item in src.iterator_cf_opt(
            handle(cf::POSTINGS)?,
            storage::scan_options(),
            IteratorMode::Start,
        ) {
            let (k, v) = item.map_err(it_err)?;
            if frequent.contains(k.as_ref()) {
                report.frequent_postings_dropped += 1;
                continue;
            }
            let mut ids =
                codec::decode_posting(&v).map_err(|r| Error::corruption(cf::POSTINGS, &k, r))?;
            let before = ids.len();
            ids &= &live;
            report.stale_ids_dropped += before - ids.len();
            if ids.is_empty() {
                continue;
            }
            ids.optimize();
            batch.put_cf(dst.cf(cf::POSTINGS), &k, codec::encode_posting(&ids));
            flush(&mut batch, false)?;
        }
        for item in src.iterator_cf_opt(
            handle(cf::SIMHASH)?,
            storage::scan_options(),
            IteratorMode::Start,
        ) {
            let (k, v) = item.map_err(it_err)?;
            let (_, _, id) = tables
                .decode(&k)
                .ok_or_else(|| Error::corruption(cf::SIMHASH, &k, "key is not 13 bytes"))?;
            if !live.contains(id) {
                report.stale_simhash_dropped += 1;
                continue;
            }
            batch.put_cf(dst.cf(cf::SIMHASH), &k, &v);
            flush(&mut batch, false)?;
        }
        flush(&mut batch, true)?;
        drop(src);
        dst.compact()?;
        // Reload the in-memory state from what was copied, then check everything.
        drop(dst);
        let dst = Index::open_existing(to)?;
        report.check = dst.check()?;
        drop(dst);
        if !report.check.is_clean() {
            return Err(Error::CheckFailed {
                problems: report.check.problem_count,
                first: report.check.problems.first().cloned().unwrap_or_default(),
            });
        }
        report.bytes_after = dir_bytes(to);
        Ok(report)
    }
}
