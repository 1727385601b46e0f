//! Where the build's native products are, for the tests that compile C and C++ programs against
//! them: the profile directory this test binary was built in, and its libraries.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

/// The sanitizers the C and C++ tests build their programs with: any report aborts the run.
pub const SANITIZE: [&str; 3] = [
    "-fsanitize=address,undefined",
    "-fno-omit-frame-pointer",
    "-fno-sanitize-recover=all",
];

/// The environment of a sanitized run: a report exits 98. LeakSanitizer is off: leaks are
/// valgrind's part, and it cannot see into the Rust library's allocator reliably when the
/// library is not instrumented (forked children also leak their inherited handles on purpose).
pub const ASAN_ENV: [(&str, &str); 1] = [(
    "ASAN_OPTIONS",
    "detect_leaks=0:abort_on_error=0:exitcode=98",
)];

/// Valgrind, as the C and C++ tests run their programs under it: any error or definite or
/// indirect leak exits 99.
pub const VALGRIND: &[&str] = &[
    "valgrind",
    "--error-exitcode=99",
    "--leak-check=full",
    "--errors-for-leak-kinds=definite,indirect",
    "--show-leak-kinds=definite,indirect",
    "--quiet",
];

/// The crate's root directory.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/release` (or whichever profile directory this test binary was built in).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The modification time of a file, or of the newest file under a directory.
pub fn newest_mtime(path: &Path) -> SystemTime {
    if !path.is_dir() {
        return std::fs::metadata(path)
            .and_then(|m| m.modified())
            .unwrap_or_else(|e| panic!("mtime of {}: {e}", path.display()));
    }
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(path).expect("read dir").flatten() {
        newest = newest.max(newest_mtime(&entry.path()));
    }
    newest
}

/// `name` (`libneardup.so`, `libneardup.a`) in the profile directory, refusing one older than
/// `src/` or `Cargo.toml`: `cargo test` does not rebuild it, `cargo build --release` does.
pub fn fresh_library(name: &str) -> PathBuf {
    let lib = profile_dir().join(name);
    let built = std::fs::metadata(&lib).and_then(|m| m.modified());
    let sources = newest_mtime(&root().join("src")).max(newest_mtime(&root().join("Cargo.toml")));
    match built {
        Ok(t) if t >= sources => lib,
        _ => panic!(
            "{} is missing or older than src/: build it with `cargo build --release` \
             (scripts/test.sh does) before running this test",
            lib.display()
        ),
    }
}

/// Runs `exe` (under `wrapper`, e.g. valgrind) in `dir` with `args` and `env`.
pub fn run(
    exe: &Path,
    wrapper: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
    args: &[&Path],
) -> Output {
    let mut cmd = match wrapper.split_first() {
        Some((w, rest)) => {
            let mut c = Command::new(w);
            c.args(rest).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("run {} {wrapper:?}: {e}", exe.display()))
}

/// Asserts a run exited 0, printed `ok_line` and wrote nothing of its own to stderr.
pub fn assert_clean(out: &Output, what: &str, ok_line: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(ok_line),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // valgrind's own notes ("==pid== Warning: unimplemented fcntl command") are not the
    // program's.
    let own: Vec<&str> = stderr
        .lines()
        .filter(|l| !(l.starts_with("==") && l.contains("== Warning: ")))
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(own.is_empty(), "{what} wrote to stderr:\n{stderr}");
}

/// Compiles `tests/c/{name}.c` (C99, warnings as errors, `extra` flags) into `out` against the
/// shared library.
fn build_c(name: &str, out: &Path, extra: &[&str]) {
    let lib = fresh_library("libneardup.so");
    let dir = lib.parent().expect("profile directory");
    let src = root().join(format!("tests/c/{name}.c"));
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c99",
            "-pedantic",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .args(extra)
        .arg(&src)
        .arg("-I")
        .arg(root().join("include"))
        .arg("-L")
        .arg(dir)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .args(["-lneardup", "-lm", "-o"])
        .arg(out)
        .status()
        .expect("run the C compiler (cc; scripts/setup.sh installs it)");
    assert!(status.success(), "compiling {} failed", src.display());
}

/// Builds `tests/c/{name}.c` and runs it plainly, under ASan+UBSan and under valgrind, each run
/// in an empty directory it gets as its argument; each must print "{name}: ok" and nothing of
/// its own on stderr.
pub fn check_c_program(name: &str) {
    let work = tempfile::tempdir().expect("tempdir");
    let plain = work.path().join(name);
    build_c(name, &plain, &[]);
    let sanitized = work.path().join(format!("{name}_asan"));
    build_c(name, &sanitized, &SANITIZE);
    type Run<'a> = (&'a str, &'a Path, &'a [&'a str], &'a [(&'a str, &'a str)]);
    let runs: [Run<'_>; 3] = [
        ("plain", &plain, &[], &[]),
        ("ASan+UBSan", &sanitized, &[], &ASAN_ENV),
        ("valgrind", &plain, VALGRIND, &[]),
    ];
    for (what, exe, wrapper, env) in runs {
        let dir = work.path().join(format!("run-{}", what.replace('+', "-")));
        std::fs::create_dir(&dir).expect("mkdir");
        let out = run(exe, wrapper, env, &dir, &[&dir]);
        println!("{what}: {}", String::from_utf8_lossy(&out.stdout));
        assert_clean(
            &out,
            &format!("tests/c/{name}.c ({what})"),
            &format!("{name}: ok"),
        );
    }
}
