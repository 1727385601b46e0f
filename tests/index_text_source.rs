//! An index that stores no texts and asks a `TextSource` for them gives the same verdicts and
//! clusters as one that stores them, keeps every invariant through deletes and reopening, and
//! fails cleanly when the source cannot help.
mod common;
use common::*;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use neardup::{Error, Index, IndexOptions, SourcedContent, TextSource};
use parking_lot::Mutex;

#[derive(Default)]
struct MapSource {
    pages: Mutex<HashMap<String, String>>,
    refuse: AtomicBool,
    calls: AtomicUsize,
}

impl TextSource for MapSource {
    fn content(&self, key: &str) -> Option<SourcedContent> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if self.refuse.load(Ordering::Relaxed) {
            return None;
        }
        self.pages
            .lock()
            .get(key)
            .map(|h| SourcedContent::Html(h.clone().into_bytes()))
    }
}

fn external() -> IndexOptions {
    IndexOptions {
        store_texts: false,
        ..IndexOptions::default()
    }
}

/// Pages in families: edited copies of a few articles under different templates, plus unrelated.
fn corpus() -> Vec<(String, String)> {
    let mut docs = Vec::new();
    for f in 0..6u64 {
        let a = article(100 + f, 8);
        for i in 0..4u64 {
            docs.push((
                format!("f{f}-{i}"),
                html(i as usize, &format!("T{f}"), &edited(&a, f * 10 + i)),
            ));
        }
    }
    for u in 0..6u64 {
        docs.push((format!("u{u}"), html(0, "U", &article(500 + u, 6))));
    }
    docs
}

#[test]
fn same_verdicts_as_stored_texts_and_clean_through_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let stored = open(&dir.path().join("stored"));
    let source = Arc::new(MapSource::default());
    let ext =
        Index::open_with_text_source(dir.path().join("ext"), external(), source.clone()).unwrap();
    for (k, h) in corpus() {
        source.pages.lock().insert(k.clone(), h.clone());
        let a = stored.insert(&page(&k, "h", &h)).unwrap();
        let b = ext.insert(&page(&k, "h", &h)).unwrap();
        assert_eq!(
            (a.duplicate, a.cluster, &a.representative, &a.similar_to),
            (b.duplicate, b.cluster, &b.representative, &b.similar_to),
            "{k}"
        );
        assert_eq!((a.resemble, a.contain), (b.resemble, b.contain), "{k}");
    }
    assert!(source.calls.load(Ordering::Relaxed) > 0);
    assert_clean(&ext);

    // Deleting representatives re-verifies members through the source, as with stored texts.
    for key in ["f0-0", "f3-0", "u2"] {
        stored.delete(key).unwrap();
        ext.delete(key).unwrap();
        source.pages.lock().remove(key);
    }
    for (k, _) in corpus() {
        assert_eq!(
            stored.representative_of(&k).unwrap(),
            ext.representative_of(&k).unwrap(),
            "{k}"
        );
    }
    assert_clean(&ext);

    // Without texts the index is smaller.
    let bytes = |ix: &Index| -> u64 {
        ix.stats()
            .unwrap()
            .bytes
            .iter()
            .filter(|(cf, _)| cf == "texts")
            .map(|(_, b)| b)
            .sum()
    };
    ext.flush().unwrap();
    stored.flush().unwrap();
    assert!(
        bytes(&ext) < bytes(&stored),
        "{} vs {}",
        bytes(&ext),
        bytes(&stored)
    );

    // Reopened, with the source again: same state, still clean.
    drop(ext);
    let ext =
        Index::open_with_text_source(dir.path().join("ext"), external(), source.clone()).unwrap();
    assert_eq!(ext.len(), stored.len());
    assert_clean(&ext);
    // The setting is stored: texts on is another configuration.
    drop(ext);
    assert!(matches!(
        Index::open(dir.path().join("ext"), IndexOptions::default()),
        Err(Error::IncompatibleConfig { .. })
    ));
}

#[test]
fn a_source_that_cannot_help_fails_the_call_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let source = Arc::new(MapSource::default());
    let ix = Index::open_with_text_source(dir.path(), external(), source.clone()).unwrap();
    let a = article(7, 8);
    let first = html(0, "A", &a);
    source.pages.lock().insert("a0".into(), first.clone());
    ix.insert(&page("a0", "h", &first)).unwrap();

    let second = html(1, "A", &edited(&a, 3));
    source.refuse.store(true, Ordering::Relaxed);
    let err = ix.insert(&page("a1", "h", &second)).unwrap_err();
    assert!(
        matches!(err, Error::TextUnavailable { ref key, .. } if key == "a0"),
        "{err}"
    );
    assert_eq!(ix.len(), 1);

    // Another version of the page than the one inserted is caught by its content hash.
    source.refuse.store(false, Ordering::Relaxed);
    source
        .pages
        .lock()
        .insert("a0".into(), html(0, "A", &article(8, 8)));
    let err = ix.insert(&page("a1", "h", &second)).unwrap_err();
    assert!(matches!(err, Error::TextUnavailable { .. }), "{err}");
    assert_eq!(ix.len(), 1);

    source.pages.lock().insert("a0".into(), first);
    let v = ix.insert(&page("a1", "h", &second)).unwrap();
    assert!(v.duplicate);
    assert_clean(&ix);

    // An exact copy needs no text: the content hash decides.
    source.refuse.store(true, Ordering::Relaxed);
    let again = html(0, "A", &a);
    let v = ix.insert(&page("a2", "h", &again)).unwrap();
    assert!(v.duplicate && v.exact);
}

#[test]
fn without_a_source_the_index_still_opens_for_maintenance() {
    let dir = tempfile::tempdir().unwrap();
    let source = Arc::new(MapSource::default());
    {
        let ix = Index::open_with_text_source(dir.path(), external(), source.clone()).unwrap();
        for (k, h) in corpus().into_iter().take(8) {
            source.pages.lock().insert(k.clone(), h.clone());
            ix.insert(&page(&k, "h", &h)).unwrap();
        }
    }
    // check, export and delete of a member need no text.
    let ix = Index::open_existing(dir.path()).unwrap();
    assert!(!ix.options().store_texts);
    assert_clean(&ix);
    ix.delete("f0-3").unwrap();
    assert_clean(&ix);
    // Verification does, and says so.
    let err = ix.delete("f0-0").unwrap_err();
    assert!(matches!(err, Error::TextUnavailable { .. }), "{err}");
    assert_eq!(ix.len(), 7);
    assert_clean(&ix);
}
