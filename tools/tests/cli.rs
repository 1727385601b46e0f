//! The `neardup` binary end to end: ingest → export → score, the daily merge with deletes,
//! checkpoint and compact, bad input of every kind with a zero-harm index.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
}

fn run(args: &[&str]) -> Output {
    let out = bin().args(args).output().expect("run neardup");
    assert!(
        out.status.success(),
        "neardup {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A page of `n` sentences drawn from `seed`, wrapped in a small site template.
fn page_html(seed: u64, n: usize, template: usize) -> String {
    let words = [
        "river", "market", "school", "energy", "policy", "harvest", "railway", "museum", "garden",
        "letter", "window", "forest", "bridge", "winter", "village", "teacher",
    ];
    let word = |x: u64| words[(x % words.len() as u64) as usize].to_string();
    html_of(seed, n, template, word, |x| format!(" {}.", x % 1000))
}

/// A page of `n` sentences of made-up words from `seed` (a large vocabulary, so unrelated pages
/// share little even by simhash).
fn rich_html(seed: u64, n: usize, template: usize) -> String {
    html_of(
        seed,
        n,
        template,
        |x| format!("w{}", x % 20_000),
        |_| ".".into(),
    )
}

/// A page of `n` sentences of 12 words (`word` of a random number) and an ending (`end` of the
/// last), wrapped in one of two site templates.
fn html_of(
    seed: u64,
    n: usize,
    template: usize,
    word: impl Fn(u64) -> String,
    end: impl Fn(u64) -> String,
) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut body = String::new();
    for _ in 0..n {
        let mut sent = String::from("The");
        for _ in 0..12 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            sent.push(' ');
            sent.push_str(&word(x));
        }
        sent.push_str(&end(x));
        body.push_str(&format!("<p>{sent}</p>"));
    }
    match template % 2 {
        0 => format!("<html><head><title>t</title></head><body><div class=nav><a href=/>Home</a></div><div class=content>{body}</div></body></html>"),
        _ => format!("<html><body><header>Site</header><main><article>{body}</article></main><footer>f</footer></body></html>"),
    }
}

fn jsonl(path: &Path, pages: &[(String, String)]) {
    let mut f = std::fs::File::create(path).unwrap();
    for (id, html) in pages {
        writeln!(f, "{}", serde_json::json!({"id": id, "url": format!("https://h.example/{id}"), "time": 0, "html": html})).unwrap();
    }
}

fn export(index: &Path) -> String {
    String::from_utf8(run(&["export", "--index", s(index)]).stdout).unwrap()
}

#[test]
fn ingest_export_and_score_the_bench_slice() {
    let bench = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench");
    let docs = bench.join("dev/docs.jsonl.gz");
    if !docs.exists() {
        eprintln!("no bench corpus; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The first 400 pages of the dev corpus, as plain JSONL.
    let text = {
        use std::io::{BufRead, BufReader};
        let f = std::fs::File::open(&docs).unwrap();
        BufReader::new(flate2::read::MultiGzDecoder::new(f))
            .lines()
            .take(400)
            .map(|l| l.unwrap() + "\n")
            .collect::<String>()
    };
    let slice = dir.path().join("slice.jsonl");
    std::fs::write(&slice, &text).unwrap();
    let index = dir.path().join("idx");
    let out = run(&[
        "ingest",
        "--index",
        s(&index),
        "--order",
        "input",
        s(&slice),
    ]);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("pages ingested   400"), "{summary}");
    let tsv = dir.path().join("clusters.tsv");
    run(&["export", "--index", s(&index), "--out", s(&tsv)]);
    assert_eq!(std::fs::read_to_string(&tsv).unwrap().lines().count(), 400);
    let out = Command::new("python3")
        .arg(bench.join("score.py"))
        .arg(bench.join("dev/truth.jsonl.gz"))
        .arg(&tsv)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let res: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Scored against the whole truth, pages outside the slice count as missing; what was
    // detected must still be right.
    assert!(
        res["duplicate_detection"]["precision"].as_f64().unwrap() >= 0.95,
        "{}",
        res["duplicate_detection"]
    );
    run(&["check", "--index", s(&index)]);
}

#[test]
fn daily_merge_with_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    let day1: Vec<(String, String)> = (0..6)
        .map(|i| (format!("d1-{i}"), page_html(i, 12, 0)))
        .collect();
    // Day 2: copies of two day-1 pages under another template, two new pages.
    let mut day2: Vec<(String, String)> = vec![
        ("d2-a".into(), page_html(1, 12, 1)),
        ("d2-b".into(), page_html(2, 12, 1)),
    ];
    day2.extend((10..12).map(|i| (format!("d2-{i}"), page_html(i, 12, 0))));
    let (f1, f2) = (dir.path().join("day1.jsonl"), dir.path().join("day2.jsonl"));
    jsonl(&f1, &day1);
    jsonl(&f2, &day2);
    run(&["ingest", "--index", s(&index), s(&f1)]);
    let gone = dir.path().join("gone.txt");
    std::fs::write(&gone, "d1-1\nd1-5\n# comment\nnever-there\n").unwrap();
    let out = run(&[
        "ingest",
        "--index",
        s(&index),
        "--delete-list",
        s(&gone),
        s(&f2),
    ]);
    let summary = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        summary.contains("deleted          2 (1 keys not present)"),
        "{summary}"
    );
    assert!(summary.contains("duplicates       1"), "{summary}");
    let exp = export(&index);
    assert!(!exp.contains("d1-1\t") && !exp.contains("d1-5\t"));
    assert!(exp.contains("d2-b\td1-2\n"), "{exp}");
    assert!(
        exp.contains("d2-a\td2-a\n"),
        "d1-1 was deleted first, so d2-a is new: {exp}"
    );
    run(&["check", "--index", s(&index)]);
    // A query stores nothing.
    let q = run(&["query", "--index", s(&index), s(&f1)]);
    assert_eq!(String::from_utf8_lossy(&q.stdout).lines().count(), 6);
    assert_eq!(export(&index), exp);
}

#[test]
fn checkpoint_and_compact_agree() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    let pages: Vec<(String, String)> = (0..20)
        .map(|i| (format!("p{i}"), page_html(i % 7, 10, (i % 2) as usize)))
        .collect();
    let f = dir.path().join("p.jsonl");
    jsonl(&f, &pages);
    run(&["ingest", "--index", s(&index), "--order", "input", s(&f)]);
    run(&["delete", "--index", s(&index), "p0", "p3"]);
    let snap = dir.path().join("snap");
    run(&["checkpoint", "--index", s(&index), "--out", s(&snap)]);
    let out = dir.path().join("compacted");
    let report =
        String::from_utf8(run(&["compact", "--from", s(&snap), "--out", s(&out)]).stdout).unwrap();
    assert!(report.contains("check            0 problems"), "{report}");
    assert_eq!(export(&snap), export(&index));
    assert_eq!(export(&out), export(&index));
    run(&["check", "--index", s(&out)]);
    let clusters =
        String::from_utf8(run(&["export", "--index", s(&out), "--clusters"]).stdout).unwrap();
    let first: serde_json::Value = serde_json::from_str(clusters.lines().next().unwrap()).unwrap();
    assert!(first["members"].as_array().is_some_and(|m| !m.is_empty()));
    // Compacting onto an existing directory is refused.
    let again = bin()
        .args(["compact", "--from", s(&snap), "--out", s(&out)])
        .output()
        .unwrap();
    assert!(!again.status.success());
}

#[test]
fn bad_input_is_reported_and_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    // JSONL with a malformed line, a line that is not UTF-8, a page without content, a binary
    // page, and two good pages.
    let bad = dir.path().join("bad.jsonl");
    let mut f = std::fs::File::create(&bad).unwrap();
    writeln!(
        f,
        "{}",
        serde_json::json!({"id": "good1", "html": page_html(1, 10, 0)})
    )
    .unwrap();
    writeln!(f, "{{\"id\": \"broken\", \"html\": ").unwrap();
    f.write_all(b"{\"id\": \"latin1\", \"html\": \"caf\xe9\"}\n")
        .unwrap();
    writeln!(f, "{}", serde_json::json!({"id": "empty"})).unwrap();
    let binary: String = (0..3000u32)
        .map(|i| char::from_u32(i % 9).unwrap())
        .collect();
    writeln!(f, "{}", serde_json::json!({"id": "binary", "html": binary})).unwrap();
    writeln!(
        f,
        "{}",
        serde_json::json!({"id": "good2", "html": page_html(2, 10, 1)})
    )
    .unwrap();
    drop(f);
    // A broken gzip file: a good gzip member cut in the middle.
    let gz = dir.path().join("cut.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for i in 0..50 {
        writeln!(
            enc,
            "{}",
            serde_json::json!({"id": format!("gz{i}"), "html": page_html(100 + i, 10, 0)})
        )
        .unwrap();
    }
    let bytes = enc.finish().unwrap();
    std::fs::write(&gz, &bytes[..bytes.len() / 2]).unwrap();
    // A truncated WARC file.
    let warc = dir.path().join("cut.warc");
    let payload = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{}",
        page_html(7, 10, 0)
    );
    let record = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://w.example/a\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:12345678-1234-1234-1234-123456789012>\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{}\r\n\r\n",
        payload.len(),
        payload
    );
    let mut w = record.clone().into_bytes();
    w.extend_from_slice(&record.as_bytes()[..record.len() / 2]);
    std::fs::write(&warc, &w).unwrap();

    let out = bin()
        .env("RUST_BACKTRACE", "0")
        .args(["ingest", "--index", s(&index), s(&bad), s(&gz), s(&warc)])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // Half the WARC file's records are damaged: everything readable is ingested, and the run
    // says so with a non-zero exit.
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    for needle in [
        "bad.jsonl:2: malformed JSON",
        "bad.jsonl:3: line is not UTF-8",
        "bad.jsonl:4: page empty has neither",
        "page binary: page is binary",
        "cut.jsonl.gz after line",
        "cut.warc after record 1: truncated record",
        "cut.warc: 1 of 2 records damaged",
    ] {
        assert!(stderr.contains(needle), "missing {needle:?} in:\n{stderr}");
    }
    let exp = export(&index);
    assert!(
        exp.contains("good1\t") && exp.contains("good2\t") && exp.contains("https://w.example/a\t")
    );
    assert!(
        exp.contains("gz0\t"),
        "pages before the gzip break are kept"
    );
    run(&["check", "--index", s(&index)]);
}

#[test]
fn every_method_ingests_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pages.jsonl");
    jsonl(
        &file,
        &[
            ("p0".into(), rich_html(1, 12, 0)),
            ("p1".into(), rich_html(1, 12, 1)),
            ("p2".into(), rich_html(2, 12, 0)),
        ],
    );
    for m in neardup::Method::NAMES {
        let index = dir.path().join(m);
        run(&["ingest", "--index", s(&index), "--method", m, s(&file)]);
        // p1 is p0's body under the other template, which has no title: the topic method
        // compares titles first (seed 003 §4.4), so it keeps p1 apart.
        let expected = if m == "topic" {
            "p0\tp0\np1\tp1\np2\tp2\n"
        } else {
            "p0\tp0\np1\tp0\np2\tp2\n"
        };
        assert_eq!(export(&index), expected, "{m}");
        // The index keeps its method: naming it again is fine, another is an error.
        run(&["ingest", "--index", s(&index), "--method", m, s(&file)]);
        let other = if m == "lcs" { "shingle" } else { "lcs" };
        let out = bin()
            .args(["ingest", "--index", s(&index), "--method", other, s(&file)])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{m}: reopened as {other}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("runs the"), "{m}: {err}");
    }
    let out = bin()
        .args([
            "ingest",
            "--index",
            s(&dir.path().join("x")),
            "--method",
            "nope",
            s(&file),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("single_pass"));
}

/// An index of three pages ingested by the command line under `dir`.
fn three_pages(dir: &Path) -> PathBuf {
    let input = dir.join("pages.jsonl");
    let pages: Vec<(String, String)> = (0..3)
        .map(|i| (format!("p{i}"), page_html(i, 8, 0)))
        .collect();
    jsonl(&input, &pages);
    let index = dir.join("index");
    run(&["ingest", "--index", s(&index), s(&input)]);
    index
}

/// Output into a closed pipe ends the command quietly (SIGPIPE), never with a panic.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_no_panic() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let index = three_pages(dir.path());
    // `stats` prints a page of JSON into a pipe whose reader is gone.
    let out = bin()
        .args(["stats", "--index", s(&index)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            drop(child.stdout.take());
            child.wait_with_output()
        })
        .expect("run neardup");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // SIGPIPE is signal 13 on every Unix.
    assert_eq!(out.status.signal(), Some(13), "{:?}", out.status);
}

/// `stats --json`: the figures and the metrics as one JSON object on one line (issue #33,
/// item 5); plain `stats` stays the figures alone.
#[test]
fn stats_json_has_the_figures_and_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let index = three_pages(dir.path());
    let out = run(&["stats", "--json", "--index", s(&index)]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["pages"], 3);
    let m = &v["metrics"];
    // A fresh process: no operation yet, RocksDB's figures and the memory are there.
    assert_eq!(m["insert"]["count"], 0);
    assert_eq!(m["insert"]["latency"]["count"], 0);
    assert!(
        m["rocksdb"].as_array().is_some_and(|a| !a.is_empty()),
        "{m}"
    );
    assert!(m["memory"].as_array().is_some_and(|a| !a.is_empty()), "{m}");
    let plain: serde_json::Value =
        serde_json::from_slice(&run(&["stats", "--index", s(&index)]).stdout).unwrap();
    assert_eq!(plain["pages"], 3);
    assert!(plain.get("metrics").is_none());
}

/// Issue #33, item 7: `ingest` inserts in input order unless told otherwise, so the first page
/// read of a cluster leads it (what a crawler means by "first seen"), even when a later copy
/// has more sentence fingerprints; `--order fingerprints` is the other way round, and
/// `--order-scope batch` (a sort) is refused without it.
#[test]
fn ingest_defaults_to_input_order() {
    let dir = tempfile::tempdir().unwrap();
    // The same eight sentences, then four more in the later page: near duplicates, the later
    // one with more fingerprints.
    let input = dir.path().join("pages.jsonl");
    jsonl(
        &input,
        &[
            ("short".into(), page_html(5, 8, 0)),
            ("long".into(), page_html(5, 12, 0)),
        ],
    );
    let default = dir.path().join("default");
    run(&["ingest", "--index", s(&default), s(&input)]);
    assert_eq!(export(&default), "short\tshort\nlong\tshort\n");
    let by_count = dir.path().join("fingerprints");
    run(&[
        "ingest",
        "--index",
        s(&by_count),
        "--order",
        "fingerprints",
        s(&input),
    ]);
    let exp = export(&by_count);
    assert!(
        exp.contains("short\tlong\n") && exp.contains("long\tlong\n"),
        "{exp}"
    );

    let refused = bin()
        .args(["ingest", "--index", s(&dir.path().join("refused"))])
        .args(["--order-scope", "batch", s(&input)])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--order fingerprints"), "{stderr}");
    assert!(!dir.path().join("refused").exists(), "nothing created");
    run(&[
        "ingest",
        "--index",
        s(&dir.path().join("whole")),
        "--order",
        "fingerprints",
        "--order-scope",
        "batch",
        s(&input),
    ]);

    let help = String::from_utf8(run(&["ingest", "--help"]).stdout).unwrap();
    assert!(help.contains("[default: input]"), "{help}");
}

/// `neardup extract`: one JSON line a page with its main text as extracted (not normalized),
/// title and language; a page that cannot be read and a line that is not a page are reported,
/// in input order, and nothing is left out.
#[test]
fn extract_prints_the_main_text_of_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pages.jsonl");
    let mut f = std::fs::File::create(&input).unwrap();
    let article = |title: &str, body: &str| {
        format!(
            "<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav>\
             <article><h1>{title}</h1><p>{body}</p><p>{body}</p></article></body></html>"
        )
    };
    let en = "The committee met on Tuesday to discuss the new railway timetable, which \
              changes the morning trains for the three villages along the river valley.";
    let zh = "委員會於週二開會討論新的鐵路時刻表，這將改變沿河谷三個村莊的早班火車時間安排。";
    let ja = "委員会は火曜日に会合を開き、川沿いの三つの村を結ぶ朝の列車の新しい時刻表について話し合いました。";
    for (id, title, body) in [
        ("en", "Timetable", en),
        ("zh", "時刻表", zh),
        ("ja", "時刻表", ja),
    ] {
        let line = serde_json::json!({"id": id, "html": article(title, body)});
        writeln!(f, "{line}").unwrap();
    }
    writeln!(f, "{{\"id\": \"broken\", \"html\": ").unwrap();
    let binary: String = (0..3000u32)
        .map(|i| char::from_u32(i % 9).unwrap())
        .collect();
    writeln!(f, "{}", serde_json::json!({"id": "binary", "html": binary})).unwrap();
    drop(f);

    let out = dir.path().join("out.jsonl");
    run(&["extract", "--out", s(&out), s(&input)]);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: &str| lines.iter().find(|l| l["id"] == id).unwrap().clone();
    let en_row = by_id("en");
    assert_eq!(en_row["title"], "Timetable");
    assert_eq!(en_row["lang"], "eng");
    assert!(en_row["text"]
        .as_str()
        .unwrap()
        .contains("railway timetable"));
    assert!(
        !en_row["text"].as_str().unwrap().contains("Home"),
        "{en_row}"
    );
    // Not normalized: the traditional characters and full-width punctuation are kept.
    let zh_row = by_id("zh");
    assert!(
        zh_row["text"]
            .as_str()
            .unwrap()
            .contains("委員會於週二開會"),
        "{zh_row}"
    );
    assert_eq!(zh_row["lang"], "cmn");
    assert_eq!(by_id("ja")["lang"], "jpn");
    assert!(by_id("binary")["error"].as_str().is_some());
    assert!(lines
        .iter()
        .any(|l| l["place"].as_str().is_some() && l["error"].as_str().is_some()));
    assert_eq!(lines.len(), 5);
    // Standard output is the default.
    let stdout = run(&["extract", s(&input)]).stdout;
    assert_eq!(stdout, std::fs::read(&out).unwrap());
}

/// Issue #34: `--version` names the library's source id, so that a command line built from
/// other sources (another branch, or an older tree, in a shared target directory) is told apart
/// from the library or the Python package it is compared with, even at the same version.
#[test]
fn version_names_the_library_source() {
    let out = String::from_utf8(run(&["--version"]).stdout).unwrap();
    assert!(
        out.contains(&format!("(library source {})", neardup::SOURCE_ID)),
        "{out}"
    );
    assert_eq!(neardup::SOURCE_ID.len(), 16, "{}", neardup::SOURCE_ID);
    assert!(
        neardup::SOURCE_ID
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{}",
        neardup::SOURCE_ID
    );
}
