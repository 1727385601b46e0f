//! `check()`: validates every invariant of the stored index, streaming.
//!
//! The writer lock is held only while a RocksDB snapshot is taken with the counters and the
//! in-memory sets; then each column family is read once, in key order, at that snapshot — no
//! per-page random reads, so the time grows with the index's size and no faster. What must agree
//! across column families (a page's posting keys and the postings, its simhash entries and the
//! tables, its key and the keys, the block counts and the pages' chrome records) is compared by
//! sums of hashed entries, bucket by bucket (a multiset hash); only the buckets whose sums differ
//! are read again, to name the pages and keys at fault. A page's posting keys are recomputed from
//! its text on rayon's pool.
//!
//! [`Index::check_sample`] checks a number of random pages through point reads instead: a quick
//! look at a large index.

mod passes;
mod report;
mod sums;

pub use report::CheckReport;

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use roaring::RoaringBitmap;
use rocksdb::{Direction, IteratorMode};

use self::sums::{Naming, Sums};
use crate::index::ids::Counters;
use crate::index::view::{Snapshot, View};
use crate::index::Index;
use crate::methods::{DocFreq, DocFreqs};
use crate::storage::codec::{self, DocId, DocRecord, PageBlocks};
use crate::storage::{self, cf, kind, meta, posting_key};
use crate::{Error, Result};

/// The state a check compares with, taken under the writer lock.
pub(super) struct Frozen<'a> {
    view: Snapshot<'a>,
    counters: Counters,
    frequent: rustc_hash::FxHashSet<[u8; 9]>,
    free_in_memory_only: bool,
    df: Option<DocFreqs>,
}

/// A page of the pages pass, with what the lockstep scans found for its id.
pub(super) struct PageRead {
    id: DocId,
    rec: DocRecord,
    text: Option<codec::TextValue>,
    blocks: Option<PageBlocks>,
}

impl Index {
    /// Checks every invariant: every live page has its key, text, postings, simhash entries and
    /// exactly one cluster, which the page → cluster map names (format 5 on); the block statistics of site chrome add up to the live pages'; every
    /// cluster's representative is a member and every member is live; no posting or simhash
    /// entry names a deleted page; every checksum verifies; the counters and free ids agree;
    /// the change feed holds every change after the trimmed ones, each decoding.
    /// Reads one snapshot, each column family once in key order (see the module docs); writes
    /// go on meanwhile.
    ///
    /// # Errors
    /// Storage errors that stop the walk; problems in the data are reported, not returned.
    pub fn check(&self) -> Result<CheckReport> {
        self.registration.check_process()?;
        let fz = self.freeze();
        let mut rep = CheckReport::default();
        let mut postings = Sums::default();
        let mut simhash = Sums::default();
        let mut keys = Sums::default();
        let mut chrome = Sums::default();
        let (live, page_cluster) = self.check_pages(
            &fz,
            &mut rep,
            (&mut postings, &mut simhash, &mut keys, &mut chrome),
            None,
        )?;
        let cluster_ids = self.check_clusters(&fz, &mut rep, &live, &page_cluster)?;
        self.check_page_clusters(&fz, &mut rep, &live, &page_cluster)?;
        self.check_postings(&fz, &mut rep, &live, &mut postings, None)?;
        self.check_simhash(&fz, &mut rep, &live, &mut simhash, None)?;
        self.check_keys(&fz, &mut rep, &live, &mut keys, None)?;
        self.check_chrome_counts(&fz, &mut rep, &mut chrome, None)?;
        self.check_counters(&fz, &mut rep, &live, &cluster_ids)?;
        self.check_changes(&fz, &mut rep)?;
        self.name_differences(&fz, &mut rep, &live, [&postings, &simhash, &keys, &chrome])?;
        Ok(rep)
    }

    /// Checks `pages` random live pages one by one, through point reads: each decodes, its key
    /// maps to it, it has its text, it is in the posting of each of its (not over-frequent) keys
    /// and in each simhash table, and its cluster holds it. Also the counters' bounds. A quick
    /// look at an index too large to check whole; the report's `sampled` says how many pages.
    ///
    /// # Errors
    /// Storage errors that stop the walk.
    pub fn check_sample(&self, pages: u64) -> Result<CheckReport> {
        self.registration.check_process()?;
        let fz = self.freeze();
        let mut rep = CheckReport::default();
        let next = fz.counters.next_doc;
        if next == 0 || pages == 0 {
            return Ok(rep);
        }
        // A fixed generator: the same pages are looked at for the same index.
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(next);
        let mut seen = HashSet::new();
        let mut tries = 0u64;
        while rep.sampled < pages && tries < pages.saturating_mul(8).max(64) {
            tries += 1;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = (x % u64::from(next)) as DocId;
            if !seen.insert(id) {
                continue;
            }
            let Some(rec) = fz.view.doc(id).or_else(|e| {
                rep.problem(e.to_string());
                Ok::<_, Error>(None)
            })?
            else {
                continue;
            };
            rep.sampled += 1;
            rep.pages += 1;
            self.check_one_page(&fz, &mut rep, id, &rec)?;
        }
        if fz.counters.live_docs > u64::from(fz.counters.next_doc) {
            rep.problem(format!(
                "page counter says {}, above the id allocator ({})",
                fz.counters.live_docs, fz.counters.next_doc
            ));
        }
        Ok(rep)
    }

    /// A snapshot with the counters and the in-memory sets, taken together under the writer
    /// lock (commits happen under it).
    fn freeze(&self) -> Frozen<'_> {
        let c = self.writer.lock();
        Frozen {
            view: Snapshot::of(self),
            counters: c.clone(),
            frequent: self.frequent.read().clone(),
            free_in_memory_only: self.free_in_memory_only.load(Ordering::Acquire),
            df: self
                .opts
                .signature
                .method
                .uses_df()
                .then(|| self.df.read().clone()),
        }
    }

    /// One page through point reads (see [`Index::check_sample`]).
    fn check_one_page(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        id: DocId,
        rec: &DocRecord,
    ) -> Result<()> {
        let v = &fz.view;
        match v.key_id(&rec.key) {
            Ok(Some(k)) if k == id => {}
            Ok(other) => rep.problem(format!(
                "page {id} has key {:?} but the key maps to {other:?}",
                rec.key
            )),
            Err(e) => rep.problem(e.to_string()),
        }
        let k = storage::id_key(id);
        let value = self.get_at(cf::TEXTS, &k, Some(v.raw()), "a text", |b| {
            codec::decode_text_value(cf::TEXTS, &k, b)
        });
        let mut wanted: Vec<[u8; 9]> = vec![posting_key(kind::CONTENT, rec.content_hash)];
        match value {
            Ok(Some(t)) => match self.posting_keys_in(id, &t) {
                Ok(ks) => wanted.extend(ks),
                Err(e) => rep.problem(e.to_string()),
            },
            Ok(None) => rep.problem(format!("page {id} has no text")),
            Err(e) => rep.problem(e.to_string()),
        }
        wanted.retain(|key| !fz.frequent.contains(key));
        wanted.sort_unstable();
        wanted.dedup();
        match v.postings(&wanted, None) {
            Ok(ps) => {
                for (key, ids) in wanted.iter().zip(ps) {
                    rep.postings += ids.len();
                    if !ids.contains(id) {
                        rep.problem(format!(
                            "page {id} is missing from posting {}",
                            crate::error::hex(key)
                        ));
                    }
                }
            }
            Err(e) => rep.problem(e.to_string()),
        }
        for t in 0..self.tables.tables {
            let key = self.tables.key(t, rec.simhash, id);
            let present =
                self.get_at(cf::SIMHASH, &key, Some(v.raw()), "a simhash entry", |_| {
                    Ok(())
                })?;
            if present.is_none() {
                rep.problem(format!("page {id} is missing from simhash table {t}"));
            }
        }
        if self.cluster_map {
            match v.cluster_of(id) {
                Ok(Some(c)) if c == rec.cluster => {}
                Ok(other) => rep.problem(format!(
                    "page {id} records cluster {} but the page → cluster map says {other:?}",
                    rec.cluster
                )),
                Err(e) => rep.problem(e.to_string()),
            }
        }
        match v.cluster(rec.cluster) {
            Ok(Some(cl)) => {
                rep.clusters += 1;
                if !cl.members.contains(id) {
                    rep.problem(format!(
                        "page {id} records cluster {} but is not its member",
                        rec.cluster
                    ));
                }
                if !cl.members.contains(cl.representative) {
                    rep.problem(format!(
                        "cluster {}: representative {} is not a member",
                        rec.cluster, cl.representative
                    ));
                }
            }
            Ok(None) => rep.problem(format!(
                "page {id} records cluster {}, which does not exist",
                rec.cluster
            )),
            Err(e) => rep.problem(e.to_string()),
        }
        if rec.seq >= fz.counters.next_seq {
            rep.problem(format!(
                "page {id} has insertion number {}, at or above the next one ({})",
                rec.seq, fz.counters.next_seq
            ));
        }
        Ok(())
    }

    /// The counters, the free ids (stored and in memory), the over-frequent set and the
    /// document frequencies against what the passes saw.
    fn check_counters(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        cluster_ids: &RoaringBitmap,
    ) -> Result<()> {
        let c = &fz.counters;
        if c.live_docs != live.len() {
            rep.problem(format!(
                "page counter says {}, found {}",
                c.live_docs,
                live.len()
            ));
        }
        if c.live_clusters != rep.clusters {
            rep.problem(format!(
                "cluster counter says {}, found {}",
                c.live_clusters, rep.clusters
            ));
        }
        if let Some(max) = live.max() {
            if max >= c.next_doc {
                rep.problem(format!(
                    "page {max} is at or above the id allocator ({})",
                    c.next_doc
                ));
            }
        }
        // Free ids: exactly the ids below each allocator that nothing live holds, stored and in
        // memory alike.
        for (what, next, live_ids, prefix, free) in [
            ("page", c.next_doc, live, meta::FREE_DOC, &c.free_docs),
            (
                "cluster",
                c.next_cluster,
                cluster_ids,
                meta::FREE_CLUSTER,
                &c.free_clusters,
            ),
        ] {
            let mut expected = RoaringBitmap::new();
            expected.insert_range(0..next);
            expected -= live_ids;
            let stored = if fz.free_in_memory_only {
                free.all()
            } else {
                self.free_ids_at(fz, prefix)?
            };
            if stored != expected {
                let missing = &expected - &stored;
                let extra = &stored - &expected;
                rep.problem(format!(
                    "free {what} ids: {} missing from the free list (first {:?}), {} listed but \
                     not free (first {:?})",
                    missing.len(),
                    missing.min(),
                    extra.len(),
                    extra.min()
                ));
            }
            if free.all() != stored {
                rep.problem(format!(
                    "the free {what} ids in memory differ from the stored ones"
                ));
            }
        }
        // The over-frequent set in memory is the column family's.
        let mut stored = rustc_hash::FxHashSet::default();
        for item in self.scan(fz, cf::FREQUENT, IteratorMode::Start) {
            let (k, _) = item?;
            match <[u8; 9]>::try_from(k.as_ref()) {
                Ok(key) => {
                    stored.insert(key);
                }
                Err(_) => rep.problem(format!(
                    "over-frequent key {} is not 9 bytes",
                    crate::error::hex(&k)
                )),
            }
        }
        if stored != fz.frequent {
            rep.problem(format!(
                "{} over-frequent fingerprints in memory, {} stored",
                fz.frequent.len(),
                stored.len()
            ));
        }
        // Document frequencies (methods on corpus statistics): the ones in memory are the word
        // postings' sizes (each posting's ids were checked above), over the live pages.
        if let Some(held) = &fz.df {
            let mut stored = self.load_df_at(Some(fz.view.raw()))?;
            stored.set_docs(c.live_docs);
            if *held != stored {
                rep.problem(format!(
                    "document frequencies in memory ({} words, {} pages) differ from the word \
                     postings ({} words, {} pages)",
                    held.words(),
                    held.docs(),
                    stored.words(),
                    stored.docs()
                ));
            }
        }
        Ok(())
    }

    /// The entries of column family `name` at the check's snapshot, from `mode` on, in key
    /// order: what each pass reads once.
    pub(super) fn scan<'s>(
        &'s self,
        fz: &'s Frozen<'_>,
        name: &str,
        mode: IteratorMode<'_>,
    ) -> impl Iterator<Item = Result<storage::Entry>> + 's {
        fz.view
            .raw()
            .iterator_cf_opt(self.cf(name), storage::scan_options(), mode)
            .map(|item| item.map_err(|e| Error::storage("checking the index", e)))
    }

    /// The free ids stored under `prefix`, at the check's snapshot.
    fn free_ids_at(&self, fz: &Frozen<'_>, prefix: &[u8]) -> Result<RoaringBitmap> {
        crate::index::ids::free_ids_from(
            prefix,
            fz.view.raw().iterator_cf(
                self.cf(cf::META),
                IteratorMode::From(prefix, Direction::Forward),
            ),
        )
    }

    /// Where the sums differ, the entries of those buckets read again from both sides and
    /// compared: each difference named as a problem.
    fn name_differences(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        sums: [&Sums; 4],
    ) -> Result<()> {
        let bad: [HashSet<usize>; 4] = [
            sums[0].differing(),
            sums[1].differing(),
            sums[2].differing(),
            sums[3].differing(),
        ];
        if bad.iter().all(HashSet::is_empty) {
            return Ok(());
        }
        let naming = Naming::new(bad);
        let mut scratch = CheckReport::default();
        let mut none: [Sums; 4] = Default::default();
        let [a, b, c, d] = &mut none;
        self.check_pages(fz, &mut scratch, (a, b, c, d), Some(&naming))?;
        self.check_postings(fz, &mut scratch, live, a, Some(&naming))?;
        self.check_simhash(fz, &mut scratch, live, b, Some(&naming))?;
        self.check_keys(fz, &mut scratch, live, c, Some(&naming))?;
        self.check_chrome_counts(fz, &mut scratch, d, Some(&naming))?;
        naming.report(rep);
        Ok(())
    }

    /// Document frequencies from the postings of kind `T` (a word's is its posting's size), at
    /// a snapshot or the latest state.
    pub(crate) fn load_df_at(&self, at: crate::index::view::At<'_>) -> Result<DocFreqs> {
        let mut df = DocFreqs::new();
        let mode = IteratorMode::From(&[kind::TERM], Direction::Forward);
        let h = self.cf(cf::POSTINGS);
        let it: Box<dyn Iterator<Item = _>> = match at {
            Some(s) => Box::new(s.iterator_cf_opt(h, storage::scan_options(), mode)),
            None => Box::new(self.db.iterator_cf_opt(h, storage::scan_options(), mode)),
        };
        for item in it {
            let (k, v) = item.map_err(|e| Error::storage("reading word postings", e))?;
            let Some(key) = <[u8; 9]>::try_from(k.as_ref()).ok() else {
                return Err(Error::corruption(cf::POSTINGS, &k, "key is not 9 bytes"));
            };
            let Some(word) = crate::index::write::term_of_key(&key) else {
                break;
            };
            let ids =
                codec::decode_posting(&v).map_err(|r| Error::corruption(cf::POSTINGS, &k, r))?;
            df.change(word, ids.len() as i64);
        }
        Ok(df)
    }
}
