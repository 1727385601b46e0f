//! What decisions read, behind one trait: the postings, records, clusters, texts, simhash
//! neighbours and statistics a candidate search and a verification look at. Three states
//! implement it (as redb's `ReadableTable` serves both of its table kinds):
//!
//! - the **latest** state: [`Index`] itself (a single insert's look-ahead, maintenance);
//! - a **snapshot**: [`Snapshot`], one RocksDB snapshot read from start to end — a query sees
//!   one state of the index, whatever is written meanwhile;
//! - a **write's overlay**: the write transaction (`write::Txn`), its pending changes over the
//!   latest state, under the writer lock.
//!
//! A view only reads. What a decision finds that the index should remember (a fingerprint gone
//! over-frequent) comes back with the decision, and the writer records it.
//!
//! Two in-memory parts are the latest state in every view: the over-frequent set (a filter on
//! which keys are looked up) and the document frequencies of the word methods (statistics).
//! Everything read from RocksDB is read at the view's snapshot.

use std::cell::RefCell;
use std::sync::Arc;

use roaring::RoaringBitmap;
use rocksdb::ReadOptions;

use super::Index;
use crate::methods::df::Overlaid;
use crate::methods::{DocFreq, NoDocFreq};
use crate::storage::codec::{
    self, ClusterId, ClusterRecord, DocId, DocRecord, PageBlocks, PageSize,
};
use crate::storage::merge::Delta;
use crate::storage::{self, cf, chrome_key, id_key};
use crate::{Error, Result};

/// A RocksDB snapshot, or the latest state (`None`).
pub(crate) type At<'a> = Option<&'a rocksdb::Snapshot<'a>>;

/// What decisions read (see the [module](self)).
pub(crate) trait View {
    /// The page id of an external key.
    fn key_id(&self, key: &str) -> Result<Option<DocId>>;
    /// A page's record.
    fn doc(&self, id: DocId) -> Result<Option<DocRecord>>;
    /// A cluster's record.
    fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>>;
    /// The cluster of each page (`None`: no live page has the id).
    fn clusters_of(&self, ids: &[DocId]) -> Result<Vec<Option<ClusterId>>>;
    /// The cluster, text length and fingerprint count of each page (`None`: no live page has
    /// the id): what the candidate ranking weighs a candidate by.
    fn sizes_of(&self, ids: &[DocId]) -> Result<Vec<Option<PageSize>>>;
    /// A page's normalized text.
    fn text(&self, id: DocId) -> Result<Option<Arc<str>>>;
    /// A page's site-chrome record, if it was counted.
    fn page_blocks(&self, id: DocId) -> Result<Option<PageBlocks>>;
    /// The postings of several keys. `known` (the writer's view only) holds postings read
    /// ahead of the writer that are still current.
    fn postings(&self, keys: &[[u8; 9]], known: Option<Known<'_>>) -> Result<Vec<RoaringBitmap>>;
    /// The pages whose simhash is within the configured distance of `h`, with their distance,
    /// by id.
    fn simhash_near(&self, h: u64) -> Result<Vec<(DocId, u32)>>;
    /// Is a posting key over-frequent (kept out of candidate search)?
    fn is_frequent(&self, key: &[u8; 9]) -> bool;
    /// Calls `f` with the document frequencies (none under a method that needs none).
    fn with_df<R>(&self, f: impl FnOnce(&dyn DocFreq) -> R) -> R;

    /// The cluster of one page.
    fn cluster_of(&self, id: DocId) -> Result<Option<ClusterId>> {
        Ok(self.clusters_of(&[id])?.pop().flatten())
    }
}

/// Postings read for one page ahead of the writer, and the posting changes committed since by
/// the writer that uses them. Valid only while no other write has been committed since the
/// read: the batch checks the index's commit count before handing them over.
#[derive(Clone, Copy)]
pub(crate) struct Known<'p> {
    /// Postings as they were read, sorted by key.
    pub(crate) read: &'p [([u8; 9], RoaringBitmap)],
    /// Posting changes committed since, oldest first, with their commits' numbers.
    pub(crate) since: &'p [Committed],
}

/// A commit's number and the posting changes it committed.
pub(crate) type Committed = (u64, rustc_hash::FxHashMap<[u8; 9], Delta>);

impl Known<'_> {
    /// The posting of a key as committed now, when it was read ahead.
    pub(crate) fn get(&self, key: &[u8; 9]) -> Option<RoaringBitmap> {
        let i = self.read.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        let mut bm = self.read[i].1.clone();
        for (_, changes) in self.since {
            if let Some(d) = changes.get(key) {
                d.apply(&mut bm);
            }
        }
        Some(bm)
    }
}

/// The latest state.
impl View for Index {
    fn key_id(&self, key: &str) -> Result<Option<DocId>> {
        self.key_id_at(key, None)
    }

    fn doc(&self, id: DocId) -> Result<Option<DocRecord>> {
        self.doc_at(id, None)
    }

    fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        self.cluster_at(cid, None)
    }

    fn clusters_of(&self, ids: &[DocId]) -> Result<Vec<Option<ClusterId>>> {
        self.clusters_at(ids, None)
    }

    fn sizes_of(&self, ids: &[DocId]) -> Result<Vec<Option<PageSize>>> {
        self.sizes_at(ids, None)
    }

    fn text(&self, id: DocId) -> Result<Option<Arc<str>>> {
        self.text_at(id, None)
    }

    fn page_blocks(&self, id: DocId) -> Result<Option<PageBlocks>> {
        self.page_blocks_at(id, None)
    }

    fn postings(&self, keys: &[[u8; 9]], _: Option<Known<'_>>) -> Result<Vec<RoaringBitmap>> {
        self.postings_at(keys, None)
    }

    fn simhash_near(&self, h: u64) -> Result<Vec<(DocId, u32)>> {
        self.simhash_near_at(h, None)
    }

    fn is_frequent(&self, key: &[u8; 9]) -> bool {
        self.frequent.read().contains(key)
    }

    fn with_df<R>(&self, f: impl FnOnce(&dyn DocFreq) -> R) -> R {
        self.df_overlaid(None, f)
    }
}

/// One RocksDB snapshot of an index, read from start to end (a query, an export, a cursor).
pub(crate) struct Snapshot<'a> {
    pub(crate) ix: &'a Index,
    pub(crate) snap: rocksdb::Snapshot<'a>,
}

impl<'a> Snapshot<'a> {
    /// A snapshot of the index as it is now.
    pub(crate) fn of(ix: &'a Index) -> Snapshot<'a> {
        Snapshot {
            ix,
            snap: ix.db.snapshot(),
        }
    }

    /// The RocksDB snapshot.
    pub(crate) fn raw(&self) -> &rocksdb::Snapshot<'a> {
        &self.snap
    }

    /// A live page's record; its absence is corruption (a cluster names it).
    pub(crate) fn member(&self, id: DocId) -> Result<DocRecord> {
        self.doc(id)?
            .ok_or_else(|| Error::corruption(cf::DOCS, &id_key(id), "a cluster member is missing"))
    }

    /// A live page's cluster; its absence is corruption.
    pub(crate) fn cluster_of_live(&self, cid: ClusterId) -> Result<ClusterRecord> {
        self.cluster(cid)?.ok_or_else(|| {
            Error::corruption(
                cf::CLUSTERS,
                &id_key(cid),
                "cluster of a live page is missing",
            )
        })
    }
}

impl View for Snapshot<'_> {
    fn key_id(&self, key: &str) -> Result<Option<DocId>> {
        self.ix.key_id_at(key, Some(&self.snap))
    }

    fn doc(&self, id: DocId) -> Result<Option<DocRecord>> {
        self.ix.doc_at(id, Some(&self.snap))
    }

    fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        self.ix.cluster_at(cid, Some(&self.snap))
    }

    fn clusters_of(&self, ids: &[DocId]) -> Result<Vec<Option<ClusterId>>> {
        self.ix.clusters_at(ids, Some(&self.snap))
    }

    fn sizes_of(&self, ids: &[DocId]) -> Result<Vec<Option<PageSize>>> {
        self.ix.sizes_at(ids, Some(&self.snap))
    }

    fn text(&self, id: DocId) -> Result<Option<Arc<str>>> {
        self.ix.text_at(id, Some(&self.snap))
    }

    fn page_blocks(&self, id: DocId) -> Result<Option<PageBlocks>> {
        self.ix.page_blocks_at(id, Some(&self.snap))
    }

    fn postings(&self, keys: &[[u8; 9]], _: Option<Known<'_>>) -> Result<Vec<RoaringBitmap>> {
        self.ix.postings_at(keys, Some(&self.snap))
    }

    fn simhash_near(&self, h: u64) -> Result<Vec<(DocId, u32)>> {
        self.ix.simhash_near_at(h, Some(&self.snap))
    }

    fn is_frequent(&self, key: &[u8; 9]) -> bool {
        self.ix.is_frequent(key)
    }

    fn with_df<R>(&self, f: impl FnOnce(&dyn DocFreq) -> R) -> R {
        self.ix.df_overlaid(None, f)
    }
}

/// A batch's look-ahead (`write::batch`, stage 2): a snapshot whose posting reads are kept for
/// the writer.
pub(crate) struct Ahead<'a, 's> {
    pub(crate) ix: &'a Index,
    pub(crate) snap: &'a rocksdb::Snapshot<'s>,
    /// Every posting read.
    pub(crate) keep: RefCell<Vec<([u8; 9], RoaringBitmap)>>,
}

impl View for Ahead<'_, '_> {
    fn key_id(&self, key: &str) -> Result<Option<DocId>> {
        self.ix.key_id_at(key, Some(self.snap))
    }

    fn doc(&self, id: DocId) -> Result<Option<DocRecord>> {
        self.ix.doc_at(id, Some(self.snap))
    }

    fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        self.ix.cluster_at(cid, Some(self.snap))
    }

    fn clusters_of(&self, ids: &[DocId]) -> Result<Vec<Option<ClusterId>>> {
        self.ix.clusters_at(ids, Some(self.snap))
    }

    fn sizes_of(&self, ids: &[DocId]) -> Result<Vec<Option<PageSize>>> {
        self.ix.sizes_at(ids, Some(self.snap))
    }

    fn text(&self, id: DocId) -> Result<Option<Arc<str>>> {
        self.ix.text_at(id, Some(self.snap))
    }

    fn page_blocks(&self, id: DocId) -> Result<Option<PageBlocks>> {
        self.ix.page_blocks_at(id, Some(self.snap))
    }

    fn postings(&self, keys: &[[u8; 9]], _: Option<Known<'_>>) -> Result<Vec<RoaringBitmap>> {
        let read = self.ix.postings_at(keys, Some(self.snap))?;
        self.keep
            .borrow_mut()
            .extend(keys.iter().copied().zip(read.iter().cloned()));
        Ok(read)
    }

    fn simhash_near(&self, h: u64) -> Result<Vec<(DocId, u32)>> {
        self.ix.simhash_near_at(h, Some(self.snap))
    }

    fn is_frequent(&self, key: &[u8; 9]) -> bool {
        self.ix.is_frequent(key)
    }

    fn with_df<R>(&self, f: impl FnOnce(&dyn DocFreq) -> R) -> R {
        self.ix.df_overlaid(None, f)
    }
}

/// The reads behind the views, at a snapshot or the latest state.
impl Index {
    /// Reads one value and decodes it; `None` when the key is absent.
    pub(crate) fn get_at<T>(
        &self,
        cf_name: &'static str,
        key: &[u8],
        at: At<'_>,
        what: &str,
        decode: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<Option<T>> {
        let h = self.cf(cf_name);
        let v = match at {
            Some(s) => {
                let mut ro = ReadOptions::default();
                ro.set_snapshot(s);
                self.db.get_pinned_cf_opt(h, key, &ro)
            }
            None => self.db.get_pinned_cf(h, key),
        }
        .map_err(|e| Error::storage(format!("reading {what}"), e))?;
        v.map(|v| decode(&v)).transpose()
    }

    /// Values of several keys of column family `name` in one batched read, each decoded by
    /// `decode(key, value)` (`None` for an absent key); `doing` says what a storage error
    /// interrupted.
    pub(crate) fn multi_get_at<K: AsRef<[u8]>, T>(
        &self,
        name: &str,
        keys: &[K],
        at: At<'_>,
        doing: &str,
        decode: impl Fn(&[u8], Option<&[u8]>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let h = self.cf(name);
        let mut ro = ReadOptions::default();
        if let Some(s) = at {
            ro.set_snapshot(s);
        }
        let mut out = Vec::with_capacity(keys.len());
        for (key, v) in
            keys.iter()
                .zip(self.db.batched_multi_get_cf_opt(h, keys.iter(), false, &ro))
        {
            let v = v.map_err(|e| Error::storage(doing, e))?;
            out.push(decode(key.as_ref(), v.as_deref())?);
        }
        Ok(out)
    }

    pub(crate) fn key_id_at(&self, key: &str, at: At<'_>) -> Result<Option<DocId>> {
        let k = key.as_bytes();
        self.get_at(cf::KEYS, k, at, "a key", |v| {
            storage::decode_u32(cf::KEYS, k, v)
        })
    }

    pub(crate) fn doc_at(&self, id: DocId, at: At<'_>) -> Result<Option<DocRecord>> {
        let k = id_key(id);
        self.get_at(cf::DOCS, &k, at, "a page record", |v| {
            DocRecord::decode(cf::DOCS, &k, v)
        })
    }

    pub(crate) fn cluster_at(&self, cid: ClusterId, at: At<'_>) -> Result<Option<ClusterRecord>> {
        let k = id_key(cid);
        self.get_at(cf::CLUSTERS, &k, at, "a cluster", |v| {
            ClusterRecord::decode(cf::CLUSTERS, &k, v)
        })
    }

    pub(crate) fn page_blocks_at(&self, id: DocId, at: At<'_>) -> Result<Option<PageBlocks>> {
        let k = chrome_key::page(id);
        self.get_at(cf::CHROME, &k, at, "a page's blocks", |v| {
            PageBlocks::decode(cf::CHROME, &k, v)
        })
    }

    /// The normalized text of a page, from the texts column family or the text source (the
    /// page's record and chrome record read at the same snapshot).
    pub(crate) fn text_at(&self, id: DocId, at: At<'_>) -> Result<Option<Arc<str>>> {
        if self.opts.store_texts {
            let k = id_key(id);
            return self.get_at(cf::TEXTS, &k, at, "a text", |v| {
                codec::decode_text(cf::TEXTS, &k, v).map(Arc::from)
            });
        }
        let Some(rec) = self.doc_at(id, at)? else {
            return Ok(None);
        };
        let blocks = self.page_blocks_at(id, at)?;
        self.sourced_text(id, &rec, blocks).map(Some)
    }

    /// The cluster of each page (`None`: no page has the id), from the page → cluster map
    /// (format 5 on), or else from the pages' records: only the cluster field is read, the
    /// record verified.
    pub(crate) fn clusters_at(&self, ids: &[DocId], at: At<'_>) -> Result<Vec<Option<ClusterId>>> {
        let mut keys: Vec<[u8; 4]> = ids.iter().map(|&id| id_key(id)).collect();
        // RocksDB's batched read is fastest on sorted keys; the answers go back in input order.
        let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
        let order: Vec<usize> = if sorted {
            (0..keys.len()).collect()
        } else {
            let mut o: Vec<usize> = (0..keys.len()).collect();
            o.sort_unstable_by_key(|&i| keys[i]);
            keys = o.iter().map(|&i| keys[i]).collect();
            o
        };
        let read = if self.cluster_map {
            self.multi_get_at(
                cf::PAGE_CLUSTERS,
                &keys,
                at,
                "reading clusters of pages",
                |k, v| {
                    v.map(|v| storage::decode_u32(cf::PAGE_CLUSTERS, k, v))
                        .transpose()
                },
            )?
        } else {
            self.multi_get_at(cf::DOCS, &keys, at, "reading page records", |k, v| {
                v.map(|v| DocRecord::decode_cluster(cf::DOCS, k, v))
                    .transpose()
            })?
        };
        let mut out = vec![None; ids.len()];
        for (i, c) in order.into_iter().zip(read) {
            out[i] = c;
        }
        Ok(out)
    }

    /// The cluster, text length and fingerprint count of each page (`None`: no page has the
    /// id), from the pages' records in one batched read, answered in input order.
    pub(crate) fn sizes_at(&self, ids: &[DocId], at: At<'_>) -> Result<Vec<Option<PageSize>>> {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_unstable_by_key(|&i| ids[i]);
        let keys: Vec<[u8; 4]> = order.iter().map(|&i| id_key(ids[i])).collect();
        let read = self.multi_get_at(cf::DOCS, &keys, at, "reading page records", |k, v| {
            v.map(|v| DocRecord::decode_size(cf::DOCS, k, v))
                .transpose()
        })?;
        let mut out = vec![None; ids.len()];
        for (i, s) in order.into_iter().zip(read) {
            out[i] = s;
        }
        Ok(out)
    }

    /// Postings of several keys in one batched read (RocksDB's filters answer for the keys no
    /// page has: most keys a new page looks up). Sorted keys read fastest.
    pub(crate) fn postings_at(&self, keys: &[[u8; 9]], at: At<'_>) -> Result<Vec<RoaringBitmap>> {
        self.multi_get_at(
            cf::POSTINGS,
            keys,
            at,
            "reading postings",
            |key, v| match v {
                None => Ok(RoaringBitmap::new()),
                Some(v) => {
                    codec::decode_posting(v).map_err(|r| Error::corruption(cf::POSTINGS, key, r))
                }
            },
        )
    }

    /// The pages whose simhash is within the configured distance of `h`, by the block tables.
    pub(crate) fn simhash_near_at(&self, h: u64, at: At<'_>) -> Result<Vec<(DocId, u32)>> {
        let k = self.opts.simhash_max_distance;
        let mut out = Vec::new();
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        if let Some(s) = at {
            ro.set_snapshot(s);
        }
        // One iterator sought to each table's block key: building an iterator over every level
        // costs more than a seek.
        let mut it = self.db.raw_iterator_cf_opt(self.cf(cf::SIMHASH), ro);
        storage::simhash_wide::scan_near(
            &mut it,
            &self.tables,
            (h, k),
            (storage::SimhashTables::decode, "key is not 13 bytes"),
            |id, d| out.push((id, d)),
        )?;
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Calls `f` with the committed document frequencies, with a write's pending changes
    /// (`pending`: its changes by word and its page count) over them.
    pub(crate) fn df_overlaid<R>(
        &self,
        pending: Option<(&std::collections::HashMap<u64, i64>, u64)>,
        f: impl FnOnce(&dyn DocFreq) -> R,
    ) -> R {
        if !self.opts.signature.method.uses_df() {
            return f(&NoDocFreq);
        }
        let base = self.df.read();
        let view = Overlaid {
            base: &base,
            delta: pending.map(|p| p.0),
            docs: pending.map_or(base.docs(), |p| p.1),
        };
        f(&view)
    }
}
