//! Web archives as real crawlers write them: `neardup ingest` takes exactly the HTML responses
//! that warcio (the web-archiving community's reference reader) finds in the sample WARC and
//! ARC files of `fixtures/warc/` (see its README), and hand-made records for what those files
//! lack: chunked and compressed bodies, a charset given by the HTTP header, revisits of stored
//! pages, and a damaged record in the middle of a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_neardup"));
    c.env("RUST_BACKTRACE", "0");
    c
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/warc")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The number after `label` in the ingest summary.
fn figure(stdout: &str, label: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in:\n{stdout}"))
}

fn ingest(index: &Path, files: &[&Path]) -> Output {
    let mut c = bin();
    c.args(["ingest", "--index", s(index)]);
    for f in files {
        c.arg(s(f));
    }
    c.output().expect("run neardup")
}

#[test]
fn sample_archives_yield_every_html_response() {
    // warcio's count of HTML responses per file (fixtures/warc/README.md, count_warcio.py).
    let expected = [
        ("iana.warc.gz", 20),
        ("example.warc", 2),
        ("example.warc.gz", 2),
        ("example-extra.warc", 2),
        ("example2.warc.gz", 1),
        ("example-url-agnostic-orig.warc.gz", 1),
        ("example-url-agnostic-revisit.warc.gz", 0),
        ("example-wget-1-14.warc.gz", 1),
        ("example-wpull.warc.gz", 1),
        ("example.arc", 1),
        ("example.arc.gz", 1),
        ("dupes.warc.gz", 1),
    ];
    for (file, html) in expected {
        let dir = tempfile::tempdir().unwrap();
        let out = ingest(&dir.path().join("ix"), &[&fixtures().join(file)]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{file}:\n{stdout}\n{stderr}");
        assert_eq!(
            figure(&stdout, "pages ingested"),
            html,
            "{file}:\n{stdout}\n{stderr}"
        );
        assert_eq!(figure(&stdout, "skipped"), 0, "{file}:\n{stdout}\n{stderr}");
        assert!(stdout.contains(" 0 damaged"), "{file}:\n{stdout}");
    }
}

#[test]
fn iana_pages_have_their_text() {
    // Chunked headers over de-chunked bodies: every page keeps its text.
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(&dir.path().join("ix"), &[&fixtures().join("iana.warc.gz")]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Only the four redirect pages ("moved") are too short to compare.
    assert!(figure(&stdout, "no main text") <= 4, "{stdout}");
}

/// A WARC record of `kind` for `uri` with `block`.
fn record(kind: &str, uri: &str, extra: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n\
         WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{:012}>\r\n{extra}\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        uri.len(),
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// An HTML page of a few distinct sentences.
fn page(seed: usize) -> String {
    let words = [
        "harbour", "lantern", "meadow", "copper", "signal", "orchard", "glacier", "thimble",
        "canyon", "saffron", "quarry", "pylon",
    ];
    let mut p = String::from("<html><body><article>");
    for i in 0..8 {
        p.push_str("<p>");
        for j in 0..14 {
            p.push_str(words[(seed * 7 + i * 5 + j * 3 + i * j) % words.len()]);
            p.push(' ');
        }
        p.push_str(&format!("number {seed} {i}.</p>"));
    }
    p.push_str("</article></body></html>");
    p
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn response(head: &str, body: &[u8]) -> Vec<u8> {
    let mut b = format!("HTTP/1.1 200 OK\r\n{head}\r\n").into_bytes();
    b.extend_from_slice(body);
    b
}

fn hand_made_records() -> Vec<Vec<u8>> {
    let plain = response(
        "Content-Type: text/html; charset=utf-8\r\n",
        page(1).as_bytes(),
    );
    // Chunked, and gzip under the chunks.
    let gz = gzip(page(2).as_bytes());
    let mut chunked = Vec::new();
    for c in gz.chunks(100) {
        chunked.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        chunked.extend_from_slice(c);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let chunked = response(
        "Content-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        &chunked,
    );
    // GBK bytes whose page claims Big5: the header's charset wins.
    let html = format!(
        "<html><head><meta charset=\"big5\"></head><body><p>{}</p></body></html>",
        "中文网页的正文内容，用来检查字符集。".repeat(8)
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(&html);
    let gbk = response("Content-Type: text/html; charset=gbk\r\n", &gbk);
    vec![
        record("response", "https://w.example/plain", "", &plain),
        record("response", "https://w.example/chunked", "", &chunked),
        record("response", "https://w.example/gbk", "", &gbk),
        record(
            "revisit",
            "https://w.example/plain",
            "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n\
             WARC-Refers-To-Target-URI: https://w.example/plain\r\n",
            b"",
        ),
        record(
            "response",
            "https://w.example/last",
            "",
            &response("Content-Type: text/html\r\n", page(4).as_bytes()),
        ),
    ]
}

#[test]
fn hand_made_records_are_decoded_as_a_browser_would() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("made.warc.gz");
    let mut bytes = Vec::new();
    for r in hand_made_records() {
        bytes.extend(gzip(&r));
    }
    std::fs::write(&file, &bytes).unwrap();
    let index = dir.path().join("ix");
    let out = ingest(&index, &[&file]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(figure(&stdout, "pages ingested"), 4, "{stdout}\n{stderr}");
    assert_eq!(figure(&stdout, "no main text"), 0, "{stdout}");
    assert!(
        stdout.contains("revisits         1 (1 of stored pages: unchanged"),
        "{stdout}"
    );
    // The GBK page reads as Chinese: its text matches the same text given as UTF-8.
    let same = dir.path().join("same.jsonl");
    std::fs::write(
        &same,
        format!(
            "{}\n",
            serde_json::json!({"id": "utf8", "html": format!(
                "<html><body><p>{}</p></body></html>",
                "中文网页的正文内容，用来检查字符集。".repeat(8)
            )})
        ),
    )
    .unwrap();
    let q = bin()
        .args(["query", "--index", s(&index), s(&same)])
        .output()
        .unwrap();
    let (qout, qerr) = text(&q);
    assert!(q.status.success(), "{qerr}");
    let v: serde_json::Value = serde_json::from_str(qout.trim()).unwrap();
    assert_eq!(v["duplicate"], true, "{qout}");
    assert_eq!(v["similar_to"], "https://w.example/gbk", "{qout}");
}

#[test]
fn a_damaged_record_costs_only_itself() {
    let records = hand_made_records();
    let dir = tempfile::tempdir().unwrap();
    // Plain WARC: the third record's block is cut short by 40 bytes (its Content-Length lies).
    let mut plain = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if i == 2 {
            let header_end = r.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let mut cut = r[..header_end].to_vec();
            cut.extend_from_slice(&r[header_end..r.len() - 200]);
            plain.extend(cut);
        } else {
            plain.extend_from_slice(r);
        }
    }
    // Gzip per record: the third member's compressed bytes are overwritten in the middle.
    let mut gz = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let mut m = gzip(r);
        if i == 2 {
            let mid = m.len() / 2;
            for b in &mut m[mid..mid + 16] {
                *b ^= 0x5a;
            }
        }
        gz.extend(m);
    }
    for (name, bytes) in [("damaged.warc", plain), ("damaged.warc.gz", gz)] {
        let file = dir.path().join(name);
        std::fs::write(&file, &bytes).unwrap();
        let index = dir.path().join(format!("ix-{name}"));
        let out = bin()
            .args([
                "ingest",
                "--max-damaged-share",
                "0.5",
                "--index",
                s(&index),
                s(&file),
            ])
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{name}:\n{stdout}\n{stderr}");
        // The damaged GBK record is lost; the ones after it are not.
        assert_eq!(
            figure(&stdout, "pages ingested"),
            3,
            "{name}:\n{stdout}\n{stderr}"
        );
        let exp = bin()
            .args(["export", "--index", s(&index)])
            .output()
            .unwrap();
        let keys = String::from_utf8_lossy(&exp.stdout).into_owned();
        for k in ["plain", "chunked", "last"] {
            assert!(
                keys.contains(&format!("https://w.example/{k}\t")),
                "{name}: {keys}"
            );
        }
        assert!(!keys.contains("https://w.example/gbk\t"), "{name}: {keys}");
        // The default share (10 %) makes the run fail, after ingesting the same pages.
        let index2 = dir.path().join(format!("ix2-{name}"));
        let out = ingest(&index2, &[&file]);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{name}:\n{stdout}");
        assert!(stderr.contains("records damaged"), "{name}:\n{stderr}");
        assert_eq!(figure(&stdout, "pages ingested"), 3, "{name}:\n{stdout}");
    }
}

#[test]
fn garbage_is_harmless() {
    // Random bytes after a valid record, and a file that is only a WARC version line.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = hand_made_records().remove(0);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..5000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.push(x as u8);
    }
    let file = dir.path().join("tail.warc");
    std::fs::write(&file, &bytes).unwrap();
    let out = bin()
        .args(["ingest", "--max-damaged-share", "1", "--index"])
        .arg(dir.path().join("ix"))
        .arg(&file)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(figure(&stdout, "pages ingested"), 1, "{stdout}");
    let file = dir.path().join("empty.warc");
    std::fs::write(&file, b"WARC/1.1\r\n").unwrap();
    let out = ingest(&dir.path().join("ix2"), &[&file]);
    let (stdout, stderr) = text(&out);
    assert_eq!(figure(&stdout, "pages ingested"), 0, "{stdout}\n{stderr}");
}
