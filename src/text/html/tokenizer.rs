//! The HTML tokenizer (HTML Living Standard §13.2.5), over a decoded page, for main-text
//! extraction.
//!
//! Every state of the standard that decides where a token ends is followed: tags and their
//! attributes (quoted, unquoted, missing values, duplicates dropped, `/>`), comments (`<!-->`,
//! `--!>`), bogus comments (`<?…>`, `</ …>`), DOCTYPEs (name and identifiers, for the quirks
//! mode), CDATA sections in foreign content, character references (numeric and named, with the
//! attribute rule for legacy names without `;`), and the text states the tree builder switches
//! to: RCDATA (`<title>`, `<textarea>`), RAWTEXT (`<style>`, `<noscript>`…), script data with its
//! escaped and double-escaped states (`<!-- <script> … </script> -->` inside a script), and
//! PLAINTEXT.
//!
//! What it leaves out changes no token boundary: parse errors are not reported, and text is not
//! newline-normalized (a CR is white space to every state here, and extraction collapses white
//! space). The caller hands pages holding U+0000 to the reference parser
//! ([`super::parse`]), so NUL needs no handling here. Tokens borrow from the page wherever no
//! reference or upper-case letter had to be rewritten.

use std::borrow::Cow;

/// An attribute: name (ASCII lower-cased) and value (references decoded).
pub(crate) type Attr<'a> = (Cow<'a, str>, Cow<'a, str>);

/// A token.
#[derive(Debug, PartialEq)]
pub(crate) enum Token<'a> {
    /// A start tag.
    Start(Tag<'a>),
    /// An end tag (its attributes are dropped, as the standard's tree builder ignores them).
    End(Cow<'a, str>),
    /// A run of text.
    Text(Cow<'a, str>),
    /// A comment (its text is of no use here).
    Comment,
    /// A DOCTYPE.
    Doctype(Doctype),
    /// The end of the page.
    Eof,
}

/// A start tag.
#[derive(Debug, PartialEq)]
pub(crate) struct Tag<'a> {
    /// The tag name, ASCII lower-cased.
    pub name: Cow<'a, str>,
    /// The attributes, in page order, without duplicates (the first wins).
    pub attrs: Vec<Attr<'a>>,
    /// Written `<x/>`.
    pub self_closing: bool,
}

impl Tag<'_> {
    /// The value of an attribute.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_ref())
    }
}

/// A DOCTYPE, as far as the quirks mode needs it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Doctype {
    /// The name, ASCII lower-cased.
    pub name: Option<String>,
    /// The public identifier.
    pub public_id: Option<String>,
    /// The system identifier.
    pub system_id: Option<String>,
    /// Malformed: the document is in quirks mode whatever it says.
    pub force_quirks: bool,
}

/// The text states the tree builder switches the tokenizer to after some start tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawKind {
    /// Text with references, up to the matching end tag (`<title>`, `<textarea>`).
    Rcdata,
    /// Text as written, up to the matching end tag (`<style>`, `<xmp>`, `<iframe>`…).
    Rawtext,
    /// Script data, with its escaped states.
    ScriptData,
    /// The rest of the page is text.
    Plaintext,
}

/// The tokenizer: call [`Tokenizer::next_token`] until [`Token::Eof`].
pub(crate) struct Tokenizer<'a> {
    src: &'a str,
    pos: usize,
    /// A text state to read next, with the element name that ends it.
    raw: Option<(RawKind, String)>,
    /// The adjusted current node is not an HTML element: `<![CDATA[` opens a CDATA section.
    pub foreign: bool,
    /// Where the last text token started.
    text_start: usize,
}

/// HTML white space, with CR (which the standard's input stream turns into LF).
#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Lower-cases ASCII letters, borrowing when there are none.
fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

impl<'a> Tokenizer<'a> {
    /// A tokenizer over a page.
    pub fn new(src: &'a str) -> Self {
        Tokenizer {
            src,
            pos: 0,
            raw: None,
            foreign: false,
            text_start: 0,
        }
    }

    /// Reads the next token as text of `kind`, up to the end tag of `name` (the element the
    /// tree builder just inserted).
    pub fn set_raw(&mut self, kind: RawKind, name: &str) {
        self.raw = Some((kind, name.to_string()));
    }

    /// Did the last text token start with a character reference?
    pub fn text_began_with_reference(&self) -> bool {
        self.bytes().get(self.text_start) == Some(&b'&')
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    /// The next token.
    pub fn next_token(&mut self) -> Token<'a> {
        if let Some((kind, name)) = self.raw.take() {
            let start = self.pos;
            self.text_start = start;
            let end = match kind {
                RawKind::Plaintext => self.src.len(),
                RawKind::ScriptData => script_end(self.bytes(), start),
                RawKind::Rcdata | RawKind::Rawtext => raw_end(self.bytes(), start, &name),
            };
            self.pos = end;
            if end > start {
                let text = &self.src[start..end];
                return Token::Text(if kind == RawKind::Rcdata {
                    decode_refs(text, false)
                } else {
                    Cow::Borrowed(text)
                });
            }
        }
        loop {
            let b = self.bytes();
            if self.pos >= b.len() {
                return Token::Eof;
            }
            if b[self.pos] != b'<' {
                return self.text();
            }
            if let Some(t) = self.markup() {
                return t;
            }
        }
    }

    /// Text in the data state, up to the next `<` that starts markup.
    fn text(&mut self) -> Token<'a> {
        let b = self.bytes();
        let start = self.pos;
        self.text_start = start;
        let mut i = start;
        loop {
            match memchr::memchr(b'<', &b[i..]) {
                None => {
                    i = b.len();
                    break;
                }
                Some(off) => {
                    i += off;
                    // `<` followed by what cannot open markup is text (tag open state, anything
                    // else).
                    match b.get(i + 1) {
                        Some(c) if c.is_ascii_alphabetic() || matches!(c, b'!' | b'/' | b'?') => {
                            break
                        }
                        _ => i += 1,
                    }
                    if i >= b.len() {
                        break;
                    }
                }
            }
        }
        if i == start {
            // Only reached for a lone `<` at the end of a page.
            i = b.len();
        }
        self.pos = i;
        Token::Text(decode_refs(&self.src[start..i], false))
    }

    /// Markup at `<` (tag open state). `</>` gives a [`Token::Comment`]: it makes no node, but
    /// html5ever reports it as a parse error, which ends the tree builder's wait for a line feed
    /// to drop after `<pre>`.
    fn markup(&mut self) -> Option<Token<'a>> {
        let b = self.bytes();
        let i = self.pos + 1;
        match b.get(i) {
            Some(b'!') => Some(self.declaration(i + 1)),
            Some(b'/') => match b.get(i + 1) {
                Some(c) if c.is_ascii_alphabetic() => Some(self.tag(i + 1, true)),
                Some(b'>') => {
                    self.pos = i + 2;
                    Some(Token::Comment)
                }
                None => {
                    self.pos = b.len();
                    Some(Token::Text(Cow::Borrowed("</")))
                }
                Some(_) => Some(self.bogus_comment(i + 1)),
            },
            Some(b'?') => Some(self.bogus_comment(i)),
            Some(c) if c.is_ascii_alphabetic() => Some(self.tag(i, false)),
            _ => {
                self.pos = i;
                Some(Token::Text(Cow::Borrowed("<")))
            }
        }
    }

    /// A bogus comment from `from` to the next `>`.
    fn bogus_comment(&mut self, from: usize) -> Token<'a> {
        let b = self.bytes();
        self.pos = memchr::memchr(b'>', &b[from..]).map_or(b.len(), |o| from + o + 1);
        Token::Comment
    }

    /// After `<!` (markup declaration open state).
    fn declaration(&mut self, i: usize) -> Token<'a> {
        let b = self.bytes();
        let rest = &b[i..];
        if rest.starts_with(b"--") {
            self.pos = comment_end(b, i + 2);
            Token::Comment
        } else if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"doctype") {
            self.doctype(i + 7)
        } else if self.foreign && rest.starts_with(b"[CDATA[") {
            let start = i + 7;
            let (end, next) = memchr::memmem::find(&b[start..], b"]]>")
                .map_or((b.len(), b.len()), |o| (start + o, start + o + 3));
            self.pos = next;
            Token::Text(Cow::Borrowed(&self.src[start..end]))
        } else {
            self.bogus_comment(i)
        }
    }

    /// After `<!DOCTYPE` (DOCTYPE states; every one of them ends at the next `>`).
    fn doctype(&mut self, mut i: usize) -> Token<'a> {
        let b = self.bytes();
        let mut dt = Doctype::default();
        let end = memchr::memchr(b'>', &b[i..]).map_or(b.len(), |o| i + o);
        self.pos = (end + 1).min(b.len());
        if end == b.len() {
            dt.force_quirks = true;
        }
        while i < end && is_ws(b[i]) {
            i += 1;
        }
        if i == end {
            dt.force_quirks = true;
            return Token::Doctype(dt);
        }
        let name_start = i;
        while i < end && !is_ws(b[i]) {
            i += 1;
        }
        dt.name = Some(self.src[name_start..i].to_ascii_lowercase());
        while i < end && is_ws(b[i]) {
            i += 1;
        }
        if i == end {
            return Token::Doctype(dt);
        }
        let keyword = |k: &[u8]| b[i..end].len() >= 6 && b[i..i + 6].eq_ignore_ascii_case(k);
        let public = keyword(b"public");
        if !public && !keyword(b"system") {
            dt.force_quirks = true;
            return Token::Doctype(dt);
        }
        i += 6;
        // One quoted identifier: `(value, index after it)`, or `None` (force quirks). A `>` ends
        // the DOCTYPE inside the quotes too (abrupt identifier), so `end` bounds the search.
        let quoted = |mut i: usize| -> Option<(String, usize, bool)> {
            while i < end && is_ws(b[i]) {
                i += 1;
            }
            let q = *b.get(i).filter(|_| i < end)?;
            if q != b'"' && q != b'\'' {
                return None;
            }
            match memchr::memchr(q, &b[i + 1..end]) {
                Some(o) => Some((self.src[i + 1..i + 1 + o].to_string(), i + 2 + o, true)),
                None => Some((self.src[i + 1..end].to_string(), end, false)),
            }
        };
        let Some((id, mut i, closed)) = quoted(i) else {
            dt.force_quirks = true;
            return Token::Doctype(dt);
        };
        if public {
            dt.public_id = Some(id);
        } else {
            dt.system_id = Some(id);
        }
        if !closed {
            dt.force_quirks = true;
            return Token::Doctype(dt);
        }
        while i < end && is_ws(b[i]) {
            i += 1;
        }
        if i == end {
            return Token::Doctype(dt);
        }
        let mut after_system = i;
        if public {
            match quoted(i) {
                Some((id, j, closed)) => {
                    dt.system_id = Some(id);
                    if !closed {
                        dt.force_quirks = true;
                        return Token::Doctype(dt);
                    }
                    after_system = j;
                    while after_system < end && is_ws(b[after_system]) {
                        after_system += 1;
                    }
                }
                None => {
                    dt.force_quirks = true;
                    return Token::Doctype(dt);
                }
            }
        }
        // After a system identifier, anything but `>` is ignored: the bogus DOCTYPE state, which
        // sets no quirks, not even at the end of the page.
        if after_system < end {
            dt.force_quirks = false;
        }
        Token::Doctype(dt)
    }

    /// A start or end tag whose name starts at `i` (tag name and attribute states).
    fn tag(&mut self, mut i: usize, end_tag: bool) -> Token<'a> {
        let b = self.bytes();
        let name_start = i;
        while i < b.len() && !is_ws(b[i]) && b[i] != b'/' && b[i] != b'>' {
            i += 1;
        }
        let name = lower(&self.src[name_start..i]);
        let mut attrs: Vec<Attr<'a>> = Vec::new();
        let mut self_closing = false;
        // Before attribute name.
        loop {
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            let Some(&c) = b.get(i) else {
                self.pos = b.len();
                return Token::Eof;
            };
            match c {
                b'>' => {
                    i += 1;
                    break;
                }
                b'/' => {
                    // Self-closing start tag state: `/>` ends the tag; a `/` before anything
                    // else is dropped.
                    if b.get(i + 1) == Some(&b'>') {
                        self_closing = true;
                        i += 2;
                        break;
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            // Attribute name: a leading `=` is part of it.
            let an_start = i;
            i += 1;
            while i < b.len() && !is_ws(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
                i += 1;
            }
            let aname = lower(&self.src[an_start..i]);
            // After attribute name.
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            let mut value: Cow<'a, str> = Cow::Borrowed("");
            if b.get(i) == Some(&b'=') {
                i += 1;
                while i < b.len() && is_ws(b[i]) {
                    i += 1;
                }
                match b.get(i) {
                    None => {
                        self.pos = b.len();
                        return Token::Eof;
                    }
                    Some(&q @ (b'"' | b'\'')) => {
                        let Some(o) = memchr::memchr(q, &b[i + 1..]) else {
                            self.pos = b.len();
                            return Token::Eof;
                        };
                        value = decode_refs(&self.src[i + 1..i + 1 + o], true);
                        i += o + 2;
                        // After attribute value (quoted): anything but white space, `/` or `>`
                        // starts the next attribute.
                    }
                    Some(b'>') => {}
                    Some(_) => {
                        let vs = i;
                        while i < b.len() && !is_ws(b[i]) && b[i] != b'>' {
                            i += 1;
                        }
                        value = decode_refs(&self.src[vs..i], true);
                    }
                }
            }
            if !attrs.iter().any(|(n, _)| *n == aname) {
                attrs.push((aname, value));
            }
        }
        self.pos = i;
        if end_tag {
            Token::End(name)
        } else {
            Token::Start(Tag {
                name,
                attrs,
                self_closing,
            })
        }
    }
}

/// Where a comment whose text starts at `i` (after `<!--`) ends: after its `-->` or `--!>`
/// (comment start, comment, comment end and comment end bang states), or at the end of the page.
fn comment_end(b: &[u8], i: usize) -> usize {
    // `<!-->` and `<!--->`: abrupt closing of an empty comment.
    if b.get(i) == Some(&b'>') {
        return i + 1;
    }
    if b.get(i) == Some(&b'-') && b.get(i + 1) == Some(&b'>') {
        return i + 2;
    }
    let mut j = i;
    while let Some(o) = memchr::memmem::find(&b[j..], b"--") {
        let mut k = j + o + 2;
        while b.get(k) == Some(&b'-') {
            k += 1;
        }
        match b.get(k) {
            Some(b'>') => return k + 1,
            Some(b'!') if b.get(k + 1) == Some(&b'>') => return k + 2,
            None => return b.len(),
            _ => j = k,
        }
    }
    b.len()
}

/// Is `</name` followed by white space, `/` or `>` at `i` (an appropriate end tag)?
fn end_tag_at(b: &[u8], i: usize, name: &[u8]) -> bool {
    let n = name.len();
    b.len() > i + 2 + n
        && b[i + 1] == b'/'
        && b[i + 2..i + 2 + n].eq_ignore_ascii_case(name)
        && (is_ws(b[i + 2 + n]) || matches!(b[i + 2 + n], b'/' | b'>'))
}

/// Where RCDATA or RAWTEXT starting at `i` ends: at the `<` of the appropriate end tag.
fn raw_end(b: &[u8], mut i: usize, name: &str) -> usize {
    while let Some(o) = memchr::memchr(b'<', &b[i..]) {
        i += o;
        if end_tag_at(b, i, name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Skips the run of `-` at `k` in script data: where it ends, after a `>` that closes it (the
/// escaped dash dash state's way back to script data), and whether one did.
fn dash_run(b: &[u8], mut k: usize) -> (usize, bool) {
    while b.get(k) == Some(&b'-') {
        k += 1;
    }
    if b.get(k) == Some(&b'>') {
        (k + 1, true)
    } else {
        (k, false)
    }
}

/// Where script data starting at `i` ends: at the `<` of the `</script` that closes it, after
/// the escaped (`<!--`) and double-escaped (`<!-- <script>`) states.
fn script_end(b: &[u8], mut i: usize) -> usize {
    #[derive(PartialEq)]
    enum S {
        Data,
        Escaped,
        Double,
    }
    let mut s = S::Data;
    while i < b.len() {
        match s {
            S::Data => {
                let Some(o) = memchr::memchr(b'<', &b[i..]) else {
                    return b.len();
                };
                i += o;
                if end_tag_at(b, i, b"script") {
                    return i;
                }
                if b[i..].starts_with(b"<!--") {
                    // Script data escape start: the dashes after `<!` are read by the escaped
                    // dash states, so `<!-->` returns to script data at once.
                    let (next, closed) = dash_run(b, i + 2);
                    s = if closed { S::Data } else { S::Escaped };
                    i = next;
                    continue;
                }
                i += 1;
            }
            S::Escaped | S::Double => {
                let Some(o) = memchr::memchr2(b'<', b'-', &b[i..]) else {
                    return b.len();
                };
                i += o;
                if b[i] == b'-' {
                    // `--` then more dashes then `>` leaves the escaped states.
                    if b.get(i + 1) == Some(&b'-') {
                        let (next, closed) = dash_run(b, i + 2);
                        if closed {
                            s = S::Data;
                        }
                        i = next;
                    } else {
                        i += 1;
                    }
                    continue;
                }
                // `<`
                if s == S::Escaped && end_tag_at(b, i, b"script") {
                    return i;
                }
                let (close, name_at) = if b.get(i + 1) == Some(&b'/') {
                    (true, i + 2)
                } else {
                    (false, i + 1)
                };
                // Double escape start / end: `<script` or `</script` followed by white space,
                // `/` or `>` toggles the double-escaped state.
                let is_script = b.len() > name_at + 6
                    && b[name_at..name_at + 6].eq_ignore_ascii_case(b"script")
                    && (is_ws(b[name_at + 6]) || matches!(b[name_at + 6], b'/' | b'>'));
                if is_script {
                    if s == S::Escaped && !close {
                        s = S::Double;
                    } else if s == S::Double && close {
                        s = S::Escaped;
                    }
                    // The delimiter is read by the (double) escaped state again.
                    i = name_at + 6;
                } else {
                    i += 1;
                }
            }
        }
    }
    b.len()
}

/// Decodes the character references of a run of text (or an attribute value when `attr`).
pub(crate) fn decode_refs(s: &str, attr: bool) -> Cow<'_, str> {
    let b = s.as_bytes();
    let Some(first) = memchr::memchr(b'&', b) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut i = first;
    while i < b.len() {
        // `b[i]` is `&`.
        let (consumed, c1, c2) = char_ref(s, i + 1, attr);
        if consumed == 0 {
            out.push('&');
            i += 1;
        } else {
            out.push(c1);
            if let Some(c2) = c2 {
                out.push(c2);
            }
            i += 1 + consumed;
        }
        let next = memchr::memchr(b'&', &b[i..]).map_or(b.len(), |o| i + o);
        out.push_str(&s[i..next]);
        i = next;
    }
    Cow::Owned(out)
}

/// The character reference after a `&` at `i`: bytes consumed (0: none, the `&` is text) and
/// the characters (character reference state and its sub-states).
fn char_ref(s: &str, i: usize, attr: bool) -> (usize, char, Option<char>) {
    let b = s.as_bytes();
    match b.get(i) {
        Some(b'#') => numeric_ref(b, i + 1).map_or((0, '&', None), |(n, c)| (n + 1, c, None)),
        Some(c) if c.is_ascii_alphanumeric() => named_ref(s, i, attr),
        _ => (0, '&', None),
    }
}

/// A numeric reference after `&#`: bytes consumed after the `#`, and the character.
fn numeric_ref(b: &[u8], i: usize) -> Option<(usize, char)> {
    let (base, start) = match b.get(i) {
        Some(b'x' | b'X') => (16, i + 1),
        _ => (10, i),
    };
    let mut j = start;
    let mut n: u32 = 0;
    let mut too_big = false;
    while let Some(d) = b.get(j).and_then(|&c| (c as char).to_digit(base)) {
        n = n.wrapping_mul(base);
        too_big |= n > 0x10FFFF;
        n = n.wrapping_add(d);
        j += 1;
    }
    if j == start {
        return None;
    }
    if b.get(j) == Some(&b';') {
        j += 1;
    }
    let c = match n {
        _ if too_big || n > 0x10FFFF => '\u{fffd}',
        0 | 0xD800..=0xDFFF => '\u{fffd}',
        0x80..=0x9F => html5ever::data::C1_REPLACEMENTS[(n - 0x80) as usize]
            .unwrap_or_else(|| char::from_u32(n).unwrap_or('\u{fffd}')),
        n => char::from_u32(n).unwrap_or('\u{fffd}'),
    };
    Some((j - i, c))
}

/// A named reference starting at `i` (after `&`): the longest name of the table that the text
/// continues (named character reference state).
fn named_ref(s: &str, i: usize, attr: bool) -> (usize, char, Option<char>) {
    let b = s.as_bytes();
    let table = &html5ever::data::NAMED_ENTITIES;
    let mut best: Option<(usize, u32, u32)> = None;
    let mut j = i;
    // Names are ASCII; the table holds every prefix of every name (as (0, 0)).
    while j < b.len() && b[j].is_ascii() {
        j += 1;
        match table.get(&s[i..j]) {
            Some(&(c1, c2)) => {
                if c1 != 0 {
                    best = Some((j - i, c1, c2));
                }
            }
            None => break,
        }
    }
    let Some((len, c1, c2)) = best else {
        return (0, '&', None);
    };
    let last = b[i + len - 1];
    if attr && last != b';' {
        if let Some(&next) = b.get(i + len) {
            if next == b'=' || next.is_ascii_alphanumeric() {
                return (0, '&', None);
            }
        }
    }
    let c1 = char::from_u32(c1).unwrap_or('\u{fffd}');
    let c2 = (c2 != 0).then(|| char::from_u32(c2).unwrap_or('\u{fffd}'));
    (len, c1, c2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(s: &str) -> Vec<Token<'_>> {
        let mut t = Tokenizer::new(s);
        let mut out = Vec::new();
        loop {
            let tok = t.next_token();
            if let Token::Start(tag) = &tok {
                match tag.name.as_ref() {
                    "script" => t.set_raw(RawKind::ScriptData, "script"),
                    "style" => t.set_raw(RawKind::Rawtext, "style"),
                    "title" => t.set_raw(RawKind::Rcdata, "title"),
                    _ => {}
                }
            }
            if tok == Token::Eof {
                return out;
            }
            out.push(tok);
        }
    }

    fn text(s: &str) -> String {
        tokens(s)
            .into_iter()
            .filter_map(|t| match t {
                Token::Text(t) => Some(t.into_owned()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn references() {
        assert_eq!(text("a &amp; b &lt;&gt; &#65;&#x42;&#X43"), "a & b <> ABC");
        assert_eq!(
            text("&notit; &notin; &copy &#128; &#0; &#xD800;"),
            "¬it; ∉ © € \u{fffd} \u{fffd}"
        );
        assert_eq!(text("&unknown; & &# &#x; &"), "&unknown; & &# &#x; &");
        assert_eq!(text("&NotEqualTilde;"), "\u{2242}\u{338}");
        let t = tokens("<a href='?a=1&copy=2&amp;b&copy;' title=&ampx>");
        let Token::Start(tag) = &t[0] else { panic!() };
        assert_eq!(tag.attr("href"), Some("?a=1&copy=2&b©"));
        assert_eq!(tag.attr("title"), Some("&ampx"));
    }

    #[test]
    fn tags_and_attributes() {
        let t = tokens("<DIV Class=\"x\" class=y id = z data-x hidden/><br/><a href=x/>");
        let Token::Start(div) = &t[0] else { panic!() };
        assert_eq!(div.name, "div");
        assert_eq!(div.attrs.len(), 4);
        assert_eq!(div.attr("class"), Some("x"));
        assert_eq!(div.attr("id"), Some("z"));
        assert_eq!(div.attr("hidden"), Some(""));
        assert!(div.self_closing);
        let Token::Start(a) = &t[2] else { panic!() };
        assert_eq!(a.attr("href"), Some("x/"));
        assert!(!a.self_closing);
        assert_eq!(tokens("</p foo='>'>"), vec![Token::End("p".into())]);
        assert_eq!(text("a < b <3 </> <"), "a < b <3  <");
        assert_eq!(tokens("<div"), vec![]);
        assert_eq!(tokens("<div a='x"), vec![]);
    }

    #[test]
    fn comments_and_declarations() {
        assert_eq!(
            text("a<!-- x -- y -->b<!-->c<!--->d<!-- --!>e<!---->f"),
            "abcdef"
        );
        assert_eq!(text("a<?php x ?>b</ x>c<!x>d"), "abcd");
        assert_eq!(text("a<!-- never closed"), "a");
        assert_eq!(text("a<![CDATA[x]]>b"), "ab");
        let mut t = Tokenizer::new("<![CDATA[x<y]]>b");
        t.foreign = true;
        assert_eq!(t.next_token(), Token::Text("x<y".into()));
    }

    #[test]
    fn doctypes() {
        let dt = |s: &str| match Tokenizer::new(s).next_token() {
            Token::Doctype(d) => d,
            t => panic!("{t:?}"),
        };
        assert_eq!(dt("<!DOCTYPE html>").name.as_deref(), Some("html"));
        assert!(!dt("<!doctype HTML>").force_quirks);
        let d = dt(
            r#"<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">"#,
        );
        assert_eq!(
            d.public_id.as_deref(),
            Some("-//W3C//DTD HTML 4.01 Transitional//EN")
        );
        assert_eq!(
            d.system_id.as_deref(),
            Some("http://www.w3.org/TR/html4/loose.dtd")
        );
        assert!(!d.force_quirks);
        assert!(dt("<!DOCTYPE>").force_quirks);
        assert!(dt("<!DOCTYPE html PUBLIC>").force_quirks);
        assert!(dt("<!DOCTYPE html bogus>").force_quirks);
    }

    #[test]
    fn text_states() {
        assert_eq!(
            text("<script>if (a<b) x='</div>';</script >c"),
            "if (a<b) x='</div>';c"
        );
        assert_eq!(
            text("<script><!-- <script> </script> --></script>c"),
            "<!-- <script> </script> -->c"
        );
        assert_eq!(text("<script><!-- </script>c"), "<!-- c");
        assert_eq!(text("<script><!--> </script>c"), "<!--> c");
        assert_eq!(text("<style>a</styles></style>b"), "a</styles>b");
        assert_eq!(text("<title>a &amp; <b></title>"), "a & <b>");
        assert_eq!(text("<script>never closed"), "never closed");
    }
}
