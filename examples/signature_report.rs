//! Signature-pipeline quality report on the labelled bench corpus (issue "Signature pipeline").
//!
//! Prints (a) among variants whose ops are only site and formatting ops, the share whose sentence
//! fingerprint set equals that of their family's original page, with the failures by op; (b) the
//! share of pages with at least one sentence fingerprint, by language and family kind; and the
//! extraction speed (one thread).
//!
//! Usage: `cargo run --release --example signature_report -- [BENCH_DIR]` (default
//! `../shared/bench/dev`).

#[path = "support/corpus.rs"]
mod corpus;
use corpus::load_bench;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use neardup::{Content, SignatureConfig, Signatures};

const FORMAT_OPS: &[&str] = &[
    "template",
    "site",
    "same_site",
    "copy",
    "linebreaks",
    "whitespace",
    "width",
    "markup",
];

fn main() {
    let (docs, truth) = load_bench();
    let cfg = SignatureConfig::default();

    let start = Instant::now();
    let mut bytes = 0usize;
    let mut sigs: HashMap<String, Signatures> = HashMap::new();
    for d in &docs {
        let html = d["html"].as_str().unwrap_or("");
        bytes += html.len();
        let id = d["id"].as_str().unwrap_or("").to_string();
        match Signatures::compute(Content::Html(html.as_bytes()), &cfg) {
            Ok(s) => {
                sigs.insert(id, s);
            }
            Err(e) => eprintln!("{id}: {e}"),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "pages {}  HTML {:.1} MB  {:.2} s  {:.1} MB/s  {:.0} pages/s (one thread)",
        docs.len(),
        bytes as f64 / 1e6,
        secs,
        bytes as f64 / 1e6 / secs,
        docs.len() as f64 / secs
    );

    // (a) formatting-only variants vs their family's original.
    let (mut total, mut equal) = (0usize, 0usize);
    let mut fail_by_op: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut examples: Vec<String> = Vec::new();
    // (b) coverage by language and kind.
    let mut coverage: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for fam in &truth {
        let kind = fam["kind"].as_str().unwrap_or("?").to_string();
        let lang = fam["lang"].as_str().unwrap_or("?").to_string();
        let Some(tr) = fam["transforms"].as_object() else {
            continue;
        };
        let orig = tr
            .iter()
            .find(|(_, t)| t["role"] == "orig")
            .map(|(id, _)| id.clone());
        for (id, t) in tr {
            if let Some(s) = sigs.get(id) {
                let e = coverage.entry((lang.clone(), kind.clone())).or_default();
                e.0 += 1;
                e.1 += usize::from(!s.fingerprints.is_empty());
            }
            if t["role"] != "variant" {
                continue;
            }
            let ops: Vec<&str> = t["ops"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            if !ops.iter().all(|op| FORMAT_OPS.contains(op)) {
                continue;
            }
            let (Some(o), Some(v)) = (orig.as_ref().and_then(|o| sigs.get(o)), sigs.get(id)) else {
                continue;
            };
            total += 1;
            let same = o.fingerprints == v.fingerprints;
            equal += usize::from(same);
            for op in &ops {
                let e = fail_by_op.entry(op.to_string()).or_default();
                e.0 += 1;
                e.1 += usize::from(!same);
            }
            if !same && examples.len() < 12 {
                examples.push(format!(
                    "  {id} ops={ops:?} kind={kind} lang={lang} fps {}/{} textlen {}/{}",
                    o.fingerprints.len(),
                    v.fingerprints.len(),
                    o.text.len(),
                    v.text.len()
                ));
            }
        }
    }
    println!("\n(a) formatting-only variants with the original's fingerprint set: {equal}/{total} = {:.4}", equal as f64 / total.max(1) as f64);
    println!("    by op (variants carrying the op: failures / total):");
    for (op, (n, f)) in &fail_by_op {
        println!(
            "    {op:<11} {f:>5} / {n:<6} ({:.2}% fail)",
            100.0 * *f as f64 / (*n).max(1) as f64
        );
    }
    if !examples.is_empty() {
        println!("    first failures:");
        for e in &examples {
            println!("{e}");
        }
    }
    println!("\n(b) pages with at least one sentence fingerprint:");
    let mut by_lang: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for ((lang, kind), (n, with)) in &coverage {
        println!(
            "    {lang} {kind:<8} {with:>6} / {n:<6} = {:.4}",
            *with as f64 / (*n).max(1) as f64
        );
        let e = by_lang.entry(lang.clone()).or_default();
        e.0 += n;
        e.1 += with;
    }
    for (lang, (n, with)) in &by_lang {
        println!(
            "    {lang} all      {with:>6} / {n:<6} = {:.4}",
            *with as f64 / (*n).max(1) as f64
        );
    }
}
