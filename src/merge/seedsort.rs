//! A seed's postings gathered page by page and given back key by key, in bounded memory (issue
//! #34: a doc partition seeding a unit that reaches a million pages held the whole seed decoded,
//! about 90 KB a page).
//!
//! A seed ([`crate::Index::seed_log`], SCALEOUT §5 S4.2) reads its pages one at a time, each
//! filed under a few hundred posting keys, but must end with one posting operation per key in
//! key order (what [`crate::merge::ScratchIds::from_seed_files`] merges across partitions). The
//! (key, page) pairs are sorted in runs of at most a budget of pairs; a run that fills is
//! written, sorted, to an anonymous temporary file beside the seed's, and the runs are merged
//! back in key order (an external merge sort). The run format is ours: fixed 17-byte records,
//! the key's 9 bytes then the id's 8 big-endian bytes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::log::LogOp;
use crate::storage::merge::PostingDelta;
use crate::storage::width::{IdSet, IdWidth};
use crate::{Error, Result};

/// Pairs held in memory before a run is written: 2²¹ pairs, 48 MiB.
pub(crate) const RUN_PAIRS: usize = 1 << 21;

/// One (posting key, page id) pair.
type Pair = ([u8; 9], u64);

/// The bytes of a pair in a run file.
const RECORD: usize = 17;

/// A seed's (key, page) pairs, sorted in runs of at most `budget` pairs.
pub(crate) struct PostingRuns {
    buf: Vec<Pair>,
    budget: usize,
    /// Where runs are written (the seed file's directory); `None`: never written, every pair
    /// held (a seed given back in memory is whole in memory anyway).
    dir: Option<PathBuf>,
    runs: Vec<std::fs::File>,
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl PostingRuns {
    /// Pairs held in memory only.
    pub(crate) fn in_memory() -> PostingRuns {
        PostingRuns {
            buf: Vec::new(),
            budget: usize::MAX,
            dir: None,
            runs: Vec::new(),
        }
    }

    /// Pairs sorted in runs of at most `budget` (≥ 1) pairs, each run that fills written to an
    /// anonymous temporary file in `dir` (removed when the runs are dropped, even on an error).
    pub(crate) fn spilling(dir: &Path, budget: usize) -> PostingRuns {
        PostingRuns {
            buf: Vec::new(),
            budget: budget.max(1),
            dir: Some(dir.to_path_buf()),
            runs: Vec::new(),
        }
    }

    /// Adds page `id` to posting `key`.
    ///
    /// # Errors
    /// [`Error::Io`] writing a run.
    pub(crate) fn push(&mut self, key: [u8; 9], id: u64) -> Result<()> {
        self.buf.push((key, id));
        if self.buf.len() >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// How many runs were written to files.
    #[cfg(test)]
    pub(crate) fn spilled(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        self.buf.sort_unstable();
        self.buf.dedup();
        let file = tempfile::tempfile_in(dir).map_err(|e| io_error(dir, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        for (key, id) in self.buf.drain(..) {
            out.write_all(&key)
                .and_then(|()| out.write_all(&id.to_be_bytes()))
                .map_err(|e| io_error(dir, e))?;
        }
        let mut file = out
            .into_inner()
            .map_err(|e| io_error(dir, e.into_error()))?;
        file.rewind().map_err(|e| io_error(dir, e))?;
        self.runs.push(file);
        Ok(())
    }

    /// Calls `emit` with one posting operation per key, in key order, adding the key's pages
    /// (ids of width `I`).
    ///
    /// # Errors
    /// [`Error::Io`] reading a run; [`Error::InvalidArgument`] for an id that `I` cannot hold;
    /// what `emit` returns.
    pub(crate) fn drain<I: IdWidth>(
        mut self,
        emit: &mut dyn FnMut(LogOp<I>) -> Result<()>,
    ) -> Result<()> {
        let mut group = Group::<I>::default();
        if self.runs.is_empty() {
            self.buf.sort_unstable();
            for (key, id) in std::mem::take(&mut self.buf) {
                group.take(key, id, emit)?;
            }
            return group.finish(emit);
        }
        self.spill()?;
        let dir = self.dir.clone().unwrap_or_default();
        let mut readers: Vec<BufReader<std::fs::File>> = self
            .runs
            .drain(..)
            .map(|f| BufReader::with_capacity(1 << 16, f))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (r, reader) in readers.iter_mut().enumerate() {
            if let Some(pair) = read_pair(reader, &dir)? {
                heap.push(Reverse((pair, r)));
            }
        }
        while let Some(Reverse(((key, id), r))) = heap.pop() {
            group.take(key, id, emit)?;
            if let Some(pair) = read_pair(&mut readers[r], &dir)? {
                heap.push(Reverse((pair, r)));
            }
        }
        group.finish(emit)
    }
}

/// The next pair of a run, `None` at its end.
fn read_pair(reader: &mut BufReader<std::fs::File>, dir: &Path) -> Result<Option<Pair>> {
    let mut record = [0u8; RECORD];
    match reader.read_exact(&mut record) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(io_error(dir, e)),
    }
    let mut key = [0u8; 9];
    key.copy_from_slice(&record[..9]);
    let mut id = [0u8; 8];
    id.copy_from_slice(&record[9..]);
    Ok(Some((key, u64::from_be_bytes(id))))
}

/// The pages of the key being read, emitted when the next key comes.
struct Group<I: IdWidth> {
    key: Option<[u8; 9]>,
    ids: Vec<I>,
}

impl<I: IdWidth> Default for Group<I> {
    fn default() -> Self {
        Group {
            key: None,
            ids: Vec::new(),
        }
    }
}

impl<I: IdWidth> Group<I> {
    fn take(
        &mut self,
        key: [u8; 9],
        id: u64,
        emit: &mut dyn FnMut(LogOp<I>) -> Result<()>,
    ) -> Result<()> {
        if self.key != Some(key) {
            self.finish(emit)?;
            self.key = Some(key);
        }
        let id = I::from_u64(id).ok_or_else(|| {
            Error::InvalidArgument(format!("page id {id} does not fit {} ids", I::NAME))
        })?;
        // Pairs come sorted: a page twice under one key is adjacent.
        if self.ids.last() != Some(&id) {
            self.ids.push(id);
        }
        Ok(())
    }

    fn finish(&mut self, emit: &mut dyn FnMut(LogOp<I>) -> Result<()>) -> Result<()> {
        let Some(key) = self.key.take() else {
            return Ok(());
        };
        let add = I::Set::from_sorted(self.ids.iter().copied());
        self.ids.clear();
        emit(LogOp::Posting {
            key,
            delta: PostingDelta {
                add,
                remove: I::Set::default(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key with its ids.
    type Postings = Vec<([u8; 9], Vec<u64>)>;

    fn drained(mut runs: PostingRuns, pairs: &[Pair]) -> (Postings, usize) {
        for &(k, id) in pairs {
            runs.push(k, id).unwrap();
        }
        let spilled = runs.spilled();
        let mut out = Vec::new();
        runs.drain::<u64>(&mut |op| {
            let LogOp::Posting { key, delta } = op else {
                panic!("not a posting: {op:?}");
            };
            assert!(delta.remove.is_empty());
            out.push((key, delta.add.iter().collect()));
            Ok(())
        })
        .unwrap();
        (out, spilled)
    }

    fn pairs() -> Vec<Pair> {
        // Keys in no order, a page filed twice under one key, ids past 2³².
        let mut out = Vec::new();
        for page in 0..500u64 {
            for k in 0..7u8 {
                let key = [((page * 7 + k as u64) % 13) as u8, k, 0, 0, 0, 0, 0, 0, 1];
                out.push((key, (page * 977) % 500 + (1 << 33)));
            }
        }
        out.push(out[3]);
        out
    }

    #[test]
    fn runs_written_to_files_give_what_memory_gives() {
        let dir = tempfile::tempdir().unwrap();
        let (whole, none) = drained(PostingRuns::in_memory(), &pairs());
        assert_eq!(none, 0);
        let (spilled, n) = drained(PostingRuns::spilling(dir.path(), 64), &pairs());
        assert!(n > 10, "{n} runs");
        assert_eq!(whole, spilled);
        // One posting per key, in key order, ids increasing and distinct.
        assert!(whole.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(whole
            .iter()
            .all(|(_, ids)| ids.windows(2).all(|w| w[0] < w[1])));
        let total: usize = whole.iter().map(|(_, ids)| ids.len()).sum();
        let mut distinct = pairs();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(total, distinct.len());
        // The anonymous run files are gone with the runs.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_id_too_wide_for_the_width_is_refused() {
        let mut runs = PostingRuns::in_memory();
        runs.push([0; 9], 1 << 40).unwrap();
        let err = runs.drain::<u32>(&mut |_| Ok(())).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
}
