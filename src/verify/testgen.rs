//! Deterministic text generators for the tests (a seeded LCG, no dependencies).

/// Knuth's MMIX linear congruential generator.
pub(crate) struct Lcg(u64);

impl Lcg {
    pub(crate) fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

const SYLLABLES: [&str; 40] = [
    "ka", "ro", "mi", "te", "su", "la", "ne", "po", "di", "ga", "vo", "ri", "ba", "ze", "lu", "fi",
    "ko", "sa", "me", "tu", "an", "el", "is", "or", "un", "th", "ch", "st", "pr", "qu", "wi", "yo",
    "he", "bo", "ca", "de", "fu", "gi", "ha", "jo",
];

/// English-like text of exactly `units` units (see [`super::units()`]): words of 1–3 syllables
/// from a fixed vocabulary of 400, separated by spaces, and ". " every 8–20 words.
pub(crate) fn english(seed: u64, units: usize) -> String {
    let mut vocab_rng = Lcg::new(7);
    let vocab: Vec<String> = (0..400)
        .map(|_| {
            let n = 1 + vocab_rng.below(3);
            (0..n)
                .map(|_| SYLLABLES[vocab_rng.below(SYLLABLES.len())])
                .collect()
        })
        .collect();
    let mut rng = Lcg::new(seed);
    let mut out = String::new();
    let mut count = 0;
    let mut in_sentence = 0;
    while count < units {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&vocab[rng.below(vocab.len())]);
        count += 1;
        in_sentence += 1;
        if count < units && in_sentence > 8 + rng.below(12) {
            out.push('.');
            count += 1;
            in_sentence = 0;
        }
    }
    out
}

/// Units of [`english`].
pub(crate) fn en(seed: u64, units: usize) -> Vec<u32> {
    super::units(&english(seed, units))
}

/// Units of [`chinese`] (one per char).
pub(crate) fn zh(seed: u64, units: usize) -> Vec<u32> {
    chinese(seed, units).chars().map(|c| c as u32).collect()
}

const HANZI: &str =
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动\
同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量\
都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内\
数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党\
程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根\
论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增";

/// Chinese-like text of `len` chars: uniform over ~400 common characters, "，" and "。" between
/// phrases.
pub(crate) fn chinese(seed: u64, len: usize) -> String {
    let pool: Vec<char> = HANZI.chars().collect();
    let mut rng = Lcg::new(seed);
    let mut out = Vec::with_capacity(len);
    let mut phrase = 0;
    while out.len() < len {
        out.push(pool[rng.below(pool.len())]);
        phrase += 1;
        if phrase > 6 + rng.below(10) {
            out.push(if rng.below(3) == 0 { '。' } else { '，' });
            phrase = 0;
        }
    }
    out.truncate(len);
    out.into_iter().collect()
}

/// A copy of `text` with one edit (substitution, insertion or deletion, in turn) every `every`
/// units on average; edits are at least `every / 2` apart, so ~1/every of the text changes,
/// spread out. Substituted and inserted units are `'#'` and `'@'`.
pub(crate) fn spread_edits(text: &[u32], every: usize, seed: u64) -> Vec<u32> {
    let every = every.max(2);
    let mut rng = Lcg::new(seed);
    let mut out = Vec::with_capacity(text.len() + text.len() / every + 1);
    let mut next = every / 2 + rng.below(every);
    let mut kind = 0;
    for (i, &c) in text.iter().enumerate() {
        if i == next {
            match kind % 3 {
                0 => out.push('#' as u32),
                1 => {
                    out.push('@' as u32);
                    out.push(c);
                }
                _ => {}
            }
            kind += 1;
            next = i + every / 2 + rng.below(every);
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn cat(parts: &[&[u32]]) -> Vec<u32> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

/// The tests' configuration (one round of the TLCS) with both whole-LCS rules off: the paper's
/// trustable region alone decides.
pub(crate) fn paper() -> super::VerifyConfig {
    super::VerifyConfig {
        max_iterations: 1,
        lcs_resemble_threshold: 1.0,
        weighted_lcs_resemble_threshold: 1.0,
        ..super::VerifyConfig::default()
    }
}
