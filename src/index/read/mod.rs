//! Reading: queries (the verdict an insert would give, from one snapshot; every near duplicate
//! of a page, in `near`), look-ups of stored pages and clusters (their records built in
//! `record`), exports, the cursors of `cursor`, and the change feed (`changes`).

mod changes;
mod cursor;
mod near;
mod record;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rocksdb::IteratorMode;

pub use changes::Changes;
pub use cursor::{Clusters, Keys, Members, Pages};
pub use near::{NearDuplicate, NearOptions, Score};
pub(crate) use record::similar_of;

use super::decide::Memo;
use super::types::{Page, Record, Timing, Verdict};
use super::view::{Snapshot, View};
use super::{check_page, text_chars, Index, Probe};
use crate::signature::{Content, Signatures};
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord};
use crate::storage::{self, cf};
use crate::{Error, Result};
use record::record_of;

impl Index {
    /// The stored record of a key, `None` when the key is absent: what an engine needs of a
    /// page without sending it again. Read at one snapshot.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn get(&self, key: &str) -> Result<Option<Record>> {
        self.registration.check_process()?;
        let view = Snapshot::of(self);
        let Some(doc) = view.key_id(key)? else {
            return Ok(None);
        };
        record_of(&view, doc, view.member(doc)?).map(Some)
    }

    /// The internal id of a key, if present.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn id_of(&self, key: &str) -> Result<Option<DocId>> {
        self.registration.check_process()?;
        self.key_id(key)
    }

    /// The cluster of a key and the key of its representative, if the key is present.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn representative_of(&self, key: &str) -> Result<Option<(ClusterId, String)>> {
        Ok(self.get(key)?.map(|r| (r.cluster, r.representative)))
    }

    /// The keys of a cluster's members in id order, `limit` of them from position `offset`;
    /// `None` when the cluster does not exist.
    ///
    /// # Errors
    /// [`Error::Storage`] or [`Error::Corruption`] from the database.
    pub fn cluster_members(
        &self,
        cluster: ClusterId,
        offset: usize,
        limit: usize,
    ) -> Result<Option<Vec<String>>> {
        self.registration.check_process()?;
        let view = Snapshot::of(self);
        let Some(cl) = view.cluster(cluster)? else {
            return Ok(None);
        };
        let mut keys = Vec::new();
        for id in cl.members.iter().skip(offset).take(limit) {
            keys.push(view.member(id)?.key);
        }
        Ok(Some(keys))
    }

    /// The verdict [`Index::insert`] would give, without storing anything.
    ///
    /// # Errors
    /// The page errors of [`Signatures::compute`], storage and corruption errors.
    ///
    /// The content comes without a host, so no site chrome learned for a host is dropped from it
    /// (see [`crate::ChromeConfig`]); [`Index::query_page`] drops it as an insert would.
    pub fn query(&self, content: Content<'_>) -> Result<Verdict> {
        self.metrics.query(|| {
            self.registration.check_process()?;
            let t0 = Instant::now();
            let sig = Signatures::compute(content, &self.opts.signature)?;
            self.query_signed(&sig, t0.elapsed())
        })
    }

    /// The verdict [`Index::insert`] would give this page, without storing anything: the site
    /// chrome learned for its host is dropped from it as an insert would drop it (the page's key
    /// only tells its own stored version apart from the host's other pages).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key or an overlong host, the page errors of
    /// [`Signatures::compute`], storage and corruption errors.
    pub fn query_page(&self, page: &Page<'_>) -> Result<Verdict> {
        self.metrics.query(|| {
            self.registration.check_process()?;
            check_page(page)?;
            let t0 = Instant::now();
            let (sig, _) = self.signatures_of(page)?;
            self.query_signed(&sig, t0.elapsed())
        })
    }

    /// The verdict of a page already signed, read from one snapshot from start to end.
    pub(crate) fn query_signed(&self, sig: &Signatures, signature: Duration) -> Result<Verdict> {
        let mut timing = Timing {
            signature,
            ..Timing::default()
        };
        let view = Snapshot::of(self);
        let (decision, cands) = self.decide(
            &view,
            &Probe::of(sig, &self.opts.signature.method),
            None,
            None,
            &mut timing,
            &mut Memo::default(),
        )?;
        let mut v = Verdict {
            duplicate: false,
            doc: None,
            seq: None,
            cluster: None,
            representative: None,
            similar_to: None,
            resemble: 0.0,
            contain: 0.0,
            exact: false,
            identical_to: None,
            text_chars: text_chars(&sig.text),
            replaced: false,
            replaced_page: None,
            unchanged: false,
            unchanged_html: false,
            no_main_text: decision.no_main_text,
            candidates: cands,
            verified: 0,
            timing,
        };
        if let Some(id) = decision.identical {
            v.identical_to = view.doc(id)?.map(|r| r.key);
        }
        if let Some(m) = &decision.best {
            v.cluster = Some(m.cluster);
            v.representative = view.doc(m.representative)?.map(|r| r.key);
        }
        if let Some(m) = decision.nearest {
            v.duplicate = true;
            v.similar_to = view.doc(m.against)?.map(|r| r.key);
            v.resemble = m.resemble;
            v.contain = m.contain;
            v.exact = m.exact;
        }
        v.verified = decision.verified;
        Ok(v)
    }

    /// Calls `f(key, target_key)` for every page, in id order: the input of the bench's
    /// scorers. The target is the page this one was judged a near duplicate of — the closest page
    /// it verified against when it was placed (see [`Verdict::similar_to`]) — or, when that page
    /// has been deleted since or there was none, its cluster's representative (the page itself
    /// when it leads its cluster). Every target is a page the key verified against, or the
    /// representative of its cluster, which it verified against too.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn export(&self, mut f: impl FnMut(&str, &str)) -> Result<()> {
        self.registration.check_process()?;
        // One snapshot for the walk and the look-ups: a merge running meanwhile changes nothing
        // that the export sees.
        let view = Snapshot::of(self);
        let mut reps: HashMap<ClusterId, String> = HashMap::new();
        for item in view
            .raw()
            .iterator_cf(self.cf(cf::DOCS), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading pages", e))?;
            let rec = DocRecord::decode(cf::DOCS, &k, &v)?;
            if let Some(near) = similar_of(&rec, |i| view.doc(i))? {
                f(&rec.key, &near.key);
                continue;
            }
            let rep = match reps.entry(rec.cluster) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let cl = view.cluster_of_live(rec.cluster)?;
                    e.insert(view.member(cl.representative)?.key)
                }
            };
            f(&rec.key, rep);
        }
        Ok(())
    }

    /// Calls `f(cluster, representative_key, member_keys)` for every cluster, in cluster-id
    /// order, members in id order, from one consistent snapshot.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn export_clusters(&self, mut f: impl FnMut(ClusterId, &str, &[String])) -> Result<()> {
        self.registration.check_process()?;
        let view = Snapshot::of(self);
        for item in view
            .raw()
            .iterator_cf(self.cf(cf::CLUSTERS), IteratorMode::Start)
        {
            let (k, v) = item.map_err(|e| Error::storage("reading clusters", e))?;
            let cid = storage::decode_u32(cf::CLUSTERS, &k, &k)?;
            let cl = ClusterRecord::decode(cf::CLUSTERS, &k, &v)?;
            let mut members = Vec::with_capacity(cl.members.len() as usize);
            let mut rep = String::new();
            for id in cl.members.iter() {
                let rec = view.member(id)?;
                if id == cl.representative {
                    rep = rec.key.clone();
                }
                members.push(rec.key);
            }
            f(cid, &rep, &members);
        }
        Ok(())
    }
}

impl Index {
    /// The verdicts [`Index::query`] gives these contents, computed in parallel (signatures and
    /// verification on the rayon pool), in the input order; one content's error does not stop
    /// the others. Nothing is stored.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; each content has its own result.
    pub fn query_batch(&self, contents: &[Content<'_>]) -> Result<Vec<Result<Verdict>>> {
        self.registration.check_process()?;
        Ok(contents
            .par_iter()
            .map(|c| crate::quiet::within(|| self.query(*c)))
            .collect())
    }

    /// The verdicts [`Index::query_page`] gives these pages, computed in parallel (signatures
    /// and verification on the rayon pool), in the input order: the site chrome learned for each
    /// page's host is dropped from it as [`Index::insert_batch`] would drop it. One page's error
    /// does not stop the others. Nothing is stored.
    ///
    /// # Errors
    /// [`Error::WrongProcess`]; each page has its own result.
    pub fn query_pages(&self, pages: &[Page<'_>]) -> Result<Vec<Result<Verdict>>> {
        self.registration.check_process()?;
        Ok(pages
            .par_iter()
            .map(|p| crate::quiet::within(|| self.query_page(p)))
            .collect())
    }
}
