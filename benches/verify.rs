//! Benchmarks of the verification stage (`neardup::verify`, seed 000 §4.3–4.4).
//!
//! Measures one `verify` call (units, filter skeleton, early reject, bounded Myers LCS, trustable
//! LCS, rates) with the default `VerifyConfig` (and, for `*_units`, `verify_units` on texts
//! already split into units):
//! - `near_dup_10k`: a 10,000-char text and a copy with ~5 % spread-out edits (one per 20 chars);
//! - `unrelated_10k`: two independent 10,000-char texts (rejected before the LCS, or by the
//!   Myers bound);
//! - `near_dup_100k`: as `near_dup_10k` with 100,000 chars;
//! - `near_dup_*_en_words`: English with one word edited per 20 words (~5 % of the units; the
//!   char-level edits above hit ~30 % of the words).
//!
//! Each in an English-like variant (`en`: pseudo-words, 10,000 chars = 10 KB of UTF-8) and a
//! Chinese one (`zh`: ~400 common characters, 10,000 chars = 20 KB of GBK, 30 KB of UTF-8).
//! Texts come from a fixed-seed LCG, so every run measures the same input.

use criterion::{criterion_group, criterion_main, Criterion};
use neardup::verify::{units, verify, verify_units, VerifyConfig};
use std::hint::black_box;

/// Knuth's MMIX linear congruential generator.
struct Lcg(u64);

impl Lcg {
    fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 16) % n.max(1) as u64) as usize
    }
}

const SYLLABLES: [&str; 40] = [
    "ka", "ro", "mi", "te", "su", "la", "ne", "po", "di", "ga", "vo", "ri", "ba", "ze", "lu", "fi",
    "ko", "sa", "me", "tu", "an", "el", "is", "or", "un", "th", "ch", "st", "pr", "qu", "wi", "yo",
    "he", "bo", "ca", "de", "fu", "gi", "ha", "jo",
];

const HANZI: &str =
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动\
同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量\
都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内\
数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党\
程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根\
论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增";

fn english(seed: u64, len: usize) -> Vec<char> {
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
    let mut out: Vec<char> = Vec::with_capacity(len + 16);
    let mut in_sentence = 0;
    while out.len() < len {
        out.extend(vocab[rng.below(vocab.len())].chars());
        in_sentence += 1;
        if in_sentence > 8 + rng.below(12) {
            out.extend(". ".chars());
            in_sentence = 0;
        } else {
            out.push(' ');
        }
    }
    out.truncate(len);
    out
}

fn chinese(seed: u64, len: usize) -> Vec<char> {
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
    out
}

/// One substitution, insertion or deletion (in turn) every `every` chars on average.
fn spread_edits(text: &[char], every: usize, seed: u64) -> Vec<char> {
    let mut rng = Lcg::new(seed);
    let mut out = Vec::with_capacity(text.len() + text.len() / every + 1);
    let mut next = every / 2 + rng.below(every);
    let mut kind = 0;
    for (i, &c) in text.iter().enumerate() {
        if i == next {
            match kind % 3 {
                0 => out.push('#'),
                1 => {
                    out.push('@');
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

/// One word substituted, inserted or deleted (in turn) every `every` words on average.
fn spread_word_edits(text: &str, every: usize, seed: u64) -> String {
    let mut rng = Lcg::new(seed);
    let mut out: Vec<&str> = Vec::new();
    let mut next = every / 2 + rng.below(every);
    let mut kind = 0;
    for (i, w) in text.split(' ').enumerate() {
        if i == next {
            match kind % 3 {
                0 => out.push("zzz"),
                1 => {
                    out.push("qqq");
                    out.push(w);
                }
                _ => {}
            }
            kind += 1;
            next = i + every / 2 + rng.below(every);
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

fn s(c: &[char]) -> String {
    c.iter().collect()
}

fn bench(c: &mut Criterion) {
    let cfg = VerifyConfig::default();
    type Gen = fn(u64, usize) -> Vec<char>;
    let langs: [(&str, Gen); 2] = [("en", english), ("zh", chinese)];
    let mut group = c.benchmark_group("verify");
    for (lang, gen) in langs {
        // Same inputs as before units (char-level edits, one per 20 chars), through `verify`.
        let a = s(&gen(1, 10_000));
        let b = s(&spread_edits(&gen(1, 10_000), 20, 2));
        let v = verify(&a, &b, &cfg);
        eprintln!(
            "near_dup_10k_{lang}: similar={} r={:.3} units={}/{}",
            v.similar, v.resemble, v.len_a, v.len_b
        );
        group.bench_function(format!("near_dup_10k_{lang}"), |bench| {
            bench.iter(|| verify(black_box(&a), black_box(&b), &cfg))
        });
        let (ua, ub) = (units(&a), units(&b));
        group.bench_function(format!("near_dup_10k_{lang}_units"), |bench| {
            bench.iter(|| verify_units(black_box(&ua), black_box(&ub), &cfg))
        });
        if lang == "en" {
            // ~5 % of the words edited (one per 20 words): the unit-level analogue.
            let w = spread_word_edits(&a, 20, 2);
            let v = verify(&a, &w, &cfg);
            assert!(v.similar);
            eprintln!("near_dup_10k_en_words: r={:.3}", v.resemble);
            group.bench_function("near_dup_10k_en_words", |bench| {
                bench.iter(|| verify(black_box(&a), black_box(&w), &cfg))
            });
        }

        let u = s(&gen(3, 10_000));
        let v = verify(&a, &u, &cfg);
        assert!(!v.similar);
        eprintln!(
            "unrelated_10k_{lang}: early_reject={} bound_exceeded={} skeletons={}/{}",
            v.early_reject, v.bound_exceeded, v.skeleton_a, v.skeleton_b
        );
        group.bench_function(format!("unrelated_10k_{lang}"), |bench| {
            bench.iter(|| verify(black_box(&a), black_box(&u), &cfg))
        });

        let a = s(&gen(4, 100_000));
        let b = s(&spread_edits(&gen(4, 100_000), 20, 5));
        let v = verify(&a, &b, &cfg);
        eprintln!(
            "near_dup_100k_{lang}: similar={} r={:.3}",
            v.similar, v.resemble
        );
        group.bench_function(format!("near_dup_100k_{lang}"), |bench| {
            bench.iter(|| verify(black_box(&a), black_box(&b), &cfg))
        });
        if lang == "en" {
            let w = spread_word_edits(&a, 20, 5);
            assert!(verify(&a, &w, &cfg).similar);
            group.bench_function("near_dup_100k_en_words", |bench| {
                bench.iter(|| verify(black_box(&a), black_box(&w), &cfg))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
