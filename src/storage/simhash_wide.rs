//! The `simhash` table entries of a distributed index's key partitions (SCALEOUT §4: the tables
//! live in key partitions, by block prefix), whose pages are global `u64` ids: the single-node
//! key layout ([`SimhashTables::key`], FORMAT.md "Column families") with 8 id bytes.

use super::width::WideDocId;
use super::SimhashTables;
use crate::{Error, Result};

impl SimhashTables {
    /// The key of a `simhash` table entry for page `id` of a distributed index's partition
    /// (SCALEOUT §4; FORMAT.md "Column families"): the table byte, the simhash permuted for the
    /// table (8 bytes), then the global id (8 bytes), all big-endian — [`Self::key`]'s layout
    /// with a `u64` id, 17 bytes, in the order of (table, permuted simhash, id). The prefix a
    /// look-up seeks ([`Self::prefix_len`], [`Self::block_keys`]) is the same as a single-node
    /// index's.
    pub fn wide_key(&self, t: u8, simhash: u64, id: WideDocId) -> [u8; 17] {
        let mut k = [0u8; 17];
        k[..9].copy_from_slice(&self.key(t, simhash, 0)[..9]);
        k[9..].copy_from_slice(&id.to_be_bytes());
        k
    }

    /// Decodes a [`Self::wide_key`] into (table, original simhash, id) (SCALEOUT §4; FORMAT.md
    /// "Column families"); `None` if it is not 17 bytes (a 13-byte key is a single-node index's,
    /// [`Self::decode`]) or names no table of these.
    pub fn decode_wide(&self, key: &[u8]) -> Option<(u8, u64, WideDocId)> {
        let (head, id) = key.split_at_checked(9)?;
        let id = <[u8; 8]>::try_from(id).ok()?;
        let mut narrow = [0u8; 13];
        narrow[..9].copy_from_slice(head);
        let (t, simhash, _) = self.decode(&narrow)?;
        Some((t, simhash, u64::from_be_bytes(id)))
    }
}

/// Reads a `simhash` entry's key as (table, simhash, page id of width `I`).
pub(crate) type EntryDecoder<I> = fn(&SimhashTables, &[u8]) -> Option<(u8, u64, I)>;

/// Calls `f(id, distance)` with every entry of the `simhash` tables within `max` bits of `h`
/// (seed 001 §3.3: a page within `max` bits shares one table's block prefix with `h`), read
/// through `it` (an iterator of the `simhash` column family with `prefix_same_as_start`): each
/// table's block prefix sought, the entries under it decoded by `decode` (a single-node index's
/// 13-byte keys, [`SimhashTables::decode`], or a partition's 17-byte ones,
/// [`SimhashTables::decode_wide`]) and compared whole. An id may come once per table.
///
/// # Errors
/// [`Error::Corruption`] for an entry `decode` refuses (`expected` says what it wants), storage
/// errors.
pub(crate) fn scan_near<I>(
    it: &mut rocksdb::DBRawIterator<'_>,
    tables: &SimhashTables,
    (h, max): (u64, u32),
    (decode, expected): (EntryDecoder<I>, &str),
    mut f: impl FnMut(I, u32),
) -> Result<()> {
    for prefix in tables.block_keys(h) {
        let prefix = prefix.as_slice();
        it.seek(prefix);
        while let Some(key) = it.key() {
            if !key.starts_with(prefix) {
                break;
            }
            let (_, s, id) = decode(tables, key)
                .ok_or_else(|| Error::corruption(super::cf::SIMHASH, key, expected))?;
            let d = crate::fingerprint::hamming(s, h);
            if d <= max {
                f(id, d);
            }
            it.next();
        }
        it.status()
            .map_err(|e| Error::storage("reading simhash tables", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{TableScheme, FORMAT_VERSION_3};

    #[test]
    fn wide_keys_round_trip_and_keep_the_narrow_prefix() {
        let h = 0x1234_5678_9abc_def0u64;
        let ids = [
            0u64,
            77,
            u64::from(u32::MAX),
            (1 << 32) + 5,
            (7 << 40) | 3,
            u64::MAX,
        ];
        for t in [
            SimhashTables::new(3).unwrap(),
            SimhashTables::for_format(3, FORMAT_VERSION_3).unwrap(),
            SimhashTables::new(1).unwrap(),
            SimhashTables::new(7).unwrap(),
        ] {
            for table in 0..t.tables {
                for &id in &ids {
                    let k = t.wide_key(table, h, id);
                    assert_eq!(t.decode_wide(&k), Some((table, h, id)));
                    // The table byte and permuted hash are the single-node key's: the same
                    // block prefix, so a look-up seeks alike.
                    assert_eq!(&k[..9], &t.key(table, h, 0)[..9]);
                    assert_eq!(&k[..t.prefix_len()], &t.block_keys(h)[table as usize][..]);
                    assert_eq!(&k[9..], &id.to_be_bytes());
                    // Neither width reads the other's key.
                    assert_eq!(t.decode(&k), None);
                }
                assert_eq!(t.decode_wide(&t.key(table, h, 77)), None);
            }
            assert_eq!(t.decode_wide(&[t.tables; 17]), None);
            assert_eq!(t.decode_wide(&[0; 16]), None);
            assert_eq!(t.decode_wide(&[]), None);
        }
        assert_eq!(SimhashTables::new(3).unwrap().scheme, TableScheme::Pairs);
    }

    #[test]
    fn wide_keys_sort_by_table_hash_then_id() {
        let t = SimhashTables::new(3).unwrap();
        let h = 0xfeed_f00d_dead_beefu64;
        let ids = [
            3u64,
            u64::from(u32::MAX),
            1 << 32,
            (1 << 32) + 1,
            u64::MAX - 1,
        ];
        let keys: Vec<[u8; 17]> = ids.iter().map(|&id| t.wide_key(4, h, id)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }
}
