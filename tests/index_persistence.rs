//! Pages and clusters survive close and reopen; verdicts name the right cluster.
mod common;
use common::*;

#[test]
fn persistence_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let a = article(1, 8);
    let b = article(2, 8);
    let pages = [
        ("a0", html(0, "A", &a)),
        ("b0", html(0, "B", &b)),
        ("a1", html(1, "A", &edited(&a, 5))),
        ("b1", html(2, "B", &b)),
    ];
    {
        let ix = open(dir.path());
        let v0 = ix.insert(&page("a0", "x.com", &pages[0].1)).unwrap();
        assert!(!v0.duplicate);
        let v1 = ix.insert(&page("b0", "x.com", &pages[1].1)).unwrap();
        assert!(!v1.duplicate);
        assert_ne!(v0.cluster, v1.cluster);
        let v2 = ix.insert(&page("a1", "y.com", &pages[2].1)).unwrap();
        assert!(v2.duplicate, "{v2:?}");
        assert_eq!(v2.cluster, v0.cluster);
        assert_eq!(v2.representative.as_deref(), Some("a0"));
        assert!(v2.resemble > 0.8, "{v2:?}");
        assert_clean(&ix);
    }
    let ix = open(dir.path());
    assert_eq!(ix.len(), 3);
    let v3 = ix.insert(&page("b1", "z.com", &pages[3].1)).unwrap();
    assert!(v3.duplicate && v3.exact, "{v3:?}");
    assert_eq!(v3.representative.as_deref(), Some("b0"));
    assert_eq!(
        ix.representative_of("a1").unwrap().map(|r| r.1).as_deref(),
        Some("a0")
    );
    let mut exported = Vec::new();
    ix.export(|k, r| exported.push((k.to_string(), r.to_string())))
        .unwrap();
    let expect: Vec<(String, String)> = [("a0", "a0"), ("b0", "b0"), ("a1", "a0"), ("b1", "b0")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(exported, expect);
    assert_clean(&ix);
}

#[test]
fn query_does_not_store() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(3, 6);
    ix.insert(&page("a", "h", &html(0, "A", &a))).unwrap();
    let q = ix
        .query(neardup::Content::Html(html(1, "A", &a).as_bytes()))
        .unwrap();
    assert!(q.duplicate);
    assert_eq!(q.representative.as_deref(), Some("a"));
    assert!(q.doc.is_none());
    assert_eq!(ix.len(), 1);
    let other = ix
        .query(neardup::Content::Html(
            html(1, "C", &article(4, 6)).as_bytes(),
        ))
        .unwrap();
    assert!(!other.duplicate);
}
