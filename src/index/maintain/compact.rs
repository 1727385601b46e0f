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

/// Pages checked one by one after a compaction that was not asked for a full check.
const SAMPLE_AFTER_COMPACTION: u64 = 1_000;

/// Bytes of one table file written by a compaction.
const TABLE_FILE_BYTES: u64 = 256 << 20;

/// Bytes a write of [`Index::compact_snapshot`] through the new index carries.
const UNLOGGED_BATCH_BYTES: usize = 4 << 20;

/// Writes `items` into column family `name` of the new index `dst` through its own writes,
/// without the log, in batches of [`UNLOGGED_BATCH_BYTES`], and flushes the family at the end
/// (what a compaction cannot write as table files apart: texts in blob files, simhash tables
/// cut anew).
fn write_unlogged(
    dst: &Index,
    name: &'static str,
    items: impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
) -> Result<()> {
    let h = dst.cf(name);
    let mut wo = rocksdb::WriteOptions::default();
    wo.disable_wal(true);
    let err = |e| Error::storage(format!("writing `{name}` of the compacted index"), e);
    let mut batch = rocksdb::WriteBatch::default();
    for item in items {
        let (k, v) = item?;
        batch.put_cf(h, &k, &v);
        if batch.size_in_bytes() >= UNLOGGED_BATCH_BYTES {
            dst.db
                .write_opt(std::mem::take(&mut batch), &wo)
                .map_err(err)?;
        }
    }
    dst.db.write_opt(batch, &wo).map_err(err)?;
    dst.db.flush_cf(h).map_err(err)
}

/// The table files of one column family, written in key order (see [`Index::compact_snapshot`]).
struct TableFiles {
    name: &'static str,
    dir: std::path::PathBuf,
    opts: rocksdb::Options,
    files: Vec<std::path::PathBuf>,
}

impl TableFiles {
    fn new(name: &'static str, dir: &Path, opts: rocksdb::Options) -> TableFiles {
        TableFiles {
            name,
            dir: dir.to_path_buf(),
            opts,
            files: Vec::new(),
        }
    }

    /// Writes `entries` (in strictly increasing key order) into files of about
    /// [`TABLE_FILE_BYTES`].
    fn write(
        &mut self,
        mut entries: impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
    ) -> Result<()> {
        let err = |e| Error::storage("writing a table file of the compacted index", e);
        let mut writer: Option<rocksdb::SstFileWriter<'_>> = None;
        loop {
            let next = entries.next().transpose()?;
            let full = writer
                .as_ref()
                .is_some_and(|w| w.file_size() >= TABLE_FILE_BYTES);
            if next.is_none() || full {
                if let Some(mut w) = writer.take() {
                    w.finish().map_err(err)?;
                }
            }
            let Some((k, v)) = next else {
                return Ok(());
            };
            if writer.is_none() {
                let path = self
                    .dir
                    .join(format!("{}-{:04}.sst", self.name, self.files.len()));
                let w = rocksdb::SstFileWriter::create(&self.opts);
                w.open(&path).map_err(err)?;
                self.files.push(path);
                writer = Some(w);
            }
            if let Some(w) = writer.as_mut() {
                w.put(&k, &v).map_err(err)?;
            }
        }
    }
}

impl Index {
    /// Compacts the snapshot in `from` (a checkpoint, opened read-only and never modified) into a
    /// new index in `to` (which must not exist), one pass over each column family: every record
    /// is decoded and its checksum verified, postings are rewritten without deleted pages and
    /// without over-frequent fingerprints and their bitmaps re-optimized, simhash entries of
    /// deleted pages are dropped, and each column family is written in key order straight into
    /// table files of the last level (no compaction after) — but the texts, which go through the
    /// new index's own writes into its blob files (FORMAT.md). The new index is then checked on
    /// 1,000 random pages ([`Index::check_sample`]); [`Index::compact_snapshot_checked`] checks
    /// it whole.
    ///
    /// The new index is of the current on-disk format whatever the snapshot's (but format 2,
    /// upgraded to 3 when opened): a format 3 snapshot's simhash tables are cut anew, and the
    /// page → cluster map of format 5 is built from the page records.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `to` exists or `from` holds no index,
    /// [`Error::Corruption`] for any record that fails its checksum, [`Error::CheckFailed`] when
    /// the new index does not pass its check (in every error case the new directory is removed),
    /// storage errors.
    pub fn compact_snapshot(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<CompactReport> {
        Self::compact_snapshot_with(from.as_ref(), to.as_ref(), false)
    }

    /// [`Index::compact_snapshot`], then the whole new index checked ([`Index::check`]) rather
    /// than a sample of it.
    ///
    /// # Errors
    /// As [`Index::compact_snapshot`].
    pub fn compact_snapshot_checked(
        from: impl AsRef<Path>,
        to: impl AsRef<Path>,
    ) -> Result<CompactReport> {
        Self::compact_snapshot_with(from.as_ref(), to.as_ref(), true)
    }

    fn compact_snapshot_with(from: &Path, to: &Path, full_check: bool) -> Result<CompactReport> {
        if to.exists() {
            return Err(Error::InvalidArgument(format!(
                "{} already exists",
                to.display()
            )));
        }
        // No index at `from`: `StoredConfig::read` says so before anything is written.
        let result = Self::compact_into(from, to, full_check);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(to);
        }
        result
    }

    pub(crate) fn compact_into(from: &Path, to: &Path, full_check: bool) -> Result<CompactReport> {
        let (format, stored) = crate::index::open::StoredConfig::read_with_format(from)?;
        let tables = SimhashTables::for_format(stored.simhash_max_distance, format)?;
        let budget = crate::IndexOptions::default().budget();
        let (src, _cache) = storage::open_db_read_only(from, tables, &budget)?;
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
        let staging = to.join("compaction");
        std::fs::create_dir(&staging).map_err(|source| Error::Io {
            path: staging.clone(),
            source,
        })?;
        let files = |name: &'static str| {
            TableFiles::new(
                name,
                &staging,
                storage::cf_options(name, tables, &dst.cache, &budget),
            )
        };
        let scan = |name: &'static str| -> Result<_> {
            Ok(src
                .iterator_cf_opt(handle(name)?, storage::scan_options(), IteratorMode::Start)
                .map(|item| {
                    item.map(|(k, v)| (k.into_vec(), v.into_vec()))
                        .map_err(|e| Error::storage("reading the snapshot", e))
                }))
        };
        let mut written: Vec<TableFiles> = Vec::new();

        // Pages (and the ids that are live).
        let mut live = RoaringBitmap::new();
        let mut out = files(cf::DOCS);
        out.write(scan(cf::DOCS)?.map(|item| {
            let (k, v) = item?;
            let id = storage::decode_u32(cf::DOCS, &k, &k)?;
            DocRecord::decode(cf::DOCS, &k, &v)?;
            live.insert(id);
            Ok((k, v))
        }))?;
        written.push(out);
        report.pages = live.len();
        // The page → cluster map, from the records (a second pass: nothing the size of the
        // index is held). A format 2 snapshot stays without it: it is upgraded to format 3
        // when the new index opens.
        let current = format != storage::FORMAT_VERSION_2;
        if current {
            let mut out = files(cf::PAGE_CLUSTERS);
            out.write(scan(cf::DOCS)?.map(|item| {
                let (k, v) = item?;
                let cluster = DocRecord::decode_cluster(cf::DOCS, &k, &v)?;
                Ok((k, cluster.to_be_bytes().to_vec()))
            }))?;
            written.push(out);
        }
        // The texts go through the new index's own writes (without the log, flushed at the
        // end): a table file written apart cannot hold blob files, where the texts live.
        write_unlogged(
            &dst,
            cf::TEXTS,
            scan(cf::TEXTS)?.map(|item| {
                let (k, v) = item?;
                codec::decode_text_value(cf::TEXTS, &k, &v)?;
                Ok((k, v))
            }),
        )?;
        // The change feed, through the new index's writes as the texts are (its records live
        // in blob files): the feed goes on where it was, from the snapshot's counters (copied
        // with `meta`). A snapshot from before the feed has neither (see below).
        let feed = src.cf_handle(cf::CHANGES).is_some();
        if feed {
            write_unlogged(
                &dst,
                cf::CHANGES,
                scan(cf::CHANGES)?.map(|item| {
                    let (k, v) = item?;
                    crate::storage::change::Change::decode_entry(&k, &v)?;
                    Ok((k, v))
                }),
            )?;
        }
        let mut out = files(cf::CLUSTERS);
        out.write(scan(cf::CLUSTERS)?.map(|item| {
            let (k, v) = item?;
            let mut cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            cl.members.optimize();
            Ok((k, cl.encode()))
        }))?;
        written.push(out);
        // A snapshot of an index from before site chrome was learned has no `chrome` column
        // family: the new index starts learning from nothing, like the old one would have.
        let chrome = src.cf_handle(cf::CHROME).map(|_| cf::CHROME);
        for name in [cf::KEYS, cf::FREQUENT, cf::META].into_iter().chain(chrome) {
            let mut out = files(name);
            out.write(scan(name)?.map(|item| {
                let (k, v) = item?;
                if name == cf::KEYS {
                    storage::decode_u32(cf::KEYS, &k, &v)?;
                }
                Ok((k, v))
            }))?;
            written.push(out);
        }
        let mut frequent = std::collections::HashSet::new();
        for item in scan(cf::FREQUENT)? {
            frequent.insert(item?.0);
        }
        let mut out = files(cf::POSTINGS);
        out.write(scan(cf::POSTINGS)?.filter_map(|item| {
            let (k, v) = match item {
                Ok(kv) => kv,
                Err(e) => return Some(Err(e)),
            };
            if frequent.contains(&k) {
                report.frequent_postings_dropped += 1;
                return None;
            }
            let mut ids = match codec::decode_posting(&v) {
                Ok(ids) => ids,
                Err(r) => return Some(Err(Error::corruption(cf::POSTINGS, &k, r))),
            };
            let before = ids.len();
            ids &= &live;
            report.stale_ids_dropped += before - ids.len();
            if ids.is_empty() {
                return None;
            }
            ids.optimize();
            Some(Ok((k, codec::encode_posting(&ids))))
        }))?;
        written.push(out);
        // A format 3 snapshot's simhash tables are cut anew for the new index's format
        // (FORMAT.md "simhash"), through its own writes as the texts are: one entry per table
        // for each live page of the old table 0. Other snapshots' are copied as they are.
        let relayout = format == storage::FORMAT_VERSION_3 && tables != dst.tables;
        let entries = scan(cf::SIMHASH)?.filter_map(|item| {
            let (k, v) = match item {
                Ok(kv) => kv,
                Err(e) => return Some(Err(e)),
            };
            match tables.decode(&k) {
                None => Some(Err(Error::corruption(
                    cf::SIMHASH,
                    &k,
                    "key is not 13 bytes",
                ))),
                Some((_, _, id)) if !live.contains(id) => {
                    report.stale_simhash_dropped += 1;
                    None
                }
                Some(entry) => Some(Ok((k, v, entry))),
            }
        });
        if relayout {
            let new = dst.tables;
            let rekeyed = entries.flat_map(|item| -> Vec<Result<_>> {
                match item {
                    Ok((_, _, (0, h, id))) => (0..new.tables)
                        .map(|t| Ok((new.key(t, h, id).to_vec(), Vec::new())))
                        .collect(),
                    Ok(_) => Vec::new(),
                    Err(e) => vec![Err(e)],
                }
            });
            write_unlogged(&dst, cf::SIMHASH, rekeyed)?;
        } else {
            let mut out = files(cf::SIMHASH);
            out.write(entries.map(|item| item.map(|(k, v, _)| (k, v))))?;
            written.push(out);
        }
        // Into the new index, each column family's files at the last level (its meta written at
        // creation is overwritten by the snapshot's, as the copy of a record would).
        let mut ingest = rocksdb::IngestExternalFileOptions::default();
        ingest.set_move_files(true);
        for out in &written {
            if out.files.is_empty() {
                continue;
            }
            dst.db
                .ingest_external_file_cf_opts(dst.cf(out.name), &ingest, out.files.clone())
                .map_err(|e| Error::storage("ingesting the compacted table files", e))?;
        }
        if current {
            // The snapshot's meta, copied above, names its format: the new index is of the
            // current one (its simhash tables cut anew above when they differ, its page →
            // cluster map written).
            dst.db
                .put_cf(
                    dst.cf(cf::META),
                    crate::storage::meta::FORMAT,
                    crate::storage::FORMAT_VERSION.to_be_bytes(),
                )
                .map_err(|e| Error::storage("writing the format of the compacted index", e))?;
        }
        // A snapshot whose feed never started: the counters the new index wrote when it was
        // created go, and its next open starts the feed as for any index with a history.
        let m = src.cf_handle(cf::META).ok_or_else(|| {
            Error::corruption(cf::META, b"", "column family missing from the snapshot")
        })?;
        let started = src
            .get_cf(m, crate::storage::meta::NEXT_CHANGE)
            .map_err(|e| Error::storage("reading the snapshot", e))?
            .is_some();
        if !started {
            for k in [
                crate::storage::meta::NEXT_CHANGE,
                crate::storage::meta::CHANGES_TRIMMED,
            ] {
                dst.db
                    .delete_cf(dst.cf(cf::META), k)
                    .map_err(|e| Error::storage("writing the compacted index", e))?;
            }
        }
        let _ = std::fs::remove_dir_all(&staging);
        // Reload the in-memory state from what was copied, then check it.
        drop(dst);
        let dst = Index::open_existing(to)?;
        report.check = if full_check {
            dst.check()?
        } else {
            dst.check_sample(SAMPLE_AFTER_COMPACTION)?
        };
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
