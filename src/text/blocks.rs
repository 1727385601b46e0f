//! Block digests: what identifies a block of a page's main text across the pages of its host, so
//! that site chrome extraction did not recognize (footers, contact cells, question boxes,
//! copyright notes in plain table cells or under unusual class names) can be learned from the
//! pages themselves (issue 18, mechanism 8; the counterpart for text blocks of seed 000 §4.2's
//! over-frequent fingerprints).
//!
//! A block's digest is the 64-bit xxh3 of its normalized text with every run of digits replaced
//! by one `#` and its spaces left out, so `© 2019` and `©2023`, or `page 3 of 9` and `page 3 of
//! 12`, are one block. A block made mostly of digits keeps them (see
//! [`MIN_LETTERS_WITH_DIGITS`]).

use xxhash_rust::xxh3::xxh3_64;

use super::normalize::{char_width, normalize};

/// Digits are masked only in blocks with letters at least this wide (GBK bytes: 4 Chinese
/// characters or 8 Latin letters); other blocks are digested with their digits. Masking the
/// digits of a value cell (`1.25kg`, `12小时`, `1920×1080`) would make the specifications of
/// different products one block, and dropping it as chrome would erase what tells them apart; a
/// value cell every page repeats (a phone number) is still one block.
pub const MIN_LETTERS_WITH_DIGITS: u32 = 8;

/// A normalized text with every run of digits replaced by one `#`, and its spaces left out (a
/// space more or less is formatting).
pub fn masked(normalized: &str) -> String {
    let mut out = String::with_capacity(normalized.len());
    let mut in_digits = false;
    for c in normalized.chars() {
        if c == ' ' {
            continue;
        }
        if c.is_numeric() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The digest of a paragraph of a page's main text and the length of its normalized text in
/// characters; `None` for an empty paragraph.
pub fn block_digest(paragraph: &str, fold: impl Into<super::Folding>) -> Option<(u64, usize)> {
    let text = normalize(paragraph, fold);
    if text.is_empty() {
        return None;
    }
    let chars = text.chars().count();
    if !text.chars().any(char::is_numeric) {
        return Some((xxh3_64(masked(&text).as_bytes()), chars));
    }
    let letters: u32 = text
        .chars()
        .filter(|c| c.is_alphabetic())
        .map(char_width)
        .sum();
    if letters >= MIN_LETTERS_WITH_DIGITS {
        Some((xxh3_64(masked(&text).as_bytes()), chars))
    } else {
        // Kept apart from the masked digests by a byte no text holds.
        let mut b = Vec::with_capacity(text.len() + 1);
        b.push(0xFF);
        b.extend(text.bytes().filter(|&c| c != b' '));
        Some((xxh3_64(&b), chars))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Option<u64> {
        block_digest(s, true).map(|(d, _)| d)
    }

    #[test]
    fn digits_are_masked_in_text() {
        assert_eq!(
            d("© 2019 Acme Trading Co. All rights reserved."),
            d("©２０２３ Acme Trading Co.  All rights reserved.")
        );
        assert_eq!(d("Page 3 of 9 pages"), d("Page 3 of 12 pages"));
        assert_ne!(d("Call us on weekdays"), d("Call us on weekends"));
        assert_eq!(masked("Tel #010-6688 1234"), "Tel##-#");
        assert_eq!(
            d("客服工作时间为每天9:00-18:00"),
            d("客服工作时间为每天8:30-17:30")
        );
    }

    #[test]
    fn value_cells_keep_their_digits() {
        assert_ne!(d("1.25kg"), d("2.30kg"));
        assert_ne!(d("12小时"), d("8小时"));
        assert_eq!(d("Tel: 010-6688-1234"), d("Ｔｅｌ: ０１０-6688-1234"));
        assert_ne!(d("Tel: 010-6688-1234"), d("Tel: 010-6688-1235"));
        assert_eq!(d("  "), None);
        assert_eq!(
            block_digest("word ".repeat(3).as_str(), true).unwrap().1,
            14
        );
    }
}
