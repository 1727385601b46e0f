//! Unit tests of the record codecs.

use super::*;

fn doc() -> DocRecord {
    DocRecord {
        key: "k-1".into(),
        host: "example.com".into(),
        time: 1_683_854_400,
        cluster: 7,
        text_chars: 1234,
        fingerprints: 112,
        simhash: 0xdead_beef,
        content_hash: 42,
        codes: vec![7, 9],
        similar_to: 3,
        seq: 11,
        similar_seq: 3,
        resemble: 0.5,
        contain: 0.75,
        raw_hash: Some(0x0123_4567_89ab_cdef),
    }
}

#[test]
fn doc_round_trip() {
    let d = doc();
    let v = d.encode();
    assert_eq!(v[0], TAG_DOC_RAW);
    assert_eq!(DocRecord::decode("docs", b"k", &v).unwrap(), d);
    // An unknown raw hash is written as the older builds wrote the record, and reads back.
    let unknown = DocRecord {
        raw_hash: None,
        ..doc()
    };
    let v = unknown.encode();
    assert_eq!(v[0], TAG_DOC_SEQ);
    assert_eq!(DocRecord::decode("docs", b"k", &v).unwrap(), unknown);
    assert_eq!(DocRecord::decode_cluster("docs", b"k", &v).unwrap(), 7);
    assert_eq!(
        DocRecord::decode_size("docs", b"k", &v).unwrap(),
        PageSize::of(&unknown)
    );
}

#[test]
fn a_record_without_the_raw_hash_reads_with_none() {
    // A `0xD2` record as the builds before the raw hash wrote it: the `0xD3` layout without
    // its last 8 bytes.
    let d = doc();
    let v = d.encode();
    let mut old = v[..v.len() - 4 - 8].to_vec();
    old[0] = TAG_DOC_SEQ;
    let crc = crc32fast::hash(&old);
    old.extend_from_slice(&crc.to_be_bytes());
    let read = DocRecord::decode("docs", b"k", &old).unwrap();
    assert_eq!(
        read,
        DocRecord {
            raw_hash: None,
            ..d
        }
    );
    // Tags are not told apart by length: a `0xD3` record cut short is corruption.
    let mut cut = v[..v.len() - 4 - 8].to_vec();
    let crc = crc32fast::hash(&cut);
    cut.extend_from_slice(&crc.to_be_bytes());
    assert!(matches!(
        DocRecord::decode("docs", b"k", &cut),
        Err(Error::Corruption { .. })
    ));
    // An unknown tag names the current one.
    let mut other = v.clone();
    other[0] = 0xD4;
    let e = DocRecord::decode("docs", b"k", &other)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown tag 0xd4, expected 0xd3"), "{e}");
}

#[test]
fn the_cluster_reads_alone_and_is_verified() {
    let d = doc();
    let mut v = d.encode();
    assert_eq!(
        DocRecord::decode_cluster("docs", b"k", &v).unwrap(),
        d.cluster
    );
    let last = v.len() - 5;
    v[last] ^= 1;
    assert!(DocRecord::decode_cluster("docs", b"k", &v).is_err());
    assert!(DocRecord::decode_cluster("docs", b"k", &v[..3]).is_err());
}

#[test]
fn format_2_records_take_their_id_as_insertion_number() {
    // A format 2 record: the format 3 layout without the two insertion numbers.
    let d = DocRecord {
        raw_hash: None,
        ..doc()
    };
    let v = d.encode();
    let body = &v[..v.len() - 4];
    let codes_at = body.len() - 1 - 4 * d.codes.len();
    let mut old = body[..codes_at - 24].to_vec();
    old.extend_from_slice(&body[codes_at..]);
    old[0] = TAG_DOC;
    let crc = crc32fast::hash(&old);
    old.extend_from_slice(&crc.to_be_bytes());
    let read = DocRecord::decode("docs", &9u32.to_be_bytes(), &old).unwrap();
    assert_eq!((read.seq, read.similar_seq), (9, 3));
    assert_eq!((read.resemble, read.contain), (0.0, 0.0));
    assert_eq!(read.codes, d.codes);
    assert!(DocRecord::decode("docs", b"not an id", &old).is_err());
}

#[test]
fn flipped_bit_is_corruption() {
    let mut v = doc().encode();
    v[10] ^= 1;
    assert!(matches!(
        DocRecord::decode("docs", b"k", &v),
        Err(Error::Corruption { cf: "docs", .. })
    ));
    assert!(matches!(
        DocRecord::decode("docs", b"k", &v[..3]),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn cluster_round_trip() {
    let c = ClusterRecord {
        representative: 3,
        members: [3u32, 9, 100_000].into_iter().collect(),
    };
    assert_eq!(
        ClusterRecord::decode("clusters", b"k", &c.encode()).unwrap(),
        c
    );
}

#[test]
fn posting_round_trip_small_and_large() {
    for n in [0u32, 1, 16, 17, 1000] {
        let bm: RoaringBitmap = (0..n).map(|i| i * 3).collect();
        assert_eq!(decode_posting(&encode_posting(&bm)).unwrap(), bm);
    }
    assert!(decode_posting(&[0x99]).is_err());
    let pb = PageBlocks {
        host: "a.example".into(),
        counted: vec![1, 5, u64::MAX],
        dropped: vec![5],
    };
    let v = pb.encode();
    assert_eq!(PageBlocks::decode("chrome", b"k", &v).unwrap(), pb);
    let mut bad = v.clone();
    bad[3] ^= 1;
    assert!(PageBlocks::decode("chrome", b"k", &bad).is_err());
    assert!(PageBlocks::decode("chrome", b"k", &v[..v.len() - 6]).is_err());
    assert_eq!(decode_count("chrome", b"k", &encode_count(7)).unwrap(), 7);
    assert!(decode_count("chrome", b"k", &[TAG_COUNT, 0, 0]).is_err());
    assert!(decode_posting(&[TAG_POSTING_LIST, 1, 2]).is_err());
    // A list out of order, or with an id twice, is read as the set of its ids.
    let mut v = vec![TAG_POSTING_LIST];
    for id in [9u32, 3, 9, 5] {
        v.extend_from_slice(&id.to_be_bytes());
    }
    let want: RoaringBitmap = [3u32, 5, 9].into_iter().collect();
    assert_eq!(decode_posting(&v).unwrap(), want);
}

#[test]
fn posting_keys_round_trip_and_are_told_from_texts() {
    let keys = vec![[1u8; 9], [0xab; 9]];
    let v = encode_posting_keys(&keys);
    assert_eq!(
        decode_text_value("texts", b"k", &v).ok(),
        Some(TextValue::PostingKeys(keys))
    );
    let t = encode_text("hello");
    assert_eq!(
        decode_text_value("texts", b"k", &t).ok(),
        Some(TextValue::Text("hello".into()))
    );
    let mut bad = v.clone();
    bad[3] ^= 1;
    assert!(matches!(
        decode_text_value("texts", b"k", &bad),
        Err(Error::Corruption { .. })
    ));
    assert!(decode_posting_keys("texts", b"k", &encode_posting_keys(&[])).is_ok());
}

#[test]
fn text_round_trip() {
    let v = encode_text("中文 text");
    assert_eq!(decode_text("texts", b"k", &v).unwrap(), "中文 text");
}
