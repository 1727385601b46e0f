//! An index that stores no texts and asks a `TextSource` for them gives the same verdicts and
//! clusters as one that stores them, keeps every invariant through deletes and reopening, and
//! fails cleanly when the source cannot help.
mod common;
use common::*;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use neardup::{Error, Index, IndexOptions, SourcedContent, SourcedPage, TextSource};
use parking_lot::Mutex;

#[derive(Default)]
struct MapSource {
    pages: Mutex<HashMap<String, String>>,
    refuse: AtomicBool,
    calls: AtomicUsize,
}

impl TextSource for MapSource {
    fn content(&self, page: &SourcedPage<'_>) -> Option<SourcedContent> {
        let key = page.key;
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

/// A store that keeps every version of a page answers with the one the index holds, named by
/// its insertion number; and the inserting threads ask the source at once, outside the
/// index's writer lock.
#[test]
fn a_versioned_store_is_asked_for_the_version_held_and_concurrently() {
    #[derive(Default)]
    struct Versions {
        /// The engine writes a page's newest version before inserting it…
        latest: Mutex<HashMap<String, String>>,
        /// …and notes which insertion number the index gave it after.
        by_seq: Mutex<HashMap<(String, u64), String>>,
        in_flight: AtomicUsize,
        most_at_once: AtomicUsize,
        by_seq_hits: AtomicUsize,
    }
    impl TextSource for Versions {
        fn content(&self, page: &SourcedPage<'_>) -> Option<SourcedContent> {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_at_once.fetch_max(now, Ordering::SeqCst);
            // A slow store.
            std::thread::sleep(std::time::Duration::from_millis(5));
            let noted = self
                .by_seq
                .lock()
                .get(&(page.key.to_string(), page.seq))
                .cloned();
            if noted.is_some() {
                self.by_seq_hits.fetch_add(1, Ordering::SeqCst);
            }
            // Not noted yet (inserted a moment ago): its newest version is the one held.
            let got = noted.or_else(|| self.latest.lock().get(page.key).cloned());
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            got.map(|h| SourcedContent::Html(h.into_bytes()))
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let src = Arc::new(Versions::default());
    let ix = Index::open_with_text_source(dir.path(), external(), src.clone()).unwrap();
    let insert = |key: &str, html: &str| {
        src.latest.lock().insert(key.to_string(), html.to_string());
        let v = ix.insert(&page(key, "h.example", html)).unwrap();
        src.by_seq
            .lock()
            .insert((key.to_string(), v.seq.unwrap()), html.to_string());
        v
    };
    let family = |f: u64, v: u64| html(v as usize % 3, "T", &edited(&article(300 + f, 6), v));
    // Four engine threads insert families of near copies, and replace some pages with a new
    // version while the others verify against the old one.
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let insert = &insert;
            s.spawn(move || {
                for f in 0..3u64 {
                    for v in 0..3u64 {
                        insert(&format!("f{f}-v{v}-t{t}"), &family(f, v + 10 * t));
                    }
                    insert(&format!("f{f}-v0-t{t}"), &family(f, 99 + t));
                }
            });
        }
    });
    // Re-verification after deleting representatives asks for the versions held.
    for f in 0..3u64 {
        let (_, rep) = ix
            .representative_of(&format!("f{f}-v1-t0"))
            .unwrap()
            .unwrap();
        ix.delete(&rep).unwrap();
    }
    assert_clean(&ix);
    assert!(src.by_seq_hits.load(Ordering::SeqCst) > 0);
    assert!(
        src.most_at_once.load(Ordering::SeqCst) > 1,
        "the inserting threads asked the source one at a time"
    );
}

/// Every method reads its texts from the source as it would from the index (the topic method's
/// text keeps the page's title and blocks on lines of their own; the methods on corpus
/// statistics count the words of the source's texts).
#[test]
fn every_method_gives_the_same_verdicts_from_a_source() {
    for name in neardup::Method::NAMES {
        let method = neardup::Method::from_name(name).unwrap();
        let with = |store_texts: bool| IndexOptions {
            store_texts,
            signature: neardup::SignatureConfig {
                method: method.clone(),
                ..Default::default()
            },
            ..IndexOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let stored = Index::open(dir.path().join("stored"), with(true)).unwrap();
        let source = Arc::new(MapSource::default());
        let ext = Index::open_with_text_source(dir.path().join("ext"), with(false), source.clone())
            .unwrap();
        let docs = corpus();
        for (k, h) in &docs {
            source.pages.lock().insert(k.clone(), h.clone());
            let a = stored.insert(&page(k, "h", h)).unwrap();
            let b = ext.insert(&page(k, "h", h)).unwrap();
            assert_eq!(
                (a.duplicate, a.cluster, &a.representative, &a.similar_to),
                (b.duplicate, b.cluster, &b.representative, &b.similar_to),
                "{name}: {k}"
            );
        }
        for (k, _) in docs.iter().step_by(5) {
            let (a, b) = (stored.delete(k).unwrap(), ext.delete(k).unwrap());
            assert_eq!(
                (&a.representative, a.moved.len()),
                (&b.representative, b.moved.len()),
                "{name}: delete {k}"
            );
        }
        assert_clean(&ext);
    }
}
