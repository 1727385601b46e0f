//! Batch insert: results in input order, bad pages do not stop the others, a key given twice in
//! one batch keeps its last page whatever the insertion order.
mod common;
use common::*;
use neardup::{BatchOptions, BatchOrder, Content, Error, Page};

#[test]
fn the_last_page_of_a_repeated_key_wins() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    // v1 is short (few fingerprints), v2 long (many): the fingerprint order puts v2 first.
    let v1 = html(0, "t", &article(60, 3));
    let v2 = html(0, "t", &article(61, 12));
    let long_host = "h".repeat(300);
    let pages = vec![
        page("k", "h", &v1),
        page("other", "h", &v2),
        page("k", "h", &v2),
        Page {
            key: "",
            host: "h",
            time: 0,
            content: Content::Html(v1.as_bytes()),
        },
        Page {
            key: "bad-host",
            host: &long_host,
            time: 0,
            content: Content::Html(v1.as_bytes()),
        },
    ];
    let opts = BatchOptions {
        order: BatchOrder::FingerprintCount,
        ..BatchOptions::default()
    };
    let results = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
    assert!(matches!(&results[0], Err(Error::InvalidArgument(m)) if m.contains("superseded")));
    assert!(results[1].is_ok() && results[2].is_ok());
    assert!(matches!(results[3], Err(Error::InvalidArgument(_))));
    assert!(matches!(results[4], Err(Error::InvalidArgument(_))));
    // "k" holds v2: it is an exact duplicate of "other".
    assert_eq!(ix.representative_of("k").unwrap().unwrap().1, "other");
    assert_eq!(ix.len(), 2);
    assert_clean(&ix);
}

#[test]
fn pages_without_host_are_never_few_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let ix = neardup::Index::open(
        dir.path(),
        neardup::IndexOptions {
            frequent: neardup::FrequentConfig {
                max_pages: 1_000,
                few_hosts_pages: 3,
                few_hosts: 1,
            },
            ..neardup::IndexOptions::default()
        },
    )
    .unwrap();
    let base = article(70, 8);
    for i in 0..8u64 {
        let h = html(i as usize, "t", &edited(&base, i));
        ix.insert(&page(&format!("p{i}"), "", &h)).unwrap();
    }
    assert!(ix.stats().unwrap().frequent.is_empty());
    assert_eq!(ix.stats().unwrap().clusters, 1);
}
