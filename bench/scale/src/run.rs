//! The driver: grows one index to each size and measures it there against a fixed workload.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use neardup::{BatchOptions, BatchOrder, Content, Index, IndexOptions, Page};

use crate::gen::{GenConfig, GenPage, Generator};
use crate::measure::{self, Latency};
use crate::Inputs;

/// The driver's settings (from the command line).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Sizes (pages held) to measure at, ascending.
    pub sizes: Vec<u64>,
    /// Pages of the probe batch.
    pub probe: usize,
    /// Queries of each kind.
    pub queries: usize,
    /// The stream's seed.
    pub seed: u64,
    /// Share of variants in the stream and the probe batch.
    pub dup_share: f64,
    /// Skeletons kept from the dev corpus.
    pub skeletons: usize,
    /// Pages per `insert_batch` while growing.
    pub batch: usize,
    /// Deadline of each maintenance operation, seconds.
    pub maint_timeout: u64,
    /// No `check` above this many pages.
    pub skip_check_above: Option<u64>,
    /// No offline compaction above this many pages.
    pub skip_compact_above: Option<u64>,
    /// Also time an online `compact()` (on a checkpoint copy).
    pub online_compact: bool,
    /// `IndexOptions::sync_writes`.
    pub sync_writes: bool,
    /// `IndexOptions::sketch_fallback`.
    #[serde(default)]
    pub sketch_fallback: bool,
    /// A word about the build measured ("before", a commit…).
    pub label: String,
}

/// Throughput of an ingest.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Throughput {
    /// Pages handed to `insert_batch`.
    pub pages: u64,
    /// Pages refused (bad content).
    pub errors: u64,
    /// Pages verdicted duplicates.
    pub duplicates: u64,
    /// Wall seconds in `insert_batch`.
    pub wall_s: f64,
    /// CPU seconds of the process meanwhile (all threads).
    pub cpu_s: f64,
    /// Pages a second (wall).
    pub pages_per_s: f64,
    /// CPU microseconds a page.
    pub cpu_us_per_page: f64,
    /// Candidate pages found, summed over the pages (what grows with the index's size, as the
    /// workload sees it: more held pages share text with a new one).
    #[serde(default)]
    pub candidates: u64,
    /// Pairs verified, summed over the pages.
    #[serde(default)]
    pub verified: u64,
}

impl Throughput {
    fn add(&mut self, pages: u64, o: &Ingested) {
        self.pages += pages;
        self.errors += o.errors;
        self.duplicates += o.duplicates;
        self.candidates += o.candidates;
        self.verified += o.verified;
        self.wall_s += o.wall.as_secs_f64();
        self.cpu_s += o.cpu.as_secs_f64();
        self.pages_per_s = self.pages as f64 / self.wall_s.max(1e-9);
        self.cpu_us_per_page = self.cpu_s * 1e6 / (self.pages.max(1) as f64);
    }
}

/// The outcome of a maintenance operation run in a child process under a deadline.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Maint {
    /// `ok`, `failed`, `timeout` or `skipped`.
    pub status: String,
    /// Seconds of the operation itself (the deadline for a timeout).
    pub seconds: f64,
    /// Seconds opening the index in the child (check and online compact).
    pub open_s: f64,
    /// CPU seconds of the child.
    pub cpu_s: f64,
    /// Result in words (problems found, bytes after, error).
    pub detail: String,
}

impl Maint {
    fn skipped(why: &str) -> Maint {
        Maint {
            status: "skipped".into(),
            detail: why.into(),
            ..Maint::default()
        }
    }
}

/// Everything measured at one size.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Step {
    /// Pages held (`Index::len`).
    pub pages: u64,
    /// Pages of the stream generated so far.
    pub generated: u64,
    /// Clusters held.
    pub clusters: u64,
    /// Growing from the previous size to this one.
    pub grow: Throughput,
    /// Seconds generating the growth's pages (not in `grow`).
    pub grow_gen_s: f64,
    /// The probe batch into a checkpoint copy.
    pub probe: Throughput,
    /// Seconds of the probe copy's checkpoint.
    pub probe_checkpoint_s: f64,
    /// Seconds opening the probe copy.
    pub probe_open_s: f64,
    /// `Index::open` of the standing index, seconds.
    pub open_s: f64,
    /// `Index::open` and the first query, seconds.
    pub open_first_query_s: f64,
    /// Queries of unrelated pages.
    pub query_unrelated: Latency,
    /// Unrelated queries verdicted duplicates.
    pub unrelated_duplicates: u64,
    /// Queries of near duplicates of held pages.
    pub query_duplicates: Latency,
    /// Duplicate queries verdicted duplicates.
    pub duplicates_found: u64,
    /// RSS after growing, MB.
    pub rss_mb: f64,
    /// Peak RSS while growing to this size, MB (`VmHWM`, reset at the step's start).
    pub peak_rss_mb: f64,
    /// RSS after the reopen and first query, MB.
    pub rss_reopened_mb: f64,
    /// Bytes of the index directory.
    pub dir_bytes: u64,
    /// Bytes in table files, blob files and memtables (`Stats::bytes`).
    pub stored_bytes: u64,
    /// Of which the `texts` column family.
    pub texts_bytes: u64,
    /// `dir_bytes / pages`.
    pub bytes_per_page: f64,
    /// `(dir_bytes - texts_bytes) / pages`.
    pub bytes_per_page_without_texts: f64,
    /// Memory of the posting-key filter (builds that had one) or of the block cache in use,
    /// bytes.
    pub posting_filter_bytes: u64,
    /// `checkpoint` of the standing index, seconds (for the maintenance copy).
    pub checkpoint_s: f64,
    /// `check()` on the checkpoint.
    pub check: Maint,
    /// `Index::compact_snapshot(checkpoint, new)`.
    pub compact_snapshot: Maint,
    /// `compact()` on the checkpoint (optional).
    pub online_compact: Maint,
    /// When the step was measured (Unix seconds).
    pub at: u64,
}

/// What `results.json` holds.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Results {
    /// The driver's settings.
    pub settings: Option<Settings>,
    /// The generator's figures (skeletons, chains, baseline RSS).
    pub generator: serde_json::Value,
    /// The machine and build.
    pub machine: serde_json::Value,
    /// One entry per size.
    pub steps: Vec<Step>,
}

/// A line on stderr, stamped with the UTC time of day.
pub(crate) fn log(msg: impl AsRef<str>) {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (h, m, s) = ((t / 3600) % 24, (t / 60) % 60, t % 60);
    eprintln!("[{h:02}:{m:02}:{s:02}Z] {}", msg.as_ref());
}

/// The library's pages of generated pages (borrowed).
pub(crate) fn pages_of(v: &[GenPage]) -> Vec<Page<'_>> {
    v.iter()
        .map(|p| Page {
            key: &p.key,
            host: &p.host,
            time: p.time,
            content: Content::Html(p.html.as_bytes()),
        })
        .collect()
}

/// What one `insert_batch` did, and what it cost.
struct Ingested {
    errors: u64,
    duplicates: u64,
    candidates: u64,
    verified: u64,
    wall: Duration,
    cpu: Duration,
    /// Verdict timings summed: signature, candidates, verification, write.
    parts: [Duration; 4],
}

/// The batch options of every ingest of the bench: the order its curves were measured in since
/// the first (descending fingerprint count a window, the library's default until input order
/// became it), so that runs resumed or repeated by later builds stay comparable.
pub(crate) fn batch_options() -> BatchOptions {
    BatchOptions {
        order: BatchOrder::FingerprintCount,
        ..BatchOptions::default()
    }
}

/// Inserts pages.
fn ingest(ix: &Index, pages: &[GenPage]) -> anyhow::Result<Ingested> {
    let refs = pages_of(pages);
    let (t0, c0) = (Instant::now(), measure::cpu_time());
    let out = ix.insert_batch(&refs, &batch_options(), &mut |_, _| {})?;
    let (wall, cpu) = (t0.elapsed(), measure::cpu_time().saturating_sub(c0));
    let ok = || out.iter().filter_map(|r| r.as_ref().ok());
    Ok(Ingested {
        errors: out.iter().filter(|r| r.is_err()).count() as u64,
        duplicates: ok().filter(|v| v.duplicate).count() as u64,
        candidates: ok().map(|v| v.candidates as u64).sum(),
        verified: ok().map(|v| v.verified as u64).sum(),
        wall,
        cpu,
        parts: ok().fold([Duration::ZERO; 4], |mut a, v| {
            a[0] += v.timing.signature;
            a[1] += v.timing.candidates;
            a[2] += v.timing.verify;
            a[3] += v.timing.write;
            a
        }),
    })
}

/// The stream an index is grown from: `seed`, `dup_share` of variants, keys named "p".
pub(crate) fn stream_config(seed: u64, dup_share: f64) -> GenConfig {
    GenConfig {
        seed,
        dup_share,
        name: "p".into(),
        ..GenConfig::default()
    }
}

/// The fixed query sets: unrelated pages (another seed, the held-out tenth of the pool) and
/// near duplicates of pages among the first `reach` of the stream (held at every size).
struct Workload<'a> {
    main: Generator<'a>,
    unrelated: Generator<'a>,
    probe: Generator<'a>,
    reach: u64,
}

impl<'a> Workload<'a> {
    /// The stream of `seed`, its unrelated pages and its probe batch; duplicate queries of
    /// pages among the stream's first `reach` (default 25,000).
    fn new(inputs: &'a Inputs, seed: u64, dup_share: f64, reach: Option<u64>) -> Self {
        let main_cfg = stream_config(seed, dup_share);
        Workload {
            main: Generator::new(main_cfg.clone(), &inputs.main, &inputs.skeletons),
            unrelated: Generator::new(
                GenConfig {
                    seed: seed ^ 0x756e_7265_6c61_7465,
                    dup_share: 0.0,
                    name: "unrelated".into(),
                    ..main_cfg.clone()
                },
                &inputs.held_out,
                &inputs.skeletons,
            ),
            probe: Generator::new(
                GenConfig {
                    seed: seed ^ 0x7072_6f62_6500_0000,
                    name: "probe".into(),
                    ..main_cfg.clone()
                },
                &inputs.main,
                &inputs.skeletons,
            ),
            reach: reach.unwrap_or(25_000),
        }
    }
}

impl Workload<'_> {
    fn unrelated_pages(&self, n: usize) -> Vec<String> {
        (0..n as u64).map(|q| self.unrelated.page(q).html).collect()
    }

    fn duplicate_pages(&self, n: usize) -> Vec<String> {
        (0..n as u64)
            .map(|q| {
                let t = self.main.rng(0xd0d0, q);
                let target = rand::Rng::random_range(&mut t.clone(), 0..self.reach.max(1));
                self.main.variant_page(target, q)
            })
            .collect()
    }

    fn probe_pages(&self, n: usize) -> Vec<GenPage> {
        (0..n as u64).map(|i| self.probe.page(i)).collect()
    }
}

fn time_queries(ix: &Index, pages: &[String]) -> anyhow::Result<(Latency, u64)> {
    let mut d = Vec::with_capacity(pages.len());
    let mut dups = 0;
    let (mut parts, mut candidates, mut verified) = ([Duration::ZERO; 3], 0usize, 0usize);
    for p in pages {
        let t = Instant::now();
        let v = ix.query(Content::Html(p.as_bytes()))?;
        d.push(t.elapsed());
        dups += u64::from(v.duplicate);
        parts[0] += v.timing.signature;
        parts[1] += v.timing.candidates;
        parts[2] += v.timing.verify;
        candidates += v.candidates;
        verified += v.verified;
    }
    let n = pages.len().max(1) as f64;
    let mut l = Latency::of(d);
    l.parts_us = parts.map(|p| p.as_secs_f64() * 1e6 / n);
    l.candidates = candidates as f64 / n;
    l.verified = verified as f64 / n;
    Ok((l, dups))
}

/// Times the fixed queries (unrelated pages, then duplicates of the stream's first `reach`
/// pages) against an index grown by `run`, opened with `opts`, `passes` times over (the first
/// pass warms the block cache): what a query costs at one size under another memory budget or
/// build, without growing anything; then, with `probe` pages, the probe batch ingested into a
/// checkpoint copy (`tmp/probe-q` beside the index), removed after.
pub fn queries(
    inputs: &Inputs,
    index: &Path,
    opts: IndexOptions,
    (n, passes, probe): (usize, usize, usize),
    (seed, dup_share, reach): (u64, f64, u64),
) -> anyhow::Result<()> {
    let w = Workload::new(inputs, seed, dup_share, Some(reach));
    let t = Instant::now();
    let ix = Index::open(index, opts.clone())?;
    log(format!(
        "open {:.3} s; {} pages held",
        t.elapsed().as_secs_f64(),
        ix.len()
    ));
    let unrelated = w.unrelated_pages(n);
    let duplicates = w.duplicate_pages(n);
    for pass in 1..=passes.max(1) {
        for (what, pages) in [("unrelated", &unrelated), ("duplicates", &duplicates)] {
            let (l, dups) = time_queries(&ix, pages)?;
            log(format!(
                "pass {pass}, {what}: p50 {:.0} µs p90 {:.0} µs p99 {:.0} µs; mean {:.0} µs = signatures {:.0} + candidates {:.0} + verification {:.0}; {:.1} candidates, {:.2} pairs verified; {dups} duplicates; RSS {:.0} MB",
                l.p50_us, l.p90_us, l.p99_us, l.mean_us, l.parts_us[0], l.parts_us[1], l.parts_us[2], l.candidates, l.verified, measure::rss_mb()
            ));
        }
    }
    log(format!(
        "after the queries: RSS {:.0} MB; {}",
        measure::rss_mb(),
        memory_line(&ix)?
    ));
    if probe > 0 {
        let pages = w.probe_pages(probe);
        let dir = index.with_file_name("tmp").join("probe-q");
        let (o, _, _) = probe_copy(&ix, &dir, Some(opts), &pages)?;
        let per = |d: Duration| d.as_secs_f64() * 1e6 / probe as f64;
        log(format!(
            "probe: {:.0} pages/s, {:.0} µs CPU a page; verdict timings a page: signatures {:.0} + candidates {:.0} + verification {:.0} + write {:.0} µs; {:.1} candidates, {:.2} pairs verified a page; {} duplicates",
            probe as f64 / o.wall.as_secs_f64().max(1e-9),
            per(o.cpu),
            per(o.parts[0]),
            per(o.parts[1]),
            per(o.parts[2]),
            per(o.parts[3]),
            o.candidates as f64 / probe as f64,
            o.verified as f64 / probe as f64,
            o.duplicates
        ));
    }
    Ok(())
}

/// The resident memory of one index of the run's size while it ingests: a checkpoint copy of
/// the run's index (`tmp/memory` beside it, removed after) is the only index open; `pages`
/// pages of the probe batch go in, `batch` at a time, and after each batch the process's RSS,
/// its peak and the index's memory by part are logged. What an engine holding that index
/// would keep resident, with the bench's own share (the generator, one batch of pages) stated.
pub fn memory(
    inputs: &Inputs,
    index: &Path,
    opts: IndexOptions,
    (pages, batch): (usize, usize),
    (seed, dup_share): (u64, f64),
) -> anyhow::Result<()> {
    let w = Workload::new(inputs, seed, dup_share, None);
    log(format!(
        "generator and inputs: RSS {:.0} MB",
        measure::rss_mb()
    ));
    let dir = index.with_file_name("tmp").join("memory");
    remove(&dir);
    std::fs::create_dir_all(dir.parent().context("tmp directory")?)?;
    {
        let ix = Index::open(index, opts.clone())?;
        ix.checkpoint(&dir)?;
    }
    let result = (|| {
        let t = Instant::now();
        let ix = Index::open(&dir, opts)?;
        log(format!(
            "copy open in {:.3} s, {} pages; RSS {:.0} MB",
            t.elapsed().as_secs_f64(),
            ix.len(),
            measure::rss_mb()
        ));
        measure::reset_peak();
        let (t0, c0) = (Instant::now(), measure::cpu_time());
        let mut done = 0;
        let (mut parts, mut candidates, mut verified) = ([Duration::ZERO; 4], 0, 0);
        while done < pages {
            let n = batch.max(1).min(pages - done);
            let chunk: Vec<GenPage> = (done..done + n).map(|i| w.probe.page(i as u64)).collect();
            let o = ingest(&ix, &chunk)?;
            for (sum, p) in parts.iter_mut().zip(o.parts) {
                *sum += p;
            }
            (candidates, verified) = (candidates + o.candidates, verified + o.verified);
            done += n;
            log(format!(
                "{done} pages in: RSS {:.0} MB, peak {:.0} MB; {}",
                measure::rss_mb(),
                measure::peak_mb(),
                memory_line(&ix)?
            ));
        }
        let per = |d: Duration| d.as_secs_f64() * 1e6 / done.max(1) as f64;
        log(format!(
            "{done} pages in {:.1} s, {:.0} µs CPU a page; verdict timings a page: signatures {:.0} + candidates {:.0} + verification {:.0} + write {:.0} µs; {:.1} candidates, {:.2} pairs verified a page",
            t0.elapsed().as_secs_f64(),
            per(measure::cpu_time().saturating_sub(c0)),
            per(parts[0]),
            per(parts[1]),
            per(parts[2]),
            per(parts[3]),
            candidates as f64 / done.max(1) as f64,
            verified as f64 / done.max(1) as f64,
        ));
        anyhow::Ok(())
    })();
    remove(&dir);
    result
}

/// Ingests `pages` into a checkpoint copy of `ix` made in `dir` (removed before and after),
/// opened with `opts` (`None`: its stored options): what the ingest did, and the seconds of the
/// checkpoint and of the copy's open.
fn probe_copy(
    ix: &Index,
    dir: &Path,
    opts: Option<IndexOptions>,
    pages: &[GenPage],
) -> anyhow::Result<(Ingested, f64, f64)> {
    remove(dir);
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let t = Instant::now();
    ix.checkpoint(dir)?;
    let checkpoint_s = t.elapsed().as_secs_f64();
    let result = (|| {
        let t = Instant::now();
        let copy = match opts {
            Some(opts) => Index::open(dir, opts)?,
            None => Index::open_existing(dir)?,
        };
        let open_s = t.elapsed().as_secs_f64();
        let ingested = ingest(&copy, pages)?;
        log(format!(
            "probe copy after the ingest: RSS {:.0} MB; {}",
            measure::rss_mb(),
            memory_line(&copy)?
        ));
        Ok((ingested, checkpoint_s, open_s))
    })();
    remove(dir);
    result
}

/// The memory an index holds by part ([`Index::memory`]), in MB, for a log line.
fn memory_line(ix: &Index) -> anyhow::Result<String> {
    Ok(ix
        .memory()?
        .iter()
        .map(|(name, b)| format!("{name} {:.1} MB", *b as f64 / 1048576.0))
        .collect::<Vec<_>>()
        .join(", "))
}

fn index_options(s: &Settings) -> IndexOptions {
    IndexOptions {
        sync_writes: s.sync_writes,
        sketch_fallback: s.sketch_fallback,
        ..IndexOptions::default()
    }
}

/// Runs a maintenance operation in a child process (`neardup-scale maint …`) and kills it at the
/// deadline.
fn maint_child(op: &str, from: &Path, to: Option<&Path>, deadline: Duration) -> Maint {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Maint {
                status: "failed".into(),
                detail: format!("no executable path: {e}"),
                ..Maint::default()
            }
        }
    };
    let mut cmd = Command::new(exe);
    cmd.arg("maint").arg(op).arg("--from").arg(from);
    if let Some(t) = to {
        cmd.arg("--to").arg(t);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let t0 = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Maint {
                status: "failed".into(),
                detail: format!("spawning: {e}"),
                ..Maint::default()
            }
        }
    };
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if t0.elapsed() >= deadline => {
                // Our own child, by its handle.
                let _ = child.kill();
                let _ = child.wait();
                return Maint {
                    status: "timeout".into(),
                    seconds: deadline.as_secs_f64(),
                    detail: format!("killed after {} s", deadline.as_secs()),
                    ..Maint::default()
                };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => {
                return Maint {
                    status: "failed".into(),
                    detail: format!("waiting: {e}"),
                    ..Maint::default()
                }
            }
        }
    }
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut s, &mut out);
    }
    serde_json::from_str::<Maint>(out.trim()).unwrap_or_else(|e| Maint {
        status: "failed".into(),
        seconds: t0.elapsed().as_secs_f64(),
        detail: format!("child said {out:?} ({e})"),
        ..Maint::default()
    })
}

/// The child's side: one operation on a checkpoint, its outcome as one JSON line.
pub fn maint_op(op: &str, from: &Path, to: Option<&Path>) -> Maint {
    let c0 = measure::cpu_time();
    let t0 = Instant::now();
    let mut open_s = 0.0;
    let result: anyhow::Result<String> = (|| match op {
        "check" => {
            let ix = Index::open_existing(from)?;
            open_s = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            let r = ix.check()?;
            let s = t1.elapsed().as_secs_f64();
            Ok(format!(
                "{s:.3}|{} pages, {} clusters, {} postings, {} problems",
                r.pages, r.clusters, r.postings, r.problem_count
            ))
        }
        "compact-snapshot" => {
            let to = to.context("--to is needed")?;
            let t1 = Instant::now();
            let r = Index::compact_snapshot(from, to)?;
            let s = t1.elapsed().as_secs_f64();
            Ok(format!(
                "{s:.3}|{} → {} bytes, {} pages, check {} problems",
                r.bytes_before, r.bytes_after, r.pages, r.check.problem_count
            ))
        }
        "compact" => {
            let ix = Index::open_existing(from)?;
            open_s = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            ix.compact()?;
            let s = t1.elapsed().as_secs_f64();
            Ok(format!("{s:.3}|{} bytes after", neardup::dir_bytes(from)))
        }
        _ => bail!("unknown operation {op}"),
    })();
    let cpu_s = measure::cpu_time().saturating_sub(c0).as_secs_f64();
    match result {
        Ok(s) => {
            let (secs, detail) = s.split_once('|').unwrap_or(("0", &s));
            Maint {
                status: "ok".into(),
                seconds: secs.parse().unwrap_or(0.0),
                open_s,
                cpu_s,
                detail: detail.to_string(),
            }
        }
        Err(e) => Maint {
            status: "failed".into(),
            seconds: t0.elapsed().as_secs_f64(),
            open_s,
            cpu_s,
            detail: format!("{e:#}"),
        },
    }
}

fn remove(p: &Path) {
    if p.exists() {
        let _ = std::fs::remove_dir_all(p);
    }
}

/// Where the run keeps things.
pub struct Paths {
    /// The standing index.
    pub index: PathBuf,
    /// Checkpoints and compacted copies (removed after use).
    pub tmp: PathBuf,
    /// `next` page of the stream, for `--resume`.
    pub state: PathBuf,
    /// results.json, results.md, scale.svg.
    pub out: PathBuf,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct State {
    next: u64,
    seed: u64,
    dup_share: f64,
    skeletons: usize,
}

/// The whole run.
pub fn run(
    paths: &Paths,
    s: Settings,
    inputs: &Inputs,
    resume: bool,
    generator_info: serde_json::Value,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(&paths.out)?;
    std::fs::create_dir_all(&paths.tmp)?;
    let results_path = paths.out.join("results.json");
    let mut results = if resume && results_path.exists() {
        serde_json::from_str::<Results>(&std::fs::read_to_string(&results_path)?)
            .context("reading results.json to resume")?
    } else {
        if paths.index.exists() && !resume {
            bail!(
                "{} holds an index: pass --resume to grow it further, or remove it",
                paths.index.display()
            );
        }
        Results::default()
    };
    let mut next = 0;
    if resume && paths.state.exists() {
        let st: State = serde_json::from_str(&std::fs::read_to_string(&paths.state)?)?;
        if st.seed != s.seed || st.dup_share != s.dup_share || st.skeletons != s.skeletons {
            bail!(
                "the index was grown with seed {}, dup share {}, {} skeletons: resume with those",
                st.seed,
                st.dup_share,
                st.skeletons
            );
        }
        next = st.next;
    }
    results.settings = Some(s.clone());
    results.generator = generator_info;
    results.machine = crate::report::machine();
    let w = Workload::new(inputs, s.seed, s.dup_share, s.sizes.first().copied());
    let opts = index_options(&s);
    let mut ix = Some(Index::open(&paths.index, opts.clone())?);
    let save_state = |next: u64| -> anyhow::Result<()> {
        let st = State {
            next,
            seed: s.seed,
            dup_share: s.dup_share,
            skeletons: s.skeletons,
        };
        std::fs::write(&paths.state, serde_json::to_string(&st)?)?;
        Ok(())
    };
    for &size in &s.sizes {
        if results
            .steps
            .iter()
            .any(|st| st.generated == size && st.check.status != "pending")
        {
            log(format!(
                "{size}: measured already (results.json), next size"
            ));
            continue;
        }
        if next > size {
            log(format!(
                "{size}: the index is past it ({next} pages generated), next size"
            ));
            continue;
        }
        // A step whose maintenance was cut short is measured again.
        results
            .steps
            .retain(|st| !(st.generated == size && st.check.status == "pending"));
        let mut step = Step::default();
        measure::reset_peak();
        // Grow.
        let cur = ix.as_ref().context("index handle")?;
        let grow_start = Instant::now();
        let mut last_log = Instant::now();
        while next < size {
            let n = (s.batch as u64).min(size - next);
            let t = Instant::now();
            let pages: Vec<GenPage> = (next..next + n).map(|i| w.main.page(i)).collect();
            step.grow_gen_s += t.elapsed().as_secs_f64();
            let o = ingest(cur, &pages)?;
            let (wall, cpu) = (o.wall, o.cpu);
            drop(pages);
            step.grow.add(n, &o);
            next += n;
            save_state(next)?;
            if last_log.elapsed() > Duration::from_secs(20) || next == size {
                last_log = Instant::now();
                log(format!(
                    "grow {next}/{size}: batch {:.0} pages/s, {:.0} µs CPU a page, {:.1} candidates and {:.2} pairs verified a page; so far {:.0} pages/s; RSS {:.0} MB",
                    n as f64 / wall.as_secs_f64().max(1e-9),
                    cpu.as_secs_f64() * 1e6 / n as f64,
                    o.candidates as f64 / n as f64,
                    o.verified as f64 / n as f64,
                    step.grow.pages_per_s,
                    measure::rss_mb()
                ));
            }
        }
        log(format!(
            "grown to {size} in {:.0} s ({:.0} s generating)",
            grow_start.elapsed().as_secs_f64(),
            step.grow_gen_s
        ));
        step.generated = next;
        cur.flush()?;
        step.rss_mb = measure::rss_mb();
        step.peak_rss_mb = measure::peak_mb();
        let stats = cur.stats()?;
        step.pages = cur.len();
        step.clusters = stats.clusters;
        step.posting_filter_bytes = stats
            .memory
            .iter()
            .filter(|(n, _)| n == "block_cache")
            .map(|(_, b)| *b)
            .sum();
        step.stored_bytes = stats.bytes.iter().map(|(_, b)| b).sum();
        step.texts_bytes = stats
            .bytes
            .iter()
            .filter(|(n, _)| n == "texts")
            .map(|(_, b)| *b)
            .sum();
        step.dir_bytes = neardup::dir_bytes(&paths.index);
        step.bytes_per_page = step.dir_bytes as f64 / step.pages.max(1) as f64;
        step.bytes_per_page_without_texts =
            step.dir_bytes.saturating_sub(step.texts_bytes) as f64 / step.pages.max(1) as f64;

        // Queries, one at a time on this thread.
        let unrelated = w.unrelated_pages(s.queries);
        let duplicates = w.duplicate_pages(s.queries);
        (step.query_unrelated, step.unrelated_duplicates) = time_queries(cur, &unrelated)?;
        (step.query_duplicates, step.duplicates_found) = time_queries(cur, &duplicates)?;
        log(format!(
            "queries at {size}: unrelated p50 {:.0} µs p99 {:.0} µs ({} duplicates); duplicates p50 {:.0} µs p99 {:.0} µs ({} found)",
            step.query_unrelated.p50_us,
            step.query_unrelated.p99_us,
            step.unrelated_duplicates,
            step.query_duplicates.p50_us,
            step.query_duplicates.p99_us,
            step.duplicates_found
        ));
        for (what, l) in [
            ("unrelated", &step.query_unrelated),
            ("duplicates", &step.query_duplicates),
        ] {
            log(format!(
                "  {what}: mean {:.0} µs = signatures {:.0} + candidates {:.0} + verification {:.0} (+ the rest); {:.1} candidates, {:.2} pairs verified a query",
                l.mean_us, l.parts_us[0], l.parts_us[1], l.parts_us[2], l.candidates, l.verified
            ));
        }
        drop(duplicates);

        // The probe batch into a checkpoint copy.
        let probe = w.probe_pages(s.probe);
        let (o, checkpoint_s, open_s) = probe_copy(cur, &paths.tmp.join("probe"), None, &probe)?;
        (step.probe_checkpoint_s, step.probe_open_s) = (checkpoint_s, open_s);
        step.probe.add(probe.len() as u64, &o);
        drop(probe);
        log(format!(
            "probe at {size}: {:.0} pages/s, {:.0} µs CPU a page ({} duplicates; {:.1} candidates, {:.2} pairs verified a page); checkpoint {:.2} s, open copy {:.2} s",
            step.probe.pages_per_s,
            step.probe.cpu_us_per_page,
            step.probe.duplicates,
            step.probe.candidates as f64 / step.probe.pages.max(1) as f64,
            step.probe.verified as f64 / step.probe.pages.max(1) as f64,
            step.probe_checkpoint_s,
            step.probe_open_s
        ));

        // Open: the handle dropped, the library's open alone, then the first query.
        drop(ix.take());
        let t = Instant::now();
        let reopened = Index::open(&paths.index, opts.clone())?;
        step.open_s = t.elapsed().as_secs_f64();
        if let Some(first) = unrelated.first() {
            reopened.query(Content::Html(first.as_bytes()))?;
        }
        step.open_first_query_s = t.elapsed().as_secs_f64();
        step.rss_reopened_mb = measure::rss_mb();
        drop(unrelated);
        log(format!(
            "open at {size}: {:.3} s, with the first query {:.3} s; RSS {:.0} MB",
            step.open_s, step.open_first_query_s, step.rss_reopened_mb
        ));

        // What is measured so far is written before the maintenance, which may take long.
        {
            let mut partial = results.clone();
            let mut st = step.clone();
            let waiting = Maint {
                status: "pending".into(),
                ..Maint::default()
            };
            (st.check, st.compact_snapshot, st.online_compact) =
                (waiting.clone(), waiting.clone(), waiting);
            partial.steps.push(st);
            partial.steps.sort_by_key(|st| st.generated);
            std::fs::write(&results_path, serde_json::to_string_pretty(&partial)?)?;
            crate::report::write(&partial, &paths.out)?;
        }

        // Maintenance on a checkpoint, each operation in a child under a deadline.
        let deadline = Duration::from_secs(s.maint_timeout);
        let do_check = s.skip_check_above.is_none_or(|m| size <= m);
        let do_compact = s.skip_compact_above.is_none_or(|m| size <= m);
        let maint_dir = paths.tmp.join("maint");
        let compacted = paths.tmp.join("compacted");
        remove(&maint_dir);
        remove(&compacted);
        let t = Instant::now();
        reopened.checkpoint(&maint_dir)?;
        step.checkpoint_s = t.elapsed().as_secs_f64();
        step.check = if do_check {
            log(format!("check at {size} (deadline {} s)…", s.maint_timeout));
            maint_child("check", &maint_dir, None, deadline)
        } else {
            Maint::skipped("--skip-check-above")
        };
        step.compact_snapshot = if do_compact {
            log(format!(
                "compact_snapshot at {size} (deadline {} s)…",
                s.maint_timeout
            ));
            maint_child("compact-snapshot", &maint_dir, Some(&compacted), deadline)
        } else {
            Maint::skipped("--skip-compact-above")
        };
        remove(&compacted);
        step.online_compact = if s.online_compact && do_compact {
            log(format!(
                "compact at {size} (deadline {} s)…",
                s.maint_timeout
            ));
            maint_child("compact", &maint_dir, None, deadline)
        } else {
            Maint::skipped("not asked (--online-compact)")
        };
        remove(&maint_dir);
        log(format!(
            "maintenance at {size}: checkpoint {:.2} s, check {} {:.1} s, compact_snapshot {} {:.1} s, compact {} {:.1} s",
            step.checkpoint_s,
            step.check.status,
            step.check.seconds,
            step.compact_snapshot.status,
            step.compact_snapshot.seconds,
            step.online_compact.status,
            step.online_compact.seconds
        ));
        ix = Some(reopened);
        step.at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        results.steps.push(step);
        results.steps.sort_by_key(|st| st.generated);
        std::fs::write(&results_path, serde_json::to_string_pretty(&results)?)?;
        crate::report::write(&results, &paths.out)?;
        log(format!(
            "{size}: results in {}",
            paths.out.join("results.md").display()
        ));
    }
    Ok(())
}
