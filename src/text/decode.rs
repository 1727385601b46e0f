//! Bytes → text: character encodings (UTF-8, GBK/GB18030, Big5, …) and binary detection.
//!
//! The declared encoding wins (byte-order mark, then `<meta charset>` in the first 4 KiB, as the
//! HTML standard's prescan does), except that bytes that are valid UTF-8 are UTF-8 over an
//! ASCII-compatible declaration when there is enough evidence for it (see [`decode`]); without
//! one, valid UTF-8 is taken as UTF-8 and anything else is guessed by `chardetng`. Invalid byte
//! sequences become U+FFFD; nothing here panics.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};

use crate::{Error, Result};

/// How many leading bytes are looked at for a `<meta charset>` declaration.
const PRESCAN_BYTES: usize = 4096;
/// How many leading bytes are sampled to tell binary data from text.
const BINARY_SAMPLE: usize = 8192;
/// Share of control bytes above which a page is taken for binary data.
const BINARY_SHARE: f64 = 0.10;

/// Decodes a page's bytes into text.
///
/// # Errors
/// [`Error::BinaryPage`] when the bytes look like binary data rather than text.
pub fn decode(bytes: &[u8]) -> Result<Cow<'_, str>> {
    check_not_binary(bytes)?;
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return Ok(text);
    }
    if let Some(enc) = prescan_meta_charset(&bytes[..bytes.len().min(PRESCAN_BYTES)]) {
        // Valid UTF-8 is UTF-8 even under a `<meta charset>` naming a legacy encoding: a page
        // re-encoded on its way here (the `html` string of a JSON line is UTF-8 whatever the page
        // declared) or served as UTF-8 with a stale declaration. Legacy text with non-ASCII bytes
        // is almost never valid UTF-8 (`ä` is `E4`, which UTF-8 must follow by two continuation
        // bytes), and ASCII reads the same either way. Not for encodings that are not ASCII
        // supersets (ISO-2022-JP is written in ASCII bytes).
        //
        // Text in a double-byte encoding (GBK, Big5, Shift_JIS, EUC-*) is valid UTF-8 far more
        // often (`全指` in GBK is `C8 AB D6 B8`, two 2-byte UTF-8 sequences): there UTF-8 wins
        // only with evidence — enough multi-byte sequences ([`MIN_UTF8_SEQUENCES`]), or bytes
        // that are malformed in the declared encoding.
        if enc != UTF_8 && enc.is_ascii_compatible() {
            if let Ok(s) = std::str::from_utf8(bytes) {
                if multi_byte_sequences(s) >= min_utf8_sequences(enc) {
                    return Ok(Cow::Borrowed(s));
                }
                let (text, malformed) = enc.decode_without_bom_handling(bytes);
                return Ok(if malformed { Cow::Borrowed(s) } else { text });
            }
        }
        let (text, _) = enc.decode_without_bom_handling(bytes);
        return Ok(text);
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(Cow::Borrowed(s));
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let enc = detector.guess(None, chardetng::Utf8Detection::Allow);
    let (text, _) = enc.decode_without_bom_handling(bytes);
    Ok(text)
}

/// How many multi-byte UTF-8 sequences make valid UTF-8 bytes UTF-8 over a declared double-byte
/// encoding (inclusive). A GBK or Big5 character is a valid 2-byte UTF-8 sequence a few times in a
/// hundred, so eight in a row by chance are below one in a billion; a shorter text stays in the
/// declared encoding unless its bytes are malformed there.
const MIN_UTF8_SEQUENCES: usize = 8;

/// The multi-byte UTF-8 sequences a valid UTF-8 page needs before it is read as UTF-8 over a
/// declaration of `enc`: one for single-byte encodings (a lone latin-1 letter is never valid
/// UTF-8, and valid pairs are mojibake like `Ã©`), [`MIN_UTF8_SEQUENCES`] for double-byte ones.
fn min_utf8_sequences(enc: &'static Encoding) -> usize {
    use encoding_rs::{BIG5, EUC_JP, EUC_KR, GB18030, GBK, SHIFT_JIS};
    if [GBK, GB18030, BIG5, SHIFT_JIS, EUC_JP, EUC_KR].contains(&enc) {
        MIN_UTF8_SEQUENCES
    } else {
        1
    }
}

/// The number of non-ASCII characters (multi-byte sequences) in `s`.
fn multi_byte_sequences(s: &str) -> usize {
    // Every sequence has exactly one lead byte (`11xxxxxx`); continuation bytes are `10xxxxxx`.
    s.bytes().filter(|&b| b >= 0xC0).count()
}

/// Refuses data whose first bytes are mostly control characters (NUL and friends): the check
/// [`decode`] makes first, also made of a page whose main text was extracted before
/// ([`crate::signature::main_text`]).
pub(crate) fn check_not_binary(bytes: &[u8]) -> Result<()> {
    let sample = &bytes[..bytes.len().min(BINARY_SAMPLE)];
    if sample.is_empty() {
        return Ok(());
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
        .count();
    let share = control as f64 / sample.len() as f64;
    if share > BINARY_SHARE {
        return Err(Error::BinaryPage {
            control_share: share * 100.0,
            sampled: sample.len(),
        });
    }
    Ok(())
}

/// Finds `charset=NAME` in the head of a page and maps it to an encoding.
///
/// A declared UTF-16 is read as UTF-8, as the HTML standard says for the meta prescan.
fn prescan_meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    const NEEDLE: &[u8] = b"charset";
    let mut from = 0;
    while from + NEEDLE.len() <= head.len() {
        let pos = head[from..]
            .windows(NEEDLE.len())
            .position(|w| w.eq_ignore_ascii_case(NEEDLE))?;
        let mut i = from + pos + NEEDLE.len();
        from = i;
        while i < head.len() && head[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= head.len() || head[i] != b'=' {
            continue;
        }
        i += 1;
        while i < head.len()
            && (head[i].is_ascii_whitespace() || head[i] == b'"' || head[i] == b'\'')
        {
            i += 1;
        }
        let start = i;
        while i < head.len()
            && (head[i].is_ascii_alphanumeric() || matches!(head[i], b'-' | b'_' | b':' | b'.'))
        {
            i += 1;
        }
        if let Some(enc) = Encoding::for_label(&head[start..i]) {
            let name = enc.name();
            return Some(if name.starts_with("UTF-16") {
                UTF_8
            } else {
                enc
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_passes_through_borrowed() {
        let text = decode("<p>中文 text</p>".as_bytes()).unwrap();
        assert!(matches!(text, Cow::Borrowed(_)));
        assert_eq!(text, "<p>中文 text</p>");
    }

    #[test]
    fn declared_gbk_is_decoded() {
        let (body, _, _) = encoding_rs::GBK.encode("<p>中华人民共和国</p>");
        let mut page = b"<html><head><meta charset=\"gbk\"></head><body>".to_vec();
        page.extend_from_slice(&body);
        let text = decode(&page).unwrap();
        assert!(text.contains("中华人民共和国"), "{text}");
    }

    #[test]
    fn valid_utf8_wins_over_a_legacy_declaration() {
        let page = "<meta charset=iso-8859-1><p>Schöne Grüße, gemäßigt</p>";
        assert_eq!(decode(page.as_bytes()).unwrap(), page);
        // Real latin-1 bytes are still read as latin-1.
        let (latin1, _, _) = encoding_rs::WINDOWS_1252.encode(page);
        assert_eq!(decode(&latin1).unwrap(), page);
        // ISO-2022-JP is written in ASCII bytes: its declaration stands.
        let (jis, _, _) =
            encoding_rs::ISO_2022_JP.encode("<meta charset=iso-2022-jp><p>日本語</p>");
        assert!(decode(&jis).unwrap().contains("日本語"));
    }

    #[test]
    fn short_gbk_that_is_valid_utf8_stays_gbk() {
        // 全指 in GBK is C8 AB D6 B8: also two valid 2-byte UTF-8 sequences (ȫָ).
        let (body, _, _) = encoding_rs::GBK.encode("全指");
        assert_eq!(&body[..], b"\xC8\xAB\xD6\xB8");
        assert!(std::str::from_utf8(&body).is_ok());
        let mut page = b"<meta charset=gbk><p>".to_vec();
        page.extend_from_slice(&body);
        page.extend_from_slice(b"</p>");
        assert_eq!(decode(&page).unwrap(), "<meta charset=gbk><p>全指</p>");
    }

    #[test]
    fn long_utf8_declared_gbk_is_utf8() {
        let page =
            "<meta charset=gbk><p>新华社北京一月二十日电，今天上午，两千多名老同志欢聚。</p>";
        assert_eq!(decode(page.as_bytes()).unwrap(), page);
        // Below the evidence count, bytes malformed in GBK still make it UTF-8: 中文字 is nine
        // bytes, and the ninth has no GBK trail byte after it.
        let short = "<meta charset=gbk><p>中文字</p>";
        assert_eq!(decode(short.as_bytes()).unwrap(), short);
    }

    #[test]
    fn evidence_count_boundary() {
        // Seven GBK characters that are valid UTF-8 stay GBK; the count is inclusive at eight.
        let seven = "全指全指全指全";
        let (body, _, _) = encoding_rs::GBK.encode(seven);
        assert!(std::str::from_utf8(&body).is_ok());
        let mut page = b"<meta charset=gbk>".to_vec();
        page.extend_from_slice(&body);
        assert_eq!(multi_byte_sequences(std::str::from_utf8(&page).unwrap()), 7);
        assert!(decode(&page).unwrap().ends_with(seven));
        let (body8, _, _) = encoding_rs::GBK.encode("全指全指全指全指");
        let mut page8 = b"<meta charset=gbk>".to_vec();
        page8.extend_from_slice(&body8);
        let as_utf8 = std::str::from_utf8(&page8).unwrap().to_string();
        assert_eq!(decode(&page8).unwrap(), as_utf8);
    }

    #[test]
    fn http_equiv_big5_is_decoded() {
        let (body, _, _) = encoding_rs::BIG5.encode("<p>網頁相似性檢測</p>");
        let mut page =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=big5\">".to_vec();
        page.extend_from_slice(&body);
        assert!(decode(&page).unwrap().contains("網頁相似性檢測"));
    }

    #[test]
    fn undeclared_gbk_is_sniffed() {
        let (body, _, _) = encoding_rs::GBK
            .encode("<p>新华社北京一月二十日电，今天上午，两千多名在京老同志欢聚在人民大会堂，喜迎新春佳节。</p>");
        let text = decode(&body).unwrap();
        assert!(text.contains("人民大会堂"), "{text}");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let text = decode(b"<p>ok \xff\xfe\xfd ok</p>").unwrap();
        assert!(text.contains("ok"));
    }

    #[test]
    fn binary_is_refused() {
        let junk: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 32) as u8).collect();
        assert!(matches!(decode(&junk), Err(Error::BinaryPage { .. })));
    }

    #[test]
    fn empty_is_fine() {
        assert_eq!(decode(b"").unwrap(), "");
    }
}
