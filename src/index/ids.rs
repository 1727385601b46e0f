//! Ids: the writer's counters and allocators (persisted in `meta` with every commit), the free
//! ids given out again, and the journal of which event gave out which id (for a distributed
//! merge, which maps each work unit's ids to those one machine would give).

use std::sync::Arc;

use roaring::RoaringBitmap;

use crate::storage::codec::{ClusterId, DocId};
use crate::storage::{self, cf};
use crate::{Error, Result};

/// The writer's state: id allocators and counts (persisted in the `meta` column family with
/// every commit).
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub(crate) next_doc: DocId,
    pub(crate) next_cluster: ClusterId,
    pub(crate) live_docs: u64,
    pub(crate) live_clusters: u64,
    /// The next page insertion number ([`DocRecord::seq`]).
    pub(crate) next_seq: u64,
    /// Ids of deleted pages, given out again before `next_doc` grows.
    pub(crate) free_docs: FreeIds,
    /// Ids of dissolved clusters, given out again before `next_cluster` grows.
    pub(crate) free_clusters: FreeIds,
    /// The commit count at the start of each batch in flight (see [`FreeIds::held`]).
    pub(crate) batches: Vec<u64>,
    /// The sequence number the next change of the feed gets (`storage::meta::NEXT_CHANGE`).
    pub(crate) next_change: u64,
    /// Every change numbered up to this one is trimmed from the feed
    /// (`storage::meta::CHANGES_TRIMMED`).
    pub(crate) changes_trimmed: u64,
}

/// The free ids of one kind, in memory; each is also a key in the `meta` column family
/// (`storage::meta::free_key`), written in the same batch as the delete that frees it and the
/// insert that takes it again.
#[derive(Clone, Debug, Default)]
pub(crate) struct FreeIds {
    /// Ids that can be given out now (shared with transactions without a copy).
    pub(crate) ready: Arc<RoaringBitmap>,
    /// Ids freed while a batch was in flight, with the number of the commit that freed each. A
    /// batch decides pages on outcomes it computed ahead against the pages it read
    /// (`cluster::Memo`, keyed by id): an id freed after it started must not name another page
    /// before it has ended. An id joins `ready` once every batch in flight started after the
    /// commit that freed it (overlapping batches do not hold ids forever).
    pub(crate) held: Vec<(u64, u32)>,
}

impl FreeIds {
    /// Takes out the ids commit `number` gave out, and adds the ids it freed (held while
    /// `hold`: a batch is in flight).
    pub(crate) fn settle(&mut self, taken: &[u32], freed: &[u32], number: u64, hold: bool) {
        if taken.is_empty() && freed.is_empty() {
            return;
        }
        let ready = Arc::make_mut(&mut self.ready);
        for &t in taken {
            ready.remove(t);
        }
        for &f in freed {
            if hold {
                self.held.push((number, f));
            } else {
                ready.insert(f);
            }
        }
    }

    /// Makes ready the held ids freed before `oldest`, the start of the oldest batch in flight
    /// (all of them when none is).
    pub(crate) fn release(&mut self, oldest: Option<u64>) {
        if self.held.is_empty() {
            return;
        }
        let ready = Arc::make_mut(&mut self.ready);
        self.held.retain(|&(n, id)| {
            let go = oldest.is_none_or(|o| n <= o);
            if go {
                ready.insert(id);
            }
            !go
        });
    }

    /// Every free id, ready or held.
    pub(crate) fn all(&self) -> RoaringBitmap {
        let mut all = (*self.ready).clone();
        all.extend(self.held.iter().map(|&(_, id)| id));
        all
    }
}

/// An id a committed write gave out ([`crate::Index::take_allocations`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The key of the page being inserted when it was given out; `None` during a delete.
    pub key: Option<std::sync::Arc<str>>,
    /// The id.
    pub id: AllocatedId,
}

/// What an [`Allocation`] gave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatedId {
    /// A page id with its insertion number.
    Page {
        /// The page id.
        doc: DocId,
        /// The insertion number.
        seq: u64,
    },
    /// A cluster id.
    Cluster(ClusterId),
}

impl super::Index {
    /// Starts (`true`) or stops recording the ids committed writes give out, each with the key
    /// of the page being inserted then (SCALEOUT §5 S4–S5: a work unit reports which event gave
    /// out each of its new ids, so that the batch's ids can be numbered in the single node's
    /// order). Stopping drops what was recorded.
    pub fn record_allocations(&self, on: bool) {
        let mut a = self.allocations.lock();
        *a = on.then(Vec::new);
        self.recording
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// The ids given out since the last call (or since recording started), in the order they
    /// were given out.
    pub fn take_allocations(&self) -> Vec<Allocation> {
        self.allocations
            .lock()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    pub(crate) fn recording_allocations(&self) -> bool {
        self.recording.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// The free ids stored under `prefix` in the `meta` family, from its entries read in key order
/// from `prefix` on (by the latest state or a snapshot).
pub(crate) fn free_ids_from(
    prefix: &[u8],
    entries: impl Iterator<Item = std::result::Result<storage::Entry, rocksdb::Error>>,
) -> Result<RoaringBitmap> {
    let mut ids = RoaringBitmap::new();
    for item in entries {
        let (k, _) = item.map_err(|e| Error::storage("reading free ids", e))?;
        let Some(id) = k.strip_prefix(prefix) else {
            break;
        };
        ids.insert(storage::decode_u32(cf::META, &k, id)?);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::FreeIds;

    #[test]
    fn held_ids_wait_for_the_batches_that_started_before_they_were_freed() {
        let mut f = FreeIds::default();
        // Commit 3 frees 7 with no batch in flight: ready at once.
        f.settle(&[], &[7], 3, false);
        assert!(f.ready.contains(7));
        // Commits 5 and 9 free 8 and 9 while batches are in flight.
        f.settle(&[], &[8], 5, true);
        f.settle(&[], &[9], 9, true);
        assert_eq!(f.all().iter().collect::<Vec<_>>(), vec![7, 8, 9]);
        // The oldest batch in flight started at commit 6: 8 (freed at 5) is safe, 9 is not.
        f.release(Some(6));
        assert!(f.ready.contains(8) && !f.ready.contains(9));
        // No batch in flight: everything.
        f.release(None);
        assert!(f.ready.contains(9) && f.held.is_empty());
        // Taken ids leave.
        f.settle(&[7, 8], &[], 10, false);
        assert_eq!(f.all().iter().collect::<Vec<_>>(), vec![9]);
    }
}
