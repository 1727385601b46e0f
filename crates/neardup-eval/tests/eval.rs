//! `neardup-eval --quick`: every stage of the evaluation (child ingests, compaction, export, both
//! scorers, the report, the plots) on the first 2,000 pages of the bench's corpora, when the
//! bench is there. The ingests run in the `neardup` binary beside `neardup-eval` (cargo builds it
//! with `neardup-tools`: `cargo test --workspace` does, or `cargo build --release -p neardup-tools`).

use std::path::PathBuf;
use std::process::Command;

const EVAL: &str = env!("CARGO_BIN_EXE_neardup-eval");

#[test]
fn quick_eval_writes_the_report_and_plots() {
    let bench = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench");
    if !bench.join("dev/docs.jsonl.gz").is_file()
        || !bench.join("natural-dev/docs.jsonl.gz").is_file()
    {
        eprintln!("skipped: no bench at {}", bench.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("eval");
    let out = Command::new(EVAL)
        .args(["--quick", "--methods", "lcs,punct", "--out"])
        .arg(&out_dir)
        .arg("--bench")
        .arg(&bench)
        .output()
        .expect("run neardup-eval");
    assert!(
        out.status.success(),
        "neardup-eval failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // One progress line per run on standard error.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr
        .lines()
        .any(|l| l.starts_with("dev ") && l.contains("lcs")));

    let report = std::fs::read_to_string(out_dir.join("README.md")).unwrap();
    for svg in ["dev-pr.svg", "natural-dev-pr.svg"] {
        let s = std::fs::read_to_string(out_dir.join(svg)).unwrap();
        assert!(
            s.starts_with("<svg") && s.contains("lcs"),
            "{svg}: {s:.200}"
        );
        assert!(report.contains(&format!("]({svg})")), "{svg} is not linked");
    }
    for section in ["## dev", "## natural-dev", "### R1", "### R3", "### R4"] {
        assert!(report.contains(section), "no {section} in the report");
    }
    // The first table after "## dev" is the overall one: | method | P | R | ...
    let dev = &report[report.find("## dev").unwrap()..];
    let lcs_row = dev
        .lines()
        .find(|l| l.starts_with("| lcs |"))
        .expect("an lcs row in the dev table");
    let precision: f64 = lcs_row.split('|').nth(2).unwrap().trim().parse().unwrap();
    assert!(precision > 0.9, "lcs precision {precision} on dev");
    let punct_row = dev.lines().find(|l| l.starts_with("| punct |"));
    assert!(punct_row.is_some(), "no punct row");

    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    let p = results["corpora"]["natural-dev"]["runs"]["lcs"]["score"]["overall"]["precision"]
        .as_f64()
        .unwrap();
    assert!(p > 0.9, "lcs precision {p} on natural-dev");
}

#[test]
fn eval_without_a_bench_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(EVAL)
        .args(["--quick", "--methods", "lcs", "--out"])
        .arg(tmp.path().join("eval"))
        .arg("--bench")
        .arg(tmp.path().join("no-bench"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no bench at"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let out = Command::new(EVAL)
        .args(["--methods", "nope", "--out"])
        .arg(tmp.path().join("eval"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown method"));
}

#[test]
fn eval_without_a_neardup_binary_says_how_to_build_it() {
    let bench = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench");
    if !bench.join("dev/docs.jsonl.gz").is_file() {
        eprintln!("skipped: no bench at {}", bench.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(EVAL)
        .args(["--quick", "--methods", "lcs", "--out"])
        .arg(tmp.path().join("eval"))
        .arg("--bench")
        .arg(&bench)
        .arg("--neardup")
        .arg(tmp.path().join("no-neardup"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no neardup binary at"), "{stderr}");
    assert!(
        stderr.contains("cargo build --release -p neardup-tools"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
