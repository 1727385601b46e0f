//! The main text of a page, as extraction gives it: title, heading and body paragraphs.

/// What kind of block a paragraph of the main text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// Ordinary text.
    Text,
    /// A sub-title (`<h2>`–`<h6>`), with its level.
    Heading(u8),
    /// Preformatted text (`<pre>`).
    Pre,
}

/// One paragraph of the main text (raw: whitespace collapsed but not yet normalized).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paragraph {
    /// The paragraph's text.
    pub text: String,
    /// What kind of block it came from.
    pub kind: BlockKind,
}

/// The main text of a page: title, heading and body paragraphs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MainText {
    /// The `<title>` of the page.
    pub title: String,
    /// The first `<h1>` of the page (often the article title without the site's name).
    pub heading: String,
    /// The body, paragraph by paragraph, in document order.
    pub paragraphs: Vec<Paragraph>,
}

impl MainText {
    /// The body as plain text, one paragraph a line.
    pub fn body(&self) -> String {
        let mut s = String::new();
        for p in &self.paragraphs {
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(&p.text);
        }
        s
    }
}
