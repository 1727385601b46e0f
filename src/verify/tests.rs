//! Tests of the whole verification stage (unit tests and property tests).

use super::testgen::{cat, chinese, en, english, paper, spread_edits, zh};
use super::*;
use proptest::prelude::*;

/// The paper's main algorithm: one TLCS round (the default iterates; iteration tests say so).
fn cfg() -> VerifyConfig {
    VerifyConfig {
        max_iterations: 1,
        ..VerifyConfig::default()
    }
}

/// `"abc"` → `"a b c"`: one unit per char of `s`.
fn spaced(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[test]
fn identical_texts() {
    for t in [english(1, 3000), chinese(2, 3000)] {
        let u = units(&t);
        assert_eq!(u.len(), 3000);
        let v = verify_units(&u, &u, &cfg());
        assert_eq!(v.resemble, 1.0);
        assert_eq!(v.contain, 1.0);
        assert!(v.similar);
        assert_eq!(v.region, Some((0, 3000)));
        assert_eq!(
            (v.skeleton_a, v.skeleton_b, v.lcs, v.tlcs),
            (3000, 3000, 3000, 3000)
        );
        // The &str entry point gives the same.
        assert_eq!(verify(&t, &t, &cfg()), v);
        let spans = unit_spans(&t);
        assert_eq!((spans[0].0, spans[2999].1), (0, t.chars().count()));
    }
}

#[test]
fn empty_and_short_texts() {
    let v = verify("", "", &cfg());
    assert!(!v.similar && v.early_reject);
    assert_eq!((v.resemble, v.contain), (0.0, 0.0));
    let v = verify("", "some text here", &cfg());
    assert!(!v.similar && v.early_reject);
    let v = verify("   ", "   ", &cfg());
    assert!(!v.similar && v.early_reject);
    let v = verify("abc", "abc", &cfg());
    assert!(v.similar);
    assert_eq!(v.resemble, 1.0);
    let v = verify("x", "X", &cfg());
    assert_eq!(v.resemble, 1.0);
    let v = verify("abc", "xyz", &cfg());
    assert!(!v.similar);
    // One word is one unit: a typo makes it a different unit.
    let v = verify("abcdefghijklmnopqrst", "abcdefghijklmnopqrs", &cfg());
    assert!(!v.similar);
    // A text shorter than a TLCS block found verbatim inside a longer one: its LCS is there,
    // but no block of the longer text is ≥ 90 % LCS, so there is no trustable region.
    let v = verify("中文字", "这是一段很长的中文字符文本", &cfg());
    assert_eq!(v.lcs, 3);
    assert_eq!(v.contain, 0.0);
    assert_eq!(v.located_contain, 0.0); // shorter than a block: not measured in chars either
    assert!(!v.similar);
    // Within a one-block text, 90 % shared is enough.
    let v = verify(&spaced("abcdefghij"), &spaced("abcdefghi"), &cfg());
    assert!(v.similar && v.contain == 1.0, "{v:?}");
    assert_eq!(v.region, Some((0, 10)));
}

#[test]
fn case_and_spacing_do_not_matter() {
    let t = english(3, 500);
    let u = t.to_uppercase().replace(' ', "  \n");
    let v = verify(&t, &u, &cfg());
    assert_eq!((v.resemble, v.tlcs), (1.0, 500));
}

#[test]
fn near_duplicate_with_spread_edits_is_similar() {
    // ~5 % of the units edited (one edit per 20 units, at least 10 apart).
    for t in [en(11, 4000), zh(12, 4000)] {
        let u = spread_edits(&t, 20, 99);
        let v = verify_units(&t, &u, &cfg());
        assert!(v.similar, "{v:?}");
        assert!(v.resemble > 0.85, "{v:?}");
        assert!(!v.early_reject && !v.bound_exceeded);
    }
}

#[test]
fn excerpt_is_similar_by_contain() {
    for t in [en(21, 4000), zh(22, 4000)] {
        let half = &t[..2000];
        let v = verify_units(&t, half, &cfg());
        assert!(v.similar, "{v:?}");
        assert!(v.contain >= 0.7, "{v:?}");
        assert_eq!(v.region_side, Side::A);
        // A 20 % excerpt: r < 0.28, similar by containment only.
        let fifth = &t[1000..1800];
        let v = verify_units(fifth, &t, &cfg());
        assert!(v.resemble < 0.28 && v.contain >= 0.7 && v.similar, "{v:?}");
        assert_eq!(v.region_side, Side::B);
    }
}

/// A text found whole inside a container that carries other content between its paragraphs (a
/// rendering's code blocks, sections added in a later release): every long stretch of the
/// container is a third foreign, over θ, so the container's curve trusts one paragraph or two;
/// the shorter text's own curve is flat and trusts all of it ("Both curves").
#[test]
fn contained_text_with_insertions_in_the_container() {
    for (body, gen, para, extra) in [
        (
            en(61, 600),
            en as fn(u64, usize) -> Vec<u32>,
            60usize,
            30usize,
        ),
        (zh(62, 3000), zh as fn(u64, usize) -> Vec<u32>, 300, 150),
    ] {
        let mut container = Vec::new();
        for (i, p) in body.chunks(para).enumerate() {
            container.extend_from_slice(p);
            container.extend(gen(700 + i as u64, extra));
        }
        // The trustable region alone: the whole LCS (r = 0.67) would make the pair similar.
        let longer_only = VerifyConfig {
            shorter_side: false,
            ..paper()
        };
        let v = verify_units(&container, &body, &longer_only);
        assert!(!v.similar && v.contain < 0.5, "{v:?}");
        assert_eq!(v.tlcs_shorter, 0);
        let v = verify_units(&container, &body, &cfg());
        assert!(v.similar && v.contain > 0.95, "{v:?}");
        assert_eq!(v.tlcs, v.tlcs_shorter);
        assert_eq!(v.region_side, Side::A);
        assert_eq!(v.region_shorter, Some((0, body.len())));
        // Symmetric.
        let w = verify_units(&body, &container, &cfg());
        assert_eq!(
            (w.resemble, w.contain, w.similar),
            (v.resemble, v.contain, v.similar)
        );
    }
}

/// On the shorter text's curve a site template shared by unrelated pages still sits at its two
/// ends, outside any centred region, so it does not make them similar.
#[test]
fn shared_template_not_trusted_on_the_shorter_curve_either() {
    let header = en(71, 80);
    let footer = en(72, 80);
    let a = cat(&[&header, &en(73, 900), &footer]);
    let b = cat(&[&header, &en(74, 300), &footer]);
    let v = verify_units(&a, &b, &cfg());
    assert!(!v.similar, "{v:?}");
    assert!(v.tlcs_shorter <= 100, "{v:?}");
}

/// A text made of one paragraph repeated has no window unique in it, so nothing says where it sits
/// in a long container: the whole container is compared, and containment is found.
#[test]
fn repeated_text_inside_a_long_one_is_found_without_a_located_window() {
    let p = en(81, 400);
    let b = cat(&[&p, &p, &p]);
    let a = cat(&[&en(82, 5_000), &b, &en(83, 5_000)]);
    let v = verify_units(&a, &b, &cfg());
    assert!(v.similar && v.contain > 0.9, "{v:?}");
    assert_eq!(v.window, None);
}

/// A text copied in pieces with other content between them, into a text so long that only
/// containment can make them similar: the located window covers every piece (up to
/// `WINDOW_MAX_FACTOR` times the text's length), so adding filler between the pieces does not
/// change the verdict.
#[test]
fn pieces_spread_over_a_long_text_stay_in_the_located_window() {
    let b = en(84, 1_000);
    for filler in [300usize, 700, 900] {
        let mut a = en(85, 200);
        for (i, piece) in b.chunks(250).enumerate() {
            a.extend_from_slice(piece);
            a.extend(en(86 + i as u64, filler));
        }
        let v = verify_units(&a, &b, &cfg());
        assert!(v.similar && v.contain > 0.9, "filler {filler}: {v:?}");
        let w = verify_units(&b, &a, &cfg());
        assert_eq!((w.resemble, w.contain), (v.resemble, v.contain));
    }
}

#[test]
fn shared_template_different_bodies_not_similar() {
    // Seed 000 §4.1/§4.4's motivating case: same site template, different articles.
    let header = en(31, 60);
    let footer = en(32, 60);
    let (x, y) = (en(33, 350), en(34, 350));
    let a = cat(&[&header, &x, &footer]);
    let b = cat(&[&header, &y, &footer]);
    let v = verify_units(&a, &b, &cfg());
    assert!(!v.similar, "{v:?}");
    let full = verify_units(
        &a,
        &b,
        &VerifyConfig {
            d_bound: false,
            ..cfg()
        },
    );
    assert!(!full.similar && full.tlcs <= 80, "{full:?}");

    // With a larger template (900 chars each end), even the LCS of the skeletons says similar;
    // TLCS does not (it keeps the header or the footer, not both).
    let header = zh(35, 900);
    let footer = zh(36, 900);
    let (x, y) = (zh(37, 2000), zh(38, 2000));
    let a = cat(&[&header, &x, &footer]);
    let b = cat(&[&header, &y, &footer]);
    let v = verify_units(&a, &b, &cfg());
    let (r_lcs, _) = rates(v.lcs, a.len(), b.len());
    assert!(r_lcs >= 0.28, "skeleton LCS r = {r_lcs}, {v:?}");
    assert!(!v.similar, "{v:?}");
    assert!(v.tlcs <= 1000, "{v:?}");
    // The plain LCS of the pages says "similar": unrelated bodies over one alphabet share a
    // long scattered subsequence. The skeleton removes that.
    let raw = myers_lcs(&a, &b, None).map(|al| al.len()).unwrap_or(0);
    assert!(rates(raw, a.len(), b.len()).0 >= 0.28);
    // Iterating does not re-admit the other end of the template: the first region (the header)
    // does not hold the centre of A, so no further round runs.
    let iter = VerifyConfig {
        max_iterations: 4,
        ..cfg()
    };
    let it = verify_units(&a, &b, &iter);
    assert!(!it.similar && it.rounds == 1, "{it:?}");
}

#[test]
fn near_duplicates_on_different_sites() {
    // Same article, different templates: TLCS finds the article.
    for (body, t1, t2, t3, t4) in [
        (
            zh(41, 2500),
            zh(42, 300),
            zh(43, 200),
            zh(44, 150),
            zh(45, 400),
        ),
        (en(41, 500), en(42, 60), en(43, 40), en(44, 30), en(45, 80)),
    ] {
        let edited = spread_edits(&body, 25, 5);
        let a = cat(&[&t1, &body, &t2]);
        let b = cat(&[&t3, &edited, &t4]);
        let v = verify_units(&a, &b, &cfg());
        assert!(v.similar, "{v:?}");
        assert!(v.resemble > 0.6, "{v:?}");
    }
}

#[test]
fn reordered_paragraphs_found_by_iteration() {
    let p: Vec<Vec<u32>> = (0..4).map(|i| zh(50 + i, 500)).collect();
    let a = cat(&[&p[0], &p[1], &p[2], &p[3]]);
    let b = cat(&[&p[3], &p[2], &p[1], &p[0]]);
    let once = verify_units(&a, &b, &cfg());
    assert!(!once.similar, "{once:?}");
    let iter = VerifyConfig {
        max_iterations: 4,
        ..cfg()
    };
    let v = verify_units(&a, &b, &iter);
    assert!(v.similar, "{v:?}");
    assert_eq!(v.rounds, 4);
    // Each extended region may swallow up to θ of a neighbouring paragraph, which the next
    // round then lacks.
    assert!(v.tlcs >= 1600, "{v:?}");
    assert_eq!(v.regions.len(), 4);
    let strict = verify_units(
        &a,
        &b,
        &VerifyConfig {
            theta: 0.10,
            ..iter.clone()
        },
    );
    assert!(strict.tlcs >= 1700, "{strict:?}");

    // English paragraphs, two swapped: similar without iteration already (the moved paragraph
    // is a quarter of the text), and iteration finds the rest.
    let p: Vec<Vec<u32>> = (0..4).map(|i| en(60 + i, 100)).collect();
    let a = cat(&[&p[0], &p[1], &p[2], &p[3]]);
    let b = cat(&[&p[0], &p[2], &p[1], &p[3]]);
    let once = verify_units(&a, &b, &cfg());
    let v = verify_units(&a, &b, &iter);
    assert!(once.similar && v.similar);
    assert!(v.tlcs > once.tlcs, "{once:?} {v:?}");
    assert!(v.rounds >= 2, "{v:?}");
}

#[test]
fn thresholds_are_inclusive() {
    let c = cfg();
    // r = 7 / (16 + 16 − 7) = 7/25 = 0.28 exactly as f64; c = 7/16 < 0.7.
    let (r, k) = rates(7, 16, 16);
    assert_eq!(r, 0.28);
    assert!(k < 0.7 && is_similar(r, k, &c));
    let (r, k) = rates(6, 16, 16);
    assert!(!is_similar(r, k, &c));
    // c = 7/10 = 0.7 exactly; r = 7/103 < 0.28.
    let (r, k) = rates(7, 100, 10);
    assert_eq!(k, 0.7);
    assert!(r < 0.28 && is_similar(r, k, &c));
    let (r, k) = rates(6, 100, 10);
    assert!(!is_similar(r, k, &c));
    assert_eq!(min_common_len(16, 16, &c), Some(7));
    assert_eq!(min_common_len(100, 10, &c), Some(7));
}

#[test]
fn thresholds_are_inclusive_end_to_end() {
    // Window 4, blocks of 7: the shared 7-unit prefix is the one valid base region. Single
    // letters are word units (alphabetic parameters), CJK chars char units (CJK parameters).
    let c = VerifyConfig {
        window: 4,
        window_alphabetic: 4,
        block_size: 7,
        block_size_alphabetic: 7,
        ..cfg()
    };
    let cases = [
        spaced("abcdefgqrstuvwxy"),
        spaced("abcdefg012345678"),
        spaced("abcdefqrstuvwxyz"),
        spaced("abcdef0123456789"),
        spaced("abcdefg0123456789012345678901234567890123456789"),
        spaced("abcdefgXYZ"),
        spaced("abcdefXYZW"),
    ];
    let zh_cases = [
        "的一是在不了有和人这中大为上个国",
        "的一是在不了有我以要他时来用们生",
        "的一是在不了和人这中大为上个国地",
        "的一是在不了我以要他时来用们生到",
        "的一是在不了有到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所",
        "的一是在不了有天地人",
        "的一是在不了天地人山",
    ];
    for t in [
        &cases.map(|s| s.to_string()),
        &zh_cases.map(|s| s.to_string()),
    ] {
        // Resemble boundary: |A| = |B| = 16, TLCS = 7 → r = 0.28.
        let v = verify(&t[0], &t[1], &c);
        assert_eq!((v.len_a, v.tlcs, v.resemble), (16, 7, 0.28), "{v:?}");
        assert!(v.similar, "{v:?}");
        let v = verify(&t[2], &t[3], &c);
        assert!(v.tlcs < 7 && !v.similar, "{v:?}");
        // Contain boundary: |B| = 10, TLCS = 7 → c = 0.7.
        let v = verify(&t[4], &t[5], &c);
        assert_eq!((v.tlcs, v.contain), (7, 0.7), "{v:?}");
        assert!(v.similar, "{v:?}");
        let v = verify(&t[4], &t[6], &c);
        assert!(!v.similar, "{v:?}");
    }
}

#[test]
fn script_selects_parameters() {
    let c = cfg();
    let p = c.params_for(&units("中文字符 and"));
    assert_eq!((p.window, p.block_size, p.min_gain), (8, 64, 64));
    let p = c.params_for(&units("中文 and more words"));
    assert_eq!((p.window, p.block_size, p.min_gain), (3, 12, 12));
    let p = c.params_for(&units("ひらがなとカタカナ"));
    assert_eq!(p.window, 8);
}

#[test]
fn min_common_len_matches_formula() {
    let c = cfg();
    for (la, lb) in [(1000, 1000), (5000, 1200), (37, 91), (1, 1), (2, 100_000)] {
        let f = |x: f64| x.ceil() as usize;
        let by_r = f(0.28 * (la + lb) as f64 / 1.28);
        let by_c = f(0.7 * la.min(lb) as f64);
        let expect = by_r.min(by_c);
        let got = min_common_len(la, lb, &c);
        // The formula's float may round up across an integer; allow that one-off.
        assert!(
            got == Some(expect) || got == Some(expect.saturating_sub(1)),
            "{la} {lb}: {got:?} vs {expect}"
        );
    }
    assert_eq!(min_common_len(0, 10, &c), None);
    let never = VerifyConfig {
        resemble_threshold: 2.0,
        contain_threshold: 2.0,
        ..cfg()
    };
    assert_eq!(min_common_len(10, 10, &never), None);
}

#[test]
fn unrelated_texts_rejected_early_or_by_bound() {
    let v = verify_units(&zh(70, 10_000), &zh(71, 10_000), &cfg());
    assert!(!v.similar && v.early_reject, "{v:?}");
    let v = verify_units(&en(72, 10_000), &en(73, 10_000), &cfg());
    assert!(!v.similar && (v.early_reject || v.bound_exceeded), "{v:?}");
}

#[test]
fn bound_is_exercised() {
    // Shared paragraphs in a changed order, some replaced: the skeletons are long but their LCS
    // is short, so some pairs hit the bound; the unbounded run must agree on the verdict.
    let unbounded = VerifyConfig {
        d_bound: false,
        ..cfg()
    };
    let mut hits = 0;
    for seed in 0..12u64 {
        for gen in [en, zh] {
            let p: Vec<Vec<u32>> = (0..5).map(|i| gen(100 + 10 * seed + i, 120)).collect();
            let fresh = gen(300 + seed, 120);
            let a = cat(&[&p[0], &p[1], &p[2], &p[3], &p[4]]);
            let order: Vec<&[u32]> = match seed % 4 {
                0 => vec![&p[4], &p[3], &p[2], &p[1], &p[0]],
                1 => vec![&p[1], &p[0], &p[3], &p[2], &fresh],
                2 => vec![&p[2], &p[3], &p[4], &p[0], &p[1]],
                _ => vec![&p[0], &fresh, &p[4], &p[2], &p[3]],
            };
            let b = cat(&order);
            let v = verify_units(&a, &b, &cfg());
            let w = verify_units(&a, &b, &unbounded);
            assert_eq!(v.similar, w.similar, "{v:?} {w:?}");
            hits += usize::from(v.bound_exceeded);
        }
    }
    assert!(hits > 0);
}

#[test]
fn config_defaults() {
    let c = VerifyConfig::default();
    assert_eq!((c.window, c.block_size, c.max_iterations), (8, 64, 2));
    assert_eq!((c.window_alphabetic, c.block_size_alphabetic), (3, 12));
    assert_eq!(
        (c.iteration_min_gain, c.iteration_min_gain_alphabetic),
        (64, 12)
    );
    assert_eq!(
        (c.theta, c.resemble_threshold, c.contain_threshold),
        (0.20, 0.28, 0.70)
    );
    assert!(c.validate().is_ok());
    let bad = VerifyConfig { theta: 2.0, ..c };
    assert!(matches!(
        bad.validate(),
        Err(crate::Error::InvalidArgument(_))
    ));
}

#[test]
fn evenly_spread_substitutions_are_trusted_with_the_default_theta() {
    // Two chars of every 14 replaced (a simplified against a traditional edition after
    // folding: other words for the same thing, every few chars): 14 % of each text is outside
    // the LCS everywhere, so no region has slope ≤ 0.10, while the default θ = 0.20 trusts the
    // whole text.
    let a = zh(95, 7_000);
    let b: Vec<u32> = a
        .iter()
        .enumerate()
        .map(|(i, &u)| if i % 14 < 2 { u + 0x100 } else { u })
        .collect();
    let v = verify_units(&a, &b, &cfg());
    assert!(v.similar && v.resemble > 0.7, "{v:?}");
    assert!(v.lcs as f64 >= 0.85 * 7_000.0, "{v:?}");
    // The trustable region alone: the whole LCS would make the pair similar.
    let strict = VerifyConfig {
        theta: 0.10,
        ..paper()
    };
    let w = verify_units(&a, &b, &strict);
    // (At most a stray block at an end, where a partial block happens to hold 10 %.)
    assert!(!w.similar && w.tlcs < 100, "{w:?}");
    // Words: one word in seven replaced, 14 % again.
    let a = en(96, 3_000);
    let b: Vec<u32> = a
        .iter()
        .enumerate()
        .map(|(i, &u)| if i % 7 == 3 { u ^ 1 } else { u })
        .collect();
    assert!(verify_units(&a, &b, &cfg()).similar);
    assert!(!verify_units(&a, &b, &strict).similar);
}

#[test]
fn chapter_of_a_long_text_is_verified_in_a_located_window() {
    // A 4,000-unit chapter, lightly edited, taken from a quarter into a 60,000-unit text (far
    // from its centre): only containment can make them similar (4,000 / 60,000 < 0.28), so
    // the TLCS is looked for in a window around the chapter.
    for gen in [en, zh] {
        let long = gen(80, 60_000);
        let chapter = spread_edits(&long[15_000..19_000], 40, 3);
        let v = verify_units(&long, &chapter, &cfg());
        assert!(v.similar && v.contain >= 0.9, "{v:?}");
        let (w0, w1) = v.window.unwrap_or_default();
        assert!(w0 <= 15_000 && 19_000 <= w1 && w1 - w0 < 10_000, "{v:?}");
        let (r0, r1) = v.region.unwrap_or_default();
        assert!(14_000 <= r0 && r1 <= 20_000, "{v:?}");
        // Symmetric, as always.
        let w = verify_units(&chapter, &long, &cfg());
        assert_eq!(
            (w.resemble, w.contain, w.similar, w.window, w.region_side),
            (v.resemble, v.contain, v.similar, v.window, Side::B)
        );
        // A chapter of another text is not found anywhere (wherever chance matches put the
        // window, or in the whole text when there are none).
        let other = gen(81, 4_000);
        let u = verify_units(&long, &other, &cfg());
        assert!(!u.similar, "{u:?}");
    }
    // A chapter repeated in the long text (a manual and its appendix): one copy is found.
    let ch = zh(82, 3_000);
    let long = cat(&[&zh(83, 20_000), &ch, &zh(84, 20_000), &ch, &zh(85, 5_000)]);
    let v = verify_units(&long, &ch, &cfg());
    assert!(v.similar && v.contain == 1.0, "{v:?}");
}

#[test]
fn resemble_reachable_means_no_window() {
    // |b| / |a| = 1/3 ≥ 0.28: a TLCS as long as b could reach the resemble threshold, so the
    // whole of a is used (the paper's algorithm, unchanged).
    let a = zh(86, 9_000);
    let v = verify_units(&a, &a[3_000..6_000], &cfg());
    assert!(v.similar && v.window.is_none(), "{v:?}");
}

#[test]
fn long_pair_past_the_work_budget_is_approximated() {
    // Blocks of 40 units swapped pairwise: every window survives the skeleton, but the
    // skeletons' edit distance is about their length, far past Myers' work budget, so the LCS
    // comes from the anchored approximation — almost the exact one.
    let a = zh(90, 8_000);
    let b: Vec<u32> = a
        .chunks(80)
        .flat_map(|c| {
            let (x, y) = c.split_at(c.len().min(40));
            y.iter().chain(x).copied().collect::<Vec<u32>>()
        })
        .collect();
    let v = verify_units(&a, &b, &cfg());
    assert!(v.approximate && !v.similar, "{v:?}");
    let (sa, sb) = skeleton(&a, &b, 8);
    let exact = myers_lcs(&sa.units, &sb.units, None).map_or(0, |al| al.len());
    assert!(
        v.lcs <= exact && v.lcs as f64 >= 0.97 * exact as f64,
        "{} {exact}",
        v.lcs
    );
    // Near duplicates stay exact, even long ones.
    let a = zh(91, 100_000);
    let c = spread_edits(&a, 16, 4);
    let v = verify_units(&a, &c, &cfg());
    assert!(!v.approximate && v.similar, "{v:?}");
}

// ---------------------------------------------------------------- property tests

/// A unit sequence over a random alphabet (small ones give long shared runs): code points of
/// letters (alphabetic parameters), CJK chars (CJK parameters), word units, or a mix.
fn text(max: usize) -> impl Strategy<Value = Vec<u32>> {
    let cp = |s: &str| s.chars().map(|c| c as u32).collect::<Vec<u32>>();
    let alphabets: Vec<Vec<u32>> = vec![
        cp("ab"),
        cp("abcdefgh,"),
        cp("的一是在不了有和人这中大为上个国"),
        cp("天地"),
        (0..26).map(|i| WORD_UNIT_MIN + 7919 * i).collect(),
        cp("abcdefghijklmnopqrstuvwxyz天地人"),
    ];
    prop::sample::select(alphabets)
        .prop_flat_map(move |alpha| prop::collection::vec(prop::sample::select(alpha), 0..max))
}

/// A pair: the second is the first with random edits and block moves, or a fresh text.
fn pair(max: usize) -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    (
        text(max),
        text(max),
        prop::collection::vec((any::<prop::sample::Index>(), 0u8..5, any::<u32>()), 0..30),
        0u8..4,
    )
        .prop_map(|(a, fresh, edits, mode)| {
            if mode == 0 {
                return (a, fresh);
            }
            let mut b = a.clone();
            for (at, op, c) in edits {
                if b.is_empty() {
                    b.push(c);
                    continue;
                }
                let i = at.index(b.len());
                match op {
                    0 => b[i] = c,
                    1 => b.insert(i, c),
                    2 => {
                        b.remove(i);
                    }
                    3 => b.truncate(i.max(1)),
                    _ => {
                        let j = (i + 40).min(b.len());
                        let block: Vec<u32> = b.drain(i..j).collect();
                        b.extend(block);
                    }
                }
            }
            (a, b)
        })
}

fn any_cfg() -> impl Strategy<Value = VerifyConfig> {
    (
        (1usize..12, 1usize..12),
        0.0f64..0.3,
        0.05f64..0.6,
        0.3f64..1.0,
        (1usize..80, 1usize..30),
        1usize..5,
        (1usize..40, 1usize..20),
        any::<(bool, bool)>(),
    )
        .prop_map(
            |(
                (window, window_alphabetic),
                theta,
                rt,
                ct,
                (block_size, block_size_alphabetic),
                max_iterations,
                (iteration_min_gain, iteration_min_gain_alphabetic),
                (shorter_side, refill_gaps),
            )| {
                VerifyConfig {
                    window,
                    window_alphabetic,
                    theta,
                    resemble_threshold: rt,
                    contain_threshold: ct,
                    lcs_resemble_threshold: (rt + 0.2).min(1.0),
                    weighted_lcs_resemble_threshold: (rt + 0.2).min(1.0),
                    block_size,
                    block_size_alphabetic,
                    max_iterations,
                    iteration_min_gain,
                    iteration_min_gain_alphabetic,
                    d_bound: true,
                    shorter_side,
                    refill_gaps,
                    located_contain_threshold: (ct + 0.1).min(1.0),
                    located_contain_min_lcs: 0.5,
                }
            },
        )
}

/// Strings of words, CJK chars, punctuation and spaces in both cases.
fn words(max: usize) -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "ab", "AB", "c", "cd", "的", "一", "是", ",", ".", " ", "  ", " x ", "é", "É",
    ]);
    prop::collection::vec(pieces, 0..max).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn symmetric_and_in_range((a, b) in pair(600), c in any_cfg()) {
        let x = verify_units(&a, &b, &c);
        let y = verify_units(&b, &a, &c);
        prop_assert_eq!(x.resemble, y.resemble);
        prop_assert_eq!(x.contain, y.contain);
        prop_assert_eq!(x.similar, y.similar);
        prop_assert_eq!((x.len_a, x.len_b), (y.len_b, y.len_a));
        prop_assert_eq!((x.skeleton_a, x.skeleton_b), (y.skeleton_b, y.skeleton_a));
        for v in [&x, &y] {
            prop_assert!((0.0..=1.0).contains(&v.resemble));
            prop_assert!((0.0..=1.0).contains(&v.contain));
            let cap = if c.refill_gaps { v.len_a.min(v.len_b) } else { v.skeleton_a.min(v.skeleton_b) }; // refill.rs
            prop_assert!(v.tlcs <= cap);
            prop_assert!(v.rounds > 1 || v.tlcs <= v.lcs);
        }
    }

    #[test]
    fn str_entry_point_agrees_with_units(a in words(300), b in words(300), c in any_cfg()) {
        let x = verify(&a, &b, &c);
        let y = verify_units_texts(&units(&a), &a, &b, &c);
        prop_assert_eq!(&x, &y);
        prop_assert_eq!(unit_spans(&a).len(), x.len_a);
        let z = verify(&b, &a, &c);
        prop_assert_eq!((x.resemble, x.contain, x.similar), (z.resemble, z.contain, z.similar));
    }

    #[test]
    fn self_similarity_is_one(a in text(800), c in any_cfg()) {
        prop_assume!(!a.is_empty());
        let v = verify_units(&a, &a, &c);
        prop_assert_eq!(v.resemble, 1.0);
        prop_assert_eq!(v.contain, 1.0);
        prop_assert_eq!(v.tlcs, a.len());
        prop_assert_eq!(v.skeleton_a, a.len());
    }

    #[test]
    fn bound_never_changes_the_verdict((a, b) in pair(700), c in any_cfg()) {
        let bounded = verify_units(&a, &b, &c);
        let unbounded = verify_units(&a, &b, &VerifyConfig { d_bound: false, ..c });
        prop_assert!(!unbounded.bound_exceeded);
        prop_assert_eq!(bounded.similar, unbounded.similar);
        if !bounded.bound_exceeded {
            prop_assert_eq!(bounded, unbounded);
        }
    }

    #[test]
    fn skeleton_of_identical_texts_is_whole(a in text(800), w in 1usize..20) {
        let (sa, sb) = skeleton(&a, &a, w);
        if a.len() >= w {
            prop_assert_eq!(&sa.units, &a);
            prop_assert_eq!(sa.offsets.len(), a.len());
        } else {
            prop_assert!(sa.is_empty());
        }
        prop_assert_eq!(sa, sb);
    }

    #[test]
    fn skeleton_is_a_subsequence((a, b) in pair(400), w in 1usize..12) {
        let (sa, sb) = skeleton(&a, &b, w);
        for (sk, t) in [(&sa, &a), (&sb, &b)] {
            prop_assert!(sk.offsets.windows(2).all(|p| p[0] < p[1]));
            for (c, &o) in sk.units.iter().zip(&sk.offsets) {
                prop_assert_eq!(Some(c), t.get(o as usize));
            }
        }
    }

    #[test]
    fn never_panics_on_any_str(a in ".{0,200}", b in ".{0,200}", c in any_cfg()) {
        let v = verify(&a, &b, &c);
        prop_assert!((0.0..=1.0).contains(&v.resemble));
        prop_assert!(v.regions.iter().all(|&(s, e)| s < e && e <= v.len_a.max(v.len_b)));
    }
}

#[test]
fn edits_spread_through_the_page_are_similar_by_the_whole_lcs() {
    // Two words of every seven replaced: 29 % of each text outside the LCS everywhere, so no
    // stretch longer than a few blocks has slope ≤ θ = 0.20; the whole LCS gives r = 5/9.
    let a = en(97, 3_000);
    let b: Vec<u32> = a
        .iter()
        .enumerate()
        .map(|(i, &u)| if i % 7 < 2 { u ^ 0x5a5a_0000 } else { u })
        .collect();
    let v = verify_units(&a, &b, &paper());
    assert!(!v.similar && v.resemble < 0.28, "{v:?}");
    let (r_lcs, _) = rates(v.lcs, v.len_a, v.len_b);
    assert!(r_lcs > 0.44, "{v:?}");
    let w = verify_units(&a, &b, &cfg());
    assert!(w.similar, "{w:?}");
    assert_eq!((w.lcs, w.tlcs), (v.lcs, v.tlcs));
    // Never looser than the resemble threshold, and validated like the others.
    let strict = VerifyConfig {
        resemble_threshold: 0.9,
        ..cfg()
    };
    assert!(!verify_units(&a, &b, &strict).similar);
    assert!(!lcs_similar(50, 100, 100, &strict) && lcs_similar(95, 100, 100, &strict));
    assert!(VerifyConfig {
        lcs_resemble_threshold: 1.5,
        ..cfg()
    }
    .validate()
    .is_err());
}
