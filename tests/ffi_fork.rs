//! Handles across `fork` and the reopen idiom, from C and C++ (issue #33, B1, B2, B5).
//!
//! - `tests/c/fork.c` (the C ABI): 50 children free their inherited handle and cursor and call
//!   `exit`, and all 50 exit 0; every call on an inherited handle or cursor returns
//!   `ND_WRONG_PROCESS`; opens in a child of a process that had opened an index are refused at
//!   once, before and after the parent closed it; a child of a process without an index opens,
//!   writes and closes one.
//! - `tests/cpp/fork_reopen.cpp` (`include/neardup.hpp`): the same from C++ (`~Index` and
//!   `~Cursor` in the child, then `std::exit`), and the reopen idiom: `Index::reopen`, the
//!   refused `ix = Index::open(same_path)` and its message, `close()` then assignment, a
//!   read-only reopen, calls during reopens.
//!
//! Each program is built with `-Wall -Wextra -Werror` against `target/release/libneardup.so` and
//! run plainly and under ASan+UBSan; each run prints its "ok" line, exits 0 and writes nothing to
//! stderr. The shared library is built by `cargo build --release` (the test command does it
//! first); the test refuses a library older than the sources.

mod common;

use std::path::Path;
use std::process::Command;

use common::native::{assert_clean, fresh_library, root, run, ASAN_ENV, SANITIZE};

/// Compiles `source` with `compiler` and `flags` into `out`, against the shared library.
fn build(compiler: &str, flags: &[&str], source: &Path, out: &Path, extra: &[&str]) {
    let lib = fresh_library("libneardup.so");
    let dir = lib.parent().expect("profile directory");
    let status = Command::new(compiler)
        .args(["-O1", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .args(extra)
        .arg(source)
        .arg("-I")
        .arg(root().join("include"))
        .arg("-L")
        .arg(dir)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .args(["-lneardup", "-o"])
        .arg(out)
        .status()
        .unwrap_or_else(|e| panic!("run {compiler} (scripts/setup.sh installs it): {e}"));
    assert!(status.success(), "compiling {} failed", source.display());
}

/// Builds `source` plainly and with sanitizers, and runs both in fresh directories.
fn build_and_run(compiler: &str, flags: &[&str], source: &str, ok_line: &str) {
    let work = tempfile::tempdir().expect("tempdir");
    let source = root().join(source);
    let plain = work.path().join("plain");
    build(compiler, flags, &source, &plain, &[]);
    let sanitized = work.path().join("sanitized");
    build(compiler, flags, &source, &sanitized, &SANITIZE);
    for (name, exe, env) in [
        ("plain", &plain, &[][..]),
        ("ASan+UBSan", &sanitized, &ASAN_ENV[..]),
    ] {
        let dir = work.path().join(format!("run-{name}"));
        std::fs::create_dir(&dir).expect("mkdir");
        let out = run(exe, &[], env, &dir, &[&dir]);
        println!("{name}: {}", String::from_utf8_lossy(&out.stdout));
        assert_clean(&out, &format!("{} ({name})", source.display()), ok_line);
    }
}

#[test]
fn c_children_free_their_handles_and_exit_and_every_call_is_refused() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    build_and_run(&cc, &["-std=c11"], "tests/c/fork.c", "fork: ok");
}

#[test]
fn cpp_children_destroy_their_index_and_the_reopen_idiom_works() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    build_and_run(
        &cxx,
        &["-std=c++17", "-pthread"],
        "tests/cpp/fork_reopen.cpp",
        "fork_reopen: ok",
    );
}
