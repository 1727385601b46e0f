//! The reads an engine needs (issue "Embedding-grade", point 5): a key's stored record, what a
//! delete changed, cursors over clusters, members, keys and pages (the last two resumable),
//! batch queries, the stored configuration, and a read-only handle beside the writer.

mod common;
use common::{article, article_rich, assert_clean, edited, html, open, page};
use neardup::{Content, Error, Index};

#[test]
fn get_gives_the_stored_record() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(1, 6);
    let (ha, hb) = (html(0, "A", &a), html(1, "B", &edited(&a, 2)));
    let va = ix.insert(&page("a", "x.example", &ha)).unwrap();
    let vb = ix.insert(&page("b", "y.example", &hb)).unwrap();
    let rb = ix.get("b").unwrap().unwrap();
    assert_eq!(rb.key, "b");
    assert_eq!(Some(rb.doc), vb.doc);
    assert_eq!(Some(rb.cluster), va.cluster);
    assert_eq!(rb.representative, "a");
    assert_eq!(rb.similar_to.as_deref(), Some("a"));
    assert!((rb.resemble - vb.resemble).abs() < 1e-6, "{rb:?} {vb:?}");
    assert!((rb.contain - vb.contain).abs() < 1e-6);
    assert_eq!(rb.host, "y.example");
    assert_eq!(rb.text_chars, vb.text_chars);
    let ra = ix.get("a").unwrap().unwrap();
    assert_eq!((ra.representative.as_str(), ra.similar_to), ("a", None));
    assert!(ra.seq < rb.seq);
    assert_eq!(ix.get("nobody").unwrap(), None);
}

#[test]
fn a_delete_says_what_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    // "a" leads; "b" is close to "a"; "c" contains only "a"'s first paragraphs with its own
    // after them, so it verifies against "a" but not against "b" once "a" is gone… whatever
    // verification decides, the result must say where every member is now.
    let a = article(3, 8);
    let b = edited(&a, 4);
    let mut c: Vec<String> = a[..4].to_vec();
    c.extend(article(77, 4));
    for (k, body) in [("a", &a), ("b", &b), ("c", &c)] {
        ix.insert(&page(k, "h.example", &html(0, k, body))).unwrap();
    }
    let before = ix.get("a").unwrap().unwrap();
    let d = ix.delete("a").unwrap();
    assert_eq!(d.key, "a");
    assert_eq!(d.cluster, before.cluster);
    assert!(d.was_representative);
    let rep = d
        .representative
        .clone()
        .expect("the cluster had other members");
    assert_eq!(ix.get(&rep).unwrap().unwrap().representative, rep);
    for m in &d.moved {
        let r = ix.get(&m.key).unwrap().unwrap();
        assert_eq!(
            (r.cluster, r.representative.as_str()),
            (m.cluster, m.representative.as_str())
        );
        assert_ne!(m.cluster, d.cluster);
    }
    // A member's delete: the representative stays.
    let members: Vec<String> = ix
        .members(d.cluster)
        .unwrap()
        .unwrap()
        .map(|k| k.unwrap())
        .collect();
    if let Some(m) = members.iter().find(|m| **m != rep) {
        let d2 = ix.delete(m).unwrap();
        assert!(!d2.was_representative && d2.moved.is_empty());
        assert_eq!(d2.representative.as_deref(), Some(rep.as_str()));
    }
    // The last page of a cluster: the cluster is gone.
    let last = ix.delete(&rep).unwrap();
    if ix.members(d.cluster).unwrap().is_none() {
        assert_eq!(last.representative, None);
    }
    assert_clean(&ix);
}

#[test]
fn cursors_walk_clusters_members_and_keys_at_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let mut bodies = Vec::new();
    for f in 0..5u64 {
        let a = article(10 + f, 5);
        for v in 0..3u64 {
            bodies.push((
                format!("f{f}-{v}"),
                html(v as usize, "T", &edited(&a, 100 * f + v)),
            ));
        }
    }
    for (k, b) in &bodies {
        ix.insert(&page(k, "h.example", b)).unwrap();
    }
    let mut clusters = Vec::new();
    ix.export_clusters(|c, rep, members| clusters.push((c, rep.to_string(), members.len() as u64)))
        .unwrap();
    let walked: Vec<_> = ix
        .clusters()
        .unwrap()
        .map(|c| {
            let c = c.unwrap();
            (c.cluster, c.representative, c.size)
        })
        .collect();
    assert_eq!(walked, clusters);
    for (c, _, size) in &clusters {
        let members: Vec<String> = ix
            .members(*c)
            .unwrap()
            .unwrap()
            .map(|k| k.unwrap())
            .collect();
        assert_eq!(members.len() as u64, *size);
        for m in &members {
            assert_eq!(ix.get(m).unwrap().unwrap().cluster, *c);
        }
    }
    assert!(ix.members(u32::MAX - 1).unwrap().is_none());
    // A cursor opened before writes does not see them.
    let keys = ix.keys().unwrap();
    ix.insert(&page("late", "h.example", &html(0, "L", &article(999, 5))))
        .unwrap();
    ix.delete("f0-0").unwrap();
    let seen: Vec<(String, u32)> = keys.map(|k| k.unwrap()).collect();
    assert_eq!(seen.len(), bodies.len());
    assert!(seen.iter().any(|(k, _)| k == "f0-0"));
    assert!(!seen.iter().any(|(k, _)| k == "late"));
}

#[test]
fn query_batch_equals_queries_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let mut bodies = Vec::new();
    for f in 0..4u64 {
        let a = article(40 + f, 6);
        ix.insert(&page(&format!("s{f}"), "h.example", &html(0, "S", &a)))
            .unwrap();
        bodies.push(html(1, "Q", &edited(&a, 7 + f)));
        bodies.push(html(2, "N", &article(700 + f, 6)));
    }
    bodies.push(String::new());
    let contents: Vec<Content<'_>> = bodies.iter().map(|b| Content::Html(b.as_bytes())).collect();
    let batch = ix.query_batch(&contents).unwrap();
    assert_eq!(batch.len(), contents.len());
    for (c, b) in contents.iter().zip(&batch) {
        let one = ix.query(*c).unwrap();
        let b = b.as_ref().unwrap();
        assert_eq!(
            (b.duplicate, &b.similar_to, b.cluster, b.exact),
            (one.duplicate, &one.similar_to, one.cluster, one.exact)
        );
    }
    assert_eq!(
        batch
            .iter()
            .filter(|v| v.as_ref().unwrap().duplicate)
            .count(),
        4
    );
}

#[test]
fn a_read_only_handle_serves_beside_the_writer_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article(5, 6);
    ix.insert(&page("a", "x.example", &html(0, "A", &a)))
        .unwrap();
    ix.flush().unwrap();
    // Beside the writer, in the same process: not an "already open".
    let ro = Index::open_read_only(dir.path()).unwrap();
    assert!(ro.is_read_only());
    assert_eq!(ro.len(), 1);
    assert_eq!(ro.get("a").unwrap().unwrap().representative, "a");
    let q = ro
        .query(Content::Html(html(1, "B", &edited(&a, 1)).as_bytes()))
        .unwrap();
    assert_eq!(q.similar_to.as_deref(), Some("a"));
    let b = html(1, "B", &article(6, 6));
    for e in [
        ro.insert(&page("b", "y.example", &b)).unwrap_err(),
        ro.delete("a").unwrap_err(),
        ro.compact().unwrap_err(),
    ] {
        assert!(matches!(e, Error::ReadOnly(..)), "{e}");
    }
    assert!(ro.check().unwrap().is_clean());
    // A checkpoint opens read-only too, and its configuration can be read.
    let cp = dir.path().join("cp");
    ix.checkpoint(&cp).unwrap();
    drop(ix);
    let json = Index::stored_config_json(&cp).unwrap();
    assert!(json.contains("\"representative\""), "{json}");
    let ro2 = Index::open_read_only(&cp).unwrap();
    assert_eq!(ro2.config_json().unwrap(), json);
    assert_eq!(ro2.len(), 1);
    assert!(Index::open_read_only(dir.path().join("nothing")).is_err());
}

/// The page cursor gives `get`'s records in id order; both cursors resume from an id (the
/// Python mapping reads keys and pages in chunks).
#[test]
fn cursors_resume_from_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article_rich(1, 6);
    ix.insert(&page("a", "a.example", &html(0, "A", &a)))
        .unwrap();
    ix.insert(&page("b", "b.example", &html(1, "B", &article_rich(2, 6))))
        .unwrap();
    ix.insert(&page("e", "e.example", &html(2, "A", &edited(&a, 3))))
        .unwrap();
    ix.insert(&page("c", "c.example", &html(0, "C", &article_rich(7, 5))))
        .unwrap();
    let all_keys: Vec<(String, u32)> = ix.keys().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(all_keys.len(), 4);
    // Records as `get` gives them, in id order.
    let pages: Vec<neardup::Record> = ix.pages().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(pages.len(), 4);
    for (r, (k, c)) in pages.iter().zip(&all_keys) {
        assert_eq!((&r.key, r.cluster), (k, *c));
        assert_eq!(Some(r), ix.get(k).unwrap().as_ref());
    }
    assert!(pages.windows(2).all(|w| w[0].doc < w[1].doc));
    // Two at a time, resuming after the last id.
    let mut chunked = Vec::new();
    let mut next = 0;
    loop {
        let mut cur = ix.keys_from(next).unwrap();
        let chunk: Vec<(String, u32)> = cur.by_ref().take(2).map(|r| r.unwrap()).collect();
        if chunk.is_empty() {
            break;
        }
        next = cur.last_doc().unwrap() + 1;
        chunked.extend(chunk);
    }
    assert_eq!(chunked, all_keys);
    let from_third: Vec<String> = ix
        .pages_from(pages[2].doc)
        .unwrap()
        .map(|r| r.unwrap().key)
        .collect();
    assert_eq!(from_third, vec![pages[2].key.clone(), pages[3].key.clone()]);
    assert_eq!(ix.keys_from(u32::MAX).unwrap().count(), 0);
    assert_eq!(ix.keys().unwrap().last_doc(), None);
}
