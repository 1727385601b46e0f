//! The HTML tree builder (HTML Living Standard §13.2.6), for main-text extraction, held to the
//! tree html5ever builds (the reference parser, [`super::reference`]).
//!
//! Followed as html5ever does (its 0.40 reading of the standard, select included): the insertion
//! modes from "initial" to "after after body" with the tables' modes, implied end tags, the scopes,
//! the list of active formatting elements with its reconstruction, the Noah's Ark clause and the
//! adoption agency algorithm, the quirks mode where it changes a tree (`<table>` inside `<p>`),
//! foreign content (SVG and MathML, with their integration points and the start tags that break
//! out of them), the text states of the tokenizer, and which `<a>` the page wrote (see
//! [`super::LinkOrigin`]).
//!
//! Left to the reference parser ([`Unsupported`], rare on real pages): foster parenting (text or
//! elements misplaced inside a table), `<template>`, `<frameset>`, and pages that nest deeper
//! than [`super::MAX_DEPTH`] elements.

use std::borrow::Cow;

use super::tokenizer::{Attr, Doctype, RawKind, Tag, Token, Tokenizer};
use super::tree::{Data, Element, LinkOrigin, Ns, Tree};

/// The page needs a part of the standard this builder leaves to the reference parser.
#[derive(Debug)]
pub(crate) struct Unsupported(#[cfg_attr(not(test), allow(dead_code))] pub &'static str);

type R<T> = Result<T, Unsupported>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Initial,
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
    Text,
    InTable,
    InTableText,
    InCaption,
    InColumnGroup,
    InTableBody,
    InRow,
    InCell,
    InTemplate,
    AfterBody,
    AfterAfterBody,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum DocumentMode {
    NoQuirks,
    LimitedQuirks,
    Quirks,
}

/// An entry of the list of active formatting elements.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Marker,
    Elem(u32),
}

enum Flow<'a> {
    Done,
    Reprocess(Mode, Token<'a>),
}

/// Builds the tree of a page, or says it needs the reference parser.
pub(crate) fn build(html: &str) -> Result<Tree<'_>, Unsupported> {
    let mut b = Builder {
        tree: Tree::new(),
        tok: Tokenizer::new(html),
        stack: Vec::new(),
        afe: Vec::new(),
        mode: Mode::Initial,
        orig_mode: Mode::InBody,
        head: None,
        form: None,
        quirks: DocumentMode::NoQuirks,
        ignore_lf: false,
        pending: Vec::new(),
        template_modes: Vec::new(),
        templates: Vec::new(),
        created_links: Vec::new(),
        open_link: None,
    };
    loop {
        b.tok.foreign = b.stack.last().is_some_and(|&n| b.el(n).ns != Ns::Html);
        let token = b.tok.next_token();
        let ignore_lf = std::mem::take(&mut b.ignore_lf);
        let token = match token {
            Token::Doctype(dt) => {
                if b.mode == Mode::Initial {
                    b.quirks = quirks_of(&dt);
                    b.mode = Mode::BeforeHtml;
                }
                continue;
            }
            Token::Text(t) => {
                // html5ever keeps the line feed when a parse error came between (a numeric
                // reference without `;`): such pages are left to it.
                if ignore_lf && t.starts_with('\n') && b.tok.text_began_with_reference() {
                    return Err(Unsupported("line feed from a reference after <pre>"));
                }
                let t = if ignore_lf && t.starts_with('\n') {
                    match t {
                        Cow::Borrowed(s) => Cow::Borrowed(&s[1..]),
                        Cow::Owned(s) => Cow::Owned(s[1..].to_string()),
                    }
                } else {
                    t
                };
                if t.is_empty() {
                    continue;
                }
                Token::Text(t)
            }
            t => t,
        };
        // Which `<a>` the page wrote (the token tap of the reference parser, `super::reference`).
        let link_tag = match &token {
            Token::Start(t) if t.name == "a" => Some(Some(t.self_closing)),
            Token::End(n) if n == "a" => Some(None),
            _ => None,
        };
        let eof = token == Token::Eof;
        b.process(token)?;
        match link_tag {
            Some(Some(self_closing)) => {
                if let Some(id) = b.created_links.pop() {
                    let origin = if self_closing {
                        b.open_link = None;
                        LinkOrigin::SelfClosing
                    } else {
                        b.open_link = Some(id);
                        LinkOrigin::LeftOpen
                    };
                    b.el_mut(id).link = Some(origin);
                }
            }
            Some(None) => {
                if let Some(id) = b.open_link.take() {
                    b.el_mut(id).link = Some(LinkOrigin::Closed);
                }
            }
            None => {}
        }
        for id in std::mem::take(&mut b.created_links) {
            b.el_mut(id).link = Some(LinkOrigin::Copy);
        }
        if eof {
            return Ok(b.tree);
        }
        if b.stack.len() > super::MAX_DEPTH {
            return Err(Unsupported("nesting depth"));
        }
    }
}

/// The quirks mode a DOCTYPE sets (HTML §13.2.6.4.1, "the initial insertion mode").
fn quirks_of(dt: &Doctype) -> DocumentMode {
    // Public identifiers that start so put a document in quirks mode (html5ever's list: the
    // standard's, without Silmaril's).
    const QUIRKY_PREFIXES: &[&str] = &[
        "-//as//dtd html 3.0 aswedit + extensions//",
        "-//advasoft ltd//dtd html 3.0 aswedit + extensions//",
        "-//ietf//dtd html 2.0 level 1//",
        "-//ietf//dtd html 2.0 level 2//",
        "-//ietf//dtd html 2.0 strict level 1//",
        "-//ietf//dtd html 2.0 strict level 2//",
        "-//ietf//dtd html 2.0 strict//",
        "-//ietf//dtd html 2.0//",
        "-//ietf//dtd html 2.1e//",
        "-//ietf//dtd html 3.0//",
        "-//ietf//dtd html 3.2 final//",
        "-//ietf//dtd html 3.2//",
        "-//ietf//dtd html 3//",
        "-//ietf//dtd html level 0//",
        "-//ietf//dtd html level 1//",
        "-//ietf//dtd html level 2//",
        "-//ietf//dtd html level 3//",
        "-//ietf//dtd html strict level 0//",
        "-//ietf//dtd html strict level 1//",
        "-//ietf//dtd html strict level 2//",
        "-//ietf//dtd html strict level 3//",
        "-//ietf//dtd html strict//",
        "-//ietf//dtd html//",
        "-//metrius//dtd metrius presentational//",
        "-//microsoft//dtd internet explorer 2.0 html strict//",
        "-//microsoft//dtd internet explorer 2.0 html//",
        "-//microsoft//dtd internet explorer 2.0 tables//",
        "-//microsoft//dtd internet explorer 3.0 html strict//",
        "-//microsoft//dtd internet explorer 3.0 html//",
        "-//microsoft//dtd internet explorer 3.0 tables//",
        "-//netscape comm. corp.//dtd html//",
        "-//netscape comm. corp.//dtd strict html//",
        "-//o'reilly and associates//dtd html 2.0//",
        "-//o'reilly and associates//dtd html extended 1.0//",
        "-//o'reilly and associates//dtd html extended relaxed 1.0//",
        "-//sq//dtd html 2.0 hotmetal + extensions//",
        "-//softquad software//dtd hotmetal pro 6.0::19990601::extensions to html 4.0//",
        "-//softquad//dtd hotmetal pro 4.0::19971010::extensions to html 4.0//",
        "-//spyglass//dtd html 2.0 extended//",
        "-//sun microsystems corp.//dtd hotjava html//",
        "-//sun microsystems corp.//dtd hotjava strict html//",
        "-//w3c//dtd html 3 1995-03-24//",
        "-//w3c//dtd html 3.2 draft//",
        "-//w3c//dtd html 3.2 final//",
        "-//w3c//dtd html 3.2//",
        "-//w3c//dtd html 3.2s draft//",
        "-//w3c//dtd html 4.0 frameset//",
        "-//w3c//dtd html 4.0 transitional//",
        "-//w3c//dtd html experimental 19960712//",
        "-//w3c//dtd html experimental 970421//",
        "-//w3c//dtd w3 html//",
        "-//w3o//dtd w3 html 3.0//",
        "-//webtechs//dtd mozilla html 2.0//",
        "-//webtechs//dtd mozilla html//",
    ];
    const HTML401_PREFIXES: &[&str] = &[
        "-//w3c//dtd html 4.01 frameset//",
        "-//w3c//dtd html 4.01 transitional//",
    ];
    const LIMITED_PREFIXES: &[&str] = &[
        "-//w3c//dtd xhtml 1.0 frameset//",
        "-//w3c//dtd xhtml 1.0 transitional//",
    ];
    if dt.force_quirks || dt.name.as_deref() != Some("html") {
        return DocumentMode::Quirks;
    }
    let public = dt.public_id.as_deref().map(str::to_ascii_lowercase);
    let system = dt.system_id.as_deref().map(str::to_ascii_lowercase);
    let p = public.as_deref();
    let s = system.as_deref();
    let starts = |list: &[&str]| p.is_some_and(|p| list.iter().any(|x| p.starts_with(x)));
    if matches!(
        p,
        Some(
            "-//w3o//dtd w3 html strict 3.0//en//" | "-/w3c/dtd html 4.0 transitional/en" | "html"
        )
    ) || s == Some("http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd")
        || starts(QUIRKY_PREFIXES)
        || (s.is_none() && starts(HTML401_PREFIXES))
    {
        return DocumentMode::Quirks;
    }
    if starts(LIMITED_PREFIXES) || (s.is_some() && starts(HTML401_PREFIXES)) {
        return DocumentMode::LimitedQuirks;
    }
    DocumentMode::NoQuirks
}

/// HTML white space (the tree builder's "ASCII whitespace").
fn is_ws(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ')
}

/// The length of the leading white space of a text.
fn ws_prefix(s: &str) -> usize {
    s.len() - s.trim_start_matches(is_ws).len()
}

/// Splits a text token into its leading white space and the rest.
fn split_ws<'a>(t: Cow<'a, str>) -> (Option<Cow<'a, str>>, Option<Cow<'a, str>>) {
    let n = ws_prefix(&t);
    if n == 0 {
        return (None, Some(t));
    }
    if n == t.len() {
        return (Some(t), None);
    }
    match t {
        Cow::Borrowed(s) => (Some(Cow::Borrowed(&s[..n])), Some(Cow::Borrowed(&s[n..]))),
        Cow::Owned(s) => (
            Some(Cow::Owned(s[..n].to_string())),
            Some(Cow::Owned(s[n..].to_string())),
        ),
    }
}

fn special(ns: Ns, n: &str) -> bool {
    ns == Ns::Html
        && matches!(
            n,
            "address"
                | "applet"
                | "area"
                | "article"
                | "aside"
                | "base"
                | "basefont"
                | "bgsound"
                | "blockquote"
                | "body"
                | "br"
                | "button"
                | "caption"
                | "center"
                | "col"
                | "colgroup"
                | "dd"
                | "details"
                | "dir"
                | "div"
                | "dl"
                | "dt"
                | "embed"
                | "fieldset"
                | "figcaption"
                | "figure"
                | "footer"
                | "form"
                | "frame"
                | "frameset"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "head"
                | "header"
                | "hgroup"
                | "hr"
                | "html"
                | "iframe"
                | "img"
                | "input"
                | "isindex"
                | "li"
                | "link"
                | "listing"
                | "main"
                | "marquee"
                | "menu"
                | "meta"
                | "nav"
                | "noembed"
                | "noframes"
                | "noscript"
                | "object"
                | "ol"
                | "p"
                | "param"
                | "plaintext"
                | "pre"
                | "script"
                | "section"
                | "select"
                | "source"
                | "style"
                | "summary"
                | "table"
                | "tbody"
                | "td"
                | "template"
                | "textarea"
                | "tfoot"
                | "th"
                | "thead"
                | "title"
                | "tr"
                | "track"
                | "ul"
                | "wbr"
                | "xmp"
        )
}

fn mathml_text_integration(ns: Ns, n: &str) -> bool {
    ns == Ns::Math && matches!(n, "mi" | "mo" | "mn" | "ms" | "mtext")
}

fn svg_html_integration(ns: Ns, n: &str) -> bool {
    ns == Ns::Svg && matches!(n, "foreignobject" | "desc" | "title")
}

/// The default scope's boundaries (html5ever's set: `select` included, `annotation-xml` not).
fn default_scope(ns: Ns, n: &str) -> bool {
    (ns == Ns::Html
        && matches!(
            n,
            "applet"
                | "caption"
                | "html"
                | "table"
                | "td"
                | "th"
                | "marquee"
                | "object"
                | "select"
                | "template"
        ))
        || mathml_text_integration(ns, n)
        || svg_html_integration(ns, n)
}

fn list_item_scope(ns: Ns, n: &str) -> bool {
    default_scope(ns, n) || (ns == Ns::Html && matches!(n, "ol" | "ul"))
}

fn button_scope(ns: Ns, n: &str) -> bool {
    default_scope(ns, n) || (ns == Ns::Html && n == "button")
}

fn table_scope(ns: Ns, n: &str) -> bool {
    ns == Ns::Html && matches!(n, "html" | "table" | "template")
}

fn implied_end(ns: Ns, n: &str) -> bool {
    ns == Ns::Html
        && matches!(
            n,
            "dd" | "dt" | "li" | "option" | "optgroup" | "p" | "rb" | "rp" | "rt" | "rtc"
        )
}

/// Start tags of a table's parts, which close an open caption or cell ("in caption" and "in
/// cell" insertion modes).
fn table_part_start(n: &str) -> bool {
    matches!(
        n,
        "caption" | "col" | "colgroup" | "tbody" | "td" | "tfoot" | "th" | "thead" | "tr"
    )
}

fn is_heading(n: &str) -> bool {
    matches!(n, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

struct Builder<'a> {
    tree: Tree<'a>,
    tok: Tokenizer<'a>,
    stack: Vec<u32>,
    afe: Vec<Entry>,
    mode: Mode,
    orig_mode: Mode,
    head: Option<u32>,
    form: Option<u32>,
    quirks: DocumentMode,
    ignore_lf: bool,
    pending: Vec<Cow<'a, str>>,
    /// The stack of template insertion modes.
    template_modes: Vec<Mode>,
    /// Each `<template>` with its contents: a node outside the tree, as the reference parser's
    /// template contents are outside the tree extraction walks.
    templates: Vec<(u32, u32)>,
    /// HTML `<a>` elements created while processing the current token.
    created_links: Vec<u32>,
    /// The `<a>` the page wrote that is open now (see `build`).
    open_link: Option<u32>,
}

impl<'a> Builder<'a> {
    #[inline]
    fn el(&self, id: u32) -> &Element<'a> {
        self.tree.element(id).expect("an element")
    }

    fn el_mut(&mut self, id: u32) -> &mut Element<'a> {
        self.tree.element_mut(id).expect("an element")
    }

    fn current(&self) -> u32 {
        *self.stack.last().expect("an open element")
    }

    fn current_is(&self, name: &str) -> bool {
        self.stack.last().is_some_and(|&n| self.el(n).is(name))
    }

    fn current_in(&self, set: impl Fn(Ns, &str) -> bool) -> bool {
        self.stack.last().is_some_and(|&n| {
            let e = self.el(n);
            set(e.ns, &e.name)
        })
    }

    /// Is an element matching `pred` in the scope `scope`?
    fn in_scope(
        &self,
        scope: impl Fn(Ns, &str) -> bool,
        pred: impl Fn(u32, &Element) -> bool,
    ) -> bool {
        for &n in self.stack.iter().rev() {
            let e = self.el(n);
            if pred(n, e) {
                return true;
            }
            if scope(e.ns, &e.name) {
                return false;
            }
        }
        false
    }

    fn in_scope_named(&self, scope: impl Fn(Ns, &str) -> bool, name: &str) -> bool {
        self.in_scope(scope, |_, e| e.is(name))
    }

    fn on_stack_named(&self, name: &str) -> bool {
        self.stack.iter().any(|&n| self.el(n).is(name))
    }

    fn pop(&mut self) -> u32 {
        self.stack.pop().expect("an open element")
    }

    /// Pops until an element matching `pred` is popped.
    fn pop_until(&mut self, pred: impl Fn(&Element) -> bool) -> usize {
        let mut n = 0;
        while let Some(id) = self.stack.pop() {
            n += 1;
            if pred(self.el(id)) {
                break;
            }
        }
        n
    }

    fn pop_until_named(&mut self, name: &str) {
        self.pop_until(|e| e.is(name));
    }

    /// Pops until the current node is in `set` (clearing the stack back to a table context).
    fn pop_until_current(&mut self, set: impl Fn(Ns, &str) -> bool) {
        while !self.current_in(&set) {
            self.stack.pop();
        }
    }

    fn generate_implied_end(&mut self, except: Option<&str>) {
        while let Some(&n) = self.stack.last() {
            let e = self.el(n);
            if !implied_end(e.ns, &e.name) || except.is_some_and(|x| e.name == x) {
                return;
            }
            self.stack.pop();
        }
    }

    fn close_p(&mut self) {
        self.generate_implied_end(Some("p"));
        self.pop_until_named("p");
    }

    fn close_p_in_button_scope(&mut self) {
        if self.in_scope_named(button_scope, "p") {
            self.close_p();
        }
    }

    fn create(&mut self, name: Cow<'a, str>, ns: Ns, attrs: Vec<Attr<'a>>) -> u32 {
        let link = ns == Ns::Html && name == "a";
        let id = self.tree.create(Data::Element(Element {
            name,
            ns,
            attrs,
            link: None,
        }));
        if link {
            self.created_links.push(id);
        }
        id
    }

    /// Inserts an element at the current node (foster parenting is left to the reference
    /// parser, so the appropriate place is always the current node).
    fn insert(&mut self, name: Cow<'a, str>, ns: Ns, attrs: Vec<Attr<'a>>, push: bool) -> u32 {
        let template = ns == Ns::Html && name == "template";
        let id = self.create(name, ns, attrs);
        let parent = self.target(self.current());
        self.tree.append(parent, id);
        if template {
            let contents = self.tree.create(Data::Document);
            self.templates.push((id, contents));
        }
        if push {
            self.stack.push(id);
        }
        id
    }

    fn insert_tag(&mut self, tag: Tag<'a>) -> u32 {
        self.insert(tag.name, Ns::Html, tag.attrs, true)
    }

    fn insert_and_pop(&mut self, tag: Tag<'a>) -> u32 {
        self.insert(tag.name, Ns::Html, tag.attrs, false)
    }

    fn insert_phantom(&mut self, name: &'static str) -> u32 {
        self.insert(Cow::Borrowed(name), Ns::Html, Vec::new(), true)
    }

    fn append_text(&mut self, text: Cow<'a, str>) {
        let parent = self.target(self.current());
        self.tree.append_text(parent, text);
    }

    /// Inserts a text's leading white space at the current node (the modes before the body, and
    /// the column group's); the rest, if any, is a token to process further.
    fn insert_leading_ws(&mut self, s: Cow<'a, str>) -> Option<Token<'a>> {
        let (ws, rest) = split_ws(s);
        if let Some(ws) = ws {
            self.append_text(ws);
        }
        rest.map(Token::Text)
    }

    /// Text after the body: its white space by the "in body" rules, the rest reprocessed in
    /// body.
    fn text_after_body(&mut self, s: Cow<'a, str>) -> R<Flow<'a>> {
        let (ws, rest) = split_ws(s);
        if let Some(ws) = ws {
            self.step(Mode::InBody, Token::Text(ws))?;
        }
        Ok(match rest {
            Some(rest) => Flow::Reprocess(Mode::InBody, Token::Text(rest)),
            None => Flow::Done,
        })
    }

    /// Where a node inserted into `parent` goes: a template's contents for a `<template>`.
    fn target(&self, parent: u32) -> u32 {
        if self.el(parent).is("template") {
            if let Some(&(_, contents)) = self.templates.iter().rev().find(|(t, _)| *t == parent) {
                return contents;
            }
        }
        parent
    }

    /// Generates implied end tags thoroughly (table parts too).
    fn generate_implied_end_thoroughly(&mut self) {
        while let Some(&n) = self.stack.last() {
            let e = self.el(n);
            let table_part = e.ns == Ns::Html
                && matches!(
                    e.name.as_ref(),
                    "caption" | "colgroup" | "tbody" | "td" | "tfoot" | "th" | "thead" | "tr"
                );
            if !implied_end(e.ns, &e.name) && !table_part {
                return;
            }
            self.stack.pop();
        }
    }

    /// The generic raw text and RCDATA parsing algorithms.
    fn raw(&mut self, tag: Tag<'a>, kind: RawKind) -> Flow<'a> {
        self.tok.set_raw(kind, &tag.name);
        self.insert_tag(tag);
        self.orig_mode = self.mode;
        self.mode = Mode::Text;
        Flow::Done
    }

    fn add_attrs_if_missing(&mut self, id: u32, attrs: Vec<Attr<'a>>) {
        let e = self.el_mut(id);
        for (n, v) in attrs {
            if e.attr(&n).is_none() {
                e.attrs.push((n, v));
            }
        }
    }

    // The list of active formatting elements.

    fn afe_position(&self, id: u32) -> Option<usize> {
        self.afe.iter().rposition(|&e| e == Entry::Elem(id))
    }

    fn clear_afe_to_marker(&mut self) {
        while let Some(e) = self.afe.pop() {
            if e == Entry::Marker {
                break;
            }
        }
    }

    fn reconstruct_afe(&mut self) {
        let Some(&last) = self.afe.last() else { return };
        let open = |b: &Self, e: Entry| match e {
            Entry::Marker => true,
            Entry::Elem(id) => b.stack.contains(&id),
        };
        if open(self, last) {
            return;
        }
        let mut i = self.afe.len() - 1;
        while i > 0 {
            i -= 1;
            if open(self, self.afe[i]) {
                i += 1;
                break;
            }
        }
        while i < self.afe.len() {
            let Entry::Elem(old) = self.afe[i] else {
                unreachable!()
            };
            let e = self.el(old).clone();
            let new = self.insert(e.name, Ns::Html, e.attrs, true);
            self.afe[i] = Entry::Elem(new);
            i += 1;
        }
    }

    /// Inserts a formatting element and pushes it on the list (with the Noah's Ark clause).
    fn insert_formatting(&mut self, tag: Tag<'a>) {
        let mut first = None;
        let mut matches = 0;
        for (i, &entry) in self.afe.iter().enumerate().rev() {
            let Entry::Elem(id) = entry else { break };
            let e = self.el(id);
            if e.name == tag.name
                && e.attrs.len() == tag.attrs.len()
                && tag.attrs.iter().all(|(n, v)| e.attr(n) == Some(v.as_ref()))
            {
                first = Some(i);
                matches += 1;
            }
        }
        if matches >= 3 {
            self.afe.remove(first.expect("a match"));
        }
        let id = self.insert_tag(tag);
        self.afe.push(Entry::Elem(id));
    }

    /// The adoption agency algorithm (HTML §13.2.6.4.7), as html5ever runs it.
    fn adoption_agency(&mut self, subject: &str) {
        let cur = self.current();
        if self.el(cur).is(subject) && self.afe_position(cur).is_none() {
            self.pop();
            return;
        }
        for _ in 0..8 {
            let mut found = None;
            for (i, &entry) in self.afe.iter().enumerate().rev() {
                match entry {
                    Entry::Marker => break,
                    Entry::Elem(id) if self.el(id).name == subject => {
                        found = Some((i, id));
                        break;
                    }
                    Entry::Elem(_) => {}
                }
            }
            let Some((fmt_index, fmt)) = found else {
                self.end_tag_in_body_other(subject);
                return;
            };
            let Some(fmt_stack) = self.stack.iter().rposition(|&n| n == fmt) else {
                self.afe.remove(fmt_index);
                return;
            };
            if !self.in_scope(default_scope, |n, _| n == fmt) {
                return;
            }
            let furthest = self.stack[fmt_stack..]
                .iter()
                .position(|&n| {
                    let e = self.el(n);
                    special(e.ns, &e.name)
                })
                .map(|p| p + fmt_stack);
            let Some(furthest_index) = furthest else {
                self.stack.truncate(fmt_stack);
                self.afe.remove(fmt_index);
                return;
            };
            let furthest_block = self.stack[furthest_index];
            let common_ancestor = self.stack[fmt_stack - 1];
            // The bookmark: replace the formatting element's entry, or insert after a node.
            let mut bookmark_after: Option<u32> = None;
            let mut node_index = furthest_index;
            let mut last_node = furthest_block;
            let mut inner = 0;
            loop {
                inner += 1;
                node_index -= 1;
                let node = self.stack[node_index];
                if node == fmt {
                    break;
                }
                if inner > 3 {
                    if let Some(p) = self.afe_position(node) {
                        self.afe.remove(p);
                    }
                    self.stack.remove(node_index);
                    continue;
                }
                let Some(p) = self.afe_position(node) else {
                    self.stack.remove(node_index);
                    continue;
                };
                let e = self.el(node).clone();
                let new = self.create(e.name, Ns::Html, e.attrs);
                self.stack[node_index] = new;
                self.afe[p] = Entry::Elem(new);
                if last_node == furthest_block {
                    bookmark_after = Some(new);
                }
                self.tree.detach(last_node);
                self.tree.append(new, last_node);
                last_node = new;
            }
            self.tree.detach(last_node);
            let target = self.target(common_ancestor);
            self.tree.append(target, last_node);
            let e = self.el(fmt).clone();
            let new = self.create(e.name, Ns::Html, e.attrs);
            self.tree.reparent_children(furthest_block, new);
            self.tree.append(furthest_block, new);
            match bookmark_after {
                None => {
                    let p = self.afe_position(fmt).expect("bookmark");
                    self.afe[p] = Entry::Elem(new);
                }
                Some(prev) => {
                    let p = self.afe_position(prev).expect("bookmark") + 1;
                    self.afe.insert(p, Entry::Elem(new));
                    let old = self.afe_position(fmt).expect("formatting element");
                    self.afe.remove(old);
                }
            }
            if let Some(p) = self.stack.iter().rposition(|&n| n == fmt) {
                self.stack.remove(p);
            }
            let fb = self
                .stack
                .iter()
                .position(|&n| n == furthest_block)
                .expect("furthest block");
            self.stack.insert(fb + 1, new);
        }
    }

    /// "Any other end tag" in body.
    fn end_tag_in_body_other(&mut self, name: &str) {
        let mut found = None;
        for (i, &n) in self.stack.iter().enumerate().rev() {
            let e = self.el(n);
            if e.is(name) {
                found = Some(i);
                break;
            }
            if special(e.ns, &e.name) {
                return;
            }
        }
        let Some(i) = found else { return };
        self.generate_implied_end(Some(name));
        self.stack.truncate(i);
    }

    fn reset_mode(&self) -> R<Mode> {
        for (i, &n) in self.stack.iter().enumerate().rev() {
            let last = i == 0;
            let e = self.el(n);
            if e.ns != Ns::Html {
                continue;
            }
            match e.name.as_ref() {
                "td" | "th" if !last => return Ok(Mode::InCell),
                "tr" => return Ok(Mode::InRow),
                "tbody" | "thead" | "tfoot" => return Ok(Mode::InTableBody),
                "caption" => return Ok(Mode::InCaption),
                "colgroup" => return Ok(Mode::InColumnGroup),
                "table" => return Ok(Mode::InTable),
                "template" => {
                    return self
                        .template_modes
                        .last()
                        .copied()
                        .ok_or(Unsupported("template"))
                }
                "frameset" => return Err(Unsupported("frameset")),
                "head" if !last => return Ok(Mode::InHead),
                "body" => return Ok(Mode::InBody),
                "html" => {
                    return Ok(if self.head.is_none() {
                        Mode::BeforeHead
                    } else {
                        Mode::AfterHead
                    })
                }
                _ => {}
            }
        }
        Ok(Mode::InBody)
    }

    fn close_cell(&mut self) {
        self.generate_implied_end(None);
        self.pop_until(|e| e.is("td") || e.is("th"));
        self.clear_afe_to_marker();
    }

    /// Does a token go to the foreign content rules (the tree construction dispatcher)?
    fn is_foreign(&self, t: &Token) -> bool {
        if matches!(t, Token::Eof) {
            return false;
        }
        let Some(&cur) = self.stack.last() else {
            return false;
        };
        let e = self.el(cur);
        if e.ns == Ns::Html {
            return false;
        }
        if mathml_text_integration(e.ns, &e.name) {
            match t {
                Token::Text(_) => return false,
                Token::Start(tag) if !matches!(tag.name.as_ref(), "mglyph" | "malignmark") => {
                    return false
                }
                _ => {}
            }
        }
        if svg_html_integration(e.ns, &e.name) && matches!(t, Token::Text(_) | Token::Start(_)) {
            return false;
        }
        if e.ns == Ns::Math && e.name == "annotation-xml" {
            if let Token::Start(tag) = t {
                if tag.name == "svg" {
                    return false;
                }
            }
        }
        true
    }

    fn process(&mut self, mut t: Token<'a>) -> R<()> {
        loop {
            let flow = if self.is_foreign(&t) {
                self.step_foreign(t)?
            } else {
                self.step(self.mode, t)?
            };
            match flow {
                Flow::Done => return Ok(()),
                Flow::Reprocess(mode, t2) => {
                    self.mode = mode;
                    t = t2;
                }
            }
        }
    }

    fn step_foreign(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        match t {
            Token::Text(s) => {
                self.append_text(s);
                Ok(Flow::Done)
            }
            Token::Comment => Ok(Flow::Done),
            Token::Start(tag) => {
                let breakout = matches!(
                    tag.name.as_ref(),
                    "b" | "big"
                        | "blockquote"
                        | "body"
                        | "br"
                        | "center"
                        | "code"
                        | "dd"
                        | "div"
                        | "dl"
                        | "dt"
                        | "em"
                        | "embed"
                        | "h1"
                        | "h2"
                        | "h3"
                        | "h4"
                        | "h5"
                        | "h6"
                        | "head"
                        | "hr"
                        | "i"
                        | "img"
                        | "li"
                        | "listing"
                        | "menu"
                        | "meta"
                        | "nobr"
                        | "ol"
                        | "p"
                        | "pre"
                        | "ruby"
                        | "s"
                        | "small"
                        | "span"
                        | "strong"
                        | "strike"
                        | "sub"
                        | "sup"
                        | "table"
                        | "tt"
                        | "u"
                        | "ul"
                        | "var"
                ) || (tag.name == "font"
                    && tag
                        .attrs
                        .iter()
                        .any(|(n, _)| matches!(n.as_ref(), "color" | "face" | "size")));
                if breakout {
                    return self.breakout(Token::Start(tag));
                }
                let ns = self.el(self.current()).ns;
                let self_closing = tag.self_closing;
                self.insert(tag.name, ns, tag.attrs, !self_closing);
                Ok(Flow::Done)
            }
            Token::End(name) => {
                if name == "br" || name == "p" {
                    return self.breakout(Token::End(name));
                }
                let mut i = self.stack.len() - 1;
                let mut first = true;
                loop {
                    if i == 0 {
                        return Ok(Flow::Done);
                    }
                    let e = self.el(self.stack[i]);
                    let html = e.ns == Ns::Html;
                    let eq = e.name.eq_ignore_ascii_case(&name);
                    if !first && html {
                        return self.step(self.mode, Token::End(name));
                    }
                    if eq {
                        self.stack.truncate(i);
                        return Ok(Flow::Done);
                    }
                    first = false;
                    i -= 1;
                }
            }
            Token::Eof | Token::Doctype(_) => Ok(Flow::Done),
        }
    }

    /// A start tag (or `</br>`, `</p>`) that leaves foreign content.
    fn breakout(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        while !self.current_in(|ns, n| {
            ns == Ns::Html || mathml_text_integration(ns, n) || svg_html_integration(ns, n)
        }) {
            self.pop();
        }
        self.step(self.mode, t)
    }

    fn step(&mut self, mode: Mode, t: Token<'a>) -> R<Flow<'a>> {
        match mode {
            Mode::Initial => match t {
                Token::Comment => Ok(Flow::Done),
                Token::Text(s) => match split_ws(s) {
                    (_, None) => Ok(Flow::Done),
                    (_, Some(rest)) => {
                        self.quirks = DocumentMode::Quirks;
                        Ok(Flow::Reprocess(Mode::BeforeHtml, Token::Text(rest)))
                    }
                },
                t => {
                    self.quirks = DocumentMode::Quirks;
                    Ok(Flow::Reprocess(Mode::BeforeHtml, t))
                }
            },
            Mode::BeforeHtml => {
                let t = match t {
                    Token::Comment => return Ok(Flow::Done),
                    Token::Text(s) => match split_ws(s) {
                        (_, None) => return Ok(Flow::Done),
                        (_, Some(rest)) => Token::Text(rest),
                    },
                    Token::Start(tag) if tag.name == "html" => {
                        let id = self.create(tag.name, Ns::Html, tag.attrs);
                        self.tree.append(0, id);
                        self.stack.push(id);
                        self.mode = Mode::BeforeHead;
                        return Ok(Flow::Done);
                    }
                    Token::End(ref n) if !matches!(n.as_ref(), "head" | "body" | "html" | "br") => {
                        return Ok(Flow::Done)
                    }
                    t => t,
                };
                let id = self.create(Cow::Borrowed("html"), Ns::Html, Vec::new());
                self.tree.append(0, id);
                self.stack.push(id);
                Ok(Flow::Reprocess(Mode::BeforeHead, t))
            }
            Mode::BeforeHead => {
                let t = match t {
                    Token::Text(s) => match split_ws(s) {
                        (_, None) => return Ok(Flow::Done),
                        (_, Some(rest)) => Token::Text(rest),
                    },
                    Token::Comment => return Ok(Flow::Done),
                    Token::Start(ref tag) if tag.name == "html" => {
                        return self.step(Mode::InBody, t)
                    }
                    Token::Start(tag) if tag.name == "head" => {
                        self.head = Some(self.insert_tag(tag));
                        self.mode = Mode::InHead;
                        return Ok(Flow::Done);
                    }
                    Token::End(ref n) if !matches!(n.as_ref(), "head" | "body" | "html" | "br") => {
                        return Ok(Flow::Done)
                    }
                    t => t,
                };
                self.head = Some(self.insert_phantom("head"));
                Ok(Flow::Reprocess(Mode::InHead, t))
            }
            Mode::InHead => self.in_head(t),
            Mode::AfterHead => {
                let t = match t {
                    Token::Text(s) => match self.insert_leading_ws(s) {
                        Some(rest) => rest,
                        None => return Ok(Flow::Done),
                    },
                    Token::Comment => return Ok(Flow::Done),
                    Token::Start(tag) => match tag.name.as_ref() {
                        "html" => return self.step(Mode::InBody, Token::Start(tag)),
                        "body" => {
                            self.insert_tag(tag);
                            self.mode = Mode::InBody;
                            return Ok(Flow::Done);
                        }
                        "frameset" => return Err(Unsupported("frameset")),
                        "base" | "basefont" | "bgsound" | "link" | "meta" | "noframes"
                        | "script" | "style" | "template" | "title" => {
                            let head = self.head.ok_or(Unsupported("no head"))?;
                            self.stack.push(head);
                            let r = self.in_head(Token::Start(tag))?;
                            if let Some(p) = self.stack.iter().rposition(|&n| n == head) {
                                self.stack.remove(p);
                            }
                            return Ok(r);
                        }
                        "head" => return Ok(Flow::Done),
                        _ => Token::Start(tag),
                    },
                    Token::End(n) => match n.as_ref() {
                        "template" => return self.in_head(Token::End(n)),
                        "body" | "html" | "br" => Token::End(n),
                        _ => return Ok(Flow::Done),
                    },
                    t => t,
                };
                self.insert_phantom("body");
                Ok(Flow::Reprocess(Mode::InBody, t))
            }
            Mode::InBody => self.in_body(t),
            Mode::Text => match t {
                Token::Text(s) => {
                    self.append_text(s);
                    Ok(Flow::Done)
                }
                Token::Eof => {
                    self.pop();
                    Ok(Flow::Reprocess(self.orig_mode, t))
                }
                Token::End(_) => {
                    self.pop();
                    self.mode = self.orig_mode;
                    Ok(Flow::Done)
                }
                _ => Ok(Flow::Done),
            },
            Mode::InTable => self.in_table(t),
            Mode::InTableText => match t {
                Token::Text(s) => {
                    self.pending.push(s);
                    Ok(Flow::Done)
                }
                t => {
                    let pending = std::mem::take(&mut self.pending);
                    if pending.iter().any(|s| s.chars().any(|c| !is_ws(c))) {
                        return Err(Unsupported("foster parenting"));
                    }
                    for s in pending {
                        self.append_text(s);
                    }
                    Ok(Flow::Reprocess(self.orig_mode, t))
                }
            },
            Mode::InCaption => match t {
                Token::Start(ref tag) if table_part_start(&tag.name) => self.end_caption(t),
                Token::End(ref n) if matches!(n.as_ref(), "table" | "caption") => {
                    self.end_caption(t)
                }
                Token::End(ref n)
                    if matches!(
                        n.as_ref(),
                        "body"
                            | "col"
                            | "colgroup"
                            | "html"
                            | "tbody"
                            | "td"
                            | "tfoot"
                            | "th"
                            | "thead"
                            | "tr"
                    ) =>
                {
                    Ok(Flow::Done)
                }
                t => self.step(Mode::InBody, t),
            },
            Mode::InColumnGroup => {
                let t = match t {
                    Token::Text(s) => match self.insert_leading_ws(s) {
                        Some(rest) => rest,
                        None => return Ok(Flow::Done),
                    },
                    Token::Comment => return Ok(Flow::Done),
                    Token::Start(tag) => match tag.name.as_ref() {
                        "html" => return self.step(Mode::InBody, Token::Start(tag)),
                        "col" => {
                            self.insert_and_pop(tag);
                            return Ok(Flow::Done);
                        }
                        "template" => return self.in_head(Token::Start(tag)),
                        _ => Token::Start(tag),
                    },
                    Token::End(n) => match n.as_ref() {
                        "colgroup" => {
                            if self.current_is("colgroup") {
                                self.pop();
                                self.mode = Mode::InTable;
                            }
                            return Ok(Flow::Done);
                        }
                        "col" => return Ok(Flow::Done),
                        "template" => return self.in_head(Token::End(n)),
                        _ => Token::End(n),
                    },
                    Token::Eof => return self.step(Mode::InBody, Token::Eof),
                    t => t,
                };
                if self.current_is("colgroup") {
                    self.pop();
                    Ok(Flow::Reprocess(Mode::InTable, t))
                } else {
                    Ok(Flow::Done)
                }
            }
            Mode::InTableBody => match t {
                Token::Start(tag) if tag.name == "tr" => {
                    self.pop_until_current(table_body_context);
                    self.insert_tag(tag);
                    self.mode = Mode::InRow;
                    Ok(Flow::Done)
                }
                Token::Start(ref tag) if matches!(tag.name.as_ref(), "th" | "td") => {
                    self.pop_until_current(table_body_context);
                    self.insert_phantom("tr");
                    Ok(Flow::Reprocess(Mode::InRow, t))
                }
                Token::End(ref n) if matches!(n.as_ref(), "tbody" | "tfoot" | "thead") => {
                    if self.in_scope_named(table_scope, n) {
                        self.pop_until_current(table_body_context);
                        self.pop();
                        self.mode = Mode::InTable;
                    }
                    Ok(Flow::Done)
                }
                Token::Start(ref tag)
                    if matches!(
                        tag.name.as_ref(),
                        "caption" | "col" | "colgroup" | "tbody" | "tfoot" | "thead"
                    ) =>
                {
                    self.leave_table_body(t)
                }
                Token::End(ref n) if n == "table" => self.leave_table_body(t),
                Token::End(ref n)
                    if matches!(
                        n.as_ref(),
                        "body" | "caption" | "col" | "colgroup" | "html" | "td" | "th" | "tr"
                    ) =>
                {
                    Ok(Flow::Done)
                }
                t => self.in_table(t),
            },
            Mode::InRow => match t {
                Token::Start(tag) if matches!(tag.name.as_ref(), "th" | "td") => {
                    self.pop_until_current(table_row_context);
                    self.insert_tag(tag);
                    self.mode = Mode::InCell;
                    self.afe.push(Entry::Marker);
                    Ok(Flow::Done)
                }
                Token::End(ref n) if n == "tr" => {
                    if self.in_scope_named(table_scope, "tr") {
                        self.pop_until_current(table_row_context);
                        self.pop();
                        self.mode = Mode::InTableBody;
                    }
                    Ok(Flow::Done)
                }
                Token::Start(ref tag)
                    if matches!(
                        tag.name.as_ref(),
                        "caption" | "col" | "colgroup" | "tbody" | "tfoot" | "thead" | "tr"
                    ) =>
                {
                    self.leave_row(t)
                }
                Token::End(ref n) if n == "table" => self.leave_row(t),
                Token::End(ref n) if matches!(n.as_ref(), "tbody" | "tfoot" | "thead") => {
                    if self.in_scope_named(table_scope, n) && self.in_scope_named(table_scope, "tr")
                    {
                        self.pop_until_current(table_row_context);
                        self.pop();
                        return Ok(Flow::Reprocess(Mode::InTableBody, t));
                    }
                    Ok(Flow::Done)
                }
                Token::End(ref n)
                    if matches!(
                        n.as_ref(),
                        "body" | "caption" | "col" | "colgroup" | "html" | "td" | "th"
                    ) =>
                {
                    Ok(Flow::Done)
                }
                t => self.in_table(t),
            },
            Mode::InCell => match t {
                Token::End(ref n) if matches!(n.as_ref(), "td" | "th") => {
                    if self.in_scope_named(table_scope, n) {
                        self.generate_implied_end(None);
                        let name = n.to_string();
                        self.pop_until_named(&name);
                        self.clear_afe_to_marker();
                        self.mode = Mode::InRow;
                    }
                    Ok(Flow::Done)
                }
                Token::Start(ref tag) if table_part_start(&tag.name) => {
                    if self.in_scope(table_scope, |_, e| e.is("td") || e.is("th")) {
                        self.close_cell();
                        Ok(Flow::Reprocess(Mode::InRow, t))
                    } else {
                        Ok(Flow::Done)
                    }
                }
                Token::End(ref n)
                    if matches!(n.as_ref(), "body" | "caption" | "col" | "colgroup" | "html") =>
                {
                    Ok(Flow::Done)
                }
                Token::End(ref n)
                    if matches!(n.as_ref(), "table" | "tbody" | "tfoot" | "thead" | "tr") =>
                {
                    if self.in_scope_named(table_scope, n) {
                        self.close_cell();
                        Ok(Flow::Reprocess(Mode::InRow, t))
                    } else {
                        Ok(Flow::Done)
                    }
                }
                t => self.step(Mode::InBody, t),
            },
            Mode::InTemplate => match t {
                Token::Text(_) | Token::Comment => self.step(Mode::InBody, t),
                Token::Start(ref tag) => {
                    let next = match tag.name.as_ref() {
                        "base" | "basefont" | "bgsound" | "link" | "meta" | "noframes"
                        | "script" | "style" | "template" | "title" => {
                            return self.in_head(t);
                        }
                        "caption" | "colgroup" | "tbody" | "tfoot" | "thead" => Mode::InTable,
                        "col" => Mode::InColumnGroup,
                        "tr" => Mode::InTableBody,
                        "td" | "th" => Mode::InRow,
                        _ => Mode::InBody,
                    };
                    self.template_modes.pop();
                    self.template_modes.push(next);
                    Ok(Flow::Reprocess(next, t))
                }
                Token::End(ref n) if n == "template" => self.in_head(t),
                Token::Eof => {
                    if !self.on_stack_named("template") {
                        return Ok(Flow::Done);
                    }
                    self.pop_until_named("template");
                    self.clear_afe_to_marker();
                    self.template_modes.pop();
                    let mode = self.reset_mode()?;
                    self.mode = mode;
                    Ok(Flow::Reprocess(mode, t))
                }
                _ => Ok(Flow::Done),
            },
            Mode::AfterBody => match t {
                Token::Text(s) => self.text_after_body(s),
                Token::Comment => Ok(Flow::Done),
                Token::Start(ref tag) if tag.name == "html" => self.step(Mode::InBody, t),
                Token::End(ref n) if n == "html" => {
                    self.mode = Mode::AfterAfterBody;
                    Ok(Flow::Done)
                }
                Token::Eof => Ok(Flow::Done),
                t => Ok(Flow::Reprocess(Mode::InBody, t)),
            },
            Mode::AfterAfterBody => match t {
                Token::Text(s) => self.text_after_body(s),
                Token::Comment => Ok(Flow::Done),
                Token::Start(ref tag) if tag.name == "html" => self.step(Mode::InBody, t),
                Token::Eof => Ok(Flow::Done),
                t => Ok(Flow::Reprocess(Mode::InBody, t)),
            },
        }
    }

    fn end_caption(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        if !self.in_scope_named(table_scope, "caption") {
            return Ok(Flow::Done);
        }
        self.generate_implied_end(None);
        self.pop_until_named("caption");
        self.clear_afe_to_marker();
        if matches!(&t, Token::End(n) if n == "caption") {
            self.mode = Mode::InTable;
            Ok(Flow::Done)
        } else {
            Ok(Flow::Reprocess(Mode::InTable, t))
        }
    }

    fn leave_table_body(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        // html5ever's test: `table`, `tbody` or `tfoot` in table scope.
        if self.in_scope(table_scope, |_, e| {
            e.is("table") || e.is("tbody") || e.is("tfoot")
        }) {
            self.pop_until_current(table_body_context);
            self.pop();
            Ok(Flow::Reprocess(Mode::InTable, t))
        } else {
            Ok(Flow::Done)
        }
    }

    fn leave_row(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        if self.in_scope_named(table_scope, "tr") {
            self.pop_until_current(table_row_context);
            self.pop();
            Ok(Flow::Reprocess(Mode::InTableBody, t))
        } else {
            Ok(Flow::Done)
        }
    }

    fn in_head(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        let t = match t {
            Token::Text(s) => match self.insert_leading_ws(s) {
                Some(rest) => rest,
                None => return Ok(Flow::Done),
            },
            Token::Comment => return Ok(Flow::Done),
            Token::Start(tag) => match tag.name.as_ref() {
                "html" => return self.step(Mode::InBody, Token::Start(tag)),
                "base" | "basefont" | "bgsound" | "link" | "meta" => {
                    self.insert_and_pop(tag);
                    return Ok(Flow::Done);
                }
                "title" => return Ok(self.raw(tag, RawKind::Rcdata)),
                "noframes" | "style" | "noscript" => return Ok(self.raw(tag, RawKind::Rawtext)),
                "script" => return Ok(self.raw(tag, RawKind::ScriptData)),
                "template" => {
                    self.afe.push(Entry::Marker);
                    self.mode = Mode::InTemplate;
                    self.template_modes.push(Mode::InTemplate);
                    self.insert_tag(tag);
                    return Ok(Flow::Done);
                }
                "head" => return Ok(Flow::Done),
                _ => Token::Start(tag),
            },
            Token::End(n) => match n.as_ref() {
                "head" => {
                    self.pop();
                    self.mode = Mode::AfterHead;
                    return Ok(Flow::Done);
                }
                "body" | "html" | "br" => Token::End(n),
                "template" => {
                    if self.on_stack_named("template") {
                        self.generate_implied_end_thoroughly();
                        self.pop_until_named("template");
                        self.clear_afe_to_marker();
                        self.template_modes.pop();
                        self.mode = self.reset_mode()?;
                    }
                    return Ok(Flow::Done);
                }
                _ => return Ok(Flow::Done),
            },
            t => t,
        };
        self.pop();
        Ok(Flow::Reprocess(Mode::AfterHead, t))
    }

    fn in_table(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        match t {
            Token::Text(_) => {
                if self.current_in(|ns, n| {
                    ns == Ns::Html && matches!(n, "table" | "tbody" | "tfoot" | "thead" | "tr")
                }) {
                    self.orig_mode = self.mode;
                    Ok(Flow::Reprocess(Mode::InTableText, t))
                } else {
                    Err(Unsupported("foster parenting"))
                }
            }
            Token::Comment => Ok(Flow::Done),
            Token::Start(tag) => match tag.name.as_ref() {
                "caption" => {
                    self.pop_until_current(table_scope);
                    self.afe.push(Entry::Marker);
                    self.insert_tag(tag);
                    self.mode = Mode::InCaption;
                    Ok(Flow::Done)
                }
                "colgroup" => {
                    self.pop_until_current(table_scope);
                    self.insert_tag(tag);
                    self.mode = Mode::InColumnGroup;
                    Ok(Flow::Done)
                }
                "col" => {
                    self.pop_until_current(table_scope);
                    self.insert_phantom("colgroup");
                    Ok(Flow::Reprocess(Mode::InColumnGroup, Token::Start(tag)))
                }
                "tbody" | "tfoot" | "thead" => {
                    self.pop_until_current(table_scope);
                    self.insert_tag(tag);
                    self.mode = Mode::InTableBody;
                    Ok(Flow::Done)
                }
                "td" | "th" | "tr" => {
                    self.pop_until_current(table_scope);
                    self.insert_phantom("tbody");
                    Ok(Flow::Reprocess(Mode::InTableBody, Token::Start(tag)))
                }
                "table" => {
                    if self.in_scope_named(table_scope, "table") {
                        self.pop_until_named("table");
                        Ok(Flow::Reprocess(self.reset_mode()?, Token::Start(tag)))
                    } else {
                        Ok(Flow::Done)
                    }
                }
                "style" | "script" | "template" => self.in_head(Token::Start(tag)),
                "input"
                    if tag
                        .attr("type")
                        .is_some_and(|v| v.eq_ignore_ascii_case("hidden")) =>
                {
                    self.insert_and_pop(tag);
                    Ok(Flow::Done)
                }
                "form" => {
                    if !self.on_stack_named("template") && self.form.is_none() {
                        let id = self.insert_and_pop(tag);
                        self.form = Some(id);
                    }
                    Ok(Flow::Done)
                }
                _ => Err(Unsupported("foster parenting")),
            },
            Token::End(n) => match n.as_ref() {
                "table" => {
                    if self.in_scope_named(table_scope, "table") {
                        self.pop_until_named("table");
                        self.mode = self.reset_mode()?;
                    }
                    Ok(Flow::Done)
                }
                "body" | "caption" | "col" | "colgroup" | "html" | "tbody" | "td" | "tfoot"
                | "th" | "thead" | "tr" => Ok(Flow::Done),
                "template" => self.in_head(Token::End(n)),
                _ => Err(Unsupported("foster parenting")),
            },
            Token::Eof => self.step(Mode::InBody, Token::Eof),
            Token::Doctype(_) => Ok(Flow::Done),
        }
    }

    fn in_body(&mut self, t: Token<'a>) -> R<Flow<'a>> {
        match t {
            Token::Text(s) => {
                self.reconstruct_afe();
                self.append_text(s);
                Ok(Flow::Done)
            }
            Token::Comment | Token::Doctype(_) => Ok(Flow::Done),
            Token::Eof => {
                if !self.template_modes.is_empty() {
                    return self.step(Mode::InTemplate, Token::Eof);
                }
                Ok(Flow::Done)
            }
            Token::Start(tag) => self.start_in_body(tag),
            Token::End(n) => self.end_in_body(n),
        }
    }

    fn start_in_body(&mut self, tag: Tag<'a>) -> R<Flow<'a>> {
        match tag.name.as_ref() {
            "html" => {
                if self.on_stack_named("template") {
                    return Ok(Flow::Done);
                }
                let top = self.stack[0];
                self.add_attrs_if_missing(top, tag.attrs);
            }
            "base" | "basefont" | "bgsound" | "link" | "meta" | "noframes" | "script" | "style"
            | "template" | "title" => return self.in_head(Token::Start(tag)),
            "frameset" => return Err(Unsupported("frameset")),
            "body" => {
                if self.stack.len() > 1
                    && self.el(self.stack[1]).is("body")
                    && !self.on_stack_named("template")
                {
                    let body = self.stack[1];
                    self.add_attrs_if_missing(body, tag.attrs);
                }
            }
            "address" | "article" | "aside" | "blockquote" | "center" | "details" | "dialog"
            | "dir" | "div" | "dl" | "fieldset" | "figcaption" | "figure" | "footer" | "header"
            | "hgroup" | "main" | "nav" | "ol" | "p" | "search" | "section" | "summary" | "ul"
            | "menu" => {
                self.close_p_in_button_scope();
                self.insert_tag(tag);
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.close_p_in_button_scope();
                if self.current_in(|ns, n| ns == Ns::Html && is_heading(n)) {
                    self.pop();
                }
                self.insert_tag(tag);
            }
            "pre" | "listing" => {
                self.close_p_in_button_scope();
                self.insert_tag(tag);
                self.ignore_lf = true;
            }
            "form" => {
                let in_template = self.on_stack_named("template");
                if self.form.is_none() || in_template {
                    self.close_p_in_button_scope();
                    let id = self.insert_tag(tag);
                    if !in_template {
                        self.form = Some(id);
                    }
                }
            }
            "li" | "dd" | "dt" => {
                let list = tag.name == "li";
                let mut to_close: Option<String> = None;
                for &n in self.stack.iter().rev() {
                    let e = self.el(n);
                    let can_close = if list {
                        e.is("li")
                    } else {
                        e.is("dd") || e.is("dt")
                    };
                    if can_close {
                        to_close = Some(e.name.to_string());
                        break;
                    }
                    if special(e.ns, &e.name) && !matches!(e.name.as_ref(), "address" | "div" | "p")
                    {
                        break;
                    }
                }
                if let Some(name) = to_close {
                    self.generate_implied_end(Some(&name));
                    self.pop_until_named(&name);
                }
                self.close_p_in_button_scope();
                self.insert_tag(tag);
            }
            "plaintext" => {
                self.close_p_in_button_scope();
                self.tok.set_raw(RawKind::Plaintext, "plaintext");
                self.insert_tag(tag);
            }
            "button" => {
                if self.in_scope_named(default_scope, "button") {
                    self.generate_implied_end(None);
                    self.pop_until_named("button");
                }
                self.reconstruct_afe();
                self.insert_tag(tag);
            }
            "a" => {
                // Misnested `<a>`: an `<a>` still on the list closes first.
                let mut open_a = None;
                for &entry in self.afe.iter().rev() {
                    match entry {
                        Entry::Marker => break,
                        Entry::Elem(id) if self.el(id).is("a") => {
                            open_a = Some(id);
                            break;
                        }
                        Entry::Elem(_) => {}
                    }
                }
                if let Some(node) = open_a {
                    self.adoption_agency("a");
                    if let Some(p) = self.afe_position(node) {
                        self.afe.remove(p);
                    }
                    if let Some(p) = self.stack.iter().rposition(|&n| n == node) {
                        self.stack.remove(p);
                    }
                }
                self.reconstruct_afe();
                self.insert_formatting(tag);
            }
            "b" | "big" | "code" | "em" | "font" | "i" | "s" | "small" | "strike" | "strong"
            | "tt" | "u" => {
                self.reconstruct_afe();
                self.insert_formatting(tag);
            }
            "nobr" => {
                self.reconstruct_afe();
                if self.in_scope_named(default_scope, "nobr") {
                    self.adoption_agency("nobr");
                    self.reconstruct_afe();
                }
                self.insert_formatting(tag);
            }
            "applet" | "marquee" | "object" => {
                self.reconstruct_afe();
                self.insert_tag(tag);
                self.afe.push(Entry::Marker);
            }
            "table" => {
                if self.quirks != DocumentMode::Quirks {
                    self.close_p_in_button_scope();
                }
                self.insert_tag(tag);
                self.mode = Mode::InTable;
            }
            "area" | "br" | "embed" | "img" | "keygen" | "wbr" => {
                self.reconstruct_afe();
                self.insert_and_pop(tag);
            }
            "input" => {
                if self.in_scope_named(default_scope, "select") {
                    self.pop_until_named("select");
                }
                self.reconstruct_afe();
                self.insert_and_pop(tag);
            }
            "param" | "source" | "track" => {
                self.insert_and_pop(tag);
            }
            "hr" => {
                self.close_p_in_button_scope();
                if self.in_scope_named(default_scope, "select") {
                    self.generate_implied_end(None);
                }
                self.insert_and_pop(tag);
            }
            "image" => {
                let tag = Tag {
                    name: Cow::Borrowed("img"),
                    ..tag
                };
                return self.start_in_body(tag);
            }
            "textarea" => {
                self.ignore_lf = true;
                return Ok(self.raw(tag, RawKind::Rcdata));
            }
            "xmp" => {
                self.close_p_in_button_scope();
                self.reconstruct_afe();
                return Ok(self.raw(tag, RawKind::Rawtext));
            }
            "iframe" | "noembed" | "noscript" => return Ok(self.raw(tag, RawKind::Rawtext)),
            "select" if self.in_scope_named(default_scope, "select") => {
                self.pop_until_named("select");
            }
            "select" => {
                self.reconstruct_afe();
                self.insert_tag(tag);
            }
            "option" => {
                if self.in_scope_named(default_scope, "select") {
                    self.generate_implied_end(Some("optgroup"));
                } else if self.current_is("option") {
                    self.pop();
                }
                self.reconstruct_afe();
                self.insert_tag(tag);
            }
            "optgroup" => {
                if self.in_scope_named(default_scope, "select") {
                    self.generate_implied_end(None);
                } else if self.current_is("option") {
                    self.pop();
                }
                self.reconstruct_afe();
                self.insert_tag(tag);
            }
            "rb" | "rtc" => {
                if self.in_scope_named(default_scope, "ruby") {
                    self.generate_implied_end(None);
                }
                self.insert_tag(tag);
            }
            "rp" | "rt" => {
                if self.in_scope_named(default_scope, "ruby") {
                    self.generate_implied_end(Some("rtc"));
                }
                self.insert_tag(tag);
            }
            "math" | "svg" => {
                self.reconstruct_afe();
                let ns = if tag.name == "math" {
                    Ns::Math
                } else {
                    Ns::Svg
                };
                let self_closing = tag.self_closing;
                self.insert(tag.name, ns, tag.attrs, !self_closing);
            }
            "caption" | "col" | "colgroup" | "frame" | "head" | "tbody" | "td" | "tfoot" | "th"
            | "thead" | "tr" => {}
            _ => {
                self.reconstruct_afe();
                self.insert_tag(tag);
            }
        }
        Ok(Flow::Done)
    }

    fn end_in_body(&mut self, n: Cow<'a, str>) -> R<Flow<'a>> {
        match n.as_ref() {
            "template" => return self.in_head(Token::End(n)),
            "body" => {
                if self.in_scope_named(default_scope, "body") {
                    self.mode = Mode::AfterBody;
                }
            }
            "html" => {
                if self.in_scope_named(default_scope, "body") {
                    return Ok(Flow::Reprocess(Mode::AfterBody, Token::End(n)));
                }
            }
            "address" | "article" | "aside" | "blockquote" | "button" | "center" | "details"
            | "dialog" | "dir" | "div" | "dl" | "fieldset" | "figcaption" | "figure" | "footer"
            | "header" | "hgroup" | "listing" | "main" | "menu" | "nav" | "ol" | "pre"
            | "search" | "section" | "select" | "summary" | "ul" => {
                if self.in_scope_named(default_scope, &n) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&n);
                }
            }
            "form" if self.on_stack_named("template") => {
                if self.in_scope_named(default_scope, "form") {
                    self.generate_implied_end(None);
                    self.pop_until_named("form");
                }
            }
            "form" => {
                let Some(node) = self.form.take() else {
                    return Ok(Flow::Done);
                };
                if !self.in_scope(default_scope, |id, _| id == node) {
                    return Ok(Flow::Done);
                }
                self.generate_implied_end(None);
                if let Some(p) = self.stack.iter().rposition(|&x| x == node) {
                    self.stack.remove(p);
                }
            }
            "p" => {
                if !self.in_scope_named(button_scope, "p") {
                    self.insert_phantom("p");
                }
                self.close_p();
            }
            "li" | "dd" | "dt" => {
                let in_scope = if n == "li" {
                    self.in_scope_named(list_item_scope, &n)
                } else {
                    self.in_scope_named(default_scope, &n)
                };
                if in_scope {
                    self.generate_implied_end(Some(&n));
                    self.pop_until_named(&n);
                }
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                if self.in_scope(default_scope, |_, e| {
                    e.ns == Ns::Html && is_heading(&e.name)
                }) {
                    self.generate_implied_end(None);
                    self.pop_until(|e| e.ns == Ns::Html && is_heading(&e.name));
                }
            }
            "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small"
            | "strike" | "strong" | "tt" | "u" => self.adoption_agency(&n),
            "applet" | "marquee" | "object" => {
                if self.in_scope_named(default_scope, &n) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&n);
                    self.clear_afe_to_marker();
                }
            }
            "br" => {
                return self.start_in_body(Tag {
                    name: Cow::Borrowed("br"),
                    attrs: Vec::new(),
                    self_closing: false,
                });
            }
            _ => self.end_tag_in_body_other(&n),
        }
        Ok(Flow::Done)
    }
}

fn table_body_context(ns: Ns, n: &str) -> bool {
    ns == Ns::Html && matches!(n, "tbody" | "tfoot" | "thead" | "template" | "html")
}

fn table_row_context(ns: Ns, n: &str) -> bool {
    ns == Ns::Html && matches!(n, "tr" | "template" | "html")
}
