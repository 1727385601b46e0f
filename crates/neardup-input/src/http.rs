//! HTTP responses as crawlers store them in WARC `response` records, decoded as a browser
//! would: `Transfer-Encoding: chunked` de-chunked, `Content-Encoding` (gzip, x-gzip, deflate,
//! br, zstd) decoded, and the charset of the `Content-Type` header honoured before the page's
//! own `<meta charset>` (the HTML standard's order: byte-order mark, transport layer, meta).

use std::io::Read;

/// A response's payload, ready for the index.
pub enum Payload {
    /// An HTML page (`text/html`, `application/xhtml+xml`, or no type given and markup).
    Html(Vec<u8>),
    /// A plain-text document (`text/plain`, `text/markdown`, reStructuredText).
    Text(String),
}

/// Plain-text document types taken as pages (style sheets, scripts and data are not).
const TEXT_TYPES: &[&str] = &[
    "text/plain",
    "text/markdown",
    "text/x-markdown",
    "text/x-rst",
    "text/prs.fallenstein.rst",
];

/// Why a response gives no page.
#[derive(Debug, PartialEq, Eq)]
pub enum Reject {
    /// Not a page: the content type (e.g. `image/png`).
    NotAPage(String),
    /// The record's block is not an HTTP response.
    NotHttp,
    /// The body could not be decoded.
    Undecodable(String),
    /// The decoded body is over the size limit.
    TooLarge(usize),
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reject::NotAPage(t) => write!(f, "not a page: {t}"),
            Reject::NotHttp => write!(f, "response without an HTTP header block"),
            Reject::Undecodable(e) => write!(f, "undecodable body: {e}"),
            Reject::TooLarge(n) => write!(f, "page over the size limit ({n} bytes or more)"),
        }
    }
}

/// The HTTP status line and header fields of `block`, and where the body starts.
struct Head {
    headers: Vec<(String, String)>,
    body_start: usize,
}

impl Head {
    fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the response head with `httparse`, growing the header table when a response has
/// many fields; a status line without a reason phrase is accepted. A head that `httparse`
/// refuses but that starts like an HTTP response (a mangled status line, a header line without
/// a colon) is read leniently, as web-archive readers do: the status line is skipped and the
/// fields are the lines of the form `name: value` up to the first blank line.
fn parse_head(block: &[u8]) -> Option<Head> {
    let mut n = 64;
    loop {
        let mut fields = vec![httparse::EMPTY_HEADER; n];
        let mut resp = httparse::Response::new(&mut fields);
        match resp.parse(block) {
            Ok(httparse::Status::Complete(body_start)) => {
                let headers = resp
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_string(),
                            String::from_utf8_lossy(h.value).trim().to_string(),
                        )
                    })
                    .collect();
                return Some(Head {
                    headers,
                    body_start,
                });
            }
            Err(httparse::Error::TooManyHeaders) if n < 4096 => n *= 4,
            _ => return lenient_head(block),
        }
    }
}

/// The lenient reading of [`parse_head`]; `None` when the block does not start with `HTTP` or
/// has no blank line ending its head.
fn lenient_head(block: &[u8]) -> Option<Head> {
    if !block.starts_with(b"HTTP") {
        return None;
    }
    let (end, body_start) = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| {
            block
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|p| (p, p + 2))
        })?;
    let head = String::from_utf8_lossy(&block[..end]);
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect();
    Some(Head {
        headers,
        body_start,
    })
}

/// Removes chunked transfer coding (RFC 9112 §7.1). A body cut short keeps the chunks read.
/// A body that does not start with a chunk-size line is returned as it is: some archivers
/// store the de-chunked body but keep the `Transfer-Encoding` header (web-archive readers fall
/// back the same way).
fn dechunk(mut body: &[u8], limit: usize) -> Result<Vec<u8>, Reject> {
    let mut out = Vec::new();
    let mut first = true;
    loop {
        let (start, size) = match httparse::parse_chunk_size(body) {
            Ok(httparse::Status::Complete(x)) => x,
            _ if first => return Ok(body.to_vec()),
            // Truncated or malformed size line: keep what came before.
            _ => return Ok(out),
        };
        first = false;
        if size == 0 {
            return Ok(out);
        }
        let rest = &body[start..];
        let take = usize::try_from(size).unwrap_or(usize::MAX).min(rest.len());
        if out.len() + take > limit {
            return Err(Reject::TooLarge(out.len() + take));
        }
        out.extend_from_slice(&rest[..take]);
        body = &rest[take..];
        // The CRLF after the chunk data.
        body = body
            .strip_prefix(b"\r\n")
            .or_else(|| body.strip_prefix(b"\n"))
            .unwrap_or(body);
        if take < rest.len().min(usize::try_from(size).unwrap_or(usize::MAX)) || body.is_empty() {
            return Ok(out);
        }
    }
}

/// Reads a decoder to the end, refusing more than `limit` bytes (a decompression bomb).
fn read_limited(mut r: impl Read, limit: usize) -> Result<Vec<u8>, Reject> {
    let mut out = Vec::new();
    let n = (&mut r)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Reject::Undecodable(e.to_string()))?;
    if n > limit {
        return Err(Reject::TooLarge(n));
    }
    Ok(out)
}

/// Undoes one content coding.
fn decode_one(coding: &str, body: &[u8], limit: usize) -> Result<Vec<u8>, Reject> {
    match coding {
        "gzip" | "x-gzip" => read_limited(flate2::read::MultiGzDecoder::new(body), limit),
        // "deflate" is zlib-wrapped by the standard; some servers send raw deflate.
        "deflate" => read_limited(flate2::read::ZlibDecoder::new(body), limit)
            .or_else(|_| read_limited(flate2::read::DeflateDecoder::new(body), limit)),
        "br" => read_limited(brotli_decompressor::Decompressor::new(body, 4096), limit),
        "zstd" => {
            let d = ruzstd::decoding::StreamingDecoder::new(body)
                .map_err(|e| Reject::Undecodable(format!("zstd: {e}")))?;
            read_limited(d, limit)
        }
        other => Err(Reject::Undecodable(format!(
            "unsupported content-encoding {other}"
        ))),
    }
}

/// A response block as the page a browser would show, or why there is none. `limit` bounds
/// the decoded body.
pub fn page(block: &[u8], limit: usize) -> Result<Payload, Reject> {
    // Every status is a page: a redirect's or an error page's HTML is what the crawl fetched
    // (soft error pages are near duplicates of one another), and a web-archive reader counts
    // them as HTML responses too.
    let head = parse_head(block).ok_or(Reject::NotHttp)?;
    let ctype = head.get("content-type").unwrap_or("").to_ascii_lowercase();
    let mime = ctype.split(';').next().unwrap_or("").trim().to_string();
    if !mime.is_empty() && !mime.contains("html") && !TEXT_TYPES.contains(&mime.as_str()) {
        return Err(Reject::NotAPage(mime));
    }
    let mut body = block[head.body_start..].to_vec();
    if head
        .get("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
    {
        body = dechunk(&body, limit)?;
    }
    if let Some(codings) = head.get("content-encoding") {
        // Codings apply in the order listed, so they are undone from the last.
        let list: Vec<String> = codings
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity")
            .collect();
        for c in list.iter().rev() {
            body = decode_one(c, &body, limit)?;
        }
    }
    if body.len() > limit {
        return Err(Reject::TooLarge(body.len()));
    }
    // No type given: HTML when it looks like markup (a browser sniffs the same way), else no
    // page (an empty redirect, a bare payload).
    let is_html = if mime.is_empty() {
        let start = body
            .strip_prefix(UTF8_BOM)
            .unwrap_or(&body)
            .iter()
            .find(|b| !b.is_ascii_whitespace());
        if start != Some(&b'<') {
            return Err(Reject::NotAPage("no content type, not markup".into()));
        }
        true
    } else {
        mime.contains("html")
    };
    let charset = ctype
        .split(';')
        .skip(1)
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim() == "charset")
        .map(|(_, v)| v.trim().trim_matches(|c| c == '"' || c == '\''))
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()));
    if is_html {
        Ok(Payload::Html(with_transport_charset(body, charset)))
    } else {
        let text = match (encoding_rs::Encoding::for_bom(&body), charset) {
            (Some((enc, n)), _) => enc.decode_without_bom_handling(&body[n..]).0.into_owned(),
            (None, Some(enc)) => enc.decode_without_bom_handling(&body).0.into_owned(),
            (None, None) => String::from_utf8_lossy(&body).into_owned(),
        };
        Ok(Payload::Text(text))
    }
}

/// The UTF-8 byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// HTML whose HTTP header names a charset: decoded from it to UTF-8 and marked with a
/// byte-order mark, which the index's decoder honours before any `<meta charset>` — the
/// transport layer outranks the page's own declaration. A page that starts with a byte-order
/// mark keeps it (the mark outranks the header).
fn with_transport_charset(
    body: Vec<u8>,
    charset: Option<&'static encoding_rs::Encoding>,
) -> Vec<u8> {
    let Some(enc) = charset else {
        return body;
    };
    if encoding_rs::Encoding::for_bom(&body).is_some() {
        return body;
    }
    let (text, _) = enc.decode_without_bom_handling(&body);
    let mut out = Vec::with_capacity(UTF8_BOM.len() + text.len());
    out.extend_from_slice(UTF8_BOM);
    out.extend_from_slice(text.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn html(p: Result<Payload, Reject>) -> Vec<u8> {
        match p {
            Ok(Payload::Html(h)) => h,
            Ok(Payload::Text(_)) => panic!("text, not HTML"),
            Err(e) => panic!("rejected: {e}"),
        }
    }

    #[test]
    fn plain_and_missing_reason_phrase() {
        let b = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>";
        assert_eq!(html(page(b, 1 << 20)), b"<p>hi</p>");
        let b = b"HTTP/1.0 200\r\nContent-Type: text/html\r\n\r\n<p>hi</p>";
        assert_eq!(html(page(b, 1 << 20)), b"<p>hi</p>");
        // A mangled status line is read leniently.
        let b = b"HTTPX/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>";
        assert_eq!(html(page(b, 1 << 20)), b"<p>hi</p>");
        // No type: markup is HTML, anything else no page.
        let b = b"HTTP/1.1 200 OK\r\n\r\n  <html><p>hi</p>";
        assert_eq!(html(page(b, 1 << 20)), b"  <html><p>hi</p>");
        let b = b"HTTP/1.1 302 Found\r\nLocation: /\r\n\r\n";
        assert!(matches!(page(b, 1 << 20), Err(Reject::NotAPage(_))));
    }

    #[test]
    fn chunked_is_dechunked() {
        let b = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n4\r\n<p>h\r\n6\r\ni</p>x\r\n0\r\n\r\n";
        assert_eq!(html(page(b, 1 << 20)), b"<p>hi</p>x");
        // Stored de-chunked under the header: taken as it is.
        let b = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n<!doctype html><p>hi</p>";
        assert_eq!(html(page(b, 1 << 20)), b"<!doctype html><p>hi</p>");
        // Cut short: the chunks read are kept.
        let b = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n<p>h\r\n10\r\ni</p>";
        assert_eq!(html(page(b, 1 << 20)), b"<p>hi</p>");
    }

    #[test]
    fn content_encodings() {
        let doc = b"<html><body><p>compressed page</p></body></html>".repeat(20);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&doc).unwrap();
        let gz = gz.finish().unwrap();
        let mut zl = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zl.write_all(&doc).unwrap();
        let zl = zl.finish().unwrap();
        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw.write_all(&doc).unwrap();
        let raw = raw.finish().unwrap();
        let mut br = Vec::new();
        {
            let mut w = brotli_encoder(&mut br);
            w.write_all(&doc).unwrap();
        }
        let zst = ruzstd::encoding::compress_to_vec(
            &doc[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        for (coding, body) in [
            ("zstd", zst),
            ("gzip", gz.clone()),
            ("x-gzip", gz.clone()),
            ("deflate", zl),
            ("deflate", raw),
            ("br", br),
        ] {
            let mut b = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: {coding}\r\n\r\n"
            )
            .into_bytes();
            b.extend_from_slice(&body);
            assert_eq!(html(page(&b, 1 << 20)), doc, "{coding}");
        }
        // gzip, then chunked.
        let mut b =
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec();
        b.extend_from_slice(format!("{:x}\r\n", gz.len()).as_bytes());
        b.extend_from_slice(&gz);
        b.extend_from_slice(b"\r\n0\r\n\r\n");
        assert_eq!(html(page(&b, 1 << 20)), doc);
        // A bomb is refused.
        let mut b = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        b.extend_from_slice(&gz);
        assert!(matches!(page(&b, 100), Err(Reject::TooLarge(_))));
        let b = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip at all";
        assert!(matches!(page(b, 1 << 20), Err(Reject::Undecodable(_))));
    }

    /// A brotli stream of `doc` (the decoder's crate has no encoder; the stream is built with
    /// the format's uncompressed meta-blocks, RFC 7932 §9.2).
    fn brotli_encoder(out: &mut Vec<u8>) -> BrotliStored<'_> {
        BrotliStored {
            out,
            data: Vec::new(),
        }
    }

    struct BrotliStored<'a> {
        out: &'a mut Vec<u8>,
        data: Vec<u8>,
    }

    impl Write for BrotliStored<'_> {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.data.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Drop for BrotliStored<'_> {
        fn drop(&mut self) {
            // WBITS = 16: one bit 0. Then per meta-block (≤ 65,536 bytes): ISLAST = 0,
            // MNIBBLES = 4 (code 0), MLEN − 1 in 16 bits, ISUNCOMPRESSED = 1, pad to a byte,
            // the bytes. Finally ISLAST = 1, ISLASTEMPTY = 1.
            let mut bits = BitWriter::default();
            bits.put(0, 1);
            for chunk in self.data.chunks(65_536) {
                bits.put(0, 1);
                bits.put(0, 2);
                bits.put((chunk.len() - 1) as u64, 16);
                bits.put(1, 1);
                bits.align();
                bits.bytes.extend_from_slice(chunk);
            }
            bits.put(1, 1);
            bits.put(1, 1);
            bits.align();
            self.out.extend_from_slice(&bits.bytes);
        }
    }

    #[derive(Default)]
    struct BitWriter {
        bytes: Vec<u8>,
        acc: u64,
        n: u32,
    }

    impl BitWriter {
        fn put(&mut self, v: u64, bits: u32) {
            self.acc |= v << self.n;
            self.n += bits;
            while self.n >= 8 {
                self.bytes.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        fn align(&mut self) {
            if self.n > 0 {
                self.bytes.push(self.acc as u8);
                self.acc = 0;
                self.n = 0;
            }
        }
    }

    #[test]
    fn charset_from_the_header_beats_the_meta_tag() {
        let (gbk, _, _) = encoding_rs::GBK.encode("<meta charset=\"big5\"><p>中文网页</p>");
        let mut b = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=GBK\r\n\r\n".to_vec();
        b.extend_from_slice(&gbk);
        let h = html(page(&b, 1 << 20));
        assert!(h.starts_with(UTF8_BOM));
        let text = neardup::text::decode(&h).unwrap();
        assert!(text.contains("中文网页"), "{text}");
        // Without a header charset the page's own declaration applies.
        let b = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>";
        assert_eq!(html(page(b, 1 << 20)), b"<p>x</p>");
    }

    #[test]
    fn non_pages_and_any_status() {
        let b = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG";
        assert_eq!(
            page(b, 1 << 20).err(),
            Some(Reject::NotAPage("image/png".into()))
        );
        let b = b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n\r\np { margin: 0 }";
        assert_eq!(
            page(b, 1 << 20).err(),
            Some(Reject::NotAPage("text/css".into()))
        );
        let b =
            b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Type: text/html\r\n\r\n<a>moved</a>";
        assert_eq!(html(page(b, 1 << 20)), b"<a>moved</a>");
        assert_eq!(
            page(b"GET / HTTP/1.1\r\n\r\n", 10).err(),
            Some(Reject::NotHttp)
        );
        let b = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nplain words";
        assert!(matches!(page(b, 1 << 20), Ok(Payload::Text(t)) if t == "plain words"));
    }
}
