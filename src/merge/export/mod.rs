//! The distributed export (SCALEOUT §9 "Export"): each doc partition writes its part of the
//! export, sorted by id, and the parts are merged by id into the single node's output
//! ([`Index::export`], [`Index::export_clusters`]) without gathering the index in one place.
//!
//! A page's export row names the page it was judged a near duplicate of (while a page of that
//! id and insertion number is held), else its cluster's representative; both may be held by
//! other doc partitions, and a cluster's record (with its representative's id) by a third. The
//! references are resolved between partitions in messages, each a byte string from one doc
//! partition to one other (or itself):
//!
//! 1. **asks** ([`Index::export_asks`]): every doc partition names, per peer, the pages it needs
//!    the keys of (`(id, insertion number)`, or [`ANY_SEQ`] for a cluster's representative or
//!    member) and, for the page export, the clusters it needs the representative's key of;
//! 2. **replies** ([`Index::export_replies`]): every partition answers the pages asked of it;
//! 3. **cluster replies** ([`Index::export_cluster_replies`], the page export only): every
//!    partition answers the clusters asked of it, with its representatives' keys from the
//!    replies to its own asks;
//! 4. **part** ([`Index::export_part`]): every partition writes its rows, in id order, from the
//!    replies to its asks;
//! 5. **merge** ([`merge_export_parts`]): the parts, read block by block, merged by id.
//!
//! A partition holds in memory the keys its asks name (its share of the index); the merge
//! holds one row per part.
//!
//! The messages and parts carry page and cluster ids as `u64`s, whatever width the partitions
//! store (format 6 partitions, [`Index`], `u32` ids; format 7 ones, [`WidePartition`], `u64`
//! ids; issue #34 item 5): partitions of either width give the same bytes for the same state,
//! and their parts merge into the same output. All integers are big-endian; a count or a
//! length is a `u32`, a string is its length then its UTF-8 bytes:
//!
//! - an ask: the tag `A`, the page count, each page as `id: u64, insertion number: u64`
//!   (increasing), the cluster count, each cluster as `id: u64` (increasing);
//! - a reply: the tag `R`, the page count, each page asked as `id: u64, insertion number: u64`
//!   then `0` (no such page held) or `1` and its key;
//! - a cluster reply: the tag `C`, the cluster count, each cluster asked as `id: u64` then `0`
//!   (not held) or `1` and its representative's key;
//! - a part: a header (`NDPART`, the version byte 2, the [`ExportKind`]'s byte), records
//!   `(id: u64, length: u32, payload)` in increasing id order, and a trailer (an id of 0, the
//!   length `u32::MAX`, then the record count as a `u64`) that tells a whole part from a cut
//!   one. (Version 1, before `u64` ids, had `u32` ids, and its messages the tags `a`, `r`, `c`:
//!   both are refused.)
//!
//! Each step reads its own snapshot: a partition that changed between the steps (a merge run
//! meanwhile) is found when a reference was not asked or answered, and refused.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;

use super::layout::{Layout, Role};
use super::store::{cluster_at, doc_at, scan_records, DbSnapshot, PartitionDb};
use super::wide::WidePartition;
use crate::index::Index;
use crate::storage::cf;
use crate::storage::codec::{ClusterRecord, DocRecord};
use crate::storage::width::{IdSet, IdWidth};
use crate::{Error, Result};

mod part;
#[cfg(test)]
pub(super) mod tests;

pub use part::{
    decode_cluster_row, decode_page_record, decode_page_row, merge_export_parts, merge_export_tsv,
    ExportKind,
};
use part::{Bytes, PartWriter};

/// The insertion number of an ask for a page whatever its insertion number (a cluster's
/// representative or member).
pub const ANY_SEQ: u64 = u64::MAX;

/// The tag byte of an ask (of `u64` ids).
const ASK: u8 = b'A';
/// The tag byte of a reply (of `u64` ids).
const REPLY: u8 = b'R';
/// The tag byte of a cluster reply (of `u64` ids).
const CLUSTER_REPLY: u8 = b'C';

/// What one doc partition asks of one other: pages by (id, insertion number or [`ANY_SEQ`]),
/// and clusters (their representative's key).
#[derive(Debug, Default, PartialEq, Eq)]
struct Ask {
    pages: BTreeSet<(u64, u64)>,
    clusters: BTreeSet<u64>,
}

impl Ask {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + 16 * self.pages.len() + 8 * self.clusters.len());
        out.push(ASK);
        put_len(&mut out, self.pages.len());
        for &(id, seq) in &self.pages {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&seq.to_be_bytes());
        }
        put_len(&mut out, self.clusters.len());
        for c in &self.clusters {
            out.extend_from_slice(&c.to_be_bytes());
        }
        out
    }

    fn decode(bytes: &[u8]) -> Result<Ask> {
        let mut r = Bytes::new(bytes, "an export ask", ASK)?;
        let mut ask = Ask::default();
        for _ in 0..r.u32()? {
            ask.pages.insert((r.u64()?, r.u64()?));
        }
        for _ in 0..r.u32()? {
            ask.clusters.insert(r.u64()?);
        }
        r.end()?;
        Ok(ask)
    }
}

/// A count or length as a `u32`, big-endian (the ids and keys an index holds fit).
fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes());
}

/// A string prefixed by its length.
fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// The error of a reference the steps did not carry: the partition changed between them.
fn changed(what: String) -> Error {
    Error::InvalidArgument(format!(
        "the doc partitions changed during the export ({what}): export again once no merge runs"
    ))
}

/// The replies to one partition's asks, by (page id, insertion number asked): the page's key,
/// `None` when no such page is held.
type Replies = HashMap<(u64, u64), Option<String>>;

fn decode_replies(replies: &[&[u8]]) -> Result<Replies> {
    let mut out = Replies::new();
    for bytes in replies {
        let mut r = Bytes::new(bytes, "an export reply", REPLY)?;
        for _ in 0..r.u32()? {
            let (id, seq) = (r.u64()?, r.u64()?);
            let key = match r.u8()? {
                0 => None,
                _ => Some(r.string()?),
            };
            out.insert((id, seq), key);
        }
        r.end()?;
    }
    Ok(out)
}

/// The key a reply gives a page asked with [`ANY_SEQ`] (a cluster's representative or member):
/// its absence is corruption, a page not asked a change.
fn member_key<I: IdWidth>(replies: &Replies, id: I, cid: I) -> Result<&str> {
    match replies.get(&(id.to_u64(), ANY_SEQ)) {
        Some(Some(key)) => Ok(key),
        Some(None) => Err(Error::corruption(
            cf::DOCS,
            id.to_be().as_ref(),
            format!("a page of cluster {cid} is missing"),
        )),
        None => Err(changed(format!("page {id} of cluster {cid} was not asked"))),
    }
}

/// The doc partition number of `p` (by its recorded partition; `layout` must agree).
fn export_role<P: PartitionDb>(p: &P, layout: &Layout) -> Result<u32> {
    p.check_process()?;
    match p.role()? {
        Some(Role::Doc(me)) if me < layout.doc_parts() => Ok(me),
        Some(Role::Doc(me)) => Err(Error::InvalidArgument(format!(
            "doc partition {me} is not in a layout of {} doc partitions",
            layout.doc_parts()
        ))),
        _ => Err(Error::InvalidArgument(
            "only a doc partition exports its part".into(),
        )),
    }
}

/// Calls `f(id, record)` for every page record of `snap`, in id order.
fn scan_docs<P: PartitionDb>(
    p: &P,
    snap: &DbSnapshot<'_>,
    f: impl FnMut(P::Id, DocRecord<P::Id>) -> Result<()>,
) -> Result<()> {
    let what = (cf::DOCS, "reading pages for the export");
    scan_records(p, snap, what, DocRecord::<P::Id>::decode_as, f)
}

/// Calls `f(id, record)` for every cluster record of `snap`, in id order.
fn scan_clusters<P: PartitionDb>(
    p: &P,
    snap: &DbSnapshot<'_>,
    f: impl FnMut(P::Id, ClusterRecord<P::Id>) -> Result<()>,
) -> Result<()> {
    let what = (cf::CLUSTERS, "reading clusters for the export");
    scan_records(p, snap, what, ClusterRecord::<P::Id>::decode_as, f)
}

/// Step 1 ([`Index::export_asks`]).
fn asks<P: PartitionDb>(p: &P, layout: &Layout, kind: ExportKind) -> Result<Vec<Vec<u8>>> {
    export_role(p, layout)?;
    let mut asks: Vec<Ask> = (0..layout.doc_parts()).map(|_| Ask::default()).collect();
    let snap = p.db().snapshot();
    if kind == ExportKind::Pages {
        scan_docs(p, &snap, |_, rec| {
            if rec.similar_to != P::Id::NONE {
                asks[layout.doc_part(rec.similar_to) as usize]
                    .pages
                    .insert((rec.similar_to.to_u64(), rec.similar_seq));
            }
            asks[layout.cluster_part(rec.cluster) as usize]
                .clusters
                .insert(rec.cluster.to_u64());
            Ok(())
        })?;
    }
    if kind != ExportKind::Rows {
        scan_clusters(p, &snap, |_, cl| {
            if kind == ExportKind::Pages {
                asks[layout.doc_part(cl.representative) as usize]
                    .pages
                    .insert((cl.representative.to_u64(), ANY_SEQ));
            } else {
                for m in cl.members.ids() {
                    asks[layout.doc_part(m) as usize]
                        .pages
                        .insert((m.to_u64(), ANY_SEQ));
                }
            }
            Ok(())
        })?;
    }
    Ok(asks.iter().map(Ask::encode).collect())
}

/// Step 2 ([`Index::export_replies`]).
fn replies<P: PartitionDb>(p: &P, layout: &Layout, asks: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
    let me = export_role(p, layout)?;
    let snap = p.db().snapshot();
    asks.iter()
        .map(|bytes| {
            let ask = Ask::decode(bytes)?;
            let mut out = vec![REPLY];
            put_len(&mut out, ask.pages.len());
            for &(id, seq) in &ask.pages {
                if layout.doc_part(id) != me {
                    return Err(Error::InvalidArgument(format!(
                        "doc partition {me} was asked for page {id}, of doc partition {}",
                        layout.doc_part(id)
                    )));
                }
                out.extend_from_slice(&id.to_be_bytes());
                out.extend_from_slice(&seq.to_be_bytes());
                // An id this partition's width cannot hold names no page held here.
                let rec = match P::Id::from_u64(id) {
                    Some(id) => doc_at(p, &snap, id)?,
                    None => None,
                };
                match rec.filter(|r| seq == ANY_SEQ || r.seq == seq) {
                    Some(rec) => {
                        out.push(1);
                        put_str(&mut out, &rec.key);
                    }
                    None => out.push(0),
                }
            }
            Ok(out)
        })
        .collect()
}

/// Step 3 ([`Index::export_cluster_replies`]).
fn cluster_replies<P: PartitionDb>(
    p: &P,
    layout: &Layout,
    asks: &[&[u8]],
    replies: &[&[u8]],
) -> Result<Vec<Vec<u8>>> {
    let me = export_role(p, layout)?;
    let keys = decode_replies(replies)?;
    let snap = p.db().snapshot();
    asks.iter()
        .map(|bytes| {
            let ask = Ask::decode(bytes)?;
            let mut out = vec![CLUSTER_REPLY];
            put_len(&mut out, ask.clusters.len());
            for &cid in &ask.clusters {
                if layout.cluster_part(cid) != me {
                    return Err(Error::InvalidArgument(format!(
                        "doc partition {me} was asked for cluster {cid}, of doc partition {}",
                        layout.cluster_part(cid)
                    )));
                }
                out.extend_from_slice(&cid.to_be_bytes());
                let held = match P::Id::from_u64(cid) {
                    Some(c) => cluster_at(p, &snap, c)?.map(|cl| (c, cl)),
                    None => None,
                };
                match held {
                    Some((c, cl)) => {
                        out.push(1);
                        put_str(&mut out, member_key(&keys, cl.representative, c)?);
                    }
                    None => out.push(0),
                }
            }
            Ok(out)
        })
        .collect()
}

/// The representatives' keys of the cluster replies to a partition's asks, by cluster.
fn decode_cluster_replies(cluster_replies: &[&[u8]]) -> Result<HashMap<u64, Option<String>>> {
    let mut reps = HashMap::new();
    for bytes in cluster_replies {
        let mut r = Bytes::new(bytes, "an export cluster reply", CLUSTER_REPLY)?;
        for _ in 0..r.u32()? {
            let cid = r.u64()?;
            let key = match r.u8()? {
                0 => None,
                _ => Some(r.string()?),
            };
            reps.insert(cid, key);
        }
        r.end()?;
    }
    Ok(reps)
}

/// Step 4 ([`Index::export_part`]).
fn part<P: PartitionDb>(
    p: &P,
    layout: &Layout,
    kind: ExportKind,
    (replies, cluster_replies): (&[&[u8]], &[&[u8]]),
    out: impl Write,
    path: PathBuf,
) -> Result<u64> {
    export_role(p, layout)?;
    let keys = decode_replies(replies)?;
    let snap = p.db().snapshot();
    let mut part = PartWriter::new(out, kind, path)?;
    let mut payload = Vec::new();
    match kind {
        ExportKind::Pages => {
            let reps = decode_cluster_replies(cluster_replies)?;
            scan_docs(p, &snap, |id, rec| {
                let near = if rec.similar_to == P::Id::NONE {
                    None
                } else {
                    match keys.get(&(rec.similar_to.to_u64(), rec.similar_seq)) {
                        Some(key) => key.as_deref(),
                        None => {
                            return Err(changed(format!(
                                "page {id}'s near duplicate {} was not asked",
                                rec.similar_to
                            )))
                        }
                    }
                };
                let target = match near {
                    Some(key) => key,
                    None => match reps.get(&rec.cluster.to_u64()) {
                        Some(Some(key)) => key.as_str(),
                        Some(None) => {
                            return Err(Error::corruption(
                                cf::CLUSTERS,
                                rec.cluster.to_be().as_ref(),
                                format!("the cluster of page {id} is missing"),
                            ))
                        }
                        None => {
                            return Err(changed(format!(
                                "cluster {} of page {id} was not asked",
                                rec.cluster
                            )))
                        }
                    },
                };
                payload.clear();
                put_str(&mut payload, &rec.key);
                payload.extend_from_slice(target.as_bytes());
                part.record(id.to_u64(), &payload)
            })?;
        }
        ExportKind::Clusters => {
            scan_clusters(p, &snap, |cid, cl| {
                payload.clear();
                put_str(&mut payload, member_key(&keys, cl.representative, cid)?);
                put_len(&mut payload, cl.members.len() as usize);
                for m in cl.members.ids() {
                    put_str(&mut payload, member_key(&keys, m, cid)?);
                }
                part.record(cid.to_u64(), &payload)
            })?;
        }
        ExportKind::Rows => {
            scan_docs(p, &snap, |id, rec| {
                payload.clear();
                payload.extend_from_slice(&rec.cluster.to_u64().to_be_bytes());
                payload.extend_from_slice(&rec.seq.to_be_bytes());
                payload.extend_from_slice(rec.key.as_bytes());
                part.record(id.to_u64(), &payload)
            })?;
        }
    }
    part.finish()
}

/// Partitions as databases: a doc partition's share of the distributed export.
impl Index {
    /// Step 1 of the distributed export (module docs): what this doc partition asks of each
    /// doc partition (itself included), one message per doc partition of `layout`, in order.
    /// [`ExportKind::Pages`] asks for the pages its pages were judged near duplicates of, its
    /// clusters' representatives and its pages' clusters; [`ExportKind::Clusters`] for its
    /// clusters' members; [`ExportKind::Rows`] for nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a database that is not a doc partition of `layout`;
    /// storage and corruption errors.
    pub fn export_asks(&self, layout: &Layout, kind: ExportKind) -> Result<Vec<Vec<u8>>> {
        asks(self, layout, kind)
    }

    /// Step 2 of the distributed export: the replies to the page part of `asks` (what each doc
    /// partition, in order, asked of this one): each page's key, or that no page of that id (and
    /// insertion number, unless [`ANY_SEQ`]) is held. One reply per ask, in order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a database that is not a doc partition of `layout`, an
    /// ask that does not decode or names a page of another partition; storage and corruption
    /// errors.
    pub fn export_replies(&self, layout: &Layout, asks: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        replies(self, layout, asks)
    }

    /// Step 3 of the page export: the replies to the cluster part of `asks` (what each doc
    /// partition asked of this one): each cluster's representative's key, or that the
    /// cluster is not held. `replies`: the replies ([`Index::export_replies`]) to this
    /// partition's own asks, which hold its clusters' representatives' keys. One reply per
    /// ask, in order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a database that is not a doc partition of `layout`, a
    /// message that does not decode, or a partition changed since its asks; corruption errors
    /// (a representative not held).
    pub fn export_cluster_replies(
        &self,
        layout: &Layout,
        asks: &[&[u8]],
        replies: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>> {
        cluster_replies(self, layout, asks, replies)
    }

    /// Step 4 of the distributed export: this doc partition's part, written to `out` (named
    /// `path` in errors): for [`ExportKind::Pages`] each page held, in id order, with its
    /// target's key from `replies` (to this partition's asks) or, when that page is not held,
    /// its cluster's representative's key from `cluster_replies`; for
    /// [`ExportKind::Clusters`] each cluster held, in id order, with its representative's
    /// and members' keys from `replies` (`cluster_replies` unused); for [`ExportKind::Rows`]
    /// each page's key, cluster and insertion number (no message used). Returns the records
    /// written.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a database that is not a doc partition of `layout`, a
    /// message that does not decode, or a partition changed since the asks; [`Error::Io`]
    /// when `out` fails; storage and corruption errors (a cluster or a member not held).
    pub fn export_part(
        &self,
        layout: &Layout,
        kind: ExportKind,
        replies: &[&[u8]],
        cluster_replies: &[&[u8]],
        out: impl Write,
        path: PathBuf,
    ) -> Result<u64> {
        part(self, layout, kind, (replies, cluster_replies), out, path)
    }
}

/// A format 7 partition's share of the distributed export (issue #34 item 5): the same steps,
/// messages and parts as a format 6 partition's ([`Index::export_asks`] and the rest), so that
/// partitions of either width exchange messages and their parts merge alike.
impl WidePartition {
    /// Step 1 of the distributed export, as [`Index::export_asks`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a partition that is not a doc partition of `layout`;
    /// storage and corruption errors.
    pub fn export_asks(&self, layout: &Layout, kind: ExportKind) -> Result<Vec<Vec<u8>>> {
        asks(self, layout, kind)
    }

    /// Step 2 of the distributed export, as [`Index::export_replies`].
    ///
    /// # Errors
    /// As [`Index::export_replies`].
    pub fn export_replies(&self, layout: &Layout, asks: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        replies(self, layout, asks)
    }

    /// Step 3 of the page export, as [`Index::export_cluster_replies`].
    ///
    /// # Errors
    /// As [`Index::export_cluster_replies`].
    pub fn export_cluster_replies(
        &self,
        layout: &Layout,
        asks: &[&[u8]],
        replies: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>> {
        cluster_replies(self, layout, asks, replies)
    }

    /// Step 4 of the distributed export: this doc partition's part, as [`Index::export_part`]
    /// writes it (ids as `u64`s in both widths).
    ///
    /// # Errors
    /// As [`Index::export_part`].
    pub fn export_part(
        &self,
        layout: &Layout,
        kind: ExportKind,
        replies: &[&[u8]],
        cluster_replies: &[&[u8]],
        out: impl Write,
        path: PathBuf,
    ) -> Result<u64> {
        part(self, layout, kind, (replies, cluster_replies), out, path)
    }
}
