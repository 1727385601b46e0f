//! The seeds' other near-duplicate methods (issue "The seeds' other methods", SPEC §2.8,
//! `METHODS.md`): signatures and similarities of each method, as pure functions over a page's
//! normalized main text. They are the pieces the method interface of the index is built from;
//! the LCS method of seed 000 stays the index's own (`crate::verify`).
//!
//! Where a paper gives no value, the default is ours and says so (**choice**), as `METHODS.md`
//! proposes; the evaluation sweeps them.

pub mod punct;
pub mod shingle;
pub mod topn;
pub mod winnow;

use crate::verify::{is_char_script_unit, units, WORD_UNIT_MIN};

/// The tokens the methods count: one per CJK (or other unspaced-script) character, one per
/// word elsewhere — the verification units without punctuation and symbols (METHODS.md card 1,
/// **choice**: "every CJK character a token", as the peers do).
pub fn tokens(text: &str) -> Vec<u32> {
    units(text)
        .into_iter()
        .filter(|&u| u >= WORD_UNIT_MIN || is_char_script_unit(u))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_words_and_cjk_chars_without_punctuation() {
        assert_eq!(tokens("Hello, world! 你好。").len(), 4);
        assert_eq!(tokens("hello"), tokens("HELLO"));
        assert!(tokens("... !!! ---").is_empty());
    }
}
