//! The punctuation-anchored abstract, seed 004's "framework 1" (its ref. [2], Zhang Gang, Liu
//! Ting et al. 2001; METHODS.md card 9a): 「定位文本中某个特定标点(如句号、换行符等)的第m次出现,从该位置截取前后各5个字视为摘要」,
//! and `MD5(Abstract(P_i)) = MD5(Abstract(P_j)) ⇒ Mirror(P_i, P_j)`.
//!
//! Five tokens either side of the anchor come from the seed. The anchor mark and m are not given
//! (**choice**): a sentence-ending mark (`。 . ! ? ！ ？`), its m-th occurrence, m = 3 so that a
//! dateline or a lead repeated across pages is skipped. A "字" is a character in CJK text and a
//! word elsewhere (`super::tokens`'s units). Fewer than m marks, or no token on either side: no
//! signature.

use md5::{Digest, Md5};

use crate::verify::{is_char_script_unit, units, WORD_UNIT_MIN};

/// Parameters of the punctuation abstract.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PunctConfig {
    /// Which occurrence of a sentence-ending mark anchors the abstract (m = 3; **choice**).
    pub occurrence: usize,
    /// Tokens taken on each side of the anchor (5, from the seed).
    pub side: usize,
}

impl Default for PunctConfig {
    fn default() -> Self {
        PunctConfig {
            occurrence: 3,
            side: 5,
        }
    }
}

fn is_sentence_end(u: u32) -> bool {
    matches!(
        char::from_u32(u),
        Some('。' | '.' | '!' | '?' | '！' | '？')
    )
}

fn is_token(u: u32) -> bool {
    u >= WORD_UNIT_MIN || is_char_script_unit(u)
}

/// The MD5 of the abstract of a normalized text: `side` tokens before and after the
/// `occurrence`-th sentence-ending mark. Pages with equal abstracts are mirrors.
pub fn abstract_md5(text: &str, cfg: &PunctConfig) -> Option<u128> {
    let us = units(text);
    let anchor = us
        .iter()
        .enumerate()
        .filter(|(_, &u)| is_sentence_end(u))
        .nth(cfg.occurrence.max(1) - 1)
        .map(|(i, _)| i)?;
    let before: Vec<u32> = us[..anchor]
        .iter()
        .rev()
        .copied()
        .filter(|&u| is_token(u))
        .take(cfg.side)
        .collect();
    let after: Vec<u32> = us[anchor + 1..]
        .iter()
        .copied()
        .filter(|&u| is_token(u))
        .take(cfg.side)
        .collect();
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let mut h = Md5::new();
    for u in before.iter().rev() {
        h.update(u.to_le_bytes());
    }
    h.update([0xff; 4]);
    for u in &after {
        h.update(u.to_le_bytes());
    }
    Some(u128::from_be_bytes(h.finalize().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrors_share_the_abstract_and_edits_elsewhere_do_not_matter() {
        let cfg = PunctConfig::default();
        let a = "Lead one. Lead two. The council closed the old bridge. Engineers will inspect \
                 the piers tomorrow. More text follows here.";
        // The same around the third mark; the last sentence edited.
        let b = "Lead one. Lead two. The council closed the old bridge. Engineers will inspect \
                 the piers tomorrow. Something else entirely.";
        assert_eq!(abstract_md5(a, &cfg), abstract_md5(b, &cfg));
        assert!(abstract_md5(a, &cfg).is_some());
        // An edit within five words of the anchor changes it.
        let c = a.replace("old bridge", "new bridge");
        assert_ne!(abstract_md5(a, &cfg), abstract_md5(&c, &cfg));
    }

    #[test]
    fn cjk_counts_characters_and_too_few_marks_give_none() {
        let cfg = PunctConfig::default();
        let zh = "第一句。第二句。河水一夜上涨两米。工程师明天检查桥墩。";
        let zh2 = "第一句。第二句。河水一夜上涨两米。工程师明天检查桥墩。后面还有别的内容。";
        assert_eq!(abstract_md5(zh, &cfg), abstract_md5(zh2, &cfg));
        assert_eq!(abstract_md5("Only one. Two.", &cfg), None);
        assert_eq!(abstract_md5("", &cfg), None);
    }
}
