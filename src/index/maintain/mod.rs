//! Maintenance: checkpoints, compaction in place, flushes and statistics; `check` validates
//! every invariant, `compact` rewrites a snapshot offline, `explain` says why two pages are (not)
//! near duplicates.

mod check;
mod compact;
mod explain;

use std::path::Path;

use rocksdb::{BottommostLevelCompaction, CompactOptions, IteratorMode};

pub use check::CheckReport;
pub use compact::{dir_bytes, CompactReport};
pub use explain::{explain_pair, ExplainedPage, Explanation, PairStage};

use super::metrics::Metrics;
use super::types::{ChromeStats, Stats};
use super::{Index, FREQUENT_HOSTS};
use crate::storage::codec::{self, ClusterRecord};
use crate::storage::{self, cf};
use crate::{Error, Result};

impl Index {
    /// Writes a consistent snapshot of the index (a RocksDB checkpoint) to `dir`, which must not
    /// exist. The index stays in use meanwhile.
    ///
    /// # Errors
    /// [`Error::Storage`] when the checkpoint cannot be made.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        self.registration.check_process()?;
        storage::checkpoint(&self.db, dir.as_ref())
    }

    /// Sets a mutable option of a column family.
    fn set_cf_option(
        &self,
        h: &impl rocksdb::AsColumnFamilyRef,
        key: &str,
        value: &str,
    ) -> Result<()> {
        self.db
            .set_options_cf(h, &[(key, value)])
            .map_err(|e| Error::storage(format!("setting {key}"), e))
    }

    /// Compacts every column family down to the last level.
    ///
    /// # Errors
    /// [`Error::Storage`] when flushing fails, [`Error::ReadOnly`].
    pub fn compact(&self) -> Result<()> {
        self.registration.check_process()?;
        self.refuse_if_read_only("compaction")?;
        for (name, h) in self.families() {
            self.db
                .flush_cf(h)
                .map_err(|e| Error::storage("flushing", e))?;
            // Force the bottommost level too: files already there are rewritten, so every
            // merge operand is folded and every block gets the bottommost compression.
            let mut co = CompactOptions::default();
            co.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
            // The texts' blob files are all collected by this compaction (not only the oldest
            // quarter): the space of every deleted or replaced page's text is given back (and
            // of every change trimmed from the feed).
            let every_blob = name == cf::TEXTS || name == cf::CHANGES;
            if every_blob {
                self.set_cf_option(h, "blob_garbage_collection_age_cutoff", "1.0")?;
            }
            self.db
                .compact_range_cf_opt(h, None::<&[u8]>, None::<&[u8]>, &co);
            if every_blob {
                let cutoff = storage::TEXT_BLOB_GC_AGE_CUTOFF.to_string();
                self.set_cf_option(h, "blob_garbage_collection_age_cutoff", &cutoff)?;
            }
        }
        Ok(())
    }

    /// Flushes memtables to disk (the WAL already makes writes durable against a crash of the
    /// process; this makes the SST files reflect them).
    ///
    /// # Errors
    /// [`Error::Storage`] when flushing fails, [`Error::ReadOnly`].
    pub fn flush(&self) -> Result<()> {
        self.registration.check_process()?;
        self.refuse_if_read_only("a flush")?;
        for (_, h) in self.families() {
            self.db
                .flush_cf(h)
                .map_err(|e| Error::storage("flushing", e))?;
        }
        Ok(())
    }

    /// Figures about the index.
    ///
    /// # Errors
    /// Storage errors while reading properties.
    pub fn stats(&self) -> Result<Stats> {
        self.registration.check_process()?;
        let (live_docs, live_clusters, page_ids, cluster_ids) = {
            let c = self.writer.lock();
            (c.live_docs, c.live_clusters, c.next_doc, c.next_cluster)
        };
        let mut bytes = Vec::new();
        for (name, h) in self.families() {
            let prop = |p: &str| -> Result<u64> {
                Ok(self
                    .db
                    .property_int_value_cf(h, p)
                    .map_err(|e| Error::storage("reading properties", e))?
                    .unwrap_or(0))
            };
            bytes.push((
                name.to_string(),
                prop("rocksdb.total-sst-files-size")?
                    + prop("rocksdb.total-blob-file-size")?
                    + prop("rocksdb.cur-size-all-mem-tables")?,
            ));
        }
        let mut frequent = Vec::new();
        for item in self
            .db
            .iterator_cf(self.cf(cf::FREQUENT), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading frequent fingerprints", e))?;
            let reason = if v.first() == Some(&FREQUENT_HOSTS) {
                "few_hosts"
            } else {
                "pages"
            };
            frequent.push((crate::error::hex(&k), reason.to_string()));
        }
        const BUCKETS: [(u64, &str); 6] = [
            (1, "1"),
            (2, "2"),
            (5, "3-5"),
            (10, "6-10"),
            (50, "11-50"),
            (u64::MAX, "51-"),
        ];
        let mut sizes = [0u64; 6];
        for item in self
            .db
            .iterator_cf(self.cf(cf::CLUSTERS), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading clusters", e))?;
            let n = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?.members.len();
            if let Some(b) = BUCKETS.iter().position(|(max, _)| n <= *max) {
                sizes[b] += 1;
            }
        }
        let cluster_sizes = BUCKETS
            .iter()
            .zip(sizes)
            .map(|((_, name), n)| (name.to_string(), n))
            .collect();
        let mut chrome = ChromeStats::default();
        for item in self
            .db
            .iterator_cf(self.cf(cf::CHROME), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading block statistics", e))?;
            match storage::chrome_key::decode(&k) {
                Some(storage::chrome_key::Decoded::Host(_)) => chrome.hosts += 1,
                Some(storage::chrome_key::Decoded::Block(..)) => chrome.blocks += 1,
                Some(storage::chrome_key::Decoded::Page(_)) => {
                    let b = codec::PageBlocks::decode(cf::CHROME, &k, &v)?;
                    chrome.pages_counted += 1;
                    chrome.pages_stripped += u64::from(!b.dropped.is_empty());
                    chrome.blocks_dropped += b.dropped.len() as u64;
                }
                None => return Err(Error::corruption(cf::CHROME, &k, "malformed key")),
            }
        }
        Ok(Stats {
            chrome,
            pages: live_docs,
            clusters: live_clusters,
            page_ids,
            cluster_ids,
            frequent,
            bytes,
            cluster_sizes,
            memory: self.memory()?,
            rocksdb: self.rocksdb_figures()?,
        })
    }

    /// The memory the index holds, in bytes, by part: RocksDB's block cache (and what is pinned
    /// in it), memtables and table readers, and the index's own sets (the over-frequent
    /// fingerprints; the document frequencies of a method on corpus statistics). Constant time.
    ///
    /// # Errors
    /// Storage errors while reading properties.
    pub fn memory(&self) -> Result<Vec<(String, u64)>> {
        self.registration.check_process()?;
        let memtables = self.property_sum("rocksdb.cur-size-all-mem-tables")?;
        let readers = self.property_sum("rocksdb.estimate-table-readers-mem")?;
        let frequent = self.frequent.read().capacity() as u64 * 10;
        let df = self.df.read().words() as u64 * 24;
        Ok(vec![
            ("block_cache".into(), self.cache.get_usage() as u64),
            (
                "block_cache_pinned".into(),
                self.cache.get_pinned_usage() as u64,
            ),
            ("memtables".into(), memtables),
            ("table_readers".into(), readers),
            ("frequent_set".into(), frequent),
            ("doc_freqs".into(), df),
        ])
    }

    /// Metrics since the index was opened: per operation (insert, batch insert, query, near,
    /// delete) the calls that succeeded, those that failed and a latency histogram (count,
    /// mean, p50, p90, p99, max, in microseconds), what inserted pages turned out to be
    /// (unchanged, replaced, near duplicates); with RocksDB's figures (write stalls, compaction
    /// debt) and the memory by part ([`Index::memory`]) as they are now. The counters cost the
    /// operations a few relaxed atomic adds; reading them takes no lock an operation waits on.
    /// [`Metrics::to_json`] is its wire form.
    ///
    /// # Errors
    /// Storage errors while reading properties.
    pub fn metrics(&self) -> Result<Metrics> {
        self.registration.check_process()?;
        let rocksdb = self.rocksdb_figures()?;
        let memory = self.memory()?;
        Ok(self.metrics.snapshot(rocksdb, memory))
    }

    /// RocksDB's own statistics, as its `rocksdb.stats` property prints them, column family by
    /// column family (compactions, levels, stalls, cache): what an operator reads when writes
    /// slow down.
    ///
    /// # Errors
    /// Storage errors while reading properties.
    pub fn rocksdb_stats(&self) -> Result<String> {
        self.registration.check_process()?;
        let mut out = String::new();
        for (name, h) in self.families() {
            let v = self
                .db
                .property_value_cf(h, "rocksdb.stats")
                .map_err(|e| Error::storage("reading properties", e))?
                .unwrap_or_default();
            out.push_str(&format!("** column family {name} **\n{v}\n"));
        }
        Ok(out)
    }

    /// The figures of RocksDB an operator watches: write stalls (now, and counted since the
    /// database was opened) and the compaction debt. Part of [`Index::stats`] and
    /// [`Index::metrics`].
    fn rocksdb_figures(&self) -> Result<Vec<(String, u64)>> {
        let db = |p: &str| -> Result<u64> {
            Ok(self
                .db
                .property_int_value(p)
                .map_err(|e| Error::storage("reading properties", e))?
                .unwrap_or(0))
        };
        Ok(vec![
            (
                "pending_compaction_bytes".into(),
                self.property_sum("rocksdb.estimate-pending-compaction-bytes")?,
            ),
            (
                "immutable_memtables".into(),
                self.property_sum("rocksdb.num-immutable-mem-table")?,
            ),
            (
                "running_compactions".into(),
                db("rocksdb.num-running-compactions")?,
            ),
            ("running_flushes".into(), db("rocksdb.num-running-flushes")?),
            (
                "delayed_write_rate".into(),
                db("rocksdb.actual-delayed-write-rate")?,
            ),
            ("writes_stopped".into(), db("rocksdb.is-write-stopped")?),
            ("live_sst_bytes".into(), db("rocksdb.live-sst-files-size")?),
            (
                "write_stall_delays".into(),
                self.stall_count("total-delays")?,
            ),
            ("write_stall_stops".into(), self.stall_count("total-stops")?),
        ])
    }

    /// A write-stall counter of RocksDB (`total-delays`, `total-stops`) since the database was
    /// opened, summed over the column families. RocksDB gives it as text only (`Write Stall
    /// (count): name: n, name: n, ...`); a figure it does not print counts 0.
    fn stall_count(&self, name: &str) -> Result<u64> {
        let mut sum = 0;
        for (_, h) in self.families() {
            let text = self
                .db
                .property_value_cf(h, "rocksdb.cf-write-stall-stats")
                .map_err(|e| Error::storage("reading properties", e))?
                .unwrap_or_default();
            sum += stall_figure(&text, name);
        }
        Ok(sum)
    }

    /// A RocksDB integer property summed over the column families.
    fn property_sum(&self, p: &str) -> Result<u64> {
        let mut sum = 0;
        for (_, h) in self.families() {
            sum += self
                .db
                .property_int_value_cf(h, p)
                .map_err(|e| Error::storage("reading properties", e))?
                .unwrap_or(0);
        }
        Ok(sum)
    }
}

/// The figure `name` in RocksDB's write-stall text (`Write Stall (count): a: 1, b: 2\n`); 0 when
/// absent or not a number.
fn stall_figure(text: &str, name: &str) -> u64 {
    let body = text.split_once(':').map_or("", |(_, rest)| rest);
    body.split([',', '\n'])
        .filter_map(|item| item.split_once(':'))
        .find(|(k, _)| k.trim() == name)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn stall_figures_are_read_from_rocksdb_text() {
        let text =
            "Write Stall (count): cf-l0-file-count-limit-delays-with-ongoing-compaction: 0, \
                    memtable-limit-stops: 2, total-delays: 7, total-stops: 3\n";
        assert_eq!(super::stall_figure(text, "total-delays"), 7);
        assert_eq!(super::stall_figure(text, "total-stops"), 3);
        assert_eq!(super::stall_figure(text, "other"), 0);
        assert_eq!(super::stall_figure("", "total-stops"), 0);
    }
}
