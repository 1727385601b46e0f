//! HTML → main text (SPEC §2.1; seed 003 §4.1: the page as a tree, the nodes that carry the body
//! chosen by how much text they hold).
//!
//! The page is parsed into a light tree by our own HTML5 tokenizer and tree builder
//! ([`super::html`], held to html5ever's tree, which also tells the links the page wrote from the
//! copies the parser made of a link left open). One iterative walk cuts the
//! visible text into *blocks*: runs of text between block-level boundaries (`<p>`, `<div>`, `<li>`,
//! `<br>`, headings…). Scripts, styles, forms' widgets, elements not rendered (the `hidden`
//! attribute, an inline `display: none`) and the HTML5 page furniture (`<nav>`, `<header>`,
//! `<footer>`, `<aside>`; unless it holds the page's `<main>`, or is a `<header>` holding its
//! `<article>`: broken markup, read as a container; the `<header>` of an `<article>`, `<main>` or
//! `<section>` is read as furniture, whose leads count) contribute nothing; elements with the ARIA roles of those (or of a
//! dialog) count as furniture, like furniture class names. Link text is text under a link the page wrote: an `<a>` with `href` (or a scripted
//! placeholder without `href`, `id` or `name`), not an anchor (`<a id="x"/>`, `<a name="x">`), not
//! a copy the parser made of a link left open, and not the blocks opened inside a link left open.
//!
//! Choosing the body is a text-density vote: every block of some length (width ≥ 25 GBK bytes,
//! a Chinese character counting 2 as in seed 003, which counts Chinese characters) gives its
//! paragraph's parent a score of `1 + commas + min(width / 100, 3)` and the grandparent half of
//! it. A block that shares its element with other blocks (text split by `<br>`) is its own
//! paragraph, so its element is the parent. An element's final score is its vote times
//! `1 − link density` (link text against all its text), plus a small bonus or malus for words of
//! its class and id names that usually mean content or furniture (whole words, see
//! `class_weight`). Names are weak evidence: the content bonus at most doubles the vote of an
//! element holding less than a quarter of the page's qualifying text, and a wrapper of most of
//! the page named like furniture still counts as page text. The best element that is not and does not lie inside furniture wins (a paragraph
//! or a list wins for its enclosing block; a winner without kin climbs through wrappers adding no
//! text to the first one whose siblings are of its named kind: an article of wrapped parts), and
//! so do its siblings of the same kind, of the same
//! family (tag and first class name that is not a layout utility like `row` or `col-6`: the parts
//! of one article), the paragraphs (`<p>`) written
//! beside it or beside the wrappers around it that add no text (a lead above the body's
//! wrappers), or scoring at least a fifth of it (a body split over several containers). A winner that is one sub-titled
//! section of a body of sub-titled sections (API documentation, a manual page) climbs through
//! the sections that hold it, whatever text it holds. When the winners hold less than
//! half of the page's qualifying text (the voting blocks outside furniture), the body climbs to
//! the nearest ancestor holding at least half (nested sections, bodies at many depths), unless
//! that ancestor only adds more items of the winners' kind (the replies of a thread: items with
//! an author line of their own, outside an element named like content; not an article written one
//! paragraph a bare wrapper); the furniture inside it stays out. Inside the body, elements named like furniture that is furniture
//! anywhere (comments, share bars, "related" lists, bylines, captions, teasers linking elsewhere;
//! see `PRUNABLE_WORDS`) stay out too, unless they hold half of it. The main text is every block
//! inside the body that is not mostly link text, less the sub-titles left without a paragraph,
//! with the body's leads (`intro`, `teaser-text`, `abstract`… names; see `leads_of`) written inside
//! it, in an article's header, or above it beside it in the article. The first `<h1>` is kept apart as the heading, `<h2>`–`<h6>` inside the body as
//! sub-titles; a page without any qualifying block falls back to all of its blocks that are not
//! mostly links.

use super::html::tree::{Data, Element};
use super::html::{Edge, LinkOrigin};
use super::main_text::{BlockKind, MainText, Paragraph};
use super::normalize::char_width;

/// A node of the page's tree (see [`super::html::Tree`]).
type NodeId = u32;

/// Plain text as a main text.
impl MainText {
    /// Plain text given as-is: each non-empty line is a paragraph.
    pub fn from_plain_text(text: &str) -> MainText {
        let paragraphs = text
            .lines()
            .map(collapse_ws)
            .filter(|l| !l.is_empty())
            .map(|text| Paragraph {
                text,
                kind: BlockKind::Text,
            })
            .collect();
        MainText {
            paragraphs,
            ..MainText::default()
        }
    }
}

/// Minimum width for a block to vote (25 GBK bytes).
const MIN_VOTE_WIDTH: u32 = 25;
/// Siblings scoring at least this share of the winner join it.
const SIBLING_SHARE: f64 = 0.2;
/// Blocks with more link text than this share are furniture, not body.
const MAX_LINK_SHARE: f64 = 0.5;
/// Score added or removed for class/id names.
const CLASS_WEIGHT: f64 = 25.0;

/// Is an element not rendered, whatever its tag: the `hidden` attribute (HTML §6.1; not
/// `hidden="until-found"`, which a find-in-page reveals) or an inline `display: none`? Cookie
/// banners, consent dialogs and pop-ups wait so until a script shows them.
fn is_not_rendered(e: &Element) -> bool {
    if e.attr("hidden")
        .is_some_and(|v| !v.trim().eq_ignore_ascii_case("until-found"))
    {
        return true;
    }
    e.attr("style").is_some_and(|s| {
        s.split(';').any(|decl| {
            let mut kv = decl.splitn(2, ':');
            let (k, v) = (kv.next().unwrap_or(""), kv.next().unwrap_or(""));
            k.trim().eq_ignore_ascii_case("display")
                && v.trim()
                    .trim_end_matches("!important")
                    .trim()
                    .eq_ignore_ascii_case("none")
        })
    })
}

/// Tags whose content is never text of the page.
fn is_skipped(tag: &str) -> bool {
    matches!(
        tag,
        "script"
            | "style"
            | "noscript"
            | "template"
            | "iframe"
            | "svg"
            | "math"
            | "select"
            | "option"
            | "textarea"
            | "button"
            | "input"
            | "object"
            | "embed"
            | "canvas"
            | "nav"
            | "header"
            | "footer"
            | "aside"
            | "head"
    )
}

/// The page furniture elements (`<nav>`, `<header>`, `<footer>`, `<aside>`, skipped by
/// [`is_skipped`]) that hold the page's body: an element marked as the body (`<main>`,
/// `role=main`) inside any of them, or an `<article>` inside a `<header>`. That is broken markup
/// (a `<header>` left open holds everything after it), not furniture: such an element is read as
/// a plain container. Indexed by node id.
fn furniture_holding_the_body(tree: &super::html::Tree<'_>) -> Vec<bool> {
    use super::html::NONE;
    let mut holds = Vec::new();
    for node in &tree.nodes {
        let Data::Element(e) = &node.data else {
            continue;
        };
        let main = e.name == "main" || e.attr("role").is_some_and(|r| r == "main");
        if !main && e.name != "article" {
            continue;
        }
        let mut up = node.parent;
        while up != NONE {
            let n = &tree.nodes[up as usize];
            if let Data::Element(a) = &n.data {
                if matches!(&*a.name, "nav" | "header" | "footer" | "aside")
                    && (main || a.name == "header")
                {
                    if holds.is_empty() {
                        holds = vec![false; tree.nodes.len()];
                    }
                    holds[up as usize] = true;
                }
            }
            up = n.parent;
        }
    }
    holds
}

/// ARIA landmark roles of page furniture: what `<nav>`, `<header>` (`banner`), `<footer>`
/// (`contentinfo`), `<aside>` (`complementary`) and a search form are, on pages that mark their
/// furniture with roles instead of those elements. Such an element counts as furniture (as a
/// furniture class name does) rather than being skipped: a hand-written page that leaves it open
/// would otherwise lose everything after it.
fn is_furniture_role(role: &str) -> bool {
    role.split_ascii_whitespace().any(|r| {
        [
            "navigation",
            "banner",
            "contentinfo",
            "complementary",
            "search",
            "dialog",
            "alertdialog",
        ]
        .iter()
        .any(|f| r.eq_ignore_ascii_case(f))
    })
}

/// Tags that start and end a block of text.
fn is_block(tag: &str) -> bool {
    matches!(
        tag,
        "address"
            | "article"
            | "blockquote"
            | "body"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "listing"
            | "main"
            | "menu"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
            | "xmp"
            | "caption"
    )
}

fn heading_level(tag: &str) -> Option<u8> {
    match tag {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Words of class and id names that usually mean furniture.
const NEGATIVE_WORDS: &[&str] = &[
    "comment",
    "footer",
    "sidebar",
    "side",
    "nav",
    "navbar",
    "navigation",
    "menu",
    "related",
    "recommend",
    "share",
    "social",
    "banner",
    "sponsor",
    "widget",
    "breadcrumb",
    "crumb",
    "pager",
    "pagination",
    "popup",
    "login",
    "also",
    "hot",
    "rank",
    "reply",
    "replies",
    "tag",
    "cookie",
    "consent",
    "newsletter",
    "subscribe",
    "modal",
    "dialog",
    "teaser",
    "promo",
    "byline",
    "author",
    "caption",
];
/// Of the furniture words, those that are furniture inside the body too (see
/// [`ElemStats::prunable`]): comment threads, share bars, "related"/"more from" and teaser lists,
/// bylines. Not the looser words (`side`, `tag`, `hot`, `widget`…), which content wrappers also
/// use (`elementor-widget`, `side-by-side`).
const PRUNABLE_WORDS: &[&str] = &[
    "comment",
    "reply",
    "replies",
    "related",
    "recommend",
    "share",
    "social",
    "sponsor",
    "newsletter",
    "subscribe",
    "cookie",
    "consent",
    "breadcrumb",
    "pagination",
    "pager",
    "popup",
    "login",
    "modal",
    "footer",
    "sidebar",
    "navbar",
    "navigation",
    "nav",
    "promo",
    "byline",
    "author",
    "caption",
];
/// Words of class and id names that mean an article's lead: the standfirst, intro or abstract
/// written above its body, often apart from it (see [`leads_of`]).
const LEAD_WORDS: &[&str] = &[
    "lead",
    "lede",
    "intro",
    "introduction",
    "teaser",
    "abstract",
    "excerpt",
    "summary",
    "standfirst",
    "chapo",
    "chapeau",
    "perex",
    "description",
    "subtitle",
    "subheadline",
];
/// Words of class and id names that usually mean content.
const POSITIVE_WORDS: &[&str] = &[
    "article", "content", "entry", "main", "post", "text", "story", "body", "detail",
];

/// Bonus or malus for an element's class and id names (the usual words for content and for
/// furniture).
///
/// The names are matched word by word, never as substrings (`notetext` is not "text",
/// `screenshot` is not "hot"): a word is a run of ASCII letters and digits, and a new one starts
/// at any other character (white space, `-`, `_`…) and where a lower-case letter or a digit is
/// followed by an upper-case one (`articleBody` is "article" and "body"). A word matches a listed
/// word equal to it, ignoring case, or to it plus a plural `s` (`contents`, `comments`); a word
/// made only of listed words written together (`maincontent`, `articlebody`) matches each of
/// them.
///
/// `seen` keeps the hints of the names met so far on the page: a site repeats its class names
/// from element to element.
fn class_weight<'a>(
    class: &'a str,
    id: &'a str,
    seen: &mut rustc_hash::FxHashMap<&'a str, (bool, bool, Prunable, bool)>,
) -> (f64, Prunable, bool) {
    let (mut negative, mut positive, mut prunable, mut lead) = (false, false, Prunable::No, false);
    for names in [class, id] {
        if names.is_empty() {
            continue;
        }
        let (n, p, s, l) = *seen.entry(names).or_insert_with(|| {
            let (mut n, mut p, mut s, mut l) = (false, false, Prunable::No, false);
            for token in names.split_ascii_whitespace() {
                let (mut tp, mut ts, mut layout) = (false, Prunable::No, false);
                for_each_word(token, |word| {
                    let hint = hint_words(word);
                    n |= hint.0;
                    tp |= hint.1;
                    l |= is_listed(word, LEAD_WORDS);
                    layout |= is_listed(word, &["sidebar"]);
                    if hint.0 && is_listed(word, PRUNABLE_WORDS) {
                        ts = Prunable::Always;
                    } else if hint.0 && ts == Prunable::No && is_listed(word, &["teaser"]) {
                        ts = Prunable::WithLinks;
                    }
                });
                // A content word beside a furniture word that is furniture inside the body too,
                // in one class name, says what the furniture is about (`related-posts`,
                // `post-comments`, `entry-footer`, `article-share`): the element is that
                // furniture. Not beside `sidebar`, which names a layout (`content-sidebar-wrap`:
                // the content and its sidebar); and only within one name, as a post's class list
                // also names its categories (`post category-no-newsletter`).
                if ts == Prunable::Always && !layout {
                    tp = false;
                }
                p |= tp;
                s = s.max(ts);
            }
            (n, p, s, l)
        });
        negative |= n;
        positive |= p;
        prunable = prunable.max(s);
        lead |= l;
    }
    let mut w = 0.0;
    if negative {
        w -= CLASS_WEIGHT;
    }
    if positive {
        w += CLASS_WEIGHT;
    }
    (w, if positive { Prunable::No } else { prunable }, lead)
}

/// Whether an element named like furniture is furniture inside the body too (see
/// [`PRUNABLE_WORDS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Prunable {
    /// No: a looser furniture word (`widget`, `side`, `tag`), or no furniture word.
    #[default]
    No,
    /// When it holds link text: a `teaser` that links to another page is a card of a list of
    /// them, one without a link is the article's lead.
    WithLinks,
    /// Yes: comments, share bars, "related" lists, bylines…
    Always,
}

/// Calls `f` with each word of class or id names (see [`class_weight`]).
fn for_each_word(names: &str, mut f: impl FnMut(&str)) {
    let b = names.as_bytes();
    let mut start: Option<usize> = None;
    for i in 0..=b.len() {
        let c = b.get(i).copied().unwrap_or(b' ');
        let alnum = c.is_ascii_alphanumeric();
        let camel = c.is_ascii_uppercase()
            && i > 0
            && (b[i - 1].is_ascii_lowercase() || b[i - 1].is_ascii_digit());
        if let Some(s) = start {
            if !alnum || camel {
                // `s` and `i` are at ASCII bytes or at the end: char boundaries.
                f(&names[s..i]);
                start = None;
            }
        }
        if alnum && start.is_none() {
            start = Some(i);
        }
    }
}

/// Whether a word of class or id names is, or is made only of, furniture words and content
/// words (see [`class_weight`]): `(furniture, content)`.
fn hint_words(word: &str) -> (bool, bool) {
    let (negative, positive) = (
        is_listed(word, NEGATIVE_WORDS),
        is_listed(word, POSITIVE_WORDS),
    );
    if negative || positive {
        return (negative, positive);
    }
    // Listed words written together: reach[i] is set when word[..i] is a sequence of listed
    // words (each possibly plural), with the kinds of the words on the way.
    const MAX: usize = 40;
    let b = word.as_bytes();
    if b.len() > MAX {
        return (false, false);
    }
    let mut reach = [None::<(bool, bool)>; MAX + 2];
    reach[0] = Some((false, false));
    for i in 0..b.len() {
        let Some((n, p)) = reach[i] else { continue };
        for (list, furniture) in [(NEGATIVE_WORDS, true), (POSITIVE_WORDS, false)] {
            for w in list {
                let end = i + w.len();
                if end > b.len() || !b[i..end].eq_ignore_ascii_case(w.as_bytes()) {
                    continue;
                }
                let kinds = (n || furniture, p || !furniture);
                let plural = b.get(end).is_some_and(|c| c.eq_ignore_ascii_case(&b's'));
                for e in [Some(end), plural.then_some(end + 1)].into_iter().flatten() {
                    let r = reach[e].get_or_insert((false, false));
                    *r = (r.0 || kinds.0, r.1 || kinds.1);
                }
            }
        }
    }
    reach[b.len()].unwrap_or((false, false))
}

/// True when `word` is one of `list` or its plural in `s`, ignoring ASCII case.
fn is_listed(word: &str, list: &[&str]) -> bool {
    let singular = match word.as_bytes().last() {
        Some(b's' | b'S') => Some(&word[..word.len() - 1]),
        _ => None,
    };
    list.iter().any(|w| {
        word.eq_ignore_ascii_case(w) || singular.is_some_and(|s| s.eq_ignore_ascii_case(w))
    })
}

/// A run of text between block boundaries.
struct Block {
    text: String,
    width: u32,
    link_width: u32,
    commas: u32,
    kind: BlockKind,
    heading1: bool,
    /// Pre-order number of the block's position (for "is inside element" tests).
    pos: u32,
    /// The enclosing block elements, innermost first (up to three).
    container: [Option<NodeId>; 3],
}

/// Per block-element statistics.
#[derive(Default, Clone)]
struct ElemStats {
    width: u32,
    link_width: u32,
    /// Width of the qualifying text inside: blocks wide enough to vote, not mostly link text, not
    /// the `<h1>`, outside furniture (elements with a negative class weight).
    text: u32,
    /// Sub-titles (`<h2>`–`<h6>`) inside, outside furniture.
    headings: u32,
    blocks: u32,
    open: u32,
    close: u32,
    parent: Option<NodeId>,
    class_weight: f64,
    /// A list or table part (`ul`, `ol`, `dl`, `table`, `tbody`, `tr`, `td`…).
    list_like: bool,
    /// A list item (`li`, `dt`, `dd`).
    list_item: bool,
    /// Of `text`, the blocks directly in the element.
    own_text: u32,
    /// `text` counting the furniture inside too.
    raw_text: u32,
    /// Named like furniture: its text is not counted in its parent's `text`.
    furniture: bool,
    /// A paragraph (`p`) whose lines are split by `<br>`: a part of a body, not a body.
    paragraph: bool,
    /// Hash of the tag name and class attribute (siblings of the same kind join the body).
    kind: u64,
    /// Hash of the tag name and the first class name: the parts of one article (`article.box
    /// header`, `article.box ingredients`) are of one family.
    family: u64,
    /// Named like furniture that is furniture inside the body too ([`PRUNABLE_WORDS`], or an
    /// ARIA furniture role).
    prunable: Prunable,
    /// Has a class name that is not a layout utility (see [`family_of`]): its `kind` says what it
    /// holds, not only how it is laid out.
    named: bool,
    /// Named like an article's lead ([`LEAD_WORDS`]).
    lead: bool,
    /// The `<header>` of an article or a section (see [`extract`]): furniture whose leads count.
    part_header: bool,
}

struct Frame {
    id: NodeId,
    width: u32,
    link_width: u32,
    text: u32,
    /// Of `text`, the blocks directly in this element (not in a child element).
    own_text: u32,
    /// `text` counting the furniture inside too.
    raw_text: u32,
    headings: u32,
    /// Named like furniture (a negative class weight): its text is not the page's text.
    furniture: bool,
    /// The link state outside this block, when the block opened inside a link left open (its text
    /// is not link text; restored when the block closes).
    outer_links: Option<(u32, u32)>,
}

struct Walker {
    blocks: Vec<Block>,
    cur: String,
    cur_link_width: u32,
    /// Links (see `is_link` in [`extract`]) around the current text.
    link_depth: u32,
    /// Of those, the links the page left open (no `</a>`).
    unclosed_links: u32,
    pre_depth: u32,
    heading: Option<u8>,
    frames: Vec<Frame>,
    /// Width of the page's qualifying text (see [`ElemStats::text`]).
    page_text: u64,
    /// Width of the page's voting text, furniture included.
    page_raw_text: u64,
    stats: StatsMap,
    counter: u32,
}

/// Element statistics by node id. Arena ids are dense, so a slot per id up to the largest
/// counted leads to the statistics (in the order counted), without hashing.
#[derive(Default)]
struct StatsMap {
    slot: Vec<u32>,
    items: Vec<(NodeId, ElemStats)>,
}

impl StatsMap {
    fn get(&self, id: &NodeId) -> Option<&ElemStats> {
        let k = *self.slot.get(*id as usize)?;
        self.items.get(k as usize).map(|e| &e.1)
    }

    fn get_mut(&mut self, id: &NodeId) -> Option<&mut ElemStats> {
        let k = *self.slot.get(*id as usize)?;
        self.items.get_mut(k as usize).map(|e| &mut e.1)
    }

    /// Counts `id` with `stats`, in place of what it had.
    fn insert(&mut self, id: NodeId, stats: ElemStats) {
        let i = id as usize;
        if self.slot.len() <= i {
            self.slot.resize(i + 1, u32::MAX);
        }
        match self.items.get_mut(self.slot[i] as usize) {
            Some(e) => e.1 = stats,
            None => {
                self.slot[i] = self.items.len() as u32;
                self.items.push((id, stats));
            }
        }
    }

    fn values(&self) -> impl Iterator<Item = &ElemStats> {
        self.items.iter().map(|e| &e.1)
    }

    fn iter(&self) -> <&Self as IntoIterator>::IntoIter {
        self.into_iter()
    }
}

impl<'s> IntoIterator for &'s StatsMap {
    type Item = (&'s NodeId, &'s ElemStats);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'s, (NodeId, ElemStats)>,
        fn(&'s (NodeId, ElemStats)) -> (&'s NodeId, &'s ElemStats),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter().map(|e| (&e.0, &e.1))
    }
}

impl Walker {
    fn flush(&mut self) {
        let Collapsed {
            text,
            width: collapsed_width,
            commas,
        } = collapse_ws_counting(&self.cur);
        let (text, w) = strip_bullet(text, collapsed_width);
        self.cur.clear();
        let link_width = std::mem::take(&mut self.cur_link_width);
        if text.is_empty() {
            return;
        }
        let n = self.frames.len();
        let container = [
            n.checked_sub(1).map(|i| self.frames[i].id),
            n.checked_sub(2).map(|i| self.frames[i].id),
            n.checked_sub(3).map(|i| self.frames[i].id),
        ];
        let heading1 = self.heading == Some(1);
        if let Some(top) = self.frames.last_mut() {
            top.width += w;
            top.link_width += link_width.min(w);
            if matches!(self.heading, Some(level) if level > 1) {
                top.headings += 1;
            }
            if !heading1 && w >= MIN_VOTE_WIDTH && !mostly_links(link_width.min(w), w) {
                top.text += w;
                top.own_text += w;
                top.raw_text += w;
            }
            if let Some(s) = self.stats.get_mut(&top.id) {
                s.blocks += 1;
            }
        }
        let kind = match self.heading {
            Some(level) if level > 1 => BlockKind::Heading(level),
            _ if self.pre_depth > 0 => BlockKind::Pre,
            _ => BlockKind::Text,
        };
        self.blocks.push(Block {
            text,
            width: w,
            link_width: link_width.min(w),
            commas,
            kind,
            heading1,
            pos: self.counter,
            container,
        });
    }
}

/// True when more than [`MAX_LINK_SHARE`] of a block's (or an element's) width is link text.
fn mostly_links(link_width: u32, width: u32) -> bool {
    link_width as f64 > MAX_LINK_SHARE * width as f64
}

/// Drops a leading list bullet (`• item`, `· item`, `- item`): the same list is written with
/// `<li>` on one site and with bullet characters on another. Takes and gives the text with its
/// width ([`super::normalize::width`]); no bullet is a comma, so a comma count stands.
fn strip_bullet(text: String, width: u32) -> (String, u32) {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (
            Some(
                bullet @ ('•' | '·' | '◦' | '▪' | '‣' | '●' | '○' | '■' | '□' | '-' | '*' | '–'
                | '—'),
            ),
            Some(' '),
        ) => (
            chars.as_str().to_string(),
            width - super::normalize::char_width(bullet) - 1,
        ),
        (Some('•' | '·' | '◦' | '▪' | '‣' | '●' | '○' | '■' | '□'), None) => {
            (String::new(), 0)
        }
        _ => (text, width),
    }
}

/// The hash of an element's tag and class, `xxh3_64("{tag} {class}")`: elements of one kind
/// (the same tag and class) are compared as siblings. Built on the stack for the usual short
/// names.
fn element_kind(tag: &str, class: &str) -> u64 {
    let n = tag.len() + 1 + class.len();
    let mut buf = [0u8; 128];
    if n > buf.len() {
        return xxhash_rust::xxh3::xxh3_64(format!("{tag} {class}").as_bytes());
    }
    buf[..tag.len()].copy_from_slice(tag.as_bytes());
    buf[tag.len()] = b' ';
    buf[tag.len() + 1..n].copy_from_slice(class.as_bytes());
    xxhash_rust::xxh3::xxh3_64(&buf[..n])
}

/// The family of an element: its tag and first class name that is not a utility class, or
/// `None` when every class name is a utility one (then only its exact kind groups it). Utility
/// names (`flex`, `row`, `col-md-6`, `mt-4`, `md:grid`) lay out any element of a page, so two
/// siblings sharing one say nothing about being parts of one article.
fn family_of(tag: &str, class: &str) -> Option<u64> {
    let mut names = class.split_ascii_whitespace().peekable();
    names.peek()?;
    names
        .find(|name| !is_utility_class(name))
        .map(|name| element_kind(tag, name))
}

/// Whether a class name is a layout or spacing utility (Bootstrap, Tailwind, Foundation, …)
/// rather than a name for what an element holds.
fn is_utility_class(name: &str) -> bool {
    const WHOLE: &[&str] = &[
        "flex",
        "grid",
        "row",
        "col",
        "column",
        "columns",
        "container",
        "container-fluid",
        "clearfix",
        "cf",
        "group",
        "block",
        "inline",
        "inline-block",
        "hidden",
        "visible",
        "relative",
        "absolute",
        "fixed",
        "sticky",
        "static",
        "float-left",
        "float-right",
        "pull-left",
        "pull-right",
        "left",
        "right",
        "center",
        "cell",
        "wrap",
        "inner",
        "outer",
        "clear",
        "first",
        "last",
        "odd",
        "even",
        "active",
        "show",
        "fade",
        "in",
    ];
    const PREFIXES: &[&str] = &[
        "col-",
        "row-",
        "flex-",
        "grid-",
        "d-",
        "w-",
        "h-",
        "m-",
        "p-",
        "mx-",
        "my-",
        "mt-",
        "mb-",
        "ml-",
        "mr-",
        "ms-",
        "me-",
        "px-",
        "py-",
        "pt-",
        "pb-",
        "pl-",
        "pr-",
        "ps-",
        "pe-",
        "gap-",
        "g-",
        "gx-",
        "gy-",
        "space-",
        "items-",
        "justify-",
        "align-",
        "self-",
        "order-",
        "offset-",
        "text-",
        "bg-",
        "border",
        "rounded",
        "shadow",
        "font-",
        "leading-",
        "tracking-",
        "min-",
        "max-",
        "overflow-",
        "z-",
        "small-",
        "medium-",
        "large-",
        "is-",
        "has-",
        "u-",
        "l-",
        "position-",
        "float-",
        "basis-",
        "grow",
        "shrink",
    ];
    // Tailwind variants (`md:grid`, `hover:underline`) and arbitrary values (`w-[42rem]`).
    name.contains(':')
        || name.contains('[')
        || WHOLE.iter().any(|w| name.eq_ignore_ascii_case(w))
        || PREFIXES.iter().any(|p| {
            name.len() >= p.len() && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        })
}

/// A text with its white space collapsed, with what [`Walker::flush`] measures of it.
struct Collapsed {
    text: String,
    /// [`super::normalize::width`] of `text`.
    width: u32,
    /// The commas of `text`: `,` `;` and the full-width `，` (EF BC 8C), `；` (EF BC 9B) and
    /// `、` (E3 80 81).
    commas: u32,
}

/// Collapses white space runs to one space and trims.
fn collapse_ws(s: &str) -> String {
    collapse_ws_counting(s).text
}

/// [`collapse_ws`], measuring the result's width and commas in the same pass.
fn collapse_ws_counting(s: &str) -> Collapsed {
    // `split_whitespace` joined by spaces, read from the bytes: only a character led by C2, E1,
    // E2 or E3 can be non-ASCII white space (U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028,
    // U+2029, U+202F, U+205F, U+3000), so no other is decoded. Widths follow
    // `normalize::width`: 2 for every 4-byte character and the 3-byte ones from `E2 BA 80` on.
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let (mut width, mut commas, mut words) = (0u32, 0u32, 0u32);
    let mut word: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let (len, ws, w, comma) = match c {
            0..=0x7F => (
                1,
                matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r'),
                1,
                c == b',' || c == b';',
            ),
            0xC2 | 0xE1 | 0xE2 | 0xE3 => {
                let ch = s[i..].chars().next().unwrap_or(' ');
                let wide = c == 0xE3 || (c == 0xE2 && b.get(i + 1).is_some_and(|&n| n >= 0xBA));
                let comma = c == 0xE3 && matches!(b.get(i + 1..i + 3), Some([0x80, 0x81]));
                (
                    ch.len_utf8(),
                    ch.is_whitespace(),
                    1 + u32::from(wide),
                    comma,
                )
            }
            0x80..=0xDF => (2, false, 1, false),
            0xE0..=0xEF => (
                3,
                false,
                1 + u32::from(c > 0xE2),
                c == 0xEF && matches!(b.get(i + 1..i + 3), Some([0xBC, 0x8C | 0x9B])),
            ),
            _ => (4, false, 2, false),
        };
        if ws {
            if let Some(start) = word.take() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&s[start..i]);
            }
        } else {
            if word.is_none() {
                word = Some(i);
                words += 1;
            }
            width += w;
            commas += u32::from(comma);
        }
        i += len;
    }
    if let Some(start) = word {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&s[start..]);
    }
    Collapsed {
        text: out,
        // One space between each two words.
        width: width + words.saturating_sub(1),
        commas,
    }
}

/// Extracts the main text of an HTML document. Pages nested deeper than
/// [`super::flat::MAX_DEPTH`] are read by the linear fallback [`super::flat::extract_flat`].
pub fn extract(html: &str) -> MainText {
    if super::flat::nesting_depth(html) > super::flat::MAX_DEPTH {
        return super::flat::extract_flat(html);
    }
    let tree = super::html::parse(html);
    // Link text is text under an `<a>` the page wrote as a link (see `super::html::reference`
    // for how the parser's copies and the links left open are told). Not links:
    // - an `<a>` written self-closing (`<a id="x"/>`, XHTML's empty element; an HTML5 parser
    //   leaves it open over the rest of its block);
    // - an `<a>` without `href` that names a target (`id`, `name`): `<a name="s1">Title</a>`;
    //   one without either is a placeholder link (a scripted button) and stays a link;
    // - a copy of a link left open, which the parser re-creates in the blocks that follow it.
    // A link left open (no `</a>`) also holds the blocks that follow it when their container was
    // left open too: the blocks opened inside it are not link text, its own inline text is.
    let is_link = |e: &Element| {
        e.is("a")
            && matches!(e.link, Some(LinkOrigin::Closed | LinkOrigin::LeftOpen))
            && (e.attr("href").is_some() || (e.attr("id").is_none() && e.attr("name").is_none()))
    };
    let mut title = String::new();
    let mut w = Walker {
        blocks: Vec::new(),
        cur: String::new(),
        cur_link_width: 0,
        link_depth: 0,
        unclosed_links: 0,
        pre_depth: 0,
        heading: None,
        frames: Vec::new(),
        page_text: 0,
        page_raw_text: 0,
        stats: StatsMap::default(),
        counter: 0,
    };
    let body_holders = furniture_holding_the_body(&tree);
    let mut skip: Option<NodeId> = None;
    let mut in_title = false;
    // Open `<article>`, `<main>` and `<section>` elements around the walk.
    let mut sections = 0u32;
    let mut hints = rustc_hash::FxHashMap::default();
    for edge in tree.edges() {
        match edge {
            Edge::Open(node) => {
                w.counter += 1;
                let data = &tree.nodes[node as usize].data;
                if skip.is_some() {
                    if let Data::Text(t) = data {
                        if in_title {
                            title.push_str(t);
                        }
                    } else if let Data::Element(e) = data {
                        in_title |= e.name == "title";
                    }
                    continue;
                }
                match data {
                    Data::Element(e) => {
                        let tag: &str = &e.name;
                        let holds_body = || body_holders.get(node as usize) == Some(&true);
                        // The `<header>` of an `<article>`, `<main>` or `<section>` holds its
                        // title, byline, date and often its lead: read as furniture (out of the
                        // vote and the body) whose leads may join the body, not skipped.
                        let part_header = tag == "header" && sections > 0 && !holds_body();
                        if (is_skipped(tag) && !holds_body() && !part_header) || is_not_rendered(e)
                        {
                            skip = Some(node);
                            in_title = false;
                            continue;
                        }
                        if tag == "br" || tag == "hr" {
                            w.flush();
                            continue;
                        }
                        if is_link(e) {
                            w.link_depth += 1;
                            if e.link == Some(LinkOrigin::LeftOpen) {
                                w.unclosed_links += 1;
                            }
                        }
                        if tag == "pre" {
                            w.pre_depth += 1;
                        }
                        if matches!(tag, "article" | "main" | "section") {
                            sections += 1;
                        }
                        if is_block(tag) || part_header {
                            w.flush();
                            if let Some(level) = heading_level(tag) {
                                w.heading = Some(level);
                            }
                            let class = e.attr("class").unwrap_or("");
                            let id = e.attr("id").unwrap_or("");
                            let (weight, prunable, lead) = if tag == "body" || tag == "html" {
                                // The page itself: its names describe the page (`no-sidebars`,
                                // `single-post`), not a part of it.
                                (0.0, Prunable::No, false)
                            } else if part_header {
                                (-CLASS_WEIGHT, Prunable::Always, false)
                            } else if e.attr("role").is_some_and(is_furniture_role)
                                || tag == "figcaption"
                            {
                                // A caption describes a picture, it is not the body's text.
                                (-CLASS_WEIGHT, Prunable::Always, false)
                            } else {
                                class_weight(class, id, &mut hints)
                            };
                            let kind = element_kind(tag, class);
                            let family = family_of(tag, class).unwrap_or(kind);
                            w.stats.insert(
                                node,
                                ElemStats {
                                    open: w.counter,
                                    parent: w.frames.last().map(|f| f.id),
                                    class_weight: weight,
                                    list_like: matches!(
                                        tag,
                                        "ul" | "ol"
                                            | "dl"
                                            | "table"
                                            | "tbody"
                                            | "thead"
                                            | "tfoot"
                                            | "tr"
                                            | "td"
                                            | "th"
                                            | "li"
                                    ),
                                    list_item: matches!(tag, "li" | "dt" | "dd"),
                                    paragraph: tag == "p",
                                    kind,
                                    family,
                                    prunable,
                                    named: family_of(tag, class).is_some(),
                                    lead,
                                    part_header,
                                    ..ElemStats::default()
                                },
                            );
                            let outer_links = (w.unclosed_links > 0).then(|| {
                                (
                                    std::mem::take(&mut w.link_depth),
                                    std::mem::take(&mut w.unclosed_links),
                                )
                            });
                            w.frames.push(Frame {
                                id: node,
                                width: 0,
                                link_width: 0,
                                text: 0,
                                own_text: 0,
                                raw_text: 0,
                                headings: 0,
                                furniture: weight < 0.0 && prunable != Prunable::No,
                                outer_links,
                            });
                        }
                    }
                    Data::Text(t) => {
                        if w.link_depth > 0 {
                            w.cur_link_width += t
                                .chars()
                                .filter(|c| !c.is_whitespace())
                                .map(char_width)
                                .sum::<u32>();
                        }
                        w.cur.push_str(t);
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                let data = &tree.nodes[node as usize].data;
                if let Some(s) = skip {
                    if s == node {
                        skip = None;
                        in_title = false;
                    } else if matches!(data, Data::Element(e) if e.name == "title") {
                        in_title = false;
                    }
                    continue;
                }
                if let Data::Element(e) = data {
                    let tag: &str = &e.name;
                    if is_link(e) {
                        w.link_depth = w.link_depth.saturating_sub(1);
                        if e.link == Some(LinkOrigin::LeftOpen) {
                            w.unclosed_links = w.unclosed_links.saturating_sub(1);
                        }
                    }
                    if tag == "pre" {
                        w.pre_depth = w.pre_depth.saturating_sub(1);
                    }
                    if matches!(tag, "article" | "main" | "section") {
                        sections = sections.saturating_sub(1);
                    }
                    // A `<header>` read (not skipped) and not holding the body is a part's header,
                    // counted as a block.
                    let part_header =
                        tag == "header" && body_holders.get(node as usize) != Some(&true);
                    if is_block(tag) || part_header {
                        w.flush();
                        if heading_level(tag).is_some() {
                            w.heading = None;
                        }
                        if let Some(frame) = w.frames.pop() {
                            if let Some((depth, unclosed)) = frame.outer_links {
                                w.link_depth = depth;
                                w.unclosed_links = unclosed;
                            }
                            if let Some(s) = w.stats.get_mut(&frame.id) {
                                s.width = frame.width;
                                s.link_width = frame.link_width;
                                s.text = frame.text;
                                s.own_text = frame.own_text;
                                s.raw_text = frame.raw_text;
                                s.furniture = frame.furniture;
                                s.headings = frame.headings;
                                s.close = w.counter;
                            }
                            let (text, headings) = if frame.furniture {
                                (0, 0)
                            } else {
                                (frame.text, frame.headings)
                            };
                            if let Some(parent) = w.frames.last_mut() {
                                parent.width += frame.width;
                                parent.link_width += frame.link_width;
                                parent.text += text;
                                parent.raw_text += frame.raw_text;
                                parent.headings += headings;
                            } else {
                                w.page_text += u64::from(text);
                                w.page_raw_text += u64::from(frame.raw_text);
                            }
                        }
                    }
                }
            }
        }
    }
    w.flush();
    choose(w, collapse_ws(&title))
}

/// The density vote and the selection of the body (see the module docs).
fn choose(w: Walker, title: String) -> MainText {
    let Walker {
        blocks,
        mut stats,
        mut page_text,
        page_raw_text,
        ..
    } = w;
    if page_text * 2 < page_raw_text {
        page_text = recount_without_wrapping_furniture(&mut stats, page_raw_text);
    }
    let heading = blocks
        .iter()
        .find(|b| b.heading1)
        .map(|b| b.text.clone())
        .unwrap_or_default();

    let mut votes = rustc_hash::FxHashMap::<NodeId, f64>::default();
    for b in &blocks {
        if b.width < MIN_VOTE_WIDTH || b.heading1 {
            continue;
        }
        let score = 1.0 + b.commas as f64 + (b.width as f64 / 100.0).min(3.0);
        let shared = b.container[0]
            .and_then(|c| stats.get(&c))
            .is_some_and(|s| s.blocks > 1);
        let (parent, grand) = if shared {
            (b.container[0], b.container[1])
        } else {
            (b.container[1], b.container[2])
        };
        if let Some(p) = parent {
            *votes.entry(p).or_default() += score;
        }
        if let Some(g) = grand {
            *votes.entry(g).or_default() += score / 2.0;
        }
    }
    let final_score = |id: &NodeId, vote: f64| -> f64 {
        let s = stats.get(id);
        let density = s
            .filter(|s| s.width > 0)
            .map(|s| s.link_width as f64 / s.width as f64)
            .unwrap_or(0.0);
        let cw = s.map(|s| s.class_weight).unwrap_or(0.0);
        let base = vote * (1.0 - density);
        if cw <= 0.0 {
            return base + cw;
        }
        // A content name is weak evidence: on an element holding little of the page's text (a
        // rating box named `accordion-content`) it at most doubles the vote.
        let t = s.map_or(0, |s| s.text);
        if u64::from(t) * 4 >= page_text {
            base + cw
        } else {
            base + cw.min(base)
        }
    };
    let scored: Vec<(NodeId, f64)> = votes
        .iter()
        .map(|(id, v)| (*id, final_score(id, *v)))
        .collect();
    // The best element outside furniture; on a page whose every candidate lies in furniture, the
    // best of those.
    let in_furniture = inside_furniture(&stats, true);
    let best_of = |outside: bool| {
        scored
            .iter()
            .filter(|(id, s)| *s > 0.0 && (!outside || !in_furniture(*id)))
            .max_by(|a, b| {
                a.1.total_cmp(&b.1)
                    .then_with(|| stats_open(&stats, &b.0).cmp(&stats_open(&stats, &a.0)))
            })
    };
    let best = best_of(true).or_else(|| best_of(false));

    let within = |pos: u32, rs: &[(u32, u32)]| rs.iter().any(|&(o, c)| pos >= o && pos <= c);
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    // Furniture inside an ancestor the body climbed to (see below), left out.
    let mut furniture: Vec<(u32, u32)> = Vec::new();
    // The leads of the body (see `leads_of`): kept even inside a part's header.
    let mut leads: Vec<(u32, u32)> = Vec::new();
    if let Some(&(mut top, top_score)) = best {
        // A list or table is a part of a body, not a body: its enclosing block is.
        while let Some(st) = stats.get(&top) {
            match st.parent {
                Some(p)
                    if (st.list_like || st.paragraph)
                        && stats.get(&p).is_some_and(|ps| ps.parent.is_some()) =>
                {
                    top = p
                }
                _ => break,
            }
        }
        top = through_wrappers(&stats, top);
        // Siblings of the same kind (same tag and class) join: a body split over several
        // containers, or paragraphs whose lines are each split by `<br>`. Siblings of another
        // kind (comments, disclaimers, "related" boxes) join only with a strong vote of their own.
        let (parent, kind, family) = stats
            .get(&top)
            .map_or((None, 0, 0), |s| (s.parent, s.kind, s.family));
        let threshold = (top_score * SIBLING_SHARE).max(10.0);
        let votes_by_id: rustc_hash::FxHashMap<NodeId, f64> = scored.iter().copied().collect();
        let vote_of = |id: &NodeId| votes_by_id.get(id).copied().unwrap_or(0.0);
        // The paragraphs written beside the wrappers of the winner (elements around it adding
        // no text: `div.body > p.intro + div.wrap > div.text > p…`) join it too.
        let wrapped_in = stats
            .get(&wrapper_top(&stats, top))
            .and_then(|s| s.parent)
            .filter(|p| Some(*p) != parent);
        let mut held = 0u64;
        for (id, st) in &stats {
            // Not counted in `held`: they join a body that does not climb, and never stop it
            // climbing (below) to the ancestor holding most of the page's text.
            if wrapped_in.is_some()
                && st.parent == wrapped_in
                && st.paragraph
                && st.text > 0
                && st.class_weight >= 0.0
                && !mostly_links(st.link_width, st.width)
            {
                ranges.push((st.open, st.close));
                continue;
            }
            let joins = *id == top
                || (parent.is_some()
                    && st.parent == parent
                    && st.width > 0
                    && !mostly_links(st.link_width, st.width)
                    && (st.kind == kind
                        || (st.class_weight >= 0.0
                            && (vote_of(id) >= threshold
                                || st.family == family
                                || (st.paragraph && st.text > 0)))));
            if joins {
                ranges.push((st.open, st.close));
                held += u64::from(st.text);
            }
        }
        // A page of nested sections (a one-page manual, a man page), or a body whose paragraphs
        // sit at many depths (lists in wrappers, note boxes), scatters the vote: the winner is one
        // section or one box, and its same-kind siblings only the rest of that part. When the
        // winners hold less than half of the page's qualifying text (`ElemStats::text`: blocks
        // that vote, outside furniture), the body is the nearest ancestor holding at least half
        // of it (seed 003 §4.1: the node is chosen by how much text it holds) — unless most of
        // what that ancestor adds are items of the same kind as the one the winners sit in,
        // without sub-titles: the replies of a thread, a list of comments or cards
        // (`list_of_items`), which are not sections of one body. Inside the ancestor, the
        // furniture around the winners stays out: elements named like furniture and elements
        // that are mostly link text (navigation, link lists).
        // A winner that is one sub-titled section of a body of sub-titled sections (a manual
        // page, API documentation: `<section><h2>…` nested in `<section><h1>…`) is one part of
        // that body however much text it holds: the body climbs through the sections that hold
        // it (`enclosing_sections`), as seed 003 §4.1 chooses the node by the text it holds.
        let mut from = top;
        if let Some(outer) = enclosing_sections(&stats, top) {
            if let Some(st) = stats.get(&outer) {
                furniture = furniture_beside(&stats, (st.open, st.close), &ranges);
                ranges = vec![(st.open, st.close)];
                held = u64::from(st.text);
                from = outer;
            }
        }
        if held * 2 < page_text {
            if let Some((open, close)) = climb(&stats, from, page_text) {
                furniture = furniture_beside(&stats, (open, close), &ranges);
                ranges = vec![(open, close)];
            }
        }
        leads = leads_of(&stats, from, &ranges);
    }
    if !ranges.is_empty() {
        let body: u32 = blocks
            .iter()
            .filter(|b| within(b.pos, &ranges))
            .map(|b| b.width)
            .sum();
        // Furniture inside the body goes, unless together it is half the body or more: a body
        // made of furniture-named parts (a gallery whose text is its captions, a thread of
        // replies) is the page's text, not furniture to empty it of.
        let mut candidates: Vec<(u32, u32, u32)> = stats
            .values()
            .filter(|st| {
                let prune = match st.prunable {
                    Prunable::No => false,
                    Prunable::WithLinks => st.link_width > 0,
                    Prunable::Always => true,
                };
                prune
                    && st.class_weight < 0.0
                    && st.width * 2 < body
                    && ranges.iter().any(|&(o, c)| st.open > o && st.close <= c)
            })
            .map(|st| (st.open, st.close, st.width))
            .collect();
        // Outermost first: one inside another is counted once.
        candidates.sort_unstable_by_key(|&(open, close, _)| (open, std::cmp::Reverse(close)));
        let mut outermost: Vec<(u32, u32)> = Vec::new();
        let mut pruned = 0u64;
        for (open, close, width) in candidates {
            if outermost.last().is_some_and(|&(_, c)| open < c) {
                continue;
            }
            pruned += u64::from(width);
            outermost.push((open, close));
        }
        if pruned * 2 < u64::from(body) {
            furniture.extend(outermost);
        }
    }
    let keep = |b: &Block| -> bool {
        if b.heading1 || mostly_links(b.link_width, b.width) {
            return false;
        }
        within(b.pos, &leads)
            || ((ranges.is_empty() || within(b.pos, &ranges)) && !within(b.pos, &furniture))
    };
    let mut paragraphs: Vec<Paragraph> = blocks
        .into_iter()
        .filter(|b| keep(b))
        .map(|b| Paragraph {
            text: b.text,
            kind: b.kind,
        })
        .collect();
    drop_empty_sections(&mut paragraphs);
    MainText {
        title,
        heading,
        paragraphs,
    }
}

/// Drops the sub-titles left without a paragraph of their own: a sub-title followed by nothing, or
/// by a sub-title of its level or above, titled what extraction left out — a list of links
/// ("More on this topic", "Related articles") or furniture ("About the author").
fn drop_empty_sections(paragraphs: &mut Vec<Paragraph>) {
    let level = |p: &Paragraph| match p.kind {
        BlockKind::Heading(l) => Some(l),
        _ => None,
    };
    let mut keep = vec![true; paragraphs.len()];
    for (i, p) in paragraphs.iter().enumerate() {
        if let Some(l) = level(p) {
            keep[i] = paragraphs
                .get(i + 1)
                .is_some_and(|next| level(next).is_none_or(|n| n > l));
        }
    }
    let mut k = keep.into_iter();
    paragraphs.retain(|_| k.next().unwrap_or(true));
}

/// The winner `top`, or the wrapper of it whose siblings are its kin: an article written as a
/// series of wrapped parts (`div.article-body-text > p`, one per paragraph; a column of blocks
/// `div.sqs-block > div.content > p…`) scatters its text over sibling wrappers, each adding
/// nothing around its part. From `top`, the walk climbs through ancestors that add no text (an
/// author line makes a post more than a wrapper of its message), and stops at the first one that has a sibling of the same
/// kind holding qualifying text: the parts of one article, which then join as the winner's
/// same-kind siblings do. Only kinds named by a class that is not a layout utility count (a bare
/// `<div>`'s or a `div.row`'s siblings are any of the page's); without such a wrapper the winner
/// stays.
fn through_wrappers(stats: &StatsMap, top: NodeId) -> NodeId {
    let has_kin = |id: NodeId, st: &ElemStats| {
        st.named
            && st.parent.is_some()
            && stats.iter().any(|(other, o)| {
                *other != id && o.parent == st.parent && o.kind == st.kind && o.text > 0
            })
    };
    let Some(mut cur) = stats.get(&top) else {
        return top;
    };
    if has_kin(top, cur) {
        return top;
    }
    while let Some(p) = cur.parent {
        let Some(ps) = stats.get(&p) else { break };
        // Never up to the page's root elements (`body`, `html`).
        if ps
            .parent
            .is_none_or(|g| stats.get(&g).is_none_or(|gs| gs.parent.is_none()))
            || ps.width > cur.width
        {
            break;
        }
        cur = ps;
        if has_kin(p, cur) {
            return p;
        }
    }
    top
}

/// The outermost wrapper of `top`: the highest ancestor reached from it through elements that
/// add no text around it (the same width), never the page's root elements (`body`, `html`);
/// `top` itself when its parent adds text.
fn wrapper_top(stats: &StatsMap, top: NodeId) -> NodeId {
    let mut id = top;
    while let Some(cur) = stats.get(&id) {
        let Some(p) = cur.parent else { break };
        let Some(ps) = stats.get(&p) else { break };
        if ps.width > cur.width
            || ps
                .parent
                .is_none_or(|g| stats.get(&g).is_none_or(|gs| gs.parent.is_none()))
        {
            break;
        }
        id = p;
    }
    id
}

/// The leads of the body: elements named like a lead ([`LEAD_WORDS`]: `p.intro`,
/// `div.teaser-text`, `div.article__abstract`, `h2.article-subheadline`) holding qualifying text,
/// less of it than the body, with little link text (a quarter at most; a teaser card linking to
/// another page is not a lead), and not inside furniture other than the header of an article or
/// a section ([`ElemStats::part_header`], where the lead is usually written). A lead inside the
/// body is kept even inside that header; one before the body joins it when it sits beside it in
/// the article around it — the nearest common ancestor of the lead and the body's element `top`
/// is at most [`LEAD_LEVELS`] above `top`, and not the page's `<body>`. Many sites write the
/// standfirst apart from the body's container, where it wins no vote. Gives their pre-order
/// ranges.
fn leads_of(stats: &StatsMap, top: NodeId, ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let Some(first) = ranges.iter().map(|&(o, _)| o).min() else {
        return Vec::new();
    };
    // The qualifying text of the body's elements.
    let body: u32 = stats
        .values()
        .filter(|e| ranges.contains(&(e.open, e.close)))
        .map(|e| e.text)
        .sum();
    // The ancestors of `top` a lead may share with it, nearest first; never the page's root
    // elements (`body`, `html`).
    let mut around: Vec<NodeId> = Vec::with_capacity(LEAD_LEVELS);
    let mut cur = stats.get(&top).and_then(|s| s.parent);
    while let Some(p) = cur {
        let Some(ps) = stats.get(&p) else { break };
        if around.len() == LEAD_LEVELS
            || ps
                .parent
                .is_none_or(|g| stats.get(&g).is_none_or(|gs| gs.parent.is_none()))
        {
            break;
        }
        around.push(p);
        cur = ps.parent;
    }
    let outer_open = around
        .last()
        .and_then(|o| stats.get(o))
        .map_or(u32::MAX, |s| s.open);
    let beside = |e: &ElemStats| {
        if e.open <= outer_open || e.close >= first {
            return false;
        }
        // Its ancestors up to one of `top`'s within reach.
        let mut up = e.parent;
        for _ in 0..LEAD_LEVELS + 2 {
            let Some(p) = up else { return false };
            if around.contains(&p) {
                return true;
            }
            up = stats.get(&p).and_then(|s| s.parent);
        }
        false
    };
    let inside = |e: &ElemStats| ranges.iter().any(|&(o, c)| e.open > o && e.close <= c);
    let in_furniture = inside_furniture(stats, false);
    stats
        .iter()
        .filter(|(id, e)| {
            e.lead
                && e.text > 0
                && e.text < body
                && e.link_width * 4 <= e.width
                && !e.furniture
                && !in_furniture(**id)
                && (inside(e) || beside(e))
        })
        .map(|(_, e)| (e.open, e.close))
        .collect()
}

/// How far above the body's element a lead's common ancestor with it may be (see
/// [`leads_of`]).
const LEAD_LEVELS: usize = 4;

/// Whether an element is or lies inside furniture ([`ElemStats::furniture`]: named like furniture
/// that is furniture inside the body too, or an ARIA furniture role, and not a wrapper of most of
/// the page): a cookie notice, a pop-up, a comment thread. Such an element never wins the vote,
/// however dense its text (a consent notice of long comma-rich sentences, a pop-up holding a whole
/// other article): its text is not the page's, as it is not counted in the page's qualifying
/// text.
///
/// With `headers` false, the headers of articles and sections ([`ElemStats::part_header`]) do not
/// count: a lead inside one may join the body.
fn inside_furniture(stats: &StatsMap, headers: bool) -> impl Fn(NodeId) -> bool + '_ {
    let counts = |e: &ElemStats| e.furniture && (headers || !e.part_header);
    // The items are in pre-order: an element's parent comes before it.
    let mut inside = vec![false; stats.items.len()];
    for k in 0..stats.items.len() {
        let e = &stats.items[k].1;
        inside[k] = counts(e)
            || e.parent
                .and_then(|p| stats.slot.get(p as usize).copied())
                .is_some_and(|pk| (pk as usize) < k && inside[pk as usize]);
    }
    move |id| {
        stats
            .slot
            .get(id as usize)
            .and_then(|&k| inside.get(k as usize))
            .copied()
            .unwrap_or(false)
    }
}

/// Counts the qualifying text again (see [`ElemStats::text`]), with the furniture holding at
/// least half of the page's voting text (`page_raw_text`) counted as page text: a name is weak
/// evidence, and a wrapper of most of the page named like furniture (`l-outer--nav`,
/// `has-sidebar`, a `role=dialog` around everything) is not furniture. Gives the page's
/// qualifying text.
fn recount_without_wrapping_furniture(stats: &mut StatsMap, page_raw_text: u64) -> u64 {
    // The items are in pre-order: backwards, an element comes after all its descendants.
    let mut added = vec![0u32; stats.items.len()];
    let mut page = 0u64;
    for k in (0..stats.items.len()).rev() {
        let st = &mut stats.items[k].1;
        st.text = st.own_text + added[k];
        if st.furniture && u64::from(st.raw_text) * 2 >= page_raw_text {
            st.furniture = false;
        }
        let (text, furniture, parent) = (st.text, st.furniture, st.parent);
        let contributed = if furniture { 0 } else { text };
        match parent.and_then(|p| stats.slot.get(p as usize).copied()) {
            Some(pk) if (pk as usize) < k => added[pk as usize] += contributed,
            _ => page += u64::from(contributed),
        }
    }
    page
}

/// The elements inside `within` (a pre-order range the body climbed to) that are furniture
/// (named like it, or mostly link text: navigation, link lists) and lie beside the winners'
/// `ranges`: they stay out of the body.
fn furniture_beside(
    stats: &StatsMap,
    within: (u32, u32),
    ranges: &[(u32, u32)],
) -> Vec<(u32, u32)> {
    let (open, close) = within;
    let beside_winners = |o: u32, c: u32| !ranges.iter().any(|&(ro, rc)| o <= rc && c >= ro);
    stats
        .values()
        .filter(|e| e.open > open && e.close <= close)
        .filter(|e| {
            (e.class_weight < 0.0 && e.prunable != Prunable::No)
                || mostly_links(e.link_width, e.width)
        })
        .filter(|e| beside_winners(e.open, e.close))
        .map(|e| (e.open, e.close))
        .collect()
}

/// The outermost ancestor of `top` reached by climbing through sections of one body, or `None`:
/// from a sub-titled element (one with a `<h2>`–`<h6>` inside), the body climbs to its parent
/// when most of the qualifying text the parent adds is in other sub-titled children of the same
/// kind (tag and class) — the sibling sections of one document — and goes on from the parent
/// while it is sub-titled too. Items without sub-titles (replies, comments, cards) never make a
/// parent a body of sections, and a parent that adds nothing ends the climb.
fn enclosing_sections(stats: &StatsMap, top: NodeId) -> Option<NodeId> {
    let mut child = top;
    let mut reached = None;
    loop {
        let c = stats.get(&child)?;
        if c.headings == 0 {
            return reached;
        }
        let Some(parent) = c.parent else {
            return reached;
        };
        let p = stats.get(&parent)?;
        let added = p.text.saturating_sub(c.text);
        if added == 0 || p.class_weight < 0.0 {
            return reached;
        }
        let sections: u32 = stats
            .iter()
            .filter(|(id, e)| {
                **id != child && e.parent == Some(parent) && e.kind == c.kind && e.headings > 0
            })
            .map(|(_, e)| e.text)
            .sum();
        if sections * 2 <= added {
            return reached;
        }
        reached = Some(parent);
        child = parent;
    }
}

/// The pre-order range of the nearest ancestor of `top` holding at least half of the page's
/// qualifying text, unless that ancestor is a list of items (see [`list_of_items`]).
fn climb(stats: &StatsMap, top: NodeId, page_text: u64) -> Option<(u32, u32)> {
    let mut child = top;
    let mut up = stats.get(&top)?.parent;
    while let Some(id) = up {
        let st = stats.get(&id)?;
        if u64::from(st.text) * 2 >= page_text {
            return (!list_of_items(stats, id, child)).then_some((st.open, st.close));
        }
        child = id;
        up = st.parent;
    }
    None
}

/// True when most of the qualifying text `ancestor` holds beyond its child `child` is in other
/// children of `child`'s kind (tag and class) that have no sub-title, and those items carry text
/// of their own beside their qualifying text — an author and date line, a post number, a reply
/// link: more than [`ITEM_LABEL_WIDTH`] an item on average: `child` is one item of a list of
/// posts, comments or cards, not one section of a body. Not such a list: a list the body writes
/// itself (`child` is an `<li>`, `<dt>` or `<dd>`); items inside an element named like content
/// (`article-content`, `entry`: the page says it is the body); and items that are bare wrappers of
/// their text, at most a short label each (an "Advertisement" slot, a step number) — an article
/// written one paragraph a wrapper, a recipe one step a wrapper.
fn list_of_items(stats: &StatsMap, ancestor: NodeId, child: NodeId) -> bool {
    let (Some(a), Some(c)) = (stats.get(&ancestor), stats.get(&child)) else {
        return false;
    };
    if c.list_item || a.class_weight > 0.0 {
        // `<li>`, `<dt>`, `<dd>`: the items of a list the body itself writes; or a body the page
        // names as such.
        return false;
    }
    let added = a.text.saturating_sub(c.text);
    // The items' qualifying text, their number (`child` too), and their text that does not vote
    // (labels, author lines, dates, links).
    let (mut items, mut n, mut other) = (0u32, 1u32, c.width.saturating_sub(c.raw_text));
    for (id, e) in stats.iter() {
        if *id != child && e.parent == Some(ancestor) && e.kind == c.kind && e.headings == 0 {
            items += e.text;
            n += 1;
            other += e.width.saturating_sub(e.raw_text);
        }
    }
    items * 2 > added && other > n * ITEM_LABEL_WIDTH
}

/// The average width of text of its own (outside its qualifying text) an item of a list of
/// posts carries at least (see [`list_of_items`]): more than a short label ("Advertisement", a
/// step's number and title), as little as an author's name and a date.
const ITEM_LABEL_WIDTH: u32 = 24;

fn stats_open(stats: &StatsMap, id: &NodeId) -> u32 {
    stats.get(id).map(|s| s.open).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str =
        "<p>The first paragraph of the article, long enough to count, with commas, and more.</p>\
        <p>The second paragraph continues the story, with details, quotes and numbers like 3.5.</p>\
        <p>A third paragraph closes it, so the body has three paragraphs of real text.</p>";

    fn page(template: u8, body: &str) -> String {
        match template {
            0 => format!(
                "<html><head><title>T | Site A</title><script>var x='<p>no</p>';</script></head><body>\
                 <div class=nav><a href=/>Home</a> <a href=/w>World</a> <a href=/b>Business news today</a></div>\
                 <div class=main><h1>Headline</h1><div class=byline>By someone</div>\
                 <div class=article-body>{body}</div></div>\
                 <div class=footer><p>Copyright 2024 Site A, all rights reserved, no reuse.</p></div></body></html>"
            ),
            _ => format!(
                "<html><head><title>Headline - B</title></head><body><header><a href=/>B</a></header>\
                 <table><tr><td class=side><ul><li><a href=/1>Some long related link title one</a></li>\
                 <li><a href=/2>Another long related link title two</a></li></ul></td>\
                 <td><h1>Headline</h1><div id=content>{body}</div>\
                 <div class=comments><p>nice post!</p></div></td></tr></table>\
                 <footer>B footer text that is long enough to vote, long enough indeed.</footer></body></html>"
            ),
        }
    }

    #[test]
    fn same_body_under_two_templates_gives_same_main_text() {
        let a = extract(&page(0, BODY));
        let b = extract(&page(1, BODY));
        assert_eq!(a.paragraphs, b.paragraphs);
        assert_eq!(a.paragraphs.len(), 3);
        assert_eq!(a.heading, "Headline");
        assert_eq!(a.title, "T | Site A");
    }

    #[test]
    fn br_separated_body_gives_same_paragraph_texts() {
        let br = "The first paragraph of the article, long enough to count, with commas, and more.<br><br>\
            The second paragraph continues the story, with details, quotes and numbers like 3.5.<br><br>\
            A third paragraph closes it, so the body has three paragraphs of real text.";
        let a = extract(&page(0, BODY));
        let b = extract(&page(0, br));
        assert_eq!(a.body(), b.body());
    }

    #[test]
    fn scripts_and_styles_are_not_text() {
        let m = extract("<style>p{}</style><p>visible text here that is long enough to vote for sure</p><script>hidden()</script>");
        assert_eq!(
            m.body(),
            "visible text here that is long enough to vote for sure"
        );
    }

    #[test]
    fn numeric_character_references_are_text() {
        let m = extract("<p>&#x4E2D;&#25991;&#x6587;&#x672C;&#x5185;&#x5BB9;&#x5F88;&#x957F;&#x5F88;&#x957F;&#x5F88;&#x957F;</p>");
        assert_eq!(m.body(), "中文文本内容很长很长很长");
    }

    /// A formatting element left open around blocks makes html5ever's adoption agency move a
    /// block's children into a copy of it (`reparent_children`). ego-tree before 0.11 updated the
    /// parent of the first and last moved child only, so the walk climbed out of the tree from a
    /// middle one and lost every block after it: here the whole body.
    #[test]
    fn misnested_formatting_around_blocks_keeps_the_text() {
        let m = extract(
            "<b><article><span></span> <div>Body text in bold</b> and after it.</div></article>",
        );
        assert_eq!(m.body(), "Body text in bold and after it.");
    }

    /// XHTML (DocBook, EPUB) writes anchors as `<a id="x"/>`; an HTML5 parser opens an `<a>`
    /// there that holds the rest of the block. Such an `<a>` is not a link, nor is an `<a>`
    /// without `href` that names a target: their text is body text.
    #[test]
    fn anchors_are_not_links() {
        let para = "A paragraph of the manual, long enough to vote, with commas, and more words.";
        let page = format!(
            "<html><body><div class=nav><a href=/a>Previous page</a> <a href=/b>Next page</a></div>\
             <div class=section><h2><a id=\"s1\"/>Installing</h2>\
             <p><a id=\"p1\"/>{para}</p><p><a class=\"indexterm\"/>{para}</p>\
             <p><a name=\"p3\">{para}</a></p><p>{para}</p></div></body></html>"
        );
        let m = extract(&page);
        let texts: Vec<&str> = m.paragraphs.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, vec!["Installing", para, para, para, para]);
        // A placeholder link (no `href`, no target: a scripted button) is still a link.
        let share = "<div class=share>Share: <a>Facebook</a> <a>X</a> <a>LinkedIn</a></div>";
        let m2 = extract(&page.replace("</div></body>", &format!("{share}</div></body>")));
        assert_eq!(m2.paragraphs, m.paragraphs);
    }

    /// A hand-written page that forgets one `</a>`: the HTML5 parser re-creates that link in every
    /// block up to the next `<a>`, so the whole body was link text and dropped. Those copies are
    /// not links; the link itself still is.
    #[test]
    fn a_link_left_open_does_not_make_the_body_link_text() {
        let para = "A paragraph of the post, long enough to vote, with commas, and more words.";
        let page = format!(
            "<html><body><div class=crumbs><a href=/>Board index</a> &rsaquo; \
             <a href=/forum>Forum &rsaquo; General</div>\
             <div class=post><p>{para}</p><p>{para}</p><p>{para}</p></div>\
             <div class=links><a href=/1>Related thread one</a> <a href=/2>Related thread two</a>\
             </div></body></html>"
        );
        let m = extract(&page);
        let texts: Vec<&str> = m.paragraphs.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, vec![para, para, para]);
        // The breadcrumb's block left open too: the body opens inside the link itself.
        let page = page.replace("General</div>", "General");
        assert_eq!(extract(&page).paragraphs, m.paragraphs);
        // A link the page closes may hold blocks (a card): that is link text.
        let card = format!("<a href=/card><div><h3>Card title</h3><p>{para}</p></div></a>");
        let page = page.replace("<div class=links>", &format!("<div class=links>{card}"));
        assert_eq!(extract(&page).paragraphs, m.paragraphs);
    }

    /// Class and id hints are whole words: `notetext` is not "text", `howtogetbody` is not "body",
    /// so a small note box that every page shares does not beat the real body.
    #[test]
    fn class_hints_match_whole_words() {
        let note = "<div class=\"note notetext\" id=howtogetbody><p>To get the package, open the \
                    software centre, search for it, click Install, and wait a moment.</p></div>";
        let page = format!(
            "<html><body><div class=col1><div class=page>{BODY}</div></div>\
             <div class=col2>{note}</div></body></html>"
        );
        let m = extract(&page);
        assert_eq!(m.body(), extract(&page.replace(note, "")).body());
        assert_eq!(m.paragraphs.len(), 3);
        // Words still count inside longer names: split on `-`, `_`, white space and camelCase.
        for names in [
            "post-content",
            "entry_content",
            "articleBody",
            "main contents",
            "maincontent",
            "postBody",
            "articlecontents",
        ] {
            assert!(
                class_weight(names, "", &mut Default::default()).0 > 0.0,
                "{names}"
            );
        }
        for names in [
            "nav-bar",
            "sideBar x",
            "comments",
            "see_also",
            "hot-rank",
            "hotrank",
        ] {
            assert!(
                class_weight("", names, &mut Default::default()).0 < 0.0,
                "{names}"
            );
        }
        for names in [
            "notetext",
            "howtogetbody",
            "screenshot",
            "context",
            "navigating",
            "postmessage",
            "bodywrapper",
            "relatedposts",
        ] {
            assert_eq!(
                class_weight(names, names, &mut Default::default()).0,
                0.0,
                "{names}"
            );
        }
    }

    /// A page of nested sections (a one-page manual): the densest section wins the vote, but it
    /// holds a small part of the page's text, so the body climbs to the ancestor that holds most
    /// of it, leaving out the furniture inside that ancestor (a "related" box, a link list).
    #[test]
    fn nested_sections_keep_the_whole_body() {
        let p = |n: u32| format!("<p>Paragraph {n} of the manual, which says what it says.</p>");
        let dense = "<p>A dense paragraph, with commas, lists, clauses, and more, and more.</p>";
        let page = format!(
            "<html><body><div class=top><a href=/>Home</a> <a href=/docs>Docs</a></div>\
             <div class=manual><h1>Manual</h1>\
             <div class=section><h2>One</h2>{}{}</div>\
             <div class=section><h2>Two</h2>{}\
               <div class=subsection><h3>Two.One</h3>{dense}{dense}</div></div>\
             <div class=section><h2>Three</h2>{}{}</div>\
             <div class=section><h2>Four</h2>{}{}</div>\
             <ul><li><a href=/a>A link to another manual page</a></li>\
             <li><a href=/b>Another link to another manual page</a></li></ul>\
             <div class=related><p>Related: other manuals you may like to read, and more.</p></div>\
             </div><div class=copyright><p>Copyright 2024 The Manual Writers, all rights reserved.</p>\
             </div></body></html>",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            p(6),
            p(7)
        );
        let m = extract(&page);
        let texts: Vec<&str> = m.paragraphs.iter().map(|p| p.text.as_str()).collect();
        let para = |n: u32| format!("Paragraph {n} of the manual, which says what it says.");
        let dense = "A dense paragraph, with commas, lists, clauses, and more, and more.";
        let (p1, p2, p3, p4, p5, p6, p7) = (
            para(1),
            para(2),
            para(3),
            para(4),
            para(5),
            para(6),
            para(7),
        );
        assert_eq!(
            texts,
            vec![
                "One", &p1, &p2, "Two", &p3, "Two.One", dense, dense, "Three", &p4, &p5, "Four",
                &p6, &p7
            ]
        );
    }

    /// API documentation as nested sections (Sphinx: `<section><h1>` holding `<section><h2>`s,
    /// one holding `<section><h3>`s): the reference section, long lists of entries, wins the vote
    /// and with its sibling sections holds more than half of the page, but it is one part of the
    /// page's body. The body climbs through the sections to the outermost one, the introduction
    /// and the other sections with it; a comment section of another kind beside it stays out.
    #[test]
    fn nested_sections_of_one_page_are_one_body() {
        let prose = |n: u32| {
            format!("<p>Prose paragraph {n} of the page, long enough to vote, with a comma.</p>")
        };
        let entries: String = (0..12)
            .map(|n| {
                format!(
                    "<p>Entry {n} of the reference, with arguments, defaults, returns, and notes.</p>"
                )
            })
            .collect();
        let page = format!(
            "<html><body><div class=body role=main><section id=top><h1>Extensions</h1>{}             <section id=adding><h2>Adding</h2>{}{}</section>             <section id=api><h2>API</h2>             <section id=ext><h3>Extension</h3>{entries}</section>             <section id=parser><h3>Parser</h3>{entries}</section></section>             </section>             <section class=comments><h2>Comments</h2>             <p>A reader comment that is long enough to vote, with a comma, and more.</p></section>             </div></body></html>",
            prose(1),
            prose(2),
            prose(3)
        );
        let body = extract(&page).body();
        for want in [
            "Prose paragraph 1",
            "Adding",
            "Prose paragraph 3",
            "Entry 11",
            "Parser",
        ] {
            assert!(body.contains(want), "{want} missing from {body}");
        }
        assert!(!body.contains("reader comment"), "{body}");
    }

    /// A thread: the first post wins the vote and holds less than half of the page's text, the
    /// replies the rest. Replies are items of the first post's kind without sub-titles, not
    /// sections of its body: the body stays the first post.
    #[test]
    fn a_thread_keeps_its_first_post() {
        // A post carries its author, date and number beside its message.
        let post = |user: &str, text: &str| {
            format!(
                "<table class=post><tr><td class=author>{user}</td><td>12 March 2021, 10:42</td>\
                 <td>#1</td><td><div class=message>{text}</div></td></tr></table>"
            )
        };
        let reply = "<p>A reply that is long enough to vote, with a comma, and one more.</p>";
        let thread = format!(
            "<html><body><div id=thread><h1>Thread</h1>{}{}{}{}{}</div></body></html>",
            post("first", BODY),
            post("second", reply),
            post("third", reply),
            post("fourth", reply),
            post("fifth", reply)
        );
        assert_eq!(extract(&thread).body(), extract(&page(0, BODY)).body());
    }

    const BODY_TEXT: [&str; 3] = [
        "The first paragraph of the article, long enough to count, with commas, and more.",
        "The second paragraph continues the story, with details, quotes and numbers like 3.5.",
        "A third paragraph closes it, so the body has three paragraphs of real text.",
    ];

    /// A content class name on an element holding little of the page's text (a rating box
    /// named `accordion-content`) does not outvote the element holding the body.
    #[test]
    fn a_content_name_on_a_small_box_does_not_win() {
        let html = format!(
            "<html><body><div class=rating-content><div class=accordion-content>\
             <p>Rate this recipe, from one to five stars please.</p></div></div>\
             <div class=recipe>{BODY}</div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
    }

    /// Sibling parts of one article, of one family (the same tag and first class name), join
    /// the body even when one of them holds too little text to vote strongly.
    #[test]
    fn parts_of_one_article_join() {
        let html = format!(
            "<html><body><main><article class=\"box header\"><p>A short lead of the recipe.</p>\
             </article><article class=\"box ingredients\"><table><tr><td>200 g flour</td></tr>\
             </table></article><article class=\"box steps\">{BODY}</article>\
             <article class=\"other box\"><p>Someone else's unrelated box of text, long enough.</p>\
             </article></main></body></html>"
        );
        let body = extract(&html).body();
        assert!(
            body.starts_with("A short lead of the recipe.\n200 g flour\n"),
            "{body}"
        );
        assert!(body.contains(BODY_TEXT[2]), "{body}");
        assert!(!body.contains("unrelated"), "{body}");
    }

    /// Siblings that share only a layout utility class (`flex`, `row`, `col-md-6`) are not one
    /// family: the promo box beside the article stays out, while the article's own parts
    /// (`flex article-part`) still join.
    #[test]
    fn utility_classes_make_no_family() {
        let html = format!(
            "<html><body><main><div class=\"flex article-part lead\"><p>A short lead.</p></div>\
             <div class=\"flex article-part\">{BODY}</div>\
             <div class=\"flex mt-4 promo-box\"><div>Subscribe to our weekly letter for more</div>\
             </div><div class=\"col-md-6 row\"><div>Another unrelated box of text here</div></div>\
             </main></body></html>"
        );
        let body = extract(&html).body();
        assert_eq!(
            body,
            format!("A short lead.\n{}", BODY_TEXT.join("\n")),
            "{body}"
        );
        assert!(is_utility_class("col-md-6") && is_utility_class("md:grid"));
        assert!(!is_utility_class("article-part") && !is_utility_class("recipe"));
        assert_eq!(
            family_of("div", "flex mt-4 promo-box"),
            family_of("div", "promo-box")
        );
        assert_eq!(family_of("div", "flex row"), None);
    }

    /// An article written as sibling wrappers of one paragraph each (ads between them) is read
    /// whole: the winner climbs through wrappers that add no text to the wrapper whose
    /// siblings are of its kind; a wrapper adding any text (a forum post's author line) is not.
    #[test]
    fn wrapped_parts_of_one_article_join() {
        let parts: String = BODY_TEXT
            .iter()
            .map(|p| {
                format!(
                    "<div class=\"component body-text\"><div class=inner><p>{p}</p></div></div>\
                     <div class=ad><span>Advertisement</span></div>"
                )
            })
            .collect();
        let html = format!(
            "<html><body><div class=page><article class=story>{parts}</article>\
             <div class=sidebar><p>Something else entirely, on another topic, with commas.</p>\
             </div></div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
        // Posts whose wrapper adds an author line: the winner does not climb to the posts.
        let post = |who: &str, p: &str| {
            format!(
                "<div class=post><div class=author>{who} Joined: Sep 2012 #6</div>\
                 <div class=post-body><p>{p}</p></div></div>"
            )
        };
        let html = format!(
            "<html><body><div class=thread>{}{}</div></body></html>",
            post("randomreader", BODY_TEXT[0]),
            post("anon", BODY_TEXT[1])
        );
        assert!(!extract(&html).body().contains("Joined"));
    }

    /// An article written one paragraph a bare wrapper (`article > div > div.slide > p`, a
    /// label "Advertisement" in some of them) is one body, not a list of posts: the body climbs
    /// to the article, as it does for items inside an element named like content; posts carrying
    /// an author and date line of their own stay a list whose first post is the body.
    #[test]
    fn paragraphs_in_bare_wrappers_are_one_article() {
        let slides: String = BODY_TEXT
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let label = if i % 2 == 1 {
                    "<span>Advertisement</span>"
                } else {
                    ""
                };
                format!(
                    "<div><div class=slide>{label}<div class=entry><p>{p}</p></div></div></div>"
                )
            })
            .collect();
        let html = format!(
            "<html><body><main><article>{slides}</article></main>\
             <div class=footer><p>Copyright 2024 Site A, all rights reserved, no reuse.</p></div>\
             </body></html>"
        );
        // The label stays: a short block inside the body (left out by no rule yet).
        let body = extract(&html).body();
        assert_eq!(body.replace("Advertisement\n", ""), BODY_TEXT.join("\n"));
        // Items that carry more than a label (a credit and a date) are posts in a thread, whose
        // first post is the body; inside a container named like content they are one body.
        let item = |text: &str| {
            format!(
                "<div class=item><div class=credit>Photo: Some Agency</div>\
                 <div class=date>12 March 2021</div><div class=text>{text}</div></div>"
            )
        };
        let reply = "<p>A reply that is long enough to vote, with a comma, and one more.</p>";
        let items = format!(
            "{}{}{}{}",
            item(BODY),
            item(reply),
            item(reply),
            item(reply)
        );
        let thread = format!(
            "<html><body><div class=thread>{items}</div>\
             <div class=box><p>Another box of text, long enough to vote, elsewhere.</p></div>\
             </body></html>"
        );
        let body = extract(&thread).body();
        assert!(body.ends_with(&BODY_TEXT.join("\n")), "{body}");
        assert!(!body.contains("A reply"), "{body}");
        let body = extract(&thread.replace("class=thread", "class=blog-detail-text")).body();
        assert!(body.contains(&BODY_TEXT.join("\n")), "{body}");
        assert_eq!(body.matches("A reply").count(), 3, "{body}");
        assert!(!body.contains("Another box"), "{body}");
    }

    /// A paragraph written beside the wrappers of the body (`div.body > p.intro + div.wrap >
    /// div.text > p…`), where it wins no vote, joins it.
    #[test]
    fn a_paragraph_beside_the_body_wrappers_joins_it() {
        let html = format!(
            "<html><body><div class=page><div class=inner>\
             <p class=einleitung>An opening paragraph written apart, long enough to vote.</p>\
             <div class=frame><div class=frame-text>{BODY}</div></div></div>\
             <div class=box><p>Another box of text, long enough to vote, elsewhere.</p></div>\
             </div></body></html>"
        );
        assert_eq!(
            extract(&html).body(),
            format!(
                "An opening paragraph written apart, long enough to vote.\n{}",
                BODY_TEXT.join("\n")
            )
        );
    }

    /// A `<header>` (furniture, skipped) that holds the page's `<main>` or `<article>` — one left
    /// open holds everything after it — is read as a plain container; one that does not stays
    /// out.
    #[test]
    fn a_header_holding_the_body_is_not_skipped() {
        let html = format!(
            "<html><body><header id=top><a href=/>Site</a><main><article>{BODY}</article></main>\
             </body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
        let html = format!(
            "<html><body><header><p>Site slogan, long enough to be a paragraph of its own.</p>\
             </header><main><article>{BODY}</article></main></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
    }

    /// Inside the body, comment threads, share bars, bylines and captions are furniture, and so
    /// is a teaser that links elsewhere; a looser furniture word (`widget`) and a teaser without
    /// a link (the article's lead) are not.
    #[test]
    fn furniture_inside_the_body_is_left_out() {
        let html = format!(
            "<html><body><div class=\"post elementor-widget\">\
             <div class=teaser-text><p>The lead of the story, in one sentence of its own.</p></div>\
             {BODY}<figure><img src=a.jpg><figcaption>Photo: somebody, for the agency</figcaption>\
             </figure><div class=byline>By a reporter of the paper</div>\
             <div class=share-bar><span>Share this story with your friends today</span></div>\
             <div class=teaser><a href=/x>Another story</a><p>The teaser of another story, long.</p></div>\
             <div class=comments><p>First! What a great article, thanks for writing it.</p>\
             <p>I disagree with the second paragraph, it is not right.</p></div></div></body></html>"
        );
        let body = extract(&html).body();
        assert_eq!(
            body,
            format!(
                "The lead of the story, in one sentence of its own.\n{}",
                BODY_TEXT.join("\n")
            )
        );
    }

    /// A body made of furniture-named parts (a gallery whose text is its captions) is not
    /// emptied: furniture inside the body goes only while what goes stays under half of it.
    #[test]
    fn a_body_of_captions_is_not_emptied() {
        let captions: Vec<String> = (0..6)
            .map(|i| {
                format!(
                    "<div class=caption><p>Picture {i} of the harbour at dawn, the boats coming \
                     home with the morning catch and the gulls above them.</p></div>"
                )
            })
            .collect();
        let html = format!(
            "<html><body><nav><a href=/a>Home</a> <a href=/b>News</a></nav>\
             <div class=gallery>{}</div></body></html>",
            captions.concat()
        );
        let body = extract(&html).body();
        assert!(body.contains("Picture 0 of the harbour"), "{body:?}");
        assert!(body.len() > 300, "{body:?}");
    }

    /// A paragraph whose lines are split by `<br>` wins the vote as a paragraph of a body: the
    /// body is its enclosing block, with the lead written beside it.
    #[test]
    fn a_winning_paragraph_brings_its_container() {
        let html = "<html><body><div class=story><div class=intro><p>A lead that says what the \
             story is about, briefly.</p></div><p>First line of the long text, with a comma, and more.<br>\
             Second line of the long text, with a comma, and more.<br>Third line of the long text, \
             with a comma, and more.<br>Fourth line of the long text, with a comma, and more.</p>\
             </div><div class=other><p>Something else entirely, long enough to vote here.</p></div>\
             </body></html>";
        let body = extract(html).body();
        assert!(body.starts_with("A lead that says"), "{body}");
        assert!(body.ends_with("Fourth line of the long text, with a comma, and more."));
    }

    /// Paragraphs written beside the winning container (a lead before the wrapped body) join it.
    #[test]
    fn paragraphs_beside_the_body_join_it() {
        let html = format!(
            "<html><body><div class=news><p>The lead paragraph, written beside the body, long.</p>\
             <div>{BODY}</div></div><div class=other><p>Something else entirely, long enough to \
             vote here.</p></div></body></html>"
        );
        assert_eq!(
            extract(&html).body(),
            format!(
                "The lead paragraph, written beside the body, long.\n{}",
                BODY_TEXT.join("\n")
            )
        );
    }

    /// A cookie notice or a pop-up of long, comma-rich sentences never wins the vote over the
    /// article beside it: an element inside furniture is not a candidate.
    #[test]
    fn a_winner_is_never_inside_furniture() {
        let notice = "<p>We use cookies, pixels, local storage, and similar technologies, to \
             measure, personalise, advertise, analyse, and improve, our services, for you, and \
             for partners, vendors, and advertisers, as described, in our policy, here, today.</p>";
        let html = format!(
            "<html><body><div id=cookie-law-info-bar><div>{notice}{notice}</div></div>\
             <div role=dialog><div class=popup-inner>{notice}{notice}</div></div>\
             <div class=story>{BODY}</div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
        // A page whose only text is in furniture still has a body.
        let only =
            format!("<html><body><div id=cookie-box><div>{notice}</div></div></body></html>");
        assert!(extract(&only).body().starts_with("We use cookies"));
    }

    /// A lead named so (`intro`, `teaser-text`, `article__abstract`, `lead`) written above the
    /// body, beside it in the article, joins the body; a teaser linking to another story, or one
    /// far from the body (another part of the page), does not.
    #[test]
    fn a_lead_above_the_body_joins_it() {
        for lead in [
            "div class=teaser-text",
            "p class=intro",
            "div class=article__abstract",
        ] {
            let tag = lead.split(' ').next().unwrap_or("div");
            let html = format!(
                "<html><body><div class=article><{lead}><p>The lead says what the story is \
                 about, briefly.</p></{tag}><div class=info>1 March</div>\
                 <div class=news-text-wrap>{BODY}</div></div>\
                 <div class=other><p>Something else entirely, long enough to vote.</p></div>\
                 </body></html>"
            );
            assert_eq!(
                extract(&html).body(),
                format!(
                    "The lead says what the story is about, briefly.\n{}",
                    BODY_TEXT.join("\n")
                ),
                "{lead}"
            );
        }
        let html = format!(
            "<html><body><div class=article><div class=teaser><a href=/other>Another story \
             of the day, told at length here</a><p>Short.</p></div>\
             <div class=news-text-wrap>{BODY}</div></div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
        let html = format!(
            "<html><body><div class=top><div class=intro><p>Welcome to the site of the club, \
             the best club in town.</p></div></div><div class=a><div class=b><div class=c>\
             <div class=d><div class=e><div class=story>{BODY}</div></div></div></div></div></div>\
             </body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
    }

    /// The `<header>` of an article is furniture (its date and byline stay out, it never wins),
    /// but the lead written in it joins the body; a page's own `<header>` is still skipped.
    #[test]
    fn a_lead_in_the_article_header_joins_the_body() {
        let html = format!(
            "<html><body><header><p class=intro>The site of the paper, the best news in \
             town.</p></header><article><header><h1>Title</h1><div class=date>1 March 2024, \
             updated</div><p class=intro>The lead says what the story is about, briefly.</p>\
             </header><div class=story-body>{BODY}</div></article></body></html>"
        );
        let m = extract(&html);
        assert_eq!(m.heading, "Title");
        assert_eq!(
            m.body(),
            format!(
                "The lead says what the story is about, briefly.\n{}",
                BODY_TEXT.join("\n")
            )
        );
    }

    /// A content word beside a furniture word in one name names that furniture
    /// (`related-posts`, `post-comments`): it stays out of the body. `content-sidebar-wrap` is a
    /// layout, not furniture.
    #[test]
    fn related_posts_are_furniture() {
        let html = format!(
            "<html><body><div class=entry-content>{BODY}<div class=related-posts><p>Another \
             story about something else, with commas, many, of them.</p></div>\
             <div class=post-comments><p>A comment on the story, long enough to vote.</p></div>\
             </div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
        let html = format!(
            "<html><body><div class=content-sidebar-wrap><div class=story>{BODY}</div>\
             </div><div class=share-popup><p>Share this story, with a friend, by mail, today, \
             with commas, and more, commas, again.</p></div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
    }

    /// A wrapper of most of the page named like furniture (`has-sidebar`) is not furniture:
    /// the page's text is counted inside it, so a content name on a small box inside it stays
    /// weak evidence.
    #[test]
    fn a_wrapper_named_like_furniture_holds_the_page() {
        let html = format!(
            "<html><body><div class=has-sidebar><div class=accordion-content>\
             <p>Rate this recipe, from one to five stars please.</p></div>\
             <div class=recipe>{BODY}</div></div></body></html>"
        );
        assert_eq!(extract(&html).body(), BODY_TEXT.join("\n"));
    }

    /// A sub-title left without a paragraph (the title of a link list or of furniture that
    /// extraction left out) is dropped; one followed by its text or its sub-sections is kept.
    #[test]
    fn empty_sections_are_dropped() {
        let html = format!(
            "<html><body><div class=article><h2>The story</h2>{BODY}<h2>More on this topic</h2>\
             <ul><li><a href=/1>A related story with a long title</a></li>\
             <li><a href=/2>Another related story, long title</a></li></ul>\
             <h2>Background</h2><h3>Then</h3><p>How it all began, long ago, in a faraway town.</p>\
             <h2>About the author</h2></div></body></html>"
        );
        let m = extract(&html);
        let headings: Vec<&str> = m
            .paragraphs
            .iter()
            .filter(|p| matches!(p.kind, BlockKind::Heading(_)))
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(headings, ["The story", "Background", "Then"]);
    }

    /// ARIA landmarks are the page furniture of pages that do not use `<nav>`, `<footer>`…: a
    /// "See also" list whose entries describe the pages they link to is navigation all the same,
    /// and stays out when the body climbs to the ancestor holding it.
    #[test]
    fn what_is_not_rendered_and_dialogs_are_not_body() {
        let body = "<div class=story><p>A short note on the river, with a clause, and another.</p>\
                    <p>It flooded twice this year, the farmers say, and moved uphill.</p></div>";
        let chrome = "<div class=x role=dialog hidden><p>We use cookies to improve your \
            experience, with settings, choices, and more words than the note has.</p></div>\
            <div style=\"color: red; display: none !important\"><p>Hidden teaser text, with \
            commas, clauses, and, again, more words than the note has, by far.</p></div>\
            <div class=cookie-consent><p>Accept all, reject all, or choose, with settings, \
            and more settings, and even more settings here.</p></div>";
        let page = |extra: &str| format!("<html><body>{extra}{body}</body></html>");
        let clean = extract(&page(""));
        assert_eq!(extract(&page(chrome)).body(), clean.body());
        let found = body.replace(
            "</p><p>",
            "</p><div hidden=until-found><p>Details a reader can find, with a clause.</p></div><p>",
        );
        let m = extract(&format!("<html><body>{found}</body></html>"));
        assert!(
            m.body().contains("Details a reader can find"),
            "{}",
            m.body()
        );
    }

    #[test]
    fn aria_furniture_is_not_body() {
        let p = |n: u32| format!("<p>Paragraph {n} of the manual, which says what it says.</p>");
        let dense = "<p>A dense paragraph, with commas, lists, clauses, and more, and more.</p>";
        let see_also = "<section class=links role=navigation><h2>See Also</h2><ul>\
            <li><a href=/a>Page A</a> - what page A explains, at some length, and more.</li>\
            <li><a href=/b>Page B</a> - what page B explains, at some length, and more.</li></ul>\
            </section><div role=contentinfo><p>This page is licensed under a free licence, \
            see the about page.</p></div>";
        let page = |extra: &str| {
            format!(
                "<html><body><div class=manual>\
                 <div class=section><h2>One</h2>{}{}</div>\
                 <div class=section><h2>Two</h2>{}<div class=sub><h3>Two.One</h3>{dense}{dense}</div>\
                 </div><div class=section><h2>Three</h2>{}{}</div>{extra}</div></body></html>",
                p(1),
                p(2),
                p(3),
                p(4),
                p(5)
            )
        };
        let m = extract(&page(""));
        assert_eq!(m.paragraphs.len(), 11);
        assert_eq!(extract(&page(see_also)).body(), m.body());
    }

    #[test]
    fn empty_and_garbage_inputs() {
        assert!(extract("").paragraphs.is_empty());
        assert!(extract("<<<>>></</</p>").paragraphs.len() <= 1);
        let deep = "<div>".repeat(100_000) + "deep text" + &"</div>".repeat(100_000);
        let m = extract(&deep);
        assert_eq!(m.body(), "deep text");
    }
}

#[cfg(test)]
mod collapse_tests {
    use super::collapse_ws;
    use proptest::prelude::*;

    fn reference(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn every_white_space_character_separates() {
        let spaces: Vec<char> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .collect();
        for sp in spaces {
            let s = format!("{sp}a{sp}{sp}中\u{85}b{sp}");
            assert_eq!(collapse_ws(&s), reference(&s), "{sp:?}");
        }
    }

    proptest! {
        #[test]
        fn equals_split_whitespace(s in "[ a-z\t\n\u{b}\u{c}\r\u{85}\u{a0}\u{1680}\u{2000}-\u{200b}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{3001}é中🎉,，]{0,40}") {
            prop_assert_eq!(collapse_ws(&s), reference(&s));
        }

        /// The width and commas measured while collapsing are those of the collapsed text.
        #[test]
        fn counts_are_the_collapsed_text_s(s in "[ a-z\t\n\u{85}\u{a0}\u{2000}-\u{200b}\u{2e7f}-\u{2e81}\u{3000}-\u{3002}é中🎉,;，；、:]{0,40}") {
            let c = super::collapse_ws_counting(&s);
            let commas = c
                .text
                .chars()
                .filter(|ch| matches!(ch, ',' | ';' | '，' | '；' | '、'))
                .count() as u32;
            prop_assert_eq!(c.width, crate::text::width(&c.text));
            prop_assert_eq!(c.commas, commas);
            prop_assert_eq!(c.text, reference(&s));
        }

        /// A bullet taken off takes its width with it.
        #[test]
        fn strip_bullet_keeps_the_width(s in "[•·▪*–— -]{0,2}[ a-z中]{0,8}") {
            let c = super::collapse_ws_counting(&s);
            let (text, w) = super::strip_bullet(c.text, c.width);
            prop_assert_eq!(w, crate::text::width(&text));
        }
    }
}
