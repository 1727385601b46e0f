//! The distributed export's unit tests.

use super::*;
use crate::index::Page;
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

fn slices(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(Vec::as_slice).collect()
}

/// Steps 1–4 over every doc partition: each one's part, in memory.
fn parts(layout: &Layout, docs: &[Index], kind: ExportKind) -> Vec<Vec<u8>> {
    let asks: Vec<Vec<Vec<u8>>> = docs
        .iter()
        .map(|d| d.export_asks(layout, kind).unwrap())
        .collect();
    // What partition p was asked, by each partition in order.
    let to = |msgs: &Vec<Vec<Vec<u8>>>, p: usize| -> Vec<Vec<u8>> {
        msgs.iter().map(|m| m[p].clone()).collect()
    };
    let replies: Vec<Vec<Vec<u8>>> = docs
        .iter()
        .enumerate()
        .map(|(p, d)| d.export_replies(layout, &slices(&to(&asks, p))).unwrap())
        .collect();
    let cluster_replies: Vec<Vec<Vec<u8>>> = docs
        .iter()
        .enumerate()
        .map(|(p, d)| {
            let mine = to(&replies, p);
            d.export_cluster_replies(layout, &slices(&to(&asks, p)), &slices(&mine))
                .unwrap()
        })
        .collect();
    docs.iter()
        .enumerate()
        .map(|(p, d)| {
            let mut out = Vec::new();
            d.export_part(
                layout,
                kind,
                &slices(&to(&replies, p)),
                &slices(&to(&cluster_replies, p)),
                &mut out,
                PathBuf::from(format!("doc-{p}")),
            )
            .unwrap();
            out
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
        .export_clusters(|c, r, m| clusters.push((c, r.to_string(), m.to_vec())))
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
    for cut in [pages[0].len() - 16, pages[0].len() - 3, 5] {
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
