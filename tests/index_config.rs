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
