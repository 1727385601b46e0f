//! The signature pipeline's promises (issue "Signature pipeline"): template independence, edit
//! locality, reorder invariance, simhash separation, and no panic on bad input.
mod common;
use common::*;
use neardup::fingerprint::hamming;
use neardup::{Content, Error, SignatureConfig, Signatures};

fn sig(html: &str) -> Signatures {
    Signatures::compute(Content::Html(html.as_bytes()), &SignatureConfig::default()).unwrap()
}

#[test]
fn same_body_under_different_templates_gives_same_text_and_fingerprints() {
    for seed in 0..6 {
        let body = if seed % 2 == 0 {
            article(seed, 8)
        } else {
            article_zh(seed, 8)
        };
        let sigs: Vec<Signatures> = (0..3).map(|t| sig(&html(t, "A title", &body))).collect();
        for s in &sigs[1..] {
            assert_eq!(s.text, sigs[0].text);
            assert_eq!(s.fingerprints, sigs[0].fingerprints);
            assert_eq!(s.simhash, sigs[0].simhash);
        }
        assert!(!sigs[0].fingerprints.is_empty());
    }
}

#[test]
fn reordering_paragraphs_keeps_the_fingerprint_set() {
    let body = article_zh(7, 9);
    let mut reordered = body.clone();
    reordered.swap(1, 6);
    reordered.swap(2, 8);
    assert_eq!(
        sig(&html(0, "t", &body)).fingerprints,
        sig(&html(1, "t", &reordered)).fingerprints
    );
}

#[test]
fn simhash_separates_near_duplicates_from_unrelated_pages() {
    let (mut near, mut far) = (0, 0);
    const N: u64 = 40;
    for seed in 0..N {
        let body = article_rich(1000 + seed, 12);
        let a = sig(&html(0, "t", &body)).simhash;
        let b = sig(&html(1, "t", &edited(&body, seed))).simhash;
        let c = sig(&html(0, "t", &article_rich(5000 + seed, 12))).simhash;
        near += u64::from(hamming(a, b) <= 3);
        far += u64::from(hamming(a, c) <= 3);
    }
    assert!(near >= N * 3 / 4, "near duplicates within 3: {near}/{N}");
    assert!(far <= 1, "unrelated within 3: {far}/{N}");
}

#[test]
fn bad_input_never_panics() {
    let cfg = SignatureConfig::default();
    // Invalid UTF-8.
    let s = Signatures::compute(
        Content::Html(b"<p>caf\xc3 \xff\xfe broken \x80 bytes</p>"),
        &cfg,
    )
    .unwrap();
    assert!(s.text.contains("broken"));
    // GBK declared.
    let (gbk, _, _) = encoding_rs::GBK
        .encode("<meta charset=gbk><p>这是一个用国标码编码的网页。内容很长很长。</p>");
    let s = Signatures::compute(Content::Html(&gbk), &cfg).unwrap();
    assert!(s.text.contains("国标码"));
    // Binary.
    let junk: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 & 0x0f)
        .collect();
    assert!(matches!(
        Signatures::compute(Content::Html(&junk), &cfg),
        Err(Error::BinaryPage { .. })
    ));
    // Empty.
    let s = Signatures::compute(Content::Html(b""), &cfg).unwrap();
    assert!(s.text.is_empty() && s.fingerprints.is_empty());
    // 10 MB page: handled, in bounded time.
    let big = format!("<html><body>{}</body></html>", (0..110_000).map(|i| format!("<p>Paragraph number {i} tells a longer story about the index and its many pages. And then it ends {i}!</p>")).collect::<String>());
    assert!(big.len() > 10_000_000 && big.len() < 16 << 20);
    let s = Signatures::compute(Content::Html(big.as_bytes()), &cfg).unwrap();
    assert!(!s.fingerprints.is_empty());
    // Over the limit.
    let small = SignatureConfig {
        max_page_bytes: 1000,
        ..SignatureConfig::default()
    };
    assert!(matches!(
        Signatures::compute(Content::Html(big.as_bytes()), &small),
        Err(Error::PageTooLarge { .. })
    ));
    // Deeply nested and unclosed markup.
    let nested = "<div><span><b>".repeat(50_000) + "text";
    assert!(Signatures::compute(Content::Html(nested.as_bytes()), &cfg).is_ok());
}
