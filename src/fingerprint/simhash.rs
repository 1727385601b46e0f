//! 64-bit simhash (seed 001 §3.3; seed 002) over term-frequency weighted features (sublinear
//! weights `1 + ln tf`): words for
//! alphabetic scripts (case-folded), character n-grams (bigrams by default) for Chinese. Pages within Hamming
//! distance k (k = 3) are possibly similar.

use xxhash_rust::xxh3::xxh3_64;

use crate::text::is_ideograph;

/// Calls `f` with each feature of a normalized text: alphanumeric words, and CJK character
/// n-grams of length `ngram` inside runs of ideographs (a run shorter than `ngram` is one feature).
pub fn for_each_feature(text: &str, ngram: usize, mut f: impl FnMut(&str)) {
    let ngram = ngram.max(1);
    let mut word_start: Option<usize> = None;
    let mut cjk: Vec<usize> = Vec::new(); // byte offsets of the current ideograph run
    let flush_cjk = |cjk: &mut Vec<usize>, end: usize, f: &mut dyn FnMut(&str)| {
        if cjk.is_empty() {
            return;
        }
        if cjk.len() < ngram {
            f(&text[cjk[0]..end]);
        } else {
            for i in 0..=cjk.len() - ngram {
                let stop = if i + ngram < cjk.len() {
                    cjk[i + ngram]
                } else {
                    end
                };
                f(&text[cjk[i]..stop]);
            }
        }
        cjk.clear();
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // ASCII without decoding: never an ideograph, a word character when alphanumeric.
        let (ideograph, word_char, next) = if bytes[i].is_ascii() {
            let b = bytes[i];
            (false, b.is_ascii_alphanumeric() || b == b'_', i + 1)
        } else {
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            // An ideograph's word-character test is never used: skip the Unicode tables.
            let ideograph = is_ideograph(c);
            (
                ideograph,
                !ideograph && (c.is_alphanumeric() || c == '_'),
                i + c.len_utf8(),
            )
        };
        if ideograph {
            if let Some(s) = word_start.take() {
                f(&text[s..i]);
            }
            cjk.push(i);
        } else {
            flush_cjk(&mut cjk, i, &mut f);
            if word_char {
                word_start.get_or_insert(i);
            } else if let Some(s) = word_start.take() {
                f(&text[s..i]);
            }
        }
        i = next;
    }
    flush_cjk(&mut cjk, text.len(), &mut f);
    if let Some(s) = word_start {
        f(&text[s..]);
    }
}

/// The simhash of a normalized text: each distinct feature's 64-bit hash votes on every bit with
/// weight `1 + ln(tf)` (sublinear term frequency, so that a few very frequent words — "the",
/// "of" — do not decide every bit); bits with a positive sum are set.
pub fn simhash(text: &str, ngram: usize) -> u64 {
    let mut hashes: Vec<u64> = Vec::with_capacity(text.len() / 4);
    for_each_feature(text, ngram, |feat| {
        hashes.push(if feat.bytes().any(|b| b.is_ascii_uppercase()) {
            // Lower-cased on the stack for the usual short word.
            let mut buf = [0u8; 64];
            match buf.get_mut(..feat.len()) {
                Some(lower) => {
                    lower.copy_from_slice(feat.as_bytes());
                    lower.make_ascii_lowercase();
                    xxh3_64(lower)
                }
                None => xxh3_64(feat.to_ascii_lowercase().as_bytes()),
            }
        } else {
            xxh3_64(feat.as_bytes())
        });
    });
    // Equal hashes are adjacent once sorted: each run is one feature and its frequency.
    hashes.sort_unstable();
    let mut sums = [0f32; 64];
    for run in hashes.chunk_by(|a, b| a == b) {
        let (h, w) = (run[0], 1.0 + (run.len() as f32).ln());
        // Byte by byte: eight lanes get `w × ±1` at once. The same additions in the same order
        // as a bit-by-bit loop of `±w`, so the same sums, without a branch per bit.
        for (k, lanes) in sums.chunks_exact_mut(8).enumerate() {
            let signs = &SIGNS[((h >> (8 * k)) & 0xff) as usize];
            for (sum, sign) in lanes.iter_mut().zip(signs) {
                *sum += w * sign;
            }
        }
    }
    sums.iter().enumerate().fold(
        0u64,
        |acc, (bit, &s)| if s > 0.0 { acc | (1 << bit) } else { acc },
    )
}

/// For each byte value, the sign (+1 for a set bit, -1 for a clear one) of its eight bits,
/// lowest bit first.
static SIGNS: [[f32; 8]; 256] = {
    let mut t = [[0f32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b][i] = if (b >> i) & 1 == 1 { 1.0 } else { -1.0 };
            i += 1;
        }
        b += 1;
    }
    t
};

/// Hamming distance between two simhashes.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        for_each_feature(text, 2, |f| v.push(f.to_string()));
        v
    }

    #[test]
    fn words_and_bigrams() {
        assert_eq!(
            features("hello, world 中文本x"),
            vec!["hello", "world", "中文", "文本", "x"]
        );
        assert_eq!(features("中"), vec!["中"]);
    }

    #[test]
    fn identical_texts_same_hash_and_small_edit_small_distance() {
        let a = "the quick brown fox jumps over the lazy dog near the river bank every morning in spring";
        let b = "the quick brown fox jumps over the lazy dog near the river bank every evening in spring";
        assert_eq!(simhash(a, 2), simhash(a, 2));
        assert!(hamming(simhash(a, 2), simhash(b, 2)) < 16);
    }

    #[test]
    fn hamming_counts_bits() {
        assert_eq!(hamming(0b1011, 0b0001), 2);
    }
}
