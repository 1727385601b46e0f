//! Checkpoints taken while another thread ingests are consistent snapshots.
mod common;
use std::sync::Arc;

use common::*;
use neardup::Index;

#[test]
fn checkpoint_while_another_thread_ingests() {
    let dir = tempfile::tempdir().unwrap();
    let ix = Arc::new(open(&dir.path().join("live")));
    let writer = {
        let ix = Arc::clone(&ix);
        std::thread::spawn(move || {
            for i in 0..150u64 {
                let base = article(i % 25, 6);
                let h = html(i as usize, "t", &edited(&base, i));
                ix.insert(&page(&format!("p{i}"), "h", &h)).unwrap();
                if i % 10 == 9 {
                    ix.delete(&format!("p{}", i - 5)).unwrap();
                }
            }
        })
    };
    let mut snaps = Vec::new();
    for n in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(40));
        let snap = dir.path().join(format!("snap{n}"));
        ix.checkpoint(&snap).unwrap();
        snaps.push(snap);
    }
    writer.join().unwrap();
    for snap in &snaps {
        let s = Index::open_existing(snap).unwrap();
        assert_clean(&s);
    }
    assert_clean(&ix);
}
