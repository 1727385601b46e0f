//! Normalization (SPEC §2.1): NFKC, traditional → simplified Chinese (with mainland vocabulary), one canonical
//! form for punctuation, white space collapsed.
//!
//! The aim is that formatting noise (full-width vs half-width forms, curly vs straight quotes,
//! hard line breaks, doubled spaces, ideographic spaces, traditional script) leaves the text
//! unchanged, so the same body gives the same sentences and fingerprints.
//!
//! White space: runs collapse to one ASCII space, and a space next to a CJK character or CJK
//! punctuation is dropped, because Chinese is written without spaces and a space there is
//! formatting (a wrapped line, an indent), never content.

use unicode_normalization::UnicodeNormalization;

/// Is `c` a CJK ideograph, kana, or CJK punctuation (text written without spaces)?
#[inline]
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F   // CJK symbols and punctuation
        | 0x3040..=0x30FF // kana
        | 0x3400..=0x4DBF // extension A
        | 0x4E00..=0x9FFF // unified ideographs
        | 0xF900..=0xFAFF // compatibility ideographs
        | 0xFF00..=0xFFEF // full-width forms left after NFKC
        | 0x20000..=0x3FFFF)
}

/// Is `c` a CJK ideograph (a character that carries a word or part of one)?
#[inline]
pub fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

/// Width of a character in GBK bytes: 2 for CJK, 1 otherwise (see [`crate::options`]).
#[inline]
pub fn char_width(c: char) -> u32 {
    if is_cjk(c) || (c as u32) >= 0x2E80 {
        2
    } else {
        1
    }
}

/// Width of a string in GBK bytes: the sum of [`char_width`], read from the UTF-8 bytes
/// without decoding. A character is 2 wide from U+2E80 up (every [`is_cjk`] range lies above
/// it): in UTF-8, every 4-byte sequence and the 3-byte ones from `E2 BA 80` on.
pub fn width(s: &str) -> u32 {
    let b = s.as_bytes();
    let (mut w, mut i) = (0u32, 0usize);
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            w += 1;
            i += 1;
        } else if c < 0xE0 {
            w += 1;
            i += 2;
        } else if c < 0xF0 {
            // `s` is UTF-8: a 3-byte lead has its continuation bytes.
            w += if c > 0xE2 || (c == 0xE2 && b[i + 1] >= 0xBA) {
                2
            } else {
                1
            };
            i += 3;
        } else {
            w += 2;
            i += 4;
        }
    }
    w
}

/// Width of a string in GBK bytes with its ASCII spaces left out (sentence and clause widths).
pub(crate) fn width_without_spaces(s: &str) -> u32 {
    width(s) - s.bytes().filter(|&b| b == b' ').count() as u32
}

/// Canonical form of punctuation after NFKC: Chinese sentence punctuation and quotes map to
/// their ASCII counterparts, dashes to `-`. Returns `None` for characters kept as they are.
#[inline]
fn canonical_punct(c: char) -> Option<char> {
    Some(match c {
        '。' | '｡' => '.',
        '、' => ',',
        '“' | '”' | '„' | '‟' | '«' | '»' | '「' | '」' | '『' | '』' | '〝' | '〞' => {
            '"'
        }
        '‘' | '’' | '‚' | '‛' | '′' => '\'',
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' | '－' => '-',
        '〈' | '《' => '<',
        '〉' | '》' => '>',
        '【' | '〔' | '〖' => '[',
        '】' | '〕' | '〗' => ']',
        '・' | '·' | '•' => '·',
        _ => return None,
    })
}

/// NFKC of a text, in one pass for the usual page: ASCII, CJK ideographs and other characters
/// NFKC leaves alone pass through, full-width ASCII forms and the ideographic space become what
/// NFKC makes of them (one ASCII character each). Each character kept is a starter whose NFKC
/// quick check is "yes", so nothing around it can compose or reorder with it; at the first
/// character that is not, the whole text goes through the full algorithm instead.
fn nfkc(raw: &str) -> String {
    use unicode_normalization::char::canonical_combining_class;
    use unicode_normalization::{is_nfkc_quick, IsNormalized};
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < b.len() {
        // A run of ASCII is copied as it is.
        let run = b[i..]
            .iter()
            .position(|&x| x >= 0x80)
            .unwrap_or(b.len() - i);
        if run > 0 {
            out.push_str(&raw[i..i + run]);
            i += run;
            continue;
        }
        let Some(c) = raw[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        let mapped = match c as u32 {
            0x4E00..=0x9FFF => c,
            // Full-width ASCII forms: NFKC gives the ASCII character 0xFEE0 below.
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ if canonical_combining_class(c) == 0
                && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes =>
            {
                c
            }
            _ => return raw.nfkc().collect(),
        };
        out.push(mapped);
    }
    out
}

/// Share of the ideographs that must change under character folding for a text to be read as
/// traditional script. Traditional Chinese text changes about a quarter to a third of its
/// characters; simplified text almost none (a few variant forms).
const TRADITIONAL_SHARE: f64 = 0.05;

/// Folds Chinese text to mainland simplified usage. Every text has its characters folded
/// (zhconv's zh-Hans tables, fast). A text written in traditional script — at least
/// [`TRADITIONAL_SHARE`] of its ideographs change — is instead converted with OpenCC's `tw2sp`
/// tables (`ferrous-opencc`), which also fold Taiwan's and Hong Kong's vocabulary to the
/// mainland's (檔案 → 文件, 程式 → 程序, 資訊 → 信息, 使用者 → 用户, 預設 → 默认): a zh-TW edition
/// of a manual otherwise differs from the zh-CN one every ~17 characters. The vocabulary tables
/// are not applied to simplified text, where they would be wrong (mainland 程序 is not Taiwan's
/// 程序, "process").
fn fold_to_mainland(text: String) -> String {
    let hans = zhconv::zhconv(&text, zhconv::Variant::ZhHans);
    let (mut ideographs, mut changed) = (0usize, 0usize);
    for (a, b) in text.chars().zip(hans.chars()) {
        if is_ideograph(a) {
            ideographs += 1;
            changed += usize::from(a != b);
        }
    }
    if (changed as f64) < TRADITIONAL_SHARE * ideographs as f64 {
        return hans;
    }
    match tw2sp() {
        Some(cc) => cc.convert(&text),
        None => hans,
    }
}

/// OpenCC's `tw2sp` converter, built once (from tables compiled into the crate).
fn tw2sp() -> Option<&'static ferrous_opencc::OpenCC> {
    static CC: std::sync::OnceLock<Option<ferrous_opencc::OpenCC>> = std::sync::OnceLock::new();
    CC.get_or_init(|| {
        ferrous_opencc::OpenCC::from_config(ferrous_opencc::config::BuiltinConfig::Tw2sp).ok()
    })
    .as_ref()
}

/// Which text the traditional → simplified folding of [`normalize`] applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Folding {
    /// Fold traditional Chinese characters to simplified ones.
    pub traditional: bool,
    /// Only in text written in Chinese: not in text whose kana or hangul make a tenth of its CJK
    /// characters (Japanese, Korean), where a kanji or hanja is not a traditional Chinese
    /// character (販売 is not 贩卖, 機能 not 机能). See [`crate::SignatureConfig::fold_only_chinese`].
    pub only_chinese: bool,
}

/// `true` folds every text with Han characters (as before the folding had a scope), `false`
/// none.
impl From<bool> for Folding {
    fn from(traditional: bool) -> Self {
        Folding {
            traditional,
            only_chinese: false,
        }
    }
}

/// Is `text` (with Han characters) written in Japanese or Korean: kana or hangul at least a tenth
/// of its CJK characters? A Chinese page quoting a Japanese name has a few kana among thousands
/// of Han characters; Japanese prose is a third to a half kana.
fn kana_or_hangul_text(text: &str) -> bool {
    let (mut cjk, mut other) = (0usize, 0usize);
    for c in text.chars() {
        let u = c as u32;
        if is_ideograph(c) {
            cjk += 1;
        } else if matches!(u, 0x3040..=0x30FA | 0x30FC..=0x30FF | 0x31F0..=0x31FF)
            || matches!(u, 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F)
        {
            cjk += 1;
            other += 1;
        }
    }
    other * 10 >= cjk && other > 0
}

/// Normalizes text (see the module docs). `fold` says whether traditional Chinese characters
/// are folded to simplified ones, and in which text ([`Folding`]; a `bool` folds every text or
/// none). Letter case is kept (it tells sentence starts apart); the consumers that want
/// case-insensitive text fold it themselves.
pub fn normalize(raw: &str, fold: impl Into<Folding>) -> String {
    let fold = fold.into();
    let nfkc = nfkc(raw);
    let folded = if fold.traditional
        && nfkc.chars().any(is_ideograph)
        && !(fold.only_chinese && kana_or_hangul_text(&nfkc))
    {
        fold_to_mainland(nfkc)
    } else {
        nfkc
    };
    let mut out = String::with_capacity(folded.len());
    let mut pending_space = false;
    // Whether the last character written was CJK before punctuation was made canonical.
    let mut prev_cjk = false;
    for c in folded.chars() {
        if c.is_ascii() {
            // ASCII: white space and controls are U+0000–U+0020 and U+007F; nothing else is
            // CJK or changes.
            if c <= ' ' || c == '\u{7f}' {
                pending_space = !out.is_empty();
                continue;
            }
            if std::mem::take(&mut pending_space) && !prev_cjk {
                out.push(' ');
            }
            out.push(c);
            prev_cjk = false;
            continue;
        }
        if c.is_whitespace() || c.is_control() || c == '\u{200b}' || c == '\u{feff}' {
            pending_space = !out.is_empty();
            continue;
        }
        let cjk = is_cjk(c);
        if pending_space {
            pending_space = false;
            if !prev_cjk && !cjk {
                out.push(' ');
            }
        }
        out.push(canonical_punct(c).unwrap_or(c));
        prev_cjk = cjk;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn japanese_and_korean_text_is_not_folded_when_only_chinese_is() {
        let only = Folding {
            traditional: true,
            only_chinese: true,
        };
        let ja = "新しい販売機能について説明します。";
        assert_eq!(normalize(ja, only), "新しい販売機能について説明します.");
        // The bool form folds every text, as before the scope existed.
        assert_ne!(normalize(ja, true), normalize(ja, only));
        assert!(normalize(ja, true).contains("贩"));
        let ko = "新機能 판매 기능에 대한 설명입니다";
        assert_eq!(normalize(ko, only), normalize(ko, false));
        // Chinese, with a Japanese name quoted: folded.
        let zh =
            "這個軟體的新功能說明，參見「ラーメン」一節。這個軟體的使用者介面與檔案管理都已更新，\
                  請在設定中選擇新的預設值，然後重新啟動程式，所有的變更才會生效。";
        assert_eq!(normalize(zh, only), normalize(zh, true));
        assert!(normalize(zh, only).contains("这个"));
        assert_eq!(normalize("販売", false), "販売");
    }

    #[test]
    fn the_fast_path_equals_nfkc() {
        for s in [
            "１９９８年，ＡＢＣ！　中文：“引号”……",
            "Ａ\u{301}ｂ　ｃ",
            "ﾊﾝｶｸ ｶﾀｶﾅ，全角（括号）",
            "plain ascii, nothing to do",
            "ﬁ ligature and ² superscript，and ＡＢＣ",
        ] {
            assert_eq!(nfkc(s), s.nfkc().collect::<String>(), "{s:?}");
        }
    }

    #[test]
    fn width_from_bytes_is_the_sum_of_char_widths() {
        for s in [
            "",
            "ascii only",
            "é ü ß Ω ж",
            "\u{2e7f}\u{2e80}\u{2fff}\u{3000}中文，标点。",
            "ｆｕｌｌ　ｗｉｄｔｈ and 𠀀𪚥 and 🎉",
            "\u{800}\u{fff}\u{1000}\u{ffff}",
        ] {
            assert_eq!(width(s), s.chars().map(char_width).sum::<u32>(), "{s:?}");
        }
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            assert_eq!(width(c.encode_utf8(&mut [0; 4])), char_width(c), "{c:?}");
        }
    }

    #[test]
    fn full_width_folds_to_half_width() {
        assert_eq!(normalize("１９９８年，ＡＢＣ！", false), "1998年,ABC!");
    }

    #[test]
    fn chinese_punctuation_is_canonical() {
        let a = normalize("他说：“今天。”然后、走了；", false);
        let b = normalize("他说:\"今天.\"然后,走了;", false);
        assert_eq!(a, b);
    }

    #[test]
    fn spaces_inside_chinese_vanish() {
        assert_eq!(normalize("中文\u{3000}文本\n 换行", false), "中文文本换行");
        assert_eq!(normalize("Python 是 一种语言", false), "Python是一种语言");
        // A space after Chinese punctuation goes too, though the punctuation becomes ASCII.
        assert_eq!(
            normalize("如下。 “胡", false),
            normalize("如下。“胡", false)
        );
    }

    #[test]
    fn latin_whitespace_collapses() {
        assert_eq!(normalize("  a\t\tb \n\u{a0} c  ", false), "a b c");
    }

    #[test]
    fn traditional_folds_to_simplified() {
        assert_eq!(
            normalize("網頁相似性檢測", true),
            normalize("网页相似性检测", true)
        );
    }

    #[test]
    fn regional_vocabulary_folds_to_mainland_usage() {
        // A zh-TW and a zh-CN edition of one manual sentence.
        let tw = normalize("使用者可以在程式中開啟檔案並查看資訊。", true);
        let cn = normalize("用户可以在程序中打开文件并查看信息。", true);
        assert_eq!(tw, cn);
        assert_eq!(
            normalize("這個軟體的記憶體不足，預設值", true),
            normalize("这个软件的内存不足,默认值", true)
        );
        // Simplified text keeps its own vocabulary: mainland 程序 and 文件 stay.
        assert_eq!(normalize("程序打开文件", true), "程序打开文件");
    }

    #[test]
    fn width_counts_cjk_twice() {
        assert_eq!(width("ab中文"), 6);
    }
}
