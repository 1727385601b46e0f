//! The embeddable static archive (issue #13, point 2). Cargo's `libneardup.a` defines the
//! bundled RocksDB, zstd, lz4 and Rust's std as global symbols: a C++ program that also linked
//! the distribution's RocksDB linked without a warning and crashed before `main`.
//! `scripts/static-lib.sh` makes `libneardup_embed.a`, whose only global definitions are the C
//! ABI's `nd_*` functions. Here:
//!
//! - `nm` shows that the archive defines exactly the header's functions and nothing else, and that
//!   what it leaves undefined is no RocksDB, zstd, lz4 or Rust symbol;
//! - `tests/cpp/static_link.cpp`, linked with the archive and the distribution's `-lrocksdb` (in
//!   either order), uses both RocksDBs and runs;
//! - `tests/c/static_link.c`, a C program linked with the documented line (`-lstdc++ -lpthread
//!   -ldl -lm`), runs.
//!
//! The test makes the archive (runs the script) when it is missing or older than `libneardup.a`
//! or the script; `libneardup.a` itself comes from `cargo build --release` (scripts/test.sh).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::native::{fresh_library, newest_mtime, profile_dir, root};

/// `target/release/libneardup_embed.a`, made from the current `libneardup.a` (once per run).
fn embed_archive() -> &'static Path {
    static ARCHIVE: OnceLock<PathBuf> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let lib = fresh_library("libneardup.a");
        let script = root().join("scripts/static-lib.sh");
        let out = profile_dir().join("libneardup_embed.a");
        let fresh =
            out.exists() && newest_mtime(&out) >= newest_mtime(&lib).max(newest_mtime(&script));
        if !fresh {
            let status = Command::new(&script)
                .arg(&lib)
                .arg(&out)
                .status()
                .expect("run scripts/static-lib.sh");
            assert!(status.success(), "scripts/static-lib.sh failed");
        }
        out
    })
}

/// The external symbols `nm` lists for a file: (name, defined).
fn external_symbols(file: &Path) -> Vec<(String, bool)> {
    let out = Command::new("nm")
        .args(["--extern-only", "--format=posix"])
        .arg(file)
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "nm {} failed", file.display());
    String::from_utf8(out.stdout)
        .expect("nm output")
        .lines()
        .filter(|l| !l.is_empty() && !l.ends_with(':'))
        .map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next().expect("name").to_string();
            let kind = f.next().expect("type");
            // U: undefined; w, v: weak and undefined.
            (name, !matches!(kind, "U" | "w" | "v"))
        })
        .collect()
}

/// The function names `include/neardup.h` declares.
fn header_functions() -> Vec<String> {
    let header = std::fs::read_to_string(root().join("include/neardup.h")).expect("header");
    let mut names: Vec<String> = header
        .lines()
        .filter(|l| !l.starts_with("//") && !l.starts_with(' '))
        .filter_map(|l| {
            let open = l.find('(')?;
            let name = l[..open].rsplit([' ', '*']).next()?;
            name.starts_with("nd_").then(|| name.to_string())
        })
        .collect();
    names.sort();
    names
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_archive_defines_the_c_abi_and_nothing_else() {
    let symbols = external_symbols(embed_archive());
    let api = header_functions();
    let mut defined: Vec<&str> = symbols
        .iter()
        .filter(|(_, d)| *d)
        .map(|(n, _)| n.as_str())
        .collect();
    defined.sort_unstable();
    defined.dedup();
    let extra: Vec<&str> = defined
        .iter()
        .copied()
        .filter(|n| !api.iter().any(|a| a == n))
        .collect();
    let missing: Vec<&String> = api
        .iter()
        .filter(|a| !defined.contains(&a.as_str()))
        .collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "libneardup_embed.a must define exactly the functions of include/neardup.h: {} other \
         global definitions (first: {:?}); missing: {missing:?}",
        extra.len(),
        &extra[..extra.len().min(10)]
    );
    // What stays undefined is the C and C++ runtimes' (the C program's link shows they resolve
    // it), never the bundled code's: its optional hooks are renamed so that nothing binds them.
    let bundled = |n: &str| {
        let l = n.to_ascii_lowercase();
        [
            "rocksdb",
            "zstd",
            "lz4",
            "rust",
            "_zn3std",
            "_zn4core",
            "_zn5alloc",
        ]
        .iter()
        .any(|f| l.contains(f))
            || n.starts_with("_R")
    };
    let undefined: Vec<&str> = symbols
        .iter()
        .filter(|(n, d)| !d && !n.starts_with("__neardup_unbound_") && bundled(n))
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(
        undefined.is_empty(),
        "the archive leaves bundled code to be found outside it: {undefined:?}"
    );
    // The same check on Cargo's archive finds what the script hides.
    let cargo_globals = external_symbols(&fresh_library("libneardup.a"))
        .into_iter()
        .filter(|(n, d)| *d && n.contains("rocksdb"))
        .count();
    assert!(
        cargo_globals > 1000,
        "libneardup.a: {cargo_globals} RocksDB globals"
    );
}

#[test]
fn a_cpp_program_with_the_distributions_rocksdb_runs() {
    let archive = embed_archive();
    let work = tempfile::tempdir().expect("tempdir");
    let obj = work.path().join("static_link.o");
    run(
        Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()))
            .args([
                "-std=c++17",
                "-O1",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pthread",
                "-c",
            ])
            .arg(root().join("tests/cpp/static_link.cpp"))
            .arg("-I")
            .arg(root().join("include"))
            .arg("-o")
            .arg(&obj),
        "compiling tests/cpp/static_link.cpp (librocksdb-dev: scripts/setup.sh installs it)",
    );
    // Either order: neither RocksDB may resolve a reference of the other.
    for (name, archive_first) in [("archive-first", true), ("rocksdb-first", false)] {
        let exe = work.path().join(name);
        let mut link = Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()));
        link.arg("-pthread").arg(&obj);
        if archive_first {
            link.arg(archive).arg("-lrocksdb");
        } else {
            link.arg("-lrocksdb").arg(archive);
        }
        run(link.arg("-o").arg(&exe), &format!("linking {name}"));
        let dir = work.path().join(format!("{name}.d"));
        std::fs::create_dir(&dir).expect("mkdir");
        let stdout = run(Command::new(&exe).arg(&dir), &format!("running {name}"));
        assert!(stdout.contains("static_link: ok"), "{name}:\n{stdout}");
        assert!(stdout.starts_with("rocksdb "), "{name}:\n{stdout}");
    }
}

#[test]
fn a_c_program_links_with_the_documented_line() {
    let archive = embed_archive();
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join("static_link_c");
    run(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror"])
            .arg(root().join("tests/c/static_link.c"))
            .arg("-I")
            .arg(root().join("include"))
            .arg(archive)
            .args(["-lstdc++", "-lpthread", "-ldl", "-lm", "-o"])
            .arg(&exe),
        "compiling tests/c/static_link.c",
    );
    let stdout = run(
        Command::new(&exe).arg(work.path().join("ix")),
        "running the C program",
    );
    assert!(stdout.contains("static_link_c: ok"), "{stdout}");
}
