//! A work unit's dense scratch ids (issue #34 item 5; SCALEOUT §4, §5 S4.2–S4.5).
//!
//! A work unit decides its components in a scratch index ([`crate::Index`], `u32` ids), seeded
//! with the standing pages and clusters its decisions read. The seed names them by the standing
//! index's ids, which a distributed index allocates from one space for every partition: a
//! scratch index that kept them would need ids as wide as the whole index's. Instead the seed is
//! renumbered densely ([`ScratchIds::from_seed`]): the `i`-th smallest page id the seed names
//! becomes page `i` of the scratch index, and the same for clusters; the scratch allocators start
//! just past them. The renumbering keeps the ids' order, so every tie the decisions break by id
//! is broken as the standing index would break it, and a free id (given to a later page when ids
//! are reused) is still the lowest one. What the scratch index decides is mapped back
//! ([`ScratchIds::to_global`]): a seeded id to the standing id it stood for, the `k`-th new one to
//! the standing allocator plus `k` — the log a scratch index that kept the standing ids would
//! have written, byte for byte ([`crate::Index::state_diff_file_mapped`]).

use roaring::RoaringBitmap;

use super::log::{LogCounter, LogOp};
use crate::storage::codec::{ClusterId, DocId, NO_DOC};
use crate::{Error, Result};

/// The page, cluster and insertion numbers of one operation, each passed through a mapping
/// ([`map_ids`]).
pub(super) trait IdMapping {
    /// A page id (never [`NO_DOC`]).
    fn doc(&mut self, id: DocId) -> Result<DocId>;
    /// A cluster id.
    fn cluster(&mut self, id: ClusterId) -> Result<ClusterId>;
    /// An insertion number (unchanged unless overridden).
    fn seq(&mut self, seq: u64) -> Result<u64> {
        Ok(seq)
    }
    /// A set of page ids (each through [`IdMapping::doc`] unless overridden).
    fn docs(&mut self, ids: &RoaringBitmap) -> Result<RoaringBitmap> {
        let mut out = RoaringBitmap::new();
        for id in ids {
            out.insert(self.doc(id)?);
        }
        Ok(out)
    }
}

/// Passes every page id, cluster id and insertion number `op` names through `m`, counters
/// excepted (their values are allocators, not ids).
pub(super) fn map_ids(op: &mut LogOp, m: &mut impl IdMapping) -> Result<()> {
    match op {
        LogOp::Posting { delta, .. } => {
            delta.add = m.docs(&delta.add)?;
            delta.remove = m.docs(&delta.remove)?;
        }
        LogOp::Simhash { doc: d, .. } => *d = m.doc(*d)?,
        LogOp::Key { doc: d, .. } => {
            if let Some(d) = d {
                *d = m.doc(*d)?;
            }
        }
        LogOp::Doc { id, record } => {
            *id = m.doc(*id)?;
            if let Some(r) = record {
                r.cluster = m.cluster(r.cluster)?;
                r.seq = m.seq(r.seq)?;
                if r.similar_to != NO_DOC {
                    r.similar_to = m.doc(r.similar_to)?;
                    r.similar_seq = m.seq(r.similar_seq)?;
                }
            }
        }
        LogOp::Text { id, .. } | LogOp::PageBlocks { id, .. } | LogOp::FreeDoc { id, .. } => {
            *id = m.doc(*id)?
        }
        LogOp::Cluster { id, record } => {
            *id = m.cluster(*id)?;
            if let Some(r) = record {
                r.representative = m.doc(r.representative)?;
                r.members = m.docs(&r.members)?;
            }
        }
        LogOp::FreeCluster { id, .. } => *id = m.cluster(*id)?,
        LogOp::Frequent { .. }
        | LogOp::HostPages { .. }
        | LogOp::BlockPages { .. }
        | LogOp::Counter(_) => {}
    }
    Ok(())
}

/// The dense renumbering of one work unit's scratch index (see the module's documentation):
/// scratch page `i` is the `i`-th smallest page id its seed names, scratch cluster `i` the
/// `i`-th smallest cluster id, and the `k`-th id a scratch allocator gives out past them is the
/// standing allocator's value plus `k`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScratchIds {
    /// The standing page id of each scratch page id below `pages.len()` (increasing).
    pages: Vec<DocId>,
    /// The standing cluster id of each scratch cluster id below `clusters.len()` (increasing).
    clusters: Vec<ClusterId>,
    /// The standing page id allocator when the seed was taken.
    next_doc: DocId,
    /// The standing cluster id allocator when the seed was taken.
    next_cluster: ClusterId,
}

/// Collects the ids a seed names.
struct Collect<'a>(&'a mut ScratchIds);

impl IdMapping for Collect<'_> {
    fn doc(&mut self, id: DocId) -> Result<DocId> {
        self.0.pages.push(id);
        Ok(id)
    }
    fn cluster(&mut self, id: ClusterId) -> Result<ClusterId> {
        self.0.clusters.push(id);
        Ok(id)
    }
    fn docs(&mut self, ids: &RoaringBitmap) -> Result<RoaringBitmap> {
        self.0.pages.extend(ids);
        Ok(ids.clone())
    }
}

/// Standing ids to scratch ids.
struct ToScratch<'a>(&'a ScratchIds);

/// The place of `id` in `table`, as a scratch id.
fn rank(table: &[u32], id: u32, what: &str) -> Result<u32> {
    table
        .binary_search(&id)
        .map(|i| i as u32)
        .map_err(|_| Error::InvalidArgument(format!("the seed does not name {what} {id}")))
}

impl IdMapping for ToScratch<'_> {
    fn doc(&mut self, id: DocId) -> Result<DocId> {
        rank(&self.0.pages, id, "page")
    }
    fn cluster(&mut self, id: ClusterId) -> Result<ClusterId> {
        rank(&self.0.clusters, id, "cluster")
    }
}

/// Scratch ids to standing ids.
struct ToGlobal<'a>(&'a ScratchIds);

impl IdMapping for ToGlobal<'_> {
    fn doc(&mut self, id: DocId) -> Result<DocId> {
        self.0.global_page(id)
    }
    fn cluster(&mut self, id: ClusterId) -> Result<ClusterId> {
        self.0.global_cluster(id)
    }
    fn docs(&mut self, ids: &RoaringBitmap) -> Result<RoaringBitmap> {
        // Increasing in, increasing out: the mapping keeps the order.
        let mapped = ids
            .iter()
            .map(|id| self.0.global_page(id))
            .collect::<Result<Vec<_>>>()?;
        RoaringBitmap::from_sorted_iter(mapped)
            .map_err(|_| Error::InvalidArgument("scratch ids out of order".into()))
    }
}

/// The standing id of scratch id `id`: `table[id]` for a seeded one, `next` plus its place past
/// them for a new one.
fn global(table: &[u32], next: u32, id: u32) -> Result<u32> {
    match table.get(id as usize) {
        Some(&g) => Ok(g),
        None => next.checked_add(id - table.len() as u32).ok_or(Error::Full),
    }
}

impl ScratchIds {
    /// The dense renumbering of a work unit's seed ([`crate::merge::combine_seed_logs`] of the
    /// partitions' [`crate::Index::seed_log`]s), and the seed renumbered, to apply to the
    /// scratch index instead: every page and cluster id the seed names (its pages and
    /// clusters, the members and representatives of its clusters, the pages its records name
    /// as similar, its free ids) in increasing order, its allocators just past them.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the seed lacks its allocators, or names an id at or above
    /// them.
    pub fn from_seed(mut seed: Vec<LogOp>) -> Result<(ScratchIds, Vec<LogOp>)> {
        let mut ids = ScratchIds::default();
        let (mut next_doc, mut next_cluster) = (None, None);
        for op in &mut seed {
            match op {
                LogOp::Counter(LogCounter::NextDoc(n)) => next_doc = Some(*n),
                LogOp::Counter(LogCounter::NextCluster(n)) => next_cluster = Some(*n),
                // Collecting leaves the operation as it was.
                op => map_ids(op, &mut Collect(&mut ids))?,
            }
        }
        let (Some(next_doc), Some(next_cluster)) = (next_doc, next_cluster) else {
            return Err(Error::InvalidArgument(
                "the seed does not give the page and cluster id allocators".into(),
            ));
        };
        for table in [&mut ids.pages, &mut ids.clusters] {
            table.sort_unstable();
            table.dedup();
        }
        if ids.pages.last().is_some_and(|&p| p >= next_doc)
            || ids.clusters.last().is_some_and(|&c| c >= next_cluster)
        {
            return Err(Error::InvalidArgument(
                "the seed names an id at or above its allocator".into(),
            ));
        }
        ids.next_doc = next_doc;
        ids.next_cluster = next_cluster;
        for op in &mut seed {
            match op {
                LogOp::Counter(LogCounter::NextDoc(n)) => *n = ids.pages.len() as DocId,
                LogOp::Counter(LogCounter::NextCluster(n)) => *n = ids.clusters.len() as ClusterId,
                other => map_ids(other, &mut ToScratch(&ids))?,
            }
        }
        Ok((ids, seed))
    }

    /// The standing page id scratch page `id` stands for (a new one: the standing allocator
    /// plus its place among the new ones).
    ///
    /// # Errors
    /// [`Error::Full`] when a new id would pass the id space.
    pub fn global_page(&self, id: DocId) -> Result<DocId> {
        if id == NO_DOC {
            return Ok(NO_DOC);
        }
        // The last page id means "none": no allocator gives it out.
        global(&self.pages, self.next_doc, id).and_then(|g| {
            if g == NO_DOC {
                Err(Error::Full)
            } else {
                Ok(g)
            }
        })
    }

    /// The standing cluster id scratch cluster `id` stands for.
    ///
    /// # Errors
    /// [`Error::Full`] when a new id would pass the id space.
    pub fn global_cluster(&self, id: ClusterId) -> Result<ClusterId> {
        global(&self.clusters, self.next_cluster, id)
    }

    /// The number of page ids the seed names (the scratch page allocator's start).
    pub fn seeded_pages(&self) -> usize {
        self.pages.len()
    }

    /// The number of cluster ids the seed names (the scratch cluster allocator's start).
    pub fn seeded_clusters(&self) -> usize {
        self.clusters.len()
    }

    /// One operation of the scratch index's log (its state or its diff) in standing ids; the
    /// allocators as the standing index's moved by as many ids as the scratch index gave out.
    ///
    /// # Errors
    /// [`Error::Full`] when a new id would pass the id space.
    pub fn to_global(&self, mut op: LogOp) -> Result<LogOp> {
        match &mut op {
            LogOp::Counter(LogCounter::NextDoc(n)) => *n = global(&self.pages, self.next_doc, *n)?,
            LogOp::Counter(LogCounter::NextCluster(n)) => {
                *n = global(&self.clusters, self.next_cluster, *n)?
            }
            other => map_ids(other, &mut ToGlobal(self))?,
        }
        Ok(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::codec::ClusterRecord;
    use crate::storage::merge::Delta;

    #[test]
    fn the_seed_is_numbered_densely_in_order_and_maps_back() {
        let members: RoaringBitmap = [40u32, 900].into_iter().collect();
        let seed = vec![
            LogOp::Counter(LogCounter::NextDoc(1_000)),
            LogOp::Counter(LogCounter::NextCluster(70)),
            LogOp::FreeDoc { id: 7, free: true },
            LogOp::Cluster {
                id: 66,
                record: Some(ClusterRecord {
                    representative: 900,
                    members,
                }),
            },
            LogOp::Posting {
                key: [1; 9],
                delta: Delta {
                    add: [40u32, 900].into_iter().collect(),
                    remove: RoaringBitmap::new(),
                },
            },
        ];
        let (ids, scratch) = ScratchIds::from_seed(seed.clone()).unwrap();
        assert_eq!((ids.seeded_pages(), ids.seeded_clusters()), (3, 1));
        assert_eq!(scratch[0], LogOp::Counter(LogCounter::NextDoc(3)));
        assert_eq!(scratch[1], LogOp::Counter(LogCounter::NextCluster(1)));
        assert_eq!(scratch[2], LogOp::FreeDoc { id: 0, free: true });
        // Back: the same operations; new ids past the standing allocators.
        for (s, g) in scratch.iter().zip(&seed) {
            assert_eq!(&ids.to_global(s.clone()).unwrap(), g);
        }
        assert_eq!(ids.global_page(3).unwrap(), 1_000);
        assert_eq!(ids.global_page(5).unwrap(), 1_002);
        assert_eq!(ids.global_cluster(1).unwrap(), 70);
        assert_eq!(ids.global_page(NO_DOC).unwrap(), NO_DOC);
    }

    #[test]
    fn a_seed_without_allocators_or_past_them_is_refused() {
        let page = LogOp::FreeDoc { id: 5, free: true };
        assert!(ScratchIds::from_seed(vec![page.clone()]).is_err());
        let seed = vec![
            LogOp::Counter(LogCounter::NextDoc(5)),
            LogOp::Counter(LogCounter::NextCluster(1)),
            page,
        ];
        assert!(ScratchIds::from_seed(seed).is_err());
    }

    #[test]
    fn new_ids_past_the_id_space_are_full() {
        let seed = vec![
            LogOp::Counter(LogCounter::NextDoc(u32::MAX - 1)),
            LogOp::Counter(LogCounter::NextCluster(0)),
        ];
        let (ids, _) = ScratchIds::from_seed(seed).unwrap();
        assert_eq!(ids.global_page(0).unwrap(), u32::MAX - 1);
        assert!(matches!(ids.global_page(1), Err(Error::Full)));
        assert!(matches!(ids.global_page(2), Err(Error::Full)));
    }
}
