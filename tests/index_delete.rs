//! Deleting members and representatives: hand-over, re-placement, nothing left pointing at a
//! deleted page.
mod common;
use common::*;

#[test]
fn delete_member_and_representative() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(10, 10);
    let docs: Vec<(String, String)> = (0..4)
        .map(|i| (format!("a{i}"), html(i, "A", &edited(&a, i as u64))))
        .collect();
    for (k, h) in &docs {
        ix.insert(&page(k, "h", h)).unwrap();
    }
    let (cluster, rep) = ix.representative_of("a2").unwrap().unwrap();
    assert_eq!(rep, "a0");
    ix.delete("a3").unwrap();
    assert!(ix.representative_of("a3").unwrap().is_none());
    assert_clean(&ix);
    // Deleting the representative hands over to the first seen remaining member.
    ix.delete("a0").unwrap();
    let (c2, rep2) = ix.representative_of("a2").unwrap().unwrap();
    assert_eq!(c2, cluster);
    assert_eq!(rep2, "a1");
    assert_eq!(
        ix.cluster_members(cluster, 0, 10).unwrap().unwrap(),
        vec!["a1", "a2"]
    );
    assert!(matches!(ix.delete("a0"), Err(neardup::Error::NotFound(_))));
    assert_clean(&ix);
    ix.delete("a1").unwrap();
    ix.delete("a2").unwrap();
    assert!(ix.is_empty());
    assert!(ix.cluster_members(cluster, 0, 10).unwrap().is_none());
    assert_clean(&ix);
}

#[test]
fn members_not_similar_to_new_representative_are_replaced() {
    // a0 = P, a1 = P + Q, a2 = P + R where Q and R are each twice as long as P. a1 and a2 join
    // a0's cluster by containment; once a0 is gone, a2 does not resemble a1 enough (r ≈ 0.2,
    // c ≈ 0.33) and must be re-placed in a cluster of its own. Q and R are written as run-on
    // text without sentence ends, so the sentence fingerprints of a1 and a2 come from P and the
    // candidates are found whatever the digests.
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let p = article(20, 6);
    let run_on = |seed| vec![article(seed, 12).join(" ").replace('.', "")];
    let mut a1 = p.clone();
    a1.extend(run_on(21));
    let mut a2 = p.clone();
    a2.extend(run_on(22));
    ix.insert(&page("a0", "h", &html(0, "A", &p))).unwrap();
    let v1 = ix.insert(&page("a1", "h", &html(1, "A", &a1))).unwrap();
    let v2 = ix.insert(&page("a2", "h", &html(2, "A", &a2))).unwrap();
    assert!(v1.duplicate && v2.duplicate, "{v1:?} {v2:?}");
    assert_eq!(v1.cluster, v2.cluster);
    ix.delete("a0").unwrap();
    let (c1, r1) = ix.representative_of("a1").unwrap().unwrap();
    let (c2, r2) = ix.representative_of("a2").unwrap().unwrap();
    assert_eq!(r1, "a1");
    assert_eq!(r2, "a2");
    assert_ne!(c1, c2);
    assert_clean(&ix);
}

#[test]
fn replace_is_delete_plus_insert() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(30, 8);
    let b = article(31, 8);
    ix.insert(&page("x", "h", &html(0, "A", &a))).unwrap();
    ix.insert(&page("y", "h", &html(1, "A", &a))).unwrap();
    let v = ix.insert(&page("x", "h", &html(0, "B", &b))).unwrap();
    assert!(v.replaced && !v.duplicate, "{v:?}");
    assert_eq!(ix.len(), 2);
    assert_eq!(ix.representative_of("y").unwrap().unwrap().1, "y");
    assert_eq!(ix.representative_of("x").unwrap().unwrap().1, "x");
    assert_clean(&ix);
}
