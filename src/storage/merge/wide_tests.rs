//! Unit tests of the merge operator on postings of `u64` ids (a distributed index's key
//! partitions, SCALEOUT §4): folding in any split equals applying in order, and a key that mixes
//! widths does not merge.

use std::collections::BTreeSet;

use proptest::prelude::*;
use roaring::RoaringTreemap;

use super::*;
use crate::storage::codec::{decode_wide_posting, encode_wide_posting};
use crate::storage::fuzz::{model, operand, Op};

/// The model's operations on `u64` ids.
type WideOp = Op<u64>;

/// An id past 2³².
const BIG: u64 = (9 << 32) | 5;

/// Ids that collide often (a few 32-bit buckets, a few ids in each) and any `u64`.
fn id() -> impl Strategy<Value = u64> {
    prop_oneof![
        (0u64..4, 0u64..48).prop_map(|(hi, lo)| (hi << 32) | lo),
        any::<u64>(),
    ]
}

fn ops() -> impl Strategy<Value = Vec<WideOp>> {
    let ids = || prop::collection::vec(id(), 0..24);
    prop::collection::vec(
        prop_oneof![ids().prop_map(WideOp::Add), ids().prop_map(WideOp::Remove)],
        0..10,
    )
}

fn read(v: Option<Vec<u8>>) -> BTreeSet<u64> {
    decode_wide_posting(&v.expect("merged"))
        .expect("a wide posting")
        .iter()
        .collect()
}

proptest! {
    /// Operands folded by partial merges in any split, then fully merged over the stored
    /// posting, give the posting of applying them in order; so does one full merge of them all.
    #[test]
    fn wide_folds_in_any_split_equal_applying_in_order(
        base in prop::collection::btree_set(id(), 0..40),
        ops in ops(),
        cuts in (any::<usize>(), any::<usize>()),
        stored in any::<bool>(),
    ) {
        let expected = model(&base, &ops);
        let existing = (stored || !base.is_empty()).then(|| {
            encode_wide_posting(&base.iter().copied().collect::<RoaringTreemap>())
        });
        let operands: Vec<Vec<u8>> = ops.iter().map(operand).collect();
        let all = operands.iter().map(Vec::as_slice);
        if existing.is_some() || !operands.is_empty() {
            prop_assert_eq!(read(merge_either(existing.as_deref(), all)), expected.clone());
        }
        let (mut i, mut j) = (cuts.0 % (ops.len() + 1), cuts.1 % (ops.len() + 1));
        if i > j {
            std::mem::swap(&mut i, &mut j);
        }
        let folded: Vec<Vec<u8>> = [&operands[..i], &operands[i..j], &operands[j..]]
            .into_iter()
            .filter(|part| !part.is_empty())
            .map(|part| fold_either(part.iter().map(Vec::as_slice)).expect("a fold"))
            .collect();
        if existing.is_some() || !folded.is_empty() {
            let merged = merge_either(existing.as_deref(), folded.iter().map(Vec::as_slice));
            prop_assert_eq!(read(merged), expected);
        }
        // Each fold reads back as the delta it folded.
        for f in &folded {
            let mut again = WideDelta::default();
            prop_assert!(again.push(f).is_some());
            let mut twice = WideDelta::default();
            prop_assert!(twice.push(&again.encode()).is_some());
            prop_assert_eq!(twice, again);
        }
    }

    /// The fast path of the wide full merge gives the bytes of the general path.
    #[test]
    fn wide_fast_full_merge_equals_the_general_one(
        base in proptest::option::of(prop::collection::vec(id(), 0..40)),
        ops in prop::collection::vec((0u8..4, prop::collection::vec(id(), 0..30)), 0..6),
    ) {
        let existing = base.map(|ids| encode_wide_posting(&ids.into_iter().collect()));
        let ops: Vec<Vec<u8>> = ops
            .into_iter()
            .map(|(tag, ids)| match tag {
                0 | 1 => operand(&WideOp::Add(ids)),
                2 => operand(&WideOp::Remove(ids)),
                _ => {
                    let set: RoaringTreemap = ids.into_iter().collect();
                    WideDelta { add: set.clone(), remove: set }.encode()
                }
            })
            .collect();
        let operands = ops.iter().map(Vec::as_slice);
        let fast = merge_posting_as::<u64, _>(existing.as_deref(), operands.clone());
        let general = apply_in_order_as::<u64>(existing.as_deref(), operands);
        prop_assert!(general.is_some());
        prop_assert_eq!(fast, general);
    }
}

#[test]
fn wide_operands_are_their_own_bytes() {
    assert_eq!(
        wide_add_operand(BIG),
        [b'a', 0, 0, 0, 9, 0, 0, 0, 5],
        "a ‖ the id, big-endian"
    );
    assert_eq!(wide_remove_operand(BIG)[0], b'r');
    let mut d = WideDelta::default();
    d.push(&wide_add_operand(BIG)).unwrap();
    d.push(&wide_add_operand(3)).unwrap();
    assert_eq!(
        d.operand(),
        [&[b'a'][..], &3u64.to_be_bytes(), &BIG.to_be_bytes()].concat()
    );
    d.push(&wide_remove_operand(3)).unwrap();
    let op = d.operand();
    assert_eq!(op[0], OP_WIDE_DELTA);
    let n = u32::from_be_bytes(op[1..5].try_into().unwrap()) as usize;
    let add = <RoaringTreemap as IdSet<u64>>::deserialize(&op[5..5 + n]).unwrap();
    let remove = <RoaringTreemap as IdSet<u64>>::deserialize(&op[5 + n..]).unwrap();
    assert_eq!(add, [BIG].into_iter().collect());
    assert_eq!(remove, [3].into_iter().collect());
    // A narrow delta does not take wide operands, nor the reverse.
    assert!(Delta::default().push(&wide_add_operand(1)).is_none());
    assert!(Delta::default().push(&d.encode()).is_none());
    assert!(WideDelta::default().push(&add_operand(1)).is_none());
    assert!(WideDelta::default().push(&remove_operand(1)).is_none());
    let mut narrow = Delta::default();
    narrow.push(&add_operand(1)).unwrap();
    assert!(WideDelta::default().push(&narrow.encode()).is_none());
    // Garbage.
    let mut w = WideDelta::default();
    assert!(w.push(&[OP_WIDE_ADD, 0, 0, 0, 1]).is_none());
    assert!(w.push(&[OP_WIDE_DELTA, 0, 0, 0, 9, 1]).is_none());
    assert!(w.push(&[]).is_none());
}

#[test]
fn a_key_that_mixes_widths_does_not_merge() {
    let wide_value = encode_wide_posting(&[BIG].into_iter().collect());
    let narrow_value = encode_posting(&[7u32].into_iter().collect());
    let (wa, wr) = (wide_add_operand(BIG + 1), wide_remove_operand(BIG));
    let (na, nr) = (add_operand(7), remove_operand(7));
    let mut wd = WideDelta::default();
    wd.push(&wa).unwrap();
    wd.push(&wr).unwrap();
    let wd = wd.encode();
    let mut nd = Delta::default();
    nd.push(&na).unwrap();
    nd.push(&nr).unwrap();
    let nd = nd.encode();
    type Case<'a> = (Option<&'a [u8]>, Vec<&'a [u8]>);
    let cases: [Case; 8] = [
        (Some(&narrow_value), vec![&wa]),
        (Some(&narrow_value), vec![&na, &wd]),
        (Some(&wide_value), vec![&na]),
        (Some(&wide_value), vec![&wa, &nd]),
        (None, vec![&wa, &nr]),
        (None, vec![&na, &wr]),
        (None, vec![&wd, &nd]),
        (None, vec![&nd, &wd]),
    ];
    for (existing, ops) in cases {
        assert_eq!(
            merge_either(existing, ops.iter().copied()),
            None,
            "{existing:?} {ops:?}"
        );
        if existing.is_none() {
            assert_eq!(fold_either(ops.iter().copied()), None, "{ops:?}");
        }
    }
    // Each width alone merges.
    let wide = merge_either(Some(&wide_value), [&wa[..], &wd]).unwrap();
    assert_eq!(read(Some(wide)), [BIG + 1].into_iter().collect());
    let narrow = merge_either(Some(&narrow_value), [&na[..], &nd]).unwrap();
    assert_eq!(decode_posting_as::<u32>(&narrow), Ok(RoaringBitmap::new()));
}
