//! Reading pages from crawl files: JSONL (gzip or plain, detected by magic bytes).
//!
//! Bad input never stops a run: a malformed line, a line that is not UTF-8, a page over the size
//! limit or without content is reported with its file and line and skipped; a broken gzip stream
//! ends that file with a message (the pages before it are kept).

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

/// The host part of a URL (`https://a.b/c` → `a.b`).
pub fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or("")
}

/// Opens a file, transparently gunzipping it when it starts with the gzip magic bytes.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 2];
    let n = f
        .read(&mut magic)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
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
