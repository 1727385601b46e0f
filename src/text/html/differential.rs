//! Differential tests: the fast builder against the reference parser (html5ever into scraper).
//!
//! Both trees are written out as the events extraction walks (elements with their names,
//! namespaces and HTML attributes, merged texts, link origins) and must be equal, on the bench
//! corpora's pages (synthetic and natural, when present), on broken copies of them (cut short,
//! tags and quotes dropped or doubled, stray `<` and `&`), and on the tricky cases below.
//! Pages the fast builder leaves to the reference parser are counted, not compared.

use std::fmt::Write;
use std::io::{BufRead, BufReader};

use super::tree::{Data, Edge, Ns, Tree};
use super::{fast, reference};

/// The walk of a tree, one event a line.
fn events(tree: &Tree) -> String {
    let mut out = String::new();
    for edge in tree.edges() {
        match edge {
            Edge::Open(id) => match &tree.nodes[id as usize].data {
                Data::Document => out.push_str("#document\n"),
                Data::Element(e) => {
                    let _ = write!(out, "<{:?}:{}", e.ns, e.name);
                    // Foreign attributes are renamed by the reference (`xlink:href`): extraction
                    // never reads them.
                    if e.ns == Ns::Html {
                        let mut attrs: Vec<_> = e.attrs.iter().collect();
                        attrs.sort();
                        for (n, v) in attrs {
                            let _ = write!(out, " {n}={v:?}");
                        }
                    }
                    if let Some(l) = e.link {
                        let _ = write!(out, " link={l:?}");
                    }
                    out.push_str(">\n");
                }
                Data::Text(t) => {
                    let _ = writeln!(out, "{t:?}");
                }
            },
            Edge::Close(id) => {
                if let Data::Element(e) = &tree.nodes[id as usize].data {
                    let _ = writeln!(out, "</{}>", e.name);
                }
            }
        }
    }
    out
}

/// Compares the two parsers on a page: `Some(true)` equal, `None` left to the reference,
/// panics with the first difference otherwise.
fn check(html: &str, what: &str) -> Option<bool> {
    let ours = fast(html)?;
    let theirs = reference::tree(html);
    let (a, b) = (events(&ours), events(&theirs));
    if a != b {
        let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
        let i = la
            .iter()
            .zip(&lb)
            .position(|(x, y)| x != y)
            .unwrap_or(la.len().min(lb.len()));
        let from = i.saturating_sub(8);
        panic!(
            "{what}: trees differ at event {i}\n--- fast:\n{}\n--- reference:\n{}\n--- page:\n{}",
            la[from..(i + 8).min(la.len())].join("\n"),
            lb[from..(i + 8).min(lb.len())].join("\n"),
            &html[..html.len().min(3000)]
        );
    }
    Some(true)
}

#[test]
fn tricky_cases() {
    let cases = [
        "",
        "text only",
        "<!DOCTYPE html><title>a &amp; b</title><p>x",
        "<p>one<p>two<div>three</p>four",
        "<ul><li>a<li>b<ul><li>c</ul><li>d</ul>",
        "<dl><dt>a<dd>b<dt>c</dl>",
        "<h1>a<h2>b</h1>c",
        "<b>bold<p>para</b>after</p>",
        "<a href=/x>link<div>block</div>after</a>",
        "<div><a href=/f>Forum</div><p>Body one.</p><p>Body two.</p><a href=/n>next</a>",
        "<p><a id=\"x\"/>text</p>",
        "<a href=1>one<a href=2>two</a>",
        "<b><i><u><s>deep</b>out</s></u></i>",
        "<p><b class=x>1<b class=x>2<b class=x>3<b class=x>4</p>5",
        "<table><tr><td>a<td>b<tr><th>c</table>after",
        "<table><caption>cap</caption><colgroup><col></colgroup><tbody><tr><td>x</td></tr></tbody></table>",
        "<table><td>a</td></table>",
        "<p><table><tr><td>in p?</table>",
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.0 Transitional//EN\"><p><table><tr><td>q</table>",
        "<table><tr><td><table><tr><td>nested</table></td></tr></table>",
        "<select><option>a<option>b<optgroup><option>c</select>after",
        "<form><input><div></form>text",
        "<svg><title>icon</title><path d='M0'/><g><text>t</text></g></svg>after",
        "<svg><foreignObject><p>html in svg</p></foreignObject></svg>x",
        "<svg><p>breakout</svg>x",
        "<math><mi>x</mi><mtext><b>y</b></mtext></math>z",
        "<svg><![CDATA[cdata <b>]]></svg>",
        "<div><svg><circle/></div>after",
        "<script><!-- <script>x</script> --></script><p>after",
        "<style>p{}</style><noscript><p>ns</p></noscript><textarea>&lt;t&gt;</textarea>",
        "<pre>\nkeep</pre><listing>\nl</listing>",
        "<plaintext><p>all text",
        "<html class=a><body id=b><p>x<body class=c><html lang=en>",
        "<head><title>t</title></head><script>s</script><body>b",
        "<p>a</body>b</html>c",
        "<ruby>a<rb>b<rt>c<rp>d</ruby>",
        "<button>a<button>b</button>",
        "<nobr>a<nobr>b</nobr>",
        "<object><b>x</object>y",
        "<p>x</br>y</p></p>",
        "<image src=x>",
        "<a href=x><table><tr><td>cell</a></table>",
        "<font color=red><div>a</div></font>b",
        "<div hidden><p>no</p></div><p style='display:none'>no</p>",
        "&amp &notin &copy; &#x1F600; &#0;",
        "< a <3 </ > </>",
        "<div class='a' class=b id=\"c\">dup</div>",
        "<b><table><tr><td>x</td></tr></table></b>",
        "<table> <tr> <td>a</td> </tr> </table>",
        "<p>1<p>2</p><address>3<p>4</address>",
        "<h3><a href=/x>T</a></h3><hr><img src=y><br>",
        "<marquee><p>m</marquee>",
        "<frameset><frame></frameset>",
        "<template><p>t</p></template>x",
        "<!DOCTYPE html PUBLIC \"+//Silmaril//dtd html Pro v0r11 19970101//EN\"><p>a<table><tr><td>b</table>",
        "<meta charset=utf-8>\u{feff}<title>t</title>",
        "<p><script></script>\u{feff}x",
        "<pre></>\nx</pre>",
        "<pre>&#10y</pre><textarea>&#xAy</textarea><pre>&#10;z</pre>",
    ];
    for (i, c) in cases.iter().enumerate() {
        check(c, &format!("case {i}"));
    }
}

/// The pages of a corpus file (JSON lines with `html`), at most `max`.
fn corpus(path: &str, max: usize) -> Vec<String> {
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    BufReader::new(flate2::read::MultiGzDecoder::new(f))
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l).ok()?;
            Some(v["html"].as_str()?.to_string())
        })
        .take(max)
        .collect()
}

/// Broken copies of a page, from a seed.
fn broken(page: &str, seed: u64) -> Vec<String> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n.max(1) as u64) as usize
    };
    let at = |s: &str, i: usize| {
        let mut i = i.min(s.len());
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mut out = Vec::new();
    // Cut short.
    let cut = at(page, rnd(page.len()));
    out.push(page[..cut].to_string());
    // Drop characters that close or open markup, in several places.
    for ch in ['>', '<', '"', '/'] {
        let mut s = page.to_string();
        for _ in 0..3 {
            let positions: Vec<usize> = s.match_indices(ch).map(|(i, _)| i).collect();
            if positions.is_empty() {
                break;
            }
            let p = positions[rnd(positions.len())];
            s.remove(p);
        }
        out.push(s);
    }
    // Drop end tags.
    let mut s = page.to_string();
    for _ in 0..6 {
        let ends: Vec<usize> = s.match_indices("</").map(|(i, _)| i).collect();
        if ends.is_empty() {
            break;
        }
        let p = ends[rnd(ends.len())];
        let e = s[p..].find('>').map_or(s.len(), |o| p + o + 1);
        s.replace_range(p..e, "");
    }
    out.push(s);
    // Stray markup.
    let mut s = page.to_string();
    for ins in [
        "<",
        "&",
        "<a href=x>",
        "</div>",
        "<b>",
        "<!--",
        "<p>",
        "</td>",
        "<svg>",
    ] {
        let p = at(&s, rnd(s.len()));
        s.insert_str(p, ins);
    }
    out.push(s);
    out
}

fn run_corpus(name: &str, pages: &[String]) {
    let (mut same, mut left) = (0usize, 0usize);
    for (i, page) in pages.iter().enumerate() {
        match check(page, &format!("{name} page {i}")) {
            Some(_) => same += 1,
            None => left += 1,
        }
        for (j, b) in broken(page, i as u64).iter().enumerate() {
            match check(b, &format!("{name} page {i} broken {j}")) {
                Some(_) => same += 1,
                None => left += 1,
            }
        }
    }
    eprintln!("{name}: {same} pages identical, {left} left to the reference parser");
    let mut why: std::collections::BTreeMap<&str, usize> = Default::default();
    for page in pages {
        if let Some(w) = super::left_because(page) {
            *why.entry(w).or_default() += 1;
        }
    }
    eprintln!("{name}: originals left to the reference parser, by reason: {why:?}");
}

#[test]
fn bench_corpora_agree() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/bench");
    let dev = corpus(&format!("{root}/dev/docs.jsonl.gz"), 400);
    run_corpus("dev", &dev);
    let natural = corpus(&format!("{root}/natural-dev/docs.jsonl.gz"), usize::MAX);
    run_corpus("natural-dev", &natural);
    // Real-web sizes: a corpus made by `bench/inflate.py`, when named.
    if let Ok(large) = std::env::var("NEARDUP_BENCH_LARGE") {
        run_corpus("large", &corpus(&large, 300));
    }
}

/// Random tag soup: the pieces real pages are made of, in any order and nesting.
fn soup() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    const PIECES: &[&str] = &[
        "<p>",
        "</p>",
        "<div class=content>",
        "</div>",
        "<li>",
        "</li>",
        "<ul>",
        "</ul>",
        "<dd>",
        "<dt>",
        "<h2>",
        "</h2>",
        "<h1>",
        "</h3>",
        "<a href=/x>",
        "<a>",
        "</a>",
        "<a id=k/>",
        "<b>",
        "</b>",
        "<i>",
        "</i>",
        "<font color=red>",
        "</font>",
        "<nobr>",
        "</nobr>",
        "<table>",
        "</table>",
        "<tr>",
        "</tr>",
        "<td>",
        "</td>",
        "<th>",
        "<tbody>",
        "</tbody>",
        "<caption>",
        "</caption>",
        "<col>",
        "<colgroup>",
        "<form>",
        "</form>",
        "<input type=hidden>",
        "<input>",
        "<select>",
        "</select>",
        "<option>",
        "<optgroup>",
        "<button>",
        "</button>",
        "<pre>\n",
        "</pre>",
        "<br>",
        "</br>",
        "<hr>",
        "<img src=y>",
        "<svg>",
        "</svg>",
        "<path/>",
        "<title>",
        "</title>",
        "<foreignObject>",
        "<math>",
        "<mi>",
        "</math>",
        "<script>x<y</script>",
        "<style>a{}</style>",
        "<textarea>t</textarea>",
        "<template>",
        "</template>",
        "<!-- c -->",
        "<!DOCTYPE html>",
        "<html lang=en>",
        "<body class=b>",
        "</body>",
        "</html>",
        "<head>",
        "</head>",
        "<object>",
        "</object>",
        "<ruby>",
        "<rt>",
        "<span hidden>",
        "</span>",
        "text ",
        "more words, ",
        "&amp; ",
        "&copy ",
        " ",
        "\n",
        "<",
        "&",
        "x=\"",
        "<noscript>n</noscript>",
        "<plaintext>",
    ];
    proptest::collection::vec(0..PIECES.len(), 0..40)
        .prop_map(|ix| ix.into_iter().map(|i| PIECES[i]).collect::<String>())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
    #[test]
    fn tag_soup_agrees(page in soup()) {
        check(&page, "tag soup");
    }
}
