//! New text in the style of a text pool: a "run-copy" Markov chain.
//!
//! The pool's paragraphs of one language are one token stream (Chinese: one token a character;
//! English: one token a word, punctuation attached). A paragraph is made by copying a run of a
//! few tokens from a random sentence start, then jumping to a random other place in the pool
//! where the last two tokens copied occur too and copying on from there, and so on until the
//! paragraph is long enough and ends a sentence. Every join is a bigram the pool has, so the
//! text reads locally like the pool (its words, characters, punctuation, sentence and clause
//! lengths), while the jumps every few tokens make its sentences and almost all its clauses new:
//! pages made this way share fingerprints only where real pages do, on short common phrases.
//! One jump is one read of a table built with the chain, so a 2,000-character page costs a few
//! hundred reads.

use rand::{Rng, SeedableRng};
use rustc_hash::FxHashMap;

/// A token that ends a paragraph of the pool (never emitted).
const SEP: u32 = u32::MAX;

/// The two languages of the bench's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Lang {
    /// Chinese: tokens are characters, joined without spaces.
    Zh,
    /// English: tokens are words, joined with one space.
    En,
}

impl Lang {
    /// The pool's name of the language.
    pub fn parse(s: &str) -> Option<Lang> {
        match s {
            "zh" => Some(Lang::Zh),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// Index into per-language arrays.
    pub fn idx(self) -> usize {
        match self {
            Lang::Zh => 0,
            Lang::En => 1,
        }
    }
}

/// The run-copy chain of one language.
pub struct Chain {
    lang: Lang,
    /// The pool: each position's token ([`SEP`] between paragraphs) and its jump target (see
    /// below), side by side so that a jump costs one cache miss.
    cells: Vec<[u32; 2]>,
    /// English: token id → word. Chinese: empty (a token is its character's code point).
    words: Vec<Box<str>>,
    /// English: whether a token id ends a sentence. Chinese: see [`ends_sentence_zh`].
    word_ends: Vec<bool>,
    /// Positions where a sentence starts.
    starts: Vec<u32>,
    // The jump target of a position after an occurrence of a bigram is the position after
    // another occurrence of the same bigram (drawn once, when the chain is built; itself when
    // the bigram occurs once). A jump is one read next to the tokens just copied and one at its
    // target, instead of a hash look-up, a read in a table of occurrences and the target.
    /// Tokens copied between two jumps: uniform in `run.0..=run.1`.
    run: (u32, u32),
}

fn ends_sentence_zh(c: u32) -> bool {
    matches!(
        char::from_u32(c),
        Some('。' | '！' | '？' | '；' | '…' | '!' | '?')
    )
}

fn ends_sentence_en(w: &str) -> bool {
    let w = w.trim_end_matches(['"', '\'', ')', '”', '’']);
    w.ends_with('.') || w.ends_with('?') || w.ends_with('!')
}

fn bigram(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

impl Chain {
    /// Builds the chain of `lang` from paragraphs of that language.
    pub fn build<'a>(lang: Lang, paragraphs: impl IntoIterator<Item = &'a str>) -> Chain {
        let mut tokens = Vec::new();
        let mut words: Vec<Box<str>> = Vec::new();
        let mut word_ends = Vec::new();
        let mut ids: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut starts = Vec::new();
        for p in paragraphs {
            let mut at_start = true;
            match lang {
                Lang::Zh => {
                    for c in p.chars() {
                        if c == '\n' || c == '\r' || c == '\t' {
                            continue;
                        }
                        if at_start && !c.is_whitespace() {
                            starts.push(tokens.len() as u32);
                            at_start = false;
                        }
                        tokens.push(c as u32);
                        at_start |= ends_sentence_zh(c as u32);
                    }
                }
                Lang::En => {
                    for w in p.split_whitespace() {
                        let id = *ids.entry(w).or_insert_with(|| {
                            words.push(w.into());
                            word_ends.push(ends_sentence_en(w));
                            (words.len() - 1) as u32
                        });
                        let capital = w.chars().next().is_some_and(|c| c.is_uppercase());
                        if at_start && capital {
                            starts.push(tokens.len() as u32);
                        }
                        tokens.push(id);
                        at_start = word_ends[id as usize];
                    }
                }
            }
            tokens.push(SEP);
        }
        // Group the positions that follow each bigram (count, then fill), then give each position
        // a random other member of its group.
        let mut count: FxHashMap<u64, (u32, u32)> = FxHashMap::default();
        for i in 2..tokens.len() {
            let (a, b, c) = (tokens[i - 2], tokens[i - 1], tokens[i]);
            if a != SEP && b != SEP && c != SEP {
                count.entry(bigram(a, b)).or_default().1 += 1;
            }
        }
        let mut total = 0u32;
        for v in count.values_mut() {
            v.0 = total;
            total += v.1;
            v.1 = 0;
        }
        let mut next = vec![0u32; total as usize];
        for i in 2..tokens.len() {
            let (a, b, c) = (tokens[i - 2], tokens[i - 1], tokens[i]);
            if a != SEP && b != SEP && c != SEP {
                if let Some(v) = count.get_mut(&bigram(a, b)) {
                    next[(v.0 + v.1) as usize] = i as u32;
                    v.1 += 1;
                }
            }
        }
        let mut alt: Vec<u32> = (0..tokens.len() as u32).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x616c74);
        for &(s, n) in count.values() {
            if n < 2 {
                continue;
            }
            let group = &next[s as usize..(s + n) as usize];
            for (k, &m) in group.iter().enumerate() {
                // Any other member: an offset of 1..n from this one, around the group.
                let off = rng.random_range(1..n) as usize;
                alt[m as usize] = group[(k + off) % n as usize];
            }
        }
        drop(count);
        drop(next);
        let cells: Vec<[u32; 2]> = tokens.iter().zip(&alt).map(|(&t, &a)| [t, a]).collect();
        drop(tokens);
        drop(alt);
        if starts.is_empty() && !cells.is_empty() {
            starts.push(0);
        }
        let run = match lang {
            Lang::Zh => (4, 10),
            Lang::En => (2, 7),
        };
        Chain {
            lang,
            cells,
            words,
            word_ends,
            starts,
            run,
        }
    }

    /// Tokens in the pool (for reports).
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    fn ends_sentence(&self, t: u32) -> bool {
        match self.lang {
            Lang::Zh => ends_sentence_zh(t),
            Lang::En => self.word_ends[t as usize],
        }
    }

    fn push(&self, t: u32, out: &mut String) -> usize {
        match self.lang {
            Lang::Zh => {
                let c = char::from_u32(t).unwrap_or(' ');
                out.push(c);
                1
            }
            Lang::En => {
                if !out.is_empty() && !out.ends_with(' ') {
                    out.push(' ');
                }
                let w = &self.words[t as usize];
                out.push_str(w);
                // Bytes: English words are almost all ASCII, and this is only a length target.
                w.len() + 1
            }
        }
    }

    /// Appends a new paragraph of about `target` characters to `out`. A heading stops at
    /// `target` wherever it is and drops its closing punctuation; a paragraph stops at the end of
    /// the first sentence past `target` (or is closed with a full stop at twice `target`).
    pub fn paragraph(&self, rng: &mut impl Rng, target: usize, heading: bool, out: &mut String) {
        if self.starts.is_empty() {
            return;
        }
        let begin = out.len();
        let mut pos = self.starts[rng.random_range(0..self.starts.len())] as usize;
        let mut left = rng.random_range(self.run.0..=self.run.1);
        let mut len = 0usize;
        let mut emitted = 0usize;
        loop {
            let t = self.cells[pos][0];
            if t == SEP || pos + 1 >= self.cells.len() {
                // The pool's paragraph ended: go on from another sentence start.
                if len >= target && (heading || emitted > 0) {
                    break;
                }
                pos = self.starts[rng.random_range(0..self.starts.len())] as usize;
                left = rng.random_range(self.run.0..=self.run.1);
                continue;
            }
            len += self.push(t, out);
            emitted += 1;
            pos += 1;
            if heading && len >= target {
                break;
            }
            if !heading && len >= target && self.ends_sentence(t) {
                break;
            }
            if len >= 2 * target + 40 {
                if !heading {
                    out.push(if self.lang == Lang::Zh { '。' } else { '.' });
                }
                break;
            }
            left -= 1;
            if left == 0 {
                // Jump to where the pool goes on after the same two tokens elsewhere.
                // (`pos` is next to the position just read: the miss is at the target only.)
                pos = self.cells[pos][1] as usize;
                left = rng.random_range(self.run.0..=self.run.1);
            }
        }
        if heading {
            let trimmed = out[begin..]
                .trim_end_matches(|c: char| {
                    c.is_ascii_punctuation() || "。，、；：！？".contains(c)
                })
                .len();
            out.truncate(begin + trimmed);
        }
    }

    /// A random token's text (edits insert these).
    pub fn random_token(&self, rng: &mut impl Rng) -> String {
        loop {
            let t = self.cells[rng.random_range(0..self.cells.len())][0];
            if t == SEP {
                continue;
            }
            return match self.lang {
                Lang::Zh => char::from_u32(t).map(String::from).unwrap_or_default(),
                Lang::En => self.words[t as usize].to_string(),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn english_paragraphs_end_sentences_and_follow_pool_bigrams() {
        let pool = [
            "The cat sat on the mat. The dog sat on the rug. A bird flew over the mat and the dog.",
            "Every dog has its day. The mat was red and the rug was blue.",
        ];
        let c = Chain::build(Lang::En, pool);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50 {
            let mut s = String::new();
            c.paragraph(&mut rng, 40, false, &mut s);
            assert!(s.ends_with('.'), "{s}");
            assert!(s.len() >= 40, "{s}");
            let w: Vec<&str> = s.split(' ').collect();
            for p in w.windows(2) {
                // Joins are pool bigrams, but for a new sentence after a pool paragraph's end.
                if p[0].ends_with('.') {
                    continue;
                }
                let pair = format!("{} {}", p[0], p[1]);
                assert!(
                    pool.iter().any(|t| t.contains(&pair)),
                    "{pair:?} not in the pool"
                );
            }
        }
    }

    #[test]
    fn chinese_headings_stop_at_their_length() {
        let c = Chain::build(
            Lang::Zh,
            ["今天天气很好，我们去公园散步。公园里有很多人在散步。"],
        );
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = String::new();
        c.paragraph(&mut rng, 8, true, &mut s);
        assert!(s.chars().count() >= 6 && s.chars().count() <= 8, "{s}");
        assert!(!s.ends_with('。'));
    }
}
