//! Reading pages from crawl files: JSONL or WARC, gzip or plain (gzip detected by its magic
//! bytes, WARC by its `WARC/` version line).
//!
//! Bad input never stops a run: a malformed line, a line that is not UTF-8, a page over the size
//! limit or without content is reported with its file and line and skipped; a broken gzip stream
//! ends that file with a message (the pages before it are kept).

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

    /// Up to `n` pages, with the records that had to be skipped. An empty page list with
    /// `is_done()` means the file is finished.
    pub fn next_chunk(&mut self, n: usize) -> (Vec<(String, OwnedPage)>, Vec<Skip>) {
        let mut pages = Vec::new();
        let mut skips = Vec::new();
        let mut buf = Vec::new();
        while pages.len() < n && !self.done {
            let place = format!("{}:{}", self.path.display(), self.line + 1);
            match self.raw_line(&mut buf) {
                Ok(None) => self.done = true,
                Err(e) => {
                    skips.push(Skip {
                        place: format!("{} after line {}", self.path.display(), self.line),
                        reason: format!("read error, rest of file skipped: {e}"),
                    });
                    self.done = true;
                }
                Ok(Some(too_long)) => {
                    self.line += 1;
                    if too_long {
                        skips.push(Skip {
                            place,
                            reason: format!("line longer than {} bytes", self.max_line),
                        });
                        continue;
                    }
                    if buf.iter().all(|b| b.is_ascii_whitespace()) {
                        continue;
                    }
                    match parse_page(&buf) {
                        Ok(p) => pages.push((place, p)),
                        Err(reason) => skips.push(Skip { place, reason }),
                    }
                }
            }
        }
        (pages, skips)
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
            .or_else(|| p.url.clone())
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

/// Pages read together, with the records that had to be skipped.
pub type Chunk = (Vec<(String, OwnedPage)>, Vec<Skip>);

/// A file of pages, read in chunks (on a reader thread of its own).
pub trait PageSource: Send {
    /// Up to `n` pages, with the records that had to be skipped.
    fn next_chunk(&mut self, n: usize) -> (Vec<(String, OwnedPage)>, Vec<Skip>);
    /// True when the file is finished.
    fn is_done(&self) -> bool;
}

impl PageSource for JsonlReader {
    fn next_chunk(&mut self, n: usize) -> (Vec<(String, OwnedPage)>, Vec<Skip>) {
        JsonlReader::next_chunk(self, n)
    }
    fn is_done(&self) -> bool {
        JsonlReader::is_done(self)
    }
}

/// Opens a crawl file as JSONL or WARC, whichever it holds.
pub fn open_source(path: &Path, max_page: usize) -> Result<Box<dyn PageSource>> {
    let mut r = open(path)?;
    let head = r
        .fill_buf()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if head.starts_with(b"WARC/") {
        Ok(Box::new(WarcSource::new(path, r, max_page)))
    } else {
        Ok(Box::new(JsonlReader::new(path, max_page * 2 + 64 * 1024)?))
    }
}

/// Response records of a WARC file (gzip per record or whole, or plain).
pub struct WarcSource {
    path: PathBuf,
    records: warc::RecordIter<Box<dyn BufRead + Send>>,
    index: usize,
    max_page: usize,
    done: bool,
}

impl WarcSource {
    fn new(path: &Path, r: Box<dyn BufRead + Send>, max_page: usize) -> Self {
        WarcSource {
            path: path.to_path_buf(),
            records: warc::WarcReader::new(r).iter_records(),
            index: 0,
            max_page,
            done: false,
        }
    }
}

/// Splits an HTTP response into (headers, payload); `None` when it has no header block.
fn split_http(body: &[u8]) -> Option<(&str, &[u8])> {
    let end = body
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| {
            body.windows(2)
                .position(|w| w == b"\n\n")
                .map(|p| (p, p + 2))
        })?;
    let head = std::str::from_utf8(&body[..end.0]).ok()?;
    Some((head, &body[end.1..]))
}

fn http_header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

impl PageSource for WarcSource {
    fn next_chunk(&mut self, n: usize) -> (Vec<(String, OwnedPage)>, Vec<Skip>) {
        use warc::{RecordType, WarcHeader};
        let mut pages = Vec::new();
        let mut skips = Vec::new();
        while pages.len() < n && !self.done {
            let Some(item) = self.records.next() else {
                self.done = true;
                break;
            };
            self.index += 1;
            let place = format!("{} record {}", self.path.display(), self.index);
            let record = match item {
                Ok(r) => r,
                Err(e) => {
                    // The reader cannot find the next record after a broken one.
                    skips.push(Skip {
                        place,
                        reason: format!("broken or truncated WARC, rest of file skipped: {e}"),
                    });
                    self.done = true;
                    break;
                }
            };
            if *record.warc_type() != RecordType::Response {
                continue;
            }
            let Some(uri) = record.header(WarcHeader::TargetURI).map(|u| u.into_owned()) else {
                skips.push(Skip {
                    place,
                    reason: "response record without WARC-Target-URI".into(),
                });
                continue;
            };
            let time = record.date().timestamp();
            let body = record.body();
            if body.len() > self.max_page {
                skips.push(Skip {
                    place,
                    reason: format!("page of {} bytes is over the limit", body.len()),
                });
                continue;
            }
            let Some((head, payload)) = split_http(body) else {
                skips.push(Skip {
                    place,
                    reason: "response without an HTTP header block".into(),
                });
                continue;
            };
            let ctype = http_header(head, "content-type")
                .unwrap_or("text/html")
                .to_ascii_lowercase();
            if !(ctype.contains("html") || ctype.starts_with("text/")) {
                continue; // images, scripts, PDFs: not pages
            }
            if let Some(enc) = http_header(head, "content-encoding")
                .filter(|e| !e.eq_ignore_ascii_case("identity"))
            {
                skips.push(Skip {
                    place,
                    reason: format!("unsupported content-encoding {enc}"),
                });
                continue;
            }
            if http_header(head, "transfer-encoding")
                .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
            {
                skips.push(Skip {
                    place,
                    reason: "chunked transfer-encoding".into(),
                });
                continue;
            }
            let host = host_of(&uri).to_string();
            let body = if ctype.contains("html") {
                Body::Html(payload.to_vec())
            } else {
                Body::Text(String::from_utf8_lossy(payload).into_owned())
            };
            pages.push((
                place,
                OwnedPage {
                    key: uri,
                    host,
                    time,
                    body,
                },
            ));
        }
        (pages, skips)
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
    fn hosts() {
        assert_eq!(host_of("https://news.a.cn/x/y?z"), "news.a.cn");
        assert_eq!(host_of("a.b"), "a.b");
    }

    #[test]
    fn bad_lines_are_reasons() {
        assert!(parse_page(b"{not json").is_err());
        assert!(parse_page(b"{\"id\":\"x\"}").is_err());
        assert!(parse_page(b"\xff\xfe").is_err());
        assert!(parse_page(b"{\"id\":\"x\",\"text\":\"t\"}").is_ok());
    }
}
