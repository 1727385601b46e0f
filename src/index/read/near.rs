//! Every near duplicate of a page, not just the best one (issue #33, item 7): the pages a query
//! verifies, best first, at most `k`, above a threshold.
//!
//! [`Index::query`] answers as an insert decides: it stops at the first strong match and names
//! one page. [`Index::near`] reads the same candidates — the clusters [`Index::rank`] ranks,
//! best first, at most [`IndexOptions::max_clusters_verified`] of them — and verifies the probe
//! against every one of their representatives and against each cluster's best-sharing member,
//! with no early stop, then keeps the pages that verify. It is bounded like a query (at most two
//! verifications a ranked cluster): it is not an exhaustive scan of every member of every
//! cluster, and the other members of a cluster, which verified against its representative when
//! they joined, are not compared.
//!
//! [`IndexOptions::max_clusters_verified`]: crate::IndexOptions::max_clusters_verified

use std::cmp::Ordering;

use rustc_hash::FxHashSet;

use crate::index::decide::{Match, Memo};
use crate::index::types::Page;
use crate::index::view::{Snapshot, View};
use crate::index::{check_page, Index, Probe};
use crate::signature::{Content, Signatures};
use crate::storage::codec::{ClusterId, DocId};
use crate::{Error, Result};

/// The score a [`NearOptions::threshold`] applies to and results are ordered by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Score {
    /// The resemble rate, `tlcs / (len_a + len_b - tlcs)`: how much the two pages are the same
    /// page (the default).
    #[default]
    Resemble,
    /// The contain rate, `tlcs / min(len_a, len_b)`: how much the shorter page is inside the
    /// other (an excerpt, a chapter of a manual).
    Contain,
}

impl Score {
    /// The score's name, as the Python package takes it (`by="contain"`): `resemble` or
    /// `contain`. The C ABI takes `ND_SCORE_RESEMBLE` or `ND_SCORE_CONTAIN` instead.
    pub fn name(self) -> &'static str {
        match self {
            Score::Resemble => "resemble",
            Score::Contain => "contain",
        }
    }

    /// The score named `resemble` or `contain`.
    pub fn from_name(name: &str) -> Option<Score> {
        match name {
            "resemble" => Some(Score::Resemble),
            "contain" => Some(Score::Contain),
            _ => None,
        }
    }

    fn of(self, n: &NearDuplicate) -> f64 {
        match self {
            Score::Resemble => n.resemble,
            Score::Contain => n.contain,
        }
    }
}

/// What [`Index::near`] keeps, and how many.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NearOptions {
    /// At most this many pages, the best first; at least 1 (`usize::MAX`: every page found).
    /// Default 10.
    pub k: usize,
    /// Keep a page only when its score (`by`) is at least this: inclusive, in `[0, 1]`. Default
    /// 0: every page that verifies. Only pages that verify under the index's
    /// [`VerifyConfig`](crate::VerifyConfig) are ever returned, so a threshold below its
    /// `resemble_threshold` (for `by` resemble) adds nothing.
    pub threshold: f64,
    /// The score `threshold` applies to and the order is by.
    pub by: Score,
}

impl Default for NearOptions {
    fn default() -> Self {
        NearOptions {
            k: 10,
            threshold: 0.0,
            by: Score::Resemble,
        }
    }
}

impl NearOptions {
    /// Checks `k` and `threshold`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `k` 0 or a threshold outside `[0, 1]` (or NaN).
    pub fn validate(&self) -> Result<()> {
        if self.k == 0 {
            return Err(Error::InvalidArgument(
                "k is 0: ask for at least one near duplicate".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(Error::InvalidArgument(format!(
                "the threshold is {}: it must be between 0 and 1",
                self.threshold
            )));
        }
        Ok(())
    }
}

/// A stored page a probe verified similar to (see [`Index::near`]).
#[derive(Clone, Debug, PartialEq)]
pub struct NearDuplicate {
    /// The page's key.
    pub key: String,
    /// Its internal id.
    pub doc: DocId,
    /// The cluster it is in.
    pub cluster: ClusterId,
    /// The key of that cluster's representative (its own key when it leads).
    pub representative: String,
    /// Resemble rate of the probe with this page, in `[0, 1]` (1 when `exact`).
    pub resemble: f64,
    /// Contain rate of the probe with this page, in `[0, 1]` (1 when `exact`).
    pub contain: f64,
    /// True when the normalized texts are identical.
    pub exact: bool,
}

impl Index {
    /// Every stored page the content verifies similar to, among the ranked candidate clusters'
    /// representatives and best-sharing members (see the [module docs](self)), best first:
    /// identical texts first, then by `opts.by` (resemble by default), then the other score,
    /// then by id. At most `opts.k`, each with a score of at least `opts.threshold`. Nothing is
    /// stored; one snapshot is read from start to end. A content with (almost) no main text (see
    /// [`IndexOptions::min_text_width`](crate::IndexOptions::min_text_width)) has none.
    ///
    /// [`Index::query`]'s `similar_to`, when it names a page, is one of these with the same
    /// scores (the query may stop before it has seen the others).
    ///
    /// ```no_run
    /// use neardup::{Content, Index, IndexOptions, NearOptions, Score};
    ///
    /// let ix = Index::open("/tmp/idx", IndexOptions::default())?;
    /// let html = b"<html><body><div class=content><p>...</p></div></body></html>";
    /// let opts = NearOptions { k: 5, threshold: 0.8, by: Score::Resemble };
    /// for n in ix.near(Content::Html(html), &opts)? {
    ///     println!("{} r = {:.2} c = {:.2} (cluster of {})", n.key, n.resemble, n.contain, n.representative);
    /// }
    /// # Ok::<(), neardup::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for bad options ([`NearOptions::validate`]), the page errors of
    /// [`Signatures::compute`], storage and corruption errors.
    ///
    /// As [`Index::query`], the content comes without a host: no site chrome learned for a host
    /// is dropped from it; [`Index::near_page`] drops it as an insert would.
    pub fn near(&self, content: Content<'_>, opts: &NearOptions) -> Result<Vec<NearDuplicate>> {
        self.metrics.near(|| {
            self.registration.check_process()?;
            opts.validate()?;
            let sig = Signatures::compute(content, &self.opts.signature)?;
            self.near_signed(&sig, opts)
        })
    }

    /// [`Index::near`] for a page with its key and host: the site chrome learned for the host is
    /// dropped from it as an insert would drop it (as [`Index::query_page`]). The page's own
    /// stored version, if its key is held, is not left out: it is one of the pages found when it
    /// still verifies (identical when unchanged).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key, an overlong host or bad options, the page
    /// errors of [`Signatures::compute`], storage and corruption errors.
    pub fn near_page(&self, page: &Page<'_>, opts: &NearOptions) -> Result<Vec<NearDuplicate>> {
        self.metrics.near(|| {
            self.registration.check_process()?;
            check_page(page)?;
            opts.validate()?;
            let (sig, _) = self.signatures_of(page)?;
            self.near_signed(&sig, opts)
        })
    }

    /// The near duplicates of a page already signed, read from one snapshot.
    fn near_signed(&self, sig: &Signatures, opts: &NearOptions) -> Result<Vec<NearDuplicate>> {
        let method = &self.opts.signature.method;
        if method.main_width(&sig.text) < self.opts.min_text_width {
            return Ok(Vec::new());
        }
        let view = Snapshot::of(self);
        let probe = Probe::of(sig, method);
        let ranked = self.rank(&view, &probe, None, None)?;
        let (mut memo, mut verified) = (Memo::default(), 0usize);
        let mut seen = FxHashSet::<DocId>::default();
        let mut found: Vec<Match> = Vec::new();
        for &(cid, rank) in &ranked.clusters {
            let Some(cl) = view.cluster(cid)? else {
                continue;
            };
            let rep = cl.representative;
            // Single-Pass compares a page with cluster centres only, as `decide` does.
            let members = (!method.centres_only()).then(|| rank.members());
            for against in std::iter::once(rep).chain(members.into_iter().flatten()) {
                if !seen.insert(against) {
                    continue;
                }
                if let Some(m) =
                    self.try_match(&view, &probe, cid, rep, against, &mut verified, &mut memo)?
                {
                    found.push(m);
                }
            }
        }
        let mut out = Vec::with_capacity(found.len());
        for m in found {
            out.push(NearDuplicate {
                key: view.member(m.against)?.key,
                doc: m.against,
                cluster: m.cluster,
                representative: view.member(m.representative)?.key,
                resemble: m.resemble,
                contain: m.contain,
                exact: m.exact,
            });
        }
        out.retain(|n| opts.by.of(n) >= opts.threshold);
        out.sort_by(|a, b| order(opts.by, a, b));
        out.truncate(opts.k);
        Ok(out)
    }
}

/// Best first: identical texts, then the chosen score, then the other, then the lower id.
fn order(by: Score, a: &NearDuplicate, b: &NearDuplicate) -> Ordering {
    let other = match by {
        Score::Resemble => Score::Contain,
        Score::Contain => Score::Resemble,
    };
    b.exact
        .cmp(&a.exact)
        .then(by.of(b).total_cmp(&by.of(a)))
        .then(other.of(b).total_cmp(&other.of(a)))
        .then(a.doc.cmp(&b.doc))
}
