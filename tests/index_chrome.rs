//! Site chrome learned per host (issue 18, mechanism 8): a footer and a contact cell in plain
//! table cells, under no chrome class name, make short pages of one shop look like duplicates of
//! one another; once the host's pages have taught the index that those blocks are its chrome, they
//! are dropped before fingerprinting and verification — and real near duplicates are still found.
//! Counts follow deletes and replacements exactly, survive reopening, agree between single inserts
//! and batches, and texts recomputed from a `TextSource` drop the same blocks.
mod common;
use common::*;

use std::collections::HashMap;
use std::sync::Arc;

use neardup::{
    BatchOptions, BatchOrder, ChromeConfig, Index, IndexOptions, OrderScope, Page, SourcedContent,
    SourcedPage, TextSource,
};
use parking_lot::Mutex;

const HOST: &str = "shop.example";

/// A page of the shop: its body in the first cell of a plain table, then a question box, a
/// contact cell and a copyright line in cells of their own (no class names).
fn shop_page(title: &str, body: &[String], year: u32) -> String {
    let body: String = body.iter().map(|p| format!("<p>{p}</p>")).collect();
    format!(
        "<html><head><title>{title} - Acme Home</title></head><body><table>\
         <tr><td><h1>{title}</h1>{body}</td></tr>\
         <tr><td>Questions about your order? Our service desk answers every working day, \
         from nine in the morning to six in the evening, by phone or by mail.</td></tr>\
         <tr><td>Contact: Acme Home Appliances Ltd., 88 Riverside Road, Springfield. \
         Tel 0571-8888-6666, service@acme-home.example</td></tr>\
         <tr><td>© {year} Acme Home Appliances Ltd. All rights reserved. Reproduction of any \
         part of this site without written permission is prohibited.</td></tr>\
         </table></body></html>"
    )
}

/// A short help text: one or two sentences of its own.
fn short_body(seed: u64) -> Vec<String> {
    let a = article(seed, 1);
    let first: Vec<&str> = a[0].split_inclusive(". ").take(2).collect();
    vec![first.concat().trim().to_string()]
}

/// Three longer pages that teach the index the shop's chrome, then six short ones.
fn corpus() -> Vec<(String, String)> {
    let mut docs = Vec::new();
    for i in 0..3u64 {
        docs.push((
            format!("guide{i}"),
            shop_page(&format!("Guide {i}"), &article(500 + i, 4), 2019 + i as u32),
        ));
    }
    for i in 0..6u64 {
        docs.push((
            format!("help{i}"),
            shop_page(&format!("Help {i}"), &short_body(700 + i), 2020 + i as u32),
        ));
    }
    docs
}

fn opts(chrome: bool) -> IndexOptions {
    IndexOptions {
        chrome: ChromeConfig {
            enabled: chrome,
            ..ChromeConfig::default()
        },
        ..IndexOptions::default()
    }
}

fn insert_all(ix: &Index, docs: &[(String, String)]) -> HashMap<String, neardup::Verdict> {
    docs.iter()
        .map(|(k, h)| (k.clone(), ix.insert(&page(k, HOST, h)).unwrap()))
        .collect()
}

#[test]
fn chrome_makes_short_pages_duplicates_without_learning() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), opts(false)).unwrap();
    let v = insert_all(&ix, &corpus());
    let dups: Vec<&String> = v
        .iter()
        .filter(|(k, v)| k.starts_with("help") && v.duplicate)
        .map(|(k, _)| k)
        .collect();
    assert!(!dups.is_empty(), "the test pages must show the problem");
    assert_eq!(ix.stats().unwrap().chrome.pages_counted, 0);
    assert_clean(&ix);
}

#[test]
fn learned_chrome_is_dropped_and_real_duplicates_are_still_found() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), opts(true)).unwrap();
    let v = insert_all(&ix, &corpus());
    for (k, v) in &v {
        assert!(!v.duplicate, "{k} is no duplicate: {v:?}");
    }
    let st = ix.stats().unwrap().chrome;
    assert_eq!((st.hosts, st.pages_counted), (1, 9));
    // The three guides taught it; every short page lost the three chrome cells.
    assert_eq!(st.pages_stripped, 6);
    let e = ix.explain("help0", "help1").unwrap();
    assert_eq!(e.a.chrome_blocks_dropped, 3);
    assert!(!e.duplicate, "{}", e.rule);
    assert!(!e.a.start.contains("Riverside"), "{}", e.a.start);

    // A real near duplicate of a short page (a word changed, another year in the footer).
    let mut body = short_body(703);
    body[0] = body[0].replacen(' ', " really ", 1);
    let copy = shop_page("Help 3", &body, 2031);
    let v = ix.insert(&page("help3-copy", HOST, &copy)).unwrap();
    assert!(v.duplicate, "{v:?}");
    assert_eq!(v.similar_to.as_deref(), Some("help3"));
    // And a copy of a guide.
    let guide = shop_page("Guide 1", &edited(&article(501, 4), 9), 2030);
    let v = ix.insert(&page("guide1-copy", HOST, &guide)).unwrap();
    assert!(
        v.duplicate && v.similar_to.as_deref() == Some("guide1"),
        "{v:?}"
    );
    assert_clean(&ix);

    // query_page drops the chrome as an insert would; query, without a host, cannot.
    let q = ix.query_page(&page("new", HOST, &copy)).unwrap();
    assert!(q.duplicate && q.similar_to.is_some(), "{q:?}");

    // query_pages gives each page query_page's verdict, in input order.
    let batch = [page("new", HOST, &copy), page("new-guide", HOST, &guide)];
    let many = ix.query_pages(&batch).unwrap();
    assert_eq!(many.len(), 2);
    for (p, v) in batch.iter().zip(many) {
        let one = ix.query_page(p).unwrap();
        let v = v.unwrap();
        assert_eq!(
            (v.duplicate, v.similar_to, v.cluster),
            (one.duplicate, one.similar_to, one.cluster)
        );
    }
}

#[test]
fn a_host_with_few_pages_keeps_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), opts(true)).unwrap();
    // Three pages: the third sees the blocks on two others only (K = 3).
    for (k, h) in corpus().iter().skip(3).take(3) {
        ix.insert(&page(k, HOST, h)).unwrap();
    }
    assert_eq!(ix.stats().unwrap().chrome.pages_stripped, 0);
    // Pages of another host, or without one, teach nothing about this host.
    let docs = corpus();
    ix.insert(&page("other", "other.example", &docs[6].1))
        .unwrap();
    ix.insert(&page("nohost", "", &docs[7].1)).unwrap();
    let st = ix.stats().unwrap().chrome;
    assert_eq!((st.hosts, st.pages_counted, st.pages_stripped), (2, 4, 0));
    assert_clean(&ix);
}

#[test]
fn deletes_and_replacements_take_counts_back_and_counts_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus();
    {
        let ix = Index::open(dir.path(), opts(true)).unwrap();
        insert_all(&ix, &docs);
        let before = ix.stats().unwrap().chrome;
        assert_eq!(before.pages_counted, 9);
        // Replacing a page counts its new version instead of the old one.
        ix.insert(&page("help0", HOST, &docs[4].1)).unwrap();
        assert_eq!(ix.stats().unwrap().chrome.pages_counted, 9);
        assert_clean(&ix);
        for (k, _) in docs.iter().skip(5) {
            ix.delete(k).unwrap();
        }
        let after = ix.stats().unwrap().chrome;
        assert_eq!(after.pages_counted, 5);
        assert!(after.blocks < before.blocks, "{after:?} {before:?}");
        assert_clean(&ix);
    }
    {
        // Reopened: the statistics are where they were, and still teach.
        let ix = Index::open(dir.path(), opts(true)).unwrap();
        assert_eq!(ix.stats().unwrap().chrome.pages_counted, 5);
        assert_clean(&ix);
        let v = ix.insert(&page("help9", HOST, &docs[8].1)).unwrap();
        assert!(!v.duplicate, "{v:?}");
        assert_eq!(
            ix.explain("help9", "help0")
                .unwrap()
                .a
                .chrome_blocks_dropped,
            3
        );
        for (k, _) in docs.iter().take(5) {
            ix.delete(k).unwrap();
        }
        ix.delete("help9").unwrap();
        let st = ix.stats().unwrap().chrome;
        assert_eq!((st.hosts, st.blocks, st.pages_counted), (0, 0, 0));
        assert_clean(&ix);
    }
}

#[test]
fn a_batch_decides_as_single_inserts_in_input_order() {
    let docs = corpus();
    let single_dir = tempfile::tempdir().unwrap();
    let single = Index::open(single_dir.path(), opts(true)).unwrap();
    let one = insert_all(&single, &docs);
    // The whole-batch order too: its chrome decisions are made in input order before the sort.
    for (order, scope) in [
        (BatchOrder::Input, OrderScope::Window),
        (BatchOrder::FingerprintCount, OrderScope::Window),
        (BatchOrder::FingerprintCount, OrderScope::Batch),
    ] {
        for window in [1, 4, 64] {
            let dir = tempfile::tempdir().unwrap();
            let ix = Index::open(dir.path(), opts(true)).unwrap();
            let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, HOST, h)).collect();
            let bo = BatchOptions {
                order,
                scope,
                group: 2,
                window,
            };
            let got = ix.insert_batch(&pages, &bo, &mut |_, _| {}).unwrap();
            for ((k, _), v) in docs.iter().zip(got) {
                let v = v.unwrap();
                assert_eq!(
                    v.duplicate, one[k].duplicate,
                    "{k} {order:?} {scope:?} {window}"
                );
            }
            for (k, _) in &docs {
                assert_eq!(
                    ix.explain(k, "guide0").unwrap().a.chrome_blocks_dropped,
                    single.explain(k, "guide0").unwrap().a.chrome_blocks_dropped,
                    "{k} {order:?} {scope:?} {window}"
                );
            }
            assert_eq!(
                format!("{:?}", ix.stats().unwrap().chrome),
                format!("{:?}", single.stats().unwrap().chrome)
            );
            assert_clean(&ix);
        }
    }
}

#[derive(Default)]
struct MapSource {
    pages: Mutex<HashMap<String, String>>,
}

impl TextSource for MapSource {
    fn content(&self, page: &SourcedPage<'_>) -> Option<SourcedContent> {
        let key = page.key;
        self.pages
            .lock()
            .get(key)
            .map(|h| SourcedContent::Html(h.clone().into_bytes()))
    }
}

#[test]
fn texts_from_a_source_drop_the_same_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let source = Arc::new(MapSource::default());
    let ix = Index::open_with_text_source(
        dir.path(),
        IndexOptions {
            store_texts: false,
            ..opts(true)
        },
        source.clone(),
    )
    .unwrap();
    let docs = corpus();
    for (k, h) in &docs {
        source.pages.lock().insert(k.clone(), h.clone());
        assert!(!ix.insert(&page(k, HOST, h)).unwrap().duplicate, "{k}");
    }
    // Verifying a copy against a stripped page recomputes that page's text from its content:
    // it must drop the same blocks, or its content hash would not match.
    let mut body = short_body(703);
    body[0] = body[0].replacen(' ', " really ", 1);
    let copy = shop_page("Help 3", &body, 2031);
    source.pages.lock().insert("copy".into(), copy.clone());
    let v = ix.insert(&page("copy", HOST, &copy)).unwrap();
    assert!(
        v.duplicate && v.similar_to.as_deref() == Some("help3"),
        "{v:?}"
    );
    // Deleting the representative re-verifies its members against texts from the source.
    ix.delete("help3").unwrap();
    assert_clean(&ix);
}

/// A batch given its pages' main texts, extracted before and carried as bytes
/// (`MainText::encode`, as a distributed merge's S1 keeps them for S4), decides exactly as the
/// batch that extracts them: the same verdicts and the same index state, chrome learned and
/// dropped included; a byte-identical recrawl is still told by its raw page (the body is still
/// given), and a page's content is still checked (binary, too large) whatever main text is given.
#[test]
fn a_batch_given_main_texts_decides_as_one_that_extracts_them() {
    use neardup::text::MainText;
    let mut day1 = corpus();
    for f in 0..6u64 {
        for v in 0..3u64 {
            day1.push((format!("story{f}-{v}"), family_page(f, v).1));
        }
    }
    // Day 2: recrawls (byte-identical, changed), new pages, a binary page and one too large.
    let mut day2: Vec<(String, String)> = vec![
        day1[0].clone(),
        (
            day1[4].0.clone(),
            shop_page("Help 1", &short_body(991), 2030),
        ),
        day1[10].clone(),
        ("binary".into(), "\u{1}\u{2}\u{3}\u{4}".repeat(200)),
        (
            "large".into(),
            shop_page("Large", &article(42, 4), 2024) + &" ".repeat(17 << 20),
        ),
    ];
    for f in 3..9u64 {
        day2.push((format!("story{f}-new"), family_page(f, 7).1));
    }
    let cfg = opts(true).signature;
    let encoded = |docs: &[(String, String)]| -> Vec<Option<Vec<u8>>> {
        docs.iter()
            .map(|(k, h)| {
                // A page extraction refuses gets a main text anyway: the checks still apply.
                let content = neardup::Content::Html(h.as_bytes());
                let main = neardup::signature::main_text(content, &cfg)
                    .unwrap_or_else(|_| MainText::from_plain_text(k));
                Some(main.encode()).filter(|_| k != "story0-1")
            })
            .collect()
    };
    let comparable = |r: neardup::Result<neardup::Verdict>| match r {
        Ok(mut v) => {
            v.timing = Default::default();
            format!("{v:?}")
        }
        Err(e) => format!("error: {e}"),
    };
    for (order, scope, window) in [
        (BatchOrder::Input, OrderScope::Window, 1024),
        (BatchOrder::Input, OrderScope::Window, 4),
        (BatchOrder::FingerprintCount, OrderScope::Batch, 4),
    ] {
        let bo = BatchOptions {
            order,
            scope,
            group: 3,
            window,
        };
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let plain = Index::open(d1.path(), opts(true)).unwrap();
        let given = Index::open(d2.path(), opts(true)).unwrap();
        for docs in [&day1, &day2] {
            let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, HOST, h)).collect();
            let mains: Vec<Option<MainText>> = encoded(docs)
                .into_iter()
                .map(|b| b.map(|b| MainText::decode(&b).unwrap()))
                .collect();
            let a = plain.insert_batch(&pages, &bo, &mut |_, _| {}).unwrap();
            let b = given
                .insert_batch_extracted(&pages, &mains, &bo, &mut |_, _| {})
                .unwrap();
            let (a, b): (Vec<String>, Vec<String>) = (
                a.into_iter().map(comparable).collect(),
                b.into_iter().map(comparable).collect(),
            );
            assert_eq!(a, b, "{order:?} {scope:?} {window}");
        }
        let text = |ix: &Index| format!("{:?}", normalized(ix.state_log().unwrap()));
        assert_eq!(text(&plain), text(&given), "{order:?} {scope:?} {window}");
        assert_clean(&given);
    }
    // The checks of a recrawl and of the content, in the last run's verdicts.
    let dir = tempfile::tempdir().unwrap();
    let ix = Index::open(dir.path(), opts(true)).unwrap();
    let pages: Vec<Page<'_>> = day1.iter().map(|(k, h)| page(k, HOST, h)).collect();
    let mains: Vec<Option<MainText>> = encoded(&day1)
        .into_iter()
        .map(|b| b.map(|b| MainText::decode(&b).unwrap()))
        .collect();
    let bo = BatchOptions::default();
    ix.insert_batch_extracted(&pages, &mains, &bo, &mut |_, _| {})
        .unwrap();
    let pages: Vec<Page<'_>> = day2.iter().map(|(k, h)| page(k, HOST, h)).collect();
    let mains: Vec<Option<MainText>> = encoded(&day2)
        .into_iter()
        .map(|b| b.map(|b| MainText::decode(&b).unwrap()))
        .collect();
    let got = ix
        .insert_batch_extracted(&pages, &mains, &bo, &mut |_, _| {})
        .unwrap();
    let v0 = got[0].as_ref().unwrap();
    assert!(v0.unchanged && v0.unchanged_html, "{v0:?}");
    let v1 = got[1].as_ref().unwrap();
    assert!(v1.replaced && !v1.unchanged_html, "{v1:?}");
    assert!(
        matches!(got[3], Err(neardup::Error::BinaryPage { .. })),
        "{:?}",
        got[3]
    );
    assert!(
        matches!(got[4], Err(neardup::Error::PageTooLarge { .. })),
        "{:?}",
        got[4]
    );
    // One main text a page, or nothing is done.
    let e = ix
        .insert_batch_extracted(&pages, &mains[1..], &bo, &mut |_, _| {})
        .unwrap_err();
    assert!(matches!(e, neardup::Error::InvalidArgument(_)), "{e}");
}
