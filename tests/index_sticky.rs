//! Recrawl semantics (issue #33, item 2 and B3): under `FirstSeen` a representative keeps its
//! cluster across a changed recrawl that still verifies against its old version
//! (`IndexOptions::sticky_representative`, on by default), and a recrawl that changes only the
//! publish time writes the time in place and stays `unchanged`.

mod common;
use common::{article, assert_clean, edited, html, page};
use neardup::{BatchOptions, BatchOrder, Index, IndexOptions, Page, RepresentativePolicy, Verdict};

fn open_with(dir: &std::path::Path, f: impl FnOnce(&mut IndexOptions)) -> Index {
    let mut o = IndexOptions {
        sync_writes: false,
        ..IndexOptions::default()
    };
    f(&mut o);
    Index::open(dir, o).expect("open index")
}

/// The repro's pages: `a`, and two variants of it that join its cluster.
struct Pages {
    a: String,
    b: String,
    c: String,
    /// `a` with a correction appended: still verifies against `a`.
    a_corrected: String,
    /// Another article under `a`'s key: verifies against nothing.
    a_other: String,
}

fn pages() -> Pages {
    let a = article(1, 6);
    let mut corrected = a.clone();
    corrected.push(
        "Correction: the bridge is the new one, not the old one, the council said later in a \
         statement to the press."
            .to_string(),
    );
    Pages {
        a: html(0, "A", &a),
        b: html(1, "B", &edited(&a, 2)),
        c: html(2, "C", &edited(&a, 3)),
        a_corrected: html(0, "A", &corrected),
        a_other: html(0, "A", &article(4, 6)),
    }
}

/// Inserts a, b, c: one cluster, led by a (unless the policy is `LongestText`). Returns the
/// cluster.
fn cluster_of_three(ix: &Index, p: &Pages) -> u32 {
    let va = ix.insert(&page("a", "x.example", &p.a)).unwrap();
    for (k, h) in [("b", &p.b), ("c", &p.c)] {
        let v = ix.insert(&page(k, "y.example", h)).unwrap();
        assert_eq!(v.cluster, va.cluster, "{k} joins a's cluster: {v:?}");
    }
    if ix.options().representative != RepresentativePolicy::LongestText {
        assert_eq!(ix.representative_of("c").unwrap().unwrap().1, "a");
    }
    va.cluster.unwrap()
}

/// The verdict of a representative's changed recrawl that kept its cluster, and the index after.
fn assert_kept(ix: &Index, v: &Verdict, cluster: u32) {
    assert!(v.replaced && !v.unchanged, "{v:?}");
    assert_eq!(v.cluster, Some(cluster), "{v:?}");
    assert_eq!(v.representative.as_deref(), Some("a"), "{v:?}");
    let d = v
        .replaced_page
        .as_ref()
        .expect("a replace reports its delete");
    assert!(d.was_representative, "{d:?}");
    assert_eq!(d.representative.as_deref(), Some("a"), "{d:?}");
    assert!(d.moved.is_empty(), "{d:?}");
    assert_eq!(d.cluster, cluster);
    for k in ["a", "b", "c"] {
        assert_eq!(
            ix.representative_of(k).unwrap(),
            Some((cluster, "a".to_string())),
            "{k}"
        );
    }
    let members: Vec<String> = ix
        .members(cluster)
        .unwrap()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    assert_eq!(members.len(), 3, "{members:?}");
    assert_clean(ix);
}

#[test]
fn a_representative_keeps_its_cluster_across_a_changed_recrawl() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), |_| {});
    let p = pages();
    let cluster = cluster_of_three(&ix, &p);
    let before = ix.get("a").unwrap().unwrap();

    let v = ix.insert(&page("a", "x.example", &p.a_corrected)).unwrap();
    assert_kept(&ix, &v, cluster);
    // A new version: a new insertion number (and a new id).
    let after = ix.get("a").unwrap().unwrap();
    assert!(after.seq > before.seq, "{before:?} {after:?}");
    assert_eq!(after.content_hash, v_hash(&ix, "a"));

    // The same text on a new host: a changed recrawl too, and it keeps the cluster.
    let v = ix
        .insert(&page("a", "moved.example", &p.a_corrected))
        .unwrap();
    assert_kept(&ix, &v, cluster);
    assert_eq!(ix.get("a").unwrap().unwrap().host, "moved.example");

    // New members still join the cluster under a; a's delete hands it over as before.
    drop(ix);
    let ix = open_with(dir.path(), |_| {});
    for k in ["a", "b", "c"] {
        assert_eq!(
            ix.representative_of(k).unwrap(),
            Some((cluster, "a".to_string()))
        );
    }
    assert_clean(&ix);
    let d = ix.delete("a").unwrap();
    assert!(
        d.was_representative && d.representative.as_deref() == Some("b"),
        "{d:?}"
    );
    assert_clean(&ix);
}

fn v_hash(ix: &Index, k: &str) -> u128 {
    ix.get(k).unwrap().unwrap().content_hash
}

#[test]
fn a_batch_recrawl_keeps_the_cluster_too() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), |_| {});
    let p = pages();
    let cluster = cluster_of_three(&ix, &p);
    let opts = BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    };
    let other = html(3, "D", &article(7, 6));
    let batch = [
        page("d", "z.example", &other),
        page("a", "x.example", &p.a_corrected),
    ];
    let vs = ix.insert_batch(&batch, &opts, &mut |_, _| {}).unwrap();
    let v = vs[1].as_ref().unwrap();
    assert_kept(&ix, v, cluster);
}

#[test]
fn a_recrawl_that_no_longer_verifies_hands_the_cluster_over() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), |_| {});
    let p = pages();
    let cluster = cluster_of_three(&ix, &p);
    let v = ix.insert(&page("a", "x.example", &p.a_other)).unwrap();
    assert!(v.replaced && !v.duplicate, "{v:?}");
    assert_ne!(v.cluster, Some(cluster));
    let d = v.replaced_page.as_ref().unwrap();
    assert!(d.was_representative, "{d:?}");
    assert_eq!(d.representative.as_deref(), Some("b"), "{d:?}");
    assert_eq!(
        ix.representative_of("c").unwrap(),
        Some((cluster, "b".to_string()))
    );
    assert_clean(&ix);
}

/// Off, or under the other policies, a representative's changed recrawl hands its cluster
/// over as before: the new version joins the cluster as a member.
#[test]
fn without_sticky_or_under_other_policies_the_cluster_is_handed_over() {
    let off = |o: &mut IndexOptions| o.sticky_representative = false;
    let earliest = |o: &mut IndexOptions| o.representative = RepresentativePolicy::EarliestTime;
    let longest = |o: &mut IndexOptions| o.representative = RepresentativePolicy::LongestText;
    for (name, f) in [
        ("off", &off as &dyn Fn(&mut IndexOptions)),
        ("earliest", &earliest),
        ("longest", &longest),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ix = open_with(dir.path(), f);
        let p = pages();
        let cluster = cluster_of_three(&ix, &p);
        let led_by_a = ix.representative_of("c").unwrap().unwrap().1 == "a";
        let v = ix.insert(&page("a", "x.example", &p.a_corrected)).unwrap();
        let d = v.replaced_page.as_ref().unwrap();
        if !led_by_a {
            // The longest page led, not a: nothing to hand over.
            assert!(!d.was_representative, "{name}: {d:?}");
            assert_clean(&ix);
            continue;
        }
        assert!(d.was_representative, "{name}: {d:?}");
        assert_ne!(d.representative.as_deref(), Some("a"), "{name}: {d:?}");
        if name != "longest" {
            // The new version joins the cluster led by b now.
            assert_eq!(d.representative.as_deref(), Some("b"), "{name}: {d:?}");
            assert_eq!(v.cluster, Some(cluster), "{name}: {v:?}");
            assert_eq!(v.representative.as_deref(), Some("b"), "{name}: {v:?}");
            assert!(v.duplicate, "{name}: {v:?}");
        }
        assert_clean(&ix);
    }
}

#[test]
fn a_new_publish_time_alone_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), |_| {});
    let p = pages();
    let timed = |k: &'static str, h: &'static str, html: &'static str, time| Page {
        time,
        ..page(k, h, html)
    };
    let (a, b) = (leak(&p.a), leak(&p.b));
    let va = ix.insert(&timed("a", "x.example", a, 1000)).unwrap();
    ix.insert(&timed("b", "y.example", b, 2000)).unwrap();
    let before = ix.get("a").unwrap().unwrap();
    assert_eq!(before.time, 1000);

    let v = ix.insert(&timed("a", "x.example", a, 500)).unwrap();
    assert!(v.unchanged && !v.replaced, "{v:?}");
    assert_eq!((v.doc, v.seq, v.cluster), (va.doc, va.seq, va.cluster));
    let after = ix.get("a").unwrap().unwrap();
    assert_eq!(after.time, 500);
    assert_eq!(
        (
            after.doc,
            after.seq,
            after.cluster,
            after.representative.as_str()
        ),
        (before.doc, before.seq, before.cluster, "a")
    );
    // The same time again: unchanged, nothing to write.
    let v = ix.insert(&timed("a", "x.example", a, 500)).unwrap();
    assert!(v.unchanged, "{v:?}");

    // Through the batch path too.
    let opts = BatchOptions::default();
    let vs = ix
        .insert_batch(&[timed("b", "y.example", b, 3000)], &opts, &mut |_, _| {})
        .unwrap();
    let vb = vs[0].as_ref().unwrap();
    assert!(vb.unchanged, "{vb:?}");
    assert_eq!(ix.get("b").unwrap().unwrap().time, 3000);
    assert_clean(&ix);

    // Kept across a reopen.
    drop(ix);
    let ix = open_with(dir.path(), |_| {});
    assert_eq!(ix.get("a").unwrap().unwrap().time, 500);
    assert_eq!(ix.get("b").unwrap().unwrap().time, 3000);
    assert_clean(&ix);
}

/// Under `EarliestTime` the time names the representative: a new time is a changed recrawl,
/// decided again — an earlier time can take the lead.
#[test]
fn under_earliest_time_a_new_time_is_decided_again() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open_with(dir.path(), |o| {
        o.representative = RepresentativePolicy::EarliestTime
    });
    let p = pages();
    let (a, b) = (leak(&p.a), leak(&p.b));
    let timed = |k: &'static str, h: &'static str, html: &'static str, time| Page {
        time,
        ..page(k, h, html)
    };
    ix.insert(&timed("a", "x.example", a, 1000)).unwrap();
    ix.insert(&timed("b", "y.example", b, 2000)).unwrap();
    assert_eq!(ix.representative_of("b").unwrap().unwrap().1, "a");
    let v = ix.insert(&timed("b", "y.example", b, 500)).unwrap();
    assert!(v.replaced && !v.unchanged, "{v:?}");
    assert_eq!(ix.get("b").unwrap().unwrap().time, 500);
    assert_eq!(ix.representative_of("a").unwrap().unwrap().1, "b");
    assert_clean(&ix);
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}
