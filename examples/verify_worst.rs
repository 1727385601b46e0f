//! Worst cases of one `verify` call: texts as long as a page may be (16 MiB, `max_page_bytes`).
//!
//! Builds, from the natural corpus's main texts (`../shared/bench/natural-dev`, read only to get
//! real text), a 16 MiB English text `A` (the English pages of some sources, concatenated and
//! repeated with a different light variation each time: one word in 40 replaced), a 16 MiB
//! unrelated English text `U` (the other sources, likewise), a 16 MiB near-duplicate of `A`
//! (one word in 25 replaced), and the same for Chinese (`Z`: the Chinese pages, repeated). Times
//! one [`verify`] call for each pair below (after one warm-up call on small texts) and prints its
//! result:
//! - `A` against a chapter of it (60,000 chars from its middle) and against a chapter of `U`;
//! - `A` against `U`; `A` against its near-duplicate;
//! - `A` against half of `A` followed by half of `U`; `A` against its two halves swapped;
//! - `Z` against a chapter of it (30,000 chars), and `Z` against `A`.
//!
//! Times are the calling thread's CPU time (Linux) and the wall time.
//!
//! Usage: `cargo run --release --example verify_worst -- [DIR] [CASE]` (CASE: run only the
//! cases whose name contains it).

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/cputime.rs"]
mod cputime;
use corpus::read_jsonl;
use cputime::thread_cpu_ns;

use std::collections::HashMap;
use std::time::Instant;

use neardup::verify::{verify, VerifyConfig};
use neardup::SignatureConfig;

/// Knuth's MMIX linear congruential generator.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

const TARGET: usize = 16 << 20;

/// `parts` concatenated and repeated until `TARGET` bytes; repetition `i` replaces one word
/// (space-separated token) in `every` by a made-up one, chosen by seed `i`.
fn long_text(parts: &[&str], every: usize, seed: u64) -> String {
    let base = parts.join("\n");
    let mut out = String::with_capacity(TARGET + base.len());
    let mut rep = 0u64;
    while out.len() < TARGET && !base.is_empty() {
        let mut rng = Lcg(seed * 1000 + rep);
        for (i, w) in base.split(' ').enumerate() {
            if out.len() >= TARGET {
                break;
            }
            if i > 0 {
                out.push(' ');
            }
            if rng.below(every) == 0 {
                out.push_str(&format!("zq{}", rng.below(100_000)));
            } else {
                out.push_str(w);
            }
        }
        out.push('\n');
        rep += 1;
    }
    // Cut at a char boundary at or below TARGET bytes.
    let mut end = out.len().min(TARGET);
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// Same text with one word in `every` replaced (seeded), for a near-duplicate.
fn vary(text: &str, every: usize, seed: u64) -> String {
    let mut rng = Lcg(seed);
    let mut out = String::with_capacity(text.len() + 64);
    for (i, w) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if rng.below(every) == 0 {
            out.push_str("zqx");
        } else {
            out.push_str(w);
        }
    }
    out
}

/// `chars` chars of `text` from its middle.
fn chapter(text: &str, chars: usize) -> String {
    let n = text.chars().count();
    text.chars().skip(n / 2).take(chars).collect()
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/bench/natural-dev".to_string());
    let only = std::env::args().nth(2).unwrap_or_default();
    let fold = SignatureConfig::default().folding();
    let meta = std::fs::read_to_string(format!("{dir}/meta.tsv")).expect("meta.tsv");
    let info: HashMap<String, (String, String)> = meta
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((
                f.first()?.to_string(),
                (f.get(2)?.to_string(), f.get(3)?.to_string()),
            ))
        })
        .collect();
    let mut en_a = Vec::new();
    let mut en_u = Vec::new();
    let mut zh = Vec::new();
    let docs = read_jsonl(&format!("{dir}/maintext.jsonl.gz"));
    let texts: Vec<(String, String)> = docs
        .iter()
        .filter_map(|v| {
            Some((
                v["id"].as_str()?.to_string(),
                neardup::text::normalize(v["text"].as_str()?, fold),
            ))
        })
        .collect();
    for (id, t) in &texts {
        let Some((source, lang)) = info.get(id) else {
            continue;
        };
        match (lang.as_str(), source.as_str()) {
            ("zh", _) => zh.push(t.as_str()),
            ("en", "gnome-help" | "pallets-docs" | "gimp-help") => en_a.push(t.as_str()),
            ("en", _) => en_u.push(t.as_str()),
            _ => {}
        }
    }
    let a = long_text(&en_a, 40, 1);
    let u = long_text(&en_u, 40, 2);
    let z = long_text(&zh, 40, 3);
    let a_dup = vary(&a, 25, 4);
    let a_ch = chapter(&a, 60_000);
    let u_ch = chapter(&u, 60_000);
    let z_ch = chapter(&z, 30_000);
    println!(
        "A {} bytes, U {} bytes, Z {} bytes, A' {} bytes",
        a.len(),
        u.len(),
        z.len(),
        a_dup.len()
    );

    let cfg = VerifyConfig::default();
    let _ = verify("warm up the thread's buffers", "warm up the buffers", &cfg);
    // Half of A then half of U: passes the early reject, resemble about 1/3.
    let half = |t: &str, second: bool| -> String {
        let mut cut = t.len() / 2;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        if second {
            t[cut..].to_string()
        } else {
            t[..cut].to_string()
        }
    };
    let a_u = half(&a, false) + &half(&u, true);
    // A's two halves swapped: moved blocks.
    let swapped = half(&a, true) + &half(&a, false);
    let cases: [(&str, &str, &str); 8] = [
        ("A vs chapter of A (60k chars)", &a, &a_ch),
        ("A vs chapter of U (60k chars)", &a, &u_ch),
        ("A vs U (16 MiB each)", &a, &u),
        ("A vs near-dup of A (16 MiB)", &a, &a_dup),
        ("A vs half A + half U (16 MiB)", &a, &a_u),
        ("A vs A's halves swapped", &a, &swapped),
        ("Z vs chapter of Z (30k chars)", &z, &z_ch),
        ("Z vs A (16 MiB each)", &z, &a),
    ];
    for (name, x, y) in cases {
        if !name.contains(only.as_str()) {
            continue;
        }
        let (t, cpu) = (Instant::now(), thread_cpu_ns());
        let v = verify(x, y, &cfg);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let cpu_ms = match (cpu, thread_cpu_ns()) {
            (Some(s), Some(e)) => (e - s) as f64 / 1e6,
            _ => f64::NAN,
        };
        println!(
            "{name:<32} cpu {cpu_ms:>8.1} ms wall {ms:>8.1} ms  similar={} r={:.3} c={:.3} units={}/{} skel={}/{} \
             lcs={} tlcs={} early_reject={} bound_exceeded={} approximate={} window={:?}",
            v.similar,
            v.resemble,
            v.contain,
            v.len_a,
            v.len_b,
            v.skeleton_a,
            v.skeleton_b,
            v.lcs,
            v.tlcs,
            v.early_reject,
            v.bound_exceeded,
            v.approximate,
            v.window
        );
    }
}
