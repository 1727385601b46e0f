//! A linear fallback for pathological pages.
//!
//! Building an HTML5 tree is quadratic in the nesting depth (the tree builder scans its stack of
//! open elements), so a hostile or broken page of a hundred thousand unclosed `<div>`s would take
//! minutes. A linear pre-scan estimates the depth; beyond [`MAX_DEPTH`] the page is read with
//! our tokenizer alone ([`super::html::tokenizer`]: linear, entities decoded), its text cut into
//! blocks at block-level tags, without the density vote. Real pages stay far below the limit.

use super::html::tokenizer::{RawKind, Token, Tokenizer};
use super::main_text::{BlockKind, MainText, Paragraph};

/// Nesting depth above which the tree is not built.
pub const MAX_DEPTH: usize = 1000;

/// Elements that never nest (void) or close themselves implicitly often enough not to count.
fn is_flat(name: &[u8]) -> bool {
    const FLAT: &[&[u8]] = &[
        b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input", b"link", b"meta",
        b"source", b"track", b"wbr", b"p", b"li", b"td", b"th", b"tr", b"option", b"dt", b"dd",
        b"param", b"keygen",
    ];
    FLAT.iter().any(|f| f.eq_ignore_ascii_case(name))
}

/// An estimate of the maximum element nesting depth of a page, in one pass over its bytes (for a
/// page of at most [`MAX_DEPTH`] tags, an upper bound: its number of tags).
pub fn nesting_depth(html: &str) -> usize {
    let b = html.as_bytes();
    // A page with at most MAX_DEPTH tags cannot nest deeper than that: counting `<` (SIMD) is
    // enough for ordinary pages.
    let tags = memchr::memchr_iter(b'<', b).count();
    if tags <= MAX_DEPTH {
        return tags;
    }
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        i += off + 1;
        let closing = b.get(i) == Some(&b'/');
        let start = if closing { i + 1 } else { i };
        let mut end = start;
        while end < b.len() && b[end].is_ascii_alphanumeric() {
            end += 1;
        }
        if end == start || !b[start].is_ascii_alphabetic() {
            continue;
        }
        let name = &b[start..end];
        if is_flat(name) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else {
            let close = b[end..].iter().position(|&c| c == b'>').map(|p| end + p);
            if close.is_some_and(|p| p > 0 && b[p - 1] == b'/') {
                continue;
            }
            depth += 1;
            max = max.max(depth);
        }
        i = end;
    }
    max
}

const BLOCK: &[&str] = &[
    "address",
    "article",
    "blockquote",
    "body",
    "div",
    "dl",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
    "br",
    "hr",
];
const SKIP: &[&str] = &[
    "script", "style", "noscript", "template", "textarea", "title", "head",
];

#[derive(Default)]
struct Sink {
    paragraphs: Vec<Paragraph>,
    cur: String,
    skip: usize,
}

impl Sink {
    fn flush(&mut self) {
        let text = self.cur.split_whitespace().collect::<Vec<_>>().join(" ");
        self.cur.clear();
        if !text.is_empty() {
            self.paragraphs.push(Paragraph {
                text,
                kind: BlockKind::Text,
            });
        }
    }
}

/// Extracts text from a page without building its tree: every block of text, in order. The
/// elements of `SKIP` are read as raw text up to their end tag and dropped.
pub fn extract_flat(html: &str) -> MainText {
    let mut tok = Tokenizer::new(html);
    let mut s = Sink::default();
    loop {
        match tok.next_token() {
            Token::Eof => break,
            Token::Start(tag) => {
                let name: &str = &tag.name;
                if SKIP.contains(&name) {
                    if !tag.self_closing {
                        s.skip += 1;
                        tok.set_raw(RawKind::Rawtext, name);
                    }
                } else if BLOCK.contains(&name) {
                    s.flush();
                }
            }
            Token::End(name) => {
                if SKIP.contains(&name.as_ref()) {
                    s.skip = s.skip.saturating_sub(1);
                } else if BLOCK.contains(&name.as_ref()) {
                    s.flush();
                }
            }
            Token::Text(t) if s.skip == 0 => s.cur.push_str(&t),
            _ => {}
        }
    }
    s.flush();
    MainText {
        paragraphs: s.paragraphs,
        ..MainText::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_of_ordinary_and_hostile_pages() {
        let ordinary = "<html><body><div><p>a<br>b</p></div></body></html>";
        assert!(nesting_depth(ordinary) <= MAX_DEPTH);
        let many = format!("<div>{}</div>", "<p>x</p><br>".repeat(600));
        assert_eq!(nesting_depth(&many), 1);
        let voids = format!("<div>{}</div>", "<img src=x/><br/>".repeat(600));
        assert_eq!(nesting_depth(&voids), 1);
        assert!(nesting_depth(&"<div>".repeat(5000)) >= 5000);
    }

    /// The flat extraction as html5ever's tokenizer gives it (what `extract_flat` was built on
    /// before our tokenizer): the reference of the differential test below.
    fn reference_flat(html: &str) -> Vec<String> {
        use html5ever::tendril::StrTendril;
        use html5ever::tokenizer::{
            BufferQueue, TagKind, Token as H5Token, TokenSink, TokenSinkResult,
            Tokenizer as H5Tokenizer, TokenizerOpts,
        };
        use std::cell::RefCell;

        struct FlatSink(RefCell<Sink>);

        impl TokenSink for FlatSink {
            type Handle = ();

            fn process_token(&self, token: H5Token, _line: u64) -> TokenSinkResult<()> {
                let mut s = self.0.borrow_mut();
                match token {
                    H5Token::TagToken(tag) => {
                        let name: &str = &tag.name;
                        if SKIP.contains(&name) {
                            match tag.kind {
                                TagKind::StartTag if !tag.self_closing => {
                                    s.skip += 1;
                                    return TokenSinkResult::RawData(
                                        html5ever::tokenizer::states::RawKind::Rawtext,
                                    );
                                }
                                TagKind::EndTag => s.skip = s.skip.saturating_sub(1),
                                TagKind::StartTag => {}
                            }
                        } else if BLOCK.contains(&name) {
                            s.flush();
                        }
                    }
                    H5Token::CharacterTokens(t) if s.skip == 0 => s.cur.push_str(&t),
                    _ => {}
                }
                TokenSinkResult::Continue
            }
        }

        let tok = H5Tokenizer::new(
            FlatSink(RefCell::new(Sink::default())),
            TokenizerOpts::default(),
        );
        let input = BufferQueue::default();
        input.push_back(StrTendril::from_slice(html));
        let _ = tok.feed(&input);
        tok.end();
        let mut s = tok.sink.0.into_inner();
        s.flush();
        s.paragraphs.into_iter().map(|p| p.text).collect()
    }

    fn ours(html: &str) -> Vec<String> {
        extract_flat(html)
            .paragraphs
            .into_iter()
            .map(|p| p.text)
            .collect()
    }

    /// Our tokenizer gives the flat extraction html5ever's gave, on the bench corpora's pages
    /// (as they are, nested past the limit, and cut short) and on hostile nesting.
    #[test]
    fn flat_extraction_equals_html5ever_s() {
        use std::io::BufRead;
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/bench");
        let mut pages: Vec<String> = Vec::new();
        for (file, n) in [
            ("dev/docs.jsonl.gz", 300),
            ("natural-dev/docs.jsonl.gz", 300),
        ] {
            let Ok(f) = std::fs::File::open(format!("{root}/{file}")) else {
                continue;
            };
            pages.extend(
                std::io::BufReader::new(flate2::read::MultiGzDecoder::new(f))
                    .lines()
                    .map_while(Result::ok)
                    .filter_map(|l| {
                        let v: serde_json::Value = serde_json::from_str(&l).ok()?;
                        Some(v["html"].as_str()?.to_string())
                    })
                    .take(n),
            );
        }
        pages.extend([
            format!(
                "<body>{}text &amp; more{}</body>",
                "<div>".repeat(3000),
                "</span>".repeat(10)
            ),
            format!(
                "{}<p>a<script>var x = '<div>';</script>b</p>",
                "<section><b>".repeat(1200)
            ),
            "<title>t</title><textarea>x<p>y</textarea><p>z &lt; w<br/>v".to_string(),
        ]);
        let mut compared = 0;
        for page in &pages {
            // Pages with U+0000 or U+FEFF are read by the reference parser in any case.
            if page.contains('\0') || page.contains('\u{feff}') {
                continue;
            }
            let nested = format!("{}{page}", "<div>".repeat(MAX_DEPTH + 1));
            let mut half = page.len() / 2;
            while !page.is_char_boundary(half) {
                half -= 1;
            }
            for p in [page.as_str(), nested.as_str(), &page[..half]] {
                assert_eq!(ours(p), reference_flat(p), "{}", &p[..p.len().min(300)]);
                compared += 1;
            }
        }
        assert!(compared >= 9);
    }

    #[test]
    fn flat_extraction_keeps_text_and_drops_scripts() {
        let m = extract_flat(
            "<div><script>var a='<p>x</p>';</script>one &amp; two<div>three</div></div>",
        );
        let texts: Vec<&str> = m.paragraphs.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, vec!["one & two", "three"]);
    }
}
