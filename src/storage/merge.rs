//! The postings merge operator: an insert adds its id to a posting, a delete removes it, and
//! neither reads the posting first (SPEC §3).
//!
//! Operands: `0x2B` (`+`) followed by big-endian `u32` ids to add; `0x2D` (`-`) followed by ids to
//! remove; `0x44` (`D`) a delta from a partial merge: `u32` length of an add bitmap, the add
//! bitmap, then the remove bitmap (both roaring), meaning "remove these, then add those".
//! Operands are applied in order. On anything undecodable the operator returns `None`, which
//! RocksDB reports as a corruption error on read: it never panics.
//!
//! The postings of a distributed index's key partitions hold global `u64` page ids (SCALEOUT §4)
//! and have operands of their own, under the same operator (its name is kept in RocksDB's
//! OPTIONS file: another would stop the databases written before from opening): `a` (`0x61`)
//! followed by big-endian `u64` ids to add, `r` (`0x72`) ids to remove, `d` (`0x64`) a delta of
//! two portable roaring treemaps (`u32` length of the add treemap, the add treemap, the remove
//! treemap), over the `u64` posting values ([`super::codec::TAG_WIDE_POSTING_LIST`],
//! [`super::codec::TAG_WIDE_POSTING_TREEMAP`]). The width of a key is its stored value's, or its
//! first operand's: a key whose value and operands are not all of one width does not merge
//! (`None`, a corruption error on read), and a partial merge of such operands leaves them as they
//! are for the full merge to refuse.

#[cfg(test)]
use roaring::RoaringBitmap;
use rocksdb::MergeOperands;

#[cfg(test)]
use super::codec::encode_posting;
use super::codec::{decode_posting_as, encode_posting_as, POSTING_LIST_MAX};
use super::codec::{TAG_WIDE_POSTING_LIST, TAG_WIDE_POSTING_TREEMAP};
use super::width::{IdSet, IdWidth};

/// Operand tag: add ids.
pub const OP_ADD: u8 = b'+';
/// Operand tag: remove ids.
pub const OP_REMOVE: u8 = b'-';
/// Operand tag: a delta (removes, then adds) produced by a partial merge (the code reads it as
/// `IdWidth::OP_DELTA`; the tests name it).
#[cfg(test)]
pub const OP_DELTA: u8 = <u32 as IdWidth>::OP_DELTA;
/// Operand tag: add `u64` ids (a distributed index's key partition, SCALEOUT §4; FORMAT.md
/// "Postings"): `a` and the ids, big-endian.
pub const OP_WIDE_ADD: u8 = <u64 as IdWidth>::OP_ADD;
/// Operand tag: remove `u64` ids (SCALEOUT §4; FORMAT.md "Postings"): `r` and the ids.
pub const OP_WIDE_REMOVE: u8 = <u64 as IdWidth>::OP_REMOVE;
/// Operand tag: a delta of `u64` ids (removes, then adds; SCALEOUT §4, FORMAT.md "Postings"):
/// `d`, the add treemap's length (`u32`), the add treemap, the remove treemap.
pub const OP_WIDE_DELTA: u8 = <u64 as IdWidth>::OP_DELTA;

/// The operator's name, stored in RocksDB's options file.
pub const NAME: &str = "neardup.postings.v1";

/// An operand that adds one id.
pub fn add_operand(id: u32) -> [u8; 5] {
    let b = id.to_be_bytes();
    [OP_ADD, b[0], b[1], b[2], b[3]]
}

/// An operand that removes one id.
pub fn remove_operand(id: u32) -> [u8; 5] {
    let b = id.to_be_bytes();
    [OP_REMOVE, b[0], b[1], b[2], b[3]]
}

/// An operand that adds one `u64` id to a posting of a distributed index's key partition
/// (SCALEOUT §4; FORMAT.md "Postings").
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "unwired until the format 7 partitions")
)]
pub fn wide_add_operand(id: u64) -> [u8; 9] {
    let mut op = [OP_WIDE_ADD; 9];
    op[1..].copy_from_slice(&id.to_be_bytes());
    op
}

/// An operand that removes one `u64` id from a posting of a distributed index's key partition
/// (SCALEOUT §4; FORMAT.md "Postings").
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "unwired until the format 7 partitions")
)]
pub fn wide_remove_operand(id: u64) -> [u8; 9] {
    let mut op = [OP_WIDE_REMOVE; 9];
    op[1..].copy_from_slice(&id.to_be_bytes());
    op
}

/// A pending change of a posting of ids of width `I`: ids to remove, then ids to add. [`Delta`]
/// for `u32` ids, [`WideDelta`] for the `u64` ids of a distributed index's key partitions
/// (SCALEOUT §4; FORMAT.md "Postings").
#[derive(Default, Debug, Clone, PartialEq)]
pub struct PostingDelta<I: IdWidth> {
    /// Ids to add (after removing).
    pub add: I::Set,
    /// Ids to remove.
    pub remove: I::Set,
}

/// A pending change of a posting: ids to remove, then ids to add.
pub type Delta = PostingDelta<u32>;

/// A pending change of a posting of `u64` ids, in [`RoaringTreemap`](roaring::RoaringTreemap)s
/// (a distributed index's key partitions, SCALEOUT §4; FORMAT.md "Postings"): its operands are
/// `a`, `r` and `d`.
pub type WideDelta = PostingDelta<u64>;

impl<I: IdWidth> PostingDelta<I> {
    /// Folds one operand of this width into the delta (`self` then `op`); `None` when it does
    /// not decode, or is of the other width.
    pub fn push(&mut self, op: &[u8]) -> Option<()> {
        let (&tag, body) = op.split_first()?;
        if tag == I::OP_ADD || tag == I::OP_REMOVE {
            if !body.len().is_multiple_of(I::BYTES) {
                return None;
            }
            for c in body.chunks_exact(I::BYTES) {
                let id = I::from_be(c)?;
                if tag == I::OP_ADD {
                    self.add.insert(id);
                } else {
                    self.add.remove(id);
                    self.remove.insert(id);
                }
            }
        } else if tag == I::OP_DELTA {
            if body.len() < 4 {
                return None;
            }
            let n = u32::from_be_bytes([body[0], body[1], body[2], body[3]]) as usize;
            let rest = &body[4..];
            if rest.len() < n {
                return None;
            }
            let add = I::Set::deserialize(&rest[..n]).ok()?;
            let remove = I::Set::deserialize(&rest[n..]).ok()?;
            self.then(&PostingDelta { add, remove });
        } else {
            return None;
        }
        Some(())
    }

    /// Composes `next` after this delta: applying the result is applying this delta, then
    /// `next`.
    pub fn then(&mut self, next: &Self) {
        // (X − R1 ∪ A1) − R2 ∪ A2 = X − (R1 ∪ R2) ∪ ((A1 − R2) ∪ A2)
        self.add -= &next.remove;
        self.remove |= &next.remove;
        self.add |= &next.add;
    }

    /// Applies the delta to a posting.
    pub fn apply(&self, base: &mut I::Set) {
        *base -= &self.remove;
        *base |= &self.add;
    }

    /// The delta as one operand: a plain add operand when it removes nothing (the usual
    /// case, and the smaller encoding for a few ids), otherwise a delta operand.
    pub fn operand(&self) -> Vec<u8> {
        if !self.remove.is_empty() {
            return self.encode();
        }
        let mut b = Vec::with_capacity(1 + I::BYTES * self.add.len() as usize);
        b.push(I::OP_ADD);
        for id in self.add.ids() {
            b.extend_from_slice(id.to_be().as_ref());
        }
        b
    }

    /// Encodes the delta as one operand.
    pub fn encode(&self) -> Vec<u8> {
        let mut b =
            Vec::with_capacity(5 + self.add.serialized_size() + self.remove.serialized_size());
        b.push(I::OP_DELTA);
        b.extend_from_slice(&(self.add.serialized_size() as u32).to_be_bytes());
        self.add.serialize(&mut b);
        self.remove.serialize(&mut b);
        b
    }
}

/// Whether a key's merge is of `u64` ids: its stored value's tag, or else its first operand's,
/// is one of theirs (SCALEOUT §4).
fn is_wide(first: Option<&[u8]>) -> bool {
    matches!(
        first.and_then(<[u8]>::first),
        Some(
            &(TAG_WIDE_POSTING_LIST
                | TAG_WIDE_POSTING_TREEMAP
                | OP_WIDE_ADD
                | OP_WIDE_REMOVE
                | OP_WIDE_DELTA)
        )
    )
}

/// Full merge: the stored posting (if any) with the operands applied in order, of the width of
/// the stored posting or else of the first operand.
pub fn full_merge(
    _key: &[u8],
    existing: Option<&[u8]>,
    operands: &MergeOperands,
) -> Option<Vec<u8>> {
    merge_either(existing, operands)
}

/// [`full_merge`] over any sequence of operands, of the width of the stored posting or else of
/// the first operand.
fn merge_either<'a, J>(existing: Option<&[u8]>, operands: J) -> Option<Vec<u8>>
where
    J: IntoIterator<Item = &'a [u8]> + Clone,
{
    if is_wide(existing.or_else(|| operands.clone().into_iter().next())) {
        merge_posting_as::<u64, J>(existing, operands)
    } else {
        merge_posting(existing, operands)
    }
}

/// [`full_merge`] of `u32` ids over any sequence of operands.
fn merge_posting<'a, J>(existing: Option<&[u8]>, operands: J) -> Option<Vec<u8>>
where
    J: IntoIterator<Item = &'a [u8]> + Clone,
{
    merge_posting_as::<u32, J>(existing, operands)
}

/// [`full_merge`] of ids of width `I` over any sequence of operands: the fast path when it
/// applies, the general one otherwise.
fn merge_posting_as<'a, I: IdWidth, J>(existing: Option<&[u8]>, operands: J) -> Option<Vec<u8>>
where
    J: IntoIterator<Item = &'a [u8]> + Clone,
{
    union_of_adds::<I>(existing, operands.clone())
        .or_else(|| apply_in_order_as::<I>(existing, operands))
}

/// [`apply_in_order_as`] of `u32` ids.
#[cfg(test)]
fn apply_in_order<'a>(
    existing: Option<&[u8]>,
    operands: impl IntoIterator<Item = &'a [u8]>,
) -> Option<Vec<u8>> {
    apply_in_order_as::<u32>(existing, operands)
}

/// The general full merge: the stored posting decoded, the operands folded into one delta and
/// applied, the result encoded.
fn apply_in_order_as<'a, I: IdWidth>(
    existing: Option<&[u8]>,
    operands: impl IntoIterator<Item = &'a [u8]>,
) -> Option<Vec<u8>> {
    let mut base = match existing {
        Some(v) => decode_posting_as::<I>(v).ok()?,
        None => I::Set::default(),
    };
    let mut delta = PostingDelta::<I>::default();
    for op in operands {
        delta.push(op)?;
    }
    delta.apply(&mut base);
    Some(encode_posting_as::<I>(&base))
}

/// The fast path of [`full_merge`] for the usual read of a recent posting: no stored posting or
/// a short id list, and operands that only add ids. The result is their union, encoded exactly as
/// the general path encodes it, without building a set for the short lists. `None` when the
/// inputs take another form (or do not decode): the general path then decides.
fn union_of_adds<'a, I: IdWidth>(
    existing: Option<&[u8]>,
    operands: impl IntoIterator<Item = &'a [u8]>,
) -> Option<Vec<u8>> {
    fn push_ids<I: IdWidth>(ids: &mut Vec<I>, body: &[u8]) -> Option<()> {
        if !body.len().is_multiple_of(I::BYTES) {
            return None;
        }
        ids.reserve(body.len() / I::BYTES);
        for c in body.chunks_exact(I::BYTES) {
            ids.push(I::from_be(c)?);
        }
        Some(())
    }
    let mut ids: Vec<I> = Vec::new();
    match existing.map(<[u8]>::split_first) {
        None => {}
        Some(Some((&tag, body))) if tag == I::TAG_POSTING_LIST => push_ids(&mut ids, body)?,
        Some(_) => return None,
    }
    for op in operands {
        match op.split_first() {
            Some((&tag, body)) if tag == I::OP_ADD => push_ids(&mut ids, body)?,
            _ => return None,
        }
    }
    ids.sort_unstable();
    ids.dedup();
    if ids.len() as u64 > POSTING_LIST_MAX {
        return Some(encode_posting_as::<I>(&I::Set::from_sorted(
            ids.into_iter(),
        )));
    }
    let mut b = Vec::with_capacity(1 + I::BYTES * ids.len());
    b.push(I::TAG_POSTING_LIST);
    for id in ids {
        b.extend_from_slice(id.to_be().as_ref());
    }
    Some(b)
}

/// Partial merge: several operands folded into one, of the width of the first. A fold that
/// removes nothing and adds a short list is written as an add operand (smaller than a delta, and
/// read by [`full_merge`]'s fast path); any other as a delta operand.
pub fn partial_merge(
    _key: &[u8],
    _existing: Option<&[u8]>,
    operands: &MergeOperands,
) -> Option<Vec<u8>> {
    fold_either(operands)
}

/// [`partial_merge`] over any sequence of operands, of the width of the first.
fn fold_either<'a, J>(operands: J) -> Option<Vec<u8>>
where
    J: IntoIterator<Item = &'a [u8]> + Clone,
{
    if is_wide(operands.clone().into_iter().next()) {
        fold::<u64>(operands)
    } else {
        fold::<u32>(operands)
    }
}

/// [`partial_merge`] of operands of width `I`; `None` when one does not decode or is of the
/// other width.
fn fold<'a, I: IdWidth>(operands: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut delta = PostingDelta::<I>::default();
    for op in operands {
        delta.push(op)?;
    }
    Some(if delta.add.len() <= POSTING_LIST_MAX {
        delta.operand()
    } else {
        delta.encode()
    })
}

#[cfg(test)]
mod wide_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_composition_matches_sequential_application() {
        let mut base: RoaringBitmap = [1u32, 2, 3].into_iter().collect();
        let ops: Vec<Vec<u8>> = vec![
            add_operand(4).to_vec(),
            remove_operand(2).to_vec(),
            add_operand(2).to_vec(),
            remove_operand(4).to_vec(),
            remove_operand(1).to_vec(),
        ];
        // Split in two partial merges, then fold.
        let mut first = Delta::default();
        for op in &ops[..2] {
            first.push(op).unwrap();
        }
        let mut second = Delta::default();
        for op in &ops[2..] {
            second.push(op).unwrap();
        }
        let mut folded = Delta::default();
        folded.push(&first.encode()).unwrap();
        folded.push(&second.encode()).unwrap();
        folded.apply(&mut base);
        let expected: RoaringBitmap = [2u32, 3].into_iter().collect();
        assert_eq!(base, expected);
    }

    #[test]
    fn one_operand_per_delta_reproduces_the_delta() {
        let mut adds = Delta::default();
        for id in [7u32, 3, 70_000] {
            adds.push(&add_operand(id)).unwrap();
        }
        let op = adds.operand();
        assert_eq!(op[0], OP_ADD);
        assert_eq!(op.len(), 1 + 3 * 4);
        let mut mixed = adds.clone();
        mixed.push(&remove_operand(3)).unwrap();
        mixed.push(&remove_operand(9)).unwrap();
        assert_eq!(mixed.operand()[0], OP_DELTA);
        for d in [adds, mixed] {
            let mut again = Delta::default();
            again.push(&d.operand()).unwrap();
            assert_eq!(again, d);
        }
    }

    proptest::proptest! {
        /// The fast path of the full merge gives the bytes of the general path, whatever the
        /// stored posting (absent, a short list, a bitmap) and the operands (adds, removes,
        /// deltas, short and long).
        #[test]
        fn fast_full_merge_equals_the_general_one(
            base in proptest::option::of(proptest::collection::vec(0u32..200_000, 0..40)),
            ops in proptest::collection::vec(
                (0u8..4, proptest::collection::vec(0u32..200_000, 0..30)),
                0..6,
            ),
        ) {
            let existing = base.map(|ids| encode_posting(&ids.into_iter().collect()));
            let ops: Vec<Vec<u8>> = ops
                .into_iter()
                .map(|(tag, ids)| {
                    let set: RoaringBitmap = ids.iter().copied().collect();
                    match tag {
                        0 | 1 => {
                            let mut op = vec![OP_ADD];
                            op.extend(ids.iter().flat_map(|i| i.to_be_bytes()));
                            op
                        }
                        2 => {
                            let mut op = vec![OP_REMOVE];
                            op.extend(ids.iter().flat_map(|i| i.to_be_bytes()));
                            op
                        }
                        _ => Delta { add: set.clone(), remove: set }.encode(),
                    }
                })
                .collect();
            let operands = ops.iter().map(Vec::as_slice);
            let fast = merge_posting(existing.as_deref(), operands.clone());
            let general = apply_in_order(existing.as_deref(), operands);
            proptest::prop_assert!(general.is_some());
            proptest::prop_assert_eq!(fast, general);
        }
    }

    #[test]
    fn a_short_fold_of_adds_is_an_add_operand() {
        let mut d = Delta::default();
        for id in [9u32, 4, 70_000] {
            d.push(&add_operand(id)).unwrap();
        }
        assert!(d.add.len() <= POSTING_LIST_MAX);
        // What `partial_merge` writes for it, and that it reads back as the same delta.
        let op = d.operand();
        assert_eq!(op[0], OP_ADD);
        let mut again = Delta::default();
        again.push(&op).unwrap();
        assert_eq!(again, d);
        // A truncated add operand is refused by both paths.
        let bad: [&[u8]; 1] = [&[OP_ADD, 0, 0]];
        assert!(merge_posting(None, bad).is_none());
    }

    #[test]
    fn garbage_operand_is_refused() {
        let mut d = Delta::default();
        assert!(d.push(&[]).is_none());
        assert!(d.push(&[b'?', 0, 0, 0, 1]).is_none());
        assert!(d.push(&[OP_ADD, 0, 0]).is_none());
        assert!(d.push(&[OP_DELTA, 0, 0, 0, 9, 1]).is_none());
    }
}
