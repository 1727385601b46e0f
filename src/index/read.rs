//! Reads an engine needs without re-sending pages: a stored page's record ([`Index::get`]),
//! streaming cursors over clusters, a cluster's members and all keys, each over one consistent
//! snapshot, and parallel queries ([`Index::query_batch`]).

use rayon::prelude::*;
use roaring::RoaringBitmap;
use rocksdb::{DBRawIterator, ReadOptions, Snapshot};

use super::{similar_of, Index, Page, SnapshotView, Verdict};
use crate::fingerprint::Content;
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord};
use crate::storage::{self, cf, id_key};
use crate::{Error, Result};

/// A stored page as the index holds it (see [`Index::get`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The page's key.
    pub key: String,
    /// Its internal id.
    pub doc: DocId,
    /// Its insertion number: unique for the index's life, in insertion order (ids are reused,
    /// these never are).
    pub seq: u64,
    /// The cluster it is in.
    pub cluster: ClusterId,
    /// The key of that cluster's representative (its own key when it leads).
    pub representative: String,
    /// The page it was judged a near duplicate of when it was placed, while that page is held.
    pub similar_to: Option<String>,
    /// Resemble rate with `similar_to` when placed (0 with none; single precision).
    pub resemble: f64,
    /// Contain rate with `similar_to` when placed (0 with none; single precision).
    pub contain: f64,
    /// The hash of its normalized main text.
    pub content_hash: u128,
    /// The host it came from (may be empty).
    pub host: String,
    /// Its publish time in Unix seconds (0: unknown).
    pub time: i64,
    /// The length of its normalized main text in characters.
    pub text_chars: u32,
}

/// A cluster as a cursor gives it (see [`Index::clusters`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterInfo {
    /// The cluster's id.
    pub cluster: ClusterId,
    /// The key of its representative.
    pub representative: String,
    /// Its number of members, the representative included.
    pub size: u64,
}

/// A RocksDB iterator over one column family at a snapshot it owns.
struct Scan<'a> {
    // Declared before `snap`: the iterator reads at the snapshot and is dropped first.
    it: DBRawIterator<'a>,
    snap: Snapshot<'a>,
    ix: &'a Index,
    started: bool,
}

impl<'a> Scan<'a> {
    fn new(ix: &'a Index, name: &'static str) -> Scan<'a> {
        let snap = ix.db.snapshot();
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&snap);
        let it = ix.db.raw_iterator_cf_opt(ix.cf(name), ro);
        Scan {
            it,
            snap,
            ix,
            started: false,
        }
    }

    /// The next entry, copied out.
    fn next_entry(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.started {
            self.it.next();
        } else {
            self.it.seek_to_first();
            self.started = true;
        }
        if !self.it.valid() {
            self.it
                .status()
                .map_err(|e| Error::storage("reading with a cursor", e))?;
            return Ok(None);
        }
        match (self.it.key(), self.it.value()) {
            (Some(k), Some(v)) => Ok(Some((k.to_vec(), v.to_vec()))),
            _ => Ok(None),
        }
    }

    fn view(&self) -> SnapshotView<'_> {
        SnapshotView {
            ix: self.ix,
            snap: &self.snap,
        }
    }
}

/// A streaming cursor over every cluster, in id order, at one snapshot (see
/// [`Index::clusters`]). An `Iterator` of `Result<ClusterInfo>`; it stops after an error.
pub struct Clusters<'a> {
    scan: Scan<'a>,
    failed: bool,
}

impl Iterator for Clusters<'_> {
    type Item = Result<ClusterInfo>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = (|| {
            let Some((k, v)) = self.scan.next_entry()? else {
                return Ok(None);
            };
            let cluster = storage::decode_u32(cf::CLUSTERS, &k, &k)?;
            let cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            let representative = self.scan.view().doc(cl.representative)?.key;
            Ok(Some(ClusterInfo {
                cluster,
                representative,
                size: cl.members.len(),
            }))
        })();
        self.failed = item.is_err();
        item.transpose()
    }
}

/// A streaming cursor over every page's key and cluster, in id order, at one snapshot (see
/// [`Index::keys`]). An `Iterator` of `Result<(key, cluster)>`; it stops after an error.
pub struct Keys<'a> {
    scan: Scan<'a>,
    failed: bool,
}

impl Iterator for Keys<'_> {
    type Item = Result<(String, ClusterId)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = (|| {
            let Some((k, v)) = self.scan.next_entry()? else {
                return Ok(None);
            };
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            Ok(Some((rec.key, rec.cluster)))
        })();
        self.failed = item.is_err();
        item.transpose()
    }
}

/// A streaming cursor over a cluster's members' keys, in id order, at one snapshot (see
/// [`Index::members`]). An `Iterator` of `Result<String>`; it stops after an error.
pub struct Members<'a> {
    scan: Scan<'a>,
    ids: roaring::bitmap::IntoIter,
    failed: bool,
}

impl Iterator for Members<'_> {
    type Item = Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let id = self.ids.next()?;
        let item = self.scan.view().doc(id).map(|r| r.key);
        self.failed = item.is_err();
        Some(item)
    }
}

impl Index {
    /// The stored record of a key, `None` when the key is absent: what an engine needs of a
    /// page without sending it again. Read at one snapshot.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn get(&self, key: &str) -> Result<Option<Record>> {
        self.registration.check_process()?;
        let snap = self.db.snapshot();
        let view = SnapshotView {
            ix: self,
            snap: &snap,
        };
        let Some(v) = view.get(cf::KEYS, key.as_bytes())? else {
            return Ok(None);
        };
        let doc = storage::decode_u32(cf::KEYS, key.as_bytes(), &v)?;
        let rec = view.doc(doc)?;
        let cl = view.cluster(rec.cluster)?;
        let representative = if cl.representative == doc {
            rec.key.clone()
        } else {
            view.doc(cl.representative)?.key
        };
        let similar = similar_of(&rec, |i| view.doc_if_live(i))?;
        let (resemble, contain) = match similar {
            Some(_) => (f64::from(rec.resemble), f64::from(rec.contain)),
            None => (0.0, 0.0),
        };
        Ok(Some(Record {
            doc,
            seq: rec.seq,
            cluster: rec.cluster,
            representative,
            similar_to: similar.map(|r| r.key),
            resemble,
            contain,
            content_hash: rec.content_hash,
            host: rec.host,
            time: rec.time,
            text_chars: rec.text_chars,
            key: rec.key,
        }))
    }

    /// A cursor over every cluster (id, representative, size), in id order, at one snapshot:
    /// streaming, one cluster record read at a time. Writes made meanwhile are not seen.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; the cursor yields storage and corruption errors.
    pub fn clusters(&self) -> Result<Clusters<'_>> {
        self.registration.check_process()?;
        Ok(Clusters {
            scan: Scan::new(self, cf::CLUSTERS),
            failed: false,
        })
    }

    /// A cursor over every page's key and cluster, in id order, at one snapshot.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; the cursor yields storage and corruption errors.
    pub fn keys(&self) -> Result<Keys<'_>> {
        self.registration.check_process()?;
        Ok(Keys {
            scan: Scan::new(self, cf::DOCS),
            failed: false,
        })
    }

    /// A cursor over the keys of a cluster's members, in id order, at one snapshot; `None`
    /// when there is no such cluster.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] reading the cluster; the cursor yields them
    /// for its members.
    pub fn members(&self, cluster: ClusterId) -> Result<Option<Members<'_>>> {
        self.registration.check_process()?;
        let scan = Scan::new(self, cf::CLUSTERS);
        let k = id_key(cluster);
        let Some(v) = scan.view().get(cf::CLUSTERS, &k)? else {
            return Ok(None);
        };
        let ids: RoaringBitmap = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?.members;
        Ok(Some(Members {
            scan,
            ids: ids.into_iter(),
            failed: false,
        }))
    }

    /// The verdicts [`Index::query`] gives these contents, computed in parallel (signatures and
    /// verification on the rayon pool), in the input order; one content's error does not stop
    /// the others. Nothing is stored.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; each content has its own result.
    pub fn query_batch(&self, contents: &[Content<'_>]) -> Result<Vec<Result<Verdict>>> {
        self.registration.check_process()?;
        Ok(contents
            .par_iter()
            .map(|c| crate::quiet::within(|| self.query(*c)))
            .collect())
    }

    /// The verdicts [`Index::query_page`] gives these pages, computed in parallel (signatures
    /// and verification on the rayon pool), in the input order: the site chrome learned for each
    /// page's host is dropped from it as [`Index::insert_batch`] would drop it. One page's error
    /// does not stop the others. Nothing is stored.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; each page has its own result.
    pub fn query_pages(&self, pages: &[Page<'_>]) -> Result<Vec<Result<Verdict>>> {
        self.registration.check_process()?;
        Ok(pages
            .par_iter()
            .map(|p| crate::quiet::within(|| self.query_page(p)))
            .collect())
    }

    /// The configuration stored in the index at `path`, as JSON (signature parameters, simhash
    /// distance, representative policy, whether texts are stored): what
    /// [`Index::open_existing`] opens it with.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when there is no index at `path`, storage and corruption
    /// errors.
    pub fn stored_config_json(path: impl AsRef<std::path::Path>) -> Result<String> {
        let stored = super::StoredConfig::read(path.as_ref())?;
        serde_json::to_string(&stored)
            .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))
    }

    /// The stored part of this index's configuration, as JSON (see
    /// [`Index::stored_config_json`]).
    ///
    /// # Errors
    /// None in practice (the configuration serializes).
    pub fn config_json(&self) -> Result<String> {
        serde_json::to_string(&self.stored_config())
            .map_err(|e| Error::InvalidArgument(format!("configuration: {e}")))
    }
}
