//! The multiset sums a check compares two column families by, and the naming of the entries
//! where they differ.

use std::collections::{HashMap, HashSet};

use xxhash_rust::xxh3::xxh3_64;

use super::report::CheckReport;
use crate::storage::codec::DocId;

/// Buckets of the multiset sums: a mismatch is looked for again in its bucket only.
pub(super) const BUCKETS: usize = 1024;

/// What two column families must agree on, summed by bucket on each side.
#[derive(Clone)]
pub(super) struct Sums {
    /// Per bucket: (sum of the hashes seen from the pages, sum from the index's own family).
    pub(super) buckets: Vec<(u64, u64)>,
}

impl Default for Sums {
    fn default() -> Self {
        Sums {
            buckets: vec![(0, 0); BUCKETS],
        }
    }
}

impl Sums {
    fn bucket(h: u64) -> usize {
        (h >> 54) as usize % BUCKETS
    }

    /// Adds an entry `times` times on the pages' side (`mine`) or the family's.
    pub(super) fn add(&mut self, entry: &[u8], times: u64, mine: bool) {
        let h = xxh3_64(entry);
        let b = &mut self.buckets[Self::bucket(h)];
        let v = h.wrapping_mul(times);
        if mine {
            b.0 = b.0.wrapping_add(v);
        } else {
            b.1 = b.1.wrapping_add(v);
        }
    }

    pub(super) fn merge(&mut self, other: &Sums) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            a.0 = a.0.wrapping_add(b.0);
            a.1 = a.1.wrapping_add(b.1);
        }
    }

    /// The buckets whose two sides differ.
    pub(super) fn differing(&self) -> HashSet<usize> {
        (0..BUCKETS)
            .filter(|&i| self.buckets[i].0 != self.buckets[i].1)
            .collect()
    }

    fn in_bucket(entry: &[u8], bad: &HashSet<usize>) -> bool {
        bad.contains(&Self::bucket(xxh3_64(entry)))
    }
}

/// A posting pair `(key, page)` as hashed.
pub(super) fn pair(key: &[u8; 9], id: DocId) -> [u8; 13] {
    let mut e = [0u8; 13];
    e[..9].copy_from_slice(key);
    e[9..].copy_from_slice(&id.to_be_bytes());
    e
}

/// A key-column-family entry as hashed.
pub(super) fn key_entry(key: &str, id: DocId) -> Vec<u8> {
    let mut e = id.to_be_bytes().to_vec();
    e.extend_from_slice(key.as_bytes());
    e
}

/// Entry → (times seen from the pages, times in the family).
type Seen = HashMap<Vec<u8>, (u64, u64)>;

/// The entries of the buckets whose sums differ, gathered from both sides to be compared.
pub(super) struct Naming {
    bad: [HashSet<usize>; 4],
    /// Per kind, the entries seen.
    seen: [parking_lot::Mutex<Seen>; 4],
}

impl Naming {
    pub(super) fn new(bad: [HashSet<usize>; 4]) -> Naming {
        Naming {
            bad,
            seen: Default::default(),
        }
    }

    pub(super) fn page_entry(&self, kind: usize, e: &[u8]) {
        if Sums::in_bucket(e, &self.bad[kind]) {
            self.seen[kind].lock().entry(e.to_vec()).or_default().0 += 1;
        }
    }

    pub(super) fn index_entry(&self, kind: usize, e: &[u8]) {
        if Sums::in_bucket(e, &self.bad[kind]) {
            self.seen[kind].lock().entry(e.to_vec()).or_default().1 += 1;
        }
    }

    pub(super) fn index_count(&self, e: &[u8], n: u64) {
        if Sums::in_bucket(e, &self.bad[3]) {
            self.seen[3].lock().entry(e.to_vec()).or_default().1 += n;
        }
    }

    pub(super) fn report(self, rep: &mut CheckReport) {
        let [postings, simhash, keys, chrome] = self.seen.map(parking_lot::Mutex::into_inner);
        let mut named = 0;
        let sorted = |m: HashMap<Vec<u8>, (u64, u64)>| {
            let mut v: Vec<(Vec<u8>, (u64, u64))> =
                m.into_iter().filter(|(_, (a, b))| a != b).collect();
            v.sort();
            v
        };
        for (e, (pages, index)) in sorted(postings) {
            let key = crate::error::hex(&e[..9]);
            let id = u32::from_be_bytes([e[9], e[10], e[11], e[12]]);
            named += 1;
            rep.problem(if pages > index {
                format!("page {id} is missing from posting {key}")
            } else {
                format!("posting {key} names page {id}, whose keys do not include it")
            });
        }
        for (e, (pages, index)) in sorted(simhash) {
            let (t, id) = (e[0], u32::from_be_bytes([e[9], e[10], e[11], e[12]]));
            named += 1;
            rep.problem(if pages > index {
                format!("page {id} is missing from simhash table {t}")
            } else {
                format!(
                    "simhash table {t} holds {} for page {id}, which the page does not have",
                    crate::error::hex(&e)
                )
            });
        }
        for (e, (pages, index)) in sorted(keys) {
            let id = u32::from_be_bytes([e[0], e[1], e[2], e[3]]);
            let key = String::from_utf8_lossy(&e[4..]);
            named += 1;
            rep.problem(if pages > index {
                format!("page {id} has key {key:?}, which the keys do not map to it")
            } else {
                format!("key {key:?} maps to page {id}, whose record has another key")
            });
        }
        for (e, (pages, index)) in sorted(chrome) {
            named += 1;
            rep.problem(format!(
                "chrome count {} is {index}, the live pages' records add up to {pages}",
                crate::error::hex(&e)
            ));
        }
        if named == 0 {
            rep.problem(
                "the sums of the postings, simhash tables, keys or block counts differ from the \
                 pages' but no entry differs (a hash collision, or the index changed under the \
                 check)"
                    .into(),
            );
        }
    }
}
