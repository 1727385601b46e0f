//! Whole-pipeline benchmark of the index (issue "The index"): ingest a bench corpus in corpus
//! order with N threads for signatures, then report pages/s, `query` latency p50/p99 on 2,000
//! pages (twice: right after ingest, then warm; with the mean time of each stage), bytes of index per page with and without stored texts (after a full compaction), and
//! peak resident memory. Optionally writes the cluster export for `score.py`.
//!
//! Usage: `cargo run --release --example index_bench -- DOCS.jsonl.gz THREADS [EXPORT.tsv]`
//! (pages carry `html`, or `text` for plain-text documents, as in the natural corpus).
//!
//! With `NEARDUP_BENCH_LATENCY=1` the corpus is then inserted again, one `Index::insert` at a
//! time in corpus order into a second fresh index (default options: every commit syncs the WAL),
//! and the insert latency is reported: p50, p99, max, and the slowest pages with their sizes.
//!
//! With `NEARDUP_BENCH_NO_TEXTS=1` the index stores no texts (`IndexOptions::store_texts` off)
//! and a `TextSource` hands the pages' HTML back from memory, as an embedding engine would.

use std::io::{BufRead, BufReader, Write};
use std::time::Instant;

use flate2::read::MultiGzDecoder;
use std::collections::HashMap;
use std::sync::Arc;

use neardup::{
    BatchOptions, BatchOrder, Content, Index, IndexOptions, Page, SourcedContent, SourcedPage,
    TextSource,
};
use serde_json::Value;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<f64>()
                    .unwrap_or(0.0)
            })
        })
        .unwrap_or(0.0)
        / 1024.0
}

/// CPU seconds (user + system) this process has used so far, all threads.
fn cpu_secs() -> f64 {
    stat_cpu_secs("/proc/self/stat")
}

/// CPU seconds (user + system) the calling thread has used so far.
fn thread_cpu_secs() -> f64 {
    stat_cpu_secs("/proc/thread-self/stat")
}

/// utime + stime of a `/proc/…/stat` file, in seconds.
fn stat_cpu_secs(path: &str) -> f64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            // Fields after the parenthesised command name; utime and stime are the 12th and
            // 13th of them, in clock ticks (100 per second on Linux).
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0)
        })
        .unwrap_or(0.0)
}

fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| {
                    e.metadata()
                        .map(|m| {
                            if m.is_dir() {
                                dir_size(&e.path())
                            } else {
                                m.len()
                            }
                        })
                        .unwrap_or(0)
                })
                .sum()
        })
        .unwrap_or(0)
}

/// The pages' HTML by key, kept by "the engine".
struct MemorySource(HashMap<String, SourcedContent>);

impl TextSource for MemorySource {
    fn content(&self, page: &SourcedPage<'_>) -> Option<SourcedContent> {
        let key = page.key;
        self.0.get(key).cloned()
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let corpus = args
        .next()
        .unwrap_or_else(|| "../shared/bench/dev/docs.jsonl.gz".into());
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(2);
    let export = args.next();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("thread pool");

    let f = std::fs::File::open(&corpus).expect("open corpus");
    let docs: Vec<Value> = BufReader::new(MultiGzDecoder::new(f))
        .lines()
        .map(|l| serde_json::from_str(&l.expect("line")).expect("json"))
        .collect();
    let bytes: usize = docs
        .iter()
        .map(|d| {
            d["html"]
                .as_str()
                .or(d["text"].as_str())
                .map_or(0, str::len)
        })
        .sum();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("index");
    let external = std::env::var_os("NEARDUP_BENCH_NO_TEXTS").is_some();
    let base = IndexOptions::default();
    let ix = if external {
        let html: HashMap<String, SourcedContent> = docs
            .iter()
            .map(|d| {
                let key = d["id"].as_str().unwrap_or("").to_string();
                let content = match d["text"].as_str() {
                    Some(t) => SourcedContent::Text(t.to_string()),
                    None => SourcedContent::Html(d["html"].as_str().unwrap_or("").into()),
                };
                (key, content)
            })
            .collect();
        let opts = IndexOptions {
            store_texts: false,
            ..base
        };
        Index::open_with_text_source(&path, opts, Arc::new(MemorySource(html))).expect("open")
    } else {
        Index::open(&path, base).expect("open")
    };
    let pages: Vec<Page<'_>> = docs
        .iter()
        .map(|d| Page {
            key: d["id"].as_str().unwrap_or(""),
            host: d["host"].as_str().unwrap_or(""),
            time: d["time"].as_i64().unwrap_or(0),
            content: match d["text"].as_str() {
                Some(t) => Content::Text(t),
                None => Content::Html(d["html"].as_str().unwrap_or("").as_bytes()),
            },
        })
        .collect();
    let opts = BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    };
    let start = Instant::now();
    let cpu0 = cpu_secs();
    let (mut dups, mut errors) = (0usize, 0usize);
    let (mut t_cand, mut t_verify, mut t_write) = (0.0f64, 0.0f64, 0.0f64);
    let mut verified = 0usize;
    for chunk in pages.chunks(20_000) {
        for r in ix
            .insert_batch(chunk, &opts, &mut |_, _| {})
            .expect("batch")
        {
            match r {
                Ok(v) => {
                    dups += usize::from(v.duplicate);
                    t_cand += v.timing.candidates.as_secs_f64();
                    t_verify += v.timing.verify.as_secs_f64();
                    t_write += v.timing.write.as_secs_f64();
                    verified += v.verified;
                }
                Err(_) => errors += 1,
            }
        }
    }
    ix.flush().expect("flush");
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    println!("corpus            {corpus}");
    println!("threads           {threads}");
    println!(
        "texts             {}",
        if external {
            "not stored: a text source gives the HTML back"
        } else {
            "stored"
        }
    );
    println!(
        "ingest            {} pages, {:.1} MB HTML in {secs:.2} s: {:.0} pages/s, {:.1} MB/s",
        pages.len(),
        bytes as f64 / 1e6,
        pages.len() as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
    println!(
        "                  {cpu:.2} CPU seconds ({:.0} µs a page), {:.2} cores busy",
        cpu / pages.len() as f64 * 1e6,
        cpu / secs
    );
    println!("                  {dups} duplicates, {errors} errors, {verified} verifications");
    println!(
        "stage times       candidates {t_cand:.2} s, verify {t_verify:.2} s, write {t_write:.2} s"
    );

    if let Some(p) = export {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&p).expect("create export"));
        ix.export(|k, r| writeln!(out, "{k}\t{r}").expect("write export"))
            .expect("export");
    }

    // Two passes over the same 2,000 pages: the first right after ingest (background flushes
    // and compactions still running, block cache cold), the second warm.
    for pass in ["first pass", "second pass"] {
        let mut lat: Vec<f64> = Vec::new();
        let (mut q_sig, mut q_cand, mut q_verify) = (0.0, 0.0, 0.0);
        let (wall0, cpu0) = (Instant::now(), thread_cpu_secs());
        for p in pages.iter().step_by((pages.len() / 2000).max(1)).take(2000) {
            let t = Instant::now();
            let v = ix.query(p.content).expect("query");
            lat.push(t.elapsed().as_secs_f64() * 1e6);
            q_sig += v.timing.signature.as_secs_f64() * 1e6;
            q_cand += v.timing.candidates.as_secs_f64() * 1e6;
            q_verify += v.timing.verify.as_secs_f64() * 1e6;
        }
        let nq = lat.len().max(1) as f64;
        let (wall, cpu) = (wall0.elapsed().as_secs_f64(), thread_cpu_secs() - cpu0);
        lat.sort_by(f64::total_cmp);
        let pct = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize];
        println!(
            "query latency     p50 {:.0} µs, p99 {:.0} µs ({} queries, {pass})",
            pct(0.5),
            pct(0.99),
            lat.len()
        );
        println!(
            "                  mean: signature {:.0} µs, candidates {:.0} µs, verification {:.0} µs; \
             {:.0} µs of the querying thread's CPU a query in {:.0} µs",
            q_sig / nq,
            q_cand / nq,
            q_verify / nq,
            cpu / nq * 1e6,
            wall / nq * 1e6
        );
    }

    ix.compact().expect("compact");
    let stats = ix.stats().expect("stats");
    let total: u64 = stats.bytes.iter().map(|(_, b)| b).sum();
    let texts: u64 = stats
        .bytes
        .iter()
        .filter(|(n, _)| n == "texts")
        .map(|(_, b)| b)
        .sum();
    let n = stats.pages.max(1) as f64;
    if external {
        println!(
            "index size        {:.0} bytes/page, texts not stored (the texts column family holds \
             posting keys) ({:.1} MB on disk)",
            total as f64 / n,
            dir_size(&path) as f64 / 1e6
        );
    } else {
        println!(
            "index size        {:.0} bytes/page with texts, {:.0} bytes/page without the texts \
             column family ({:.1} MB on disk)",
            total as f64 / n,
            (total - texts) as f64 / n,
            dir_size(&path) as f64 / 1e6
        );
    }
    for (name, b) in &stats.bytes {
        println!(
            "                  {name:<9} {:>8.0} bytes/page",
            *b as f64 / n
        );
    }
    println!(
        "clusters          {}  over-frequent fingerprints {}",
        stats.clusters,
        stats.frequent.len()
    );
    println!("peak RSS          {:.0} MB", peak_rss_mb());

    if std::env::var_os("NEARDUP_BENCH_LATENCY").is_some() {
        insert_latency(&pages);
    }
}

/// Inserts `pages` one at a time into a fresh index and prints the latency of each insert as
/// the caller sees it (signatures, candidates, verification and the synced commit).
fn insert_latency(pages: &[Page<'_>]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ix = Index::open(dir.path().join("index"), IndexOptions::default()).expect("open");
    let mut lat: Vec<(f64, usize)> = Vec::with_capacity(pages.len());
    let start = Instant::now();
    for (i, p) in pages.iter().enumerate() {
        let t = Instant::now();
        ix.insert(p).expect("insert");
        lat.push((t.elapsed().as_secs_f64() * 1e3, i));
    }
    let secs = start.elapsed().as_secs_f64();
    let mut sorted: Vec<f64> = lat.iter().map(|l| l.0).collect();
    sorted.sort_by(f64::total_cmp);
    let pct = |q: f64| sorted[((sorted.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "insert latency    p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms ({} single inserts in \
         {secs:.1} s)",
        pct(0.5),
        pct(0.99),
        pct(1.0),
        sorted.len()
    );
    lat.sort_by(|a, b| b.0.total_cmp(&a.0));
    for &(ms, i) in lat.iter().take(5) {
        let bytes = match pages[i].content {
            Content::Html(h) => h.len(),
            Content::Text(t) => t.len(),
        };
        println!(
            "                  {ms:8.1} ms  {} ({bytes} bytes)",
            pages[i].key
        );
    }
}
