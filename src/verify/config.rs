//! The verification stage's parameters ([`VerifyConfig`]): seed 000 §5.2–5.4's, converted from
//! GBK bytes to units, and the rules issue #35 added; and the script-dependent ones chosen for a
//! pair ([`VerifyConfig::params_for`]).

use super::*;

/// Parameters of the verification stage. Defaults are the paper's (seed 000 §5.2–5.4), converted
/// from GBK bytes to units (module doc, "Parameters by script"). Missing fields deserialize to
/// their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyConfig {
    /// Filter-skeleton window `S`, in units, for CJK text (seed 000 §4.3, §5.2: 16 GBK bytes =
    /// 8 Chinese chars). Default 8. 0 is treated as 1.
    pub window: usize,
    /// Filter-skeleton window for alphabetic text, in units (words and punctuation marks): the
    /// paper's 16 bytes are ~3 English words of ~5.7 bytes with their space. Used when fewer than
    /// half the units of the shorter text are CJK-like chars. Default 3. 0 is treated as 1.
    pub window_alphabetic: usize,
    /// Slope threshold θ of the trustable region (seed 000 §4.4, §5.3): the largest share of a
    /// region's units outside the LCS. Default 0.20.
    ///
    /// The paper measured θ from 0.02 to 0.20 (Fig. 7) and kept 0.10, the best precision at a
    /// recall held at 0.90 on its crawl; its Fig. 3 draws the region with θ = 0.20. On real
    /// documents 0.10 cuts the trustable region short wherever differences are spread evenly —
    /// a simplified against a traditional Chinese edition (after folding, word choices still
    /// differ every few chars), texts with scattered insertions — although the skeleton LCS
    /// covers 70–98 % of the shorter text: every stretch has more than 10 % outside the LCS.
    /// Measured with `examples/verify_natural.rs` (natural-dev, every 8th of its 62,816
    /// labeled pairs, verification alone against the exact-LCS labels) and
    /// `examples/verify_report.rs` (synthetic dev corpus):
    ///
    /// | θ | natural R | natural P | hard negatives said similar | simplified/traditional R | synthetic R | synthetic FP |
    /// |---|---|---|---|---|---|---|
    /// | 0.10 | 0.481 | 0.914 | 88 | 0.44 | 0.984 | 0.60 % |
    /// | 0.15 | 0.570 | 0.887 | 142 | — | — | — |
    /// | 0.20 | 0.643 | 0.867 | 193 | 0.65 | 0.993 | 0.68 % |
    /// | 0.25 | 0.701 | 0.840 | 260 | 0.79 | 0.996 | 0.68 % |
    /// | 0.30 | 0.733 | 0.826 | 301 | 0.86 | — | — |
    ///
    /// Each step of 0.05 up to 0.20 gains about three true pairs per false one (174 : 54, then
    /// 143 : 51); past 0.20 the gain falls to 1.7 and 1.5, outside the range the paper
    /// calibrated. The extra "false" pairs are template siblings just under the corpus's labels
    /// (true `r` 0.32–0.48, windowed containment 0.61–0.78); the synthetic hard negatives (site
    /// templates, shared quotes) stay at 0 and product series move from 41 to 47 of 2,530 (the
    /// index's heading codes separate those). Counting equal-length substitutions as aligned
    /// instead (a gap of equal length, ±1, in both texts between two LCS pairs) lifted the
    /// simplified/traditional pairs as much as θ = 0.20 did but natural recall only to 0.510
    /// (at θ = 0.10; 0.666 at 0.20, with 37 more false pairs for 43 true ones), so it was not
    /// kept.
    pub theta: f64,
    /// Resemble threshold, inclusive: `r ≥ resemble_threshold` means similar (seed 000 §5.3).
    /// Default 0.28.
    pub resemble_threshold: f64,
    /// Contain threshold, inclusive: `c ≥ contain_threshold` means similar (seed 000 §5.4).
    /// Default 0.70.
    pub contain_threshold: f64,
    /// Scattered revisions (a deviation from seed 000 §4.4, issue #35): a pair is also similar
    /// when the resemble rate of the whole LCS of the filter skeletons, `L / (|A| + |B| − L)`,
    /// reaches this threshold (and `resemble_threshold`), whatever its trustable part. The
    /// trustable region is one continuous stretch with at most θ of it outside the LCS: two
    /// releases of a manual page edited every few words have no such stretch longer than a
    /// few blocks, and their TLCS is a fraction of their LCS (natural-dev: 53 of its 89 missed
    /// pairs with `0.5 ≤ r < 0.8` were lost there). The LCS of the skeletons counts only text
    /// in windows both pages share, so unrelated bodies in one template add little to it; the
    /// threshold stays well above `resemble_threshold` for the pages the region exists to
    /// keep apart (template siblings, product series). Default 0.44, measured on natural-dev
    /// (`score_natural.py`, recall / precision): off 0.9118 / 0.9842, 0.48 0.9168 / 0.9838,
    /// **0.44 0.9210 / 0.9839**, 0.40 0.9260 / 0.9827, 0.36 0.9314 / 0.9768; dev F1 0.9959 →
    /// 0.9960. 1 turns it off (only identical texts reach it).
    pub lcs_resemble_threshold: f64,
    /// Partial translations (a deviation from seed 000 §4.4, issue #35 item 2; see `weight.rs`):
    /// a pair is also similar when the resemble rate of the whole LCS of the filter skeletons
    /// with every unit weighted by its length in chars ([`unit_weight`]: a word unit
    /// [`WORD_UNIT_WEIGHT`], a CJK char 1; [`Similarity::lcs_resemble_weighted`]) reaches this
    /// threshold (and `resemble_threshold`). Counted in units, a help page whose translation
    /// kept some paragraphs in English shares a third of its units with the English original,
    /// and in chars half of its text — the paper's GBK bytes, and the measure of the corpus's
    /// labels, weigh a word by its letters. The rule sits beside the unit one
    /// ([`VerifyConfig::lcs_resemble_threshold`]): weighting lowers the rate of a Chinese page
    /// whose unmatched part is English (code, commands), which the unit rate keeps. Measured on
    /// natural-dev (`score_natural.py`, input order; precision / recall, heavy = recall of
    /// pairs whose best earlier duplicate has `0.5 ≤ r < 0.8`, true `r`):
    ///
    /// | rule | P | R | heavy R | dev F1 |
    /// |---|---|---|---|---|
    /// | off (units 0.44 alone) | 0.9832 | 0.9318 | 0.832 | 0.9964 |
    /// | weighted 0.44 *instead of* units | 0.9803 | 0.9368 | 0.863 | — |
    /// | weighted 0.48 instead of units | 0.9820 | 0.9343 | 0.851 | — |
    /// | weighted 0.46 beside units 0.44 | 0.9807 | 0.9373 | 0.866 | — |
    /// | **weighted 0.48 beside units 0.44** | 0.9820 | 0.9373 | 0.866 | see CHANGELOG |
    /// | weighted 0.50 beside units 0.44 | 0.9829 | 0.9352 | 0.857 | — |
    ///
    /// The pairs it adds are English help and manual pages against their partial Chinese
    /// translations (GNOME help, the Securing Debian Manual) and template siblings the labels
    /// call near duplicates; the three false pairs it adds are partial translations just under
    /// the labels (true `r` 0.45–0.49, windowed containment 0.76–0.80). The same weights on the
    /// trustable rates (`r`, `c`) instead lost precision (0.9803) for less recall (0.9348), and
    /// a weighted whole-LCS containment (≥ 0.8, lengths within 3×) added four true pairs for
    /// three false ones: neither is kept. Default 0.48; 1 turns it off.
    pub weighted_lcs_resemble_threshold: f64,
    /// TLCS block size `s` for CJK text, in units (seed 000 §4.4, Fig. 4: `k = ⌈size(A) / s⌉`).
    /// The paper gives no value. Default 64 chars (128 GBK bytes): a short paragraph, so a
    /// typical 1,000–3,000-char article has 16–47 blocks, a 300-char site header 4–5, and the
    /// O(k²) base-region search stays cheap. 0 is treated as 1.
    pub block_size: usize,
    /// TLCS block size for alphabetic text, in units. Default 12 (≈ 11 words and a punctuation
    /// mark ≈ 65 chars of English, the size of the CJK block before units were words). 0 is
    /// treated as 1.
    pub block_size_alphabetic: usize,
    /// Rounds of the reordered-paragraph iteration (seed 000 §4.4, last paragraph): after each
    /// round the trustable region is cut from A and its TLCS units from B, and the rest is
    /// compared again. 1 = no iteration (the paper's main algorithm). Default 2: on the bench's
    /// dev corpus a second round lifts verification recall of (original, variant) pairs from
    /// 0.959 to 0.994 (reordered paragraphs 0.82 → 0.97) while hard-negative false positives
    /// stay at 0.7 %. Iterating can re-admit a site template around an unrelated body (round 2
    /// picks up the footer after round 1 took the header); neardup compares extracted main
    /// texts, where templates are mostly gone. 0 is treated as 1.
    pub max_iterations: usize,
    /// Iteration stop rule for CJK text: a round after the first whose LCS, or whose TLCS gain, is
    /// shorter than this many units is discarded and ends the iteration (the paper: "each round's
    /// LCS decreases, so a threshold can bound the depth"). Default 64 (one CJK block). 0 is
    /// treated as 1.
    pub iteration_min_gain: usize,
    /// Iteration stop rule for alphabetic text, in units. Default 12 (one alphabetic block). 0 is
    /// treated as 1.
    pub iteration_min_gain_alphabetic: usize,
    /// Bound Myers' search by the largest SES that can still reach a threshold (default true).
    /// The bound never changes the verdict; turning it off only costs time (for tests).
    pub d_bound: bool,
    /// Also take the trustable region on the *shorter* text's SES curve (first round), and keep
    /// the larger of the two TLCS (module doc, "Both curves"). Default true; false is the
    /// paper's TLCS on the longer text alone.
    ///
    /// The paper's region is one continuous stretch of A with at most θ of its units outside
    /// the LCS. When A is the container and carries content B lacks in several places (code
    /// blocks of one rendering, a section added in a later release, another chapter), every
    /// long stretch of A crosses one of them, so the region — and `c` — stays small although B
    /// lies wholly in A. B's own curve is flat there: measured on it, the region says how much of
    /// B is trustably found in A, which is what "A contains B" (§3.2) asks. A template shared by
    /// unrelated pages still sits only at B's ends, where no centred region holds it. Measured
    /// with `examples/verify_natural.rs` (natural-dev, every 8th labeled pair) and
    /// `examples/verify_report.rs` (synthetic dev corpus):
    ///
    /// | | natural R | natural P | containment-only R | synthetic R | synthetic hard-negative FP |
    /// |---|---|---|---|---|---|
    /// | longer text only | 0.643 | 0.867 | 0.266 | 0.9930 | 0.68 % |
    /// | both curves | 0.809 | 0.845 | 0.599 | 0.9972 | 0.68 % |
    ///
    /// In the index (natural-dev, corpus order) recall goes from 0.886 to 0.911 at the same
    /// precision (0.984); on the dev corpus from 0.9929 to 0.9954 (precision 0.9963 both).
    pub shorter_side: bool,
    /// Refill the short gaps of the alignment (a deviation from seed 000 §4.3 "property 1",
    /// issue #35; see `refill.rs`): in the first round, between two consecutive pairs of the
    /// skeletons' LCS whose gaps in both texts are at most [`REFILL_GAP_WINDOWS`] skeleton
    /// windows long, the exact LCS of the two gaps joins the alignment — the text between two
    /// edits closer than `S` units, which the filter skeleton drops although it belongs to the
    /// LCS. `lcs`, the trustable regions and the TLCS of the first round count it. The early
    /// reject and the Myers bound allow for it (skeleton plus its short gaps), so they stay
    /// exact. Default true; false is the paper's alignment of the skeletons alone.
    ///
    /// The paper (§4.3) drops that text on purpose — isolated common words that "do not help
    /// the TLCS" — but on pages edited every few words (two releases of a help page, a partial
    /// translation, sibling pages of one writing template that the corpus's exact LCS still
    /// calls near duplicates) it is a third of the page or more, the LCS the trustable region
    /// is measured on loses it, and every stretch has more than θ outside the LCS. Only gaps
    /// between two matched skeleton units are refilled, so the refill densifies stretches the
    /// alignment already holds and never makes a new one. Measured in the index with
    /// `score_natural.py` (natural-dev, input order; recall by difficulty of the best earlier
    /// near duplicate) and `score.py` (dev):
    ///
    /// | refill | natural P | natural R | heavy R | contain R | mid R | dev F1 |
    /// |---|---|---|---|---|---|---|
    /// | off | 0.9845 | 0.9268 | 0.814 | 0.395 | 0.976 | 0.9961 |
    /// | **gaps ≤ 2 windows** | 0.9840 | 0.9289 | 0.826 | 0.390 | 0.982 | 0.9962 |
    /// | gaps ≤ 4 windows | 0.9832 | 0.9310 | 0.835 | 0.401 | 0.982 | 0.9962 |
    ///
    /// The pairs it adds are mostly help pages of one template that the corpus labels near
    /// duplicates (card-game rules, two settings pages), and releases of an API page; the
    /// false pairs it adds (one at 2 windows, three at 4) are siblings of the same kind just
    /// under the labels. Four windows cost natural-dev's ingest 12–20 % more CPU (interleaved
    /// runs on a loaded machine), two windows about 7 %: [`REFILL_GAP_WINDOWS`] is 2.
    pub refill_gaps: bool,
    /// Located containment (seed 000 §3.2, `c = |LCS| / |B|` over characters; see
    /// `located.rs`): a pair the rules above keep apart is also similar when the unit alignment
    /// covers at least [`VerifyConfig::located_contain_min_lcs`] of the shorter text and the
    /// exact character LCS of the shorter text against the window of the longer text where the
    /// alignment placed it (three times the shorter text's length) covers at least this share of
    /// the shorter text ([`Similarity::located_contain`]). For a contained page whose
    /// differences are spread all through it (a reStructuredText page and its HTML rendering, a
    /// chapter and the one-page manual, a page a later release extended), no trustable region
    /// exists although most of its text is found in order. A shorter text of less than one
    /// TLCS block is not measured ("Very short texts"). Only [`verify`] and
    /// [`verify_units_texts`] have the texts to measure it. Measured in the index
    /// (`score_natural.py` on natural-dev, input order; contain = recall of pages whose best
    /// earlier duplicate has `r < 0.5`; dev = `score.py` duplicate-detection F1):
    ///
    /// | located containment | natural P | natural R | contain R | heavy R | dev F1 | natural-dev CPU |
    /// |---|---|---|---|---|---|---|
    /// | off | 0.9826 | 0.9423 | 0.4535 | 0.8841 | 0.9959 | 1 |
    /// | exact char LCS of every window | 0.9823 | 0.9511 | 0.5581 | 0.8933 | — | ≈ 1.8 |
    /// | merged only (anchors and gaps) | 0.9822 | 0.9473 | 0.5174 | 0.8872 | — | — |
    /// | **merged, exact within 0.20 below** | 0.9823 | 0.9494 | 0.5349 | 0.8933 | 0.9959 | ≈ 1.07 |
    ///
    /// The one false pair it adds is a partial Chinese translation of a help page against its
    /// English original (true `r` 0.42, windowed containment 0.76). Default 0.80 (the corpus's
    /// containment threshold, in chars); 1 keeps only pages found whole.
    pub located_contain_threshold: f64,
    /// The share of the shorter text's units the first round's alignment (with its refilled
    /// gaps) must cover before located containment is measured
    /// ([`VerifyConfig::located_contain_threshold`]): real shared content, not a template or
    /// words shared by chance. Default 0.50; 1 turns located containment off (unless the
    /// shorter text is aligned whole).
    pub located_contain_min_lcs: f64,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            window: 8,
            window_alphabetic: 3,
            theta: 0.20,
            resemble_threshold: 0.28,
            contain_threshold: 0.70,
            lcs_resemble_threshold: 0.44,
            weighted_lcs_resemble_threshold: 0.48,
            block_size: 64,
            block_size_alphabetic: 12,
            max_iterations: 2,
            iteration_min_gain: 64,
            iteration_min_gain_alphabetic: 12,
            d_bound: true,
            shorter_side: true,
            refill_gaps: true,
            located_contain_threshold: 0.80,
            located_contain_min_lcs: 0.50,
        }
    }
}

/// The script-dependent parameters chosen for one pair, in units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ScriptParams {
    pub(super) window: usize,
    pub(super) block_size: usize,
    pub(super) min_gain: usize,
}

impl VerifyConfig {
    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming the first field out of range.
    pub fn validate(&self) -> crate::Result<()> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        if !unit(self.theta)
            || !unit(self.resemble_threshold)
            || !unit(self.contain_threshold)
            || !unit(self.lcs_resemble_threshold)
            || !unit(self.weighted_lcs_resemble_threshold)
            || !unit(self.located_contain_threshold)
            || !unit(self.located_contain_min_lcs)
        {
            return Err(crate::Error::InvalidArgument(
                "verify: theta, resemble_threshold, contain_threshold, lcs_resemble_threshold, \
                 weighted_lcs_resemble_threshold, located_contain_threshold and \
                 located_contain_min_lcs must be within 0..=1"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Window, block size and iteration gain for a pair whose shorter text is `shorter`.
    pub(super) fn params_for(&self, shorter: &[u32]) -> ScriptParams {
        // At least half the units CJK-like chars (module doc, "Parameters by script"); stops as
        // soon as the count decides.
        let n = shorter.len();
        let (mut cjk, mut other) = (0usize, 0usize);
        let mut is_cjk = n == 0;
        for &u in shorter {
            if is_char_script_unit(u) {
                cjk += 1;
                if cjk * 2 >= n {
                    is_cjk = true;
                    break;
                }
            } else {
                other += 1;
                if other * 2 > n {
                    break;
                }
            }
        }
        if is_cjk {
            ScriptParams {
                window: self.window,
                block_size: self.block_size,
                min_gain: self.iteration_min_gain,
            }
        } else {
            ScriptParams {
                window: self.window_alphabetic,
                block_size: self.block_size_alphabetic,
                min_gain: self.iteration_min_gain_alphabetic,
            }
        }
    }
}
