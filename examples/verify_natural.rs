//! Verification report on the natural corpus (`../shared/bench/natural-dev`): verification alone
//! as a classifier of every labeled pair of `pairs.tsv`, against the corpus's exact-LCS labels.
//!
//! Each pair's two truth main texts (`maintext.jsonl.gz`) are normalized as the index normalizes
//! a page's main text ([`neardup::text::normalize`] with the default signature configuration's
//! traditional-to-simplified folding) and compared with [`neardup::verify::verify`] and the
//! default [`VerifyConfig`]. Reported: precision and recall of `similar` against the labels,
//! overall, by language pair (`meta.tsv`'s `lang`; Chinese pairs of a simplified and a
//! traditional edition, from the locale or file name, are `zh-hans/hant`) and by kind (the corpus README's buckets:
//! exact r = 1, light r ≥ 0.9, mid r ≥ 0.7, heavy r ≥ 0.5, contain = near-duplicate by windowed
//! containment only, nondup), and the time per pair (p50, p99, max, total), with the slowest
//! pairs. The truth files are read here only, to measure; the library never reads them.
//!
//! Usage: `cargo run --release --example verify_natural -- [DIR] [--threads N] [--slow K]
//! [--every N] [--dump FILE]` (DIR defaults to `../shared/bench/natural-dev`; `--every N` takes
//! every N-th labeled pair only; `--dump` writes one line per pair: ids, languages, kind, label,
//! verdict, max(r, c), seconds, approximated, windowed; `--only FILE` verifies only the pairs
//! listed in FILE, one `a_id<TAB>b_id` a line, e.g. lines of a dump). Knobs for experiments,
//! as environment variables: `NEARDUP_THETA`, `NEARDUP_ITER` (max_iterations),
//! `NEARDUP_SHORTER=0` (the TLCS on the longer text's curve only).

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/cputime.rs"]
mod cputime;
use corpus::read_jsonl;
use cputime::thread_cpu_ns;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use neardup::verify::{verify, VerifyConfig};
use neardup::SignatureConfig;
use rayon::prelude::*;

/// Counts of one confusion matrix.
#[derive(Default, Clone, Copy)]
struct Conf {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Conf {
    fn add(&mut self, label: bool, said: bool) {
        match (label, said) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }

    fn row(&self, name: &str) {
        let p = self.tp as f64 / (self.tp + self.fp).max(1) as f64;
        let r = self.tp as f64 / (self.tp + self.fn_).max(1) as f64;
        let f = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        println!(
            "  {name:<14} {:>6} {:>6} {:>6} {:>6} {:>7.4} {:>7.4} {:>7.4}",
            self.tp + self.fn_,
            self.tp,
            self.fp,
            self.fn_,
            p,
            r,
            f
        );
    }
}

fn header(what: &str) {
    println!(
        "  {what:<14} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7}",
        "pos", "tp", "fp", "fn", "P", "R", "F1"
    );
}

/// One labeled pair.
struct Pair {
    a: String,
    b: String,
    label: bool,
    kind: &'static str,
    langs: String,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir = "../shared/bench/natural-dev".to_string();
    let mut threads = 0usize;
    let mut slow = 10usize;
    let mut every = 1usize;
    let mut dump: Option<String> = None;
    let mut only: Option<String> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--every" => every = args.next().and_then(|v| v.parse().ok()).unwrap_or(1).max(1),
            "--dump" => dump = args.next(),
            "--only" => only = args.next(),
            "--threads" => threads = args.next().and_then(|v| v.parse().ok()).unwrap_or(0),
            "--slow" => slow = args.next().and_then(|v| v.parse().ok()).unwrap_or(10),
            _ => dir = a,
        }
    }
    if threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .expect("thread pool");
    }
    let mut vcfg = VerifyConfig::default();
    if let Some(t) = std::env::var("NEARDUP_THETA")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        vcfg.theta = t;
    }
    if std::env::var("NEARDUP_SHORTER").is_ok_and(|v| v == "0") {
        vcfg.shorter_side = false;
    }
    if let Some(it) = std::env::var("NEARDUP_ITER")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        vcfg.max_iterations = it;
    }
    println!("verify config: {vcfg:?}");
    let fold = SignatureConfig::default().folding();

    // Texts, normalized as the index does.
    let texts: HashMap<String, String> = read_jsonl(&format!("{dir}/maintext.jsonl.gz"))
        .into_par_iter()
        .filter_map(|v| {
            Some((
                v["id"].as_str()?.to_string(),
                neardup::text::normalize(v["text"].as_str()?, fold),
            ))
        })
        .collect();
    let meta = std::fs::read_to_string(format!("{dir}/meta.tsv")).expect("meta.tsv");
    let lang: HashMap<&str, &str> = meta
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((*f.first()?, *f.get(3)?))
        })
        .collect();
    // Simplified or traditional Chinese edition, from the variant (locale) or the file name.
    let script: HashMap<&str, &str> = meta
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let (group, variant) = (*f.get(4)?, *f.get(5)?);
            let s = if variant.contains("zh_TW")
                || variant.contains("zh_HK")
                || group.contains("_tcn")
            {
                "hant"
            } else if variant.contains("zh_CN") || group.contains("_cn") || group.contains("_ch") {
                "hans"
            } else {
                return None;
            };
            Some((*f.first()?, s))
        })
        .collect();
    let pairs_tsv = std::fs::read_to_string(format!("{dir}/pairs.tsv")).expect("pairs.tsv");
    let only: Option<std::collections::HashSet<(String, String)>> = only.map(|path| {
        std::fs::read_to_string(&path)
            .expect("the --only file")
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                Some((f.next()?.to_string(), f.next()?.to_string()))
            })
            .collect()
    });
    let pairs: Vec<Pair> = pairs_tsv
        .lines()
        .skip(1)
        .step_by(every)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let (a, b) = (*f.first()?, *f.get(1)?);
            if only
                .as_ref()
                .is_some_and(|o| !o.contains(&(a.to_string(), b.to_string())))
            {
                return None;
            }
            let r: f64 = f.get(3)?.parse().ok()?;
            let label = *f.get(5)? == "dup";
            let kind = if !label {
                "nondup"
            } else if r >= 1.0 {
                "exact"
            } else if r >= 0.9 {
                "light"
            } else if r >= 0.7 {
                "mid"
            } else if r >= 0.5 {
                "heavy"
            } else {
                "contain"
            };
            let (la, lb) = (lang.get(a)?, lang.get(b)?);
            let hans_hant = matches!(
                (script.get(a), script.get(b)),
                (Some(&"hans"), Some(&"hant")) | (Some(&"hant"), Some(&"hans"))
            );
            let langs = if hans_hant && la == lb {
                "zh-hans/hant".to_string()
            } else if la == lb {
                la.to_string()
            } else {
                "en-zh".to_string()
            };
            Some(Pair {
                a: a.to_string(),
                b: b.to_string(),
                label,
                kind,
                langs,
            })
        })
        .collect();
    println!(
        "{} texts, {} labeled pairs, {} threads",
        texts.len(),
        pairs.len(),
        rayon::current_num_threads()
    );

    let start = Instant::now();
    // (similar, wall seconds, approximate, windowed, max(r, c), CPU seconds); the thread's CPU
    // time is coarse (scheduler ticks) but not inflated by a shared machine, the wall time is
    // precise.
    let results: Vec<(bool, f64, bool, bool, f64, f64)> = pairs
        .par_iter()
        .map(|p| {
            let (Some(a), Some(b)) = (texts.get(&p.a), texts.get(&p.b)) else {
                return (false, 0.0, false, false, 0.0, 0.0);
            };
            let (t, cpu) = (Instant::now(), thread_cpu_ns());
            let v = verify(a, b, &vcfg);
            let wall = t.elapsed().as_secs_f64();
            let cpu = match (cpu, thread_cpu_ns()) {
                (Some(s), Some(e)) => e.saturating_sub(s) as f64 / 1e9,
                _ => wall,
            };
            (
                v.similar,
                wall,
                v.approximate,
                v.window.is_some(),
                v.resemble.max(v.contain),
                cpu,
            )
        })
        .collect();
    let wall = start.elapsed().as_secs_f64();

    let mut all = Conf::default();
    let mut by_lang: BTreeMap<&str, Conf> = BTreeMap::new();
    let mut by_kind: BTreeMap<(&str, &str), Conf> = BTreeMap::new();
    for (p, &(said, ..)) in pairs.iter().zip(&results) {
        all.add(p.label, said);
        by_lang.entry(&p.langs).or_default().add(p.label, said);
        by_kind
            .entry((&p.langs, p.kind))
            .or_default()
            .add(p.label, said);
        by_kind
            .entry(("all", p.kind))
            .or_default()
            .add(p.label, said);
    }
    println!("\nverification against the labels (pos = labeled near-duplicates)");
    header("lang");
    for (l, c) in &by_lang {
        c.row(l);
    }
    all.row("ALL");
    println!("\nby kind (nondup rows: fp = pairs said similar)");
    header("lang/kind");
    for ((l, k), c) in &by_kind {
        c.row(&format!("{l}/{k}"));
    }

    if let Some(path) = dump {
        let mut out = String::new();
        for (p, r) in pairs.iter().zip(&results) {
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.6}\t{}\t{}\n",
                p.a, p.b, p.langs, p.kind, p.label, r.0, r.4, r.1, r.2, r.3
            ));
        }
        std::fs::write(&path, out).expect("write the dump");
    }
    let mut times: Vec<f64> = results.iter().map(|r| r.1).collect();
    times.sort_by(f64::total_cmp);
    let q = |f: f64| times[((times.len() as f64 - 1.0) * f).round() as usize] * 1e3;
    let total: f64 = times.iter().sum();
    let cpu_total: f64 = results.iter().map(|r| r.5).sum();
    println!(
        "\ntime per pair (wall): p50 {:.3} ms, p99 {:.3} ms, max {:.1} ms; total {:.1} s of \
         verify ({:.1} s of CPU), {wall:.1} s for the whole run",
        q(0.5),
        q(0.99),
        q(1.0),
        total,
        cpu_total
    );
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|&i, &j| results[j].1.total_cmp(&results[i].1));
    println!(
        "pairs with an approximated LCS: {}, verified on a located window: {}",
        results.iter().filter(|r| r.2).count(),
        results.iter().filter(|r| r.3).count()
    );
    println!("slowest pairs:");
    for &i in order.iter().take(slow) {
        let p = &pairs[i];
        let (la, lb) = (
            texts.get(&p.a).map_or(0, |t| t.chars().count()),
            texts.get(&p.b).map_or(0, |t| t.chars().count()),
        );
        println!(
            "  {:>9.1} ms  {} ({la} chars) {} ({lb} chars) {} {} said {}",
            results[i].1 * 1e3,
            p.a,
            p.b,
            p.langs,
            p.kind,
            results[i].0
        );
    }
}
