//! `check()`: validates every invariant of the stored index and reports what is wrong.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use roaring::RoaringBitmap;
use rocksdb::IteratorMode;
use serde::{Deserialize, Serialize};

use crate::index::{Index, View};
use crate::methods::DocFreq;
use crate::storage::codec::{self, ClusterId, ClusterRecord, DocId, DocRecord};
use crate::storage::{self, cf, kind, posting_key};
use crate::{Error, Result};

/// At most this many problems are listed (all are counted).
const MAX_LISTED: usize = 200;

/// What [`Index::check`] found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Live pages seen.
    pub pages: u64,
    /// Clusters seen.
    pub clusters: u64,
    /// Posting entries seen.
    pub postings: u64,
    /// Number of problems found.
    pub problem_count: u64,
    /// The first problems, in words.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_clean(&self) -> bool {
        self.problem_count == 0
    }

    pub(crate) fn problem(&mut self, p: String) {
        self.problem_count += 1;
        if self.problems.len() < MAX_LISTED {
            self.problems.push(p);
        }
    }
}

impl Index {
    /// Checks every invariant: every live page has its key, text, postings, simhash entries and
    /// exactly one cluster; the block statistics of site chrome add up to the live pages'; every cluster's representative is a member and every member is live;
    /// no posting or simhash entry names a deleted page; every checksum verifies; the counters
    /// agree. Takes the writer lock, so it sees one state.
    ///
    /// # Errors
    /// Storage errors that stop the walk; problems in the data are reported, not returned.
    pub fn check(&self) -> Result<CheckReport> {
        self.registration.check_process()?;
        let counters = self.writer.lock();
        let mut rep = CheckReport::default();
        let it_err = |e| Error::storage("checking the index", e);
        let frequent = self.frequent.read().clone();

        // Pages.
        let mut live = RoaringBitmap::new();
        let mut seqs: HashMap<u64, DocId> = HashMap::new();
        let mut page_cluster: HashMap<DocId, ClusterId> = HashMap::new();
        let mut page_host: HashMap<DocId, String> = HashMap::new();
        for item in self.db.iterator_cf(self.cf(cf::DOCS), IteratorMode::Start) {
            let (k, v) = item.map_err(it_err)?;
            let id = match storage::decode_u32(cf::DOCS, &k, &k) {
                Ok(id) => id,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            let rec = match DocRecord::decode(cf::DOCS, &k, &v) {
                Ok(r) => r,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            rep.pages += 1;
            live.insert(id);
            if rec.seq >= counters.next_seq {
                rep.problem(format!(
                    "page {id} has insertion number {}, at or above the next one ({})",
                    rec.seq, counters.next_seq
                ));
            }
            if let Some(other) = seqs.insert(rec.seq, id) {
                rep.problem(format!(
                    "pages {other} and {id} have the same insertion number {}",
                    rec.seq
                ));
            }
            page_cluster.insert(id, rec.cluster);
            page_host.insert(id, rec.host.clone());
            match self.key_id(&rec.key) {
                Ok(Some(kid)) if kid == id => {}
                Ok(other) => rep.problem(format!(
                    "page {id} has key {:?} but the key maps to {other:?}",
                    rec.key
                )),
                Err(e) => rep.problem(e.to_string()),
            }
            match self.posting_keys_of(id) {
                Ok(Some(keys)) => {
                    for key in keys {
                        self.expect_posting(&mut rep, &frequent, key, id)?;
                    }
                }
                Ok(None) => rep.problem(format!("page {id} has no text")),
                Err(e) => rep.problem(e.to_string()),
            }
            self.expect_posting(
                &mut rep,
                &frequent,
                posting_key(kind::CONTENT, rec.content_hash),
                id,
            )?;
            for t in 0..self.tables.tables {
                let key = self.tables.key(t, rec.simhash, id);
                if self
                    .db
                    .get_pinned_cf(self.cf(cf::SIMHASH), key)
                    .map_err(it_err)?
                    .is_none()
                {
                    rep.problem(format!("page {id} is missing from simhash table {t}"));
                }
            }
        }

        // Clusters.
        let mut membership: HashMap<DocId, u32> = HashMap::new();
        let mut cluster_ids = RoaringBitmap::new();
        for item in self
            .db
            .iterator_cf(self.cf(cf::CLUSTERS), IteratorMode::Start)
        {
            let (k, v) = item.map_err(it_err)?;
            let cl = match storage::decode_u32(cf::CLUSTERS, &k, &k)
                .and_then(|cid| ClusterRecord::decode(cf::CLUSTERS, &k, &v).map(|c| (cid, c)))
            {
                Ok(c) => c,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            let (cid, cl) = cl;
            rep.clusters += 1;
            cluster_ids.insert(cid);
            if cid >= counters.next_cluster {
                rep.problem(format!(
                    "cluster {cid} is at or above the cluster allocator ({})",
                    counters.next_cluster
                ));
            }
            if cl.members.is_empty() {
                rep.problem(format!("cluster {cid} is empty"));
            }
            if !cl.members.contains(cl.representative) {
                rep.problem(format!(
                    "cluster {cid}: representative {} is not a member",
                    cl.representative
                ));
            }
            for m in cl.members.iter() {
                *membership.entry(m).or_default() += 1;
                if !live.contains(m) {
                    rep.problem(format!("cluster {cid}: member {m} is not a live page"));
                } else if page_cluster.get(&m) != Some(&cid) {
                    rep.problem(format!(
                        "cluster {cid}: member {m} records cluster {:?}",
                        page_cluster.get(&m)
                    ));
                }
            }
        }
        for id in live.iter() {
            match membership.get(&id) {
                Some(1) => {}
                n => rep.problem(format!(
                    "page {id} is in {} clusters",
                    n.copied().unwrap_or(0)
                )),
            }
        }

        // Postings, simhash tables, keys: nothing may name a deleted page.
        for item in self.db.iterator_cf_opt(
            self.cf(cf::POSTINGS),
            storage::scan_options(),
            IteratorMode::Start,
        ) {
            let (k, v) = item.map_err(it_err)?;
            if let Ok(key) = <&[u8; 9]>::try_from(k.as_ref()) {
                if !self.posting_filter.may_contain(key) {
                    rep.problem(format!(
                        "posting {} is missing from the in-memory posting-key filter",
                        crate::error::hex(&k)
                    ));
                }
            }
            match codec::decode_posting(&v) {
                Ok(ids) => {
                    rep.postings += ids.len();
                    let stale = &ids - &live;
                    if !stale.is_empty() {
                        rep.problem(format!(
                            "posting {} names deleted pages {:?}",
                            crate::error::hex(&k),
                            stale.iter().take(5).collect::<Vec<_>>()
                        ));
                    }
                }
                Err(r) => rep.problem(format!("posting {}: {r}", crate::error::hex(&k))),
            }
        }
        let mut simhash_seen: HashSet<(u8, DocId)> = HashSet::new();
        for item in self.db.iterator_cf_opt(
            self.cf(cf::SIMHASH),
            storage::scan_options(),
            IteratorMode::Start,
        ) {
            let (k, _) = item.map_err(it_err)?;
            match self.tables.decode(&k) {
                Some((t, _, id)) => {
                    if !live.contains(id) {
                        rep.problem(format!("simhash table {t} names deleted page {id}"));
                    }
                    if !simhash_seen.insert((t, id)) {
                        rep.problem(format!("simhash table {t} names page {id} twice"));
                    }
                }
                None => rep.problem(format!(
                    "simhash key {} is malformed",
                    crate::error::hex(&k)
                )),
            }
        }
        let mut keys_seen = 0u64;
        for item in self.db.iterator_cf(self.cf(cf::KEYS), IteratorMode::Start) {
            let (k, v) = item.map_err(it_err)?;
            keys_seen += 1;
            match storage::decode_u32(cf::KEYS, &k, &v) {
                Ok(id) if live.contains(id) => {}
                Ok(id) => rep.problem(format!(
                    "key {:?} names deleted page {id}",
                    String::from_utf8_lossy(&k)
                )),
                Err(e) => rep.problem(e.to_string()),
            }
        }
        if keys_seen != rep.pages {
            rep.problem(format!("{keys_seen} keys for {} pages", rep.pages));
        }
        // The in-memory page → cluster map that candidate search relies on agrees with the disk.
        {
            let map = self.page_cluster.read();
            for (i, &c) in map.iter().enumerate() {
                let on_disk = page_cluster.get(&(i as u32)).copied();
                let in_memory = (c != crate::index::NO_CLUSTER).then_some(c);
                if on_disk != in_memory {
                    rep.problem(format!(
                        "page {i}: cluster {in_memory:?} in memory, {on_disk:?} on disk"
                    ));
                }
            }
            if let Some(&max) = page_cluster.keys().max() {
                if max as usize >= map.len() {
                    rep.problem(format!(
                        "page {max} is missing from the in-memory cluster map"
                    ));
                }
            }
        }
        self.check_chrome(&mut rep, &page_host)?;
        let texts = self
            .db
            .iterator_cf(self.cf(cf::TEXTS), IteratorMode::Start)
            .count() as u64;
        if texts != rep.pages {
            rep.problem(format!("{texts} texts for {} pages", rep.pages));
        }
        if counters.live_docs != rep.pages {
            rep.problem(format!(
                "page counter says {}, found {}",
                counters.live_docs, rep.pages
            ));
        }
        if counters.live_clusters != rep.clusters {
            rep.problem(format!(
                "cluster counter says {}, found {}",
                counters.live_clusters, rep.clusters
            ));
        }
        if let Some(max) = live.max() {
            if max >= counters.next_doc {
                rep.problem(format!(
                    "page {max} is at or above the id allocator ({})",
                    counters.next_doc
                ));
            }
        }
        // Free ids: exactly the ids below each allocator that nothing live holds, stored and
        // in memory alike.
        for (what, next, live_ids, prefix, free) in [
            (
                "page",
                counters.next_doc,
                &live,
                storage::meta::FREE_DOC,
                &counters.free_docs,
            ),
            (
                "cluster",
                counters.next_cluster,
                &cluster_ids,
                storage::meta::FREE_CLUSTER,
                &counters.free_clusters,
            ),
        ] {
            let mut expected = RoaringBitmap::new();
            expected.insert_range(0..next);
            expected -= live_ids;
            let stored = if self.free_in_memory_only.load(Ordering::Acquire) {
                free.all()
            } else {
                self.load_free(prefix)?
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
        // Document frequencies (methods on corpus statistics): the ones in memory are the
        // word postings' sizes (each posting's ids were checked above), over the live pages.
        if self.opts.signature.method.uses_df() {
            let mut stored = self.load_df()?;
            stored.set_docs(counters.live_docs);
            let held = self.df.read();
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
        Ok(rep)
    }

    /// The block statistics (see [`crate::index::chrome`]): every chrome record belongs to a live page
    /// of the same host and drops only blocks it counted, and every host and block count equals
    /// what the live pages' records add up to (no count is zero, none is orphaned).
    pub(crate) fn check_chrome(
        &self,
        rep: &mut CheckReport,
        page_host: &HashMap<DocId, String>,
    ) -> Result<()> {
        use crate::storage::chrome_key::{self, Decoded};
        let mut expected: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut found: HashMap<Vec<u8>, u64> = HashMap::new();
        for item in self
            .db
            .iterator_cf(self.cf(cf::CHROME), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("checking the index", e))?;
            match chrome_key::decode(&k) {
                Some(Decoded::Page(id)) => {
                    let b = match codec::PageBlocks::decode(cf::CHROME, &k, &v) {
                        Ok(b) => b,
                        Err(e) => {
                            rep.problem(e.to_string());
                            continue;
                        }
                    };
                    match page_host.get(&id) {
                        None => rep.problem(format!("chrome record of deleted page {id}")),
                        Some(h) if *h != b.host => rep.problem(format!(
                            "page {id} is on host {h:?} but its chrome record counts for {:?}",
                            b.host
                        )),
                        Some(_) => {}
                    }
                    if b.dropped
                        .iter()
                        .any(|d| b.counted.binary_search(d).is_err())
                    {
                        rep.problem(format!("page {id} dropped a block it did not count"));
                    }
                    *expected.entry(chrome_key::host(&b.host)).or_default() += 1;
                    for d in &b.counted {
                        *expected.entry(chrome_key::block(&b.host, *d)).or_default() += 1;
                    }
                }
                Some(_) => match codec::decode_count(cf::CHROME, &k, &v) {
                    Ok(0) => rep.problem(format!(
                        "chrome count {} is zero (zero counts are deleted)",
                        crate::error::hex(&k)
                    )),
                    Ok(n) => {
                        found.insert(k.to_vec(), u64::from(n));
                    }
                    Err(e) => rep.problem(e.to_string()),
                },
                None => rep.problem(format!("chrome key {} is malformed", crate::error::hex(&k))),
            }
        }
        let mut keys: Vec<&Vec<u8>> = expected.keys().chain(found.keys()).collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let (e, f) = (
                expected.get(k).copied().unwrap_or(0),
                found.get(k).copied().unwrap_or(0),
            );
            if e != f {
                rep.problem(format!(
                    "chrome count {} is {f}, the live pages' records add up to {e}",
                    crate::error::hex(k)
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn expect_posting(
        &self,
        rep: &mut CheckReport,
        frequent: &rustc_hash::FxHashSet<[u8; 9]>,
        key: [u8; 9],
        id: DocId,
    ) -> Result<()> {
        if frequent.contains(&key) {
            return Ok(());
        }
        match self
            .postings_at(&[key], None)
            .map(|mut p| p.pop().unwrap_or_default())
        {
            Ok(ids) if ids.contains(id) => {}
            Ok(_) => rep.problem(format!(
                "page {id} is missing from posting {}",
                crate::error::hex(&key)
            )),
            Err(e) => rep.problem(e.to_string()),
        }
        Ok(())
    }
}
