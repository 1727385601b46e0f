//! Clusters and representatives (SPEC §2.7; seed 000 §3.3, seed 002 Single-Pass, seed 003 §4.4).
//!
//! A new page is compared with the representatives of the clusters its candidates belong to,
//! clusters sharing the most fingerprints first (seed 000 §3.3: "compare with the first document
//! of each existing subset"); it joins the verified one it resembles most. Unless a
//! representative matched strongly, the best-sharing candidate members are verified too: a page
//! can resemble a variant more than the cluster's original.
//!
//! Membership stays honest: a page joins a cluster only when it verifies against that cluster's
//! representative. Resemblance and containment are not transitive (a chapter inside a manual, a
//! chain of edits), so a page that verifies only against a member of a cluster founds a cluster
//! of its own; it is still a near duplicate, and the verdict (and the page's record, for
//! [`Index::export`]) names the closest page it verified against (`similar_to`), which need not be
//! its cluster's representative.

use std::collections::HashMap;
use std::time::Instant;

use super::txn::Txn;
use super::{text_signature, Index, Probe, Timing};
use crate::fingerprint::codes_conflict;
use crate::methods::{Features, NoDocFreq, Side};
use crate::options::RepresentativePolicy;
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord, NO_DOC};
use crate::storage::{cf, id_key};
use crate::{Error, Result};

/// How many candidate pages (most shared fingerprints first) are mapped to their clusters.
const MAX_CANDIDATE_PAGES: usize = 64;

/// A verified match resembling this much ends the search for a better cluster.
pub(crate) const STRONG_MATCH: f64 = 0.6;

/// How many candidate members are verified directly when no representative verifies.
pub(crate) const MEMBER_FALLBACK: usize = 4;

/// A verified match of a page with a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// The cluster.
    pub cluster: ClusterId,
    /// Its representative when the match was found.
    pub representative: DocId,
    /// The page the probe was verified against.
    pub against: DocId,
    /// Resemble rate.
    pub resemble: f64,
    /// Contain rate.
    pub contain: f64,
    /// Identical normalized texts.
    pub exact: bool,
}

/// What [`Index::try_match`] found against one stored page. It depends only on the probe and on
/// the page's immutable parts (heading codes, content hash, text: once committed, a `DocId`
/// names one page until that page is deleted, and batch ingest — which keeps outcomes by id — sees
/// no freed id given out again before it ends; ids a failed write gave out are given anew, and
/// batch ingest forgets its outcomes under them), so an outcome found against one state of the
/// index holds in every later state where the page is live. Batch ingest finds them in parallel, ahead of the writer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Heading codes conflict: no match.
    Conflict,
    /// Identical content.
    Exact,
    /// Verified: resemble and contain when similar, `None` when not.
    Verified(Option<(f64, f64)>),
}

impl Outcome {
    /// The match it is: `(exact, resemble, contain)`, `None` for no match.
    pub(crate) fn matched(self) -> Option<(bool, f64, f64)> {
        match self {
            Outcome::Conflict | Outcome::Verified(None) => None,
            Outcome::Exact => Some((true, 1.0, 1.0)),
            Outcome::Verified(Some((resemble, contain))) => Some((false, resemble, contain)),
        }
    }
}

/// A probe's outcomes by stored page: filled by every decision, and handed from the parallel
/// pre-decision of a batch page to its decision in the writer, which then verifies only against
/// pages the pre-decision did not meet.
#[derive(Debug, Default)]
pub(crate) struct Memo(HashMap<DocId, Outcome>);

impl Memo {
    /// Records the outcome against a page.
    pub(crate) fn insert(&mut self, against: DocId, outcome: Outcome) {
        self.0.insert(against, outcome);
    }

    /// Forgets the outcomes against pages of these ids (ids a failed write had given out).
    pub(crate) fn forget(&mut self, ids: &[DocId]) {
        for id in ids {
            self.0.remove(id);
        }
    }
}

/// What [`Index::rank`] finds: the clusters best first with their rank, the number of candidate
/// pages, and the page of lowest id with the probe's exact content.
pub(crate) type Ranked = (Vec<(ClusterId, Rank)>, usize, Option<DocId>);

pub(crate) struct Decision {
    /// The cluster to join: a match against its representative.
    pub(crate) best: Option<Match>,
    /// The closest page verified similar, in any cluster (`best` or a better member match).
    pub(crate) nearest: Option<Match>,
    pub(crate) verified: usize,
    /// The probe has (almost) no main text, so nothing was compared (see
    /// [`crate::IndexOptions::min_text_width`]).
    pub(crate) no_main_text: bool,
    /// The held page of lowest id with the probe's exact content (none without main text).
    pub(crate) identical: Option<DocId>,
}

/// What a page's leaving did to its cluster (see [`Index::leave_cluster`]).
#[derive(Default)]
pub(crate) struct Left {
    /// The page led the cluster.
    pub(crate) was_representative: bool,
    /// The cluster's representative after (`None`: the cluster is gone).
    pub(crate) representative: Option<DocId>,
    /// Members re-placed after a hand-over, and where each went.
    pub(crate) moved: Vec<(DocId, Placed)>,
}

#[derive(Clone, Copy)]
pub(crate) struct Placed {
    pub(crate) cluster: ClusterId,
    pub(crate) representative: DocId,
}

/// Candidate cluster ranking: (exact content match, shared fingerprints).
#[derive(Clone, Copy, Default)]
pub(crate) struct Rank {
    /// A member has the probe's content hash.
    pub(crate) exact: bool,
    /// Most fingerprints a member shares with the probe.
    pub(crate) shared: u32,
    /// That member.
    pub(crate) best_member: DocId,
}

/// What a comparison needs of a stored page besides its text.
pub(crate) struct Stored<'a> {
    pub(crate) codes: &'a [u32],
    pub(crate) content_hash: u128,
    pub(crate) simhash: u64,
    /// Its features, when already known (a page of the batch's windows): not recomputed.
    pub(crate) features: Option<&'a Features>,
}

impl<'a> From<&'a DocRecord> for Stored<'a> {
    fn from(r: &'a DocRecord) -> Self {
        Stored {
            codes: &r.codes,
            content_hash: r.content_hash,
            simhash: r.simhash,
            features: None,
        }
    }
}

fn better(m: &Match, than: &Option<Match>) -> bool {
    match than {
        None => true,
        Some(b) => (m.exact, m.resemble, m.contain) > (b.exact, b.resemble, b.contain),
    }
}

impl Index {
    fn rd_doc(&self, txn: Option<&Txn<'_>>, id: DocId) -> Result<Option<DocRecord>> {
        match txn {
            Some(t) => t.doc(id),
            None => self.doc(id),
        }
    }

    fn rd_cluster(&self, txn: Option<&Txn<'_>>, cid: ClusterId) -> Result<Option<ClusterRecord>> {
        match txn {
            Some(t) => t.cluster(cid),
            None => self.cluster(cid),
        }
    }

    /// The cluster of a live page (`None`: not live).
    fn rd_cluster_of(&self, txn: Option<&Txn<'_>>, id: DocId) -> Option<ClusterId> {
        match txn {
            Some(t) => t.cluster_of(id),
            None => self.cluster_of(id),
        }
    }

    fn rd_text(&self, txn: Option<&Txn<'_>>, id: DocId) -> Result<Option<std::sync::Arc<str>>> {
        match txn {
            Some(t) => t.text(id),
            None => self.text(id),
        }
    }

    /// The clusters a probe is compared with, best first (exact content match, then most shared
    /// fingerprints), at most `max_clusters_verified` of them, the number of candidate pages,
    /// and the page of lowest id with the probe's exact content (read with the candidates).
    /// Without a transaction, `ahead` reads postings at its snapshot and keeps them.
    pub(crate) fn rank(
        &self,
        mut txn: Option<&mut Txn<'_>>,
        probe: &Probe<'_>,
        exclude_doc: Option<DocId>,
        exclude_cluster: Option<ClusterId>,
        ahead: Option<super::Ahead<'_, '_>>,
    ) -> Result<Ranked> {
        let mut cands = self.gather(txn.as_deref_mut(), probe, ahead)?;
        if let Some(x) = exclude_doc {
            cands.remove(&x);
        }
        let identical = cands
            .iter()
            .filter(|(_, &(_, exact))| exact)
            .map(|(&id, _)| id)
            .min();
        let txr = txn.as_deref();
        // The candidates sharing the most fingerprints first; a bounded number of them is mapped
        // to clusters (members of one cluster tend to share the same fingerprints).
        let mut ranked_pages: Vec<(DocId, u32, bool)> =
            cands.iter().map(|(&id, &(s, e))| (id, s, e)).collect();
        // The order is total (ids are distinct): the best MAX_CANDIDATE_PAGES are selected, then
        // sorted.
        let key = |&(id, s, e): &(DocId, u32, bool)| (std::cmp::Reverse((e, s)), id);
        if ranked_pages.len() > MAX_CANDIDATE_PAGES {
            ranked_pages.select_nth_unstable_by_key(MAX_CANDIDATE_PAGES, key);
            ranked_pages.truncate(MAX_CANDIDATE_PAGES);
        }
        ranked_pages.sort_unstable_by_key(key);
        let mut clusters = rustc_hash::FxHashMap::<ClusterId, Rank>::default();
        for &(id, shared, exact) in &ranked_pages {
            let Some(cluster) = self.rd_cluster_of(txr, id) else {
                continue;
            };
            if Some(cluster) == exclude_cluster {
                continue;
            }
            let r = clusters.entry(cluster).or_insert(Rank {
                exact,
                shared,
                best_member: id,
            });
            if (exact, shared, std::cmp::Reverse(id))
                > (r.exact, r.shared, std::cmp::Reverse(r.best_member))
            {
                *r = Rank {
                    exact: exact || r.exact,
                    shared,
                    best_member: id,
                };
            }
        }
        let mut ranked: Vec<(ClusterId, Rank)> = clusters.into_iter().collect();
        ranked.sort_by(|a, b| {
            (b.1.exact, b.1.shared, std::cmp::Reverse(b.0)).cmp(&(
                a.1.exact,
                a.1.shared,
                std::cmp::Reverse(a.0),
            ))
        });
        ranked.truncate(self.opts.max_clusters_verified);
        Ok((ranked, cands.len(), identical))
    }

    /// Finds the cluster a probe belongs to (see the module docs). Returns the decision and the
    /// number of candidate pages.
    pub(crate) fn decide(
        &self,
        mut txn: Option<&mut Txn<'_>>,
        probe: &Probe<'_>,
        exclude_doc: Option<DocId>,
        exclude_cluster: Option<ClusterId>,
        timing: &mut Timing,
        memo: &mut Memo,
    ) -> Result<(Decision, usize)> {
        if self.opts.signature.method.main_width(probe.text) < self.opts.min_text_width {
            // A page whose extraction came out (almost) empty says nothing about its content: all
            // such pages would share one content hash and be "exact duplicates" of each other.
            return Ok((
                Decision {
                    best: None,
                    nearest: None,
                    verified: 0,
                    no_main_text: true,
                    identical: None,
                },
                0,
            ));
        }
        let tc = Instant::now();
        let (ranked, candidates, identical) = self.rank(
            txn.as_deref_mut(),
            probe,
            exclude_doc,
            exclude_cluster,
            None,
        )?;
        let txr = txn.as_deref();
        timing.candidates += tc.elapsed();

        let tv = Instant::now();
        let mut best: Option<Match> = None;
        let mut verified = 0;
        let mut reps = Vec::with_capacity(ranked.len());
        let strong = |m: &Option<Match>| {
            m.as_ref()
                .is_some_and(|b| b.exact || b.resemble >= STRONG_MATCH)
        };
        for &(cid, _) in &ranked {
            let Some(cl) = self.rd_cluster(txr, cid)? else {
                continue;
            };
            let rep = cl.representative;
            reps.push(rep);
            if Some(rep) == exclude_doc {
                continue;
            }
            if let Some(m) = self.try_match(txr, probe, cid, rep, rep, &mut verified, memo)? {
                if better(&m, &best) {
                    best = Some(m);
                }
                // Clusters come best first (most shared fingerprints): a strong match ends the
                // search.
                if strong(&best) {
                    break;
                }
            }
        }
        let mut nearest = best.clone();
        // Single-Pass compares a page with cluster centres only.
        if !strong(&best) && !self.opts.signature.method.centres_only() {
            // The best-sharing members of the first clusters: a closer page than any
            // representative. A match there names the page (`nearest`) but joins its cluster
            // only through the representative's own match.
            for (&(cid, rank), &rep) in ranked.iter().zip(&reps).take(MEMBER_FALLBACK) {
                if rank.best_member == rep || Some(rank.best_member) == exclude_doc {
                    continue;
                }
                if let Some(m) =
                    self.try_match(txr, probe, cid, rep, rank.best_member, &mut verified, memo)?
                {
                    if better(&m, &nearest) {
                        nearest = Some(m);
                    }
                }
            }
        }
        timing.verify += tv.elapsed();
        Ok((
            Decision {
                best,
                nearest,
                verified,
                no_main_text: false,
                identical,
            },
            candidates,
        ))
    }

    /// Verifies a probe against one page of a cluster; an outcome already in `memo` is used
    /// when the page is live, and a new one is added to it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn try_match(
        &self,
        txr: Option<&Txn<'_>>,
        probe: &Probe<'_>,
        cluster: ClusterId,
        representative: DocId,
        against: DocId,
        verified: &mut usize,
        memo: &mut Memo,
    ) -> Result<Option<Match>> {
        let outcome = match memo.0.get(&against) {
            Some(&o) if self.rd_cluster_of(txr, against).is_some() => o,
            _ => {
                let Some(rec) = self.rd_doc(txr, against)? else {
                    return Ok(None);
                };
                let text = || self.rd_text(txr, against);
                let Some(o) = self.outcome(txr, probe, &Stored::from(&rec), text)? else {
                    return Ok(None);
                };
                memo.0.insert(against, o);
                o
            }
        };
        if matches!(outcome, Outcome::Verified(_)) {
            *verified += 1;
        }
        let Some((exact, resemble, contain)) = outcome.matched() else {
            return Ok(None);
        };
        Ok(Some(Match {
            cluster,
            representative,
            against,
            resemble,
            contain,
            exact,
        }))
    }

    /// The outcome of a probe against a stored page (its heading codes, content hash and
    /// simhash); `text` gives the page's text, asked for only when these do not decide. `None`
    /// when the text is needed and missing.
    pub(crate) fn outcome<T: AsRef<str>>(
        &self,
        txr: Option<&Txn<'_>>,
        probe: &Probe<'_>,
        stored: &Stored<'_>,
        text: impl FnOnce() -> Result<Option<T>>,
    ) -> Result<Option<Outcome>> {
        if self.codes_conflict(probe.codes, stored.codes) {
            return Ok(Some(Outcome::Conflict));
        }
        if stored.content_hash == probe.content_hash {
            return Ok(Some(Outcome::Exact));
        }
        let method = &self.opts.signature.method;
        if method.uses_simhash() {
            // The simhash methods need no text: the record keeps the simhash.
            let none = Features::None;
            let k = self.opts.simhash_max_distance;
            let sim = method.compare(
                (probe.features, probe.simhash),
                (&none, stored.simhash),
                k,
                &NoDocFreq,
            );
            return Ok(Some(Outcome::Verified(sim)));
        }
        let Some(text) = text()? else {
            return Ok(None);
        };
        let a = Side {
            text: probe.text,
            features: Some(probe.features),
            simhash: probe.simhash,
        };
        let b = Side {
            text: text.as_ref(),
            features: stored.features,
            simhash: stored.simhash,
        };
        Ok(Some(Outcome::Verified(self.similar(txr, a, b))))
    }

    /// Do heading codes keep two pages apart? Only under the LCS method, when
    /// [`crate::IndexOptions::heading_codes`] is on: the other methods decide as their papers do.
    pub(crate) fn codes_conflict(&self, a: &[u32], b: &[u32]) -> bool {
        self.opts.signature.method.is_lcs() && self.opts.heading_codes && codes_conflict(a, b)
    }

    /// Are two pages similar under the index's method? `Some((resemble, contain))` when they
    /// are (see [`crate::Method::similar_sides`]), words weighed under the document frequencies
    /// `txr` sees.
    pub(crate) fn similar(
        &self,
        txr: Option<&Txn<'_>>,
        a: Side<'_>,
        b: Side<'_>,
    ) -> Option<(f64, f64)> {
        let k = self.opts.simhash_max_distance;
        let method = &self.opts.signature.method;
        if !method.uses_df() {
            return method.similar_sides(a, b, &self.opts.verify, k, &NoDocFreq);
        }
        if a.text == b.text {
            return Some((1.0, 1.0));
        }
        // Words are segmented before the frequencies are locked: a commit waits on them.
        let (fa, fb) = (method.features_of(&a), method.features_of(&b));
        self.with_df(txr, |df| {
            method.compare((&fa, a.simhash), (&fb, b.simhash), k, df)
        })
    }

    /// Should page `a` lead a cluster rather than page `b`, under the policy?
    pub(crate) fn prefers(&self, a: &DocRecord, a_id: DocId, b: &DocRecord, b_id: DocId) -> bool {
        match self.opts.representative {
            // Insertion numbers, not ids: ids are given out again.
            RepresentativePolicy::FirstSeen => (a.seq, a_id) < (b.seq, b_id),
            RepresentativePolicy::EarliestTime => {
                let t = |r: &DocRecord| if r.time > 0 { r.time } else { i64::MAX };
                (t(a), a.seq, a_id) < (t(b), b.seq, b_id)
            }
            RepresentativePolicy::LongestText => {
                (std::cmp::Reverse(a.text_chars), a.seq, a_id)
                    < (std::cmp::Reverse(b.text_chars), b.seq, b_id)
            }
        }
    }

    /// Puts page `id` (record `rec`, normalized text `text`, not yet written) into the matched
    /// cluster, or a new one. A newcomer the policy prefers takes over as representative in the
    /// same write — only when every member verifies against it (a member joined the cluster by
    /// verifying against the representative it had: it must verify against the one it gets).
    /// Otherwise it joins as a member and the representative stays.
    pub(crate) fn place(
        &self,
        txn: &mut Txn<'_>,
        id: DocId,
        rec: &mut DocRecord,
        text: &str,
        best: Option<&Match>,
    ) -> Result<Placed> {
        match best {
            Some(m) => {
                let mut cl = txn.cluster(m.cluster)?.ok_or_else(|| {
                    Error::corruption(
                        cf::CLUSTERS,
                        &id_key(m.cluster),
                        "matched cluster is missing",
                    )
                })?;
                let rep = cl.representative;
                if let Some(rep_rec) = txn.doc(rep)? {
                    if self.prefers(rec, id, &rep_rec, rep)
                        && self.all_verify_against(txn, &cl.members, text, rec)?
                    {
                        cl.representative = id;
                    }
                }
                cl.members.insert(id);
                rec.cluster = m.cluster;
                let placed = Placed {
                    cluster: m.cluster,
                    representative: cl.representative,
                };
                txn.put_cluster(m.cluster, cl);
                Ok(placed)
            }
            None => {
                let cid = txn.alloc_cluster()?;
                rec.cluster = cid;
                txn.put_cluster(
                    cid,
                    ClusterRecord {
                        representative: id,
                        members: std::iter::once(id).collect(),
                    },
                );
                Ok(Placed {
                    cluster: cid,
                    representative: id,
                })
            }
        }
    }

    /// Does every page of `members` verify against a page of normalized text `text` and record
    /// `rec` (as a member against its representative)?
    fn all_verify_against(
        &self,
        txn: &Txn<'_>,
        members: &roaring::RoaringBitmap,
        text: &str,
        rec: &DocRecord,
    ) -> Result<bool> {
        let features = self.opts.signature.method.features(text);
        for m in members.iter() {
            let Some(m_rec) = txn.doc(m)? else {
                return Ok(false);
            };
            if self.codes_conflict(&m_rec.codes, &rec.codes) {
                return Ok(false);
            }
            let Some(t) = txn.text(m)? else {
                return Ok(false);
            };
            let member = Side {
                text: &t,
                features: None,
                simhash: m_rec.simhash,
            };
            let newcomer = Side {
                text,
                features: Some(&features),
                simhash: rec.simhash,
            };
            if self.similar(Some(txn), member, newcomer).is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Takes a deleted page out of its cluster, handing over and re-placing members as needed.
    pub(crate) fn leave_cluster(
        &self,
        txn: &mut Txn<'_>,
        id: DocId,
        cid: ClusterId,
    ) -> Result<Left> {
        let mut left = Left::default();
        let Some(mut cl) = txn.cluster(cid)? else {
            return Ok(left);
        };
        cl.members.remove(id);
        if cl.representative != id {
            if cl.members.is_empty() {
                txn.delete_cluster(cid);
            } else {
                left.representative = Some(cl.representative);
                txn.put_cluster(cid, cl);
            }
            return Ok(left);
        }
        left.was_representative = true;
        // Hand-over: the member the policy prefers leads.
        let mut best: Option<(DocId, DocRecord)> = None;
        for m in cl.members.iter() {
            let Some(rec) = txn.doc(m)? else { continue };
            let take = match &best {
                None => true,
                Some((bid, brec)) => self.prefers(&rec, m, brec, *bid),
            };
            if take {
                best = Some((m, rec));
            }
        }
        let Some((rep, _)) = best else {
            txn.delete_cluster(cid);
            return Ok(left);
        };
        cl.representative = rep;
        left.representative = Some(rep);
        let mut displaced = Vec::new();
        let rep_rec = txn.doc(rep)?;
        let (rep_codes, rep_simhash) = rep_rec.map_or((Vec::new(), 0), |r| (r.codes, r.simhash));
        if let Some(rep_text) = txn.text(rep)? {
            let rep_features = self.opts.signature.method.features(&rep_text);
            for m in cl.members.iter().filter(|&m| m != rep) {
                let Some(m_rec) = txn.doc(m)? else { continue };
                let conflict = self.codes_conflict(&m_rec.codes, &rep_codes);
                if let Some(t) = txn.text(m)? {
                    let member = Side {
                        text: &t,
                        features: None,
                        simhash: m_rec.simhash,
                    };
                    let leader = Side {
                        text: &rep_text,
                        features: Some(&rep_features),
                        simhash: rep_simhash,
                    };
                    if conflict || self.similar(Some(txn), member, leader).is_none() {
                        displaced.push(m);
                    }
                }
            }
        }
        for m in &displaced {
            cl.members.remove(*m);
        }
        txn.put_cluster(cid, cl);
        for m in displaced {
            let placed = self.replace_member(txn, m, cid)?;
            left.moved.push((m, placed));
        }
        Ok(left)
    }

    /// Re-places a member that no longer resembles its cluster's new representative: it joins
    /// another cluster it verifies against, or founds its own (never its old cluster).
    fn replace_member(&self, txn: &mut Txn<'_>, m: DocId, old: ClusterId) -> Result<Placed> {
        let mut rec = txn
            .doc(m)?
            .ok_or_else(|| Error::corruption(cf::DOCS, &id_key(m), "member is missing"))?;
        let text = txn.text(m)?.unwrap_or_else(|| std::sync::Arc::from(""));
        let (fps, sketch, features) = text_signature(&text, &self.opts.signature);
        let codes = rec.codes.clone();
        let probe = Probe::parts(
            &text,
            &fps,
            &sketch,
            &features,
            (rec.simhash, rec.content_hash),
            &codes,
            &self.opts.signature.method,
        );
        let (decision, _) = self.decide(
            Some(txn),
            &probe,
            Some(m),
            Some(old),
            &mut Timing::default(),
            &mut Memo::default(),
        )?;
        let placed = self.place(txn, m, &mut rec, &text, decision.best.as_ref())?;
        let nearest = match decision.nearest {
            Some(n) => txn
                .doc(n.against)?
                .map(|r| (n.against, r.seq, n.resemble as f32, n.contain as f32)),
            None => None,
        };
        (rec.similar_to, rec.similar_seq, rec.resemble, rec.contain) =
            nearest.unwrap_or((NO_DOC, 0, 0.0, 0.0));
        txn.put_doc(m, rec);
        Ok(placed)
    }
}
