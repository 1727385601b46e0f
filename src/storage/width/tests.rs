//! Unit tests of the id widths: keys, the treemap's portable serialization, strict decoding.

use super::*;
use crate::storage::codec;

/// Ids on both sides of 2³², as a global `u64` id space holds them.
const WIDE_IDS: [u64; 7] = [
    0,
    7,
    u32::MAX as u64,
    1 << 32,
    (1 << 32) + 70_000,
    (42 << 40) | 9,
    u64::MAX - 1,
];

#[test]
fn the_widths_name_their_tags_and_the_narrow_ones_are_today_s() {
    assert_eq!(<u32 as IdWidth>::TAG_DOC, codec::TAG_DOC_RAW);
    assert_eq!(<u32 as IdWidth>::TAG_CLUSTER, codec::TAG_CLUSTER);
    assert_eq!(<u32 as IdWidth>::TAG_POSTING_LIST, codec::TAG_POSTING_LIST);
    assert_eq!(
        <u32 as IdWidth>::TAG_POSTING_SET,
        codec::TAG_POSTING_ROARING
    );
    assert_eq!(<u32 as IdWidth>::NONE, codec::NO_DOC);
    assert_eq!(<u64 as IdWidth>::NONE, NO_WIDE_DOC);
    assert_eq!((u32::BYTES, u64::BYTES), (4, 8));
    // No tag is both widths'.
    let narrow = [0xD1, 0xD2, 0xD3, 0xC1, 0x50, 0x52, b'+', b'-', b'D'];
    let wide = [
        u64::TAG_DOC,
        u64::TAG_CLUSTER,
        u64::TAG_POSTING_LIST,
        u64::TAG_POSTING_SET,
        u64::OP_ADD,
        u64::OP_REMOVE,
        u64::OP_DELTA,
    ];
    assert!(wide.iter().all(|t| !narrow.contains(t)), "{wide:x?}");
}

#[test]
fn wide_id_keys_are_big_endian_and_sort_as_the_ids() {
    let cluster: WideClusterId = 1 << 40;
    assert_eq!(
        decode_wide_id("clusters", b"k", &wide_id_key(cluster)).unwrap(),
        cluster
    );
    for id in WIDE_IDS {
        let k = wide_id_key(id);
        assert_eq!(k, id.to_be_bytes());
        assert_eq!(decode_wide_id("docs", &k, &k).unwrap(), id);
        assert_eq!(decode_id::<u64>("docs", &k, &k).unwrap(), id);
        assert_eq!(<u64 as IdWidth>::from_be(&IdWidth::to_be(id)), Some(id));
    }
    assert!(WIDE_IDS
        .windows(2)
        .all(|w| wide_id_key(w[0]) < wide_id_key(w[1])));
    assert_eq!(decode_id::<u32>("docs", b"k", &[0, 0, 1, 2]).unwrap(), 258);
}

#[test]
fn an_id_of_the_other_width_is_refused_by_name() {
    let e = decode_wide_id("docs", b"k", &7u32.to_be_bytes()).unwrap_err();
    assert!(matches!(e, Error::Corruption { .. }));
    let e = e.to_string();
    assert!(e.contains("a u64 id is 8 bytes, found 4 (a u32 id"), "{e}");
    let e = decode_id::<u32>("docs", b"k", &wide_id_key(1 << 33))
        .unwrap_err()
        .to_string();
    assert!(e.contains("a u32 id is 4 bytes, found 8 (a u64 id"), "{e}");
    assert!(decode_wide_id("docs", b"k", &[1; 9]).is_err());
    assert!(decode_wide_id("docs", b"k", &[]).is_err());
}

fn treemap(ids: &[u64]) -> RoaringTreemap {
    ids.iter().copied().collect()
}

fn serialized<S: IdSet<I>, I>(set: &S) -> Vec<u8> {
    let mut b = Vec::new();
    set.serialize(&mut b);
    assert_eq!(b.len(), set.serialized_size());
    b
}

#[test]
fn treemaps_serialize_as_roaring_does_and_read_back() {
    let many: Vec<u64> = (0..5000u64)
        .map(|i| ((i % 3) << 32) | ((i * 7919) % 200_000))
        .chain(WIDE_IDS)
        .collect();
    for ids in [&[][..], &WIDE_IDS[..], &many[..]] {
        let set = treemap(ids);
        let b = serialized(&set);
        // The portable 64-bit layout: what roaring writes (and CRoaring, Java and Go read).
        let mut theirs = Vec::new();
        set.serialize_into(&mut theirs).unwrap();
        assert_eq!(b, theirs);
        assert_eq!(
            <RoaringTreemap as IdSet<u64>>::deserialize(&b).unwrap(),
            set
        );
        assert_eq!(RoaringTreemap::deserialize_from(&b[..]).unwrap(), set);
    }
    // The `u32` set's serialization is roaring's own.
    let bitmap: RoaringBitmap = [1u32, 9, 70_000, u32::MAX].into_iter().collect();
    let mut theirs = Vec::new();
    bitmap.serialize_into(&mut theirs).unwrap();
    assert_eq!(serialized(&bitmap), theirs);
    assert_eq!(
        <RoaringBitmap as IdSet<u32>>::deserialize(&theirs).unwrap(),
        bitmap
    );
}

#[test]
fn a_treemap_reads_strictly_and_one_set_has_one_encoding() {
    let set = treemap(&WIDE_IDS);
    let b = serialized(&set);
    let read = |b: &[u8]| <RoaringTreemap as IdSet<u64>>::deserialize(b);
    // Truncated anywhere, or with bytes after it: refused.
    for n in 0..b.len() {
        assert!(read(&b[..n]).is_err(), "cut at {n}");
    }
    let mut long = b.clone();
    long.push(0);
    assert!(read(&long).unwrap_err().contains("1 bytes after"));
    // Buckets out of order (or repeated) would lose ids: refused.
    let bucket = |key: u32, ids: &[u32]| {
        let mut v = key.to_le_bytes().to_vec();
        ids.iter()
            .copied()
            .collect::<RoaringBitmap>()
            .serialize_into(&mut v)
            .unwrap();
        v
    };
    let two = |a: Vec<u8>, b: Vec<u8>| [&2u64.to_le_bytes()[..], &a, &b].concat();
    assert!(read(&two(bucket(5, &[1]), bucket(3, &[2])))
        .unwrap_err()
        .contains("not above"));
    assert!(read(&two(bucket(5, &[1]), bucket(5, &[2]))).is_err());
    // An empty bucket (which this module never writes) reads as nothing, so the set compares
    // equal to the canonical one and re-encodes without it.
    let with_empty = read(&two(bucket(1, &[]), bucket(2, &[4]))).unwrap();
    assert_eq!(with_empty, treemap(&[(2 << 32) | 4]));
    assert_eq!(
        serialized(&with_empty),
        serialized(&treemap(&[(2 << 32) | 4]))
    );
    // A count that lies is refused without reading past the input.
    assert!(read(&u64::MAX.to_le_bytes()).is_err());
}
