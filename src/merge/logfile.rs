//! The bytes of a batch log (SCALEOUT §5 S5: the log a distributed merge writes under
//! `batch=<id>/partition=<p>/` before the partition applies it, and reads again on a retry).
//!
//! Layout: the magic `NDLOG` and a version byte (1); then each operation as a tag byte, a
//! big-endian `u32` length and its body; then the XXH3-64 of everything before it (big-endian
//! `u64`). Records, texts and chrome records in a body are the column families' own encodings
//! (FORMAT.md), with their own checksums; a posting change is the merge operator's delta operand.
//! [`decode_log`] refuses anything else with [`Error::InvalidArgument`] and never panics.

use super::log::{LogCounter, LogOp};
use crate::storage::codec::{self, ClusterRecord, DocRecord, PageBlocks, TextValue};
use crate::storage::merge::Delta;
use crate::{Error, Result};

pub(super) const MAGIC: &[u8; 5] = b"NDLOG";
pub(super) const VERSION: u8 = 1;

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

/// The bytes of a batch log (see the module docs).
pub fn encode_log(ops: &[LogOp]) -> Vec<u8> {
    let mut w = LogWriter::with_capacity(16 + 64 * ops.len());
    for op in ops {
        w.push(op);
    }
    w.finish()
}

/// A batch log written one operation at a time: the bytes [`encode_log`] gives for the
/// operations pushed, without holding them (issue #34: a work unit's log at a million pages).
#[derive(Debug)]
pub struct LogWriter {
    out: Vec<u8>,
    body: Vec<u8>,
    ops: u64,
}

impl Default for LogWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl LogWriter {
    /// An empty log.
    pub fn new() -> Self {
        Self::with_capacity(64)
    }

    /// An empty log with room for `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut out = Vec::with_capacity(bytes.max(MAGIC.len() + 9));
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        LogWriter {
            out,
            body: Vec::new(),
            ops: 0,
        }
    }

    /// Appends one operation.
    pub fn push(&mut self, op: &LogOp) {
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

/// Writes an operation's body into `b`; returns its tag.
pub(super) fn encode_op(op: &LogOp, b: &mut Vec<u8>) -> u8 {
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
            b.extend_from_slice(&doc.to_be_bytes());
            b.push(u8::from(*present));
            tag::SIMHASH
        }
        LogOp::Frequent { key, reason } => {
            b.extend_from_slice(key);
            value(b, reason.map(|r| vec![r]));
            tag::FREQUENT
        }
        LogOp::Key { key, doc } => {
            value(b, doc.map(|d| d.to_be_bytes().to_vec()));
            b.extend_from_slice(key.as_bytes());
            tag::KEY
        }
        LogOp::Doc { id, record } => {
            b.extend_from_slice(&id.to_be_bytes());
            value(b, record.as_ref().map(DocRecord::encode));
            tag::DOC
        }
        LogOp::Text { id, value: v } => {
            b.extend_from_slice(&id.to_be_bytes());
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
            b.extend_from_slice(&id.to_be_bytes());
            value(b, record.as_ref().map(ClusterRecord::encode));
            tag::CLUSTER
        }
        LogOp::PageBlocks { id, blocks } => {
            b.extend_from_slice(&id.to_be_bytes());
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
            b.extend_from_slice(&id.to_be_bytes());
            b.push(u8::from(*free));
            tag::FREE_DOC
        }
        LogOp::FreeCluster { id, free } => {
            b.extend_from_slice(&id.to_be_bytes());
            b.push(u8::from(*free));
            tag::FREE_CLUSTER
        }
        LogOp::Counter(c) => {
            let (which, v) = match *c {
                LogCounter::NextDoc(v) => (0u8, u64::from(v)),
                LogCounter::NextCluster(v) => (1, u64::from(v)),
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

/// The operations of a batch log's bytes.
///
/// # Errors
/// [`Error::InvalidArgument`] for bytes that are not a whole batch log of this version (a wrong
/// magic or version, a checksum that does not match, an operation cut short or that does not
/// decode).
pub fn decode_log(bytes: &[u8]) -> Result<Vec<LogOp>> {
    LogReader::new(bytes)?.collect()
}

/// The operations of a batch log's bytes, decoded one at a time ([`decode_log`] without
/// holding them): the header and checksum are checked when it is made, each operation as it
/// is read.
#[derive(Clone, Debug)]
pub struct LogReader<'a> {
    rest: &'a [u8],
    n: usize,
}

pub(super) fn not_a_log(why: String) -> Error {
    Error::InvalidArgument(format!("not a batch log: {why}"))
}

impl<'a> LogReader<'a> {
    /// A reader of `bytes`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a wrong magic or version, or a checksum that does not
    /// match.
    pub fn new(bytes: &'a [u8]) -> Result<LogReader<'a>> {
        if bytes.len() < MAGIC.len() + 1 + 8 || !bytes.starts_with(MAGIC) {
            return Err(not_a_log("no NDLOG header".into()));
        }
        if bytes[MAGIC.len()] != VERSION {
            return Err(not_a_log(format!("version {}", bytes[MAGIC.len()])));
        }
        let (data, sum) = bytes.split_at(bytes.len() - 8);
        let mut want = [0u8; 8];
        want.copy_from_slice(sum);
        if xxhash_rust::xxh3::xxh3_64(data) != u64::from_be_bytes(want) {
            return Err(not_a_log("checksum mismatch (truncated or damaged)".into()));
        }
        Ok(LogReader {
            rest: &data[MAGIC.len() + 1..],
            n: 0,
        })
    }
}

impl Iterator for LogReader<'_> {
    type Item = Result<LogOp>;

    fn next(&mut self) -> Option<Result<LogOp>> {
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
        Some(decode_op(t, body).map_err(|why| not_a_log(format!("operation {n} (tag {t}): {why}"))))
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
    pub(crate) fn record<T>(
        &mut self,
        decode: impl Fn(&'static str, &[u8], &[u8]) -> Result<T>,
    ) -> std::result::Result<(u32, Option<T>), String> {
        let id = self.u32()?;
        let value = match self.value()? {
            Some(v) => Some(decode("batch log", &id.to_be_bytes(), v).map_err(|e| e.to_string())?),
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

pub(super) fn decode_op(t: u8, body: &[u8]) -> std::result::Result<LogOp, String> {
    let mut r = Body(body);
    let op = match t {
        tag::POSTING => {
            let key = r.key9()?;
            let operand = r.take(r.0.len())?;
            let mut delta = Delta::default();
            delta
                .push(operand)
                .ok_or_else(|| "bad posting change".to_string())?;
            // Whole: the bitmaps' reader stops where they end, so bytes past them are refused
            // here (what `encode_log` writes re-encodes to itself).
            if operand.first() != Some(&crate::storage::merge::OP_DELTA)
                || delta.encode() != operand
            {
                return Err("posting change not in its written form".into());
            }
            LogOp::Posting { key, delta }
        }
        tag::SIMHASH => LogOp::Simhash {
            table: r.u8()?,
            simhash: r.u64()?,
            doc: r.u32()?,
            present: r.flag()?,
        },
        tag::FREQUENT => {
            let key = r.key9()?;
            let reason = if r.flag()? { Some(r.u8()?) } else { None };
            LogOp::Frequent { key, reason }
        }
        tag::KEY => {
            let doc = if r.flag()? { Some(r.u32()?) } else { None };
            LogOp::Key {
                key: r.text()?,
                doc,
            }
        }
        tag::DOC => {
            let (id, record) = r.record(DocRecord::decode)?;
            LogOp::Doc { id, record }
        }
        tag::TEXT => {
            let (id, value) = r.record(codec::decode_text_value)?;
            LogOp::Text { id, value }
        }
        tag::CLUSTER => {
            let (id, record) = r.record(ClusterRecord::decode)?;
            LogOp::Cluster { id, record }
        }
        tag::PAGE_BLOCKS => {
            let (id, blocks) = r.record(PageBlocks::decode)?;
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
            id: r.u32()?,
            free: r.flag()?,
        },
        tag::FREE_CLUSTER => LogOp::FreeCluster {
            id: r.u32()?,
            free: r.flag()?,
        },
        tag::COUNTER => {
            let which = r.u8()?;
            let v = r.u64()?;
            let small = || u32::try_from(v).map_err(|_| format!("counter value {v}"));
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
mod tests {
    use super::*;
    use proptest::prelude::*;
    use roaring::RoaringBitmap;

    fn ids() -> impl Strategy<Value = RoaringBitmap> {
        proptest::collection::vec(0u32..100_000, 0..20).prop_map(|v| v.into_iter().collect())
    }

    fn record() -> impl Strategy<Value = DocRecord> {
        (
            "[a-z0-9:/.]{1,20}",
            "[a-z.]{0,12}",
            any::<u64>(),
            any::<u128>(),
        )
            .prop_map(|(key, host, simhash, content_hash)| DocRecord {
                key,
                host,
                time: 1_700_000_000,
                cluster: 3,
                text_chars: 120,
                fingerprints: 7,
                simhash,
                content_hash,
                codes: vec![2, 9],
                similar_to: codec::NO_DOC,
                seq: 5,
                similar_seq: 0,
                resemble: 0.5,
                contain: 0.25,
                raw_hash: (simhash % 2 == 0).then_some(simhash),
            })
    }

    fn op() -> impl Strategy<Value = LogOp> {
        prop_oneof![
            (any::<[u8; 9]>(), ids(), ids()).prop_map(|(key, add, remove)| LogOp::Posting {
                key,
                delta: Delta { add, remove }
            }),
            (0u8..4, any::<u64>(), any::<u32>(), any::<bool>()).prop_map(
                |(table, simhash, doc, present)| LogOp::Simhash {
                    table,
                    simhash,
                    doc,
                    present
                }
            ),
            (any::<[u8; 9]>(), proptest::option::of(any::<u8>()))
                .prop_map(|(key, reason)| LogOp::Frequent { key, reason }),
            ("\\PC{0,16}", proptest::option::of(any::<u32>()))
                .prop_map(|(key, doc)| LogOp::Key { key, doc }),
            (any::<u32>(), proptest::option::of(record()))
                .prop_map(|(id, record)| LogOp::Doc { id, record }),
            (any::<u32>(), proptest::option::of("\\PC{0,40}")).prop_map(|(id, t)| LogOp::Text {
                id,
                value: t.map(TextValue::Text)
            }),
            (
                any::<u32>(),
                proptest::collection::vec(any::<[u8; 9]>(), 0..4)
            )
                .prop_map(|(id, k)| LogOp::Text {
                    id,
                    value: Some(TextValue::PostingKeys(k))
                }),
            (any::<u32>(), proptest::option::of((any::<u32>(), ids()))).prop_map(|(id, r)| {
                LogOp::Cluster {
                    id,
                    record: r.map(|(representative, members)| ClusterRecord {
                        representative,
                        members,
                    }),
                }
            }),
            (any::<u32>(), proptest::option::of("[a-z.]{0,12}")).prop_map(|(id, host)| {
                LogOp::PageBlocks {
                    id,
                    blocks: host.map(|host| PageBlocks {
                        host,
                        counted: vec![1, 5, 9],
                        dropped: vec![5],
                    }),
                }
            }),
            ("[a-z.]{0,12}", any::<u32>())
                .prop_map(|(host, pages)| LogOp::HostPages { host, pages }),
            ("[a-z.]{0,12}", any::<u64>(), any::<u32>())
                .prop_map(|(host, block, pages)| LogOp::BlockPages { host, block, pages }),
            (any::<u32>(), any::<bool>()).prop_map(|(id, free)| LogOp::FreeDoc { id, free }),
            (any::<u32>(), any::<bool>()).prop_map(|(id, free)| LogOp::FreeCluster { id, free }),
            any::<u32>().prop_map(|v| LogOp::Counter(LogCounter::NextDoc(v))),
            any::<u32>().prop_map(|v| LogOp::Counter(LogCounter::NextCluster(v))),
            any::<u64>().prop_map(|v| LogOp::Counter(LogCounter::LiveDocs(v))),
            any::<u64>().prop_map(|v| LogOp::Counter(LogCounter::LiveClusters(v))),
            any::<u64>().prop_map(|v| LogOp::Counter(LogCounter::NextSeq(v))),
        ]
    }

    proptest! {
        /// Every operation reads back as it was written.
        #[test]
        fn a_log_round_trips(ops in proptest::collection::vec(op(), 0..24)) {
            prop_assert_eq!(decode_log(&encode_log(&ops)).unwrap(), ops);
        }

        /// Damaged or cut logs are refused, never read wrong and never a panic.
        #[test]
        fn a_damaged_log_is_refused(
            ops in proptest::collection::vec(op(), 1..8),
            at in any::<prop::sample::Index>(),
            flip in 1u8..=255,
            cut in any::<bool>(),
        ) {
            let mut bytes = encode_log(&ops);
            let i = at.index(bytes.len());
            if cut {
                bytes.truncate(i);
            } else {
                bytes[i] ^= flip;
            }
            prop_assert!(matches!(decode_log(&bytes), Err(Error::InvalidArgument(_))));
        }

        /// Bytes of any kind never make the decoder panic.
        #[test]
        fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_log(&bytes);
        }
    }

    /// A posting change with bytes past its bitmaps is refused, checksum or not.
    #[test]
    fn a_posting_change_with_trailing_bytes_is_refused() {
        let op = LogOp::Posting {
            key: [1; 9],
            delta: Delta {
                add: [1u32, 2].into_iter().collect(),
                remove: RoaringBitmap::new(),
            },
        };
        let good = encode_log(std::slice::from_ref(&op));
        assert_eq!(decode_log(&good).unwrap(), vec![op]);
        // The same log with one byte more in the operation's body, resealed.
        let mut body = good[..good.len() - 8].to_vec();
        let len_at = MAGIC.len() + 2;
        let len = u32::from_be_bytes(body[len_at..len_at + 4].try_into().unwrap()) + 1;
        body[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        body.push(0);
        let sum = xxhash_rust::xxh3::xxh3_64(&body);
        body.extend_from_slice(&sum.to_be_bytes());
        assert!(decode_log(&body).is_err());
    }

    /// A body whose checksum is right but whose operations do not decode is refused too.
    #[test]
    fn a_sealed_bad_body_is_refused() {
        let mut bytes = b"NDLOG\x01".to_vec();
        bytes.extend_from_slice(&[tag::COUNTER, 0, 0, 0, 9, 7, 0, 0, 0, 0, 0, 0, 0, 1]);
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.extend_from_slice(&sum.to_be_bytes());
        let err = decode_log(&bytes).unwrap_err().to_string();
        assert!(err.contains("counter 7"), "{err}");
    }
}
