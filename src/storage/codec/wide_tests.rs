//! Unit tests of the record and posting codecs of `u64` ids (a distributed index's partitions,
//! SCALEOUT §4), and of the `u32` bytes they leave as they were.

use roaring::RoaringTreemap;

use super::*;

/// Ids on both sides of 2³², as a global `u64` id space holds them.
const BIG: u64 = (5 << 32) | 17;

fn wide_doc() -> DocRecord<u64> {
    DocRecord {
        key: "k-1".into(),
        host: "example.com".into(),
        time: 1_683_854_400,
        cluster: BIG + 1,
        text_chars: 1234,
        fingerprints: 112,
        simhash: 0xdead_beef,
        content_hash: 42,
        codes: vec![7, 9],
        similar_to: BIG,
        seq: 11,
        similar_seq: 3,
        resemble: 0.5,
        contain: 0.75,
        raw_hash: Some(0x0123_4567_89ab_cdef),
    }
}

fn narrow(d: &DocRecord<u64>) -> DocRecord {
    DocRecord {
        key: d.key.clone(),
        host: d.host.clone(),
        time: d.time,
        cluster: 7,
        text_chars: d.text_chars,
        fingerprints: d.fingerprints,
        simhash: d.simhash,
        content_hash: d.content_hash,
        codes: d.codes.clone(),
        similar_to: 3,
        seq: d.seq,
        similar_seq: d.similar_seq,
        resemble: d.resemble,
        contain: d.contain,
        raw_hash: d.raw_hash,
    }
}

/// The fields of a document record up to its codes, as FORMAT.md lays them out, with ids of
/// `id_bytes`: what both widths share but the ids' width.
fn layout(d: &DocRecord<u64>, ids: impl Fn(u64) -> Vec<u8>) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(d.key.len() as u32).to_be_bytes());
    b.extend_from_slice(d.key.as_bytes());
    b.extend_from_slice(&(d.host.len() as u16).to_be_bytes());
    b.extend_from_slice(d.host.as_bytes());
    b.extend_from_slice(&d.time.to_be_bytes());
    b.extend(ids(d.cluster));
    b.extend_from_slice(&d.text_chars.to_be_bytes());
    b.extend_from_slice(&d.fingerprints.to_be_bytes());
    b.extend_from_slice(&d.simhash.to_be_bytes());
    b.extend_from_slice(&d.content_hash.to_be_bytes());
    b.extend(ids(d.similar_to));
    b.extend_from_slice(&d.seq.to_be_bytes());
    b.extend_from_slice(&d.similar_seq.to_be_bytes());
    b.extend_from_slice(&d.resemble.to_bits().to_be_bytes());
    b.extend_from_slice(&d.contain.to_bits().to_be_bytes());
    b.push(d.codes.len() as u8);
    for c in &d.codes {
        b.extend_from_slice(&c.to_be_bytes());
    }
    b
}

#[test]
fn a_u32_record_is_written_byte_for_byte_as_format_6_lays_it_out() {
    let wide = wide_doc();
    let d = narrow(&wide);
    let fields = layout(
        &DocRecord {
            cluster: 7,
            similar_to: 3,
            ..wide.clone()
        },
        |id| (id as u32).to_be_bytes().to_vec(),
    );
    let raw = seal(
        [
            &[TAG_DOC_RAW][..],
            &fields,
            &d.raw_hash.unwrap().to_be_bytes(),
        ]
        .concat(),
    );
    assert_eq!(d.encode(), raw);
    let none = DocRecord {
        raw_hash: None,
        ..d.clone()
    };
    assert_eq!(none.encode(), seal([&[TAG_DOC_SEQ][..], &fields].concat()));
    // The cluster record and postings too.
    let members: RoaringBitmap = [3u32, 7, 70_000].into_iter().collect();
    let mut body = vec![TAG_CLUSTER, 0, 0, 0, 7];
    members.serialize_into(&mut body).unwrap();
    let c = ClusterRecord::<u32> {
        representative: 7,
        members: members.clone(),
    };
    assert_eq!(c.encode(), seal(body));
    assert_eq!(
        encode_posting(&members),
        [
            &[TAG_POSTING_LIST, 0, 0, 0, 3, 0, 0, 0, 7][..],
            &70_000u32.to_be_bytes()
        ]
        .concat()
    );
    let many: RoaringBitmap = (0..100u32).map(|i| i * 3).collect();
    let mut roaring = vec![TAG_POSTING_ROARING];
    many.serialize_into(&mut roaring).unwrap();
    assert_eq!(encode_posting(&many), roaring);
}

#[test]
fn wide_records_round_trip_with_ids_past_u32() {
    let d = wide_doc();
    let v = d.encode();
    assert_eq!(v[0], TAG_WIDE_DOC);
    let fields = layout(&d, |id| id.to_be_bytes().to_vec());
    let mut body = [&[TAG_WIDE_DOC][..], &fields, &[1]].concat();
    body.extend_from_slice(&d.raw_hash.unwrap().to_be_bytes());
    assert_eq!(v, seal(body));
    assert_eq!(DocRecord::<u64>::decode_as("docs", b"k", &v).unwrap(), d);
    assert_eq!(
        DocRecord::<u64>::decode_size_as("docs", b"k", &v).unwrap(),
        PageSize::of(&d)
    );
    assert_eq!(
        DocRecord::<u64>::decode_cluster_as("docs", b"k", &v).unwrap(),
        BIG + 1
    );
    // No raw hash, and no similar page: one tag, a presence byte of 0 and a zero hash.
    let lone = DocRecord {
        raw_hash: None,
        similar_to: <u64 as IdWidth>::NONE,
        similar_seq: 0,
        cluster: u64::MAX - 1,
        ..wide_doc()
    };
    let v = lone.encode();
    assert_eq!(v[0], TAG_WIDE_DOC);
    assert_eq!(&v[v.len() - 13..v.len() - 4], &[0; 9]);
    assert_eq!(DocRecord::<u64>::decode_as("docs", b"k", &v).unwrap(), lone);
    // A presence byte other than 0 or 1, or an absent hash that is not zero: corruption.
    let unsealed = &v[..v.len() - 4];
    let presence = unsealed.len() - 9;
    let mut two = unsealed.to_vec();
    two[presence] = 2;
    let mut stray = unsealed.to_vec();
    stray[presence + 8] = 1;
    for bad in [two, stray] {
        assert!(matches!(
            DocRecord::<u64>::decode_as("docs", b"k", &seal(bad)),
            Err(Error::Corruption { .. })
        ));
    }
    // Every cut is refused.
    let v = d.encode();
    for n in 0..v.len() {
        assert!(DocRecord::<u64>::decode_as("docs", b"k", &v[..n]).is_err());
    }
}

#[test]
fn a_record_is_never_read_as_the_other_width() {
    let wide = wide_doc().encode();
    for e in [
        DocRecord::decode("docs", b"k", &wide).map(|_| ()),
        DocRecord::decode_size("docs", b"k", &wide).map(|_| ()),
        DocRecord::decode_cluster("docs", b"k", &wide).map(|_| ()),
    ] {
        let e = e.unwrap_err();
        assert!(matches!(e, Error::Corruption { .. }));
        let e = e.to_string();
        assert!(e.contains("unknown tag 0xd4, expected 0xd3"), "{e}");
        assert!(e.contains("u64 ids"), "{e}");
    }
    let d = narrow(&wide_doc());
    let mut older = d.encode()[..d.encode().len() - 12].to_vec();
    older[0] = TAG_DOC_SEQ;
    let mut format2 = older.clone();
    format2[0] = TAG_DOC;
    for v in [d.encode(), seal(older), seal(format2)] {
        for e in [
            DocRecord::<u64>::decode_as("docs", &[0, 0, 0, 1], &v).map(|_| ()),
            DocRecord::<u64>::decode_size_as("docs", b"k", &v).map(|_| ()),
            DocRecord::<u64>::decode_cluster_as("docs", b"k", &v).map(|_| ()),
        ] {
            let e = e.unwrap_err();
            assert!(matches!(e, Error::Corruption { .. }));
            let e = e.to_string();
            assert!(e.contains("expected 0xd4"), "{e}");
            assert!(e.contains("u32 ids"), "{e}");
        }
    }
    // The clusters: the same, both ways.
    let c = ClusterRecord::<u64> {
        representative: BIG,
        members: [BIG, 3, u64::MAX - 1].into_iter().collect(),
    };
    let e = ClusterRecord::decode("clusters", b"k", &c.encode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected 0xc1") && e.contains("u64 ids"), "{e}");
    let narrow_c = ClusterRecord::<u32> {
        representative: 3,
        members: [3u32].into_iter().collect(),
    };
    let e = ClusterRecord::<u64>::decode_as("clusters", b"k", &narrow_c.encode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected 0xc2") && e.contains("u32 ids"), "{e}");
}

#[test]
fn wide_cluster_records_round_trip() {
    let members: RoaringTreemap = (0..3000u64)
        .map(|i| ((i % 4) << 32) | (i * 31))
        .chain([BIG, u64::MAX - 1])
        .collect();
    let c = ClusterRecord::<u64> {
        representative: BIG,
        members,
    };
    let v = c.encode();
    assert_eq!(v[0], TAG_WIDE_CLUSTER);
    assert_eq!(&v[1..9], &BIG.to_be_bytes());
    let mut treemap = Vec::new();
    c.members.serialize_into(&mut treemap).unwrap();
    assert_eq!(&v[9..v.len() - 4], &treemap[..]);
    assert_eq!(
        ClusterRecord::<u64>::decode_as("clusters", b"k", &v).unwrap(),
        c
    );
    for n in 0..v.len() {
        assert!(ClusterRecord::<u64>::decode_as("clusters", b"k", &v[..n]).is_err());
    }
    // A treemap with a byte after it, sealed anew: refused (read strictly).
    let mut long = v[..v.len() - 4].to_vec();
    long.push(0);
    let e = ClusterRecord::<u64>::decode_as("clusters", b"k", &seal(long))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad member treemap"), "{e}");
}

#[test]
fn wide_postings_round_trip_as_a_list_or_a_treemap() {
    let few: RoaringTreemap = [3, BIG, u64::MAX - 1].into_iter().collect();
    let v = encode_wide_posting(&few);
    let mut list = vec![TAG_WIDE_POSTING_LIST];
    for id in [3, BIG, u64::MAX - 1] {
        list.extend_from_slice(&id.to_be_bytes());
    }
    assert_eq!(v, list);
    assert_eq!(decode_wide_posting(&v), Ok(few));
    let max: RoaringTreemap = (0..POSTING_LIST_MAX).map(|i| BIG + i).collect();
    assert_eq!(encode_wide_posting(&max)[0], TAG_WIDE_POSTING_LIST);
    let many: RoaringTreemap = (0..=POSTING_LIST_MAX).map(|i| BIG + (i << 33)).collect();
    let v = encode_wide_posting(&many);
    assert_eq!(v[0], TAG_WIDE_POSTING_TREEMAP);
    assert_eq!(decode_wide_posting(&v), Ok(many.clone()));
    assert_eq!(
        decode_posting_as::<u64>(&encode_posting_as::<u64>(&many)),
        Ok(many)
    );
    // A list out of order is still read, id by id.
    let mut unsorted = vec![TAG_WIDE_POSTING_LIST];
    for id in [BIG, 3] {
        unsorted.extend_from_slice(&id.to_be_bytes());
    }
    assert_eq!(
        decode_wide_posting(&unsorted),
        Ok([3, BIG].into_iter().collect())
    );
    assert!(decode_wide_posting(&[TAG_WIDE_POSTING_LIST, 0, 0, 0, 1])
        .unwrap_err()
        .contains("id list of 4 bytes"));
    assert!(decode_wide_posting(&[]).is_err());
    assert!(decode_wide_posting(&[TAG_WIDE_POSTING_TREEMAP, 1]).is_err());
}

#[test]
fn a_posting_is_never_read_as_the_other_width() {
    let narrow: RoaringBitmap = (0..40u32).collect();
    for v in [
        encode_posting(&narrow),
        encode_posting(&[1u32].into_iter().collect()),
    ] {
        let e = decode_wide_posting(&v).unwrap_err();
        assert!(e.contains("u32 ids"), "{e}");
    }
    let wide: RoaringTreemap = (0..40u64).map(|i| BIG + i).collect();
    for v in [
        encode_wide_posting(&wide),
        encode_wide_posting(&[BIG].into_iter().collect()),
    ] {
        let e = decode_posting(&v).unwrap_err();
        assert!(e.contains("u64 ids"), "{e}");
    }
    // A list of two u32 ids is 8 bytes, one u64 id's length: the tag still tells them apart.
    let two = encode_posting(&[1u32, 2].into_iter().collect());
    assert!(decode_wide_posting(&two).is_err());
}
