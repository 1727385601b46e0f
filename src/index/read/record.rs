//! A stored page's public record ([`Record`]), as [`Index::get`](crate::Index::get) and the
//! [`Pages`](super::Pages) cursor give it, and the page a page was judged similar to.

use crate::index::types::Record;
use crate::index::view::{Snapshot, View};
use crate::storage::codec::{DocId, DocRecord, NO_DOC};
use crate::Result;

/// The record of live page `doc` (stored as `rec`), read at the snapshot.
pub(crate) fn record_of(view: &Snapshot<'_>, doc: DocId, rec: DocRecord) -> Result<Record> {
    let cl = view.cluster_of_live(rec.cluster)?;
    let representative = if cl.representative == doc {
        rec.key.clone()
    } else {
        view.member(cl.representative)?.key
    };
    record_with(view, doc, rec, representative)
}

/// The record of live page `doc` (stored as `rec`) whose cluster's representative is known.
pub(crate) fn record_with(
    view: &Snapshot<'_>,
    doc: DocId,
    rec: DocRecord,
    representative: String,
) -> Result<Record> {
    let similar = similar_of(&rec, |i| view.doc(i))?;
    let (resemble, contain) = match similar {
        Some(_) => (f64::from(rec.resemble), f64::from(rec.contain)),
        None => (0.0, 0.0),
    };
    Ok(Record {
        doc,
        seq: rec.seq,
        cluster: rec.cluster,
        representative,
        similar_to: similar.map(|r| r.key),
        resemble,
        contain,
        content_hash: rec.content_hash,
        host: rec.host,
        time: rec.time,
        text_chars: rec.text_chars,
        key: rec.key,
    })
}

/// The page `rec` was judged similar to, while it is held: its id may have been given to
/// another page since, told apart by the insertion number.
pub(crate) fn similar_of(
    rec: &DocRecord,
    doc: impl FnOnce(DocId) -> Result<Option<DocRecord>>,
) -> Result<Option<DocRecord>> {
    if rec.similar_to == NO_DOC {
        return Ok(None);
    }
    Ok(doc(rec.similar_to)?.filter(|r| r.seq == rec.similar_seq))
}
