//! Streaming cursors over clusters, a cluster's members, all keys and all pages' records, each
//! over one consistent snapshot. The key and page cursors start at any page id, so that a caller
//! that cannot hold a cursor (a binding handing out chunks) resumes after the last id it saw.

use std::collections::HashMap;

use roaring::RoaringBitmap;
use rocksdb::{DBRawIterator, ReadOptions};

use super::record::record_with;
use crate::index::types::{ClusterInfo, Record};
use crate::index::view::{Snapshot, View};
use crate::index::Index;
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord};
use crate::storage::{self, cf, id_key};
use crate::{Error, Result};

/// How many clusters' representatives a [`Pages`] cursor remembers before it forgets them all.
const REPRESENTATIVES_KEPT: usize = 4096;

/// A RocksDB iterator over one column family at a snapshot it owns.
struct Scan<'a> {
    // Declared before `view`: the iterator reads at the snapshot and is dropped first.
    it: DBRawIterator<'a>,
    view: Snapshot<'a>,
    started: bool,
    /// Where the first read seeks (an encoded key), `None` for the first entry.
    from: Option<Vec<u8>>,
}

impl<'a> Scan<'a> {
    pub(crate) fn new(ix: &'a Index, name: &'static str) -> Scan<'a> {
        let view = Snapshot::of(ix);
        let mut ro = ReadOptions::default();
        ro.set_snapshot(view.raw());
        let it = ix.db.raw_iterator_cf_opt(ix.cf(name), ro);
        Scan {
            it,
            view,
            started: false,
            from: None,
        }
    }

    /// The scan, starting at the first key at or after `from`.
    pub(crate) fn from(mut self, from: Vec<u8>) -> Scan<'a> {
        self.from = Some(from);
        self
    }

    /// The next entry, copied out.
    pub(crate) fn next_entry(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.started {
            self.it.next();
        } else {
            match &self.from {
                Some(k) => self.it.seek(k),
                None => self.it.seek_to_first(),
            }
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

    pub(crate) fn view(&self) -> &Snapshot<'a> {
        &self.view
    }
}

/// One step of a cursor that stops after its first error: nothing once `failed`, which a
/// failing `next` sets.
fn step<T>(failed: &mut bool, next: impl FnOnce() -> Result<Option<T>>) -> Option<Result<T>> {
    if *failed {
        return None;
    }
    let item = next();
    *failed = item.is_err();
    item.transpose()
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
        step(&mut self.failed, || {
            let Some((k, v)) = self.scan.next_entry()? else {
                return Ok(None);
            };
            let cluster = storage::decode_u32(cf::CLUSTERS, &k, &k)?;
            let cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            let representative = self.scan.view().member(cl.representative)?.key;
            Ok(Some(ClusterInfo {
                cluster,
                representative,
                size: cl.members.len(),
            }))
        })
    }
}

/// A streaming cursor over every page's key and cluster, in id order, at one snapshot (see
/// [`Index::keys`]). An `Iterator` of `Result<(key, cluster)>`; it stops after an error.
pub struct Keys<'a> {
    scan: Scan<'a>,
    failed: bool,
    last: Option<DocId>,
}

impl Keys<'_> {
    /// The id of the page whose key was yielded last (`None` before the first): a later
    /// [`Index::keys_from`] at the next id resumes after it.
    pub fn last_doc(&self) -> Option<DocId> {
        self.last
    }
}

impl Iterator for Keys<'_> {
    type Item = Result<(String, ClusterId)>;

    fn next(&mut self) -> Option<Self::Item> {
        step(&mut self.failed, || {
            let Some((k, v)) = self.scan.next_entry()? else {
                return Ok(None);
            };
            let doc = storage::decode_u32(cf::DOCS, &k, &k)?;
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            self.last = Some(doc);
            Ok(Some((rec.key, rec.cluster)))
        })
    }
}

/// A streaming cursor over every page's [`Record`] (what [`Index::get`] gives), in id order, at
/// one snapshot (see [`Index::pages`]). An `Iterator` of `Result<Record>`; it stops after an
/// error.
pub struct Pages<'a> {
    scan: Scan<'a>,
    failed: bool,
    /// Representatives' keys by cluster, met so far (bounded by [`REPRESENTATIVES_KEPT`]).
    representatives: HashMap<ClusterId, String>,
}

impl Iterator for Pages<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        step(&mut self.failed, || {
            let Some((k, v)) = self.scan.next_entry()? else {
                return Ok(None);
            };
            let doc = storage::decode_u32(cf::DOCS, &k, &k)?;
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            let view = self.scan.view();
            let representative = match self.representatives.get(&rec.cluster) {
                Some(r) => r.clone(),
                None => {
                    let rep = view.cluster_of_live(rec.cluster)?.representative;
                    let key = if rep == doc {
                        rec.key.clone()
                    } else {
                        view.member(rep)?.key
                    };
                    if self.representatives.len() >= REPRESENTATIVES_KEPT {
                        self.representatives.clear();
                    }
                    self.representatives.insert(rec.cluster, key.clone());
                    key
                }
            };
            record_with(view, doc, rec, representative).map(Some)
        })
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
        let item = self.scan.view().member(id).map(|r| r.key);
        self.failed = item.is_err();
        Some(item)
    }
}

impl Index {
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
        self.keys_from(0)
    }

    /// A cursor over the key and cluster of every page of id `first` or above, in id order, at
    /// one snapshot: [`Index::keys`] resumed. With [`Keys::last_doc`], a caller reads the keys
    /// in chunks, each at its own snapshot; then a page held from the first chunk to the last,
    /// and not replaced meanwhile, is met exactly once.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; the cursor yields storage and corruption errors.
    pub fn keys_from(&self, first: DocId) -> Result<Keys<'_>> {
        self.registration.check_process()?;
        Ok(Keys {
            scan: Scan::new(self, cf::DOCS).from(id_key(first).to_vec()),
            failed: false,
            last: None,
        })
    }

    /// A cursor over every page's [`Record`] (key, id, cluster, representative, similar page,
    /// scores, host, time...), in id order, at one snapshot: streaming, one page record read at a
    /// time (and its cluster's representative, remembered for a few thousand clusters).
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; the cursor yields storage and corruption errors.
    pub fn pages(&self) -> Result<Pages<'_>> {
        self.pages_from(0)
    }

    /// [`Index::pages`] from page id `first` on (see [`Index::keys_from`]); each record's `doc`
    /// is its id.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; the cursor yields storage and corruption errors.
    pub fn pages_from(&self, first: DocId) -> Result<Pages<'_>> {
        self.registration.check_process()?;
        Ok(Pages {
            scan: Scan::new(self, cf::DOCS).from(id_key(first).to_vec()),
            failed: false,
            representatives: HashMap::new(),
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
        let Some(cl) = scan.view().cluster(cluster)? else {
            return Ok(None);
        };
        let ids: RoaringBitmap = cl.members;
        Ok(Some(Members {
            scan,
            ids: ids.into_iter(),
            failed: false,
        }))
    }
}
