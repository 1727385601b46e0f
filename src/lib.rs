//! # neardup
//!
//! An embedded near-duplicate index for web pages. A crawler or search engine hands it every page;
//! neardup answers whether the page is a near duplicate of a page it already holds, of which
//! cluster, with what resemblance and containment, and keeps its clusters right as pages come and
//! go.
//!
//! The pipeline (see `SPEC.md` in the project's shared folder and the papers it cites):
//! page → [main text](text::extract) → [normalized text and sentences](text) →
//! [signatures](signature::Signatures) (sentence fingerprints, simhash, content hash) →
//! candidates → verification → verdict and cluster update.
//!
//! ```
//! use neardup::{Content, SignatureConfig, Signatures};
//!
//! let html = "<html><body><div class=content><p>Near-duplicate detection finds pages whose \
//!             main text is the same. It ignores navigation, ads and footers.</p></div></body></html>";
//! let sig = Signatures::compute(Content::Html(html.as_bytes()), &SignatureConfig::default())?;
//! assert_eq!(sig.sentences.len(), 2);
//! assert!(sig.text.starts_with("Near-duplicate detection"));
//! # Ok::<(), neardup::Error>(())
//! ```
//!
//! What neardup is not: a search index (it answers "which page is this a copy of", not queries by
//! words), nor a crawler. Limits: pages up to [`SignatureConfig::max_page_bytes`] (16 MiB by
//! default).

#![deny(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod error;
#[allow(unsafe_code)]
pub mod ffi;
pub mod fingerprint;
mod index;
pub mod merge;
pub mod methods;
pub mod options;
mod quiet;
pub mod signature;
mod storage;
pub mod text;
pub mod verify;

pub use error::{Error, Result};
pub use index::{
    dir_bytes, explain_pair, host_of, BatchMetrics, BatchOptions, BatchOrder, Changes, CheckReport,
    ChromeStats, ClusterInfo, Clusters, CompactReport, Deletion, ExplainedPage, Explanation, Index,
    InsertMetrics, Keys, Latency, Members, Metrics, Moved, NearDuplicate, NearOptions, OpMetrics,
    OrderScope, Page, Pages, PairStage, Record, Score, SourcedContent, SourcedPage, Stats,
    TextSource, Timing, Verdict,
};
pub use methods::{Features, Method, Side};
pub use options::{
    ChromeConfig, FrequentConfig, IndexOptions, RepresentativePolicy, SignatureConfig,
};
pub use signature::{extract_page, Content, Extracted, Signatures};
pub use storage::change::{Change, ChangeKind, PageChange};
pub use storage::codec::{ClusterId, DocId};
pub use verify::{Similarity, VerifyConfig};

/// The library's source id: 16 hex digits hashing the sources this build was made from (every
/// file under `src/`, `Cargo.toml` and the workspace's `Cargo.lock`; see `build.rs`). Two builds
/// with the same id run the same library code on the same dependencies, so they give the same
/// verdicts; two with different ids may not, whatever their version says. The command line
/// prints it in `neardup --version`, the Python package as `neardup.SOURCE_ID`: a comparison of
/// the two (or of any two builds) checks it first, so that a stale or foreign build is not taken
/// for a difference in the code (issue #34: a command line built from another branch "differed"
/// from `insert_many` on 158 of 20,000 pages).
pub const SOURCE_ID: &str = env!("NEARDUP_SOURCE_ID");
