//! Helpers shared by the integration tests: deterministic articles, variants and page wrappers;
//! `native` finds the built libraries for the C and C++ tests.
#![allow(dead_code)]

use neardup::merge::{LogCounter, LogOp};
use neardup::{BatchOptions, Content, Index, IndexOptions, Page};

pub mod native;

/// A small deterministic PRNG (SplitMix64), so tests need no extra crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "index",
    "page",
    "crawler",
    "engine",
    "storage",
    "cluster",
    "sentence",
    "fingerprint",
    "market",
    "river",
    "mountain",
    "report",
    "government",
    "school",
    "science",
    "music",
    "energy",
    "policy",
    "network",
    "system",
    "village",
    "teacher",
    "harvest",
    "winter",
    "summer",
    "bridge",
    "railway",
    "festival",
    "museum",
    "hospital",
    "language",
    "history",
    "ocean",
    "forest",
    "company",
    "worker",
    "student",
    "library",
    "garden",
    "kitchen",
    "morning",
    "evening",
    "journey",
    "letter",
    "window",
    "question",
    "answer",
    "number",
    "example",
    "picture",
    "country",
    "city",
    "family",
    "friend",
];

/// An article of `paras` paragraphs, each of several sentences, all from `seed`.
pub fn article(seed: u64, paras: usize) -> Vec<String> {
    let mut r = Rng(seed);
    (0..paras)
        .map(|_| {
            (0..4 + r.below(3))
                .map(|_| {
                    let n = 8 + r.below(8);
                    let mut s: Vec<&str> = (0..n).map(|_| WORDS[r.below(WORDS.len())]).collect();
                    s[0] = WORDS[r.below(WORDS.len())];
                    let mut s = s.join(" ");
                    s.push('.');
                    let mut c = s.chars();
                    match c.next() {
                        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                        None => s,
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// An article over a large vocabulary of made-up words (so unrelated articles share few words).
pub fn article_rich(seed: u64, paras: usize) -> Vec<String> {
    const SYL: &[&str] = &[
        "ka", "lo", "mi", "ren", "tu", "sha", "vo", "qui", "den", "pal", "zor", "ei", "ba", "nu",
        "tri", "gel",
    ];
    let mut r = Rng(seed);
    let word = |r: &mut Rng| {
        (0..2 + r.below(2))
            .map(|_| SYL[r.below(SYL.len())])
            .collect::<String>()
    };
    (0..paras)
        .map(|_| {
            (0..4 + r.below(3))
                .map(|_| {
                    let n = 8 + r.below(8);
                    let mut s = String::from("The");
                    for _ in 0..n {
                        s.push(' ');
                        s.push_str(&word(&mut r));
                    }
                    s.push('.');
                    s
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A Chinese article of `paras` paragraphs.
pub fn article_zh(seed: u64, paras: usize) -> Vec<String> {
    const CHARS: &str = "中国人民大会堂新华社记者报道今天上午经济发展改革开放建设社会主义农业工业科技教育文化卫生城市乡村干部群众同志工作会议决定国家政府企业";
    let chars: Vec<char> = CHARS.chars().collect();
    let mut r = Rng(seed);
    (0..paras)
        .map(|_| {
            (0..4 + r.below(3))
                .map(|_| {
                    let n = 12 + r.below(16);
                    let mut s: String = (0..n).map(|_| chars[r.below(chars.len())]).collect();
                    s.push('。');
                    s
                })
                .collect::<String>()
        })
        .collect()
}

/// Wraps paragraphs in one of several site templates (different navigation, sidebars, footers).
pub fn html(template: usize, title: &str, paras: &[String]) -> String {
    let body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    match template % 3 {
        0 => format!(
            "<html><head><title>{title} | Daily</title></head><body>\
             <div class=nav><a href=/>Home</a> <a href=/w>World news</a> <a href=/b>Business</a></div>\
             <div class=main><h1>{title}</h1><div class=article-body>{body}</div></div>\
             <div class=footer><p>Copyright Daily, all rights reserved, do not copy anything.</p></div></body></html>"
        ),
        1 => format!(
            "<html><head><title>{title} - Blog</title></head><body><header><a href=/>Blog</a></header>\
             <main><article><h1>{title}</h1><div class=entry-content>{body}</div></article>\
             <div class=comments><p>Great post, thanks for writing it all down!</p></div></main>\
             <footer>Powered by a blog engine, theme by somebody else entirely.</footer></body></html>"
        ),
        _ => format!(
            "<html><head><title>{title}</title></head><body><table><tr>\
             <td class=side><ul><li><a href=/1>A long related link title number one here</a></li>\
             <li><a href=/2>Another long related link title number two</a></li></ul></td>\
             <td><h1>{title}</h1><div id=content>{body}</div></td></tr></table></body></html>"
        ),
    }
}

/// A variant of an article: a few words changed in some paragraphs.
pub fn edited(paras: &[String], seed: u64) -> Vec<String> {
    let mut r = Rng(seed);
    paras
        .iter()
        .map(|p| {
            if r.below(3) == 0 {
                let mut words: Vec<String> = p.split(' ').map(String::from).collect();
                let i = r.below(words.len());
                words[i] = "changed".to_string();
                words.join(" ")
            } else {
                p.clone()
            }
        })
        .collect()
}

pub fn page<'a>(key: &'a str, host: &'a str, html: &'a str) -> Page<'a> {
    Page {
        key,
        host,
        time: 0,
        content: Content::Html(html.as_bytes()),
    }
}

pub fn open(dir: &std::path::Path) -> Index {
    Index::open(dir, IndexOptions::default()).expect("open index")
}

pub fn assert_clean(ix: &Index) {
    let r = ix.check().expect("check runs");
    assert!(r.is_clean(), "check found problems: {:#?}", r.problems);
}

/// The lines of a gzip file (one or more members).
pub fn gz_lines(path: &std::path::Path) -> impl Iterator<Item = String> {
    use std::io::BufRead;
    let f = std::fs::File::open(path).unwrap();
    std::io::BufReader::new(flate2::read::MultiGzDecoder::new(f))
        .lines()
        .map(|l| l.unwrap())
}

/// Writes the index's export (`key<TAB>target`) to `path`, the input of the bench scorers.
pub fn export_tsv(ix: &Index, path: &std::path::Path) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    ix.export(|k, r| writeln!(out, "{k}\t{r}").unwrap())
        .unwrap();
    out.flush().unwrap();
}

/// Checks a regression slice: the scorer's duplicate-detection figures `d` (with `precision`,
/// `recall`, `f1`) must keep F1 within 0.02 of `baseline`; prints them under `name`.
pub fn assert_f1_holds(name: &str, d: &serde_json::Value, baseline: f64) {
    let f1 = d["f1"].as_f64().unwrap();
    eprintln!(
        "{name}: P {} R {} F1 {f1} (baseline {baseline})",
        d["precision"], d["recall"]
    );
    assert!(
        f1 >= baseline - 0.02,
        "duplicate-detection F1 {f1} fell below {baseline} - 0.02"
    );
}

/// Runs a bench scorer with python3 and `--json`, and returns its JSON report.
pub fn run_scorer(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = std::process::Command::new("python3")
        .args(args)
        .arg("--json")
        .output()
        .expect("python3 runs the scorer (scripts/setup.sh installs what it needs)");
    assert!(
        out.status.success(),
        "the scorer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A page of family `f` (near duplicates of one another: every other variant edited), variant
/// `v`, on one of four hosts: `(host, html)`.
pub fn family_page(f: u64, v: u64) -> (String, String) {
    let host = format!("h{}.example", f % 4);
    let whole = article(9_000 + f, 6);
    let paras = if v.is_multiple_of(2) {
        whole
    } else {
        edited(&whole, v * 31 + f)
    };
    (
        host,
        html((f + v) as usize % 3, &format!("Story {f}"), &paras),
    )
}

/// Inserts `(key, host, html)` pages in one batch; every page must go in.
pub fn insert_pages(ix: &Index, pages: &[(String, String, String)], opts: &BatchOptions) {
    let pages: Vec<Page<'_>> = pages.iter().map(|(k, h, html)| page(k, h, html)).collect();
    for v in ix.insert_batch(&pages, opts, &mut |_, _| {}).unwrap() {
        v.unwrap();
    }
}

/// An index's export pairs and its clusters (id, representative, members).
pub type Exports = (Vec<(String, String)>, Vec<(u32, String, Vec<String>)>);

/// [`Exports`] of an index.
pub fn exports(ix: &Index) -> Exports {
    let mut pairs = Vec::new();
    ix.export(|k, t| pairs.push((k.to_string(), t.to_string())))
        .unwrap();
    let mut clusters = Vec::new();
    ix.export_clusters(|c, r, m| clusters.push((c, r.to_string(), m.to_vec())))
        .unwrap();
    (pairs, clusters)
}

/// A state log without empty postings: an index leaves a posting's key behind when its last id
/// goes, a log that never adds to it leaves none.
pub fn normalized(log: Vec<LogOp>) -> Vec<LogOp> {
    log.into_iter()
        .filter(|op| !matches!(op, LogOp::Posting { delta, .. } if delta.add.is_empty()))
        .collect()
}

/// A log in the distributed index's global (`u64`) ids.
pub fn wide(log: Vec<LogOp>) -> Vec<LogOp<u64>> {
    log.into_iter().map(|op| op.to_width().unwrap()).collect()
}

/// A log of global ids for an index that stores `u32`s (every id fits in these tests).
pub fn narrow(log: Vec<LogOp<u64>>) -> Vec<LogOp> {
    log.into_iter().map(|op| op.to_width().unwrap()).collect()
}

/// Every page and cluster id of a log (and its allocators) mapped by `f`; "no page" stays.
pub fn mapped(log: Vec<LogOp<u64>>, f: &dyn Fn(u64) -> u64) -> Vec<LogOp<u64>> {
    let id = |i: u64| if i == u64::MAX { i } else { f(i) };
    let set = |s: &roaring::RoaringTreemap| s.iter().map(id).collect::<roaring::RoaringTreemap>();
    log.into_iter()
        .map(|op| match op {
            LogOp::Posting { key, mut delta } => {
                delta.add = set(&delta.add);
                delta.remove = set(&delta.remove);
                LogOp::Posting { key, delta }
            }
            LogOp::Simhash {
                table,
                simhash,
                doc,
                present,
            } => LogOp::Simhash {
                table,
                simhash,
                doc: id(doc),
                present,
            },
            LogOp::Key { key, doc } => LogOp::Key {
                key,
                doc: doc.map(id),
            },
            LogOp::Doc { id: d, record } => LogOp::Doc {
                id: id(d),
                record: record.map(|mut r| {
                    r.cluster = id(r.cluster);
                    r.similar_to = id(r.similar_to);
                    r
                }),
            },
            LogOp::Text { id: d, value } => LogOp::Text { id: id(d), value },
            LogOp::Cluster { id: c, record } => LogOp::Cluster {
                id: id(c),
                record: record.map(|mut r| {
                    r.representative = id(r.representative);
                    r.members = set(&r.members);
                    r
                }),
            },
            LogOp::PageBlocks { id: d, blocks } => LogOp::PageBlocks { id: id(d), blocks },
            LogOp::FreeDoc { id: d, free } => LogOp::FreeDoc { id: id(d), free },
            LogOp::FreeCluster { id: c, free } => LogOp::FreeCluster { id: id(c), free },
            LogOp::Counter(LogCounter::NextDoc(n)) => LogOp::Counter(LogCounter::NextDoc(id(n))),
            LogOp::Counter(LogCounter::NextCluster(n)) => {
                LogOp::Counter(LogCounter::NextCluster(id(n)))
            }
            op => op,
        })
        .collect()
}
