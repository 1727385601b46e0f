//! Verification units: a text as a sequence of `u32` (see the module doc of [`super`], "Units").
//!
//! One unit is
//! - one char of a script written without spaces: a CJK ideograph ([`crate::text::is_ideograph`]),
//!   a kana, or a Thai, Lao, Myanmar or Khmer letter; the unit is its code point;
//! - one word: a maximal run of other alphanumeric chars (letters and digits of any script, with
//!   combining diacritics U+0300–U+036F and ZWNJ/ZWJ continuing a word); the unit is a hash of the
//!   UTF-8 bytes of its lower-cased chars (8 bytes per multiply–xorshift step, then MurmurHash3's
//!   finalizer), folded to 32 bits and mapped to `WORD_UNIT_MIN..=u32::MAX` so it never equals a
//!   code point;
//! - one punctuation or symbol char (anything else that is not white space or a control char);
//!   the unit is its code point.
//!
//! White space, control chars, U+200B and U+FEFF separate words and are dropped. The hash has no
//! random key and reads bytes little-endian, so units are the same across runs and platforms.
//! ASCII is tokenized byte by byte from a class table; other chars go through `char`'s Unicode
//! tables.

/// Word units are at least this value; smaller units are code points (one char each).
pub const WORD_UNIT_MIN: u32 = 0x11_0000;

/// Number of distinct word-unit values.
const WORD_UNIT_SPAN: u32 = u32::MAX - WORD_UNIT_MIN + 1;

/// The units of a normalized text (see the module doc). Deterministic; O(|text|).
pub fn units(text: &str) -> Vec<u32> {
    let mut out = Vec::with_capacity(text.len() / 2 + 1);
    tokenize(text, |u, _, _| out.push(u));
    out
}

/// The char range `[start, end)` in `text` of each of its [`units`] (same length and order).
pub fn unit_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(text.len() / 2 + 1);
    let (mut byte, mut chr) = (0usize, 0usize);
    let mut to_char = |b: usize| {
        chr += text.get(byte..b).map_or(0, |t| t.chars().count());
        byte = b;
        chr
    };
    tokenize(text, |_, s, e| {
        let cs = to_char(s);
        out.push((cs, to_char(e)));
    });
    out
}

/// Replaces `out` with the units of `text` (as [`units`], reusing `out`'s memory).
pub(crate) fn units_into(text: &str, out: &mut Vec<u32>) {
    out.clear();
    tokenize(text, |u, _, _| out.push(u));
}

/// True when unit `u` is one char of a script written without spaces (CJK ideograph, kana,
/// Thai, Lao, Myanmar, Khmer): the units that select the CJK parameters of
/// [`super::VerifyConfig`].
#[inline]
pub fn is_char_script_unit(u: u32) -> bool {
    // Unified ideographs first (the common case), then the full test.
    (0x4E00..=0x9FFF).contains(&u)
        || ((0x0E00..0x4_0000).contains(&u) && char::from_u32(u).is_some_and(is_char_script))
}

/// Chars that are a unit each (scripts written without spaces).
#[inline]
fn is_char_script(c: char) -> bool {
    let x = c as u32;
    if x < 0x0E00 {
        return false;
    }
    crate::text::is_ideograph(c)
        || matches!(x,
            0x3040..=0x30FF       // hiragana, katakana
            | 0x31F0..=0x31FF     // katakana phonetic extensions
            | 0xFF66..=0xFF9F     // half-width katakana
            | 0x0E00..=0x0EFF     // Thai, Lao
            | 0x1000..=0x109F     // Myanmar
            | 0x1780..=0x17FF) // Khmer
}

/// Common non-ASCII punctuation (general punctuation, CJK punctuation, full-width ASCII
/// punctuation): single units, without the Unicode table look-ups.
#[inline]
fn is_common_punct(c: char) -> bool {
    matches!(c as u32,
        0x2010..=0x2027
        | 0x2030..=0x205E
        | 0x3001..=0x3004
        | 0x3008..=0x3020
        | 0xFF01..=0xFF0F
        | 0xFF1A..=0xFF20
        | 0xFF3B..=0xFF40
        | 0xFF5B..=0xFF65)
}

/// Chars that continue a word without being alphanumeric themselves.
#[inline]
fn is_word_joiner(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x200C | 0x200D)
}

/// Non-ASCII chars that are part of a word.
#[inline]
fn is_word_char(c: char) -> bool {
    !is_char_script(c) && !is_common_punct(c) && (c.is_alphanumeric() || is_word_joiner(c))
}

/// Separators: dropped, they only end words.
#[inline]
fn is_separator(c: char) -> bool {
    c.is_whitespace() || c.is_control() || c == '\u{200b}' || c == '\u{feff}'
}

/// Byte classes: ASCII word chars, separators and punctuation, and non-ASCII bytes.
const SEP: u8 = 0;
const WORD: u8 = 1;
const PUNCT: u8 = 2;
const NON_ASCII: u8 = 3;

/// Class of every byte: ASCII letters and digits are word chars, white space and controls
/// separators, the rest of ASCII punctuation; bytes ≥ 0x80 belong to multi-byte chars.
const BYTE_CLASS: [u8; 256] = {
    let mut t = [NON_ASCII; 256];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        t[i] = if b.is_ascii_alphanumeric() {
            WORD
        } else if b.is_ascii_whitespace() || b.is_ascii_control() {
            SEP
        } else {
            PUNCT
        };
        i += 1;
    }
    t
};

/// Class of byte `b`.
#[inline(always)]
fn class(b: u8) -> u8 {
    BYTE_CLASS[usize::from(b)]
}

/// Streaming hash of a word's lower-cased UTF-8 bytes, 8 bytes (little-endian) per step.
struct WordHasher {
    h: u64,
    buf: u64,
    nbuf: u32,
    len: u64,
}

const WORD_SEED: u64 = 0x243F_6A88_85A3_08D3;
const WORD_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

impl WordHasher {
    fn new() -> Self {
        WordHasher {
            h: WORD_SEED,
            buf: 0,
            nbuf: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn chunk(&mut self, c: u64) {
        self.h = (self.h ^ c).wrapping_mul(WORD_MUL);
        self.h ^= self.h >> 32;
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        self.buf |= u64::from(b) << (8 * self.nbuf);
        self.nbuf += 1;
        self.len += 1;
        if self.nbuf == 8 {
            let c = self.buf;
            self.chunk(c);
            self.buf = 0;
            self.nbuf = 0;
        }
    }

    /// Hash of the all-ASCII-alphanumeric word `bytes[start..end]`, lower-cased on the fly
    /// (`| 0x20` lower-cases a letter and leaves a digit unchanged). Equals feeding the
    /// lower-cased bytes one by one. Reads 8 bytes at a time, past the word's end when the text
    /// goes on (masked off).
    #[inline(never)]
    fn ascii_alnum(bytes: &[u8], start: usize, end: usize) -> u64 {
        let mut w = WordHasher::new();
        let mut k = start;
        while k < end {
            let n = (end - k).min(8);
            let mask = if n == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * n)) - 1
            };
            let x = match bytes.get(k..k + 8) {
                Some(c) => {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(c);
                    u64::from_le_bytes(a)
                }
                None => bytes
                    .get(k..end)
                    .unwrap_or(&[])
                    .iter()
                    .enumerate()
                    .fold(0, |t, (j, &b)| t | (u64::from(b) << (8 * j))),
            };
            w.chunk((x | 0x2020_2020_2020_2020) & mask);
            k += n;
        }
        w.len = (end - start) as u64;
        w.finish()
    }

    fn finish(mut self) -> u64 {
        if self.nbuf > 0 {
            let c = self.buf;
            self.chunk(c);
        }
        self.h ^ self.len
    }
}

/// [`WordHasher::ascii_alnum`], with the one-chunk case (most words) inline.
#[inline(always)]
fn ascii_word_hash(bytes: &[u8], start: usize, end: usize) -> u64 {
    let len = end - start;
    if len <= 8 && start + 8 <= bytes.len() {
        let mut a = [0u8; 8];
        a.copy_from_slice(&bytes[start..start + 8]);
        let mask = u64::MAX >> (8 * (8 - len));
        let mut w = WordHasher::new();
        w.chunk((u64::from_le_bytes(a) | 0x2020_2020_2020_2020) & mask);
        w.h ^ len as u64
    } else {
        WordHasher::ascii_alnum(bytes, start, end)
    }
}

/// A word's hash as a word unit (`WORD_UNIT_MIN..=u32::MAX`).
#[inline(always)]
fn word_unit(h: u64) -> u32 {
    // The per-chunk steps already mix; one more multiply spreads the last chunk into the high
    // half, which is kept.
    let x = (h ^ (h >> 29)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    WORD_UNIT_MIN + ((x >> 32) as u32) % WORD_UNIT_SPAN
}

/// The code point starting at byte `i` of `bytes` (valid UTF-8, `i` a char boundary) and its
/// length in bytes; `(0, 1)` past the end. Decoded by hand: cheaper than `str::chars` on a
/// sub-slice in the hot loop.
#[inline]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let at = |k: usize| u32::from(bytes.get(i + k).copied().unwrap_or(0));
    let b0 = at(0);
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (at(1) & 0x3F), 2)
    } else if b0 < 0xF0 {
        (
            ((b0 & 0x0F) << 12) | ((at(1) & 0x3F) << 6) | (at(2) & 0x3F),
            3,
        )
    } else {
        let x = ((b0 & 0x07) << 18) | ((at(1) & 0x3F) << 12) | ((at(2) & 0x3F) << 6);
        (x | (at(3) & 0x3F), 4)
    }
}

/// The first unit starting at or after byte `i` (a char boundary) of `text`: `(unit, start,
/// end)` in bytes, or `None` when only separators are left.
#[inline]
fn next_unit(text: &str, mut i: usize) -> Option<(u32, usize, usize)> {
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(i) {
        if b < 0x80 {
            match class(b) {
                WORD => return Some(word(text, i)),
                PUNCT => return Some((u32::from(b), i, i + 1)),
                _ => i += 1,
            }
        } else {
            let (x, len) = decode(bytes, i);
            let c = char::from_u32(x)?;
            if is_char_script(c) || is_common_punct(c) {
                return Some((c as u32, i, i + len));
            }
            if c.is_alphanumeric() || is_word_joiner(c) {
                return Some(word(text, i));
            }
            if !is_separator(c) {
                return Some((c as u32, i, i + len));
            }
            i += len;
        }
    }
    None
}

/// The word starting at byte `start`: `(unit, start, end)`.
#[inline]
fn word(text: &str, start: usize) -> (u32, usize, usize) {
    let bytes = text.as_bytes();
    let mut end = start;
    let mut ascii = true;
    while let Some(&b) = bytes.get(end) {
        if b < 0x80 {
            if class(b) != WORD {
                break;
            }
            end += 1;
        } else {
            let (x, len) = decode(bytes, end);
            match char::from_u32(x) {
                Some(c) if is_word_char(c) => {
                    ascii = false;
                    end += len;
                }
                _ => break,
            }
        }
    }
    let h = match bytes.get(start..end) {
        Some(_) if ascii => WordHasher::ascii_alnum(bytes, start, end),
        _ => {
            let mut w = WordHasher::new();
            let mut utf8 = [0u8; 4];
            for c in text.get(start..end).unwrap_or("").chars() {
                for lc in c.to_lowercase() {
                    for &b in lc.encode_utf8(&mut utf8).as_bytes() {
                        w.byte(b);
                    }
                }
            }
            w.finish()
        }
    };
    (word_unit(h), start, end)
}

/// Splits `text` into units, calling `emit(unit, byte_start, byte_end)` for each in order.
/// ASCII words, punctuation and separators, the common CJK chars and common three-byte
/// punctuation take a fast path; the rest goes through [`next_unit`].
#[inline]
fn tokenize(text: &str, mut emit: impl FnMut(u32, usize, usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        let b = bytes[i];
        let cls = class(b);
        if cls == SEP {
            i += 1;
            continue;
        }
        if cls == PUNCT {
            emit(u32::from(b), i, i + 1);
            i += 1;
            continue;
        }
        if cls == WORD {
            // An all-ASCII word (the common case) is hashed here; one that goes on with a
            // non-ASCII char takes the general path.
            let mut e = i + 1;
            while e < n && class(bytes[e]) == WORD {
                e += 1;
            }
            if e == n || bytes[e] < 0x80 {
                emit(word_unit(ascii_word_hash(bytes, i, e)), i, e);
                i = e;
                continue;
            }
        }
        // Three-byte chars (U+0800–U+FFFF): CJK ideographs and kana, and common punctuation, are
        // single units; a run of them is read in one inner loop.
        let start = i;
        let mut rest = bytes.get(i..).unwrap_or(&[]);
        while let [b0 @ 0xE0..=0xEF, b1, b2, tail @ ..] = rest {
            let x =
                (u32::from(b0 & 0x0F) << 12) | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F);
            // Unified ideographs first: by far the most common.
            let single = (0x4E00..=0x9FFF).contains(&x)
                || matches!(x, 0x3040..=0x30FF | 0x3400..=0x4DBF)
                || char::from_u32(x).is_some_and(is_common_punct);
            if !single {
                break;
            }
            let at = bytes.len() - rest.len();
            emit(x, at, at + 3);
            rest = tail;
        }
        i = bytes.len() - rest.len();
        if i > start {
            continue;
        }
        match next_unit(text, i) {
            Some((u, s, e)) => {
                emit(u, s, e);
                i = e;
            }
            None => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(w: &str) -> u32 {
        let u = units(w);
        assert_eq!(u.len(), 1, "{w:?}");
        u[0]
    }

    #[test]
    fn tokenizer_units() {
        let u = units("Hello, 世界! hello  WORLD 1998年 don't");
        let expect = vec![
            word("hello"),
            ',' as u32,
            '世' as u32,
            '界' as u32,
            '!' as u32,
            word("hello"),
            word("world"),
            word("1998"),
            '年' as u32,
            word("don"),
            '\'' as u32,
            word("t"),
        ];
        assert_eq!(u, expect);
        // Case folded, spaces dropped, words are single units above every code point.
        assert_eq!(word("HeLLo"), word("hello"));
        assert_ne!(word("hello"), word("hellO1"));
        assert!(word("x") >= WORD_UNIT_MIN && word("Éé") >= WORD_UNIT_MIN);
        assert_eq!(word("ÉCOLE"), word("école"));
        assert_eq!(units("  \t\n "), Vec::<u32>::new());
        assert_eq!(units("a b"), units("A\u{3000}\u{200b}B"));
        // Kana and Thai are one unit per char; Cyrillic and Greek words one unit each.
        assert_eq!(units("カタカナ").len(), 4);
        assert_eq!(units("ภาษาไทย").len(), 7);
        assert_eq!(units("Привет мир").len(), 2);
        assert_eq!(units("привет"), units("ПРИВЕТ"));
        assert!(units("中文カナ").iter().all(|&u| is_char_script_unit(u)));
        assert!(!is_char_script_unit(word("abc")) && !is_char_script_unit(',' as u32));
        // Deterministic across runs and platforms: a fixed value.
        assert_eq!(word("hello"), 1_334_889_030);
        // The ASCII fast path and the general path agree (mixed words go the general way).
        for w in [
            "a",
            "abcdefgh",
            "abcdefghi",
            "x1y2z3w4v5u6t7s8r9",
            "ABCDEFGHIJKLMNOPQ",
        ] {
            let mut h = WordHasher::new();
            for b in w.to_lowercase().bytes() {
                h.byte(b);
            }
            assert_eq!(word(w), word_unit(h.finish()), "{w}");
        }
        assert_ne!(word("abcdefgh"), word("abcdefgh0"));
        // Words read 8 bytes at a time past their end (mid-text) or not (at the end).
        for w in ["a", "abcdefgh", "abcdefghi", "x1y2z3w4v5u6t7s8r9"] {
            assert_eq!(units(&format!("{w} tail text")[..])[0], word(w));
            assert_eq!(units(&format!("{w}!zzzzzzzzzz")[..])[0], word(w));
        }
        assert_eq!(word("ÀBCDEFGHIJ"), word("àbcdefghij"));
    }

    #[test]
    fn fast_ranges_are_right() {
        for x in 0..0x11_0000u32 {
            let Some(c) = char::from_u32(x) else {
                continue;
            };
            if is_common_punct(c) {
                assert!(
                    !c.is_alphanumeric() && !is_separator(c) && !is_char_script(c),
                    "{x:x}"
                );
            }
            if c.is_ascii() {
                let cls = class(x as u8);
                assert_eq!(cls == WORD, c.is_alphanumeric(), "{x:x}");
                assert_eq!(cls == SEP, is_separator(c), "{x:x}");
            }
        }
    }

    #[test]
    fn spans() {
        let t = "Ab, 中文 x";
        assert_eq!(unit_spans(t), vec![(0, 2), (2, 3), (4, 5), (5, 6), (7, 8)]);
        assert_eq!(unit_spans(t).len(), units(t).len());
        let mut u = vec![1, 2, 3];
        units_into(t, &mut u);
        assert_eq!(u, units(t));
        assert_eq!(unit_spans("  a\u{301}b 中,"), vec![(2, 5), (6, 7), (7, 8)]);
    }
}
