//! A part of the distributed export as bytes (see the module above): written by
//! [`PartWriter`], read back and merged by id by [`merge_export_parts`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;

use crate::{Error, Result};

/// The first bytes of a part.
const PART_MAGIC: &[u8; 6] = b"NDPART";
/// The version of the part format: 2, records of `u64` ids (1 had `u32` ids).
const PART_VERSION: u8 = 2;
/// The length that marks a part's trailer.
const TRAILER: u32 = u32::MAX;

/// What a part holds, one record per page or cluster, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportKind {
    /// A page's key and its target's key ([`crate::Index::export`]): payload `key length: u32,
    /// key, target key`.
    Pages,
    /// A cluster's representative's key and its members' keys in id order
    /// ([`crate::Index::export_clusters`]): payload `representative length: u32, representative,
    /// members: u32`, then each member as `length: u32, key`.
    Clusters,
    /// A page's key, cluster and insertion number (no reference to resolve): payload
    /// `cluster: u64, insertion number: u64, key`.
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

/// A checked reader of a message or a payload.
pub(super) struct Bytes<'a> {
    rest: &'a [u8],
    what: &'static str,
}

impl<'a> Bytes<'a> {
    /// Past the tag byte, which must be `tag`.
    pub(super) fn new(bytes: &'a [u8], what: &'static str, tag: u8) -> Result<Bytes<'a>> {
        let mut r = Bytes { rest: bytes, what };
        let found = r.take(1)?[0];
        if found != tag {
            return Err(r.bad(format!("tag byte {found:#04x}")));
        }
        Ok(r)
    }

    pub(super) fn bad(&self, why: String) -> Error {
        Error::InvalidArgument(format!("not {}: {why}", self.what))
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(self.bad("cut short".into()));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn u64(&mut self) -> Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }

    /// A UTF-8 string of `n` bytes.
    pub(super) fn str(&mut self, n: usize) -> Result<String> {
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.bad("a key that is not UTF-8".into()))
    }

    /// A string prefixed by its length.
    pub(super) fn string(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        self.str(n)
    }

    pub(super) fn end(&self) -> Result<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(self.bad(format!("{} bytes left over", self.rest.len())))
        }
    }
}

/// Writes a part's records with its header and trailer.
pub(super) struct PartWriter<W: Write> {
    out: W,
    records: u64,
    path: PathBuf,
}

impl<W: Write> PartWriter<W> {
    pub(super) fn new(mut out: W, kind: ExportKind, path: PathBuf) -> Result<PartWriter<W>> {
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

    pub(super) fn record(&mut self, id: u64, payload: &[u8]) -> Result<()> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&n| n != TRAILER)
            .ok_or_else(|| Error::InvalidArgument(format!("export row {id} is too long")))?;
        let mut head = [0u8; 12];
        head[..8].copy_from_slice(&id.to_be_bytes());
        head[8..].copy_from_slice(&len.to_be_bytes());
        self.out
            .write_all(&head)
            .and_then(|()| self.out.write_all(payload))
            .map_err(|e| self.io(e))?;
        self.records += 1;
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<u64> {
        // An id of 0, the length that marks the trailer, the record count.
        let mut tail = [0u8; 20];
        tail[8..12].copy_from_slice(&TRAILER.to_be_bytes());
        tail[12..].copy_from_slice(&self.records.to_be_bytes());
        self.out
            .write_all(&tail)
            .and_then(|()| self.out.flush())
            .map_err(|e| self.io(e))?;
        Ok(self.records)
    }
}

/// One part being merged: its reader and the record at its head.
struct PartReader<R: Read> {
    r: R,
    name: String,
    records: u64,
    last: Option<u64>,
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
    fn next(&mut self, buf: &mut Vec<u8>) -> Result<Option<u64>> {
        let mut head = [0u8; 12];
        if !self.fill(&mut head)? {
            return Err(self.bad("is cut short (no trailer)"));
        }
        let mut id = [0u8; 8];
        id.copy_from_slice(&head[..8]);
        let id = u64::from_be_bytes(id);
        let len = u32::from_be_bytes([head[8], head[9], head[10], head[11]]);
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
        // Read as the bytes come, not into a buffer of the length the part claims: a damaged
        // length is a part cut short, never an allocation of gigabytes.
        buf.clear();
        let got = (&mut self.r)
            .take(u64::from(len))
            .read_to_end(buf)
            .map_err(|e| self.io(e))?;
        if got != len as usize {
            return Err(self.bad("is cut short"));
        }
        self.records += 1;
        self.last = Some(id);
        Ok(Some(id))
    }
}

/// Step 5 of the distributed export: the parts of one `kind` (each a reader with its name for
/// messages) merged by id, `f(id, payload)` called for each record in increasing id order (page
/// or cluster ids as `u64`s, whatever width the partitions store).
/// Holds one record per part. Returns the records merged.
///
/// # Errors
/// [`Error::InvalidArgument`] for a part that is not whole (header, order, trailer) or an id
/// in two parts; [`Error::Io`] when a reader fails; what `f` returns.
pub fn merge_export_parts<R: Read>(
    kind: ExportKind,
    parts: Vec<(String, R)>,
    mut f: impl FnMut(u64, &[u8]) -> Result<()>,
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
    let mut last: Option<u64> = None;
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
pub fn decode_page_record(payload: &[u8]) -> Result<(u64, u64, String)> {
    let mut r = Bytes {
        rest: payload,
        what: "an export page record",
    };
    let cluster = r.u64()?;
    let seq = r.u64()?;
    let key = r.str(r.rest.len())?;
    Ok((cluster, seq, key))
}
