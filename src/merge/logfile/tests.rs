//! The batch log's bytes: round trips, damage, both widths.

use super::*;
use crate::storage::merge::Delta;
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

/// Any operation of `u32` ids (a page or cluster id is never `u32::MAX`, "no page", which a log
/// names only as a record's `similar_to`).
fn op() -> impl Strategy<Value = LogOp> {
    prop_oneof![
        (any::<[u8; 9]>(), ids(), ids()).prop_map(|(key, add, remove)| LogOp::Posting {
            key,
            delta: Delta { add, remove }
        }),
        (0u8..4, any::<u64>(), 0..u32::MAX, any::<bool>()).prop_map(
            |(table, simhash, doc, present)| LogOp::Simhash {
                table,
                simhash,
                doc,
                present
            }
        ),
        (any::<[u8; 9]>(), proptest::option::of(any::<u8>()))
            .prop_map(|(key, reason)| LogOp::Frequent { key, reason }),
        ("\\PC{0,16}", proptest::option::of(0..u32::MAX))
            .prop_map(|(key, doc)| LogOp::Key { key, doc }),
        (0..u32::MAX, proptest::option::of(record()))
            .prop_map(|(id, record)| LogOp::Doc { id, record }),
        (0..u32::MAX, proptest::option::of("\\PC{0,40}")).prop_map(|(id, t)| LogOp::Text {
            id,
            value: t.map(TextValue::Text)
        }),
        (
            0..u32::MAX,
            proptest::collection::vec(any::<[u8; 9]>(), 0..4)
        )
            .prop_map(|(id, k)| LogOp::Text {
                id,
                value: Some(TextValue::PostingKeys(k))
            }),
        (0..u32::MAX, proptest::option::of((0..u32::MAX, ids()))).prop_map(|(id, r)| {
            LogOp::Cluster {
                id,
                record: r.map(|(representative, members)| ClusterRecord {
                    representative,
                    members,
                }),
            }
        }),
        (0..u32::MAX, proptest::option::of("[a-z.]{0,12}")).prop_map(|(id, host)| {
            LogOp::PageBlocks {
                id,
                blocks: host.map(|host| PageBlocks {
                    host,
                    counted: vec![1, 5, 9],
                    dropped: vec![5],
                }),
            }
        }),
        ("[a-z.]{0,12}", any::<u32>()).prop_map(|(host, pages)| LogOp::HostPages { host, pages }),
        ("[a-z.]{0,12}", any::<u64>(), any::<u32>())
            .prop_map(|(host, block, pages)| LogOp::BlockPages { host, block, pages }),
        (0..u32::MAX, any::<bool>()).prop_map(|(id, free)| LogOp::FreeDoc { id, free }),
        (0..u32::MAX, any::<bool>()).prop_map(|(id, free)| LogOp::FreeCluster { id, free }),
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
        prop_assert_eq!(decode_log::<u32>(&encode_log(&ops)).unwrap(), ops.clone());
        // Widened, a log of global ids: version 2, read back in either width.
        let wide: Vec<LogOp<u64>> = ops.iter().map(|op| op.clone().to_width().unwrap()).collect();
        let bytes = encode_log(&wide);
        prop_assert_eq!(bytes[MAGIC.len()], 2);
        prop_assert_eq!(decode_log::<u64>(&bytes).unwrap(), wide.clone());
        prop_assert_eq!(decode_log::<u32>(&bytes).unwrap(), ops.clone());
        prop_assert_eq!(decode_log::<u64>(&encode_log(&ops)).unwrap(), wide);
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
        prop_assert!(matches!(decode_log::<u32>(&bytes), Err(Error::InvalidArgument(_))));
    }

    /// Bytes of any kind never make the decoder panic.
    #[test]
    fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_log::<u32>(&bytes);
    let _ = decode_log::<u64>(&bytes);
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
    assert_eq!(decode_log::<u32>(&good).unwrap(), vec![op]);
    // The same log with one byte more in the operation's body, resealed.
    let mut body = good[..good.len() - 8].to_vec();
    let len_at = MAGIC.len() + 2;
    let len = u32::from_be_bytes(body[len_at..len_at + 4].try_into().unwrap()) + 1;
    body[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    body.push(0);
    let sum = xxhash_rust::xxh3::xxh3_64(&body);
    body.extend_from_slice(&sum.to_be_bytes());
    assert!(decode_log::<u32>(&body).is_err());
}

/// A body whose checksum is right but whose operations do not decode is refused too.
#[test]
fn a_sealed_bad_body_is_refused() {
    let mut bytes = b"NDLOG\x01".to_vec();
    bytes.extend_from_slice(&[tag::COUNTER, 0, 0, 0, 9, 7, 0, 0, 0, 0, 0, 0, 0, 1]);
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes);
    bytes.extend_from_slice(&sum.to_be_bytes());
    let err = decode_log::<u32>(&bytes).unwrap_err().to_string();
    assert!(err.contains("counter 7"), "{err}");
}

/// A log of global ids past the `u32` space reads in `u64` and is refused, with the id named, by
/// a reader of `u32` ids (an index that stores them); a version this build does not know is
/// refused.
#[test]
fn a_wide_id_does_not_narrow() {
    let far = (1u64 << 32) + 5;
    let ops: Vec<LogOp<u64>> = vec![
        LogOp::Counter(LogCounter::NextDoc(far + 1)),
        LogOp::Posting {
            key: [3; 9],
            delta: crate::storage::merge::PostingDelta {
                add: [1u64, far].into_iter().collect(),
                remove: roaring::RoaringTreemap::new(),
            },
        },
    ];
    let bytes = encode_log(&ops);
    assert_eq!(decode_log::<u64>(&bytes).unwrap(), ops);
    let err = decode_log::<u32>(&bytes).unwrap_err().to_string();
    assert!(
        err.contains(&far.to_string()) || err.contains(&(far + 1).to_string()),
        "{err}"
    );
    let mut v3 = bytes.clone();
    v3[MAGIC.len()] = 3;
    let body = v3.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&v3[..body]);
    v3[body..].copy_from_slice(&sum.to_be_bytes());
    let err = decode_log::<u64>(&v3).unwrap_err().to_string();
    assert!(err.contains("version 3"), "{err}");
}
