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
mod compare;
mod config;
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

pub use compare::REFILL_GAP_WINDOWS;
pub use config::VerifyConfig;
pub use measures::{cosine, cosine_sorted, intersection_len, jaccard};
pub use myers::{myers_lcs, Alignment, BoundExceeded};
pub use skeleton::{skeleton, window_hashes, Skeleton, MAX_SKELETON_INPUT, RABIN_BASE};
pub use tlcs::{ses_curve, trustable_region};
pub use units::{is_char_script_unit, unit_spans, units, WORD_UNIT_MIN};
pub use weight::{unit_weight, weight_of, WORD_UNIT_WEIGHT};

use compare::{verify_with, with_scratch};

use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests;
