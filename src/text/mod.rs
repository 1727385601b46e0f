//! Text: page bytes → main text → normalized text → sentences (SPEC §2.1, §2.2).

mod blocks;
mod decode;
mod extract;
mod flat;
mod html;
mod main_text;
mod normalize;
mod sentence;

pub use blocks::{block_digest, masked, MIN_LETTERS_WITH_DIGITS};
pub(crate) use decode::check_not_binary;
pub use decode::decode;
pub use extract::extract;
pub use flat::{extract_flat, nesting_depth, MAX_DEPTH};
pub use main_text::{BlockKind, MainText, MainTextDecodeError, Paragraph};
pub(crate) use normalize::width_without_spaces;
pub use normalize::{char_width, is_cjk, is_ideograph, normalize, width, Folding};
pub use sentence::{split as split_sentences, Sentence};

/// The language of a text, as an ISO 639-3 code (`"eng"`, `"cmn"` for Chinese, `"jpn"`,
/// `"kor"`, …), when it can be told; `None` for a text too short or too mixed to say. What
/// [`crate::extract_page`] and `neardup extract` report; nothing in detection depends on it.
///
/// Script first: a text whose CJK characters (Han, kana, hangul) make at least 30 % of its CJK
/// characters and Latin words together is Japanese when a tenth of them are kana, Korean when a
/// tenth are hangul, else Chinese — the code and identifiers of a Chinese manual are Latin
/// words, which a count of letters would let outvote its prose (on natural-dev's Chinese pages
/// the share is at least 0.31 for 99 %, on its English pages at most 0.28 for 99 %). Other
/// texts go to `whatlang`'s trigram models, and its answer is kept only when it calls it
/// reliable.
pub fn language(text: &str) -> Option<&'static str> {
    let (mut han, mut kana, mut hangul, mut words) = (0usize, 0usize, 0usize, 0usize);
    let mut letters_in_word = 0usize;
    for c in text.chars() {
        let u = c as u32;
        if is_ideograph(c) {
            han += 1;
        } else if matches!(u, 0x3040..=0x30FA | 0x30FC..=0x30FF | 0x31F0..=0x31FF) {
            kana += 1;
        } else if matches!(u, 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F) {
            hangul += 1;
        }
        if c.is_alphabetic() && !is_cjk(c) && !(0xAC00..=0xD7AF).contains(&u) {
            letters_in_word += 1;
            continue;
        }
        words += usize::from(letters_in_word >= 2);
        letters_in_word = 0;
    }
    words += usize::from(letters_in_word >= 2);
    let cjk = han + kana + hangul;
    if cjk > 0 && cjk * 10 >= 3 * (cjk + words) {
        return Some(if kana * 10 >= cjk {
            "jpn"
        } else if hangul * 10 >= cjk {
            "kor"
        } else {
            "cmn"
        });
    }
    whatlang::detect(text)
        .filter(whatlang::Info::is_reliable)
        .map(|info| info.lang().code())
}

#[cfg(test)]
mod tests {
    use super::language;

    #[test]
    fn language_by_script_first_then_trigrams() {
        // A Chinese manual page: more Latin identifiers than Chinese characters, still Chinese.
        let zh =
            "调用 get_user_info(user_id, lang) 返回用户的基本信息，参数 user_id 为用户的唯一标识，\
                  lang 为返回的语言版本 zh_CN zh_TW en_US request response token access_token";
        assert_eq!(language(zh), Some("cmn"));
        assert_eq!(
            language("委員会は火曜日に会合を開き、新しい時刻表について話し合いました。"),
            Some("jpn")
        );
        assert_eq!(
            language("위원회는 화요일에 회의를 열어 새로운 열차 시간표에 대해 논의했습니다."),
            Some("kor")
        );
        let en = "The committee met on Tuesday to discuss the new railway timetable, which \
                  changes the morning trains for the three villages along the river valley.";
        assert_eq!(language(en), Some("eng"));
        assert_eq!(language(""), None);
    }
}
