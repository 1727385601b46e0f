//! Model-based property test (issue #14, point 2): random sequences of insert (and replace) /
//! delete / query / get / reopen / compact / checkpoint-and-open over a small corpus of
//! near-duplicate families, run against a brute-force model that holds the live pages. After
//! every step the index must agree with the model:
//!
//! - `check()` is clean; `keys()`, `get`, `len()`, `stats()` and the export hold exactly the
//!   model's live keys, with the contents and insertion numbers the model gave them;
//! - every live page is in exactly one cluster (`clusters()`/`members()` and `export_clusters`
//!   agree); its representative is a live member and, under the default `FirstSeen` policy, the
//!   member with the smallest insertion number (a newcomer never takes over; after a
//!   representative's delete the oldest remaining member leads) — unless a changed recrawl of
//!   the representative kept its cluster (`IndexOptions::sticky_representative`): the new
//!   version, the newest page, leads until the order is restored;
//! - every member verifies (`neardup::verify::verify`, or identical text) against its
//!   representative; a page that founded its own cluster leads it;
//! - a delete (or the delete inside a replace) reports the old and new representative the policy
//!   names, and moves exactly the members that do not verify against the new representative;
//!   a replace of a representative of other members whose new text verifies against the old
//!   one keeps the cluster: the deletion names the key itself as the representative after, the
//!   members moved are those that do not verify against the new text, and the new version
//!   leads the same cluster;
//! - `query` of a stored page finds a duplicate: the identical page, or a match of at least the
//!   strong-match resemblance (0.6) that ends the search; what it names is live and similar;
//! - no id is reachable after its delete: a deleted key is absent from `get`, the cursors and the
//!   exports, and a page's `similar_to` names only the page it was judged against while that
//!   very page (same insertion number) is held — never a later page given the freed id;
//! - id high-water marks stay within one of the most pages / clusters ever held at once.
//!
//! Under the methods on corpus statistics (`Method::uses_df`) similarity depends on the
//! document frequencies of the moment: the model judges each decision (an insert's match, a
//! delete's hand-over, a query) under the frequencies of the pages live when it was made, and the
//! standing checks of similarity between members — which the frequencies of later pages may
//! change, as they change for the index, whose clusters are not re-decided — are left out.
//!
//! `PROPTEST_CASES` sets the number of cases (default [`CASES`]) and `PROPTEST_RNG_SEED` the seed
//! (default [`SEED`], so the default run is reproducible); a failure is shrunk to a minimal
//! sequence of operations, printed with the failing check. One bug this model found is pinned,
//! ignored, by `a_moved_member_never_leads_members_that_do_not_verify_against_it`.
mod common;
use common::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use neardup::methods::{DocFreqs, NoDocFreq};
use neardup::{
    ClusterId, Content, Deletion, Error, Index, IndexOptions, Method, SignatureConfig, Signatures,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// Cases run by default (about 30 s in release on 2 cores).
const CASES: u32 = 48;
/// The seed of the default run (see [`index_agrees_with_the_model`]).
const SEED: u64 = 14;
/// Near-duplicate families in the corpus.
const FAMILIES: usize = 3;
/// Variants per family: 0 the article, 1 an edited copy, 2 its first half, 3 its second half,
/// 4 its second half followed by the next family's first half (similar to both families, so
/// clusters are not transitive). Entry `FAMILIES * VARIANTS` is a page without main text.
const VARIANTS: usize = 5;
/// Keys the operations draw from (few, so that replaces and deletes hit live pages).
const KEYS: usize = 7;
/// The host of every page (a re-insert with the same text is then an unchanged recrawl).
const HOST: &str = "s.example";
/// A verified match this strong ends a query's search (`STRONG_MATCH` in `src/index/decide/mod.rs`).
const STRONG_MATCH: f64 = 0.6;

/// One page of the corpus, with its normalized text.
struct Entry {
    name: String,
    html: String,
    text: String,
    hash: u128,
    /// The normalized text and its hash under the topic-sentence method, whose text keeps the
    /// page's title and blocks on lines of their own.
    topic: (String, u128),
    no_main_text: bool,
}

struct Corpus {
    entries: Vec<Entry>,
    /// `similar[m][a][b]`: under method `Method::NAMES[m]`, page `a` verifies against page `b`
    /// as the index decides it (identical texts, or `IndexOptions::similar_texts(a, b)`); for the
    /// methods on corpus statistics, decided at each use instead (see [`similar`]).
    similar: Vec<Vec<Vec<bool>>>,
}

thread_local! {
    /// The method the running case's index uses (each test runs on its own thread).
    static METHOD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The document frequencies of the decision being checked (methods on corpus statistics).
    static DF: std::cell::RefCell<DocFreqs> = std::cell::RefCell::new(DocFreqs::new());
}

/// The running case's method.
fn the_method() -> Method {
    Method::from_name(Method::NAMES[METHOD.with(|m| m.get())]).expect("a method")
}

/// Does page `a` verify against page `b` under the running case's method (for a method on
/// corpus statistics, under the frequencies [`set_df`] last set)?
fn similar(a: usize, b: usize) -> bool {
    let method = the_method();
    if !method.uses_df() {
        return corpus().similar[METHOD.with(|m| m.get())][a][b];
    }
    let (x, y) = (&corpus().entries[a], &corpus().entries[b]);
    x.h() == y.h()
        || DF.with(|df| {
            options()
                .similar_texts(x.txt(), y.txt(), &*df.borrow())
                .is_some()
        })
}

/// Sets the document frequencies decisions are judged under: those of the model's live pages
/// but `except`.
fn set_df(model: &Model, except: Option<&str>) {
    let mut df = DocFreqs::new();
    for (k, p) in &model.pages {
        if Some(k.as_str()) != except {
            df.add_text(corpus().entries[p.entry].txt());
        }
    }
    DF.with(|d| *d.borrow_mut() = df);
}

/// Are the standing similarity checks meaningful (not under a method on corpus statistics)?
fn standing_similarity() -> bool {
    !the_method().uses_df()
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut entries = Vec::new();
        let cfg = SignatureConfig::default();
        let articles: Vec<Vec<String>> =
            (0..FAMILIES).map(|f| article(700 + f as u64, 6)).collect();
        for f in 0..FAMILIES {
            let a = &articles[f];
            let next = &articles[(f + 1) % FAMILIES];
            let variants: [Vec<String>; VARIANTS] = [
                a.clone(),
                edited(a, 70 + f as u64),
                a[..3].to_vec(),
                a[3..].to_vec(),
                a[3..].iter().chain(&next[..3]).cloned().collect(),
            ];
            for (v, paras) in variants.iter().enumerate() {
                let title = format!("Story {f}");
                let html = html(f + v, &title, paras);
                entries.push(entry(format!("f{f}v{v}"), html, &cfg));
            }
        }
        let empty = "<html><body><script>var x = 1;</script></body></html>".to_string();
        entries.push(entry("empty".into(), empty, &cfg));
        // The methods on corpus statistics are judged at each use (see `similar`); their
        // matrix, under the frequencies of the whole corpus, is only counted.
        let mut whole = DocFreqs::new();
        for e in &entries {
            whole.add_text(&e.text);
        }
        let similar = Method::NAMES
            .iter()
            .map(|name| {
                let method = Method::from_name(name).expect("a method");
                let opts = IndexOptions {
                    signature: SignatureConfig {
                        method: method.clone(),
                        ..options().signature
                    },
                    ..options()
                };
                let df: &dyn neardup::methods::DocFreq =
                    if method.uses_df() { &whole } else { &NoDocFreq };
                entries
                    .iter()
                    .map(|a| {
                        entries
                            .iter()
                            .map(|b| {
                                let (ta, tb) = (a.text_for(&method), b.text_for(&method));
                                a.hash_for(&method) == b.hash_for(&method)
                                    || opts.similar_texts(ta, tb, df).is_some()
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let hashes: BTreeSet<u128> = entries.iter().map(|e| e.hash).collect();
        assert_eq!(hashes.len(), entries.len(), "corpus texts are distinct");
        Corpus { entries, similar }
    })
}

impl Entry {
    /// The normalized text under a method.
    fn text_for(&self, m: &Method) -> &str {
        match m {
            Method::Topic(_) => &self.topic.0,
            _ => &self.text,
        }
    }

    /// The content hash under a method.
    fn hash_for(&self, m: &Method) -> u128 {
        match m {
            Method::Topic(_) => self.topic.1,
            _ => self.hash,
        }
    }

    /// The normalized text under the running case's method.
    fn txt(&self) -> &str {
        self.text_for(&the_method())
    }

    /// The content hash under the running case's method.
    fn h(&self) -> u128 {
        self.hash_for(&the_method())
    }
}

fn entry(name: String, html: String, cfg: &SignatureConfig) -> Entry {
    let topic_cfg = SignatureConfig {
        method: Method::from_name("topic").expect("topic"),
        ..cfg.clone()
    };
    let t = Signatures::compute(Content::Html(html.as_bytes()), &topic_cfg).expect("signatures");
    let sig = Signatures::compute(Content::Html(html.as_bytes()), cfg).expect("signatures");
    assert!(sig.codes.is_empty(), "no model codes in the corpus: {name}");
    // `IndexOptions::min_text_width` (20) decides "no main text".
    let no_main_text = sig.text.chars().count() < 20;
    Entry {
        name,
        html,
        text: sig.text,
        hash: sig.content_hash,
        topic: (t.text, t.content_hash),
        no_main_text,
    }
}

fn key(i: usize) -> String {
    format!("https://s.example/k{i}")
}

#[derive(Clone, Debug)]
enum Op {
    /// Insert corpus entry `entry` under key `key` (a replace when the key is live).
    Insert {
        key: usize,
        entry: usize,
    },
    Delete {
        key: usize,
    },
    Query {
        entry: usize,
    },
    Get {
        key: usize,
    },
    /// Drop the index and open it again on the same directory.
    Reopen,
    Compact,
    /// Checkpoint to a new directory, open the checkpoint and check it, go on with the original.
    CheckpointOpen,
}

fn entry_index() -> impl Strategy<Value = usize> {
    prop_oneof![12 => 0..FAMILIES * VARIANTS, 1 => Just(FAMILIES * VARIANTS)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0..KEYS, entry_index()).prop_map(|(key, entry)| Op::Insert { key, entry }),
        4 => (0..KEYS).prop_map(|key| Op::Delete { key }),
        2 => entry_index().prop_map(|entry| Op::Query { entry }),
        1 => (0..KEYS).prop_map(|key| Op::Get { key }),
        1 => Just(Op::Reopen),
        1 => Just(Op::Compact),
        1 => Just(Op::CheckpointOpen),
    ]
}

/// A live page of the model.
#[derive(Clone, Debug)]
struct Live {
    entry: usize,
    seq: u64,
    /// The page it was judged similar to when placed: key and insertion number.
    similar: Option<(String, u64)>,
}

#[derive(Default)]
struct Model {
    pages: BTreeMap<String, Live>,
    last_seq: Option<u64>,
    peak_pages: u64,
    peak_clusters: u64,
    /// Clusters a sticky recrawl left led by a page newer than some member: the oldest member
    /// need not lead them, until it does again.
    kept: BTreeSet<ClusterId>,
}

impl Model {
    /// The page `similar_to` should name now: the recorded one while that very page is live.
    fn expected_similar(&self, live: &Live) -> Option<String> {
        let (k, seq) = live.similar.as_ref()?;
        self.pages
            .get(k)
            .filter(|p| p.seq == *seq)
            .map(|_| k.clone())
    }
}

/// Figures over a run, printed at its end.
#[derive(Default)]
struct Counts {
    cases: AtomicU64,
    steps: AtomicU64,
    replaces: AtomicU64,
    unchanged: AtomicU64,
    duplicates: AtomicU64,
    deletes: AtomicU64,
    handovers: AtomicU64,
    kept: AtomicU64,
    moved: AtomicU64,
    reopens: AtomicU64,
    checkpoints: AtomicU64,
}

static COUNTS: Counts = Counts {
    cases: AtomicU64::new(0),
    steps: AtomicU64::new(0),
    replaces: AtomicU64::new(0),
    unchanged: AtomicU64::new(0),
    duplicates: AtomicU64::new(0),
    deletes: AtomicU64::new(0),
    handovers: AtomicU64::new(0),
    kept: AtomicU64::new(0),
    moved: AtomicU64::new(0),
    reopens: AtomicU64::new(0),
    checkpoints: AtomicU64::new(0),
};

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

fn options() -> IndexOptions {
    let method = the_method();
    IndexOptions {
        // Reopen drops the index cleanly, so the WAL need not be synced; much faster.
        sync_writes: false,
        signature: SignatureConfig {
            method,
            ..SignatureConfig::default()
        },
        ..IndexOptions::default()
    }
}

/// A cluster as the cursors show it.
#[derive(Debug, PartialEq)]
struct Cluster {
    representative: String,
    members: BTreeSet<String>,
}

fn clusters_of(ix: &Index) -> BTreeMap<ClusterId, Cluster> {
    let mut out = BTreeMap::new();
    for info in ix.clusters().expect("clusters cursor") {
        let info = info.expect("cluster");
        let members: BTreeSet<String> = ix
            .members(info.cluster)
            .expect("members cursor")
            .expect("a listed cluster exists")
            .map(|m| m.expect("member"))
            .collect();
        assert_eq!(info.size, members.len() as u64, "cluster {}", info.cluster);
        out.insert(
            info.cluster,
            Cluster {
                representative: info.representative,
                members,
            },
        );
    }
    out
}

/// Every check of the module docs, of `ix` against `model`.
fn check_index(ix: &Index, model: &mut Model, at: &str) {
    let c = corpus();
    let report = ix.check().expect("check runs");
    assert!(report.is_clean(), "{at}: check: {:#?}", report.problems);
    set_df(model, None);

    // The same live keys everywhere.
    let live: BTreeSet<String> = model.pages.keys().cloned().collect();
    let keys: BTreeMap<String, ClusterId> = ix
        .keys()
        .expect("keys cursor")
        .map(|k| k.expect("key"))
        .collect();
    assert_eq!(
        keys.keys().cloned().collect::<BTreeSet<_>>(),
        live,
        "{at}: keys()"
    );
    assert_eq!(ix.len(), live.len() as u64, "{at}: len()");
    let mut records = BTreeMap::new();
    let mut docs = BTreeSet::new();
    for i in 0..KEYS {
        let k = key(i);
        let rec = ix.get(&k).expect("get");
        match (model.pages.get(&k), rec) {
            (None, None) => {}
            (None, Some(r)) => panic!("{at}: deleted key {k} is found: {r:?}"),
            (Some(_), None) => panic!("{at}: live key {k} is not found"),
            (Some(p), Some(r)) => {
                assert_eq!(r.key, k);
                assert_eq!(
                    r.content_hash,
                    c.entries[p.entry].h(),
                    "{at}: {k}'s content"
                );
                assert_eq!(r.seq, p.seq, "{at}: {k}'s insertion number");
                assert_eq!(Some(&r.cluster), keys.get(&k), "{at}: {k}'s cluster");
                assert!(docs.insert(r.doc), "{at}: id {} held twice", r.doc);
                records.insert(k, r);
            }
        }
    }

    // Clusters: every live page in exactly one, led by a live member the policy names.
    let clusters = clusters_of(ix);
    let mut exported = BTreeMap::new();
    ix.export_clusters(|cid, rep, members| {
        exported.insert(
            cid,
            Cluster {
                representative: rep.to_string(),
                members: members.iter().cloned().collect(),
            },
        );
    })
    .expect("export_clusters");
    assert_eq!(exported, clusters, "{at}: export_clusters and the cursors");
    let mut placed = BTreeSet::new();
    for (cid, cl) in &clusters {
        assert!(!cl.members.is_empty(), "{at}: cluster {cid} is empty");
        for m in &cl.members {
            assert!(
                live.contains(m),
                "{at}: cluster {cid} lists deleted key {m}"
            );
            assert!(placed.insert(m.clone()), "{at}: {m} is in two clusters");
            let r = &records[m];
            assert_eq!(r.cluster, *cid, "{at}: {m}'s record names another cluster");
            assert_eq!(
                r.representative, cl.representative,
                "{at}: {m}'s representative"
            );
        }
        assert!(
            cl.members.contains(&cl.representative),
            "{at}: cluster {cid}'s representative {} is no member",
            cl.representative
        );
        // FirstSeen: the oldest member leads — unless it could not: a member moved into the
        // cluster after a hand-over takes over only when every member verifies against it.
        let oldest = cl
            .members
            .iter()
            .min_by_key(|m| model.pages[*m].seq)
            .expect("members");
        if &cl.representative == oldest {
            model.kept.remove(cid);
        }
        if &cl.representative != oldest && standing_similarity() && !model.kept.contains(cid) {
            let o = model.pages[oldest].entry;
            assert!(
                cl.members
                    .iter()
                    .any(|m| m != oldest && !similar(model.pages[m].entry, o)),
                "{at}: cluster {cid}: {} leads, but {oldest}, the oldest member of {:?}, \
                 could lead it",
                cl.representative,
                cl.members
            );
        }
        let rep = model.pages[&cl.representative].entry;
        for m in &cl.members {
            let e = model.pages[m].entry;
            if m != &cl.representative {
                assert!(
                    !standing_similarity() || similar(e, rep),
                    "{at}: cluster {cid}: member {m} ({}) does not verify against its \
                     representative {} ({}); members {:?}",
                    c.entries[e].name,
                    cl.representative,
                    c.entries[rep].name,
                    cl.members
                );
                assert!(
                    !c.entries[e].no_main_text,
                    "{at}: {m} has no main text but joined"
                );
            }
        }
    }
    assert_eq!(placed, live, "{at}: the pages in clusters");

    // similar_to: only the page judged against, while that very page is held, and similar.
    for (k, r) in &records {
        let p = &model.pages[k];
        let expected = model.expected_similar(p);
        assert_eq!(
            r.similar_to, expected,
            "{at}: {k}'s similar_to (recorded {:?})",
            p.similar
        );
        if let Some(t) = &r.similar_to {
            let te = model.pages[t].entry;
            assert!(
                !standing_similarity() || similar(p.entry, te),
                "{at}: {k} is not similar to its similar_to {t}"
            );
            assert!(
                r.resemble > 0.0 || r.contain > 0.0,
                "{at}: {k}: rates of {t}"
            );
        } else {
            assert_eq!(
                (r.resemble, r.contain),
                (0.0, 0.0),
                "{at}: {k}: rates without similar_to"
            );
        }
    }
    let mut export = BTreeMap::new();
    ix.export(|k, t| {
        export.insert(k.to_string(), t.to_string());
    })
    .expect("export");
    let expected_export: BTreeMap<String, String> = records
        .iter()
        .map(|(k, r)| {
            let t = r
                .similar_to
                .clone()
                .unwrap_or_else(|| r.representative.clone());
            (k.clone(), t)
        })
        .collect();
    assert_eq!(export, expected_export, "{at}: export");

    // query of every stored text finds a duplicate at least as close as a strong match.
    let entries: BTreeSet<usize> = model.pages.values().map(|p| p.entry).collect();
    for &e in &entries {
        let v = ix
            .query(Content::Html(c.entries[e].html.as_bytes()))
            .expect("query");
        check_query(&v, e, model, &clusters, at);
        if c.entries[e].no_main_text {
            assert!(
                v.no_main_text && !v.duplicate,
                "{at}: query of {}: {v:?}",
                c.entries[e].name
            );
            continue;
        }
        assert!(
            v.duplicate,
            "{at}: query of stored {} finds nothing: {v:?}",
            c.entries[e].name
        );
        assert!(
            v.exact || v.resemble >= STRONG_MATCH,
            "{at}: query of stored {} finds only {:?} (r = {})",
            c.entries[e].name,
            v.similar_to,
            v.resemble
        );
        let i = v
            .identical_to
            .as_ref()
            .expect("a stored text has an identical page");
        assert_eq!(model.pages[i].entry, e, "{at}: identical_to {i}");
    }

    // Ids: the high-water marks stay within one of the most pages and clusters ever held (a
    // replace frees its old ids only after its write, so it may take one new id).
    model.peak_pages = model.peak_pages.max(live.len() as u64);
    model.peak_clusters = model.peak_clusters.max(clusters.len() as u64);
    let stats = ix.stats().expect("stats");
    assert_eq!(stats.pages, live.len() as u64, "{at}: stats.pages");
    assert_eq!(
        stats.clusters,
        clusters.len() as u64,
        "{at}: stats.clusters"
    );
    assert!(
        u64::from(stats.page_ids) <= model.peak_pages + 1,
        "{at}: {} page ids given out for at most {} pages held",
        stats.page_ids,
        model.peak_pages
    );
    assert!(
        u64::from(stats.cluster_ids) <= model.peak_clusters + 1,
        "{at}: {} cluster ids given out for at most {} clusters held",
        stats.cluster_ids,
        model.peak_clusters
    );
    for r in records.values() {
        assert!(
            r.doc < stats.page_ids,
            "{at}: id {} above the high-water mark",
            r.doc
        );
    }
}

/// What a query (of a stored text or not) names must be live and consistent.
fn check_query(
    v: &neardup::Verdict,
    e: usize,
    model: &Model,
    clusters: &BTreeMap<ClusterId, Cluster>,
    at: &str,
) {
    let c = corpus();
    let name = &c.entries[e].name;
    assert!(
        v.doc.is_none() && v.seq.is_none(),
        "{at}: query of {name} stored something"
    );
    if let Some(t) = &v.similar_to {
        let p = model
            .pages
            .get(t)
            .unwrap_or_else(|| panic!("{at}: query of {name} names deleted {t}"));
        assert!(
            similar(e, p.entry),
            "{at}: query of {name}: not similar to {t}"
        );
        assert_eq!(
            v.exact,
            c.entries[p.entry].h() == c.entries[e].h(),
            "{at}: exact"
        );
    } else {
        assert!(!v.duplicate, "{at}: query of {name}: duplicate of nothing");
    }
    if let Some(cid) = v.cluster {
        let cl = clusters
            .get(&cid)
            .unwrap_or_else(|| panic!("{at}: query of {name} names dead cluster {cid}"));
        assert_eq!(
            v.representative.as_ref(),
            Some(&cl.representative),
            "{at}: query rep"
        );
        let rep = model.pages[&cl.representative].entry;
        assert!(
            similar(e, rep),
            "{at}: query of {name} joins a cluster it does not verify against"
        );
    }
    if let Some(i) = &v.identical_to {
        let p = model
            .pages
            .get(i)
            .unwrap_or_else(|| panic!("{at}: identical_to deleted {i}"));
        assert_eq!(p.entry, e, "{at}: query of {name}: identical_to {i}");
    }
}

/// A key's cluster before a delete: its members and representative.
struct Before {
    doc: u32,
    cluster: ClusterId,
    representative: String,
    members: BTreeSet<String>,
}

fn before_delete(ix: &Index, k: &str) -> Before {
    let r = ix.get(k).expect("get").expect("live");
    let members = ix
        .members(r.cluster)
        .expect("members")
        .expect("cluster")
        .map(|m| m.expect("member"))
        .collect();
    Before {
        doc: r.doc,
        cluster: r.cluster,
        representative: r.representative,
        members,
    }
}

/// Checks what a delete reports against the cluster before it, and takes the page out of the
/// model (refreshing the `similar_to` of the members it moved).
/// `keeps`: the entry of the new version that keeps the cluster, when the deletion is a sticky
/// replace's.
fn apply_deletion(
    ix: &Index,
    model: &mut Model,
    k: &str,
    (b, keeps): (&Before, Option<usize>),
    d: &Deletion,
    at: &str,
) {
    assert_eq!(d.key, k, "{at}: deletion key");
    assert_eq!(
        (d.doc, d.cluster),
        (b.doc, b.cluster),
        "{at}: deletion of {k}: id, cluster"
    );
    let was_rep = b.representative == k;
    assert_eq!(
        d.was_representative, was_rep,
        "{at}: deletion of {k}: was_representative"
    );
    let rest: Vec<&String> = b.members.iter().filter(|m| *m != k).collect();
    let new_rep = if keeps.is_some() {
        Some(k.to_string())
    } else if was_rep {
        rest.iter()
            .min_by_key(|m| model.pages[**m].seq)
            .map(|m| (*m).clone())
    } else {
        Some(b.representative.clone())
    };
    assert_eq!(
        d.representative, new_rep,
        "{at}: deletion of {k}: representative after"
    );
    let mut expected_moved = BTreeSet::new();
    if let Some(e) = keeps {
        bump(&COUNTS.kept, 1);
        for m in &rest {
            if !similar(model.pages[*m].entry, e) {
                expected_moved.insert((*m).clone());
            }
        }
    } else if let (true, Some(nr)) = (was_rep, &new_rep) {
        bump(&COUNTS.handovers, 1);
        let re = model.pages[nr].entry;
        for m in rest.iter().filter(|m| **m != nr) {
            if !similar(model.pages[*m].entry, re) {
                expected_moved.insert((*m).clone());
            }
        }
    }
    let moved: BTreeSet<String> = d.moved.iter().map(|m| m.key.clone()).collect();
    assert_eq!(
        moved, expected_moved,
        "{at}: deletion of {k}: the members moved off new representative {new_rep:?}"
    );
    for m in &d.moved {
        assert_ne!(
            m.cluster, d.cluster,
            "{at}: {} moved into its old cluster",
            m.key
        );
    }
    bump(&COUNTS.moved, moved.len() as u64);
    model.pages.remove(k);
    for m in &moved {
        // A moved page is placed anew: what it was judged against now is the index's to say
        // (checked for liveness and similarity by `check_index`).
        let r = ix.get(m).expect("get").expect("moved page is live");
        let similar = r.similar_to.map(|t| {
            let seq = model
                .pages
                .get(&t)
                .unwrap_or_else(|| panic!("{at}: {m} moved next to dead {t}"))
                .seq;
            (t, seq)
        });
        model.pages.get_mut(m).expect("live").similar = similar;
    }
}

fn step(ix: &Index, model: &mut Model, op: &Op, at: &str) {
    let c = corpus();
    match *op {
        Op::Insert { key: ki, entry: e } => {
            let k = key(ki);
            let before = model.pages.get(&k).cloned();
            let b = before.as_ref().map(|_| before_delete(ix, &k));
            // A replace deletes the old page first: both decisions see the pages but it.
            set_df(model, Some(&k));
            let v = ix
                .insert(&page(&k, HOST, &c.entries[e].html))
                .expect("insert");
            assert_eq!(
                v.no_main_text, c.entries[e].no_main_text,
                "{at}: no_main_text"
            );
            if let Some(old) = before
                .as_ref()
                .filter(|o| c.entries[o.entry].h() == c.entries[e].h())
            {
                bump(&COUNTS.unchanged, 1);
                assert!(
                    v.unchanged && !v.replaced,
                    "{at}: unchanged re-insert: {v:?}"
                );
                assert_eq!(
                    v.seq,
                    Some(old.seq),
                    "{at}: unchanged re-insert keeps its seq"
                );
                return;
            }
            assert!(!v.unchanged, "{at}: a changed page reported unchanged");
            assert_eq!(v.replaced, before.is_some(), "{at}: replaced");
            let seq = v.seq.expect("insert gives a seq");
            assert!(
                model.last_seq.is_none_or(|s| seq > s),
                "{at}: seq {seq} not increasing"
            );
            model.last_seq = Some(seq);
            if let Some(b) = &b {
                bump(&COUNTS.replaces, 1);
                let d = v
                    .replaced_page
                    .as_ref()
                    .expect("a replace reports its delete");
                // Sticky: the representative of other members, its new text verifying against
                // the old one (judged, as a hand-over's members, without the old page).
                let old = before.as_ref().expect("replaced").entry;
                let keeps = (b.representative == k
                    && b.members.len() > 1
                    && !c.entries[e].no_main_text
                    && similar(e, old))
                .then_some(e);
                apply_deletion(ix, model, &k, (b, keeps), d, at);
                if keeps.is_some() {
                    assert_eq!(
                        v.cluster,
                        Some(b.cluster),
                        "{at}: a sticky replace's cluster"
                    );
                    assert_eq!(
                        v.representative.as_deref(),
                        Some(k.as_str()),
                        "{at}: a sticky replace leads"
                    );
                    model.kept.insert(b.cluster);
                }
            } else {
                assert!(
                    v.replaced_page.is_none(),
                    "{at}: replaced_page of a new key"
                );
            }
            let similar = match &v.similar_to {
                Some(t) => {
                    bump(&COUNTS.duplicates, 1);
                    assert!(v.duplicate && t != &k, "{at}: {k} similar to {t}: {v:?}");
                    let p = model
                        .pages
                        .get(t)
                        .unwrap_or_else(|| panic!("{at}: similar_to dead {t}"));
                    assert!(similar(e, p.entry), "{at}: {k} not similar to {t}");
                    Some((t.clone(), p.seq))
                }
                None => {
                    assert!(!v.duplicate && v.resemble == 0.0, "{at}: {v:?}");
                    None
                }
            };
            model.pages.insert(
                k,
                Live {
                    entry: e,
                    seq,
                    similar,
                },
            );
        }
        Op::Delete { key: ki } => {
            let k = key(ki);
            if model.pages.contains_key(&k) {
                bump(&COUNTS.deletes, 1);
                set_df(model, Some(&k));
                let b = before_delete(ix, &k);
                let d = ix.delete(&k).expect("delete");
                apply_deletion(ix, model, &k, (&b, None), &d, at);
            } else {
                let r = ix.delete(&k);
                assert!(
                    matches!(r, Err(Error::NotFound(_))),
                    "{at}: delete of absent {k}: {r:?}"
                );
            }
        }
        Op::Query { entry: e } => {
            set_df(model, None);
            let v = ix
                .query(Content::Html(c.entries[e].html.as_bytes()))
                .expect("query");
            check_query(&v, e, model, &clusters_of(ix), at);
        }
        Op::Get { key: ki } => {
            let k = key(ki);
            let r = ix.get(&k).expect("get");
            assert_eq!(r.is_some(), model.pages.contains_key(&k), "{at}: get({k})");
        }
        Op::Reopen | Op::Compact | Op::CheckpointOpen => unreachable!("handled by run_case"),
    }
}

fn run_case(ops: &[Op]) {
    bump(&COUNTS.cases, 1);
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("idx");
    let mut ix = Some(Index::open(&dir, options()).expect("open"));
    let mut model = Model::default();
    for (i, op) in ops.iter().enumerate() {
        bump(&COUNTS.steps, 1);
        let at = format!("step {i} ({op:?})");
        match op {
            Op::Reopen => {
                bump(&COUNTS.reopens, 1);
                drop(ix.take());
                ix = Some(Index::open(&dir, options()).expect("reopen"));
            }
            Op::Compact => ix.as_ref().expect("open").compact().expect("compact"),
            Op::CheckpointOpen => {
                bump(&COUNTS.checkpoints, 1);
                let cp = root.path().join(format!("cp{i}"));
                ix.as_ref()
                    .expect("open")
                    .checkpoint(&cp)
                    .expect("checkpoint");
                let snap = Index::open_existing(&cp).expect("open the checkpoint");
                check_index(&snap, &mut model, &format!("{at}, in the checkpoint"));
                drop(snap);
                remove(&cp);
            }
            op => step(ix.as_ref().expect("open"), &mut model, op, &at),
        }
        check_index(ix.as_ref().expect("open"), &mut model, &at);
    }
}

fn remove(p: &Path) {
    std::fs::remove_dir_all(p).expect("remove the checkpoint");
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CASES)
}

/// Runs `cases` random cases of the model test on indexes of method `Method::NAMES[method]`.
fn agree(method: usize, cases: u32) {
    METHOD.with(|m| m.set(method));
    let c = corpus();
    let pairs = c.similar[method].iter().flatten().filter(|&&s| s).count() - c.entries.len();
    eprintln!(
        "{}: corpus of {} pages, {pairs} similar ordered pairs",
        Method::NAMES[method],
        c.entries.len()
    );
    // A fixed seed unless `PROPTEST_RNG_SEED` is set: the default run is reproducible.
    let default = Config::default();
    let rng_seed = match std::env::var_os("PROPTEST_RNG_SEED") {
        Some(_) => default.rng_seed,
        None => RngSeed::Fixed(SEED),
    };
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed,
        failure_persistence: None,
        ..default
    });
    let result = runner.run(&prop::collection::vec(op(), 20..=40), |ops| {
        run_case(&ops);
        Ok(())
    });
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    eprintln!(
        "{} done; all methods so far: cases {}, steps {}: replaces {}, unchanged re-inserts {}, \
         duplicates {}, deletes {}, hand-overs {}, sticky replaces {}, members moved {}, reopens {}, checkpoints {}",
        Method::NAMES[method],
        n(&COUNTS.cases),
        n(&COUNTS.steps),
        n(&COUNTS.replaces),
        n(&COUNTS.unchanged),
        n(&COUNTS.duplicates),
        n(&COUNTS.deletes),
        n(&COUNTS.handovers),
        n(&COUNTS.kept),
        n(&COUNTS.moved),
        n(&COUNTS.reopens),
        n(&COUNTS.checkpoints),
    );
    if let Err(e) = result {
        panic!("{}: {e}", Method::NAMES[method]);
    }
}

/// The method's index of this name in `Method::NAMES`.
fn method(name: &str) -> usize {
    Method::NAMES
        .iter()
        .position(|n| *n == name)
        .expect("a method")
}

#[test]
fn index_agrees_with_the_model() {
    agree(method("lcs"), cases());
}

// The other methods (issue #15): the same invariants, with the method's own similarity as the
// model's; a third of the cases each.

#[test]
fn shingle_index_agrees_with_the_model() {
    agree(method("shingle"), cases().div_ceil(3));
}

#[test]
fn winnow_index_agrees_with_the_model() {
    agree(method("winnow"), cases().div_ceil(3));
}

#[test]
fn punct_index_agrees_with_the_model() {
    agree(method("punct"), cases().div_ceil(3));
}

#[test]
fn agt_index_agrees_with_the_model() {
    agree(method("agt"), cases().div_ceil(3));
}

#[test]
fn imatch_index_agrees_with_the_model() {
    agree(method("imatch"), cases().div_ceil(3));
}

#[test]
fn imatch_multi_index_agrees_with_the_model() {
    agree(method("imatch_multi"), cases().div_ceil(3));
}

#[test]
fn semantic_index_agrees_with_the_model() {
    agree(method("semantic"), cases().div_ceil(3));
}

#[test]
fn tfidf_index_agrees_with_the_model() {
    agree(method("tfidf"), cases().div_ceil(3));
}

#[test]
fn topic_index_agrees_with_the_model() {
    agree(method("topic"), cases().div_ceil(3));
}

#[test]
fn simhash_index_agrees_with_the_model() {
    agree(method("simhash"), cases().div_ceil(3));
}

#[test]
fn single_pass_index_agrees_with_the_model() {
    agree(method("single_pass"), cases().div_ceil(3));
}

/// Regression (found by this model, shrunk to its minimal sequence): under `FirstSeen`, a member
/// moved off a new representative after a hand-over joins another cluster through
/// `Index::place`, and, being older than that cluster's representative, took it over (`prefers`
/// compares insertion numbers) without the cluster's other members being verified against it.
/// Here `k2` (f0v4) leaves cluster 0 when `k0` is deleted (it does not verify against the new
/// representative `k1`, f0v2) and joins `k3`'s cluster (f1v0, which it verifies against), where
/// `k4` (f1v3) does not verify against it: it must not lead there.
#[test]
fn a_moved_member_never_leads_members_that_do_not_verify_against_it() {
    let e = |f: usize, v: usize| f * VARIANTS + v;
    run_case(&[
        Op::Insert {
            key: 0,
            entry: e(0, 0),
        },
        Op::Insert {
            key: 1,
            entry: e(0, 2),
        },
        Op::Insert {
            key: 2,
            entry: e(0, 4),
        },
        Op::Insert {
            key: 3,
            entry: e(1, 0),
        },
        Op::Insert {
            key: 4,
            entry: e(1, 3),
        },
        Op::Delete { key: 0 },
    ]);
}
