//! Recrawls (issue "Embedding-grade", point 3): re-inserting a key whose main text is unchanged
//! is a no-op that returns the stored verdict — no new id, no verification, no change of role —
//! while a changed page replaces the old one. And what the verdict says a crawler needs (point
//! 4): whether an identical main text is already stored, and under which key; and (issue #33,
//! B4) whether the recrawled page is byte-identical or the same main text only.

mod common;
use common::{article, assert_clean, edited, html, open, page};
use neardup::{BatchOptions, BatchOrder, ChangeKind, Content, Page, Signatures};

#[test]
fn an_unchanged_recrawl_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(1, 6);
    let (ha, hb) = (html(0, "A", &a), html(1, "A again", &edited(&a, 2)));
    let hc = html(2, "C", &article(3, 6));
    let va = ix.insert(&page("a", "x.example", &ha)).unwrap();
    let vb = ix.insert(&page("b", "y.example", &hb)).unwrap();
    ix.insert(&page("c", "x.example", &hc)).unwrap();
    assert!(vb.duplicate && vb.similar_to.as_deref() == Some("a"));

    // The representative recrawled, same text (other markup around it is the same page):
    // same id, same cluster, still the representative, nothing verified.
    let again = ix.insert(&page("a", "x.example", &ha)).unwrap();
    assert!(
        again.unchanged && again.unchanged_html && !again.replaced,
        "{again:?}"
    );
    assert_eq!((again.doc, again.cluster), (va.doc, va.cluster));
    assert_eq!(again.representative.as_deref(), Some("a"));
    assert_eq!(again.verified, 0);
    assert_eq!(ix.representative_of("b").unwrap().unwrap().1, "a");

    // The duplicate recrawled: its stored verdict.
    let again = ix.insert(&page("b", "y.example", &hb)).unwrap();
    assert!(again.unchanged && again.duplicate, "{again:?}");
    assert_eq!(again.doc, vb.doc);
    assert_eq!(again.similar_to.as_deref(), Some("a"));
    assert_eq!(ix.len(), 3);

    // A batch of unchanged recrawls: all no-ops.
    let pages = [
        page("a", "x.example", &ha),
        page("b", "y.example", &hb),
        page("c", "x.example", &hc),
    ];
    let opts = BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    };
    for v in ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap() {
        let v = v.unwrap();
        assert!(v.unchanged, "{v:?}");
    }
    assert_eq!(ix.len(), 3);

    // A changed page replaces the old one (a new id), and the cluster follows its new text.
    let changed = html(0, "A", &article(4, 6));
    let v = ix.insert(&page("a", "x.example", &changed)).unwrap();
    assert!(v.replaced && !v.unchanged && !v.duplicate, "{v:?}");
    assert_ne!(v.doc, va.doc);
    // Moved to another host: not the same page record, so it is replaced too.
    let v = ix.insert(&page("c", "z.example", &hc)).unwrap();
    assert!(v.replaced && !v.unchanged, "{v:?}");
    assert_eq!(ix.len(), 3);
    assert_clean(&ix);
    drop(ix);

    // After reopening, an unchanged recrawl is still recognized.
    let ix = open(dir.path());
    let v = ix.insert(&page("b", "y.example", &hb)).unwrap();
    assert!(v.unchanged, "{v:?}");
    assert_clean(&ix);
}

#[test]
fn a_recrawl_tells_the_same_page_from_the_same_main_text() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(21, 6);
    let ha = html(0, "A", &a);
    let hb = html(1, "A again", &edited(&a, 2));
    let va = ix.insert(&page("a", "x.example", &ha)).unwrap();
    let vb = ix.insert(&page("b", "y.example", &hb)).unwrap();
    assert!(!va.unchanged_html && !vb.unchanged_html);
    assert!(vb.duplicate, "{vb:?}");

    // The same bytes: unchanged and unchanged_html, nothing written (the feed has no change).
    let last = ix.last_change();
    let v = ix.insert(&page("a", "x.example", &ha)).unwrap();
    assert!(v.unchanged && v.unchanged_html && !v.replaced, "{v:?}");
    assert_eq!(ix.last_change(), last);

    // The footer changed, not the main text: unchanged, not unchanged_html. Nothing decided
    // again (same id, insertion number, cluster and role); the page's hash written in place.
    let footer = ha.replace("Copyright Daily,", "Copyright Daily 2026,");
    assert_ne!(footer, ha);
    let cfg = &ix.options().signature;
    assert_eq!(
        Signatures::compute(Content::Html(footer.as_bytes()), cfg)
            .unwrap()
            .content_hash,
        Signatures::compute(Content::Html(ha.as_bytes()), cfg)
            .unwrap()
            .content_hash,
        "the footer is outside the main text"
    );
    let v = ix.insert(&page("a", "x.example", &footer)).unwrap();
    assert!(v.unchanged && !v.unchanged_html && !v.replaced, "{v:?}");
    assert_eq!((v.doc, v.seq, v.cluster), (va.doc, va.seq, va.cluster));
    assert_eq!(v.representative.as_deref(), Some("a"));
    assert_eq!(v.verified, 0);
    let changes: Vec<_> = ix
        .changes_since(last)
        .unwrap()
        .map(|c| c.unwrap().kind)
        .collect();
    assert_eq!(
        changes,
        [ChangeKind::Retimed {
            key: "a".into(),
            doc: va.doc.unwrap(),
            time: 0,
            raw_hash: Some(Content::Html(footer.as_bytes()).raw_hash()),
        }]
    );
    // Now that version is the stored one: byte-identical, nothing written; the old one is not.
    let last = ix.last_change();
    let v = ix.insert(&page("a", "x.example", &footer)).unwrap();
    assert!(v.unchanged && v.unchanged_html, "{v:?}");
    assert_eq!(ix.last_change(), last);
    let v = ix.insert(&page("a", "x.example", &ha)).unwrap();
    assert!(v.unchanged && !v.unchanged_html, "{v:?}");
    assert_eq!(ix.last_change(), last + 1);

    // A new publish time with the same bytes: unchanged_html, the time written in place.
    let v = ix
        .insert(&Page {
            time: 1_700_000_000,
            ..page("a", "x.example", &ha)
        })
        .unwrap();
    assert!(v.unchanged && v.unchanged_html, "{v:?}");
    assert_eq!(ix.last_change(), last + 2);
    assert_eq!(ix.get("a").unwrap().unwrap().time, 1_700_000_000);

    // In a batch alike: the duplicate byte-identical, the representative's footer changed.
    let last = ix.last_change();
    let pages = [
        page("b", "y.example", &hb),
        Page {
            time: 1_700_000_000,
            ..page("a", "x.example", &footer)
        },
    ];
    let opts = BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    };
    let vs: Vec<_> = ix
        .insert_batch(&pages, &opts, &mut |_, _| {})
        .unwrap()
        .into_iter()
        .map(|v| v.unwrap())
        .collect();
    assert!(vs[0].unchanged && vs[0].unchanged_html, "{:?}", vs[0]);
    assert!(vs[1].unchanged && !vs[1].unchanged_html, "{:?}", vs[1]);
    assert_eq!((vs[1].doc, vs[1].cluster), (va.doc, va.cluster));
    assert_eq!(ix.last_change(), last + 1);

    // The same bytes as text are another page (same main text here: unchanged only).
    let text = "One paragraph of a text page, long enough to have a main text of its own.\n\
                And a second one, so that it is not too short to be compared with others.";
    let t = |content| Page {
        key: "t",
        host: "x.example",
        time: 0,
        content,
    };
    ix.insert(&t(Content::Text(text))).unwrap();
    let v = ix.insert(&t(Content::Text(text))).unwrap();
    assert!(v.unchanged && v.unchanged_html, "{v:?}");
    assert_ne!(
        Content::Text(text).raw_hash(),
        Content::Html(text.as_bytes()).raw_hash()
    );
    // A query is never unchanged.
    let q = ix.query(Content::Html(footer.as_bytes())).unwrap();
    assert!(!q.unchanged && !q.unchanged_html, "{q:?}");
    assert_clean(&ix);
    drop(ix);

    // After reopening, the stored hash (and time) are still there.
    let ix = open(dir.path());
    let last = ix.last_change();
    let v = ix
        .insert(&Page {
            time: 1_700_000_000,
            ..page("a", "x.example", &footer)
        })
        .unwrap();
    assert!(v.unchanged && v.unchanged_html, "{v:?}");
    assert_eq!(ix.last_change(), last);
    assert_clean(&ix);
}

#[test]
fn the_verdict_names_a_stored_identical_text() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(11, 6);
    let ha = html(0, "A", &a);
    let hb = html(1, "B", &edited(&a, 12));
    let va = ix.insert(&page("a", "x.example", &ha)).unwrap();
    assert_eq!(va.identical_to, None);
    assert!(va.text_chars > 100, "{va:?}");
    let vb = ix.insert(&page("b", "x.example", &hb)).unwrap();
    assert!(vb.duplicate && vb.identical_to.is_none(), "{vb:?}");
    // A copy of B's text under another template and key: identical to B, whatever it was
    // verified against or joined.
    let hc = html(2, "B", &edited(&a, 12));
    let q = ix.query(neardup::Content::Html(hc.as_bytes())).unwrap();
    assert_eq!(q.identical_to.as_deref(), Some("b"), "{q:?}");
    let vc = ix.insert(&page("c", "y.example", &hc)).unwrap();
    assert_eq!(vc.identical_to.as_deref(), Some("b"), "{vc:?}");
    assert_eq!(vc.text_chars, vb.text_chars);
    // Its unchanged recrawl still names B, not itself.
    let again = ix.insert(&page("c", "y.example", &hc)).unwrap();
    assert!(again.unchanged, "{again:?}");
    assert_eq!(again.identical_to.as_deref(), Some("b"), "{again:?}");
    // Pages without main text are identical to nothing.
    for k in ["e1", "e2"] {
        let v = ix.insert(&page(k, "x.example", "<html></html>")).unwrap();
        assert!(v.no_main_text && v.identical_to.is_none(), "{v:?}");
    }
    assert_clean(&ix);
}

#[test]
fn an_index_is_created_only_in_a_new_or_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"the engine's own file").unwrap();
    let Err(err) = neardup::Index::open(dir.path(), neardup::IndexOptions::default()) else {
        panic!("an index was made in a directory holding other files");
    };
    assert!(matches!(err, neardup::Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("not empty"), "{err}");
    let file = dir.path().join("notes.txt");
    let Err(err) = neardup::Index::open(&file, neardup::IndexOptions::default()) else {
        panic!("an index was opened on a regular file");
    };
    assert!(err.to_string().contains("not a directory"), "{err}");
    // An empty directory, and a missing one, become indexes; so does one holding only the
    // files of a creation cut short.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    drop(open(&empty));
    drop(open(&dir.path().join("new")));
    let cut = dir.path().join("cut");
    std::fs::create_dir(&cut).unwrap();
    std::fs::write(cut.join("LOCK"), b"").unwrap();
    std::fs::write(cut.join("LOG"), b"").unwrap();
    drop(open(&cut));
}
