//! Cluster membership stays honest (a member verifies against its representative) and pages
//! without main text are never decided by their content hash.

use neardup::{Content, Index, IndexOptions, Page};

/// A paragraph of distinct words: texts built from different paragraphs share nothing by chance.
fn para(i: usize) -> String {
    (0..4)
        .map(|s| {
            let w = |k: &str| format!("{k}{i}x{s}");
            format!(
                "Topic {} {} {} {} {} {} {} {} {}.",
                w("alpha"),
                w("beta"),
                w("gamma"),
                w("delta"),
                w("epsilon"),
                w("zeta"),
                w("eta"),
                w("theta"),
                w("iota")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn text(paras: impl IntoIterator<Item = usize>) -> String {
    paras.into_iter().map(para).collect::<Vec<_>>().join("\n")
}

fn page<'a>(key: &'a str, body: &'a str) -> Page<'a> {
    Page {
        key,
        host: "docs.example",
        time: 0,
        content: Content::Text(body),
    }
}

#[test]
fn a_page_like_only_a_member_founds_its_own_cluster_and_names_the_member() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), IndexOptions::default()).unwrap();
    // B shares half of A, C shares half of B and nothing with A: resemblance is not transitive.
    let (a, b, c) = (text(0..10), text(5..15), text(10..20));
    let va = ix.insert(&page("a", &a)).unwrap();
    let vb = ix.insert(&page("b", &b)).unwrap();
    assert!(vb.duplicate, "B resembles A");
    assert_eq!(vb.cluster, va.cluster);
    let vc = ix.insert(&page("c", &c)).unwrap();
    assert!(vc.duplicate, "C resembles B");
    assert_eq!(vc.similar_to.as_deref(), Some("b"));
    assert_ne!(
        vc.cluster, va.cluster,
        "C does not resemble A, the representative"
    );
    assert_eq!(vc.representative.as_deref(), Some("c"));

    // The export names the page each one was judged a near duplicate of.
    let mut rows = Vec::new();
    ix.export(|k, r| rows.push((k.to_string(), r.to_string())))
        .unwrap();
    let expect = |k: &str, r: &str| (k.to_string(), r.to_string());
    assert_eq!(
        rows,
        vec![expect("a", "a"), expect("b", "a"), expect("c", "b")]
    );

    // Once B is gone, C has no live page to name: it leads its own cluster.
    ix.delete("b").unwrap();
    let mut rows = Vec::new();
    ix.export(|k, r| rows.push((k.to_string(), r.to_string())))
        .unwrap();
    assert_eq!(rows, vec![expect("a", "a"), expect("c", "c")]);
    assert!(ix.check().unwrap().is_clean());
}

#[test]
fn pages_without_main_text_are_never_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), IndexOptions::default()).unwrap();
    let shells: [&[u8]; 3] = [
        b"<html></html>",
        b"<html><body><script>render()</script><div id=app></div></body></html>",
        b"<html><head><title>Loading</title></head><body><noscript>x</noscript></body></html>",
    ];
    let mut clusters = std::collections::HashSet::new();
    for (i, html) in shells.iter().enumerate() {
        let key = format!("shell-{i}");
        let v = ix
            .insert(&Page {
                key: &key,
                host: "app.example",
                time: 0,
                content: Content::Html(html),
            })
            .unwrap();
        assert!(v.no_main_text, "{key}");
        assert!(
            !v.duplicate && !v.exact && v.similar_to.is_none(),
            "{key}: {v:?}"
        );
        clusters.insert(v.cluster);
    }
    assert_eq!(clusters.len(), 3, "each shell leads its own cluster");
    // A page with text is compared as usual.
    let body = text(0..3);
    assert!(!ix.insert(&page("t1", &body)).unwrap().no_main_text);
    let v = ix.insert(&page("t2", &body)).unwrap();
    assert!(v.duplicate && v.exact);
    assert_eq!(ix.len(), 5);
    assert!(ix.check().unwrap().is_clean());
}
