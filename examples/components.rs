//! Component sizes of the candidate graph of a corpus (SCALEOUT §7.1, issue #16 point 5): pages
//! are joined when they share a posting key, and a connected component is what a distributed
//! merge must decide on one node, page after page. The sketch keys (single clauses) chain pages
//! across families; this prints the components under three rules:
//!
//! - `all`: every posting key the index uses (content, sentence fingerprints, clause sketch);
//! - `F+C`: the content and sentence-fingerprint keys only;
//! - `F+C, K fallback`: those, and the sketch keys probed by the pages that share no F or C key
//!   with any other page (the rule of probing the sketch only when the fingerprints find
//!   nobody): such a page meets every page filed under its sketch keys;
//! - `K among F+C-alone`: the second phase of a two-phase merge that decides the F+C components
//!   first, then the pages with no F/C partner, which depend on each other only through the
//!   sketch keys they share (components of those pages alone; the share is of those pages);
//! - `all, K pairs >= M`: every F/C key, and a sketch link only between two pages that share at
//!   least M sketch keys (counted over the sketch keys on at most 200 pages);
//! - `all, K on <= N`: every key, the sketch keys only where at most N pages carry them.
//!
//! Keys on more than `max_pages` pages (the index's over-frequent rule, 10,000) join nobody.
//!
//! ```sh
//! cargo run --release --example components -- DOCS.jsonl.gz
//! ```

use std::io::{BufRead, BufReader};

use flate2::read::MultiGzDecoder;
use neardup::{Content, FrequentConfig, SignatureConfig, Signatures};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Union-find over page numbers, by size, with path halving.
#[derive(Clone)]
struct Sets {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl Sets {
    fn new(n: usize) -> Sets {
        Sets {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = p;
            x = p;
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
    }

    /// Component sizes, largest first.
    fn sizes(&mut self) -> Vec<u32> {
        let n = self.parent.len();
        let roots: Vec<u32> = (0..n as u32).filter(|&x| self.find(x) == x).collect();
        let mut out: Vec<u32> = roots.iter().map(|&x| self.size[x as usize]).collect();
        out.sort_unstable_by(|a, b| b.cmp(a));
        out
    }
}

/// A page's posting keys, split into the F/C keys and the sketch keys.
struct Keys {
    fc: Vec<[u8; 9]>,
    sketch: Vec<[u8; 9]>,
}

/// The pages filed under each key of `keys(page)`.
fn postings(pages: &[Keys], keys: impl Fn(&Keys) -> &[[u8; 9]]) -> FxHashMap<[u8; 9], Vec<u32>> {
    let mut out: FxHashMap<[u8; 9], Vec<u32>> = FxHashMap::default();
    for (i, p) in pages.iter().enumerate() {
        for k in keys(p) {
            out.entry(*k).or_default().push(i as u32);
        }
    }
    out
}

/// Joins the pages of each posting that `joins` accepts.
fn join(sets: &mut Sets, postings: &FxHashMap<[u8; 9], Vec<u32>>, joins: impl Fn(&[u32]) -> bool) {
    for ids in postings.values().filter(|ids| joins(ids)) {
        for w in ids.windows(2) {
            sets.union(w[0], w[1]);
        }
    }
}

fn report(name: &str, sizes: &[u32]) {
    let n: u32 = sizes.iter().sum();
    let singletons = sizes.iter().filter(|&&s| s == 1).count();
    let over = |t: u32| sizes.iter().filter(|&&s| s > t).count();
    let top: Vec<String> = sizes.iter().take(5).map(u32::to_string).collect();
    println!(
        "{name:18} {:>8} components ({singletons} singletons), largest {} ({:.1} % of its pages), \
         > 100: {}, > 1,000: {}",
        sizes.len(),
        top.join(", "),
        100.0 * *sizes.first().unwrap_or(&0) as f64 / n.max(1) as f64,
        over(100),
        over(1000)
    );
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/bench/dev/docs.jsonl.gz".to_string());
    let cfg = SignatureConfig::default();
    let max_pages = FrequentConfig::default().max_pages as usize;
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
    let mut lines = BufReader::new(MultiGzDecoder::new(file)).lines();
    let mut pages: Vec<Keys> = Vec::new();
    let sketch_kind = neardup::signature::kind::SKETCH;
    loop {
        let chunk: Vec<String> = lines.by_ref().take(4096).map_while(Result::ok).collect();
        if chunk.is_empty() {
            break;
        }
        let keys: Vec<Keys> = chunk
            .par_iter()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
                let content = match (v["html"].as_str(), v["text"].as_str()) {
                    (Some(h), _) => Content::Html(h.as_bytes()),
                    (None, Some(t)) => Content::Text(t),
                    _ => Content::Text(""),
                };
                let all = Signatures::compute(content, &cfg)
                    .map(|s| s.posting_keys(&cfg.method))
                    .unwrap_or_default();
                let (sketch, fc) = all.into_iter().partition(|k| k[0] == sketch_kind);
                Keys { fc, sketch }
            })
            .collect();
        pages.extend(keys);
        eprint!("\r{} pages", pages.len());
    }
    eprintln!();
    let n = pages.len();

    let fc_postings = postings(&pages, |p| &p.fc);
    let sketch = postings(&pages, |p| &p.sketch);
    let frequent = |ids: &[u32]| ids.len() > max_pages;

    let mut fc = Sets::new(n);
    join(&mut fc, &fc_postings, |ids| !frequent(ids));

    let mut all = fc.clone();
    join(&mut all, &sketch, |ids| !frequent(ids));
    report("all", &all.sizes());
    report("F+C", &fc.sizes());

    // Pages with no F/C partner are the singletons of the F+C graph.
    let alone: Vec<bool> = (0..n as u32)
        .map(|i| {
            let r = fc.find(i);
            fc.size[r as usize] == 1
        })
        .collect();
    // A page with no F/C partner probes the sketch keys: it meets every page filed under them
    // (all pages file their sketch keys), so a sketch posting holding such a page joins all its
    // pages; the others join nobody.
    let mut fallback = fc.clone();
    join(&mut fallback, &sketch, |ids| {
        !frequent(ids) && ids.iter().any(|&i| alone[i as usize])
    });
    report("F+C, K fallback", &fallback.sizes());

    // Decided in two phases: the F+C components first, then the pages with no F/C partner,
    // which read the first phase's results and depend on each other only through the sketch
    // keys they share.
    let mut second = Sets::new(n);
    for ids in sketch.values().filter(|ids| !frequent(ids)) {
        let alone_ids: Vec<u32> = ids.iter().copied().filter(|&i| alone[i as usize]).collect();
        for w in alone_ids.windows(2) {
            second.union(w[0], w[1]);
        }
    }
    // The other pages are left as singletons, the last of the sizes (largest first).
    let mut sizes = second.sizes();
    sizes.truncate(sizes.len() - alone.iter().filter(|&&a| !a).count());
    report("K among F+C-alone", &sizes);

    // Every F/C key, and a sketch link only between two pages that share at least `m` sketch
    // keys (one shared clause is what chains families: a stock phrase, a quotation), counted
    // over the sketch keys on at most PAIR_CAP pages (pairs of a key's pages are enumerated).
    const PAIR_CAP: usize = 200;
    let mut shared: FxHashMap<(u32, u32), u16> = FxHashMap::default();
    for ids in sketch.values().filter(|ids| ids.len() <= PAIR_CAP) {
        for (x, &a) in ids.iter().enumerate() {
            for &b in &ids[x + 1..] {
                *shared.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
    }
    for m in [2u16, 3, 4] {
        let mut paired = fc.clone();
        for (&(a, b), &c) in &shared {
            if c >= m {
                paired.union(a, b);
            }
        }
        report(&format!("all, K pairs >= {m}"), &paired.sizes());
    }

    // Every key, the sketch keys only where few pages carry them (a sketch key on many pages is
    // a clause many families share: boilerplate, a quotation).
    for cap in [100usize, 20, 5] {
        let mut capped = fc.clone();
        join(&mut capped, &sketch, |ids| ids.len() <= cap);
        report(&format!("all, K on <= {cap}"), &capped.sizes());
    }
}
