//! Offline compaction of a snapshot: a checkpoint taken while the index is in use compacts into a
//! fresh index whose export and check agree with the source; the source is not modified.
mod common;
use common::*;
use neardup::Index;

fn export(ix: &Index) -> Vec<(String, String)> {
    let mut v = Vec::new();
    ix.export(|k, r| v.push((k.to_string(), r.to_string())))
        .unwrap();
    v
}

#[test]
fn checkpoint_then_compact_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let ix = open(&dir.path().join("live"));
    for a in 0..8u64 {
        let base = article(300 + a, 8);
        for v in 0..3u64 {
            let h = html(v as usize, "t", &edited(&base, v));
            ix.insert(&page(&format!("a{a}-v{v}"), "h", &h)).unwrap();
        }
    }
    for k in ["a0-v0", "a1-v2", "a5-v1"] {
        ix.delete(k).unwrap();
    }
    let snap = dir.path().join("snap");
    ix.checkpoint(&snap).unwrap();
    // The live index moves on; the snapshot does not.
    ix.insert(&page("later", "h", &html(0, "t", &article(999, 6))))
        .unwrap();
    let expected: Vec<(String, String)> = export(&ix)
        .into_iter()
        .filter(|(k, _)| k != "later")
        .collect();

    let before = neardup::dir_bytes(&snap);
    let out = dir.path().join("compacted");
    let report = Index::compact_snapshot(&snap, &out).unwrap();
    assert!(report.check.is_clean(), "{:?}", report.check.problems);
    assert_eq!(report.pages, 21);
    assert!(report.bytes_after > 0);
    assert_eq!(
        neardup::dir_bytes(&snap),
        before,
        "the snapshot is not modified"
    );

    let compacted = Index::open_existing(&out).unwrap();
    assert_eq!(export(&compacted), expected);
    assert_clean(&compacted);
    // The compacted index is a working index.
    let v = compacted
        .insert(&page(
            "new",
            "h",
            &html(2, "t", &edited(&article(303, 8), 7)),
        ))
        .unwrap();
    assert!(v.duplicate);
    assert_eq!(v.representative.as_deref(), Some("a3-v0"));

    // Refusals: an existing target, a source without an index.
    assert!(matches!(
        Index::compact_snapshot(&snap, &out),
        Err(neardup::Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Index::compact_snapshot(dir.path().join("none"), dir.path().join("x")),
        Err(neardup::Error::InvalidArgument(_))
    ));
}

/// The database of an index, opened with RocksDB alone (every column family it has).
fn raw_db(path: &std::path::Path) -> rocksdb::DB {
    let cfs = rocksdb::DB::list_cf(&rocksdb::Options::default(), path).unwrap();
    rocksdb::DB::open_cf(&rocksdb::Options::default(), path, cfs).unwrap()
}

/// The page → cluster map (format 5) is checked against the page records: an entry naming
/// another cluster, one of a deleted page and a missing one are each reported; `compact`
/// writes it anew from the records.
#[test]
fn check_finds_a_page_cluster_map_out_of_step_and_compact_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    {
        let ix = open(&live);
        for i in 0..3 {
            ix.insert(&page(
                &format!("p{i}"),
                "h",
                &html(i, "t", &article(10 + i as u64, 6)),
            ))
            .unwrap();
        }
        assert!(ix.check().unwrap().is_clean());
        ix.flush().unwrap();
    }
    {
        let db = raw_db(&live);
        let map = db.cf_handle("page_clusters").unwrap();
        db.put_cf(map, 0u32.to_be_bytes(), 77u32.to_be_bytes())
            .unwrap();
        db.put_cf(map, 9u32.to_be_bytes(), 0u32.to_be_bytes())
            .unwrap();
        db.delete_cf(map, 2u32.to_be_bytes()).unwrap();
        db.flush_cf(map).unwrap();
    }
    let problems = {
        let ix = Index::open_existing(&live).unwrap();
        let report = ix.check().unwrap();
        assert!(!report.is_clean());
        report.problems.join("\n")
    };
    for want in [
        "the page → cluster map puts page 0 in cluster 77",
        "the page → cluster map names deleted page 9",
        "the page → cluster map has 2 of the 3 live pages",
    ] {
        assert!(problems.contains(want), "{want:?} not in {problems}");
    }
    // The snapshot's map is not copied: it is built from the records.
    let snap = dir.path().join("snap");
    Index::open_existing(&live)
        .unwrap()
        .checkpoint(&snap)
        .unwrap();
    let out = dir.path().join("out");
    let report = Index::compact_snapshot_checked(&snap, &out).unwrap();
    assert!(report.check.is_clean(), "{:?}", report.check);
}

#[test]
fn corrupted_snapshot_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    {
        let ix = open(&live);
        ix.insert(&page("a", "h", &html(0, "t", &article(1, 6))))
            .unwrap();
        ix.flush().unwrap();
    }
    // Corrupt the page record by writing a bad value straight into RocksDB.
    {
        let db = raw_db(&live);
        let docs = db.cf_handle("docs").unwrap();
        db.put_cf(docs, 0u32.to_be_bytes(), b"\xD1garbage-with-a-bad-crc")
            .unwrap();
        db.flush_cf(docs).unwrap();
    }
    let out = dir.path().join("out");
    let r = Index::compact_snapshot(&live, &out);
    assert!(
        matches!(r, Err(neardup::Error::Corruption { cf: "docs", .. })),
        "{r:?}"
    );
    assert!(!out.exists(), "no half-written index is left behind");
}

fn blob_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "blob"))
        })
        .count()
}

#[test]
fn texts_live_in_blob_files_through_flushes_deletes_and_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let ix = open(&live);
    for a in 0..6u64 {
        let h = html(0, "t", &article(700 + a, 40));
        ix.insert(&page(&format!("a{a}"), "h", &h)).unwrap();
    }
    ix.flush().unwrap();
    assert!(blob_files(&live) > 0, "the flushed texts are in blob files");
    // A near duplicate is verified against a text read from a blob file.
    let near = html(1, "t", &edited(&article(702, 40), 3));
    let v = ix.query(neardup::Content::Html(near.as_bytes())).unwrap();
    assert!(v.duplicate);
    assert_eq!(v.similar_to.as_deref(), Some("a2"));
    // Deleted pages leave blob garbage; a full compaction gives its space back, and nothing
    // else changes.
    let texts_bytes = |ix: &Index| {
        let stats = ix.stats().unwrap();
        stats.bytes.iter().find(|(n, _)| n == "texts").unwrap().1
    };
    ix.compact().unwrap();
    let before = texts_bytes(&ix);
    for k in ["a0", "a1", "a3", "a4"] {
        ix.delete(k).unwrap();
    }
    ix.compact().unwrap();
    assert_clean(&ix);
    let after = texts_bytes(&ix);
    assert!(
        after * 2 < before,
        "four of six texts deleted: {before} → {after} bytes"
    );
    let expected = export(&ix);
    let snap = dir.path().join("snap");
    ix.checkpoint(&snap).unwrap();
    drop(ix);
    let reopened = Index::open_existing(&live).unwrap();
    assert_eq!(export(&reopened), expected);
    // Offline compaction writes the texts into the new index's blob files.
    let out = dir.path().join("compacted");
    let report = Index::compact_snapshot_checked(&snap, &out).unwrap();
    assert!(report.check.is_clean(), "{:?}", report.check.problems);
    assert!(blob_files(&out) > 0);
    let compacted = Index::open_existing(&out).unwrap();
    assert_eq!(export(&compacted), expected);
    let v = compacted
        .query(neardup::Content::Html(near.as_bytes()))
        .unwrap();
    assert_eq!(v.similar_to.as_deref(), Some("a2"));
}
