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

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;

use rocksdb::IteratorMode;

use super::layout::{Layout, Role};
use crate::index::view::{Snapshot, View};
use crate::index::Index;
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord, NO_DOC};
use crate::storage::{self, cf, id_key};
use crate::{Error, Result};

/// The insertion number of an ask for a page whatever its insertion number (a cluster's
/// representative or member).
pub const ANY_SEQ: u64 = u64::MAX;

/// The tag byte of an ask.
const ASK: u8 = b'a';
/// The tag byte of a reply.
const REPLY: u8 = b'r';
/// The tag byte of a cluster reply.
const CLUSTER_REPLY: u8 = b'c';
/// The first bytes of a part.
const PART_MAGIC: &[u8; 6] = b"NDPART";
/// The version of the part format.
const PART_VERSION: u8 = 1;
/// The length that marks a part's trailer.
const TRAILER: u32 = u32::MAX;

/// What a part holds, one record per page or cluster, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportKind {
    /// A page's key and its target's key ([`Index::export`]): payload `key length: u32, key,
    /// target key`.
    Pages,
    /// A cluster's representative's key and its members' keys in id order
    /// ([`Index::export_clusters`]): payload `representative length: u32, representative,
    /// members: u32`, then each member as `length: u32, key`.
    Clusters,
    /// A page's key, cluster and insertion number (no reference to resolve): payload
    /// `cluster: u32, insertion number: u64, key`.
    Rows,
}

impl ExportKind {
    /// The kind's byte in a part's header.
    fn byte(self) -> u8 {
        match self {
            ExportKind::Pages => 1,
            ExportKind::Clusters => 2,
            ExportKind::Rows => 3,
        }
    }
}

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

/// A checked reader of a message or a payload.
struct Bytes<'a> {
    rest: &'a [u8],
    what: &'static str,
}

impl<'a> Bytes<'a> {
    /// Past the tag byte, which must be `tag`.
    fn new(bytes: &'a [u8], what: &'static str, tag: u8) -> Result<Bytes<'a>> {
        let mut r = Bytes { rest: bytes, what };
        let found = r.take(1)?[0];
        if found != tag {
            return Err(r.bad(format!("tag byte {found:#04x}")));
        }
        Ok(r)
    }

    fn bad(&self, why: String) -> Error {
        Error::InvalidArgument(format!("not {}: {why}", self.what))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(self.bad("cut short".into()));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }

    /// A UTF-8 string of `n` bytes.
    fn str(&mut self, n: usize) -> Result<String> {
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.bad("a key that is not UTF-8".into()))
    }

    /// A string prefixed by its length.
    fn string(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        self.str(n)
    }

    fn end(&self) -> Result<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(self.bad(format!("{} bytes left over", self.rest.len())))
        }
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

/// Writes a part's records with its header and trailer.
struct PartWriter<W: Write> {
    out: W,
    records: u64,
    path: PathBuf,
}

impl<W: Write> PartWriter<W> {
    fn new(mut out: W, kind: ExportKind, path: PathBuf) -> Result<PartWriter<W>> {
        let mut head = PART_MAGIC.to_vec();
        head.extend_from_slice(&[PART_VERSION, kind.byte()]);
        out.write_all(&head).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        Ok(PartWriter {
            out,
            records: 0,
            path,
        })
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn record(&mut self, id: u32, payload: &[u8]) -> Result<()> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&n| n != TRAILER)
            .ok_or_else(|| Error::InvalidArgument(format!("export row {id} is too long")))?;
        let mut head = [0u8; 8];
        head[..4].copy_from_slice(&id.to_be_bytes());
        head[4..].copy_from_slice(&len.to_be_bytes());
        self.out
            .write_all(&head)
            .and_then(|()| self.out.write_all(payload))
            .map_err(|e| self.io(e))?;
        self.records += 1;
        Ok(())
    }

    fn finish(mut self) -> Result<u64> {
        // An id of 0, the length that marks the trailer, the record count.
        let mut tail = [0u8; 16];
        tail[4..8].copy_from_slice(&TRAILER.to_be_bytes());
        tail[8..].copy_from_slice(&self.records.to_be_bytes());
        self.out
            .write_all(&tail)
            .and_then(|()| self.out.flush())
            .map_err(|e| self.io(e))?;
        Ok(self.records)
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
        mut f: impl FnMut(DocId, DocRecord) -> Result<()>,
    ) -> Result<()> {
        let iter = view.raw().iterator_cf_opt(
            self.cf(cf::DOCS),
            storage::scan_options(),
            IteratorMode::Start,
        );
        for item in iter {
            let (k, v) = item.map_err(|e| Error::storage("reading pages for the export", e))?;
            let id = storage::decode_u32(cf::DOCS, &k, &k)?;
            f(id, DocRecord::decode(cf::DOCS, &k, &v)?)?;
        }
        Ok(())
    }

    /// Calls `f(id, record)` for every cluster record of the snapshot, in id order.
    fn export_scan_clusters(
        &self,
        view: &Snapshot<'_>,
        mut f: impl FnMut(ClusterId, ClusterRecord) -> Result<()>,
    ) -> Result<()> {
        let iter = view.raw().iterator_cf_opt(
            self.cf(cf::CLUSTERS),
            storage::scan_options(),
            IteratorMode::Start,
        );
        for item in iter {
            let (k, v) = item.map_err(|e| Error::storage("reading clusters for the export", e))?;
            let cid = storage::decode_u32(cf::CLUSTERS, &k, &k)?;
            f(cid, ClusterRecord::decode(cf::CLUSTERS, &k, &v)?)?;
        }
        Ok(())
    }
}

/// One part being merged: its reader and the record at its head.
struct PartReader<R: Read> {
    r: R,
    name: String,
    records: u64,
    last: Option<u32>,
}

impl<R: Read> PartReader<R> {
    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: PathBuf::from(&self.name),
            source,
        }
    }

    fn bad(&self, why: impl std::fmt::Display) -> Error {
        Error::InvalidArgument(format!("export part {} {why}", self.name))
    }

    /// Fills `buf` whole; false at the end of the stream before any byte.
    fn fill(&mut self, buf: &mut [u8]) -> Result<bool> {
        let mut got = 0;
        while got < buf.len() {
            match self.r.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => return Err(self.bad("is cut short")),
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        Ok(true)
    }

    fn header(&mut self, kind: ExportKind) -> Result<()> {
        let mut head = [0u8; 8];
        if !self.fill(&mut head)? || &head[..6] != PART_MAGIC {
            return Err(self.bad("has no NDPART header"));
        }
        if head[6] != PART_VERSION {
            return Err(self.bad(format!("is of version {}, not {PART_VERSION}", head[6])));
        }
        if head[7] != kind.byte() {
            return Err(self.bad(format!("is of kind {}, not {}", head[7], kind.byte())));
        }
        Ok(())
    }

    /// The next record's id, its payload in `buf`; `None` after the trailer.
    fn next(&mut self, buf: &mut Vec<u8>) -> Result<Option<u32>> {
        let mut head = [0u8; 8];
        if !self.fill(&mut head)? {
            return Err(self.bad("is cut short (no trailer)"));
        }
        let id = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let len = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if len == TRAILER {
            let mut count = [0u8; 8];
            if !self.fill(&mut count)? {
                return Err(self.bad("is cut short in its trailer"));
            }
            if u64::from_be_bytes(count) != self.records {
                return Err(self.bad(format!(
                    "says {} records, holds {}",
                    u64::from_be_bytes(count),
                    self.records
                )));
            }
            if self.fill(&mut [0u8; 1])? {
                return Err(self.bad("has bytes after its trailer"));
            }
            return Ok(None);
        }
        if self.last.is_some_and(|last| id <= last) {
            return Err(self.bad(format!("is not in id order at {id}")));
        }
        buf.resize(len as usize, 0);
        if !self.fill(buf)? && len > 0 {
            return Err(self.bad("is cut short"));
        }
        self.records += 1;
        self.last = Some(id);
        Ok(Some(id))
    }
}

/// Step 5 of the distributed export: the parts of one `kind` (each a reader with its name for
/// messages) merged by id, `f(id, payload)` called for each record in increasing id order.
/// Holds one record per part. Returns the records merged.
///
/// # Errors
/// [`Error::InvalidArgument`] for a part that is not whole (header, order, trailer) or an id
/// in two parts; [`Error::Io`] when a reader fails; what `f` returns.
pub fn merge_export_parts<R: Read>(
    kind: ExportKind,
    parts: Vec<(String, R)>,
    mut f: impl FnMut(u32, &[u8]) -> Result<()>,
) -> Result<u64> {
    let mut readers: Vec<PartReader<R>> = parts
        .into_iter()
        .map(|(name, r)| PartReader {
            r,
            name,
            records: 0,
            last: None,
        })
        .collect();
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); readers.len()];
    let mut heap = BinaryHeap::new();
    for (i, p) in readers.iter_mut().enumerate() {
        p.header(kind)?;
        if let Some(id) = p.next(&mut bufs[i])? {
            heap.push(Reverse((id, i)));
        }
    }
    let mut last: Option<u32> = None;
    let mut merged = 0u64;
    while let Some(Reverse((id, i))) = heap.pop() {
        if last == Some(id) {
            return Err(Error::InvalidArgument(format!(
                "id {id} is in two export parts (the last: {})",
                readers[i].name
            )));
        }
        last = Some(id);
        f(id, &bufs[i])?;
        merged += 1;
        if let Some(next) = readers[i].next(&mut bufs[i])? {
            heap.push(Reverse((next, i)));
        }
    }
    Ok(merged)
}

/// The merged page export written as the TSV of `neardup export` (`key\ttarget\n` per page, in
/// id order) to `out` (named `path` in errors). Returns the rows written.
///
/// # Errors
/// As [`merge_export_parts`]; [`Error::Io`] when `out` fails.
pub fn merge_export_tsv<R: Read>(
    parts: Vec<(String, R)>,
    mut out: impl Write,
    path: PathBuf,
) -> Result<u64> {
    let io = |source| Error::Io {
        path: path.clone(),
        source,
    };
    let rows = merge_export_parts(ExportKind::Pages, parts, |_, payload| {
        let (key, target) = decode_page_row(payload)?;
        out.write_all(key.as_bytes())
            .and_then(|()| out.write_all(b"\t"))
            .and_then(|()| out.write_all(target.as_bytes()))
            .and_then(|()| out.write_all(b"\n"))
            .map_err(io)
    })?;
    out.flush().map_err(io)?;
    Ok(rows)
}

/// A record of an [`ExportKind::Pages`] part: the page's key and its target's key.
///
/// # Errors
/// [`Error::InvalidArgument`] for a payload that does not decode.
pub fn decode_page_row(payload: &[u8]) -> Result<(&str, &str)> {
    let bad = || Error::InvalidArgument("not an export row: cut short or not UTF-8".into());
    let n = payload
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(bad)?;
    let key = payload.get(4..4 + n).ok_or_else(bad)?;
    let target = &payload[4 + n..];
    Ok((
        std::str::from_utf8(key).map_err(|_| bad())?,
        std::str::from_utf8(target).map_err(|_| bad())?,
    ))
}

/// A record of an [`ExportKind::Clusters`] part: the representative's key and the members'
/// keys in id order.
///
/// # Errors
/// [`Error::InvalidArgument`] for a payload that does not decode.
pub fn decode_cluster_row(payload: &[u8]) -> Result<(String, Vec<String>)> {
    let mut r = Bytes {
        rest: payload,
        what: "an export cluster row",
    };
    let rep = r.string()?;
    let n = r.u32()?;
    let members = (0..n).map(|_| r.string()).collect::<Result<Vec<_>>>()?;
    r.end()?;
    Ok((rep, members))
}

/// A record of an [`ExportKind::Rows`] part: the page's cluster, insertion number and key.
///
/// # Errors
/// [`Error::InvalidArgument`] for a payload that does not decode.
pub fn decode_page_record(payload: &[u8]) -> Result<(ClusterId, u64, String)> {
    let mut r = Bytes {
        rest: payload,
        what: "an export page record",
    };
    let cluster = r.u32()?;
    let seq = r.u64()?;
    let key = r.str(r.rest.len())?;
    Ok((cluster, seq, key))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::index::Page;
    use crate::merge::Partition;
    use crate::options::IndexOptions;
    use crate::Content;

    /// A sentence of `n` words drawn from a seed.
    fn sentence(seed: u64) -> String {
        const WORDS: [&str; 24] = [
            "river", "village", "morning", "teacher", "school", "water", "street", "bell",
            "market", "bread", "harbour", "winter", "garden", "letter", "station", "mountain",
            "window", "evening", "kitchen", "forest", "bridge", "candle", "meadow", "library",
        ];
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let words: Vec<&str> = (0..14)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                WORDS[(x % WORDS.len() as u64) as usize]
            })
            .collect();
        format!("The {}.", words.join(" "))
    }

    /// Page `v` of family `f`: the family's sentences, one of them changed per version.
    fn text(f: u64, v: u64) -> String {
        (0..10u64)
            .map(|s| {
                sentence(if s == v % 10 && v > 0 {
                    7_000 + f * 100 + v
                } else {
                    f * 100 + s
                })
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn insert(ix: &Index, key: &str, text: &str) {
        ix.insert(&Page {
            key,
            host: "a.example",
            time: 0,
            content: Content::Text(text),
        })
        .unwrap();
    }

    /// A whole index with families of near duplicates, pages deleted (their targets gone, ids
    /// given out again) and recrawled; and its state cut into `doc_parts` doc partitions
    /// under `dir`.
    pub(crate) fn partitioned(
        dir: &std::path::Path,
        doc_parts: u32,
    ) -> (Index, Layout, Vec<Index>) {
        let whole = Index::open(dir.join("whole"), IndexOptions::default()).unwrap();
        for f in 0..9u64 {
            for v in 0..(1 + f % 4) {
                insert(&whole, &format!("f{f}-v{v}"), &text(f, v));
            }
        }
        for k in ["f1-v0", "f3-v1", "f5-v0", "f7-v0"] {
            whole.delete(k).unwrap();
        }
        insert(&whole, "g9", &text(3, 5));
        insert(&whole, "f7-v0", &text(7, 6));
        insert(&whole, "f2-v1", &text(2, 8));
        assert!(whole.check().unwrap().is_clean());
        let layout = Layout::new(2, doc_parts, 3).unwrap();
        let routed = layout.route(&whole.state_log().unwrap());
        let docs = (0..doc_parts)
            .map(|n| {
                let ix =
                    Index::open(dir.join(format!("doc-{n}")), IndexOptions::default()).unwrap();
                ix.set_partition(Partition::new(layout, Role::Doc(n)).unwrap())
                    .unwrap();
                ix.apply_log(1, &routed.doc[n as usize]).unwrap();
                ix
            })
            .collect();
        (whole, layout, docs)
    }

    fn slices(v: &[Vec<u8>]) -> Vec<&[u8]> {
        v.iter().map(Vec::as_slice).collect()
    }

    /// Steps 1–4 over every doc partition: each one's part, in memory.
    fn parts(layout: &Layout, docs: &[Index], kind: ExportKind) -> Vec<Vec<u8>> {
        let asks: Vec<Vec<Vec<u8>>> = docs
            .iter()
            .map(|d| d.export_asks(layout, kind).unwrap())
            .collect();
        // What partition p was asked, by each partition in order.
        let to = |msgs: &Vec<Vec<Vec<u8>>>, p: usize| -> Vec<Vec<u8>> {
            msgs.iter().map(|m| m[p].clone()).collect()
        };
        let replies: Vec<Vec<Vec<u8>>> = docs
            .iter()
            .enumerate()
            .map(|(p, d)| d.export_replies(layout, &slices(&to(&asks, p))).unwrap())
            .collect();
        let cluster_replies: Vec<Vec<Vec<u8>>> = docs
            .iter()
            .enumerate()
            .map(|(p, d)| {
                let mine = to(&replies, p);
                d.export_cluster_replies(layout, &slices(&to(&asks, p)), &slices(&mine))
                    .unwrap()
            })
            .collect();
        docs.iter()
            .enumerate()
            .map(|(p, d)| {
                let mut out = Vec::new();
                d.export_part(
                    layout,
                    kind,
                    &slices(&to(&replies, p)),
                    &slices(&to(&cluster_replies, p)),
                    &mut out,
                    PathBuf::from(format!("doc-{p}")),
                )
                .unwrap();
                out
            })
            .collect()
    }

    fn named(parts: &[Vec<u8>]) -> Vec<(String, &[u8])> {
        parts
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("doc-{i}"), p.as_slice()))
            .collect()
    }

    #[test]
    fn the_merged_parts_are_the_single_nodes_export() {
        let dir = tempfile::tempdir().unwrap();
        let (whole, layout, docs) = partitioned(dir.path(), 3);
        let mut expected = Vec::new();
        whole
            .export(|k, r| expected.extend_from_slice(format!("{k}\t{r}\n").as_bytes()))
            .unwrap();
        let pages = parts(&layout, &docs, ExportKind::Pages);
        let mut tsv = Vec::new();
        let rows = merge_export_tsv(named(&pages), &mut tsv, PathBuf::from("out.tsv")).unwrap();
        assert_eq!(rows, whole.len());
        assert_eq!(
            String::from_utf8(tsv).unwrap(),
            String::from_utf8(expected.clone()).unwrap()
        );
        // Pages exported with a target other than themselves, some held by other partitions.
        let text = String::from_utf8(expected).unwrap();
        let elsewhere = text
            .lines()
            .filter(|l| l.split_once('\t').is_some_and(|(k, r)| k != r))
            .count();
        assert!(elsewhere > 5, "{text}");

        let mut clusters = Vec::new();
        whole
            .export_clusters(|c, r, m| clusters.push((c, r.to_string(), m.to_vec())))
            .unwrap();
        let mut merged = Vec::new();
        merge_export_parts(
            ExportKind::Clusters,
            named(&parts(&layout, &docs, ExportKind::Clusters)),
            |c, p| {
                let (r, m) = decode_cluster_row(p)?;
                merged.push((c, r, m));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(merged, clusters);

        let mut keys = Vec::new();
        merge_export_parts(
            ExportKind::Rows,
            named(&parts(&layout, &docs, ExportKind::Rows)),
            |id, p| {
                let (_, _, key) = decode_page_record(p)?;
                keys.push((id, key));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(keys.len() as u64, whole.len());
        assert!(keys.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn a_cut_or_misordered_part_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (_, layout, docs) = partitioned(dir.path(), 2);
        let pages = parts(&layout, &docs, ExportKind::Pages);
        let merge = |parts: Vec<(String, &[u8])>| {
            merge_export_parts(ExportKind::Pages, parts, |_, _| Ok(()))
        };
        // Whole: merged.
        assert!(merge(named(&pages)).is_ok());
        // Cut short, at a record boundary or inside one.
        for cut in [pages[0].len() - 16, pages[0].len() - 3, 5] {
            let r = merge(vec![
                ("cut".into(), &pages[0][..cut]),
                ("doc-1".into(), &pages[1]),
            ]);
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "cut at {cut}: {r:?}"
            );
        }
        // The same part twice: every id twice.
        let r = merge(vec![("a".into(), &pages[0]), ("b".into(), &pages[0])]);
        assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("two export parts")));
        // Another kind of part.
        let r = merge_export_parts(ExportKind::Clusters, named(&pages), |_, _| Ok(()));
        assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("kind")));
        // A message that is not one.
        assert!(matches!(
            docs[0].export_replies(&layout, &[b"r\0\0".as_slice()]),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn a_partition_changed_since_its_asks_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (_, layout, docs) = partitioned(dir.path(), 2);
        // Replies to asks of nothing: every reference is missing.
        let empty = Ask::default().encode();
        let replies = docs[0]
            .export_replies(&layout, &[empty.as_slice(), empty.as_slice()])
            .unwrap();
        let slices: Vec<&[u8]> = replies.iter().map(Vec::as_slice).collect();
        let r = docs[0].export_part(
            &layout,
            ExportKind::Pages,
            &slices,
            &[],
            Vec::new(),
            PathBuf::new(),
        );
        assert!(
            matches!(r, Err(Error::InvalidArgument(m)) if m.contains("changed during the export"))
        );
        // A whole index (not a partition) exports no part.
        let whole = Index::open(dir.path().join("plain"), IndexOptions::default()).unwrap();
        assert!(matches!(
            whole.export_asks(&layout, ExportKind::Pages),
            Err(Error::InvalidArgument(_))
        ));
    }
}
