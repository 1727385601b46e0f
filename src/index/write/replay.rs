//! Applying a change of another index's feed ([`Index::apply_change`]): the change decided
//! again, on this index's state, from what the feed kept of it — the page's normalized text and
//! heading codes, its host and time — with the ids the original gave out, so that a copy that
//! started from a copy of the original (or from nothing, with the whole feed) makes the same
//! decisions and holds the same pages, clusters and ids.

use super::feed::diverged;
use super::txn::{Pins, Txn};
use crate::index::decide::Memo;
use crate::index::types::Page;
use crate::index::view::View;
use crate::index::{check_page, Index};
use crate::signature::{Content, Signatures};
use crate::storage::change::{Change, ChangeKind};
use crate::Result;

impl Index {
    /// Applies a change listed by another index's [`Index::changes_since`] — a replica
    /// following its primary, an incremental copy — in one atomic write. Inserts, replaces,
    /// new publish times and deletes are decided again here from what the change kept (the
    /// normalized text and heading codes the original decided on, its host and time, the site
    /// chrome it counted, the hash of its raw page), giving out the ids the original gave;
    /// [`ChangeKind::Moved`] and [`ChangeKind::RepresentativeChanged`] are what those did
    /// (the decisions redo them here). Every change, of each kind, is recorded in this index's
    /// feed as it is, under its number: the copy's feed is the original's, change for change
    /// (a write that decided several pages at once records fewer moves and hand-overs than
    /// its pages decided one by one would), so the copy's [`Index::last_change`] is the last
    /// change it applied, and the copy can itself be followed.
    ///
    /// Applied in sequence order to an index opened with the same stored configuration (and the
    /// same search options: verification thresholds, `max_clusters_verified`, over-frequent
    /// thresholds, `sticky_representative`, `heading_codes`, `min_text_width`) that started
    /// empty with the original, or from a copy of it (a checkpoint) and its
    /// [`Index::last_change`], and is written by nothing else, the copy holds what the
    /// original holds: the same records, clusters, representatives and ids, the same
    /// [`Index::export`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the change is not the next one of this index's feed
    /// (applied already, or one skipped), or does not apply as it did where it was made (an
    /// insert of a key this index holds, a delete of one it does not, an id that is not free
    /// here): this index is not a copy of the original at that change; nothing is written.
    /// [`Error::Poisoned`], storage and corruption errors as for [`Index::insert`].
    pub fn apply_change(&self, change: &Change) -> Result<()> {
        let mut counters = self.lock_writer()?;
        self.refuse_if_partition("applying a change")?;
        if change.seq != counters.next_change {
            return Err(diverged(format!(
                "it is change {}, and the next change here is {}",
                change.seq, counters.next_change
            )));
        }
        let mut txn = Txn::new(self, &counters);
        txn.mirror = Some(change.clone());
        match &change.kind {
            ChangeKind::Inserted(p) | ChangeKind::Replaced(p) => {
                let replace = matches!(change.kind, ChangeKind::Replaced(_));
                let page = Page {
                    key: &p.key,
                    host: &p.host,
                    time: p.time,
                    content: Content::Text(&p.text),
                };
                check_page(&page)?;
                txn.pins = Some(Pins {
                    doc: Some(p.doc),
                    clusters: p.founded.iter().copied().collect(),
                });
                let sig = Signatures::from_normalized_text(
                    p.text.clone(),
                    p.codes.clone(),
                    &self.opts.signature,
                );
                let v = self.insert_in(
                    &mut txn,
                    &page,
                    &sig,
                    p.blocks.as_ref(),
                    p.raw_hash,
                    &mut Memo::default(),
                    None,
                )?;
                if v.unchanged || v.replaced != replace {
                    return Err(diverged(format!(
                        "{:?} is {} here",
                        p.key,
                        if v.unchanged {
                            "an unchanged recrawl"
                        } else if v.replaced {
                            "held"
                        } else {
                            "not held"
                        }
                    )));
                }
            }
            ChangeKind::Retimed {
                key,
                doc,
                time,
                raw_hash,
            } => {
                let held = txn.key_id(key)?;
                let rec = match held {
                    Some(id) if id == *doc => txn.doc(id)?,
                    _ => None,
                };
                let Some(mut rec) = rec else {
                    return Err(diverged(format!("{key:?} is not page {doc} here")));
                };
                rec.time = *time;
                // A change that did not carry the hash (an older build's) leaves it as it is.
                // So does an index of a format that keeps none.
                rec.raw_hash = raw_hash.filter(|_| self.raw_hashes).or(rec.raw_hash);
                let raw_hash = rec.raw_hash;
                txn.put_doc(*doc, rec);
                txn.record(ChangeKind::Retimed {
                    key: key.clone(),
                    doc: *doc,
                    time: *time,
                    raw_hash,
                });
            }
            ChangeKind::Deleted {
                key, doc, founded, ..
            } => {
                if txn.key_id(key)? != Some(*doc) {
                    return Err(diverged(format!("{key:?} is not page {doc} here")));
                }
                txn.pins = Some(Pins {
                    doc: None,
                    clusters: founded.iter().copied().collect(),
                });
                self.delete_in(&mut txn, *doc)?;
            }
            // Done by the decisions of the changes before it: only recorded.
            ChangeKind::Moved { .. } | ChangeKind::RepresentativeChanged { .. } => {}
        }
        if let Some(pins) = &txn.pins {
            if pins.doc.is_some() || !pins.clusters.is_empty() {
                return Err(diverged("it gives out fewer ids than it did"));
            }
        }
        self.commit(txn, &mut counters, false)?;
        drop(counters);
        self.sync_wal()
    }
}
