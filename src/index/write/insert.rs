//! Insert, replace and delete of one page, each decided under the writer lock on the write's own
//! overlay and committed as one atomic `WriteBatch` (SPEC §2.7, §3).

use std::sync::Arc;
use std::time::Instant;

use super::place::{stored_side, Leader};
use super::Txn;
use crate::index::decide::Memo;
use crate::index::read::similar_of;
use crate::index::types::{Deletion, Moved, Page, Timing, Verdict};
use crate::index::view::Known;
use crate::index::view::{Snapshot, View};
use crate::index::{check_page, text_chars, Index, Probe};
use crate::options::RepresentativePolicy;
use crate::signature::Signatures;
use crate::storage::change::{ChangeKind, PageChange};
use crate::storage::codec::{self, ClusterId, DocId, DocRecord, NO_DOC};
use crate::storage::{cf, id_key, kind, posting_key};
use crate::{Error, Result};

impl Index {
    /// Inserts a page: compares it with the pages already held, stores it, and joins it to the
    /// best verified cluster or founds a new one, in one atomic write. Inserting a key that is
    /// present replaces its page (delete and insert in the same write).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key, the page errors of [`Signatures::compute`],
    /// [`Error::Poisoned`] after a failed write, storage and corruption errors.
    pub fn insert(&self, page: &Page<'_>) -> Result<Verdict> {
        self.metrics.insert(|| self.insert_unmetered(page))
    }

    /// [`Index::insert`] without recording it in the metrics.
    fn insert_unmetered(&self, page: &Page<'_>) -> Result<Verdict> {
        check_page(page)?;
        let t0 = Instant::now();
        let (sig, blocks) = self.signatures_of(page)?;
        let raw = self.raw_hash_of(page);
        let signature = t0.elapsed();
        // A byte-identical recrawl writes nothing: it is answered from one snapshot, without
        // the writer lock, so that it never waits behind other writers' decisions (issue #33,
        // B6). A write that changes the page meanwhile comes after it. The stored page may come
        // from a commit another thread has not synced yet: acknowledged only once durable.
        if let Some(mut verdict) = self.unchanged_verdict(page, &sig, raw)? {
            self.sync_wal()?;
            verdict.timing.signature = signature;
            return Ok(verdict);
        }
        self.with_prefetch(|| {
            if !self.opts.store_texts && self.source.is_some() {
                self.check_writable()?;
                // The texts this page will be verified against, asked of the text source before
                // the writer lock (the decision under it reuses them): a slow source then holds
                // up this thread only. Not for an unchanged recrawl (nothing is verified), and
                // never the page's own old version (a replace takes it out first). Errors
                // surface, if still relevant, under the lock.
                let old = match self.key_id(page.key)? {
                    Some(id) => self.doc(id)?.map(|r| (id, r)),
                    None => None,
                };
                let unchanged = old
                    .as_ref()
                    .is_some_and(|(_, r)| self.unchanged_recrawl(r, page, &sig));
                if !unchanged {
                    let _ = self.decide(
                        self,
                        &Probe::of(&sig, &self.opts.signature.method),
                        old.map(|(id, _)| id),
                        None,
                        &mut Timing::default(),
                        &mut Memo::default(),
                    );
                }
            }
            let mut counters = self.lock_writer()?;
            self.refuse_if_partition("an insert")?;
            let mut txn = Txn::new(self, &counters);
            let mut verdict = self.insert_in(
                &mut txn,
                page,
                &sig,
                blocks.as_ref(),
                raw,
                &mut Memo::default(),
                None,
            )?;
            if verdict.unchanged && !txn.writes_docs() {
                // A byte-identical recrawl: nothing to write. The stored page may come from a
                // commit another thread has not synced yet: acknowledged only once durable
                // (nothing to do when it is).
                drop(counters);
                self.sync_wal()?;
                verdict.timing.signature = signature;
                return Ok(verdict);
            }
            let tw = Instant::now();
            self.commit(txn, &mut counters, false)?;
            // The WAL is synced after the writer lock is let go: the next writer decides and
            // writes meanwhile, and the page is acknowledged only once its write is durable.
            drop(counters);
            self.sync_wal()?;
            verdict.timing.write += tw.elapsed();
            verdict.timing.signature = signature;
            Ok(verdict)
        })
    }

    /// Deletes a page. A member leaves its cluster; a deleted representative hands over to the
    /// member the policy prefers, and members no longer similar to the new representative are
    /// re-placed — all in one atomic write.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the key is absent, [`Error::Poisoned`] after a failed write,
    /// storage and corruption errors.
    pub fn delete(&self, key: &str) -> Result<Deletion> {
        self.metrics.delete(|| self.delete_unmetered(key))
    }

    /// [`Index::delete`] without recording it in the metrics.
    fn delete_unmetered(&self, key: &str) -> Result<Deletion> {
        let mut counters = self.lock_writer()?;
        self.refuse_if_partition("a delete")?;
        let mut txn = Txn::new(self, &counters);
        let id = txn
            .key_id(key)?
            .ok_or_else(|| Error::NotFound(key.to_string()))?;
        let deletion = self.delete_in(&mut txn, id)?;
        self.commit(txn, &mut counters, false)?;
        drop(counters);
        self.sync_wal()?;
        Ok(deletion)
    }

    /// The hash of `page`'s raw page as this index keeps it: `None` on an index of a format
    /// that keeps none ([`Index::raw_hashes`]).
    pub(crate) fn raw_hash_of(&self, page: &Page<'_>) -> Option<u64> {
        self.raw_hashes.then(|| page.content.raw_hash())
    }

    /// Is `page` an unchanged recrawl of the stored page `rec` (same main text and host)? Its
    /// raw page may differ outside the main text, and its publish time too — written in place,
    /// nothing re-decided — except under [`RepresentativePolicy::EarliestTime`], where the time
    /// names the representative: there a new time makes a changed recrawl, decided again.
    pub(crate) fn unchanged_recrawl(
        &self,
        rec: &DocRecord,
        page: &Page<'_>,
        sig: &Signatures,
    ) -> bool {
        rec.content_hash == sig.content_hash
            && rec.host == page.host
            && (rec.time == page.time
                || self.opts.representative != RepresentativePolicy::EarliestTime)
    }

    /// The stored verdict of a byte-identical re-insert of `page` (same key, host, raw page
    /// hash `raw`, hence main text, and publish time — on an index that keeps no raw hashes,
    /// `raw` is `None` and the main text alone counts), read from one snapshot; `None` when the
    /// page is new, changed, or has something to write in place. Refused as a write is on an
    /// index that cannot be written.
    fn unchanged_verdict(
        &self,
        page: &Page<'_>,
        sig: &Signatures,
        raw: Option<u64>,
    ) -> Result<Option<Verdict>> {
        self.check_writable()?;
        self.refuse_if_partition("an insert")?;
        let snap = Snapshot::of(self);
        let Some(id) = snap.key_id(page.key)? else {
            return Ok(None);
        };
        match snap.doc(id)? {
            // A new publish time or raw page hash is written under the writer lock (see
            // `Index::insert_in`).
            Some(rec)
                if self.unchanged_recrawl(&rec, page, sig)
                    && rec.time == page.time
                    && rec.raw_hash == raw =>
            {
                let method = &self.opts.signature.method;
                let no_text = method.main_width(&sig.text) < self.opts.min_text_width;
                let mut v = self.stored_verdict(&snap, id, rec, no_text, Timing::default())?;
                v.unchanged_html = raw.is_some();
                Ok(Some(v))
            }
            _ => Ok(None),
        }
    }

    /// Inserts `page` in `txn` (see [`Index::insert`]): its signatures `sig`, the site chrome
    /// it counts `blocks`, the hash of its raw page `raw` (`None`: unknown, a change applied
    /// from a feed that did not carry it), what was decided ahead for it (`memo`, `known`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_in(
        &self,
        txn: &mut Txn<'_>,
        page: &Page<'_>,
        sig: &Signatures,
        blocks: Option<&codec::PageBlocks>,
        raw: Option<u64>,
        memo: &mut Memo,
        known: Option<Known<'_>>,
    ) -> Result<Verdict> {
        // An index of a format that keeps no raw hashes writes none (FORMAT.md).
        let raw = raw.filter(|_| self.raw_hashes);
        let mut timing = Timing::default();
        if self.recording_allocations() {
            txn.current_key = Some(Arc::from(page.key));
        }
        let method = &self.opts.signature.method;
        let no_text = method.main_width(&sig.text) < self.opts.min_text_width;
        let founding = txn.founding_mark();
        // The cluster the new version leads in its old version's place, if it keeps the lead
        // (`IndexOptions::sticky_representative`).
        let mut kept = None;
        let replaced = match txn.key_id(page.key)? {
            Some(old) => {
                if let Some(mut rec) = txn.doc(old)? {
                    // An unchanged recrawl: the stored verdict; only a new publish time or raw
                    // page hash is written, in place (same id, insertion number and cluster).
                    // An unknown `raw` leaves the stored hash as it is.
                    if self.unchanged_recrawl(&rec, page, sig) {
                        let same_html = raw.is_some() && rec.raw_hash == raw;
                        let new_raw = raw.is_some() && !same_html;
                        if rec.time != page.time || new_raw {
                            rec.time = page.time;
                            rec.raw_hash = raw.or(rec.raw_hash);
                            txn.put_doc(old, rec.clone());
                            txn.record(ChangeKind::Retimed {
                                key: rec.key.clone(),
                                doc: old,
                                time: page.time,
                                raw_hash: rec.raw_hash,
                            });
                        }
                        let mut v = self.stored_verdict(txn, old, rec, no_text, timing)?;
                        v.unchanged_html = same_html;
                        return Ok(v);
                    }
                }
                let next = Leader {
                    text: &sig.text,
                    features: &sig.features,
                    simhash: sig.simhash,
                    codes: &sig.codes,
                };
                let (mut deletion, k) = self.take_out(txn, old, (!no_text).then_some(&next))?;
                if k.is_some() {
                    deletion.representative = Some(page.key.to_string());
                }
                kept = k;
                Some(deletion)
            }
            None => None,
        };
        let probe = Probe {
            known,
            ..Probe::of(sig, &self.opts.signature.method)
        };
        let (decision, cands) = self.decide(&*txn, &probe, None, kept, &mut timing, memo)?;
        txn.mark_all_frequent(&decision.frequent);
        let identical_to = match decision.identical {
            Some(i) => txn.doc(i)?.map(|r| r.key),
            None => None,
        };
        let tw = Instant::now();
        let (id, seq) = txn.alloc_doc()?;
        let nearest = match &decision.nearest {
            Some(m) => txn.doc(m.against)?.map(|r| (m.against, r)),
            None => None,
        };
        let mut rec = DocRecord {
            key: page.key.to_string(),
            host: page.host.to_string(),
            time: page.time,
            cluster: 0,
            text_chars: text_chars(&sig.text),
            fingerprints: sig.fingerprints.len() as u16,
            simhash: sig.simhash,
            content_hash: sig.content_hash,
            codes: sig.codes.clone(),
            similar_to: nearest.as_ref().map_or(NO_DOC, |(i, _)| *i),
            seq,
            similar_seq: nearest.as_ref().map_or(0, |(_, r)| r.seq),
            resemble: decision.nearest.as_ref().map_or(0.0, |m| m.resemble as f32),
            contain: decision.nearest.as_ref().map_or(0.0, |m| m.contain as f32),
            raw_hash: raw,
        };
        let rec_chars = rec.text_chars;
        // Under document frequencies the page's words count before it is placed: placing it
        // may judge members against it, and the page count (`alloc_doc`) counts it already.
        let words_first = self.opts.signature.method.uses_df();
        if words_first {
            for &key in &probe.keys {
                txn.posting_add(key, id);
            }
        }
        let placed = match kept {
            Some(cid) => self.place_lead(txn, id, &mut rec, cid)?,
            None => self.place(txn, id, &mut rec, &sig.text, decision.best.as_ref())?,
        };
        let placed_cluster = rec.cluster;
        txn.put_key(page.key, id);
        txn.put_doc(id, rec);
        txn.put_text(id, Arc::from(sig.text.as_str()), &probe.keys);
        let mut change = PageChange::new(
            page.key.to_string(),
            page.host.to_string(),
            page.time,
            sig.text.clone(),
            sig.codes.clone(),
            (id, seq, placed_cluster),
            blocks.cloned(),
        );
        change.founded = txn.founded_since(founding);
        change.raw_hash = raw;
        txn.record_page(replaced.is_some(), change);
        if !words_first {
            for &key in &probe.keys {
                txn.posting_add(key, id);
            }
        }
        txn.posting_add(posting_key(kind::CONTENT, sig.content_hash), id);
        txn.simhash_add(sig.simhash, id);
        if let Some(blocks) = blocks {
            txn.chrome_add(id, blocks);
        }
        timing.write = tw.elapsed();
        let representative = txn.doc(placed.representative)?.map(|r| r.key);
        let (similar_to, resemble, contain, exact) = match &decision.nearest {
            Some(m) => (nearest.map(|(_, r)| r.key), m.resemble, m.contain, m.exact),
            None => (None, 0.0, 0.0, false),
        };
        Ok(Verdict {
            duplicate: decision.nearest.is_some(),
            doc: Some(id),
            seq: Some(seq),
            cluster: Some(placed.cluster),
            representative,
            similar_to,
            resemble,
            contain,
            exact,
            identical_to,
            text_chars: rec_chars,
            replaced: replaced.is_some(),
            replaced_page: replaced.map(Box::new),
            unchanged: false,
            unchanged_html: false,
            no_main_text: decision.no_main_text,
            candidates: cands,
            verified: decision.verified,
            timing,
        })
    }

    /// The key of the held page of lowest id with content hash `hash` other than `except` (a stored
    /// page's own verdict; a new page's comes with its candidates, `Decision::identical`).
    pub(crate) fn identical_in(
        &self,
        txn: &impl View,
        hash: u128,
        except: DocId,
    ) -> Result<Option<String>> {
        let key = posting_key(kind::CONTENT, hash);
        let ids = txn.postings(&[key], None)?.pop().unwrap_or_default();
        match ids.iter().find(|&i| i != except) {
            Some(i) => Ok(txn.doc(i)?.map(|r| r.key)),
            None => Ok(None),
        }
    }

    /// The verdict of page `id` as stored (an unchanged re-insert of its key; `unchanged_html`
    /// is for the caller to say).
    pub(crate) fn stored_verdict(
        &self,
        txn: &impl View,
        id: DocId,
        rec: DocRecord,
        no_main_text: bool,
        timing: Timing,
    ) -> Result<Verdict> {
        let cluster = txn.cluster(rec.cluster)?;
        let representative = match &cluster {
            Some(c) => txn.doc(c.representative)?.map(|r| r.key),
            None => None,
        };
        let similar = similar_of(&rec, |i| txn.doc(i))?;
        let (resemble, contain, exact) = match &similar {
            Some(s) => (
                f64::from(rec.resemble),
                f64::from(rec.contain),
                s.content_hash == rec.content_hash,
            ),
            None => (0.0, 0.0, false),
        };
        let similar_to = similar.map(|r| r.key);
        let identical_to = if no_main_text {
            None
        } else {
            self.identical_in(txn, rec.content_hash, id)?
        };
        Ok(Verdict {
            duplicate: similar_to.is_some(),
            doc: Some(id),
            seq: Some(rec.seq),
            cluster: Some(rec.cluster),
            representative,
            similar_to,
            resemble,
            contain,
            exact,
            identical_to,
            text_chars: rec.text_chars,
            replaced: false,
            replaced_page: None,
            unchanged: true,
            unchanged_html: false,
            no_main_text,
            candidates: 0,
            verified: 0,
            timing,
        })
    }

    pub(crate) fn delete_in(&self, txn: &mut Txn<'_>, id: DocId) -> Result<Deletion> {
        let founding = txn.founding_mark();
        let deletion = self.take_out(txn, id, None)?.0;
        txn.record(ChangeKind::Deleted {
            key: deletion.key.clone(),
            doc: id,
            cluster: deletion.cluster,
            founded: txn.founded_since(founding),
        });
        Ok(deletion)
    }

    /// May the new version of page `id` keep leading its cluster in its place
    /// ([`crate::IndexOptions::sticky_representative`])? Under `FirstSeen`, when the page leads
    /// other members and its text is stored (a text source serves a page's current content,
    /// not its old version's).
    fn may_keep_lead(&self, txn: &Txn<'_>, id: DocId, cid: ClusterId) -> Result<bool> {
        if !(self.opts.sticky_representative
            && self.opts.representative == RepresentativePolicy::FirstSeen
            && self.opts.store_texts)
        {
            return Ok(false);
        }
        Ok(txn
            .cluster(cid)?
            .is_some_and(|cl| cl.representative == id && cl.members.len() > 1))
    }

    /// Takes page `id` out, as [`Index::delete`] does. With `next`, the new version of the
    /// page replacing it: when it may keep its lead ([`Index::may_keep_lead`]) and verifies
    /// against the old version's text as a member against its representative, there is no
    /// hand-over ([`Index::keep_lead`]) and the cluster it is to lead is returned too (the
    /// deletion's `representative` is then the caller's to name).
    fn take_out(
        &self,
        txn: &mut Txn<'_>,
        id: DocId,
        next: Option<&Leader<'_>>,
    ) -> Result<(Deletion, Option<ClusterId>)> {
        let rec = txn.doc(id)?.ok_or_else(|| {
            Error::corruption(cf::DOCS, &id_key(id), "key points at a missing page")
        })?;
        // The old version's text, read before the page is forgotten.
        let old_text = match next {
            Some(_) if self.may_keep_lead(txn, id, rec.cluster)? => txn.text(id)?,
            _ => None,
        };
        for key in txn.posting_keys(id)?.unwrap_or_default() {
            txn.posting_remove(key, id);
        }
        txn.posting_remove(posting_key(kind::CONTENT, rec.content_hash), id);
        if let Some(blocks) = txn.page_blocks(id)? {
            txn.chrome_remove(id, &blocks);
        }
        txn.forget_doc(id, &rec);
        // Judged as a hand-over's members are: with the old page's words gone.
        let keeps = match (next, old_text) {
            (Some(next), Some(old_text)) => self.verifies_as_member(
                &*txn,
                (next.side(), next.codes),
                (stored_side(&old_text, &rec), &rec.codes),
            ),
            _ => false,
        };
        let left = match next {
            Some(next) if keeps => self.keep_lead(txn, id, rec.cluster, next)?,
            _ => self.leave_cluster(txn, id, rec.cluster)?,
        };
        let key_of = |i: DocId| -> Result<String> {
            txn.doc(i)?.map(|r| r.key).ok_or_else(|| {
                Error::corruption(cf::DOCS, &id_key(i), "a cluster member is missing")
            })
        };
        let mut moved = Vec::with_capacity(left.moved.len());
        for (m, placed) in &left.moved {
            // The cluster's representative after every move (a member placed later may have
            // taken it over).
            let rep = match txn.cluster(placed.cluster)? {
                Some(c) => c.representative,
                None => placed.representative,
            };
            moved.push(Moved {
                key: key_of(*m)?,
                cluster: placed.cluster,
                representative: key_of(rep)?,
            });
        }
        let deletion = Deletion {
            doc: id,
            cluster: rec.cluster,
            was_representative: left.was_representative,
            representative: left.representative.map(key_of).transpose()?,
            moved,
            key: rec.key,
        };
        Ok((deletion, keeps.then_some(rec.cluster)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Content, IndexOptions};

    /// An unchanged re-insert is answered while another thread holds the writer lock (issue
    /// #33, B6); a changed one waits for it.
    #[test]
    fn an_unchanged_reinsert_does_not_take_the_writer_lock() {
        let dir = tempfile::tempdir().unwrap();
        let ix = Arc::new(Index::open(dir.path(), IndexOptions::default()).unwrap());
        let html = "<html><body><article><p>The crawler fetched this page again today, and \
                    nothing in its main text has changed since the last visit.</p><p>A second \
                    paragraph keeps the text long enough to have fingerprints of its own.</p>\
                    </article></body></html>";
        let page = |html: &'static str| Page {
            key: "k",
            host: "h",
            time: 0,
            content: Content::Html(html.as_bytes()),
        };
        let first = ix.insert(&page(html)).unwrap();
        assert!(!first.unchanged);
        let guard = ix.writer.lock();
        let (tx, rx) = std::sync::mpsc::channel();
        let ix2 = Arc::clone(&ix);
        let t = std::thread::spawn(move || {
            tx.send(ix2.insert(&page(html))).unwrap();
            tx.send(ix2.insert(&page("<html><body><p>Changed.</p></body></html>")))
                .unwrap();
        });
        let again = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the unchanged re-insert waited for the writer lock")
            .unwrap();
        assert!(again.unchanged && again.unchanged_html, "{again:?}");
        assert_eq!((again.doc, again.cluster), (first.doc, first.cluster));
        // The changed page is decided under the lock: not before it is let go.
        assert!(rx.try_recv().is_err());
        drop(guard);
        let changed = rx.recv().unwrap().unwrap();
        assert!(changed.replaced && !changed.unchanged, "{changed:?}");
        t.join().unwrap();
    }

    /// A page stored by a build that kept no raw page hash (a `0xD2` record, as those builds
    /// wrote it): its first byte-identical recrawl is unchanged but not `unchanged_html`, and
    /// writes the hash in place (a `Retimed` change carrying it) without deciding anything
    /// again; the next is `unchanged_html` and writes nothing.
    #[test]
    fn a_record_without_a_raw_hash_gets_it_at_its_first_recrawl() {
        let dir = tempfile::tempdir().unwrap();
        let ix = Index::open(dir.path(), IndexOptions::default()).unwrap();
        let html = "<html><body><article><p>A page stored long ago by a build that did not keep \
                    the hash of the raw page it was given.</p><p>Its second paragraph is long \
                    enough to give it fingerprints of its own.</p></article></body></html>";
        let page = Page {
            key: "old",
            host: "h",
            time: 5,
            content: Content::Html(html.as_bytes()),
        };
        let first = ix.insert(&page).unwrap();
        let id = first.doc.unwrap();
        let hash = Content::Html(html.as_bytes()).raw_hash();
        let mut rec = ix.doc(id).unwrap().unwrap();
        assert_eq!(rec.raw_hash, Some(hash));
        rec.raw_hash = None;
        let old = rec.encode();
        assert_eq!(old[0], codec::TAG_DOC_SEQ);
        ix.db.put_cf(ix.cf(cf::DOCS), id_key(id), old).unwrap();
        assert_eq!(ix.doc(id).unwrap().unwrap(), rec);

        let last = ix.last_change();
        let again = ix.insert(&page).unwrap();
        assert!(again.unchanged && !again.unchanged_html, "{again:?}");
        assert_eq!(
            (again.doc, again.seq, again.cluster),
            (first.doc, first.seq, first.cluster)
        );
        let stored = ix.doc(id).unwrap().unwrap();
        assert_eq!(
            stored,
            DocRecord {
                raw_hash: Some(hash),
                ..rec
            }
        );
        let changes: Vec<ChangeKind> = ix
            .changes_since(last)
            .unwrap()
            .map(|c| c.unwrap().kind)
            .collect();
        assert_eq!(
            changes,
            [ChangeKind::Retimed {
                key: "old".into(),
                doc: id,
                time: 5,
                raw_hash: Some(hash),
            }]
        );
        let third = ix.insert(&page).unwrap();
        assert!(third.unchanged && third.unchanged_html, "{third:?}");
        assert_eq!(ix.last_change(), last + 1);
        assert!(ix.check().unwrap().is_clean());
    }

    /// The stored format version of the index in `dir`.
    fn stored_format(dir: &std::path::Path) -> u32 {
        let v = crate::storage::read_meta(dir).unwrap().0.unwrap();
        u32::from_be_bytes(v.as_slice().try_into().unwrap())
    }

    /// Writes `format` as the stored format version of the (empty) index `ix`, and closes it.
    fn set_format(ix: Index, format: u32) {
        let m = ix.cf(cf::META);
        ix.db
            .put_cf(m, crate::storage::meta::FORMAT, format.to_be_bytes())
            .unwrap();
        drop(ix);
    }

    /// Format 5 is upgraded to 6 when opened for writing, not read-only; an index of format 4
    /// stays one and writes only the records its format has (`0xD2` pages, `0xE1` changes):
    /// its recrawls are `unchanged`, never `unchanged_html` (FORMAT.md, version 6).
    #[test]
    fn only_format_6_keeps_raw_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let opts = IndexOptions::default;
        set_format(Index::open(dir.path(), opts()).unwrap(), 5);
        let ro = Index::open_read_only(dir.path()).unwrap();
        assert!(!ro.raw_hashes);
        drop(ro);
        assert_eq!(stored_format(dir.path()), 5);
        let ix = Index::open(dir.path(), opts()).unwrap();
        assert!(ix.raw_hashes);
        assert_eq!(stored_format(dir.path()), crate::storage::FORMAT_VERSION);

        set_format(ix, 4);
        let ix = Index::open(dir.path(), opts()).unwrap();
        assert!(!ix.raw_hashes);
        let html = "<html><body><article><p>A page of an index that keeps the format it was \
                    made with, an older one without the hash of raw pages.</p><p>A second \
                    paragraph gives it fingerprints of its own.</p></article></body></html>";
        let page = Page {
            key: "p",
            host: "h",
            time: 1,
            content: Content::Html(html.as_bytes()),
        };
        let first = ix.insert(&page).unwrap();
        let id = first.doc.unwrap();
        let raw_doc = ix.db.get_cf(ix.cf(cf::DOCS), id_key(id)).unwrap().unwrap();
        assert_eq!(raw_doc[0], codec::TAG_DOC_SEQ);
        assert_eq!(ix.doc(id).unwrap().unwrap().raw_hash, None);
        let again = ix.insert(&page).unwrap();
        assert!(again.unchanged && !again.unchanged_html, "{again:?}");
        let retimed = ix.insert(&Page { time: 2, ..page }).unwrap();
        assert!(retimed.unchanged && !retimed.unchanged_html, "{retimed:?}");
        for seq in 1..=ix.last_change() {
            let key = crate::storage::change::change_key(seq);
            if let Some(v) = ix.db.get_cf(ix.cf(cf::CHANGES), key).unwrap() {
                assert_eq!(v[0], crate::storage::change::TAG_CHANGE_1, "change {seq}");
            }
        }
        assert!(ix.check().unwrap().is_clean());
        drop(ix);
        assert_eq!(stored_format(dir.path()), 4);
    }
}
