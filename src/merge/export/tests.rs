//! The distributed export's unit tests.

use super::*;
use crate::index::Page;
use crate::merge::log::LogOp;
use crate::merge::mapping::{map_ids, IdMapping};
use crate::merge::Partition;
use crate::options::IndexOptions;
use crate::Content;

/// A sentence of `n` words drawn from a seed.
fn sentence(seed: u64) -> String {
    const WORDS: [&str; 24] = [
        "river", "village", "morning", "teacher", "school", "water", "street", "bell", "market",
        "bread", "harbour", "winter", "garden", "letter", "station", "mountain", "window",
        "evening", "kitchen", "forest", "bridge", "candle", "meadow", "library",
    ];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let words: Vec<&str> = (0..14)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            WORDS[(x % WORDS.len() as u64) as usize]
        })
        .collect();
    format!("The {}.", words.join(" "))
}

/// Page `v` of family `f`: the family's sentences, one of them changed per version.
fn text(f: u64, v: u64) -> String {
    (0..10u64)
        .map(|s| {
            sentence(if s == v % 10 && v > 0 {
                7_000 + f * 100 + v
            } else {
                f * 100 + s
            })
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn insert(ix: &Index, key: &str, text: &str) {
    ix.insert(&Page {
        key,
        host: "a.example",
        time: 0,
        content: Content::Text(text),
    })
    .unwrap();
}

/// A whole index with families of near duplicates, pages deleted (their targets gone, ids
/// given out again) and recrawled; and its state cut into `doc_parts` doc partitions
/// under `dir`.
pub(crate) fn partitioned(dir: &std::path::Path, doc_parts: u32) -> (Index, Layout, Vec<Index>) {
    let whole = Index::open(dir.join("whole"), IndexOptions::default()).unwrap();
    for f in 0..9u64 {
        for v in 0..(1 + f % 4) {
            insert(&whole, &format!("f{f}-v{v}"), &text(f, v));
        }
    }
    for k in ["f1-v0", "f3-v1", "f5-v0", "f7-v0"] {
        whole.delete(k).unwrap();
    }
    insert(&whole, "g9", &text(3, 5));
    insert(&whole, "f7-v0", &text(7, 6));
    insert(&whole, "f2-v1", &text(2, 8));
    assert!(whole.check().unwrap().is_clean());
    let layout = Layout::new(2, doc_parts, 3).unwrap();
    let routed = layout.route(&whole.state_log().unwrap());
    let docs = (0..doc_parts)
        .map(|n| {
            let ix = Index::open(dir.join(format!("doc-{n}")), IndexOptions::default()).unwrap();
            ix.set_partition(Partition::new(layout, Role::Doc(n)).unwrap())
                .unwrap();
            ix.apply_log(1, &routed.doc[n as usize]).unwrap();
            ix
        })
        .collect();
    (whole, layout, docs)
}

/// Every page and cluster id (and allocator) moved up by the amount.
struct Shift(u64);

impl IdMapping<u64, u64> for Shift {
    fn doc(&mut self, id: u64) -> Result<u64> {
        Ok(id + self.0)
    }
    fn cluster(&mut self, id: u64) -> Result<u64> {
        Ok(id + self.0)
    }
    fn allocator(&mut self, n: u64) -> Result<u64> {
        Ok(n + self.0)
    }
}

/// The state of `whole` in `u64` ids moved up by `by`, cut by `layout` into format 7
/// partitions under `dir` (named `{prefix}key-n`, `{prefix}doc-n`): (key partitions, doc
/// partitions).
pub(crate) fn wide_partitioned(
    dir: &std::path::Path,
    whole: &Index,
    layout: Layout,
    by: u64,
    prefix: &str,
) -> (Vec<WidePartition>, Vec<WidePartition>) {
    let log: Vec<LogOp<u64>> = whole
        .state_log()
        .unwrap()
        .into_iter()
        .map(|op| map_ids(op.to_width::<u64>().unwrap(), &mut Shift(by)).unwrap())
        .collect();
    let routed = layout.route(&log);
    let make = |role: Role, log: &[LogOp<u64>]| {
        let name = match role {
            Role::Key(n) => format!("{prefix}key-{n}"),
            Role::Doc(n) => format!("{prefix}doc-{n}"),
        };
        let p = Partition::new(layout, role).unwrap();
        let part = WidePartition::create(dir.join(name), &IndexOptions::default(), p).unwrap();
        part.apply_log(1, log).unwrap();
        part
    };
    (
        (0..layout.key_parts())
            .map(|n| make(Role::Key(n), &routed.key[n as usize]))
            .collect(),
        (0..layout.doc_parts())
            .map(|n| make(Role::Doc(n), &routed.doc[n as usize]))
            .collect(),
    )
}

/// The four partition-side steps of the export, for doc partitions of either width.
trait Exporting {
    fn asks(&self, layout: &Layout, kind: ExportKind) -> Result<Vec<Vec<u8>>>;
    fn replies(&self, layout: &Layout, asks: &[&[u8]]) -> Result<Vec<Vec<u8>>>;
    fn cluster_replies(
        &self,
        layout: &Layout,
        asks: &[&[u8]],
        replies: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>>;
    fn part(&self, layout: &Layout, kind: ExportKind, r: &[&[u8]], c: &[&[u8]]) -> Vec<u8>;
}

macro_rules! exporting {
    ($t:ty) => {
        impl Exporting for $t {
            fn asks(&self, layout: &Layout, kind: ExportKind) -> Result<Vec<Vec<u8>>> {
                self.export_asks(layout, kind)
            }
            fn replies(&self, layout: &Layout, asks: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
                self.export_replies(layout, asks)
            }
            fn cluster_replies(
                &self,
                layout: &Layout,
                asks: &[&[u8]],
                replies: &[&[u8]],
            ) -> Result<Vec<Vec<u8>>> {
                self.export_cluster_replies(layout, asks, replies)
            }
            fn part(&self, layout: &Layout, kind: ExportKind, r: &[&[u8]], c: &[&[u8]]) -> Vec<u8> {
                let mut out = Vec::new();
                self.export_part(layout, kind, r, c, &mut out, PathBuf::from("part"))
                    .unwrap();
                out
            }
        }
    };
}
exporting!(Index);
exporting!(WidePartition);

fn slices(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(Vec::as_slice).collect()
}

/// Steps 1–4 over every doc partition: each one's part, in memory.
fn parts<D: Exporting>(layout: &Layout, docs: &[D], kind: ExportKind) -> Vec<Vec<u8>> {
    let asks: Vec<Vec<Vec<u8>>> = docs.iter().map(|d| d.asks(layout, kind).unwrap()).collect();
    // What partition p was asked, by each partition in order.
    let to = |msgs: &Vec<Vec<Vec<u8>>>, p: usize| -> Vec<Vec<u8>> {
        msgs.iter().map(|m| m[p].clone()).collect()
    };
    let replies: Vec<Vec<Vec<u8>>> = docs
        .iter()
        .enumerate()
        .map(|(p, d)| d.replies(layout, &slices(&to(&asks, p))).unwrap())
        .collect();
    let cluster_replies: Vec<Vec<Vec<u8>>> = docs
        .iter()
        .enumerate()
        .map(|(p, d)| {
            let mine = to(&replies, p);
            d.cluster_replies(layout, &slices(&to(&asks, p)), &slices(&mine))
                .unwrap()
        })
        .collect();
    docs.iter()
        .enumerate()
        .map(|(p, d)| {
            let (r, c) = (to(&replies, p), to(&cluster_replies, p));
            d.part(layout, kind, &slices(&r), &slices(&c))
        })
        .collect()
}

fn named(parts: &[Vec<u8>]) -> Vec<(String, &[u8])> {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("doc-{i}"), p.as_slice()))
        .collect()
}

#[test]
fn the_merged_parts_are_the_single_nodes_export() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, layout, docs) = partitioned(dir.path(), 3);
    let mut expected = Vec::new();
    whole
        .export(|k, r| expected.extend_from_slice(format!("{k}\t{r}\n").as_bytes()))
        .unwrap();
    let pages = parts(&layout, &docs, ExportKind::Pages);
    let mut tsv = Vec::new();
    let rows = merge_export_tsv(named(&pages), &mut tsv, PathBuf::from("out.tsv")).unwrap();
    assert_eq!(rows, whole.len());
    assert_eq!(
        String::from_utf8(tsv).unwrap(),
        String::from_utf8(expected.clone()).unwrap()
    );
    // Pages exported with a target other than themselves, some held by other partitions.
    let text = String::from_utf8(expected).unwrap();
    let elsewhere = text
        .lines()
        .filter(|l| l.split_once('\t').is_some_and(|(k, r)| k != r))
        .count();
    assert!(elsewhere > 5, "{text}");

    let mut clusters = Vec::new();
    whole
        .export_clusters(|c, r, m| clusters.push((u64::from(c), r.to_string(), m.to_vec())))
        .unwrap();
    let mut merged = Vec::new();
    merge_export_parts(
        ExportKind::Clusters,
        named(&parts(&layout, &docs, ExportKind::Clusters)),
        |c, p| {
            let (r, m) = decode_cluster_row(p)?;
            merged.push((c, r, m));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(merged, clusters);

    let mut keys = Vec::new();
    merge_export_parts(
        ExportKind::Rows,
        named(&parts(&layout, &docs, ExportKind::Rows)),
        |id, p| {
            let (_, _, key) = decode_page_record(p)?;
            keys.push((id, key));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(keys.len() as u64, whole.len());
    assert!(keys.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn a_cut_or_misordered_part_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, layout, docs) = partitioned(dir.path(), 2);
    let pages = parts(&layout, &docs, ExportKind::Pages);
    let merge =
        |parts: Vec<(String, &[u8])>| merge_export_parts(ExportKind::Pages, parts, |_, _| Ok(()));
    // Whole: merged.
    assert!(merge(named(&pages)).is_ok());
    // Cut short, at a record boundary or inside one.
    for cut in [pages[0].len() - 20, pages[0].len() - 3, 5] {
        let r = merge(vec![
            ("cut".into(), &pages[0][..cut]),
            ("doc-1".into(), &pages[1]),
        ]);
        assert!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "cut at {cut}: {r:?}"
        );
    }
    // The same part twice: every id twice.
    let r = merge(vec![("a".into(), &pages[0]), ("b".into(), &pages[0])]);
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("two export parts")));
    // Another kind of part.
    let r = merge_export_parts(ExportKind::Clusters, named(&pages), |_, _| Ok(()));
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("kind")));
    // A message that is not one.
    assert!(matches!(
        docs[0].export_replies(&layout, &[b"r\0\0".as_slice()]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn a_partition_changed_since_its_asks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, layout, docs) = partitioned(dir.path(), 2);
    // Replies to asks of nothing: every reference is missing.
    let empty = Ask::default().encode();
    let replies = docs[0]
        .export_replies(&layout, &[empty.as_slice(), empty.as_slice()])
        .unwrap();
    let slices: Vec<&[u8]> = replies.iter().map(Vec::as_slice).collect();
    let r = docs[0].export_part(
        &layout,
        ExportKind::Pages,
        &slices,
        &[],
        Vec::new(),
        PathBuf::new(),
    );
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("changed during the export")));
    // A whole index (not a partition) exports no part.
    let whole = Index::open(dir.path().join("plain"), IndexOptions::default()).unwrap();
    assert!(matches!(
        whole.export_asks(&layout, ExportKind::Pages),
        Err(Error::InvalidArgument(_))
    ));
}

/// The page export of `parts` merged as TSV.
fn tsv(parts: &[Vec<u8>]) -> String {
    let mut out = Vec::new();
    merge_export_tsv(named(parts), &mut out, PathBuf::from("out.tsv")).unwrap();
    String::from_utf8(out).unwrap()
}

/// The records of `parts` of `kind` merged, by id.
fn merged(parts: &[Vec<u8>], kind: ExportKind) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    merge_export_parts(kind, named(parts), |id, p| {
        out.push((id, p.to_vec()));
        Ok(())
    })
    .unwrap();
    out
}

/// Issue #34 item 5: format 7 partitions holding a format 6 partition's state exchange the same
/// messages and write the same parts, byte for byte; with every id moved above 2³² the merged
/// export is the same, the ids moved.
#[test]
fn wide_partitions_export_as_format_6_ones_do() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, layout, docs) = partitioned(dir.path(), 3);
    let mut expected = Vec::new();
    whole
        .export(|k, r| expected.extend_from_slice(format!("{k}\t{r}\n").as_bytes()))
        .unwrap();
    let expected = String::from_utf8(expected).unwrap();
    let (_, wide) = wide_partitioned(dir.path(), &whole, layout, 0, "w-");
    for kind in [ExportKind::Pages, ExportKind::Clusters, ExportKind::Rows] {
        let asks = |d: &dyn Fn(usize) -> Vec<Vec<u8>>| (0..3).map(d).collect::<Vec<_>>();
        assert_eq!(
            asks(&|p| wide[p].export_asks(&layout, kind).unwrap()),
            asks(&|p| docs[p].export_asks(&layout, kind).unwrap()),
            "{kind:?}"
        );
        assert_eq!(
            parts(&layout, &wide, kind),
            parts(&layout, &docs, kind),
            "{kind:?}"
        );
    }
    assert_eq!(tsv(&parts(&layout, &wide, ExportKind::Pages)), expected);

    // Every id moved up by 2³³: 2³³ mod 3 = 2, so pages and clusters change doc partitions.
    let by = 1u64 << 33;
    let (_, high) = wide_partitioned(dir.path(), &whole, layout, by, "h-");
    assert_eq!(tsv(&parts(&layout, &high, ExportKind::Pages)), expected);
    for kind in [ExportKind::Clusters, ExportKind::Rows] {
        let narrow = merged(&parts(&layout, &docs, kind), kind);
        let mut wide = merged(&parts(&layout, &high, kind), kind);
        assert!(wide.iter().all(|(id, _)| *id >= by));
        assert_eq!(wide.len(), narrow.len());
        for (id, payload) in &mut wide {
            *id -= by;
            // A row's cluster id moved back down too.
            if kind == ExportKind::Rows {
                let (cluster, seq, key) = decode_page_record(payload).unwrap();
                assert!(cluster >= by);
                let mut back = (cluster - by).to_be_bytes().to_vec();
                back.extend_from_slice(&seq.to_be_bytes());
                back.extend_from_slice(key.as_bytes());
                *payload = back;
            }
        }
        assert_eq!(wide, narrow, "{kind:?}");
    }
}
