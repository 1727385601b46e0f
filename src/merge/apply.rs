//! The apply-log API (SCALEOUT §11 item 5; the spec is §5 S5 "Commit" and §9): a partition's
//! operation list for one batch of a distributed merge, applied so that it takes effect once.
//!
//! A log is a list of [`LogOp`]s over today's column families and codecs. Every operation is an
//! idempotent function of the one key it names: posting changes have set semantics (ids out,
//! then ids in), records, texts and counts are whole values, and counters are absolute. So a log
//! applied again after a crash that left part of it written ends in the state one whole
//! application gives: replaying a prefix first changes nothing.
//!
//! The log is applied in chunks, each one atomic `WriteBatch` built by a [`Txn`] and committed as
//! every write is ([`Index::commit`]: the posting-key filter first, then the write, then the
//! counters, free ids, over-frequent set, document frequencies and page-to-cluster map in
//! memory, and the commit count that tells batch inserts their read-ahead is stale). The last
//! chunk also records the batch in the `meta` key `applied_batch`: a log whose batch is recorded
//! is not applied again, and a partition refuses batch n + 1 until batch n is recorded.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::checks::{check_ops, Storable};
use super::log::{ApplyOutcome, LogCounter, LogOp, APPLY_CHUNK_BYTES};
use crate::index::{Counters, Index, Txn};
use crate::storage::codec::{self, ClusterId, DocId, TextValue};
use crate::storage::{self, cf, chrome_key, meta};
use crate::{Error, Result};

/// The free-id changes of one chunk, the last one per id winning (a `WriteBatch` gives a freed
/// id its free key whatever came first, see [`Txn::finish`]).
#[derive(Default)]
struct FreeChanges {
    pub(crate) docs: BTreeMap<DocId, bool>,
    pub(crate) clusters: BTreeMap<ClusterId, bool>,
}

impl Index {
    /// Applies batch `batch`'s operation list to this index (a partition of a distributed merge,
    /// SCALEOUT §5 S5 and §9), in chunks of about [`APPLY_CHUNK_BYTES`] bytes: see
    /// [`Index::apply_log_chunked`].
    ///
    /// # Errors
    /// As [`Index::apply_log_chunked`].
    pub fn apply_log(&self, batch: u64, ops: &[LogOp]) -> Result<ApplyOutcome> {
        self.apply_log_chunked(batch, ops, APPLY_CHUNK_BYTES)
    }

    /// Applies batch `batch`'s operation list under the writer lock, in chunks of about
    /// `chunk_bytes` bytes (at least one operation each), each chunk one atomic `WriteBatch`; the
    /// last one also records `batch` as the index's applied batch ([`Index::applied_batch`]).
    /// The operations take effect in their order. Afterwards the index's state in memory
    /// (counters, free ids, over-frequent fingerprints, the posting-key filter, document
    /// frequencies, the page-to-cluster map) is the applied one, and a batch insert running
    /// meanwhile reads its postings again.
    ///
    /// When `batch` is recorded already, nothing is written ([`ApplyOutcome::AlreadyApplied`]).
    /// An index with a recorded batch n accepts only batch n + 1; one with none accepts any.
    /// After a failure or a crash part way, applying the same log again gives the state one
    /// whole application gives (the operations are idempotent, see [`LogOp`]); until then the
    /// index holds part of the log and [`Index::check`] may report problems.
    ///
    /// The log is trusted to describe a consistent state: its operations are checked one by one
    /// (see the errors), not against each other; [`Index::check`] verifies the result.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a batch other than the recorded one or the next is
    /// given, while a batch insert is in flight on this index, or for an operation that cannot
    /// be stored (a page or cluster id at or above its allocator as the log leaves it, a simhash
    /// table the index lacks, an empty or overlong key, a host over 255 bytes, an unknown
    /// over-frequent reason, a text where the index stores posting keys or the reverse) — all
    /// before anything is written; [`Error::Poisoned`] after a failed write (some chunks may be
    /// written: reopen and apply the log again), [`Error::ReadOnly`], storage and corruption
    /// errors.
    pub fn apply_log_chunked(
        &self,
        batch: u64,
        ops: &[LogOp],
        chunk_bytes: usize,
    ) -> Result<ApplyOutcome> {
        let mut counters = self.lock_writer()?;
        if self.batch_done(batch)? {
            return Ok(ApplyOutcome::AlreadyApplied);
        }
        self.check_log(&counters, ops)?;
        let chunks = self.apply_chunks(&mut counters, ops, chunk_bytes, Some(batch))?;
        drop(counters);
        self.sync_wal()?;
        Ok(ApplyOutcome::Applied { chunks })
    }

    /// Writes `ops` as [`Index::apply_log_chunked`] does but records no batch: what a crash
    /// after their chunks leaves. For crash tests only.
    ///
    /// # Errors
    /// As [`Index::apply_log_chunked`].
    #[doc(hidden)]
    pub fn apply_log_unrecorded(&self, ops: &[LogOp], chunk_bytes: usize) -> Result<usize> {
        let mut counters = self.lock_writer()?;
        self.check_log(&counters, ops)?;
        let chunks = self.apply_chunks(&mut counters, ops, chunk_bytes, None)?;
        drop(counters);
        self.sync_wal()?;
        Ok(chunks)
    }

    /// The last batch log applied ([`Index::apply_log`]), `None` when none has been.
    ///
    /// # Errors
    /// [`Error::Corruption`] when the stored value is not 8 bytes, storage errors.
    pub fn applied_batch(&self) -> Result<Option<u64>> {
        self.registration.check_process()?;
        self.applied_batch_stored()
    }

    pub(crate) fn applied_batch_stored(&self) -> Result<Option<u64>> {
        self.get_at(
            cf::META,
            meta::APPLIED_BATCH,
            None,
            "the applied batch",
            |v| storage::decode_u64(cf::META, meta::APPLIED_BATCH, v),
        )
    }

    /// Refuses a log with an operation that cannot be stored, or while a batch insert is in
    /// flight (its held free ids would not match the log's).
    pub(crate) fn check_log(&self, counters: &Counters, ops: &[LogOp]) -> Result<()> {
        self.check_ops(counters, || Ok(ops.iter().map(Ok)))
    }

    /// [`Self::check_log`] of the operations `ops()` gives (it is called twice: the allocators
    /// the log leaves, then each operation), so that a log's bytes are checked without
    /// holding it decoded.
    pub(crate) fn check_ops<T, I>(
        &self,
        counters: &Counters,
        ops: impl Fn() -> Result<I>,
    ) -> Result<()>
    where
        T: std::borrow::Borrow<LogOp>,
        I: Iterator<Item = Result<T>>,
    {
        if !counters.batches.is_empty() {
            return Err(Error::InvalidArgument(
                "a batch log cannot be applied while a batch insert is in flight".into(),
            ));
        }
        // Ids stay below the allocators as the log leaves them (the in-memory map of pages to
        // clusters is as long as the highest page id).
        let into = Storable {
            what: "index",
            tables: self.tables.tables,
            store_texts: self.opts.store_texts,
            partition: self.partition()?,
        };
        check_ops(&into, (counters.next_doc, counters.next_cluster), ops)
    }

    /// Writes checked `ops` in chunks, recording `mark` as the applied batch in the last one;
    /// returns the number of chunks.
    pub(crate) fn apply_chunks(
        &self,
        counters: &mut Counters,
        ops: &[LogOp],
        chunk_bytes: usize,
        mark: Option<u64>,
    ) -> Result<usize> {
        if ops.is_empty() && mark.is_none() {
            return Ok(0);
        }
        let mut chunks = 0;
        let mut rest = ops;
        loop {
            let mut len = 0;
            let mut bytes = 0;
            while len < rest.len() && (len == 0 || bytes < chunk_bytes) {
                bytes += rest[len].weight();
                len += 1;
            }
            let (chunk, tail) = rest.split_at(len);
            let mut txn = Txn::new(self, counters);
            let mut free = FreeChanges::default();
            for op in chunk {
                self.stage(&mut txn, &mut free, op);
            }
            for (id, f) in free.docs {
                txn.set_free_doc(id, f);
            }
            for (id, f) in free.clusters {
                txn.set_free_cluster(id, f);
            }
            if self.opts.signature.method.uses_df() {
                txn.resolve_terms()?;
            }
            if let Some(batch) = mark.filter(|_| tail.is_empty()) {
                txn.batch
                    .put_cf(self.cf(cf::META), meta::APPLIED_BATCH, batch.to_be_bytes());
            }
            self.commit(txn, counters, false)?;
            chunks += 1;
            rest = tail;
            if rest.is_empty() {
                return Ok(chunks);
            }
        }
    }

    /// Puts one operation into the chunk's transaction (free ids into `free`).
    fn stage(&self, txn: &mut Txn<'_>, free: &mut FreeChanges, op: &LogOp) {
        match op {
            LogOp::Posting { key, delta } => txn.posting_change(*key, delta),
            LogOp::Simhash {
                table,
                simhash,
                doc,
                present,
            } => txn.set_simhash_key(self.tables.key(*table, *simhash, *doc), *present),
            LogOp::Frequent { key, reason } => txn.set_frequent(*key, *reason),
            LogOp::Key { key, doc } => txn.set_key(key, *doc),
            LogOp::Doc { id, record } => txn.set_doc(*id, record.clone()),
            LogOp::Text { id, value } => {
                let (value, text) = match value {
                    None => (None, None),
                    Some(TextValue::Text(t)) => {
                        (Some(codec::encode_text(t)), Some(Arc::from(&**t)))
                    }
                    Some(TextValue::PostingKeys(k)) => (Some(codec::encode_posting_keys(k)), None),
                };
                txn.set_text_value(*id, value, text);
            }
            LogOp::Cluster { id, record } => txn.set_cluster(*id, record.clone()),
            LogOp::PageBlocks { id, blocks } => txn.set_page_blocks(*id, blocks.clone()),
            LogOp::HostPages { host, pages } => {
                txn.set_chrome_count(chrome_key::host(host), *pages);
            }
            LogOp::BlockPages { host, block, pages } => {
                txn.set_chrome_count(chrome_key::block(host, *block), *pages);
            }
            LogOp::FreeDoc { id, free: f } => {
                free.docs.insert(*id, *f);
            }
            LogOp::FreeCluster { id, free: f } => {
                free.clusters.insert(*id, *f);
            }
            LogOp::Counter(c) => match *c {
                LogCounter::NextDoc(v) => txn.next_doc = v,
                LogCounter::NextCluster(v) => txn.next_cluster = v,
                LogCounter::LiveDocs(v) => txn.live_docs = v,
                LogCounter::LiveClusters(v) => txn.live_clusters = v,
                LogCounter::NextSeq(v) => txn.next_seq = v,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Page;
    use crate::options::IndexOptions;
    use crate::storage::codec::{ClusterRecord, DocRecord, PageBlocks};
    use crate::storage::merge::Delta;
    use crate::storage::{kind, posting_key};
    use proptest::prelude::*;

    fn open(dir: &std::path::Path) -> Index {
        Index::open(dir, IndexOptions::default()).unwrap()
    }

    fn record(key: &str, cluster: ClusterId, seq: u64) -> DocRecord {
        DocRecord {
            key: key.to_string(),
            host: "a.example".into(),
            time: 7,
            cluster,
            text_chars: 11,
            fingerprints: 1,
            simhash: 0x1234_5678_9abc_def0 ^ seq,
            content_hash: u128::from(seq) << 70,
            codes: vec![3, 1],
            similar_to: codec::NO_DOC,
            seq,
            similar_seq: 0,
            resemble: 0.0,
            contain: 0.0,
            raw_hash: Some(seq),
        }
    }

    /// A small consistent log: the state of an index holding one page.
    fn one_page() -> Vec<LogOp> {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        let text = "The river rose in the night and the village woke to water in the streets.\n\
                    Teachers moved the school books upstairs before the morning bell rang.";
        ix.insert(&Page {
            key: "k",
            host: "a.example",
            time: 0,
            content: crate::Content::Text(text),
        })
        .unwrap();
        ix.state_log().unwrap()
    }

    /// The state in memory that the log changes.
    fn memory(ix: &Index) -> impl PartialEq + std::fmt::Debug {
        let c = ix.writer.lock();
        let mut frequent: Vec<[u8; 9]> = ix.frequent.read().iter().copied().collect();
        frequent.sort_unstable();
        (
            (
                c.next_doc,
                c.next_cluster,
                c.live_docs,
                c.live_clusters,
                c.next_seq,
            ),
            c.free_docs.all(),
            c.free_clusters.all(),
            frequent,
        )
    }

    #[test]
    fn a_recorded_batch_is_not_applied_again() {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        assert_eq!(ix.applied_batch().unwrap(), None);
        let log = one_page();
        assert_eq!(
            ix.apply_log_chunked(5, &log, 1).unwrap(),
            ApplyOutcome::Applied { chunks: log.len() }
        );
        assert_eq!(ix.len(), 1);
        assert_eq!(ix.applied_batch().unwrap(), Some(5));
        assert!(ix.check().unwrap().is_clean());
        let commits = ix.commits.load(std::sync::atomic::Ordering::Acquire);
        let state = ix.state_log().unwrap();
        assert_eq!(ix.apply_log(5, &log).unwrap(), ApplyOutcome::AlreadyApplied);
        assert_eq!(
            ix.commits.load(std::sync::atomic::Ordering::Acquire),
            commits,
            "nothing is written"
        );
        assert_eq!(ix.state_log().unwrap(), state);
        // Recorded on disk: a reopened index knows it.
        drop(ix);
        let ix = open(dir.path());
        assert_eq!(ix.applied_batch().unwrap(), Some(5));
        assert_eq!(ix.apply_log(5, &log).unwrap(), ApplyOutcome::AlreadyApplied);
    }

    #[test]
    fn batches_are_applied_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        // Any first batch; an empty log records it in one write.
        assert_eq!(
            ix.apply_log(7, &[]).unwrap(),
            ApplyOutcome::Applied { chunks: 1 }
        );
        let state = ix.state_log().unwrap();
        for refused in [9, 6, 0, u64::MAX] {
            let e = ix.apply_log(refused, &one_page()).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(e.to_string().contains("batch 8 next"), "{e}");
        }
        assert_eq!(
            ix.state_log().unwrap(),
            state,
            "a refused log writes nothing"
        );
        assert_eq!(ix.applied_batch().unwrap(), Some(7));
        assert!(matches!(
            ix.apply_log(8, &one_page()),
            Ok(ApplyOutcome::Applied { chunks: 1 })
        ));
        assert_eq!(ix.applied_batch().unwrap(), Some(8));
        assert_eq!(ix.len(), 1);
    }

    #[test]
    fn the_last_batch_there_is_takes_no_successor() {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        ix.apply_log(u64::MAX, &[]).unwrap();
        let e = ix.apply_log(0, &[]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert_eq!(
            ix.apply_log(u64::MAX, &[]).unwrap(),
            ApplyOutcome::AlreadyApplied
        );
    }

    #[test]
    fn operations_that_cannot_be_stored_are_refused_before_any_write() {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        let long_host = "h".repeat(256);
        let mut long_host_doc = record("k", 0, 0);
        long_host_doc.host = long_host.clone();
        let bad = [
            LogOp::Simhash {
                table: ix.tables.tables,
                simhash: 1,
                doc: 0,
                present: true,
            },
            LogOp::Frequent {
                key: [0; 9],
                reason: Some(b'x'),
            },
            LogOp::Key {
                key: String::new(),
                doc: Some(0),
            },
            LogOp::Doc {
                id: 0,
                record: Some(record("", 0, 0)),
            },
            LogOp::Doc {
                id: 0,
                record: Some(long_host_doc),
            },
            LogOp::Text {
                id: 0,
                value: Some(TextValue::PostingKeys(vec![[1; 9]])),
            },
            LogOp::HostPages {
                host: long_host.clone(),
                pages: 1,
            },
            LogOp::BlockPages {
                host: long_host.clone(),
                block: 3,
                pages: 1,
            },
            LogOp::PageBlocks {
                id: 0,
                blocks: Some(PageBlocks {
                    host: long_host,
                    ..PageBlocks::default()
                }),
            },
            // Ids at or above the allocators as the log leaves them (1 and 1).
            LogOp::Doc {
                id: 1,
                record: None,
            },
            LogOp::Doc {
                id: 0,
                record: Some(record("k", 1, 0)),
            },
            LogOp::Key {
                key: "k".into(),
                doc: Some(1),
            },
            LogOp::Text { id: 1, value: None },
            LogOp::Simhash {
                table: 0,
                simhash: 1,
                doc: 1,
                present: false,
            },
            LogOp::PageBlocks {
                id: 1,
                blocks: None,
            },
            LogOp::FreeDoc { id: 1, free: true },
            LogOp::Cluster {
                id: 1,
                record: None,
            },
            LogOp::FreeCluster { id: 1, free: true },
        ];
        let empty = ix.state_log().unwrap();
        for op in bad {
            // The bad operation comes last: the good ones before it are not written either.
            let mut log = one_page();
            log.push(op.clone());
            let e = ix.apply_log_chunked(1, &log, 1).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{op:?}: {e}");
            let message = e.to_string();
            assert!(message.contains(&format!("operation {} of the log", log.len() - 1)));
            assert_eq!(message.matches("invalid argument").count(), 1, "{message}");
            assert_eq!(ix.state_log().unwrap(), empty, "{op:?}");
            assert_eq!(ix.applied_batch().unwrap(), None);
        }
        // Still writable.
        ix.apply_log(1, &one_page()).unwrap();
        assert!(ix.check().unwrap().is_clean());
    }

    #[test]
    fn a_read_only_index_refuses_a_log() {
        let dir = tempfile::tempdir().unwrap();
        open(dir.path()).apply_log(2, &[]).unwrap();
        let ix = Index::open_read_only(dir.path()).unwrap();
        assert_eq!(ix.applied_batch().unwrap(), Some(2));
        assert!(matches!(ix.apply_log(3, &[]), Err(Error::ReadOnly(..))));
        assert!(matches!(
            ix.apply_log_unrecorded(&one_page(), 1),
            Err(Error::ReadOnly(..))
        ));
    }

    #[test]
    fn an_undecodable_applied_batch_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        ix.db
            .put_cf(ix.cf(cf::META), meta::APPLIED_BATCH, [1, 2, 3])
            .unwrap();
        assert!(matches!(
            ix.applied_batch(),
            Err(Error::Corruption { cf: "meta", .. })
        ));
        assert!(matches!(
            ix.apply_log(1, &[]),
            Err(Error::Corruption { cf: "meta", .. })
        ));
    }

    #[test]
    fn frequent_keys_and_free_ids_are_set_and_unset() {
        let dir = tempfile::tempdir().unwrap();
        let ix = open(dir.path());
        let (a, b) = ([1u8; 9], [2u8; 9]);
        ix.apply_log(
            1,
            &[
                LogOp::Counter(LogCounter::NextDoc(5)),
                LogOp::Counter(LogCounter::NextCluster(3)),
                LogOp::Frequent {
                    key: a,
                    reason: Some(LogOp::FREQUENT_PAGES),
                },
                LogOp::Frequent {
                    key: b,
                    reason: Some(LogOp::FREQUENT_HOSTS),
                },
                LogOp::FreeDoc { id: 3, free: true },
                LogOp::FreeDoc { id: 4, free: true },
                LogOp::FreeCluster { id: 2, free: true },
            ],
        )
        .unwrap();
        assert!(ix.frequent.read().contains(&a) && ix.frequent.read().contains(&b));
        // In one write: b unmarked, 3 given out, 4 given out then freed again (the last wins).
        ix.apply_log(
            2,
            &[
                LogOp::Frequent {
                    key: b,
                    reason: None,
                },
                LogOp::FreeDoc { id: 3, free: false },
                LogOp::FreeDoc { id: 4, free: false },
                LogOp::FreeDoc { id: 4, free: true },
                LogOp::FreeCluster { id: 2, free: false },
            ],
        )
        .unwrap();
        let held = memory(&ix);
        assert!(ix.frequent.read().contains(&a) && !ix.frequent.read().contains(&b));
        {
            let c = ix.writer.lock();
            assert_eq!(c.free_docs.all().iter().collect::<Vec<_>>(), vec![4]);
            assert!(c.free_clusters.all().is_empty());
        }
        let stats = ix.stats().unwrap();
        assert_eq!(stats.frequent.len(), 1);
        drop(ix);
        let ix = open(dir.path());
        assert_eq!(memory(&ix), held, "what is in memory is what is stored");
    }

    /// A log operation over a small universe of keys and ids, so that operations meet.
    fn op() -> impl Strategy<Value = LogOp> {
        let ids = || proptest::collection::vec(0u32..6, 0..4);
        let posting = (0u8..4, ids(), ids()).prop_map(|(k, add, remove)| LogOp::Posting {
            key: posting_key(kind::SENTENCE, u128::from(k) << 64),
            delta: Delta {
                add: add.into_iter().collect(),
                remove: remove.into_iter().collect(),
            },
        });
        prop_oneof![
            3 => posting,
            1 => (0u8..4, 0u64..3, 0u32..6, any::<bool>()).prop_map(|(table, simhash, doc, present)| {
                LogOp::Simhash { table, simhash, doc, present }
            }),
            1 => (0u8..3, proptest::option::of(prop_oneof![Just(b'P'), Just(b'H')]))
                .prop_map(|(k, reason)| LogOp::Frequent { key: [k; 9], reason }),
            1 => (0u32..4, proptest::option::of(0u32..6)).prop_map(|(k, doc)| LogOp::Key {
                key: format!("k{k}"),
                doc,
            }),
            1 => (0u32..6, proptest::option::of((0u32..4, 0u64..50))).prop_map(|(id, r)| LogOp::Doc {
                id,
                record: r.map(|(cluster, seq)| record(&format!("k{id}"), cluster, seq)),
            }),
            1 => (0u32..6, proptest::option::of(0u8..3)).prop_map(|(id, t)| LogOp::Text {
                id,
                value: t.map(|t| TextValue::Text(format!("text {t}"))),
            }),
            1 => (0u32..4, proptest::option::of(ids())).prop_map(|(id, m)| LogOp::Cluster {
                id,
                record: m.map(|m| ClusterRecord {
                    representative: m.first().copied().unwrap_or(0),
                    members: m.into_iter().collect(),
                }),
            }),
            1 => (0u32..6, proptest::option::of(0u64..3)).prop_map(|(id, b)| LogOp::PageBlocks {
                id,
                blocks: b.map(|b| PageBlocks {
                    host: "a.example".into(),
                    counted: vec![b, b + 1],
                    dropped: vec![b],
                }),
            }),
            1 => (0u32..3).prop_map(|pages| LogOp::HostPages {
                host: "a.example".into(),
                pages,
            }),
            1 => (0u64..3, 0u32..3).prop_map(|(block, pages)| LogOp::BlockPages {
                host: "a.example".into(),
                block,
                pages,
            }),
            1 => (0u32..8, any::<bool>()).prop_map(|(id, free)| LogOp::FreeDoc { id, free }),
            1 => (0u32..8, any::<bool>()).prop_map(|(id, free)| LogOp::FreeCluster { id, free }),
            1 => prop_oneof![
                (8u32..12).prop_map(LogCounter::NextDoc),
                (8u32..12).prop_map(LogCounter::NextCluster),
                (0u64..9).prop_map(LogCounter::LiveDocs),
                (0u64..9).prop_map(LogCounter::LiveClusters),
                (0u64..99).prop_map(LogCounter::NextSeq),
            ]
            .prop_map(LogOp::Counter),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Whatever prefix of a log a crash left written, in whatever chunks, applying the whole
        /// log then gives the state one whole application gives, on disk and in memory.
        #[test]
        fn a_prefix_then_the_whole_log_is_the_whole_log(
            ops in proptest::collection::vec(op(), 0..40),
            cut in 0usize..43,
            chunks in (1usize..400, 1usize..400, 1usize..400),
        ) {
            // Allocators above every id the operations name come first.
            let mut log = vec![
                LogOp::Counter(LogCounter::NextDoc(8)),
                LogOp::Counter(LogCounter::NextCluster(8)),
            ];
            log.extend(ops);
            let cut = cut.min(log.len());
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let once = open(a.path());
            once.apply_log_chunked(3, &log, chunks.0).unwrap();
            let crashed = open(b.path());
            crashed.apply_log_unrecorded(&log[..cut], chunks.1).unwrap();
            prop_assert_eq!(crashed.applied_batch().unwrap(), None);
            drop(crashed);
            let again = open(b.path());
            let applied = again.apply_log_chunked(3, &log, chunks.2);
            prop_assert!(matches!(applied, Ok(ApplyOutcome::Applied { .. })), "{:?}", applied);
            prop_assert_eq!(again.state_log().unwrap(), once.state_log().unwrap());
            prop_assert_eq!(memory(&again), memory(&once));
            // What is in memory is what a reopened index loads.
            let held = memory(&once);
            drop(once);
            prop_assert_eq!(memory(&open(a.path())), held);
        }
    }
}
