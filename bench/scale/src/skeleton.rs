//! Page skeletons: the dev corpus's pages with their body, title and URL cut out.
//!
//! Every dev page is one of the bench's nine site templates (`templates_dev.py`) on one of its 53
//! sites, with the body rendered between fixed markers (`\n%s\n` inside the template's content
//! element). A skeleton keeps everything else of the page byte for byte — head, scripts,
//! navigation, sidebars, related links, ads, comments, footer — and marks the holes where a new
//! page's title (`<title>`, heading, breadcrumbs, meta description), URL (canonical link) and body
//! go. Skeletons of pages whose whole document was written as numeric character references are
//! left out (their titles do not match byte for byte; 1.8 % of dev).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use anyhow::Context;

use crate::chain::Lang;

/// How a body's blocks are marked up (the generator's `render_body` styles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `<p>` paragraphs, `<h2>` headings, `<ul>` lists.
    P,
    /// `<div class="para">`.
    Div,
    /// Text and `<br>\n<br>`.
    Br,
    /// WeChat-style `<p style><span style>`.
    Span,
    /// `<p><font>`.
    Font,
    /// A layout table, one row a paragraph.
    Table,
    /// `<section class="para"><p>`.
    Section,
    /// pdf2htmlEX: one positioned `<div>` a line.
    Pdf,
}

impl Style {
    fn detect(body: &str) -> Style {
        if body.contains("class=\"t m0") {
            Style::Pdf
        } else if body.starts_with("<table class=\"content\"") {
            Style::Table
        } else if body.contains("<span style=\"font-size:15px") {
            Style::Span
        } else if body.contains("<font size=") {
            Style::Font
        } else if body.contains("<section class=\"para\">") {
            Style::Section
        } else if body.contains("<div class=\"para\">") {
            Style::Div
        } else if body.contains("<br>\n<br>") {
            Style::Br
        } else {
            Style::P
        }
    }
}

/// A hole in a skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hole {
    /// The page's title, HTML-escaped.
    Title,
    /// The first 40 characters of the title (the docs template's breadcrumbs).
    Crumb,
    /// The first 60 characters of the title as an attribute (meta description).
    Desc,
    /// The page's URL as an attribute (canonical link).
    Url,
    /// The body.
    Body,
}

/// A piece of a skeleton: literal HTML or a hole.
#[derive(Clone, Debug)]
pub enum Piece {
    /// HTML kept from the dev page.
    Lit(Box<str>),
    /// Where the new page's text goes.
    Hole(Hole),
}

/// A dev page without its body, title and URL.
#[derive(Clone, Debug)]
pub struct Skeleton {
    /// The site's host.
    pub host: Box<str>,
    /// The page's language.
    pub lang: Lang,
    /// The template's name (`news`, `blog`, …).
    pub template: &'static str,
    /// How the dev page's body was marked up (the new body is marked up the same way).
    pub style: Style,
    /// The page around the holes.
    pub pieces: Vec<Piece>,
}

impl Skeleton {
    /// Bytes of literal HTML.
    pub fn lit_bytes(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => s.len(),
                Piece::Hole(_) => 0,
            })
            .sum()
    }
}

/// Where each template renders its body: the text before it (after `open`, up to the first
/// `open_end`), and the texts that may follow it.
struct Marker {
    template: &'static str,
    open: &'static str,
    open_end: &'static str,
    close: &'static [&'static str],
}

const MARKERS: &[Marker] = &[
    Marker {
        template: "news",
        open: "<div class=\"article-body\" id=\"content\">",
        open_end: "\n",
        close: &[
            "\n</div>\n<p class=\"src\">",
            "\n</div>\n<div class=\"share\">",
        ],
    },
    Marker {
        template: "blog",
        open: "<div class=\"entry-content\">",
        open_end: "\n",
        close: &[
            "\n</div>\n<p class=\"src\">",
            "\n</div>\n<div class=\"post-tags\">",
        ],
    },
    Marker {
        template: "forum",
        open: "<div class=\"t_f\" id=\"postmessage_",
        open_end: "\">\n",
        close: &["\n</div></div><div class=\"sign\">"],
    },
    Marker {
        template: "docs",
        open: "<div role=\"main\" class=\"document\"><div class=\"section\"><h1>",
        open_end: "</h1>\n",
        close: &["\n</div></div>\n<footer>"],
    },
    Marker {
        template: "aggregator",
        open: "<article class=\"syl-article-base\">",
        open_end: "\n",
        close: &["\n</article>\n<div class=\"disclaimer\">"],
    },
    Marker {
        template: "qa",
        open: "<div class=\"rich-text\" itemprop=\"text\">",
        open_end: "\n",
        close: &["\n</div><div class=\"content-item-time\">"],
    },
    Marker {
        template: "doclib",
        open: "<div class=\"doc-view\">",
        open_end: "\n",
        close: &["\n</div>\n<div class=\"doc-more\">"],
    },
    Marker {
        template: "mobile",
        open: "<div class=\"c\">",
        open_end: "\n",
        close: &["\n</div>\n<div class=\"more\">"],
    },
    Marker {
        template: "shop",
        open: "<div class=\"detail-content\">",
        open_end: "\n",
        close: &["\n</div></div>\n<div class=\"comment\">"],
    },
];

fn escape_with(s: &str, out: &mut String, quote: bool) {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if quote => "&quot;",
            b'\'' if quote => "&#x27;",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

/// HTML escaping as the bench's `esc` (Python's `html.escape(s, quote=False)`).
pub fn esc(s: &str, out: &mut String) {
    escape_with(s, out, false);
}

/// Attribute escaping as the bench's `attr` (`html.escape(s, quote=True)`).
pub fn attr(s: &str, out: &mut String) {
    escape_with(s, out, true);
}

fn unesc(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Splits every literal piece at the occurrences of `needle`, putting `hole` between.
fn cut(pieces: Vec<Piece>, needle: &str, hole: Hole) -> Vec<Piece> {
    if needle.is_empty() {
        return pieces;
    }
    let mut out = Vec::with_capacity(pieces.len() + 2);
    for p in pieces {
        match p {
            Piece::Lit(s) if s.contains(needle) => {
                let mut first = true;
                for part in s.split(needle) {
                    if !first {
                        out.push(Piece::Hole(hole));
                    }
                    first = false;
                    if !part.is_empty() {
                        out.push(Piece::Lit(part.into()));
                    }
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn title_tag(html: &str) -> Option<&str> {
    let a = html.find("<title>")? + "<title>".len();
    let b = a + html[a..].find("</title>")?;
    Some(&html[a..b])
}

fn title_tail(t: &str) -> Option<&str> {
    let a = t.rfind(" - ").map(|i| i + 3);
    let b = t.rfind(" | ").map(|i| i + 3);
    a.max(b).map(|i| &t[i..])
}

fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c) || ('\u{3400}'..='\u{4dbf}').contains(&c)
}

/// A dev page's body, located by its template's markers: (template, start, end).
fn locate(html: &str) -> Option<(&'static str, usize, usize)> {
    for m in MARKERS {
        let Some(a) = html.find(m.open) else { continue };
        let a = a + m.open.len();
        let s = a + html[a..].find(m.open_end)? + m.open_end.len();
        let e = m
            .close
            .iter()
            .filter_map(|c| html[s..].find(c).map(|i| s + i))
            .min()?;
        return Some((m.template, s, e));
    }
    None
}

/// Cuts one dev page into a skeleton, given its site's name as its `<title>` ends with it.
fn skeleton(url: &str, host: &str, html: &str, site_tail: Option<&str>) -> Option<Skeleton> {
    let (template, s, e) = locate(html)?;
    let body = &html[s..e];
    let tag = title_tag(html)?;
    if tag.contains("&#") {
        return None;
    }
    let title_esc = match site_tail {
        Some(tail) if tag.len() > tail.len() + 3 && tag.ends_with(tail) => {
            &tag[..tag.len() - tail.len() - 3]
        }
        _ => tag,
    };
    if title_esc.trim().is_empty() {
        return None;
    }
    let (cjk, other) =
        body.chars()
            .filter(|c| c.is_alphanumeric())
            .fold((0usize, 0usize), |(a, b), c| {
                if is_cjk(c) {
                    (a + 1, b)
                } else {
                    (a, b + 1)
                }
            });
    let lang = if cjk * 3 > other { Lang::Zh } else { Lang::En };
    let mut pieces = vec![
        Piece::Lit(html[..s].into()),
        Piece::Hole(Hole::Body),
        Piece::Lit(html[e..].into()),
    ];
    // The meta description (the title's first 60 characters) first, then the URL, the title and
    // what is left of the title's first 40 characters (breadcrumbs).
    let title = unesc(title_esc);
    let mut desc = String::new();
    attr(first_chars(&title, 60), &mut desc);
    pieces = cut(
        pieces,
        &format!("<meta name=\"description\" content=\"{desc}\">"),
        Hole::Desc,
    );
    pieces = pieces
        .into_iter()
        .flat_map(|p| match p {
            Piece::Hole(Hole::Desc) => vec![
                Piece::Lit("<meta name=\"description\" content=\"".into()),
                Piece::Hole(Hole::Desc),
                Piece::Lit("\">".into()),
            ],
            p => vec![p],
        })
        .collect();
    let mut url_attr = String::new();
    attr(url, &mut url_attr);
    pieces = cut(pieces, &url_attr, Hole::Url);
    pieces = cut(pieces, title_esc, Hole::Title);
    if title.chars().count() > 40 {
        let mut crumb = String::new();
        esc(first_chars(&title, 40), &mut crumb);
        pieces = cut(pieces, &crumb, Hole::Crumb);
    }
    // Merge adjacent literals (none expected, but cheap).
    Some(Skeleton {
        host: host.into(),
        lang,
        template,
        style: Style::detect(body),
        pieces,
    })
}

/// The skeletons of a dev corpus, by language.
pub struct Skeletons {
    /// All skeletons.
    pub all: Vec<Skeleton>,
    /// Indexes into `all` by language ([`Lang::idx`]).
    pub by_lang: [Vec<u32>; 2],
    /// Indexes into `all` by host.
    pub by_host: HashMap<Box<str>, Vec<u32>>,
    /// Dev pages read and pages cut (before the stride).
    pub read: usize,
    /// Pages that gave no skeleton (unknown template, NCR-encoded title).
    pub skipped: usize,
}

impl Skeletons {
    /// Builds the index maps over `all`.
    pub fn new(all: Vec<Skeleton>, read: usize, skipped: usize) -> Skeletons {
        let mut by_lang: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        let mut by_host: HashMap<Box<str>, Vec<u32>> = HashMap::new();
        for (i, s) in all.iter().enumerate() {
            by_lang[s.lang.idx()].push(i as u32);
            by_host.entry(s.host.clone()).or_default().push(i as u32);
        }
        Skeletons {
            all,
            by_lang,
            by_host,
            read,
            skipped,
        }
    }

    /// Reads a dev corpus (`docs.jsonl.gz`) and keeps about `keep` skeletons, every
    /// `pages / keep`-th page (so each site keeps its share).
    pub fn load(path: &Path, keep: usize) -> anyhow::Result<Skeletons> {
        #[derive(serde::Deserialize)]
        struct Doc {
            url: String,
            host: String,
            html: String,
        }
        let read_docs = |f: &mut dyn FnMut(usize, Doc)| -> anyhow::Result<usize> {
            let file =
                std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
            let r = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(file));
            let mut n = 0;
            for line in r.lines() {
                let line = line.with_context(|| format!("reading {}", path.display()))?;
                if line.trim().is_empty() {
                    continue;
                }
                let d: Doc = serde_json::from_str(&line)
                    .with_context(|| format!("{} line {}", path.display(), n + 1))?;
                f(n, d);
                n += 1;
            }
            Ok(n)
        };
        // Pass 1: each host's site name, the most common tail of its titles.
        let mut tails: HashMap<String, HashMap<String, usize>> = HashMap::new();
        let mut per_host: HashMap<String, usize> = HashMap::new();
        let total = read_docs(&mut |_, d| {
            *per_host.entry(d.host.clone()).or_default() += 1;
            if let Some(t) = title_tag(&d.html).and_then(title_tail) {
                *tails
                    .entry(d.host)
                    .or_default()
                    .entry(t.to_string())
                    .or_default() += 1;
            }
        })?;
        let site: HashMap<String, String> = tails
            .into_iter()
            .filter_map(|(h, t)| {
                let n = per_host.get(&h).copied().unwrap_or(0);
                let (tail, c) = t.into_iter().max_by_key(|(s, c)| (*c, s.clone()))?;
                (c * 2 > n).then_some((h, tail))
            })
            .collect();
        // Pass 2: the skeletons of every stride-th page.
        let stride = (total / keep.max(1)).max(1);
        let mut all = Vec::new();
        let mut skipped = 0;
        read_docs(&mut |i, d| {
            if i % stride != 0 {
                return;
            }
            match skeleton(
                &d.url,
                &d.host,
                &d.html,
                site.get(&d.host).map(|s| s.as_str()),
            ) {
                Some(s) => all.push(s),
                None => skipped += 1,
            }
        })?;
        if all.is_empty() {
            anyhow::bail!("{}: no page gave a skeleton", path.display());
        }
        Ok(Skeletons::new(all, total, skipped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_news_page_loses_its_body_title_and_url() {
        let html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>Rain &amp; wind | The Ledger</title>\n\
                    <meta name=\"description\" content=\"Rain &amp; wind\">\n<link rel=\"canonical\" href=\"https://x.com/a?b=1&amp;c=2\">\n\
                    </head><body><h1>Rain &amp; wind</h1>\n<div class=\"article-body\" id=\"content\">\n<p>Old body.</p>\n</div>\n\
                    <div class=\"share\">Share</div></body></html>";
        let s = skeleton("https://x.com/a?b=1&c=2", "x.com", html, Some("The Ledger")).unwrap();
        assert_eq!(s.template, "news");
        assert_eq!(s.style, Style::P);
        assert_eq!(s.lang, Lang::En);
        let holes: Vec<Hole> = s
            .pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Hole(h) => Some(*h),
                Piece::Lit(l) => {
                    assert!(!l.contains("Old body") && !l.contains("Rain"), "{l}");
                    None
                }
            })
            .collect();
        assert_eq!(
            holes,
            [Hole::Title, Hole::Desc, Hole::Url, Hole::Title, Hole::Body]
        );
    }
}
