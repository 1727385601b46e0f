//! Words for the word-based methods (METHODS.md, "shared building blocks"): the seeds segment
//! Chinese with a segmenter (seed 003 used ICTCLAS) and drop stop words (seed 002: 「去除停用词」).
//! Here Chinese runs are cut by jieba-rs (its embedded dictionary, with the HMM for unknown
//! words), other scripts into words; words are lower-cased, tokens without a letter or digit are
//! dropped, and so are the stop words of the stopwords-iso lists for Chinese and English
//! (**choice**: the seeds name no list).

use std::collections::HashSet;
use std::sync::OnceLock;

use jieba_rs::Jieba;

use crate::verify::{is_char_script_unit, units, WORD_UNIT_MIN};

/// The word splitter, named by the versions of its parts. An index of a word-based method
/// stores it and refuses to open under another ([`crate::Error::IncompatibleConfig`], field
/// `words`): its word postings and document frequencies were counted with these words, and a
/// delete recomputes them. A test holds it to the versions in `Cargo.lock`.
pub const WORDS: &str = "jieba-rs 0.11.0 (embedded dictionary, HMM), stop-words 0.10.1 (zh, en)";

fn jieba() -> &'static Jieba {
    static J: OnceLock<Jieba> = OnceLock::new();
    J.get_or_init(Jieba::new)
}

fn stop_words() -> &'static HashSet<&'static str> {
    static S: OnceLock<HashSet<&'static str>> = OnceLock::new();
    S.get_or_init(|| {
        stop_words::get("zh")
            .iter()
            .chain(stop_words::get("en"))
            .copied()
            .collect()
    })
}

/// Is this a stop word (of the Chinese or English list)?
pub fn is_stop_word(word: &str) -> bool {
    stop_words().contains(word)
}

/// The words of a normalized text in order, stop words and punctuation left out.
pub fn terms(text: &str) -> Vec<String> {
    jieba()
        .cut(text, true)
        .into_iter()
        .filter(|t| t.word.chars().any(char::is_alphanumeric))
        .map(|t| t.word.to_lowercase())
        .filter(|w| !is_stop_word(w))
        .collect()
}

/// Is the word a single CJK character (such words carry little on their own; AgT drops them)?
pub fn is_single_cjk(word: &str) -> bool {
    let mut c = word.chars();
    matches!((c.next(), c.next()), (Some(ch), None) if crate::verify::is_char_script_unit(ch as u32))
}

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

    #[test]
    fn chinese_is_segmented_and_stop_words_go() {
        let t = terms("我们的经济发展和改革开放。");
        assert!(t.contains(&"经济".to_string()), "{t:?}");
        assert!(
            t.contains(&"改革开放".to_string()) || t.contains(&"改革".to_string()),
            "{t:?}"
        );
        assert!(!t.iter().any(|w| w == "的" || w == "和"), "{t:?}");
    }

    #[test]
    fn english_words_are_lower_cased_without_stop_words_or_punctuation() {
        assert_eq!(terms("The River, and the Market!"), vec!["river", "market"]);
    }

    #[test]
    fn single_cjk_characters_are_told() {
        assert!(is_single_cjk("国"));
        assert!(!is_single_cjk("国家"));
        assert!(!is_single_cjk("a"));
    }
}
