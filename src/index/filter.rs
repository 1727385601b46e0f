//! The in-memory filter of stored posting keys (issue "Speed", point 2): a posting read skips
//! the keys the filter knows nobody has, without a RocksDB read.
//!
//! Most keys a new page looks up are its own new fingerprints, which no page has yet; RocksDB
//! answers "absent" for them through its memtable and table filters, but only after the
//! batched read has set each key up, walked the memtable's filter and every level's. A Bloom
//! filter in memory answers first.
//!
//! The filter is built when the index opens, from a scan of the posting keys, and every commit
//! adds the keys it gives pages to *before* the write (under the writer lock), so no reader can
//! see a posting the filter denies. Keys whose posting empties stay in the filter: a false
//! positive costs one read, never a wrong answer. The filter grows by layers (a scalable Bloom
//! filter): when the newest layer holds its capacity, a layer of twice the capacity is added.
//! Past its memory budget ([`crate::IndexOptions::posting_filter_bytes`]) the filter gives up
//! and every key is read, as without it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use fastbloom::AtomicBloomFilter;
use parking_lot::RwLock;

/// Bits of filter per key a layer is made for: with 7 hashes, a full layer answers "maybe"
/// for about 0.8 % of the keys it does not hold.
const BITS_PER_KEY: usize = 10;
/// Hash functions per key.
const HASHES: u32 = 7;
/// The smallest layer, in keys.
const MIN_CAPACITY: usize = 1 << 20;

/// One layer: a Bloom filter made for `capacity` keys.
struct Layer {
    pub(crate) bloom: AtomicBloomFilter,
    pub(crate) capacity: usize,
    /// Keys inserted into this layer (only the writer inserts).
    pub(crate) count: AtomicUsize,
}

impl Layer {
    pub(crate) fn new(capacity: usize) -> Layer {
        Layer {
            bloom: AtomicBloomFilter::with_num_bits(capacity * BITS_PER_KEY).hashes(HASHES),
            capacity,
            count: AtomicUsize::new(0),
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.capacity * BITS_PER_KEY / 8
    }
}

/// A set of posting keys with false positives and no false negatives.
pub(crate) struct PostingFilter {
    layers: RwLock<Vec<Layer>>,
    /// The most memory the layers may take, in bytes.
    pub(crate) budget: usize,
    /// Off (disabled, or past its budget): every key may be stored.
    pub(crate) off: AtomicBool,
}

/// The hash the filter keeps of a key (posting keys are hashes already, but not every kind
/// spreads its bits evenly over all 9 bytes).
#[inline]
fn key_hash(key: &[u8; 9]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

impl PostingFilter {
    /// A filter for about `expected` keys that may take up to `budget` bytes; off when the
    /// budget is 0 or cannot hold the first layer.
    pub(crate) fn new(expected: usize, budget: usize) -> PostingFilter {
        let capacity = expected.saturating_mul(2).max(MIN_CAPACITY);
        let first = capacity * BITS_PER_KEY / 8;
        let off = first > budget;
        PostingFilter {
            layers: RwLock::new(if off {
                Vec::new()
            } else {
                vec![Layer::new(capacity)]
            }),
            budget,
            off: AtomicBool::new(off),
        }
    }

    /// Is the filter answering (not disabled, not past its budget)?
    pub(crate) fn is_on(&self) -> bool {
        !self.off.load(Ordering::Acquire)
    }

    /// May `key` have a stored posting? `false` only for a key never inserted.
    #[inline]
    pub(crate) fn may_contain(&self, key: &[u8; 9]) -> bool {
        if !self.is_on() {
            return true;
        }
        let h = key_hash(key);
        let layers = self.layers.read();
        // Read `off` again under the lock: a filter turned off meanwhile has no layers.
        !self.is_on() || layers.iter().any(|l| l.bloom.contains_hash(h))
    }

    /// Adds a key. Called by the writer (one at a time) before the write that stores the key.
    pub(crate) fn insert(&self, key: &[u8; 9]) {
        if !self.is_on() {
            return;
        }
        let h = key_hash(key);
        {
            let layers = self.layers.read();
            if let Some(last) = layers.last() {
                if last.count.load(Ordering::Relaxed) < last.capacity {
                    last.bloom.insert_hash(h);
                    last.count.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }
        let mut layers = self.layers.write();
        let capacity = layers.last().map_or(MIN_CAPACITY, |l| l.capacity * 2);
        let used: usize = layers.iter().map(Layer::bytes).sum();
        if used + capacity * BITS_PER_KEY / 8 > self.budget {
            log::info!(
                "neardup: the posting-key filter reached its budget of {} bytes; posting reads \
                 go to RocksDB for every key from now on",
                self.budget
            );
            self.off.store(true, Ordering::Release);
            layers.clear();
            layers.shrink_to_fit();
            return;
        }
        let layer = Layer::new(capacity);
        layer.bloom.insert_hash(h);
        layer.count.store(1, Ordering::Relaxed);
        layers.push(layer);
    }

    /// Memory the layers take, in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.layers.read().iter().map(Layer::bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> [u8; 9] {
        let mut k = [0u8; 9];
        k[0] = (i % 5) as u8;
        k[1..].copy_from_slice(&i.to_be_bytes());
        k
    }

    #[test]
    fn no_false_negatives_across_layers() {
        let f = PostingFilter::new(0, usize::MAX);
        let n = (MIN_CAPACITY * 3 + 17) as u64;
        for i in 0..n {
            f.insert(&key(i));
        }
        // Three layers: 1, 2 and 4 times the smallest.
        assert_eq!(f.layers.read().len(), 3);
        assert!((0..n).all(|i| f.may_contain(&key(i))));
        // Keys never inserted: mostly denied.
        let fp = (n..n + 100_000).filter(|&i| f.may_contain(&key(i))).count();
        assert!(fp < 3_000, "{fp} false positives in 100,000");
    }

    #[test]
    fn past_the_budget_every_key_may_be_stored() {
        let budget = MIN_CAPACITY * BITS_PER_KEY / 8;
        let f = PostingFilter::new(0, budget);
        assert!(f.is_on());
        for i in 0..MIN_CAPACITY as u64 {
            f.insert(&key(i));
        }
        assert!(f.is_on());
        f.insert(&key(u64::MAX - 1));
        assert!(!f.is_on());
        assert_eq!(f.bytes(), 0);
        assert!(f.may_contain(&key(u64::MAX)));
        assert!(f.may_contain(&key(3)));
    }

    #[test]
    fn a_zero_budget_is_off() {
        let f = PostingFilter::new(10, 0);
        assert!(!f.is_on());
        f.insert(&key(1));
        assert!(f.may_contain(&key(2)));
    }
}
