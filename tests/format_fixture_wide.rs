//! The format 7 fixture (tests/fixtures/README.md, `v7-*`): the three partitions (one key
//! partition, two doc partitions) of a distributed index whose ids are above 2³², each a RocksDB
//! checkpoint as the build named in the fixture's name wrote it, with the state each holds and
//! the log of a second batch. A later build must read them as written (state logs equal), apply
//! the next batch to them (the state after it equal), and open them read-only without writing a
//! byte — so a change to format 7's layout shows here, not in a user's partitions.
//!
//! `NEARDUP_FIXTURE_OUT=tests/fixtures/v7-<commit> cargo test --release --test
//! format_fixture_wide -- --ignored` writes the fixture again (equivalent, not byte-identical:
//! RocksDB's file numbers and ids differ from run to run).
mod common;
use std::path::{Path, PathBuf};

use common::*;
use neardup::merge::{
    read_log_file, ApplyOutcome, Layout, LogFileWriter, LogOp, Partition, Role, WidePartition,
};
use neardup::{BatchOptions, BatchOrder, Index, IndexOptions};

/// The fixture this build reads.
const FIXTURE: &str = "v7-59bff2f";

/// Every id of the fixture is moved up by this: the wide codecs hold ids past `u32`.
const SHIFT: u64 = 1 << 33;

/// The fixture's layout: one key partition, two doc partitions, simhash distance 3.
fn layout() -> Layout {
    Layout::new(1, 2, 3).unwrap()
}

fn roles() -> [Role; 3] {
    [Role::Key(0), Role::Doc(0), Role::Doc(1)]
}

fn name(role: Role) -> String {
    match role {
        Role::Key(n) => format!("key-{n}"),
        Role::Doc(n) => format!("doc-{n}"),
    }
}

fn options() -> IndexOptions {
    IndexOptions {
        sync_writes: false,
        ..IndexOptions::default()
    }
}

fn batch_options() -> BatchOptions {
    BatchOptions {
        order: BatchOrder::Input,
        ..BatchOptions::default()
    }
}

fn read(path: &Path) -> Vec<LogOp<u64>> {
    let mut ops = Vec::new();
    read_log_file::<u64>(path, &mut |op| {
        ops.push(op);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ops
}

fn write(path: &Path, ops: &[LogOp<u64>]) {
    let mut w = LogFileWriter::<u64>::create(path).unwrap();
    for op in ops {
        w.push(op).unwrap();
    }
    w.finish().unwrap();
}

fn shifted(log: Vec<LogOp<u64>>) -> Vec<LogOp<u64>> {
    mapped(log, &|i| i + SHIFT)
}

/// A copy of the fixture's partition `role` in a new temporary directory.
fn copy(role: Role) -> (tempfile::TempDir, PathBuf) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(FIXTURE)
        .join(name(role));
    let tmp = tempfile::tempdir().unwrap();
    let to = tmp.path().join("db");
    std::fs::create_dir(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    (tmp, to)
}

fn expected(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(FIXTURE)
        .join("expected")
        .join(file)
}

/// Every file of a directory with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn format_7_partitions_read_apply_and_open_read_only_as_written() {
    for role in roles() {
        let (_guard, db) = copy(role);
        let before = files(&db);
        let state = read(&expected(&format!("{}.state.log", name(role))));
        assert!(state.len() > 10, "{}", name(role));
        {
            let p = WidePartition::open_read_only(&db).unwrap();
            assert_eq!(p.partition(), Partition::new(layout(), role).unwrap());
            assert_eq!(p.applied_batch().unwrap(), Some(1));
            assert_eq!(p.state_log().unwrap(), state, "{}", name(role));
        }
        assert_eq!(
            files(&db),
            before,
            "a read-only open wrote to {}",
            name(role)
        );
        let p = WidePartition::open(&db).unwrap();
        assert_eq!(p.state_log().unwrap(), state);
        let next = read(&expected(&format!("{}.batch-2.log", name(role))));
        assert!(matches!(
            p.apply_log(1, &next),
            Err(neardup::Error::InvalidArgument(_)) | Ok(ApplyOutcome::AlreadyApplied)
        ));
        assert!(matches!(
            p.apply_log(2, &next).unwrap(),
            ApplyOutcome::Applied { .. }
        ));
        let after = read(&expected(&format!("{}.after.log", name(role))));
        assert_eq!(p.state_log().unwrap(), after, "{}", name(role));
        p.compact().unwrap();
        assert_eq!(p.state_log().unwrap(), after);
    }
}

/// Writes the fixture to `$NEARDUP_FIXTURE_OUT` (a new directory).
#[test]
#[ignore = "writes the format 7 fixture; see the module docs"]
fn make_the_format_7_fixture() {
    let out = PathBuf::from(std::env::var("NEARDUP_FIXTURE_OUT").expect("NEARDUP_FIXTURE_OUT"));
    std::fs::create_dir_all(out.join("expected")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ix = Index::open(tmp.path().join("whole"), options()).unwrap();
    // Families of near duplicates, some pages deleted (free ids, hand-overs).
    let mut pages = Vec::new();
    for f in 0..24u64 {
        for v in 0..(1 + f % 4) {
            let (host, html) = family_page(f, v);
            pages.push((format!("f{f}-v{v}"), host, html));
        }
    }
    insert_pages(&ix, &pages, &batch_options());
    for k in ["f3-v0", "f7-v1", "f11-v0", "f18-v2"] {
        ix.delete(k).unwrap();
    }
    assert_clean(&ix);
    let first = shifted(wide(ix.state_log().unwrap()));
    // The second batch: deletes (a representative among them) and new versions.
    let stats = ix.stats().unwrap();
    let before = ix.state_log().unwrap();
    for k in ["f1-v0", "f6-v2", "f9-v1"] {
        ix.delete(k).unwrap();
    }
    let mut more = Vec::new();
    for f in [1u64, 6, 30, 31] {
        let (host, html) = family_page(f, 5);
        more.push((format!("f{f}-v5"), host, html));
    }
    insert_pages(&ix, &more, &batch_options());
    assert_clean(&ix);
    let second = shifted(wide(
        neardup::merge::state_diff(&before, &ix.state_log().unwrap())
            .into_log(stats.pages, stats.clusters),
    ));
    let (routed1, routed2) = (layout().route(&first), layout().route(&second));
    for role in roles() {
        let part = |r: &neardup::merge::RoutedLog<u64>| match role {
            Role::Key(n) => r.key[n as usize].clone(),
            Role::Doc(n) => r.doc[n as usize].clone(),
        };
        let p = Partition::new(layout(), role).unwrap();
        let dir = tmp.path().join(name(role));
        let wp = WidePartition::create(&dir, &options(), p).unwrap();
        // Several write batches, as a large day's log is applied.
        wp.apply_log_chunked(1, &part(&routed1), 4096).unwrap();
        wp.checkpoint(out.join(name(role))).unwrap();
        write(
            &out.join("expected")
                .join(format!("{}.state.log", name(role))),
            &wp.state_log().unwrap(),
        );
        write(
            &out.join("expected")
                .join(format!("{}.batch-2.log", name(role))),
            &part(&routed2),
        );
        wp.apply_log(2, &part(&routed2)).unwrap();
        write(
            &out.join("expected")
                .join(format!("{}.after.log", name(role))),
            &wp.state_log().unwrap(),
        );
    }
}
