//! Fingerprints of text (seed 000 §4.2, seed 001 §3.3, seed 002): sentence fingerprints and clause
//! keys, simhash, MD5 and the heading codes — functions of a normalized text alone. What a whole
//! page's signatures are, and which posting keys they make, is [`crate::signature`]'s.

mod md5x8;
mod sentence;
mod simhash;

pub use sentence::{
    clause_key_count, containment_keys, fingerprints_and_sketch, local_minima, md5_u128,
    sentence_digest, sentence_fingerprints, unit_count, unit_sketch, Fingerprint, SentenceParams,
    MAX_SAMPLED_KEYS,
};
pub use simhash::{for_each_feature, hamming, simhash};

/// The model-code-like tokens of a heading (`TK-P480`, `RTX3060`, `120Pa`: runs of ASCII
/// letters, digits, `-` and `_` holding at least one letter and one digit), lower-cased and
/// hashed, sorted and distinct. Pages whose headings name different codes are about different
/// objects (models of one product series share almost all their text); see
/// [`codes_conflict`].
pub fn heading_codes(heading: &str) -> Vec<u32> {
    use unicode_normalization::UnicodeNormalization;
    let h: String = heading.nfkc().collect();
    let mut out: Vec<u32> = h
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|t| t.trim_matches(|c| c == '-' || c == '_'))
        .filter(|t| {
            t.bytes().any(|b| b.is_ascii_digit())
                && t.bytes().any(|b| b.is_ascii_alphabetic())
                && !is_number_compound(t)
        })
        .map(|t| xxhash_rust::xxh3::xxh3_64(t.to_ascii_lowercase().as_bytes()) as u32)
        .collect();
    out.sort_unstable();
    out.dedup();
    // The page record keeps at most 255 codes.
    out.truncate(255);
    out
}

/// An English compound of a number and a word (`10-page`, `64-bit`, `3-way`, `2_column`): parts
/// joined by `-` or `_`, each all digits or all lower-case letters, one of them a word of at
/// least three letters. It counts something rather than naming a model (`TK-P480`, `RTX-3060`,
/// `iPhone-15` keep upper-case letters or mix letters and digits in one part), so two pages
/// whose headings differ by one ("10-page booklet", "14-page booklet") are not different models.
fn is_number_compound(token: &str) -> bool {
    let parts = || token.split(['-', '_']).filter(|p| !p.is_empty());
    parts().count() > 1
        && parts().all(|p| {
            p.bytes().all(|b| b.is_ascii_digit()) || p.bytes().all(|b| b.is_ascii_lowercase())
        })
        && parts().any(|p| p.len() >= 3 && p.bytes().all(|b| b.is_ascii_lowercase()))
}

/// True when both code sets are non-empty and each holds a code the other lacks: the headings
/// name different models. A heading that only drops codes (a cut subtitle) does not conflict.
pub fn codes_conflict(a: &[u32], b: &[u32]) -> bool {
    let subset = |x: &[u32], y: &[u32]| x.iter().all(|c| y.binary_search(c).is_ok());
    !a.is_empty() && !b.is_empty() && !subset(a, b) && !subset(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_of_product_headings() {
        let a = heading_codes("德宝 Pro显示器 TK-P480 31.5英寸");
        let b = heading_codes("德宝 Pro显示器 TK-P420 16英寸");
        assert_eq!(a.len(), 1);
        assert!(codes_conflict(&a, &b));
        let c = heading_codes("达尔 Pro扫地机器人 LJ-P420 120Pa");
        let d = heading_codes("达尔 Pro扫地机器人 LJ-P440 120Pa");
        assert_eq!(c.len(), 2);
        assert!(codes_conflict(&c, &d));
        // Same model at another shop, a cut subtitle, no codes at all: no conflict.
        assert!(!codes_conflict(
            &a,
            &heading_codes("【热卖】德宝 TK-P480 显示器")
        ));
        assert!(!codes_conflict(&c, &heading_codes("LJ-P420")));
        assert!(!codes_conflict(
            &heading_codes("What's New In Python 3.8"),
            &a
        ));
        // Numbers counting something are not model codes; models written with a hyphen are.
        assert!(heading_codes("10-page booklet").is_empty());
        assert!(heading_codes("The 64-bit build, a 3-way merge, 2_column layout").is_empty());
        assert!(!codes_conflict(
            &heading_codes("10-page booklet"),
            &heading_codes("14-page booklet")
        ));
        assert!(codes_conflict(
            &heading_codes("RTX-3060 review"),
            &heading_codes("RTX-3070 review")
        ));
        assert_eq!(heading_codes("iPhone-15 and v-12 and ab-12").len(), 3);
    }
}
