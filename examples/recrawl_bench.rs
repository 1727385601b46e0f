//! Deletes and recrawls at scale: one short page replaced (changed a little each time) over and
//! over among a few thousand others, the time of a replace measured block after block. The
//! replaced page leaves delete markers in its postings and simhash blocks; a look-up that walks
//! them grows slower with every cycle until compaction drops them.
//!
//! ```sh
//! cargo run --release --example recrawl_bench [CYCLES] [BLOCK]
//! ```
//!
//! Prints, per block of cycles: microseconds a replace (p50 and the block's mean) and the index's
//! pending compaction bytes.

use std::time::Instant;

use neardup::{Content, Index, IndexOptions, Page};

fn text(seed: u64, words: usize) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = String::new();
    for s in 0..4 {
        for w in 0..words {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if w > 0 {
                out.push(' ');
            }
            out.push_str(&format!("w{}", x % 5000));
        }
        out.push_str(&format!(" end of sentence {s}. "));
    }
    out
}

fn main() -> neardup::Result<()> {
    let mut args = std::env::args().skip(1);
    let cycles: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50_000);
    let block: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5_000);
    let dir = tempfile::tempdir().map_err(|e| neardup::Error::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let ix = Index::open(
        dir.path(),
        IndexOptions {
            sync_writes: false,
            ..IndexOptions::default()
        },
    )?;
    for i in 0..3_000u64 {
        let t = text(1_000_000 + i, 12);
        ix.insert(&Page {
            key: &format!("page-{i}"),
            host: "h.example",
            time: 0,
            content: Content::Text(&t),
        })?;
    }
    let base = text(7, 8);
    let mut times: Vec<u128> = Vec::with_capacity(block);
    println!("cycles\tp50_us\tmean_us\tpending_compaction_bytes");
    for c in 0..cycles {
        // The same short page, one word changed: its simhash stays in the same blocks.
        let t = format!("{base} revision {c}.");
        let start = Instant::now();
        ix.insert(&Page {
            key: "hot",
            host: "h.example",
            time: 0,
            content: Content::Text(&t),
        })?;
        times.push(start.elapsed().as_micros());
        if times.len() == block {
            let mut sorted = times.clone();
            sorted.sort_unstable();
            let mean = times.iter().sum::<u128>() / times.len() as u128;
            let pending = ix
                .stats()?
                .rocksdb
                .iter()
                .find(|(n, _)| n == "pending_compaction_bytes")
                .map_or(0, |(_, v)| *v);
            println!("{}\t{}\t{mean}\t{pending}", c + 1, sorted[sorted.len() / 2]);
            times.clear();
        }
    }
    Ok(())
}
