//! The topic-sentence hierarchical method (seed 003, Fan, Zheng, Zhang; METHODS.md card 7).
//!
//! A page is its title, its sub-titles and its topic sentences (§4.3), compared in a hierarchy
//! (§4.4): titles below 0.4 are different pages; when both pages have sub-titles, sub-titles
//! below 0.6 are different pages; then topic sentences at 0.8 or more are duplicates. Which page
//! is kept (「去除发布时间较晚的或文本较短的网页」) is the index's representative policy: pick
//! `EarliestTime` or `LongestText` for the paper's rule.
//!
//! **Topic sentences** (§4.3, Table 1): only declarative sentences (ending in 。 or `.`) are
//! weighed, `W = W_w + W_t + W_x + W_y + W_z` (A–E = 1, **choice**: the seed gives no values):
//! position (first sentence of the page 1.5, of a paragraph 1, last of the page 0.8, of a
//! paragraph 0.6; the largest when several hold), title words (1), sub-title words (1), a copula
//! (是/为/乃, is/are/was/were: 1), an indicative cue (总之, 综上, 因此, 本文, 总而言之, in
//! conclusion, in summary: 1). The chunk term W_n needs seed 003's chunk grammar over POS tags
//! and is left out (**choice**). The 5 heaviest sentences of weight above 0 are taken
//! (**choice**), dropping one within cosine 0.8 of a heavier one kept (the seed's redundancy
//! step, threshold ours).
//!
//! **Similarity**: a sentence pair is the cosine of its term-frequency vectors. The seed's
//! document similarity is the mean over all pairs, `Σ D(A_i, B_j) / (n m)`, which stays near 1/m
//! for two identical pages of m different sentences (the card's "trap"), so the default is the
//! best-match mean `½ (mean_i max_j D + mean_j max_i D)` (**choice**); `faithful` takes the
//! seed's formula as printed. Words are jieba-rs words without stop words; the seed encodes
//! them by 《同义词词林》 codes, which no maintained crate provides, so words stand as they are.
//!
//! The page's structure travels in its normalized text (see [`structured_text`]): the title on
//! the first line, one block a line after it, sub-titles marked. Candidates are the pages
//! sharing a title word (a title cosine above 0 needs one): lossless for step 2 but where a
//! title word is over-frequent.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::terms::terms;
use crate::text::{normalize, split_sentences, BlockKind, MainText};

/// The mark that starts a sub-title line of a structured text.
pub const SUBTITLE_MARK: char = '\u{1}';

/// Parameters of the topic-sentence method.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TopicConfig {
    /// Titles below this cosine are different pages (0.4, seed 003 §4.4).
    pub title: f64,
    /// Sub-titles below this are different pages, when both pages have some (0.6, §4.4).
    pub subtitle: f64,
    /// Topic sentences at this or more are duplicates (0.8, §4.4).
    pub topic: f64,
    /// Topic sentences kept (5, **choice**).
    pub sentences: usize,
    /// The seed's all-pairs mean as printed, instead of the best-match mean (false).
    pub faithful: bool,
}

impl Default for TopicConfig {
    fn default() -> Self {
        TopicConfig {
            title: 0.4,
            subtitle: 0.6,
            topic: 0.8,
            sentences: 5,
            faithful: false,
        }
    }
}

/// A term-frequency vector, sorted by term hash.
pub type Vector = Vec<(u64, f64)>;

/// What the method compares of a page (seed 003's `StruWebb`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topic {
    /// The title's words (`Tr`).
    pub title: Vector,
    /// The sub-titles, one vector each (`Ti`).
    pub subtitles: Vec<Vector>,
    /// The topic sentences, heaviest first (`Ts`).
    pub topics: Vec<Vector>,
}

/// The normalized text of a page under the topic method: the title (the first `<h1>`, else the
/// `<title>`) on the first line — always ended by a line break — then one block a line,
/// sub-titles starting with [`SUBTITLE_MARK`]. Every piece is normalized on its own, so the text
/// is normalized too.
pub fn structured_text(main: &MainText, fold: impl Into<crate::text::Folding>) -> String {
    let fold = fold.into();
    let clean = |s: &str| normalize(s, fold).replace(['\n', SUBTITLE_MARK], " ");
    let title = if main.heading.trim().is_empty() {
        &main.title
    } else {
        &main.heading
    };
    let mut out = clean(title);
    out.push('\n');
    let mut first = true;
    for p in &main.paragraphs {
        let t = clean(&p.text);
        if t.trim().is_empty() {
            continue;
        }
        if !first {
            out.push('\n');
        }
        first = false;
        if matches!(p.kind, BlockKind::Heading(_)) {
            out.push(SUBTITLE_MARK);
        }
        out.push_str(t.trim());
    }
    out
}

/// The body of a structured text: what follows the title line (all of a text without one).
pub fn body(text: &str) -> &str {
    text.split_once('\n').map_or(text, |(_, b)| b)
}

/// The term-frequency vector of a piece of text.
pub fn vector(text: &str) -> Vector {
    let mut tf: HashMap<u64, f64> = HashMap::new();
    for w in terms(text) {
        *tf.entry(xxh3_64(w.as_bytes())).or_default() += 1.0;
    }
    let mut v: Vector = tf.into_iter().collect();
    v.sort_unstable_by_key(|&(k, _)| k);
    v
}

/// Cosine of two vectors sorted by key (0 when either is empty).
pub fn cosine(a: &[(u64, f64)], b: &[(u64, f64)]) -> f64 {
    super::tfidf::cosine(a, b)
}

const COPULAS: [&str; 7] = ["是", "为", "乃", "is", "are", "was", "were"];
const CUES: [&str; 7] = [
    "总之",
    "综上",
    "因此",
    "本文",
    "总而言之",
    "in conclusion",
    "in summary",
];

/// What the method compares of a structured text ([`structured_text`]; a text without lines is
/// one paragraph without a title).
pub fn topic(text: &str, cfg: &TopicConfig) -> Topic {
    let (title_line, rest) = text.split_once('\n').unwrap_or(("", text));
    let mut subtitles = Vec::new();
    let mut paragraphs: Vec<&str> = Vec::new();
    for line in rest.split('\n').filter(|l| !l.is_empty()) {
        match line.strip_prefix(SUBTITLE_MARK) {
            Some(s) => subtitles.push(s),
            None => paragraphs.push(line),
        }
    }
    let title_words: Vec<String> = terms(title_line);
    let subtitle_words: Vec<String> = subtitles.iter().flat_map(|s| terms(s)).collect();
    // Every sentence with its position weight.
    let mut sentences: Vec<(&str, f64)> = Vec::new();
    let n_par = paragraphs.len();
    for (pi, p) in paragraphs.iter().enumerate() {
        let ss = split_sentences(p);
        let n = ss.len();
        for (si, s) in ss.iter().enumerate() {
            let mut w: f64 = 0.0;
            if si == 0 {
                w = w.max(if pi == 0 { 1.5 } else { 1.0 });
            }
            if si + 1 == n {
                w = w.max(if pi + 1 == n_par { 0.8 } else { 0.6 });
            }
            sentences.push((s.text(p), w));
        }
    }
    let mut weighed: Vec<(f64, usize, Vector)> = Vec::new();
    for (i, (s, position)) in sentences.iter().enumerate() {
        let s = s.trim();
        if !(s.ends_with('。') || s.ends_with('.')) {
            continue;
        }
        let words = terms(s);
        let has = |set: &[String]| f64::from(u8::from(words.iter().any(|w| set.contains(w))));
        let lower = s.to_lowercase();
        let copula = COPULAS.iter().any(|c| {
            if c.is_ascii() {
                lower
                    .split(|ch: char| !ch.is_alphanumeric())
                    .any(|w| w == *c)
            } else {
                lower.contains(c)
            }
        });
        let cue = CUES.iter().any(|c| lower.contains(c));
        let w = position
            + has(&title_words)
            + has(&subtitle_words)
            + f64::from(u8::from(copula))
            + f64::from(u8::from(cue));
        if w > 0.0 {
            weighed.push((w, i, vector(s)));
        }
    }
    weighed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut topics: Vec<Vector> = Vec::new();
    for (_, _, v) in weighed {
        if topics.len() >= cfg.sentences {
            break;
        }
        if v.is_empty() || topics.iter().any(|t| cosine(t, &v) >= cfg.topic) {
            continue;
        }
        topics.push(v);
    }
    Topic {
        title: vector(title_line),
        subtitles: subtitles.iter().map(|s| vector(s)).collect(),
        topics,
    }
}

/// Similarity of two sets of sentence vectors: the best-match mean, or (`faithful`) the seed's
/// mean over all pairs. 0 when either is empty.
pub fn set_similarity(a: &[Vector], b: &[Vector], faithful: bool) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if faithful {
        let sum: f64 = a.iter().flat_map(|x| b.iter().map(|y| cosine(x, y))).sum();
        return sum / (a.len() * b.len()) as f64;
    }
    let best = |xs: &[Vector], ys: &[Vector]| {
        xs.iter()
            .map(|x| ys.iter().map(|y| cosine(x, y)).fold(0.0, f64::max))
            .sum::<f64>()
            / xs.len() as f64
    };
    0.5 * (best(a, b) + best(b, a))
}

/// The hierarchy of seed 003 §4.4: the topic-sentence similarity when the pages are duplicates.
pub fn similar(a: &Topic, b: &Topic, cfg: &TopicConfig) -> Option<f64> {
    if cosine(&a.title, &b.title) < cfg.title {
        return None;
    }
    if !a.subtitles.is_empty()
        && !b.subtitles.is_empty()
        && set_similarity(&a.subtitles, &b.subtitles, cfg.faithful) < cfg.subtitle
    {
        return None;
    }
    let s = set_similarity(&a.topics, &b.topics, cfg.faithful);
    (s >= cfg.topic).then_some(s)
}

/// The hashes of the title's words: the candidate look-up.
pub fn title_keys(t: &Topic) -> Vec<u64> {
    t.title.iter().map(|&(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Paragraph;

    fn page(title: &str, subs: &[&str], paras: &[&str]) -> String {
        let mut paragraphs: Vec<Paragraph> = subs
            .iter()
            .map(|s| Paragraph {
                text: s.to_string(),
                kind: BlockKind::Heading(2),
            })
            .collect();
        paragraphs.extend(paras.iter().map(|p| Paragraph {
            text: p.to_string(),
            kind: BlockKind::Text,
        }));
        let main = MainText {
            title: format!("{title} - Site"),
            heading: title.to_string(),
            paragraphs,
        };
        structured_text(&main, false)
    }

    const PARAS: [&str; 3] = [
        "The river flooded the valley in spring. Farmers moved their herds uphill. Water is rising.",
        "Engineers built a new levee along the river bank. It held during the storm.",
        "In conclusion, the valley recovered quickly. Harvests returned the next year.",
    ];

    #[test]
    fn the_structure_travels_in_the_text() {
        let t = page("River floods valley", &["The levee"], &PARAS);
        assert!(t.starts_with("River floods valley\n\u{1}The levee\nThe river"));
        assert_eq!(body(&page("Only a title", &[], &[])), "");
        let tp = topic(&t, &TopicConfig::default());
        assert_eq!(tp.subtitles.len(), 1);
        assert!(!tp.title.is_empty());
        assert!(!tp.topics.is_empty() && tp.topics.len() <= 5);
    }

    #[test]
    fn copies_match_and_other_titles_or_sub_titles_do_not() {
        let cfg = TopicConfig::default();
        let a = topic(&page("River floods valley", &["The levee"], &PARAS), &cfg);
        let b = topic(
            &page("River floods the valley", &["The levee"], &PARAS),
            &cfg,
        );
        assert!(similar(&a, &b, &cfg).is_some());
        let c = topic(&page("Stock markets fall", &["The levee"], &PARAS), &cfg);
        assert!(similar(&a, &c, &cfg).is_none(), "other title");
        let d = topic(&page("River floods valley", &["Tax rates"], &PARAS), &cfg);
        assert!(similar(&a, &d, &cfg).is_none(), "other sub-title");
        let e = topic(
            &page(
                "River floods valley",
                &["The levee"],
                &[
                    "Prices of grain fell. Traders are worried.",
                    "Nothing else happened.",
                ],
            ),
            &cfg,
        );
        assert!(similar(&a, &e, &cfg).is_none(), "other topic sentences");
    }

    #[test]
    fn the_faithful_mean_misses_identical_pages_of_several_sentences() {
        let t = topic(
            &page("River floods valley", &[], &PARAS),
            &TopicConfig::default(),
        );
        assert!(t.topics.len() >= 3);
        assert!((set_similarity(&t.topics, &t.topics, false) - 1.0).abs() < 1e-9);
        assert!(set_similarity(&t.topics, &t.topics, true) < 0.8);
    }
}
