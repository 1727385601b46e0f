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
    for (i, c) in text.char_indices() {
        if is_ideograph(c) {
            if let Some(s) = word_start.take() {
                f(&text[s..i]);
            }
            cjk.push(i);
        } else {
            flush_cjk(&mut cjk, i, &mut f);
            if c.is_alphanumeric() || c == '_' {
                word_start.get_or_insert(i);
            } else if let Some(s) = word_start.take() {
                f(&text[s..i]);
            }
        }
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
            xxh3_64(feat.to_ascii_lowercase().as_bytes())
        } else {
            xxh3_64(feat.as_bytes())
        });
    });
    // Equal hashes are adjacent once sorted: each run is one feature and its frequency.
    hashes.sort_unstable();
    let mut sums = [0f32; 64];
    for run in hashes.chunk_by(|a, b| a == b) {
        let (h, w) = (run[0], 1.0 + (run.len() as f32).ln());
        for (bit, sum) in sums.iter_mut().enumerate() {
            if (h >> bit) & 1 == 1 {
                *sum += w;
            } else {
                *sum -= w;
            }
        }
    }
    sums.iter().enumerate().fold(
        0u64,
        |acc, (bit, &s)| if s > 0.0 { acc | (1 << bit) } else { acc },
    )
}

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
