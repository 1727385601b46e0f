//! A write transaction: one RocksDB `WriteBatch` plus a read-your-writes overlay, so that a
//! delete with its hand-over, a replace, or a group of batch inserts is decided on the state it
//! is building and committed in one atomic write.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use roaring::RoaringBitmap;
use rocksdb::WriteBatch;

use super::Index;
use crate::storage::codec::{self, ClusterId, ClusterRecord, DocId, DocRecord};
use crate::storage::merge::{add_operand, remove_operand, Delta};
use crate::storage::{cf, id_key, meta};
use crate::{Error, Result};

/// Pending changes and the overlay that lets later steps of the same write see them.
pub(crate) struct Txn<'a> {
    pub(crate) ix: &'a Index,
    pub(crate) batch: WriteBatch,
    docs: HashMap<DocId, Option<DocRecord>>,
    keys: HashMap<String, Option<DocId>>,
    clusters: HashMap<ClusterId, Option<ClusterRecord>>,
    texts: HashMap<DocId, Option<Arc<str>>>,
    postings: HashMap<[u8; 9], Delta>,
    simhash_added: Vec<(u64, DocId)>,
    pub(crate) deleted: HashSet<DocId>,
    pub(crate) frequent_added: HashSet<[u8; 9]>,
    pub(crate) next_doc: DocId,
    pub(crate) next_cluster: ClusterId,
    pub(crate) live_docs: u64,
    pub(crate) live_clusters: u64,
}

impl<'a> Txn<'a> {
    pub(crate) fn new(ix: &'a Index, counters: &super::Counters) -> Self {
        Txn {
            ix,
            batch: WriteBatch::default(),
            docs: HashMap::new(),
            keys: HashMap::new(),
            clusters: HashMap::new(),
            texts: HashMap::new(),
            postings: HashMap::new(),
            simhash_added: Vec::new(),
            deleted: HashSet::new(),
            frequent_added: HashSet::new(),
            next_doc: counters.next_doc,
            next_cluster: counters.next_cluster,
            live_docs: counters.live_docs,
            live_clusters: counters.live_clusters,
        }
    }

    // ----- reads (overlay first, then the database) -----

    pub(crate) fn key_id(&self, key: &str) -> Result<Option<DocId>> {
        match self.keys.get(key) {
            Some(v) => Ok(*v),
            None => self.ix.key_id(key),
        }
    }

    pub(crate) fn doc(&self, id: DocId) -> Result<Option<DocRecord>> {
        match self.docs.get(&id) {
            Some(v) => Ok(v.clone()),
            None => self.ix.doc(id),
        }
    }

    pub(crate) fn cluster(&self, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        match self.clusters.get(&cid) {
            Some(v) => Ok(v.clone()),
            None => self.ix.cluster(cid),
        }
    }

    pub(crate) fn text(&self, id: DocId) -> Result<Option<Arc<str>>> {
        match self.texts.get(&id) {
            Some(v) => Ok(v.clone()),
            None => self.ix.text(id),
        }
    }

    /// The posting keys of a page (see [`Index::posting_keys_of`]), pending pages included.
    pub(crate) fn posting_keys(&self, id: DocId) -> Result<Option<Vec<[u8; 9]>>> {
        match self.texts.get(&id) {
            Some(Some(t)) => Ok(Some(super::posting_keys_of_text(
                t,
                &self.ix.opts.signature,
            ))),
            Some(None) => Ok(None),
            None => self.ix.posting_keys_of(id),
        }
    }

    /// The posting of a key with pending changes applied and deleted ids left out.
    pub(crate) fn posting(&self, key: &[u8; 9]) -> Result<RoaringBitmap> {
        let mut bm = self.ix.posting(key)?;
        if let Some(d) = self.postings.get(key) {
            d.apply(&mut bm);
        }
        for id in &self.deleted {
            bm.remove(*id);
        }
        Ok(bm)
    }

    /// Postings of several keys (one batched read), pending changes applied, deleted ids out.
    pub(crate) fn postings(&self, keys: &[[u8; 9]]) -> Result<Vec<RoaringBitmap>> {
        let mut out = self.ix.postings(keys)?;
        for (key, bm) in keys.iter().zip(out.iter_mut()) {
            if let Some(d) = self.postings.get(key) {
                d.apply(bm);
            }
            for id in &self.deleted {
                bm.remove(*id);
            }
        }
        Ok(out)
    }

    /// The cluster of a page as this write sees it.
    pub(crate) fn cluster_of(&self, id: DocId) -> Option<ClusterId> {
        match self.docs.get(&id) {
            Some(rec) => rec.as_ref().map(|r| r.cluster),
            None => self.ix.cluster_of(id),
        }
    }

    /// The pages whose cluster this write changes (`None`: deleted).
    pub(crate) fn page_changes(&self) -> Vec<(DocId, Option<ClusterId>)> {
        self.docs
            .iter()
            .map(|(id, rec)| (*id, rec.as_ref().map(|r| r.cluster)))
            .collect()
    }

    /// Ids whose simhash is within the configured distance of `h`, pending changes included.
    pub(crate) fn simhash_near(&self, h: u64) -> Result<Vec<DocId>> {
        let mut out = self.ix.simhash_near(h)?;
        out.retain(|id| !self.deleted.contains(id));
        let k = self.ix.opts.simhash_max_distance;
        out.extend(
            self.simhash_added
                .iter()
                .filter(|(s, id)| {
                    crate::fingerprint::hamming(*s, h) <= k && !self.deleted.contains(id)
                })
                .map(|(_, id)| *id),
        );
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    // ----- writes -----

    pub(crate) fn put_doc(&mut self, id: DocId, rec: DocRecord) {
        self.batch
            .put_cf(self.ix.cf(cf::DOCS), id_key(id), rec.encode());
        self.docs.insert(id, Some(rec));
    }

    pub(crate) fn put_key(&mut self, key: &str, id: DocId) {
        self.batch
            .put_cf(self.ix.cf(cf::KEYS), key.as_bytes(), id_key(id));
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
        self.batch.put_cf(self.ix.cf(cf::TEXTS), id_key(id), value);
        self.texts.insert(id, Some(text));
    }

    pub(crate) fn put_cluster(&mut self, cid: ClusterId, rec: ClusterRecord) {
        self.batch
            .put_cf(self.ix.cf(cf::CLUSTERS), id_key(cid), rec.encode());
        self.clusters.insert(cid, Some(rec));
    }

    pub(crate) fn delete_cluster(&mut self, cid: ClusterId) {
        self.batch.delete_cf(self.ix.cf(cf::CLUSTERS), id_key(cid));
        self.clusters.insert(cid, None);
        self.live_clusters = self.live_clusters.saturating_sub(1);
    }

    pub(crate) fn posting_add(&mut self, key: [u8; 9], id: DocId) {
        let op = add_operand(id);
        self.batch.merge_cf(self.ix.cf(cf::POSTINGS), key, op);
        // Pushing a well-formed operand cannot fail.
        let _ = self.postings.entry(key).or_default().push(&op);
    }

    pub(crate) fn posting_remove(&mut self, key: [u8; 9], id: DocId) {
        let op = remove_operand(id);
        self.batch.merge_cf(self.ix.cf(cf::POSTINGS), key, op);
        let _ = self.postings.entry(key).or_default().push(&op);
    }

    pub(crate) fn simhash_add(&mut self, h: u64, id: DocId) {
        let tables = self.ix.tables;
        for t in 0..tables.tables {
            self.batch
                .put_cf(self.ix.cf(cf::SIMHASH), tables.key(t, h, id), []);
        }
        self.simhash_added.push((h, id));
    }

    pub(crate) fn simhash_remove(&mut self, h: u64, id: DocId) {
        let tables = self.ix.tables;
        for t in 0..tables.tables {
            self.batch
                .delete_cf(self.ix.cf(cf::SIMHASH), tables.key(t, h, id));
        }
    }

    pub(crate) fn mark_frequent(&mut self, key: [u8; 9], reason: u8) {
        if self.frequent_added.insert(key) {
            self.batch.put_cf(self.ix.cf(cf::FREQUENT), key, [reason]);
        }
    }

    /// Removes a page's own entries (key, record, text, simhash); postings are the caller's.
    pub(crate) fn forget_doc(&mut self, id: DocId, rec: &DocRecord) {
        self.batch
            .delete_cf(self.ix.cf(cf::KEYS), rec.key.as_bytes());
        self.batch.delete_cf(self.ix.cf(cf::DOCS), id_key(id));
        self.batch.delete_cf(self.ix.cf(cf::TEXTS), id_key(id));
        self.simhash_remove(rec.simhash, id);
        self.keys.insert(rec.key.clone(), None);
        self.docs.insert(id, None);
        self.texts.insert(id, None);
        self.deleted.insert(id);
        self.live_docs = self.live_docs.saturating_sub(1);
    }

    pub(crate) fn alloc_doc(&mut self) -> Result<DocId> {
        let id = self.next_doc;
        self.next_doc = id.checked_add(1).ok_or(Error::Full)?;
        self.live_docs += 1;
        Ok(id)
    }

    pub(crate) fn alloc_cluster(&mut self) -> Result<ClusterId> {
        let id = self.next_cluster;
        self.next_cluster = id.checked_add(1).ok_or(Error::Full)?;
        self.live_clusters += 1;
        Ok(id)
    }

    /// Writes the counters into the batch; the caller commits.
    pub(crate) fn finish(&mut self) {
        let m = self.ix.cf(cf::META);
        self.batch
            .put_cf(m, meta::NEXT_DOC, self.next_doc.to_be_bytes());
        self.batch
            .put_cf(m, meta::NEXT_CLUSTER, self.next_cluster.to_be_bytes());
        self.batch
            .put_cf(m, meta::LIVE_DOCS, self.live_docs.to_be_bytes());
        self.batch
            .put_cf(m, meta::LIVE_CLUSTERS, self.live_clusters.to_be_bytes());
    }
}
