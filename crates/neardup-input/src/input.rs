//! Reading pages from crawl files: JSONL, WARC or ARC, gzip or plain (gzip detected by its
//! magic bytes, WARC by its `WARC/` version line, ARC by its `filedesc://` version block).
//! Archive records are read by [`crate::warc`], HTTP payloads decoded by [`crate::http`].
//!
//! Bad input never stops a run: a malformed line, a line that is not UTF-8, a page over the size
//! limit or without content is reported with its file and line and skipped; a broken gzip stream
//! ends that file with a message (the pages before it are kept).

pub use crate::record::{parse_fields, parse_object, JsonFields};
use crate::{http, warc};
use neardup::host_of;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

/// One page read from a file.
pub struct OwnedPage {
    pub key: String,
    pub host: String,
    pub time: i64,
    pub body: Body,
}

impl OwnedPage {
    /// Bytes of content the page holds.
    pub fn size(&self) -> usize {
        match &self.body {
            Body::Html(b) => b.len(),
            Body::Text(t) => t.len(),
        }
    }
}

/// How much one chunk of a file may hold: at most `pages` pages and, past its first page, at most
/// `bytes` of content — so that a crawl of real-web pages (50–150 KB each) does not hold thousands
/// of them in memory at once.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// Pages.
    pub pages: usize,
    /// Bytes of content.
    pub bytes: usize,
}

impl Limit {
    /// Is a chunk of `pages` pages holding `bytes` of content full?
    fn full(&self, pages: usize, bytes: usize) -> bool {
        pages >= self.pages || (pages > 0 && bytes >= self.bytes)
    }
}

/// Page content.
pub enum Body {
    Html(Vec<u8>),
    Text(String),
}

impl Body {
    /// Size of the content in bytes.
    pub fn len(&self) -> usize {
        match self {
            Body::Html(h) => h.len(),
            Body::Text(t) => t.len(),
        }
    }

    /// True when the content is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Something wrong with one record, with where it was.
pub struct Skip {
    pub place: String,
    pub reason: String,
}

#[derive(Deserialize)]
struct JsonPage {
    id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    time: Option<i64>,
    #[serde(default)]
    html: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

/// Bytes read from input files so far, across all files (drives the progress bar's ETA).
pub static BYTES_READ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A file reader that counts the bytes it reads into [`BYTES_READ`].
struct Counting(File);

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        BYTES_READ.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens a file, transparently gunzipping it when it starts with the gzip magic bytes.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 2];
    let n = f
        .read(&mut magic)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let f = Counting(File::open(path).with_context(|| format!("cannot open {}", path.display()))?);
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(
            1 << 20,
            flate2::read::MultiGzDecoder::new(f),
        )))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 20, f)))
    }
}

/// Reads JSONL pages from one file, in chunks.
pub struct JsonlReader {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    line: usize,
    max_line: usize,
    done: bool,
    report: FileReport,
}

impl JsonlReader {
    /// Opens `path`; lines longer than `max_line` bytes are skipped.
    pub fn new(path: &Path, max_line: usize) -> Result<Self> {
        Ok(JsonlReader {
            path: path.to_path_buf(),
            reader: open(path)?,
            line: 0,
            max_line,
            done: false,
            report: FileReport {
                path: path.to_path_buf(),
                ..FileReport::default()
            },
        })
    }

    /// Reads one raw line into `buf` (without the newline), discarding what exceeds the limit.
    /// Returns Ok(None) at the end, Ok(Some(true)) for a line that was too long.
    fn raw_line(&mut self, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
        buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                return Ok(if any { Some(too_long) } else { None });
            }
            any = true;
            let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                if buf.len() + take > self.max_line {
                    too_long = true;
                    buf.clear();
                } else {
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.reader.consume(take + usize::from(end));
            if end {
                return Ok(Some(too_long));
            }
        }
    }

    /// The next line as the reader meets it (its text in `buf` for [`Line::Text`]); the line
    /// count moves past every line read, blank or not.
    fn next_line(&mut self, buf: &mut Vec<u8>) -> Line {
        match self.raw_line(buf) {
            Ok(None) => {
                self.done = true;
                Line::End
            }
            Err(e) => {
                self.done = true;
                Line::ReadError(e)
            }
            Ok(Some(too_long)) => {
                self.line += 1;
                if too_long {
                    Line::TooLong
                } else if buf.iter().all(|b| b.is_ascii_whitespace()) {
                    Line::Blank
                } else {
                    Line::Text
                }
            }
        }
    }

    /// Up to `n` pages, with the records that had to be skipped. An empty page list with
    /// `is_done()` means the file is finished.
    pub fn next_chunk(&mut self, limit: Limit) -> (Vec<(String, OwnedPage)>, Vec<Skip>) {
        let mut pages: Vec<(String, OwnedPage)> = Vec::new();
        let mut skips = Vec::new();
        let mut buf = Vec::new();
        let mut bytes = 0;
        let path = self.path.display().to_string();
        let place = |line: usize| format!("{path}:{line}");
        while !limit.full(pages.len(), bytes) && !self.done {
            match self.next_line(&mut buf) {
                Line::End | Line::Blank => {}
                Line::ReadError(e) => skips.push(Skip {
                    place: format!("{path} after line {}", self.line),
                    reason: format!("read error, rest of file skipped: {e}"),
                }),
                Line::TooLong => skips.push(Skip {
                    place: place(self.line),
                    reason: format!("line longer than {} bytes", self.max_line),
                }),
                Line::Text => match parse_page(&buf) {
                    Ok(p) => {
                        bytes += p.size();
                        pages.push((place(self.line), p));
                    }
                    Err(reason) => skips.push(Skip {
                        place: place(self.line),
                        reason,
                    }),
                },
            }
        }
        (pages, skips)
    }

    /// The next records, each `(line, record)` (lines from 1, blank lines skipped), until
    /// `limit` holds (pages: records read whole; bytes: their `size`) or `4 × limit.pages`
    /// lines were given: `record` the line read by `parse`, or why it is no record — the
    /// reasons of [`Self::next_chunk`] (a line over the length limit, or what `parse` says),
    /// and a read error (a broken gzip stream) as the line after the last one read, whose
    /// reason says after which line it came, ending the file. The distributed merge's S1
    /// (SCALEOUT §5) reads its JSONL files so, with [`parse_fields`] or [`parse_object`].
    pub fn next_records<T>(
        &mut self,
        limit: Limit,
        mut parse: impl FnMut(&[u8]) -> std::result::Result<T, String>,
        size: impl Fn(&T) -> usize,
    ) -> Vec<(usize, std::result::Result<T, String>)> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let (mut records, mut bytes) = (0, 0);
        // Lines of errors only are given in bounded numbers too.
        let most = limit.pages.max(1).saturating_mul(4);
        while !limit.full(records, bytes) && out.len() < most && !self.done {
            match self.next_line(&mut buf) {
                Line::End | Line::Blank => {}
                Line::ReadError(e) => out.push((
                    self.line + 1,
                    Err(format!(
                        "read error, rest of file skipped (after line {}): {e}",
                        self.line
                    )),
                )),
                Line::TooLong => out.push((
                    self.line,
                    Err(format!("line longer than {} bytes", self.max_line)),
                )),
                Line::Text => {
                    let record = parse(&buf);
                    if let Ok(r) = &record {
                        records += 1;
                        bytes += size(r);
                    }
                    out.push((self.line, record));
                }
            }
        }
        out
    }

    /// True when the file is finished.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

fn parse_page(line: &[u8]) -> std::result::Result<OwnedPage, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("line is not UTF-8 ({e})"))?;
    let p: JsonPage = serde_json::from_str(text).map_err(|e| format!("malformed JSON: {e}"))?;
    let key =
        p.id.filter(|k| !k.is_empty())
            .or_else(|| p.url.clone().filter(|u| !u.is_empty()))
            .ok_or("no `id` (or `url`)")?;
    let host = p
        .host
        .unwrap_or_else(|| p.url.as_deref().map(host_of).unwrap_or("").to_string());
    let body = match (p.html, p.text) {
        (Some(h), _) => Body::Html(h.into_bytes()),
        (None, Some(t)) => Body::Text(t),
        (None, None) => return Err(format!("page {key} has neither `html` nor `text`")),
    };
    Ok(OwnedPage {
        key,
        host,
        time: p.time.unwrap_or(0),
        body,
    })
}

/// A line of a JSONL file as [`JsonlReader`] meets it.
enum Line {
    /// The end of the file.
    End,
    /// The file cannot be read further (a broken gzip stream).
    ReadError(std::io::Error),
    /// A line over the length limit (its bytes were not kept).
    TooLong,
    /// Whitespace only.
    Blank,
    /// A line to parse.
    Text,
}

/// The longest JSONL line read for pages of at most `max_page` bytes: room for the page
/// escaped in JSON and the other fields.
pub fn max_line(max_page: usize) -> usize {
    max_page.saturating_mul(2).saturating_add(64 * 1024)
}

/// What a reader hands over at a time.
#[derive(Default)]
pub struct Chunk {
    /// Pages, each with where it was read.
    pub pages: Vec<(String, OwnedPage)>,
    /// Records that had to be skipped.
    pub skips: Vec<Skip>,
    /// Revisit records (an unchanged recrawl): where, and the key of the page they revisit.
    pub revisits: Vec<(String, String)>,
    /// Set on the last chunk of a file: what the file held.
    pub report: Option<FileReport>,
}

/// What one input file held, for the ingest summary.
#[derive(Debug, Default)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Records read whole (for JSONL: non-blank lines).
    pub records: u64,
    /// Pages handed to the index.
    pub pages: u64,
    /// Revisit records.
    pub revisits: u64,
    /// Damaged records and damaged compressed data skipped.
    pub damaged: u64,
    /// Records that hold no page, by kind (WARC type, content type).
    pub not_pages: std::collections::BTreeMap<String, u64>,
}

/// A file of pages, read in chunks (on a reader thread of its own).
pub trait PageSource: Send {
    /// The next pages, up to `limit`, with the records skipped on the way.
    fn next_chunk(&mut self, limit: Limit) -> Chunk;
    /// True when the file is finished.
    fn is_done(&self) -> bool;
}

impl PageSource for JsonlReader {
    fn next_chunk(&mut self, limit: Limit) -> Chunk {
        let (pages, skips) = JsonlReader::next_chunk(self, limit);
        self.report.records += (pages.len() + skips.len()) as u64;
        self.report.pages += pages.len() as u64;
        self.report.damaged += skips.len() as u64;
        let report = self.done.then(|| std::mem::take(&mut self.report));
        Chunk {
            pages,
            skips,
            revisits: Vec::new(),
            report,
        }
    }
    fn is_done(&self) -> bool {
        JsonlReader::is_done(self)
    }
}

/// What a crawl file holds, from its first bytes: whether it is gzip-compressed, and its archive
/// format (`None`: not an archive, read as JSONL).
///
/// # Errors
/// When the file cannot be read.
pub fn sniff_file(path: &Path) -> Result<(bool, Option<warc::Format>)> {
    let cannot = || format!("cannot read {}", path.display());
    let mut magic = [0u8; 2];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut magic))
        .with_context(cannot)?;
    let gzip = n == 2 && magic == [0x1f, 0x8b];
    // The first decompressed bytes tell the format.
    let mut head = Vec::new();
    let f = File::open(path).with_context(cannot)?;
    if gzip {
        let _ = flate2::read::GzDecoder::new(f)
            .take(64)
            .read_to_end(&mut head);
    } else {
        f.take(64).read_to_end(&mut head).with_context(cannot)?;
    }
    Ok((gzip, warc::sniff(&head)))
}

/// The number of the record (from 1) a WARC or ARC place names: `… record N` for a record,
/// `… after record N` for damage found after it (0: before the first). `None` for another place.
pub fn record_number(place: &str) -> Option<u64> {
    let (before, n) = place.rsplit_once(' ')?;
    before.ends_with(" record").then_some(())?;
    n.parse().ok()
}

/// Opens a crawl file as JSONL, WARC or ARC, whichever it holds (gzip or plain).
pub fn open_source(path: &Path, max_page: usize) -> Result<Box<dyn PageSource>> {
    let (gzip, format) = sniff_file(path)?;
    match format {
        Some(format) => open_archive(path, gzip, format, max_page),
        None => Ok(Box::new(JsonlReader::new(path, max_line(max_page))?)),
    }
}

/// Opens a web archive whose compression and format [`sniff_file`] told.
pub fn open_archive(
    path: &Path,
    gzip: bool,
    format: warc::Format,
    max_page: usize,
) -> Result<Box<dyn PageSource>> {
    let cannot = || format!("cannot read {}", path.display());
    let raw = BufReader::with_capacity(1 << 20, Counting(File::open(path).with_context(cannot)?));
    let damage = warc::DamageLog::default();
    let r: Box<dyn BufRead + Send> = if gzip {
        // Member by member, so that a damaged member costs only itself.
        Box::new(BufReader::with_capacity(
            1 << 20,
            warc::GzMembers::new(raw, damage.clone()),
        ))
    } else {
        Box::new(raw)
    };
    Ok(Box::new(WarcSource::new(path, r, format, max_page, damage)))
}

/// Response and revisit records of a WARC or ARC file (gzip per record or whole, or plain).
pub struct WarcSource {
    path: PathBuf,
    reader: warc::Reader<Box<dyn BufRead + Send>>,
    index: usize,
    max_page: usize,
    report: FileReport,
    done: bool,
}

impl WarcSource {
    fn new(
        path: &Path,
        r: Box<dyn BufRead + Send>,
        format: warc::Format,
        max_page: usize,
        damage: warc::DamageLog,
    ) -> Self {
        WarcSource {
            path: path.to_path_buf(),
            // Room for the HTTP head and chunk framing around a page at the limit.
            reader: warc::Reader::new(r, format, max_page.saturating_add(1 << 20), damage),
            index: 0,
            max_page,
            report: FileReport {
                path: path.to_path_buf(),
                ..FileReport::default()
            },
            done: false,
        }
    }

    fn damage(&mut self, skips: &mut Vec<Skip>) {
        for d in self.reader.take_damage() {
            self.report.damaged += 1;
            skips.push(Skip {
                place: format!("{} after record {}", self.path.display(), self.index),
                reason: d,
            });
        }
    }

    fn not_a_page(&mut self, kind: String) {
        *self.report.not_pages.entry(kind).or_default() += 1;
    }
}

impl PageSource for WarcSource {
    fn next_chunk(&mut self, limit: Limit) -> Chunk {
        let mut out = Chunk::default();
        let mut bytes = 0;
        while !limit.full(out.pages.len(), bytes) && !self.done {
            let record = self.reader.next_record();
            self.damage(&mut out.skips);
            let Some(record) = record else {
                self.done = true;
                break;
            };
            self.index += 1;
            self.report.records += 1;
            let place = format!("{} record {}", self.path.display(), self.index);
            let kind = record
                .header("WARC-Type")
                .unwrap_or("")
                .to_ascii_lowercase();
            let uri = record
                .header("WARC-Target-URI")
                .map(|u| u.trim_matches(|c| c == '<' || c == '>').to_string())
                .filter(|u| !u.is_empty());
            if kind == "revisit" {
                // WARC 1.1 §6.7: an unchanged recrawl of the page it refers to.
                let target = record
                    .header("WARC-Refers-To-Target-URI")
                    .map(str::to_string)
                    .or(uri);
                self.report.revisits += 1;
                match target {
                    Some(t) => out.revisits.push((place, t)),
                    None => out.skips.push(Skip {
                        place,
                        reason: "revisit record without a target URI".into(),
                    }),
                }
                continue;
            }
            if kind != "response" {
                self.not_a_page(format!("{kind} record"));
                continue;
            }
            let Some(uri) = uri else {
                self.report.damaged += 1;
                out.skips.push(Skip {
                    place,
                    reason: "response record without WARC-Target-URI".into(),
                });
                continue;
            };
            if let Some(len) = record.oversize {
                out.skips.push(Skip {
                    place,
                    reason: format!("page over the size limit ({len} bytes or more)"),
                });
                continue;
            }
            if !record.block.starts_with(b"HTTP") {
                // dns: records, whois and other non-HTTP responses.
                let ctype = record.header("Content-Type").unwrap_or("no type");
                self.not_a_page(ctype.split(';').next().unwrap_or("").trim().to_string());
                continue;
            }
            let body = match http::page(&record.block, self.max_page) {
                Ok(http::Payload::Html(h)) => Body::Html(h),
                Ok(http::Payload::Text(t)) => Body::Text(t),
                Err(http::Reject::NotAPage(t)) => {
                    self.not_a_page(t);
                    continue;
                }
                Err(e) => {
                    out.skips.push(Skip {
                        place,
                        reason: e.to_string(),
                    });
                    continue;
                }
            };
            let time = record
                .header("WARC-Date")
                .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok())
                .map_or(0, |d| d.timestamp());
            let host = host_of(&uri).to_string();
            self.report.pages += 1;
            let page = OwnedPage {
                key: uri,
                host,
                time,
                body,
            };
            bytes += page.size();
            out.pages.push((place, page));
        }
        if self.done {
            out.report = Some(std::mem::take(&mut self.report));
        }
        out
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

/// Reads a list of keys, one a line (blank lines and `#` comments ignored).
pub fn read_key_list(path: &Path) -> Result<Vec<String>> {
    let r = open(path)?;
    let mut keys = Vec::new();
    for line in r.lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        let k = line.trim();
        if !k.is_empty() && !k.starts_with('#') {
            keys.push(k.to_string());
        }
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_numbers_are_read_back_from_places() {
        assert_eq!(record_number("/d/a b.warc.gz record 12"), Some(12));
        assert_eq!(record_number("/d/a.warc after record 0"), Some(0));
        assert_eq!(record_number("/d/a.jsonl:3"), None);
        assert_eq!(record_number("/d/record x"), None);
    }

    #[test]
    fn chunks_stop_at_their_byte_budget_but_hold_at_least_one_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        let html = "x".repeat(1000);
        let lines: String = (0..10)
            .map(|i| format!("{{\"id\": \"p{i}\", \"html\": \"{html}\"}}\n"))
            .collect();
        std::fs::write(&path, lines).unwrap();
        let mut r = JsonlReader::new(&path, 1 << 20).unwrap();
        let sizes: Vec<usize> = std::iter::from_fn(|| {
            (!r.is_done()).then(|| {
                r.next_chunk(Limit {
                    pages: 100,
                    bytes: 2500,
                })
                .0
                .len()
            })
        })
        .collect();
        assert_eq!(sizes, vec![3, 3, 3, 1]);
        let mut r = JsonlReader::new(&path, 1 << 20).unwrap();
        let one = r.next_chunk(Limit { pages: 4, bytes: 1 }).0;
        assert_eq!(one.len(), 1, "a page larger than the budget still comes");
    }

    #[test]
    fn hosts() {
        assert_eq!(host_of("https://news.a.cn/x/y?z"), "news.a.cn");
        assert_eq!(host_of("a.b"), "a.b");
    }

    #[test]
    fn records_are_numbered_by_line_with_their_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        let long = format!("{{\"id\": \"l\", \"text\": \"{}\"}}", "y".repeat(200));
        let lines = [
            r#"{"id": "a", "text": "t"}"#,
            "",
            "  \t",
            "{bad",
            &long,
            r#"{"id": "b", "text": "t"}"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let mut r = JsonlReader::new(&path, 100).unwrap();
        let limit = Limit {
            pages: 10,
            bytes: 1 << 20,
        };
        let got = r.next_records(limit, parse_fields, |_| 0);
        let got: Vec<(usize, bool)> = got.iter().map(|(n, r)| (*n, r.is_ok())).collect();
        assert_eq!(got, vec![(1, true), (4, false), (5, false), (6, true)]);
        assert!(r.is_done());
        let mut r = JsonlReader::new(&path, 100).unwrap();
        let got = r.next_records(limit, parse_fields, |_| 0);
        assert_eq!(
            got[2].1.as_ref().err().unwrap(),
            "line longer than 100 bytes"
        );
        // A gzip stream cut short: the lines before it, then the error after the last one.
        let gz = dir.path().join("cut");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for i in 0..2000 {
            std::io::Write::write_all(
                &mut e,
                format!("{{\"id\": \"p{i}\", \"text\": \"{i} {i}\"}}\n").as_bytes(),
            )
            .unwrap();
        }
        let bytes = e.finish().unwrap();
        std::fs::write(&gz, &bytes[..bytes.len() / 2]).unwrap();
        let mut r = JsonlReader::new(&gz, 1 << 20).unwrap();
        let mut all = Vec::new();
        while !r.is_done() {
            all.extend(r.next_records(limit, parse_fields, |_| 0));
        }
        let (last, reason) = all.last().unwrap();
        let read = all.len() - 1;
        assert!(read > 0 && all[..read].iter().all(|(_, r)| r.is_ok()));
        assert_eq!(*last, read + 1);
        assert!(reason.as_ref().err().unwrap().starts_with(&format!(
            "read error, rest of file skipped (after line {read}): "
        )));
    }

    #[test]
    fn bad_lines_are_reasons() {
        assert!(parse_page(b"{not json").is_err());
        assert!(parse_page(b"{\"id\":\"x\"}").is_err());
        assert!(parse_page(b"\xff\xfe").is_err());
        assert!(parse_page(b"{\"id\":\"x\",\"text\":\"t\"}").is_ok());
    }
}
