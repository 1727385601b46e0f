//! `Index::explain` names the stage that decided a pair (issue #35: classify the misses): found,
//! never a candidate, ranked out of what a page verifies, or the verification stage that kept
//! two compared pages apart.

mod common;

use common::{article_rich, edited, html, page};
use neardup::{Index, IndexOptions, PairStage};

#[test]
fn explain_names_the_stage_of_a_pair() {
    let dir = tempfile::tempdir().unwrap();
    let ix = common::open(dir.path());
    let base = article_rich(1, 8);
    let copy = edited(&base, 2);
    let other = article_rich(3, 8);
    // Five of the base's eight paragraphs inside a longer text of its own: candidates, compared,
    // too little shared (contain about 5/8, resemble about 5/20).
    let mut mostly_new = article_rich(4, 12);
    mostly_new.splice(6..6, base[..5].iter().cloned());
    for (key, paras, t) in [
        ("a/base", &base, 0),
        ("b/copy", &copy, 1),
        ("c/other", &other, 2),
        ("d/mostly-new", &mostly_new, 0),
    ] {
        let h = html(t, key, paras);
        ix.insert(&page(key, key.split('/').next().unwrap(), &h))
            .unwrap();
    }
    let stage = |a: &str, b: &str| ix.explain(a, b).unwrap().stage;
    assert_eq!(stage("b/copy", "a/base"), PairStage::Duplicate);
    // The same pair either way round: the later page is the one searched for.
    assert_eq!(stage("a/base", "b/copy"), PairStage::Duplicate);
    assert_eq!(stage("c/other", "a/base"), PairStage::NoCandidate);
    let e = ix.explain("d/mostly-new", "a/base").unwrap();
    assert!(!e.duplicate, "{}", e.rule);
    assert!(
        matches!(
            e.stage,
            PairStage::Skeleton
                | PairStage::Bound
                | PairStage::TrustableLcs
                | PairStage::Thresholds
        ),
        "{:?}: {}",
        e.stage,
        e.rule
    );
    // Without an index the candidate test is the keys and simhashes of the two pages alone.
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["stage"], serde_json::to_value(e.stage).unwrap());
}

#[test]
fn a_candidate_below_the_verified_clusters_is_ranked_out() {
    let dir = tempfile::tempdir().unwrap();
    let opts = IndexOptions {
        max_clusters_verified: 1,
        ..IndexOptions::default()
    };
    let ix = Index::open(dir.path(), opts).unwrap();
    let text = article_rich(7, 8);
    // One text under two model codes: two clusters (their headings keep them apart), equal in
    // what they share with a third copy whose heading names no code. Only the first ranked
    // cluster is verified, so the second one's page is ranked out.
    for (key, title) in [("a/x100", "Charger TK-X100"), ("b/x200", "Charger TK-X200")] {
        let h = html(0, title, &text);
        ix.insert(&page(key, key.split('/').next().unwrap(), &h))
            .unwrap();
    }
    let h = html(1, "The charger", &edited(&text, 9));
    let v = ix.insert(&page("c/plain", "c", &h)).unwrap();
    assert!(v.duplicate);
    let first = ix.explain("c/plain", "a/x100").unwrap();
    let second = ix.explain("c/plain", "b/x200").unwrap();
    assert!(first.duplicate && second.duplicate);
    let stages = [first.stage, second.stage];
    assert!(
        stages.contains(&PairStage::Duplicate) && stages.contains(&PairStage::RankedOut),
        "{stages:?}"
    );
}
