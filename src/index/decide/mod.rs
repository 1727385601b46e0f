//! Deciding where a page belongs (SPEC §2.7; seed 000 §3.3, seed 002 Single-Pass, seed 003 §4.4):
//! candidate search over the postings and simhash tables (seed 000 §4.2, seed 001 §3.3), the
//! clusters ranked by what their members share with the page, and verification against their
//! representatives (`outcome`). Decisions read through a [`View`] and write nothing.
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

mod outcome;

use std::collections::HashSet;
use std::time::Instant;

use roaring::RoaringBitmap;

pub(crate) use outcome::{Memo, Outcome, Stored};

use super::view::{Known, View};
use super::{Index, Timing};
use crate::fingerprint::clause_key_count;
use crate::methods::{Features, Method};
use crate::options::SignatureConfig;
use crate::signature::{page_keys, Signatures};
use crate::storage::codec::{ClusterId, DocId, PageSize};
use crate::storage::{kind, posting_key};
use crate::Result;

/// How many candidate pages (most shared fingerprints first) are mapped to their clusters.
const MAX_CANDIDATE_PAGES: usize = 64;

/// Candidate pages a search gathers before longer postings only add to the count of the pages
/// already found (see [`count_shared`]).
const CANDIDATE_BUDGET: usize = 16 * MAX_CANDIDATE_PAGES;

/// Counts, for each candidate page, the postings it is in, shortest postings first: while fewer
/// than [`CANDIDATE_BUDGET`] pages are candidates, a posting's pages all become candidates;
/// after, a posting only counts toward the candidates found. The work of a look-up is then
/// bounded by the budget and the number of keys, not by the length of postings, which grow
/// with the index up to the over-frequent threshold (seed 000 §4.2: 10,000 pages). A page that
/// shares much with the probe is in short postings (its own sentences), and is found before the
/// budget runs out; one that shares only long postings (common boilerplate) would not rank among
/// the best [`MAX_CANDIDATE_PAGES`] anyway. Under the budget, every posting counts in full: the
/// counts are those of counting every page of every posting.
pub(crate) fn count_shared(
    cands: &mut rustc_hash::FxHashMap<DocId, (u32, bool)>,
    mut postings: Vec<RoaringBitmap>,
) {
    postings.sort_by_key(RoaringBitmap::len);
    for ids in postings {
        if cands.len() < CANDIDATE_BUDGET {
            for id in &ids {
                cands.entry(id).or_default().0 += 1;
            }
        } else if (ids.len() as usize) < cands.len() {
            for id in &ids {
                if let Some(c) = cands.get_mut(&id) {
                    c.0 += 1;
                }
            }
        } else {
            for (id, c) in cands.iter_mut() {
                if ids.contains(*id) {
                    c.0 += 1;
                }
            }
        }
    }
}

/// A verified match resembling this much ends the search for a better cluster.
pub(crate) const STRONG_MATCH: f64 = 0.6;

/// Of how many of the first clusters the best candidate members ([`Rank::members`], at most
/// two a cluster) are verified directly when no representative matches strongly.
pub(crate) const MEMBER_FALLBACK: usize = 4;

/// A verified match of a page with a cluster.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Match {
    /// The cluster.
    pub(crate) cluster: ClusterId,
    /// Its representative when the match was found.
    pub(crate) representative: DocId,
    /// The page the probe was verified against.
    pub(crate) against: DocId,
    /// Resemble rate.
    pub(crate) resemble: f64,
    /// Contain rate.
    pub(crate) contain: f64,
    /// Identical normalized texts.
    pub(crate) exact: bool,
}

/// What [`Index::rank`] finds.
pub(crate) struct Ranked {
    /// The clusters to compare with, best first, with their rank.
    pub(crate) clusters: Vec<(ClusterId, Rank)>,
    /// The number of candidate pages.
    pub(crate) candidates: usize,
    /// The page of lowest id with the probe's exact content.
    pub(crate) identical: Option<DocId>,
    /// Posting keys found over-frequent, with their reason byte: the writer marks them.
    pub(crate) frequent: Vec<([u8; 9], u8)>,
}

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
    /// Posting keys the candidate search found over-frequent, with their reason byte: a write
    /// marks them ([`crate::index::Txn::mark_frequent`]), a query leaves them.
    pub(crate) frequent: Vec<([u8; 9], u8)>,
}

/// Candidate cluster ranking: (exact content match, shorter-side share, shared keys) of its best
/// candidate member (see [`shorter_share`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct Rank {
    /// A member has the probe's content hash.
    pub(crate) exact: bool,
    /// The best member's share of the shorter page's keys, in millionths ([`shorter_share`]).
    pub(crate) share: u32,
    /// The posting keys the best member shares with the probe.
    pub(crate) shared: u32,
    /// That member.
    pub(crate) best_member: DocId,
    /// The next candidate member of the cluster in rank order, if any: a cluster of several
    /// versions of a page holds the one a revised or contained page verifies against less often
    /// in its first place than in its first two.
    pub(crate) second_member: Option<DocId>,
}

impl Rank {
    /// The candidate members verified directly when no representative matches strongly.
    pub(crate) fn members(&self) -> impl Iterator<Item = DocId> {
        std::iter::once(self.best_member).chain(self.second_member)
    }
}

/// What the ranking knows of the probe's size: characters of its normalized text, its posting
/// keys, and its fingerprint units (sentences or clauses, [`crate::fingerprint::unit_count`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProbeSize {
    pub(crate) chars: u32,
    pub(crate) keys: u32,
    pub(crate) units: u32,
}

impl ProbeSize {
    /// The size of a probe, its units counted under `cfg`.
    pub(crate) fn of(probe: &Probe<'_>, cfg: &SignatureConfig) -> ProbeSize {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        ProbeSize {
            chars: count(probe.text.chars().count()),
            keys: count(probe.keys.len()),
            units: probe.unit_count(cfg),
        }
    }
}

/// The share, in millionths, of the shorter page's posting keys that a candidate shares with
/// the probe: `shared / min(|probe keys|, |candidate keys|)`, the shorter page told by the
/// characters of the normalized texts.
///
/// Seed 000 §4.4 measures containment over the shorter page (the contain rate is the LCS over
/// the shorter text): a chapter inside a one-page manual, or a heavily revised page, shares a
/// large part of the *shorter* page's keys but few keys in absolute terms, fewer than a long
/// page or a template sibling that shares boilerplate clauses with everything; ranking by the
/// count alone cuts it before verification. The count breaks ties.
///
/// A candidate's own key count is not stored: its fingerprints are (the record's count), its
/// clause keys are counted as the signature makes them
/// ([`crate::fingerprint::clause_key_count`]: every unit of a short page, else the bottom-k
/// sketch, the local keys and the sampled keys) for its number of units, estimated from the
/// probe's units per character. A longer candidate is measured against the probe's keys, which
/// are exact.
pub(crate) fn shorter_share(
    shared: u32,
    probe: ProbeSize,
    cand: PageSize,
    cfg: &SignatureConfig,
) -> u32 {
    let shorter = if cand.text_chars >= probe.chars {
        probe.keys
    } else {
        let units =
            u64::from(probe.units) * u64::from(cand.text_chars) / u64::from(probe.chars.max(1));
        let units = usize::try_from(units).unwrap_or(usize::MAX);
        let clause = clause_key_count(units, &cfg.sentence_params(), cfg.sketch_size as usize);
        let clause = u32::try_from(clause).unwrap_or(u32::MAX);
        u32::from(cand.fingerprints)
            .saturating_add(clause)
            .min(probe.keys)
    };
    let share = u64::from(shared) * 1_000_000 / u64::from(shorter.max(1));
    u32::try_from(share).unwrap_or(u32::MAX)
}

fn better(m: &Match, than: &Option<Match>) -> bool {
    match than {
        None => true,
        Some(b) => (m.exact, m.resemble, m.contain) > (b.exact, b.resemble, b.contain),
    }
}

/// Reason byte of an over-frequent fingerprint: carried by too many pages.
pub(crate) const FREQUENT_PAGES: u8 = b'P';
/// Reason byte of an over-frequent fingerprint: many pages on few hosts.
pub(crate) const FREQUENT_HOSTS: u8 = b'H';

/// What candidate search needs of a page.
pub(crate) struct Probe<'p> {
    pub(crate) text: &'p str,
    /// The posting keys of the page under the index's method (see [`crate::signature::page_keys`]).
    pub(crate) keys: Vec<[u8; 9]>,
    /// Candidates come from the simhash tables too: always for the simhash methods; for LCS
    /// when the page has no sentence fingerprint (and, below, when its keys found nobody).
    pub(crate) simhash_always: bool,
    /// Candidates come from the simhash tables when the keys found nobody (LCS, SPEC §2.3).
    pub(crate) simhash_fallback: bool,
    /// What the method compares (see [`crate::Method::features`]).
    pub(crate) features: &'p Features,
    pub(crate) simhash: u64,
    pub(crate) content_hash: u128,
    pub(crate) codes: &'p [u32],
    /// Postings of the probe's keys read ahead of the writer (batch ingest), if still valid.
    pub(crate) known: Option<Known<'p>>,
    /// The text split into verification units (LCS), made at the first verification and kept
    /// for the others: a probe is verified against several stored pages.
    pub(crate) units: std::sync::OnceLock<Vec<u32>>,
    /// The text's sentences when the probe's signatures hold them (for [`Probe::unit_count`]).
    pub(crate) sentences: Option<&'p [crate::text::Sentence]>,
    /// Its fingerprint units, counted at the first ranking.
    pub(crate) unit_count: std::sync::OnceLock<u32>,
}

impl Probe<'_> {
    /// The probe's text in verification units ([`crate::verify::units`]), split once.
    pub(crate) fn units(&self) -> &[u32] {
        self.units.get_or_init(|| crate::verify::units(self.text))
    }

    /// The number of the probe's fingerprint units under `cfg`
    /// ([`crate::fingerprint::unit_count`]), counted once.
    pub(crate) fn unit_count(&self, cfg: &SignatureConfig) -> u32 {
        *self.unit_count.get_or_init(|| {
            let params = cfg.sentence_params();
            let n = match self.sentences {
                Some(sentences) => crate::fingerprint::unit_count(self.text, sentences, &params),
                None => {
                    let sentences = crate::text::split_sentences(self.text);
                    crate::fingerprint::unit_count(self.text, &sentences, &params)
                }
            };
            u32::try_from(n).unwrap_or(u32::MAX)
        })
    }
}

impl<'p> Probe<'p> {
    /// The probe of a new page, under `method`.
    pub(crate) fn of(sig: &'p Signatures, method: &Method) -> Self {
        Probe {
            sentences: Some(&sig.sentences),
            ..Probe::parts(
                &sig.text,
                &sig.fingerprints,
                &sig.sketch,
                &sig.features,
                (sig.simhash, sig.content_hash),
                &sig.codes,
                method,
            )
        }
    }

    /// The probe of a page given by its parts (a stored page is re-placed from its text).
    pub(crate) fn parts(
        text: &'p str,
        fingerprints: &[u128],
        sketch: &[u128],
        features: &'p Features,
        (simhash, content_hash): (u64, u128),
        codes: &'p [u32],
        method: &Method,
    ) -> Self {
        Probe {
            text,
            keys: page_keys(fingerprints, sketch, features, method),
            simhash_always: method.uses_simhash() || (method.is_lcs() && fingerprints.is_empty()),
            simhash_fallback: method.is_lcs(),
            features,
            simhash,
            content_hash,
            codes,
            known: None,
            units: std::sync::OnceLock::new(),
            sentences: None,
            unit_count: std::sync::OnceLock::new(),
        }
    }
}

/// What a candidate search found.
pub(crate) struct Gathered {
    /// Candidate pages: id → (shared posting keys, same content).
    pub(crate) cands: rustc_hash::FxHashMap<DocId, (u32, bool)>,
    /// Posting keys found over-frequent, with their reason byte.
    pub(crate) frequent: Vec<([u8; 9], u8)>,
}

/// The clusters of the candidate pages `pages` (id, shared keys, exact content), whose records
/// `sizes` were read, best first, at most `limit` of them: pages ranked by exact content, then
/// by their share of the shorter page's keys ([`shorter_share`], with the probe's size and the
/// sketch size; `None`, for methods other than LCS: by the shared keys alone), then by the
/// shared keys, then by id; a cluster ranks as its best page. Pages gone (no record) and the
/// excluded cluster are left out.
pub(crate) fn rank_clusters(
    pages: &[(DocId, u32, bool)],
    sizes: &[Option<PageSize>],
    share: Option<(ProbeSize, &SignatureConfig)>,
    exclude_cluster: Option<ClusterId>,
    limit: usize,
) -> Vec<(ClusterId, Rank)> {
    // (page, cluster, exact, share, shared), best first. The share is the LCS method's (seed
    // 000 §4.4); the other methods rank by their shared keys alone.
    let mut ranked_pages: Vec<(DocId, ClusterId, bool, u32, u32)> = pages
        .iter()
        .zip(sizes)
        .filter_map(|(&(id, shared, exact), s)| {
            let s = (*s)?;
            if Some(s.cluster) == exclude_cluster {
                return None;
            }
            let share = match share {
                Some((probe, cfg)) => shorter_share(shared, probe, s, cfg),
                None => shared,
            };
            Some((id, s.cluster, exact, share, shared))
        })
        .collect();
    ranked_pages.sort_unstable_by_key(|&(id, _, exact, share, shared)| {
        (std::cmp::Reverse((exact, share, shared)), id)
    });
    let mut clusters = rustc_hash::FxHashMap::<ClusterId, Rank>::default();
    for &(id, cluster, exact, share, shared) in &ranked_pages {
        // Pages come best first: a cluster's first is its best member, its second the next.
        clusters
            .entry(cluster)
            .and_modify(|r| {
                if r.second_member.is_none() {
                    r.second_member = Some(id);
                }
            })
            .or_insert(Rank {
                exact,
                share,
                shared,
                best_member: id,
                second_member: None,
            });
    }
    let mut ranked: Vec<(ClusterId, Rank)> = clusters.into_iter().collect();
    ranked.sort_unstable_by_key(|&(cid, r)| (std::cmp::Reverse((r.exact, r.share, r.shared)), cid));
    ranked.truncate(limit);
    ranked
}

impl Index {
    /// Candidate pages of a probe: id → (shared fingerprints, exact content), and the keys it
    /// found over-frequent (for the writer to mark).
    pub(crate) fn gather(&self, view: &impl View, probe: &Probe<'_>) -> Result<Gathered> {
        let mut cands = rustc_hash::FxHashMap::<DocId, (u32, bool)>::default();
        let mut frequent = Vec::new();
        let freq = &self.opts.frequent;
        let method = &self.opts.signature.method;
        let lookup = if method.uses_df() {
            let keys = view.with_df(|df| method.lookup_keys(probe.features, df));
            std::borrow::Cow::Owned(keys)
        } else {
            std::borrow::Cow::Borrowed(&probe.keys)
        };
        // The content hash's posting first, then the fingerprints', in one read.
        let keys: Vec<[u8; 9]> = std::iter::once(posting_key(kind::CONTENT, probe.content_hash))
            .chain(lookup.iter().copied().filter(|key| !view.is_frequent(key)))
            .collect();
        // With `sketch_fallback`, the sketch keys are read only when the content and fingerprint
        // keys found nobody (a second read), as the simhash tables are below.
        let (keys, sketch): (Vec<[u8; 9]>, Vec<[u8; 9]>) = if self.opts.sketch_fallback {
            let (sketch, other) = keys[1..].iter().partition(|k| k[0] == kind::SKETCH);
            (std::iter::once(keys[0]).chain(other).collect(), sketch)
        } else {
            (keys, Vec::new())
        };
        for (round, keys) in [keys, sketch].into_iter().enumerate() {
            if round == 1 && (!cands.is_empty() || keys.is_empty()) {
                break;
            }
            // The first read leads with the content key.
            let with_content = round == 0;
            let mut postings = view.postings(&keys, probe.known)?.into_iter();
            if with_content {
                for id in &postings.next().unwrap_or_default() {
                    cands.entry(id).or_default().1 = true;
                }
            }
            let mut counted: Vec<RoaringBitmap> = Vec::with_capacity(keys.len());
            for (key, ids) in keys
                .into_iter()
                .skip(usize::from(with_content))
                .zip(postings)
            {
                let n = ids.len();
                // A word's posting is its document frequency: never marked over-frequent.
                let word = key[0] == kind::TERM;
                if !word && n > freq.max_pages {
                    frequent.push((key, FREQUENT_PAGES));
                    continue;
                }
                if !word && n > freq.few_hosts_pages && self.few_hosts(view, &ids)? {
                    frequent.push((key, FREQUENT_HOSTS));
                    continue;
                }
                counted.push(ids);
            }
            count_shared(&mut cands, counted);
        }
        // The simhash tables are the fallback of SPEC §2.3: for pages without sentence
        // fingerprints, or whose postings found nobody; and the simhash methods' own look-up,
        // where the closest pages rank first.
        if probe.simhash_always || (probe.simhash_fallback && cands.is_empty()) {
            let near = view.simhash_near(probe.simhash)?;
            let by_distance = self.opts.signature.method.uses_simhash();
            for (id, d) in near {
                let c = cands.entry(id).or_default();
                if by_distance {
                    c.0 = c.0.max(64 - d);
                }
            }
        }
        Ok(Gathered { cands, frequent })
    }

    /// Do the pages of a posting sit on at most `few_hosts` hosts?
    /// Pages with no host tell nothing: the answer is "few hosts" only when more than
    /// `few_hosts_pages` of the pages have a host and those hosts are at most `few_hosts`.
    pub(crate) fn few_hosts(&self, view: &impl View, ids: &RoaringBitmap) -> Result<bool> {
        let mut hosts: HashSet<String> = HashSet::new();
        let mut with_host = 0u64;
        for id in ids {
            if let Some(rec) = view.doc(id)?.filter(|r| !r.host.is_empty()) {
                with_host += 1;
                hosts.insert(rec.host);
                if hosts.len() > self.opts.frequent.few_hosts {
                    return Ok(false);
                }
            }
        }
        Ok(with_host > self.opts.frequent.few_hosts_pages)
    }

    /// The clusters a probe is compared with, best first (exact content match, then the share of
    /// the shorter page's keys, then most shared keys: [`rank_clusters`]), at most
    /// `max_clusters_verified` of them, the number of candidate pages,
    /// and the page of lowest id with the probe's exact content (read with the candidates).
    pub(crate) fn rank(
        &self,
        view: &impl View,
        probe: &Probe<'_>,
        exclude_doc: Option<DocId>,
        exclude_cluster: Option<ClusterId>,
    ) -> Result<Ranked> {
        self.rank_among(view, probe, exclude_doc, exclude_cluster, None)
    }

    /// [`Index::rank`] among the candidates `keep` accepts (all without it): what
    /// [`Index::explain`] runs to search as a page's insert did, among the pages inserted
    /// before it.
    pub(crate) fn rank_among(
        &self,
        view: &impl View,
        probe: &Probe<'_>,
        exclude_doc: Option<DocId>,
        exclude_cluster: Option<ClusterId>,
        keep: Option<&dyn Fn(DocId) -> Result<bool>>,
    ) -> Result<Ranked> {
        let Gathered {
            mut cands,
            frequent,
        } = self.gather(view, probe)?;
        if let Some(x) = exclude_doc {
            cands.remove(&x);
        }
        if let Some(keep) = keep {
            let mut dropped = Vec::new();
            for &id in cands.keys() {
                if !keep(id)? {
                    dropped.push(id);
                }
            }
            for id in dropped {
                cands.remove(&id);
            }
        }
        let identical = cands
            .iter()
            .filter(|(_, &(_, exact))| exact)
            .map(|(&id, _)| id)
            .min();
        // The candidates sharing the most posting keys first; a bounded number of them
        // (MAX_CANDIDATE_PAGES) is read, mapped to clusters and ranked by their share of the
        // shorter page's keys (`shorter_share`): the work of a search stays bounded.
        let mut ranked_pages: Vec<(DocId, u32, bool)> =
            cands.iter().map(|(&id, &(s, e))| (id, s, e)).collect();
        // The order is total (ids are distinct): the best MAX_CANDIDATE_PAGES are selected.
        let key = |&(id, s, e): &(DocId, u32, bool)| (std::cmp::Reverse((e, s)), id);
        if ranked_pages.len() > MAX_CANDIDATE_PAGES {
            ranked_pages.select_nth_unstable_by_key(MAX_CANDIDATE_PAGES, key);
            ranked_pages.truncate(MAX_CANDIDATE_PAGES);
        }
        let ids: Vec<DocId> = ranked_pages.iter().map(|p| p.0).collect();
        let sizes = view.sizes_of(&ids)?;
        let method = &self.opts.signature.method;
        let share = method.is_lcs().then(|| {
            (
                ProbeSize::of(probe, &self.opts.signature),
                &self.opts.signature,
            )
        });
        let ranked = rank_clusters(
            &ranked_pages,
            &sizes,
            share,
            exclude_cluster,
            self.opts.max_clusters_verified,
        );
        Ok(Ranked {
            clusters: ranked,
            candidates: cands.len(),
            identical,
            frequent,
        })
    }

    /// Finds the cluster a probe belongs to (see the module docs). Returns the decision and the
    /// number of candidate pages.
    pub(crate) fn decide(
        &self,
        view: &impl View,
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
                    frequent: Vec::new(),
                },
                0,
            ));
        }
        let tc = Instant::now();
        let Ranked {
            clusters: ranked,
            candidates,
            identical,
            frequent,
        } = self.rank(view, probe, exclude_doc, exclude_cluster)?;
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
            let Some(cl) = view.cluster(cid)? else {
                continue;
            };
            let rep = cl.representative;
            reps.push(rep);
            if Some(rep) == exclude_doc {
                continue;
            }
            if let Some(m) = self.try_match(view, probe, cid, rep, rep, &mut verified, memo)? {
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
                for member in rank.members() {
                    if member == rep || Some(member) == exclude_doc {
                        continue;
                    }
                    if let Some(m) =
                        self.try_match(view, probe, cid, rep, member, &mut verified, memo)?
                    {
                        if better(&m, &nearest) {
                            nearest = Some(m);
                        }
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
                frequent,
            },
            candidates,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(cluster: ClusterId, text_chars: u32, fingerprints: u16) -> Option<PageSize> {
        Some(PageSize {
            cluster,
            text_chars,
            fingerprints,
        })
    }

    /// A long probe: 30,000 characters, 750 units, 112 fingerprints and 91 clause keys (45 local
    /// keys, among them the 8 of the sketch, and 46 sampled keys).
    const LONG: ProbeSize = ProbeSize {
        chars: 30_000,
        keys: 203,
        units: 750,
    };

    #[test]
    fn a_short_candidate_is_measured_by_its_own_keys() {
        let cfg = SignatureConfig::default();
        // 1,500 characters, 37 units: its 4 fingerprints, the 8 sketch keys (more than its 2
        // local keys, 74 / 33) and 2 sampled keys (37 / 16).
        let short = size(1, 1_500, 4).unwrap();
        assert_eq!(shorter_share(14, LONG, short, &cfg), 1_000_000);
        assert_eq!(shorter_share(2, LONG, short, &cfg), 2 * 1_000_000 / 14);
        // 1,000 characters, 25 units: a short page keys every unit.
        let shorter = size(1, 1_000, 2).unwrap();
        assert_eq!(shorter_share(27, LONG, shorter, &cfg), 1_000_000);
        // A candidate at least as long as the probe is measured by the probe's keys.
        let long = size(2, 60_000, 112).unwrap();
        assert_eq!(shorter_share(38, LONG, long, &cfg), 38 * 1_000_000 / 203);
        // Never more keys than the probe's, never a division by zero.
        let empty = ProbeSize {
            chars: 0,
            keys: 0,
            units: 0,
        };
        assert_eq!(shorter_share(0, empty, short, &cfg), 0);
        assert_eq!(
            shorter_share(3, empty, size(3, 0, 0).unwrap(), &cfg),
            3_000_000
        );
    }

    #[test]
    fn a_short_page_contained_in_a_long_one_is_ranked_in() {
        let cfg = SignatureConfig::default();
        // Ten long template siblings share 5 of the long probe's 203 keys each (boilerplate
        // clauses); the chapter the probe contains shares 6 keys of its own 14.
        let mut pages: Vec<(DocId, u32, bool)> = (0..10).map(|i| (i, 5, false)).collect();
        let mut sizes: Vec<Option<PageSize>> =
            (0..10).map(|i| size(100 + i, 25_000, 110)).collect();
        pages.push((10, 6, false));
        sizes.push(size(7, 1_500, 4));
        let ranked = rank_clusters(&pages, &sizes, Some((LONG, &cfg)), None, 2);
        assert_eq!(ranked.len(), 2, "the limit bounds the clusters verified");
        assert_eq!(ranked[0].0, 7);
        assert_eq!(ranked[0].1.best_member, 10);
        // Sharing fewer keys than a sibling, it still ranks first by its share.
        pages[10].1 = 4;
        let ranked = rank_clusters(&pages, &sizes, Some((LONG, &cfg)), None, 2);
        assert_eq!(ranked[0].0, 7);
        // By the count alone (a method other than LCS), the siblings come first.
        let ranked = rank_clusters(&pages, &sizes, None, None, 2);
        assert_eq!(
            ranked.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![100, 101]
        );
    }

    #[test]
    fn clusters_keep_their_two_best_members_and_the_limit() {
        let cfg = SignatureConfig::default();
        // Three versions of a page in one cluster, an exact copy in another; a page gone and
        // an excluded cluster are left out.
        let pages = [
            (1, 20, false),
            (2, 30, false),
            (3, 25, false),
            (4, 1, true),
            (5, 90, false),
            (6, 90, false),
        ];
        let sizes = [
            size(9, 5_000, 100),
            size(9, 5_000, 100),
            size(9, 5_000, 100),
            size(8, 30_000, 112),
            None,
            size(3, 30_000, 112),
        ];
        let ranked = rank_clusters(&pages, &sizes, Some((LONG, &cfg)), Some(3), 8);
        let ids: Vec<_> = ranked.iter().map(|r| r.0).collect();
        assert_eq!(ids, vec![8, 9], "exact content first, then the share");
        let nine = ranked[1].1;
        assert_eq!((nine.best_member, nine.second_member), (2, Some(3)));
        assert_eq!(nine.members().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(ranked[0].1.members().collect::<Vec<_>>(), vec![4]);
        assert_eq!(
            rank_clusters(&pages, &sizes, Some((LONG, &cfg)), None, 1).len(),
            1
        );
    }
}
