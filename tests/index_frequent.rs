//! Over-frequent fingerprints (seed 000 §4.2): a fingerprint carried by too many pages, or by
//! many pages on few hosts, is kept out of candidate generation and listed in the statistics.
mod common;
use common::*;
use neardup::{FrequentConfig, Index, IndexOptions};

#[test]
fn template_fingerprints_are_suppressed_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let opts = IndexOptions {
        frequent: FrequentConfig {
            max_pages: 1_000,
            few_hosts_pages: 3,
            few_hosts: 2,
        },
        ..IndexOptions::default()
    };
    let ix = Index::open(dir.path(), opts).unwrap();
    // Pages of one host share a long boilerplate block (a template that the extraction keeps),
    // followed by their own bodies.
    let boiler = article(900, 3);
    // The pages' own text is run-on (no sentence ends): their fingerprints all come from the
    // template block, while their simhashes are far apart.
    let own = |seed| vec![article_rich(seed, 8).join(" ").replace('.', "")];
    for i in 0..12u64 {
        let mut body = boiler.clone();
        body.extend(own(1000 + i));
        let h = html(0, &format!("page {i}"), &body);
        ix.insert(&page(&format!("p{i}"), "shop.example", &h))
            .unwrap();
    }
    let stats = ix.stats().unwrap();
    assert!(
        !stats.frequent.is_empty(),
        "boilerplate fingerprints are reported"
    );
    assert!(stats
        .frequent
        .iter()
        .all(|(_, reason)| reason == "few_hosts"));
    // A new page of the same template is not brought together with all the others any more:
    // the suppressed postings give no candidates.
    let mut body = boiler.clone();
    body.extend(own(2000));
    let q = ix
        .query(neardup::Content::Html(html(1, "x", &body).as_bytes()))
        .unwrap();
    assert!(q.candidates <= 1, "{} candidates", q.candidates);
    assert_clean(&ix);
    // Suppression survives reopening.
    drop(ix);
    let ix = Index::open(dir.path(), IndexOptions::default()).unwrap();
    assert_eq!(ix.stats().unwrap().frequent.len(), stats.frequent.len());
}
