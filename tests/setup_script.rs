//! `scripts/setup.sh` decides what a fresh machine lacks. Its checks must accept only the files the
//! build really loads: a machine image that ships `libclang-cpp.so.14` (a different library) but
//! not `libclang.so` once made setup skip `libclang-dev`, and the build failed ten minutes later.
//! These tests run the script's checks against fake library trees (`ND_SETUP_ROOT`).

use std::path::Path;
use std::process::Command;

/// Runs `check` (a shell function of setup.sh) with every path under `root`; true when it passes.
fn check(root: &Path, check: &str) -> bool {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh");
    let status = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ND_SETUP_DEFINE_ONLY=1; source '{}'; {check}",
            script.display()
        ))
        .env("ND_SETUP_ROOT", root)
        .env_remove("LIBCLANG_PATH")
        .status()
        .expect("run bash");
    status.success()
}

/// Creates each (empty) file under `root`.
fn tree(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"").unwrap();
    }
    dir
}

const HEADERS: &str = "usr/lib/llvm-14/lib/clang/14.0.6/include/stddef.h";

#[test]
fn libclang_cpp_alone_is_not_libclang() {
    let root = tree(&[
        "usr/lib/llvm-14/lib/libclang-cpp.so.14",
        "usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
        "usr/lib/llvm-14/lib/libLLVM-14.so",
        HEADERS,
    ]);
    assert!(!check(root.path(), "have_libclang_library"));
    assert!(!check(root.path(), "have_libclang"));
}

#[test]
fn an_empty_machine_has_nothing() {
    let root = tree(&["usr/lib/.keep"]);
    assert!(!check(root.path(), "have_libclang_library"));
    assert!(!check(root.path(), "have_clang_headers"));
}

#[test]
fn each_name_bindgen_loads_is_accepted() {
    for name in [
        "usr/lib/llvm-14/lib/libclang.so",
        "usr/lib/llvm-14/lib/libclang.so.1",
        "usr/lib/llvm-14/lib/libclang-14.so.14.0.6",
        "usr/lib/x86_64-linux-gnu/libclang-14.so.1",
        "usr/lib/x86_64-linux-gnu/libclang-16.so",
    ] {
        let root = tree(&[name, HEADERS]);
        assert!(
            check(root.path(), "have_libclang"),
            "{name} should count as libclang"
        );
    }
}

#[test]
fn the_library_without_clang_headers_is_not_enough() {
    // libclang1-14 alone: bindgen loads it, then fails on `stddef.h` in RocksDB's c.h.
    let root = tree(&["usr/lib/llvm-14/lib/libclang.so.1"]);
    assert!(check(root.path(), "have_libclang_library"));
    assert!(!check(root.path(), "have_libclang"));
}

#[test]
fn file_names_are_matched_whole() {
    for look_alike in [
        "usr/lib/llvm-14/lib/libclang-cpp.so",
        "usr/lib/llvm-14/lib/libclangBasic.a",
        "usr/lib/llvm-14/lib/libclang.a",
        "usr/lib/llvm-14/lib/libclang_rt.asan-x86_64.so",
        "usr/lib/llvm-14/lib/libclang.so.bak/x",
    ] {
        let root = tree(&[look_alike, HEADERS]);
        assert!(
            !check(root.path(), "have_libclang_library"),
            "{look_alike} is not libclang"
        );
    }
}

#[test]
fn rocksdb_dev_needs_the_header_and_the_link_time_library() {
    const HEADER: &str = "usr/include/rocksdb/db.h";
    // The runtime package alone, or a header without a library: install librocksdb-dev.
    let runtime_only = tree(&[HEADER, "usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"]);
    assert!(!check(runtime_only.path(), "have_rocksdb_dev"));
    let no_header = tree(&["usr/lib/x86_64-linux-gnu/librocksdb.so"]);
    assert!(!check(no_header.path(), "have_rocksdb_dev"));
    for lib in [
        "usr/lib/x86_64-linux-gnu/librocksdb.so",
        "usr/lib/aarch64-linux-gnu/librocksdb.so",
        "usr/lib/librocksdb.so",
    ] {
        let root = tree(&[HEADER, lib]);
        assert!(
            check(root.path(), "have_rocksdb_dev"),
            "{lib} with the header"
        );
    }
}
