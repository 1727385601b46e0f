//! Verification of a probe against one stored page (seed 000 §3–§4.4 for LCS; the other
//! methods' own comparisons), and the outcomes batch ingest finds ahead of the writer and hands
//! to it.

use std::collections::HashMap;

use super::{Match, Probe};
use crate::fingerprint::codes_conflict;
use crate::index::view::View;
use crate::index::Index;
use crate::methods::{Features, NoDocFreq, Side};
use crate::storage::codec::{ClusterId, DocId, DocRecord};
use crate::Result;

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

impl Index {
    /// Verifies a probe against one page of a cluster; an outcome already in `memo` is used
    /// when the page is live, and a new one is added to it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn try_match(
        &self,
        view: &impl View,
        probe: &Probe<'_>,
        cluster: ClusterId,
        representative: DocId,
        against: DocId,
        verified: &mut usize,
        memo: &mut Memo,
    ) -> Result<Option<Match>> {
        let outcome = match memo.0.get(&against) {
            Some(&o) if view.cluster_of(against)?.is_some() => o,
            _ => {
                let Some(rec) = view.doc(against)? else {
                    return Ok(None);
                };
                let text = || view.text(against);
                let Some(o) = self.outcome(view, probe, &Stored::from(&rec), text)? else {
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
        view: &impl View,
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
        if method.is_lcs() {
            // `similar` on the texts, with the probe split into units once for all the pages it
            // is verified against.
            let text = text.as_ref();
            if text == probe.text {
                return Ok(Some(Outcome::Verified(Some((1.0, 1.0)))));
            }
            let sim = crate::verify::verify_units_texts(
                probe.units(),
                probe.text,
                text,
                &self.opts.verify,
            );
            return Ok(Some(Outcome::Verified(
                sim.similar.then_some((sim.resemble, sim.contain)),
            )));
        }
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
        Ok(Some(Outcome::Verified(self.similar(view, a, b))))
    }

    /// Do heading codes keep two pages apart? Only under the LCS method, when
    /// [`crate::IndexOptions::heading_codes`] is on: the other methods decide as their papers do.
    pub(crate) fn codes_conflict(&self, a: &[u32], b: &[u32]) -> bool {
        self.opts.signature.method.is_lcs() && self.opts.heading_codes && codes_conflict(a, b)
    }

    /// Are two pages similar under the index's method? `Some((resemble, contain))` when they
    /// are (see [`crate::Method::similar_sides`]), words weighed under the document frequencies
    /// `view` sees.
    pub(crate) fn similar(&self, view: &impl View, a: Side<'_>, b: Side<'_>) -> Option<(f64, f64)> {
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
        view.with_df(|df| method.compare((&fa, a.simhash), (&fb, b.simhash), k, df))
    }
}
