//! The change feed's side of a write transaction: the changes a write records (in the order the
//! writer decided them), what they did to other pages and clusters (found by comparing the
//! write's overlay with the state before it), their sequence numbers and records in the write's
//! own `WriteBatch`, and the trim of the oldest ones past the retention — and, when a change is
//! applied to a copy of the index, the ids it must give out again.

use std::collections::{HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use roaring::RoaringBitmap;

use super::Txn;
use crate::index::view::View;
use crate::storage::change::{change_key, Change, ChangeKind, PageChange};
use crate::storage::codec::{ClusterId, DocId};
use crate::storage::{cf, id_key, meta};
use crate::{Error, Result};

/// The error of a change that does not apply to this index as it did to the original.
pub(crate) fn diverged(what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!(
        "the change does not apply to this index as it did where it was made ({what}): a copy \
         must start from a copy of the original and be written only by apply_change, in the \
         feed's order"
    ))
}

impl Txn<'_> {
    /// Where the clusters a change founds start in [`Txn::clusters_given`]: noted when the
    /// change starts, read by [`Txn::founded_since`] when it is recorded.
    pub(crate) fn founding_mark(&self) -> usize {
        self.clusters_given.len()
    }

    /// The clusters given out since `mark`.
    pub(crate) fn founded_since(&self, mark: usize) -> Vec<ClusterId> {
        self.clusters_given[mark..].to_vec()
    }

    /// Records a page inserted (`replaced`: under a key the index held). Its cluster and
    /// representative are filled in as the write leaves them ([`Txn::resolve_feed`]).
    pub(crate) fn record_page(&mut self, replaced: bool, page: PageChange) {
        self.changes.push(if replaced {
            ChangeKind::Replaced(page)
        } else {
            ChangeKind::Inserted(page)
        });
    }

    /// Records a change that needs nothing filled in (a new publish time, a delete).
    pub(crate) fn record(&mut self, change: ChangeKind) {
        self.changes.push(change);
    }

    /// Gives out a pinned id instead of the allocator's choice, when the write applies a change
    /// ([`Txn::pins`]). `None`: the write is not applying one.
    pub(crate) fn pinned_id(
        pin: Option<u32>,
        free: &RoaringBitmap,
        taken: &mut Vec<u32>,
        next: &mut u32,
        what: &str,
    ) -> Result<u32> {
        let Some(id) = pin else {
            return Err(diverged(format!("it gives out one {what} id more")));
        };
        if free.contains(id) && !taken.contains(&id) {
            taken.push(id);
        } else if id == *next {
            *next = id.checked_add(1).ok_or(Error::Full)?;
        } else {
            return Err(diverged(format!(
                "{what} id {id} is neither free nor the next one ({})",
                *next
            )));
        }
        Ok(id)
    }

    /// Fills in the recorded pages' clusters and representatives as this write leaves them,
    /// and adds what the write did to pages and clusters held before it: members moved to
    /// another cluster, clusters with another representative. Reads the state before the write
    /// (under the writer lock, so nothing changes it meanwhile). A write that records no change
    /// (a batch log's) adds none.
    /// A write that applies another index's change records that change as it is instead
    /// ([`Txn::mirror`]): the copy's feed is the original's, change for change.
    pub(crate) fn resolve_feed(&mut self) -> Result<()> {
        if let Some(m) = &self.mirror {
            self.changes = vec![m.kind.clone()];
            return Ok(());
        }
        if self.changes.is_empty() {
            return Ok(());
        }
        let mut changes = std::mem::take(&mut self.changes);
        let mut reps: HashMap<ClusterId, String> = HashMap::new();
        for c in &mut changes {
            if let ChangeKind::Inserted(p) | ChangeKind::Replaced(p) = c {
                if let Some(rec) = self.doc(p.doc)? {
                    p.cluster = rec.cluster;
                }
                p.representative = self.representative_key(p.cluster, &mut reps)?;
            }
        }
        let new: HashSet<DocId> = self.ids.allocated_docs.iter().copied().collect();
        let mut docs: Vec<(DocId, ClusterId, String)> = self
            .docs
            .iter()
            .filter(|(id, _)| !new.contains(id))
            .filter_map(|(id, rec)| rec.as_ref().map(|r| (*id, r.cluster, r.key.clone())))
            .collect();
        docs.sort_unstable_by_key(|d| d.0);
        for (doc, to, key) in docs {
            let Some(before) = self.ix.doc(doc)? else {
                continue;
            };
            if before.cluster != to {
                let representative = self.representative_key(to, &mut reps)?;
                changes.push(ChangeKind::Moved {
                    key,
                    doc,
                    from: before.cluster,
                    to,
                    representative,
                });
            }
        }
        let mut clusters: Vec<(ClusterId, DocId)> = self
            .clusters
            .iter()
            .filter_map(|(cid, cl)| cl.as_ref().map(|c| (*cid, c.representative)))
            .collect();
        clusters.sort_unstable();
        for (cluster, rep) in clusters {
            let Some(before) = self.ix.cluster(cluster)? else {
                continue;
            };
            if before.representative == rep {
                continue;
            }
            let previous = self.ix.doc(before.representative)?.map(|r| r.key);
            let representative = self.doc(rep)?.map(|r| r.key);
            if let (Some(previous), Some(representative)) = (previous, representative) {
                // A representative's new version keeping its lead: the same key leads.
                if previous != representative {
                    changes.push(ChangeKind::RepresentativeChanged {
                        cluster,
                        previous,
                        representative,
                    });
                }
            }
        }
        self.changes = changes;
        Ok(())
    }

    /// The key of cluster `cid`'s representative as this write leaves it (empty when the
    /// cluster is gone), remembered in `reps`.
    fn representative_key(
        &self,
        cid: ClusterId,
        reps: &mut HashMap<ClusterId, String>,
    ) -> Result<String> {
        if let Some(k) = reps.get(&cid) {
            return Ok(k.clone());
        }
        let key = match self.cluster(cid)? {
            Some(cl) => self.doc(cl.representative)?.map(|r| r.key).ok_or_else(|| {
                Error::corruption(
                    cf::DOCS,
                    &id_key(cl.representative),
                    "a representative is missing",
                )
            })?,
            None => String::new(),
        };
        reps.insert(cid, key.clone());
        Ok(key)
    }

    /// Puts the recorded changes into the batch under their sequence numbers (none when the
    /// retention is 0), trims the feed to the retention, and writes the feed's counters.
    pub(crate) fn finish_feed(&mut self) {
        if self.changes.is_empty() {
            return;
        }
        let ix = self.ix;
        let retention = ix.opts.change_retention;
        let committed_ms = match &self.mirror {
            Some(m) => m.committed_ms,
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        };
        let first = self.next_change;
        debug_assert!(self.mirror.as_ref().is_none_or(|m| m.seq == first));
        let h = ix.cf(cf::CHANGES);
        for (i, kind) in std::mem::take(&mut self.changes).into_iter().enumerate() {
            let seq = first + i as u64;
            if retention > 0 {
                let c = Change {
                    seq,
                    committed_ms,
                    kind,
                };
                self.batch.put_cf(h, change_key(seq), c.encode_value());
            }
            self.next_change = seq + 1;
        }
        // Trimmed from the oldest once an eighth of the retention is past it (one range
        // delete, no read): the feed keeps between `retention` and 9/8 of it.
        let last = self.next_change - 1;
        let kept = last - self.changes_trimmed;
        let step = (retention / 8).max(1);
        if kept > retention && (retention == 0 || kept - retention >= step) {
            let trimmed = last - retention;
            // With nothing kept now and nothing left from before, there is nothing to delete.
            if retention > 0 || self.changes_trimmed + 1 < first {
                self.batch.delete_range_cf(
                    h,
                    change_key(self.changes_trimmed + 1),
                    change_key(trimmed + 1),
                );
            }
            self.changes_trimmed = trimmed;
        }
        let m = ix.cf(cf::META);
        self.batch
            .put_cf(m, meta::NEXT_CHANGE, self.next_change.to_be_bytes());
        self.batch
            .put_cf(m, meta::CHANGES_TRIMMED, self.changes_trimmed.to_be_bytes());
    }
}
