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
//! holds one row per part. A part is a byte stream: a header (`NDPART`, the version, the
//! [`ExportKind`]), records `(id: u32, length: u32, payload)` big-endian in increasing id
//! order, and a trailer (length `u32::MAX`, then the record count as a `u64`) that tells a
//! whole part from a cut one.
//!
//! Each step reads its own snapshot: a partition that changed between the steps (a merge run
//! meanwhile) is found when a reference was not asked or answered, and refused.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;

use rocksdb::IteratorMode;

use super::layout::{Layout, Role};
use crate::index::view::{Snapshot, View};
use crate::index::Index;
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord, NO_DOC};
use crate::storage::{self, cf, id_key};
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

/// The tag byte of an ask.
const ASK: u8 = b'a';
/// The tag byte of a reply.
const REPLY: u8 = b'r';
/// The tag byte of a cluster reply.
const CLUSTER_REPLY: u8 = b'c';

/// What one doc partition asks of one other: pages by (id, insertion number or [`ANY_SEQ`]),
/// and clusters (their representative's key).
#[derive(Debug, Default, PartialEq, Eq)]
struct Ask {
    pages: BTreeSet<(DocId, u64)>,
    clusters: BTreeSet<ClusterId>,
}

impl Ask {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + 12 * self.pages.len() + 4 * self.clusters.len());
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
            ask.pages.insert((r.u32()?, r.u64()?));
        }
        for _ in 0..r.u32()? {
            ask.clusters.insert(r.u32()?);
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
type Replies = HashMap<(DocId, u64), Option<String>>;

fn decode_replies(replies: &[&[u8]]) -> Result<Replies> {
    let mut out = Replies::new();
    for bytes in replies {
        let mut r = Bytes::new(bytes, "an export reply", REPLY)?;
        for _ in 0..r.u32()? {
            let (id, seq) = (r.u32()?, r.u64()?);
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
fn member_key(replies: &Replies, id: DocId, cid: ClusterId) -> Result<&str> {
    match replies.get(&(id, ANY_SEQ)) {
        Some(Some(key)) => Ok(key),
        Some(None) => Err(Error::corruption(
            cf::DOCS,
            &id_key(id),
            format!("a page of cluster {cid} is missing"),
        )),
        None => Err(changed(format!("page {id} of cluster {cid} was not asked"))),
    }
}

/// Partitions as databases: a doc partition's share of the distributed export.
impl Index {
    /// This database's doc partition number (by its recorded partition; `layout` must agree).
    fn export_role(&self, layout: &Layout) -> Result<u32> {
        self.registration.check_process()?;
        match self.partition()?.map(|p| p.role) {
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
        self.export_role(layout)?;
        let mut asks: Vec<Ask> = (0..layout.doc_parts()).map(|_| Ask::default()).collect();
        let view = Snapshot::of(self);
        if kind == ExportKind::Pages {
            self.export_scan_docs(&view, |_, rec| {
                if rec.similar_to != NO_DOC {
                    asks[layout.doc_part(rec.similar_to) as usize]
                        .pages
                        .insert((rec.similar_to, rec.similar_seq));
                }
                asks[layout.cluster_part(rec.cluster) as usize]
                    .clusters
                    .insert(rec.cluster);
                Ok(())
            })?;
        }
        if kind != ExportKind::Rows {
            self.export_scan_clusters(&view, |_, cl| {
                if kind == ExportKind::Pages {
                    asks[layout.doc_part(cl.representative) as usize]
                        .pages
                        .insert((cl.representative, ANY_SEQ));
                } else {
                    for m in &cl.members {
                        asks[layout.doc_part(m) as usize].pages.insert((m, ANY_SEQ));
                    }
                }
                Ok(())
            })?;
        }
        Ok(asks.iter().map(Ask::encode).collect())
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
        let me = self.export_role(layout)?;
        let view = Snapshot::of(self);
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
                    match view.doc(id)?.filter(|r| seq == ANY_SEQ || r.seq == seq) {
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
        let me = self.export_role(layout)?;
        let keys = decode_replies(replies)?;
        let view = Snapshot::of(self);
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
                    match view.cluster(cid)? {
                        Some(cl) => {
                            out.push(1);
                            put_str(&mut out, member_key(&keys, cl.representative, cid)?);
                        }
                        None => out.push(0),
                    }
                }
                Ok(out)
            })
            .collect()
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
        self.export_role(layout)?;
        let keys = decode_replies(replies)?;
        let view = Snapshot::of(self);
        let mut part = PartWriter::new(out, kind, path)?;
        let mut payload = Vec::new();
        match kind {
            ExportKind::Pages => {
                let mut reps: HashMap<ClusterId, Option<String>> = HashMap::new();
                for bytes in cluster_replies {
                    let mut r = Bytes::new(bytes, "an export cluster reply", CLUSTER_REPLY)?;
                    for _ in 0..r.u32()? {
                        let cid = r.u32()?;
                        let key = match r.u8()? {
                            0 => None,
                            _ => Some(r.string()?),
                        };
                        reps.insert(cid, key);
                    }
                    r.end()?;
                }
                self.export_scan_docs(&view, |id, rec| {
                    let near = if rec.similar_to == NO_DOC {
                        None
                    } else {
                        match keys.get(&(rec.similar_to, rec.similar_seq)) {
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
                        None => match reps.get(&rec.cluster) {
                            Some(Some(key)) => key.as_str(),
                            Some(None) => {
                                return Err(Error::corruption(
                                    cf::CLUSTERS,
                                    &id_key(rec.cluster),
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
                    part.record(id, &payload)
                })?;
            }
            ExportKind::Clusters => {
                self.export_scan_clusters(&view, |cid, cl| {
                    payload.clear();
                    put_str(&mut payload, member_key(&keys, cl.representative, cid)?);
                    put_len(&mut payload, cl.members.len() as usize);
                    for m in &cl.members {
                        put_str(&mut payload, member_key(&keys, m, cid)?);
                    }
                    part.record(cid, &payload)
                })?;
            }
            ExportKind::Rows => {
                self.export_scan_docs(&view, |id, rec| {
                    payload.clear();
                    payload.extend_from_slice(&rec.cluster.to_be_bytes());
                    payload.extend_from_slice(&rec.seq.to_be_bytes());
                    payload.extend_from_slice(rec.key.as_bytes());
                    part.record(id, &payload)
                })?;
            }
        }
        part.finish()
    }

    /// Calls `f(id, record)` for every page record of the snapshot, in id order.
    fn export_scan_docs(
        &self,
        view: &Snapshot<'_>,
        f: impl FnMut(DocId, DocRecord) -> Result<()>,
    ) -> Result<()> {
        self.export_scan(
            view,
            cf::DOCS,
            "reading pages for the export",
            DocRecord::decode,
            f,
        )
    }

    /// Calls `f(id, record)` for every cluster record of the snapshot, in id order.
    fn export_scan_clusters(
        &self,
        view: &Snapshot<'_>,
        f: impl FnMut(ClusterId, ClusterRecord) -> Result<()>,
    ) -> Result<()> {
        let what = "reading clusters for the export";
        self.export_scan(view, cf::CLUSTERS, what, ClusterRecord::decode, f)
    }

    /// Calls `f(id, record)` for every record of column family `name` (keyed by a `u32` id)
    /// of the snapshot, in id order, each decoded by `decode`.
    fn export_scan<T>(
        &self,
        view: &Snapshot<'_>,
        name: &'static str,
        what: &'static str,
        decode: impl Fn(&'static str, &[u8], &[u8]) -> Result<T>,
        mut f: impl FnMut(u32, T) -> Result<()>,
    ) -> Result<()> {
        let iter =
            view.raw()
                .iterator_cf_opt(self.cf(name), storage::scan_options(), IteratorMode::Start);
        for item in iter {
            let (k, v) = item.map_err(|e| Error::storage(what, e))?;
            let id = storage::decode_u32(name, &k, &k)?;
            f(id, decode(name, &k, &v)?)?;
        }
        Ok(())
    }
}
