//! Reading the change feed: every committed change after a sequence number, at one snapshot.

use rocksdb::{DBRawIterator, ReadOptions};

use crate::index::view::Snapshot;
use crate::index::Index;
use crate::storage::change::{change_key, Change};
use crate::storage::{self, cf, meta};
use crate::{Error, Result};

/// A streaming cursor over the change feed, in sequence order, at one snapshot (see
/// [`Index::changes_since`]). An `Iterator` of `Result<Change>`; it stops after an error.
pub struct Changes<'a> {
    // Declared before `view`: the iterator reads at the snapshot and is dropped first. `None`
    // in a database without the feed's column family (a read-only snapshot of an older build).
    it: Option<DBRawIterator<'a>>,
    _view: Snapshot<'a>,
    /// The sequence number the next change must have.
    expected: u64,
    /// The last sequence number given out at the snapshot.
    last: u64,
    started: bool,
    failed: bool,
}

impl Changes<'_> {
    /// The sequence number of the last change committed when the cursor was opened: the cursor
    /// ends there, and a follower that read them all resumes with `changes_since(last)`.
    pub fn last_change(&self) -> u64 {
        self.last
    }

    fn next_change(&mut self) -> Result<Option<Change>> {
        let Some(it) = self.it.as_mut() else {
            return Ok(None);
        };
        if self.expected > self.last {
            return Ok(None);
        }
        if self.started {
            it.next();
        } else {
            it.seek(change_key(self.expected));
            self.started = true;
        }
        if !it.valid() {
            it.status()
                .map_err(|e| Error::storage("reading the change feed", e))?;
            return Err(Error::corruption(
                cf::CHANGES,
                &change_key(self.expected),
                format!(
                    "change {} is missing (the feed ends at {})",
                    self.expected, self.last
                ),
            ));
        }
        let (Some(k), Some(v)) = (it.key(), it.value()) else {
            return Ok(None);
        };
        let change = Change::decode_entry(k, v)?;
        if change.seq != self.expected {
            return Err(Error::corruption(
                cf::CHANGES,
                k,
                format!(
                    "change {} is missing (the next is {})",
                    self.expected, change.seq
                ),
            ));
        }
        self.expected += 1;
        Ok(Some(change))
    }
}

impl Iterator for Changes<'_> {
    type Item = Result<Change>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_change().transpose();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

impl Index {
    /// The change feed: every change committed after change `since`, in sequence order, at one
    /// snapshot (changes committed meanwhile are not seen: resume from [`Changes::last_change`]).
    /// `changes_since(0)` lists them all from the first; a follower keeps the last number it
    /// applied and asks for the changes since it. Each change carries enough to apply it to a
    /// copy ([`Index::apply_change`]). The feed keeps the last
    /// [`crate::IndexOptions::change_retention`] changes, across reopens and crashes (each
    /// change is written in the `WriteBatch` of the write it records); an index written before
    /// the feed existed starts its feed when first opened for writing by this build, its
    /// history before being change 1, trimmed. A partition of a distributed index (written by
    /// batch logs, `crate::merge`) records no changes.
    ///
    /// A follower:
    ///
    /// ```no_run
    /// # use neardup::{Index, IndexOptions};
    /// # let primary = Index::open("/tmp/a", IndexOptions::default())?;
    /// # let copy = Index::open("/tmp/b", IndexOptions::default())?;
    /// let mut last = copy.last_change();
    /// for change in primary.changes_since(last)? {
    ///     let change = change?;
    ///     copy.apply_change(&change)?;
    ///     last = change.seq;
    /// }
    /// # Ok::<(), neardup::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::ChangesTrimmed`] when changes after `since` were trimmed (the follower missed
    /// them: it must copy the index again); [`Error::InvalidArgument`] when `since` is past
    /// the last change (the follower is not following this index); [`Error::WrongProcess`].
    /// The cursor yields storage and corruption errors (a change missing from the middle).
    pub fn changes_since(&self, since: u64) -> Result<Changes<'_>> {
        self.registration.check_process()?;
        let view = Snapshot::of(self);
        let at = Some(view.raw());
        let (next, trimmed) = {
            let c = self.writer.lock();
            (c.next_change, c.changes_trimmed)
        };
        // The counters at the snapshot (a writable index has them from its open on; a
        // read-only one never changes).
        let read = |k: &'static [u8], default: u64| -> Result<u64> {
            Ok(self
                .get_at(cf::META, k, at, "the change feed's counters", |v| {
                    storage::decode_u64(cf::META, k, v)
                })?
                .unwrap_or(default))
        };
        let next = read(meta::NEXT_CHANGE, next)?;
        let trimmed = read(meta::CHANGES_TRIMMED, trimmed)?;
        let last = next.saturating_sub(1);
        if since > last {
            return Err(Error::InvalidArgument(format!(
                "changes since {since} were asked for, but the last change of {} is {last}",
                self.path.display()
            )));
        }
        if since < trimmed {
            return Err(Error::ChangesTrimmed { since, trimmed });
        }
        let it = self.db.cf_handle(cf::CHANGES).map(|h| {
            let mut ro = ReadOptions::default();
            ro.set_snapshot(view.raw());
            self.db.raw_iterator_cf_opt(h, ro)
        });
        Ok(Changes {
            it,
            _view: view,
            expected: since + 1,
            last,
            started: false,
            failed: false,
        })
    }

    /// The sequence number of the last committed change (0 when there is none): what a copy
    /// of the index made now (a checkpoint) follows the original from.
    pub fn last_change(&self) -> u64 {
        self.writer.lock().next_change.saturating_sub(1)
    }
}
