//! Indexes written by earlier builds open, check and answer as those builds did (issue #31,
//! item 9; FORMAT.md). Each fixture under `tests/fixtures/` is a RocksDB checkpoint written by
//! the commit that wrote its format, with the answers that build gave from it (its export, page
//! and cluster counts, query verdicts); `tests/fixtures/README.md` and
//! `scripts/make-fixtures.sh` say how each was made. The test works on copies.
//!
//! - Format 3 (its first build; a5fff82, with LCS and with another method; its last, texts in
//!   blob files): a read-only handle checks clean, gives the recorded answers and writes nothing; a writer does
//!   too, then inserts and deletes, and the index checks clean after a reopen. Compacted, it
//!   becomes format 6 (the simhash tables cut anew, the page → cluster map built) with the same
//!   answers.
//! - Format 4 (its last build, 88ead35, without the page → cluster map): the same, read-only
//!   without the `page_clusters` column family; a writer keeps format 4; compacted, format 6.
//! - Format 2 (the first build, without the `chrome` column family, and the last): the same,
//!   with the upgrade to format 3 when it is opened for writing (the ids the old build never gave
//!   out again become free and the lowest is given to the next page).
//! - Format 1: refused with `IncompatibleFormat`; a refused open (an unreadable format, another
//!   configuration) writes nothing, so the build that wrote the index still opens it.
mod common;
use common::{assert_clean, gz_lines};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use neardup::{ChangeKind, Content, Error, Index, IndexOptions, Page, RepresentativePolicy};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A copy of a fixture's database in a new temporary directory: `(guard, database path)`.
fn copy_db(name: &str) -> (tempfile::TempDir, PathBuf) {
    let from = fixtures().join(name).join("db");
    let tmp = tempfile::tempdir().unwrap();
    let to = tmp.path().join("db");
    std::fs::create_dir(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    (tmp, to)
}

/// Every file of a directory with its bytes and modification time.
fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let modified = e.metadata().unwrap().modified().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (std::fs::read(e.path()).unwrap(), modified),
            )
        })
        .collect()
}

/// Asserts that a directory holds the same files, bytes and modification times as before.
fn assert_untouched(dir: &Path, before: &BTreeMap<String, (Vec<u8>, SystemTime)>) {
    let after = files(dir);
    let names = |m: &BTreeMap<String, (Vec<u8>, SystemTime)>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&after), names(before), "files added or removed");
    for (name, (bytes, modified)) in before {
        let (b, m) = &after[name];
        assert!(b == bytes, "{name} was rewritten");
        assert_eq!(m, modified, "{name} was touched");
    }
}

/// A page of `tests/fixtures/queries.jsonl.gz` (lines of the bench's dev corpus).
struct QueryPage {
    key: String,
    host: String,
    time: i64,
    html: String,
}

impl QueryPage {
    fn page(&self) -> Page<'_> {
        Page {
            key: &self.key,
            host: &self.host,
            time: self.time,
            content: Content::Html(self.html.as_bytes()),
        }
    }
}

fn query_pages() -> Vec<QueryPage> {
    gz_lines(&fixtures().join("queries.jsonl.gz"))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l).unwrap();
            QueryPage {
                key: v["id"].as_str().unwrap().to_string(),
                host: v["host"].as_str().unwrap().to_string(),
                time: v["time"].as_i64().unwrap(),
                html: v["html"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

/// What the writing build answered from a fixture (its `expected/` files).
struct Expected {
    /// `export`, sorted: `(page, the page it was judged a near duplicate of)`.
    export: Vec<(String, String)>,
    pages: u64,
    clusters: u64,
    /// `query` of `queries.jsonl.gz`, one JSON object a page.
    queries: Vec<serde_json::Value>,
}

fn expected(name: &str) -> Expected {
    let dir = fixtures().join(name).join("expected");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let export = read("export.tsv")
        .lines()
        .map(|l| {
            let (a, b) = l.split_once('\t').unwrap();
            (a.to_string(), b.to_string())
        })
        .collect();
    let stats: serde_json::Value = serde_json::from_str(&read("stats.json")).unwrap();
    let queries = read("query.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Expected {
        export,
        pages: stats["pages"].as_u64().unwrap(),
        clusters: stats["clusters"].as_u64().unwrap(),
        queries,
    }
}

fn export_sorted(ix: &Index) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    ix.export(|k, t| pairs.push((k.to_string(), t.to_string())))
        .unwrap();
    pairs.sort();
    pairs
}

/// The index checks clean and gives the answers its writing build gave.
fn assert_answers(ix: &Index, e: &Expected) {
    assert_clean(ix);
    assert_eq!(ix.len(), e.pages);
    assert_eq!(ix.stats().unwrap().clusters, e.clusters);
    assert_eq!(export_sorted(ix), e.export);
    let pages = query_pages();
    assert_eq!(pages.len(), e.queries.len());
    for (q, want) in pages.iter().zip(&e.queries) {
        assert_eq!(want["key"].as_str(), Some(q.key.as_str()));
        let v = ix.query_page(&q.page()).unwrap();
        let context = format!("query {}: now {v:?}, then {want}", q.key);
        assert_eq!(Some(v.duplicate), want["duplicate"].as_bool(), "{context}");
        assert_eq!(
            v.representative.as_deref(),
            want["representative"].as_str(),
            "{context}"
        );
    }
}

/// Read-only: clean, the recorded answers, and not a byte written.
fn read_only(name: &str) {
    let e = expected(name);
    let (_tmp, db) = copy_db(name);
    let before = files(&db);
    {
        let ix = Index::open_read_only(&db).unwrap();
        assert!(ix.is_read_only());
        assert_answers(&ix, &e);
        assert_history_before_the_feed(&ix);
        assert!(matches!(
            ix.delete(&e.export[0].0),
            Err(Error::ReadOnly(..))
        ));
    }
    assert_untouched(&db, &before);
}

/// An index written before the change feed: its history is change 1, trimmed; nothing after.
fn assert_history_before_the_feed(ix: &Index) {
    assert_eq!(ix.last_change(), 1);
    assert!(matches!(
        ix.changes_since(0),
        Err(Error::ChangesTrimmed {
            since: 0,
            trimmed: 1
        })
    ));
    assert_eq!(ix.changes_since(1).unwrap().count(), 0);
}

/// The lowest id below the page high-water mark that no live page holds.
fn lowest_free_page_id(ix: &Index) -> Option<u32> {
    let mut held: Vec<u32> = ix
        .keys()
        .unwrap()
        .map(|k| ix.get(&k.unwrap().0).unwrap().unwrap().doc)
        .collect();
    held.sort_unstable();
    (0..ix.stats().unwrap().page_ids).find(|id| held.binary_search(id).is_err())
}

/// Opened for writing (format 2 is upgraded then): clean and the recorded answers; then a new
/// page takes the lowest free id, a representative's delete hands its cluster over, and the
/// index checks clean, after a reopen too, for a writer and a reader.
fn written(name: &str) {
    let e = expected(name);
    let (_tmp, db) = copy_db(name);
    let pages = query_pages();
    // A variant of a stored family (dev line 248, of the family of line 238).
    let new = &pages[2];
    let gone;
    {
        let ix = Index::open_existing(&db).unwrap();
        assert!(!ix.is_read_only());
        assert_answers(&ix, &e);
        let free = lowest_free_page_id(&ix).expect("the fixture's deletes left free ids");
        let ids = ix.stats().unwrap().page_ids;
        let v = ix.insert(&new.page()).unwrap();
        assert!(v.duplicate, "{v:?}");
        assert_eq!(v.doc, Some(free), "the lowest free id is given out first");
        // Insertion numbers start at the page allocator at the latest (format 2: a page's
        // number is its id).
        assert!(v.seq >= Some(u64::from(ids)), "{v:?}");
        assert_eq!(ix.stats().unwrap().page_ids, ids);
        // The representative of the largest cluster leaves; another member leads it.
        let mut clusters: Vec<_> = ix.clusters().unwrap().map(|c| c.unwrap()).collect();
        clusters.sort_by_key(|c| (std::cmp::Reverse(c.size), c.cluster));
        let big = &clusters[0];
        assert!(big.size > 2, "{clusters:?}");
        gone = big.representative.clone();
        let d = ix.delete(&gone).unwrap();
        assert!(d.was_representative);
        assert!(d.representative.is_some(), "{d:?}");
        assert_clean(&ix);
        // The feed started at this open, after the fixture's history (change 1, trimmed).
        assert!(matches!(
            ix.changes_since(0),
            Err(Error::ChangesTrimmed { trimmed: 1, .. })
        ));
        let kinds: Vec<ChangeKind> = ix
            .changes_since(1)
            .unwrap()
            .map(|c| c.unwrap().kind)
            .collect();
        assert!(
            matches!(&kinds[0], ChangeKind::Inserted(p) if p.key == new.key),
            "{kinds:?}"
        );
        assert!(
            matches!(&kinds[1], ChangeKind::Deleted { key, .. } if *key == gone),
            "{kinds:?}"
        );
        assert!(kinds[2..].iter().any(
            |k| matches!(k, ChangeKind::RepresentativeChanged { previous, .. } if *previous == gone)
        ));
    }
    let ix = Index::open_existing(&db).unwrap();
    assert_clean(&ix);
    assert_eq!(ix.len(), e.pages);
    assert!(ix.get(&new.key).unwrap().is_some());
    assert_eq!(ix.get(&gone).unwrap(), None);
    let export = export_sorted(&ix);
    drop(ix);
    let ro = Index::open_read_only(&db).unwrap();
    assert_clean(&ro);
    assert_eq!(export_sorted(&ro), export);
}

#[test]
fn format_3_last_build_reads_and_writes() {
    read_only("v3-c57f5fd");
    written("v3-c57f5fd");
}

#[test]
fn format_3_with_add_operands_reads_and_writes() {
    read_only("v3-a5fff82");
    written("v3-a5fff82");
}

#[test]
fn format_3_today_under_another_method_reads_and_writes() {
    read_only("v3-a5fff82-shingle");
    written("v3-a5fff82-shingle");
}

/// The format version stored in a database (read with RocksDB alone).
fn stored_format(db: &Path) -> u32 {
    let d = rocksdb::DB::open_cf_for_read_only(&rocksdb::Options::default(), db, ["meta"], false)
        .unwrap();
    let v = d
        .get_cf(d.cf_handle("meta").unwrap(), b"format_version")
        .unwrap()
        .unwrap();
    u32::from_be_bytes(v[..4].try_into().unwrap())
}

/// Compacted, a format 3 or 4 index becomes format 6 (the current one): a format 3 index's simhash tables are cut
/// anew, ten tables of block pairs (FORMAT.md "simhash"), and the page → cluster map is built
/// from the page records (FORMAT.md "page_clusters"); it checks clean (the map against the
/// records too), gives the recorded answers, and a writer goes on from it.
fn compacts_into_current_format(name: &str, from_format: u32) {
    let e = expected(name);
    let (_tmp, db) = copy_db(name);
    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("db");
    let report = Index::compact_snapshot_checked(&db, &to).unwrap();
    assert!(report.check.is_clean(), "{:?}", report.check);
    assert_eq!((stored_format(&db), stored_format(&to)), (from_format, 6));
    {
        let ro = Index::open_read_only(&to).unwrap();
        assert_answers(&ro, &e);
        assert_clean(&ro);
        assert_history_before_the_feed(&ro);
    }
    let ix = Index::open_existing(&to).unwrap();
    assert_answers(&ix, &e);
    let v = ix.insert(&query_pages()[2].page()).unwrap();
    assert!(v.duplicate, "{v:?}");
    assert_clean(&ix);
}

#[test]
fn format_3_compacts_into_format_5() {
    compacts_into_current_format("v3-c57f5fd", 3);
}

#[test]
fn format_4_compacts_into_format_5() {
    compacts_into_current_format("v4-88ead35", 4);
}

#[test]
fn format_4_last_build_reads_and_writes() {
    read_only("v4-88ead35");
    written("v4-88ead35");
    // A writer gave it the `page_clusters` column family, empty: it stays format 4, read
    // through its page records.
    let (_tmp, db) = copy_db("v4-88ead35");
    drop(Index::open_existing(&db).unwrap());
    assert_eq!(stored_format(&db), 4);
}

#[test]
fn format_3_first_build_reads_and_writes() {
    read_only("v3-cba90ae");
    written("v3-cba90ae");
}

#[test]
fn format_2_last_build_reads_and_upgrades() {
    read_only("v2-33b354b");
    written("v2-33b354b");
}

#[test]
fn format_2_first_build_upgrades() {
    // Written before the `chrome` column family existed: a read-only handle cannot open it (it
    // says to open it for writing once) and writes nothing; a writer upgrades it.
    let (_tmp, db) = copy_db("v2-1c79d9d");
    let before = files(&db);
    let r = Index::open_read_only(&db);
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("`chrome`")),
        "{:?}",
        r.err()
    );
    assert_untouched(&db, &before);
    written("v2-1c79d9d");
}

#[test]
fn format_1_is_refused() {
    let (_tmp, db) = copy_db("v1-3dd01c6");
    let before = files(&db);
    // Refused, and nothing written (but see `a_refused_open_writes_nothing` for the error).
    assert!(Index::open_read_only(&db).is_err());
    assert_untouched(&db, &before);
    let incompatible = |r: Result<Index, Error>| {
        assert!(
            matches!(
                r,
                Err(Error::IncompatibleFormat {
                    found: 1,
                    supported: 6
                })
            ),
            "{:?}",
            r.err()
        )
    };
    incompatible(Index::open_existing(&db));
    let opts = IndexOptions {
        create_if_missing: false,
        ..IndexOptions::default()
    };
    incompatible(Index::open(&db, opts));
    // Still format 1: refused again, whatever the first refusals did to the directory.
    incompatible(Index::open_read_only(&db));
}

/// A refused open should leave an old index as its own build can still open it. Today the
/// write opens create the missing `chrome` column family (and a new manifest) before they
/// check the format or the configuration, so the builds of 3dd01c6 and 1c79d9d can no longer
/// open the index they wrote ("Column families not opened: chrome"); and a read-only open of a
/// format 1 index says "open it for writing once" instead of `IncompatibleFormat`.
#[test]
fn a_refused_open_writes_nothing() {
    let (_tmp, db) = copy_db("v1-3dd01c6");
    let before = files(&db);
    let r = Index::open_read_only(&db);
    assert!(
        matches!(r, Err(Error::IncompatibleFormat { found: 1, .. })),
        "{:?}",
        r.err()
    );
    let r = Index::open_existing(&db);
    assert!(
        matches!(r, Err(Error::IncompatibleFormat { found: 1, .. })),
        "{:?}",
        r.err()
    );
    assert_untouched(&db, &before);

    let (_tmp, db) = copy_db("v2-1c79d9d");
    let before = files(&db);
    let opts = IndexOptions {
        create_if_missing: false,
        representative: RepresentativePolicy::LongestText,
        ..IndexOptions::default()
    };
    let r = Index::open(&db, opts);
    assert!(
        matches!(&r, Err(Error::IncompatibleConfig { field, .. }) if field == "representative"),
        "{:?}",
        r.err()
    );
    assert_untouched(&db, &before);
}
