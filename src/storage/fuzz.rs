//! Fuzzing what the index reads back from RocksDB: every stored-value decoder and the postings
//! merge operator. Random bytes — also sealed with a valid tag and checksum, so that they get
//! past the CRC to the field parsing — give an error, never a panic; valid encodings round-trip;
//! a damaged one is refused. The merge operator runs inside RocksDB on random and valid operands
//! (a panic there would abort the process). Run longer with `scripts/fuzz.sh SECONDS`.
//!
//! A unit test of the storage module (its codecs are not public), on the harness of the
//! `tests/fuzz_*` targets.

#[path = "../../tests/fuzz_support/mod.rs"]
mod fuzz_support;

use std::collections::BTreeSet;

use super::codec::{
    self, ClusterRecord, DocRecord, PageBlocks, TextValue, TAG_CLUSTER, TAG_COUNT, TAG_DOC,
    TAG_DOC_SEQ, TAG_PAGE_BLOCKS, TAG_POSTING_KEYS, TAG_POSTING_LIST, TAG_POSTING_ROARING,
    TAG_TEXT, TAG_WIDE_CLUSTER, TAG_WIDE_DOC, TAG_WIDE_POSTING_LIST, TAG_WIDE_POSTING_TREEMAP,
};
use super::merge::{
    self, Delta, WideDelta, OP_ADD, OP_DELTA, OP_REMOVE, OP_WIDE_ADD, OP_WIDE_DELTA, OP_WIDE_REMOVE,
};
use super::width::IdWidth;
use super::{cf, open_db, SimhashTables};
use fuzz_support::fuzz;
use proptest::prelude::*;
use roaring::RoaringBitmap;

const CF: &str = "fuzz";

/// `tag`, `body`, then the CRC-32 of both (the layout of a sealed value).
fn sealed(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(body);
    let crc = crc32fast::hash(&v);
    v.extend_from_slice(&crc.to_be_bytes());
    v
}

/// Values a decoder may meet: any bytes; any bytes after a known tag; a sealed body of any bytes.
fn value() -> impl Strategy<Value = Vec<u8>> {
    let tags = prop::sample::select(vec![
        TAG_DOC,
        TAG_DOC_SEQ,
        TAG_CLUSTER,
        TAG_TEXT,
        TAG_POSTING_KEYS,
        TAG_POSTING_LIST,
        TAG_POSTING_ROARING,
        TAG_PAGE_BLOCKS,
        TAG_COUNT,
        OP_ADD,
        OP_REMOVE,
        OP_DELTA,
        TAG_WIDE_DOC,
        TAG_WIDE_CLUSTER,
        TAG_WIDE_POSTING_LIST,
        TAG_WIDE_POSTING_TREEMAP,
        OP_WIDE_ADD,
        OP_WIDE_REMOVE,
        OP_WIDE_DELTA,
    ]);
    let body = prop::collection::vec(any::<u8>(), 0..300);
    prop_oneof![
        body.clone(),
        (tags.clone(), body.clone()).prop_map(|(t, b)| [&[t][..], &b].concat()),
        (tags, body).prop_map(|(t, b)| sealed(t, &b)),
        roaring_bytes().prop_map(|b| sealed(TAG_CLUSTER, &[&[0, 0, 0, 1][..], &b].concat())),
        roaring_bytes().prop_map(|b| [&[TAG_POSTING_ROARING][..], &b].concat()),
        treemap_bytes().prop_map(|b| sealed(
            TAG_WIDE_CLUSTER,
            &[&[0, 0, 0, 0, 0, 0, 0, 1][..], &b].concat()
        )),
        treemap_bytes().prop_map(|b| [&[TAG_WIDE_POSTING_TREEMAP][..], &b].concat()),
        (treemap_bytes(), treemap_bytes()).prop_map(|(a, r)| {
            let n = (a.len() as u32).to_be_bytes();
            [&[OP_WIDE_DELTA][..], &n, &a, &r].concat()
        }),
    ]
}

/// Bytes that start like a portable roaring treemap (a small bucket count, a key) and go on with
/// a roaring bitmap's start and anything.
fn treemap_bytes() -> impl Strategy<Value = Vec<u8>> {
    (0u64..4, any::<u32>(), roaring_bytes()).prop_map(|(count, key, rest)| {
        [&count.to_le_bytes()[..], &key.to_le_bytes(), &rest].concat()
    })
}

/// Bytes that start like a serialized roaring bitmap (the cookies of both layouts) and go on
/// with anything: container counts, keys and offsets that lie.
fn roaring_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec![12346u32, 12347, 0x0001_303b, 0x0010_303b, 0xffff_303b]),
        prop::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(|(cookie, rest)| [&cookie.to_le_bytes()[..], &rest].concat())
}

fn keys() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(vec![0, 0, 0, 7]),
        prop::collection::vec(any::<u8>(), 0..9)
    ]
}

/// Every decoder on one value: each returns, none panics. A value accepted by the posting
/// decoder re-encodes to a value that decodes the same.
#[test]
fn decoders_random_bytes() {
    fuzz(
        "decoders_random_bytes",
        100_000,
        (keys(), value()),
        |(key, v)| {
            let _ = DocRecord::decode(CF, &key, &v);
            let _ = ClusterRecord::decode(CF, &key, &v);
            let _ = codec::decode_text(CF, &key, &v);
            let _ = codec::decode_text_value(CF, &key, &v);
            let _ = codec::decode_posting_keys(CF, &key, &v);
            let _ = PageBlocks::decode(CF, &key, &v);
            let _ = codec::decode_count(CF, &key, &v);
            let _ = super::decode_u32(CF, &key, &v);
            if let Ok(ids) = codec::decode_posting(&v) {
                prop_assert_eq!(codec::decode_posting(&codec::encode_posting(&ids)), Ok(ids));
            }
            let mut delta = Delta::default();
            if delta.push(&v).is_some() {
                let mut again = Delta::default();
                prop_assert!(again.push(&delta.encode()).is_some());
                prop_assert_eq!(&again, &delta);
            }
            // The wide (u64) decoders of a distributed index's partitions (SCALEOUT §4).
            let _ = DocRecord::<u64>::decode_as(CF, &key, &v);
            let _ = DocRecord::<u64>::decode_size_as(CF, &key, &v);
            let _ = DocRecord::<u64>::decode_cluster_as(CF, &key, &v);
            let _ = ClusterRecord::<u64>::decode_as(CF, &key, &v);
            let _ = super::width::decode_wide_id(CF, &key, &v);
            if let Ok(ids) = codec::decode_wide_posting(&v) {
                let again = codec::encode_wide_posting(&ids);
                prop_assert_eq!(codec::decode_wide_posting(&again), Ok(ids));
            }
            let mut wide = WideDelta::default();
            if wide.push(&v).is_some() {
                let mut again = WideDelta::default();
                prop_assert!(again.push(&wide.encode()).is_some());
                prop_assert_eq!(&again, &wide);
            }
            Ok(())
        },
    );
}

fn doc_record() -> impl Strategy<Value = DocRecord> {
    (
        (
            "\\PC{1,40}",
            "[a-z.]{0,30}",
            any::<i64>(),
            any::<u32>(),
            any::<u32>(),
            any::<u16>(),
        ),
        (
            any::<u64>(),
            any::<u128>(),
            prop::collection::vec(any::<u32>(), 0..255),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            0f32..=1.0,
            0f32..=1.0,
            any::<Option<u64>>(),
        ),
    )
        .prop_map(
            |(
                (key, host, time, cluster, text_chars, fingerprints),
                (
                    simhash,
                    content_hash,
                    codes,
                    similar_to,
                    seq,
                    similar_seq,
                    resemble,
                    contain,
                    raw_hash,
                ),
            )| DocRecord {
                key,
                host,
                time,
                cluster,
                text_chars,
                fingerprints,
                simhash,
                content_hash,
                codes,
                similar_to,
                seq,
                similar_seq,
                resemble,
                contain,
                raw_hash,
            },
        )
}

fn bitmap() -> impl Strategy<Value = RoaringBitmap> {
    prop_oneof![
        prop::collection::vec(any::<u32>(), 0..40),
        prop::collection::vec(0u32..70_000, 0..5000),
    ]
    .prop_map(|ids| ids.into_iter().collect())
}

/// A valid value and how to damage it: flip one byte, or cut it short.
#[derive(Debug, Clone)]
enum Damage {
    Flip(usize, u8),
    Cut(usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Damage::Flip(i, x)),
        any::<usize>().prop_map(Damage::Cut),
    ]
}

fn damaged(v: &[u8], d: &Damage) -> Vec<u8> {
    let mut v = v.to_vec();
    match *d {
        Damage::Flip(i, x) => {
            let i = i % v.len();
            v[i] ^= x;
        }
        Damage::Cut(n) => v.truncate(n % v.len()),
    }
    v
}

/// Valid records round-trip; every one-byte flip or truncation of a sealed value is refused.
#[test]
fn decoders_round_trip_and_refuse_damage() {
    let strategy = (
        doc_record(),
        (any::<u32>(), bitmap()),
        "\\PC{0,200}",
        prop::collection::vec(any::<[u8; 9]>(), 0..30),
        (
            "[a-z.]{0,255}",
            prop::collection::vec(any::<u64>(), 0..40),
            prop::collection::vec(any::<u64>(), 0..40),
        ),
        any::<u32>(),
        damage(),
    );
    fuzz(
        "decoders_round_trip",
        6000,
        strategy,
        |(doc, (rep, members), text, pkeys, (host, counted, dropped), n, d)| {
            let key = [0u8, 0, 0, 9];
            let v = doc.encode();
            prop_assert_eq!(DocRecord::decode(CF, &key, &v).ok(), Some(doc));
            prop_assert!(DocRecord::decode(CF, &key, &damaged(&v, &d)).is_err());

            let cluster = ClusterRecord {
                representative: rep,
                members,
            };
            let v = cluster.encode();
            prop_assert_eq!(ClusterRecord::decode(CF, &key, &v).ok(), Some(cluster));
            prop_assert!(ClusterRecord::decode(CF, &key, &damaged(&v, &d)).is_err());

            let v = codec::encode_text(&text);
            prop_assert_eq!(codec::decode_text(CF, &key, &v).ok(), Some(text.clone()));
            prop_assert_eq!(
                codec::decode_text_value(CF, &key, &v).ok(),
                Some(TextValue::Text(text))
            );
            prop_assert!(codec::decode_text(CF, &key, &damaged(&v, &d)).is_err());

            let v = codec::encode_posting_keys(&pkeys);
            prop_assert_eq!(
                codec::decode_posting_keys(CF, &key, &v).ok(),
                Some(pkeys.clone())
            );
            prop_assert_eq!(
                codec::decode_text_value(CF, &key, &v).ok(),
                Some(TextValue::PostingKeys(pkeys))
            );
            prop_assert!(codec::decode_posting_keys(CF, &key, &damaged(&v, &d)).is_err());

            let blocks = PageBlocks {
                host,
                counted,
                dropped,
            };
            let v = blocks.encode();
            prop_assert_eq!(PageBlocks::decode(CF, &key, &v).ok(), Some(blocks));
            prop_assert!(PageBlocks::decode(CF, &key, &damaged(&v, &d)).is_err());

            let v = codec::encode_count(n);
            prop_assert_eq!(codec::decode_count(CF, &key, &v).ok(), Some(n));
            if let Damage::Cut(_) = d {
                prop_assert!(codec::decode_count(CF, &key, &damaged(&v, &d)).is_err());
            }
            Ok(())
        },
    );
}

/// One posting operation of the model tests, on ids of width `I` (the merge operator's tests of
/// both widths share it: this one and `merge/wide_tests.rs`).
#[derive(Debug, Clone)]
pub(super) enum Op<I = u32> {
    Add(Vec<I>),
    Remove(Vec<I>),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let ids = prop::collection::vec(prop_oneof![0u32..64, any::<u32>()], 0..6);
    prop::collection::vec(
        prop_oneof![ids.clone().prop_map(Op::Add), ids.prop_map(Op::Remove)],
        0..12,
    )
}

/// The merge operand of `op`: its width's add or remove tag, then its ids, big-endian.
pub(super) fn operand<I: IdWidth>(op: &Op<I>) -> Vec<u8> {
    let (tag, ids) = match op {
        Op::Add(ids) => (I::OP_ADD, ids),
        Op::Remove(ids) => (I::OP_REMOVE, ids),
    };
    let mut v = vec![tag];
    for &id in ids {
        v.extend_from_slice(id.to_be().as_ref());
    }
    v
}

/// The posting `ops` make of `base`, applied in order.
pub(super) fn model<I: Ord + Copy>(base: &BTreeSet<I>, ops: &[Op<I>]) -> BTreeSet<I> {
    let mut set = base.clone();
    for op in ops {
        match op {
            Op::Add(ids) => set.extend(ids),
            Op::Remove(ids) => ids.iter().for_each(|id| {
                set.remove(id);
            }),
        }
    }
    set
}

/// The merge arithmetic against a set: operands folded one by one, or folded in two partial
/// merges first (as RocksDB may), give the posting of applying them in order.
#[test]
fn merge_deltas_match_a_model() {
    let strategy = (
        prop::collection::btree_set(0u32..64, 0..20),
        ops(),
        any::<usize>(),
    );
    fuzz("merge_deltas", 40_000, strategy, |(base, ops, split)| {
        let expected = model(&base, &ops);
        let mut whole = Delta::default();
        for op in &ops {
            prop_assert!(whole.push(&operand(op)).is_some());
        }
        let mut posting: RoaringBitmap = base.iter().copied().collect();
        whole.apply(&mut posting);
        prop_assert_eq!(posting.iter().collect::<BTreeSet<_>>(), expected.clone());

        let at = if ops.is_empty() {
            0
        } else {
            split % (ops.len() + 1)
        };
        let (mut first, mut second) = (Delta::default(), Delta::default());
        ops[..at].iter().for_each(|op| {
            first.push(&operand(op));
        });
        ops[at..].iter().for_each(|op| {
            second.push(&operand(op));
        });
        let mut folded = Delta::default();
        prop_assert!(folded.push(&first.operand()).is_some());
        prop_assert!(folded.push(&second.encode()).is_some());
        let mut posting: RoaringBitmap = base.iter().copied().collect();
        folded.apply(&mut posting);
        prop_assert_eq!(posting.iter().collect::<BTreeSet<_>>(), expected);
        Ok(())
    });
}

/// The operator inside RocksDB: random operands (and a random stored posting) on a key give
/// an error or a value on read, never a crash; valid operands give the model's posting, before
/// and after a flush and a compaction.
#[test]
fn merge_operator_in_rocksdb() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tables = || SimhashTables::new(3).expect("tables");
    let budget = crate::IndexOptions::default().budget();
    let (bad, _bad_cache) =
        open_db(&dir.path().join("bad"), true, tables(), &budget).expect("open");
    let (good, _good_cache) =
        open_db(&dir.path().join("good"), true, tables(), &budget).expect("open");
    let bad_cf = bad.cf_handle(cf::POSTINGS).expect("postings");
    let good_cf = good.cf_handle(cf::POSTINGS).expect("postings");
    let counter = std::cell::Cell::new(0u64);
    let strategy = (
        prop::option::of(value()),
        prop::collection::vec(value(), 0..6),
        prop::collection::btree_set(0u32..64, 0..20),
        ops(),
    );
    fuzz(
        "merge_operator_rocksdb",
        5000,
        strategy,
        |(existing, operands, base, ops)| {
            let n = counter.get();
            counter.set(n + 1);
            let key = n.to_be_bytes();
            if let Some(v) = &existing {
                bad.put_cf(&bad_cf, key, v).expect("put");
            }
            for op in &operands {
                bad.merge_cf(&bad_cf, key, op).expect("merge");
            }
            // An undecodable value or operand is a corruption error on read.
            if let Ok(Some(v)) = bad.get_cf(&bad_cf, key) {
                prop_assert!(codec::decode_posting(&v).is_ok() || operands.is_empty());
            }

            if !base.is_empty() {
                let ids: RoaringBitmap = base.iter().copied().collect();
                good.put_cf(&good_cf, key, codec::encode_posting(&ids))
                    .expect("put");
            }
            for op in &ops {
                good.merge_cf(&good_cf, key, operand(op)).expect("merge");
            }
            let read = |db: &rocksdb::DB| -> BTreeSet<u32> {
                match db.get_cf(&good_cf, key).expect("get") {
                    Some(v) => codec::decode_posting(&v).expect("posting").iter().collect(),
                    None => BTreeSet::new(),
                }
            };
            let expected = model(&base, &ops);
            prop_assert_eq!(read(&good), expected.clone());
            if n % 64 == 63 {
                good.flush_cf(&good_cf).expect("flush");
                good.compact_range_cf(&good_cf, None::<&[u8]>, None::<&[u8]>);
                prop_assert_eq!(read(&good), expected);
            }
            Ok(())
        },
    );
    let _ = merge::NAME;
}

/// `u64` ids on both sides of 2³² (a distributed index's global ids, SCALEOUT §4).
fn wide_id() -> impl Strategy<Value = u64> {
    prop_oneof![
        (0u64..4, 0u64..64).prop_map(|(hi, lo)| (hi << 32) | lo),
        any::<u64>(),
    ]
}

fn treemap() -> impl Strategy<Value = roaring::RoaringTreemap> {
    prop_oneof![
        prop::collection::vec(wide_id(), 0..40),
        prop::collection::vec((0u64..3, 0u64..70_000), 0..3000)
            .prop_map(|v| v.into_iter().map(|(hi, lo)| (hi << 32) | lo).collect()),
    ]
    .prop_map(|ids| ids.into_iter().collect())
}

/// Valid wide records and postings round-trip; every one-byte flip or truncation of a sealed
/// wide record is refused; no wide value reads as a narrow one.
#[test]
fn wide_decoders_round_trip_and_refuse_damage() {
    let strategy = (
        doc_record(),
        (wide_id(), wide_id()),
        (wide_id(), treemap()),
        damage(),
    );
    fuzz(
        "wide_decoders_round_trip",
        3000,
        strategy,
        |(doc, (cluster, similar_to), (rep, members), d)| {
            let key = 9u64.to_be_bytes();
            let doc = DocRecord::<u64> {
                key: doc.key,
                host: doc.host,
                time: doc.time,
                cluster,
                text_chars: doc.text_chars,
                fingerprints: doc.fingerprints,
                simhash: doc.simhash,
                content_hash: doc.content_hash,
                codes: doc.codes,
                similar_to,
                seq: doc.seq,
                similar_seq: doc.similar_seq,
                resemble: doc.resemble,
                contain: doc.contain,
                raw_hash: doc.raw_hash,
            };
            let v = doc.encode();
            prop_assert!(DocRecord::decode(CF, &key, &v).is_err());
            prop_assert_eq!(DocRecord::<u64>::decode_as(CF, &key, &v).ok(), Some(doc));
            prop_assert!(DocRecord::<u64>::decode_as(CF, &key, &damaged(&v, &d)).is_err());

            let cluster = ClusterRecord::<u64> {
                representative: rep,
                members,
            };
            let v = cluster.encode();
            prop_assert!(ClusterRecord::decode(CF, &key, &v).is_err());
            prop_assert!(ClusterRecord::<u64>::decode_as(CF, &key, &damaged(&v, &d)).is_err());
            let posting = codec::encode_wide_posting(&cluster.members);
            prop_assert!(codec::decode_posting(&posting).is_err());
            prop_assert_eq!(
                codec::decode_wide_posting(&posting).ok(),
                Some(cluster.members.clone())
            );
            prop_assert_eq!(
                ClusterRecord::<u64>::decode_as(CF, &key, &v).ok(),
                Some(cluster)
            );
            Ok(())
        },
    );
}

/// The operator inside RocksDB on `u64` postings (SCALEOUT §4), under its one name: wide operands
/// give the model's posting before and after flushes and compactions (which fold them by partial
/// merges); a key whose value and operands mix widths reads as a corruption error, never a value
/// of either width.
#[test]
fn wide_merge_operator_in_rocksdb() {
    let dir = tempfile::tempdir().expect("tempdir");
    let budget = crate::IndexOptions::default().budget();
    let tables = SimhashTables::new(3).expect("tables");
    let (db, _cache) = open_db(&dir.path().join("wide"), true, tables, &budget).expect("open");
    let postings = db.cf_handle(cf::POSTINGS).expect("postings");
    // Mixed keys in a database never compacted (a failed merge fails a compaction).
    let (bad, _bad_cache) =
        open_db(&dir.path().join("mixed"), true, tables, &budget).expect("open");
    let bad_postings = bad.cf_handle(cf::POSTINGS).expect("postings");
    let counter = std::cell::Cell::new(0u64);
    let ops = prop::collection::vec(
        prop_oneof![
            prop::collection::vec(wide_id(), 0..6).prop_map(Op::Add),
            prop::collection::vec(wide_id(), 0..6).prop_map(Op::Remove),
        ],
        1..12,
    );
    let strategy = (
        prop::collection::btree_set(wide_id(), 0..20),
        ops,
        any::<u32>(),
    );
    fuzz(
        "wide_merge_operator_rocksdb",
        2000,
        strategy,
        |(base, ops, narrow_id)| {
            let n = counter.get();
            counter.set(n + 1);
            let (key, mixed) = (n.to_be_bytes(), n.to_be_bytes());
            if !base.is_empty() {
                let ids: roaring::RoaringTreemap = base.iter().copied().collect();
                db.put_cf(&postings, key, codec::encode_wide_posting(&ids))
                    .expect("put");
            }
            for op in &ops {
                db.merge_cf(&postings, key, operand(op)).expect("merge");
                bad.merge_cf(&bad_postings, mixed, operand(op))
                    .expect("merge");
            }
            let expected = model(&base, &ops);
            // A narrow operand amid the wide ones.
            bad.merge_cf(&bad_postings, mixed, merge::add_operand(narrow_id))
                .expect("merge");
            bad.merge_cf(&bad_postings, mixed, operand(&ops[0]))
                .expect("merge");
            let read = |db: &rocksdb::DB| -> BTreeSet<u64> {
                match db.get_cf(&postings, key).expect("get") {
                    Some(v) => codec::decode_wide_posting(&v)
                        .expect("posting")
                        .iter()
                        .collect(),
                    None => BTreeSet::new(),
                }
            };
            prop_assert_eq!(read(&db), expected.clone());
            prop_assert!(bad.get_cf(&bad_postings, mixed).is_err());
            if n % 64 == 63 {
                db.flush_cf(&postings).expect("flush");
                db.compact_range_cf(&postings, None::<&[u8]>, None::<&[u8]>);
                prop_assert_eq!(read(&db), expected);
            }
            Ok(())
        },
    );
}
