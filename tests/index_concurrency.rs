//! Parallel inserts are safe, and near-duplicate pages inserted at the same moment end in one
//! cluster.
mod common;
use std::sync::Arc;

use common::*;

#[test]
fn threads_inserting_copies_end_in_one_cluster_each() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Arc::new(open(dir.path()));
    const ARTICLES: u64 = 12;
    const THREADS: usize = 4;
    let bases: Vec<Vec<String>> = (0..ARTICLES).map(|s| article(100 + s, 8)).collect();
    let bases = Arc::new(bases);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let ix = Arc::clone(&ix);
            let bases = Arc::clone(&bases);
            std::thread::spawn(move || {
                for (a, base) in bases.iter().enumerate() {
                    // Every thread inserts its own near copy of every article at about the same time.
                    let text = if t % 2 == 0 {
                        base.clone()
                    } else {
                        edited(base, t as u64)
                    };
                    let h = html(t, &format!("title {a}"), &text);
                    let key = format!("a{a}-t{t}");
                    ix.insert(&page(&key, &format!("host{t}"), &h)).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(ix.len(), ARTICLES * THREADS as u64);
    for a in 0..ARTICLES {
        let clusters: Vec<_> = (0..THREADS)
            .map(|t| {
                ix.representative_of(&format!("a{a}-t{t}"))
                    .unwrap()
                    .unwrap()
                    .0
            })
            .collect();
        assert!(
            clusters.iter().all(|c| *c == clusters[0]),
            "article {a}: clusters {clusters:?}"
        );
    }
    assert_eq!(ix.stats().unwrap().clusters, ARTICLES);
    assert_clean(&ix);
}

#[test]
fn index_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<neardup::Index>();
}
