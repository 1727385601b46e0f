//! The official C++ header `include/neardup.hpp` (issue #13, point 7).
//!
//! - `tests/cpp/hpp_engine.cpp`, which uses only the header, is built with
//!   `g++ -std=c++17 -Wall -Wextra -Werror` against `target/release/libneardup.so` and run
//!   plainly, under ASan+UBSan and under valgrind: each run prints its "ok" line, exits 0 and
//!   writes nothing to stderr.
//! - The header compiles alone in a translation unit with `-Wpedantic`, `-Wshadow`,
//!   `-Wconversion`, `-Wold-style-cast` and more (C++17 and C++20), and in two
//!   translation units of one program (everything in it is `inline`); without exceptions it
//!   stops with its own `#error`.
//! - every ```cpp block of the README that includes `neardup.hpp` (there must be one) compiles
//!   and runs.
//! - issue #33, item 6: `tests/cpp/hpp_polish.cpp` (`enum class Status`, the `Result<T>`
//!   family, the batch overloads, `PageRef` from literals, views and named strings) and the
//!   example engine `examples/cpp/engine.cpp` build and run plainly and under ASan+UBSan, in
//!   C++17 and C++20, and under valgrind; a `PageRef` from a temporary `std::string` and a
//!   dropped result fail to compile (the compiler is run on snippets that must be refused, each
//!   beside one that must be accepted, so that a refusal for another reason does not pass).
//!
//! The shared library is built by `cargo build --release` (the test command does it first); the
//! test refuses a library older than the sources.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::native::{assert_clean, fresh_library, root, run, ASAN_ENV, SANITIZE, VALGRIND};

const WARNINGS: [&str; 5] = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread"];

/// What a header included by other projects' code should not trip either.
const STRICT: &[&str] = &[
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wpedantic",
    "-Wshadow",
    "-Wconversion",
    "-Wsign-conversion",
    "-Wold-style-cast",
    "-Wzero-as-null-pointer-constant",
    "-Wnon-virtual-dtor",
];

fn cxx() -> Command {
    Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()))
}

/// Builds `sources` into `out` against the shared library.
fn build(sources: &[&Path], out: &Path, extra: &[&str]) {
    let lib = fresh_library("libneardup.so");
    let dir = lib.parent().expect("profile directory");
    let status = cxx()
        .args(["-O1", "-g"])
        .args(WARNINGS)
        .args(extra)
        .args(sources)
        .arg("-I")
        .arg(root().join("include"))
        .arg("-L")
        .arg(dir)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .args(["-lneardup", "-o"])
        .arg(out)
        .status()
        .expect("run the C++ compiler (g++; scripts/setup.sh installs it)");
    assert!(status.success(), "compiling {sources:?} failed");
}

fn engine_source() -> PathBuf {
    root().join("tests/cpp/hpp_engine.cpp")
}

/// Builds hpp_engine.cpp (with `extra` flags) and runs it under `wrapper` in a fresh directory.
fn engine_run(name: &str, extra: &[&str], wrapper: &[&str], env: &[(&str, &str)]) {
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join(name);
    build(&[&engine_source()], &exe, extra);
    let dir = work.path().join("run");
    std::fs::create_dir(&dir).expect("mkdir");
    let out = run(&exe, wrapper, env, work.path(), &[&dir]);
    assert_clean(&out, name, "hpp_engine: ok");
}

#[test]
fn hpp_engine_runs_plainly_and_under_asan_and_ubsan() {
    engine_run("hpp_engine", &[], &[], &[]);
    engine_run(
        "hpp_engine_asan",
        &[
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
        ],
        &[],
        // Leaks are valgrind's part: LeakSanitizer cannot see into the Rust library's allocator
        // reliably when the library is not instrumented.
        &[(
            "ASAN_OPTIONS",
            "detect_leaks=0:abort_on_error=0:exitcode=98",
        )],
    );
}

#[test]
fn hpp_engine_is_clean_under_valgrind() {
    engine_run("hpp_engine", &[], VALGRIND, &[]);
}

/// `-fsyntax-only` on `source` with `flags`; the compiler's output.
fn syntax(source: &Path, flags: &[&str]) -> Output {
    cxx()
        .args(flags)
        .arg("-fsyntax-only")
        .arg("-I")
        .arg(root().join("include"))
        .arg(source)
        .output()
        .expect("run the C++ compiler")
}

#[test]
fn header_compiles_alone_pedantic_in_two_units_and_refuses_no_exceptions() {
    let work = tempfile::tempdir().expect("tempdir");
    let alone = work.path().join("alone.cpp");
    std::fs::write(
        &alone,
        "#include \"neardup.hpp\"\n#include \"neardup.hpp\"\n\
         int main() { return neardup::abi_matches() ? 0 : 1; }\n",
    )
    .expect("write");
    for std in ["-std=c++17", "-std=c++20"] {
        let out = syntax(&alone, &[&[std], STRICT].concat());
        assert!(
            out.status.success(),
            "neardup.hpp alone ({std}, -Wpedantic):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // Two translation units of one program: nothing is defined twice.
    let a = work.path().join("a.cpp");
    let b = work.path().join("b.cpp");
    std::fs::write(
        &a,
        "#include \"neardup.hpp\"\n#include <cstdio>\nint other();\n\
         int main() {\n\
           try { (void)neardup::Index::open_existing(\"no-such-index\"); }\n\
           catch (const neardup::Error& e) { if (e.status() != ND_INVALID_ARGUMENT) return 1; }\n\
           std::printf(\"%s\\n\", other() == 0 ? \"units: ok\" : \"units: failed\");\n\
           return 0;\n\
         }\n",
    )
    .expect("write");
    std::fs::write(
        &b,
        "#include \"neardup.hpp\"\n\
         int other() {\n\
           neardup::Options o;\n\
           o.sync_writes(false);\n\
           try { (void)neardup::Index::open_existing(\"no-such-index\"); }\n\
           catch (const neardup::Error& e) { return e.status() == ND_INVALID_ARGUMENT ? 0 : 1; }\n\
           return 1;\n\
         }\n",
    )
    .expect("write");
    let exe = work.path().join("units");
    build(&[&a, &b], &exe, &["-Wpedantic"]);
    assert_clean(&run(&exe, &[], &[], work.path(), &[]), "units", "units: ok");

    // Errors are exceptions: without them the header says so rather than miscompiling.
    let out = syntax(&alone, &["-std=c++17", "-fno-exceptions"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("neardup.hpp reports errors as exceptions"),
        "-fno-exceptions:\n{stderr}"
    );
}

/// The ```cpp blocks of the README that use the C++ header.
fn readme_hpp_examples() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    readme
        .split("```cpp\n")
        .skip(1)
        .map(|rest| rest.split("```").next().expect("a block").to_string())
        .filter(|block| block.contains("neardup.hpp"))
        .collect()
}

#[test]
fn readme_hpp_example_compiles_and_runs() {
    let work = tempfile::tempdir().expect("tempdir");
    let blocks = readme_hpp_examples();
    assert!(
        !blocks.is_empty(),
        "the README shows a C++ example with neardup.hpp"
    );
    let mut sources = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let src = work.path().join(format!("readme{i}.cpp"));
        std::fs::write(&src, block).expect("write example");
        sources.push(src);
    }
    for (i, src) in sources.iter().enumerate() {
        let exe = work.path().join(format!("example{i}"));
        build(&[src], &exe, &["-Wpedantic"]);
        let dir = work.path().join(format!("run{i}"));
        std::fs::create_dir(&dir).expect("mkdir");
        // Twice: the second run finds the index of the first (recrawls, then a fresh delete).
        for _ in 0..2 {
            let out = run(&exe, &[], &[], &dir, &[]);
            assert_clean(&out, &src.display().to_string(), "cluster ");
        }
    }
}

/// Builds `source` with `extra` flags (`tests/cpp` on the include path) and runs it under
/// `wrapper` with a fresh directory as its argument; it must print `ok_line` and nothing to
/// stderr.
fn program_run(
    source: &Path,
    name: &str,
    extra: &[&str],
    wrapper: &[&str],
    env: &[(&str, &str)],
    ok_line: &str,
) {
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join(name);
    let tests_cpp = root().join("tests/cpp");
    let include = format!("-I{}", tests_cpp.display());
    build(&[source], &exe, &[extra, &[include.as_str()]].concat());
    let dir = work.path().join("run");
    std::fs::create_dir(&dir).expect("mkdir");
    let out = run(&exe, wrapper, env, work.path(), &[&dir]);
    assert_clean(&out, name, ok_line);
}

#[test]
fn hpp_polish_runs_under_asan_and_ubsan_in_cpp17_and_cpp20() {
    let source = root().join("tests/cpp/hpp_polish.cpp");
    for std in ["-std=c++17", "-std=c++20"] {
        let flags = [&[std, "-Wpedantic"][..], &SANITIZE].concat();
        program_run(
            &source,
            "hpp_polish",
            &flags,
            &[],
            &ASAN_ENV,
            "hpp_polish: ok",
        );
    }
    // C++20 also takes std::span: the program says so when it ran that part.
    let flags = [&["-std=c++20"][..], &SANITIZE].concat();
    program_run(
        &source,
        "hpp_polish20",
        &flags,
        &[],
        &ASAN_ENV,
        "hpp_polish: spans",
    );
}

#[test]
fn example_engine_and_hpp_polish_are_clean_under_valgrind() {
    program_run(
        &root().join("tests/cpp/hpp_polish.cpp"),
        "hpp_polish",
        &[],
        VALGRIND,
        &[],
        "hpp_polish: ok",
    );
    let source = root().join("examples/cpp/engine.cpp");
    program_run(
        &source,
        "engine",
        &["-Wpedantic"],
        VALGRIND,
        &[],
        "engine: ok",
    );
}

#[test]
fn example_engine_builds_and_runs_plainly_and_under_asan_and_ubsan() {
    let source = root().join("examples/cpp/engine.cpp");
    program_run(&source, "engine", &["-Wpedantic"], &[], &[], "engine: ok");
    for std in ["-std=c++17", "-std=c++20"] {
        let flags = [&[std, "-Wpedantic"][..], &SANITIZE].concat();
        program_run(&source, "engine_asan", &flags, &[], &ASAN_ENV, "engine: ok");
    }
}

/// Compiles `body` (inside a function that has `ix`, an lvalue `std::string key` and `html`)
/// with -Werror; the compiler's output.
fn snippet(work: &Path, name: &str, std: &str, body: &str) -> Output {
    let src = work.join(format!("{name}.cpp"));
    std::fs::write(
        &src,
        format!(
            "#include \"neardup.hpp\"\n#include <string>\n#include <string_view>\n\
             #include <vector>\n\
             std::string make() {{ return \"made\"; }}\n\
             void f(neardup::Index& ix, std::string key, const std::string& html) {{\n\
               (void)ix; (void)key; (void)html;\n{body}\n}}\n"
        ),
    )
    .expect("write snippet");
    syntax(&src, &[std, "-Wall", "-Wextra", "-Werror"])
}

/// Each `(accepted, refused, why)`: `accepted` compiles, `refused` does not and the compiler
/// says `why`.
fn assert_refused(cases: &[(&str, &str, &str)]) {
    let work = tempfile::tempdir().expect("tempdir");
    for std in ["-std=c++17", "-std=c++20"] {
        for (i, (accepted, refused, why)) in cases.iter().enumerate() {
            let out = snippet(work.path(), &format!("accepted{i}"), std, accepted);
            assert!(
                out.status.success(),
                "{std}: expected to compile:\n{accepted}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let out = snippet(work.path(), &format!("refused{i}"), std, refused);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success() && stderr.contains(why),
                "{std}: expected a refusal ({why}) of:\n{refused}\n{stderr}"
            );
        }
    }
}

#[test]
fn pageref_from_a_temporary_string_does_not_compile() {
    const DELETED: &str = "use of deleted function";
    assert_refused(&[
        // The key, the content, both; with a kind; braced; the with_ setters.
        (
            "neardup::PageRef p(key, html); (void)p;",
            "neardup::PageRef p(std::string(\"k\"), html); (void)p;",
            DELETED,
        ),
        (
            "neardup::PageRef p(\"k\", html); (void)p;",
            "neardup::PageRef p(key, html + \"<p>appended</p>\"); (void)p;",
            DELETED,
        ),
        (
            "neardup::PageRef p{std::string_view(key), std::string_view(html)}; (void)p;",
            "neardup::PageRef p(make(), make()); (void)p;",
            DELETED,
        ),
        (
            "neardup::PageRef p{key, html, neardup::ContentKind::Text}; (void)p;",
            "neardup::PageRef p{make(), html, neardup::ContentKind::Text}; (void)p;",
            DELETED,
        ),
        (
            "const std::string c = make(); neardup::PageRef p(c, html); (void)p;",
            "const std::string c = make(); neardup::PageRef p(c, std::move(key)); (void)p;",
            DELETED,
        ),
        (
            "neardup::PageRef p(key, html); p.with_url(key).with_host(\"h\"); (void)p;",
            "neardup::PageRef p(key, html); p.with_url(make()); (void)p;",
            DELETED,
        ),
        (
            "neardup::PageRef p(key, html); p.with_host(std::string_view(html)); (void)p;",
            "neardup::PageRef p(key, html); p.with_host(key + \".example\"); (void)p;",
            DELETED,
        ),
        (
            "std::vector<neardup::PageRef> v{neardup::PageRef(key, html)}; (void)v;",
            "std::vector<neardup::PageRef> v{neardup::PageRef(key, make())}; (void)v;",
            DELETED,
        ),
    ]);
}

#[test]
fn dropped_results_do_not_compile_and_a_status_is_no_nd_status() {
    const UNUSED: &str = "ignoring return value";
    assert_refused(&[
        ("(void)ix.query(html);", "ix.query(html);", UNUSED),
        (
            "(void)ix.insert({key, html});",
            "ix.insert({key, html});",
            UNUSED,
        ),
        (
            "(void)ix.try_insert({key, html});",
            "ix.try_insert({key, html});",
            UNUSED,
        ),
        ("(void)ix.try_get(key);", "ix.try_get(key);", UNUSED),
        ("(void)ix.try_close();", "ix.try_close();", UNUSED),
        (
            "(void)neardup::Index::try_open(key);",
            "neardup::Index::try_open(key);",
            UNUSED,
        ),
        (
            "(void)neardup::Index::open(key);",
            "neardup::Index::open(key);",
            UNUSED,
        ),
        ("(void)ix.query_batch({});", "ix.query_batch({});", UNUSED),
        ("(void)ix.insert_batch({});", "ix.insert_batch({});", UNUSED),
        ("(void)ix.get(key);", "ix.get(key);", UNUSED),
        // erase throws on failure: its Deletion may be dropped. A Status is no nd_status.
        (
            "ix.erase(key); neardup::Status s = neardup::to_status(ND_OK); (void)s;",
            "nd_status s = neardup::Status::Ok; (void)s;",
            "cannot convert",
        ),
    ]);
}
