//! Page and cluster ids passed through a mapping, one operation of a batch log at a time
//! (SCALEOUT §4, §5 S4–S5): a work unit's scratch renumbering and its way back
//! ([`super::ScratchIds`]), the batch's numbering of a unit's new ids (`combine`), and a log's
//! change of id width ([`LogOp::to_width`]).

use super::log::{LogCounter, LogOp};
use crate::storage::codec::{ClusterRecord, DocRecord};
use crate::storage::merge::PostingDelta;
use crate::storage::width::{IdSet, IdWidth};
use crate::{Error, Result};

/// The page, cluster and insertion numbers of one operation, each passed through a mapping from
/// ids of width `J` to ids of width `I` ([`map_ids`]).
pub(super) trait IdMapping<J: IdWidth, I: IdWidth> {
    /// A page id (never `J::NONE`).
    fn doc(&mut self, id: J) -> Result<I>;
    /// A cluster id.
    fn cluster(&mut self, id: J) -> Result<I>;
    /// An insertion number (unchanged unless overridden).
    fn seq(&mut self, seq: u64) -> Result<u64> {
        Ok(seq)
    }
    /// A set of page ids (each through [`IdMapping::doc`] unless overridden).
    fn docs(&mut self, ids: J::Set) -> Result<I::Set> {
        let mapped = ids
            .ids()
            .map(|id| self.doc(id))
            .collect::<Result<Vec<I>>>()?;
        Ok(I::Set::from_sorted(mapped.into_iter()))
    }
    /// An allocator's value (a count of ids, not an id): unchanged unless overridden.
    ///
    /// # Errors
    /// [`Error::Full`] when it does not fit `I`.
    fn allocator(&mut self, n: J) -> Result<I> {
        I::from_u64(n.to_u64()).ok_or(Error::Full)
    }
}

/// Passes every page id, cluster id, insertion number and allocator `op` names through `m`.
pub(super) fn map_ids<J: IdWidth, I: IdWidth>(
    op: LogOp<J>,
    m: &mut impl IdMapping<J, I>,
) -> Result<LogOp<I>> {
    Ok(match op {
        LogOp::Posting { key, delta } => LogOp::Posting {
            key,
            delta: PostingDelta {
                add: m.docs(delta.add)?,
                remove: m.docs(delta.remove)?,
            },
        },
        LogOp::Simhash {
            table,
            simhash,
            doc,
            present,
        } => LogOp::Simhash {
            table,
            simhash,
            doc: m.doc(doc)?,
            present,
        },
        LogOp::Frequent { key, reason } => LogOp::Frequent { key, reason },
        LogOp::Key { key, doc } => LogOp::Key {
            key,
            doc: doc.map(|d| m.doc(d)).transpose()?,
        },
        LogOp::Doc { id, record } => LogOp::Doc {
            id: m.doc(id)?,
            record: match record {
                Some(r) => {
                    let (similar_to, similar_seq) = if r.similar_to == J::NONE {
                        (I::NONE, r.similar_seq)
                    } else {
                        (m.doc(r.similar_to)?, m.seq(r.similar_seq)?)
                    };
                    Some(DocRecord {
                        cluster: m.cluster(r.cluster)?,
                        seq: m.seq(r.seq)?,
                        similar_to,
                        similar_seq,
                        key: r.key,
                        host: r.host,
                        time: r.time,
                        text_chars: r.text_chars,
                        fingerprints: r.fingerprints,
                        simhash: r.simhash,
                        content_hash: r.content_hash,
                        codes: r.codes,
                        resemble: r.resemble,
                        contain: r.contain,
                        raw_hash: r.raw_hash,
                    })
                }
                None => None,
            },
        },
        LogOp::Text { id, value } => LogOp::Text {
            id: m.doc(id)?,
            value,
        },
        LogOp::PageBlocks { id, blocks } => LogOp::PageBlocks {
            id: m.doc(id)?,
            blocks,
        },
        LogOp::FreeDoc { id, free } => LogOp::FreeDoc {
            id: m.doc(id)?,
            free,
        },
        LogOp::Cluster { id, record } => LogOp::Cluster {
            id: m.cluster(id)?,
            record: match record {
                Some(r) => Some(ClusterRecord {
                    representative: m.doc(r.representative)?,
                    members: m.docs(r.members)?,
                }),
                None => None,
            },
        },
        LogOp::FreeCluster { id, free } => LogOp::FreeCluster {
            id: m.cluster(id)?,
            free,
        },
        LogOp::HostPages { host, pages } => LogOp::HostPages { host, pages },
        LogOp::BlockPages { host, block, pages } => LogOp::BlockPages { host, block, pages },
        LogOp::Counter(c) => LogOp::Counter(match c {
            LogCounter::NextDoc(n) => LogCounter::NextDoc(m.allocator(n)?),
            LogCounter::NextCluster(n) => LogCounter::NextCluster(m.allocator(n)?),
            LogCounter::LiveDocs(n) => LogCounter::LiveDocs(n),
            LogCounter::LiveClusters(n) => LogCounter::LiveClusters(n),
            LogCounter::NextSeq(n) => LogCounter::NextSeq(n),
        }),
    })
}

/// Ids of width `J` as the same ids of width `I` ([`LogOp::to_width`]): the first that does not
/// fit (or is "no page" where a page must be named) is kept, and reported.
pub(super) struct Cast {
    /// The first id that did not fit.
    pub(super) overflow: Option<u64>,
}

impl Cast {
    /// A page or cluster id: never "no page" (which [`map_ids`] keeps apart where a record may
    /// hold it), and never an id that is "no page" in width `I`.
    fn id<J: IdWidth, I: IdWidth>(&mut self, id: J) -> Result<I> {
        let fits = (id != J::NONE)
            .then(|| I::from_u64(id.to_u64()))
            .flatten()
            .filter(|&v| v != I::NONE);
        fits.ok_or_else(|| {
            self.overflow = Some(id.to_u64());
            Error::Full
        })
    }
}

impl<J: IdWidth, I: IdWidth> IdMapping<J, I> for Cast {
    fn doc(&mut self, id: J) -> Result<I> {
        self.id(id)
    }
    fn cluster(&mut self, id: J) -> Result<I> {
        self.id(id)
    }
    fn allocator(&mut self, n: J) -> Result<I> {
        I::from_u64(n.to_u64()).ok_or_else(|| {
            self.overflow = Some(n.to_u64());
            Error::Full
        })
    }
}

impl<J: IdWidth> LogOp<J> {
    /// The operation with its page and cluster ids in width `I` (SCALEOUT §4): a `u32` log
    /// widened for a distributed index's global ids, or a `u64` one narrowed for an index that
    /// stores `u32`s. "No page" stays "no page".
    ///
    /// # Errors
    /// The first id (or allocator) that does not fit width `I`.
    pub fn to_width<I: IdWidth>(self) -> std::result::Result<LogOp<I>, u64> {
        let mut cast = Cast { overflow: None };
        map_ids(self, &mut cast).map_err(|_| cast.overflow.unwrap_or(u64::MAX))
    }
}
