//! Storage layout in one RocksDB database (SPEC §3). Keys are big-endian so that iteration order
//! is numeric order. The byte-level layout is described in `FORMAT.md`.
//!
//! | column family | key | value |
//! |---|---|---|
//! | `meta` | ASCII name | format version, configuration (JSON), counters |
//! | `keys` | external key (UTF-8) | `DocId` (u32) |
//! | `docs` | `DocId` | [`codec::DocRecord`] (tag, fields, CRC-32) |
//! | `texts` | `DocId` | normalized text (tag, UTF-8, CRC-32), compressed by RocksDB |
//! | `postings` | kind (1 byte) ‖ high 64 bits of the fingerprint | posting (merge operator) |
//! | `simhash` | table (1) ‖ permuted simhash (8) ‖ `DocId` (4) | empty |
//! | `clusters` | `ClusterId` | [`codec::ClusterRecord`] |
//! | `frequent` | posting key | reason byte: over-frequent fingerprints |
//! | `chrome` | see [`chrome_key`] | block statistics per host, each page's counted blocks |
//! | `page_clusters` | `DocId` | `ClusterId` (u32): each live page's cluster (format 5) |
//! | `changes` | sequence number (u64) | [`change::Change`]: the change feed (format 5) |

pub mod change;
pub mod codec;
pub mod format;
#[cfg(test)]
mod fuzz;
pub mod merge;
pub(crate) mod process;
pub(crate) mod simhash_wide;
pub mod wide_keys;
pub mod width;

use std::path::Path;

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType,
    Options, ReadOptions, SliceTransform, DB,
};

pub use format::*;

use crate::{Error, Result};

/// Column family names.
pub mod cf {
    /// Format version, configuration, counters.
    pub const META: &str = "meta";
    /// External key → `DocId`.
    pub const KEYS: &str = "keys";
    /// `DocId` → document record.
    pub const DOCS: &str = "docs";
    /// `DocId` → normalized text.
    pub const TEXTS: &str = "texts";
    /// Fingerprint → posting of `DocId`s.
    pub const POSTINGS: &str = "postings";
    /// Simhash block tables.
    pub const SIMHASH: &str = "simhash";
    /// `ClusterId` → cluster record.
    pub const CLUSTERS: &str = "clusters";
    /// Over-frequent fingerprints.
    pub const FREQUENT: &str = "frequent";
    /// Site chrome learned per host: block counts and each page's counted blocks (added after
    /// format 2 was released: an index without it gets it, empty, when opened for writing).
    pub const CHROME: &str = "chrome";
    /// `DocId` → `ClusterId`: each live page's cluster, beside its record (format 5 on; an
    /// index of an older format gets it, empty and unused, when opened for writing). Candidate
    /// search maps its best candidate pages to their clusters: a read of 4 bytes a page, from
    /// a family ten times smaller than the records (8.6 against 91 bytes a page at 1M pages), whose blocks stay in the cache.
    pub const PAGE_CLUSTERS: &str = "page_clusters";
    /// Sequence number (`u64`) → change record: the change feed (format 5; FORMAT.md).
    pub const CHANGES: &str = "changes";
    /// Every column family, in creation order.
    pub const ALL: [&str; 11] = [
        META,
        KEYS,
        DOCS,
        TEXTS,
        POSTINGS,
        SIMHASH,
        CLUSTERS,
        FREQUENT,
        CHROME,
        PAGE_CLUSTERS,
        CHANGES,
    ];
}

/// Meta keys.
pub mod meta {
    /// `u32` format version.
    pub const FORMAT: &[u8] = b"format_version";
    /// JSON of the stored configuration.
    pub const CONFIG: &[u8] = b"config";
    /// Next `DocId` to allocate (`u32`).
    pub const NEXT_DOC: &[u8] = b"next_doc_id";
    /// Next `ClusterId` to allocate (`u32`).
    pub const NEXT_CLUSTER: &[u8] = b"next_cluster_id";
    /// Number of live pages (`u64`).
    pub const LIVE_DOCS: &[u8] = b"live_docs";
    /// Number of live clusters (`u64`).
    pub const LIVE_CLUSTERS: &[u8] = b"live_clusters";
    /// Next page insertion number (`u64`; format 3).
    pub const NEXT_SEQ: &[u8] = b"next_seq";
    /// The last batch log applied ([`crate::Index::apply_log`], SCALEOUT §9): `u64`; absent until
    /// a first log is applied. Written in the same `WriteBatch` as the log's last operations.
    pub const APPLIED_BATCH: &[u8] = b"applied_batch";
    /// The database's place in a distributed index ([`crate::index::Partition`]): 17 bytes;
    /// absent in a whole index. Written once, before any page.
    pub const PARTITION: &[u8] = b"partition";
    /// The next change's sequence number (`u64`; [`cf::CHANGES`], FORMAT.md "Change feed").
    pub const NEXT_CHANGE: &[u8] = b"next_change";
    /// The last sequence number trimmed from the feed (`u64`).
    pub const CHANGES_TRIMMED: &[u8] = b"changes_trimmed";
    /// Prefix of the keys of free page ids (‖ `DocId`, empty value; format 3).
    pub const FREE_DOC: &[u8] = b"free_doc/";
    /// Prefix of the keys of free cluster ids (‖ `ClusterId`, empty value; format 3).
    pub const FREE_CLUSTER: &[u8] = b"free_cluster/";

    /// The key of free id `id` under `prefix` ([`FREE_DOC`] or [`FREE_CLUSTER`]).
    pub fn free_key(prefix: &[u8], id: u32) -> Vec<u8> {
        let mut k = Vec::with_capacity(prefix.len() + 4);
        k.extend_from_slice(prefix);
        k.extend_from_slice(&id.to_be_bytes());
        k
    }
}

/// Posting key kinds.
pub mod kind {
    /// A sentence fingerprint.
    pub const SENTENCE: u8 = b'F';
    /// The exact content hash.
    pub const CONTENT: u8 = b'C';
    /// A digest of the bottom-k unit sketch.
    pub const SKETCH: u8 = b'K';
    /// Shingling method: a band of min-hashes (a super-shingle).
    pub const BAND: u8 = b'M';
    /// Winnowing method: a winnowed fingerprint.
    pub const WINNOW: u8 = b'W';
    /// Punctuation method: an abstract's MD5.
    pub const ABSTRACT: u8 = b'A';
    /// AgT method: a linear-comparison hash (MD5 of the sorted top-N keywords).
    pub const AGT: u8 = b'G';
    /// Methods on corpus statistics: a word (its xxh3), the pages holding it. Its size is the
    /// word's document frequency, so these postings are never marked over-frequent nor dropped.
    pub const TERM: u8 = b'T';
    /// Topic-sentence method: a word of the page's title (its xxh3).
    pub const TITLE: u8 = b'H';
}

/// Keys of the `chrome` column family (site chrome learned per host, issue 18 mechanism 8). A
/// kind byte comes first; hosts are at most 255 bytes, written after their length.
pub mod chrome_key {
    /// Kind of a host's page count: `H` ‖ host length: u8 ‖ host.
    pub const HOST: u8 = b'H';
    /// Kind of a block count: `B` ‖ host length: u8 ‖ host ‖ block digest: u64.
    pub const BLOCK: u8 = b'B';
    /// Kind of a page's record: `P` ‖ `DocId`: u32.
    pub const PAGE: u8 = b'P';

    fn with_host(kind: u8, host: &str, extra: usize) -> Vec<u8> {
        let h = host.as_bytes();
        let h = &h[..h.len().min(u8::MAX as usize)];
        let mut k = Vec::with_capacity(2 + h.len() + extra);
        k.push(kind);
        k.push(h.len() as u8);
        k.extend_from_slice(h);
        k
    }

    /// Key of the number of a host's counted pages.
    pub fn host(host: &str) -> Vec<u8> {
        with_host(HOST, host, 0)
    }

    /// Key of the number of a host's counted pages that carry a block.
    pub fn block(host: &str, digest: u64) -> Vec<u8> {
        let mut k = with_host(BLOCK, host, 8);
        k.extend_from_slice(&digest.to_be_bytes());
        k
    }

    /// Key of a page's record.
    pub fn page(id: u32) -> [u8; 5] {
        let mut k = [PAGE, 0, 0, 0, 0];
        k[1..].copy_from_slice(&id.to_be_bytes());
        k
    }

    /// What a key of the column family names, `None` when it is malformed.
    pub fn decode(key: &[u8]) -> Option<Decoded<'_>> {
        match key.split_first()? {
            (&PAGE, id) => Some(Decoded::Page(u32::from_be_bytes(id.try_into().ok()?))),
            (&kind, rest) if kind == HOST || kind == BLOCK => {
                let (&len, rest) = rest.split_first()?;
                let host = std::str::from_utf8(rest.get(..len as usize)?).ok()?;
                let tail = &rest[len as usize..];
                match (kind, tail.len()) {
                    (HOST, 0) => Some(Decoded::Host(host)),
                    (BLOCK, 8) => Some(Decoded::Block(
                        host,
                        u64::from_be_bytes(tail.try_into().ok()?),
                    )),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A decoded key of the `chrome` column family.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Decoded<'a> {
        /// A host's page count.
        Host(&'a str),
        /// A block count of a host.
        Block(&'a str, u64),
        /// A page's record.
        Page(u32),
    }
}

/// A key and its value, as a RocksDB iterator gives them.
pub type Entry = (Box<[u8]>, Box<[u8]>);

/// Read options for a scan of a whole column family in key order, whatever its prefix
/// extractor (the simhash tables' is their block prefix).
pub fn scan_options() -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_total_order_seek(true);
    ro
}

/// Key of a posting: kind ‖ high 64 bits of a 128-bit hash. Two hashes that share their high
/// 64 bits share a posting; that only adds a candidate, which verification then judges.
pub fn posting_key(kind: u8, hash: u128) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = kind;
    k[1..].copy_from_slice(&((hash >> 64) as u64).to_be_bytes());
    k
}

/// Big-endian key of a `u32` id.
pub fn id_key(id: u32) -> [u8; 4] {
    id.to_be_bytes()
}

/// Decodes a big-endian `u32` key or value.
pub fn decode_u32(cf: &'static str, key: &[u8], bytes: &[u8]) -> Result<u32> {
    <[u8; 4]>::try_from(bytes)
        .map(u32::from_be_bytes)
        .map_err(|_| Error::corruption(cf, key, format!("expected 4 bytes, found {}", bytes.len())))
}

/// Decodes a big-endian `u64` value.
///
/// # Errors
/// [`Error::Corruption`] when it is not 8 bytes.
pub fn decode_u64(cf: &'static str, key: &[u8], bytes: &[u8]) -> Result<u64> {
    <[u8; 8]>::try_from(bytes)
        .map(u64::from_be_bytes)
        .map_err(|_| Error::corruption(cf, key, format!("expected 8 bytes, found {}", bytes.len())))
}

/// How the tables of a [`SimhashTables`] cut the 64 bits (FORMAT.md "simhash").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableScheme {
    /// `k + 1` equal blocks, table `t` led by block `t` (the hash rotated left by `t` blocks):
    /// any hash within distance `k` shares a whole block. Format 3 and before, and distances 1
    /// and 7 in every format.
    Rotated,
    /// Distance 3 from format 4 on: five blocks of 13, 13, 13, 13 and 12 bits, one table for
    /// each pair of blocks (ten tables), led by the pair and then the other blocks in order:
    /// a hash within distance 3 differs in at most three blocks, so it shares a whole pair.
    /// A look-up scans the 24 leading bits, a bucket of `N / 2²⁴` pages where 16-bit blocks
    /// held `N / 2¹⁶` (1,500 pages at 100 million; the scale bench's simhash part grew from 24
    /// to 138 µs a look-up between 25,000 and 1 million pages).
    Pairs,
}

/// Simhash block tables (Manku, Jain and Das Sarma, "Detecting near-duplicates for web
/// crawling", §3.1.1; seed 001 §3.3): the 64 bits are cut into blocks and each table stores the
/// hash permuted so that its leading blocks come first, so any hash within Hamming distance `k`
/// of a query shares a table's whole lead and is found by a prefix seek. The more bits a lead
/// holds, the fewer pages a look-up scans: [`TableScheme`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimhashTables {
    /// Number of tables.
    pub tables: u8,
    /// The distance the tables answer for.
    pub max_distance: u32,
    /// How the bits are cut.
    pub scheme: TableScheme,
}

/// The block pairs of [`TableScheme::Pairs`], one per table.
const PAIRS: [(u8, u8); 10] = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (1, 2),
    (1, 3),
    (1, 4),
    (2, 3),
    (2, 4),
    (3, 4),
];

impl SimhashTables {
    /// The tables a new index uses for a maximum Hamming distance `k` (1, 3 or 7).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for another `k`.
    pub fn new(k: u32) -> Result<Self> {
        Self::for_format(k, FORMAT_VERSION)
    }

    /// The tables of an index of on-disk format `format` for distance `k`: [`TableScheme::Pairs`]
    /// for distance 3 from format 4 on, [`TableScheme::Rotated`] otherwise.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a `k` other than 1, 3 or 7.
    pub fn for_format(k: u32, format: u32) -> Result<Self> {
        match k {
            3 if format >= 4 => Ok(SimhashTables {
                tables: PAIRS.len() as u8,
                max_distance: k,
                scheme: TableScheme::Pairs,
            }),
            1 | 3 | 7 => Ok(SimhashTables {
                tables: (k + 1) as u8,
                max_distance: k,
                scheme: TableScheme::Rotated,
            }),
            _ => Err(Error::InvalidArgument(format!(
                "simhash_max_distance must be 1, 3 or 7, not {k}"
            ))),
        }
    }

    /// Number of blocks the 64 bits are cut into.
    fn blocks(&self) -> u32 {
        match self.scheme {
            TableScheme::Rotated => self.max_distance + 1,
            TableScheme::Pairs => 5,
        }
    }

    /// (offset from the most significant bit, width) of block `b`.
    fn block(&self, b: u32) -> (u32, u32) {
        match self.scheme {
            TableScheme::Rotated => {
                let w = 64 / self.blocks();
                (b * w, w)
            }
            TableScheme::Pairs => (13 * b, if b < 4 { 13 } else { 12 }),
        }
    }

    /// The blocks in the order table `t` stores them (at most 8 blocks: distance 7 rotated).
    fn order(&self, t: u8) -> impl Iterator<Item = u32> {
        let n = self.blocks();
        let t = u32::from(t);
        let mut out = [0u32; 8];
        match self.scheme {
            // The blocks from `t` on, wrapping: a rotation.
            TableScheme::Rotated => {
                for d in 0..n {
                    out[d as usize] = (t + d) % n;
                }
            }
            // The pair, then the other blocks in order.
            TableScheme::Pairs => {
                let (i, j) = PAIRS[t as usize % PAIRS.len()];
                let (i, j) = (u32::from(i), u32::from(j));
                out[0] = i;
                out[1] = j;
                for (slot, b) in (0..n).filter(|&b| b != i && b != j).enumerate() {
                    out[2 + slot] = b;
                }
            }
        }
        out.into_iter().take(n as usize)
    }

    /// `h` with its blocks in table `t`'s order.
    fn permute(&self, t: u8, h: u64) -> u64 {
        let mut out = 0u64;
        let mut at = 0;
        for b in self.order(t) {
            let (off, w) = self.block(b);
            let bits = (h >> (64 - off - w)) & ((1u64 << w) - 1);
            out |= bits << (64 - at - w);
            at += w;
        }
        out
    }

    /// The inverse of [`Self::permute`].
    fn unpermute(&self, t: u8, p: u64) -> u64 {
        let mut out = 0u64;
        let mut at = 0;
        for b in self.order(t) {
            let (off, w) = self.block(b);
            let bits = (p >> (64 - at - w)) & ((1u64 << w) - 1);
            out |= bits << (64 - off - w);
            at += w;
        }
        out
    }

    /// Length of the key prefix a look-up seeks: the table byte, then the whole bytes of the
    /// table's lead (one block, or a pair of blocks).
    pub fn prefix_len(&self) -> usize {
        let lead = match self.scheme {
            TableScheme::Rotated => 64 / self.blocks(),
            TableScheme::Pairs => 25,
        };
        1 + (lead / 8) as usize
    }

    /// The key of `simhash` for document `id` in table `t`: the table byte, the permuted hash,
    /// the id (all big-endian).
    pub fn key(&self, t: u8, simhash: u64, id: u32) -> [u8; 13] {
        let mut k = [0u8; 13];
        k[0] = t;
        k[1..9].copy_from_slice(&self.permute(t, simhash).to_be_bytes());
        k[9..].copy_from_slice(&id.to_be_bytes());
        k
    }

    /// The block keys of `simhash`, one per table: the prefix of its `simhash` keys in that
    /// table (the table byte, then the lead's bytes of the permuted simhash). A page is filed
    /// under these and looked up by them; two simhashes within the tables' distance share at
    /// least one (the pigeonhole principle of the tables' design).
    pub fn block_keys(&self, simhash: u64) -> Vec<Vec<u8>> {
        (0..self.tables)
            .map(|t| self.key(t, simhash, 0)[..self.prefix_len()].to_vec())
            .collect()
    }

    /// Decodes a key into (table, original simhash, id); `None` if not 13 bytes or no table.
    pub fn decode(&self, key: &[u8]) -> Option<(u8, u64, u32)> {
        if key.len() != 13 || key[0] >= self.tables {
            return None;
        }
        let t = key[0];
        let mut p = [0u8; 8];
        p.copy_from_slice(&key[1..9]);
        let simhash = self.unpermute(t, u64::from_be_bytes(p));
        let id = u32::from_be_bytes([key[9], key[10], key[11], key[12]]);
        Some((t, simhash, id))
    }
}

/// What RocksDB may hold in memory, and how many files it keeps open (see the fields of
/// [`crate::IndexOptions`] of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The block cache shared by every column family: data blocks, and the index and filter
    /// blocks of the table files (partitioned; the first level's and the top-level partitions
    /// pinned).
    pub block_cache_bytes: usize,
    /// All memtables together: past it, the largest is flushed.
    pub write_buffer_bytes: usize,
    /// Table files kept open (0: all of them, opened when the database opens).
    pub max_open_files: u32,
}

/// The options of column family `name` (merge operator, prefix extractor, filters), its table
/// files read through `cache`.
///
/// Nothing is loaded at open but the manifest: index and filter partitions come into the block
/// cache as reads need them, and whole-key Bloom filters answer for the posting keys no page has
/// (most keys a new page looks up) without reading a data block.
pub fn cf_options(name: &str, tables: SimhashTables, cache: &Cache, budget: &Budget) -> Options {
    let table = |bloom: bool| {
        let mut b = BlockBasedOptions::default();
        b.set_block_cache(cache);
        b.set_format_version(5);
        // A hash index per data block spares point reads the binary search (the hottest RocksDB
        // symbol at 1M pages; bench/README.md); not for the prefix-sought simhash tables.
        if name != cf::SIMHASH {
            b.set_data_block_index_type(rocksdb::DataBlockIndexType::BinaryAndHash);
            b.set_data_block_hash_ratio(0.75);
        }
        if bloom {
            b.set_bloom_filter(10.0, false);
            // The simhash tables, sought by prefix, filter prefixes alone (half the bits).
            b.set_whole_key_filtering(name != cf::SIMHASH);
            b.set_optimize_filters_for_memory(true);
        }
        // Index and filter blocks live in the block cache, charged to its budget, partitioned
        // (4 KiB partitions under a pinned top level): a read brings in only the parts it needs.
        // Whole filters per file are cheaper while they all fit in the cache (1,471 against
        // 1,855 µs a page at 250k pages), but past that every miss reads and checksums a filter
        // of megabytes (at 1.4M pages: 2.6 → 10.6 ms a page). Partitions degrade gracefully.
        b.set_cache_index_and_filter_blocks(true);
        b.set_pin_l0_filter_and_index_blocks_in_cache(true);
        b.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        b.set_partition_filters(true);
        b.set_pin_top_level_index_and_filter(true);
        b
    };
    // The memtables of the families written most share most of the budget.
    let big = (budget.write_buffer_bytes / 4).clamp(4 << 20, 256 << 20);
    let small = (budget.write_buffer_bytes / 16).clamp(2 << 20, 64 << 20);
    {
        {
            let mut o = Options::default();
            o.set_compression_type(DBCompressionType::Lz4);
            // The texts, most of the bytes, compress well and are read only to verify: Zstd
            // (in their blob files, below). The families read on every page (postings, records,
            // simhash tables) stay in LZ4, cheaper to write in compactions and to read.
            if name == cf::TEXTS {
                o.set_bottommost_compression_type(DBCompressionType::Zstd);
            }
            o.set_level_compaction_dynamic_level_bytes(true);
            o.set_write_buffer_size(small);
            match name {
                cf::POSTINGS => {
                    o.set_write_buffer_size(big);
                    o.set_merge_operator(merge::NAME, merge::full_merge, merge::partial_merge);
                    o.set_block_based_table_factory(&table(true));
                    // Most fingerprints looked up are new: a memtable bloom filter on whole keys
                    // answers "not here" without walking the skip list.
                    o.set_memtable_whole_key_filtering(true);
                    o.set_memtable_prefix_bloom_ratio(0.1);
                }
                cf::SIMHASH => {
                    o.set_write_buffer_size(big);
                    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(
                        tables.prefix_len(),
                    ));
                    o.set_memtable_prefix_bloom_ratio(0.1);
                    o.set_block_based_table_factory(&table(true));
                    // A look-up scans a block's prefix: a file whose deletes (pages deleted or
                    // replaced) pile up is compacted before the scans wade through tombstones.
                    o.add_compact_on_deletion_collector_factory(128, 64, 0.5);
                }
                cf::TEXTS => {
                    // A blob file is written by each flush: a larger memtable, fewer and larger
                    // blob files.
                    o.set_write_buffer_size(big);
                    o.set_block_based_table_factory(&table(false));
                    // The texts live in blob files beside the table files (RocksDB's integrated
                    // BlobDB), each compressed on its own: the table files keep a reference a
                    // text, so a compaction of the family rewrites references, not texts (the
                    // texts are most of the bytes, and were rewritten at every level they
                    // passed), and a verification reads one text without first reading index
                    // partitions that compete with the postings' filters for the block cache.
                    // Blobs of deleted and replaced pages are reclaimed by the compactions of
                    // the table files that referenced them (blob garbage collection). In the
                    // scale bench at 250,000 pages: 4.1 rather than 6.3 KB a page on disk, and
                    // 100 MB less resident (texts no longer pass through the block cache).
                    o.set_enable_blob_files(true);
                    o.set_min_blob_size(TEXT_BLOB_MIN);
                    o.set_blob_compression_type(DBCompressionType::Zstd);
                    o.set_enable_blob_gc(true);
                    // A blob file is freed only when no reference to it is left. Compactions
                    // move the live texts out of the oldest quarter of the blob files; when half
                    // of what those hold is garbage, compactions are scheduled to collect it.
                    o.set_blob_gc_age_cutoff(TEXT_BLOB_GC_AGE_CUTOFF);
                    o.set_blob_gc_force_threshold(0.5);
                    // Texts read to verify are kept, uncompressed, in the block cache, charged
                    // to its budget: the representatives of the clusters that share template
                    // text are verified against again and again, and each read from the blob
                    // file was a file read, a checksum and a Zstd decompression (a tenth of an
                    // ingest's CPU at 1M pages in the scale bench).
                    o.set_blob_cache(cache);
                }
                cf::CHANGES => {
                    // Scanned in order, trimmed by range; records hold texts: blob files.
                    o.set_block_based_table_factory(&table(false));
                    o.set_enable_blob_files(true);
                    o.set_min_blob_size(TEXT_BLOB_MIN);
                    o.set_blob_compression_type(DBCompressionType::Zstd);
                    o.set_enable_blob_gc(true);
                }
                cf::PAGE_CLUSTERS => {
                    // Read for the pages candidate search found, which are live: a filter
                    // would never answer "absent", and would only take cache.
                    o.set_block_based_table_factory(&table(false));
                }
                cf::KEYS | cf::DOCS | cf::CLUSTERS | cf::CHROME => {
                    o.set_block_based_table_factory(&table(true));
                    o.set_memtable_whole_key_filtering(true);
                    o.set_memtable_prefix_bloom_ratio(0.05);
                }
                _ => {
                    o.set_block_based_table_factory(&table(false));
                }
            }
            o
        }
    }
}

/// Texts at least this long (bytes, encoded) are kept in blob files; shorter ones stay in the
/// table files, where a blob reference would save nothing.
pub const TEXT_BLOB_MIN: u64 = 256;

/// The share of the texts' blob files, oldest first, whose live texts a compaction moves out
/// (blob garbage collection); `Index::compact` takes them all.
pub const TEXT_BLOB_GC_AGE_CUTOFF: f64 = 0.25;

/// The block cache of a database: RocksDB's HyperClockCache, whose look-ups take no lock (the
/// LRU cache's mutex and list upkeep were the most frequent symbols of an ingest's profile), its
/// entry size estimated as it fills.
fn block_cache(budget: &Budget) -> Cache {
    Cache::new_hyper_clock_cache(budget.block_cache_bytes, 0)
}

fn descriptors(
    tables: SimhashTables,
    cache: &Cache,
    budget: &Budget,
) -> Vec<ColumnFamilyDescriptor> {
    cf::ALL
        .iter()
        .map(|&name| ColumnFamilyDescriptor::new(name, cf_options(name, tables, cache, budget)))
        .collect()
}

/// The database options of an index under `budget`.
fn db_options(create: bool, budget: &Budget) -> Options {
    let mut db_opts = Options::default();
    db_opts.create_if_missing(create);
    db_opts.create_missing_column_families(true);
    db_opts.set_max_background_jobs(2);
    db_opts.set_keep_log_file_num(4);
    db_opts.set_db_write_buffer_size(budget.write_buffer_bytes);
    // Opening reads the manifest, not every table file: the table cache opens files as they are
    // read, and file statistics are not gathered at open.
    db_opts.set_max_open_files(if budget.max_open_files == 0 {
        -1
    } else {
        i32::try_from(budget.max_open_files).unwrap_or(i32::MAX)
    });
    db_opts.set_skip_stats_update_on_db_open(true);
    db_opts
}

/// Opens (or creates) the database with every column family and its options, and the block
/// cache its tables read through.
///
/// # Errors
/// [`Error::Storage`] when RocksDB cannot open the path; [`Error::ForkedStorage`] in a
/// child after `fork` of a process that had opened a database.
pub fn open_db(
    path: &Path,
    create: bool,
    tables: SimhashTables,
    budget: &Budget,
) -> Result<(DB, Cache)> {
    process::claim()?;
    let cache = block_cache(budget);
    let db = DB::open_cf_descriptors(
        &db_options(create, budget),
        path,
        descriptors(tables, &cache, budget),
    )
    .map_err(|e| Error::storage(format!("opening {}", path.display()), e))?;
    Ok((db, cache))
}

/// Writes a consistent snapshot of `db` to `dir`, which must not exist (RocksDB's checkpoint:
/// hard links to the tables on the same file system): an index's or a partition's checkpoint.
///
/// # Errors
/// Storage errors (among them an existing `dir`).
pub(crate) fn checkpoint(db: &DB, dir: &Path) -> Result<()> {
    let cp = rocksdb::checkpoint::Checkpoint::new(db)
        .map_err(|e| Error::storage("preparing a checkpoint", e))?;
    cp.create_checkpoint(dir)
        .map_err(|e| Error::storage(format!("writing a checkpoint to {}", dir.display()), e))
}

/// Opens a database read-only (a snapshot): nothing in `path` is written.
///
/// # Errors
/// [`Error::Storage`] when RocksDB cannot open the path; [`Error::ForkedStorage`] in a
/// child after `fork` of a process that had opened a database.
pub fn open_db_read_only(
    path: &Path,
    tables: SimhashTables,
    budget: &Budget,
) -> Result<(DB, Cache)> {
    // A snapshot of an index written before a column family existed (`chrome`) lacks it: open
    // the ones it has.
    process::claim()?;
    let present = DB::list_cf(&Options::default(), path).map_err(|e| {
        Error::storage(
            format!("listing the column families of {}", path.display()),
            e,
        )
    })?;
    let cache = block_cache(budget);
    let descriptors = descriptors(tables, &cache, budget)
        .into_iter()
        .filter(|d| present.iter().any(|p| p == d.name()));
    let db =
        DB::open_cf_descriptors_read_only(&db_options(false, budget), path, descriptors, false)
            .map_err(|e| Error::storage(format!("opening {} read-only", path.display()), e))?;
    Ok((db, cache))
}

/// The format version and the configuration as stored (either may be absent).
pub type StoredMeta = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Reads the format version and the configuration of the `meta` column family (either may be
/// absent), opening the database read-only: nothing in `path` is written, whatever the format.
///
/// # Errors
/// [`Error::Storage`] when the database cannot be opened read-only;
/// [`Error::ForkedStorage`] in a child after `fork` of a process that had opened a database.
pub fn read_meta(path: &Path) -> Result<StoredMeta> {
    process::claim()?;
    let db = DB::open_cf_for_read_only(&Options::default(), path, [cf::META], false)
        .map_err(|e| Error::storage(format!("opening {}", path.display()), e))?;
    let m = db
        .cf_handle(cf::META)
        .ok_or_else(|| Error::corruption(cf::META, b"", "missing column family"))?;
    let get = |k: &[u8]| {
        db.get_cf(m, k)
            .map_err(|e| Error::storage("reading meta", e))
    };
    Ok((get(meta::FORMAT)?, get(meta::CONFIG)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simhash_key_round_trip_and_prefix_is_block() {
        // Format 3's tables: the hash rotated by a 16-bit block a table.
        let t = SimhashTables::for_format(3, FORMAT_VERSION_3).unwrap();
        let h = 0x1234_5678_9abc_def0u64;
        for table in 0..4u8 {
            let k = t.key(table, h, 77);
            assert_eq!(t.decode(&k), Some((table, h, 77)));
            let block = (h >> (48 - 16 * table as u32)) as u16;
            assert_eq!(&k[1..3], &block.to_be_bytes());
            assert_eq!(&k[1..9], &h.rotate_left(16 * table as u32).to_be_bytes());
        }
        assert_eq!(t.prefix_len(), 3);
        // Format 4's: ten tables, each led by a pair of 13/12-bit blocks.
        let t = SimhashTables::new(3).unwrap();
        assert_eq!(
            (t.tables, t.scheme, t.prefix_len()),
            (10, TableScheme::Pairs, 4)
        );
        let block = |b: u32| {
            (h >> (64 - 13 * b - if b < 4 { 13 } else { 12 })) & if b < 4 { 0x1fff } else { 0xfff }
        };
        for (table, &(i, j)) in PAIRS.iter().enumerate() {
            let k = t.key(table as u8, h, 77);
            assert_eq!(t.decode(&k), Some((table as u8, h, 77)));
            let p = u64::from_be_bytes(k[1..9].try_into().unwrap());
            let (wi, wj) = (if i < 4 { 13 } else { 12 }, if j < 4 { 13 } else { 12 });
            assert_eq!(p >> (64 - wi), block(u32::from(i)));
            assert_eq!((p >> (64 - wi - wj)) & ((1 << wj) - 1), block(u32::from(j)));
        }
        assert_eq!(t.decode(&[10u8; 13]), None);
        assert!(SimhashTables::new(2).is_err());
        // Distances 1 and 7 keep their rotated tables.
        assert_eq!(
            SimhashTables::new(1).unwrap(),
            SimhashTables::for_format(1, 3).unwrap()
        );
        assert_eq!(SimhashTables::new(7).unwrap().tables, 8);
    }

    #[test]
    fn chrome_keys_round_trip() {
        use chrome_key::{decode, Decoded};
        assert_eq!(decode(&chrome_key::host("a.b")), Some(Decoded::Host("a.b")));
        assert_eq!(
            decode(&chrome_key::block("a.b", 42)),
            Some(Decoded::Block("a.b", 42))
        );
        assert_eq!(decode(&chrome_key::page(7)), Some(Decoded::Page(7)));
        assert_eq!(decode(&chrome_key::host("")), Some(Decoded::Host("")));
        assert_eq!(decode(b"B\x03ab"), None);
        assert_eq!(decode(b"Hx"), None);
        assert_eq!(decode(b"P\x00\x01"), None);
        assert_eq!(decode(b""), None);
    }

    #[test]
    fn posting_key_takes_high_bits() {
        let k = posting_key(kind::SENTENCE, (5u128 << 64) | 9);
        assert_eq!(k, [b'F', 0, 0, 0, 0, 0, 0, 0, 5]);
    }
}
