//! A batch inserted from inside rayon's global pool, whose only worker is then the batch's
//! writer: the background work it waits for is queued on that same pool, so the writer must run
//! it. (A file of its own: the test sizes the process's global pool.)
mod common;
use common::*;
use neardup::{BatchOptions, BatchOrder, Page};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn a_batch_from_the_only_pool_worker_finishes() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("the global pool is sized first in this process");
    let docs: Vec<(String, String)> = (0..120u64)
        .map(|a| {
            let paras = article(300 + a % 40, 5);
            (
                format!("p{a}"),
                html(a as usize, &format!("T{}", a % 40), &paras),
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let ix = open(&path);
        let pages: Vec<Page<'_>> = docs.iter().map(|(k, h)| page(k, "h", h)).collect();
        let opts = BatchOptions {
            order: BatchOrder::Input,
            group: 8,
            window: 16,
            ..BatchOptions::default()
        };
        let ok = rayon::scope(|_| ix.insert_batch(&pages, &opts, &mut |_, _| {}))
            .map(|r| r.iter().filter(|v| v.is_ok()).count());
        assert_clean(&ix);
        let _ = tx.send(ok.map_err(|e| e.to_string()));
    });
    let inserted = rx
        .recv_timeout(Duration::from_secs(300))
        .expect("the batch finishes instead of waiting for itself")
        .unwrap();
    assert_eq!(inserted, 120);
}
