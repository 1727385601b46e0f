//! Why two pages are, or are not, near duplicates: every signal the index uses for a pair, and the
//! rule that decided it — what an operator needs to answer "why were these called duplicates?".

use serde::Serialize;

use crate::fingerprint::{codes_conflict, hamming};
use crate::index::decide::{Probe, MEMBER_FALLBACK};
use crate::index::{Index, View};
use crate::options::IndexOptions;
use crate::signature::{signature_sets_of, Signatures};
use crate::storage::codec::DocId;
use crate::verify::{unit_spans, verify, Similarity};
use crate::{Error, Result};

/// One side of an explained pair.
#[derive(Clone, Debug, Serialize)]
pub struct ExplainedPage {
    /// The page's key, or the file it was read from.
    pub name: String,
    /// Characters of the normalized main text.
    pub chars: usize,
    /// Sentence fingerprints.
    pub fingerprints: usize,
    /// Clause keys (sketch and local keys).
    pub clause_keys: usize,
    /// 64-bit simhash, hex.
    pub simhash: String,
    /// The first characters of the normalized main text.
    pub start: String,
    /// Distinct blocks dropped from the page's main text as its host's site chrome when it was
    /// inserted (see [`crate::ChromeConfig`]); 0 for pages explained without an index.
    pub chrome_blocks_dropped: usize,
    /// The trustable regions of the verification in this page's text, as character ranges
    /// `[start, end)`: those of the longer text's curve (all rounds) on the longer page, the one
    /// on the shorter text's own curve on the shorter page (see
    /// [`crate::verify::VerifyConfig::shorter_side`]); empty when there is none.
    pub regions: Vec<(usize, usize)>,
}

/// The stage of the pipeline that decided a pair: where two pages that are not found near
/// duplicates were lost — what classifies the misses of a corpus (issue #35) — or
/// [`PairStage::Duplicate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairStage {
    /// Near duplicates, and found: candidates, verified, similar.
    Duplicate,
    /// Not compared: a page has (almost) no main text ([`IndexOptions::min_text_width`]).
    NoMainText,
    /// Kept apart by their headings' model codes ([`IndexOptions::heading_codes`]).
    CodesConflict,
    /// Never candidates: no key shared (or only over-frequent ones, in an index) and no
    /// simhash look-up that reaches the other page.
    NoCandidate,
    /// A candidate, but ranked below what a page verifies: neither the page nor the
    /// representative of its cluster is among the clusters ranked first
    /// ([`IndexOptions::max_clusters_verified`]) or their best-sharing members (index only).
    RankedOut,
    /// The filter skeletons are too short to reach a threshold (seed 000 §4.3, early reject).
    Skeleton,
    /// The skeletons' edit distance exceeds what a similar pair can have (Myers' bound).
    Bound,
    /// The plain LCS reaches a threshold, the trustable LCS does not: the gaps of the
    /// alignment cut it ([`crate::VerifyConfig::theta`], seed 000 §4.4).
    TrustableLcs,
    /// Even the plain LCS is below both thresholds.
    Thresholds,
    /// Not near duplicates under another method's rule.
    MethodRule,
}

/// Every signal of a pair and the decision (see [`Index::explain`] and [`explain_pair`]).
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The first page.
    pub a: ExplainedPage,
    /// The second page.
    pub b: ExplainedPage,
    /// Sentence fingerprints both carry (seed 000 §4.2): one is enough to be candidates.
    pub shared_fingerprints: usize,
    /// Clause keys both carry (sketch and local keys): one shared whole clause.
    pub shared_clause_keys: usize,
    /// Hamming distance of the simhashes (candidates at ≤ the index's k when they share no key).
    pub simhash_distance: u32,
    /// Identical normalized texts.
    pub exact: bool,
    /// The headings name different model codes.
    pub codes_conflict: bool,
    /// One of the pages has (almost) no main text.
    pub no_main_text: bool,
    /// The verification (skeleton, LCS, trustable LCS, rates).
    pub similarity: Similarity,
    /// The index's method (see [`crate::Method`]); `similarity` is the LCS verification
    /// whatever the method, the decision and its rule are the method's.
    pub method: String,
    /// The decision: near duplicates or not.
    pub duplicate: bool,
    /// The rule that made the decision, in words.
    pub rule: String,
    /// Where the pair was decided: [`PairStage::Duplicate`], or the stage that lost it. Without an
    /// index, a pair is a candidate when it shares a key or its simhashes are within the
    /// index's distance; [`Index::explain`] runs the later page's candidate search in the index
    /// as it stands.
    pub stage: PairStage,
}

/// Explains a pair of pages from their signatures, under `opts` (as [`Index::insert`] would
/// decide it for the two pages alone: the methods on corpus statistics count the words of `b`,
/// the page held, as the whole collection — where I-Match has no lexicon, so only exact copies
/// match; [`Index::explain`] weighs by the index's frequencies).
pub fn explain_pair(
    (name_a, a): (&str, &Signatures),
    (name_b, b): (&str, &Signatures),
    opts: &IndexOptions,
) -> Explanation {
    let mut df = crate::methods::DocFreqs::new();
    if opts.signature.method.uses_df() {
        df.add_text(&b.text);
    }
    explain_pair_in((name_a, a), (name_b, b), opts, &df)
}

/// [`explain_pair`] with the document frequencies of a collection.
fn explain_pair_in(
    (name_a, a): (&str, &Signatures),
    (name_b, b): (&str, &Signatures),
    opts: &IndexOptions,
    df: &dyn crate::methods::DocFreq,
) -> Explanation {
    let shared = |x: &[u128], y: &[u128]| x.iter().filter(|k| y.binary_search(k).is_ok()).count();
    let sim = verify(&a.text, &b.text, &opts.verify);
    let width = |s: &Signatures| opts.signature.method.main_width(&s.text);
    let no_main_text = width(a) < opts.min_text_width || width(b) < opts.min_text_width;
    let method = &opts.signature.method;
    let conflict = method.is_lcs() && opts.heading_codes && codes_conflict(&a.codes, &b.codes);
    let exact = a.content_hash == b.content_hash;
    let v = &opts.verify;
    let method_rule = || {
        fn side(s: &Signatures) -> crate::methods::Side<'_> {
            crate::methods::Side {
                text: &s.text,
                features: Some(&s.features),
                simhash: s.simhash,
            }
        }
        let k = opts.simhash_max_distance;
        match method.similar_sides(side(a), side(b), v, k, df) {
            Some((r, c)) => (
                true,
                format!(
                    "duplicates under the {} method: resemble {r:.3}, contain {c:.3}",
                    method.name()
                ),
            ),
            None => (
                false,
                format!("not duplicates under the {} method", method.name()),
            ),
        }
    };
    let (duplicate, rule) = if no_main_text {
        (
            false,
            format!(
                "not compared: a page has (almost) no main text (width below {})",
                opts.min_text_width
            ),
        )
    } else if conflict {
        (
            false,
            "not duplicates: the headings name different model codes".to_string(),
        )
    } else if exact {
        (true, "duplicates: identical normalized texts".to_string())
    } else if !method.is_lcs() {
        method_rule()
    } else if sim.similar && sim.resemble >= v.resemble_threshold {
        (
            true,
            format!(
                "duplicates: resemble {:.3} ≥ {}",
                sim.resemble, v.resemble_threshold
            ),
        )
    } else if sim.similar && sim.contain >= v.contain_threshold {
        (
            true,
            format!(
                "duplicates: contain {:.3} ≥ {}",
                sim.contain, v.contain_threshold
            ),
        )
    } else if sim.similar && sim.located_contain >= v.located_contain_threshold {
        // Only the located containment reached its threshold (spread differences).
        (
            true,
            format!(
                "duplicates: the shorter page's chars found in order in its located window of \
                 the longer one, contain {:.3} ≥ {} (trustable resemble {:.3}, contain {:.3})",
                sim.located_contain, v.located_contain_threshold, sim.resemble, sim.contain
            ),
        )
    } else if sim.similar && !crate::verify::lcs_similar(sim.lcs, sim.len_a, sim.len_b, v) {
        // Only the whole LCS weighted by chars reached its threshold (partial translations).
        (
            true,
            format!(
                "duplicates: the skeletons' whole LCS, weighted by chars, resembles {:.3} ≥ {} \
                 (trustable resemble {:.3}, contain {:.3})",
                sim.lcs_resemble_weighted,
                v.weighted_lcs_resemble_threshold.max(v.resemble_threshold),
                sim.resemble,
                sim.contain
            ),
        )
    } else if sim.similar {
        // Only the whole LCS of the skeletons reached its threshold (scattered revisions).
        let (r, _) = crate::verify::rates(sim.lcs, sim.len_a, sim.len_b);
        (
            true,
            format!(
                "duplicates: the skeletons' whole LCS resembles {r:.3} ≥ {} (edits spread \
                 through the page; trustable resemble {:.3}, contain {:.3})",
                v.lcs_resemble_threshold.max(v.resemble_threshold),
                sim.resemble,
                sim.contain
            ),
        )
    } else if sim.early_reject {
        (
            false,
            "not duplicates: the filter skeletons are too short to reach a threshold".to_string(),
        )
    } else if sim.bound_exceeded {
        (
            false,
            "not duplicates: the skeletons' edit distance exceeds what a similar pair can have"
                .to_string(),
        )
    } else {
        (
            false,
            format!(
                "not duplicates: resemble {:.3} < {} and contain {:.3} < {}",
                sim.resemble, v.resemble_threshold, sim.contain, v.contain_threshold
            ),
        )
    };
    let shared_fingerprints = shared(&a.fingerprints, &b.fingerprints);
    let shared_clause_keys = shared(&a.sketch, &b.sketch);
    let simhash_distance = hamming(a.simhash, b.simhash);
    let candidates = exact
        || shared_fingerprints + shared_clause_keys > 0
        || simhash_distance <= opts.simhash_max_distance;
    let stage = if no_main_text {
        PairStage::NoMainText
    } else if conflict {
        PairStage::CodesConflict
    } else if !candidates {
        PairStage::NoCandidate
    } else if duplicate {
        PairStage::Duplicate
    } else {
        verification_stage(&sim, method, v)
    };
    let side = |name: &str, s: &Signatures, regions: Vec<(usize, usize)>| ExplainedPage {
        name: name.to_string(),
        chars: s.text.chars().count(),
        fingerprints: s.fingerprints.len(),
        clause_keys: s.sketch.len(),
        simhash: format!("{:016x}", s.simhash),
        start: s.text.chars().take(160).collect(),
        chrome_blocks_dropped: 0,
        regions,
    };
    // Regions are in units of their text; map them to its characters.
    let char_regions = |s: &Signatures, regions: &[(usize, usize)]| -> Vec<(usize, usize)> {
        let spans = unit_spans(&s.text);
        regions
            .iter()
            .filter_map(|&(x, y)| {
                let start = spans.get(x)?.0;
                let end = spans.get(y.checked_sub(1)?)?.1;
                Some((start, end))
            })
            .collect()
    };
    let a_is_region = matches!(sim.region_side, crate::verify::Side::A);
    let shorter: Vec<(usize, usize)> = sim.region_shorter.into_iter().collect();
    let (ra, rb) = if a_is_region {
        (char_regions(a, &sim.regions), char_regions(b, &shorter))
    } else {
        (char_regions(a, &shorter), char_regions(b, &sim.regions))
    };
    Explanation {
        shared_fingerprints,
        shared_clause_keys,
        simhash_distance,
        exact,
        codes_conflict: conflict,
        no_main_text,
        a: side(name_a, a, ra),
        b: side(name_b, b, rb),
        similarity: sim,
        method: method.name().to_string(),
        duplicate,
        rule,
        stage,
    }
}

/// The verification stage that kept a pair apart (see [`PairStage`]).
fn verification_stage(
    sim: &Similarity,
    method: &crate::Method,
    v: &crate::VerifyConfig,
) -> PairStage {
    if !method.is_lcs() {
        PairStage::MethodRule
    } else if sim.early_reject {
        PairStage::Skeleton
    } else if sim.bound_exceeded {
        PairStage::Bound
    } else {
        let (r, c) = crate::verify::rates(sim.lcs, sim.len_a, sim.len_b);
        if crate::verify::is_similar(r, c, v) {
            PairStage::TrustableLcs
        } else {
            PairStage::Thresholds
        }
    }
}

impl PairStage {
    /// A stage of the verification (the pair was compared and kept apart).
    fn is_verification(self) -> bool {
        matches!(
            self,
            PairStage::Skeleton
                | PairStage::Bound
                | PairStage::TrustableLcs
                | PairStage::Thresholds
                | PairStage::MethodRule
        )
    }
}

impl Index {
    /// Where the candidate search of page `probe_id` loses page `held`: [`PairStage::NoCandidate`]
    /// when no posting (nor the simhash fallback) reaches it, [`PairStage::RankedOut`] when it
    /// is a candidate but neither it nor its cluster's representative is verified
    /// ([`Index::decide`]) when the search runs among the pages inserted before `probe_id`;
    /// `None` when the search reaches it.
    fn search_stage(
        &self,
        probe: &Signatures,
        probe_id: DocId,
        held: DocId,
    ) -> Result<Option<PairStage>> {
        let probe = Probe::of(probe, &self.opts.signature.method);
        if !self.gather(self, &probe)?.cands.contains_key(&held) {
            return Ok(Some(PairStage::NoCandidate));
        }
        // The search as the page's insert ran it: among the pages inserted before it (pages
        // inserted after it would compete for the ranks it had).
        let seq_of = |id: DocId| -> Result<Option<u64>> { Ok(self.doc(id)?.map(|r| r.seq)) };
        let probe_seq = seq_of(probe_id)?.unwrap_or(u64::MAX);
        let earlier =
            |id: DocId| -> Result<bool> { Ok(seq_of(id)?.is_some_and(|s| s < probe_seq)) };
        let ranked = self.rank_among(self, &probe, Some(probe_id), None, Some(&earlier))?;
        for (i, &(cid, rank)) in ranked.clusters.iter().enumerate() {
            let rep = self.cluster(cid)?.map(|c| c.representative);
            if rep == Some(held) || (i < MEMBER_FALLBACK && rank.members().any(|m| m == held)) {
                return Ok(None);
            }
        }
        Ok(Some(PairStage::RankedOut))
    }

    /// Explains a pair of stored pages (see [`Explanation`]): signatures are recomputed from the
    /// stored texts, so the index must store them.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an absent key, [`Error::TextUnavailable`] when the index stores no
    /// texts, storage and corruption errors.
    pub fn explain(&self, key_a: &str, key_b: &str) -> Result<Explanation> {
        self.registration.check_process()?;
        let sig_of = |key: &str| -> Result<Signatures> {
            let id = self
                .key_id(key)?
                .ok_or_else(|| Error::NotFound(key.to_string()))?;
            let rec = self
                .doc(id)?
                .ok_or_else(|| Error::NotFound(key.to_string()))?;
            let text = self.text(id)?.ok_or_else(|| Error::TextUnavailable {
                key: key.to_string(),
                reason: "the index stores no texts".to_string(),
            })?;
            let (fingerprints, sketch) = signature_sets_of(&text, &self.opts.signature);
            Ok(Signatures {
                main: crate::text::MainText::default(),
                text: text.to_string(),
                sentences: crate::text::split_sentences(&text),
                fingerprints,
                sketch,
                simhash: rec.simhash,
                content_hash: rec.content_hash,
                codes: rec.codes,
                features: self.opts.signature.method.features(&text),
            })
        };
        let (a, b) = (sig_of(key_a)?, sig_of(key_b)?);
        let mut e = self.with_df(|df| explain_pair_in((key_a, &a), (key_b, &b), &self.opts, df));
        // The pair's search stages as the index stands: the later page (higher insertion
        // number) searched for, as when it was inserted, the other held.
        if matches!(e.stage, PairStage::Duplicate | PairStage::NoCandidate)
            || e.stage.is_verification()
        {
            let id = |key: &str| -> Result<DocId> {
                self.key_id(key)?
                    .ok_or_else(|| Error::NotFound(key.to_string()))
            };
            let (id_a, id_b) = (id(key_a)?, id(key_b)?);
            let seq = |id| -> Result<u64> { Ok(self.doc(id)?.map_or(0, |r| r.seq)) };
            let (probe, probe_id, held) = if seq(id_a)? >= seq(id_b)? {
                (&a, id_a, id_b)
            } else {
                (&b, id_b, id_a)
            };
            if let Some(lost) = self.search_stage(probe, probe_id, held)? {
                e.stage = lost;
            }
        }
        for (side, key) in [(&mut e.a, key_a), (&mut e.b, key_b)] {
            if let Some(id) = self.key_id(key)? {
                side.chrome_blocks_dropped = self.page_blocks(id)?.map_or(0, |b| b.dropped.len());
            }
        }
        Ok(e)
    }
}
