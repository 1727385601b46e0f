//! Keys of a distributed index's format 7 partitions that hold a `u64` id beside another part
//! (FORMAT.md "Format 7: partitions with 64-bit ids"): the `meta` free-id keys and the `chrome`
//! page keys, the single-node layouts ([`super::meta::free_key`], [`chrome_key::page`]) with 8
//! id bytes.

use super::chrome_key;
use super::width::WideDocId;

/// Key of a free page or cluster id of a distributed index's partition (format 7, FORMAT.md
/// "Format 7: partitions with 64-bit ids"): `prefix` ([`super::meta::FREE_DOC`] or
/// [`super::meta::FREE_CLUSTER`]) then the `u64` id, big-endian — [`super::meta::free_key`]'s
/// layout with 8 id bytes.
pub fn wide_free_key(prefix: &[u8], id: WideDocId) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + 8);
    k.extend_from_slice(prefix);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Key of a page's site-chrome record in a distributed index's partition (format 7, FORMAT.md
/// "Format 7: partitions with 64-bit ids"): `P` then the `u64` id, big-endian (9 bytes) —
/// [`chrome_key::page`]'s layout with 8 id bytes.
pub fn wide_chrome_page_key(id: WideDocId) -> [u8; 9] {
    let mut k = [chrome_key::PAGE; 9];
    k[1..].copy_from_slice(&id.to_be_bytes());
    k
}

/// The page of a [`wide_chrome_page_key`]; `None` for any other key (a host's or a block's
/// count, read with [`chrome_key::decode`], or a malformed one).
pub fn decode_wide_chrome_page_key(key: &[u8]) -> Option<WideDocId> {
    match key.split_first()? {
        (&chrome_key::PAGE, id) => <[u8; 8]>::try_from(id).ok().map(u64::from_be_bytes),
        _ => None,
    }
}
