//! The sketch keys of a component over the cap, as weighted edges (SCALEOUT §7.1 option (2);
//! issue #34): a key partition lists, for each key of the probes it is given, every owner (a
//! row of the day, a member placed again) and every standing page filed under it, as a star of
//! edges from the first owner, each weighted by the key's owners. The coordinator joins the
//! component's pieces through them, the rarest keys first, as far as the cap allows
//! ([`super::Components::add_edges_capped`]): the edges of the largest postings are the ones
//! cut.

use rustc_hash::FxHashMap;

use super::reach::{standing_node, PROBE_CHUNK};
use super::WidePartition;
use crate::index::Index;
use crate::storage::width::{IdSet, IdWidth};
use crate::{Error, Result};

/// Posting keys with every owner filed under each ([`KeyStars::add_keys`]), read through a key
/// partition's postings by [`Index::key_stars`] or [`WidePartition::key_stars`].
#[derive(Debug, Default)]
pub struct KeyStars {
    owners: FxHashMap<[u8; 9], Vec<u64>>,
}

/// The edges [`Index::key_stars`] gives: `(a[i], b[i])` joined through a key with `weight[i]`
/// owners (the probes' and the standing pages filed under it), edges of one key together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StarEdges {
    /// The first owner of each edge's key.
    pub a: Vec<u64>,
    /// Another owner of it, or a standing page filed under it.
    pub b: Vec<u64>,
    /// The owners of the edge's key.
    pub weight: Vec<u32>,
    /// The distinct keys looked up.
    pub keys: u64,
}

impl KeyStars {
    /// No keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds posting keys, `owners[i]` filed under `keys[i]` (an S3 node); an owner given twice
    /// for one key counts once.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the lengths differ.
    pub fn add_keys(&mut self, keys: &[[u8; 9]], owners: &[u64]) -> Result<()> {
        if keys.len() != owners.len() {
            return Err(Error::InvalidArgument(
                "star keys: each key needs one owner".into(),
            ));
        }
        for (k, &o) in keys.iter().zip(owners) {
            self.owners.entry(*k).or_default().push(o);
        }
        Ok(())
    }
}

/// The body of [`Index::key_stars`] for either id width: the keys in sorted order, their
/// standing pages from `postings` ([`PROBE_CHUNK`] keys at a time), standing page `d` as node
/// `doc_tag | d`; each key a star from its lowest owner.
fn join_stars<I: IdWidth>(
    stars: KeyStars,
    doc_tag: u64,
    postings: impl Fn(&[[u8; 9]]) -> Result<Vec<I::Set>>,
) -> Result<StarEdges> {
    let mut keys: Vec<([u8; 9], Vec<u64>)> = stars.owners.into_iter().collect();
    keys.sort_unstable_by_key(|(k, _)| *k);
    let mut out = StarEdges {
        keys: keys.len() as u64,
        ..StarEdges::default()
    };
    // Each owner once, the star's centre the lowest owner (a probe, never a standing page:
    // two standing pages on a key read nothing of each other, only a probe reads them), the
    // same edges whatever the order the probes came in.
    for (_, owners) in &mut keys {
        owners.sort_unstable();
        owners.dedup();
    }
    for chunk in keys.chunks(PROBE_CHUNK) {
        let ks: Vec<[u8; 9]> = chunk.iter().map(|(k, _)| *k).collect();
        for ((_, own), standing) in chunk.iter().zip(postings(&ks)?) {
            let mut others = own[1..].to_vec();
            for d in standing.ids() {
                let node = standing_node(doc_tag, d)?;
                // A member placed again is a standing page filed under its own keys.
                if own.binary_search(&node).is_err() {
                    others.push(node);
                }
            }
            let weight = u32::try_from(others.len() + 1).unwrap_or(u32::MAX);
            for o in others {
                out.a.push(own[0]);
                out.b.push(o);
                out.weight.push(weight);
            }
        }
    }
    Ok(out)
}

impl Index {
    /// A key partition's sketch keys for the third round of a component over the cap
    /// (SCALEOUT §7.1 option (2); `neardup.ray`'s S3): for each key of `stars`, an edge from
    /// its first owner to each other owner and each standing page filed under it (none for an
    /// over-frequent key, which no decision reads), weighted by their number; standing page
    /// `d` is node `doc_tag | d`.
    ///
    /// # Errors
    /// Storage and corruption errors.
    pub fn key_stars(&self, stars: KeyStars, doc_tag: u64) -> Result<StarEdges> {
        join_stars::<u32>(stars, doc_tag, |ks| self.posting_ids(ks))
    }
}

impl WidePartition {
    /// [`Index::key_stars`] for a partition of `u64` ids.
    ///
    /// # Errors
    /// Storage and corruption errors; [`Error::InvalidArgument`] for a standing page id of
    /// 2⁵⁶ or more ([`crate::merge::NODE_ID_BITS`]).
    pub fn key_stars(&self, stars: KeyStars, doc_tag: u64) -> Result<StarEdges> {
        join_stars::<u64>(stars, doc_tag, |ks| self.posting_ids(ks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roaring::RoaringBitmap;

    fn key(b: u8) -> [u8; 9] {
        [b'K', b, 0, 0, 0, 0, 0, 0, 0]
    }

    #[test]
    fn each_key_is_a_star_from_its_first_owner_weighted_by_its_owners() {
        let mut s = KeyStars::new();
        s.add_keys(&[key(2), key(1), key(2), key(2)], &[10, 11, 12, 10])
            .unwrap();
        let postings = |ks: &[[u8; 9]]| -> Result<Vec<RoaringBitmap>> {
            Ok(ks
                .iter()
                .map(|k| match k[1] {
                    1 => RoaringBitmap::from_iter([7u32]),
                    _ => RoaringBitmap::new(),
                })
                .collect())
        };
        let e = join_stars::<u32>(s, 1 << 56, postings).unwrap();
        // Key 1: row 11 and standing page 7; key 2: rows 10 and 12 (10 given twice).
        assert_eq!(e.keys, 2);
        assert_eq!(e.a, vec![11, 10]);
        assert_eq!(e.b, vec![(1 << 56) | 7, 12]);
        let mut again = KeyStars::new();
        again
            .add_keys(&[key(2), key(2), key(1), key(2)], &[12, 10, 11, 10])
            .unwrap();
        assert_eq!(join_stars::<u32>(again, 1 << 56, postings).unwrap(), e);
        assert_eq!(e.weight, vec![2, 2]);
    }

    #[test]
    fn a_star_is_centred_on_a_probe_not_on_a_standing_page() {
        let row = |r: u64| (1u64 << 56) | r;
        let mut s = KeyStars::new();
        s.add_keys(&[key(1), key(1), key(1)], &[row(9), 4, row(5)])
            .unwrap();
        // Standing pages 3 and 4 (4 is also the member placed again, an owner).
        let e = join_stars::<u32>(s, 0, |ks| {
            Ok(vec![RoaringBitmap::from_iter([3u32, 4]); ks.len()])
        })
        .unwrap();
        assert_eq!(e.a, vec![4, 4, 4]);
        assert_eq!(e.b, vec![row(5), row(9), 3]);
        assert_eq!(e.weight, vec![4, 4, 4]);
        let mut rows_only = KeyStars::new();
        rows_only.add_keys(&[key(1)], &[row(9)]).unwrap();
        let e = join_stars::<u32>(rows_only, 0, |ks| {
            Ok(vec![RoaringBitmap::from_iter([3u32, 7]); ks.len()])
        })
        .unwrap();
        assert_eq!((e.a, e.b), (vec![row(9); 2], vec![3, 7]));
    }

    #[test]
    fn a_key_alone_gives_no_edge_and_lengths_must_match() {
        let mut s = KeyStars::new();
        assert!(s.add_keys(&[key(1)], &[]).is_err());
        s.add_keys(&[key(1)], &[3]).unwrap();
        let e = join_stars::<u32>(s, 0, |ks| Ok(vec![RoaringBitmap::new(); ks.len()])).unwrap();
        assert!(e.a.is_empty() && e.keys == 1);
    }
}
