//! The checks of a batch log before a database applies any of it (SCALEOUT §9): each operation
//! names a key the database can store — ids below the allocators the log leaves, a simhash table
//! it has, a valid key and host, a known over-frequent reason, the text value it keeps — and,
//! in a partition, one the layout routes to it. The same for an index or a format-6 partition
//! (`u32` ids, [`crate::Index::apply_log_chunked`]) and a format-7 partition (`u64` ids,
//! [`super::WidePartition`]).

use super::layout::Partition;
use super::log::{LogCounter, LogOp};
use crate::index::{check_key, MAX_HOST};
use crate::storage::codec::TextValue;
use crate::storage::width::IdWidth;
use crate::{Error, Result};

/// What the database a log is applied to can store.
#[derive(Clone, Copy, Debug)]
pub(super) struct Storable<'a> {
    /// What to call it in messages: "index" or "partition".
    pub(super) what: &'a str,
    /// Its number of simhash tables.
    pub(super) tables: u8,
    /// Whether it keeps texts (else each page's posting keys).
    pub(super) store_texts: bool,
    /// Its place in a distributed index, if it is a partition.
    pub(super) partition: Option<Partition>,
}

/// Refuses a log with an operation that cannot be stored in `into`, whose allocators are
/// `allocators` before it; `ops()` gives the log (called twice: the allocators the log leaves,
/// then each operation).
pub(super) fn check_ops<I, T, J>(
    into: &Storable<'_>,
    allocators: (I, I),
    ops: impl Fn() -> Result<J>,
) -> Result<()>
where
    I: IdWidth,
    T: std::borrow::Borrow<LogOp<I>>,
    J: Iterator<Item = Result<T>>,
{
    // Ids stay below the allocators as the log leaves them.
    let mut limits = allocators;
    for op in ops()? {
        match op?.borrow() {
            LogOp::Counter(LogCounter::NextDoc(n)) => limits.0 = limits.0.max(*n),
            LogOp::Counter(LogCounter::NextCluster(n)) => limits.1 = limits.1.max(*n),
            _ => {}
        }
    }
    for (i, op) in ops()?.enumerate() {
        let op = op?;
        let op = op.borrow();
        if let Some(p) = into.partition.filter(|p| !p.holds(op)) {
            return Err(Error::InvalidArgument(format!(
                "operation {i} of the log belongs to another partition than this {}",
                p.role
            )));
        }
        check_op(into, op, limits).map_err(|reason| {
            Error::InvalidArgument(format!("operation {i} of the log: {reason}"))
        })?;
    }
    Ok(())
}

/// Why `op` cannot be stored in `into`, with ids below `(pages, clusters)`.
pub(super) fn check_op<I: IdWidth>(
    into: &Storable<'_>,
    op: &LogOp<I>,
    (pages, clusters): (I, I),
) -> std::result::Result<(), String> {
    let below = |id: I, limit: I, what: &str| {
        if id < limit {
            Ok(())
        } else {
            Err(format!(
                "{what} id {id} is at or above the {what} id allocator ({limit})"
            ))
        }
    };
    let page = |id: I| below(id, pages, "page");
    let cluster = |id: I| below(id, clusters, "cluster");
    let key = |k: &str| {
        check_key(k).map_err(|e| match e {
            Error::InvalidArgument(m) => m,
            e => e.to_string(),
        })
    };
    let host = |h: &str| {
        if h.len() > MAX_HOST {
            Err(format!(
                "the host is {} bytes, the limit is {MAX_HOST}",
                h.len()
            ))
        } else {
            Ok(())
        }
    };
    let what = into.what;
    match op {
        LogOp::Posting { .. } | LogOp::Counter(_) => Ok(()),
        LogOp::Simhash { table, doc, .. } => {
            if *table >= into.tables {
                return Err(format!(
                    "simhash table {table}: the {what} has {} tables",
                    into.tables
                ));
            }
            page(*doc)
        }
        LogOp::Frequent { reason, .. } => match reason {
            Some(r) if ![LogOp::FREQUENT_PAGES, LogOp::FREQUENT_HOSTS].contains(r) => {
                Err(format!("unknown over-frequent reason byte {r:#04x}"))
            }
            _ => Ok(()),
        },
        LogOp::Key { key: k, doc } => {
            key(k)?;
            doc.map_or(Ok(()), page)
        }
        LogOp::Doc { id, record } => {
            page(*id)?;
            match record {
                Some(r) => {
                    key(&r.key)?;
                    host(&r.host)?;
                    cluster(r.cluster)
                }
                None => Ok(()),
            }
        }
        LogOp::Text { id, value } => {
            page(*id)?;
            match (value, into.store_texts) {
                (Some(TextValue::Text(_)), false) => {
                    Err(format!("a text, where this {what} stores posting keys"))
                }
                (Some(TextValue::PostingKeys(_)), true) => {
                    Err(format!("posting keys, where this {what} stores texts"))
                }
                _ => Ok(()),
            }
        }
        LogOp::Cluster { id, .. } | LogOp::FreeCluster { id, .. } => cluster(*id),
        LogOp::PageBlocks { id, blocks } => {
            page(*id)?;
            blocks.as_ref().map_or(Ok(()), |b| host(&b.host))
        }
        LogOp::HostPages { host: h, .. } | LogOp::BlockPages { host: h, .. } => host(h),
        LogOp::FreeDoc { id, .. } => page(*id),
    }
}
