//! Verification report on the labelled bench corpus (issue "Verification").
//!
//! Verification alone as a classifier: over (original, variant) pairs of every family, recall by
//! transform op; over hard-negative pairs (models of one product series, products of one
//! category, short pages of one site and template, an article and the one it quotes a paragraph
//! of, base texts that overlap naturally, two articles of one site), the false-positive rate by
//! kind (a heading-code conflict counts as not similar, as in the index). Also how often the candidate stage would bring the pair together at all (a shared
//! sentence fingerprint, simhash within 3, identical text), and verification time per pair.
//!
//! Usage: `cargo run --release --example verify_report -- [BENCH_DIR]` (knobs for experiments,
//! as environment variables: `NEARDUP_Y`, `NEARDUP_CLAUSES`, `NEARDUP_ITER`, `NEARDUP_THETA`,
//! `NEARDUP_SHORTER=0`).

#[path = "support/corpus.rs"]
mod corpus;
use corpus::load_bench;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use neardup::fingerprint::{codes_conflict, hamming};
use neardup::verify::{verify, VerifyConfig};
use neardup::{Content, SignatureConfig, Signatures};
use rayon::prelude::*;
use serde_json::Value;

#[derive(Default)]
struct Tally {
    n: usize,
    similar: usize,
    candidate: usize,
}

impl Tally {
    fn add(&mut self, similar: bool, candidate: bool) {
        self.n += 1;
        self.similar += usize::from(similar);
        self.candidate += usize::from(candidate);
    }

    /// One table row: label, pairs, share verified similar, share found as candidates.
    fn row(&self, label: &str, width: usize) {
        let n = self.n.max(1) as f64;
        println!(
            "  {label:<width$} {:>6} {:>9.4} {:>10.4}",
            self.n,
            self.similar as f64 / n,
            self.candidate as f64 / n
        );
    }
}

fn main() {
    let (docs, truth) = load_bench();
    let mut cfg = SignatureConfig::default();
    // Experiment knobs: NEARDUP_Y (sentences per fingerprint), NEARDUP_CLAUSES=1 (clause units).
    if let Some(y) = std::env::var("NEARDUP_Y").ok().and_then(|v| v.parse().ok()) {
        cfg.sentences_per_fingerprint = y;
    }
    if let Ok(v) = std::env::var("NEARDUP_CLAUSES") {
        cfg.clause_units = v == "1";
    }
    println!(
        "signature config: Y = {}, clause units = {}",
        cfg.sentences_per_fingerprint, cfg.clause_units
    );
    let mut vcfg = VerifyConfig::default();
    if let Some(it) = std::env::var("NEARDUP_ITER")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        vcfg.max_iterations = it;
    }
    if std::env::var("NEARDUP_SHORTER").is_ok_and(|v| v == "0") {
        vcfg.shorter_side = false;
    }
    if let Some(t) = std::env::var("NEARDUP_THETA")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        vcfg.theta = t;
    }
    println!(
        "verify config: max_iterations = {}, theta = {}",
        vcfg.max_iterations, vcfg.theta
    );
    let sigs: HashMap<String, Signatures> = docs
        .par_iter()
        .filter_map(|d| {
            let s =
                Signatures::compute(Content::Html(d["html"].as_str()?.as_bytes()), &cfg).ok()?;
            Some((d["id"].as_str()?.to_string(), s))
        })
        .collect();
    let site_of: HashMap<String, String> = docs
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap_or("").to_string(),
                d["host"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();

    // Positive pairs and hard negatives.
    let mut positives: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut negatives: Vec<(String, String, &'static str)> = Vec::new();
    let orig_of = |f: &Value| -> Option<String> {
        f["transforms"]
            .as_object()?
            .iter()
            .find(|(_, t)| t["role"] == "orig")
            .map(|(k, _)| k.clone())
    };
    let fam_by_name: HashMap<&str, &Value> = truth
        .iter()
        .filter_map(|f| Some((f["family"].as_str()?, f)))
        .collect();
    let mut groups: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut by_site: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &truth {
        let Some(orig) = orig_of(f) else { continue };
        let kind = f["kind"].as_str().unwrap_or("");
        if let Some(tr) = f["transforms"].as_object() {
            for (id, t) in tr {
                if t["role"] == "variant" {
                    let ops = t["ops"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default();
                    positives.push((orig.clone(), id.clone(), ops));
                }
            }
        }
        if let Some(g) = f["group"].as_str() {
            groups
                .entry((kind.to_string(), g.to_string()))
                .or_default()
                .push(orig.clone());
        }
        if let Some(q) = f["quote_from"]
            .as_str()
            .and_then(|q| fam_by_name.get(q))
            .and_then(|q| orig_of(q))
        {
            negatives.push((orig.clone(), q, "shared_quote"));
        }
        if let Some(ov) = f["overlap_with"].as_object() {
            for other in ov.keys() {
                if let Some(o) = fam_by_name.get(other.as_str()).and_then(|q| orig_of(q)) {
                    negatives.push((orig.clone(), o, "base_overlap"));
                }
            }
        }
        if kind == "article" {
            by_site
                .entry(site_of.get(&orig).cloned().unwrap_or_default())
                .or_default()
                .push(orig.clone());
        }
    }
    for ((kind, _), members) in &groups {
        let label = if kind == "product" {
            "product_series"
        } else {
            "template_only"
        };
        for i in 0..members.len() {
            for j in i + 1..members.len().min(i + 4) {
                negatives.push((members[i].clone(), members[j].clone(), label));
            }
        }
    }
    // Products of one category, other series: the first model of each series against the next series'.
    let mut by_cat: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &truth {
        if let (Some(c), Some(o)) = (f["category"].as_str(), orig_of(f)) {
            by_cat.entry(c.to_string()).or_default().push(o);
        }
    }
    for members in by_cat.values() {
        for w in members.windows(7).step_by(7) {
            negatives.push((w[0].clone(), w[6].clone(), "product_category"));
        }
    }
    for members in by_site.values() {
        for w in members.windows(2).step_by(5) {
            negatives.push((w[0].clone(), w[1].clone(), "same_site"));
        }
    }

    let sketch_k: usize = std::env::var("NEARDUP_SKETCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cfg.sketch_size as usize);
    let sketches: HashMap<&str, Vec<u128>> = sigs
        .iter()
        .map(|(id, s)| {
            (
                id.as_str(),
                neardup::fingerprint::unit_sketch(
                    &s.text,
                    &s.sentences,
                    &cfg.sentence_params(),
                    sketch_k,
                ),
            )
        })
        .collect();
    let sketch_shared = |a: &str, b: &str| -> bool {
        match (sketches.get(a), sketches.get(b)) {
            (Some(x), Some(y)) => x.iter().any(|d| y.binary_search(d).is_ok()),
            _ => false,
        }
    };
    println!("sketch size {sketch_k}");
    let candidate = |a: &Signatures, b: &Signatures| -> bool {
        a.content_hash == b.content_hash || hamming(a.simhash, b.simhash) <= 3 || {
            let (mut i, mut j) = (0, 0);
            let mut shared = false;
            while i < a.fingerprints.len() && j < b.fingerprints.len() {
                match a.fingerprints[i].cmp(&b.fingerprints[j]) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        shared = true;
                        break;
                    }
                }
            }
            shared
        }
    };
    let fps: usize = sigs.values().map(|s| s.fingerprints.len()).sum();
    println!(
        "fingerprints per page: {:.1}",
        fps as f64 / sigs.len().max(1) as f64
    );
    let start = Instant::now();
    let pos_results: Vec<(bool, bool, &Vec<String>)> = positives
        .par_iter()
        .filter_map(|(a, b, ops)| {
            let (sa, sb) = (sigs.get(a)?, sigs.get(b)?);
            Some((
                // As the index judges: a heading-code conflict is never similar.
                !codes_conflict(&sa.codes, &sb.codes) && verify(&sa.text, &sb.text, &vcfg).similar,
                candidate(sa, sb) || sketch_shared(a, b),
                ops,
            ))
        })
        .collect();
    let neg_results: Vec<(bool, bool, &str)> = negatives
        .par_iter()
        .filter_map(|(a, b, kind)| {
            let (sa, sb) = (sigs.get(a)?, sigs.get(b)?);
            Some((
                // As the index judges: a heading-code conflict is never similar.
                !codes_conflict(&sa.codes, &sb.codes) && verify(&sa.text, &sb.text, &vcfg).similar,
                candidate(sa, sb),
                *kind,
            ))
        })
        .collect();
    let secs = start.elapsed().as_secs_f64();
    let pairs = pos_results.len() + neg_results.len();

    let mut by_op: BTreeMap<String, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    for (sim, cand, ops) in &pos_results {
        all.add(*sim, *cand);
        if ops.is_empty() {
            by_op.entry("none".into()).or_default().add(*sim, *cand);
        }
        for op in ops.iter() {
            by_op.entry(op.clone()).or_default().add(*sim, *cand);
        }
    }
    println!(
        "pairs verified: {pairs} in {secs:.2} s on {} threads ({:.0} µs/pair/thread)",
        rayon::current_num_threads(),
        secs * 1e6 * rayon::current_num_threads() as f64 / pairs.max(1) as f64
    );
    println!(
        "\npositive pairs (original, variant): verification recall, and candidate-stage recall"
    );
    println!(
        "  {:<12} {:>6} {:>9} {:>10}",
        "op", "n", "verify", "candidate"
    );
    for (op, t) in &by_op {
        t.row(op, 12);
    }
    all.row("ALL", 12);
    let mut by_kind: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut all_negative = Tally::default();
    for (sim, cand, kind) in &neg_results {
        by_kind.entry(kind).or_default().add(*sim, *cand);
        all_negative.add(*sim, *cand);
    }
    println!("\nhard-negative pairs: verification false-positive rate, and candidate-stage rate");
    for (kind, t) in &by_kind {
        t.row(kind, 17);
    }
    all_negative.row("ALL", 17);
}
