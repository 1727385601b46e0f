//! A linear fallback for pathological pages.
//!
//! Building an HTML5 tree is quadratic in the nesting depth (the tree builder scans its stack of
//! open elements), so a hostile or broken page of a hundred thousand unclosed `<div>`s would take
//! minutes. A linear pre-scan estimates the depth; beyond [`MAX_DEPTH`] the page is read with
//! html5ever's tokenizer alone (linear, entities decoded), its text cut into blocks at block-level
//! tags, without the density vote. Real pages stay far below the limit.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

use super::extract::{BlockKind, MainText, Paragraph};

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

struct FlatSink(RefCell<Sink>);

impl TokenSink for FlatSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut s = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) => {
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
            Token::CharacterTokens(t) if s.skip == 0 => s.cur.push_str(&t),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// Extracts text from a page without building its tree: every block of text, in order.
pub fn extract_flat(html: &str) -> MainText {
    let sink = FlatSink(RefCell::new(Sink::default()));
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let _ = tok.feed(&input);
    tok.end();
    let mut s = tok.sink.0.into_inner();
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

    #[test]
    fn flat_extraction_keeps_text_and_drops_scripts() {
        let m = extract_flat(
            "<div><script>var a='<p>x</p>';</script>one &amp; two<div>three</div></div>",
        );
        let texts: Vec<&str> = m.paragraphs.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, vec!["one & two", "three"]);
    }
}
