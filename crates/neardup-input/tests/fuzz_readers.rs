//! Fuzzing the crawl-file readers (the command line's and `neardup.ray`'s S1): the WARC and ARC record reader, gzip members (damaged, cut short), HTTP response
//! heads, de-chunking and content decoding, and the JSONL reader — random bytes and
//! structure-aware records in, pages or reported damage out: never a panic, never a reader that
//! does not end. Run longer with `scripts/fuzz.sh SECONDS`.

#[path = "../../../tests/fuzz_support/mod.rs"]
mod fuzz_support;

use neardup_input::{http, input, warc};

use std::io::{BufReader, Cursor, Write};

use fuzz_support::fuzz;
use proptest::prelude::*;

/// The block limit of the readers under test (small, so that the limit is met).
const LIMIT: usize = 4096;

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).expect("zlib");
    e.finish().expect("zlib")
}

/// Damage to a byte string: none, one byte flipped, cut short, or bytes spliced in.
#[derive(Debug, Clone)]
enum Damage {
    None,
    Flip(usize, u8),
    Cut(usize),
    Splice(usize, Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        3 => Just(Damage::None),
        1 => (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Damage::Flip(i, x)),
        1 => any::<usize>().prop_map(Damage::Cut),
        1 => (any::<usize>(), bytes(12)).prop_map(|(i, b)| Damage::Splice(i, b)),
    ]
}

fn apply(mut v: Vec<u8>, d: &Damage) -> Vec<u8> {
    if v.is_empty() {
        return v;
    }
    match d {
        Damage::None => {}
        Damage::Flip(i, x) => {
            let i = i % v.len();
            v[i] ^= x;
        }
        Damage::Cut(n) => v.truncate(n % v.len()),
        Damage::Splice(i, b) => {
            let i = i % v.len();
            v.splice(i..i, b.iter().copied());
        }
    }
    v
}

/// An HTTP response: a status line, fields, and a body framed and coded as the fields say
/// (or not quite).
fn response() -> impl Strategy<Value = Vec<u8>> {
    let status = prop::sample::select(vec![
        "HTTP/1.1 200 OK",
        "HTTP/1.0 404 Not Found",
        "HTTP/1.1 200",
        "HTTP/2 301 Moved",
        "HTTP/1.1 OK 200",
        "HTTP",
        "HTTP/1.1 200 OK\r\nbroken header line",
    ]);
    let ctype = prop::sample::select(vec![
        "",
        "Content-Type: text/html\r\n",
        "Content-Type: text/html; charset=gbk\r\n",
        "Content-Type: text/html; charset=\"utf-16le\"\r\n",
        "Content-Type: text/html; charset=nonsense\r\n",
        "Content-Type: text/plain; charset=big5\r\n",
        "Content-Type: text/markdown\r\n",
        "Content-Type: image/png\r\n",
        "Content-Type: ;;;=\r\n",
        "Content-Type: application/xhtml+xml; charset=\r\n",
    ]);
    let coding = prop::sample::select(vec![
        "",
        "gzip",
        "x-gzip",
        "deflate",
        "br",
        "zstd",
        "identity",
        "gzip, gzip",
        "bogus",
        ",",
    ]);
    let body = prop_oneof![
        "<html><body><p>[a-z .]{0,200}</p></body></html>".prop_map(String::into_bytes),
        "[\u{4e00}-\u{9fff}a-z ]{0,100}".prop_map(String::into_bytes),
        bytes(300),
    ];
    (
        status,
        ctype,
        coding,
        body,
        any::<bool>(),
        prop::collection::vec(1usize..64, 0..6),
        prop::sample::select(vec!["", ";ext=1", "ffffffffffffffffffff", "zz", "-1"]),
        damage(),
        prop::collection::vec(("[A-Za-z-]{1,12}", "[ -~]{0,20}"), 0..4),
    )
        .prop_map(
            |(status, ctype, coding, body, chunked, sizes, odd, d, extra)| {
                let mut encoded = body.clone();
                for c in coding.split(',').map(str::trim) {
                    encoded = match c {
                        "gzip" | "x-gzip" => gzip(&encoded),
                        "deflate" => zlib(&encoded),
                        "zstd" => [&[0x28, 0xb5, 0x2f, 0xfd][..], &encoded].concat(),
                        _ => encoded,
                    };
                }
                let encoded = apply(encoded, &d);
                let mut r = format!("{status}\r\n{ctype}").into_bytes();
                if !coding.is_empty() {
                    r.extend_from_slice(format!("Content-Encoding: {coding}\r\n").as_bytes());
                }
                for (k, v) in extra {
                    r.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
                }
                if chunked {
                    r.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                    let mut rest = &encoded[..];
                    for (i, n) in sizes.iter().enumerate() {
                        let n = (*n).min(rest.len());
                        if i == 0 && !odd.is_empty() {
                            r.extend_from_slice(format!("{n:x}{odd}\r\n").as_bytes());
                        } else {
                            r.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                        }
                        r.extend_from_slice(&rest[..n]);
                        r.extend_from_slice(b"\r\n");
                        rest = &rest[n..];
                    }
                    if !rest.is_empty() {
                        r.extend_from_slice(format!("{:x}\r\n", rest.len()).as_bytes());
                        r.extend_from_slice(rest);
                        r.extend_from_slice(b"\r\n");
                    }
                    r.extend_from_slice(b"0\r\nTrailer: x\r\n\r\n");
                } else {
                    r.extend_from_slice(b"\r\n");
                    r.extend_from_slice(&encoded);
                }
                r
            },
        )
}

/// One WARC record (version line, fields, a `Content-Length` that may lie, the block, the two
/// line ends), or ARC records after a version block.
fn warc_record() -> impl Strategy<Value = Vec<u8>> {
    let version = prop::sample::select(vec!["WARC/1.0", "WARC/1.1", "WARC/0.18", "WARC/2.0", ""]);
    let kind = prop::sample::select(vec![
        "response", "revisit", "request", "warcinfo", "metadata", "resource", "",
    ]);
    let block = prop_oneof![3 => response(), 1 => bytes(200)];
    let length = prop_oneof![
        4 => Just(None),
        1 => (-40i64..40).prop_map(Some),
    ];
    let length_text = prop::sample::select(vec![
        "",
        "x",
        "-5",
        "99999999999999999999999",
        "18446744073709551615",
        " 12 ",
    ]);
    (
        version,
        kind,
        "(https?://[a-z.]{1,12}/[a-z]{0,6})|[ -~]{0,12}",
        block,
        length,
        length_text,
        prop::sample::select(vec!["\r\n\r\n", "\n\n", "", "\r\n", "junk\r\n\r\n"]),
        prop::collection::vec(("[A-Za-z-]{1,16}", "[ -~]{0,30}"), 0..3),
        "(20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)|[ -~]{0,12}",
    )
        .prop_map(|(version, kind, uri, block, off, odd, end, extra, date)| {
            let mut r = format!(
                "{version}\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n"
            )
            .into_bytes();
            if kind == "revisit" {
                r.extend_from_slice(b"WARC-Refers-To-Target-URI: http://a.example/\r\n");
            }
            for (k, v) in extra {
                r.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
            }
            match off {
                None if odd.is_empty() => {
                    r.extend_from_slice(format!("Content-Length: {}\r\n", block.len()).as_bytes())
                }
                None => r.extend_from_slice(format!("Content-Length: {odd}\r\n").as_bytes()),
                Some(d) => r.extend_from_slice(
                    format!("Content-Length: {}\r\n", (block.len() as i64 + d).max(0)).as_bytes(),
                ),
            }
            r.extend_from_slice(b"\r\n");
            r.extend_from_slice(&block);
            r.extend_from_slice(end.as_bytes());
            r
        })
}

fn arc_file() -> impl Strategy<Value = Vec<u8>> {
    let record = (
        "http://[a-z.]{1,10}/[a-z]{0,5}",
        prop::sample::select(vec!["1.2.3.4", "-", ""]),
        "(20[0-9]{12})|[0-9]{0,16}",
        prop::sample::select(vec!["text/html", "image/gif", "-", ""]),
        prop_oneof![response(), bytes(100)],
        -5i64..5,
        any::<bool>(),
    )
        .prop_map(|(url, ip, date, mime, block, off, v2)| {
            let len = (block.len() as i64 + off).max(0);
            let head = if v2 {
                format!("{url} {ip} {date} {mime} 200 - - 0 arc {len}\n")
            } else {
                format!("{url} {ip} {date} {mime} {len}\n")
            };
            [head.as_bytes(), &block, b"\n"].concat()
        });
    (any::<bool>(), prop::collection::vec(record, 0..6)).prop_map(|(v2, records)| {
        let desc = if v2 {
            "1 1 InternetArchive\nURL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length\n"
        } else {
            "1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
        };
        let mut f = format!(
            "filedesc://x.arc 0.0.0.0 20200101000000 text/plain {}\n{desc}\n",
            desc.len()
        )
        .into_bytes();
        for r in records {
            f.extend_from_slice(&r);
        }
        f
    })
}

/// An archive's bytes as a file holds them: plain, gzipped per record, or gzipped whole; then
/// possibly damaged.
#[derive(Debug, Clone)]
struct Archive {
    bytes: Vec<u8>,
    format: warc::Format,
    gzipped: bool,
}

fn archive() -> impl Strategy<Value = Archive> {
    let records = prop_oneof![
        prop::collection::vec(warc_record(), 0..6).prop_map(|r| (r, warc::Format::Warc)),
        arc_file().prop_map(|a| (vec![a], warc::Format::Arc)),
        prop::collection::vec(bytes(200), 0..3).prop_map(|r| (r, warc::Format::Warc)),
    ];
    (records, 0u8..3, damage()).prop_map(|((records, format), gz, d)| {
        let bytes = match gz {
            0 => records.concat(),
            1 => records.iter().map(|r| gzip(r)).collect::<Vec<_>>().concat(),
            _ => gzip(&records.concat()),
        };
        Archive {
            bytes: apply(bytes, &d),
            format,
            gzipped: gz > 0,
        }
    })
}

/// Reads every record of `a` in memory; fails when the reader does not end.
fn read_all(a: &Archive) -> Result<Vec<warc::Record>, TestCaseError> {
    let damage = warc::DamageLog::default();
    let r: Box<dyn std::io::BufRead> = if a.gzipped {
        Box::new(BufReader::new(warc::GzMembers::new(
            Cursor::new(a.bytes.clone()),
            damage.clone(),
        )))
    } else {
        Box::new(Cursor::new(a.bytes.clone()))
    };
    let mut reader = warc::Reader::new(r, a.format, LIMIT, damage);
    let mut records = Vec::new();
    // A record takes at least one line: more records than bytes (decompressed) is a loop.
    let cap = 64 * a.bytes.len() + 16;
    while let Some(rec) = reader.next_record() {
        let _ = reader.take_damage();
        prop_assert!(rec.block.len() <= LIMIT, "block over the limit");
        records.push(rec);
        prop_assert!(records.len() <= cap, "the reader does not end");
    }
    Ok(records)
}

#[test]
fn warc_reader() {
    let strategy = prop_oneof![
        3 => archive(),
        1 => (bytes(600), any::<bool>(), any::<bool>()).prop_map(|(b, arc, gzipped)| Archive {
            bytes: b,
            format: if arc { warc::Format::Arc } else { warc::Format::Warc },
            gzipped,
        }),
        1 => bytes(600).prop_map(|b| Archive {
            bytes: [&b"WARC/1.0\r\n"[..], &b].concat(),
            format: warc::Format::Warc,
            gzipped: false,
        }),
    ];
    fuzz("warc_reader", 20_000, strategy, |a| {
        let _ = warc::sniff(&a.bytes);
        for rec in read_all(&a)? {
            let _ = rec.header("WARC-Type");
            if rec.block.starts_with(b"HTTP") {
                let _ = http::page(&rec.block, LIMIT);
            }
        }
        Ok(())
    });
}

#[test]
fn http_responses() {
    let strategy = prop_oneof![
        4 => response(),
        1 => bytes(400),
        1 => bytes(400).prop_map(|b| [&b"HTTP/1.1 200 OK\r\n"[..], &b].concat()),
    ];
    fuzz("http_responses", 40_000, strategy, |block| {
        match http::page(&block, LIMIT) {
            Ok(http::Payload::Html(_) | http::Payload::Text(_)) => {}
            Err(http::Reject::TooLarge(n)) => prop_assert!(n > LIMIT),
            Err(e) => {
                let _ = e.to_string();
            }
        }
        Ok(())
    });
}

/// JSONL lines: pages (with fields of any type), other JSON, bytes, long and blank lines.
fn jsonl_line() -> impl Strategy<Value = Vec<u8>> {
    let value = prop_oneof![
        Just(serde_json::Value::Null),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        any::<String>().prop_map(serde_json::Value::from),
        Just(serde_json::json!([1, "a"])),
        Just(serde_json::json!({"html": 1})),
    ];
    let page = (
        prop::collection::vec(
            (
                prop::sample::select(vec!["id", "url", "host", "time", "html", "text", "x"]),
                prop_oneof![
                    2 => "[ -~\u{4e00}-\u{4e20}]{0,40}".prop_map(serde_json::Value::from),
                    1 => value,
                ],
            ),
            0..6,
        ),
        any::<bool>(),
    )
        .prop_map(|(fields, dup)| {
            let mut s = String::from("{");
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&format!("\"{k}\":{v}"));
            }
            if dup {
                s.push_str(if fields.is_empty() {
                    "\"id\":\"a\""
                } else {
                    ",\"id\":\"a\""
                });
            }
            s.push('}');
            s.into_bytes()
        });
    prop_oneof![
        6 => page,
        1 => bytes(60).prop_map(|b| b.into_iter().filter(|&c| c != b'\n').collect()),
        1 => "[ \t\r]{0,3}".prop_map(String::into_bytes),
        1 => (1usize..3).prop_map(|n| vec![b'x'; n * 3000]),
        1 => Just(b"{\"id\":\"k\",\"html\":\"\\ud800\"}".to_vec()),
        1 => Just(b"\xef\xbb\xbf{\"id\":\"k\",\"text\":\"t\"}".to_vec()),
    ]
}

#[test]
fn jsonl_and_archive_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("input");
    let strategy = prop_oneof![
        2 => (prop::collection::vec(jsonl_line(), 0..12), any::<bool>(), damage()).prop_map(
            |(lines, gz, d)| {
                let mut b = lines.join(&b"\n"[..]);
                if gz {
                    b = gzip(&b);
                }
                (apply(b, &d), lines.len())
            }
        ),
        1 => archive().prop_map(|a| (a.bytes, usize::MAX)),
    ];
    fuzz(
        "jsonl_and_archive_files",
        3000,
        strategy,
        |(bytes, lines)| {
            std::fs::write(&path, &bytes).expect("write");
            let mut source = match input::open_source(&path, LIMIT) {
                Ok(s) => s,
                Err(_) => return Ok(()),
            };
            let (mut pages, mut skips) = (0usize, 0usize);
            let cap = 64 * bytes.len() + 16;
            while !source.is_done() {
                let chunk = source.next_chunk(input::Limit {
                    pages: 4,
                    bytes: usize::MAX,
                });
                pages += chunk.pages.len();
                skips += chunk.skips.len() + chunk.revisits.len();
                for (_, p) in &chunk.pages {
                    // No page without a key (a JSONL line with `"url": ""` and no `id`, a WARC
                    // record with an empty `WARC-Target-URI`, found by this target, are skipped
                    // by the readers).
                    prop_assert!(!p.key.is_empty());
                    prop_assert!(p.body.len() <= 2 * LIMIT + 64 * 1024);
                }
                prop_assert!(pages + skips <= cap, "the reader does not end");
                if chunk.pages.is_empty()
                    && chunk.skips.is_empty()
                    && chunk.report.is_none()
                    && !source.is_done()
                {
                    prop_assert!(pages + skips <= cap);
                }
            }
            if lines != usize::MAX && bytes.first() != Some(&0x1f) {
                // Plain JSONL: a page or a skip per line at most (a damaged file may have more lines).
                let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
                prop_assert!(pages + skips <= newlines + 1);
            }
            Ok(())
        },
    );
}
