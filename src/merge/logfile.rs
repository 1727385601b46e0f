//! The bytes of a batch log (SCALEOUT §5 S5: the log a distributed merge writes under
//! `batch=<id>/partition=<p>/` before the partition applies it, and reads again on a retry).
//!
//! Layout: the magic `NDLOG` and a version byte, which gives the width of the page and cluster
//! ids (1: `u32`, 2: `u64`, SCALEOUT §4); then each operation as a tag byte, a big-endian `u32`
//! length and its body; then the XXH3-64 of everything before it (big-endian `u64`). Ids are
//! big-endian of the log's width, in the bodies and in the records they carry (a version 2 log
//! carries the records' and postings' `u64` encodings, FORMAT.md). A reader asks for the width it
//! wants and takes either version: a `u32` log widens losslessly; a `u64` log narrows, and an id
//! that does not fit is refused ([`Error::InvalidArgument`]). Records, texts and chrome records in a body are the column families' own encodings
//! (FORMAT.md), with their own checksums; a posting change is the merge operator's delta operand.
//! [`decode_log`] refuses anything else with [`Error::InvalidArgument`] and never panics.

use std::marker::PhantomData;

use super::log::{LogCounter, LogOp};
use crate::storage::codec::{self, ClusterRecord, DocRecord, PageBlocks, TextValue};
use crate::storage::merge::PostingDelta;
use crate::storage::width::IdWidth;
use crate::{Error, Result};

pub(super) const MAGIC: &[u8; 5] = b"NDLOG";
/// The version of a log of `u32` ids.
const VERSION_U32: u8 = 1;
/// The version of a log of `u64` ids.
const VERSION_U64: u8 = 2;

/// The version byte of a log of ids of width `I`.
pub(super) fn version<I: IdWidth>() -> u8 {
    if I::WIDE {
        VERSION_U64
    } else {
        VERSION_U32
    }
}

/// Whether a log of version `v` holds `u64` ids; an error for a version this build does not read.
pub(super) fn wide_version(v: u8) -> Result<bool> {
    match v {
        VERSION_U32 => Ok(false),
        VERSION_U64 => Ok(true),
        v => Err(not_a_log(format!("version {v}"))),
    }
}

/// The operation tags.
mod tag {
    pub const POSTING: u8 = 0;
    pub const SIMHASH: u8 = 1;
    pub const FREQUENT: u8 = 2;
    pub const KEY: u8 = 3;
    pub const DOC: u8 = 4;
    pub const TEXT: u8 = 5;
    pub const CLUSTER: u8 = 6;
    pub const PAGE_BLOCKS: u8 = 7;
    pub const HOST_PAGES: u8 = 8;
    pub const BLOCK_PAGES: u8 = 9;
    pub const FREE_DOC: u8 = 10;
    pub const FREE_CLUSTER: u8 = 11;
    pub const COUNTER: u8 = 12;
}

/// The bytes of a batch log (see the module docs), of the operations' id width.
pub fn encode_log<I: IdWidth>(ops: &[LogOp<I>]) -> Vec<u8> {
    let mut w = LogWriter::<I>::with_capacity(16 + 64 * ops.len());
    for op in ops {
        w.push(op);
    }
    w.finish()
}

/// A batch log of ids of width `I` written one operation at a time: the bytes [`encode_log`]
/// gives for the operations pushed, without holding them (issue #34: a work unit's log at a
/// million pages).
#[derive(Debug)]
pub struct LogWriter<I: IdWidth = codec::DocId> {
    out: Vec<u8>,
    body: Vec<u8>,
    ops: u64,
    width: PhantomData<I>,
}

impl<I: IdWidth> Default for LogWriter<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: IdWidth> LogWriter<I> {
    /// An empty log.
    pub fn new() -> Self {
        Self::with_capacity(64)
    }

    /// An empty log with room for `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut out = Vec::with_capacity(bytes.max(MAGIC.len() + 9));
        out.extend_from_slice(MAGIC);
        out.push(version::<I>());
        LogWriter {
            out,
            body: Vec::new(),
            ops: 0,
            width: PhantomData,
        }
    }

    /// Appends one operation.
    pub fn push(&mut self, op: &LogOp<I>) {
        self.body.clear();
        let t = encode_op(op, &mut self.body);
        self.out.push(t);
        self.out
            .extend_from_slice(&(self.body.len() as u32).to_be_bytes());
        self.out.extend_from_slice(&self.body);
        self.ops += 1;
    }

    /// How many operations were pushed.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// The log's bytes, its checksum appended.
    pub fn finish(mut self) -> Vec<u8> {
        let sum = xxhash_rust::xxh3::xxh3_64(&self.out);
        self.out.extend_from_slice(&sum.to_be_bytes());
        self.out
    }
}

/// Writes an operation's body into `b`, its ids in `I`'s bytes; returns its tag.
pub(super) fn encode_op<I: IdWidth>(op: &LogOp<I>, b: &mut Vec<u8>) -> u8 {
    // An optional value: a presence byte, then the value's encoding.
    fn value(b: &mut Vec<u8>, v: Option<Vec<u8>>) {
        match v {
            Some(v) => {
                b.push(1);
                b.extend_from_slice(&v);
            }
            None => b.push(0),
        }
    }
    match op {
        LogOp::Posting { key, delta } => {
            b.extend_from_slice(key);
            b.extend_from_slice(&delta.encode());
            tag::POSTING
        }
        LogOp::Simhash {
            table,
            simhash,
            doc,
            present,
        } => {
            b.push(*table);
            b.extend_from_slice(&simhash.to_be_bytes());
            b.extend_from_slice(doc.to_be().as_ref());
            b.push(u8::from(*present));
            tag::SIMHASH
        }
        LogOp::Frequent { key, reason } => {
            b.extend_from_slice(key);
            value(b, reason.map(|r| vec![r]));
            tag::FREQUENT
        }
        LogOp::Key { key, doc } => {
            value(b, doc.map(|d| d.to_be().as_ref().to_vec()));
            b.extend_from_slice(key.as_bytes());
            tag::KEY
        }
        LogOp::Doc { id, record } => {
            b.extend_from_slice(id.to_be().as_ref());
            value(b, record.as_ref().map(DocRecord::encode));
            tag::DOC
        }
        LogOp::Text { id, value: v } => {
            b.extend_from_slice(id.to_be().as_ref());
            value(
                b,
                v.as_ref().map(|v| match v {
                    TextValue::Text(t) => codec::encode_text(t),
                    TextValue::PostingKeys(k) => codec::encode_posting_keys(k),
                }),
            );
            tag::TEXT
        }
        LogOp::Cluster { id, record } => {
            b.extend_from_slice(id.to_be().as_ref());
            value(b, record.as_ref().map(ClusterRecord::encode));
            tag::CLUSTER
        }
        LogOp::PageBlocks { id, blocks } => {
            b.extend_from_slice(id.to_be().as_ref());
            value(b, blocks.as_ref().map(PageBlocks::encode));
            tag::PAGE_BLOCKS
        }
        LogOp::HostPages { host, pages } => {
            b.extend_from_slice(&pages.to_be_bytes());
            b.extend_from_slice(host.as_bytes());
            tag::HOST_PAGES
        }
        LogOp::BlockPages { host, block, pages } => {
            b.extend_from_slice(&block.to_be_bytes());
            b.extend_from_slice(&pages.to_be_bytes());
            b.extend_from_slice(host.as_bytes());
            tag::BLOCK_PAGES
        }
        LogOp::FreeDoc { id, free } => {
            b.extend_from_slice(id.to_be().as_ref());
            b.push(u8::from(*free));
            tag::FREE_DOC
        }
        LogOp::FreeCluster { id, free } => {
            b.extend_from_slice(id.to_be().as_ref());
            b.push(u8::from(*free));
            tag::FREE_CLUSTER
        }
        LogOp::Counter(c) => {
            let (which, v) = match *c {
                LogCounter::NextDoc(v) => (0u8, v.to_u64()),
                LogCounter::NextCluster(v) => (1, v.to_u64()),
                LogCounter::LiveDocs(v) => (2, v),
                LogCounter::LiveClusters(v) => (3, v),
                LogCounter::NextSeq(v) => (4, v),
            };
            b.push(which);
            b.extend_from_slice(&v.to_be_bytes());
            tag::COUNTER
        }
    }
}

/// The operations of a batch log's bytes, with ids of width `I` (a log of either width: see the
/// module docs).
///
/// # Errors
/// [`Error::InvalidArgument`] for bytes that are not a whole batch log of a version this build
/// reads (a wrong magic or version, a checksum that does not match, an operation cut short or
/// that does not decode), or for an id that does not fit `I`.
pub fn decode_log<I: IdWidth>(bytes: &[u8]) -> Result<Vec<LogOp<I>>> {
    LogReader::new(bytes)?.collect()
}

/// The operations of a batch log's bytes, decoded one at a time ([`decode_log`] without
/// holding them), with ids of width `I`: the header and checksum are checked when it is made,
/// each operation as it is read.
#[derive(Clone, Debug)]
pub struct LogReader<'a, I: IdWidth = codec::DocId> {
    rest: &'a [u8],
    n: usize,
    wide: bool,
    width: PhantomData<I>,
}

pub(super) fn not_a_log(why: String) -> Error {
    Error::InvalidArgument(format!("not a batch log: {why}"))
}

impl<'a, I: IdWidth> LogReader<'a, I> {
    /// A reader of `bytes`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a wrong magic or version, or a checksum that does not
    /// match.
    pub fn new(bytes: &'a [u8]) -> Result<LogReader<'a, I>> {
        if bytes.len() < MAGIC.len() + 1 + 8 || !bytes.starts_with(MAGIC) {
            return Err(not_a_log("no NDLOG header".into()));
        }
        let wide = wide_version(bytes[MAGIC.len()])?;
        let (data, sum) = bytes.split_at(bytes.len() - 8);
        let mut want = [0u8; 8];
        want.copy_from_slice(sum);
        if xxhash_rust::xxh3::xxh3_64(data) != u64::from_be_bytes(want) {
            return Err(not_a_log("checksum mismatch (truncated or damaged)".into()));
        }
        Ok(LogReader {
            rest: &data[MAGIC.len() + 1..],
            n: 0,
            wide,
            width: PhantomData,
        })
    }
}

impl<I: IdWidth> Iterator for LogReader<'_, I> {
    type Item = Result<LogOp<I>>;

    fn next(&mut self) -> Option<Result<LogOp<I>>> {
        if self.rest.is_empty() {
            return None;
        }
        let n = self.n;
        let rest = self.rest;
        if rest.len() < 5 {
            self.rest = &[];
            return Some(Err(not_a_log(format!("operation {n} cut short"))));
        }
        let t = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let Some(body) = rest.get(5..5 + len) else {
            self.rest = &[];
            return Some(Err(not_a_log(format!("operation {n} cut short"))));
        };
        self.rest = &rest[5 + len..];
        self.n += 1;
        Some(decode_op_as(self.wide, n, t, body))
    }
}

/// Operation `n` of a log (of `u64` ids when `wide`) with tag `t` and body `body`, in width `I`.
pub(super) fn decode_op_as<I: IdWidth>(
    wide: bool,
    n: usize,
    t: u8,
    body: &[u8],
) -> Result<LogOp<I>> {
    let bad = |why: String| not_a_log(format!("operation {n} (tag {t}): {why}"));
    let too_wide = |id: u64| {
        Error::InvalidArgument(format!(
            "batch log operation {n}: id {id} does not fit the {} ids this index stores",
            I::NAME
        ))
    };
    if wide == I::WIDE {
        decode_op::<I>(t, body).map_err(bad)
    } else if wide {
        decode_op::<u64>(t, body)
            .map_err(bad)?
            .to_width()
            .map_err(too_wide)
    } else {
        decode_op::<u32>(t, body)
            .map_err(bad)?
            .to_width()
            .map_err(too_wide)
    }
}

/// Reads the fields of an operation's body.
struct Body<'a>(&'a [u8]);

impl<'a> Body<'a> {
    pub(crate) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("cut short".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> std::result::Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> std::result::Result<u32, String> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(a))
    }

    /// An id of width `I`.
    pub(crate) fn id<I: IdWidth>(&mut self) -> std::result::Result<I, String> {
        I::from_be(self.take(I::BYTES)?).ok_or_else(|| "cut short".to_string())
    }

    pub(crate) fn u64(&mut self) -> std::result::Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }

    pub(crate) fn key9(&mut self) -> std::result::Result<[u8; 9], String> {
        let mut a = [0u8; 9];
        a.copy_from_slice(self.take(9)?);
        Ok(a)
    }

    pub(crate) fn flag(&mut self) -> std::result::Result<bool, String> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            x => Err(format!("flag byte {x}")),
        }
    }

    /// The rest, as UTF-8.
    pub(crate) fn text(&mut self) -> std::result::Result<String, String> {
        let s = std::str::from_utf8(self.0).map_err(|_| "not UTF-8".to_string())?;
        self.0 = &[];
        Ok(s.to_string())
    }

    /// The rest, when the presence byte says there is a value.
    pub(crate) fn value(&mut self) -> std::result::Result<Option<&'a [u8]>, String> {
        if !self.flag()? {
            return self.end().map(|()| None);
        }
        let v = self.0;
        self.0 = &[];
        Ok(Some(v))
    }

    /// An id, then the record stored under it (a presence byte, then the column family's own
    /// encoding, read by `decode`).
    pub(crate) fn record<I: IdWidth, T>(
        &mut self,
        decode: impl Fn(&'static str, &[u8], &[u8]) -> Result<T>,
    ) -> std::result::Result<(I, Option<T>), String> {
        let id = self.id::<I>()?;
        let value = match self.value()? {
            Some(v) => {
                Some(decode("batch log", id.to_be().as_ref(), v).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        Ok((id, value))
    }

    pub(crate) fn end(&self) -> std::result::Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes left over", self.0.len()))
        }
    }
}

/// An operation's body with ids of width `I`, as [`encode_op`] wrote it.
fn decode_op<I: IdWidth>(t: u8, body: &[u8]) -> std::result::Result<LogOp<I>, String> {
    let mut r = Body(body);
    let op = match t {
        tag::POSTING => {
            let key = r.key9()?;
            let operand = r.take(r.0.len())?;
            let mut delta = PostingDelta::<I>::default();
            delta
                .push(operand)
                .ok_or_else(|| "bad posting change".to_string())?;
            // Whole: the bitmaps' reader stops where they end, so bytes past them are refused
            // here (what `encode_log` writes re-encodes to itself).
            if operand.first() != Some(&I::OP_DELTA) || delta.encode() != operand {
                return Err("posting change not in its written form".into());
            }
            LogOp::Posting { key, delta }
        }
        tag::SIMHASH => LogOp::Simhash {
            table: r.u8()?,
            simhash: r.u64()?,
            doc: r.id()?,
            present: r.flag()?,
        },
        tag::FREQUENT => {
            let key = r.key9()?;
            let reason = if r.flag()? { Some(r.u8()?) } else { None };
            LogOp::Frequent { key, reason }
        }
        tag::KEY => {
            let doc = if r.flag()? { Some(r.id()?) } else { None };
            LogOp::Key {
                key: r.text()?,
                doc,
            }
        }
        tag::DOC => {
            let (id, record) = r.record(DocRecord::<I>::decode_as)?;
            LogOp::Doc { id, record }
        }
        tag::TEXT => {
            let (id, value) = r.record::<I, _>(codec::decode_text_value)?;
            LogOp::Text { id, value }
        }
        tag::CLUSTER => {
            let (id, record) = r.record(ClusterRecord::<I>::decode_as)?;
            LogOp::Cluster { id, record }
        }
        tag::PAGE_BLOCKS => {
            let (id, blocks) = r.record::<I, _>(PageBlocks::decode)?;
            LogOp::PageBlocks { id, blocks }
        }
        tag::HOST_PAGES => {
            let pages = r.u32()?;
            LogOp::HostPages {
                host: r.text()?,
                pages,
            }
        }
        tag::BLOCK_PAGES => {
            let block = r.u64()?;
            let pages = r.u32()?;
            LogOp::BlockPages {
                host: r.text()?,
                block,
                pages,
            }
        }
        tag::FREE_DOC => LogOp::FreeDoc {
            id: r.id()?,
            free: r.flag()?,
        },
        tag::FREE_CLUSTER => LogOp::FreeCluster {
            id: r.id()?,
            free: r.flag()?,
        },
        tag::COUNTER => {
            let which = r.u8()?;
            let v = r.u64()?;
            let small = || I::from_u64(v).ok_or_else(|| format!("counter value {v}"));
            LogOp::Counter(match which {
                0 => LogCounter::NextDoc(small()?),
                1 => LogCounter::NextCluster(small()?),
                2 => LogCounter::LiveDocs(v),
                3 => LogCounter::LiveClusters(v),
                4 => LogCounter::NextSeq(v),
                x => return Err(format!("counter {x}")),
            })
        }
        x => return Err(format!("unknown tag {x}")),
    };
    r.end()?;
    Ok(op)
}

#[cfg(test)]
mod tests;
