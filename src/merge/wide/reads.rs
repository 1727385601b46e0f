//! The look-ups a merge asks of a format 7 partition (SCALEOUT §5 S0–S2; issue #34 item 5), as
//! [`crate::Index`] answers them for a partition of `u32` ids (`merge/reach.rs`): the pages filed
//! under posting keys (none for an over-frequent key, which no decision reads), the page of an
//! external key, a page's cluster, a cluster's members. Each reads one snapshot of the database,
//! through the block cache, a batch of keys at a time (`multi_get`).

use roaring::RoaringTreemap;

use super::WidePartition;
use crate::merge::{FiledPage, PartitionRows, ProbeForest, ProbeJoin};
use crate::storage::codec::{self, ClusterRecord, DocRecord};
use crate::storage::width::{decode_wide_id, wide_id_key, WideClusterId, WideDocId};
use crate::storage::{self, cf, SimhashTables};
use crate::{Error, Result};

impl WidePartition {
    /// The values of column family `name` under `keys`, at one snapshot.
    fn values<K: AsRef<[u8]>>(
        &self,
        name: &'static str,
        keys: &[K],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.registration.check_process()?;
        let snap = self.db.snapshot();
        let h = self.cf(name);
        let mut ro = storage::scan_options();
        ro.set_snapshot(&snap);
        self.db
            .batched_multi_get_cf_opt(h, keys.iter().map(AsRef::as_ref), false, &ro)
            .into_iter()
            .map(|r| {
                r.map(|v| v.map(|v| v.to_vec()))
                    .map_err(|e| Error::storage("reading the partition", e))
            })
            .collect()
    }

    /// The pages filed under each of `keys`, none for an over-frequent key (no decision reads
    /// it): what a key partition answers for the day's probes (SCALEOUT §5 S2), as
    /// [`crate::Index::posting_ids`].
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for a posting that does not decode.
    pub fn posting_ids(&self, keys: &[[u8; 9]]) -> Result<Vec<RoaringTreemap>> {
        let frequent = self.values(cf::FREQUENT, keys)?;
        let postings = self.values(cf::POSTINGS, keys)?;
        keys.iter()
            .zip(frequent.into_iter().zip(postings))
            .map(|(k, (f, p))| match (f, p) {
                (Some(_), _) | (None, None) => Ok(RoaringTreemap::new()),
                (None, Some(v)) => codec::decode_posting_as::<u64>(&v)
                    .map_err(|why| Error::corruption(cf::POSTINGS, k, why)),
            })
            .collect()
    }

    /// The pages filed under any of `keys`, over-frequent keys left out
    /// ([`WidePartition::posting_ids`] united).
    ///
    /// # Errors
    /// As [`WidePartition::posting_ids`].
    pub fn posting_reach(&self, keys: &[[u8; 9]]) -> Result<RoaringTreemap> {
        Ok(self
            .posting_ids(keys)?
            .into_iter()
            .fold(RoaringTreemap::new(), |a, b| a | b))
    }

    /// Of each simhash, the pages within the simhash distance of it among the simhash entries
    /// this partition holds (SCALEOUT §5 S2 "Simhash"), as [`crate::Index::simhash_ids`]: each
    /// table's block prefix sought at one snapshot, the entries under it compared whole.
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for an entry that is not a 17-byte key.
    pub fn simhash_ids(&self, simhashes: &[u64]) -> Result<Vec<RoaringTreemap>> {
        self.registration.check_process()?;
        let snap = self.db.snapshot();
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        ro.set_snapshot(&snap);
        // One iterator sought to each table's block key, as a single-node index reads them.
        let mut it = self.db.raw_iterator_cf_opt(self.cf(cf::SIMHASH), ro);
        let distance = self.opts.simhash_max_distance;
        let mut out = Vec::with_capacity(simhashes.len());
        for &h in simhashes {
            let mut near = RoaringTreemap::new();
            storage::simhash_wide::scan_near(
                &mut it,
                &self.tables,
                (h, distance),
                (SimhashTables::decode_wide, "key is not a 17-byte entry"),
                |id, _| {
                    near.insert(id);
                },
            )?;
            out.push(near);
        }
        Ok(out)
    }

    /// The pages within the simhash distance of any of `simhashes`
    /// ([`WidePartition::simhash_ids`] united).
    ///
    /// # Errors
    /// As [`WidePartition::simhash_ids`].
    pub fn simhash_reach(&self, simhashes: &[u64]) -> Result<RoaringTreemap> {
        Ok(self
            .simhash_ids(simhashes)?
            .into_iter()
            .fold(RoaringTreemap::new(), |a, b| a | b))
    }

    /// The page id of each external key, `None` for a key this partition does not hold.
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for a value that is not 8 bytes.
    pub fn key_ids(&self, keys: &[&str]) -> Result<Vec<Option<WideDocId>>> {
        let values = self.values(cf::KEYS, keys)?;
        keys.iter()
            .zip(values)
            .map(|(k, v)| {
                v.map(|v| decode_wide_id(cf::KEYS, k.as_bytes(), &v))
                    .transpose()
            })
            .collect()
    }

    /// The cluster of each page, `None` for a page this partition does not hold.
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for a value that is not 8 bytes.
    pub fn page_clusters(&self, ids: &[WideDocId]) -> Result<Vec<Option<WideClusterId>>> {
        let keys: Vec<[u8; 8]> = ids.iter().map(|&id| wide_id_key(id)).collect();
        let values = self.values(cf::PAGE_CLUSTERS, &keys)?;
        keys.iter()
            .zip(values)
            .map(|(k, v)| {
                v.map(|v| decode_wide_id(cf::PAGE_CLUSTERS, k, &v))
                    .transpose()
            })
            .collect()
    }

    /// Of each page, its simhash and every posting key it is filed under (content key first),
    /// `None` for a page this partition does not hold: where a page placed again after a
    /// hand-over looks for candidates (SCALEOUT §5 S0), as [`crate::Index::filed_pages`].
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for a record or text value that does not decode.
    pub fn filed_pages(&self, ids: &[WideDocId]) -> Result<Vec<Option<FiledPage>>> {
        let keys: Vec<[u8; 8]> = ids.iter().map(|&id| wide_id_key(id)).collect();
        let (docs, texts) = (
            self.values(cf::DOCS, &keys)?,
            self.values(cf::TEXTS, &keys)?,
        );
        ids.iter()
            .zip(&keys)
            .zip(docs.into_iter().zip(texts))
            .map(|((&id, k), (doc, text))| {
                let Some(doc) = doc else {
                    return Ok(None);
                };
                let rec = DocRecord::<u64>::decode_as(cf::DOCS, k, &doc)?;
                // A page without a text value is filed under no key it can tell, as in an index.
                let filed = match text {
                    Some(v) => {
                        let value = codec::decode_text_value(cf::TEXTS, k, &v)?;
                        self.filed_keys(&value, id, rec.content_hash)?
                    }
                    None => Vec::new(),
                };
                Ok(Some((rec.simhash, filed)))
            })
            .collect()
    }

    /// The members of each cluster, `None` for a cluster this partition does not hold.
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for a record that does not decode.
    pub fn cluster_member_ids(
        &self,
        clusters: &[WideClusterId],
    ) -> Result<Vec<Option<RoaringTreemap>>> {
        let keys: Vec<[u8; 8]> = clusters.iter().map(|&c| wide_id_key(c)).collect();
        let values = self.values(cf::CLUSTERS, &keys)?;
        keys.iter()
            .zip(values)
            .map(|(k, v)| {
                v.map(|v| ClusterRecord::<u64>::decode_as(cf::CLUSTERS, k, &v).map(|r| r.members))
                    .transpose()
            })
            .collect()
    }
}

/// A key partition's share of S3 and a doc partition's rows, as [`crate::Index`] gives them for
/// a partition of `u32` ids (`merge/reach.rs`, one body for both widths).
impl WidePartition {
    /// A key partition's share of S3 (SCALEOUT §5 S2–S3; issue #34 item 4), as
    /// [`crate::Index::probe_forest`]: the probes of `join` joined through this partition's
    /// postings (over-frequent keys left out) and simhash tables, standing page `d` as node
    /// `doc_tag | d`, [`crate::merge::PROBE_CHUNK`] keys at a time.
    ///
    /// # Errors
    /// Storage and corruption errors; [`Error::InvalidArgument`] for a standing page id of
    /// 2⁵⁶ or more ([`crate::merge::NODE_ID_BITS`]).
    pub fn probe_forest(&self, join: ProbeJoin, doc_tag: u64) -> Result<ProbeForest> {
        crate::merge::reach::join_probes::<u64>(
            join,
            doc_tag,
            |ks| self.posting_ids(ks),
            |hs| self.simhash_ids(hs),
        )
    }

    /// The pages (by id) and clusters (id and representative's page id) this partition holds,
    /// at one snapshot, as [`crate::Index::partition_rows`].
    ///
    /// # Errors
    /// Storage errors; [`Error::Corruption`] for a key or record that does not decode.
    pub fn partition_rows(&self) -> Result<PartitionRows<u64>> {
        crate::merge::reach::scan_partition_rows(self)
    }
}
