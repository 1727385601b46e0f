//! Streaming cursors over clusters, a cluster's members and all keys, each over one consistent
//! snapshot.

use roaring::RoaringBitmap;
use rocksdb::{DBRawIterator, ReadOptions};

use crate::index::types::ClusterInfo;
use crate::index::view::{Snapshot, View};
use crate::index::Index;
use crate::storage::codec::{ClusterId, ClusterRecord, DocRecord};
use crate::storage::{self, cf};
use crate::{Error, Result};

/// A RocksDB iterator over one column family at a snapshot it owns.
struct Scan<'a> {
    // Declared before `view`: the iterator reads at the snapshot and is dropped first.
    it: DBRawIterator<'a>,
    view: Snapshot<'a>,
    started: bool,
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
        }
    }

    /// The next entry, copied out.
    pub(crate) fn next_entry(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
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

    pub(crate) fn view(&self) -> &Snapshot<'a> {
        &self.view
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
            let representative = self.scan.view().member(cl.representative)?.key;
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
