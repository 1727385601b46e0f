//! Cluster placement (SPEC §2.7; seed 000 §3.3): a page joins the cluster it verified against
//! — taking the lead when the representative policy prefers it and every member verifies
//! against it — or founds its own; a deleted representative hands over to the member the policy
//! prefers, and members that no longer verify against the new one are placed again. Under
//! `FirstSeen` a representative's changed recrawl that still verifies against its old version
//! keeps the lead instead ([`crate::IndexOptions::sticky_representative`]).

use super::Txn;
use crate::index::decide::{Match, Memo};
use crate::index::view::View;
use crate::index::{Index, Probe, Timing};
use crate::methods::{Features, Side};
use crate::options::RepresentativePolicy;
use crate::signature::text_signature;
use crate::storage::codec::{ClusterId, ClusterRecord, DocId, DocRecord, NO_DOC};
use crate::storage::{cf, id_key};
use crate::{Error, Result};

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

/// A page as the representative its cluster's members are verified against.
pub(crate) struct Leader<'a> {
    /// Its normalized text.
    pub(crate) text: &'a str,
    /// What the method compares of it.
    pub(crate) features: &'a Features,
    pub(crate) simhash: u64,
    /// Its heading codes.
    pub(crate) codes: &'a [u32],
}

impl<'a> Leader<'a> {
    /// The page as one side of a comparison.
    pub(crate) fn side(&self) -> Side<'a> {
        Side {
            text: self.text,
            features: Some(self.features),
            simhash: self.simhash,
        }
    }
}

/// A stored page as one side of a comparison: its text and its record's simhash.
pub(crate) fn stored_side<'t>(text: &'t str, rec: &DocRecord) -> Side<'t> {
    Side {
        text,
        features: None,
        simhash: rec.simhash,
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Placed {
    pub(crate) cluster: ClusterId,
    pub(crate) representative: DocId,
}

impl Index {
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
    pub(crate) fn all_verify_against(
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
            let newcomer = Side {
                text,
                features: Some(&features),
                simhash: rec.simhash,
            };
            if self
                .similar(txn, stored_side(&t, &m_rec), newcomer)
                .is_none()
            {
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
        let rep_rec = txn.doc(rep)?;
        let (rep_codes, rep_simhash) = rep_rec.map_or((Vec::new(), 0), |r| (r.codes, r.simhash));
        let displaced = match txn.text(rep)? {
            Some(rep_text) => {
                let rep_features = self.opts.signature.method.features(&rep_text);
                let leader = Leader {
                    text: &rep_text,
                    features: &rep_features,
                    simhash: rep_simhash,
                    codes: &rep_codes,
                };
                self.unverified(txn, &cl.members, rep, &leader)?
            }
            None => Vec::new(),
        };
        left.moved = self.displace(txn, cid, cl, displaced)?;
        Ok(left)
    }

    /// Takes page `id`, the representative of cluster `cid`, out of it for its new version
    /// `next` (not written yet) to lead it ([`crate::IndexOptions::sticky_representative`]): no
    /// hand-over. Membership stays honest (see [`crate::index::decide`]): the members that do
    /// not verify against `next` are placed again, as after a hand-over; the others verify
    /// against the representative they get. Until the insert puts `next` at the head of the
    /// cluster ([`Index::place_lead`]) its record still names `id`: the decisions in between
    /// (the moved members', the new version's) leave this cluster out.
    pub(crate) fn keep_lead(
        &self,
        txn: &mut Txn<'_>,
        id: DocId,
        cid: ClusterId,
        next: &Leader<'_>,
    ) -> Result<Left> {
        let mut left = Left {
            was_representative: true,
            ..Left::default()
        };
        let Some(mut cl) = txn.cluster(cid)? else {
            return Ok(left);
        };
        cl.members.remove(id);
        let displaced = self.unverified(txn, &cl.members, id, next)?;
        left.moved = self.displace(txn, cid, cl, displaced)?;
        Ok(left)
    }

    /// Puts page `id`, the new version of the representative of cluster `cid`, at the head of
    /// the cluster it kept (see [`Index::keep_lead`]).
    pub(crate) fn place_lead(
        &self,
        txn: &mut Txn<'_>,
        id: DocId,
        rec: &mut DocRecord,
        cid: ClusterId,
    ) -> Result<Placed> {
        let mut cl = txn.cluster(cid)?.ok_or_else(|| {
            Error::corruption(cf::CLUSTERS, &id_key(cid), "a kept cluster is missing")
        })?;
        cl.members.insert(id);
        cl.representative = id;
        rec.cluster = cid;
        txn.put_cluster(cid, cl);
        Ok(Placed {
            cluster: cid,
            representative: id,
        })
    }

    /// Does a page verify against another as a member against its representative: heading codes
    /// that do not conflict, and similar under the method? Each side with its heading codes.
    pub(crate) fn verifies_as_member(
        &self,
        view: &impl View,
        (member, member_codes): (Side<'_>, &[u32]),
        (lead, lead_codes): (Side<'_>, &[u32]),
    ) -> bool {
        !self.codes_conflict(member_codes, lead_codes) && self.similar(view, member, lead).is_some()
    }

    /// The pages of `members` but `except` that do not verify against `leader` (as a member
    /// against its representative); a member whose text is not held stays.
    fn unverified(
        &self,
        txn: &Txn<'_>,
        members: &roaring::RoaringBitmap,
        except: DocId,
        leader: &Leader<'_>,
    ) -> Result<Vec<DocId>> {
        let mut displaced = Vec::new();
        for m in members.iter().filter(|&m| m != except) {
            let Some(m_rec) = txn.doc(m)? else { continue };
            if let Some(t) = txn.text(m)? {
                let member = (stored_side(&t, &m_rec), m_rec.codes.as_slice());
                if !self.verifies_as_member(txn, member, (leader.side(), leader.codes)) {
                    displaced.push(m);
                }
            }
        }
        Ok(displaced)
    }

    /// Writes cluster `cid` without the `displaced` members, and places each of them again.
    fn displace(
        &self,
        txn: &mut Txn<'_>,
        cid: ClusterId,
        mut cl: ClusterRecord,
        displaced: Vec<DocId>,
    ) -> Result<Vec<(DocId, Placed)>> {
        for m in &displaced {
            cl.members.remove(*m);
        }
        txn.put_cluster(cid, cl);
        let mut moved = Vec::with_capacity(displaced.len());
        for m in displaced {
            let placed = self.replace_member(txn, m, cid)?;
            moved.push((m, placed));
        }
        Ok(moved)
    }

    /// Re-places a member that no longer resembles its cluster's new representative: it joins
    /// another cluster it verifies against, or founds its own (never its old cluster).
    pub(crate) fn replace_member(
        &self,
        txn: &mut Txn<'_>,
        m: DocId,
        old: ClusterId,
    ) -> Result<Placed> {
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
            &*txn,
            &probe,
            Some(m),
            Some(old),
            &mut Timing::default(),
            &mut Memo::default(),
        )?;
        txn.mark_all_frequent(&decision.frequent);
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
