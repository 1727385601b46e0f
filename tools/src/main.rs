//! The `neardup` command line, built on the library's Rust API only: ingest crawl files (the
//! daily merge), query, delete, export cluster assignments, statistics, check, checkpoint. Crawl
//! files are read by `neardup-input`.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use neardup::{
    BatchOptions, BatchOrder, Content, Index, IndexOptions, Method, OrderScope, Page,
    RepresentativePolicy, SignatureConfig, Signatures,
};
use rayon::prelude::*;

use neardup_input::input::{self, open_source, Body, OwnedPage};

/// Content bytes a chunk of input holds at most (past its first page): with the chunk being
/// inserted and the one read ahead, a crawl of real-web pages keeps about 200 MiB of them in
/// memory rather than thousands of 100 KB pages.
const CHUNK_BYTES: usize = 64 << 20;

/// `--version`: the package's version and the library's source id ([`neardup::SOURCE_ID`]), which
/// tells a build from another branch or an older tree apart even at the same version.
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (library source {})",
        env!("CARGO_PKG_VERSION"),
        neardup::SOURCE_ID
    )
});

/// neardup: an embedded near-duplicate index for web pages.
#[derive(Parser)]
#[command(version = VERSION.as_str(), about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Order {
    /// The order of the input files (corpus order): the first page read of a cluster leads it,
    /// as a crawler means "first seen". The default.
    Input,
    /// Descending fingerprint count within each batch (seed 000 §4.2): the page with the most
    /// sentence fingerprints leads its cluster.
    Fingerprints,
}

#[derive(Clone, Copy, ValueEnum)]
enum Scope {
    /// The fingerprint order within each window of 1,024 pages (signatures of the next window
    /// computed while one is inserted).
    Window,
    /// The fingerprint order over each whole batch of `--batch` pages, read whole (without the
    /// 64 MiB chunk limit): every page's signatures are held at once. The reference order of a
    /// distributed merge.
    Batch,
}

#[derive(Clone, Copy, ValueEnum)]
enum Policy {
    FirstSeen,
    EarliestTime,
    LongestText,
}

#[derive(Subcommand)]
enum Command {
    /// Ingest crawl files (JSONL, WARC or ARC, gzip or plain) into an index: the daily merge.
    Ingest {
        /// The index directory (created when missing).
        #[arg(long)]
        index: PathBuf,
        /// JSONL files (one page a line with `id`, `url`, `host`, `time`, and `html` or `text`)
        /// or web archives: WARC 1.0/1.1 or ARC (response records; revisit records count as
        /// unchanged recrawls).
        files: Vec<PathBuf>,
        /// Keys to delete first (pages gone from the crawl), one a line.
        #[arg(long)]
        delete_list: Option<PathBuf>,
        /// Insertion order within each batch.
        #[arg(long, value_enum, default_value_t = Order::Input)]
        order: Order,
        /// Over which pages `--order fingerprints` sorts (`batch` needs `--order fingerprints`).
        #[arg(long, value_enum, default_value_t = Scope::Window)]
        order_scope: Scope,
        /// Pages read and inserted per batch.
        #[arg(long, default_value_t = 4096)]
        batch: usize,
        /// Representative policy (only when the index is created).
        #[arg(long, value_enum, default_value_t = Policy::FirstSeen)]
        policy: Policy,
        /// Near-duplicate method (only when the index is created; an existing index keeps its
        /// own, and naming another is an error): lcs (the default), shingle, winnow, punct, agt,
        /// imatch, imatch_multi, semantic, tfidf, topic, simhash, single_pass.
        #[arg(long, value_parser = parse_method)]
        method: Option<Method>,
        /// Worker threads for signatures (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Exit with an error when more than this share of a file's records are damaged
        /// (the other records are still ingested).
        #[arg(long, default_value_t = 0.1)]
        max_damaged_share: f64,
        /// Print the process's peak memory (VmHWM) at the end (for `neardup-eval`, the
        /// evaluation harness in crates/neardup-eval).
        #[arg(long, hide = true)]
        peak_rss: bool,
    },
    /// Verdicts for pages without storing them, as JSON lines.
    Query {
        #[arg(long)]
        index: PathBuf,
        files: Vec<PathBuf>,
    },
    /// Delete pages by key.
    Delete {
        #[arg(long)]
        index: PathBuf,
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Export `doc_id<TAB>representative_id` for every page, in ingest order: the page each one
    /// was judged a near duplicate of (its cluster's representative when that page is gone; the
    /// page itself when it leads its cluster).
    Export {
        #[arg(long)]
        index: PathBuf,
        /// One JSON line per cluster instead: `cluster`, `representative`, `members`.
        #[arg(long)]
        clusters: bool,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Figures about an index (JSON).
    Stats {
        #[arg(long)]
        index: PathBuf,
        /// One JSON object on one line: the figures, with the index's metrics under `metrics`
        /// (operation counts and latencies of this process — none for this command —, RocksDB's
        /// write stalls and compaction debt, memory by part).
        #[arg(long)]
        json: bool,
    },
    /// Check every invariant of an index; exits non-zero when anything is wrong.
    Check {
        #[arg(long)]
        index: PathBuf,
        /// Check this many random pages one by one instead of the whole index: a quick look at
        /// a large one.
        #[arg(long)]
        sample: Option<u64>,
    },
    /// Write a consistent snapshot (RocksDB checkpoint) of an index.
    Checkpoint {
        #[arg(long)]
        index: PathBuf,
        /// The snapshot directory (must not exist).
        #[arg(long)]
        out: PathBuf,
    },
    /// Compact a snapshot (from `checkpoint`) into a fresh, verified index; the snapshot is not
    /// modified. Drops deleted pages and over-frequent fingerprints from postings, re-optimizes
    /// bitmaps, verifies every checksum and writes each column family straight into the last
    /// level; then checks 1,000 random pages of the new index (`--check`: all of it).
    Compact {
        /// The snapshot to read.
        #[arg(long)]
        from: PathBuf,
        /// The new index directory (must not exist).
        #[arg(long)]
        out: PathBuf,
        /// Check the whole new index, not a sample of it.
        #[arg(long)]
        check: bool,
    },
    /// Why two pages are, or are not, near duplicates: main texts, shared fingerprints and clause
    /// keys, simhash distance, skeleton LCS, trustable regions, r, c, the decision and its rule.
    /// With `--index`, two stored keys; without, two files (HTML when the name ends in .htm,
    /// .html or .xhtml or the content starts with `<`, plain text otherwise).
    Explain {
        #[arg(long)]
        index: Option<PathBuf>,
        /// Two keys (with `--index`) or two files.
        #[arg(num_args = 2, required = true)]
        pages: Vec<String>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the main text of every page as a JSON line, without an index: `id`, `title`,
    /// `heading`, `text` (as extracted, before normalization, one paragraph a line) and `lang`
    /// (ISO 639-3, null when it cannot be told). A page that cannot be read gives `id` and
    /// `error`; a record that is not a page (bad JSON, a damaged archive record) `place` and
    /// `error`. Pages are read as `ingest` reads them (JSONL, WARC, ARC; gzip or plain).
    Extract {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// Extract the main text of every page and compute its signatures, without an index:
    /// prints pages, MB/s and how many pages gave no sentence fingerprint.
    Signatures {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
}

fn bar(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what}: {{pos}} pages  {{per_sec}}  {{elapsed_precise}}  {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// A progress bar over the bytes of the input files (pages and duplicates in its message, an
/// ETA from the bytes), hidden when standard error is not a terminal.
fn input_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} ingest [{bar:30}] {bytes}/{total_bytes}  {msg}  ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// Prints a message above the progress bar, or to standard error when there is no bar.
fn say(pb: &ProgressBar, msg: String) {
    if pb.is_hidden() {
        eprintln!("{msg}");
    } else {
        pb.println(msg);
    }
}

/// The method of a name given on the command line.
fn parse_method(name: &str) -> std::result::Result<Method, String> {
    Method::from_name(name).ok_or_else(|| {
        format!(
            "unknown method {name:?}; the methods are {}",
            Method::NAMES.join(", ")
        )
    })
}

/// Opens an existing index with its stored configuration, or — given how (`create`) — creates
/// one with that policy and method. An existing index running another method than the one
/// asked for is an error.
fn open_index(path: &Path, create: Option<(Policy, Option<&Method>)>) -> Result<Index> {
    let ix = if path.join("CURRENT").exists() || create.is_none() {
        let ix = Index::open_existing(path);
        if let (Ok(ix), Some((_, Some(m)))) = (&ix, create) {
            let stored = &ix.options().signature.method;
            if stored != m {
                bail!(
                    "the index at {} runs the {} method, not {}: --method applies when an index is created",
                    path.display(),
                    stored.name(),
                    m.name()
                );
            }
        }
        ix
    } else {
        let (policy, method) = create.unwrap_or((Policy::FirstSeen, None));
        let representative = match policy {
            Policy::FirstSeen => RepresentativePolicy::FirstSeen,
            Policy::EarliestTime => RepresentativePolicy::EarliestTime,
            Policy::LongestText => RepresentativePolicy::LongestText,
        };
        Index::open(
            path,
            IndexOptions {
                representative,
                signature: SignatureConfig {
                    method: method.cloned().unwrap_or_default(),
                    ..SignatureConfig::default()
                },
                ..IndexOptions::default()
            },
        )
    };
    ix.with_context(|| format!("cannot open the index at {}", path.display()))
}

fn page_of(p: &OwnedPage) -> Page<'_> {
    Page {
        key: &p.key,
        host: &p.host,
        time: p.time,
        content: match &p.body {
            Body::Html(h) => Content::Html(h),
            Body::Text(t) => Content::Text(t),
        },
    }
}

/// The peak resident set size of this process in kB (`VmHWM` of `/proc/self/status`), on Linux.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn set_threads(threads: usize) {
    if threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .ok();
    }
}

#[allow(clippy::too_many_arguments)]
fn ingest(
    index: &Path,
    files: &[PathBuf],
    delete_list: Option<&Path>,
    (order, scope): (Order, Scope),
    batch: usize,
    (policy, method): (Policy, Option<&Method>),
    threads: usize,
    max_damaged_share: f64,
) -> Result<()> {
    set_threads(threads);
    let ix = open_index(index, Some((policy, method)))?;
    let start = Instant::now();
    let mut deleted = 0u64;
    let mut missing = 0u64;
    if let Some(list) = delete_list {
        for key in input::read_key_list(list)? {
            match ix.delete(&key) {
                Ok(_) => deleted += 1,
                Err(neardup::Error::NotFound(_)) => missing += 1,
                Err(e) => return Err(e).context(format!("deleting {key}")),
            }
        }
    }
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let pb = input_bar(total);
    let mut last_line = Instant::now();
    let opts = BatchOptions {
        order: match order {
            Order::Fingerprints => BatchOrder::FingerprintCount,
            Order::Input => BatchOrder::Input,
        },
        scope: match scope {
            Scope::Window => OrderScope::Window,
            Scope::Batch => OrderScope::Batch,
        },
        ..BatchOptions::default()
    };
    // A batch sorted whole is read whole.
    let chunk_bytes = match scope {
        Scope::Window => CHUNK_BYTES,
        Scope::Batch => usize::MAX,
    };
    let max_page = ix.options().signature.max_page_bytes;
    let (mut pages, mut dups, mut no_text, mut replaced, mut bytes) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut unchanged = 0u64;
    let mut skipped: Vec<String> = Vec::new();
    let (mut revisits_stored, mut revisits_missing) = (0u64, 0u64);
    let mut reports: Vec<input::FileReport> = Vec::new();
    // Input is read (gunzipped, parsed) on a thread of its own, one chunk ahead of the index.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<input::Chunk>>(1);
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || {
            for path in files {
                let mut reader = match open_source(path, max_page) {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                while !reader.is_done() {
                    // The receiver is gone when ingest stopped on an error: stop reading too.
                    let limit = input::Limit {
                        pages: batch.max(1),
                        bytes: chunk_bytes,
                    };
                    if tx.send(Ok(reader.next_chunk(limit))).is_err() {
                        return;
                    }
                }
            }
        });
        for item in rx {
            let input::Chunk {
                pages: chunk,
                skips,
                revisits,
                report,
            } = item?;
            for s in skips {
                say(&pb, format!("skipped {}: {}", s.place, s.reason));
                skipped.push(s.reason);
            }
            if let Some(r) = report {
                reports.push(r);
            }
            // A batch holds each key once: a key met again (a page crawled twice in one file)
            // starts the next batch, so the later copy replaces the earlier one, in order.
            let mut runs: Vec<&[(String, OwnedPage)]> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            let mut from = 0;
            for (i, (_, p)) in chunk.iter().enumerate() {
                if !seen.insert(p.key.as_str()) {
                    runs.push(&chunk[from..i]);
                    seen.clear();
                    seen.insert(p.key.as_str());
                    from = i;
                }
            }
            runs.push(&chunk[from..]);
            for run in runs.into_iter().filter(|r| !r.is_empty()) {
                let batch_pages: Vec<Page<'_>> = run.iter().map(|(_, p)| page_of(p)).collect();
                let base = pages;
                let dups_before = dups;
                let results = ix.insert_batch(&batch_pages, &opts, &mut |done, _| {
                    pb.set_position(input::BYTES_READ.load(std::sync::atomic::Ordering::Relaxed));
                    let n = base + done as u64;
                    pb.set_message(format!(
                        "{n} pages  {:.0} pages/s  {dups_before} duplicates",
                        n as f64 / start.elapsed().as_secs_f64().max(1e-9)
                    ));
                })?;
                for ((place, p), r) in run.iter().zip(results) {
                    match r {
                        Ok(v) => {
                            pages += 1;
                            bytes += p.body.len() as u64;
                            dups += u64::from(v.duplicate);
                            no_text += u64::from(v.no_main_text);
                            replaced += u64::from(v.replaced);
                            unchanged += u64::from(v.unchanged);
                        }
                        Err(e) => {
                            say(&pb, format!("skipped {place}: page {}: {e}", p.key));
                            skipped.push(e.to_string());
                        }
                    }
                }
            }
            // A revisit record is an unchanged recrawl: nothing to do when the page is stored.
            for (place, key) in revisits {
                if ix.id_of(&key)?.is_some() {
                    revisits_stored += 1;
                } else {
                    // Mostly revisits of style sheets, scripts and images, which are no pages.
                    let _ = place;
                    revisits_missing += 1;
                }
            }
            if pb.is_hidden() && last_line.elapsed().as_secs() >= 10 {
                // Not a terminal: a plain progress line now and then.
                last_line = Instant::now();
                let read = input::BYTES_READ.load(std::sync::atomic::Ordering::Relaxed);
                eprintln!(
                    "ingest: {pages} pages, {:.0} pages/s, {dups} duplicates, {:.0}% of the input read",
                    pages as f64 / start.elapsed().as_secs_f64().max(1e-9),
                    100.0 * read as f64 / total.max(1) as f64
                );
            }
        }
        Ok(())
    })?;
    ix.flush()?;
    pb.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "pages ingested   {pages} ({:.1} MB) in {secs:.1} s: {:.0} pages/s",
        bytes as f64 / 1e6,
        pages as f64 / secs.max(1e-9)
    );
    println!("duplicates       {dups}");
    println!("no main text     {no_text}");
    println!("replaced         {replaced}");
    println!("unchanged        {unchanged} (recrawled with the same main text: nothing written)");
    if delete_list.is_some() {
        println!("deleted          {deleted} ({missing} keys not present)");
    }
    println!("skipped          {}", skipped.len());
    let mut reasons: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for r in &skipped {
        let short: String = r.split(':').next().unwrap_or(r).chars().take(60).collect();
        *reasons.entry(short).or_default() += 1;
    }
    for (r, n) in reasons {
        println!("  {n:>8}  {r}");
    }
    if revisits_stored + revisits_missing > 0 {
        println!(
            "revisits         {} ({revisits_stored} of stored pages: unchanged; \
             {revisits_missing} of pages not in the index)",
            revisits_stored + revisits_missing
        );
    }
    let st = ix.stats()?;
    println!(
        "index            {} pages, {} clusters",
        st.pages, st.clusters
    );
    let mut bad_files = Vec::new();
    for r in &reports {
        println!("{}", r.path.display());
        println!(
            "  {} records read, {} pages handed to the index, {} revisits, {} damaged",
            r.records, r.pages, r.revisits, r.damaged
        );
        for (kind, n) in &r.not_pages {
            println!("  {n:>8}  not a page: {kind}");
        }
        let share = r.damaged as f64 / (r.records + r.damaged).max(1) as f64;
        if share > max_damaged_share {
            bad_files.push(format!(
                "{}: {} of {} records damaged ({:.0} %)",
                r.path.display(),
                r.damaged,
                r.records + r.damaged,
                share * 100.0
            ));
        }
    }
    if !bad_files.is_empty() {
        bail!(
            "more than {:.0} % of the records of a file were damaged:\n  {}",
            max_damaged_share * 100.0,
            bad_files.join("\n  ")
        );
    }
    Ok(())
}

/// Calls `f` with each chunk of at most `pages` pages read from `files` in turn (each page at
/// most `max_page` bytes), with the records skipped before them.
fn for_each_chunk(
    files: &[PathBuf],
    max_page: usize,
    pages: usize,
    mut f: impl FnMut(input::Chunk) -> Result<()>,
) -> Result<()> {
    for path in files {
        let mut reader = open_source(path, max_page)?;
        while !reader.is_done() {
            f(reader.next_chunk(input::Limit {
                pages,
                bytes: CHUNK_BYTES,
            }))?;
        }
    }
    Ok(())
}

fn query(index: &Path, files: &[PathBuf]) -> Result<()> {
    let ix = open_index(index, None)?;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let max_page = ix.options().signature.max_page_bytes;
    for_each_chunk(
        files,
        max_page,
        1024,
        |input::Chunk {
             pages: chunk,
             skips,
             ..
         }| {
            for s in skips {
                eprintln!("skipped {}: {}", s.place, s.reason);
            }
            let verdicts: Vec<_> = chunk
                .par_iter()
                .map(|(_, p)| ix.query_page(&page_of(p)))
                .collect();
            for ((place, p), v) in chunk.iter().zip(verdicts) {
                match v {
                    Ok(v) => writeln!(
                        out,
                        "{}",
                        serde_json::json!({
                            "key": p.key, "duplicate": v.duplicate, "cluster": v.cluster,
                            "representative": v.representative, "similar_to": v.similar_to,
                            "resemble": v.resemble, "contain": v.contain, "exact": v.exact,
                            "identical_to": v.identical_to, "text_chars": v.text_chars,
                            "no_main_text": v.no_main_text,
                        })
                    )?,
                    Err(e) => eprintln!("skipped {place}: page {}: {e}", p.key),
                }
            }
            Ok(())
        },
    )?;
    Ok(())
}

/// `neardup extract`: see [`Command::Extract`].
fn extract(files: &[PathBuf], out: Option<&Path>, threads: usize) -> Result<()> {
    set_threads(threads);
    let cfg = SignatureConfig::default();
    let sink: Box<dyn Write> = match out {
        Some(p) => Box::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = BufWriter::new(sink);
    let pb = bar("extract");
    let mut pages = 0u64;
    for_each_chunk(
        files,
        cfg.max_page_bytes,
        2048,
        |input::Chunk {
             pages: chunk,
             skips,
             ..
         }| {
            for s in skips {
                let line = serde_json::json!({"place": s.place, "error": s.reason});
                writeln!(w, "{line}")?;
            }
            let results: Vec<_> = chunk
                .par_iter()
                .map(|(_, p)| neardup::extract_page(page_of(p).content, &cfg))
                .collect();
            for ((_, p), r) in chunk.iter().zip(results) {
                let line = match r {
                    Ok(e) => serde_json::json!({
                        "id": p.key, "title": e.title, "heading": e.heading,
                        "text": e.text, "lang": e.lang,
                    }),
                    Err(e) => serde_json::json!({"id": p.key, "error": e.to_string()}),
                };
                writeln!(w, "{line}")?;
                pages += 1;
            }
            pb.set_position(pages);
            Ok(())
        },
    )?;
    pb.finish_and_clear();
    w.flush()?;
    Ok(())
}

fn signatures(files: &[PathBuf], threads: usize) -> Result<()> {
    set_threads(threads);
    let cfg = SignatureConfig::default();
    let pb = bar("signatures");
    let start = Instant::now();
    let (mut pages, mut bytes, mut without, mut skipped, mut fps) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for_each_chunk(
        files,
        cfg.max_page_bytes,
        2048,
        |input::Chunk {
             pages: chunk,
             skips,
             ..
         }| {
            for s in skips {
                say(&pb, format!("skipped {}: {}", s.place, s.reason));
                skipped += 1;
            }
            let results: Vec<_> = chunk
                .par_iter()
                .map(|(_, p)| Signatures::compute(page_of(p).content, &cfg))
                .collect();
            for ((place, p), r) in chunk.iter().zip(results) {
                match r {
                    Ok(sig) => {
                        pages += 1;
                        bytes += p.body.len() as u64;
                        fps += sig.fingerprints.len() as u64;
                        without += u64::from(sig.fingerprints.is_empty());
                    }
                    Err(e) => {
                        skipped += 1;
                        say(&pb, format!("skipped {place}: page {}: {e}", p.key));
                    }
                }
            }
            pb.set_position(pages);
            Ok(())
        },
    )?;
    pb.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    println!("pages               {pages}");
    println!("skipped             {skipped}");
    println!(
        "input               {:.1} MB in {secs:.2} s: {:.1} MB/s, {:.0} pages/s",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / secs,
        pages as f64 / secs
    );
    println!(
        "fingerprints/page   {:.1}",
        fps as f64 / pages.max(1) as f64
    );
    println!(
        "no fingerprint      {without} ({:.2}%)",
        100.0 * without as f64 / pages.max(1) as f64
    );
    Ok(())
}

fn main() -> Result<()> {
    // Rust ignores SIGPIPE, so a write to a closed pipe (`neardup stats | head -1`) is an error
    // and `println!` panics on it. The default action ends the process quietly instead, as
    // other command-line tools do; every write to the index is committed before anything is
    // printed about it.
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; it sets the
    // disposition of one signal to its default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Ingest {
            index,
            files,
            delete_list,
            order,
            order_scope,
            batch,
            policy,
            method,
            threads,
            max_damaged_share,
            peak_rss,
        } => {
            if files.is_empty() && delete_list.is_none() {
                bail!("nothing to do: give JSONL files and/or --delete-list");
            }
            if matches!((order, order_scope), (Order::Input, Scope::Batch)) {
                bail!(
                    "--order-scope batch sorts each whole batch by fingerprint count: give it \
                     with --order fingerprints (the default order, input, is not sorted)"
                );
            }
            ingest(
                &index,
                &files,
                delete_list.as_deref(),
                (order, order_scope),
                batch,
                (policy, method.as_ref()),
                threads,
                max_damaged_share,
            )?;
            if peak_rss {
                if let Some(kb) = peak_rss_kb() {
                    println!("peak RSS         {kb} kB (VmHWM)");
                }
            }
            Ok(())
        }
        Command::Query { index, files } => query(&index, &files),
        Command::Delete { index, keys } => {
            let ix = open_index(&index, None)?;
            let mut missing = 0;
            for k in &keys {
                match ix.delete(k) {
                    Ok(_) => {}
                    Err(neardup::Error::NotFound(_)) => {
                        eprintln!("not found: {k}");
                        missing += 1;
                    }
                    Err(e) => return Err(e).context(format!("deleting {k}")),
                }
            }
            println!("deleted {} of {} keys", keys.len() - missing, keys.len());
            Ok(())
        }
        Command::Export {
            index,
            out,
            clusters,
        } => {
            let ix = open_index(&index, None)?;
            let sink: Box<dyn Write> = match &out {
                Some(p) => Box::new(
                    std::fs::File::create(p)
                        .with_context(|| format!("cannot create {}", p.display()))?,
                ),
                None => Box::new(std::io::stdout().lock()),
            };
            let mut w = BufWriter::new(sink);
            let mut err = None;
            if clusters {
                ix.export_clusters(|cid, rep, members| {
                    if err.is_none() {
                        let line = serde_json::json!({"cluster": cid, "representative": rep, "members": members});
                        if let Err(e) = writeln!(w, "{line}") {
                            err = Some(e);
                        }
                    }
                })?;
            } else {
                ix.export(|k, r| {
                    if err.is_none() {
                        if let Err(e) = writeln!(w, "{k}\t{r}") {
                            err = Some(e);
                        }
                    }
                })?;
            }
            if let Some(e) = err {
                return Err(e.into());
            }
            w.flush()?;
            Ok(())
        }
        Command::Stats { index, json } => {
            let ix = open_index(&index, None)?;
            if json {
                let mut out = serde_json::to_value(ix.stats()?)?;
                out["metrics"] = serde_json::to_value(ix.metrics()?)?;
                println!("{out}");
            } else {
                println!("{}", serde_json::to_string_pretty(&ix.stats()?)?);
            }
            Ok(())
        }
        Command::Check { index, sample } => {
            let ix = open_index(&index, None)?;
            let r = match sample {
                Some(n) => ix.check_sample(n)?,
                None => ix.check()?,
            };
            println!(
                "pages {}  clusters {}  posting entries {}  problems {}",
                r.pages, r.clusters, r.postings, r.problem_count
            );
            for p in &r.problems {
                println!("  {p}");
            }
            if !r.is_clean() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Checkpoint { index, out } => {
            let ix = open_index(&index, None)?;
            ix.checkpoint(&out)?;
            println!("checkpoint written to {}", out.display());
            Ok(())
        }
        Command::Compact { from, out, check } => {
            let start = Instant::now();
            let r = if check {
                Index::compact_snapshot_checked(&from, &out)
            } else {
                Index::compact_snapshot(&from, &out)
            }
            .with_context(|| format!("compacting {}", from.display()))?;
            println!(
                "compacted {} pages in {:.1} s",
                r.pages,
                start.elapsed().as_secs_f64()
            );
            println!("size before      {:.1} MB", r.bytes_before as f64 / 1e6);
            println!("size after       {:.1} MB", r.bytes_after as f64 / 1e6);
            println!("stale ids dropped from postings   {}", r.stale_ids_dropped);
            println!(
                "over-frequent postings dropped    {}",
                r.frequent_postings_dropped
            );
            println!(
                "stale simhash entries dropped     {}",
                r.stale_simhash_dropped
            );
            if r.check.sampled > 0 {
                println!("checked          {} random pages", r.check.sampled);
            }
            println!("check            {} problems", r.check.problem_count);
            for p in &r.check.problems {
                println!("  {p}");
            }
            if !r.check.is_clean() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Signatures { files, threads } => signatures(&files, threads),
        Command::Extract {
            files,
            out,
            threads,
        } => extract(&files, out.as_deref(), threads),
        Command::Explain { index, pages, json } => explain(index.as_deref(), &pages, json),
    }
}

/// `neardup explain`: see [`Command::Explain`].
fn explain(index: Option<&std::path::Path>, pages: &[String], json: bool) -> Result<()> {
    let e = match index {
        Some(path) => open_index(path, None)?.explain(&pages[0], &pages[1])?,
        None => {
            let opts = IndexOptions::default();
            let read = |name: &String| -> Result<Signatures> {
                let bytes = std::fs::read(name).with_context(|| format!("cannot read {name}"))?;
                let lower = name.to_ascii_lowercase();
                let html = [".htm", ".html", ".xhtml"]
                    .iter()
                    .any(|x| lower.ends_with(x))
                    || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<');
                let content = if html {
                    neardup::Content::Html(&bytes)
                } else {
                    neardup::Content::Text(
                        std::str::from_utf8(&bytes)
                            .with_context(|| format!("{name} is not UTF-8 text"))?,
                    )
                };
                Signatures::compute(content, &opts.signature)
                    .with_context(|| format!("computing the signatures of {name}"))
            };
            let (a, b) = (read(&pages[0])?, read(&pages[1])?);
            neardup::explain_pair((&pages[0], &a), (&pages[1], &b), &opts)
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&e)?);
        return Ok(());
    }
    let s = &e.similarity;
    for p in [&e.a, &e.b] {
        println!(
            "{}: {} chars, {} fingerprints, {} clause keys, simhash {}",
            p.name, p.chars, p.fingerprints, p.clause_keys, p.simhash
        );
        if p.chrome_blocks_dropped > 0 {
            println!(
                "  site chrome: {} distinct block(s) dropped at insert",
                p.chrome_blocks_dropped
            );
        }
        println!("  text: {}…", p.start);
        if !p.regions.is_empty() {
            println!("  trustable regions (chars): {:?}", p.regions);
        }
    }
    println!(
        "shared fingerprints {}  shared clause keys {}  simhash distance {}",
        e.shared_fingerprints, e.shared_clause_keys, e.simhash_distance
    );
    println!(
        "units {} / {}  skeletons {} / {}  skeleton LCS {}  trustable LCS {} in {} round(s) \
         (on the shorter text's curve: {})",
        s.len_a, s.len_b, s.skeleton_a, s.skeleton_b, s.lcs, s.tlcs, s.rounds, s.tlcs_shorter
    );
    println!(
        "resemble {:.4}  contain {:.4}  exact {}  heading codes conflict {}",
        s.resemble, s.contain, e.exact, e.codes_conflict
    );
    if s.located_contain > 0.0 {
        println!(
            "located containment (chars, in the window of the longer page): {:.4}",
            s.located_contain
        );
    }
    println!("{}", e.rule);
    let stage = serde_json::to_value(e.stage)?;
    println!("stage: {}", stage.as_str().unwrap_or("?"));
    Ok(())
}
