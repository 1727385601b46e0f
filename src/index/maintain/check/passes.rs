//! The passes of a check, one a column family, each in key order at the check's snapshot (see
//! the parent module).

use rayon::prelude::*;
use roaring::{RoaringBitmap, RoaringTreemap};
use rocksdb::{Direction, IteratorMode};

use super::report::CheckReport;
use super::sums::{key_entry, pair, Naming, Sums};
use super::{Frozen, PageRead};
use crate::index::Index;
use crate::storage::change::Change;
use crate::storage::chrome_key::{self, Decoded};
use crate::storage::codec::{self, ClusterId, ClusterRecord, DocRecord, PageBlocks};
use crate::storage::{self, cf, kind, posting_key};
use crate::Result;

/// Pages whose posting keys are recomputed together (on rayon's pool).
const CHUNK: usize = 2048;

/// A column family keyed by page id (the texts, the chrome page records), read in step with
/// the page records: its entries of ids no page record has belong to no live page.
struct Lockstep<I: Iterator<Item = Result<storage::Entry>>> {
    it: std::iter::Peekable<I>,
    /// The page id of a key; `None` past the family's page entries.
    id_of: fn(&[u8]) -> Option<u32>,
    /// What an entry is, in a problem's words.
    what: &'static str,
}

impl<I: Iterator<Item = Result<storage::Entry>>> Lockstep<I> {
    /// Moves past the entries up to page `id` and returns that page's; the others are
    /// reported when `orphans`.
    fn take(
        &mut self,
        id: u32,
        rep: &mut CheckReport,
        orphans: bool,
    ) -> Result<Option<storage::Entry>> {
        let id_of = self.id_of;
        let mut found = None;
        while let Some(item) = self.it.next_if(|item| {
            item.as_ref()
                .map_or(true, |(k, _)| id_of(k).is_some_and(|p| p <= id))
        }) {
            let (k, v) = item?;
            match id_of(&k) {
                Some(p) if p == id => found = Some((k, v)),
                p if orphans => rep.problem(format!(
                    "{} of deleted page {}",
                    self.what,
                    p.unwrap_or(u32::MAX)
                )),
                _ => {}
            }
        }
        Ok(found)
    }

    /// Reports the entries left once every page record was read.
    fn rest(self, rep: &mut CheckReport) -> Result<()> {
        for item in self.it {
            let (k, _) = item?;
            let Some(p) = (self.id_of)(&k) else {
                break;
            };
            rep.problem(format!("{} of deleted page {p}", self.what));
        }
        Ok(())
    }
}

impl Index {
    /// The pages pass: the records in id order, with the texts and chrome page records read in
    /// lockstep. Returns the live ids and each page's cluster, by id.
    #[allow(clippy::type_complexity)]
    pub(super) fn check_pages(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        (postings, simhash, keys, chrome): (&mut Sums, &mut Sums, &mut Sums, &mut Sums),
        only: Option<&Naming>,
    ) -> Result<(RoaringBitmap, Vec<ClusterId>)> {
        let mut live = RoaringBitmap::new();
        let mut seqs = RoaringTreemap::new();
        let mut page_cluster: Vec<ClusterId> = Vec::new();
        let mut texts = Lockstep {
            it: self.scan(fz, cf::TEXTS, IteratorMode::Start).peekable(),
            id_of: |k| Some(storage::decode_u32(cf::TEXTS, k, k).unwrap_or(u32::MAX)),
            what: "text",
        };
        let first_page = chrome_key::page(0);
        let mut pages_blocks = Lockstep {
            it: self
                .scan(
                    fz,
                    cf::CHROME,
                    IteratorMode::From(&first_page, Direction::Forward),
                )
                .peekable(),
            id_of: |k| match chrome_key::decode(k) {
                Some(Decoded::Page(pid)) => Some(pid),
                _ => None,
            },
            what: "chrome record",
        };
        let mut chunk: Vec<PageRead> = Vec::with_capacity(CHUNK);
        let docs = self.scan(fz, cf::DOCS, IteratorMode::Start);
        let mut flush = |chunk: &mut Vec<PageRead>, rep: &mut CheckReport| -> Result<()> {
            let sums = self.page_sums(fz, chunk, only);
            for (s, problems) in sums {
                postings.merge(&s[0]);
                simhash.merge(&s[1]);
                keys.merge(&s[2]);
                chrome.merge(&s[3]);
                for p in problems {
                    rep.problem(p);
                }
            }
            chunk.clear();
            Ok(())
        };
        for item in docs {
            let (k, v) = item?;
            let id = match storage::decode_u32(cf::DOCS, &k, &k) {
                Ok(id) => id,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            // The texts and chrome page records of ids below this one belong to no live page.
            let text = texts.take(id, rep, only.is_none())?.and_then(|(tk, tv)| {
                match codec::decode_text_value(cf::TEXTS, &tk, &tv) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        rep.problem(e.to_string());
                        None
                    }
                }
            });
            let blocks = pages_blocks
                .take(id, rep, only.is_none())?
                .and_then(|(ck, cv)| match PageBlocks::decode(cf::CHROME, &ck, &cv) {
                    Ok(b) => Some(b),
                    Err(e) => {
                        rep.problem(e.to_string());
                        None
                    }
                });
            let rec = match DocRecord::decode(cf::DOCS, &k, &v) {
                Ok(r) => r,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            live.insert(id);
            if only.is_none() {
                rep.pages += 1;
                if rec.seq >= fz.counters.next_seq {
                    rep.problem(format!(
                        "page {id} has insertion number {}, at or above the next one ({})",
                        rec.seq, fz.counters.next_seq
                    ));
                }
                if !seqs.insert(rec.seq) {
                    rep.problem(format!(
                        "page {id} has the insertion number {} of another page",
                        rec.seq
                    ));
                }
                if text.is_none() {
                    rep.problem(format!("page {id} has no text"));
                }
            }
            if page_cluster.len() <= id as usize {
                page_cluster.resize(id as usize + 1, ClusterId::MAX);
            }
            page_cluster[id as usize] = rec.cluster;
            chunk.push(PageRead {
                id,
                rec,
                text,
                blocks,
            });
            if chunk.len() >= CHUNK {
                flush(&mut chunk, rep)?;
            }
        }
        flush(&mut chunk, rep)?;
        if only.is_none() {
            texts.rest(rep)?;
            pages_blocks.rest(rep)?;
        }
        Ok((live, page_cluster))
    }

    /// The sums (postings, simhash, keys, chrome) of a chunk of pages, in parallel, each with
    /// the problems of its pages. With `only`, the entries of its buckets are collected instead
    /// (see [`Index::name_differences`]).
    fn page_sums(
        &self,
        fz: &Frozen<'_>,
        chunk: &[PageRead],
        only: Option<&Naming>,
    ) -> Vec<([Sums; 4], Vec<String>)> {
        chunk
            .par_chunks(256)
            .map(|pages| {
                let mut s: [Sums; 4] = Default::default();
                let mut problems = Vec::new();
                for p in pages {
                    let id = p.id;
                    let mut pkeys = vec![posting_key(kind::CONTENT, p.rec.content_hash)];
                    if let Some(t) = &p.text {
                        match self.posting_keys_in(id, t) {
                            Ok(ks) => pkeys.extend(ks),
                            Err(e) => problems.push(e.to_string()),
                        }
                    }
                    pkeys.retain(|k| !fz.frequent.contains(k));
                    pkeys.sort_unstable();
                    pkeys.dedup();
                    for k in &pkeys {
                        let e = pair(k, id);
                        match only {
                            Some(n) => n.page_entry(0, &e),
                            None => s[0].add(&e, 1, true),
                        }
                    }
                    for t in 0..self.tables.tables {
                        let e = self.tables.key(t, p.rec.simhash, id);
                        match only {
                            Some(n) => n.page_entry(1, &e),
                            None => s[1].add(&e, 1, true),
                        }
                    }
                    let e = key_entry(&p.rec.key, id);
                    match only {
                        Some(n) => n.page_entry(2, &e),
                        None => s[2].add(&e, 1, true),
                    }
                    if let Some(b) = &p.blocks {
                        if only.is_none() {
                            if b.host != p.rec.host {
                                problems.push(format!(
                                    "page {id} is on host {:?} but its chrome record counts for \
                                     {:?}",
                                    p.rec.host, b.host
                                ));
                            }
                            if b.dropped
                                .iter()
                                .any(|d| b.counted.binary_search(d).is_err())
                            {
                                problems
                                    .push(format!("page {id} dropped a block it did not count"));
                            }
                        }
                        let counted = std::iter::once(chrome_key::host(&b.host))
                            .chain(b.counted.iter().map(|&d| chrome_key::block(&b.host, d)));
                        for e in counted {
                            match only {
                                Some(n) => n.page_entry(3, &e),
                                None => s[3].add(&e, 1, true),
                            }
                        }
                    }
                }
                (s, problems)
            })
            .collect()
    }

    /// The page → cluster map (format 5 on): exactly one entry a live page, naming the cluster
    /// its record names.
    pub(super) fn check_page_clusters(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        page_cluster: &[ClusterId],
    ) -> Result<()> {
        if !self.cluster_map {
            return Ok(());
        }
        let mut seen = 0u64;
        for item in self.scan(fz, cf::PAGE_CLUSTERS, IteratorMode::Start) {
            let (k, v) = item?;
            let entry = storage::decode_u32(cf::PAGE_CLUSTERS, &k, &k)
                .and_then(|id| storage::decode_u32(cf::PAGE_CLUSTERS, &k, &v).map(|cid| (id, cid)));
            let (id, cid) = match entry {
                Ok(e) => e,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            if !live.contains(id) {
                rep.problem(format!(
                    "the page → cluster map names deleted page {id} (cluster {cid})"
                ));
                continue;
            }
            seen += 1;
            let recorded = page_cluster[id as usize];
            if cid != recorded {
                rep.problem(format!(
                    "the page → cluster map puts page {id} in cluster {cid}, its record in \
                     {recorded}"
                ));
            }
        }
        if seen != live.len() {
            rep.problem(format!(
                "the page → cluster map has {seen} of the {} live pages",
                live.len()
            ));
        }
        Ok(())
    }

    /// The change feed's pass: every record decodes under its sequence number (tag, checksum,
    /// kind), and the feed holds exactly the changes after the trimmed ones up to the last given
    /// out — none missing, none past the counter, none left behind by a trim. A read-only
    /// snapshot without the family has no feed to check.
    pub(super) fn check_changes(&self, fz: &Frozen<'_>, rep: &mut CheckReport) -> Result<()> {
        if self.db.cf_handle(cf::CHANGES).is_none() {
            return Ok(());
        }
        let (trimmed, next) = (fz.counters.changes_trimmed, fz.counters.next_change);
        let mut expect = trimmed + 1;
        for item in self.scan(fz, cf::CHANGES, IteratorMode::Start) {
            let (k, v) = item?;
            // A record that does not decode is reported, and still stands for its number.
            let Ok(seq) = <[u8; 8]>::try_from(&k[..]).map(u64::from_be_bytes) else {
                rep.problem(format!("the change feed has a key of {} bytes", k.len()));
                continue;
            };
            if let Err(e) = Change::decode_entry(&k, &v) {
                rep.problem(e.to_string());
            }
            if seq <= trimmed || seq >= next {
                rep.problem(format!(
                    "the change feed holds change {seq}, outside {} to {} (trimmed up to \
                     {trimmed}, next {next})",
                    trimmed + 1,
                    next.saturating_sub(1)
                ));
                continue;
            }
            if seq != expect {
                rep.problem(format!(
                    "the change feed lacks changes {expect} to {}",
                    seq - 1
                ));
            }
            expect = seq + 1;
        }
        if expect < next {
            rep.problem(format!(
                "the change feed lacks changes {expect} to {}",
                next - 1
            ));
        }
        Ok(())
    }

    /// The clusters pass: every cluster's members are live pages that record it, its
    /// representative is a member, and the members of all clusters are the live pages, once.
    pub(super) fn check_clusters(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        page_cluster: &[ClusterId],
    ) -> Result<RoaringBitmap> {
        let mut cluster_ids = RoaringBitmap::new();
        let mut members_total = 0u64;
        for item in self.scan(fz, cf::CLUSTERS, IteratorMode::Start) {
            let (k, v) = item?;
            let (cid, cl) = match storage::decode_u32(cf::CLUSTERS, &k, &k)
                .and_then(|cid| ClusterRecord::decode(cf::CLUSTERS, &k, &v).map(|c| (cid, c)))
            {
                Ok(c) => c,
                Err(e) => {
                    rep.problem(e.to_string());
                    continue;
                }
            };
            rep.clusters += 1;
            cluster_ids.insert(cid);
            if cid >= fz.counters.next_cluster {
                rep.problem(format!(
                    "cluster {cid} is at or above the cluster allocator ({})",
                    fz.counters.next_cluster
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
            members_total += cl.members.len();
            for m in cl.members.iter() {
                let recorded = page_cluster.get(m as usize).copied();
                if !live.contains(m) {
                    rep.problem(format!("cluster {cid}: member {m} is not a live page"));
                } else if recorded != Some(cid) {
                    rep.problem(format!(
                        "cluster {cid}: member {m} records cluster {recorded:?}"
                    ));
                }
            }
        }
        // Every member records its cluster (above): as many memberships as live pages means each
        // page is in exactly one cluster.
        if members_total != live.len() {
            rep.problem(format!(
                "{members_total} cluster memberships for {} pages (a page in no cluster, or in \
                 two)",
                live.len()
            ));
        }
        Ok(cluster_ids)
    }

    /// The postings pass: every posting decodes and names live pages only.
    pub(super) fn check_postings(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        sums: &mut Sums,
        only: Option<&Naming>,
    ) -> Result<()> {
        for item in self.scan(fz, cf::POSTINGS, IteratorMode::Start) {
            let (k, v) = item?;
            let (key, ids) = match codec::decode_posting_entry(&k, &v) {
                Ok(entry) => entry,
                Err(problem) => {
                    rep.problem(problem);
                    continue;
                }
            };
            if only.is_none() {
                rep.postings += ids.len();
                let stale = &ids - live;
                if !stale.is_empty() {
                    rep.problem(format!(
                        "posting {} names deleted pages {:?}",
                        crate::error::hex(&k),
                        stale.iter().take(5).collect::<Vec<_>>()
                    ));
                }
            }
            if fz.frequent.contains(&key) {
                continue;
            }
            for id in &ids {
                let e = pair(&key, id);
                match only {
                    Some(n) => n.index_entry(0, &e),
                    None => sums.add(&e, 1, false),
                }
            }
        }
        Ok(())
    }

    /// The simhash tables pass: every key decodes and names a live page.
    pub(super) fn check_simhash(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        sums: &mut Sums,
        only: Option<&Naming>,
    ) -> Result<()> {
        for item in self.scan(fz, cf::SIMHASH, IteratorMode::Start) {
            let (k, _) = item?;
            match self.tables.decode(&k) {
                Some((t, _, id)) => {
                    if only.is_none() && !live.contains(id) {
                        rep.problem(format!("simhash table {t} names deleted page {id}"));
                    }
                    match only {
                        Some(n) => n.index_entry(1, &k),
                        None => sums.add(&k, 1, false),
                    }
                }
                None => {
                    if only.is_none() {
                        rep.problem(format!(
                            "simhash key {} is malformed",
                            crate::error::hex(&k)
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The keys pass: every key names a live page.
    pub(super) fn check_keys(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        live: &RoaringBitmap,
        sums: &mut Sums,
        only: Option<&Naming>,
    ) -> Result<()> {
        let mut keys_seen = 0u64;
        for item in self.scan(fz, cf::KEYS, IteratorMode::Start) {
            let (k, v) = item?;
            keys_seen += 1;
            let id = match storage::decode_u32(cf::KEYS, &k, &v) {
                Ok(id) => id,
                Err(e) => {
                    if only.is_none() {
                        rep.problem(e.to_string());
                    }
                    continue;
                }
            };
            if only.is_none() && !live.contains(id) {
                rep.problem(format!(
                    "key {:?} names deleted page {id}",
                    String::from_utf8_lossy(&k)
                ));
            }
            let e = key_entry(&String::from_utf8_lossy(&k), id);
            match only {
                Some(n) => n.index_entry(2, &e),
                None => sums.add(&e, 1, false),
            }
        }
        if only.is_none() && keys_seen != live.len() {
            rep.problem(format!("{keys_seen} keys for {} pages", live.len()));
        }
        Ok(())
    }

    /// The block counts of site chrome (see [`crate::index::chrome`]): no count is zero, each
    /// equals what the live pages' chrome records add up to.
    pub(super) fn check_chrome_counts(
        &self,
        fz: &Frozen<'_>,
        rep: &mut CheckReport,
        sums: &mut Sums,
        only: Option<&Naming>,
    ) -> Result<()> {
        for item in self.scan(fz, cf::CHROME, IteratorMode::Start) {
            let (k, v) = item?;
            match chrome_key::decode(&k) {
                Some(Decoded::Page(_)) => {}
                Some(_) => match codec::decode_count(cf::CHROME, &k, &v) {
                    Ok(0) if only.is_none() => rep.problem(format!(
                        "chrome count {} is zero (zero counts are deleted)",
                        crate::error::hex(&k)
                    )),
                    Ok(n) => match only {
                        Some(c) => c.index_count(&k, u64::from(n)),
                        None => sums.add(&k, u64::from(n), false),
                    },
                    Err(e) => {
                        if only.is_none() {
                            rep.problem(e.to_string());
                        }
                    }
                },
                None => {
                    if only.is_none() {
                        rep.problem(format!("chrome key {} is malformed", crate::error::hex(&k)));
                    }
                }
            }
        }
        Ok(())
    }
}
