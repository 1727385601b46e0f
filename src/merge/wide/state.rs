//! A format 7 partition's state read back as a log of `u64` ids: the whole state
//! ([`WidePartition::state_log`], as [`crate::Index::state_log`]) and the seed of a scratch
//! index (SCALEOUT §5 S4.2; [`WidePartition::seed_log`], as [`crate::Index::seed_log`]), in the
//! same order as an index's, so that a partition of `u32` ids and one of `u64` ids holding the
//! same rows give the same logs once widened.

use std::collections::{BTreeMap, BTreeSet};

use roaring::RoaringTreemap;
use rocksdb::{Direction, IteratorMode, SnapshotWithThreadMode, DB};

use super::{WideCounters, WidePartition};
use crate::merge::log::{LogCounter, LogOp};
use crate::merge::seedsort::PostingRuns;
use crate::merge::state::{push_page_rows, seed_file, seed_vec};
use crate::signature::posting_keys_of_text;
use crate::storage::codec::{self, ClusterRecord, DocRecord, PageBlocks, TextValue};
use crate::storage::merge::WideDelta;
use crate::storage::wide_keys::decode_wide_chrome_page_key;
use crate::storage::width::{decode_wide_id, wide_id_key, WideClusterId, WideDocId};
use crate::storage::{self, cf, chrome_key, meta};
use crate::{Error, Result};

type Snapshot<'a> = SnapshotWithThreadMode<'a, DB>;

/// Called with each key and value of a scan; `false` stops it.
type Visit<'v> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'v;

impl WidePartition {
    /// The log that gives an empty partition this one's state: its counters (next page and
    /// cluster ids, live pages and clusters, next insertion number), then every key of every
    /// column family but `meta`'s other keys, free ids included: postings, simhash entries,
    /// over-frequent keys, keys, pages, texts, clusters, chrome (pages' blocks, hosts' pages,
    /// blocks' pages), free page ids, free cluster ids — each group in the order of
    /// [`crate::Index::state_log`]'s, all read from one snapshot.
    ///
    /// # Errors
    /// Storage errors, [`Error::Corruption`] for a key or value that does not decode (one of
    /// `u32` ids named so).
    pub fn state_log(&self) -> Result<Vec<LogOp<u64>>> {
        self.registration.check_process()?;
        // Writes happen under the writer lock: the snapshot holds whole chunks.
        let snap = {
            let _writer = self.writer.lock();
            self.db.snapshot()
        };
        let c = self.counters_at(&snap)?;
        let mut log = vec![
            LogOp::Counter(LogCounter::NextDoc(c.next_doc)),
            LogOp::Counter(LogCounter::NextCluster(c.next_cluster)),
            LogOp::Counter(LogCounter::LiveDocs(c.live_docs)),
            LogOp::Counter(LogCounter::LiveClusters(c.live_clusters)),
            LogOp::Counter(LogCounter::NextSeq(c.next_seq)),
        ];
        self.scan(&snap, cf::POSTINGS, b"", &mut |k, v| {
            let key = <[u8; 9]>::try_from(k)
                .map_err(|_| Error::corruption(cf::POSTINGS, k, "key is not 9 bytes"))?;
            let add =
                codec::decode_wide_posting(v).map_err(|r| Error::corruption(cf::POSTINGS, k, r))?;
            log.push(LogOp::Posting {
                key,
                delta: WideDelta {
                    add,
                    remove: RoaringTreemap::new(),
                },
            });
            Ok(true)
        })?;
        // Stored in the tables' own key order: sorted here by (table, simhash, page).
        let mut entries = Vec::new();
        self.scan(&snap, cf::SIMHASH, b"", &mut |k, _| {
            entries.push(self.tables.decode_wide(k).ok_or_else(|| {
                Error::corruption(cf::SIMHASH, k, "key is not a 17-byte wide simhash key")
            })?);
            Ok(true)
        })?;
        entries.sort_unstable();
        log.extend(
            entries
                .into_iter()
                .map(|(table, simhash, doc)| LogOp::Simhash {
                    table,
                    simhash,
                    doc,
                    present: true,
                }),
        );
        for (key, reason) in self.frequent_at(&snap)? {
            log.push(LogOp::Frequent {
                key,
                reason: Some(reason),
            });
        }
        self.scan(&snap, cf::KEYS, b"", &mut |k, v| {
            let key = std::str::from_utf8(k)
                .map_err(|_| Error::corruption(cf::KEYS, k, "key is not UTF-8"))?;
            log.push(LogOp::Key {
                key: key.to_string(),
                doc: Some(decode_wide_id(cf::KEYS, k, v)?),
            });
            Ok(true)
        })?;
        self.scan(&snap, cf::DOCS, b"", &mut |k, v| {
            log.push(LogOp::Doc {
                id: decode_wide_id(cf::DOCS, k, k)?,
                record: Some(DocRecord::<u64>::decode_as(cf::DOCS, k, v)?),
            });
            Ok(true)
        })?;
        self.scan(&snap, cf::TEXTS, b"", &mut |k, v| {
            log.push(LogOp::Text {
                id: decode_wide_id(cf::TEXTS, k, k)?,
                value: Some(codec::decode_text_value(cf::TEXTS, k, v)?),
            });
            Ok(true)
        })?;
        self.scan(&snap, cf::CLUSTERS, b"", &mut |k, v| {
            log.push(LogOp::Cluster {
                id: decode_wide_id(cf::CLUSTERS, k, k)?,
                record: Some(ClusterRecord::<u64>::decode_as(cf::CLUSTERS, k, v)?),
            });
            Ok(true)
        })?;
        // One column family for three kinds, in its own key order: each kind sorted here as an
        // index's state log sorts it (pages by id, hosts by name, blocks by digest then host).
        let mut pages = Vec::new();
        let mut hosts = Vec::new();
        let mut blocks = Vec::new();
        self.scan(&snap, cf::CHROME, b"", &mut |k, v| {
            if let Some(id) = decode_wide_chrome_page_key(k) {
                pages.push(LogOp::PageBlocks {
                    id,
                    blocks: Some(PageBlocks::decode(cf::CHROME, k, v)?),
                });
                return Ok(true);
            }
            match chrome_key::decode(k) {
                Some(chrome_key::Decoded::Host(host)) => {
                    hosts.push((host.to_string(), codec::decode_count(cf::CHROME, k, v)?))
                }
                Some(chrome_key::Decoded::Block(host, block)) => blocks.push((
                    block,
                    host.to_string(),
                    codec::decode_count(cf::CHROME, k, v)?,
                )),
                // A 5-byte page key is a partition of `u32` ids'.
                _ => return Err(Error::corruption(cf::CHROME, k, "malformed key")),
            }
            Ok(true)
        })?;
        hosts.sort();
        blocks.sort();
        log.extend(pages);
        log.extend(
            hosts
                .into_iter()
                .map(|(host, pages)| LogOp::HostPages { host, pages }),
        );
        log.extend(
            blocks
                .into_iter()
                .map(|(block, host, pages)| LogOp::BlockPages { host, block, pages }),
        );
        let (free_docs, free_clusters) = self.free_at(&snap)?;
        log.extend(free_docs.iter().map(|id| LogOp::FreeDoc { id, free: true }));
        log.extend(
            free_clusters
                .iter()
                .map(|id| LogOp::FreeCluster { id, free: true }),
        );
        Ok(log)
    }

    /// The log that seeds an empty scratch index with some of this partition's pages and
    /// clusters, deciding nothing ([`crate::Index::seed_log`]'s operations in its order, in
    /// `u64` ids): the allocators and insertion sequence, the live counts of the seed, the free
    /// ids, the over-frequent keys with their reasons; each page's simhash entries, key, text
    /// (or posting keys) and record; each cluster's record; the postings of the pages' keys
    /// (content key, fingerprints and sketch) holding the seeded pages. A key partition is
    /// seeded with no page nor cluster (its allocators, free ids and over-frequent keys);
    /// [`crate::merge::combine_seed_logs`] joins the partitions' seeds.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a page or cluster this partition does not hold, or when
    /// the stored method weighs words by document frequency (a count over all of the index's
    /// pages, which a part cannot reproduce); storage and corruption errors.
    pub fn seed_log(
        &self,
        pages: &[WideDocId],
        clusters: &[WideClusterId],
    ) -> Result<Vec<LogOp<u64>>> {
        seed_vec(|runs, emit| self.seed_into(pages, clusters, runs, emit))
    }

    /// [`WidePartition::seed_log`] written to a new file at `path` as it is read, never whole
    /// in memory, as [`crate::Index::seed_log_file`]; the file's size.
    ///
    /// # Errors
    /// As [`WidePartition::seed_log`]; [`Error::Io`] writing the file or its runs.
    pub fn seed_log_file(
        &self,
        pages: &[WideDocId],
        clusters: &[WideClusterId],
        path: &std::path::Path,
    ) -> Result<u64> {
        seed_file(path, |runs, emit| {
            self.seed_into(pages, clusters, runs, emit)
        })
    }

    /// [`WidePartition::seed_log`]'s operations in order, to `emit`; the postings through
    /// `runs`.
    fn seed_into(
        &self,
        pages: &[WideDocId],
        clusters: &[WideClusterId],
        mut runs: PostingRuns,
        emit: &mut dyn FnMut(LogOp<u64>) -> Result<()>,
    ) -> Result<()> {
        self.registration.check_process()?;
        if self.opts.signature.method.uses_df() {
            return Err(Error::InvalidArgument(
                "a partition whose method weighs words by document frequency cannot be seeded \
                 in part"
                    .into(),
            ));
        }
        let snap = {
            let _writer = self.writer.lock();
            self.db.snapshot()
        };
        let c = self.counters_at(&snap)?;
        let pages: BTreeSet<u64> = pages.iter().copied().collect();
        let clusters: BTreeSet<u64> = clusters.iter().copied().collect();
        for counter in [
            LogCounter::NextDoc(c.next_doc),
            LogCounter::NextCluster(c.next_cluster),
            LogCounter::NextSeq(c.next_seq),
            LogCounter::LiveDocs(pages.len() as u64),
            LogCounter::LiveClusters(clusters.len() as u64),
        ] {
            emit(LogOp::Counter(counter))?;
        }
        let (free_docs, free_clusters) = self.free_at(&snap)?;
        for id in free_docs.iter() {
            emit(LogOp::FreeDoc { id, free: true })?;
        }
        for id in free_clusters.iter() {
            emit(LogOp::FreeCluster { id, free: true })?;
        }
        for (key, reason) in self.frequent_at(&snap)? {
            emit(LogOp::Frequent {
                key,
                reason: Some(reason),
            })?;
        }
        let get = |name: &'static str, k: &[u8]| {
            snap.get_cf(self.cf(name), k)
                .map_err(|e| Error::storage("reading the seed", e))
        };
        let mut rows = Vec::new();
        for &id in &pages {
            let k = wide_id_key(id);
            let record = get(cf::DOCS, &k)?
                .map(|v| DocRecord::<u64>::decode_as(cf::DOCS, &k, &v))
                .transpose()?
                .ok_or_else(|| Error::InvalidArgument(format!("no page has id {id}")))?;
            let value = get(cf::TEXTS, &k)?
                .map(|v| codec::decode_text_value(cf::TEXTS, &k, &v))
                .transpose()?
                .ok_or_else(|| Error::corruption(cf::TEXTS, &k, "the page has no text"))?;
            let keys = self.filed_keys(&value, id, record.content_hash)?;
            // Over-frequent keys too: a delete takes the page out of every key it was filed
            // under, and the diff can only take out what the seed held.
            for key in keys {
                runs.push(key, id)?;
            }
            push_page_rows(&mut rows, self.tables.tables, id, record, value);
            rows.drain(..).try_for_each(&mut *emit)?;
        }
        for &cid in &clusters {
            let k = wide_id_key(cid);
            let record = get(cf::CLUSTERS, &k)?
                .map(|v| ClusterRecord::<u64>::decode_as(cf::CLUSTERS, &k, &v))
                .transpose()?
                .ok_or_else(|| Error::InvalidArgument(format!("no cluster has id {cid}")))?;
            emit(LogOp::Cluster {
                id: cid,
                record: Some(record),
            })?;
        }
        runs.drain(emit)
    }

    /// The posting keys page `id` is filed under, its content key first, from its `texts`
    /// value `value` (its text, whose keys are made again, or its posting keys).
    ///
    /// # Errors
    /// [`Error::Corruption`] for a value of the other kind than the partition stores.
    pub(super) fn filed_keys(
        &self,
        value: &TextValue,
        id: WideDocId,
        content_hash: u128,
    ) -> Result<Vec<[u8; 9]>> {
        let keys = match value {
            TextValue::Text(t) if self.opts.store_texts => {
                posting_keys_of_text(t, &self.opts.signature)
            }
            TextValue::PostingKeys(keys) if !self.opts.store_texts => keys.clone(),
            _ => {
                return Err(Error::corruption(
                    cf::TEXTS,
                    &wide_id_key(id),
                    "a text value of the other kind than the partition stores",
                ))
            }
        };
        let content = storage::posting_key(storage::kind::CONTENT, content_hash);
        Ok(std::iter::once(content).chain(keys).collect())
    }

    /// Calls `f` with each key and value of column family `name` from `from` on, in key order,
    /// until it returns `false`.
    fn scan(
        &self,
        snap: &Snapshot<'_>,
        name: &'static str,
        from: &[u8],
        f: &mut Visit<'_>,
    ) -> Result<()> {
        let mode = IteratorMode::From(from, Direction::Forward);
        for item in snap.iterator_cf_opt(self.cf(name), storage::scan_options(), mode) {
            let (k, v) = item.map_err(|e| Error::storage("reading the partition", e))?;
            if !f(&k, &v)? {
                break;
            }
        }
        Ok(())
    }

    /// The counters at `snap` (absent ones 0).
    pub(super) fn counters_at(&self, snap: &Snapshot<'_>) -> Result<WideCounters> {
        let get = |k: &'static [u8]| -> Result<u64> {
            snap.get_cf(self.cf(cf::META), k)
                .map_err(|e| Error::storage("reading counters", e))?
                .map(|v| storage::decode_u64(cf::META, k, &v))
                .transpose()
                .map(|v| v.unwrap_or(0))
        };
        Ok(WideCounters {
            next_doc: get(meta::NEXT_DOC)?,
            next_cluster: get(meta::NEXT_CLUSTER)?,
            live_docs: get(meta::LIVE_DOCS)?,
            live_clusters: get(meta::LIVE_CLUSTERS)?,
            next_seq: get(meta::NEXT_SEQ)?,
        })
    }

    /// The over-frequent keys with their reason bytes at `snap`.
    pub(super) fn frequent_at(&self, snap: &Snapshot<'_>) -> Result<BTreeMap<[u8; 9], u8>> {
        let mut out = BTreeMap::new();
        self.scan(snap, cf::FREQUENT, b"", &mut |k, v| {
            let key = <[u8; 9]>::try_from(k)
                .map_err(|_| Error::corruption(cf::FREQUENT, k, "key is not 9 bytes"))?;
            let reason = *v
                .first()
                .ok_or_else(|| Error::corruption(cf::FREQUENT, k, "no reason byte"))?;
            out.insert(key, reason);
            Ok(true)
        })?;
        Ok(out)
    }

    /// The free page and cluster ids at `snap` (their 8-byte keys under `meta`).
    pub(super) fn free_at(&self, snap: &Snapshot<'_>) -> Result<(RoaringTreemap, RoaringTreemap)> {
        let mut out = (RoaringTreemap::new(), RoaringTreemap::new());
        for (prefix, set) in [
            (meta::FREE_DOC, &mut out.0),
            (meta::FREE_CLUSTER, &mut out.1),
        ] {
            self.scan(snap, cf::META, prefix, &mut |k, _| {
                let Some(id) = k.strip_prefix(prefix) else {
                    return Ok(false);
                };
                set.insert(decode_wide_id(cf::META, k, id)?);
                Ok(true)
            })?;
        }
        Ok(out)
    }
}
