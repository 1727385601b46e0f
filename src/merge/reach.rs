//! The bulk reads a distributed merge asks of its partitions (SCALEOUT §5 S0–S2): which pages
//! the day's probes reach through the postings and simhash tables, the pages and clusters a
//! doc partition holds, and what it files each page under.

use roaring::RoaringBitmap;

use super::store::{scan_records, PartitionDb};
use crate::index::{Index, View};
use crate::storage::cf;
use crate::storage::codec::{ClusterId, DocId};
use crate::storage::codec::{ClusterRecord, DocRecord};
use crate::storage::width::{IdSet, IdWidth};
use crate::{Error, Result};

/// A page's simhash and the posting keys it is filed under ([`crate::Index::filed_pages`]).
pub type FiledPage = (u64, Vec<[u8; 9]>);

/// The pages and clusters (id and representative's page id) a doc partition holds
/// ([`crate::Index::partition_rows`], [`super::WidePartition::partition_rows`] with `u64` ids).
pub type PartitionRows<I = DocId> = (Vec<PageRow<I>>, Vec<(I, I)>);

/// A key partition's share of S3 ([`crate::Index::probe_forest`]): the partial forest of the
/// day's probes joined through the keys and simhash entries it holds, and what it read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeForest {
    /// `(nodes[i], roots[i])`: every node not alone, with its component's root
    /// ([`super::Components::forest`]); merged by [`super::Components::merge_forest`].
    pub nodes: Vec<u64>,
    /// The root of each of `nodes`.
    pub roots: Vec<u64>,
    /// The distinct posting keys looked up.
    pub keys: u64,
    /// The distinct simhashes looked up.
    pub simhashes: u64,
    /// The standing pages found, with repeats (a page on two keys counts twice).
    pub standing: u64,
}

/// Bits of a probe forest's node below its kind (`neardup.ray`'s S3 nodes carry their kind in
/// the top byte): a standing page's id must be below 2⁵⁶.
pub const NODE_ID_BITS: u32 = 56;

/// Distinct keys (and simhashes) whose postings [`crate::Index::probe_forest`] reads at once.
pub const PROBE_CHUNK: usize = 1 << 16;

/// A key partition's probes, added block by block ([`ProbeJoin::add_keys`],
/// [`ProbeJoin::add_simhashes`]) and joined through its postings by
/// [`crate::Index::probe_forest`]: its memory is the distinct keys and simhashes and the
/// union-find of their owners, never the probes themselves.
#[derive(Debug, Default)]
pub struct ProbeJoin {
    /// Each distinct key and its first owner (every later owner joined to it in `c`).
    keys: rustc_hash::FxHashMap<[u8; 9], u64>,
    /// Each distinct simhash and its first owner.
    simhashes: rustc_hash::FxHashMap<u64, u64>,
    /// The later owners of the simhashes with more than one (joined only through standing
    /// pages).
    sim_owners: rustc_hash::FxHashMap<u64, Vec<u64>>,
    c: super::Components,
}

impl ProbeJoin {
    /// An empty join.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds posting keys, `owners[i]` filed under `keys[i]` (an S3 node: a row of the day, a
    /// standing page), joining each owner with the first owner of its key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the lengths differ.
    pub fn add_keys(&mut self, keys: &[[u8; 9]], owners: &[u64]) -> Result<()> {
        if keys.len() != owners.len() {
            return Err(Error::InvalidArgument(
                "probe keys: each key needs one owner".into(),
            ));
        }
        for (k, &o) in keys.iter().zip(owners) {
            let first = *self.keys.entry(*k).or_insert(o);
            self.c.add_edges(&[first], &[o]);
        }
        Ok(())
    }

    /// Adds simhashes, `owners[i]` with simhash `simhashes[i]`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the lengths differ.
    pub fn add_simhashes(&mut self, simhashes: &[u64], owners: &[u64]) -> Result<()> {
        if simhashes.len() != owners.len() {
            return Err(Error::InvalidArgument(
                "probe simhashes: each simhash needs one owner".into(),
            ));
        }
        for (&h, &o) in simhashes.iter().zip(owners) {
            let first = *self.simhashes.entry(h).or_insert(o);
            if first != o {
                self.sim_owners.entry(h).or_default().push(o);
            }
        }
        Ok(())
    }
}

/// A page a doc partition holds, as [`crate::Index::partition_rows`] lists it (ids of width
/// `I`: `u32`, or `u64` in a [`super::WidePartition`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRow<I: IdWidth = DocId> {
    /// The page id.
    pub doc: I,
    /// Its external key.
    pub key: String,
    /// Its cluster.
    pub cluster: I,
    /// Its insertion number.
    pub seq: u64,
    /// The page it was judged a near duplicate of when placed, with that page's insertion
    /// number (the export names it while a page of that id and number is held), `None` for
    /// none.
    pub similar_to: Option<(I, u64)>,
}

/// Standing page `d` as an S3 node, `doc_tag | d`.
///
/// # Errors
/// [`Error::InvalidArgument`] for a page id of 2⁵⁶ or more: the top byte of a node is its kind
/// ([`NODE_ID_BITS`]).
pub(crate) fn standing_node<I: IdWidth>(doc_tag: u64, d: I) -> Result<u64> {
    let d = d.to_u64();
    if d >> NODE_ID_BITS != 0 {
        return Err(Error::InvalidArgument(format!(
            "page id {d} does not fit the {NODE_ID_BITS} bits of an S3 node"
        )));
    }
    Ok(doc_tag | d)
}

/// The body of a key partition's share of S3 for either id width ([`crate::Index::probe_forest`],
/// [`super::WidePartition::probe_forest`]): `join`'s probes joined with the standing pages
/// `postings` and `simhashes` give for a chunk of keys or simhashes, standing page `d` as node
/// `doc_tag | d`.
///
/// # Errors
/// What the look-ups return; [`Error::InvalidArgument`] for a standing page id of 2⁵⁶ or more:
/// the top byte of a node is its kind ([`NODE_ID_BITS`]).
pub(crate) fn join_probes<I: IdWidth>(
    mut join: ProbeJoin,
    doc_tag: u64,
    postings: impl Fn(&[[u8; 9]]) -> Result<Vec<I::Set>>,
    simhashes: impl Fn(&[u64]) -> Result<Vec<I::Set>>,
) -> Result<ProbeForest> {
    let node = |d: I| standing_node(doc_tag, d);
    let mut out = ProbeForest::default();
    let mut keys: Vec<([u8; 9], u64)> = std::mem::take(&mut join.keys).into_iter().collect();
    keys.sort_unstable();
    out.keys = keys.len() as u64;
    for chunk in keys.chunks(PROBE_CHUNK) {
        let ks: Vec<[u8; 9]> = chunk.iter().map(|(k, _)| *k).collect();
        for ((_, first), standing) in chunk.iter().zip(postings(&ks)?) {
            out.standing += standing.len();
            for d in standing.ids() {
                join.c.add_edges(&[*first], &[node(d)?]);
            }
        }
    }
    let mut sims: Vec<(u64, u64)> = std::mem::take(&mut join.simhashes).into_iter().collect();
    sims.sort_unstable();
    out.simhashes = sims.len() as u64;
    for chunk in sims.chunks(PROBE_CHUNK) {
        let hs: Vec<u64> = chunk.iter().map(|(h, _)| *h).collect();
        for ((h, first), standing) in chunk.iter().zip(simhashes(&hs)?) {
            if standing.is_empty() {
                continue;
            }
            out.standing += standing.len();
            for &o in join.sim_owners.get(h).into_iter().flatten() {
                join.c.add_edges(&[*first], &[o]);
            }
            for d in standing.ids() {
                join.c.add_edges(&[*first], &[node(d)?]);
            }
        }
    }
    (out.nodes, out.roots) = join.c.forest();
    Ok(out)
}

/// Partitions as databases: the bulk reads of a distributed merge.
impl Index {
    /// The pages filed under each of `keys`, none for an over-frequent key (no decision reads
    /// it): what a key partition answers for the day's probes (SCALEOUT §5 S2).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn posting_ids(&self, keys: &[[u8; 9]]) -> Result<Vec<RoaringBitmap>> {
        self.registration.check_process()?;
        let frequent: Vec<bool> = {
            let f = self.frequent.read();
            keys.iter().map(|k| f.contains(k)).collect()
        };
        let read: Vec<[u8; 9]> = keys
            .iter()
            .zip(&frequent)
            .filter(|(_, &f)| !f)
            .map(|(k, _)| *k)
            .collect();
        let mut postings = self.postings_at(&read, None)?.into_iter();
        Ok(frequent
            .into_iter()
            .map(|f| {
                if f {
                    RoaringBitmap::new()
                } else {
                    postings.next().unwrap_or_default()
                }
            })
            .collect())
    }

    /// A key partition's share of S3 (SCALEOUT §5 S2–S3; issue #34 item 4: the key joins and
    /// union-find on the key partitions, their partial forests merged by the coordinator): the
    /// probes of `join` (each owner joined already with the first owner of its key, and of its
    /// simhash) joined through this partition's postings and simhash tables. The first owner
    /// of a key is joined with the standing pages filed under it (none for an over-frequent key,
    /// which no decision reads), and of a simhash with the standing pages within the simhash
    /// distance, all the owners of a simhash with standing pages joined too (when it has none,
    /// S3 joins the day's equal simhashes itself); standing page `d` is node `doc_tag | d`. The
    /// postings are read [`PROBE_CHUNK`] keys at a time. Returns the partial forest: the same
    /// components as those edges, in far fewer pairs.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn probe_forest(&self, join: ProbeJoin, doc_tag: u64) -> Result<ProbeForest> {
        join_probes::<u32>(
            join,
            doc_tag,
            |ks| self.posting_ids(ks),
            |hs| self.simhash_ids(hs),
        )
    }

    /// The pages filed under any of `keys`, over-frequent keys left out
    /// ([`Self::posting_ids`] united).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn posting_reach(&self, keys: &[[u8; 9]]) -> Result<RoaringBitmap> {
        Ok(self
            .posting_ids(keys)?
            .into_iter()
            .fold(RoaringBitmap::new(), |a, b| a | b))
    }

    /// Of each simhash, the pages within the simhash distance of it among the simhash entries
    /// this database holds (SCALEOUT §5 S2 "Simhash").
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn simhash_ids(&self, simhashes: &[u64]) -> Result<Vec<RoaringBitmap>> {
        self.registration.check_process()?;
        simhashes
            .iter()
            .map(|&h| {
                Ok(self
                    .simhash_near(h)?
                    .into_iter()
                    .map(|(id, _)| id)
                    .collect())
            })
            .collect()
    }

    /// The pages within the simhash distance of any of `simhashes` ([`Self::simhash_ids`]
    /// united).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn simhash_reach(&self, simhashes: &[u64]) -> Result<RoaringBitmap> {
        Ok(self
            .simhash_ids(simhashes)?
            .into_iter()
            .fold(RoaringBitmap::new(), |a, b| a | b))
    }

    /// The page id of each external key, `None` for a key this database does not hold.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn key_ids(&self, keys: &[&str]) -> Result<Vec<Option<DocId>>> {
        self.registration.check_process()?;
        keys.iter().map(|k| self.key_id(k)).collect()
    }

    /// The cluster of each page, `None` for a page this database does not hold.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn page_clusters(&self, ids: &[DocId]) -> Result<Vec<Option<ClusterId>>> {
        self.registration.check_process()?;
        self.clusters_at(ids, None)
    }

    /// The members of each cluster, `None` for a cluster this database does not hold.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn cluster_member_ids(&self, clusters: &[ClusterId]) -> Result<Vec<Option<RoaringBitmap>>> {
        self.registration.check_process()?;
        clusters
            .iter()
            .map(|&c| Ok(self.cluster(c)?.map(|r| r.members)))
            .collect()
    }

    /// Of each page, its simhash and every posting key it is filed under (content key first),
    /// `None` for a page this database does not hold: where a page placed again after a
    /// hand-over looks for candidates (SCALEOUT §5 S0).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn filed_pages(&self, ids: &[DocId]) -> Result<Vec<Option<FiledPage>>> {
        self.registration.check_process()?;
        ids.iter()
            .map(|&id| {
                let Some(rec) = self.doc(id)? else {
                    return Ok(None);
                };
                let keys = self.filed_keys(id, rec.content_hash)?.unwrap_or_default();
                Ok(Some((rec.simhash, keys)))
            })
            .collect()
    }

    /// The pages (by id) and clusters (id and representative's page id) this database holds,
    /// at one snapshot: what a distributed export joins across doc partitions (a cluster's
    /// representative may be held by another partition).
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn partition_rows(&self) -> Result<PartitionRows> {
        scan_partition_rows(self)
    }
}

/// The pages and clusters partition `p` holds, at one snapshot ([`crate::Index::partition_rows`],
/// [`super::WidePartition::partition_rows`]).
///
/// # Errors
/// Storage errors; [`Error::Corruption`] for a key or record that does not decode.
pub(crate) fn scan_partition_rows<P: PartitionDb>(p: &P) -> Result<PartitionRows<P::Id>> {
    p.check_process()?;
    let snap = p.db().snapshot();
    let mut pages = Vec::new();
    let docs = (cf::DOCS, "reading page records");
    scan_records(p, &snap, docs, DocRecord::decode_as, |doc, rec| {
        pages.push(PageRow {
            doc,
            seq: rec.seq,
            similar_to: (rec.similar_to != P::Id::NONE)
                .then_some((rec.similar_to, rec.similar_seq)),
            key: rec.key,
            cluster: rec.cluster,
        });
        Ok(())
    })?;
    let mut clusters = Vec::new();
    let cls = (cf::CLUSTERS, "reading clusters");
    scan_records(p, &snap, cls, ClusterRecord::decode_as, |c, rec| {
        clusters.push((c, rec.representative));
        Ok(())
    })?;
    Ok((pages, clusters))
}
