//! Sentence splitting (SPEC §2.2) on normalized text.
//!
//! A sentence ends at `!` `?` `;` (normalization has already mapped `。！？；…` onto ASCII), and at
//! `.` when what follows it is the end of the text, a CJK character, or an upper-case letter —
//! so `3.5`, `os.path` and `e.g. this` stay whole. Closing quotes and brackets after the end
//! belong to the sentence.
//!
//! The decision never depends on white space: the first non-space character after the mark is
//! what counts. Formatting noise puts spaces after punctuation (`3. 3`, `popen. communicate`) and
//! hard-wraps paragraphs into lines; the sentences stay the same. Paragraph and line breaks do not
//! end a sentence by themselves, so a paragraph cut into lines (as PDF-to-HTML converters do)
//! gives the sentences of the whole paragraph. Widths (GBK bytes) leave white space out.

use super::normalize::{is_cjk, width_without_spaces};

/// One sentence of a normalized text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sentence {
    /// Byte offset of the sentence in the normalized text.
    pub start: u32,
    /// Length in bytes.
    pub len: u32,
    /// Width in GBK bytes (CJK characters count 2), white space not counted.
    pub width: u32,
}

impl Sentence {
    /// The sentence's text within `text` (the normalized text it was split from).
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        let start = self.start as usize;
        text.get(start..start + self.len as usize).unwrap_or("")
    }
}

#[inline]
fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '>' | '!' | '?' | ';' | '.')
}

/// Splits normalized text into sentences, in order, with offsets and widths.
///
/// Every sentence mark is ASCII (normalization mapped the others), so the text is scanned for
/// the marks and decoded only where a `.` must look at the character after it; a sentence's
/// width is its GBK width less its spaces.
pub fn split(text: &str) -> Vec<Sentence> {
    let b = text.as_bytes();
    let next_non_space = |from: usize| (from..b.len()).find(|&k| b[k] != b' ');
    let is_closer_byte = |c: u8| c.is_ascii() && is_closer(c as char);
    let mut out = Vec::new();
    let mut start = next_non_space(0);
    let mut pos = start.unwrap_or(b.len());
    while let Some(off) = b[pos..]
        .iter()
        .position(|&c| matches!(c, b'!' | b'?' | b';' | b'.'))
    {
        let t = pos + off;
        let ends = b[t] != b'.' || {
            // Look past further dots and closers to the first real character.
            let mut j = t + 1;
            while let Some(k) = next_non_space(j) {
                if is_closer_byte(b[k]) {
                    j = k + 1;
                } else {
                    break;
                }
            }
            match next_non_space(j) {
                None => true,
                Some(k) => text[k..]
                    .chars()
                    .next()
                    .is_some_and(|n| is_cjk(n) || n.is_uppercase()),
            }
        };
        pos = t + 1;
        if !ends {
            continue;
        }
        // Absorb closing marks (skipping spaces between them).
        let mut end = t + 1;
        while let Some(k) = next_non_space(end) {
            if !is_closer_byte(b[k]) {
                break;
            }
            end = k + 1;
        }
        if let Some(s) = start {
            push(&mut out, text, s, end, width_without_spaces(&text[s..end]));
        }
        start = next_non_space(end);
        pos = start.unwrap_or(b.len());
    }
    if let Some(s) = start {
        push(
            &mut out,
            text,
            s,
            text.len(),
            width_without_spaces(&text[s..]),
        );
    }
    out
}

fn push(out: &mut Vec<Sentence>, text: &str, start: usize, end: usize, width: u32) {
    let trimmed = text[start..end].trim_end();
    if trimmed.is_empty() {
        return;
    }
    out.push(Sentence {
        start: start as u32,
        len: trimmed.len() as u32,
        width,
    });
}

#[cfg(test)]
mod tests {
    use super::super::normalize::char_width;
    use super::*;
    use proptest::prelude::*;

    /// The character-by-character splitter [`split`] must agree with.
    fn split_reference(text: &str) -> Vec<Sentence> {
        // At most one character a byte: reserved once, never grown.
        let mut chars: Vec<(usize, char)> = Vec::with_capacity(text.len());
        chars.extend(text.char_indices());
        let next_non_space = |from: usize| {
            chars[from..]
                .iter()
                .position(|&(_, c)| c != ' ')
                .map(|p| from + p)
        };
        let mut out = Vec::new();
        let mut start: Option<usize> = None;
        let mut width = 0u32;
        let mut i = 0;
        while i < chars.len() {
            let (pos, c) = chars[i];
            if c == ' ' {
                i += 1;
                continue;
            }
            if start.is_none() {
                start = Some(pos);
                width = 0;
            }
            width += char_width(c);
            let ends = match c {
                '!' | '?' | ';' => true,
                '.' => {
                    // Look past further dots and closers to the first real character.
                    let mut j = i + 1;
                    while let Some(k) = next_non_space(j) {
                        if is_closer(chars[k].1) {
                            j = k + 1;
                        } else {
                            break;
                        }
                    }
                    match next_non_space(j) {
                        None => true,
                        Some(k) => {
                            let n = chars[k].1;
                            is_cjk(n) || n.is_uppercase()
                        }
                    }
                }
                _ => false,
            };
            i += 1;
            if !ends {
                continue;
            }
            // Absorb closing marks (skipping spaces between them).
            let mut end = pos + c.len_utf8();
            while let Some(k) = next_non_space(i) {
                let (p, n) = chars[k];
                if !is_closer(n) {
                    break;
                }
                width += char_width(n);
                end = p + n.len_utf8();
                i = k + 1;
            }
            if let Some(s) = start.take() {
                push(&mut out, text, s, end, width);
            }
        }
        if let Some(s) = start {
            push(&mut out, text, s, text.len(), width);
        }
        out
    }

    proptest! {
        #[test]
        fn equals_the_character_by_character_splitter(
            t in "[ a-zA-Z0-9.!?;\"')\\]>(,中文ÉéΣσ“”]{0,60}"
        ) {
            prop_assert_eq!(split(&t), split_reference(&t));
        }
    }

    fn texts(t: &str) -> Vec<&str> {
        split(t).iter().map(|s| s.text(t)).collect()
    }

    #[test]
    fn western_sentences() {
        assert_eq!(
            texts("Version 3.5 added it. Use os.path now! Really? yes"),
            vec![
                "Version 3.5 added it.",
                "Use os.path now!",
                "Really?",
                "yes"
            ]
        );
    }

    #[test]
    fn spaces_after_punctuation_change_nothing() {
        let a = "Use popen.communicate() in 3.3. Then stop.";
        let b = "Use popen. communicate() in 3. 3.  Then stop.";
        assert_eq!(split(a).len(), 2);
        assert_eq!(split(b).len(), 2);
        assert_eq!(split(a)[0].width, split(b)[0].width);
    }

    #[test]
    fn chinese_sentences_with_quotes() {
        assert_eq!(
            texts("他说:\"今天很好.\"我们走了!明天见;"),
            vec!["他说:\"今天很好.\"", "我们走了!", "明天见;"]
        );
        // The same with a space inserted after the full stop.
        assert_eq!(
            texts("他说:\"今天很好. \"我们走了!"),
            vec!["他说:\"今天很好. \"", "我们走了!"]
        );
    }

    #[test]
    fn ellipsis_is_one_end() {
        assert_eq!(texts("Wait... Then go."), vec!["Wait...", "Then go."]);
    }

    #[test]
    fn widths_count_cjk_twice_and_skip_spaces() {
        assert_eq!(split("中文ab.")[0].width, 7);
        assert_eq!(split("a b c.")[0].width, 4);
    }

    #[test]
    fn empty_and_blank() {
        assert!(split("").is_empty());
        assert!(split("   ").is_empty());
    }
}
