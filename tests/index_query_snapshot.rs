//! A query reads one snapshot from start to end: a page deleted while the query runs, and its id
//! given to a new page meanwhile, is still the page the verdict names — never the new page that
//! took its id.
//!
//! The index stores no texts, so the query asks a text source for the text of the page it
//! verifies against; the source, on that first call, deletes the page and inserts an unrelated
//! one, which gets the freed id. Read at the latest state, the verdict would name the new page.
mod common;
use common::*;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use neardup::{Content, Index, IndexOptions, SourcedContent, SourcedPage, TextSource};
use parking_lot::Mutex;

/// Texts by key; on the first call, deletes `victim` and inserts `(newcomer, html)`.
struct MeddlingSource {
    pages: Mutex<HashMap<String, String>>,
    index: OnceLock<Weak<Index>>,
    armed: AtomicBool,
    victim: String,
    newcomer: (String, String),
    new_id: Mutex<Option<u32>>,
}

impl TextSource for MeddlingSource {
    fn content(&self, page: &SourcedPage<'_>) -> Option<SourcedContent> {
        let html = self.pages.lock().get(page.key).cloned();
        if page.key == self.victim && self.armed.swap(false, Ordering::SeqCst) {
            let ix = self.index.get().and_then(Weak::upgrade).expect("the index");
            ix.delete(&self.victim).expect("delete the victim");
            let (k, h) = &self.newcomer;
            self.pages.lock().insert(k.clone(), h.clone());
            let v = ix.insert(&page_of(k, h)).expect("insert the newcomer");
            *self.new_id.lock() = v.doc;
        }
        html.map(|h| SourcedContent::Html(h.into_bytes()))
    }
}

fn page_of<'a>(key: &'a str, html: &'a str) -> neardup::Page<'a> {
    page(key, "h.example", html)
}

#[test]
fn a_query_names_the_page_it_verified_even_when_its_id_is_reused_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let original = html(0, "Original", &article(11, 8));
    let copy = html(1, "Copy", &edited(&article(11, 8), 3));
    let unrelated = html(0, "Other", &article(99, 8));
    let source = Arc::new(MeddlingSource {
        pages: Mutex::new(HashMap::new()),
        index: OnceLock::new(),
        armed: AtomicBool::new(false),
        victim: "a".into(),
        newcomer: ("b".into(), unrelated),
        new_id: Mutex::new(None),
    });
    let opts = IndexOptions {
        store_texts: false,
        ..IndexOptions::default()
    };
    let ix = Arc::new(Index::open_with_text_source(dir.path(), opts, source.clone()).unwrap());
    source.index.set(Arc::downgrade(&ix)).unwrap();
    source.pages.lock().insert("a".into(), original.clone());
    let a = ix.insert(&page_of("a", &original)).unwrap();

    source.armed.store(true, Ordering::SeqCst);
    let v = ix.query(Content::Html(copy.as_bytes())).unwrap();

    // The source did meddle: the copy's original is gone and its id is the newcomer's.
    assert!(!source.armed.load(Ordering::SeqCst));
    assert_eq!(
        *source.new_id.lock(),
        a.doc,
        "the newcomer took the freed id"
    );
    assert_eq!(ix.id_of("a").unwrap(), None);
    // The verdict is the snapshot's: a duplicate of page "a" in its cluster, led by "a".
    assert!(v.duplicate, "{v:?}");
    assert_eq!(v.similar_to.as_deref(), Some("a"), "{v:?}");
    assert_eq!(v.representative.as_deref(), Some("a"), "{v:?}");
    assert_eq!(v.cluster, a.cluster);
    // Asked again now, the copy has nothing to match.
    let again = ix.query(Content::Html(copy.as_bytes())).unwrap();
    assert!(!again.duplicate, "{again:?}");
    assert_clean(&ix);
}
