//! Representative policies: a newcomer the policy prefers takes over in the same write, and a
//! deleted representative hands over to the member the policy prefers.
mod common;
use common::*;
use neardup::{Content, Index, IndexOptions, Page, RepresentativePolicy};

fn open_with(dir: &std::path::Path, policy: RepresentativePolicy) -> Index {
    Index::open(
        dir,
        IndexOptions {
            representative: policy,
            ..IndexOptions::default()
        },
    )
    .unwrap()
}

fn timed<'a>(key: &'a str, time: i64, html: &'a str) -> Page<'a> {
    Page {
        key,
        host: "h",
        time,
        content: Content::Html(html.as_bytes()),
    }
}

#[test]
fn earliest_time_leads() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), RepresentativePolicy::EarliestTime);
    let a = article(50, 8);
    let h: Vec<String> = (0..3)
        .map(|t| html(t, "A", &edited(&a, t as u64)))
        .collect();
    ix.insert(&timed("late", 2_000, &h[0])).unwrap();
    let v = ix.insert(&timed("early", 1_000, &h[1])).unwrap();
    assert!(v.duplicate);
    assert_eq!(v.representative.as_deref(), Some("early"));
    assert_eq!(v.similar_to.as_deref(), Some("late"));
    let v = ix.insert(&timed("unknown", 0, &h[2])).unwrap();
    assert_eq!(
        v.representative.as_deref(),
        Some("early"),
        "unknown time never leads"
    );
    ix.delete("early").unwrap();
    assert_eq!(ix.representative_of("unknown").unwrap().unwrap().1, "late");
    assert_clean(&ix);
}

#[test]
fn longest_text_leads() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), RepresentativePolicy::LongestText);
    let a = article(51, 10);
    let short: Vec<String> = a[..8].to_vec();
    ix.insert(&page("short", "h", &html(0, "A", &short)))
        .unwrap();
    let v = ix.insert(&page("long", "h", &html(1, "A", &a))).unwrap();
    assert!(v.duplicate, "{v:?}");
    assert_eq!(v.representative.as_deref(), Some("long"));
    assert_eq!(ix.representative_of("short").unwrap().unwrap().1, "long");
    assert_clean(&ix);
}

#[test]
fn first_seen_keeps_leading() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), RepresentativePolicy::FirstSeen);
    let a = article(52, 10);
    ix.insert(&timed("first", 5_000, &html(0, "A", &a[..8])))
        .unwrap();
    let v = ix.insert(&timed("second", 1, &html(1, "A", &a))).unwrap();
    assert_eq!(v.representative.as_deref(), Some("first"));
}
