//! Fuzzing the way in: page bytes → encoding detection → HTML → main text → signatures, and
//! plain text → signatures. Random bytes and HTML-shaped soup (nested and unclosed tags,
//! scripts holding `<`, comments, entities, deep nesting, CJK, invalid UTF-8, byte-order marks,
//! `<meta charset>` declarations) must give `Ok` or a typed error — never a panic — and the same
//! answer twice. Run longer with `scripts/fuzz.sh SECONDS`.

mod fuzz_support;

use fuzz_support::fuzz;
use neardup::{text, Content, Error, SignatureConfig, Signatures};
use proptest::prelude::*;

/// Any bytes, mostly short.
fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

/// One piece of HTML-shaped input.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    const TAGS: &[&str] = &[
        "div",
        "p",
        "span",
        "a",
        "article",
        "main",
        "nav",
        "footer",
        "header",
        "aside",
        "h1",
        "h2",
        "li",
        "ul",
        "table",
        "tr",
        "td",
        "pre",
        "code",
        "br",
        "img",
        "script",
        "style",
        "noscript",
        "template",
        "textarea",
        "title",
        "iframe",
        "svg",
        "math",
        "select",
        "option",
        "xmp",
        "plaintext",
        "frameset",
        "body",
        "html",
        "head",
        "form",
        "b",
        "i",
    ];
    const LITERALS: &[&str] = &[
        "<!-- a comment -->",
        "<!-- unclosed comment",
        "<!--->",
        "<!DOCTYPE html>",
        "<![CDATA[ x < y ]]>",
        "<script>if (a < b && c > d) { document.write('</div><p>'); }</script>",
        "<script>var s = '<!--<script>'; </scr",
        "<style>p::after { content: '</style'; }</style>",
        "&amp;&lt;&gt;&quot;&#39;&nbsp;&copy",
        "&#x10FFFF;&#xD800;&#0;&#99999999999;&#x;&;",
        "<p>The river rose two metres overnight. The council closed the bridge.</p>",
        "<p>西湖的春天来得很早，柳树发芽，桃花盛开。游客们沿着苏堤散步。</p>",
        "<p>東京の桜は三月末に満開になった。</p><p>서울의 봄은 따뜻하다。</p>",
        "<meta charset=\"utf-8\">",
        "<meta charset=gbk>",
        "<meta charset='big5'>",
        "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=shift_jis\">",
        "<meta charset=\"utf-16le\">",
        "<meta charset=x-user-defined>",
        "<meta charset=iso-2022-jp>",
        "<meta charset=\"no-such-charset\">",
        "<meta charset=",
        "<a href=\"x\"><div>misnested</a></div>",
        "<table><td>cell<p>para</table>",
        "<p title='unterminated>text",
        "<div class=content id=main data-x=\"&quot;\">",
        "</>",
        "< p>",
        "<\u{0}>",
        "\u{feff}",
        "\r\n\t ",
        "👨‍👩‍👧‍👦🇨🇳",
        "a\u{300}\u{301}\u{302}",
    ];
    prop_oneof![
        4 => prop::sample::select(TAGS).prop_map(|t| format!("<{t}>").into_bytes()),
        3 => prop::sample::select(TAGS).prop_map(|t| format!("</{t}>").into_bytes()),
        1 => (prop::sample::select(TAGS), "[a-z -]{0,8}", "[^>]{0,12}")
            .prop_map(|(t, a, v)| format!("<{t} {a}=\"{v}\" {a}").into_bytes()),
        6 => prop::sample::select(LITERALS).prop_map(|s| s.as_bytes().to_vec()),
        4 => "[a-zA-Z ,.!?]{0,80}".prop_map(String::into_bytes),
        2 => "[\u{4e00}-\u{9fff}，。！？]{0,40}".prop_map(String::into_bytes),
        2 => any::<String>().prop_map(String::into_bytes),
        2 => bytes(24),
        // Byte-order marks and bytes of other encodings.
        1 => prop::sample::select(vec![
            &b"\xef\xbb\xbf"[..], b"\xff\xfe", b"\xfe\xff", b"\xc4\xe3\xba\xc3", b"\xa7\x41",
            b"\x82\xa0", b"\x1b$B", b"\x00\x00", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
        ]).prop_map(<[u8]>::to_vec),
        // Deep nesting, opened and never closed (or closed).
        1 => (prop::sample::select(TAGS), 1usize..3000, any::<bool>()).prop_map(|(t, n, close)| {
            let mut s = format!("<{t}>").repeat(n);
            s.push_str("deep text. ");
            if close {
                s.push_str(&format!("</{t}>").repeat(n));
            }
            s.into_bytes()
        }),
    ]
}

/// HTML-shaped bytes: a soup of pieces.
fn html_soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..40).prop_map(|v| v.concat())
}

/// Signatures or the error's text (errors are not `PartialEq`).
fn signatures(content: Content<'_>) -> Result<Signatures, String> {
    Signatures::compute(content, &SignatureConfig::default()).map_err(|e| e.to_string())
}

/// The HTML check: a typed answer, the same twice, and the decoder agreeing with it.
fn check_html(page: &[u8]) -> Result<(), TestCaseError> {
    let cfg = SignatureConfig::default();
    let first = Signatures::compute(Content::Html(page), &cfg);
    match &first {
        Ok(_) => {}
        Err(Error::BinaryPage { .. } | Error::PageTooLarge { .. }) => {}
        Err(e) => return Err(TestCaseError::fail(format!("unexpected error: {e}"))),
    }
    let again = signatures(Content::Html(page));
    prop_assert_eq!(first.map_err(|e| e.to_string()), again);
    Ok(())
}

#[test]
fn html_random_bytes() {
    // Any bytes (mostly refused as binary), and bytes with few control characters (text in
    // some encoding, as far as the decoder can tell).
    let textish = prop::collection::vec(
        prop_oneof![4 => 0x20u8..0x7f, 2 => 0x80u8..=0xff, 1 => Just(b'<'), 1 => Just(b'\n'), 1 => any::<u8>()],
        0..2048,
    );
    let strategy = prop_oneof![bytes(2048), textish];
    fuzz("html_random_bytes", 3000, strategy, |page| {
        check_html(&page)
    });
}

#[test]
fn html_structured() {
    fuzz("html_structured", 1500, html_soup(), |page| {
        check_html(&page)
    });
}

#[test]
fn text_content() {
    let strategy = prop_oneof![
        any::<String>(),
        "[a-z .,!?\n]{0,400}",
        "[\u{4e00}-\u{9fff}\u{3000}-\u{303f}\u{ff01}-\u{ff5e}\n ]{0,300}",
        prop::collection::vec(piece(), 0..20)
            .prop_map(|v| String::from_utf8_lossy(&v.concat()).into_owned()),
    ];
    fuzz("text_content", 3000, strategy, |t| {
        let first = signatures(Content::Text(&t));
        if let Err(e) = &first {
            prop_assert!(
                e.contains("binary") || e.contains("large"),
                "unexpected error: {e}"
            );
        }
        prop_assert_eq!(first, signatures(Content::Text(&t)));
        Ok(())
    });
}

/// Encoding detection (`text::decode`): `Ok` or `BinaryPage`, deterministic; valid UTF-8 with
/// nothing that declares another encoding (no `<`, no byte-order mark) comes back unchanged.
#[test]
fn encoding_detection() {
    let strategy = prop_oneof![
        bytes(1024),
        html_soup(),
        "[a-z \u{4e00}-\u{9fff}\u{e9}\u{fc}]{0,200}".prop_map(String::into_bytes),
        (
            prop::sample::select(vec![&b"\xef\xbb\xbf"[..], b"\xff\xfe", b"\xfe\xff", b""]),
            bytes(200)
        )
            .prop_map(|(bom, rest)| [bom, &rest].concat()),
    ];
    fuzz("encoding_detection", 10000, strategy, |page| {
        let first = text::decode(&page);
        match &first {
            Ok(_) | Err(Error::BinaryPage { .. }) => {}
            Err(e) => return Err(TestCaseError::fail(format!("unexpected error: {e}"))),
        }
        let first = first.map(|t| t.into_owned()).map_err(|e| e.to_string());
        let again = text::decode(&page)
            .map(|t| t.into_owned())
            .map_err(|e| e.to_string());
        prop_assert_eq!(&first, &again);
        if let (Ok(s), Ok(decoded)) = (std::str::from_utf8(&page), &first) {
            if !s.contains('<') && !s.starts_with('\u{feff}') {
                prop_assert_eq!(s, decoded.as_str());
            }
        }
        Ok(())
    });
}

/// The text stages on any string: extraction (tree and flat), normalization, sentences.
#[test]
fn text_stages() {
    let strategy = prop_oneof![
        any::<String>(),
        html_soup().prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    fuzz("text_stages", 2000, strategy, |s| {
        let main = text::extract(&s);
        prop_assert_eq!(&main, &text::extract(&s));
        let flat = text::extract_flat(&s);
        let normalized = text::normalize(&flat.body(), true);
        prop_assert_eq!(&normalized, &text::normalize(&flat.body(), true));
        let _ = text::normalize(&main.body(), false);
        for sentence in text::split_sentences(&normalized) {
            let (start, len) = (sentence.start as usize, sentence.len as usize);
            prop_assert!(normalized.get(start..start + len).is_some(), "{sentence:?}");
        }
        let _ = text::nesting_depth(&s);
        Ok(())
    });
}
