//! The change feed (issue #33, item 4): every committed change with its sequence number —
//! inserts, replaces, new publish times, deletes, and what they did to other pages and clusters
//! — kept across reopens for the configured retention, and enough in each to apply it again: a
//! copy that applies the feed holds what the original holds.

mod common;
use common::{article, assert_clean, edited, exports, family_page, html, page};
use neardup::{
    BatchOptions, BatchOrder, Change, ChangeKind, Content, Error, Index, IndexOptions, Page,
    Record, Signatures,
};

fn options() -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        ..IndexOptions::default()
    }
}

fn all_changes(ix: &Index, since: u64) -> Vec<Change> {
    ix.changes_since(since)
        .unwrap()
        .map(|c| c.unwrap())
        .collect()
}

/// Applies to `copy` the changes of `original` after `since`; returns the last one applied.
fn follow(original: &Index, copy: &Index, since: u64) -> u64 {
    let mut last = since;
    for c in original.changes_since(since).unwrap() {
        let c = c.unwrap();
        assert_eq!(c.seq, last + 1, "sequence numbers follow one another");
        copy.apply_change(&c).unwrap();
        last = c.seq;
    }
    last
}

/// Every stored page as `get` gives it, by key.
fn records(ix: &Index) -> Vec<Record> {
    let mut r: Vec<Record> = ix.pages().unwrap().map(|p| p.unwrap()).collect();
    r.sort_by(|a, b| a.key.cmp(&b.key));
    r
}

fn batch(ix: &Index, pages: &[(String, String, String)], opts: &BatchOptions) {
    let pages: Vec<Page<'_>> = pages.iter().map(|(k, h, x)| page(k, h, x)).collect();
    for v in ix.insert_batch(&pages, opts, &mut |_, _| {}).unwrap() {
        v.unwrap();
    }
}

/// The changes callers asked for, without their commit times.
fn asked(changes: &[Change]) -> Vec<ChangeKind> {
    changes
        .iter()
        .filter(|c| {
            !matches!(
                c.kind,
                ChangeKind::Moved { .. } | ChangeKind::RepresentativeChanged { .. }
            )
        })
        .map(|c| c.kind.clone())
        .collect()
}

#[test]
fn a_copy_that_applies_the_feed_holds_what_the_original_holds() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ix = Index::open(dirs.0.path(), options()).unwrap();
    let copy = Index::open(dirs.1.path(), options()).unwrap();
    assert_eq!(ix.last_change(), 0);
    assert_eq!(all_changes(&ix, 0), Vec::new());

    // Batches of near-duplicate families, in small groups and windows (several commits, pages
    // of one family in different groups), in both orders.
    let pages: Vec<(String, String, String)> = (0..14u64)
        .flat_map(|f| (0..5u64).map(move |v| (f, v)))
        .map(|(f, v)| {
            let (host, x) = family_page(f, v);
            (format!("f{f}v{v}"), host, x)
        })
        .collect();
    let small = BatchOptions {
        group: 7,
        window: 16,
        ..BatchOptions::default()
    };
    batch(&ix, &pages[..40], &small);
    batch(
        &ix,
        &pages[40..],
        &BatchOptions {
            order: BatchOrder::FingerprintCount,
            ..small
        },
    );
    // One by one: unrelated pages, and a page without main text.
    for i in 0..6u64 {
        let x = html(i as usize, &format!("Alone {i}"), &article(500 + i, 5));
        ix.insert(&page(&format!("alone{i}"), "solo.example", &x))
            .unwrap();
    }
    ix.insert(&page(
        "empty",
        "solo.example",
        "<html><body><p>Moved.</p></body></html>",
    ))
    .unwrap();

    // The first half of the feed, applied to the copy while the original goes on.
    let mid = follow(&ix, &copy, 0);
    assert_eq!(mid, ix.last_change());
    assert_eq!(copy.last_change(), mid);

    // Deletes: representatives (a hand-over, members placed again) and members.
    let reps: Vec<String> = ix
        .clusters()
        .unwrap()
        .map(|c| c.unwrap())
        .filter(|c| c.size > 2)
        .map(|c| c.representative)
        .take(4)
        .collect();
    assert!(reps.len() >= 2, "{reps:?}");
    for k in &reps {
        ix.delete(k).unwrap();
    }
    ix.delete("f5v3").unwrap();
    // An unchanged recrawl with a new publish time: written in place.
    let (host, x) = family_page(6, 1);
    let retimed = ix
        .insert(&Page {
            time: 1_700_000_000,
            ..page("f6v1", &host, &x)
        })
        .unwrap();
    assert!(retimed.unchanged && retimed.unchanged_html);
    // An unchanged recrawl whose footer changed: its page hash written in place.
    let (host, x) = family_page(12, 0);
    let footer = x.replace("Copyright Daily,", "Copyright Daily 2026,");
    assert_ne!(footer, x);
    let refreshed = ix.insert(&page("f12v0", &host, &footer)).unwrap();
    assert!(refreshed.unchanged && !refreshed.unchanged_html);
    // Changed recrawls: a representative (kept, sticky, or handed over) and a member.
    let rep6 = ix.representative_of("f6v1").unwrap().unwrap().1;
    let f6 = article(9_006, 6);
    let x = html(0, "Story 6", &edited(&edited(&f6, 77), 78));
    assert!(ix.insert(&page(&rep6, "h2.example", &x)).unwrap().replaced);
    let x = html(1, "Other", &article(7_777, 6));
    assert!(ix.insert(&page("f7v2", "h3.example", &x)).unwrap().replaced);
    // A batch that replaces pages (the ids they free are held until it ends) and adds others.
    let mut again: Vec<(String, String, String)> = (0..5u64)
        .map(|v| {
            // Odd variants are edited, each its own way: changed pages.
            let (host, x) = family_page(8, 2 * v + 11);
            (format!("f8v{v}"), host, x)
        })
        .collect();
    again.extend((0..4u64).map(|v| {
        let (host, x) = family_page(20, v);
        (format!("f20v{v}"), host, x)
    }));
    batch(&ix, &again, &small);
    // Every member of a cluster deleted: the cluster goes.
    let members: Vec<String> = ix
        .members(ix.get("f9v0").unwrap().unwrap().cluster)
        .unwrap()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    for m in &members {
        ix.delete(m).unwrap();
    }

    let changes = all_changes(&ix, 0);
    let kinds = |f: fn(&ChangeKind) -> bool| changes.iter().filter(|c| f(&c.kind)).count();
    assert!(kinds(|k| matches!(k, ChangeKind::Inserted(_))) >= 70);
    assert!(kinds(|k| matches!(k, ChangeKind::Replaced(_))) >= 7);
    assert_eq!(
        kinds(|k| matches!(
            k,
            ChangeKind::Retimed {
                time: 1_700_000_000,
                ..
            }
        )),
        1
    );
    let footer_hash = Some(Content::Html(footer.as_bytes()).raw_hash());
    assert_eq!(
        kinds(|k| matches!(k, ChangeKind::Retimed { .. })),
        2,
        "a new time, a new page hash"
    );
    assert!(changes.iter().any(|c| matches!(
        &c.kind,
        ChangeKind::Retimed { key, time: 0, raw_hash, .. }
            if key == "f12v0" && *raw_hash == footer_hash
    )));
    assert!(kinds(|k| matches!(k, ChangeKind::Deleted { .. })) >= 4);
    assert!(
        kinds(|k| matches!(k, ChangeKind::RepresentativeChanged { .. })) >= 1,
        "a representative's delete hands its cluster over"
    );
    for (i, c) in changes.iter().enumerate() {
        assert_eq!(c.seq, i as u64 + 1);
    }
    // What an insert carries: the key, host, time and the text the index decided on.
    let ChangeKind::Inserted(p) = &changes[0].kind else {
        panic!("{:?}", changes[0]);
    };
    assert_eq!(p.key, "f0v0");
    assert_eq!(p.host, "h0.example");
    let sig = Signatures::compute(
        Content::Html(pages[0].2.as_bytes()),
        &ix.options().signature,
    )
    .unwrap();
    assert_eq!(p.text, sig.text);
    assert_eq!(p.codes, sig.codes);
    assert_eq!(
        p.raw_hash,
        Some(Content::Html(pages[0].2.as_bytes()).raw_hash())
    );
    // A change travels as bytes.
    for c in &changes {
        assert_eq!(&Change::from_bytes(&c.to_bytes()).unwrap(), c);
    }

    // The rest, applied to the copy: the same pages, ids, clusters and representatives.
    let last = follow(&ix, &copy, mid);
    assert_eq!(last, ix.last_change());
    assert_eq!(exports(&copy), exports(&ix));
    assert_eq!(records(&copy), records(&ix));
    assert_clean(&copy);
    // The copy's feed is the original's, change for change (moves and hand-overs included,
    // though a batch's group records fewer of them than its pages applied one by one): its
    // last change is where it follows from, and it can itself be followed.
    assert_eq!(copy.last_change(), last);
    assert_eq!(all_changes(&copy, 0), changes);
    assert_eq!(asked(&all_changes(&copy, 0)), asked(&changes));
    // The page hashes came over with the changes: recrawled on the copy, the footer's version
    // (from a retime) and a page as inserted are byte-identical there, and write nothing.
    let held = copy.last_change();
    let (host, _) = family_page(12, 0);
    let v = copy.insert(&page("f12v0", &host, &footer)).unwrap();
    assert!(v.unchanged && v.unchanged_html, "{v:?}");
    let (host, x) = family_page(13, 2);
    let v = copy.insert(&page("f13v2", &host, &x)).unwrap();
    assert!(v.unchanged && v.unchanged_html, "{v:?}");
    assert_eq!(copy.last_change(), held);

    // A change applied twice, or to an index that is not a copy, is refused, nothing written.
    let before = copy.last_change();
    let first = &changes[0];
    assert!(matches!(
        copy.apply_change(first),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(copy.last_change(), before);
}

#[test]
fn the_feed_survives_reopening_and_is_trimmed_to_its_retention() {
    let dir = tempfile::tempdir().unwrap();
    let opts = IndexOptions {
        change_retention: 16,
        ..options()
    };
    let pages: Vec<(String, String, String)> = (0..30u64)
        .map(|i| {
            let (host, x) = family_page(i / 3, i % 3);
            (format!("p{i}"), host, x)
        })
        .collect();
    {
        let ix = Index::open(dir.path(), opts.clone()).unwrap();
        for (k, h, x) in &pages[..20] {
            ix.insert(&page(k, h, x)).unwrap();
        }
    }
    let ix = Index::open(dir.path(), opts.clone()).unwrap();
    let last = ix.last_change();
    assert!(last >= 20, "{last}");
    // At least the retention is kept, at most an eighth more.
    let kept = all_changes(&ix, last - 16);
    assert_eq!(kept.len(), 16);
    match ix.changes_since(0) {
        Err(Error::ChangesTrimmed { since: 0, trimmed }) => {
            assert!((last - 18..=last - 16).contains(&trimmed), "{trimmed}")
        }
        other => panic!("{:?}", other.map(|c| c.last_change())),
    }
    // Numbers go on from where they were.
    ix.insert(&page(&pages[20].0, &pages[20].1, &pages[20].2))
        .unwrap();
    let next = all_changes(&ix, last);
    assert_eq!(next[0].seq, last + 1);
    assert!(matches!(
        next[0].kind,
        ChangeKind::Inserted(ref p) if p.key == "p20"
    ));
    // A follower ahead of the index is not following it.
    assert!(matches!(
        ix.changes_since(ix.last_change() + 1),
        Err(Error::InvalidArgument(_))
    ));
    drop(ix);

    // Nothing kept: numbers still advance, and a follower learns it missed changes.
    let ix = Index::open(
        dir.path(),
        IndexOptions {
            change_retention: 0,
            ..opts.clone()
        },
    )
    .unwrap();
    let before = ix.last_change();
    for (k, h, x) in &pages[21..24] {
        ix.insert(&page(k, h, x)).unwrap();
    }
    let last = ix.last_change();
    assert!(last >= before + 3);
    assert!(matches!(
        ix.changes_since(before),
        Err(Error::ChangesTrimmed { .. })
    ));
    assert_eq!(all_changes(&ix, last), Vec::new());
    assert_clean(&ix);
    drop(ix);

    // Read-only, the feed reads as it was left.
    let ro = Index::open_read_only(dir.path()).unwrap();
    assert_eq!(ro.last_change(), last);
    assert_eq!(all_changes(&ro, last), Vec::new());
}

#[test]
fn a_snapshot_compacted_keeps_its_feed() {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ix = Index::open(dirs.0.path(), options()).unwrap();
    for i in 0..12u64 {
        let (host, x) = family_page(i / 4, i % 4);
        ix.insert(&page(&format!("p{i}"), &host, &x)).unwrap();
    }
    ix.delete("p0").unwrap();
    let changes = all_changes(&ix, 0);
    let cp = dirs.1.path().join("cp");
    ix.checkpoint(&cp).unwrap();
    let out = dirs.1.path().join("compacted");
    Index::compact_snapshot(&cp, &out).unwrap();
    let c = Index::open(&out, options()).unwrap();
    assert_eq!(c.last_change(), ix.last_change());
    assert_eq!(all_changes(&c, 0), changes);
}

/// `check` reads the feed: a record that does not decode, a change missing in the middle or
/// at the end, and one past the counter are each reported; a clean feed is clean.
#[test]
fn check_finds_a_feed_out_of_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ix");
    {
        let ix = Index::open(&path, options()).unwrap();
        for i in 0..5u64 {
            ix.insert(&page(
                &format!("p{i}"),
                "h",
                &html(i as usize, "t", &article(40 + i, 6)),
            ))
            .unwrap();
        }
        assert_eq!(ix.last_change(), 5);
        assert_clean(&ix);
        ix.flush().unwrap();
    }
    {
        let cfs = rocksdb::DB::list_cf(&rocksdb::Options::default(), &path).unwrap();
        let db = rocksdb::DB::open_cf(&rocksdb::Options::default(), &path, cfs).unwrap();
        let feed = db.cf_handle("changes").unwrap();
        db.delete_cf(feed, 2u64.to_be_bytes()).unwrap();
        db.delete_cf(feed, 5u64.to_be_bytes()).unwrap();
        let mut bad = db.get_cf(feed, 3u64.to_be_bytes()).unwrap().unwrap();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        db.put_cf(feed, 3u64.to_be_bytes(), &bad).unwrap();
        let fourth = db.get_cf(feed, 4u64.to_be_bytes()).unwrap().unwrap();
        db.put_cf(feed, 9u64.to_be_bytes(), &fourth).unwrap();
        db.flush_cf(feed).unwrap();
    }
    let ix = Index::open_existing(&path).unwrap();
    let report = ix.check().unwrap();
    let problems = report.problems.join("\n");
    for want in [
        "the change feed lacks changes 2 to 2",
        "checksum mismatch",
        "the change feed holds change 9, outside 1 to 5",
        "the change feed lacks changes 5 to 5",
    ] {
        assert!(problems.contains(want), "{want:?} not in {problems}");
    }
}
