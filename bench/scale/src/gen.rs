//! The page generator: page `i` of a stream is a function of (seed, `i`) alone.
//!
//! A page is either an **original** — a fresh body (see [`crate::chain`]) in the shape of a random
//! pool text of its language (its blocks' kinds and lengths, its title's length), put into a
//! random dev skeleton of that language — or, with probability `dup_share`, a **variant** of an
//! earlier page `j` (log-uniformly at most `window` pages back, so recent pages are likelier and a
//! page of a big family is likelier to be copied again): the base body of `j`'s family with
//! 0–3 of the dev generator's content operations (delete, add, excerpt, edit, reorder; a reworded
//! title a quarter of the time), under another site's skeleton (55 %), another skeleton of the
//! same site (30 %), or byte for byte the HTML of `j` under a new URL (15 %). Each decision draws
//! from its own ChaCha8 stream keyed by (seed, purpose, page number), so any page can be made
//! again without the pages before it, and nothing but the pool's chains and the skeletons is
//! held in memory.

use std::io::BufRead;
use std::path::Path;

use anyhow::Context;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::chain::{Chain, Lang};
use crate::skeleton::{attr, esc, Hole, Piece, Skeletons, Style};

/// What kind of block of text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A heading (`h2`–`h4`).
    Heading(u8),
    /// A paragraph (also the pool's `dt`, `tr` and `pre` blocks).
    Para,
    /// A list item.
    Item,
    /// A quotation.
    Quote,
}

/// The shape of a pool text: its title's length and its blocks' kinds and lengths (characters).
#[derive(Clone, Debug)]
pub struct Shape {
    title: u16,
    blocks: Vec<(Kind, u16)>,
}

/// One part of the pool: a chain and the shapes of its texts, per language.
pub struct TextSource {
    /// Chains by [`Lang::idx`].
    pub chains: [Chain; 2],
    /// Shapes by [`Lang::idx`].
    pub shapes: [Vec<Shape>; 2],
}

/// Which texts of the pool a source is made of: the held-out tenth (by a hash of the text's
/// uid) makes the unrelated query pages; the rest makes everything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolPart {
    /// Nine tenths of the texts.
    Main,
    /// The other tenth.
    HeldOut,
}

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

impl TextSource {
    /// Reads the base-text pool (`pool/dev.jsonl.gz`) and builds the chains of one part of it.
    pub fn load(path: &Path, part: PoolPart) -> anyhow::Result<TextSource> {
        #[derive(serde::Deserialize)]
        struct Block {
            k: String,
            t: String,
        }
        #[derive(serde::Deserialize)]
        struct Text {
            uid: String,
            lang: String,
            title: String,
            blocks: Vec<Block>,
        }
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let r = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(file));
        let mut texts: [Vec<Text>; 2] = [Vec::new(), Vec::new()];
        for (n, line) in r.lines().enumerate() {
            let line = line.with_context(|| format!("reading {}", path.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            let t: Text = serde_json::from_str(&line)
                .with_context(|| format!("{} line {}", path.display(), n + 1))?;
            let held_out = fnv(&t.uid).is_multiple_of(10);
            if held_out != (part == PoolPart::HeldOut) {
                continue;
            }
            if let Some(l) = Lang::parse(&t.lang) {
                texts[l.idx()].push(t);
            }
        }
        let mk = |l: Lang| -> (Chain, Vec<Shape>) {
            let ts = &texts[l.idx()];
            let chain = Chain::build(
                l,
                ts.iter()
                    .flat_map(|t| t.blocks.iter())
                    .filter(|b| b.k != "pre" && b.k != "tr")
                    .map(|b| b.t.as_str()),
            );
            let shapes = ts
                .iter()
                .map(|t| Shape {
                    title: t.title.chars().count().clamp(4, 80) as u16,
                    blocks: t
                        .blocks
                        .iter()
                        .map(|b| {
                            let kind = match b.k.as_str() {
                                "h2" => Kind::Heading(2),
                                "h3" => Kind::Heading(3),
                                "h4" => Kind::Heading(4),
                                "li" => Kind::Item,
                                "quote" => Kind::Quote,
                                _ => Kind::Para,
                            };
                            (kind, b.t.chars().count().clamp(2, 4000) as u16)
                        })
                        .collect(),
                })
                .filter(|s| !s.blocks.is_empty())
                .collect();
            (chain, shapes)
        };
        let (zc, zs) = mk(Lang::Zh);
        let (ec, es) = mk(Lang::En);
        Ok(TextSource {
            chains: [zc, ec],
            shapes: [zs, es],
        })
    }

    /// A source made of given paragraphs (tests).
    #[cfg(test)]
    pub fn from_paragraphs(zh: &[&str], en: &[&str]) -> TextSource {
        let shape = |n: u16| Shape {
            title: 12,
            blocks: vec![
                (Kind::Para, n),
                (Kind::Heading(2), 10),
                (Kind::Para, n),
                (Kind::Item, 20),
                (Kind::Item, 20),
                (Kind::Para, n),
                (Kind::Para, n),
            ],
        };
        TextSource {
            chains: [
                Chain::build(Lang::Zh, zh.iter().copied()),
                Chain::build(Lang::En, en.iter().copied()),
            ],
            shapes: [vec![shape(60)], vec![shape(200)]],
        }
    }
}

/// A body: title and blocks of text.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// The title (plain text).
    pub title: String,
    /// The blocks (plain text).
    pub blocks: Vec<(Kind, String)>,
}

impl Body {
    fn chars(&self) -> usize {
        self.blocks.iter().map(|(_, t)| t.chars().count()).sum()
    }
}

/// The generator's knobs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GenConfig {
    /// The stream's seed.
    pub seed: u64,
    /// Share of pages that are variants of an earlier page.
    pub dup_share: f64,
    /// How far back (pages) a variant's original may be.
    pub window: u64,
    /// Share of Chinese pages.
    pub zh_share: f64,
    /// A word for the keys (`https://HOST/NAME/SEED/I.html`), so streams never share keys.
    pub name: String,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            seed: 1,
            dup_share: 0.2,
            window: 100_000,
            zh_share: 0.5,
            name: "p".into(),
        }
    }
}

/// A generated page.
#[derive(Clone, Debug)]
pub struct GenPage {
    /// Unique key (a URL).
    pub key: String,
    /// The skeleton's host.
    pub host: String,
    /// Unix seconds.
    pub time: i64,
    /// The page.
    pub html: String,
    /// The page this one is a variant of, if any.
    pub variant_of: Option<u64>,
}

/// Where a page comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    Original,
    Variant(u64),
}

/// How a variant is placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    OtherSite,
    SameSite,
    Copy,
}

const P_PLAN: u64 = 1;
const P_SITE: u64 = 2;
const P_BODY: u64 = 3;
const P_OPS: u64 = 4;
const P_PLACE: u64 = 5;
const P_RENDER: u64 = 6;

/// A stream of pages.
pub struct Generator<'a> {
    cfg: GenConfig,
    text: &'a TextSource,
    skel: &'a Skeletons,
}

fn mix(mut x: u64) -> u64 {
    // SplitMix64's finalizer.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl<'a> Generator<'a> {
    /// A stream over a text source and skeletons.
    pub fn new(cfg: GenConfig, text: &'a TextSource, skel: &'a Skeletons) -> Generator<'a> {
        Generator { cfg, text, skel }
    }

    /// The random stream of one decision about page `i`.
    pub fn rng(&self, purpose: u64, i: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(mix(mix(
            self.cfg.seed ^ purpose.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ) ^ i))
    }

    fn plan(&self, i: u64) -> Plan {
        if i == 0 {
            return Plan::Original;
        }
        let mut r = self.rng(P_PLAN, i);
        if r.random::<f64>() >= self.cfg.dup_share {
            return Plan::Original;
        }
        let reach = i.min(self.cfg.window).max(1) as f64;
        let back = (reach.powf(r.random::<f64>()) as u64).clamp(1, i);
        Plan::Variant(i - back)
    }

    /// The original page of `i`'s family (`i` itself for an original).
    pub fn origin(&self, mut i: u64) -> u64 {
        while let Plan::Variant(j) = self.plan(i) {
            i = j;
        }
        i
    }

    /// Whether page `i` is a variant, and of which page.
    pub fn variant_of(&self, i: u64) -> Option<u64> {
        match self.plan(i) {
            Plan::Original => None,
            Plan::Variant(j) => Some(j),
        }
    }

    fn lang_of_origin(&self, k: u64) -> Lang {
        let mut r = self.rng(P_SITE, k);
        let zh = r.random::<f64>() < self.cfg.zh_share;
        let l = if zh { Lang::Zh } else { Lang::En };
        if self.skel.by_lang[l.idx()].is_empty() || self.text.shapes[l.idx()].is_empty() {
            if zh {
                Lang::En
            } else {
                Lang::Zh
            }
        } else {
            l
        }
    }

    fn placement(&self, i: u64) -> Placement {
        let x = self.rng(P_PLACE, i).random::<f64>();
        if x < 0.55 {
            Placement::OtherSite
        } else if x < 0.85 {
            Placement::SameSite
        } else {
            Placement::Copy
        }
    }

    /// The skeleton of page `i` (an index into the skeletons).
    pub fn skeleton_of(&self, i: u64) -> u32 {
        match self.plan(i) {
            Plan::Original => {
                let lang = self.lang_of_origin(i);
                let mut r = self.rng(P_SITE, i);
                let _ = r.random::<f64>();
                let v = &self.skel.by_lang[lang.idx()];
                v[r.random_range(0..v.len())]
            }
            Plan::Variant(j) => {
                let parent = self.skeleton_of(j);
                self.place_skeleton(i, parent)
            }
        }
    }

    fn place_skeleton(&self, i: u64, parent: u32) -> u32 {
        let mut r = self.rng(P_PLACE, i);
        let _ = r.random::<f64>();
        let p = &self.skel.all[parent as usize];
        match self.placement(i) {
            Placement::Copy => parent,
            Placement::SameSite => {
                let v = &self.skel.by_host[&p.host];
                v[r.random_range(0..v.len())]
            }
            Placement::OtherSite => {
                let v = &self.skel.by_lang[p.lang.idx()];
                for _ in 0..8 {
                    let s = v[r.random_range(0..v.len())];
                    if self.skel.all[s as usize].host != p.host {
                        return s;
                    }
                }
                v[r.random_range(0..v.len())]
            }
        }
    }

    /// The fresh body of original page `k`.
    pub fn fresh_body(&self, k: u64) -> Body {
        let lang = self.lang_of_origin(k);
        let mut r = self.rng(P_BODY, k);
        let shapes = &self.text.shapes[lang.idx()];
        let shape = &shapes[r.random_range(0..shapes.len())];
        self.body_of_shape(lang, shape, &mut r)
    }

    fn body_of_shape(&self, lang: Lang, shape: &Shape, r: &mut ChaCha8Rng) -> Body {
        let chain = &self.text.chains[lang.idx()];
        let mut title = String::new();
        chain.paragraph(r, usize::from(shape.title), true, &mut title);
        let blocks = shape
            .blocks
            .iter()
            .map(|&(kind, n)| {
                let mut t = String::with_capacity(usize::from(n) * 3 + 64);
                chain.paragraph(r, usize::from(n), matches!(kind, Kind::Heading(_)), &mut t);
                (kind, t)
            })
            .collect();
        Body { title, blocks }
    }

    /// The body of page `i` (its family's fresh body, edited for a variant).
    pub fn body(&self, i: u64) -> Body {
        let k = self.origin(i);
        let base = self.fresh_body(k);
        if k == i {
            return base;
        }
        let lang = self.lang_of_origin(k);
        let mut r = self.rng(P_OPS, i);
        self.edit(base, lang, &mut r)
    }

    /// The key of page `i` of the stream, without making the page (its skeleton's host, the
    /// stream's name and seed, `i`).
    pub fn key(&self, i: u64) -> String {
        self.key_on(&self.skel.all[self.skeleton_of(i) as usize], i)
    }

    fn key_on(&self, s: &crate::skeleton::Skeleton, i: u64) -> String {
        format!(
            "https://{}/{}/{:x}/{}.html",
            s.host, self.cfg.name, self.cfg.seed, i
        )
    }

    /// Page `i` of the stream.
    pub fn page(&self, i: u64) -> GenPage {
        let plan = self.plan(i);
        let skel = self.skeleton_of(i);
        let s = &self.skel.all[skel as usize];
        let key = self.key_on(s, i);
        let html = match plan {
            Plan::Variant(j) if self.placement(i) == Placement::Copy => self.page(j).html,
            _ => {
                let body = self.body(i);
                let mut r = self.rng(P_RENDER, i);
                render(s, &body, &key, &mut r)
            }
        };
        GenPage {
            key,
            host: s.host.to_string(),
            time: 1_640_995_200 + (i as i64) * 20,
            html,
            variant_of: self.variant_of(i),
        }
    }

    /// A near duplicate of page `i` made apart from the stream (a query): its body edited by
    /// the variant operations drawn from `salt`, under another site's skeleton.
    pub fn variant_page(&self, i: u64, salt: u64) -> String {
        let k = self.origin(i);
        let lang = self.lang_of_origin(k);
        let mut r = self.rng(P_OPS ^ 0x5151, salt);
        let body = self.edit(self.body(i), lang, &mut r);
        let parent = self.skeleton_of(i);
        let v = &self.skel.by_lang[lang.idx()];
        let mut s = parent;
        for _ in 0..8 {
            s = v[r.random_range(0..v.len())];
            if self.skel.all[s as usize].host != self.skel.all[parent as usize].host {
                break;
            }
        }
        let key = format!("https://query.example/{salt}");
        render(&self.skel.all[s as usize], &body, &key, &mut r)
    }

    /// The dev generator's content operations on a body: 0–3 of delete, add, excerpt, edit,
    /// reorder (0: 30 %, 1: 38 %, 2: 22 %, 3: 10 %), and a reworded title a quarter of the time.
    fn edit(&self, mut b: Body, lang: Lang, r: &mut ChaCha8Rng) -> Body {
        let chain = &self.text.chains[lang.idx()];
        let n_ops = match r.random::<f64>() {
            x if x < 0.30 => 0,
            x if x < 0.68 => 1,
            x if x < 0.90 => 2,
            _ => 3,
        };
        const MENU: [&str; 6] = ["del", "add", "excerpt", "edit", "reorder", "edit"];
        let mut chosen: Vec<&str> = Vec::new();
        let mut guard = 0;
        while chosen.len() < n_ops && guard < 50 {
            guard += 1;
            let o = MENU[r.random_range(0..MENU.len())];
            if chosen.contains(&o)
                || (o == "excerpt" && chosen.contains(&"del"))
                || (o == "del" && chosen.contains(&"excerpt"))
            {
                continue;
            }
            chosen.push(o);
        }
        let order = ["excerpt", "del", "reorder", "add", "edit"];
        chosen.sort_by_key(|o| order.iter().position(|x| x == o));
        let prose = |b: &Body| {
            b.blocks
                .iter()
                .filter(|(k, _)| {
                    *k != Kind::Heading(2) && *k != Kind::Heading(3) && *k != Kind::Heading(4)
                })
                .count()
        };
        let total = b.chars().max(1);
        for o in chosen {
            match o {
                "excerpt" if prose(&b) >= 4 => {
                    let keep = r.random_range(0.40..0.65) * total as f64;
                    let mut acc = 0usize;
                    let mut n = 0;
                    for (_, t) in &b.blocks {
                        n += 1;
                        acc += t.chars().count();
                        if acc as f64 >= keep {
                            break;
                        }
                    }
                    b.blocks.truncate(n.max(1));
                }
                "del" if prose(&b) >= 4 => {
                    let goal = r.random_range(0.08..0.35) * total as f64;
                    let mut gone = 0usize;
                    let half = b.blocks.len() / 2;
                    let mut tries = 0;
                    while (gone as f64) < goal && b.blocks.len() > half + 1 && tries < 40 {
                        tries += 1;
                        let i = r.random_range(half..b.blocks.len());
                        gone += b.blocks[i].1.chars().count();
                        b.blocks.remove(i);
                    }
                }
                "reorder" if prose(&b) >= 4 => {
                    for _ in 0..r.random_range(1..=3) {
                        let n = b.blocks.len();
                        let i = r.random_range(0..n);
                        let j = (i + r.random_range(1..=3)).min(n - 1);
                        let blk = b.blocks.remove(i);
                        b.blocks.insert(j, blk);
                    }
                }
                "add" => {
                    let goal = (r.random_range(0.05..0.30) * total as f64) as usize;
                    let mut added = Vec::new();
                    let mut n = 0;
                    while n < goal.max(20) {
                        let mut t = String::new();
                        let want = r.random_range(60..400).min(goal.max(20) - n + 20);
                        chain.paragraph(r, want, false, &mut t);
                        n += t.chars().count();
                        added.push((Kind::Para, t));
                    }
                    let at = match r.random::<f64>() {
                        x if x < 0.55 => b.blocks.len(),
                        x if x < 0.85 => b.blocks.len() / 2,
                        _ => 0,
                    };
                    for (k, blk) in added.into_iter().enumerate() {
                        b.blocks.insert(at + k, blk);
                    }
                }
                "edit" => {
                    let rate = r.random_range(0.02..0.10);
                    let share = r.random_range(0.3..1.0);
                    for (_, t) in b.blocks.iter_mut() {
                        if r.random::<f64>() < share {
                            *t = edit_text(t, lang, rate, chain, r);
                        }
                    }
                }
                _ => {}
            }
        }
        if r.random::<f64>() < 0.25 {
            b.title = match (lang, r.random_range(0..3)) {
                (Lang::Zh, 0) => format!("【转载】{}", b.title),
                (Lang::Zh, 1) => format!("{}（图）", b.title),
                (Lang::En, 0) => format!("Re: {}", b.title),
                (Lang::En, 1) => format!("{} (updated)", b.title),
                _ => {
                    let n = b.title.chars().count();
                    b.title.chars().take((n * 2 / 3).max(4)).collect()
                }
            };
        }
        b
    }
}

/// Word (English) or character (Chinese) substitutions, deletions and insertions on about
/// `rate` of a block's length.
fn edit_text(t: &str, lang: Lang, rate: f64, chain: &Chain, r: &mut ChaCha8Rng) -> String {
    match lang {
        Lang::En => {
            let mut w: Vec<String> = t.split(' ').map(str::to_string).collect();
            let n = ((w.len() as f64 * rate).ceil() as usize).max(1);
            for _ in 0..n {
                if w.is_empty() {
                    break;
                }
                let i = r.random_range(0..w.len());
                match r.random_range(0..3) {
                    0 => w[i] = chain.random_token(r),
                    1 => {
                        w.remove(i);
                    }
                    _ => w.insert(i, chain.random_token(r)),
                }
            }
            w.join(" ")
        }
        Lang::Zh => {
            let mut c: Vec<char> = t.chars().collect();
            let n = ((c.len() as f64 * rate).ceil() as usize).max(1);
            for _ in 0..n {
                if c.is_empty() {
                    break;
                }
                let i = r.random_range(0..c.len());
                let tok = chain.random_token(r).chars().next().unwrap_or('的');
                match r.random_range(0..3) {
                    0 => c[i] = tok,
                    1 => {
                        c.remove(i);
                    }
                    _ => c.insert(i, tok),
                }
            }
            c.into_iter().collect()
        }
    }
}

/// Wraps a paragraph into lines as a PDF converter does (16–38 CJK or 45–95 Latin characters).
fn wrap(t: &str, zh: bool, r: &mut ChaCha8Rng) -> Vec<String> {
    let width = if zh {
        r.random_range(16..=38)
    } else {
        r.random_range(45..=95)
    };
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut n = 0;
    if zh {
        for c in t.chars() {
            cur.push(c);
            n += 1;
            if n >= width {
                lines.push(std::mem::take(&mut cur));
                n = 0;
            }
        }
    } else {
        for w in t.split(' ') {
            if n + w.len() > width && !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
                n = 0;
            }
            if !cur.is_empty() {
                cur.push(' ');
                n += 1;
            }
            cur.push_str(w);
            n += w.len();
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A body as HTML in one of the dev generator's markup styles.
pub fn render_body(body: &Body, style: Style, zh: bool, r: &mut ChaCha8Rng, out: &mut String) {
    let mut top = 100u32;
    let start = out.len();
    if style == Style::Pdf {
        out.push_str("<div id=\"page-container\"><div class=\"pf w0 h0\" data-page-no=\"1\"><div class=\"pc pc1 w0 h0\">\n");
    }
    let mut i = 0;
    let bl = &body.blocks;
    while i < bl.len() {
        let (kind, t) = (&bl[i].0, &bl[i].1);
        match kind {
            Kind::Heading(l) => match style {
                Style::Br | Style::Font | Style::Table => {
                    out.push_str("<p><b>");
                    esc(t, out);
                    out.push_str("</b></p>");
                }
                Style::Pdf => {
                    top += 30;
                    out.push_str(&format!(
                        "<div class=\"t m0 x1 h4 y{top:x} ff2 fs3 fc0 sc0 ls0 ws0\">"
                    ));
                    esc(t, out);
                    out.push_str("</div>");
                }
                Style::Span => {
                    out.push_str(
                        "<section><span style=\"font-size:17px;font-weight:bold;color:#333\">",
                    );
                    esc(t, out);
                    out.push_str("</span></section>");
                }
                _ => {
                    out.push_str(&format!("<h{l}>"));
                    esc(t, out);
                    out.push_str(&format!("</h{l}>"));
                }
            },
            Kind::Item => {
                let mut j = i;
                let list = !matches!(style, Style::Br | Style::Font | Style::Pdf);
                if list {
                    out.push_str("<ul>\n");
                }
                while j < bl.len() && bl[j].0 == Kind::Item {
                    if list {
                        out.push_str("<li>");
                        esc(&bl[j].1, out);
                        out.push_str("</li>\n");
                    } else {
                        out.push_str(if zh { "· " } else { "&bull; " });
                        esc(&bl[j].1, out);
                        out.push_str("<br>\n");
                    }
                    j += 1;
                }
                if list {
                    out.push_str("</ul>");
                }
                i = j;
                out.push('\n');
                continue;
            }
            Kind::Quote if !matches!(style, Style::Pdf | Style::Br) => {
                out.push_str("<blockquote><p>");
                esc(t, out);
                out.push_str("</p></blockquote>");
            }
            _ => match style {
                Style::P => {
                    out.push_str("<p>");
                    esc(t, out);
                    out.push_str("</p>");
                }
                Style::Div => {
                    out.push_str("<div class=\"para\">");
                    esc(t, out);
                    out.push_str("</div>");
                }
                Style::Br => {
                    esc(t, out);
                    out.push_str("<br>\n<br>");
                }
                Style::Span => {
                    out.push_str("<p style=\"margin:0 0 1em;line-height:1.75\"><span style=\"font-size:15px;color:#3f3f3f\">");
                    esc(t, out);
                    out.push_str("</span></p>");
                }
                Style::Font => {
                    out.push_str(if zh {
                        "<p><font size=\"3\" face=\"宋体\">"
                    } else {
                        "<p><font size=\"3\" face=\"Verdana\">"
                    });
                    esc(t, out);
                    out.push_str("</font></p>");
                }
                Style::Table => {
                    out.push_str("<tr><td class=\"txt\">");
                    esc(t, out);
                    out.push_str("</td></tr>");
                }
                Style::Section => {
                    out.push_str("<section class=\"para\"><p>");
                    esc(t, out);
                    out.push_str("</p></section>");
                }
                Style::Pdf => {
                    for (n, line) in wrap(t, zh, r).iter().enumerate() {
                        if n > 0 {
                            out.push('\n');
                        }
                        top += 18 + r.random_range(0..4);
                        let x = r.random_range(1..=4);
                        out.push_str(&format!(
                            "<div class=\"t m0 x{x} h2 y{top:x} ff1 fs1 fc0 sc0 ls0 ws0\">"
                        ));
                        esc(line, out);
                        out.push_str("</div>");
                    }
                }
            },
        }
        out.push('\n');
        i += 1;
    }
    match style {
        Style::Pdf => out.push_str("</div></div></div>"),
        Style::Table => {
            out.insert_str(
                start,
                "<table class=\"content\" width=\"100%\" cellpadding=\"0\" cellspacing=\"0\">\n",
            );
            out.push_str("</table>");
        }
        _ => {
            while out.ends_with('\n') {
                out.pop();
            }
        }
    }
}

/// A page: a skeleton with a body, title and URL in its holes.
pub fn render(s: &crate::skeleton::Skeleton, body: &Body, url: &str, r: &mut ChaCha8Rng) -> String {
    let mut out = String::with_capacity(s.lit_bytes() + body.chars() * 3 + 256);
    for p in &s.pieces {
        match p {
            Piece::Lit(l) => out.push_str(l),
            Piece::Hole(Hole::Title) => esc(&body.title, &mut out),
            Piece::Hole(Hole::Crumb) => {
                let t: String = body.title.chars().take(40).collect();
                esc(&t, &mut out);
            }
            Piece::Hole(Hole::Desc) => {
                let t: String = body.title.chars().take(60).collect();
                attr(&t, &mut out);
            }
            Piece::Hole(Hole::Url) => attr(url, &mut out),
            Piece::Hole(Hole::Body) => render_body(body, s.style, s.lang == Lang::Zh, r, &mut out),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::Skeleton;

    fn skeletons() -> Skeletons {
        let mk = |host: &str, lang: Lang, style: Style| Skeleton {
            host: host.into(),
            lang,
            template: "news",
            style,
            pieces: vec![
                Piece::Lit("<html><head><title>".into()),
                Piece::Hole(Hole::Title),
                Piece::Lit("</title><link rel=\"canonical\" href=\"".into()),
                Piece::Hole(Hole::Url),
                Piece::Lit("\"></head><body><h1>".into()),
                Piece::Hole(Hole::Title),
                Piece::Lit("</h1><div class=\"article-body\">\n".into()),
                Piece::Hole(Hole::Body),
                Piece::Lit("\n</div><div class=\"footer\">About us</div></body></html>".into()),
            ],
        };
        Skeletons::new(
            vec![
                mk("a.cn", Lang::Zh, Style::P),
                mk("b.cn", Lang::Zh, Style::Pdf),
                mk("c.com", Lang::En, Style::Div),
                mk("d.com", Lang::En, Style::Br),
            ],
            4,
            0,
        )
    }

    fn text() -> TextSource {
        TextSource::from_paragraphs(
            &[
                "今天天气很好，我们去公园散步。公园里有很多人在散步，也有人在跑步。",
                "新的一年开始了，大家都在制定计划。有人想学习编程，有人想去旅行。",
                "这本书讲的是一个小镇的故事。小镇上的人们过着平静的生活。",
            ],
            &[
                "The cat sat on the mat. The dog sat on the rug. A bird flew over the mat and the dog.",
                "Every dog has its day. The mat was red and the rug was blue. The bird sang on the roof.",
                "A new year began and everyone made plans. Some wanted to learn to code, others to travel.",
            ],
        )
    }

    #[test]
    fn pages_are_a_function_of_seed_and_number() {
        let (t, s) = (text(), skeletons());
        let g = Generator::new(GenConfig::default(), &t, &s);
        let h = Generator::new(GenConfig::default(), &t, &s);
        for i in [0u64, 1, 7, 500, 4321] {
            let (a, b) = (g.page(i), h.page(i));
            assert_eq!(a.key, b.key);
            assert_eq!(g.key(i), a.key, "the key without the page");
            assert_eq!(a.html, b.html);
        }
        // Out of order, the same page.
        let late = g.page(900).html;
        let _ = g.page(3);
        assert_eq!(g.page(900).html, late);
        let other = Generator::new(
            GenConfig {
                seed: 2,
                ..GenConfig::default()
            },
            &t,
            &s,
        );
        assert_ne!(other.page(5).html, g.page(5).html);
    }

    #[test]
    fn the_share_of_variants_is_as_configured() {
        let (t, s) = (text(), skeletons());
        let g = Generator::new(GenConfig::default(), &t, &s);
        let n = 20_000u64;
        let variants = (0..n).filter(|&i| g.variant_of(i).is_some()).count() as f64;
        let share = variants / n as f64;
        assert!((share - 0.2).abs() < 0.015, "share of variants {share}");
        for i in 1..2000 {
            if let Some(j) = g.variant_of(i) {
                assert!(j < i && i - j <= 100_000);
            }
        }
        let none = Generator::new(
            GenConfig {
                dup_share: 0.0,
                ..GenConfig::default()
            },
            &t,
            &s,
        );
        assert!((0..5000).all(|i| none.variant_of(i).is_none()));
    }

    #[test]
    fn a_page_fills_every_hole() {
        let (t, s) = (text(), skeletons());
        let g = Generator::new(GenConfig::default(), &t, &s);
        for i in 0..200 {
            let p = g.page(i);
            assert!(p.html.contains(&format!("href=\"{}\"", p.key)) || p.variant_of.is_some());
            assert!(p.html.contains("<title>") && !p.html.contains("<title></title>"));
            let body = &p.html[p.html.find("article-body").unwrap()..];
            assert!(body.len() > 200, "{}", p.html);
        }
    }

    #[test]
    fn variants_share_most_of_their_text() {
        let (t, s) = (text(), skeletons());
        let g = Generator::new(GenConfig::default(), &t, &s);
        let i = (1..1000u64)
            .find(|&i| g.variant_of(i).is_some())
            .expect("a variant");
        let (a, b) = (g.body(i), g.body(g.origin(i)));
        let words = |b: &Body| -> std::collections::HashSet<String> {
            b.blocks.iter().map(|(_, t)| t.clone()).collect()
        };
        // At least one block survives unedited in most variants; the title is related.
        assert!(!words(&a).is_disjoint(&words(&b)) || a.blocks.len() <= b.blocks.len() + 4);
    }
}
