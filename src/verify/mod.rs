//! Verification: are two normalized page texts near duplicates? (seed 000: Huang, Wang, Li 2007,
//! "一种基于 LCS 的相似网页检测算法", §3.2, §4.3, §4.4; SPEC §2.6.)
//!
//! Pipeline for one pair (A, B), [`verify`] / [`verify_chars`]:
//! 1. **Filter skeleton** (§4.3, Fig. 2, [`skeleton()`]): keep only the chars of each text covered
//!    by an `S`-char window whose Rabin hash also occurs in the other text.
//! 2. **Early reject** (§4.3, last paragraph): the TLCS cannot be longer than the shorter
//!    skeleton; if even that length cannot reach a threshold, stop.
//! 3. **LCS** of the skeletons by Myers' O(ND) algorithm in linear space (§3.1, §4.4,
//!    [`myers_lcs`]), bounded by the largest edit distance that can still lead to "similar".
//! 4. **Trustable LCS** (§4.4, Fig. 3–4, [`trustable_region`]): the part of the LCS inside the
//!    centred, continuous region of A whose SES slope stays ≤ θ; optionally iterated for
//!    reordered paragraphs.
//! 5. **Rates** (§3.2, SPEC §2.6, [`rates`]): resemble `r = T / (|A| + |B| − T)`, contain
//!    `c = T / min(|A|, |B|)` with `T = |TLCS|`; similar when `r ≥ 0.28` or `c ≥ 0.70`.
//!
//! **Units.** Texts are `&str`, already NFKC-normalized, whitespace-collapsed and lower-cased by
//! the caller. Everything is counted in Unicode scalar values (chars), so Chinese and Latin text
//! weigh alike. The paper counts GBK bytes (2 per Chinese char); its 16-byte window becomes
//! `S = 8` chars. Lengths `|A|`, `|B|` in the rates are the original texts' char counts.
//!
//! **Which text is "A".** TLCS is computed on one document's SES curve, so it is asymmetric. The
//! paper's `c(A, B) = |LCS| / |B|` reads "A contains B", so the container — the longer text — plays
//! A (ties: the lexicographically smaller char sequence). This makes [`verify`] exactly symmetric:
//! `verify(a, b)` and `verify(b, a)` give the same rates and verdict.
//!
//! **Very short texts.** When a text is shorter than `S`, the window shrinks to the shorter
//! text's length (at least 1 char), so short texts still compare and `verify(a, a)` gives `r = 1`
//! for every non-empty `a`. An empty text has rates 0 and is never similar (with thresholds > 0).
//! Containment goes through TLCS too: a text found verbatim inside a longer one is only trusted
//! where it fills whole blocks of the longer text (up to θ), so an excerpt shorter than one block
//! (`s` = 64 chars) of a longer text has `tlcs = 0`, while one of `2s` chars or more always
//! covers a whole block. Tiny pages are thus never "contained" in long ones by accident.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod measures;
mod myers;
mod skeleton;
mod tlcs;

#[cfg(test)]
mod testgen;

pub use measures::{cosine, cosine_sorted, intersection_len, jaccard};
pub use myers::{myers_lcs, Alignment, BoundExceeded};
pub use skeleton::{skeleton, window_hashes, Skeleton, MAX_SKELETON_INPUT, RABIN_BASE};
pub use tlcs::{ses_curve, trustable_region};

use serde::{Deserialize, Serialize};

/// Parameters of the verification stage. Defaults are the paper's (seed 000 §5.2–5.4), converted
/// from GBK bytes to chars where needed. Missing fields deserialize to their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyConfig {
    /// Filter-skeleton window `S`, in chars, for Chinese text (seed 000 §4.3, §5.2: 16 GBK
    /// bytes ≈ 8 Chinese chars). Default 8. 0 is treated as 1.
    pub window: usize,
    /// Filter-skeleton window for alphabetic text, in chars: the paper's 16 bytes are 16 Latin
    /// characters. Used when fewer than half the characters of the shorter text are CJK
    /// ideographs. Default 8 (tuned on the bench corpus, see CHANGELOG). 0 is treated as 1.
    pub window_alphabetic: usize,
    /// Slope threshold θ of the trustable region (seed 000 §4.4, §5.3). Default 0.10.
    pub theta: f64,
    /// Resemble threshold, inclusive: `r ≥ resemble_threshold` means similar (seed 000 §5.3).
    /// Default 0.28.
    pub resemble_threshold: f64,
    /// Contain threshold, inclusive: `c ≥ contain_threshold` means similar (seed 000 §5.4).
    /// Default 0.70.
    pub contain_threshold: f64,
    /// TLCS block size `s`, in chars (seed 000 §4.4, Fig. 4: `k = ⌈size(A) / s⌉`). The paper gives
    /// no value. Default 64 chars: a short paragraph, so a typical 1,000–3,000-char article has
    /// 16–47 blocks, a 300-char site header 4–5, and the O(k²) base-region search stays cheap
    /// (about 1,600 blocks for 100,000 chars). 0 is treated as 1.
    pub block_size: usize,
    /// Rounds of the reordered-paragraph iteration (seed 000 §4.4, last paragraph): after each
    /// round the trustable region is cut from A and its TLCS chars from B, and the rest is
    /// compared again. 1 = no iteration (the paper's main algorithm). Default 1: iterating also
    /// re-admits a site template (round 2 picks up the footer after round 1 took the header),
    /// which is exactly what TLCS is meant to exclude; enable it for applications that need
    /// reordered paragraphs. 0 is treated as 1.
    pub max_iterations: usize,
    /// Iteration stop rule: a round after the first whose LCS, or whose TLCS gain, is shorter
    /// than this many chars is discarded and ends the iteration (the paper: "each round's LCS
    /// decreases, so a threshold can bound the depth"). Default 64 (one block). 0 is treated
    /// as 1.
    pub iteration_min_gain: usize,
    /// Bound Myers' search by the largest SES that can still reach a threshold (default true).
    /// The bound never changes the verdict; turning it off only costs time (for tests).
    pub d_bound: bool,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            window: 8,
            window_alphabetic: 8,
            theta: 0.10,
            resemble_threshold: 0.28,
            contain_threshold: 0.70,
            block_size: 64,
            max_iterations: 1,
            iteration_min_gain: 64,
            d_bound: true,
        }
    }
}

impl VerifyConfig {
    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming the first field out of range.
    pub fn validate(&self) -> crate::Result<()> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        if !unit(self.theta) || !unit(self.resemble_threshold) || !unit(self.contain_threshold) {
            return Err(crate::Error::InvalidArgument(
                "verify: theta, resemble_threshold and contain_threshold must be within 0..=1"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The skeleton window for a pair whose shorter text is `text`.
    fn window_for(&self, text: &[char]) -> usize {
        let cjk = text
            .iter()
            .filter(|&&c| crate::text::is_ideograph(c))
            .count();
        if cjk * 2 >= text.len() {
            self.window
        } else {
            self.window_alphabetic
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

/// The outcome of [`verify`] for one pair. Lengths and offsets are in chars. `len_a`,
/// `skeleton_a` refer to the first argument, `len_b`, `skeleton_b` to the second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Similarity {
    /// Length of the first text, `|a|`.
    pub len_a: usize,
    /// Length of the second text, `|b|`.
    pub len_b: usize,
    /// Length of the first text's filter skeleton (seed 000 §4.3).
    pub skeleton_a: usize,
    /// Length of the second text's filter skeleton.
    pub skeleton_b: usize,
    /// Length of the LCS of the two skeletons (first round); 0 when the pair was rejected before
    /// or during the LCS (`early_reject` or `bound_exceeded`).
    pub lcs: usize,
    /// Length of the trustable LCS, summed over the iteration rounds (seed 000 §4.4).
    pub tlcs: usize,
    /// Resemble rate `tlcs / (len_a + len_b − tlcs)`, in `[0, 1]` (seed 000 §3.2).
    pub resemble: f64,
    /// Contain rate `tlcs / min(len_a, len_b)`, in `[0, 1]`, 0 when a text is empty.
    pub contain: f64,
    /// `resemble ≥ resemble_threshold || contain ≥ contain_threshold`.
    pub similar: bool,
    /// The text in whose char offsets `region` and `regions` are given: the longer text (the
    /// paper's A; see the module doc).
    pub region_side: Side,
    /// The trustable region of the first round, `[start, end)` in `region_side`'s char offsets
    /// (seed 000 Fig. 3); `None` when there is none.
    pub region: Option<(usize, usize)>,
    /// The trustable regions of all rounds, in `region_side`'s original char offsets. A later
    /// round's region is found in the text with earlier regions cut out, so its span may enclose
    /// an earlier region.
    pub regions: Vec<(usize, usize)>,
    /// Number of rounds that contributed to `tlcs`.
    pub rounds: usize,
    /// Rejected before the LCS because the skeletons are too short to reach a threshold
    /// (seed 000 §4.3), or a text is empty.
    pub early_reject: bool,
    /// Rejected because the edit distance between the skeletons exceeds what a similar pair can
    /// have (the Myers bound, SPEC §2.6).
    pub bound_exceeded: bool,
}

/// Resemble and contain rates for a TLCS of `tlcs` chars between texts of `len_a` and `len_b`
/// chars (seed 000 §3.2; SPEC §2.6 uses the shorter text for containment). Both are 0 when the
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

/// The smallest TLCS length `L_min` for which texts of `len_a` and `len_b` chars are similar,
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

/// Verifies two normalized texts (see the module doc): filter skeleton, early reject, bounded
/// Myers LCS, trustable LCS, rates. Never panics. Cost: O(N) for the skeletons, O(N' · D) for
/// the LCS of the skeletons (N' their total length, D their edit distance, at most the bound),
/// O(k²) at worst for the base regions (k = |A| / s blocks), times the number of rounds.
pub fn verify(a: &str, b: &str, cfg: &VerifyConfig) -> Similarity {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    verify_chars(&a, &b, cfg)
}

/// [`verify`] on texts already split into chars (avoids re-collecting in hot loops).
pub fn verify_chars(a: &[char], b: &[char], cfg: &VerifyConfig) -> Similarity {
    // The longer text plays the paper's A (module doc, "Which text is A").
    let swap = b.len() > a.len() || (a.len() == b.len() && b < a);
    let (big, small) = if swap { (b, a) } else { (a, b) };
    let core = compare(big, small, cfg);
    let (resemble, contain) = rates(core.tlcs, a.len(), b.len());
    let (skeleton_a, skeleton_b) = if swap {
        (core.skeleton_small, core.skeleton_big)
    } else {
        (core.skeleton_big, core.skeleton_small)
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
        similar: !core.early_reject && !core.bound_exceeded && is_similar(resemble, contain, cfg),
        region_side: if swap { Side::B } else { Side::A },
        region: core.regions.first().copied(),
        regions: core.regions,
        rounds: core.rounds,
        early_reject: core.early_reject,
        bound_exceeded: core.bound_exceeded,
    }
}

/// What [`compare`] found, in the canonical orientation (A = `big`).
#[derive(Default)]
struct Core {
    skeleton_big: usize,
    skeleton_small: usize,
    lcs: usize,
    tlcs: usize,
    regions: Vec<(usize, usize)>,
    rounds: usize,
    early_reject: bool,
    bound_exceeded: bool,
}

/// Skeleton, early reject, bounded LCS and (iterated) TLCS with `a` as the paper's document A.
fn compare(a: &[char], b: &[char], cfg: &VerifyConfig) -> Core {
    let mut core = Core::default();
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

    // Filter skeleton (seed 000 §4.3, Fig. 2); the window shrinks for texts shorter than S.
    let window = cfg.window_for(b).min(la.min(lb)).max(1);
    let (sa, sb) = skeleton(a, b, window);
    core.skeleton_big = sa.len();
    core.skeleton_small = sb.len();

    // Early reject (seed 000 §4.3, last paragraph): |TLCS| ≤ min(|A'|, |B'|), also across
    // iteration rounds (each skeleton char is matched at most once).
    if sa.len().min(sb.len()) < l_min {
        core.early_reject = true;
        return core;
    }

    // Iteration state (seed 000 §4.4, last paragraph): A's chars still present (original
    // offsets), and the current skeletons (offsets stay original).
    let mut alive = vec![true; la];
    let (mut cur_a, mut cur_b) = (sa, sb);
    let rounds = cfg.max_iterations.max(1);
    let min_gain = cfg.iteration_min_gain.max(1);
    for round in 1..=rounds {
        // Myers bound (SPEC §2.6). Each later round's LCS is at most this round's (its inputs
        // are subsequences of this round's), and a round's TLCS is at most its LCS, so the
        // `left` remaining rounds add at most `left · L`; reaching `need` more chars requires
        // L ≥ ⌈need / left⌉. On the skeletons |A'| + |B'| = 2L + D, so D ≤ |A'| + |B'| − 2L.
        let need = l_min.saturating_sub(core.tlcs);
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
        // LCS of the skeletons (seed 000 §4.4: Myers' O(ND) on the filter skeletons).
        let alignment = match myers_lcs(&cur_a.chars, &cur_b.chars, bound) {
            Ok(al) => al,
            Err(_) => {
                core.bound_exceeded = true;
                break;
            }
        };
        if round == 1 {
            core.lcs = alignment.len();
        } else if alignment.len() < min_gain {
            break;
        }
        if alignment.is_empty() {
            break;
        }

        // Map the alignment to positions of the current document A (original A minus earlier
        // regions), through the skeleton's offsets (seed 000 §4.4: TLCS on document A).
        let positions: Vec<usize> = (0..la).filter(|&i| alive[i]).collect();
        let mut rank = vec![usize::MAX; la];
        for (p, &orig) in positions.iter().enumerate() {
            rank[orig] = p;
        }
        let pos_of = |ia: usize| {
            cur_a
                .offsets
                .get(ia)
                .and_then(|&o| rank.get(o as usize))
                .copied()
                .unwrap_or(usize::MAX)
        };
        let mut matched = vec![false; positions.len()];
        for &(ia, _) in &alignment.pairs {
            if let Some(m) = matched.get_mut(pos_of(ia)) {
                *m = true;
            }
        }

        // Trustable region and TLCS (seed 000 §4.4, Fig. 4).
        let Some((xl, xr)) = trustable_region(&matched, cfg.block_size, cfg.theta) else {
            break;
        };
        let mut gain = 0usize;
        let mut drop_b = vec![false; cur_b.len()];
        for &(ia, ib) in &alignment.pairs {
            let p = pos_of(ia);
            if xl <= p && p < xr {
                gain += 1;
                if let Some(flag) = drop_b.get_mut(ib) {
                    *flag = true;
                }
            }
        }
        if gain == 0 || (round > 1 && gain < min_gain) {
            break;
        }
        core.tlcs += gain;
        core.rounds = round;
        if let (Some(&s), Some(&e)) = (positions.get(xl), positions.get(xr.saturating_sub(1))) {
            core.regions.push((s, e + 1));
        }
        if round == rounds {
            break;
        }

        // Next round: cut the region from A and the TLCS chars from B (seed 000 §4.4: "将它从
        // 文档 A 中删除, 并将 TLCS 从文档 B 中删除"). The skeletons are filtered rather than
        // recomputed (windows straddling a cut are not re-examined).
        for &orig in positions.get(xl..xr).unwrap_or(&[]) {
            if let Some(a) = alive.get_mut(orig) {
                *a = false;
            }
        }
        cur_a = filter_skeleton(&cur_a, |_, off| {
            alive.get(off as usize).copied().unwrap_or(false)
        });
        cur_b = filter_skeleton(&cur_b, |i, _| !drop_b.get(i).copied().unwrap_or(false));
    }
    core
}

/// Keeps the skeleton entries `(index, original offset)` for which `keep` holds.
fn filter_skeleton(s: &Skeleton, keep: impl Fn(usize, u32) -> bool) -> Skeleton {
    let mut out = Skeleton::default();
    for (i, (&c, &o)) in s.chars.iter().zip(&s.offsets).enumerate() {
        if keep(i, o) {
            out.chars.push(c);
            out.offsets.push(o);
        }
    }
    out
}

#[cfg(test)]
mod tests;
