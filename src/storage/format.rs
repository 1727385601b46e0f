//! The on-disk format versions this build reads and writes, and what each has (FORMAT.md).

/// The on-disk format version this build writes. Format 5 (no raw page hashes) is upgraded to
/// it in place when opened for writing (the version number only: every format 5 record reads);
/// formats 4 (no page → cluster map) and 3 (also simhash tables of 16-bit blocks at distance 3)
/// are read and written as they are; format 2 (no insertion numbers, ids never reused) is read
/// too, and upgraded to 3 when opened for writing. `compact` writes formats 3 to 5 out as the
/// current one.
pub const FORMAT_VERSION: u32 = 6;
/// Format 7: a partition of a distributed index whose page and cluster ids are global `u64`s
/// (SCALEOUT §4; FORMAT.md "Format 7: partitions with 64-bit ids"), written and read by
/// [`crate::merge::WidePartition`] only. [`crate::Index`] refuses it ([`format_supported`] is
/// false for it), and a `WidePartition` refuses every other format.
pub const FORMAT_VERSION_WIDE: u32 = 7;
/// Format 5: page records without the raw page hash ([`has_raw_hashes`]).
pub const FORMAT_VERSION_5: u32 = 5;
/// Format 4: no page → cluster map ([`has_cluster_map`]); a page's cluster is read from its
/// record.
pub const FORMAT_VERSION_4: u32 = 4;
/// Format 3: the tables of [`super::TableScheme::Rotated`] at every distance.
pub const FORMAT_VERSION_3: u32 = 3;
/// Format 2, read and upgraded to 3.
pub const FORMAT_VERSION_2: u32 = 2;

/// Is `format` one this build opens?
pub fn format_supported(format: u32) -> bool {
    (FORMAT_VERSION_2..=FORMAT_VERSION).contains(&format)
}

/// Does an index of on-disk format `format` keep the page → cluster map
/// ([`super::cf::PAGE_CLUSTERS`], from format 5 on), written with every page record and read by
/// candidate search in place of the records?
pub fn has_cluster_map(format: u32) -> bool {
    format > FORMAT_VERSION_4
}

/// Does an index of on-disk format `format` keep the hash of each page's raw page in its record
/// (from format 6 on: `0xD3` page records and version 2 change records; FORMAT.md "Document
/// record")? A build that reads only format 5 cannot read those records, so an older format
/// keeps writing its own layouts.
pub fn has_raw_hashes(format: u32) -> bool {
    format > FORMAT_VERSION_5
}
