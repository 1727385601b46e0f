//! Every near duplicate of a page (`Index::near`, issue #33 item 7): the pages a query verifies
//! among the ranked clusters' representatives and best members, best first, at most `k`, above
//! an inclusive threshold.

mod common;
use common::{article_rich, assert_clean, edited, html, open, page};
use neardup::{Content, Error, Index, NearOptions, Page, Score};

/// Two unrelated articles in clusters of their own, and a probe that holds both: it is
/// contained in neither, but contains each (contain near 1, resemble near one half).
fn two_sources(ix: &Index) -> (Vec<String>, Vec<String>) {
    let a = article_rich(1, 6);
    let b = article_rich(2, 6);
    ix.insert(&page("a", "a.example", &html(0, "A", &a)))
        .unwrap();
    ix.insert(&page("b", "b.example", &html(1, "B", &b)))
        .unwrap();
    let (ga, gb) = (ix.get("a").unwrap().unwrap(), ix.get("b").unwrap().unwrap());
    assert_ne!(ga.cluster, gb.cluster, "unrelated articles share a cluster");
    (a, b)
}

fn all() -> NearOptions {
    NearOptions {
        k: usize::MAX,
        ..NearOptions::default()
    }
}

#[test]
fn a_page_holding_two_others_finds_both_best_first() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let (a, b) = two_sources(&ix);
    let both: Vec<String> = a.iter().chain(&b).cloned().collect();
    let probe = html(2, "AB", &both);
    let found = ix.near(Content::Html(probe.as_bytes()), &all()).unwrap();
    let keys: Vec<&str> = found.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(keys.contains(&"a") && keys.contains(&"b"), "{keys:?}");
    for n in &found {
        assert!(n.contain > 0.9 && n.resemble < 0.7, "{n:?}");
        assert!(!n.exact);
        assert_eq!(n.representative, n.key);
        let rec = ix.get(&n.key).unwrap().unwrap();
        assert_eq!((n.doc, n.cluster), (rec.doc, rec.cluster));
    }
    // Best first by resemble; by contain when asked.
    assert!(found[0].resemble >= found[1].resemble);
    let by_contain = NearOptions {
        by: Score::Contain,
        ..all()
    };
    let by_c = ix
        .near(Content::Html(probe.as_bytes()), &by_contain)
        .unwrap();
    assert!(by_c[0].contain >= by_c[1].contain);
    // k keeps the best.
    let one = NearOptions { k: 1, ..all() };
    let top = ix.near(Content::Html(probe.as_bytes()), &one).unwrap();
    assert_eq!(top, found[..1].to_vec());
    // The query names one of them, with the same scores.
    let v = ix.query(Content::Html(probe.as_bytes())).unwrap();
    assert!(v.duplicate);
    let named = found
        .iter()
        .find(|n| Some(&n.key) == v.similar_to.as_ref())
        .expect("the query's page is among the near duplicates");
    assert_eq!((named.resemble, named.contain), (v.resemble, v.contain));
    // Nothing was stored.
    assert_eq!(ix.len(), 2);
    assert_clean(&ix);
}

#[test]
fn the_threshold_is_inclusive_and_applies_to_the_chosen_score() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let (a, b) = two_sources(&ix);
    let both: Vec<String> = a.iter().chain(&b).cloned().collect();
    let probe = html(2, "AB", &both);
    let c = Content::Html(probe.as_bytes());
    let found = ix.near(c, &all()).unwrap();
    assert_eq!(found.len(), 2);
    for by in [Score::Resemble, Score::Contain] {
        let score = |n: &neardup::NearDuplicate| match by {
            Score::Resemble => n.resemble,
            Score::Contain => n.contain,
        };
        let lowest = found.iter().map(score).fold(f64::INFINITY, f64::min);
        let at = NearOptions {
            threshold: lowest,
            by,
            ..all()
        };
        assert_eq!(ix.near(c, &at).unwrap().len(), 2, "{by:?} at {lowest}");
        if lowest >= 1.0 {
            continue;
        }
        let above = NearOptions {
            threshold: lowest.next_up(),
            by,
            ..all()
        };
        let kept = ix.near(c, &above).unwrap();
        assert!(kept.iter().all(|n| score(n) > lowest), "{kept:?}");
        assert!(kept.len() < 2);
    }
    // Resemble is about one half, contain near 1: a threshold of 0.9 keeps both by contain and
    // neither by resemble.
    let high = |by| NearOptions {
        threshold: 0.9,
        by,
        ..all()
    };
    assert_eq!(ix.near(c, &high(Score::Contain)).unwrap().len(), 2);
    assert!(ix.near(c, &high(Score::Resemble)).unwrap().is_empty());
}

#[test]
fn members_verified_and_exact_copies_first() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let a = article_rich(5, 8);
    let e1 = edited(&a, 11);
    ix.insert(&page("a", "a.example", &html(0, "A", &a)))
        .unwrap();
    ix.insert(&page("e1", "e.example", &html(1, "A", &e1)))
        .unwrap();
    // The probe is e1's text exactly: e1 is identical, a resembles it.
    let probe = html(2, "A", &e1);
    let found = ix.near(Content::Html(probe.as_bytes()), &all()).unwrap();
    assert!(!found.is_empty());
    assert_eq!(found[0].key, "e1", "{found:?}");
    assert!(found[0].exact && found[0].resemble == 1.0 && found[0].contain == 1.0);
    let cluster = ix.get("a").unwrap().unwrap().cluster;
    for n in &found {
        assert_eq!((n.cluster, n.representative.as_str()), (cluster, "a"));
    }
    // Each page once.
    let mut keys: Vec<&str> = found.iter().map(|n| n.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), found.len());
}

#[test]
fn nothing_for_an_unrelated_page_or_one_without_main_text() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    two_sources(&ix);
    let other = html(0, "C", &article_rich(99, 6));
    assert!(ix
        .near(Content::Html(other.as_bytes()), &all())
        .unwrap()
        .is_empty());
    assert!(ix.near(Content::Text("tiny"), &all()).unwrap().is_empty());
    // An empty index.
    let dir2 = tempfile::tempdir().unwrap();
    let empty = open(dir2.path());
    assert!(empty
        .near(Content::Html(other.as_bytes()), &all())
        .unwrap()
        .is_empty());
}

#[test]
fn near_page_takes_the_key_and_host_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let (a, _) = two_sources(&ix);
    let h = html(0, "A", &a);
    let p = Page {
        key: "a",
        host: "a.example",
        time: 0,
        content: Content::Html(h.as_bytes()),
    };
    // The page's own stored version is found, identical.
    let found = ix.near_page(&p, &NearOptions::default()).unwrap();
    assert_eq!(found[0].key, "a");
    assert!(found[0].exact);
    assert_eq!(ix.len(), 2);
    let bad = Page { key: "", ..p };
    assert!(matches!(
        ix.near_page(&bad, &NearOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn bad_options_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(dir.path());
    let c = Content::Text("a page of text that is long enough to have main text in it");
    for opts in [
        NearOptions {
            k: 0,
            ..NearOptions::default()
        },
        NearOptions {
            threshold: -0.1,
            ..NearOptions::default()
        },
        NearOptions {
            threshold: 1.5,
            ..NearOptions::default()
        },
        NearOptions {
            threshold: f64::NAN,
            ..NearOptions::default()
        },
    ] {
        assert!(
            matches!(ix.near(c, &opts), Err(Error::InvalidArgument(_))),
            "{opts:?}"
        );
    }
    assert_eq!(Score::from_name("contain"), Some(Score::Contain));
    assert_eq!(
        Score::from_name(Score::Resemble.name()),
        Some(Score::Resemble)
    );
    assert_eq!(Score::from_name("jaccard"), None);
}
