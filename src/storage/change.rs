//! The change feed's entries (the `changes` column family, FORMAT.md "Change feed"): one
//! record per committed change, under its sequence number (big-endian `u64`), written in the
//! `WriteBatch` of the change it records. A record is tagged and checksummed like the others
//! ([`TAG_CHANGE`]), and says enough to apply the change again to a copy of the index
//! (`crate::Index::apply_change`): the page's normalized text and heading codes as the index
//! decided on them, and the ids the change gave out.

use super::cf;
use super::codec::{seal, unseal, ClusterId, DocId, PageBlocks, Reader};
use crate::{Error, Result};

/// Tag of a change record, version 1: without raw page hashes. Written for a change that
/// carries none (so that an index of format 5 or older, which keeps none, writes only records
/// the builds of its format read).
pub const TAG_CHANGE_1: u8 = 0xE1;
/// Tag of a change record, version 2: inserts, replaces and retimes carry the page's raw hash
/// ([`PageChange::raw_hash`]).
pub const TAG_CHANGE: u8 = 0xE2;

/// Kind bytes of a change record.
mod kind {
    pub(super) const INSERTED: u8 = b'I';
    pub(super) const REPLACED: u8 = b'R';
    pub(super) const RETIMED: u8 = b'T';
    pub(super) const DELETED: u8 = b'D';
    pub(super) const MOVED: u8 = b'M';
    pub(super) const REPRESENTATIVE: u8 = b'L';
}

/// One committed change of an index, as [`crate::Index::changes_since`] lists them.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Its sequence number: from 1, strictly increasing over the index's life, one a change
    /// (never reused; a commit of several changes gives them consecutive numbers).
    pub seq: u64,
    /// When it was committed: Unix milliseconds, by the writer's clock (informative: it may go
    /// back with the clock; the order is `seq`'s).
    pub committed_ms: i64,
    /// What changed.
    pub kind: ChangeKind,
}

/// What a [`Change`] did.
///
/// The first four kinds are what callers asked for (an insert, a replace, an unchanged
/// recrawl's new publish time, a delete), in the order the writer decided them; applying those
/// to a copy of the index in order ([`crate::Index::apply_change`]) makes the same decisions.
/// The last two are what those changes did to other pages and clusters (a hand-over, a
/// newcomer taking the lead, members placed again), listed after the changes of their commit
/// as the commit left them (a batch commits a group of pages at once); a copy applying the
/// first four gets their effect by itself, and applying these records them in its feed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A page stored under a key the index did not hold.
    Inserted(PageChange),
    /// A page stored under a key the index held: its old version was taken out (as by a delete,
    /// its cluster handed over or kept, see [`crate::IndexOptions::sticky_representative`]) and
    /// the new one placed, in one write.
    Replaced(PageChange),
    /// An unchanged recrawl (same main text and host: [`crate::Verdict::unchanged`]) whose
    /// record was refreshed in place — a new publish time, a raw page that is not
    /// byte-identical (a new [`PageChange::raw_hash`]: [`crate::Verdict::unchanged_html`]
    /// false), or both: the page keeps its id, insertion number, cluster and role.
    Retimed {
        /// The page's key.
        key: String,
        /// Its id.
        doc: DocId,
        /// Its publish time, Unix seconds (new, or the one it had).
        time: i64,
        /// The hash of its raw page as now stored; `None` in a change recorded by a build that
        /// did not keep it (applying such a change leaves the stored hash as it is).
        raw_hash: Option<u64>,
    },
    /// A page deleted.
    Deleted {
        /// The page's key.
        key: String,
        /// The id it had (free now, and given to a later page).
        doc: DocId,
        /// The cluster it was in.
        cluster: ClusterId,
        /// The clusters founded by members placed again after the delete, in the order they
        /// were given out.
        founded: Vec<ClusterId>,
    },
    /// A page held before its commit moved to another cluster: a member placed again after
    /// its representative's delete or replace.
    Moved {
        /// The page's key.
        key: String,
        /// Its id.
        doc: DocId,
        /// The cluster it was in before the commit.
        from: ClusterId,
        /// The cluster it is in after.
        to: ClusterId,
        /// That cluster's representative after the commit (its own key when it leads).
        representative: String,
    },
    /// A cluster held before its commit has another representative after it: a hand-over after
    /// the representative's delete or replace, or a newcomer the policy prefers taking the lead.
    RepresentativeChanged {
        /// The cluster.
        cluster: ClusterId,
        /// The key of its representative before the commit.
        previous: String,
        /// The key of its representative after.
        representative: String,
    },
}

/// A page inserted or replaced: what was decided on and where it went.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PageChange {
    /// The page's key.
    pub key: String,
    /// The host it came from (may be empty).
    pub host: String,
    /// Its publish time, Unix seconds (0: unknown).
    pub time: i64,
    /// Its normalized main text, as the index decided on it (what is stored, site chrome
    /// already dropped).
    pub text: String,
    /// The hashes of its heading's model codes (see [`crate::fingerprint::heading_codes`]):
    /// the other part of a page its decisions read.
    pub codes: Vec<u32>,
    /// The id it got.
    pub doc: DocId,
    /// Its insertion number ([`crate::Record::seq`]).
    pub page_seq: u64,
    /// The cluster it is in after its commit.
    pub cluster: ClusterId,
    /// That cluster's representative after the commit (its own key when it leads).
    pub representative: String,
    /// The clusters this change founded (the page's own, and those of members a replace placed
    /// again), in the order they were given out.
    pub founded: Vec<ClusterId>,
    /// What the page counted for its host's site chrome (applied again with it).
    pub(crate) blocks: Option<PageBlocks>,
    /// The hash of its raw page as given ([`crate::Content::raw_hash`]), stored with the page
    /// (and applied again with it); `None` when unknown — in a change recorded by a build that
    /// did not keep it, or one applied from such a change.
    pub raw_hash: Option<u64>,
}

impl PageChange {
    /// A page change, the chrome it counted unknown (none).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        key: String,
        host: String,
        time: i64,
        text: String,
        codes: Vec<u32>,
        (doc, page_seq, cluster): (DocId, u64, ClusterId),
        blocks: Option<PageBlocks>,
    ) -> PageChange {
        PageChange {
            key,
            host,
            time,
            text,
            codes,
            doc,
            page_seq,
            cluster,
            representative: String::new(),
            founded: Vec::new(),
            blocks,
            raw_hash: None,
        }
    }
}

/// The key of change `seq` in the `changes` column family.
pub fn change_key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

fn put_str32(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u32).to_be_bytes());
    b.extend_from_slice(s.as_bytes());
}

fn put_ids(b: &mut Vec<u8>, ids: &[u32]) {
    b.extend_from_slice(&(ids.len() as u32).to_be_bytes());
    for id in ids {
        b.extend_from_slice(&id.to_be_bytes());
    }
}

fn str32(r: &mut Reader<'_>) -> std::result::Result<String, String> {
    let n = r.u32()? as usize;
    r.str(n)
}

/// Writes an optional raw page hash: a byte 1 and the hash, or 0 and eight zero bytes.
fn put_raw(b: &mut Vec<u8>, raw: Option<u64>) {
    b.push(u8::from(raw.is_some()));
    b.extend_from_slice(&raw.unwrap_or(0).to_be_bytes());
}

/// Reads what [`put_raw`] wrote (nothing in a version 1 record: `None`).
fn raw(r: &mut Reader<'_>, v1: bool) -> std::result::Result<Option<u64>, String> {
    if v1 {
        return Ok(None);
    }
    let present = r.take(1)?[0];
    let hash = r.u64()?;
    match present {
        0 if hash == 0 => Ok(None),
        1 => Ok(Some(hash)),
        _ => Err(format!("a raw hash flagged {present:#04x}")),
    }
}

fn ids(r: &mut Reader<'_>, body: usize) -> std::result::Result<Vec<u32>, String> {
    let n = r.u32()? as usize;
    if n > body / 4 {
        return Err(format!("{n} ids in a record of {body} bytes"));
    }
    (0..n).map(|_| r.u32()).collect()
}

impl Change {
    /// The raw page hash the change carries, if any: it is then written as a version 2 record.
    fn raw_hash(&self) -> Option<u64> {
        match &self.kind {
            ChangeKind::Inserted(p) | ChangeKind::Replaced(p) => p.raw_hash,
            ChangeKind::Retimed { raw_hash, .. } => *raw_hash,
            _ => None,
        }
    }

    /// Encodes the change as the `changes` column family stores it (its sequence number is the
    /// key): tag, commit time, kind, the kind's fields, CRC-32 (FORMAT.md "Change feed").
    pub(crate) fn encode_value(&self) -> Vec<u8> {
        let v1 = self.raw_hash().is_none();
        let mut b = Vec::with_capacity(64);
        b.push(if v1 { TAG_CHANGE_1 } else { TAG_CHANGE });
        b.extend_from_slice(&self.committed_ms.to_be_bytes());
        match &self.kind {
            ChangeKind::Inserted(p) | ChangeKind::Replaced(p) => {
                b.push(if matches!(self.kind, ChangeKind::Inserted(_)) {
                    kind::INSERTED
                } else {
                    kind::REPLACED
                });
                b.reserve(p.text.len() + p.key.len() + 64);
                put_str32(&mut b, &p.key);
                put_str32(&mut b, &p.host);
                b.extend_from_slice(&p.time.to_be_bytes());
                b.extend_from_slice(&p.doc.to_be_bytes());
                b.extend_from_slice(&p.page_seq.to_be_bytes());
                b.extend_from_slice(&p.cluster.to_be_bytes());
                put_str32(&mut b, &p.representative);
                put_ids(&mut b, &p.codes);
                put_ids(&mut b, &p.founded);
                match &p.blocks {
                    Some(blocks) => {
                        let e = blocks.encode();
                        b.extend_from_slice(&(e.len() as u32).to_be_bytes());
                        b.extend_from_slice(&e);
                    }
                    None => b.extend_from_slice(&0u32.to_be_bytes()),
                }
                if !v1 {
                    put_raw(&mut b, p.raw_hash);
                }
                put_str32(&mut b, &p.text);
            }
            ChangeKind::Retimed {
                key,
                doc,
                time,
                raw_hash,
            } => {
                b.push(kind::RETIMED);
                put_str32(&mut b, key);
                b.extend_from_slice(&doc.to_be_bytes());
                b.extend_from_slice(&time.to_be_bytes());
                if !v1 {
                    put_raw(&mut b, *raw_hash);
                }
            }
            ChangeKind::Deleted {
                key,
                doc,
                cluster,
                founded,
            } => {
                b.push(kind::DELETED);
                put_str32(&mut b, key);
                b.extend_from_slice(&doc.to_be_bytes());
                b.extend_from_slice(&cluster.to_be_bytes());
                put_ids(&mut b, founded);
            }
            ChangeKind::Moved {
                key,
                doc,
                from,
                to,
                representative,
            } => {
                b.push(kind::MOVED);
                put_str32(&mut b, key);
                b.extend_from_slice(&doc.to_be_bytes());
                b.extend_from_slice(&from.to_be_bytes());
                b.extend_from_slice(&to.to_be_bytes());
                put_str32(&mut b, representative);
            }
            ChangeKind::RepresentativeChanged {
                cluster,
                previous,
                representative,
            } => {
                b.push(kind::REPRESENTATIVE);
                b.extend_from_slice(&cluster.to_be_bytes());
                put_str32(&mut b, previous);
                put_str32(&mut b, representative);
            }
        }
        seal(b)
    }

    /// Decodes and verifies a record of the `changes` column family read at `key` (of either
    /// version: a version 1 record reads without raw hashes).
    ///
    /// # Errors
    /// [`Error::Corruption`] on a key that is not 8 bytes, a wrong tag, checksum, kind or
    /// length.
    pub(crate) fn decode_entry(key: &[u8], value: &[u8]) -> Result<Change> {
        let seq = <[u8; 8]>::try_from(key)
            .map(u64::from_be_bytes)
            .map_err(|_| Error::corruption(cf::CHANGES, key, "key is not 8 bytes"))?;
        let v1 = value.first() == Some(&TAG_CHANGE_1);
        let body = unseal(
            cf::CHANGES,
            key,
            value,
            if v1 { TAG_CHANGE_1 } else { TAG_CHANGE },
        )?;
        let parse = || -> std::result::Result<Change, String> {
            let n = body.len();
            let mut r = Reader::new(body);
            let committed_ms = r.u64()? as i64;
            let k = r.take(1)?[0];
            let kind = match k {
                kind::INSERTED | kind::REPLACED => {
                    let key = str32(&mut r)?;
                    let host = str32(&mut r)?;
                    let time = r.u64()? as i64;
                    let doc = r.u32()?;
                    let page_seq = r.u64()?;
                    let cluster = r.u32()?;
                    let representative = str32(&mut r)?;
                    let codes = ids(&mut r, n)?;
                    let founded = ids(&mut r, n)?;
                    let blocks_len = r.u32()? as usize;
                    let blocks = match blocks_len {
                        0 => None,
                        len => Some(
                            PageBlocks::decode(cf::CHANGES, key.as_bytes(), r.take(len)?)
                                .map_err(|e| format!("its chrome record: {e}"))?,
                        ),
                    };
                    let raw_hash = raw(&mut r, v1)?;
                    let text = str32(&mut r)?;
                    let p = PageChange {
                        key,
                        host,
                        time,
                        text,
                        codes,
                        doc,
                        page_seq,
                        cluster,
                        representative,
                        founded,
                        blocks,
                        raw_hash,
                    };
                    if k == kind::INSERTED {
                        ChangeKind::Inserted(p)
                    } else {
                        ChangeKind::Replaced(p)
                    }
                }
                kind::RETIMED => ChangeKind::Retimed {
                    key: str32(&mut r)?,
                    doc: r.u32()?,
                    time: r.u64()? as i64,
                    raw_hash: raw(&mut r, v1)?,
                },
                kind::DELETED => ChangeKind::Deleted {
                    key: str32(&mut r)?,
                    doc: r.u32()?,
                    cluster: r.u32()?,
                    founded: ids(&mut r, n)?,
                },
                kind::MOVED => ChangeKind::Moved {
                    key: str32(&mut r)?,
                    doc: r.u32()?,
                    from: r.u32()?,
                    to: r.u32()?,
                    representative: str32(&mut r)?,
                },
                kind::REPRESENTATIVE => ChangeKind::RepresentativeChanged {
                    cluster: r.u32()?,
                    previous: str32(&mut r)?,
                    representative: str32(&mut r)?,
                },
                other => return Err(format!("unknown change kind {other:#04x}")),
            };
            if !r.is_empty() {
                return Err("trailing bytes after the change".into());
            }
            Ok(Change {
                seq,
                committed_ms,
                kind,
            })
        };
        parse().map_err(|reason| Error::corruption(cf::CHANGES, key, reason))
    }

    /// The change as bytes to ship to a copy of the index (a replica on another machine): its
    /// sequence number (8 bytes, big-endian), then the record the `changes` column family
    /// holds (checksummed). [`Change::from_bytes`] reads them back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let value = self.encode_value();
        let mut b = Vec::with_capacity(8 + value.len());
        b.extend_from_slice(&change_key(self.seq));
        b.extend_from_slice(&value);
        b
    }

    /// Reads a change written by [`Change::to_bytes`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the bytes are not a change (too short, a wrong tag or
    /// checksum, fields that do not decode).
    pub fn from_bytes(bytes: &[u8]) -> Result<Change> {
        if bytes.len() < 8 {
            return Err(Error::InvalidArgument(format!(
                "a change of {} bytes: too short",
                bytes.len()
            )));
        }
        let (key, value) = bytes.split_at(8);
        Change::decode_entry(key, value).map_err(|e| match e {
            Error::Corruption { reason, .. } => {
                Error::InvalidArgument(format!("not a change: {reason}"))
            }
            e => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> PageChange {
        PageChange {
            key: "https://a.example/1".into(),
            host: "a.example".into(),
            time: 1_700_000_000,
            text: "Some text.\nA second paragraph.".into(),
            codes: vec![7, 9],
            doc: 3,
            page_seq: 41,
            cluster: 2,
            representative: "https://a.example/0".into(),
            founded: vec![2, 5],
            blocks: Some(PageBlocks {
                host: "a.example".into(),
                counted: vec![1, 2, 3],
                dropped: vec![2],
            }),
            raw_hash: Some(0xfeed_f00d),
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let kinds = [
            ChangeKind::Inserted(page()),
            ChangeKind::Replaced(PageChange {
                blocks: None,
                raw_hash: None,
                ..page()
            }),
            ChangeKind::Retimed {
                key: "k".into(),
                doc: 1,
                time: -5,
                raw_hash: Some(u64::MAX),
            },
            ChangeKind::Retimed {
                key: "k".into(),
                doc: 1,
                time: 5,
                raw_hash: None,
            },
            ChangeKind::Deleted {
                key: "k".into(),
                doc: 1,
                cluster: 4,
                founded: vec![8],
            },
            ChangeKind::Moved {
                key: "m".into(),
                doc: 6,
                from: 1,
                to: 9,
                representative: "m".into(),
            },
            ChangeKind::RepresentativeChanged {
                cluster: 3,
                previous: "a".into(),
                representative: "b".into(),
            },
        ];
        for (i, kind) in kinds.into_iter().enumerate() {
            let c = Change {
                seq: 100 + i as u64,
                committed_ms: 1_700_000_000_123,
                kind,
            };
            let v = c.encode_value();
            assert_eq!(Change::decode_entry(&change_key(c.seq), &v).unwrap(), c);
            assert_eq!(Change::from_bytes(&c.to_bytes()).unwrap(), c);
            // A flipped byte fails the checksum; a cut record does not decode.
            let mut bad = v.clone();
            bad[9] ^= 1;
            assert!(matches!(
                Change::decode_entry(&change_key(c.seq), &bad),
                Err(Error::Corruption { .. })
            ));
            assert!(matches!(
                Change::from_bytes(&c.to_bytes()[..12]),
                Err(Error::InvalidArgument(_))
            ));
        }
        assert!(matches!(
            Change::decode_entry(b"short", &[TAG_CHANGE]),
            Err(Error::Corruption { .. })
        ));
    }

    /// A version 2 record as version 1 wrote it: without the 9 bytes of its raw hash (`at`
    /// bytes before the CRC).
    fn as_version_1(v: &[u8], at: usize) -> Vec<u8> {
        let body = &v[..v.len() - 4];
        let cut = body.len() - at;
        let mut old = body[..cut - 9].to_vec();
        old.extend_from_slice(&body[cut..]);
        old[0] = TAG_CHANGE_1;
        let crc = crc32fast::hash(&old);
        old.extend_from_slice(&crc.to_be_bytes());
        old
    }

    #[test]
    fn version_1_records_read_without_raw_hashes() {
        let p = page();
        let text_at = 4 + p.text.len();
        for (kind, at, want) in [
            (
                ChangeKind::Inserted(p.clone()),
                text_at,
                ChangeKind::Inserted(PageChange {
                    raw_hash: None,
                    ..p.clone()
                }),
            ),
            (
                ChangeKind::Retimed {
                    key: "k".into(),
                    doc: 4,
                    time: 9,
                    raw_hash: Some(3),
                },
                0,
                ChangeKind::Retimed {
                    key: "k".into(),
                    doc: 4,
                    time: 9,
                    raw_hash: None,
                },
            ),
        ] {
            let c = Change {
                seq: 7,
                committed_ms: 1,
                kind,
            };
            let old = as_version_1(&c.encode_value(), at);
            let read = Change::decode_entry(&change_key(7), &old).unwrap();
            assert_eq!(read.kind, want);
        }
        // A raw hash flagged neither 0 nor 1 does not decode.
        let c = Change {
            seq: 7,
            committed_ms: 1,
            kind: ChangeKind::Retimed {
                key: "k".into(),
                doc: 4,
                time: 9,
                raw_hash: Some(3),
            },
        };
        let mut v = c.encode_value();
        let flag = v.len() - 4 - 9;
        v[flag] = 2;
        let body = v.len() - 4;
        let crc = crc32fast::hash(&v[..body]);
        v[body..].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(
            Change::decode_entry(&change_key(7), &v),
            Err(Error::Corruption { .. })
        ));
    }
}
