//! The public values of the index: what a caller hands in ([`Page`]) and what it gets back
//! (verdicts, deletions, records, statistics).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::signature::Content;
use crate::storage::codec::{ClusterId, DocId};

/// A page handed to the index.
#[derive(Clone, Copy, Debug)]
pub struct Page<'a> {
    /// The external key (a URL, a crawl id…): unique in the index; inserting it again replaces
    /// the page.
    pub key: &'a str,
    /// The host the page came from (used to spot template fingerprints); may be empty.
    pub host: &'a str,
    /// Publish time in Unix seconds, 0 when unknown.
    pub time: i64,
    /// The page's content.
    pub content: Content<'a>,
}

/// Where the time of one insert or query went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    /// Main text and signatures.
    pub signature: Duration,
    /// Candidate generation (postings, simhash tables, cluster look-ups).
    pub candidates: Duration,
    /// Verification (skeleton, LCS, TLCS).
    pub verify: Duration,
    /// Building and committing the write (zero for a query).
    pub write: Duration,
}

/// The answer for one page: is it a near duplicate, of what, how similar.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// True when the page was verified similar to a page already held (`similar_to`). The page
    /// joins that page's cluster only when it also verifies against the cluster's representative;
    /// otherwise it founds a cluster of its own (see `representative`).
    pub duplicate: bool,
    /// The page's internal id (`None` for a query).
    pub doc: Option<DocId>,
    /// The page's insertion number (`None` for a query): unique for the index's life — a
    /// replace gets a new one — so an engine that keeps several versions of a page can tell its
    /// text source which one the index holds (see [`SourcedPage`]).
    pub seq: Option<u64>,
    /// The cluster the page joined or founded (`None` for a query that found no duplicate).
    pub cluster: Option<ClusterId>,
    /// Key of the cluster's representative after this operation (`None` for a query that found
    /// no duplicate).
    pub representative: Option<String>,
    /// Key of the closest page this one was verified similar to, when a duplicate: the
    /// representative of the cluster it joined, or a member of any cluster that it resembles
    /// more.
    pub similar_to: Option<String>,
    /// Resemble rate with `similar_to` (0 when not a duplicate).
    pub resemble: f64,
    /// Contain rate with `similar_to` (0 when not a duplicate).
    pub contain: f64,
    /// True when the normalized texts of this page and `similar_to` are identical.
    pub exact: bool,
    /// Key of a stored page whose main text is identical to this page's (the one of lowest id),
    /// whatever `similar_to` and the cluster say; `None` when there is none, and for pages
    /// without main text (their empty extractions are not "identical" to anything).
    pub identical_to: Option<String>,
    /// Length of the page's normalized main text, in characters.
    pub text_chars: u32,
    /// True when the key was already present and its page was replaced.
    pub replaced: bool,
    /// When the page replaced another under its key: what taking the old page out changed
    /// (as [`Index::delete`] reports it; the new page is placed after). When the new version
    /// kept its old version's lead ([`IndexOptions::sticky_representative`]), its
    /// `representative` is the page's own key and `moved` lists the members that did not
    /// verify against the new version.
    pub replaced_page: Option<Box<Deletion>>,
    /// True when the key was already present with the same main text (same content hash of the
    /// normalized main text, same host): an unchanged recrawl, whatever changed in the page
    /// outside its main text (navigation, footer, markup). Nothing was decided — no new id, no
    /// verification, no change of cluster or role; only the page's record is refreshed in
    /// place when the page is not byte-identical (`unchanged_html` false: its raw page hash) or
    /// comes with a new publish time (under [`crate::RepresentativePolicy::EarliestTime`],
    /// where the time names the representative, a new time makes a changed recrawl instead) —
    /// and the verdict is the stored one: `duplicate` and `similar_to` as decided when the page
    /// was inserted (when that page is still held), its cluster and representative now;
    /// `resemble` and `contain` as stored then (in single precision).
    pub unchanged: bool,
    /// True when the recrawl is `unchanged` and its raw page is byte-identical to the one
    /// stored (the same content kind and bytes, by their hash: [`Content::raw_hash`]); it
    /// implies `unchanged`. False for every other verdict, and for the first recrawl of a page
    /// stored by a build that did not keep the hash (it is written then, and the next identical
    /// recrawl is `unchanged_html`). When it is true and the publish time is the same, nothing
    /// at all was written; when `unchanged` alone is true, the stored raw hash (and time) were
    /// updated in place and the change feed lists a [`crate::ChangeKind::Retimed`].
    pub unchanged_html: bool,
    /// True when the page has (almost) no main text — narrower than
    /// [`IndexOptions::min_text_width`]: it was stored, in a cluster of its own, without being
    /// compared, and is never a duplicate (an empty extraction says nothing about the page).
    pub no_main_text: bool,
    /// How many candidate pages were found.
    pub candidates: usize,
    /// How many pairs were verified.
    pub verified: usize,
    /// Where the time went.
    pub timing: Timing,
}

/// What a delete changed (the result of [`Index::delete`], and of the replace of a page).
#[derive(Clone, Debug, PartialEq)]
pub struct Deletion {
    /// The deleted page's key.
    pub key: String,
    /// Its internal id (free now, and given to a later page).
    pub doc: DocId,
    /// The cluster it was in.
    pub cluster: ClusterId,
    /// True when it was that cluster's representative.
    pub was_representative: bool,
    /// The key of the cluster's representative after the delete: the same page when a member
    /// was deleted, the member the policy prefers after a representative's delete; `None` when
    /// the cluster is gone (it had no other member).
    pub representative: Option<String>,
    /// After a representative's delete, the members that did not verify against the new
    /// representative: each was re-placed into another cluster it verifies against, or founded
    /// its own. The other members stayed.
    pub moved: Vec<Moved>,
}

/// A member moved to another cluster by a representative's delete.
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    /// Its key.
    pub key: String,
    /// The cluster it is in now.
    pub cluster: ClusterId,
    /// That cluster's representative (its own key when it founded the cluster).
    pub representative: String,
}

/// Figures about an index.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Live pages.
    pub pages: u64,
    /// Live clusters.
    pub clusters: u64,
    /// Over-frequent fingerprints (posting keys, hex) with the reason (`pages` or `few_hosts`).
    pub frequent: Vec<(String, String)>,
    /// Bytes on disk (SST files) and in memtables per column family.
    pub bytes: Vec<(String, u64)>,
    /// Page ids given out so far (the high-water mark: ids of deleted pages are given out again
    /// before it grows, so it stays near the most pages ever held at once).
    pub page_ids: u32,
    /// Cluster ids given out so far (the high-water mark, as for pages).
    pub cluster_ids: u32,
    /// Number of clusters by size bucket (`1`, `2`, `3-5`, `6-10`, `11-50`, `51-`).
    pub cluster_sizes: Vec<(String, u64)>,
    /// Site chrome learned per host (see [`crate::ChromeConfig`]).
    pub chrome: ChromeStats,
    /// The memory the index holds, in bytes, by part (see [`crate::Index::memory`]).
    pub memory: Vec<(String, u64)>,
    /// RocksDB's figures an operator watches: stalls, compaction debt, live table bytes (see
    /// also [`crate::Index::rocksdb_stats`]).
    pub rocksdb: Vec<(String, u64)>,
}

/// Figures about the site chrome learned per host.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ChromeStats {
    /// Hosts with counted pages.
    pub hosts: u64,
    /// Blocks counted (distinct per host).
    pub blocks: u64,
    /// Live pages counted for their host.
    pub pages_counted: u64,
    /// Live pages that had blocks dropped as chrome when inserted.
    pub pages_stripped: u64,
    /// Blocks dropped from those pages (distinct per page, summed).
    pub blocks_dropped: u64,
}

/// A stored page as the index holds it (see [`Index::get`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The page's key.
    pub key: String,
    /// Its internal id.
    pub doc: DocId,
    /// Its insertion number: unique for the index's life, in insertion order (ids are reused,
    /// these never are).
    pub seq: u64,
    /// The cluster it is in.
    pub cluster: ClusterId,
    /// The key of that cluster's representative (its own key when it leads).
    pub representative: String,
    /// The page it was judged a near duplicate of when it was placed, while that page is held.
    pub similar_to: Option<String>,
    /// Resemble rate with `similar_to` when placed (0 with none; single precision).
    pub resemble: f64,
    /// Contain rate with `similar_to` when placed (0 with none; single precision).
    pub contain: f64,
    /// The hash of its normalized main text.
    pub content_hash: u128,
    /// The host it came from (may be empty).
    pub host: String,
    /// Its publish time in Unix seconds (0: unknown).
    pub time: i64,
    /// The length of its normalized main text in characters.
    pub text_chars: u32,
}

/// A cluster as a cursor gives it (see [`Index::clusters`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterInfo {
    /// The cluster's id.
    pub cluster: ClusterId,
    /// The key of its representative.
    pub representative: String,
    /// Its number of members, the representative included.
    pub size: u64,
}
