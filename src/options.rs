//! Configuration: the papers' parameters and their defaults.
//!
//! Lengths called *width* are measured as the papers measure them, in GBK bytes: a CJK character
//! counts 2, any other character 1. That is how the paper's "X > 10 bytes" and "Z > 100 bytes"
//! (seed 000 §4.2) carry over to Unicode text unchanged for Chinese and for English alike.

use serde::{Deserialize, Serialize};

/// Parameters of the signature pipeline (main text, sentences, fingerprints, simhash).
///
/// Every field that changes what is stored is checked when an index is reopened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SignatureConfig {
    /// Sentences narrower than this width are not fingerprinted (seed 000 §4.2: X > 10 bytes,
    /// so 11; about 6 Chinese characters or 11 Latin characters).
    pub min_sentence_width: u32,
    /// Number of groups m: digests are grouped by `digest mod m` (seed 000 §4.2: m = 7).
    pub groups: u32,
    /// Y: how many smallest distinct digests of a group make one fingerprint (seed 000: Y = 4).
    pub sentences_per_fingerprint: u32,
    /// Z: the Y sentences must together be at least this wide (seed 000: Z > 100 bytes, so 101).
    pub min_cover_width: u32,
    /// How many byte rotations of the digests are used, 1 to 16 (seed 000: all 16, giving at most
    /// 16 × m = 112 fingerprints).
    pub rotations: u32,
    /// Fingerprint clauses rather than whole sentences: sentences are further cut at `,` `:`
    /// (and `，` `、` `：`, which normalization maps onto them). Seed 000 §4.2 splits the text "by
    /// punctuation" without saying which; clauses make a fingerprint survive an edit elsewhere in
    /// a long sentence.
    pub clause_units: bool,
    /// Size of the bottom-k sketch: each page also indexes its this many smallest unit digests,
    /// so that pages sharing a single unedited clause among their smallest become candidates
    /// (excerpts, heavily edited copies). 0 turns it off. On the bench's dev corpus 8 lifts the
    /// share of (original, variant) pairs found as candidates from 0.92 to 0.997 without adding
    /// hard-negative candidates; verification still decides.
    pub sketch_size: u32,
    /// Local keys (see [`crate::fingerprint::local_minima`]): texts of more than this many
    /// fingerprint units (clauses) also index the smallest unit digest of every run of this many
    /// consecutive units (winnowing), so that a chapter finds the manual that contains it.
    /// Default 32 (about 1,300 characters of English): the pages of the bench's synthetic corpus
    /// give a handful each.
    pub local_window: u32,
    /// Local keys per page, about (the window grows with the text to keep to it). Default 256.
    /// 0 turns local keys off.
    pub local_keys: u32,
    /// Containment keys, short side (issue #35; seed 000 §4.4, the contain rate): a text of at
    /// most `local_window` units, which has no local keys, indexes every unit digest as a
    /// clause key rather than only its `sketch_size` smallest — a local key of a long page
    /// is the smallest unit of *its* window, and whichever unit of a short page that is, the
    /// short page holds it. Default true. An index made before this option existed does not
    /// name it in its stored configuration and is opened with it off (its pages were keyed
    /// without it), whatever the options ask; see [`SignatureConfig::sampled_keys`].
    #[serde(default, skip_serializing_if = "is_false")]
    pub short_page_keys: bool,
    /// Containment keys, long side (issue #35): every text also indexes, as clause keys, the
    /// unit digests that fall in a fixed one-in-`sampled_keys` share of the digest space
    /// (content-defined sampling: a unit is chosen or not whatever surrounds it, unlike the
    /// local keys, whose window grows with the text). A contained excerpt then shares the
    /// sampled units of its span with the whole page, however long that page is. At most
    /// [`crate::fingerprint::MAX_SAMPLED_KEYS`] a page (the smallest). Default 16 (about as many keys as the local
    /// keys of a page of a few hundred units: 2 in 33). 0 turns them off. Like
    /// [`SignatureConfig::short_page_keys`], off for an index made before it existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sampled_keys: u32,
    /// CJK character n-gram length used as simhash feature (2: bigrams).
    pub simhash_cjk_ngram: u32,
    /// Pages larger than this are refused with [`crate::Error::PageTooLarge`].
    pub max_page_bytes: usize,
    /// Fold traditional Chinese characters to simplified ones during normalization.
    pub fold_traditional: bool,
    /// Fold them only in text written in Chinese: not in a text (a page's main text, a block)
    /// whose kana or hangul make at least a tenth of its CJK characters — Japanese or Korean,
    /// where a kanji or hanja is not a traditional Chinese character and folding it (販売 →
    /// 贩売, 機能 → 机能) makes the stored text wrong and merges distinct spellings. Default
    /// true. An index made before this option existed keeps folding every text, as its stored
    /// texts were folded: its stored configuration does not name the option, and opening it
    /// takes `false` whatever the options ask (a build before the option ignores it).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fold_only_chinese: bool,
    /// The near-duplicate method: seed 000's LCS (the default) or one of the seeds' other
    /// methods (see [`crate::Method`]). Left out of the stored configuration when it is the
    /// default, so indexes made before methods existed read as LCS indexes.
    #[serde(skip_serializing_if = "crate::Method::is_lcs")]
    pub method: crate::Method,
}

impl Default for SignatureConfig {
    fn default() -> Self {
        SignatureConfig {
            min_sentence_width: 11,
            groups: 7,
            sentences_per_fingerprint: 4,
            min_cover_width: 101,
            rotations: 16,
            clause_units: true,
            sketch_size: 8,
            local_window: 32,
            local_keys: 256,
            short_page_keys: true,
            sampled_keys: 16,
            simhash_cjk_ngram: 2,
            max_page_bytes: 16 << 20,
            fold_traditional: true,
            fold_only_chinese: true,
            method: crate::Method::Lcs,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl SignatureConfig {
    /// What normalization folds (see [`crate::text::Folding`]).
    pub fn folding(&self) -> crate::text::Folding {
        crate::text::Folding {
            traditional: self.fold_traditional,
            only_chinese: self.fold_only_chinese,
        }
    }

    /// The parameters of the sentence fingerprints and clause keys.
    pub fn sentence_params(&self) -> crate::fingerprint::SentenceParams {
        crate::fingerprint::SentenceParams {
            min_sentence_width: self.min_sentence_width,
            groups: self.groups,
            sentences_per_fingerprint: self.sentences_per_fingerprint,
            min_cover_width: self.min_cover_width,
            rotations: self.rotations,
            clause_units: self.clause_units,
            local_window: self.local_window,
            local_keys: self.local_keys,
            short_page_keys: self.short_page_keys,
            sampled_keys: self.sampled_keys,
        }
    }

    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming the first field out of range.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |what: &str| Err(crate::Error::InvalidArgument(what.to_string()));
        if self.groups == 0 {
            return bad("groups must be at least 1");
        }
        if self.sentences_per_fingerprint == 0 {
            return bad("sentences_per_fingerprint must be at least 1");
        }
        if !(1..=16).contains(&self.rotations) {
            return bad("rotations must be between 1 and 16");
        }
        if !(1..=4).contains(&self.simhash_cjk_ngram) {
            return bad("simhash_cjk_ngram must be between 1 and 4");
        }
        if self.max_page_bytes == 0 {
            return bad("max_page_bytes must be positive");
        }
        self.method.validate()
    }
}

/// Which member of a cluster leads it (SPEC §2.7; seed 003 keeps the earlier or the longer page).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepresentativePolicy {
    /// The first page inserted leads, and keeps leading (the default) — across changed
    /// recrawls of it too, while they verify against it (see
    /// [`IndexOptions::sticky_representative`]).
    #[default]
    FirstSeen,
    /// The page with the earliest publish time leads (ties: the first seen).
    EarliestTime,
    /// The page with the longest normalized text leads (ties: the first seen).
    LongestText,
}

/// Over-frequent fingerprints (seed 000 §4.2: carried by > 10 000 pages, or by > 400 pages that
/// sit on few hosts): kept out of candidate generation and listed in the statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FrequentConfig {
    /// A fingerprint carried by more pages than this is over-frequent (paper: 10 000).
    pub max_pages: u64,
    /// A fingerprint carried by more pages than this is checked for host concentration
    /// (paper: 400).
    pub few_hosts_pages: u64,
    /// … and is over-frequent when those pages sit on at most this many hosts.
    pub few_hosts: usize,
}

impl Default for FrequentConfig {
    fn default() -> Self {
        FrequentConfig {
            max_pages: 10_000,
            few_hosts_pages: 400,
            few_hosts: 8,
        }
    }
}

/// Site chrome learned per host (issue 18, mechanism 8): footers, contact cells, question boxes
/// and copyright notes that extraction takes for body text, because they sit in plain table
/// cells or under class names that do not say "footer". The index counts, per host, how many of
/// its live pages carry each short block of main text (digits masked: see
/// [`crate::text::block_digest`]) and drops from a new page of that host, before fingerprinting
/// and verification, the blocks that are that host's chrome — the counterpart for text blocks of
/// the over-frequent fingerprints of seed 000 §4.2.
///
/// A block is chrome for a page when at least `min_pages` other live pages of its host carry it
/// **and** they are at least `min_share` of the host's counted pages (both inclusive). Only HTML
/// pages with a host are counted and stripped: plain text is the caller's body as given, with no
/// template around it. Each page records what it counted and dropped, so deletes take exactly its
/// counts back and these values may change from one opening to the next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChromeConfig {
    /// Learn and drop site chrome. Off by default: copies of one page on a host (URL variants,
    /// mirrors under other keys) each count as a page, so from the fourth copy on the page's own
    /// short blocks read as the host's chrome and its edges are dropped, which splits copies
    /// inserted together into different clusters; and neither corpus we measure gains from it
    /// (natural-dev unchanged, the synthetic dev corpus 5 false detections more). Counting each
    /// distinct page once is the step that would make it a default. Off, pages are neither
    /// counted nor stripped (pages counted before keep their counts until they are deleted).
    pub enabled: bool,
    /// K: a block is chrome only when at least this many other live pages of the host carry it
    /// (inclusive; default 3, at least 2): two pages of a host never lose the text they share.
    pub min_pages: u32,
    /// F: … and those pages are at least this share of the host's counted pages (inclusive;
    /// default 0.5, in `[0, 1]`): chrome is the site's, on most of its pages; a block a part of
    /// them share is their content (a writing template, a story the site carries several
    /// times), and the share keeps a young host from learning its first pages as chrome.
    pub min_share: f64,
    /// Blocks longer than this many characters (normalized) are never counted nor dropped: chrome
    /// is short, and a long block shared by many pages is content (default 300).
    pub max_block_chars: u32,
}

impl Default for ChromeConfig {
    fn default() -> Self {
        ChromeConfig {
            enabled: false,
            min_pages: 3,
            min_share: 0.5,
            max_block_chars: 300,
        }
    }
}

impl ChromeConfig {
    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming the first field out of range.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |what: &str| Err(crate::Error::InvalidArgument(what.to_string()));
        if self.min_pages < 2 {
            return bad("chrome.min_pages must be at least 2");
        }
        if !(0.0..=1.0).contains(&self.min_share) {
            return bad("chrome.min_share must be between 0 and 1");
        }
        if self.max_block_chars == 0 {
            return bad("chrome.max_block_chars must be at least 1");
        }
        Ok(())
    }

    /// Is a block carried by `count` other live pages of a host with `host_pages` other counted
    /// pages chrome?
    pub fn is_chrome(&self, count: u32, host_pages: u32) -> bool {
        count >= self.min_pages && f64::from(count) >= self.min_share * f64::from(host_pages)
    }
}

/// Everything an index is opened with.
///
/// The parts that shape what is stored (signatures, simhash distance, representative policy) are
/// saved in the index when it is created and must match when it is reopened
/// ([`crate::Error::IncompatibleConfig`] otherwise); verification thresholds and search bounds may
/// change from one opening to the next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IndexOptions {
    /// Signature parameters (stored, must match).
    pub signature: SignatureConfig,
    /// Verification parameters.
    pub verify: crate::verify::VerifyConfig,
    /// Maximum Hamming distance of simhash candidates: 1, 3 (default) or 7 (stored, must match).
    pub simhash_max_distance: u32,
    /// Over-frequent fingerprint thresholds.
    pub frequent: FrequentConfig,
    /// Representative policy (stored, must match).
    pub representative: RepresentativePolicy,
    /// At most this many candidate clusters are verified per page, best first.
    pub max_clusters_verified: usize,
    /// Pages whose headings name different model codes (see
    /// [`crate::fingerprint::codes_conflict`]) are never similar, however much text they share:
    /// models of one product series share their description, claims and service text.
    pub heading_codes: bool,
    /// Pages whose normalized main text is narrower than this (in GBK bytes: a CJK character
    /// counts 2) have "no main text": they are stored in a cluster of their own and never
    /// compared, so a failed extraction (an empty body, a script-only shell) never makes them
    /// duplicates of one another by their content hash. Default 20: ten Chinese characters or
    /// a short English sentence; the paper's shortest fingerprinted sentence is 11 (seed 000
    /// §4.2). 0 compares every page.
    pub min_text_width: u32,
    /// Site chrome learned per host (see [`ChromeConfig`]).
    pub chrome: ChromeConfig,
    /// Create the index when the directory holds none.
    pub create_if_missing: bool,
    /// Sync the WAL on every commit, and once per batch before it returns (default): an
    /// acknowledged page survives an operating-system crash or a power loss, not only a crash of
    /// the process. Off, commits are faster and survive process crashes only. The sync comes
    /// after the writer lock is let go, so other threads may read a page (`get`, a query, a
    /// cursor) a moment before its insert is acknowledged and durable.
    pub sync_writes: bool,
    /// Store each page's normalized text in the index (default; stored, must match). Off, the
    /// index keeps only the page's signatures and posting keys, and asks the
    /// [`crate::TextSource`] given to [`crate::Index::open_with_text_source`] for a page's
    /// content whenever it must verify against that page (SPEC §3).
    #[serde(default = "yes")]
    pub store_texts: bool,
    /// No longer used: an index keeps no filter of its own (it was built at open from a scan of
    /// every posting key); RocksDB's filters, read through the block cache
    /// ([`IndexOptions::block_cache_bytes`]), answer for the keys no page has. Kept so that
    /// existing callers build.
    #[deprecated(note = "no longer used: see `block_cache_bytes`")]
    pub posting_filter_bytes: usize,
    /// The block cache, in bytes, shared by every column family: recently read blocks of pages,
    /// postings and simhash tables, and the index and filter blocks of the table files (those of
    /// the first level pinned), and the texts read to verify (uncompressed, from their blob
    /// files). Default 256 MiB. Reads of what is not cached go to the files (and the operating
    /// system's page cache).
    pub block_cache_bytes: usize,
    /// The memtables of all column families together, in bytes: writes land there before they
    /// are flushed to table files. Default 256 MiB.
    pub write_buffer_bytes: usize,
    /// How many table files and blob files (the texts') RocksDB keeps open (0: all, each table
    /// file opened when the index opens — an open then takes time with the index's size).
    /// Default 1,024.
    pub max_open_files: u32,
    /// Read a page's clause-sketch keys only when its content and sentence-fingerprint keys
    /// found no candidate, as the simhash tables are read (default off: every key in one read).
    /// The sketch keys are single clauses, and chains of pages sharing one clause join most of a
    /// corpus into one component of its candidate graph (`bench/components.md`: a third of dev,
    /// nine tenths of a 200,000-page generated corpus), which a distributed merge would have to
    /// decide on one node; as a fallback they join only pages the other keys left alone.
    /// Measured under `--order input`: dev F1 0.9959 → 0.9960 (precision 0.9963 → 0.9967),
    /// natural-dev F1 0.9466 → 0.9457 (four fewer pairs found: chapters whose other versions
    /// share fingerprints no longer probe the local keys that find the whole manual). A search
    /// bound like `max_clusters_verified`: it may change from one opening to the next.
    pub sketch_fallback: bool,
    /// Give the ids of deleted pages and dissolved clusters to later ones (default). Off, every
    /// new page and cluster takes the next id of its allocator, so a new id is above every id
    /// held, whatever was freed: a distributed merge decides each component of a day in its own
    /// scratch index and numbers the new ids of each after those of the components before it
    /// (SCALEOUT §4: ids never reused), which keeps every tie-break by id. Off, an index gives
    /// out at most 2³² page ids in its life. It may change from one opening to the next.
    #[serde(default = "yes")]
    pub reuse_ids: bool,
    /// Under [`RepresentativePolicy::FirstSeen`], a representative keeps its cluster across a
    /// changed recrawl (default on; issue #33, B3): when a new version of the page that leads a
    /// cluster of other members verifies against the old version's text (as a member must
    /// verify against its representative), the new version leads that cluster in the same
    /// write, and only the members that do not verify against it are placed again (as after a
    /// representative's delete). Off, or when the new version does not verify, the old page is
    /// taken out first — the member the policy prefers takes over — and the new version is
    /// decided as a new page. The other policies name the representative by the pages'
    /// times or lengths and are not affected. Needs the old version's text: an index that does
    /// not store texts (its [`crate::TextSource`] serves a page's current content) hands the
    /// cluster over. Behaviour, not layout: it may change from one opening to the next.
    #[serde(default = "yes")]
    pub sticky_representative: bool,
    /// How many of the last changes the change feed keeps ([`crate::Index::changes_since`]):
    /// at least this many, trimmed from the oldest in steps of an eighth of it, in the write
    /// that passes the step (one range delete, no scan). Default 100,000 — hours to days of a
    /// crawler's changes for a follower to catch up on. A change of a page keeps the page's
    /// normalized text (Zstd, in blob files): on the bench's dev corpus about 1.6 KB a change,
    /// so 160–180 MB at the default once it is full; an index smaller than the retention
    /// carries its whole history (the dev corpus's 20,000 pages: 4.3 rather than 2.65 KB a page
    /// on disk before compaction, and about 4 % more CPU to ingest). A follower that falls further behind
    /// gets [`crate::Error::ChangesTrimmed`] and copies the index again. 0 keeps nothing
    /// (sequence numbers still advance, so a follower learns it missed changes). Behaviour,
    /// not layout: it may change from one opening to the next (the feed is trimmed to it at
    /// the next write).
    pub change_retention: u64,
}

/// The default of [`IndexOptions::change_retention`].
pub const DEFAULT_CHANGE_RETENTION: u64 = 100_000;

fn yes() -> bool {
    true
}

#[allow(deprecated)]
impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            signature: SignatureConfig::default(),
            verify: crate::verify::VerifyConfig::default(),
            simhash_max_distance: 3,
            frequent: FrequentConfig::default(),
            representative: RepresentativePolicy::default(),
            max_clusters_verified: 8,
            heading_codes: true,
            min_text_width: 20,
            chrome: ChromeConfig::default(),
            create_if_missing: true,
            sync_writes: true,
            store_texts: true,
            posting_filter_bytes: 0,
            block_cache_bytes: 256 << 20,
            write_buffer_bytes: 256 << 20,
            max_open_files: 1024,
            sketch_fallback: false,
            reuse_ids: true,
            sticky_representative: true,
            change_retention: DEFAULT_CHANGE_RETENTION,
        }
    }
}

impl IndexOptions {
    /// What RocksDB may hold in memory and keep open, as these options say.
    pub(crate) fn budget(&self) -> crate::storage::Budget {
        crate::storage::Budget {
            block_cache_bytes: self.block_cache_bytes,
            write_buffer_bytes: self.write_buffer_bytes,
            max_open_files: self.max_open_files,
        }
    }

    /// Are two texts similar under the options' method, as an index with these options decides
    /// it (exact copies and heading codes aside)? `Some((resemble, contain))` when they are.
    /// `df` gives the document frequencies the methods on corpus statistics weigh words by
    /// ([`crate::methods::NoDocFreq`] for the others).
    pub fn similar_texts(
        &self,
        a: &str,
        b: &str,
        df: &dyn crate::methods::DocFreq,
    ) -> Option<(f64, f64)> {
        let n = self.signature.simhash_cjk_ngram as usize;
        let side = |text| crate::methods::Side {
            text,
            features: None,
            simhash: crate::fingerprint::simhash(text, n),
        };
        self.signature.method.similar_sides(
            side(a),
            side(b),
            &self.verify,
            self.simhash_max_distance,
            df,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrome_thresholds_are_inclusive_and_validated() {
        let c = ChromeConfig::default();
        c.validate().unwrap();
        // K = 3 inclusive: 3 other pages make chrome, 2 never do.
        assert!(c.is_chrome(3, 3));
        assert!(!c.is_chrome(2, 2));
        // F = 0.5 inclusive: 50 of 100 is chrome, 49 is not.
        assert!(c.is_chrome(50, 100));
        assert!(!c.is_chrome(49, 100));
        for bad in [
            ChromeConfig {
                min_pages: 1,
                ..c.clone()
            },
            ChromeConfig {
                min_share: 1.5,
                ..c.clone()
            },
            ChromeConfig {
                min_share: f64::NAN,
                ..c.clone()
            },
            ChromeConfig {
                max_block_chars: 0,
                ..c.clone()
            },
        ] {
            assert!(matches!(
                bad.validate(),
                Err(crate::Error::InvalidArgument(_))
            ));
        }
    }
}
