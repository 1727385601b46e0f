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
