//! HTML → the light tree main-text extraction walks (SPEC §2.1).
//!
//! A page is read by our own tokenizer ([`tokenizer`]) and tree builder ([`builder`]), which
//! follow the HTML Living Standard as html5ever does and build only what extraction reads. The
//! few pages that need a part of the standard the builder leaves out (foster parenting in tables,
//! `<template>`, `<frameset>`, U+0000) are read by the reference parser, html5ever into scraper
//! ([`reference`]). Both give the same [`tree::Tree`]; the differential tests hold the builder to
//! the reference on the bench corpora, clean and broken.

mod builder;
pub(crate) mod reference;
pub(crate) mod tokenizer;
pub(crate) mod tree;

#[cfg(test)]
mod differential;
#[cfg(test)]
mod html5lib_tests;

pub(crate) use tree::{Edge, LinkOrigin, Tree, NONE};

/// Nesting depth above which no tree is built (see `super::flat`).
pub(crate) use super::flat::MAX_DEPTH;

/// The tree of a page: by the fast builder, or by the reference parser when the page needs it.
pub(crate) fn parse(html: &str) -> Tree<'_> {
    fast(html).unwrap_or_else(|| reference::tree(html))
}

/// Characters the fast tokenizer leaves to the reference: U+0000 (replaced or dropped by state)
/// and U+FEFF (html5ever drops one wherever its tokenizer resumes: at the start, after a script
/// or a `<meta charset>`).
fn needs_reference(html: &str) -> bool {
    memchr::memchr(0, html.as_bytes()).is_some()
        || memchr::memmem::find(html.as_bytes(), "\u{feff}".as_bytes()).is_some()
}

/// The tree by the fast builder, `None` when the page is left to the reference parser.
pub(crate) fn fast(html: &str) -> Option<Tree<'_>> {
    if needs_reference(html) {
        return None;
    }
    builder::build(html).ok()
}

/// Why the fast builder leaves a page to the reference parser (`None`: it does not).
#[cfg(test)]
pub(crate) fn left_because(html: &str) -> Option<&'static str> {
    if needs_reference(html) {
        return Some("U+0000 or U+FEFF");
    }
    builder::build(html).err().map(|e| e.0)
}
