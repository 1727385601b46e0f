//! The C ABI from C++: builds `tests/cpp/lifecycle.cpp` with the system C++ compiler against
//! `include/neardup.h` and the shared library, runs it on pages of the bench's dev corpus, and
//! checks that its verdicts equal the Rust API's for the same pages. The same program then runs
//! under valgrind (no leak, no invalid access). The README's C++ example is compiled and run too.
//!
//! The shared library is built by `cargo build --release` (the test command does it first); the
//! test refuses a library older than the sources.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::native::{assert_clean, fresh_library, root, run, VALGRIND};
use flate2::read::MultiGzDecoder;
use neardup::{Content, Index, IndexOptions, Page};
use serde_json::Value;

/// Pages of the dev corpus the C++ program inserts (and, under valgrind, fewer).
const PAGES: usize = 300;
const VALGRIND_PAGES: usize = 30;

/// The directory holding an up-to-date `libneardup.so`.
fn library_dir() -> PathBuf {
    let lib = fresh_library("libneardup.so");
    lib.parent().expect("profile directory").to_path_buf()
}

fn compile(source: &Path, out: &Path, extra: &[&str]) {
    let lib = library_dir();
    let status = Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()))
        .args([
            "-std=c++17",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
        ])
        .args(extra)
        .arg(source)
        .arg("-I")
        .arg(root().join("include"))
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lneardup", "-o"])
        .arg(out)
        .status()
        .expect("run the C++ compiler (g++; scripts/setup.sh installs it)");
    assert!(status.success(), "compiling {} failed", source.display());
}

struct DevPage {
    key: String,
    url: String,
    host: String,
    time: i64,
    html: String,
}

fn dev_pages(limit: usize) -> Option<Vec<DevPage>> {
    let path = root().join("../shared/bench/dev/docs.jsonl.gz");
    let f = std::fs::File::open(&path).ok()?;
    let pages = BufReader::new(MultiGzDecoder::new(f))
        .lines()
        .take(limit)
        .map(|l| {
            let d: Value = serde_json::from_str(&l.expect("line")).expect("JSON");
            let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
            DevPage {
                key: s("id"),
                url: s("url"),
                host: s("host"),
                time: d["time"].as_i64().unwrap_or(0),
                html: s("html"),
            }
        })
        .collect();
    Some(pages)
}

/// Writes pages in the format `lifecycle.cpp` reads.
fn write_pages(pages: &[DevPage], path: &Path) {
    let mut b = Vec::new();
    b.extend_from_slice(b"NDPAGES1");
    b.extend_from_slice(&(pages.len() as u32).to_le_bytes());
    let put = |b: &mut Vec<u8>, s: &str| {
        b.extend_from_slice(&(s.len() as u32).to_le_bytes());
        b.extend_from_slice(s.as_bytes());
    };
    for p in pages {
        put(&mut b, &p.key);
        put(&mut b, &p.url);
        put(&mut b, &p.host);
        b.extend_from_slice(&p.time.to_le_bytes());
        put(&mut b, &p.html);
    }
    std::fs::write(path, b).expect("write pages");
}

/// The verdict lines the Rust API gives for the pages, as `lifecycle.cpp` prints them.
fn rust_verdicts(
    pages: &[DevPage],
    dir: &Path,
) -> Vec<(String, bool, u32, String, String, f64, f64)> {
    let ix = Index::open(
        dir.join("rust"),
        IndexOptions {
            sync_writes: false,
            ..IndexOptions::default()
        },
    )
    .expect("open");
    pages
        .iter()
        .map(|p| {
            let v = ix
                .insert(&Page {
                    key: &p.key,
                    host: &p.host,
                    time: p.time,
                    content: Content::Html(p.html.as_bytes()),
                })
                .expect("insert");
            (
                p.key.clone(),
                v.duplicate,
                v.cluster.expect("cluster"),
                v.representative.unwrap_or_default(),
                v.similar_to.unwrap_or_default(),
                v.resemble,
                v.contain,
            )
        })
        .collect()
}

fn parse_tsv(path: &Path) -> Vec<(String, bool, u32, String, String, f64, f64)> {
    std::fs::read_to_string(path)
        .expect("verdicts")
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 7, "line {l:?}");
            (
                f[0].to_string(),
                f[1] == "1",
                f[2].parse().expect("cluster"),
                f[3].to_string(),
                f[4].to_string(),
                f[5].parse().expect("resemble"),
                f[6].parse().expect("contain"),
            )
        })
        .collect()
}

fn run_lifecycle(pages: &[DevPage], valgrind: bool) -> (tempfile::TempDir, PathBuf) {
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join("lifecycle");
    compile(&root().join("tests/cpp/lifecycle.cpp"), &exe, &[]);
    let pages_bin = work.path().join("pages.bin");
    write_pages(pages, &pages_bin);
    let indexes = work.path().join("indexes");
    std::fs::create_dir(&indexes).expect("mkdir");
    let tsv = work.path().join("verdicts.tsv");
    let mut cmd = if valgrind {
        let mut c = Command::new(VALGRIND[0]);
        c.args(&VALGRIND[1..]).arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    let out = cmd
        .arg(&pages_bin)
        .arg(&indexes)
        .arg(&tsv)
        .output()
        .expect("run the C++ program (valgrind: scripts/setup.sh installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("lifecycle: ok"),
        "the C++ program failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    (work, tsv)
}

#[test]
fn cpp_lifecycle_matches_the_rust_api() {
    let pages = dev_pages(PAGES).expect("the bench's dev corpus at ../shared/bench/dev");
    let (work, tsv) = run_lifecycle(&pages, false);
    let from_cpp = parse_tsv(&tsv);
    let from_rust = rust_verdicts(&pages, work.path());
    assert_eq!(from_cpp.len(), from_rust.len());
    for (c, r) in from_cpp.iter().zip(&from_rust) {
        assert_eq!(c, r, "C++ and Rust verdicts differ");
    }
    assert!(from_rust.iter().any(|v| v.1), "the slice holds duplicates");
}

#[test]
fn cpp_lifecycle_is_clean_under_valgrind() {
    let pages = dev_pages(VALGRIND_PAGES).expect("the bench's dev corpus at ../shared/bench/dev");
    run_lifecycle(&pages, true);
}

#[test]
fn header_compiles_as_c99_and_c23() {
    let work = tempfile::tempdir().expect("tempdir");
    let src = work.path().join("use.c");
    std::fs::write(
        &src,
        "#include \"neardup.h\"\n\
         static nd_status first(nd_index *ix, const nd_page *p, nd_verdict *v) {\n\
           nd_status s = nd_index_insert(ix, p, v);\n\
           if (s == ND_OK) nd_verdict_free(v);\n\
           return s;\n\
         }\n\
         int main(void) { nd_status (*f)(nd_index *, const nd_page *, nd_verdict *) = first; (void)f; return (int)(nd_abi_version() != ND_ABI_VERSION); }\n",
    )
    .expect("write");
    for std in ["-std=c99", "-std=c2x"] {
        let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                "-I",
            ])
            .arg(root().join("include"))
            .arg(&src)
            .status()
            .expect("run the C compiler");
        assert!(
            status.success(),
            "include/neardup.h does not compile as C ({std})"
        );
    }
}

/// The first ```cpp block of the README.
fn readme_example() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme
        .find("```cpp\n")
        .expect("a ```cpp block in the README")
        + 7;
    let len = readme[start..].find("```").expect("closing ```");
    readme[start..start + len].to_string()
}

/// Runs a compiled test program in `dir` with `args` and asserts it succeeded.
fn run_program(exe: &Path, dir: &Path, args: &[&Path]) {
    let out = Command::new(exe)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "{} failed:\n{}\n{}",
        exe.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One handle per index per process, whatever the path's spelling, and none after `fork`
/// (`tests/cpp/one_writer.cpp`).
#[test]
fn one_writer_per_index_whatever_the_spelling_and_none_after_fork() {
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join("one_writer");
    compile(&root().join("tests/cpp/one_writer.cpp"), &exe, &[]);
    run_program(&exe, work.path(), &[&work.path().join("ix")]);
}

/// Runs a compiled test program in `dir` with `args` under `wrapper` (e.g. valgrind) and the
/// environment `env`; asserts it succeeded, printed `ok_line` and wrote nothing to stderr.
fn run_quiet(exe: &Path, wrapper: &[&str], env: &[(&str, &str)], args: &[&Path], ok_line: &str) {
    let dir = args.first().copied().unwrap_or(Path::new("."));
    let out = run(exe, wrapper, env, dir, args);
    assert_clean(&out, &format!("{} {wrapper:?}", exe.display()), ok_line);
}

/// The calls an engine needs beyond insert and query (`tests/cpp/engine_calls.cpp`): recrawl,
/// id reuse, get, delete results, cursors, batch queries, stored configuration, read-only
/// handles and the log callback — plainly, under ASan+UBSan, and under valgrind; none of the
/// runs writes anything to stderr.
#[test]
fn engine_calls_work_under_sanitizers_and_valgrind_and_stay_off_stderr() {
    let work = tempfile::tempdir().expect("tempdir");
    let src = root().join("tests/cpp/engine_calls.cpp");
    let plain = work.path().join("engine_calls");
    compile(&src, &plain, &[]);
    let sanitized = work.path().join("engine_calls_asan");
    compile(
        &src,
        &sanitized,
        &[
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
        ],
    );
    type Run<'a> = (&'a Path, &'a [&'a str], &'a [(&'a str, &'a str)]);
    let runs: [Run<'_>; 3] = [
        (&plain, &[], &[]),
        (
            &sanitized,
            &[],
            // Leaks are valgrind's part (below): LeakSanitizer cannot see into the Rust library's
            // allocator reliably when the library is not instrumented.
            &[
                (
                    "ASAN_OPTIONS",
                    "detect_leaks=0:abort_on_error=0:exitcode=98",
                ),
                ("ND_CYCLES", "2000"),
            ],
        ),
        (&plain, VALGRIND, &[("ND_CYCLES", "300")]),
    ];
    for (i, (exe, wrapper, env)) in runs.iter().enumerate() {
        let dir = work.path().join(format!("run{i}"));
        std::fs::create_dir(&dir).expect("mkdir");
        run_quiet(exe, wrapper, env, &[&dir], "engine_calls: ok");
    }
}

/// 8 C++ threads of mixed calls on one handle (`tests/cpp/stress.cpp`), under ASan+UBSan:
/// the index checks clean and every thread's keys are as it left them.
#[test]
fn eight_cpp_threads_under_asan_leave_a_consistent_index() {
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join("stress");
    compile(
        &root().join("tests/cpp/stress.cpp"),
        &exe,
        &[
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
        ],
    );
    let secs = std::env::var("NEARDUP_STRESS_SECONDS").unwrap_or_else(|_| "3".into());
    let dir = work.path().join("run");
    std::fs::create_dir(&dir).expect("mkdir");
    run_quiet(
        &exe,
        &[],
        &[(
            "ASAN_OPTIONS",
            "detect_leaks=0:abort_on_error=0:exitcode=98",
        )],
        &[&dir, Path::new(&secs)],
        "stress: ok",
    );
}

#[test]
fn readme_cpp_example_compiles_and_runs() {
    let work = tempfile::tempdir().expect("tempdir");
    let src = work.path().join("example.cpp");
    std::fs::File::create(&src)
        .and_then(|mut f| f.write_all(readme_example().as_bytes()))
        .expect("write example");
    let exe = work.path().join("example");
    compile(&src, &exe, &[]);
    run_program(&exe, work.path(), &[]);
}
