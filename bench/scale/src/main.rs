//! # neardup-scale
//!
//! The scale bench of issue #32: it makes pages fast, grows **one** index step by step to each
//! of the sizes asked, and at each size measures the same fixed workload — a probe batch
//! ingested into a throw-away checkpoint copy, single queries of unrelated pages and of near
//! duplicates of held pages, the open, memory, bytes a page on disk, and `checkpoint`, `check`
//! and offline compaction under a deadline — so that the index's size is the only thing that
//! changes. See `bench/README.md` ("Scale") for how to run it and what the figures mean.
//!
//! ## The pages, and why they are realistic
//! Pages are made by [`gen::Generator`] from the bench's dev corpus and its base-text pool:
//!
//! * **the site chrome is real dev chrome**: every page is a dev page (one of the 9 templates on
//!   one of the 53 sites, Chinese or English) with its body, title and URL cut out
//!   ([`skeleton`]), so the HTML around the text — head, scripts, navigation, sidebars, related
//!   links, ads, comments, footers — and the body's markup styles (paragraphs, `<br>`,
//!   WeChat-style spans, layout tables, pdf2htmlEX lines…) are those the library is tuned on;
//! * **the text is new but reads like the pool**: a body has the shape of a random pool text of
//!   its language (its blocks' kinds and lengths, its title's length), and its sentences are
//!   made by a run-copy Markov chain over the pool ([`chain`]): runs of 3–9 characters (Chinese)
//!   or 2–6 words (English) copied from the pool, joined where the pool has the same bigram. So
//!   vocabulary, punctuation, sentence and clause lengths are the pool's, and the main-text
//!   extraction, sentence split and fingerprints see what they see on dev pages (`realism`
//!   compares them), while sentences and most clauses are new: pages do not share fingerprints
//!   by accident any more than real pages do;
//! * **duplicates come as in a crawl**: by default 80 % of pages are originals and 20 % near
//!   duplicates of a recent page, made with the dev generator's operations (delete, add,
//!   excerpt, edit, reorder, retitle) under another site, another page of the same site, or
//!   byte for byte under another URL; families grow by preferential attachment, so most pages
//!   have no duplicate and a few families grow large.
//!
//! Where they are not realistic: a skeleton's chrome (its related links, comments, view counts)
//! is repeated on every page made from it (about one page in 4,000 uses each), where a real
//! site varies them page by page; the Markov text is locally fluent but makes no sense over a
//! sentence; there are no product-series or short-page hard negatives beyond what the pool's
//! short texts give, no pages with numeric-character-reference encoding, no other languages,
//! and pages are dev-sized (median ≈ 9 KB), not real-web-sized (50–150 KB, `bench/inflate.py`).

mod chain;
mod crash;
mod gen;
mod measure;
mod report;
mod run;
mod skeleton;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand};
use neardup::{Content, SignatureConfig, Signatures};

use gen::{GenConfig, Generator, PoolPart, TextSource};
use skeleton::Skeletons;

/// Everything the generator reads, loaded once.
pub struct Inputs {
    /// Dev skeletons.
    pub skeletons: Skeletons,
    /// Nine tenths of the pool: the stream, the probe batch, the duplicate queries.
    pub main: TextSource,
    /// The other tenth: the unrelated queries.
    pub held_out: TextSource,
}

#[derive(Parser)]
#[command(
    name = "neardup-scale",
    about = "The scale bench of neardup (issue #32)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct Sources {
    /// The dev corpus (skeletons).
    #[arg(long, default_value = "../shared/bench/dev/docs.jsonl.gz")]
    dev: PathBuf,
    /// The base-text pool (sentences).
    #[arg(long, default_value = "../shared/bench/pool/dev.jsonl.gz")]
    pool: PathBuf,
    /// Skeletons kept from the dev corpus (every n-th page; each site keeps its share).
    #[arg(long, default_value_t = 4000)]
    skeletons: usize,
}

#[derive(Subcommand)]
enum Cmd {
    /// Grow one index to each size and measure it there.
    Run {
        /// Working directory: the index (`index/`), checkpoints (`tmp/`), `state.json`.
        #[arg(long)]
        dir: PathBuf,
        /// Where results.json, results.md and scale.svg go (default: --dir).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Sizes to measure at (pages generated), ascending.
        #[arg(long, value_delimiter = ',', default_value = "25000,250000,1000000")]
        sizes: Vec<u64>,
        /// Pages of the probe batch.
        #[arg(long, default_value_t = 5000)]
        probe: usize,
        /// Queries of each kind (unrelated, duplicates).
        #[arg(long, default_value_t = 2000)]
        queries: usize,
        /// The stream's seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of pages that are near duplicates of an earlier page.
        #[arg(long, default_value_t = 0.2)]
        dup_share: f64,
        /// Pages per insert_batch while growing.
        #[arg(long, default_value_t = 10_000)]
        batch: usize,
        /// Deadline of check, compact_snapshot and compact, seconds (then "> T").
        #[arg(long, default_value_t = 600)]
        maint_timeout: u64,
        /// No check above this many pages.
        #[arg(long)]
        skip_check_above: Option<u64>,
        /// No offline (or online) compaction above this many pages.
        #[arg(long)]
        skip_compact_above: Option<u64>,
        /// Also time an online compact() on a checkpoint copy.
        #[arg(long)]
        online_compact: bool,
        /// Open the index with sync_writes off.
        #[arg(long)]
        no_sync: bool,
        /// Open the index with `sketch_fallback` on (clause-sketch keys read only when the
        /// other keys find nobody).
        #[arg(long)]
        sketch_fallback: bool,
        /// Continue growing the index in --dir to further sizes.
        #[arg(long)]
        resume: bool,
        /// A word about the build measured.
        #[arg(long, default_value = "")]
        label: String,
        #[command(flatten)]
        src: Sources,
    },
    /// Make pages and report the speed; optionally write them as JSONL (gzip when .gz).
    Gen {
        /// Pages.
        #[arg(long, default_value_t = 20_000)]
        count: u64,
        /// The first page's number.
        #[arg(long, default_value_t = 0)]
        start: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 0.2)]
        dup_share: f64,
        /// Write the pages here (the CLI's JSONL: id, url, host, time, html).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        src: Sources,
    },
    /// Time the fixed queries against an index grown by `run` (nothing is written): one size
    /// under another block cache or build.
    Queries {
        /// The working directory of a `run` (its `index/` is opened).
        #[arg(long)]
        dir: PathBuf,
        /// Queries of each kind (unrelated, duplicates).
        #[arg(long, default_value_t = 2000)]
        queries: usize,
        /// Passes over the queries (the first warms the block cache).
        #[arg(long, default_value_t = 2)]
        passes: usize,
        /// Then ingest this many pages of the probe batch into a checkpoint copy (0: none).
        #[arg(long, default_value_t = 0)]
        probe: usize,
        /// Open the index with `sketch_fallback` on.
        #[arg(long)]
        sketch_fallback: bool,
        /// `IndexOptions::block_cache_bytes`, in MiB (default: the library's).
        #[arg(long)]
        block_cache_mib: Option<usize>,
        /// The stream's seed (as the run's).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of near duplicates (as the run's).
        #[arg(long, default_value_t = 0.2)]
        dup_share: f64,
        /// Duplicate queries copy pages among the stream's first this many (as the run's first
        /// size).
        #[arg(long, default_value_t = 25_000)]
        reach: u64,
        #[command(flatten)]
        src: Sources,
    },
    /// The resident memory of one index of a run's size while it ingests (a checkpoint copy,
    /// the only index open; nothing of the run's index is written).
    Memory {
        /// The working directory of a `run` (its `index/` is copied).
        #[arg(long)]
        dir: PathBuf,
        /// Pages of the probe batch to ingest.
        #[arg(long, default_value_t = 20_000)]
        pages: usize,
        /// Pages a batch.
        #[arg(long, default_value_t = 1_000)]
        batch: usize,
        /// `IndexOptions::block_cache_bytes`, in MiB (default: the library's).
        #[arg(long)]
        block_cache_mib: Option<usize>,
        /// The stream's seed (as the run's).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of near duplicates (as the run's).
        #[arg(long, default_value_t = 0.2)]
        dup_share: f64,
        #[command(flatten)]
        src: Sources,
    },
    /// Compare the signatures of generated pages with those of dev pages.
    Realism {
        /// Pages of each kind.
        #[arg(long, default_value_t = 1000)]
        pages: usize,
        /// The dev corpus's truth (to pick first pages of families).
        #[arg(long, default_value = "../shared/bench/dev/truth.jsonl.gz")]
        truth: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        src: Sources,
    },
    /// Kill -9 an ingest into a fresh index in the middle of a batch, reopen, check, and look
    /// up every acknowledged page (writes DIR/crash.json; fails when anything is wrong).
    Crash {
        /// Working directory: the index (`index/`, must not exist), the acknowledgement log
        /// (`acks`), the report (`crash.json`).
        #[arg(long)]
        dir: PathBuf,
        /// Pages of the stream the child would ingest if never killed.
        #[arg(long, default_value_t = 1_000_000)]
        pages: u64,
        /// Kill once this many pages are acknowledged (default: three fifths of --pages, unless
        /// --kill-after-secs is given).
        #[arg(long)]
        kill_at: Option<u64>,
        /// Kill once the child has run this long (and acknowledged a batch).
        #[arg(long)]
        kill_after_secs: Option<u64>,
        /// Pages per insert_batch.
        #[arg(long, default_value_t = 10_000)]
        batch: u64,
        /// The stream's seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of pages that are near duplicates of an earlier page.
        #[arg(long, default_value_t = 0.2)]
        dup_share: f64,
        /// Seed of the kill's moment inside the batch (default: from the clock; in the report).
        #[arg(long)]
        kill_seed: Option<u64>,
        /// Acknowledged pages made again and compared (host, time, content hash) with their
        /// stored records.
        #[arg(long, default_value_t = 2000)]
        verify_sample: usize,
        /// Remove the index when the test passed (it is kept when it failed).
        #[arg(long)]
        remove_index: bool,
        #[command(flatten)]
        src: Sources,
    },
    /// (internal) The crash test's writer, killed by its parent.
    #[command(hide = true)]
    CrashChild {
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        pages: u64,
        #[arg(long)]
        batch: u64,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        dup_share: f64,
        #[command(flatten)]
        src: Sources,
    },
    /// Rewrite results.md and scale.svg from a results.json.
    Report {
        /// The directory holding results.json.
        dir: PathBuf,
    },
    /// (internal) One maintenance operation on a checkpoint, for the driver's deadline.
    #[command(hide = true)]
    Maint {
        op: String,
        #[arg(long)]
        from: PathBuf,
        #[arg(long)]
        to: Option<PathBuf>,
    },
}

impl Sources {
    /// The same sources on a child's command line.
    fn args(&self) -> Vec<String> {
        vec![
            "--dev".into(),
            self.dev.display().to_string(),
            "--pool".into(),
            self.pool.display().to_string(),
            "--skeletons".into(),
            self.skeletons.to_string(),
        ]
    }
}

fn load(src: &Sources) -> anyhow::Result<(Inputs, serde_json::Value)> {
    let t = Instant::now();
    let skeletons = Skeletons::load(&src.dev, src.skeletons)?;
    let t_skel = t.elapsed().as_secs_f64();
    let main = TextSource::load(&src.pool, PoolPart::Main)?;
    let held_out = TextSource::load(&src.pool, PoolPart::HeldOut)?;
    let mut templates = std::collections::BTreeMap::<&str, usize>::new();
    for s in &skeletons.all {
        *templates.entry(s.template).or_default() += 1;
    }
    let info = serde_json::json!({
        "dev_pages_read": skeletons.read,
        "skeletons": skeletons.all.len(),
        "skeletons_skipped": skeletons.skipped,
        "skeletons_zh": skeletons.by_lang[0].len(),
        "skeletons_en": skeletons.by_lang[1].len(),
        "hosts": skeletons.by_host.len(),
        "templates": templates,
        "skeleton_bytes": skeletons.all.iter().map(|s| s.lit_bytes()).sum::<usize>(),
        "chain_tokens_main": [main.chains[0].len(), main.chains[1].len()],
        "chain_tokens_held_out": [held_out.chains[0].len(), held_out.chains[1].len()],
        "load_s": t.elapsed().as_secs_f64(),
        "skeleton_load_s": t_skel,
        "rss_mb": measure::rss_mb(),
    });
    eprintln!("inputs: {info}");
    Ok((
        Inputs {
            skeletons,
            main,
            held_out,
        },
        info,
    ))
}

/// The library's default options, with the block cache `--block-cache-mib` asks for.
fn options(block_cache_mib: Option<usize>) -> neardup::IndexOptions {
    let mut opts = neardup::IndexOptions::default();
    if let Some(m) = block_cache_mib {
        opts.block_cache_bytes = m << 20;
    }
    opts
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            dir,
            out,
            sizes,
            probe,
            queries,
            seed,
            dup_share,
            batch,
            maint_timeout,
            skip_check_above,
            skip_compact_above,
            online_compact,
            no_sync,
            sketch_fallback,
            resume,
            label,
            src,
        } => {
            let mut sizes = sizes;
            sizes.sort_unstable();
            sizes.dedup();
            let (inputs, info) = load(&src)?;
            let settings = run::Settings {
                sizes,
                probe,
                queries,
                seed,
                dup_share,
                skeletons: src.skeletons,
                batch,
                maint_timeout,
                skip_check_above,
                skip_compact_above,
                online_compact,
                sync_writes: !no_sync,
                sketch_fallback,
                label,
            };
            let paths = run::Paths {
                index: dir.join("index"),
                tmp: dir.join("tmp"),
                state: dir.join("state.json"),
                out: out.unwrap_or_else(|| dir.clone()),
            };
            std::fs::create_dir_all(&dir)?;
            run::run(&paths, settings, &inputs, resume, info)
        }
        Cmd::Gen {
            count,
            start,
            seed,
            dup_share,
            out,
            src,
        } => gen_cmd(&src, count, start, seed, dup_share, out.as_deref()),
        Cmd::Queries {
            dir,
            queries,
            passes,
            probe,
            sketch_fallback,
            block_cache_mib,
            seed,
            dup_share,
            reach,
            src,
        } => {
            let (inputs, _) = load(&src)?;
            let mut opts = options(block_cache_mib);
            opts.sketch_fallback = sketch_fallback;
            run::queries(
                &inputs,
                &dir.join("index"),
                opts,
                (queries, passes, probe),
                (seed, dup_share, reach),
            )
        }
        Cmd::Memory {
            dir,
            pages,
            batch,
            block_cache_mib,
            seed,
            dup_share,
            src,
        } => {
            let (inputs, _) = load(&src)?;
            run::memory(
                &inputs,
                &dir.join("index"),
                options(block_cache_mib),
                (pages, batch),
                (seed, dup_share),
            )
        }
        Cmd::Realism {
            pages,
            truth,
            seed,
            src,
        } => realism(&src, &truth, pages, seed),
        Cmd::Crash {
            dir,
            pages,
            kill_at,
            kill_after_secs,
            batch,
            seed,
            dup_share,
            kill_seed,
            verify_sample,
            remove_index,
            src,
        } => {
            let kill_seed = kill_seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0)
            });
            let settings = crash::Settings {
                pages,
                batch: batch.max(1),
                seed,
                dup_share,
                skeletons: src.skeletons,
                kill_at: kill_at.or((kill_after_secs.is_none()).then_some(pages * 3 / 5)),
                kill_after_secs,
                kill_seed,
                verify_sample,
            };
            let child_args = src.args();
            crash::run(&dir, settings, &child_args, || Ok(load(&src)?.0))?;
            if remove_index {
                std::fs::remove_dir_all(dir.join("index"))?;
            }
            Ok(())
        }
        Cmd::CrashChild {
            dir,
            pages,
            batch,
            seed,
            dup_share,
            src,
        } => {
            let (inputs, _) = load(&src)?;
            let settings = crash::Settings {
                pages,
                batch: batch.max(1),
                seed,
                dup_share,
                skeletons: src.skeletons,
                kill_at: None,
                kill_after_secs: None,
                kill_seed: 0,
                verify_sample: 0,
            };
            crash::child(&dir, &settings, &inputs)
        }
        Cmd::Report { dir } => {
            let r: run::Results =
                serde_json::from_str(&std::fs::read_to_string(dir.join("results.json"))?)?;
            report::write(&r, &dir)
        }
        Cmd::Maint { op, from, to } => {
            let m = run::maint_op(&op, &from, to.as_deref());
            println!("{}", serde_json::to_string(&m)?);
            Ok(())
        }
    }
}

fn gen_cmd(
    src: &Sources,
    count: u64,
    start: u64,
    seed: u64,
    dup_share: f64,
    out: Option<&Path>,
) -> anyhow::Result<()> {
    use std::io::Write;
    let (inputs, _) = load(src)?;
    let g = Generator::new(
        GenConfig {
            seed,
            dup_share,
            ..GenConfig::default()
        },
        &inputs.main,
        &inputs.skeletons,
    );
    let mut w: Option<Box<dyn Write>> = match out {
        None => None,
        Some(p) => {
            let f = std::io::BufWriter::new(
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
            );
            Some(if p.extension().is_some_and(|e| e == "gz") {
                Box::new(flate2::write::GzEncoder::new(
                    f,
                    flate2::Compression::fast(),
                ))
            } else {
                Box::new(f)
            })
        }
    };
    let (t0, c0) = (Instant::now(), measure::cpu_time());
    let mut bytes = 0usize;
    let mut gen_time = std::time::Duration::ZERO;
    let mut gen_cpu = std::time::Duration::ZERO;
    let mut variants = 0u64;
    for i in start..start + count {
        let (t, c) = (Instant::now(), measure::thread_cpu_time());
        let p = g.page(i);
        gen_time += t.elapsed();
        gen_cpu += measure::thread_cpu_time().saturating_sub(c);
        bytes += p.html.len();
        variants += u64::from(p.variant_of.is_some());
        if let Some(w) = w.as_mut() {
            let line = serde_json::json!({
                "id": format!("{:x}-{i}", seed),
                "url": p.key,
                "host": p.host,
                "time": p.time,
                "html": p.html,
                "variant_of": p.variant_of,
            });
            writeln!(w, "{line}")?;
        }
    }
    drop(w);
    let (wall, cpu) = (t0.elapsed(), measure::cpu_time().saturating_sub(c0));
    println!(
        "{count} pages ({variants} variants, {:.1} %), {:.1} MB of HTML (mean {:.1} KB): generating {:.0} pages/s of the thread's CPU time ({:.0} pages/s wall, {:.1} MB/s); whole run {:.1} s wall, {:.1} s CPU",
        variants as f64 * 100.0 / count.max(1) as f64,
        bytes as f64 / 1e6,
        bytes as f64 / 1e3 / count.max(1) as f64,
        count as f64 / gen_cpu.as_secs_f64(),
        count as f64 / gen_time.as_secs_f64(),
        bytes as f64 / 1e6 / gen_time.as_secs_f64(),
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
    Ok(())
}

#[derive(Default)]
struct Sample {
    html: Vec<f64>,
    chars: Vec<f64>,
    sentences: Vec<f64>,
    fingerprints: Vec<f64>,
    sketch: Vec<f64>,
    zh: usize,
    keys: Vec<(Vec<u128>, Vec<u128>)>,
}

impl Sample {
    fn add(&mut self, html: &str) -> anyhow::Result<()> {
        let s = Signatures::compute(Content::Html(html.as_bytes()), &SignatureConfig::default())?;
        self.html.push(html.len() as f64);
        self.chars.push(s.text.chars().count() as f64);
        self.sentences.push(s.sentences.len() as f64);
        self.fingerprints.push(s.fingerprints.len() as f64);
        self.sketch.push(s.sketch.len() as f64);
        if s.text
            .chars()
            .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
        {
            self.zh += 1;
        }
        let fps: Vec<u128> = s.fingerprints.clone();
        self.keys.push((fps, s.sketch.clone()));
        Ok(())
    }

    fn row(&self, name: &str) -> String {
        fn q(v: &[f64], p: f64) -> f64 {
            let mut v = v.to_vec();
            v.sort_by(|a, b| a.total_cmp(b));
            if v.is_empty() {
                return 0.0;
            }
            v[((p * v.len() as f64) as usize).min(v.len() - 1)]
        }
        fn m(v: &[f64]) -> f64 {
            v.iter().sum::<f64>() / v.len().max(1) as f64
        }
        let f = |v: &[f64]| {
            format!(
                "{:.0} / {:.0} / {:.0} / {:.0}",
                m(v),
                q(v, 0.1),
                q(v, 0.5),
                q(v, 0.9)
            )
        };
        // Pages sharing a fingerprint (or a sketch key) with another page of the sample.
        let shared = |which: usize| -> f64 {
            let mut seen: std::collections::HashMap<u128, usize> = Default::default();
            for (i, k) in self.keys.iter().enumerate() {
                let ks = if which == 0 { &k.0 } else { &k.1 };
                for &x in ks {
                    seen.entry(x)
                        .and_modify(|o| {
                            if *o != i {
                                *o = usize::MAX
                            }
                        })
                        .or_insert(i);
                }
            }
            let n = self
                .keys
                .iter()
                .filter(|k| {
                    let ks = if which == 0 { &k.0 } else { &k.1 };
                    ks.iter().any(|x| seen.get(x) == Some(&usize::MAX))
                })
                .count();
            n as f64 * 100.0 / self.keys.len().max(1) as f64
        };
        let none = self.fingerprints.iter().filter(|&&x| x == 0.0).count();
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
            self.html.len(),
            f(&self.html),
            f(&self.chars),
            f(&self.sentences),
            f(&self.fingerprints),
            f(&self.sketch),
            self.zh as f64 * 100.0 / self.html.len().max(1) as f64,
            none as f64 * 100.0 / self.html.len().max(1) as f64,
            shared(0),
            shared(1),
        )
    }
}

fn realism(src: &Sources, truth: &Path, n: usize, seed: u64) -> anyhow::Result<()> {
    use std::io::BufRead;
    let (inputs, _) = load(src)?;
    // The first page of every dev family (its original), in corpus order.
    let mut firsts = std::collections::HashSet::new();
    let f = std::fs::File::open(truth).with_context(|| format!("opening {}", truth.display()))?;
    for line in std::io::BufReader::new(flate2::read::MultiGzDecoder::new(f)).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let Some(id) = v["ids"].get(0).and_then(|x| x.as_str()) {
            firsts.insert(id.to_string());
        }
    }
    let (mut dev_all, mut dev_orig) = (Sample::default(), Sample::default());
    let f = std::fs::File::open(&src.dev)?;
    for line in std::io::BufReader::new(flate2::read::MultiGzDecoder::new(f)).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let html = v["html"].as_str().unwrap_or("");
        if dev_all.html.len() < n {
            dev_all.add(html)?;
        }
        if dev_orig.html.len() < n && firsts.contains(v["id"].as_str().unwrap_or("")) {
            dev_orig.add(html)?;
        }
        if dev_all.html.len() >= n && dev_orig.html.len() >= n {
            break;
        }
    }
    let g = Generator::new(
        GenConfig {
            seed,
            ..GenConfig::default()
        },
        &inputs.main,
        &inputs.skeletons,
    );
    let (mut gen_all, mut gen_orig) = (Sample::default(), Sample::default());
    let t = Instant::now();
    let mut made = 0u64;
    for i in 0.. {
        if gen_all.html.len() >= n && gen_orig.html.len() >= n {
            break;
        }
        let p = g.page(i);
        made += 1;
        if gen_all.html.len() < n {
            gen_all.add(&p.html)?;
        }
        if gen_orig.html.len() < n && p.variant_of.is_none() {
            gen_orig.add(&p.html)?;
        }
    }
    let unrel = Generator::new(
        GenConfig {
            seed: seed ^ 0x756e_7265_6c61_7465,
            dup_share: 0.0,
            ..GenConfig::default()
        },
        &inputs.held_out,
        &inputs.skeletons,
    );
    let mut gen_unrel = Sample::default();
    for i in 0..n as u64 {
        gen_unrel.add(&unrel.page(i).html)?;
    }
    eprintln!(
        "signed {made} generated pages in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    println!("Each cell: mean / p10 / p50 / p90.\n");
    println!("| sample | pages | HTML bytes | main-text chars | sentences | fingerprints | sketch keys | Chinese | no fingerprint | share sharing a fingerprint | share sharing a sketch key |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!("{}", dev_all.row("dev, first pages in corpus order"));
    println!("{}", gen_all.row("generated, first pages of the stream"));
    println!("{}", dev_orig.row("dev, first page of each family"));
    println!("{}", gen_orig.row("generated, originals only"));
    println!("{}", gen_unrel.row("generated, unrelated (held-out pool)"));
    Ok(())
}
