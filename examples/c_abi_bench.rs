//! The C ABI as an embedding engine uses it (issue "Embedding-grade", closing figures):
//! `nd_index_insert` from 4 threads (pages/s, latency p50/p99), an unchanged re-insert of every
//! page (latency), `nd_index_query_batch` (pages/s), and `nd_index_delete` with its result
//! (latency), on a bench corpus. Every call goes through the same `extern "C"` functions a C++
//! program calls.
//!
//! Usage: `cargo run --release --example c_abi_bench -- [BENCH_DIR] [PAGES]` (default
//! `../shared/bench/dev`, 8,000 pages). The index syncs every commit (the default options).

#[path = "support/corpus.rs"]
mod corpus;

use std::time::{Duration, Instant};

use neardup::ffi::*;

struct Doc {
    key: String,
    host: String,
    html: String,
    time: i64,
}

fn page(d: &Doc) -> nd_page {
    nd_page {
        key: d.key.as_ptr().cast(),
        key_len: d.key.len(),
        url: std::ptr::null(),
        url_len: 0,
        host: d.host.as_ptr().cast(),
        host_len: d.host.len(),
        time: d.time,
        content: d.html.as_ptr(),
        content_len: d.html.len(),
        content_kind: ND_CONTENT_HTML,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn report(what: &str, mut lat: Vec<Duration>, wall: Duration) {
    lat.sort_unstable();
    println!(
        "{what}: {} calls, {:.0}/s, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        lat.len(),
        lat.len() as f64 / wall.as_secs_f64(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0)
    );
}

fn zeroed_verdict() -> nd_verdict {
    // SAFETY: nd_verdict is plain data (integers, floats, bools, null pointers); all-zero is the
    // documented "empty" value.
    unsafe { std::mem::zeroed() }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| "../shared/bench/dev".to_string());
    let limit: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(8_000);
    let docs: Vec<Doc> = corpus::read_jsonl(&format!("{dir}/docs.jsonl.gz"))
        .into_iter()
        .take(limit)
        .map(|v| Doc {
            key: v["id"].as_str().unwrap_or_default().to_string(),
            host: v["host"].as_str().unwrap_or_default().to_string(),
            html: v["html"].as_str().unwrap_or_default().to_string(),
            time: v["time"].as_i64().unwrap_or(0),
        })
        .collect();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("ix");
    let path = path.to_str().expect("UTF-8 path");
    let mut ix: *mut nd_index = std::ptr::null_mut();
    // SAFETY: valid path buffer and out-pointer.
    let s = unsafe { nd_index_open(path.as_ptr().cast(), path.len(), std::ptr::null(), &mut ix) };
    assert_eq!(s, nd_status::ND_OK);
    let h = ix as usize;

    // 4 threads of nd_index_insert, pages dealt round robin.
    const THREADS: usize = 4;
    let t0 = Instant::now();
    let lat: Vec<Duration> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let docs = &docs;
                sc.spawn(move || {
                    let ix = h as *mut nd_index;
                    let mut lat = Vec::new();
                    for d in docs.iter().skip(t).step_by(THREADS) {
                        let p = page(d);
                        let mut v = zeroed_verdict();
                        let t = Instant::now();
                        // SAFETY: live handle, valid page and out-pointer.
                        let s = unsafe { nd_index_insert(ix, &p, &mut v) };
                        lat.push(t.elapsed());
                        if s == nd_status::ND_OK {
                            // SAFETY: filled by the library.
                            unsafe { nd_verdict_free(&mut v) };
                        }
                    }
                    lat
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    });
    report("nd_index_insert, 4 threads", lat, t0.elapsed());

    // Unchanged re-inserts (a recrawl), one thread.
    let t0 = Instant::now();
    let mut lat = Vec::new();
    let mut unchanged = 0;
    for d in &docs {
        let p = page(d);
        let mut v = zeroed_verdict();
        let t = Instant::now();
        // SAFETY: as above.
        let s = unsafe { nd_index_insert(ix, &p, &mut v) };
        lat.push(t.elapsed());
        if s == nd_status::ND_OK {
            unchanged += usize::from(v.unchanged);
            // SAFETY: as above.
            unsafe { nd_verdict_free(&mut v) };
        }
    }
    report("unchanged re-insert", lat, t0.elapsed());
    println!("  {unchanged} of {} came back unchanged", docs.len());

    // query_batch over the corpus in batches of 256.
    let t0 = Instant::now();
    let mut n = 0;
    for chunk in docs.chunks(256) {
        let pages: Vec<nd_page> = chunk.iter().map(page).collect();
        let mut verdicts: Vec<nd_verdict> = (0..pages.len()).map(|_| zeroed_verdict()).collect();
        let mut statuses = vec![nd_status::ND_PANIC; pages.len()];
        // SAFETY: arrays of pages.len() elements each.
        let s = unsafe {
            nd_index_query_batch(
                ix,
                pages.as_ptr(),
                pages.len(),
                verdicts.as_mut_ptr(),
                statuses.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(s, nd_status::ND_OK);
        for (v, s) in verdicts.iter_mut().zip(&statuses) {
            if *s == nd_status::ND_OK {
                n += 1;
                // SAFETY: filled by the library.
                unsafe { nd_verdict_free(v) };
            }
        }
    }
    let wall = t0.elapsed();
    println!(
        "nd_index_query_batch: {n} pages in {:.2} s, {:.0} pages/s",
        wall.as_secs_f64(),
        n as f64 / wall.as_secs_f64()
    );

    // Deletes with their result: every 8th page.
    let t0 = Instant::now();
    let mut lat = Vec::new();
    let (mut reps, mut moved) = (0, 0);
    for d in docs.iter().step_by(8) {
        // SAFETY: zeroed is the empty deletion result.
        let mut del: nd_deletion = unsafe { std::mem::zeroed() };
        let t = Instant::now();
        // SAFETY: live handle, key buffer, out-pointer.
        let s = unsafe { nd_index_delete(ix, d.key.as_ptr().cast(), d.key.len(), &mut del) };
        lat.push(t.elapsed());
        if s == nd_status::ND_OK {
            reps += usize::from(del.was_representative);
            moved += del.moved_len;
            // SAFETY: filled by the library.
            unsafe { nd_deletion_free(&mut del) };
        }
    }
    report("nd_index_delete with its result", lat, t0.elapsed());
    println!("  {reps} were representatives, {moved} members moved");
    // SAFETY: live handle, closed then freed once.
    unsafe {
        nd_index_close(ix);
        nd_index_free(ix);
    }
}
