//! Unit weights in chars, and the weighted rate of the whole LCS (a deviation from seed 000
//! §4.4, issue #35 item 2; see [`super::VerifyConfig::weighted_lcs_resemble_threshold`]).
//!
//! Verification counts units ([`super::units()`]): a CJK char and an English word weigh one
//! each. That keeps the LCS cheap, but it weighs a page by morphemes, not by text: a help page
//! half translated from English into Chinese (the English paragraphs kept, the others
//! translated) shares all its English words with the original, yet a translated paragraph of
//! 300 English chars — some 55 units — comes back as about 100 Chinese chars, 100 units, so
//! the shared part shrinks from half the text in chars to a third in units. The seed paper
//! measures lengths in GBK bytes (2 per Chinese char, 1 per Latin letter), where an English
//! word weighs its letters. [`unit_weight`] gives a unit its length in chars again, about:
//! a word unit [`WORD_UNIT_WEIGHT`] (an English word of five letters and its space), any other
//! unit 1. Units hold no word lengths (a word unit is a hash), so the weight is the average.

use super::units::WORD_UNIT_MIN;

/// Weight of a word unit in [`unit_weight`]: the chars of an average English word and its
/// space (natural-dev's English main texts: 4.6 chars per unit, punctuation marks included,
/// about 5.5 per word unit and its space). Measured with `score_natural.py` (natural-dev),
/// with [`super::VerifyConfig::weighted_lcs_resemble_threshold`] 0.48: weight 5 recall 0.9364,
/// **6 0.9373**, both at precision 0.9820.
pub const WORD_UNIT_WEIGHT: usize = 6;

/// The weight of one unit in chars: a word unit (≥ [`WORD_UNIT_MIN`]) weighs
/// [`WORD_UNIT_WEIGHT`], a CJK char or a punctuation mark 1.
pub fn unit_weight(u: u32) -> usize {
    if u >= WORD_UNIT_MIN {
        WORD_UNIT_WEIGHT
    } else {
        1
    }
}

/// The total [`unit_weight`] of `units`: the text's length in chars, about.
pub fn weight_of(units: &[u32]) -> usize {
    let words = units.iter().filter(|&&u| u >= WORD_UNIT_MIN).count();
    units.len() - words + words * WORD_UNIT_WEIGHT
}

/// The total [`unit_weight`] of the units of `b` at the second positions of `pairs` (an
/// alignment: its units are equal in both texts).
pub(super) fn weight_b(b: &[u32], pairs: &[(usize, usize)]) -> usize {
    pairs
        .iter()
        .map(|&(_, pb)| b.get(pb).map_or(0, |&u| unit_weight(u)))
        .sum()
}

/// The weighted resemble rate of a common subsequence of weight `lcs_weight` between texts of
/// units `a` and `b`: `L_w / (|A|_w + |B|_w − L_w)`, 0 when `lcs_weight` is 0.
pub(super) fn weighted_resemble(lcs_weight: usize, a: &[u32], b: &[u32]) -> f64 {
    let union = (weight_of(a) + weight_of(b)).saturating_sub(lcs_weight);
    if lcs_weight == 0 || union == 0 {
        return 0.0;
    }
    lcs_weight as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::super::{units, verify, weighted_lcs_similar, VerifyConfig};
    use super::*;

    #[test]
    fn words_weigh_their_chars_and_cjk_one() {
        let u = units("Hello, 世界 world");
        let w: Vec<usize> = u.iter().map(|&x| unit_weight(x)).collect();
        assert_eq!(w, vec![WORD_UNIT_WEIGHT, 1, 1, 1, WORD_UNIT_WEIGHT]);
        assert_eq!(weight_of(&u), 2 * WORD_UNIT_WEIGHT + 3);
        assert_eq!(weight_of(&[]), 0);
        assert_eq!(weighted_resemble(0, &u, &u), 0.0);
        assert_eq!(weighted_resemble(weight_of(&u), &u, &u), 1.0);
    }

    #[test]
    fn threshold_is_inclusive_and_never_below_resemble() {
        let cfg = VerifyConfig::default();
        let t = cfg.weighted_lcs_resemble_threshold;
        assert!(weighted_lcs_similar(t, &cfg) && !weighted_lcs_similar(t - 1e-9, &cfg));
        assert!(!weighted_lcs_similar(
            0.0,
            &VerifyConfig {
                weighted_lcs_resemble_threshold: 0.0,
                resemble_threshold: 0.0,
                ..cfg.clone()
            }
        ));
        let low = VerifyConfig {
            weighted_lcs_resemble_threshold: 0.1,
            ..cfg.clone()
        };
        assert!(!weighted_lcs_similar(cfg.resemble_threshold - 0.01, &low));
    }

    /// An English page whose Chinese translation keeps two paragraphs in three in English: in
    /// units the shared English is under half of the union (the translated paragraphs are long
    /// in CJK units), in chars more than half; the weighted rate finds it, the unit rates do not.
    #[test]
    fn partial_translation_is_similar_by_weight() {
        let en: Vec<String> = (0..12)
            .map(|i| {
                format!(
                    "Paragraph {i} explains how the {i}th setting of the file manager changes \
                     the view of folders and which keyboard shortcut opens the dialog."
                )
            })
            .collect();
        let zh =
            "这一段说明文件管理器的设置如何改变文件夹的视图以及哪个快捷键打开对话框并保存更改。";
        let translated: Vec<String> = en
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i % 3 == 2 {
                    format!("{zh}{i}")
                } else {
                    p.clone()
                }
            })
            .collect();
        let (a, b) = (en.join(" "), translated.join(" "));
        let cfg = VerifyConfig::default();
        let sim = verify(&a, &b, &cfg);
        assert!(
            sim.lcs_resemble_weighted >= cfg.weighted_lcs_resemble_threshold,
            "{sim:?}"
        );
        assert!(sim.similar, "{sim:?}");
        let off = VerifyConfig {
            weighted_lcs_resemble_threshold: 1.0,
            ..cfg
        };
        let sim = verify(&a, &b, &off);
        assert!(!sim.similar, "{sim:?}");
    }
}
