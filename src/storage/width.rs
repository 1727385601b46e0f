//! The width of page and cluster ids in the stored values: `u32` in a single-node index (format 6,
//! FORMAT.md) and `u64` in a partition of a distributed index, whose ids are global (SCALEOUT §4:
//! one `u32` space runs out in about four days at 10⁹ pages a day). [`IdWidth`] is what a codec
//! needs of a width — bytes, the "none" id, the id set, big-endian keys, the tags of its records,
//! postings and merge operands — so that one codec serves both, the `u32` one writing exactly
//! today's bytes. The two widths have their own tags: a value is never read as the other width
//! (a reader given one reports [`Error::Corruption`] saying so).
//!
//! The `u64` ids' sets are [`RoaringTreemap`]s, serialized in the portable 64-bit layout of the
//! Roaring format specification (what [`RoaringTreemap::serialize_into`] writes): a little-endian
//! `u64` count of 32-bit buckets, then for each, in increasing order of its key (the ids' high 32
//! bits), the key as a little-endian `u32` and the bucket's low bits as a portable 32-bit roaring
//! bitmap. This module writes no empty bucket and reads strictly (keys increasing, nothing after
//! the last bucket), so that one set has one encoding.

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::ops::{BitOrAssign, SubAssign};

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::Error;
use crate::Result;

/// A global page id of a distributed index's partition (SCALEOUT §4): allocated in the order one
/// machine gives them out, so ties broken by id fall as on one node; its doc partition is
/// `id mod J`. The single-node index's is [`super::codec::DocId`] (`u32`).
pub type WideDocId = u64;
/// A global cluster id of a distributed index's partition (SCALEOUT §4), as [`WideDocId`].
pub type WideClusterId = u64;
/// "No page" among [`WideDocId`]s (`u64::MAX`): the `similar_to` of a page that was not a near
/// duplicate of any page, as [`super::codec::NO_DOC`] among `u32` ids (FORMAT.md "Document
/// record").
pub const NO_WIDE_DOC: WideDocId = u64::MAX;

mod sealed {
    /// Only this module's widths and sets implement the traits sealed by it.
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for roaring::RoaringBitmap {}
    impl Sealed for roaring::RoaringTreemap {}
}

/// The width of page and cluster ids in stored values (SCALEOUT §4; FORMAT.md "Document record",
/// "Cluster record", "Postings"): `u32` for a single-node index, whose codecs it leaves byte for
/// byte as they were, and `u64` for the global ids of a distributed index's partitions. Sealed:
/// implemented for these two only.
pub trait IdWidth:
    sealed::Sealed + Copy + Default + Eq + Ord + Hash + Debug + Display + Send + Sync + 'static
{
    /// Whether the ids are the `u64` ones (branches of the codecs on it are decided at compile
    /// time).
    const WIDE: bool;
    /// The width's name in messages: `"u32"` or `"u64"`.
    const NAME: &'static str;
    /// Bytes of one id, big-endian in keys and values: 4 or 8.
    const BYTES: usize;
    /// "No page": the `similar_to` of a page that is not a near duplicate (`u32::MAX`,
    /// [`super::codec::NO_DOC`]; `u64::MAX`, [`NO_WIDE_DOC`]).
    const NONE: Self;
    /// The document record's tag this width writes (when it knows the raw page hash, for
    /// `u32`): `0xD3` or `0xD4`.
    const TAG_DOC: u8;
    /// The cluster record's tag: `0xC1` or `0xC2`.
    const TAG_CLUSTER: u8;
    /// The tag of a posting stored as a sorted list of ids: `0x50` or `0x54`.
    const TAG_POSTING_LIST: u8;
    /// The tag of a posting stored as a serialized set: `0x52` (roaring bitmap) or `0x56`
    /// (roaring treemap).
    const TAG_POSTING_SET: u8;
    /// The merge operand that adds ids: `+` or `a`.
    const OP_ADD: u8;
    /// The merge operand that removes ids: `-` or `r`.
    const OP_REMOVE: u8;
    /// The merge operand of a folded delta (removes, then adds): `D` or `d`.
    const OP_DELTA: u8;
    /// The set of ids postings and clusters hold: [`RoaringBitmap`] or [`RoaringTreemap`].
    type Set: IdSet<Self>;
    /// The big-endian bytes of an id (a key, or a field of a value): `[u8; 4]` or `[u8; 8]`.
    type Bytes: AsRef<[u8]> + Copy + Debug + Eq + Send + Sync;

    /// The id's big-endian bytes: order-preserving (keys sort as the ids do).
    fn to_be(self) -> Self::Bytes;
    /// The id of exactly [`Self::BYTES`] big-endian bytes; `None` for another length.
    fn from_be(bytes: &[u8]) -> Option<Self>;
    /// The id as a `u64` (lossless).
    fn to_u64(self) -> u64;
    /// The id `v` in this width; `None` when it does not fit.
    fn from_u64(v: u64) -> Option<Self>;
}

/// A set of ids of one width (sealed: [`RoaringBitmap`] for `u32`, [`RoaringTreemap`] for
/// `u64`): what the codecs and the merge operator need of it (SCALEOUT §4; FORMAT.md
/// "Postings").
pub trait IdSet<I>:
    sealed::Sealed
    + Clone
    + Default
    + Debug
    + PartialEq
    + FromIterator<I>
    + for<'a> SubAssign<&'a Self>
    + for<'a> BitOrAssign<&'a Self>
    + Send
    + Sync
{
    /// Adds an id; whether it was absent.
    fn insert(&mut self, id: I) -> bool;
    /// Removes an id; whether it was present.
    fn remove(&mut self, id: I) -> bool;
    /// Whether the set holds `id`.
    fn contains(&self, id: I) -> bool;
    /// Number of ids.
    fn len(&self) -> u64;
    /// Whether the set holds no id.
    fn is_empty(&self) -> bool;
    /// The ids in increasing order.
    fn ids(&self) -> impl Iterator<Item = I> + '_;
    /// The set of ids given in increasing order, built in one pass; ids out of order are still
    /// taken, one by one.
    fn from_sorted<J: Iterator<Item = I> + Clone>(ids: J) -> Self;
    /// Bytes [`Self::serialize`] writes.
    fn serialized_size(&self) -> usize;
    /// Appends the set's portable serialization (module docs) to `out`.
    fn serialize(&self, out: &mut Vec<u8>);
    /// Reads a set [`Self::serialize`] wrote at the start of `bytes`: a `RoaringBitmap` as the
    /// single-node index always has (bytes after it are not looked at), a `RoaringTreemap`
    /// strictly (the whole of `bytes`, buckets in increasing order).
    ///
    /// # Errors
    /// What is wrong with the bytes, for a [`Error::Corruption`] reason.
    fn deserialize(bytes: &[u8]) -> std::result::Result<Self, String>;
}

impl IdWidth for u32 {
    const WIDE: bool = false;
    const NAME: &'static str = "u32";
    const BYTES: usize = 4;
    const NONE: Self = u32::MAX;
    const TAG_DOC: u8 = 0xD3;
    const TAG_CLUSTER: u8 = 0xC1;
    const TAG_POSTING_LIST: u8 = 0x50;
    const TAG_POSTING_SET: u8 = 0x52;
    const OP_ADD: u8 = b'+';
    const OP_REMOVE: u8 = b'-';
    const OP_DELTA: u8 = b'D';
    type Set = RoaringBitmap;
    type Bytes = [u8; 4];

    fn to_be(self) -> [u8; 4] {
        self.to_be_bytes()
    }
    fn from_be(bytes: &[u8]) -> Option<Self> {
        <[u8; 4]>::try_from(bytes).ok().map(u32::from_be_bytes)
    }
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
}

impl IdWidth for u64 {
    const WIDE: bool = true;
    const NAME: &'static str = "u64";
    const BYTES: usize = 8;
    const NONE: Self = NO_WIDE_DOC;
    const TAG_DOC: u8 = 0xD4;
    const TAG_CLUSTER: u8 = 0xC2;
    const TAG_POSTING_LIST: u8 = 0x54;
    const TAG_POSTING_SET: u8 = 0x56;
    const OP_ADD: u8 = b'a';
    const OP_REMOVE: u8 = b'r';
    const OP_DELTA: u8 = b'd';
    type Set = RoaringTreemap;
    type Bytes = [u8; 8];

    fn to_be(self) -> [u8; 8] {
        self.to_be_bytes()
    }
    fn from_be(bytes: &[u8]) -> Option<Self> {
        <[u8; 8]>::try_from(bytes).ok().map(u64::from_be_bytes)
    }
    fn to_u64(self) -> u64 {
        self
    }
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
}

impl IdSet<u32> for RoaringBitmap {
    fn insert(&mut self, id: u32) -> bool {
        RoaringBitmap::insert(self, id)
    }
    fn remove(&mut self, id: u32) -> bool {
        RoaringBitmap::remove(self, id)
    }
    fn contains(&self, id: u32) -> bool {
        RoaringBitmap::contains(self, id)
    }
    fn len(&self) -> u64 {
        RoaringBitmap::len(self)
    }
    fn is_empty(&self) -> bool {
        RoaringBitmap::is_empty(self)
    }
    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.iter()
    }
    fn from_sorted<J: Iterator<Item = u32> + Clone>(ids: J) -> Self {
        RoaringBitmap::from_sorted_iter(ids.clone()).unwrap_or_else(|_| ids.collect())
    }
    fn serialized_size(&self) -> usize {
        RoaringBitmap::serialized_size(self)
    }
    fn serialize(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail.
        let _ = self.serialize_into(out);
    }
    fn deserialize(bytes: &[u8]) -> std::result::Result<Self, String> {
        RoaringBitmap::deserialize_from(bytes).map_err(|e| e.to_string())
    }
}

impl IdSet<u64> for RoaringTreemap {
    fn insert(&mut self, id: u64) -> bool {
        RoaringTreemap::insert(self, id)
    }
    fn remove(&mut self, id: u64) -> bool {
        RoaringTreemap::remove(self, id)
    }
    fn contains(&self, id: u64) -> bool {
        RoaringTreemap::contains(self, id)
    }
    fn len(&self) -> u64 {
        RoaringTreemap::len(self)
    }
    fn is_empty(&self) -> bool {
        RoaringTreemap::is_empty(self)
    }
    fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter()
    }
    fn from_sorted<J: Iterator<Item = u64> + Clone>(ids: J) -> Self {
        RoaringTreemap::from_sorted_iter(ids.clone()).unwrap_or_else(|_| ids.collect())
    }
    fn serialized_size(&self) -> usize {
        self.bitmaps()
            .filter(|(_, b)| !b.is_empty())
            .fold(8, |n, (_, b)| n + 4 + b.serialized_size())
    }
    fn serialize(&self, out: &mut Vec<u8>) {
        let buckets = self.bitmaps().filter(|(_, b)| !b.is_empty());
        out.extend_from_slice(&(buckets.clone().count() as u64).to_le_bytes());
        for (key, bitmap) in buckets {
            out.extend_from_slice(&key.to_le_bytes());
            // Writing into a Vec cannot fail.
            let _ = bitmap.serialize_into(&mut *out);
        }
    }
    fn deserialize(bytes: &[u8]) -> std::result::Result<Self, String> {
        let mut rest = bytes;
        let count = take_le::<8>(&mut rest).map(u64::from_le_bytes)?;
        let mut buckets = Vec::new();
        let mut last: Option<u32> = None;
        for i in 0..count {
            let key = take_le::<4>(&mut rest).map(u32::from_le_bytes)?;
            if last.is_some_and(|l| key <= l) {
                return Err(format!(
                    "treemap bucket {i} has key {key:#x}, not above the previous one"
                ));
            }
            last = Some(key);
            // The bitmap reader advances `rest` past what it read.
            let bitmap = RoaringBitmap::deserialize_from(&mut rest)
                .map_err(|e| format!("treemap bucket {i} (key {key:#x}): {e}"))?;
            if !bitmap.is_empty() {
                buckets.push((key, bitmap));
            }
        }
        if !rest.is_empty() {
            return Err(format!(
                "{} bytes after the treemap's {count} buckets",
                rest.len()
            ));
        }
        Ok(RoaringTreemap::from_bitmaps(buckets))
    }
}

/// The first `N` bytes of `rest`, which then starts past them.
fn take_le<const N: usize>(rest: &mut &[u8]) -> std::result::Result<[u8; N], String> {
    if rest.len() < N {
        return Err(format!(
            "treemap truncated ({} bytes left, {N} wanted)",
            rest.len()
        ));
    }
    let (head, tail) = rest.split_at(N);
    *rest = tail;
    let mut a = [0u8; N];
    a.copy_from_slice(head);
    Ok(a)
}

/// Why a value of tag `tag`, a tag of the other width than `I`'s, is refused: a reason for
/// [`Error::Corruption`] naming both widths (SCALEOUT §4).
pub(crate) fn width_mismatch<I: IdWidth>(tag: u8) -> String {
    let (other, theirs, ours) = if I::WIDE {
        (
            "u32",
            "a single-node index's",
            "a distributed index's partitions'",
        )
    } else {
        (
            "u64",
            "a distributed index's partition's",
            "a single-node index's",
        )
    };
    format!(
        "{tag:#04x} is the tag of a value of {other} ids ({theirs}, SCALEOUT §4), which a \
         reader of {} ids ({ours}) does not read",
        I::NAME
    )
}

/// Big-endian key of a `u64` id (SCALEOUT §4: the `docs`, `texts` and `clusters` keys of a
/// distributed index's partitions; FORMAT.md "Column families"): 8 bytes that sort as the ids
/// do. The `u32` keys of a single-node index are [`super::id_key`]'s.
pub fn wide_id_key(id: WideDocId) -> [u8; 8] {
    id.to_be_bytes()
}

/// Decodes the big-endian id of width `I` of a key or value read at `key` in `cf` (SCALEOUT
/// §4; FORMAT.md "Column families"): [`super::decode_u32`] for `u32`, and 8 bytes for `u64`.
///
/// # Errors
/// [`Error::Corruption`] when `bytes` are not [`IdWidth::BYTES`] long (naming the width a
/// 4- or 8-byte id would be).
pub fn decode_id<I: IdWidth>(cf: &'static str, key: &[u8], bytes: &[u8]) -> Result<I> {
    I::from_be(bytes).ok_or_else(|| {
        let hint = match (bytes.len(), I::WIDE) {
            (4, true) => " (a u32 id of a single-node index)",
            (8, false) => " (a u64 id of a distributed index's partition)",
            _ => "",
        };
        Error::corruption(
            cf,
            key,
            format!(
                "a {} id is {} bytes, found {}{hint}",
                I::NAME,
                I::BYTES,
                bytes.len()
            ),
        )
    })
}

/// Decodes a `u64` id key or value ([`wide_id_key`]).
///
/// # Errors
/// [`Error::Corruption`] when it is not 8 bytes.
pub fn decode_wide_id(cf: &'static str, key: &[u8], bytes: &[u8]) -> Result<WideDocId> {
    decode_id::<u64>(cf, key, bytes)
}

#[cfg(test)]
mod tests;
