//! Records of web-archive files: WARC 1.0/1.1 and the Internet Archive's older ARC format,
//! plain, gzip-compressed per record, or gzip-compressed whole.
//!
//! Every valid record is read, and a damaged one costs only itself: a record whose header is
//! malformed or whose block ends early is reported, and the reader resynchronizes on the next
//! line that starts a record (`WARC/1.` or an ARC header line). A damaged gzip member is
//! skipped the same way: decoding resumes at the next gzip member header in the raw bytes.
//! Stray bytes between records (a `Content-Length` a few bytes off, as some writers leave) are
//! skipped without losing a record.
//!
//! Formats: WARC 1.1 (ISO 28500:2017) §4–§6, WARC 1.0 (ISO 28500:2009); ARC 1.0 and 1.1 as the
//! Internet Archive documents them (a version block `filedesc://…` first, then one header line
//! per record — 5 fields in version 1, 10 in version 2 — whose last field is the block's length).

use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

/// Damage reports shared between a decoder and the record reader above it.
pub type DamageLog = Arc<Mutex<Vec<String>>>;

fn log(log: &DamageLog, what: String) {
    if let Ok(mut l) = log.lock() {
        l.push(what);
    }
}

/// The longest header line read; longer lines are damage.
const MAX_LINE: usize = 64 * 1024;
/// The most header lines of one WARC record.
const MAX_HEADERS: usize = 1024;

/// One record: its headers and its block (the HTTP response of a `response` record).
#[derive(Debug)]
pub struct Record {
    /// Named header fields (for ARC records: `WARC-Type`, `WARC-Target-URI`, `WARC-Date`,
    /// `Content-Type`, as a WARC reader would present them).
    pub headers: Vec<(String, String)>,
    /// The block; empty when it was longer than the reader's limit (then `oversize` is set).
    pub block: Vec<u8>,
    /// The declared length of a block that was over the limit and not kept.
    pub oversize: Option<u64>,
}

impl Record {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Decodes a stream of gzip members one at a time. A member is decoded whole (up to
/// [`VERIFY_MEMBER`] bytes) and handed on only once its checksum holds, so a damaged member —
/// whose deflate data can decode to plausible garbage, copies of earlier records included —
/// never reaches the record reader: the damage is logged, and decoding resumes at the next gzip
/// header (`1f 8b 08`) in the raw bytes. WARC writers compress each record as a member of its
/// own (WARC 1.1 Annex D), so a member is one record. A longer member (a file gzipped whole) is
/// handed on as it decodes, and damage in it is caught by the record reader's checks.
pub struct GzMembers<R: BufRead> {
    decoder: Option<flate2::bufread::GzDecoder<R>>,
    damage: DamageLog,
    /// Verified bytes of the current member not handed on yet.
    out: Vec<u8>,
    pos: usize,
    /// The current member outgrew [`VERIFY_MEMBER`]: stream the rest of it.
    streaming: bool,
}

/// Members up to this many decoded bytes are verified before their bytes are handed on.
pub const VERIFY_MEMBER: usize = 64 << 20;

impl<R: BufRead> GzMembers<R> {
    /// Decodes the gzip members of `raw`, logging damage to `damage`.
    pub fn new(raw: R, damage: DamageLog) -> Self {
        GzMembers {
            decoder: Some(flate2::bufread::GzDecoder::new(raw)),
            damage,
            out: Vec::new(),
            pos: 0,
            streaming: false,
        }
    }

    /// After the end of a member (or its damage): the next member's decoder, if any input is
    /// left.
    fn next_member(&mut self, damaged: bool, skip_first: bool) -> io::Result<()> {
        self.streaming = false;
        let Some(dec) = self.decoder.take() else {
            return Ok(());
        };
        let mut raw = dec.into_inner();
        let more = if damaged {
            seek_gzip_header(&mut raw, skip_first)?
        } else {
            !raw.fill_buf()?.is_empty()
        };
        if more {
            self.decoder = Some(flate2::bufread::GzDecoder::new(raw));
        }
        Ok(())
    }

    /// Decodes the next member into `out` (verified), or starts streaming a long one.
    fn fill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.pos = 0;
        while let Some(dec) = self.decoder.as_mut() {
            let mut buf = [0u8; 64 * 1024];
            match dec.read(&mut buf) {
                Ok(0) => {
                    self.next_member(false, false)?;
                    if !self.out.is_empty() {
                        return Ok(());
                    }
                }
                Ok(n) => {
                    self.out.extend_from_slice(&buf[..n]);
                    if self.out.len() > VERIFY_MEMBER {
                        self.streaming = true;
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    log(
                        &self.damage,
                        format!(
                            "damaged gzip member skipped ({e}; {} bytes decoded)",
                            self.out.len()
                        ),
                    );
                    // A member that failed before giving a byte may sit on its own header:
                    // step past it so the search cannot stop there again.
                    let empty = self.out.is_empty();
                    self.out.clear();
                    self.next_member(true, empty)?;
                }
            }
        }
        Ok(())
    }
}

/// Skips raw bytes up to the next gzip member header (past the current position's first byte
/// when `skip_first`: the start of a member that failed at once); false at the end of the input.
fn seek_gzip_header<R: BufRead>(raw: &mut R, mut skip_first: bool) -> io::Result<bool> {
    loop {
        let buf = raw.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let from = usize::from(skip_first);
        skip_first = false;
        if let Some(p) = buf
            .get(from..)
            .unwrap_or(&[])
            .windows(3)
            .position(|w| w == [0x1f, 0x8b, 0x08])
        {
            raw.consume(p + from);
            return Ok(true);
        }
        // Keep the last two bytes (a header may straddle two buffers) unless that is all.
        let n = buf.len();
        if n <= 2 {
            raw.consume(n);
            // Whatever is left is too short for a header.
            let rest = raw.fill_buf()?.len();
            if rest == 0 {
                return Ok(false);
            }
            continue;
        }
        raw.consume(n - 2);
    }
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pos < self.out.len() {
                let n = (self.out.len() - self.pos).min(out.len());
                out[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.streaming {
                // The rest of a long member, as it decodes.
                let Some(dec) = self.decoder.as_mut() else {
                    return Ok(0);
                };
                match dec.read(out) {
                    Ok(0) => self.next_member(false, false)?,
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        log(&self.damage, format!("damaged gzip data skipped ({e})"));
                        self.next_member(true, false)?;
                    }
                }
                continue;
            }
            if self.decoder.is_none() {
                return Ok(0);
            }
            self.fill()?;
        }
    }
}

/// The archive format of a file, told by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// WARC 1.0 or 1.1.
    Warc,
    /// ARC 1.0 or 1.1.
    Arc,
}

/// Tells the format from the first decompressed bytes: `WARC/` or `filedesc://`.
pub fn sniff(head: &[u8]) -> Option<Format> {
    let n = head
        .iter()
        .take_while(|&&c| c == b'\r' || c == b'\n')
        .count();
    let head = &head[n..];
    if head.starts_with(b"WARC/") {
        Some(Format::Warc)
    } else if head.starts_with(b"filedesc://") {
        Some(Format::Arc)
    } else {
        None
    }
}

/// A reader with bytes pushed back in front of it.
struct Pushback<R> {
    back: Vec<u8>,
    pos: usize,
    r: R,
}

impl<R: BufRead> Pushback<R> {
    /// Puts `bytes` in front of what is left to read.
    fn unread(&mut self, bytes: &[u8]) {
        let mut back = bytes.to_vec();
        back.extend_from_slice(&self.back[self.pos..]);
        self.back = back;
        self.pos = 0;
    }
}

impl<R: BufRead> Read for Pushback<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Pushback<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos < self.back.len() {
            Ok(&self.back[self.pos..])
        } else {
            self.r.fill_buf()
        }
    }
    fn consume(&mut self, n: usize) {
        if self.pos < self.back.len() {
            self.pos = (self.pos + n).min(self.back.len());
            if self.pos == self.back.len() {
                self.back.clear();
                self.pos = 0;
            }
        } else {
            self.r.consume(n);
        }
    }
}

/// Where a WARC record header starts inside `block`, when a record's `Content-Length` runs
/// past its real end (a writer that died mid-record, a wrong length) into the next record: a
/// `WARC/1.0` or `WARC/1.1` line followed by a `Name: value` field line. An archived page that
/// quotes a WARC header verbatim would be cut there too; that is the price of not losing the
/// records after a damaged one.
fn next_record_inside(block: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = block[from..].windows(7).position(|w| w == b"WARC/1.") {
        let at = from + p;
        let rest = &block[at..];
        let version_line = rest.starts_with(b"WARC/1.0\r\n") || rest.starts_with(b"WARC/1.1\r\n");
        if version_line && at > 0 {
            let field = &rest[10..];
            let line_end = field
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(field.len());
            let line = &field[..line_end];
            let colon = line.iter().position(|&b| b == b':');
            if colon.is_some_and(|c| {
                c > 0
                    && line[..c]
                        .iter()
                        .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
            }) {
                return Some(at);
            }
        }
        from = at + 7;
    }
    None
}

/// Reads the records of one archive file. Damage is logged, not returned: after each
/// [`Reader::next`], [`Reader::take_damage`] gives what was skipped on the way.
pub struct Reader<R: BufRead> {
    r: Pushback<R>,
    format: Format,
    /// Blocks longer than this are not kept (their bytes are skipped).
    limit: usize,
    damage: DamageLog,
    done: bool,
}

impl<R: BufRead> Reader<R> {
    /// Reads records of `format` from `r`, keeping blocks of at most `limit` bytes; `damage`
    /// is the log shared with the decoder under `r`, if any.
    pub fn new(r: R, format: Format, limit: usize, damage: DamageLog) -> Self {
        Reader {
            r: Pushback {
                back: Vec::new(),
                pos: 0,
                r,
            },
            format,
            limit,
            damage,
            done: false,
        }
    }

    /// What was skipped since the last call: damaged records and damaged compressed data.
    pub fn take_damage(&mut self) -> Vec<String> {
        self.damage
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default()
    }

    /// One line without its line end (at most [`MAX_LINE`] bytes kept); `None` at the end.
    fn line(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut line = Vec::new();
        let mut any = false;
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            any = true;
            let (take, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = MAX_LINE.saturating_sub(line.len());
            line.extend_from_slice(&buf[..take.min(room)]);
            self.r.consume(take);
            if end {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        Ok(Some(line))
    }

    /// True when `line` starts a record of this reader's format.
    fn starts_record(&self, line: &[u8]) -> bool {
        match self.format {
            Format::Warc => line.starts_with(b"WARC/1.") || line.starts_with(b"WARC/0."),
            Format::Arc => arc_header(line).is_some(),
        }
    }

    /// The next whole record, or `None` at the end of the file. Damaged records and stray bytes
    /// on the way are skipped and logged ([`Reader::take_damage`]).
    pub fn next_record(&mut self) -> Option<Record> {
        while !self.done {
            match self.read_record() {
                Ok(Some(r)) => return Some(r),
                Ok(None) => self.done = true,
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    log(&self.damage, e.to_string());
                }
                Err(e) => {
                    log(
                        &self.damage,
                        format!("read error, rest of file skipped: {e}"),
                    );
                    self.done = true;
                }
            }
        }
        None
    }

    /// One record: `Ok(None)` at the end, `InvalidData` for a damaged record (skipped).
    fn read_record(&mut self) -> io::Result<Option<Record>> {
        // Blank lines between records are normal; other bytes up to the next record header are
        // stray: a little (a writer's Content-Length a few bytes short) loses no record, more
        // means a record whose header was lost.
        let mut stray = 0usize;
        let first = loop {
            let Some(line) = self.line()? else {
                if stray > STRAY_OK {
                    log(
                        &self.damage,
                        format!("{stray} bytes at the end that are not a record"),
                    );
                }
                return Ok(None);
            };
            if line.is_empty() {
                continue;
            }
            if self.starts_record(&line) {
                break line;
            }
            stray += line.len() + 1;
        };
        if stray > STRAY_OK {
            log(
                &self.damage,
                format!("damaged record: {stray} bytes without a record header skipped"),
            );
        }
        match self.format {
            Format::Warc => self.warc_record(&first).map(Some),
            Format::Arc => self.arc_record(&first).map(Some),
        }
    }

    /// Reads `len` bytes of block, or skips them when over the limit.
    fn block(&mut self, len: u64) -> io::Result<(Vec<u8>, Option<u64>)> {
        if len > self.limit as u64 {
            let skipped = io::copy(&mut (&mut self.r).take(len), &mut io::sink())?;
            if skipped < len {
                return Err(damaged(format!(
                    "truncated record: its block ends after {skipped} of {len} bytes"
                )));
            }
            return Ok((Vec::new(), Some(len)));
        }
        let mut block = Vec::with_capacity(len as usize);
        (&mut self.r).take(len).read_to_end(&mut block)?;
        if (block.len() as u64) < len {
            return Err(damaged(format!(
                "truncated record: its block ends after {} of {len} bytes",
                block.len()
            )));
        }
        Ok((block, None))
    }

    /// A WARC record whose version line is `first` (WARC 1.1 §4: version, named fields, a
    /// blank line, `Content-Length` bytes of block, two CRLFs).
    fn warc_record(&mut self, first: &[u8]) -> io::Result<Record> {
        let mut headers: Vec<(String, String)> = Vec::new();
        loop {
            let Some(line) = self.line()? else {
                return Err(damaged("truncated record: its header has no end".into()));
            };
            if line.is_empty() {
                break;
            }
            if headers.len() >= MAX_HEADERS {
                return Err(damaged("damaged record: too many header lines".into()));
            }
            if self.starts_record(&line) {
                // A new record begins inside this one's header: this one is lost, and the
                // line is read again as the next record's start.
                let mut again = line;
                again.push(b'\n');
                self.r.unread(&again);
                return Err(damaged("damaged record: its header has no end".into()));
            }
            let text = String::from_utf8_lossy(&line);
            match text.split_once(':') {
                Some((k, v)) => headers.push((k.trim().to_string(), v.trim().to_string())),
                None if (line[0] == b' ' || line[0] == b'\t') && !headers.is_empty() => {
                    // A folded continuation line (WARC 1.1 §4 allows them).
                    if let Some(last) = headers.last_mut() {
                        if !last.1.is_empty() {
                            last.1.push(' ');
                        }
                        last.1.push_str(text.trim());
                    }
                }
                None => {
                    return Err(damaged(format!(
                        "damaged record: header line without a colon ({})",
                        String::from_utf8_lossy(&line[..line.len().min(40)])
                    )))
                }
            }
        }
        let _ = first;
        let len = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("Content-Length"))
            .ok_or_else(|| damaged("damaged record: no Content-Length".into()))?
            .1
            .parse::<u64>()
            .map_err(|_| damaged("damaged record: Content-Length is not a number".into()))?;
        let (mut block, oversize) = self.block(len)?;
        if let Some(at) = next_record_inside(&block) {
            // The next record starts inside this block: this one's Content-Length is wrong,
            // so its end is unknown. Give the next record back and lose this one only.
            self.r.unread(&block[at..]);
            block.truncate(at);
            return Err(damaged(
                "damaged record: its Content-Length runs into the next record".into(),
            ));
        }
        Ok(Record {
            headers,
            block,
            oversize,
        })
    }

    /// An ARC record whose header line is `first`, presented with WARC header names.
    fn arc_record(&mut self, first: &[u8]) -> io::Result<Record> {
        let Some(h) = arc_header(first) else {
            return Err(damaged("damaged record: malformed ARC header line".into()));
        };
        let (block, oversize) = self.block(h.length)?;
        let kind = if h.url.starts_with("filedesc:") {
            "warcinfo"
        } else {
            "response"
        };
        let mut headers = vec![
            ("WARC-Type".to_string(), kind.to_string()),
            ("WARC-Target-URI".to_string(), h.url),
            ("Content-Type".to_string(), h.content_type),
        ];
        if let Some(d) = arc_date(&h.date) {
            headers.push(("WARC-Date".to_string(), d));
        }
        Ok(Record {
            headers,
            block,
            oversize,
        })
    }
}

/// Stray bytes between two records that are skipped without a report.
const STRAY_OK: usize = 64;

fn damaged(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// The fields of an ARC record header line that matter here.
struct ArcHeader {
    url: String,
    date: String,
    content_type: String,
    length: u64,
}

/// Parses an ARC header line: `URL IP DATE TYPE LENGTH` (version 1) or `URL IP DATE TYPE CODE
/// CHECKSUM LOCATION OFFSET FILENAME LENGTH` (version 2); the date has 14 digits.
fn arc_header(line: &[u8]) -> Option<ArcHeader> {
    let text = std::str::from_utf8(line).ok()?;
    let f: Vec<&str> = text.split(' ').filter(|s| !s.is_empty()).collect();
    if f.len() != 5 && f.len() != 10 {
        return None;
    }
    let date = f[2];
    if date.len() < 12 || !date.bytes().all(|b| b.is_ascii_digit()) || !f[0].contains(':') {
        return None;
    }
    let length = f[f.len() - 1].parse().ok()?;
    Some(ArcHeader {
        url: f[0].to_string(),
        date: date.to_string(),
        content_type: f[3].to_string(),
        length,
    })
}

/// `YYYYMMDDhhmmss` → `YYYY-MM-DDThh:mm:ssZ`.
fn arc_date(d: &str) -> Option<String> {
    let g = |a: usize, b: usize| d.get(a..b).unwrap_or("00");
    (d.len() >= 8).then(|| {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            g(0, 4),
            g(4, 6),
            g(6, 8),
            g(8, 10),
            g(10, 12),
            g(12, 14)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn records(bytes: &[u8], gz: bool) -> (Vec<Record>, Vec<String>) {
        let log = DamageLog::default();
        let r: Box<dyn BufRead> = if gz {
            Box::new(io::BufReader::new(GzMembers::new(bytes, log.clone())))
        } else {
            Box::new(bytes)
        };
        let format = Format::Warc;
        let mut reader = Reader::new(r, format, 1 << 20, log);
        let mut out = Vec::new();
        let mut damage = Vec::new();
        while let Some(rec) = reader.next_record() {
            out.push(rec);
            damage.extend(reader.take_damage());
        }
        damage.extend(reader.take_damage());
        (out, damage)
    }

    fn warc(uri: &str, block: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    }

    #[test]
    fn formats_are_sniffed() {
        assert_eq!(sniff(b"WARC/1.1\r\n"), Some(Format::Warc));
        assert_eq!(sniff(b"\r\nWARC/1.0\r\n"), Some(Format::Warc));
        assert_eq!(
            sniff(b"filedesc://x.arc 0.0.0.0 20140101000000 text/plain 76"),
            Some(Format::Arc)
        );
        assert_eq!(sniff(b"{\"id\": 1}"), None);
    }

    #[test]
    fn arc_header_lines() {
        let h = arc_header(b"http://a.example/ 1.2.3.4 20140101120000 text/html 1234").unwrap();
        assert_eq!((h.url.as_str(), h.length), ("http://a.example/", 1234));
        assert_eq!(arc_date(&h.date).unwrap(), "2014-01-01T12:00:00Z");
        assert!(arc_header(b"http://a.example/ 1.2.3.4 20140101120000 text/html -1").is_none());
        assert!(arc_header(b"URL IP-address Archive-date Content-type Archive-length").is_none());
    }

    #[test]
    fn folded_headers_and_stray_newlines() {
        let mut f = String::from("\r\n");
        f.push_str(&warc("http://a/", "x"));
        f.push_str("\r\n\r\n");
        f.push_str(
            &warc("http://b/", "yy").replace("WARC-Type: response", "WARC-Type:\r\n  response"),
        );
        let (recs, damage) = records(f.as_bytes(), false);
        assert_eq!(recs.len(), 2, "{damage:?}");
        assert_eq!(recs[1].header("warc-type"), Some("response"));
        assert_eq!(recs[1].block, b"yy");
        assert!(damage.is_empty(), "{damage:?}");
    }

    #[test]
    fn damaged_gzip_member_costs_only_itself() {
        let mut bytes = Vec::new();
        for (i, u) in ["http://a/", "http://b/", "http://c/"].iter().enumerate() {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(warc(u, &"text ".repeat(50)).as_bytes())
                .unwrap();
            let mut m = e.finish().unwrap();
            if i == 1 {
                let mid = m.len() / 2;
                m[mid] ^= 0xff;
                m[mid + 1] ^= 0xff;
            }
            bytes.extend(m);
        }
        let (recs, damage) = records(&bytes, true);
        let uris: Vec<_> = recs
            .iter()
            .filter_map(|r| r.header("WARC-Target-URI"))
            .collect();
        assert_eq!(uris, ["http://a/", "http://c/"], "{damage:?}");
        assert!(!damage.is_empty());
    }

    #[test]
    fn a_length_past_the_record_end_gives_the_next_record_back() {
        let a = warc("http://a/", "short body");
        let a = a.replace("Content-Length: 10", "Content-Length: 60");
        let f = format!("{a}{}", warc("http://b/", "next"));
        let (recs, damage) = records(f.as_bytes(), false);
        let uris: Vec<_> = recs
            .iter()
            .filter_map(|r| r.header("WARC-Target-URI"))
            .collect();
        assert_eq!(uris, ["http://b/"]);
        assert_eq!(damage.len(), 1, "{damage:?}");
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let base = format!("{}{}", warc("http://a/", "one"), warc("http://b/", "two"));
        for round in 0..300 {
            let mut b = base.clone().into_bytes();
            for _ in 0..(round % 20 + 1) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x as usize) % b.len();
                b[i] = (x >> 32) as u8;
            }
            let (recs, _) = records(&b, false);
            assert!(recs.len() <= 2);
            let (recs, _) = records(&b, true);
            assert!(recs.len() <= 2);
        }
    }
}
