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

/// Why bytes are not a main text encoded by [`MainText::encode`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("undecodable main text: {0}")]
pub struct MainTextDecodeError(String);

/// The first byte of an encoded main text: its kind and the version of its layout.
const TAG_MAIN_TEXT: u8 = 0x4D;

impl MainText {
    /// The main text as bytes, losslessly: what a distributed merge keeps of each page's
    /// extraction (its first stage, SCALEOUT §5 S1) so that the work units do not extract the
    /// page again ([`crate::Index::insert_batch_extracted`]).
    ///
    /// Layout (version 1, integers big-endian): the tag byte `0x4D`; the title and the heading,
    /// each as a `u32` length and its UTF-8 bytes; the `u32` number of paragraphs, then each
    /// paragraph as its kind byte (`0` text, `1` preformatted, `2` a heading followed by its level
    /// byte), a `u32` length and its UTF-8 bytes; then the CRC-32 of everything before it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            17 + self.title.len()
                + self.heading.len()
                + self
                    .paragraphs
                    .iter()
                    .map(|p| 6 + p.text.len())
                    .sum::<usize>(),
        );
        out.push(TAG_MAIN_TEXT);
        let put = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&len_u32(s.len()).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        put(&mut out, &self.title);
        put(&mut out, &self.heading);
        out.extend_from_slice(&len_u32(self.paragraphs.len()).to_be_bytes());
        for p in &self.paragraphs {
            match p.kind {
                BlockKind::Text => out.push(0),
                BlockKind::Pre => out.push(1),
                BlockKind::Heading(level) => out.extend_from_slice(&[2, level]),
            }
            put(&mut out, &p.text);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    /// The main text [`MainText::encode`] encoded.
    ///
    /// # Errors
    /// [`MainTextDecodeError`] for bytes that are not one: another tag or version, a length
    /// past the end, bytes left after the last paragraph, text that is not UTF-8, an unknown
    /// paragraph kind, or a checksum that does not match.
    pub fn decode(bytes: &[u8]) -> Result<MainText, MainTextDecodeError> {
        let err = |why: String| MainTextDecodeError(why);
        let Some((body, crc)) = bytes.split_last_chunk::<4>() else {
            return Err(err(format!("{} bytes, too short", bytes.len())));
        };
        match body.first() {
            Some(&TAG_MAIN_TEXT) => {}
            Some(&tag) => {
                return Err(err(format!(
                    "tag {tag:#04x}, expected {TAG_MAIN_TEXT:#04x}"
                )))
            }
            None => return Err(err("no tag".into())),
        }
        if crc32fast::hash(body) != u32::from_be_bytes(*crc) {
            return Err(err("checksum mismatch".into()));
        }
        let mut r = Cursor { buf: body, pos: 1 };
        let title = r.text().map_err(err)?;
        let heading = r.text().map_err(err)?;
        let n = r.u32().map_err(err)? as usize;
        // Every paragraph takes at least 5 bytes: a count beyond that is a bad length, not an
        // allocation to make.
        let mut paragraphs = Vec::with_capacity(n.min(body.len() / 5));
        for _ in 0..n {
            let kind = match r.take(1).map_err(err)?[0] {
                0 => BlockKind::Text,
                1 => BlockKind::Pre,
                2 => BlockKind::Heading(r.take(1).map_err(err)?[0]),
                k => return Err(err(format!("unknown paragraph kind {k}"))),
            };
            let text = r.text().map_err(err)?;
            paragraphs.push(Paragraph { text, kind });
        }
        if r.pos != body.len() {
            return Err(err(format!(
                "{} bytes left after the last paragraph",
                body.len() - r.pos
            )));
        }
        Ok(MainText {
            title,
            heading,
            paragraphs,
        })
    }
}

/// A length as the `u32` of the encoding. A page's text is far below 4 GiB
/// ([`crate::SignatureConfig::max_page_bytes`] bounds it); saturating keeps `encode` total, and
/// `decode` then refuses the result instead of misreading it.
fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Reads [`MainText::decode`]'s fields, reporting truncation.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(format!(
                "truncated at byte {} (wanted {n} more of {})",
                self.pos,
                self.buf.len()
            ));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn text(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let at = self.pos;
        let b = self.take(n)?;
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|e| format!("text at byte {at} is not UTF-8: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> MainText {
        let p = |text: &str, kind| Paragraph {
            text: text.into(),
            kind,
        };
        MainText {
            title: "Titre — Ünïcode 标题".into(),
            heading: String::new(),
            paragraphs: vec![
                p("First paragraph.", BlockKind::Text),
                p("Section", BlockKind::Heading(3)),
                p("  let x = 1;\n", BlockKind::Pre),
                p("", BlockKind::Text),
            ],
        }
    }

    #[test]
    fn encode_then_decode_gives_the_main_text_back() {
        for m in [sample(), MainText::default()] {
            assert_eq!(MainText::decode(&m.encode()).unwrap(), m);
        }
    }

    #[test]
    fn bad_bytes_are_an_error_never_a_panic() {
        let good = sample().encode();
        // Every truncation, every extension and every single flipped byte is refused.
        for n in 0..good.len() {
            assert!(MainText::decode(&good[..n]).is_err(), "cut at {n}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(MainText::decode(&longer).is_err());
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            assert!(MainText::decode(&bad).is_err(), "byte {i} flipped");
        }
        let e = MainText::decode(b"\x01abcd").unwrap_err();
        assert!(e.to_string().contains("tag 0x01"), "{e}");
    }

    fn kind() -> impl Strategy<Value = BlockKind> {
        prop_oneof![
            Just(BlockKind::Text),
            Just(BlockKind::Pre),
            any::<u8>().prop_map(BlockKind::Heading),
        ]
    }

    proptest! {
        #[test]
        fn any_main_text_round_trips(
            title in ".*",
            heading in ".*",
            paras in prop::collection::vec((".*", kind()), 0..8),
        ) {
            let m = MainText {
                title,
                heading,
                paragraphs: paras.into_iter().map(|(text, kind)| Paragraph { text, kind }).collect(),
            };
            prop_assert_eq!(MainText::decode(&m.encode()).unwrap(), m);
        }

        #[test]
        fn any_bytes_decode_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = MainText::decode(&bytes);
        }
    }
}
