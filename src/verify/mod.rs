//! Verification: are two normalized page texts near duplicates? (seed 000: Huang, Wang, Li 2007,
//! "一种基于 LCS 的相似网页检测算法", §3.2, §4.3, §4.4; SPEC §2.6.)
//!
//! Pipeline for one pair (A, B), [`verify`] / [`verify_units`]:
//! 0. **Units** ([`units()`]): each text becomes a sequence of `u32` units, one per CJK char and
//!    one per word (see "Units" below).
//! 1. **Filter skeleton** (§4.3, Fig. 2, [`skeleton()`]): keep only the units of each text covered
//!    by an `S`-unit window whose Rabin hash also occurs in the other text.
//! 2. **Early reject** (§4.3, last paragraph): the TLCS cannot be longer than the shorter
//!    skeleton; if even that length cannot reach a threshold, stop.
//! 3. **LCS** of the skeletons by Myers' O(ND) algorithm in linear space (§3.1, §4.4,
//!    [`myers_lcs`]), bounded by the largest edit distance that can still lead to "similar".
//!    In the first round its short gaps are refilled: the text between two edits closer than
//!    `S` units, which the skeleton drops (§4.3, "property 1"), joins the alignment where both
//!    gaps are at most a few windows long ([`VerifyConfig::refill_gaps`], a deviation).
//! 4. **Trustable LCS** (§4.4, Fig. 3–4, [`trustable_region`]): the part of the LCS inside the
//!    centred, continuous region of A whose SES slope stays ≤ θ; optionally iterated for
//!    reordered paragraphs. The same region is also taken on B's curve, and the larger TLCS
//!    counts ("Both curves" below).
//! 5. **Rates** (§3.2, SPEC §2.6, [`rates`]): resemble `r = T / (|A| + |B| − T)`, contain
//!    `c = T / min(|A|, |B|)` with `T = |TLCS|`; similar when `r ≥ 0.28` or `c ≥ 0.70`, or
//!    when the whole LCS of the skeletons gives `r ≥ 0.44` (scattered revisions, a deviation
//!    from the paper: [`VerifyConfig::lcs_resemble_threshold`]), or `r ≥ 0.48` with every unit
//!    weighted by its length in chars (partial translations: [`weight`],
//!    [`VerifyConfig::weighted_lcs_resemble_threshold`]), or when the shorter text, counted in
//!    chars, is found in order in its located window of the longer one (§3.2's `c` over
//!    characters, a deviation from the TLCS: `located.rs`,
//!    [`VerifyConfig::located_contain_threshold`]).
//!
//! **Units.** Texts are `&str`, already NFKC-normalized and whitespace-collapsed by the caller.
//! [`units()`] turns each into a sequence of `u32`: every CJK ideograph or kana (and every Thai,
//! Lao, Myanmar, Khmer letter: scripts written without spaces) is one unit, its code point; every
//! run of other letters and digits — a word — is one unit, a fixed 32-bit hash of its lower-cased
//! text (≥ [`WORD_UNIT_MIN`], so never equal to a code point); every other non-space char
//! (punctuation) is one unit, its code point; white space is dropped. A Chinese char and an
//! English word are thus both "about one morpheme", and the LCS of an English page costs
//! O(words · D) instead of O(chars · D). All lengths, rates, parameters and regions are in units;
//! [`unit_spans`] maps unit offsets to char offsets. One consequence: in Chinese text with Latin
//! words (commands, names), a Latin word weighs one unit where the paper's GBK bytes weigh it
//! like several Chinese chars, so edits to the Chinese part weigh relatively more than before.
//!
//! **Cost.** Per pair: tokenizing both texts (byte-wise for ASCII, fast paths for CJK), the
//! skeleton (one hash table of the shorter text's windows; windows of the longer one first try
//! the window after the last match), Myers on the skeletons (common prefix and suffix stripped at
//! every level, V arrays grown on demand, so O(D) memory), the trustable region (O(k log k)) and
//! the rates. The working memory of the usual path (skeletons, Myers, the region) is kept per
//! thread and reused; a second round, the bit-parallel programme and the anchored approximation
//! still allocate their own buffers per pair.
//!
//! **Long texts** (SPEC §2.6: bound every super-linear step; pages may be 16 MiB). Myers' search
//! is O((N + M) · D): quadratic when two long texts differ in many places (a 577,000-char manual
//! against one of its chapters took minutes). Three rules keep every pair near-linear:
//! - *Located window.* When the longer text A is so much longer than B that even a TLCS as long
//!   as B gives `r` below its threshold (`|B| / |A| < resemble_threshold`), only containment can
//!   make the pair similar, and a trustable region — slope ≤ θ, so at most `|B| / (1 − θ)` units
//!   plus its extension — lies where B's content sits in A. The skeleton, LCS and TLCS are then
//!   computed on a window of A, `2 · |B|` units plus two blocks, centred where B's windows are
//!   found in A in order, widened (up to `4 · |B|`) over a B copied in pieces, and not used when
//!   nothing locates B ([`Similarity::window`]); the rates still use the whole lengths. This is
//!   the containment the paper means (§3.2: "A contains B"), the region weights centred on the
//!   shared content instead of on A's centre, and it costs O(|A| + |B|) instead of
//!   O(|A| · D).
//! - *Work budget.* Myers' search gets a budget per pair (`EXACT_WORK`: diagonals visited plus
//!   units compared, all rounds together; 16 per unit of the skeletons, within 2¹⁸..=2²⁴). Past it, the LCS of the skeletons comes from a
//!   bit-parallel dynamic programme when one skeleton is short (exact, O(N · M / 64)), else it
//!   is approximated by anchors (windows unique in both skeletons chained in order, exact
//!   searches between them: O((N + M) log N); [`Similarity::approximate`]). The approximation
//!   is a common subsequence, never longer than the LCS, and for near duplicates the same
//!   length.
//! - *Rounds.* Iteration rounds beyond two (each O(|A| + |B|)) run only while their total stays
//!   within `ROUND_UNITS` units. The base-region search of the TLCS is O(k log k) (`k` blocks).
//!
//! **Parameters by script.** The paper counts GBK bytes (2 per Chinese char, 1 per Latin letter).
//! Its window of 16 bytes is 8 Chinese chars, or about 3 English words (a word plus its space is
//! ~5.7 bytes); the TLCS block (the paper gives no value; 64 chars here before units, i.e. 128 GBK
//! bytes of Chinese, 64 bytes of English) is 64 units of Chinese, or ~12 units of English (11
//! words and a punctuation mark ≈ 65 chars). The CJK parameters ([`VerifyConfig::window`],
//! [`VerifyConfig::block_size`], [`VerifyConfig::iteration_min_gain`]) apply when at least half the
//! units of the shorter text are CJK-like chars ([`is_char_script_unit`]), the `_alphabetic` ones
//! otherwise.
//!
//! **Which text is "A".** TLCS is computed on one document's SES curve, so it is asymmetric. The
//! paper's `c(A, B) = |LCS| / |B|` reads "A contains B", so the container — the longer text (in
//! units) — plays A (ties: the lexicographically smaller unit sequence). This makes [`verify`]
//! exactly symmetric: `verify(a, b)` and `verify(b, a)` give the same rates and verdict.
//!
//! **Both curves** ([`VerifyConfig::shorter_side`]). The paper finds the trustable region on
//! A's curve only. For containment that asks the wrong text: when the container A holds content
//! B lacks in several places (a rendering's code blocks, a section added in a later release,
//! the next chapter of a manual), every long stretch of A crosses one of them and exceeds θ, so
//! the TLCS of a B found whole inside A can be a fifth of B. In the first round the region is
//! therefore also found on B's curve (B's positions of the LCS pairs; B's skeleton offsets map
//! them back), with the same blocks, weights, θ and extension, and `T` is the larger of the two
//! TLCS. B's region is still one centred, continuous stretch of B with at most θ of it outside
//! the LCS, so a site template shared by unrelated pages — matched only at B's ends — stays
//! out. The verdict stays symmetric: A and B are chosen by length, not argument order. A B
//! shorter than one block is not measured on its own curve (its one block would be its whole
//! text): it still counts only where it fills blocks of A ("Very short texts").
//!
//! **Very short texts.** When a text is shorter than `S` units, the window shrinks to the shorter
//! text's length (at least 1 unit), so short texts still compare and `verify(a, a)` gives `r = 1`
//! for every `a` with at least one unit. A text without units has rates 0 and is never similar
//! (with thresholds > 0). Containment goes through TLCS too: a text found verbatim inside a longer
//! one is only trusted where it fills whole blocks of the longer text (up to θ), so an excerpt
//! shorter than one block (`s` units) of a longer text has `tlcs = 0`, while one of `2s` units or
//! more always covers a whole block. Tiny pages are thus never "contained" in long ones by
//! accident.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod anchored;
mod bitlcs;
mod located;
mod measures;
mod myers;
mod refill;
mod skeleton;
mod tlcs;
mod units;
mod weight;

#[cfg(test)]
mod testgen;

pub use measures::{cosine, cosine_sorted, intersection_len, jaccard};
pub use myers::{myers_lcs, Alignment, BoundExceeded};
pub use skeleton::{skeleton, window_hashes, Skeleton, MAX_SKELETON_INPUT, RABIN_BASE};
pub use tlcs::{ses_curve, trustable_region};
pub use units::{is_char_script_unit, unit_spans, units, WORD_UNIT_MIN};
pub use weight::{unit_weight, weight_of, WORD_UNIT_WEIGHT};

use serde::{Deserialize, Serialize};

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
struct ScriptParams {
    window: usize,
    block_size: usize,
    min_gain: usize,
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
    fn params_for(&self, shorter: &[u32]) -> ScriptParams {
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

/// Which of the two inputs a region's offsets refer to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    /// The first argument (`a`).
    #[default]
    A,
    /// The second argument (`b`).
    B,
}

/// The outcome of [`verify`] / [`verify_units`] for one pair. Lengths are in units (see
/// [`units()`]), regions in unit offsets ([`unit_spans`] maps them to chars). `len_a`,
/// `skeleton_a` refer to the first argument, `len_b`, `skeleton_b` to the second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Similarity {
    /// Length of the first text in units, `|a|`.
    pub len_a: usize,
    /// Length of the second text in units, `|b|`.
    pub len_b: usize,
    /// Length of the first text's filter skeleton, in units (seed 000 §4.3); of its located
    /// `window` only, when it has one.
    pub skeleton_a: usize,
    /// Length of the second text's filter skeleton, in units (of its located `window` only,
    /// when it has one).
    pub skeleton_b: usize,
    /// Length of the LCS of the two skeletons (first round), with its short gaps refilled
    /// ([`VerifyConfig::refill_gaps`]), in units; 0 when the pair was rejected before or during
    /// the LCS (`early_reject` or `bound_exceeded`).
    pub lcs: usize,
    /// Resemble rate of `lcs` with every unit weighted by its length in chars ([`unit_weight`]):
    /// `L_w / (|a|_w + |b|_w − L_w)`, with the whole texts' weights ([`weight_of`]); 0 when
    /// `lcs` is 0. See [`VerifyConfig::weighted_lcs_resemble_threshold`].
    pub lcs_resemble_weighted: f64,
    /// Length of the trustable LCS in units (seed 000 §4.4): on the longer text's curve summed
    /// over the iteration rounds, or on the shorter text's curve ([`Similarity::tlcs_shorter`])
    /// when that is larger.
    pub tlcs: usize,
    /// Resemble rate `tlcs / (len_a + len_b − tlcs)`, in `[0, 1]` (seed 000 §3.2).
    pub resemble: f64,
    /// Contain rate `tlcs / min(len_a, len_b)`, in `[0, 1]`, 0 when a text is empty.
    pub contain: f64,
    /// `resemble ≥ resemble_threshold || contain ≥ contain_threshold`, or the whole LCS's rate
    /// reaches [`VerifyConfig::lcs_resemble_threshold`] in units or
    /// [`VerifyConfig::weighted_lcs_resemble_threshold`] weighted ([`lcs_similar`],
    /// [`weighted_lcs_similar`]); never after an early reject or a bound.
    pub similar: bool,
    /// The text in whose offsets `region` and `regions` are given: the longer text (the paper's
    /// A; see the module doc).
    pub region_side: Side,
    /// The trustable region of the first round, `[start, end)` in `region_side`'s unit offsets
    /// (seed 000 Fig. 3); `None` when there is none.
    pub region: Option<(usize, usize)>,
    /// The trustable regions of all rounds, in `region_side`'s original offsets (as `region`). A
    /// later round's region is found in the text with earlier regions cut out, so its span may
    /// enclose an earlier region.
    pub regions: Vec<(usize, usize)>,
    /// Number of rounds that contributed to `tlcs`.
    pub rounds: usize,
    /// Rejected before the LCS because the skeletons are too short to reach a threshold
    /// (seed 000 §4.3), or a text is empty.
    pub early_reject: bool,
    /// Rejected because the edit distance between the skeletons exceeds what a similar pair can
    /// have (the Myers bound, SPEC §2.6).
    pub bound_exceeded: bool,
    /// The LCS of some round was approximated by anchors, because Myers' search would have taken
    /// more than its work budget (module doc, "Long texts"); `lcs` and `tlcs` may then be
    /// shorter than the exact ones.
    pub approximate: bool,
    /// The located window of the longer text (`region_side`'s unit offsets, `[start, end)`) the
    /// skeletons, LCS and TLCS were computed on, when that text is so much longer than the
    /// other that only containment can make them similar (module doc, "Long texts"); `None`
    /// when the whole text was used.
    pub window: Option<(usize, usize)>,
    /// The TLCS found on the shorter text's own SES curve (first round; module doc, "Both
    /// curves"), in units; 0 when [`VerifyConfig::shorter_side`] is off or no region was found.
    /// `tlcs` is the larger of this and the TLCS on `region_side`.
    pub tlcs_shorter: usize,
    /// The trustable region on the shorter text's curve, `[start, end)` in the unit offsets of
    /// the text that is *not* `region_side`; `None` when there is none.
    pub region_shorter: Option<(usize, usize)>,
    /// Located containment ([`VerifyConfig::located_contain_threshold`]): the character LCS of
    /// the shorter text against the window of the longer one where the alignment placed it, over
    /// the shorter text's length in chars; 0 when it was not measured (the pair was similar
    /// already, the alignment covers too little of the shorter text, no texts were given, or the
    /// pair is too large).
    #[serde(default)]
    pub located_contain: f64,
}

/// Resemble and contain rates for a TLCS of `tlcs` units between texts of `len_a` and `len_b`
/// units (seed 000 §3.2; SPEC §2.6 uses the shorter text for containment). Both are 0 when the
/// denominator is 0.
pub fn rates(tlcs: usize, len_a: usize, len_b: usize) -> (f64, f64) {
    let union = (len_a + len_b).saturating_sub(tlcs);
    let r = if union == 0 {
        0.0
    } else {
        tlcs as f64 / union as f64
    };
    let shorter = len_a.min(len_b);
    let c = if shorter == 0 {
        0.0
    } else {
        tlcs as f64 / shorter as f64
    };
    (r, c)
}

/// The verdict for given rates: `r ≥ resemble_threshold || c ≥ contain_threshold` (both
/// inclusive).
pub fn is_similar(resemble: f64, contain: f64, cfg: &VerifyConfig) -> bool {
    resemble >= cfg.resemble_threshold || contain >= cfg.contain_threshold
}

/// Is the whole LCS of the skeletons, `lcs` units of texts of `len_a` and `len_b`, enough on
/// its own ([`VerifyConfig::lcs_resemble_threshold`], never below `resemble_threshold`)? The
/// early reject and the Myers bound stay exact for it: it needs `L ≥` the resemble part of
/// [`min_common_len`], and an approximated LCS is never longer than the LCS.
pub fn lcs_similar(lcs: usize, len_a: usize, len_b: usize, cfg: &VerifyConfig) -> bool {
    let (r, _) = rates(lcs, len_a, len_b);
    lcs > 0 && r >= cfg.lcs_resemble_threshold.max(cfg.resemble_threshold)
}

/// Is the weighted resemble rate of the whole LCS, `r` ([`Similarity::lcs_resemble_weighted`]),
/// enough on its own ([`VerifyConfig::weighted_lcs_resemble_threshold`], never below
/// `resemble_threshold`)? 0 never is. The early reject and the Myers bound count units: a pair
/// they reject is not measured (on natural-dev, admitting the pairs the weighted rate could
/// still reach added none and cost a quarter more ingest time).
pub fn weighted_lcs_similar(r: f64, cfg: &VerifyConfig) -> bool {
    r > 0.0
        && r >= cfg
            .weighted_lcs_resemble_threshold
            .max(cfg.resemble_threshold)
}

/// The smallest TLCS length `L_min` for which texts of `len_a` and `len_b` units are similar,
/// or `None` when no length can make them similar.
///
/// Analytically `L_min = min(⌈t_r·(|A|+|B|)/(1+t_r)⌉, ⌈t_c·min(|A|,|B|)⌉)`; it is found here by
/// binary search on the exact floating-point predicate used for the verdict (monotone in the
/// length), so rounding can never make a bound stricter than the verdict.
pub fn min_common_len(len_a: usize, len_b: usize, cfg: &VerifyConfig) -> Option<usize> {
    let pred = |t: usize| {
        let (r, c) = rates(t, len_a, len_b);
        is_similar(r, c, cfg)
    };
    let hi = len_a.min(len_b);
    if !pred(hi) {
        return None;
    }
    let (mut lo, mut hi) = (0usize, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// Verifies two normalized texts (see the module doc): units, filter skeleton, early reject,
/// bounded Myers LCS, trustable LCS, rates. Lengths and regions are in units. Never panics.
/// Cost: O(N) for the units and skeletons (N the texts' total length in units), the LCS of the
/// skeletons within a work budget that grows with them, then O(N log N) at worst (module doc,
/// "Long texts"), O(k log k) for the base regions (k = |A| / s blocks), times the number of
/// rounds (bounded too). The usual path's working memory is kept per thread and reused.
pub fn verify(a: &str, b: &str, cfg: &VerifyConfig) -> Similarity {
    with_scratch(|sc| {
        units::units_into(a, &mut sc.units_a);
        units::units_into(b, &mut sc.units_b);
        verify_with(&sc.units_a, &sc.units_b, cfg, &mut sc.work, Some((a, b)))
    })
}

/// [`verify`] on texts already split into [`units()`] (lets a caller tokenize a text once and
/// compare it with many). Same result as [`verify`] on the texts.
pub fn verify_units(a: &[u32], b: &[u32], cfg: &VerifyConfig) -> Similarity {
    with_scratch(|sc| verify_with(a, b, cfg, &mut sc.work, None))
}

/// [`verify`] of a text already split into [`units()`] against a text (a probe split once and
/// compared with many stored pages). Same result as [`verify`] on the texts.
pub fn verify_units_text(a: &[u32], b: &str, cfg: &VerifyConfig) -> Similarity {
    with_scratch(|sc| {
        units::units_into(b, &mut sc.units_b);
        verify_with(a, &sc.units_b, cfg, &mut sc.work, None)
    })
}

/// [`verify`] with the first text already split into units (`a`, the units of `a_text`): the
/// whole pipeline, located containment included ([`VerifyConfig::located_contain_threshold`]).
pub fn verify_units_texts(a: &[u32], a_text: &str, b: &str, cfg: &VerifyConfig) -> Similarity {
    with_scratch(|sc| {
        units::units_into(b, &mut sc.units_b);
        verify_with(a, &sc.units_b, cfg, &mut sc.work, Some((a_text, b)))
    })
}

/// Reusable working memory of the pipeline: kept per thread between calls, so a verification
/// allocates (and page-faults) nothing once the buffers have grown to the texts' sizes.
#[derive(Default)]
struct Scratch {
    units_a: Vec<u32>,
    units_b: Vec<u32>,
    work: Work,
}

/// The buffers of [`compare`].
#[derive(Default)]
struct Work {
    skel: skeleton::SkeletonBuf,
    sk_a: Skeleton,
    sk_b: Skeleton,
    myers: myers::MyersBuf,
    anchors: anchored::AnchorBuf,
    votes: Vec<u32>,
    pairs: Vec<(usize, usize)>,
    matched: Vec<bool>,
    curve: Vec<usize>,
    /// This round's alignment in positions of the current A and of B (refilled in round 1).
    full: Vec<(usize, usize)>,
    /// Scratch of the gap refill.
    dp: Vec<u16>,
    aligned: Vec<(usize, usize)>,
}

/// Myers' smallest work budget per pair (diagonals visited plus units compared, all rounds
/// together): 262,144, well under a millisecond. The budget is [`EXACT_WORK_PER_UNIT`] per unit
/// of the two skeletons, within `EXACT_WORK..=EXACT_WORK_MAX`, so a wasted search never costs
/// more than a pass over the texts. Skeletons of a few thousand units whose edit distance is up
/// to about 700 fit (the search's work is about `D²` plus the lengths), those of 100,000 units
/// with a few thousand scattered edits too; past it the LCS comes from the bit-parallel
/// programme when one skeleton has at most 1,024 units (exact), else from anchors (module doc,
/// "Long texts"). On natural-dev (every 8th labeled pair) 39 % of the pairs are approximated,
/// mostly PaddleX pages built from one template (tables of model names); the sample's
/// verification takes 74 s of CPU with a fixed budget of 2²⁴ (on a loaded machine), 11.5 s with
/// 2¹⁸, and the verdicts of the approximated pairs differ from the exact ones in 17 of 7,852 (6
/// near duplicates lost, 5 gained; 5 false pairs fewer, 1 more).
const EXACT_WORK: u64 = 1 << 18;

/// Myers' work budget grows with the skeletons' total length by this much per unit, up to
/// [`EXACT_WORK_MAX`].
const EXACT_WORK_PER_UNIT: u64 = 16;

/// The largest work budget of Myers' search, whatever the lengths.
const EXACT_WORK_MAX: u64 = 1 << 24;

/// [`locate`] samples the shared windows when the shorter text has more windows than this.
const LOCATE_SAMPLE_ABOVE: usize = 4096;

/// Traceback table limit of the bit-parallel LCS used when Myers' budget runs out and one
/// skeleton has at most 1,024 units, in words (32 MiB).
const BIT_WORDS: usize = 1 << 22;

/// Rounds beyond two run only while `rounds · (|A| + |B|)` stays within this many units.
const ROUND_UNITS: usize = 1 << 24;

/// The located window of a long text is this many times the short text's length, plus two
/// blocks (module doc, "Long texts").
const WINDOW_FACTOR: usize = 2;

/// The longest located window, in multiples of the shorter text (a text copied in pieces
/// spread over the longer one; see [`locate`]).
const WINDOW_MAX_FACTOR: usize = 4;

/// [`locate`] compares the whole texts when its densest band has fewer votes than this.
const LOCATE_MIN_VOTES: usize = 2;

/// Buffers grown past this many units by a very long text are freed after the call rather than
/// kept for the thread's lifetime.
const SCRATCH_KEEP_UNITS: usize = 1 << 18;

/// The longest gap [`VerifyConfig::refill_gaps`] refills, in skeleton windows (`S` units): the
/// skeleton drops the text between two edits closer than `S` units, so a gap of two windows
/// holds two close edits and the text between them (see the table on the field).
pub const REFILL_GAP_WINDOWS: usize = 2;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's [`Scratch`] (a fresh one if it is unavailable, e.g. during thread
/// teardown). The buffers are moved out for the call, so nothing is borrowed while `f` runs.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut sc = SCRATCH
        .try_with(|c| c.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).ok())
        .ok()
        .flatten()
        .unwrap_or_default();
    let r = f(&mut sc);
    if sc.units_a.capacity().max(sc.units_b.capacity()) <= SCRATCH_KEEP_UNITS
        && sc.work.matched.capacity() <= SCRATCH_KEEP_UNITS
    {
        // Ignoring failure only drops the buffers.
        let _ = SCRATCH.try_with(|c| {
            if let Ok(mut s) = c.try_borrow_mut() {
                *s = sc;
            }
        });
    }
    r
}

/// [`verify_units`] with given buffers.
fn verify_with(
    a: &[u32],
    b: &[u32],
    cfg: &VerifyConfig,
    work: &mut Work,
    texts: Option<(&str, &str)>,
) -> Similarity {
    // The longer text plays the paper's A (module doc, "Which text is A").
    let swap = b.len() > a.len() || (a.len() == b.len() && b < a);
    let (big, small) = if swap { (b, a) } else { (a, b) };
    let core = compare(big, small, cfg, work);
    let (resemble, contain) = rates(core.tlcs, a.len(), b.len());
    let lcs_resemble_weighted = weight::weighted_resemble(core.lcs_weight, a, b);
    let (skeleton_a, skeleton_b) = if swap {
        (core.skeleton_small, core.skeleton_big)
    } else {
        (core.skeleton_big, core.skeleton_small)
    };
    let similar = !core.early_reject
        && !core.bound_exceeded
        && (is_similar(resemble, contain, cfg)
            || lcs_similar(core.lcs, a.len(), b.len(), cfg)
            || weighted_lcs_similar(lcs_resemble_weighted, cfg));
    // Located containment (seed 000 §3.2 in chars, `located.rs`): only for a pair kept apart
    // whose alignment covers most of the shorter text, and a shorter text of one TLCS block or
    // more (module doc, "Very short texts": tiny pages are never contained by accident).
    let small_len = a.len().min(b.len());
    let located_contain = match texts {
        Some((ta, tb))
            if !similar
                && !core.early_reject
                && !core.bound_exceeded
                && small_len >= cfg.params_for(if swap { a } else { b }).block_size.max(1)
                && core.lcs as f64 >= cfg.located_contain_min_lcs * small_len as f64 =>
        {
            let (big_text, small_text) = if swap { (tb, ta) } else { (ta, tb) };
            located::located_contain(
                big_text,
                small_text,
                &work.aligned,
                cfg.located_contain_threshold,
            )
            .unwrap_or(0.0)
        }
        _ => 0.0,
    };
    Similarity {
        len_a: a.len(),
        len_b: b.len(),
        skeleton_a,
        skeleton_b,
        lcs: core.lcs,
        tlcs: core.tlcs,
        resemble,
        contain,
        similar: similar
            || (located_contain > 0.0 && located_contain >= cfg.located_contain_threshold),
        located_contain,
        lcs_resemble_weighted,
        region_side: if swap { Side::B } else { Side::A },
        region: core.regions.first().copied(),
        regions: core.regions,
        rounds: core.rounds,
        early_reject: core.early_reject,
        bound_exceeded: core.bound_exceeded,
        approximate: core.approximate,
        window: core.window,
        tlcs_shorter: core.tlcs_shorter,
        region_shorter: core.region_shorter,
    }
}

/// What [`compare`] found, in the canonical orientation (A = `big`).
#[derive(Default)]
struct Core {
    skeleton_big: usize,
    skeleton_small: usize,
    lcs: usize,
    /// The [`unit_weight`] of the `lcs` units.
    lcs_weight: usize,
    tlcs: usize,
    regions: Vec<(usize, usize)>,
    rounds: usize,
    early_reject: bool,
    bound_exceeded: bool,
    approximate: bool,
    window: Option<(usize, usize)>,
    tlcs_shorter: usize,
    region_shorter: Option<(usize, usize)>,
}

/// Skeleton, early reject, bounded LCS and (iterated) TLCS with `a` as the paper's document A:
/// on a located window of `a` when `a` is so much longer than `b` that only containment can make
/// them similar (module doc, "Long texts"), else on the whole of `a`.
fn compare(a: &[u32], b: &[u32], cfg: &VerifyConfig, work: &mut Work) -> Core {
    let mut core = Core::default();
    work.aligned.clear();
    let (la, lb) = (a.len(), b.len());
    let Some(l_min) = min_common_len(la, lb, cfg) else {
        // No TLCS length can reach a threshold (e.g. an empty text).
        core.early_reject = true;
        return core;
    };
    if la == 0 || lb == 0 {
        // Thresholds ≤ 0 make even an empty pair "similar"; nothing to compute.
        return core;
    }
    let params = cfg.params_for(b);
    match locate(a, b, params, cfg, work) {
        Located::Whole => compare_in(a, b, l_min, params, cfg, work),
        Located::Window(w0, w1) => {
            let mut core = compare_in(&a[w0..w1], b, l_min, params, cfg, work);
            for r in &mut core.regions {
                r.0 += w0;
                r.1 += w0;
            }
            for p in &mut work.aligned {
                p.0 += w0;
            }
            core.window = Some((w0, w1));
            core
        }
    }
}

/// Where [`compare`] looks for the TLCS in the longer text.
enum Located {
    /// The whole text.
    Whole,
    /// Units `[w0, w1)` only.
    Window(usize, usize),
}

/// The located window of `a` for containment (module doc, "Long texts"): used when even a TLCS
/// as long as `b` gives a resemble rate below its threshold, so only `c = |TLCS| / |b|` can make
/// the pair similar, and `a` is longer than the window, [`WINDOW_FACTOR`] · |b| plus two blocks.
/// `b`'s windows (those the filter skeleton would keep, §4.3) found in `a` vote: every window of
/// `b` unique within `b` votes for its diagonal (position in `a` minus position in `b`). The
/// window is centred on the band of `|b| / 2` diagonals with the most votes (the first on ties);
/// text copied into `a` votes for one band, chance matches of common phrases spread over all of
/// them. `b` copied in pieces with other content between them votes for several bands, each at
/// most a piece's length from the next: bands next to the window's with an eighth of the best
/// band's votes or more extend it, up to [`WINDOW_MAX_FACTOR`] · |b|, so that the trustable
/// region on `b`'s own curve (module doc, "Both curves") sees every piece. With fewer than
/// [`LOCATE_MIN_VOTES`] votes in the best band nothing says where `b` sits (a text made of
/// repeats has no window unique in it) and the whole of `a` is used. When `b` has more than
/// [`LOCATE_SAMPLE_ABOVE`] units, a fixed eighth of the windows by hash value stands for all.
/// O(|a| + |b| + V log V) for V votes.
fn locate(
    a: &[u32],
    b: &[u32],
    params: ScriptParams,
    cfg: &VerifyConfig,
    work: &mut Work,
) -> Located {
    let (la, lb) = (a.len(), b.len());
    let (r_max, _) = rates(lb, la, lb);
    let len = lb
        .saturating_mul(WINDOW_FACTOR)
        .saturating_add(params.block_size.max(1).saturating_mul(2));
    if r_max >= cfg.resemble_threshold || la <= len {
        return Located::Whole;
    }
    let window = params.window.min(lb).max(1);
    let votes = &mut work.votes;
    skeleton::shared_window_diagonals(
        a,
        b,
        window,
        lb > LOCATE_SAMPLE_ABOVE,
        &mut work.skel,
        votes,
    );
    votes.sort_unstable();
    // Densest band [d, d + lb / 2] of diagonals (two pointers over the sorted votes).
    let band = lb / 2;
    let (mut best, mut best_at, mut j) = (0usize, lb, 0usize);
    for (i, &d) in votes.iter().enumerate() {
        let end = d as usize + band;
        while votes.get(j).is_some_and(|&q| q as usize <= end) {
            j += 1;
        }
        if j - i > best {
            (best, best_at) = (j - i, d as usize);
        }
    }
    if best < LOCATE_MIN_VOTES {
        // No shared window unique in `b` (a text made of repeats) or next to none: nothing
        // says where `b` sits, so the whole text is compared (the work budget bounds it).
        return Located::Whole;
    }
    // `b` copied in pieces with other content between them (paragraphs spread over a longer
    // text) votes for several bands, one per piece, a piece's length apart or less: extend the
    // band over neighbouring bands of diagonals with real support (an eighth of the densest
    // band's votes), while the window stays within `WINDOW_MAX_FACTOR · |b|`.
    let support = (best / 8).max(LOCATE_MIN_VOTES);
    let max_span = lb.saturating_mul(WINDOW_MAX_FACTOR - 1);
    let (mut lo, mut hi) = (best_at, best_at + band);
    loop {
        let count = |x: usize, y: usize| {
            votes.partition_point(|&q| (q as usize) <= y)
                - votes.partition_point(|&q| (q as usize) < x)
        };
        let up = (count(hi + 1, hi + lb) >= support).then(|| {
            let k = votes.partition_point(|&q| (q as usize) <= hi + lb);
            votes[k - 1] as usize
        });
        let down = (lo > 0 && count(lo.saturating_sub(lb), lo - 1) >= support).then(|| {
            votes[votes.partition_point(|&q| (q as usize) < lo.saturating_sub(lb))] as usize
        });
        match (up, down) {
            (Some(h), _) if h - lo <= max_span => hi = h,
            (_, Some(l)) if hi - l <= max_span => lo = l,
            _ => break,
        }
    }
    // Votes are diagonals + |b|: `b`'s unit `x` at diagonal `v − |b|` sits at `a`'s unit
    // `v − |b| + x`, so the pieces span `a`'s units `lo − |b|` to `hi`, plus a block each side.
    let s = params.block_size.max(1);
    let (span0, span1) = (lo.saturating_sub(lb + s), hi.saturating_add(s).min(la));
    if span1 - span0 > len {
        return Located::Window(span0, span1);
    }
    let centre = (span0 + span1) / 2;
    let w0 = centre.saturating_sub(len / 2).min(la - len);
    Located::Window(w0, w0 + len)
}

/// [`compare`] on `a` (the whole longer text or its located window) and `b`, with `l_min` the
/// shortest TLCS that makes the *whole* texts similar.
fn compare_in(
    a: &[u32],
    b: &[u32],
    l_min: usize,
    params: ScriptParams,
    cfg: &VerifyConfig,
    work: &mut Work,
) -> Core {
    let mut core = Core::default();
    let (la, lb) = (a.len(), b.len());
    let Work {
        skel,
        sk_a: cur_a,
        sk_b: cur_b,
        myers: myers_buf,
        anchors: anchor_buf,
        pairs,
        votes: _,
        matched,
        curve,
        full,
        dp,
        aligned,
    } = work;
    aligned.clear();

    // Filter skeleton (seed 000 §4.3, Fig. 2); the window shrinks for texts shorter than S.
    let window = params.window.min(la.min(lb)).max(1);
    skeleton::skeleton_into(a, b, window, skel, cur_a, cur_b);
    core.skeleton_big = cur_a.len();
    core.skeleton_small = cur_b.len();

    // Early reject (seed 000 §4.3, last paragraph): |TLCS| ≤ min(|A'|, |B'|), also across
    // iteration rounds (each skeleton unit is matched at most once). The gap refill (round 1)
    // matches at most the units of each text in its skeleton's short gaps besides.
    let max_gap = REFILL_GAP_WINDOWS.saturating_mul(window);
    let refill_extra = if cfg.refill_gaps {
        (cur_a.len() + refill::short_gap_units(&cur_a.offsets, max_gap))
            .min(cur_b.len() + refill::short_gap_units(&cur_b.offsets, max_gap))
            .saturating_sub(cur_a.len().min(cur_b.len()))
    } else {
        0
    };
    if cur_a.len().min(cur_b.len()) + refill_extra < l_min {
        core.early_reject = true;
        return core;
    }

    // Iteration state (seed 000 §4.4, last paragraph): `rank[o]` is the position in the current
    // document A (original A minus earlier regions) of A's original unit `o`, `usize::MAX` when
    // cut; `None` while nothing is cut (identity). The skeletons keep original offsets.
    let mut rank: Option<Vec<usize>> = None;
    let mut cur_len = la;
    // Each round costs O(|A| + |B|) besides its LCS: rounds beyond two are allowed while their
    // total stays within ROUND_UNITS (module doc, "Long texts").
    let rounds = cfg
        .max_iterations
        .max(1)
        .min((ROUND_UNITS / (la + lb)).max(2));
    // Myers' work budget, shared by the rounds; past it the LCS is approximated by anchors.
    let mut budget = (EXACT_WORK_PER_UNIT * (cur_a.len() + cur_b.len()) as u64)
        .clamp(EXACT_WORK, EXACT_WORK_MAX);
    let min_gain = params.min_gain.max(1);
    let mut first_tlcs = 0;
    for round in 1..=rounds {
        // Myers bound (SPEC §2.6). Each later round's LCS is at most this round's (its inputs
        // are subsequences of this round's), and a round's TLCS is at most its LCS, so the
        // `left` remaining rounds add at most `left · L`; reaching `need` more units requires
        // L ≥ ⌈need / left⌉. On the skeletons |A'| + |B'| = 2L + D, so D ≤ |A'| + |B'| − 2L.
        let need = l_min.saturating_sub(core.tlcs + if round == 1 { refill_extra } else { 0 });
        let bound = if cfg.d_bound && need > 0 {
            let per_round = need.div_ceil(rounds - round + 1);
            match (cur_a.len() + cur_b.len()).checked_sub(per_round.saturating_mul(2)) {
                Some(max_d) => Some(max_d),
                None => {
                    core.bound_exceeded = true;
                    break;
                }
            }
        } else {
            None
        };
        // LCS of the skeletons (seed 000 §4.4: Myers' O(ND) on the filter skeletons), within
        // the work budget; past it, the anchored approximation (module doc, "Long texts").
        pairs.clear();
        match myers::lcs_into(
            &cur_a.units,
            &cur_b.units,
            bound,
            &mut budget,
            myers_buf,
            pairs,
        ) {
            Ok(_) => {}
            Err(myers::Stop::Bound(_)) => {
                core.bound_exceeded = true;
                break;
            }
            Err(myers::Stop::Budget) => {
                pairs.clear();
                // A short skeleton against a long one: exact and linear in the long one;
                // else the anchored approximation.
                if bitlcs::bit_lcs(&cur_a.units, &cur_b.units, BIT_WORDS, pairs).is_none() {
                    anchored::anchored_lcs(
                        &cur_a.units,
                        &cur_b.units,
                        window * 4,
                        anchor_buf,
                        pairs,
                    );
                    core.approximate = true;
                }
            }
        }
        if round > 1 && pairs.len() < min_gain {
            break;
        }
        if pairs.is_empty() {
            break;
        }
        // The alignment in positions of the current document A and of B, through the skeletons'
        // offsets (seed 000 §4.4: TLCS on document A); in the first round with its short gaps
        // refilled ([`VerifyConfig::refill_gaps`]). Ascending in both texts.
        let offsets = &cur_a.offsets;
        let offs_b = &cur_b.offsets;
        let pos_of = |ia: usize| -> usize {
            let Some(&o) = offsets.get(ia) else {
                return usize::MAX;
            };
            match &rank {
                None => o as usize,
                Some(r) => r.get(o as usize).copied().unwrap_or(usize::MAX),
            }
        };
        if round == 1 && cfg.refill_gaps {
            refill::refill_into((a, offsets), (b, offs_b), pairs, max_gap, dp, full);
        } else {
            full.clear();
            full.extend(pairs.iter().map(|&(ia, ib)| {
                (
                    pos_of(ia),
                    offs_b.get(ib).map_or(usize::MAX, |&o| o as usize),
                )
            }));
        }
        if round == 1 {
            core.lcs = full.len();
            core.lcs_weight = weight::weight_b(b, full);
            aligned.extend_from_slice(full);
        }
        if round == 1 && cfg.shorter_side && lb >= params.block_size.max(1) {
            // The trustable region on B's curve (module doc, "Both curves"). Pairs ascend in
            // both texts, so the region's pairs are one run.
            matched.clear();
            matched.resize(lb, false);
            for &(_, pb) in full.iter() {
                if let Some(m) = matched.get_mut(pb) {
                    *m = true;
                }
            }
            if let Some((yl, yr)) =
                tlcs::trustable_region_with(matched, params.block_size, cfg.theta, curve)
            {
                let gain = full.partition_point(|&(_, pb)| pb < yr)
                    - full.partition_point(|&(_, pb)| pb < yl);
                core.tlcs_shorter = gain;
                core.region_shorter = Some((yl, yr));
            }
        }

        matched.clear();
        matched.resize(cur_len, false);
        for &(pa, _) in full.iter() {
            if let Some(m) = matched.get_mut(pa) {
                *m = true;
            }
        }

        // Trustable region and TLCS (seed 000 §4.4, Fig. 4).
        let Some((xl, xr)) =
            tlcs::trustable_region_with(matched, params.block_size, cfg.theta, curve)
        else {
            break;
        };
        // The pairs' positions in A increase, so the region's pairs are one run.
        let gain =
            full.partition_point(|&(pa, _)| pa < xr) - full.partition_point(|&(pa, _)| pa < xl);
        if gain == 0 || (round > 1 && gain < min_gain) {
            break;
        }
        core.tlcs += gain;
        core.rounds = round;
        if round == 1 {
            first_tlcs = gain;
        }
        // The region's first and last original offsets.
        let orig_of = |p: usize| -> Option<usize> {
            match &rank {
                None => Some(p),
                Some(r) => r.iter().position(|&q| q == p),
            }
        };
        if let (Some(s), Some(e)) = (orig_of(xl), orig_of(xr.saturating_sub(1))) {
            core.regions.push((s, e + 1));
        }
        if round == rounds {
            break;
        }

        // Next round: cut the region from A and the TLCS units from B (seed 000 §4.4: "将它从
        // 文档 A 中删除, 并将 TLCS 从文档 B 中删除"). The skeletons are filtered rather than
        // recomputed (windows straddling a cut are not re-examined).
        // B's units of the region's pairs, refilled ones included when they are skeleton
        // units (each unit of B counts once over the rounds, as the early reject assumes).
        let mut drop_b = vec![false; cur_b.len()];
        let (f0, f1) = (
            full.partition_point(|&(pa, _)| pa < xl),
            full.partition_point(|&(pa, _)| pa < xr),
        );
        for &(_, pb) in &full[f0..f1] {
            let Ok(pb) = u32::try_from(pb) else { continue };
            if let Ok(ib) = cur_b.offsets.binary_search(&pb) {
                if let Some(flag) = drop_b.get_mut(ib) {
                    *flag = true;
                }
            }
        }
        let old = rank.take().unwrap_or_else(|| (0..la).collect());
        let mut next = 0usize;
        let new_rank: Vec<usize> = old
            .into_iter()
            .map(|p| {
                if p == usize::MAX || (xl <= p && p < xr) {
                    usize::MAX
                } else {
                    next += 1;
                    next - 1
                }
            })
            .collect();
        cur_len = next;
        filter_skeleton(cur_a, |_, off| {
            new_rank.get(off as usize).is_some_and(|&p| p != usize::MAX)
        });
        filter_skeleton(cur_b, |i, _| !drop_b.get(i).copied().unwrap_or(false));
        rank = Some(new_rank);
    }
    // Later rounds count only when some trustable region holds the centre of A. The TLCS is the
    // central part of the page (seed 000 §4.4); regions that all sit off the centre mean the
    // pages share their edges — a site template's header and footer — not moved paragraphs,
    // which leave the centre matched.
    if core.rounds > 1 && !core.regions.iter().any(|&(s, e)| s <= la / 2 && la / 2 < e) {
        core.tlcs = first_tlcs;
        core.regions.truncate(1);
        core.rounds = 1;
    }
    if core.tlcs_shorter > core.tlcs {
        core.tlcs = core.tlcs_shorter;
    }
    core
}

/// Keeps (in place) the skeleton entries `(index, original offset)` for which `keep` holds.
fn filter_skeleton(s: &mut Skeleton, keep: impl Fn(usize, u32) -> bool) {
    let mut w = 0;
    for i in 0..s.units.len().min(s.offsets.len()) {
        if keep(i, s.offsets[i]) {
            s.units[w] = s.units[i];
            s.offsets[w] = s.offsets[i];
            w += 1;
        }
    }
    s.units.truncate(w);
    s.offsets.truncate(w);
}

#[cfg(test)]
mod tests;
