//! Value codecs. Every stored value starts with a tag byte naming its kind and version, and the
//! records that carry a checksum end with the `crc32fast` CRC-32 of everything before it
//! (big-endian). Decoders check length, tag and checksum and return errors, never panic.

use roaring::RoaringBitmap;

use super::width::{width_mismatch, IdSet, IdWidth};
use crate::error::Error;
use crate::Result;

/// Internal document id: dense; the ids of deleted pages are given out again (see
/// [`DocRecord::seq`] for what tells two pages of one id apart).
pub type DocId = u32;
/// "No page": the `similar_to` of a page that was not a near duplicate of any page.
pub const NO_DOC: DocId = u32::MAX;
/// Cluster id: allocated when a cluster is founded, stable while its representative changes; the
/// ids of dissolved clusters are given out again.
pub type ClusterId = u32;

/// Tag of a document record of format 2 (no insertion number: it is the page's id, which was
/// never reused then). Read, never written.
pub const TAG_DOC: u8 = 0xD1;
/// Tag of a document record, format 3: with the page's insertion number and that of the page
/// it was judged similar to. Written for a record whose raw page hash is unknown (one written
/// before [`TAG_DOC_RAW`], kept as it is when rewritten in place).
pub const TAG_DOC_SEQ: u8 = 0xD2;
/// Tag of a document record with the hash of the raw page ([`DocRecord::raw_hash`]): the
/// [`TAG_DOC_SEQ`] layout, then the hash. Still format 5 (see FORMAT.md "Document record").
pub const TAG_DOC_RAW: u8 = 0xD3;
/// Tag of a cluster record, format 1.
pub const TAG_CLUSTER: u8 = 0xC1;
/// Tag of a stored normalized text, format 1.
pub const TAG_TEXT: u8 = 0x71;
/// Tag byte of a page's posting keys, kept in the texts column family instead of its text when
/// the index does not store texts (the keys are needed to take the page out of its postings).
pub const TAG_POSTING_KEYS: u8 = 0x73;
/// Tag of a posting stored as a sorted list of big-endian `u32` ids (small postings).
pub const TAG_POSTING_LIST: u8 = 0x50;
/// Tag of a posting stored as a serialized roaring bitmap.
pub const TAG_POSTING_ROARING: u8 = 0x52;
/// Postings of at most this many ids are stored as a plain list.
pub const POSTING_LIST_MAX: u64 = 16;
/// Tag of a page's chrome record (the `chrome` column family): the blocks counted for its host
/// and the ones dropped from its text as site chrome.
pub const TAG_PAGE_BLOCKS: u8 = 0xB1;
/// Tag of a count in the `chrome` column family (a host's counted pages, or the pages of a host
/// carrying one block).
pub const TAG_COUNT: u8 = 0x6E;
/// Tag of a document record of `u64` ids (a distributed index's partition, SCALEOUT §4; format
/// 7, FORMAT.md "Document record"): [`TAG_DOC_RAW`]'s layout, `cluster` and `similar_to` of 8
/// bytes, the raw page hash as a presence byte (0 or 1) and 8 bytes (0 when absent).
pub const TAG_WIDE_DOC: u8 = <u64 as IdWidth>::TAG_DOC;
/// Tag of a cluster record of `u64` ids: representative, portable treemap (SCALEOUT §4).
pub const TAG_WIDE_CLUSTER: u8 = <u64 as IdWidth>::TAG_CLUSTER;
/// Tag of a posting of `u64` ids as a sorted list (SCALEOUT §4; FORMAT.md "Postings").
pub const TAG_WIDE_POSTING_LIST: u8 = <u64 as IdWidth>::TAG_POSTING_LIST;
/// Tag of a posting of `u64` ids as a portable roaring treemap (SCALEOUT §4; FORMAT.md "Postings").
pub const TAG_WIDE_POSTING_TREEMAP: u8 = <u64 as IdWidth>::TAG_POSTING_SET;

/// Cursor over a byte slice that reports truncation as an error message.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    pub(crate) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(format!(
                "truncated at byte {} (wanted {n} more of {})",
                self.pos,
                self.buf.len()
            )),
        }
    }
    pub(crate) fn u16(&mut self) -> std::result::Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub(crate) fn u32(&mut self) -> std::result::Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn u64(&mut self) -> std::result::Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }
    /// A big-endian id of width `I`.
    pub(crate) fn id<I: IdWidth>(&mut self) -> std::result::Result<I, String> {
        let b = self.take(I::BYTES)?;
        I::from_be(b).ok_or_else(|| format!("an id of {} bytes", b.len()))
    }
    pub(crate) fn u128(&mut self) -> std::result::Result<u128, String> {
        let mut a = [0u8; 16];
        a.copy_from_slice(self.take(16)?);
        Ok(u128::from_be_bytes(a))
    }
    pub(crate) fn str(&mut self, n: usize) -> std::result::Result<String, String> {
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "invalid UTF-8".to_string())
    }
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

/// Appends the CRC-32 of `buf` to it.
pub(crate) fn seal(mut buf: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&buf);
    buf.extend_from_slice(&crc.to_be_bytes());
    buf
}

/// Checks the tag and trailing CRC-32 of a sealed value; returns the body after the tag.
pub(crate) fn unseal<'a>(
    cf: &'static str,
    key: &[u8],
    value: &'a [u8],
    tag: u8,
) -> Result<&'a [u8]> {
    if value.len() < 5 {
        return Err(Error::corruption(
            cf,
            key,
            format!("value of {} bytes is too short", value.len()),
        ));
    }
    if value[0] != tag {
        return Err(Error::corruption(
            cf,
            key,
            format!("unknown tag {:#04x}, expected {tag:#04x}", value[0]),
        ));
    }
    let (body, crc) = value.split_at(value.len() - 4);
    let stored = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let actual = crc32fast::hash(body);
    if stored != actual {
        return Err(Error::corruption(
            cf,
            key,
            format!("checksum mismatch: stored {stored:08x}, computed {actual:08x}"),
        ));
    }
    Ok(&body[1..])
}

/// [`unseal`] for a value of width `I`, which refuses a value whose tag is one of `foreign` (the
/// same value's tags in the other width) by naming the width it is of (SCALEOUT §4).
fn unseal_as<'a, I: IdWidth>(
    cf: &'static str,
    key: &[u8],
    value: &'a [u8],
    tag: u8,
    foreign: &[u8],
) -> Result<&'a [u8]> {
    match value.first() {
        Some(&t) if value.len() >= 5 && foreign.contains(&t) => Err(Error::corruption(
            cf,
            key,
            format!(
                "unknown tag {t:#04x}, expected {tag:#04x}: {}",
                width_mismatch::<I>(t)
            ),
        )),
        _ => unseal(cf, key, value, tag),
    }
}

/// What the index keeps about one page (the `docs` column family), its page and cluster ids of
/// width `I`: `u32` in a single-node index (the default, [`TAG_DOC_RAW`]), `u64` in a
/// distributed index's partition ([`TAG_WIDE_DOC`]; SCALEOUT §4, FORMAT.md "Document record").
#[derive(Clone, Debug, PartialEq)]
pub struct DocRecord<I: IdWidth = DocId> {
    /// The external key.
    pub key: String,
    /// The host the page came from (for over-frequent fingerprint checks).
    pub host: String,
    /// Publish time, Unix seconds (0 when unknown).
    pub time: i64,
    /// The cluster the page belongs to.
    pub cluster: I,
    /// Length of the normalized text in characters.
    pub text_chars: u32,
    /// Number of sentence fingerprints.
    pub fingerprints: u16,
    /// Simhash of the normalized text.
    pub simhash: u64,
    /// Hash of the normalized text.
    pub content_hash: u128,
    /// Hashes of the model codes of the page's heading (at most 255).
    pub codes: Vec<u32>,
    /// The closest page this one was verified similar to when it was placed ([`NO_DOC`]: none).
    /// It may sit in another cluster (see `index::decide`), and may have been deleted since —
    /// and its id given to another page: it is that page only while its `seq` is `similar_seq`.
    pub similar_to: I,
    /// The page's insertion number: unique over the index's life, in insertion order (ids are
    /// reused, these never are).
    pub seq: u64,
    /// The `seq` of the `similar_to` page (0 with [`NO_DOC`]).
    pub similar_seq: u64,
    /// Resemble rate with `similar_to` when placed (0 with none, and in format 2 records).
    pub resemble: f32,
    /// Contain rate with `similar_to` when placed (0 with none, and in format 2 records).
    pub contain: f32,
    /// The hash of the raw page as last given to insert (xxh3-64 of its bytes, seeded by the
    /// content kind: FORMAT.md "Document record"): what tells a byte-identical recrawl from one
    /// with the same main text only. `None` when
    /// unknown: a record written before the hash was kept (tag [`TAG_DOC_SEQ`] or
    /// [`TAG_DOC`]), or a page applied from a change that did not carry it.
    pub raw_hash: Option<u64>,
}

impl<I: IdWidth> DocRecord<I> {
    /// Encodes the record (tag, fields, CRC-32): of `u32` ids, [`TAG_DOC_RAW`] with its raw
    /// page hash, or [`TAG_DOC_SEQ`] when that is unknown; of `u64` ids, [`TAG_WIDE_DOC`]
    /// (SCALEOUT §4; FORMAT.md "Document record").
    pub fn encode(&self) -> Vec<u8> {
        let key = self.key.as_bytes();
        let host = &self.host.as_bytes()[..self.host.len().min(u16::MAX as usize)];
        let mut b = Vec::with_capacity(81 + key.len() + host.len());
        b.push(if I::WIDE {
            TAG_WIDE_DOC
        } else if self.raw_hash.is_some() {
            TAG_DOC_RAW
        } else {
            TAG_DOC_SEQ
        });
        b.extend_from_slice(&(key.len() as u32).to_be_bytes());
        b.extend_from_slice(key);
        b.extend_from_slice(&(host.len() as u16).to_be_bytes());
        b.extend_from_slice(host);
        b.extend_from_slice(&self.time.to_be_bytes());
        b.extend_from_slice(self.cluster.to_be().as_ref());
        b.extend_from_slice(&self.text_chars.to_be_bytes());
        b.extend_from_slice(&self.fingerprints.to_be_bytes());
        b.extend_from_slice(&self.simhash.to_be_bytes());
        b.extend_from_slice(&self.content_hash.to_be_bytes());
        b.extend_from_slice(self.similar_to.to_be().as_ref());
        b.extend_from_slice(&self.seq.to_be_bytes());
        b.extend_from_slice(&self.similar_seq.to_be_bytes());
        b.extend_from_slice(&self.resemble.to_bits().to_be_bytes());
        b.extend_from_slice(&self.contain.to_bits().to_be_bytes());
        let codes = &self.codes[..self.codes.len().min(255)];
        b.push(codes.len() as u8);
        for c in codes {
            b.extend_from_slice(&c.to_be_bytes());
        }
        if I::WIDE {
            // A presence byte, then the hash (zero when unknown): one tag for both.
            b.push(u8::from(self.raw_hash.is_some()));
            b.extend_from_slice(&self.raw_hash.unwrap_or(0).to_be_bytes());
        } else if let Some(raw) = self.raw_hash {
            b.extend_from_slice(&raw.to_be_bytes());
        }
        seal(b)
    }

    /// The tag a record starts with, if it is one of a document record of this width this
    /// build reads (the tag [`unseal`] then expects; another byte is reported as expecting the
    /// current tag).
    fn tag_of(value: &[u8]) -> u8 {
        match value.first() {
            Some(&t @ (TAG_DOC | TAG_DOC_SEQ)) if !I::WIDE => t,
            _ => I::TAG_DOC,
        }
    }

    /// The record's body past its tag, checked (tag of this width, checksum).
    fn unseal_record<'a>(cf: &'static str, key: &[u8], value: &'a [u8]) -> Result<&'a [u8]> {
        let foreign: &[u8] = if I::WIDE {
            &[TAG_DOC, TAG_DOC_SEQ, TAG_DOC_RAW]
        } else {
            &[TAG_WIDE_DOC]
        };
        unseal_as::<I>(cf, key, value, Self::tag_of(value), foreign)
    }

    /// Decodes and verifies a record of width `I` read at `key` in `cf` (SCALEOUT §4; FORMAT.md
    /// "Document record"); [`DocRecord::decode`] for `u32` ids.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag (one of the other width's named so), checksum or
    /// length.
    pub fn decode_as(cf: &'static str, key: &[u8], value: &[u8]) -> Result<Self> {
        let tag = Self::tag_of(value);
        let old = tag == TAG_DOC && !I::WIDE;
        let body = Self::unseal_record(cf, key, value)?;
        let parse = || -> std::result::Result<Self, String> {
            let mut r = Reader::new(body);
            let klen = r.u32()? as usize;
            let k = r.str(klen)?;
            let hlen = r.u16()? as usize;
            let host = r.str(hlen)?;
            let rec = DocRecord::<I> {
                key: k,
                host,
                time: r.u64()? as i64,
                cluster: r.id()?,
                text_chars: r.u32()?,
                fingerprints: r.u16()?,
                simhash: r.u64()?,
                content_hash: r.u128()?,
                similar_to: r.id()?,
                seq: 0,
                similar_seq: 0,
                resemble: 0.0,
                contain: 0.0,
                codes: Vec::new(),
                raw_hash: None,
            };
            let mut rec = rec;
            if old {
                let id = <[u8; 4]>::try_from(key)
                    .map_err(|_| "a format 2 record under a key that is not an id".to_string())?;
                rec.seq = u64::from(u32::from_be_bytes(id));
                if rec.similar_to != I::NONE {
                    rec.similar_seq = rec.similar_to.to_u64();
                }
            } else {
                rec.seq = r.u64()?;
                rec.similar_seq = r.u64()?;
                rec.resemble = f32::from_bits(r.u32()?);
                rec.contain = f32::from_bits(r.u32()?);
            }
            let n = r.take(1)?[0] as usize;
            for _ in 0..n {
                rec.codes.push(r.u32()?);
            }
            if I::WIDE {
                let present = r.take(1)?[0];
                let raw = r.u64()?;
                rec.raw_hash = match (present, raw) {
                    (1, raw) => Some(raw),
                    (0, 0) => None,
                    (0, _) => return Err("a raw page hash marked absent is not zero".into()),
                    (p, _) => return Err(format!("raw page hash presence byte {p}, not 0 or 1")),
                };
            } else if tag == TAG_DOC_RAW {
                rec.raw_hash = Some(r.u64()?);
            }
            if !r.is_empty() {
                return Err("trailing bytes".into());
            }
            Ok(rec)
        };
        parse().map_err(|reason| Error::corruption(cf, key, reason))
    }

    /// A record's cluster, text length and fingerprint count, read at `key` in `cf`, verified
    /// (tag of width `I` and checksum) but not decoded whole (SCALEOUT §4; FORMAT.md "Document
    /// record"); [`DocRecord::decode_size`] for `u32` ids.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or length.
    pub fn decode_size_as(cf: &'static str, key: &[u8], value: &[u8]) -> Result<PageSize<I>> {
        let body = Self::unseal_record(cf, key, value)?;
        let parse = || -> std::result::Result<PageSize<I>, String> {
            let mut r = past_time(body)?;
            Ok(PageSize {
                cluster: r.id()?,
                text_chars: r.u32()?,
                fingerprints: r.u16()?,
            })
        };
        parse().map_err(|reason| Error::corruption(cf, key, reason))
    }

    /// The cluster of a record of width `I` read at `key` in `cf`, verified (tag and checksum)
    /// but not decoded whole (SCALEOUT §4; FORMAT.md "Document record");
    /// [`DocRecord::decode_cluster`] for `u32` ids.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or length.
    pub fn decode_cluster_as(cf: &'static str, key: &[u8], value: &[u8]) -> Result<I> {
        let body = Self::unseal_record(cf, key, value)?;
        let parse = || -> std::result::Result<I, String> { past_time(body)?.id() };
        parse().map_err(|reason| Error::corruption(cf, key, reason))
    }
}

impl DocRecord {
    /// Decodes and verifies a record read at `key` in `cf` (a format 2 record gets its id, read
    /// from `key`, as insertion number; a record without a raw page hash reads with `None`).
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or length.
    pub fn decode(cf: &'static str, key: &[u8], value: &[u8]) -> Result<DocRecord> {
        Self::decode_as(cf, key, value)
    }

    /// A record's cluster, text length and fingerprint count, read at `key` in `cf`, verified
    /// (tag and checksum) but not decoded whole: what the candidate ranking reads of a
    /// candidate page.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or length.
    pub fn decode_size(cf: &'static str, key: &[u8], value: &[u8]) -> Result<PageSize> {
        Self::decode_size_as(cf, key, value)
    }

    /// The cluster of a record read at `key` in `cf`, verified (tag and checksum) but not
    /// decoded whole.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or length.
    pub fn decode_cluster(cf: &'static str, key: &[u8], value: &[u8]) -> Result<ClusterId> {
        Self::decode_cluster_as(cf, key, value)
    }
}

/// A reader of a record's body past its key, host and time: at its cluster, where the partial
/// decodes (`decode_size`, `decode_cluster`) start.
fn past_time(body: &[u8]) -> std::result::Result<Reader<'_>, String> {
    let mut r = Reader::new(body);
    let klen = r.u32()? as usize;
    r.take(klen)?;
    let hlen = r.u16()? as usize;
    r.take(hlen)?;
    r.u64()?;
    Ok(r)
}

/// What the candidate ranking reads of a candidate page's record (see
/// [`DocRecord::decode_size`]), its cluster id of width `I` (`u32` by default; `u64` in a
/// distributed index's partition, SCALEOUT §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSize<I: IdWidth = ClusterId> {
    /// The cluster the page belongs to.
    pub cluster: I,
    /// Length of the normalized text in characters.
    pub text_chars: u32,
    /// Number of sentence fingerprints.
    pub fingerprints: u16,
}

impl<I: IdWidth> PageSize<I> {
    /// The size fields of a record.
    pub fn of(rec: &DocRecord<I>) -> PageSize<I> {
        PageSize {
            cluster: rec.cluster,
            text_chars: rec.text_chars,
            fingerprints: rec.fingerprints,
        }
    }
}

/// A cluster: its representative and its members (the representative among them), of width `I`:
/// `u32` ids in a [`RoaringBitmap`] in a single-node index (the default, [`TAG_CLUSTER`]), `u64`
/// ids in a [`roaring::RoaringTreemap`] in a distributed index's partition ([`TAG_WIDE_CLUSTER`];
/// SCALEOUT §4, FORMAT.md "Cluster record").
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterRecord<I: IdWidth = DocId> {
    /// The representative page.
    pub representative: I,
    /// All member pages, the representative included.
    pub members: I::Set,
}

impl<I: IdWidth> ClusterRecord<I> {
    /// Encodes the record (tag, representative, members in their portable serialization,
    /// CRC-32; FORMAT.md "Cluster record").
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(1 + I::BYTES + self.members.serialized_size() + 4);
        b.push(I::TAG_CLUSTER);
        b.extend_from_slice(self.representative.to_be().as_ref());
        self.members.serialize(&mut b);
        seal(b)
    }

    /// Decodes and verifies a record of width `I` (SCALEOUT §4; FORMAT.md "Cluster record");
    /// [`ClusterRecord::decode`] for `u32` ids.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag (one of the other width's named so), checksum or
    /// member set.
    pub fn decode_as(cf: &'static str, key: &[u8], value: &[u8]) -> Result<Self> {
        let foreign = if I::WIDE {
            TAG_CLUSTER
        } else {
            TAG_WIDE_CLUSTER
        };
        let body = unseal_as::<I>(cf, key, value, I::TAG_CLUSTER, &[foreign])?;
        let mut r = Reader::new(body);
        let representative = r.id().map_err(|e| Error::corruption(cf, key, e))?;
        let members = I::Set::deserialize(r.rest()).map_err(|e| {
            let set = if I::WIDE { "treemap" } else { "bitmap" };
            Error::corruption(cf, key, format!("bad member {set}: {e}"))
        })?;
        Ok(ClusterRecord {
            representative,
            members,
        })
    }
}

impl ClusterRecord {
    /// Decodes and verifies a record.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or bitmap.
    pub fn decode(cf: &'static str, key: &[u8], value: &[u8]) -> Result<ClusterRecord> {
        Self::decode_as(cf, key, value)
    }
}

/// Encodes a normalized text (tag, UTF-8, CRC-32).
pub fn encode_text(text: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(text.len() + 5);
    b.push(TAG_TEXT);
    b.extend_from_slice(text.as_bytes());
    seal(b)
}

/// Decodes and verifies a stored text.
///
/// # Errors
/// [`Error::Corruption`] on a wrong tag, checksum or invalid UTF-8.
pub fn decode_text(cf: &'static str, key: &[u8], value: &[u8]) -> Result<String> {
    let body = unseal(cf, key, value, TAG_TEXT)?;
    String::from_utf8(body.to_vec()).map_err(|_| Error::corruption(cf, key, "text is not UTF-8"))
}

/// Encodes a page's posting keys (9 bytes each) for the texts column family.
pub fn encode_posting_keys(keys: &[[u8; 9]]) -> Vec<u8> {
    let mut b = Vec::with_capacity(1 + 9 * keys.len() + 4);
    b.push(TAG_POSTING_KEYS);
    for k in keys {
        b.extend_from_slice(k);
    }
    seal(b)
}

/// Decodes and verifies a page's posting keys.
///
/// # Errors
/// [`Error::Corruption`] on a wrong tag, checksum or length.
pub fn decode_posting_keys(cf: &'static str, key: &[u8], value: &[u8]) -> Result<Vec<[u8; 9]>> {
    let body = unseal(cf, key, value, TAG_POSTING_KEYS)?;
    if body.len() % 9 != 0 {
        return Err(Error::corruption(
            cf,
            key,
            format!("posting keys of {} bytes, not a multiple of 9", body.len()),
        ));
    }
    Ok(body
        .chunks_exact(9)
        .map(|c| {
            let mut k = [0u8; 9];
            k.copy_from_slice(c);
            k
        })
        .collect())
}

/// What a page contributed to its host's block statistics (the `chrome` column family,
/// [`TAG_PAGE_BLOCKS`]): a delete takes exactly these counts back, and a text recomputed from the
/// page's content (an index that does not store texts) drops exactly these blocks again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageBlocks {
    /// The host the blocks were counted for.
    pub host: String,
    /// Digests of the page's distinct countable blocks, sorted.
    pub counted: Vec<u64>,
    /// Digests of the blocks dropped from the page's text as site chrome, sorted; a subset of
    /// `counted`.
    pub dropped: Vec<u64>,
}

impl PageBlocks {
    /// Encodes the record: tag, host (u8 length), counted digests (u32 count, u64 each), dropped
    /// digests (the same), CRC-32.
    pub fn encode(&self) -> Vec<u8> {
        let host = self.host.as_bytes();
        let host = &host[..host.len().min(u8::MAX as usize)];
        let mut b = Vec::with_capacity(
            1 + 1 + host.len() + 8 + 8 * (self.counted.len() + self.dropped.len()) + 4,
        );
        b.push(TAG_PAGE_BLOCKS);
        b.push(host.len() as u8);
        b.extend_from_slice(host);
        for list in [&self.counted, &self.dropped] {
            b.extend_from_slice(&(list.len() as u32).to_be_bytes());
            for d in list {
                b.extend_from_slice(&d.to_be_bytes());
            }
        }
        seal(b)
    }

    /// Decodes and verifies a record.
    ///
    /// # Errors
    /// [`Error::Corruption`] on a wrong tag, checksum or length, or a host that is not UTF-8.
    pub fn decode(cf: &'static str, key: &[u8], value: &[u8]) -> Result<PageBlocks> {
        let body = unseal(cf, key, value, TAG_PAGE_BLOCKS)?;
        let bad = |r: String| Error::corruption(cf, key, r);
        let mut r = Reader::new(body);
        let host_len = r.take(1).map_err(bad)?[0] as usize;
        let host = r.str(host_len).map_err(bad)?;
        let mut lists = [Vec::new(), Vec::new()];
        for list in &mut lists {
            let n = r.u32().map_err(bad)? as usize;
            if n > body.len() / 8 {
                return Err(bad(format!(
                    "{n} digests in a record of {} bytes",
                    body.len()
                )));
            }
            for _ in 0..n {
                list.push(r.u64().map_err(bad)?);
            }
        }
        if !r.is_empty() {
            return Err(bad("trailing bytes after the dropped digests".into()));
        }
        let [counted, dropped] = lists;
        Ok(PageBlocks {
            host,
            counted,
            dropped,
        })
    }
}

/// Encodes a count of the `chrome` column family ([`TAG_COUNT`], u32).
pub fn encode_count(n: u32) -> [u8; 5] {
    let mut b = [TAG_COUNT, 0, 0, 0, 0];
    b[1..].copy_from_slice(&n.to_be_bytes());
    b
}

/// Decodes a count of the `chrome` column family.
///
/// # Errors
/// [`Error::Corruption`] on a wrong tag or length.
pub fn decode_count(cf: &'static str, key: &[u8], value: &[u8]) -> Result<u32> {
    match value {
        [TAG_COUNT, a, b, c, d] => Ok(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => Err(Error::corruption(
            cf,
            key,
            format!(
                "a count is {TAG_COUNT:#04x} and 4 bytes, found {} bytes",
                value.len()
            ),
        )),
    }
}

/// A value of the texts column family: a text, or a page's posting keys.
#[derive(Clone, Debug, PartialEq)]
pub enum TextValue {
    /// The normalized text ([`TAG_TEXT`]).
    Text(String),
    /// The posting keys of a page whose text is not stored ([`TAG_POSTING_KEYS`]).
    PostingKeys(Vec<[u8; 9]>),
}

/// Decodes and verifies either kind of value of the texts column family, told apart by its tag.
///
/// # Errors
/// [`Error::Corruption`] as the two decoders.
pub fn decode_text_value(cf: &'static str, key: &[u8], value: &[u8]) -> Result<TextValue> {
    if value.first() == Some(&TAG_POSTING_KEYS) {
        decode_posting_keys(cf, key, value).map(TextValue::PostingKeys)
    } else {
        decode_text(cf, key, value).map(TextValue::Text)
    }
}

/// Encodes a posting: a plain id list when small, a roaring bitmap otherwise.
pub fn encode_posting(ids: &RoaringBitmap) -> Vec<u8> {
    encode_posting_as::<u32>(ids)
}

/// Encodes a posting of `u64` ids (a distributed index's key partition, SCALEOUT §4; FORMAT.md
/// "Postings"): [`TAG_WIDE_POSTING_LIST`] and the ids, big-endian, when at most
/// [`POSTING_LIST_MAX`], else [`TAG_WIDE_POSTING_TREEMAP`] and the portable treemap.
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "unwired until the format 7 partitions")
)]
pub fn encode_wide_posting(ids: &roaring::RoaringTreemap) -> Vec<u8> {
    encode_posting_as::<u64>(ids)
}

/// Encodes a posting of width `I` (SCALEOUT §4; FORMAT.md "Postings"): [`encode_posting`] for
/// `u32` ids, [`encode_wide_posting`] for `u64` ids.
pub fn encode_posting_as<I: IdWidth>(ids: &I::Set) -> Vec<u8> {
    if ids.len() <= POSTING_LIST_MAX {
        let mut b = Vec::with_capacity(1 + I::BYTES * ids.len() as usize);
        b.push(I::TAG_POSTING_LIST);
        for id in ids.ids() {
            b.extend_from_slice(id.to_be().as_ref());
        }
        b
    } else {
        let mut b = Vec::with_capacity(1 + ids.serialized_size());
        b.push(I::TAG_POSTING_SET);
        ids.serialize(&mut b);
        b
    }
}

/// Decodes one entry of the postings column family for a check: its 9-byte key and its ids, or
/// the problem a check reports (a key of another length, a value that does not decode).
pub(crate) fn decode_posting_entry(
    key: &[u8],
    value: &[u8],
) -> std::result::Result<([u8; 9], RoaringBitmap), String> {
    let Ok(k) = <[u8; 9]>::try_from(key) else {
        return Err(format!(
            "posting key {} is not 9 bytes",
            crate::error::hex(key)
        ));
    };
    let ids =
        decode_posting(value).map_err(|r| format!("posting {}: {r}", crate::error::hex(key)))?;
    Ok((k, ids))
}

/// Decodes a posting value.
pub fn decode_posting(value: &[u8]) -> std::result::Result<RoaringBitmap, String> {
    decode_posting_as::<u32>(value)
}

/// Decodes a posting value of `u64` ids ([`encode_wide_posting`]; SCALEOUT §4, FORMAT.md
/// "Postings"). A posting of `u32` ids is refused, named so.
///
/// # Errors
/// What is wrong with the value: a `u32` posting's tag, another unknown tag, a list not of
/// whole ids, a treemap that does not decode whole.
pub fn decode_wide_posting(value: &[u8]) -> std::result::Result<roaring::RoaringTreemap, String> {
    decode_posting_as::<u64>(value)
}

/// Decodes a posting value of width `I` (SCALEOUT §4; FORMAT.md "Postings"):
/// [`decode_posting`] for `u32` ids, [`decode_wide_posting`] for `u64` ids. A posting of the
/// other width is refused, named so.
///
/// # Errors
/// What is wrong with the value, for a corruption report.
pub fn decode_posting_as<I: IdWidth>(value: &[u8]) -> std::result::Result<I::Set, String> {
    let foreign: [u8; 2] = if I::WIDE {
        [TAG_POSTING_LIST, TAG_POSTING_ROARING]
    } else {
        [TAG_WIDE_POSTING_LIST, TAG_WIDE_POSTING_TREEMAP]
    };
    match value.first() {
        Some(&t) if t == I::TAG_POSTING_LIST => {
            let body = &value[1..];
            if !body.len().is_multiple_of(I::BYTES) {
                return Err(format!("id list of {} bytes", body.len()));
            }
            // Chunks of exactly `I::BYTES` bytes: every one is an id.
            let ids = body.chunks_exact(I::BYTES).filter_map(I::from_be);
            // Lists are written in increasing order (`encode_posting`, the merge operator): built
            // in one pass; a list out of order is still read, id by id.
            Ok(I::Set::from_sorted(ids))
        }
        Some(&t) if t == I::TAG_POSTING_SET => I::Set::deserialize(&value[1..]).map_err(|e| {
            let set = if I::WIDE { "treemap" } else { "bitmap" };
            format!("bad roaring {set}: {e}")
        }),
        Some(&t) if foreign.contains(&t) => Err(format!(
            "unknown posting tag {t:#04x}: {}",
            width_mismatch::<I>(t)
        )),
        Some(t) => Err(format!("unknown posting tag {t:#04x}")),
        None => Err("empty posting value".into()),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wide_tests;
