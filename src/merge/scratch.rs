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
//! the standing allocator plus `k` — the operations a scratch index that kept the standing ids
//! would have written, each the same, in a log of global (`u64`) ids
//! ([`crate::Index::state_diff_file_mapped`]).

use super::log::{LogCounter, LogOp};
use super::logio::{read_log_file, scan_log_file, LogFileOps, LogFileWriter};
use super::mapping::{map_ids, IdMapping};
use crate::storage::codec::{DocId, NO_DOC};
use crate::storage::width::{WideDocId, NO_WIDE_DOC};
use crate::{Error, Result};

/// The dense renumbering of one work unit's scratch index (see the module's documentation):
/// scratch page `i` is the `i`-th smallest page id its seed names, scratch cluster `i` the
/// `i`-th smallest cluster id, and the `k`-th id a scratch allocator gives out past them is the
/// standing allocator's value plus `k`. Standing ids are global (`u64`, SCALEOUT §4), scratch
/// ids `u32`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScratchIds {
    /// The standing page id of each scratch page id below `pages.len()` (increasing).
    pages: Vec<WideDocId>,
    /// The standing cluster id of each scratch cluster id below `clusters.len()` (increasing).
    clusters: Vec<WideDocId>,
    /// The standing page id allocator when the seed was taken.
    next_doc: WideDocId,
    /// The standing cluster id allocator when the seed was taken.
    next_cluster: WideDocId,
}

/// Adds the page and cluster ids `op` names to `ids` (what [`map_ids`] passes through a mapping,
/// read in place: a seed of a million pages is not rebuilt to be read).
fn collect_ids(op: &LogOp<u64>, ids: &mut ScratchIds) {
    let pages = &mut ids.pages;
    match op {
        LogOp::Posting { delta, .. } => {
            pages.extend(delta.add.iter());
            pages.extend(delta.remove.iter());
        }
        LogOp::Simhash { doc, .. } | LogOp::Key { doc: Some(doc), .. } => pages.push(*doc),
        LogOp::Doc { id, record } => {
            pages.push(*id);
            if let Some(r) = record {
                ids.clusters.push(r.cluster);
                if r.similar_to != NO_WIDE_DOC {
                    pages.push(r.similar_to);
                }
            }
        }
        LogOp::Text { id, .. } | LogOp::PageBlocks { id, .. } | LogOp::FreeDoc { id, .. } => {
            pages.push(*id)
        }
        LogOp::Cluster { id, record } => {
            ids.clusters.push(*id);
            if let Some(r) = record {
                pages.push(r.representative);
                pages.extend(r.members.iter());
            }
        }
        LogOp::FreeCluster { id, .. } => ids.clusters.push(*id),
        LogOp::Key { doc: None, .. }
        | LogOp::Frequent { .. }
        | LogOp::HostPages { .. }
        | LogOp::BlockPages { .. }
        | LogOp::Counter(_) => {}
    }
}

/// Standing ids to scratch ids; the allocators to the scratch index's.
struct ToScratch<'a>(&'a ScratchIds);

/// The place of `id` in `table`, as a scratch id.
fn rank(table: &[u64], id: u64, what: &str) -> Result<u32> {
    let i = table
        .binary_search(&id)
        .map_err(|_| Error::InvalidArgument(format!("the seed does not name {what} {id}")))?;
    u32::try_from(i).map_err(|_| Error::Full)
}

impl IdMapping<u64, u32> for ToScratch<'_> {
    fn doc(&mut self, id: u64) -> Result<u32> {
        rank(&self.0.pages, id, "page")
    }
    fn cluster(&mut self, id: u64) -> Result<u32> {
        rank(&self.0.clusters, id, "cluster")
    }
}

/// Scratch ids to standing ids.
struct ToGlobal<'a>(&'a ScratchIds);

impl IdMapping<u32, u64> for ToGlobal<'_> {
    fn doc(&mut self, id: u32) -> Result<u64> {
        self.0.global_page(id)
    }
    fn cluster(&mut self, id: u32) -> Result<u64> {
        self.0.global_cluster(id)
    }
    fn allocator(&mut self, n: u32) -> Result<u64> {
        // Not reached: [`ScratchIds::to_global`] maps the allocators itself.
        Ok(u64::from(n))
    }
}

/// The standing id of scratch id `id`: `table[id]` for a seeded one, `next` plus its place past
/// them for a new one.
fn global(table: &[u64], next: u64, id: u32) -> Result<u64> {
    match table.get(id as usize) {
        Some(&g) => Ok(g),
        None => next
            .checked_add(u64::from(id) - table.len() as u64)
            .ok_or(Error::Full),
    }
}

impl ScratchIds {
    /// The dense renumbering of a work unit's seed ([`crate::merge::combine_seed_logs`] of the
    /// partitions' [`crate::Index::seed_log`]s, in global ids), and the seed renumbered, to apply
    /// to the scratch index instead: every page and cluster id the seed names (its pages and
    /// clusters, the members and representatives of its clusters, the pages its records name
    /// as similar, its free ids) in increasing order, its allocators just past them.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the seed lacks its allocators, or names an id at or above
    /// them; [`Error::Full`] when it names more ids than a scratch index holds (2³² − 1).
    pub fn from_seed(seed: Vec<LogOp<u64>>) -> Result<(ScratchIds, Vec<LogOp<u32>>)> {
        let mut ids = ScratchIds::default();
        let (mut next_doc, mut next_cluster) = (None, None);
        for op in &seed {
            match op {
                LogOp::Counter(LogCounter::NextDoc(n)) => next_doc = Some(*n),
                LogOp::Counter(LogCounter::NextCluster(n)) => next_cluster = Some(*n),
                op => collect_ids(op, &mut ids),
            }
        }
        let (pages, clusters) = ids.settle(next_doc, next_cluster)?;
        let scratch = seed
            .into_iter()
            .map(|op| ids.to_scratch(op, pages, clusters))
            .collect::<Result<Vec<_>>>()?;
        Ok((ids, scratch))
    }

    /// [`combine_seed_logs`](super::combine_seed_logs) of the partitions' seed log files
    /// `parts` (either id width) then [`ScratchIds::from_seed`], the scratch seed written to the
    /// log file `out` — the same ids and the same bytes as `encode_log` of `from_seed`'s log,
    /// with neither log in memory: each part is read three times (what the seed keeps once and
    /// the ids it names; its rows; its postings, merged across the parts by key), an operation
    /// at a time (issue #34: a unit seeded with 27,000 standing pages peaked at 3.3 GB
    /// combining and renumbering its 285 MB of seed logs in memory).
    ///
    /// # Errors
    /// As both; [`Error::InvalidArgument`] for a part whose postings are not in key order (as
    /// [`crate::Index::seed_log`] writes them); [`Error::Io`] and the refusals of
    /// [`super::read_log_file`] for a missing or damaged file.
    pub fn from_seed_files(
        parts: &[std::path::PathBuf],
        out: &std::path::Path,
    ) -> Result<ScratchIds> {
        use super::combine::SeedHead;
        // Pass 1: what the seed keeps once, and every id it names.
        let mut head = SeedHead::default();
        let mut ids = ScratchIds::default();
        for part in parts {
            let mut last: Option<[u8; 9]> = None;
            read_log_file::<u64>(part, &mut |op| {
                if let Some(op) = head.take(op) {
                    if let LogOp::Posting { key, .. } = &op {
                        if last.is_some_and(|l| l >= *key) {
                            return Err(Error::InvalidArgument(format!(
                                "{}: the seed's postings are not in key order",
                                part.display()
                            )));
                        }
                        last = Some(*key);
                    }
                    collect_ids(&op, &mut ids);
                }
                Ok(())
            })?;
            head.end_part()?;
        }
        let head = head.ops();
        let (mut next_doc, mut next_cluster) = (None, None);
        for op in &head {
            match op {
                LogOp::Counter(LogCounter::NextDoc(n)) => next_doc = Some(*n),
                LogOp::Counter(LogCounter::NextCluster(n)) => next_cluster = Some(*n),
                op => collect_ids(op, &mut ids),
            }
        }
        let (pages, clusters) = ids.settle(next_doc, next_cluster)?;
        let mut w = LogFileWriter::<u32>::create(out)?;
        for op in head {
            w.push(&ids.to_scratch(op, pages, clusters)?)?;
        }
        // Pass 2: the rows, part after part.
        for part in parts {
            scan_log_file::<u64>(part, &mut |op| match op {
                LogOp::Posting { .. } => Ok(()),
                op => match SeedHead::default().take(op) {
                    Some(row) => w.push(&ids.to_scratch(row, pages, clusters)?),
                    None => Ok(()),
                },
            })?;
        }
        // Pass 3: the postings, each part's in key order, merged by key.
        let mut streams = Vec::with_capacity(parts.len());
        for part in parts {
            streams.push(LogFileOps::<u64>::open(part)?.filter_map(|r| match r {
                Ok(LogOp::Posting { key, delta }) => Some(Ok((key, delta.add))),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            }));
        }
        let mut heads = Vec::with_capacity(streams.len());
        for s in &mut streams {
            heads.push(s.next().transpose()?);
        }
        while let Some(key) = heads.iter().flatten().map(|(k, _)| *k).min() {
            let mut add = roaring::RoaringTreemap::new();
            for (h, s) in heads.iter_mut().zip(&mut streams) {
                if h.as_ref().is_some_and(|(k, _)| *k == key) {
                    if let Some((_, a)) = h.take() {
                        add |= a;
                    }
                    *h = s.next().transpose()?;
                }
            }
            let op = LogOp::Posting {
                key,
                delta: crate::storage::merge::PostingDelta {
                    add,
                    remove: roaring::RoaringTreemap::new(),
                },
            };
            w.push(&ids.to_scratch(op, pages, clusters)?)?;
        }
        w.finish()?;
        Ok(ids)
    }

    /// The ids collected, sorted and checked against the allocators `next_doc` and
    /// `next_cluster`, which become this numbering's; the scratch allocators (pages, clusters).
    ///
    /// # Errors
    /// As [`ScratchIds::from_seed`].
    fn settle(&mut self, next_doc: Option<u64>, next_cluster: Option<u64>) -> Result<(u32, u32)> {
        let (Some(next_doc), Some(next_cluster)) = (next_doc, next_cluster) else {
            return Err(Error::InvalidArgument(
                "the seed does not give the page and cluster id allocators".into(),
            ));
        };
        for table in [&mut self.pages, &mut self.clusters] {
            table.sort_unstable();
            table.dedup();
        }
        if self.pages.last().is_some_and(|&p| p >= next_doc)
            || self.clusters.last().is_some_and(|&c| c >= next_cluster)
        {
            return Err(Error::InvalidArgument(
                "the seed names an id at or above its allocator".into(),
            ));
        }
        let dense = |n: usize| {
            u32::try_from(n)
                .ok()
                .filter(|&n| n != NO_DOC)
                .ok_or(Error::Full)
        };
        let (pages, clusters) = (dense(self.pages.len())?, dense(self.clusters.len())?);
        self.next_doc = next_doc;
        self.next_cluster = next_cluster;
        Ok((pages, clusters))
    }

    /// A seed's operation in scratch ids, its allocators the scratch index's (`pages`,
    /// `clusters`).
    fn to_scratch(&self, op: LogOp<u64>, pages: u32, clusters: u32) -> Result<LogOp<u32>> {
        match op {
            LogOp::Counter(LogCounter::NextDoc(_)) => {
                Ok(LogOp::Counter(LogCounter::NextDoc(pages)))
            }
            LogOp::Counter(LogCounter::NextCluster(_)) => {
                Ok(LogOp::Counter(LogCounter::NextCluster(clusters)))
            }
            other => map_ids(other, &mut ToScratch(self)),
        }
    }

    /// The standing page id scratch page `id` stands for (a new one: the standing allocator
    /// plus its place among the new ones).
    ///
    /// # Errors
    /// [`Error::Full`] when a new id would pass the id space.
    pub fn global_page(&self, id: DocId) -> Result<WideDocId> {
        if id == NO_DOC {
            return Ok(NO_WIDE_DOC);
        }
        // The last page id means "none": no allocator gives it out.
        global(&self.pages, self.next_doc, id).and_then(|g| {
            if g == NO_WIDE_DOC {
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
    pub fn global_cluster(&self, id: DocId) -> Result<WideDocId> {
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
    pub fn to_global(&self, op: LogOp) -> Result<LogOp<u64>> {
        Ok(match op {
            LogOp::Counter(LogCounter::NextDoc(n)) => {
                LogOp::Counter(LogCounter::NextDoc(global(&self.pages, self.next_doc, n)?))
            }
            LogOp::Counter(LogCounter::NextCluster(n)) => LogOp::Counter(LogCounter::NextCluster(
                global(&self.clusters, self.next_cluster, n)?,
            )),
            other => map_ids(other, &mut ToGlobal(self))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::codec::ClusterRecord;
    use crate::storage::merge::PostingDelta;
    use roaring::RoaringTreemap;

    #[test]
    fn the_seed_is_numbered_densely_in_order_and_maps_back() {
        // Global ids past the u32 space: the scratch index numbers them 0, 1, ...
        let far = 1u64 << 40;
        let members: RoaringTreemap = [far + 40, far + 900].into_iter().collect();
        let seed: Vec<LogOp<u64>> = vec![
            LogOp::Counter(LogCounter::NextDoc(far + 1_000)),
            LogOp::Counter(LogCounter::NextCluster(far + 70)),
            LogOp::FreeDoc {
                id: far + 7,
                free: true,
            },
            LogOp::Cluster {
                id: far + 66,
                record: Some(ClusterRecord {
                    representative: far + 900,
                    members: members.clone(),
                }),
            },
            LogOp::Posting {
                key: [1; 9],
                delta: PostingDelta {
                    add: members,
                    remove: RoaringTreemap::new(),
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
        assert_eq!(ids.global_page(3).unwrap(), far + 1_000);
        assert_eq!(ids.global_page(5).unwrap(), far + 1_002);
        assert_eq!(ids.global_cluster(1).unwrap(), far + 70);
        assert_eq!(ids.global_page(NO_DOC).unwrap(), NO_WIDE_DOC);
    }

    #[test]
    fn a_seed_without_allocators_or_past_them_is_refused() {
        let page = LogOp::<u64>::FreeDoc { id: 5, free: true };
        assert!(ScratchIds::from_seed(vec![page.clone()]).is_err());
        let seed = vec![
            LogOp::Counter(LogCounter::NextDoc(5)),
            LogOp::Counter(LogCounter::NextCluster(1)),
            page,
        ];
        assert!(ScratchIds::from_seed(seed).is_err());
    }

    #[test]
    fn a_seed_file_with_postings_out_of_key_order_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let posting = |k: u8| LogOp::<u64>::Posting {
            key: [k; 9],
            delta: PostingDelta {
                add: [1u64].into_iter().collect(),
                remove: RoaringTreemap::new(),
            },
        };
        let head = [
            LogOp::Counter(LogCounter::NextDoc(5)),
            LogOp::Counter(LogCounter::NextCluster(1)),
            LogOp::Counter(LogCounter::NextSeq(5)),
        ];
        let write = |name: &str, ops: &[LogOp<u64>]| {
            let f = dir.path().join(name);
            std::fs::write(&f, crate::merge::encode_log(ops)).unwrap();
            f
        };
        let sorted = write("sorted", &[&head[..], &[posting(1), posting(2)]].concat());
        let out = dir.path().join("out");
        assert!(ScratchIds::from_seed_files(&[sorted.clone(), sorted], &out).is_ok());
        let unsorted = write("unsorted", &[&head[..], &[posting(2), posting(1)]].concat());
        assert!(matches!(
            ScratchIds::from_seed_files(&[unsorted], &out),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn new_ids_past_the_id_space_are_full() {
        let seed = vec![
            LogOp::<u64>::Counter(LogCounter::NextDoc(u64::MAX - 1)),
            LogOp::Counter(LogCounter::NextCluster(0)),
        ];
        let (ids, _) = ScratchIds::from_seed(seed).unwrap();
        assert_eq!(ids.global_page(0).unwrap(), u64::MAX - 1);
        assert!(matches!(ids.global_page(1), Err(Error::Full)));
        assert!(matches!(ids.global_page(2), Err(Error::Full)));
    }

    #[test]
    fn ops_change_width_and_refuse_an_id_that_does_not_fit() {
        let op = LogOp::<u32>::Cluster {
            id: 3,
            record: Some(ClusterRecord {
                representative: 9,
                members: [9u32, 12].into_iter().collect(),
            }),
        };
        let wide = op.clone().to_width::<u64>().unwrap();
        assert_eq!(wide.clone().to_width::<u32>().unwrap(), op);
        let far = LogOp::<u64>::FreeDoc {
            id: 1 << 33,
            free: true,
        };
        assert_eq!(far.to_width::<u32>(), Err(1 << 33));
        let none = LogOp::<u32>::Key {
            key: "k".into(),
            doc: Some(NO_DOC),
        };
        // "No page" is not a page a key can name.
        assert_eq!(none.to_width::<u64>(), Err(u64::from(NO_DOC)));
    }
}
