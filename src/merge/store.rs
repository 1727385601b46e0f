//! What the distributed whole-index operations (SCALEOUT §9 "Check" and "Export") read of one
//! partition's database, in either id width: a format 6 partition ([`Index`], `u32` ids) or a
//! format 7 one ([`super::WidePartition`], global `u64` ids; issue #34 item 5). The check and
//! the export are written once, over [`PartitionDb`]; what differs between the widths — the
//! counters' and free ids' homes, the simhash keys, where a page's posting keys come from — is
//! this trait's.

use roaring::RoaringTreemap;
use rocksdb::{ColumnFamily, IteratorMode, SnapshotWithThreadMode, DB};

use super::layout::Role;
use crate::index::Index;
use crate::storage::codec::{self, ClusterRecord, DocRecord};
use crate::storage::width::{decode_id, IdWidth};
use crate::storage::{self, cf, SimhashTables};
use crate::{Error, Result};

/// A snapshot of a partition's database.
pub(crate) type DbSnapshot<'a> = SnapshotWithThreadMode<'a, DB>;

/// A snapshot of a partition with the counters and free ids it holds, read together (no write
/// commits between them).
pub(crate) struct Consistent<'a> {
    /// The snapshot.
    pub(crate) snap: DbSnapshot<'a>,
    /// Next page id, next cluster id, next insertion number, live pages, live clusters.
    pub(crate) counters: (u64, u64, u64, u64, u64),
    /// The free page ids.
    pub(crate) free_docs: RoaringTreemap,
    /// The free cluster ids.
    pub(crate) free_clusters: RoaringTreemap,
}

/// A partition's database as the distributed check and export read it (SCALEOUT §9), whatever
/// the width of its ids.
pub(crate) trait PartitionDb {
    /// The width of its page and cluster ids.
    type Id: IdWidth;

    /// The database.
    fn db(&self) -> &DB;
    /// A column family of it.
    fn column(&self, name: &str) -> &ColumnFamily;
    /// Its simhash tables.
    fn simhash_tables(&self) -> &SimhashTables;
    /// Refuses a use in a child after `fork`.
    fn check_process(&self) -> Result<()>;
    /// Its role in the distributed index; `None` for a whole index.
    fn role(&self) -> Result<Option<Role>>;
    /// Whether it keeps the page → cluster map (`page_clusters`).
    fn keeps_page_clusters(&self) -> bool;
    /// The over-frequent keys it marks.
    fn frequent_keys(&self) -> Result<Vec<[u8; 9]>>;
    /// A snapshot with its counters and free ids.
    fn consistent(&self) -> Result<Consistent<'_>>;
    /// The posting keys page `id` is filed under at `snap`, its content key first (`content`:
    /// its content hash); `None` when it has no `texts` value.
    fn filed_keys_at(
        &self,
        snap: &DbSnapshot<'_>,
        id: Self::Id,
        content: u128,
    ) -> Result<Option<Vec<[u8; 9]>>>;
    /// A `simhash` key as (table, simhash, page id); `None` when it is not one of its width.
    fn decode_simhash(&self, key: &[u8]) -> Option<(u8, u64, Self::Id)>;
}

/// The page record of `id` at `snap`.
pub(crate) fn doc_at<P: PartitionDb>(
    p: &P,
    snap: &DbSnapshot<'_>,
    id: P::Id,
) -> Result<Option<DocRecord<P::Id>>> {
    let k = id.to_be();
    snap.get_cf(p.column(cf::DOCS), k)
        .map_err(|e| Error::storage("reading a page record", e))?
        .map(|v| DocRecord::<P::Id>::decode_as(cf::DOCS, k.as_ref(), &v))
        .transpose()
}

/// The cluster record of `cid` at `snap`.
pub(crate) fn cluster_at<P: PartitionDb>(
    p: &P,
    snap: &DbSnapshot<'_>,
    cid: P::Id,
) -> Result<Option<ClusterRecord<P::Id>>> {
    let k = cid.to_be();
    snap.get_cf(p.column(cf::CLUSTERS), k)
        .map_err(|e| Error::storage("reading a cluster", e))?
        .map(|v| ClusterRecord::<P::Id>::decode_as(cf::CLUSTERS, k.as_ref(), &v))
        .transpose()
}

/// Calls `f(id, record)` for every record of column family `name` (keyed by an id of the
/// partition's width) at `snap`, in id order, each decoded by `decode` (`what` names the scan
/// in storage errors).
pub(crate) fn scan_records<P: PartitionDb, T>(
    p: &P,
    snap: &DbSnapshot<'_>,
    (name, what): (&'static str, &'static str),
    decode: impl Fn(&'static str, &[u8], &[u8]) -> Result<T>,
    mut f: impl FnMut(P::Id, T) -> Result<()>,
) -> Result<()> {
    let iter = snap.iterator_cf_opt(p.column(name), storage::scan_options(), IteratorMode::Start);
    for item in iter {
        let (k, v) = item.map_err(|e| Error::storage(what, e))?;
        let id = decode_id::<P::Id>(name, &k, &k)?;
        f(id, decode(name, &k, &v)?)?;
    }
    Ok(())
}

/// A format 6 partition (or a whole index, which has no role).
impl PartitionDb for Index {
    type Id = u32;

    fn db(&self) -> &DB {
        &self.db
    }

    fn column(&self, name: &str) -> &ColumnFamily {
        self.cf(name)
    }

    fn simhash_tables(&self) -> &SimhashTables {
        &self.tables
    }

    fn check_process(&self) -> Result<()> {
        self.registration.check_process()
    }

    fn role(&self) -> Result<Option<Role>> {
        Ok(self.partition()?.map(|p| p.role))
    }

    fn keeps_page_clusters(&self) -> bool {
        self.cluster_map
    }

    fn frequent_keys(&self) -> Result<Vec<[u8; 9]>> {
        Ok(self.frequent_reasons()?.into_keys().collect())
    }

    fn consistent(&self) -> Result<Consistent<'_>> {
        let widen = |b| RoaringTreemap::from_bitmaps(std::iter::once((0, b)));
        // Commits happen under the writer lock: the snapshot and the counters agree.
        let c = self.writer.lock();
        Ok(Consistent {
            snap: self.db.snapshot(),
            counters: (
                u64::from(c.next_doc),
                u64::from(c.next_cluster),
                c.next_seq,
                c.live_docs,
                c.live_clusters,
            ),
            free_docs: widen(c.free_docs.all()),
            free_clusters: widen(c.free_clusters.all()),
        })
    }

    fn filed_keys_at(
        &self,
        snap: &DbSnapshot<'_>,
        id: u32,
        content: u128,
    ) -> Result<Option<Vec<[u8; 9]>>> {
        let k = storage::id_key(id);
        let Some(v) = snap
            .get_cf(self.cf(cf::TEXTS), k)
            .map_err(|e| Error::storage("reading a text", e))?
        else {
            return Ok(None);
        };
        let keys = self.posting_keys_in(id, &codec::decode_text_value(cf::TEXTS, &k, &v)?)?;
        let content = storage::posting_key(storage::kind::CONTENT, content);
        Ok(Some(std::iter::once(content).chain(keys).collect()))
    }

    fn decode_simhash(&self, key: &[u8]) -> Option<(u8, u64, u32)> {
        self.tables.decode(key)
    }
}
