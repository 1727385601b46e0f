//! A write transaction: one RocksDB `WriteBatch` plus a read-your-writes overlay, so that a
//! delete with its hand-over, a replace, or a group of batch inserts is decided on the state it
//! is building and committed in one atomic write.
//!
//! Changes are kept in the overlay and turned into the batch only by [`Txn::finish`]: a record
//! written several times in one transaction (a cluster that several pages join) is written once,
//! a posting changed by several pages gets one merge operand, and every column family's entries
//! go in key order. Inserting sorted keys into a RocksDB memtable is several times cheaper than
//! inserting them in hash order, and the commit is the serial part of batch ingest.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use roaring::RoaringBitmap;
use rocksdb::{ColumnFamily, WriteBatch};

use crate::index::ids::{AllocatedId, Allocation, Counters};
use crate::index::view::Known;
use crate::index::{Index, View};
use crate::methods::DocFreq;
use crate::storage::change::{Change, ChangeKind};
use crate::storage::codec::{
    self, ClusterId, ClusterRecord, DocId, DocRecord, PageBlocks, PageSize,
};
use crate::storage::merge::{add_operand, remove_operand, Delta};
use crate::storage::{cf, chrome_key, id_key, meta};
use crate::{Error, Result};

/// Pending changes and the overlay that lets later steps of the same write see them.
pub(crate) struct Txn<'a> {
    pub(crate) ix: &'a Index,
    pub(crate) batch: WriteBatch,
    pub(crate) docs: HashMap<DocId, Option<DocRecord>>,
    pub(crate) keys: HashMap<String, Option<DocId>>,
    pub(crate) clusters: HashMap<ClusterId, Option<ClusterRecord>>,
    pub(crate) texts: HashMap<DocId, Option<Arc<str>>>,
    /// The value each changed text key gets (`None`: deleted).
    pub(crate) text_values: BTreeMap<DocId, Option<Vec<u8>>>,
    pub(crate) postings: rustc_hash::FxHashMap<[u8; 9], Delta>,
    /// Changes of document frequencies by word (postings of kind `T`): one per page added to
    /// or removed from a word's posting, so a page added and removed in the same write nets 0.
    pub(crate) df_delta: HashMap<u64, i64>,
    pub(crate) simhash_added: Vec<(u64, DocId)>,
    /// Simhash table keys written (`true`) or deleted (`false`).
    pub(crate) simhash_keys: BTreeMap<[u8; 13], bool>,
    pub(crate) deleted: HashSet<DocId>,
    pub(crate) frequent_added: rustc_hash::FxHashSet<[u8; 9]>,
    /// Over-frequent fingerprints marked by this write, with their reason byte (`None`:
    /// unmarked, by a batch log).
    pub(crate) frequent_reasons: BTreeMap<[u8; 9], Option<u8>>,
    /// Changes of the host and block counts of the `chrome` column family.
    pub(crate) chrome_deltas: HashMap<Vec<u8>, i64>,
    /// The new value of each changed count (`None`: zero, deleted), set by
    /// [`Txn::resolve_chrome`].
    pub(crate) chrome_values: BTreeMap<Vec<u8>, Option<[u8; 5]>>,
    /// Pages' chrome records written (`Some`) or deleted (`None`).
    pub(crate) page_blocks: HashMap<DocId, Option<PageBlocks>>,
    pub(crate) next_doc: DocId,
    pub(crate) next_cluster: ClusterId,
    pub(crate) live_docs: u64,
    pub(crate) live_clusters: u64,
    pub(crate) next_seq: u64,
    /// Free ids as of the transaction's start (see [`crate::index::ids::FreeIds`]).
    pub(crate) free_docs: Arc<RoaringBitmap>,
    pub(crate) free_clusters: Arc<RoaringBitmap>,
    /// What the transaction did with ids.
    pub(crate) ids: IdChanges,
    /// The key of the page being inserted, while the index records its allocations.
    pub(crate) current_key: Option<Arc<str>>,
    /// The changes this write records for the change feed, in the order decided (see
    /// `write::feed`).
    pub(crate) changes: Vec<ChangeKind>,
    /// Every cluster id this write gave out, in order (each recorded change names its part).
    pub(crate) clusters_given: Vec<ClusterId>,
    /// When the write applies a change of another index's feed: the ids to give out.
    pub(crate) pins: Option<Pins>,
    /// When the write applies a change of another index's feed: that change, recorded in this
    /// index's feed as it is (same number, time and content) instead of the changes this write
    /// would record by itself (see [`crate::Index::apply_change`]).
    pub(crate) mirror: Option<Change>,
    /// The sequence number the write's first change gets.
    pub(crate) next_change: u64,
    /// The feed's last trimmed sequence number.
    pub(crate) changes_trimmed: u64,
}

/// The ids a change gave out on the index it was first made in, to give out again in the same
/// order when it is applied to a copy ([`crate::Index::apply_change`]): a copy decides ties by
/// ids as the original did only if it holds the same ids.
#[derive(Debug, Default)]
pub(crate) struct Pins {
    /// The page id an insert gets.
    pub(crate) doc: Option<DocId>,
    /// The cluster ids the change founds, in order.
    pub(crate) clusters: VecDeque<ClusterId>,
}

/// The ids a transaction gave out again and freed; applied to the allocators when it commits.
#[derive(Debug, Default)]
pub(crate) struct IdChanges {
    /// Free page ids given out again.
    pub(crate) taken_docs: Vec<DocId>,
    /// Page ids freed by deletes.
    pub(crate) freed_docs: Vec<DocId>,
    /// Free cluster ids given out again.
    pub(crate) taken_clusters: Vec<ClusterId>,
    /// Cluster ids freed by dissolved clusters.
    pub(crate) freed_clusters: Vec<ClusterId>,
    /// Every page id given out, free or new.
    pub(crate) allocated_docs: Vec<DocId>,
    /// Every id given out, with the key of the page being inserted then, when the index records
    /// its allocations ([`crate::Index::record_allocations`]).
    pub(crate) journal: Vec<Allocation>,
}

impl<'a> Txn<'a> {
    pub(crate) fn new(ix: &'a Index, counters: &Counters) -> Self {
        Txn {
            ix,
            batch: WriteBatch::default(),
            docs: HashMap::new(),
            keys: HashMap::new(),
            clusters: HashMap::new(),
            texts: HashMap::new(),
            text_values: BTreeMap::new(),
            postings: rustc_hash::FxHashMap::default(),
            df_delta: HashMap::new(),
            simhash_added: Vec::new(),
            simhash_keys: BTreeMap::new(),
            deleted: HashSet::new(),
            frequent_added: rustc_hash::FxHashSet::default(),
            frequent_reasons: BTreeMap::new(),
            chrome_deltas: HashMap::new(),
            chrome_values: BTreeMap::new(),
            page_blocks: HashMap::new(),
            next_doc: counters.next_doc,
            next_cluster: counters.next_cluster,
            live_docs: counters.live_docs,
            live_clusters: counters.live_clusters,
            next_seq: counters.next_seq,
            // Without reuse, the free ids stay free and every id comes from the allocators.
            free_docs: if ix.opts.reuse_ids {
                Arc::clone(&counters.free_docs.ready)
            } else {
                Arc::default()
            },
            free_clusters: if ix.opts.reuse_ids {
                Arc::clone(&counters.free_clusters.ready)
            } else {
                Arc::default()
            },
            ids: IdChanges::default(),
            current_key: None,
            changes: Vec::new(),
            clusters_given: Vec::new(),
            pins: None,
            mirror: None,
            next_change: counters.next_change,
            changes_trimmed: counters.changes_trimmed,
        }
    }

    /// The page ids this transaction gave out (to forget what was known of them when it is
    /// dropped uncommitted).
    pub(crate) fn allocated_docs(&self) -> &[DocId] {
        &self.ids.allocated_docs
    }

    /// Takes what the transaction did with ids (and lets go of the free sets it shared, so the
    /// committer can change them without a copy).
    pub(crate) fn take_ids(&mut self) -> IdChanges {
        self.free_docs = Arc::default();
        self.free_clusters = Arc::default();
        std::mem::take(&mut self.ids)
    }

    /// The posting keys of a page (see [`Index::posting_keys_of`]), pending pages included.
    pub(crate) fn posting_keys(&self, id: DocId) -> Result<Option<Vec<[u8; 9]>>> {
        match self.texts.get(&id) {
            Some(Some(t)) => Ok(Some(crate::signature::posting_keys_of_text(
                t,
                &self.ix.opts.signature,
            ))),
            Some(None) => Ok(None),
            None => self.ix.posting_keys_of(id),
        }
    }

    /// Applies this write's pending changes of a posting and leaves its deleted pages out.
    pub(crate) fn overlay(&self, key: &[u8; 9], bm: &mut RoaringBitmap) {
        if let Some(d) = self.postings.get(key) {
            d.apply(bm);
        }
        for id in &self.deleted {
            bm.remove(*id);
        }
    }

    /// The posting changes of this write (after [`Txn::finish`]).
    pub(crate) fn take_postings(&mut self) -> rustc_hash::FxHashMap<[u8; 9], Delta> {
        std::mem::take(&mut self.postings)
    }

    // ----- writes (into the overlay; `finish` builds the batch) -----

    /// Has this transaction written a page record (an unchanged recrawl's new publish time or
    /// raw page hash)?
    pub(crate) fn writes_docs(&self) -> bool {
        !self.docs.is_empty()
    }

    pub(crate) fn put_doc(&mut self, id: DocId, rec: DocRecord) {
        self.docs.insert(id, Some(rec));
    }

    pub(crate) fn put_key(&mut self, key: &str, id: DocId) {
        self.keys.insert(key.to_string(), Some(id));
    }

    /// Stores a new page's text — or, when the index does not store texts, its posting keys,
    /// keeping the text in the overlay only for the rest of this write.
    pub(crate) fn put_text(&mut self, id: DocId, text: Arc<str>, posting_keys: &[[u8; 9]]) {
        let value = if self.ix.opts.store_texts {
            codec::encode_text(&text)
        } else {
            codec::encode_posting_keys(posting_keys)
        };
        self.text_values.insert(id, Some(value));
        self.texts.insert(id, Some(text));
    }

    pub(crate) fn put_cluster(&mut self, cid: ClusterId, rec: ClusterRecord) {
        self.clusters.insert(cid, Some(rec));
    }

    pub(crate) fn delete_cluster(&mut self, cid: ClusterId) {
        self.clusters.insert(cid, None);
        self.live_clusters = self.live_clusters.saturating_sub(1);
        self.ids.freed_clusters.push(cid);
    }

    pub(crate) fn posting_add(&mut self, key: [u8; 9], id: DocId) {
        self.count_term(&key, 1);
        // Pushing a well-formed operand cannot fail.
        let _ = self.postings.entry(key).or_default().push(&add_operand(id));
    }

    pub(crate) fn posting_remove(&mut self, key: [u8; 9], id: DocId) {
        self.count_term(&key, -1);
        let _ = self
            .postings
            .entry(key)
            .or_default()
            .push(&remove_operand(id));
    }

    /// Counts a page in or out of a word's document frequency (keys of kind `T` only).
    pub(crate) fn count_term(&mut self, key: &[u8; 9], by: i64) {
        if let Some(word) = term_of_key(key) {
            *self.df_delta.entry(word).or_default() += by;
        }
    }

    pub(crate) fn simhash_add(&mut self, h: u64, id: DocId) {
        let tables = self.ix.tables;
        for t in 0..tables.tables {
            self.simhash_keys.insert(tables.key(t, h, id), true);
        }
        self.simhash_added.push((h, id));
    }

    pub(crate) fn simhash_remove(&mut self, h: u64, id: DocId) {
        let tables = self.ix.tables;
        for t in 0..tables.tables {
            self.simhash_keys.insert(tables.key(t, h, id), false);
        }
    }

    /// Counts a new page's blocks for its host and stores its chrome record.
    pub(crate) fn chrome_add(&mut self, id: DocId, rec: &PageBlocks) {
        self.chrome_count(rec, 1);
        self.page_blocks.insert(id, Some(rec.clone()));
    }

    /// Takes a deleted page's counts back and deletes its chrome record.
    pub(crate) fn chrome_remove(&mut self, id: DocId, rec: &PageBlocks) {
        self.chrome_count(rec, -1);
        self.page_blocks.insert(id, None);
    }

    pub(crate) fn chrome_count(&mut self, rec: &PageBlocks, sign: i64) {
        *self
            .chrome_deltas
            .entry(chrome_key::host(&rec.host))
            .or_default() += sign;
        for &d in &rec.counted {
            *self
                .chrome_deltas
                .entry(chrome_key::block(&rec.host, d))
                .or_default() += sign;
        }
    }

    /// Reads the counts this write changes and computes their new values (under the writer
    /// lock, so nothing changes them meanwhile). A count that would go below zero is an
    /// inconsistency [`Index::check`] reports; it is stored as zero (deleted).
    pub(crate) fn resolve_chrome(&mut self) -> Result<()> {
        let mut keys: Vec<(&Vec<u8>, i64)> = self
            .chrome_deltas
            .iter()
            .filter(|(_, &d)| d != 0)
            .map(|(k, &d)| (k, d))
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        keys.sort_unstable();
        let h = self.ix.cf(cf::CHROME);
        let read = self
            .ix
            .db
            .batched_multi_get_cf(h, keys.iter().map(|(k, _)| k.as_slice()), true);
        for ((key, delta), v) in keys.into_iter().zip(read) {
            let v = v.map_err(|e| Error::storage("reading block statistics", e))?;
            let now = match v {
                Some(v) => codec::decode_count(cf::CHROME, key, &v)?,
                None => 0,
            };
            let new = (i64::from(now) + delta).clamp(0, i64::from(u32::MAX)) as u32;
            self.chrome_values
                .insert(key.clone(), (new > 0).then(|| codec::encode_count(new)));
        }
        Ok(())
    }

    pub(crate) fn mark_frequent(&mut self, key: [u8; 9], reason: u8) {
        if self.frequent_added.insert(key) {
            self.frequent_reasons.insert(key, Some(reason));
        }
    }

    /// Marks the keys a decision found over-frequent (see [`crate::index::decide::Decision::frequent`]).
    pub(crate) fn mark_all_frequent(&mut self, keys: &[([u8; 9], u8)]) {
        for &(key, reason) in keys {
            self.mark_frequent(key, reason);
        }
    }

    /// The fingerprints this write unmarks as over-frequent.
    pub(crate) fn frequent_deleted(&self) -> Vec<[u8; 9]> {
        self.frequent_reasons
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(k, _)| *k)
            .collect()
    }

    /// Removes a page's own entries (key, record, text, simhash); postings are the caller's.
    pub(crate) fn forget_doc(&mut self, id: DocId, rec: &DocRecord) {
        self.simhash_remove(rec.simhash, id);
        self.keys.insert(rec.key.clone(), None);
        self.docs.insert(id, None);
        self.texts.insert(id, None);
        self.text_values.insert(id, None);
        self.deleted.insert(id);
        self.live_docs = self.live_docs.saturating_sub(1);
        self.ids.freed_docs.push(id);
    }

    /// A page id — the lowest free one, else a new one — and the page's insertion number.
    pub(crate) fn alloc_doc(&mut self) -> Result<(DocId, u64)> {
        let id = match &mut self.pins {
            Some(pins) => Txn::pinned_id(
                pins.doc.take(),
                &self.free_docs,
                &mut self.ids.taken_docs,
                &mut self.next_doc,
                "page",
            )?,
            None => take_id(
                &self.free_docs,
                &mut self.ids.taken_docs,
                &mut self.next_doc,
            )?,
        };
        self.ids.allocated_docs.push(id);
        self.live_docs += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.ix.recording_allocations() {
            self.ids.journal.push(Allocation {
                key: self.current_key.clone(),
                id: AllocatedId::Page { doc: id, seq },
            });
        }
        Ok((id, seq))
    }

    /// A cluster id — the lowest free one, else a new one.
    pub(crate) fn alloc_cluster(&mut self) -> Result<ClusterId> {
        let id = match &mut self.pins {
            Some(pins) => Txn::pinned_id(
                pins.clusters.pop_front(),
                &self.free_clusters,
                &mut self.ids.taken_clusters,
                &mut self.next_cluster,
                "cluster",
            )?,
            None => take_id(
                &self.free_clusters,
                &mut self.ids.taken_clusters,
                &mut self.next_cluster,
            )?,
        };
        self.clusters_given.push(id);
        self.live_clusters += 1;
        if self.ix.recording_allocations() {
            self.ids.journal.push(Allocation {
                key: self.current_key.clone(),
                id: AllocatedId::Cluster(id),
            });
        }
        Ok(id)
    }

    // ----- a batch log's operations (see `crate::merge`): values given whole, counters and
    // free ids set as the log says, nothing derived -----

    /// Writes (`Some`) or deletes a key's page id.
    pub(crate) fn set_key(&mut self, key: &str, id: Option<DocId>) {
        self.keys.insert(key.to_string(), id);
    }

    /// Writes (`Some`) or deletes a page record.
    pub(crate) fn set_doc(&mut self, id: DocId, rec: Option<DocRecord>) {
        self.docs.insert(id, rec);
    }

    /// Writes (`Some`) or deletes a cluster record; the counters are the caller's.
    pub(crate) fn set_cluster(&mut self, cid: ClusterId, rec: Option<ClusterRecord>) {
        self.clusters.insert(cid, rec);
    }

    /// Writes an encoded value of the texts column family, or deletes it. `text` is the text
    /// when the value holds one (the overlay keeps it; a value of posting keys leaves the
    /// overlay to the database).
    pub(crate) fn set_text_value(
        &mut self,
        id: DocId,
        value: Option<Vec<u8>>,
        text: Option<Arc<str>>,
    ) {
        match (&value, text) {
            (None, _) => self.texts.insert(id, None),
            (Some(_), Some(t)) => self.texts.insert(id, Some(t)),
            (Some(_), None) => self.texts.remove(&id),
        };
        self.text_values.insert(id, value);
    }

    /// Changes a posting by a delta (set semantics: the ids of `delta.remove` out, then those of
    /// `delta.add` in), after this write's earlier changes of it. Document frequencies are not
    /// counted: [`Txn::resolve_terms`] reads them.
    pub(crate) fn posting_change(&mut self, key: [u8; 9], delta: &Delta) {
        self.postings.entry(key).or_default().then(delta);
    }

    /// Writes (`true`) or deletes a key of a simhash table.
    pub(crate) fn set_simhash_key(&mut self, key: [u8; 13], present: bool) {
        self.simhash_keys.insert(key, present);
    }

    /// Marks a fingerprint over-frequent with its reason byte, or unmarks it (`None`).
    pub(crate) fn set_frequent(&mut self, key: [u8; 9], reason: Option<u8>) {
        if reason.is_some() {
            self.frequent_added.insert(key);
        } else {
            self.frequent_added.remove(&key);
        }
        self.frequent_reasons.insert(key, reason);
    }

    /// Sets a host or block count of the `chrome` column family (0 deletes it).
    pub(crate) fn set_chrome_count(&mut self, key: Vec<u8>, count: u32) {
        self.chrome_deltas.remove(&key);
        self.chrome_values
            .insert(key, (count > 0).then(|| codec::encode_count(count)));
    }

    /// Writes (`Some`) or deletes a page's chrome record.
    pub(crate) fn set_page_blocks(&mut self, id: DocId, rec: Option<PageBlocks>) {
        self.page_blocks.insert(id, rec);
    }

    /// Marks a page id free (`true`) or given out (`false`). Once per id and write: a freed id
    /// keeps its free key whatever came first (see [`Txn::finish`]).
    pub(crate) fn set_free_doc(&mut self, id: DocId, free: bool) {
        if free {
            self.ids.freed_docs.push(id);
        } else {
            self.ids.taken_docs.push(id);
        }
    }

    /// Marks a cluster id free (`true`) or given out (`false`), as [`Txn::set_free_doc`].
    pub(crate) fn set_free_cluster(&mut self, id: ClusterId, free: bool) {
        if free {
            self.ids.freed_clusters.push(id);
        } else {
            self.ids.taken_clusters.push(id);
        }
    }

    /// Sets the document-frequency changes of the word postings (kind `T`) this write changes by
    /// [`Txn::posting_change`]: each posting is read (under the writer lock, so nothing changes
    /// it meanwhile) and its size compared with the size it will have.
    pub(crate) fn resolve_terms(&mut self) -> Result<()> {
        let keys: Vec<[u8; 9]> = self
            .postings
            .keys()
            .filter(|k| term_of_key(k).is_some())
            .copied()
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        let now = self.ix.postings_at(&keys, None)?;
        for (key, mut bm) in keys.into_iter().zip(now) {
            let before = bm.len() as i64;
            if let Some(d) = self.postings.get(&key) {
                d.apply(&mut bm);
            }
            if let Some(word) = term_of_key(&key) {
                self.df_delta.insert(word, bm.len() as i64 - before);
            }
        }
        Ok(())
    }

    /// Builds the write batch from the overlay — every column family in key order, each record
    /// once with its last value, one merge operand per changed posting — and adds the counters;
    /// the caller commits.
    pub(crate) fn finish(&mut self) {
        let ix = self.ix;
        let batch = &mut self.batch;

        let mut keys: Vec<(&String, &Option<DocId>)> = self.keys.iter().collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let h = ix.cf(cf::KEYS);
        for (key, id) in keys {
            put_or_delete(batch, h, key, id.map(id_key));
        }

        let mut docs: Vec<(&DocId, &Option<DocRecord>)> = self.docs.iter().collect();
        docs.sort_unstable_by_key(|(id, _)| **id);
        let h = ix.cf(cf::DOCS);
        for &(id, rec) in &docs {
            put_or_delete(batch, h, id_key(*id), rec.as_ref().map(DocRecord::encode));
        }
        // The page → cluster map follows the records (format 5 on).
        if ix.cluster_map {
            let h = ix.cf(cf::PAGE_CLUSTERS);
            for (id, rec) in docs {
                put_or_delete(
                    batch,
                    h,
                    id_key(*id),
                    rec.as_ref().map(|r| r.cluster.to_be_bytes()),
                );
            }
        }

        let h = ix.cf(cf::TEXTS);
        for (id, value) in &self.text_values {
            put_or_delete(batch, h, id_key(*id), value.as_ref());
        }

        let mut postings: Vec<(&[u8; 9], &Delta)> = self
            .postings
            .iter()
            .filter(|(_, d)| !d.add.is_empty() || !d.remove.is_empty())
            .collect();
        postings.sort_unstable_by_key(|(k, _)| **k);
        let h = ix.cf(cf::POSTINGS);
        for (key, delta) in postings {
            batch.merge_cf(h, key, delta.operand());
        }

        let h = ix.cf(cf::SIMHASH);
        for (key, put) in &self.simhash_keys {
            put_or_delete(batch, h, key, put.then_some([]));
        }

        let mut clusters: Vec<(&ClusterId, &Option<ClusterRecord>)> =
            self.clusters.iter().collect();
        clusters.sort_unstable_by_key(|(id, _)| **id);
        let h = ix.cf(cf::CLUSTERS);
        for (cid, rec) in clusters {
            put_or_delete(
                batch,
                h,
                id_key(*cid),
                rec.as_ref().map(ClusterRecord::encode),
            );
        }

        let h = ix.cf(cf::FREQUENT);
        for (key, reason) in &self.frequent_reasons {
            put_or_delete(batch, h, key, reason.map(|r| [r]));
        }

        let h = ix.cf(cf::CHROME);
        let mut pages: Vec<(&DocId, &Option<PageBlocks>)> = self.page_blocks.iter().collect();
        pages.sort_unstable_by_key(|(id, _)| **id);
        for (key, value) in &self.chrome_values {
            put_or_delete(batch, h, key, value.as_ref());
        }
        for (id, rec) in pages {
            put_or_delete(
                batch,
                h,
                chrome_key::page(*id),
                rec.as_ref().map(PageBlocks::encode),
            );
        }

        // The change feed's records, its trim and counters (see `write::feed`).
        self.finish_feed();
        let batch = &mut self.batch;
        let m = ix.cf(cf::META);
        batch.put_cf(m, meta::NEXT_DOC, self.next_doc.to_be_bytes());
        batch.put_cf(m, meta::NEXT_CLUSTER, self.next_cluster.to_be_bytes());
        batch.put_cf(m, meta::LIVE_DOCS, self.live_docs.to_be_bytes());
        batch.put_cf(m, meta::LIVE_CLUSTERS, self.live_clusters.to_be_bytes());
        batch.put_cf(m, meta::NEXT_SEQ, self.next_seq.to_be_bytes());
        // Ids given out again lose their free key, freed ones get one (a page or cluster freed
        // after being given out in this same write keeps it: the put comes last).
        let ids = &self.ids;
        for (taken, freed, prefix) in [
            (&ids.taken_docs, &ids.freed_docs, meta::FREE_DOC),
            (&ids.taken_clusters, &ids.freed_clusters, meta::FREE_CLUSTER),
        ] {
            for &id in taken {
                batch.delete_cf(m, meta::free_key(prefix, id));
            }
            for &id in freed {
                batch.put_cf(m, meta::free_key(prefix, id), []);
            }
        }
    }
}

/// The lowest free id above the last one `taken` (free ids are taken in increasing order, so the
/// taken ones are never looked at again), noted in `taken`; else a new id from the allocator
/// `next`.
fn take_id(free: &RoaringBitmap, taken: &mut Vec<u32>, next: &mut u32) -> Result<u32> {
    let from = taken.last().map_or(0, |&t| t + 1);
    if let Some(id) = free.range(from..).next() {
        taken.push(id);
        return Ok(id);
    }
    let id = *next;
    *next = id.checked_add(1).ok_or(Error::Full)?;
    Ok(id)
}

/// Writes `value` under `key`, or deletes `key` when there is none.
fn put_or_delete(
    batch: &mut WriteBatch,
    h: &ColumnFamily,
    key: impl AsRef<[u8]>,
    value: Option<impl AsRef<[u8]>>,
) {
    match value {
        Some(v) => batch.put_cf(h, key, v),
        None => batch.delete_cf(h, key),
    }
}

/// The word hash of a posting key of kind `T` (see [`crate::methods::df`]).
pub(crate) fn term_of_key(key: &[u8; 9]) -> Option<u64> {
    (key[0] == crate::storage::kind::TERM).then(|| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&key[1..]);
        u64::from_be_bytes(b)
    })
}

/// The write's overlay: its pending changes over the latest state (read under the writer lock,
/// so nothing else changes it meanwhile).
impl View for Txn<'_> {
    fn key_id(&self, key: &str) -> Result<Option<DocId>> {
        match self.keys.get(key) {
            Some(v) => Ok(*v),
            None => self.ix.key_id(key),
        }
    }

    fn doc(&self, id: DocId) -> Result<Option<DocRecord>> {
        match self.docs.get(&id) {
            Some(v) => Ok(v.clone()),
            None => self.ix.doc(id),
        }
    }

    fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        match self.clusters.get(&cid) {
            Some(v) => Ok(v.clone()),
            None => self.ix.cluster(cid),
        }
    }

    fn clusters_of(&self, ids: &[DocId]) -> Result<Vec<Option<ClusterId>>> {
        let mut out = self.ix.clusters_at(ids, None)?;
        for (id, c) in ids.iter().zip(out.iter_mut()) {
            if let Some(rec) = self.docs.get(id) {
                *c = rec.as_ref().map(|r| r.cluster);
            }
        }
        Ok(out)
    }

    fn sizes_of(&self, ids: &[DocId]) -> Result<Vec<Option<PageSize>>> {
        let mut out = self.ix.sizes_at(ids, None)?;
        for (id, s) in ids.iter().zip(out.iter_mut()) {
            if let Some(rec) = self.docs.get(id) {
                *s = rec.as_ref().map(PageSize::of);
            }
        }
        Ok(out)
    }

    fn text(&self, id: DocId) -> Result<Option<Arc<str>>> {
        match self.texts.get(&id) {
            Some(v) => Ok(v.clone()),
            None => self.ix.text(id),
        }
    }

    fn page_blocks(&self, id: DocId) -> Result<Option<PageBlocks>> {
        match self.page_blocks.get(&id) {
            Some(v) => Ok(v.clone()),
            None => self.ix.page_blocks(id),
        }
    }

    /// Pending changes applied, deleted ids out: from the postings read ahead when they hold a
    /// key, the others in one batched read.
    fn postings(&self, keys: &[[u8; 9]], known: Option<Known<'_>>) -> Result<Vec<RoaringBitmap>> {
        let mut out: Vec<Option<RoaringBitmap>> = match known {
            Some(k) => keys.iter().map(|key| k.get(key)).collect(),
            None => vec![None; keys.len()],
        };
        let missing: Vec<[u8; 9]> = keys
            .iter()
            .zip(&out)
            .filter(|(_, bm)| bm.is_none())
            .map(|(key, _)| *key)
            .collect();
        let mut read = self.ix.postings_at(&missing, None)?.into_iter();
        let mut all = Vec::with_capacity(keys.len());
        for (key, bm) in keys.iter().zip(out.iter_mut()) {
            let mut bm = match bm.take() {
                Some(bm) => bm,
                None => read.next().unwrap_or_default(),
            };
            self.overlay(key, &mut bm);
            all.push(bm);
        }
        Ok(all)
    }

    fn simhash_near(&self, h: u64) -> Result<Vec<(DocId, u32)>> {
        let mut out = self.ix.simhash_near(h)?;
        out.retain(|(id, _)| !self.deleted.contains(id));
        let k = self.ix.opts.simhash_max_distance;
        out.extend(self.simhash_added.iter().filter_map(|&(s, id)| {
            let d = crate::fingerprint::hamming(s, h);
            (d <= k && !self.deleted.contains(&id)).then_some((id, d))
        }));
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn is_frequent(&self, key: &[u8; 9]) -> bool {
        self.frequent_added.contains(key) || self.ix.is_frequent(key)
    }

    fn with_df<R>(&self, f: impl FnOnce(&dyn DocFreq) -> R) -> R {
        self.ix
            .df_overlaid(Some((&self.df_delta, self.live_docs)), f)
    }
}
