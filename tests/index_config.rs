//! An index refuses to open with incompatible stored parameters.
use neardup::{Error, Index, IndexOptions, RepresentativePolicy, SignatureConfig};

#[test]
fn configuration_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Index::open(dir.path(), IndexOptions::default()).unwrap());
    let other = IndexOptions {
        signature: SignatureConfig {
            groups: 5,
            ..SignatureConfig::default()
        },
        ..IndexOptions::default()
    };
    match Index::open(dir.path(), other) {
        Err(Error::IncompatibleConfig {
            field,
            stored,
            requested,
        }) => {
            assert_eq!(field, "signature.groups");
            assert_eq!(stored, "7");
            assert_eq!(requested, "5");
        }
        other => panic!("expected IncompatibleConfig, got {:?}", other.err()),
    }
    let policy = IndexOptions {
        representative: RepresentativePolicy::LongestText,
        ..IndexOptions::default()
    };
    assert!(matches!(
        Index::open(dir.path(), policy),
        Err(Error::IncompatibleConfig { .. })
    ));
    // Verification thresholds may change between openings (they are not stored), so an index
    // built with the former default θ = 0.10 opens with today's default and back.
    let mut v = IndexOptions::default();
    v.verify.resemble_threshold = 0.5;
    v.verify.theta = 0.10;
    assert!(Index::open(dir.path(), v).is_ok());
}

#[test]
fn missing_index_without_create_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let opts = IndexOptions {
        create_if_missing: false,
        ..IndexOptions::default()
    };
    assert!(matches!(
        Index::open(dir.path().join("none"), opts),
        Err(Error::InvalidArgument(_))
    ));
}

/// Traditional characters are folded in Chinese text only (`fold_only_chinese`, the default): a
/// Japanese page keeps its kanji. An index made before the option (its stored configuration does
/// not name it) keeps folding every text, whatever the options of a later open ask.
#[test]
fn japanese_text_keeps_its_kanji_and_old_indexes_keep_their_folding() {
    use neardup::{Content, Page, Signatures};
    let ja = "<html><body><article><p>新しい販売機能について説明します。この機能は、\
              店舗での販売と在庫の管理を一つの画面で行えるようにするものです。</p></article></body></html>";
    let zh = "<html><body><article><p>這個軟體的新功能說明：使用者介面與檔案管理都已更新，\
              請參考下面的說明文件。</p></article></body></html>";
    // The normalized text a page is stored under, found by its content hash.
    let sig = |html: &str, only_chinese: bool| {
        let cfg = SignatureConfig {
            fold_only_chinese: only_chinese,
            ..SignatureConfig::default()
        };
        Signatures::compute(Content::Html(html.as_bytes()), &cfg).unwrap()
    };
    let stored_as = |ix: &Index, key: &str, html: &str| -> bool {
        ix.insert(&Page {
            key,
            host: "h",
            time: 0,
            content: Content::Html(html.as_bytes()),
        })
        .unwrap();
        let hash = ix.get(key).unwrap().unwrap().content_hash;
        assert!(hash == sig(html, true).content_hash || hash == sig(html, false).content_hash);
        hash == sig(html, true).content_hash
    };
    assert!(sig(ja, true).text.contains("販売機能"));
    assert!(sig(ja, false).text.contains("贩売"));
    assert_eq!(sig(zh, true).text, sig(zh, false).text);
    assert!(sig(zh, true).text.contains("这个软件"));

    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let ix = Index::open(&new, IndexOptions::default()).unwrap();
    assert!(stored_as(&ix, "ja", ja), "a new index keeps the kanji");
    drop(ix);
    let stored = Index::stored_config_json(&new).unwrap();
    assert!(stored.contains("\"fold_only_chinese\":true"), "{stored}");

    // As a build before the option made it: the stored configuration does not name it.
    let old = dir.path().join("old");
    let mut opts = IndexOptions::default();
    opts.signature.fold_only_chinese = false;
    drop(Index::open(&old, opts).unwrap());
    assert!(!Index::stored_config_json(&old)
        .unwrap()
        .contains("fold_only_chinese"));
    let ix = Index::open(&old, IndexOptions::default()).unwrap();
    assert!(
        !stored_as(&ix, "ja", ja),
        "an old index folds as it always did"
    );
    drop(ix);
    drop(Index::open_read_only(&old).unwrap());
}

/// Containment keys (issue #35): a short page whose clauses sit inside a long manual becomes a
/// candidate of the manual and verifies as contained in it; an index made before the keys
/// existed (its stored configuration names neither) still opens with the default options and
/// keys its pages as it always did.
#[test]
fn a_short_excerpt_of_a_long_manual_is_found_and_old_indexes_keep_their_keys() {
    use neardup::fingerprint::{containment_keys, sentence_digest};
    use neardup::{Content, Page};
    let sentences: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                "Setting number {i} of the manual changes a different part of the program here."
            )
        })
        .collect();
    let manual = sentences.join(" ");
    // A 12-sentence excerpt holding a unit the sampled keys pick (one in `sampled_keys` of the
    // digests, by the digest alone).
    let cfg = SignatureConfig::default();
    let params = neardup::fingerprint::SentenceParams {
        short_page_keys: false,
        ..cfg.sentence_params()
    };
    let sampled = |s: &str| !containment_keys(&[(sentence_digest(s), 0)], &params).is_empty();
    let at = (1000..2900)
        .find(|&i| sampled(sentences[i].trim_end_matches('.')))
        .expect("a sampled sentence");
    let excerpt = sentences[at - 5..at + 7].join(" ");
    let page = |key: &'static str, text: &'static str| Page {
        key,
        host: "docs.example",
        time: 0,
        content: Content::Text(text),
    };
    let manual: &'static str = Box::leak(manual.into_boxed_str());
    let excerpt: &'static str = Box::leak(excerpt.into_boxed_str());

    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let ix = Index::open(&new, IndexOptions::default()).unwrap();
    ix.insert(&page("manual", manual)).unwrap();
    let v = ix.insert(&page("chapter", excerpt)).unwrap();
    assert!(v.duplicate, "{v:?}");
    assert_eq!(v.similar_to.as_deref(), Some("manual"));
    assert!(ix.explain("manual", "chapter").unwrap().shared_clause_keys > 0);
    drop(ix);
    let stored = Index::stored_config_json(&new).unwrap();
    assert!(stored.contains("\"short_page_keys\":true"), "{stored}");
    assert!(stored.contains("\"sampled_keys\":16"), "{stored}");

    // As a build before the keys made it: the stored configuration names neither.
    let old = dir.path().join("old");
    let mut opts = IndexOptions::default();
    opts.signature.short_page_keys = false;
    opts.signature.sampled_keys = 0;
    let ix = Index::open(&old, opts).unwrap();
    ix.insert(&page("manual", manual)).unwrap();
    let before = ix.explain("manual", "manual").unwrap().a.clause_keys;
    drop(ix);
    let stored = Index::stored_config_json(&old).unwrap();
    assert!(!stored.contains("short_page_keys") && !stored.contains("sampled_keys"));
    let ix = Index::open(&old, IndexOptions::default()).unwrap();
    ix.insert(&page("chapter", excerpt)).unwrap();
    assert_eq!(
        ix.explain("manual", "manual").unwrap().a.clause_keys,
        before
    );
    let report = ix.check().unwrap();
    assert_eq!(report.problem_count, 0, "{:?}", report.problems);
    drop(ix);
    drop(Index::open_read_only(&old).unwrap());
}
