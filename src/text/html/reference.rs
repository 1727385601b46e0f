//! The reference parser: html5ever's tokenizer and tree builder into scraper's [`Html`], telling
//! the links a page's author wrote from the copies the parser made of them. Extraction uses it
//! for the pages the fast builder ([`super::builder`]) leaves to it, and the differential tests
//! hold the fast builder to it.
//!
//! The page is parsed by html5ever into scraper's [`Html`] (a real HTML5 tree builder, as browsers
//! do; SPEC §2.1). One behaviour of that algorithm matters to main-text extraction: an element of
//! the "formatting" kind (`<a>`, `<b>`, `<i>`, `<font>`…) left open when its block ends stays on the
//! tree builder's list of active formatting elements, and the builder re-creates a copy of it
//! wherever content follows ("reconstruct the active formatting elements"; the adoption agency
//! makes such copies too), block after block, until something closes it. For an `<a href>` whose
//! `</a>` was forgotten, as hand-written pages do, that is every later block up to the next `<a>`:
//! a browser underlines all of it, but its author wrote body text, and counting it as link text
//! drops it (sometimes the whole body).
//!
//! When the enclosing block is left open too, the blocks that follow are not copied into new links
//! but opened inside the link itself (HTML5 lets `<a>` hold blocks), with the same effect.
//!
//! The copies carry the attributes of the original, and a link the page closed looks like one it
//! left open, so the finished tree cannot tell them apart. [`parse`] therefore watches the tokens
//! going into the tree builder:
//! - an `<a>` element created while the builder handles an `<a>` start tag is one the page wrote
//!   (the last one created then: the adoption agency may first copy the previous, still open,
//!   link); an `<a>` element created while it handles anything else is a copy;
//! - a link the page wrote is *closed* when an `</a>` end tag comes while it (or a copy of it) is
//!   the open link; one that the next `<a>`, the end of a table cell or the end of the page closes
//!   instead was left open;
//! - `<a id="x"/>`, written self-closing as XHTML (DocBook, EPUB) does for an empty element, is
//!   left open by an HTML5 parser like any `<a>`, and holds the rest of its block.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use ego_tree::NodeId;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{
    ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeBuilderOpts, TreeSink,
};
use html5ever::{local_name, ns, Attribute, QualName, TokenizerResult};
use scraper::{Html, HtmlTreeSink, Node};

pub(crate) use super::tree::LinkOrigin;
use super::tree::{Data, Element, Ns, Tree};

/// A parsed page.
pub(crate) struct Parsed {
    /// The tree, exactly as `scraper::Html::parse_document` builds it.
    pub html: Html,
    /// Where each HTML `<a>` element of the tree comes from.
    pub links: HashMap<NodeId, LinkOrigin>,
}

/// The light tree of a page, as the reference parser builds it.
pub(crate) fn tree(html: &str) -> Tree<'static> {
    let parsed = parse(html);
    let mut tree = Tree::new();
    // (scraper node, our parent)
    let root = parsed.html.tree.root();
    let mut todo: Vec<(ego_tree::NodeRef<'_, Node>, u32)> =
        root.children().rev().map(|c| (c, 0)).collect();
    while let Some((node, parent)) = todo.pop() {
        let id = match node.value() {
            Node::Element(e) => {
                let ns = if e.name.ns == ns!(svg) {
                    Ns::Svg
                } else if e.name.ns == ns!(mathml) {
                    Ns::Math
                } else {
                    Ns::Html
                };
                let id = tree.create(Data::Element(Element {
                    name: e.name().to_ascii_lowercase().into(),
                    ns,
                    attrs: e
                        .attrs()
                        .map(|(n, v)| (n.to_string().into(), v.to_string().into()))
                        .collect(),
                    link: parsed.links.get(&node.id()).copied(),
                }));
                tree.append(parent, id);
                id
            }
            Node::Text(t) => {
                tree.append_text(parent, t.text.to_string().into());
                continue;
            }
            _ => continue,
        };
        todo.extend(node.children().rev().map(|c| (c, id)));
    }
    tree
}

/// Parses a whole document (see the module docs).
pub(crate) fn parse(html: &str) -> Parsed {
    let sink = LinkSink {
        inner: HtmlTreeSink::new(Html::new_document()),
        created_links: RefCell::new(Vec::new()),
    };
    let tap = TokenTap {
        builder: TreeBuilder::new(sink, TreeBuilderOpts::default()),
        links: RefCell::new(Links::default()),
    };
    let tokenizer = Tokenizer::new(tap, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // The tokenizer pauses after each `</script>` (and at an encoding declaration); nothing runs
    // scripts here, so it is only resumed, as html5ever's own driver does.
    while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    tokenizer.end();
    let TokenTap { builder, links } = tokenizer.sink;
    Parsed {
        html: builder.sink.inner.finish(),
        links: links.into_inner().origin,
    }
}

/// What the token tap learns about the `<a>` elements.
#[derive(Default)]
struct Links {
    origin: HashMap<NodeId, LinkOrigin>,
    /// The written link that is open now (the tree builder keeps at most one `<a>` open outside
    /// table cells: a new `<a>` closes the previous one).
    open: Option<NodeId>,
}

/// The token sink between the tokenizer and the tree builder: knows which token each `<a>`
/// element was created for.
struct TokenTap {
    builder: TreeBuilder<NodeId, LinkSink>,
    links: RefCell<Links>,
}

impl TokenSink for TokenTap {
    type Handle = NodeId;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<NodeId> {
        let link_tag = match &token {
            Token::TagToken(tag) if tag.name == local_name!("a") => {
                Some((tag.kind, tag.self_closing))
            }
            _ => None,
        };
        let result = self.builder.process_token(token, line_number);
        let mut created = self.builder.sink.created_links.borrow_mut();
        let mut links = self.links.borrow_mut();
        match link_tag {
            Some((TagKind::StartTag, self_closing)) => {
                // The element the start tag itself opened is created last.
                if let Some(id) = created.pop() {
                    if self_closing {
                        links.origin.insert(id, LinkOrigin::SelfClosing);
                        links.open = None;
                    } else {
                        links.origin.insert(id, LinkOrigin::LeftOpen);
                        links.open = Some(id);
                    }
                }
            }
            Some((TagKind::EndTag, _)) => {
                if let Some(id) = links.open.take() {
                    links.origin.insert(id, LinkOrigin::Closed);
                }
            }
            None => {}
        }
        for id in created.drain(..) {
            links.origin.insert(id, LinkOrigin::Copy);
        }
        result
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// scraper's tree sink, noting every HTML `<a>` element created.
struct LinkSink {
    inner: HtmlTreeSink,
    created_links: RefCell<Vec<NodeId>>,
}

impl TreeSink for LinkSink {
    type Handle = NodeId;
    type Output = Html;
    type ElemName<'a> = <HtmlTreeSink as TreeSink>::ElemName<'a>;

    fn finish(self) -> Html {
        self.inner.finish()
    }

    fn parse_error(&self, msg: Cow<'static, str>) {
        self.inner.parse_error(msg);
    }

    fn get_document(&self) -> NodeId {
        self.inner.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> Self::ElemName<'a> {
        self.inner.elem_name(target)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> NodeId {
        let link = name.ns == ns!(html) && name.local == local_name!("a");
        let id = self.inner.create_element(name, attrs, flags);
        if link {
            self.created_links.borrow_mut().push(id);
        }
        id
    }

    fn create_comment(&self, text: StrTendril) -> NodeId {
        self.inner.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> NodeId {
        self.inner.create_pi(target, data)
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        self.inner.append(parent, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &NodeId,
        prev_element: &NodeId,
        child: NodeOrText<NodeId>,
    ) {
        self.inner
            .append_based_on_parent_node(element, prev_element, child);
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.inner
            .append_doctype_to_document(name, public_id, system_id);
    }

    fn mark_script_already_started(&self, node: &NodeId) {
        self.inner.mark_script_already_started(node);
    }

    fn pop(&self, node: &NodeId) {
        self.inner.pop(node);
    }

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        self.inner.get_template_contents(target)
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        self.inner.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        self.inner.append_before_sibling(sibling, new_node);
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        self.inner.add_attrs_if_missing(target, attrs);
    }

    fn associate_with_form(
        &self,
        target: &NodeId,
        form: &NodeId,
        nodes: (&NodeId, Option<&NodeId>),
    ) {
        self.inner.associate_with_form(target, form, nodes);
    }

    fn remove_from_parent(&self, target: &NodeId) {
        self.inner.remove_from_parent(target);
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        self.inner.reparent_children(node, new_parent);
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &NodeId) -> bool {
        self.inner
            .is_mathml_annotation_xml_integration_point(handle)
    }

    fn set_current_line(&self, line_number: u64) {
        self.inner.set_current_line(line_number);
    }

    fn allow_declarative_shadow_roots(&self, intended_parent: &NodeId) -> bool {
        self.inner.allow_declarative_shadow_roots(intended_parent)
    }

    fn attach_declarative_shadow(
        &self,
        location: &NodeId,
        template: &NodeId,
        attrs: &[Attribute],
    ) -> bool {
        self.inner
            .attach_declarative_shadow(location, template, attrs)
    }

    fn maybe_clone_an_option_into_selectedcontent(&self, option: &NodeId) {
        self.inner
            .maybe_clone_an_option_into_selectedcontent(option);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each `<a>` of the tree: its text and origin.
    fn links(p: &Parsed) -> Vec<(String, LinkOrigin)> {
        p.html
            .tree
            .nodes()
            .filter_map(|n| {
                let e = n.value().as_element()?;
                (e.name() == "a").then(|| {
                    let text: String = n
                        .descendants()
                        .filter_map(|d| d.value().as_text().map(|t| t.to_string()))
                        .collect();
                    (text, p.links[&n.id()])
                })
            })
            .collect()
    }

    #[test]
    fn the_tree_is_scrapers() {
        let page = "<!DOCTYPE html><title>t</title><p>a <a href=x>b</a><table><tr><td>c<a>d<p>e\
                    <script>if (a < b) {}</script></table><b><div>f</b>g";
        assert_eq!(parse(page).html.html(), Html::parse_document(page).html());
    }

    #[test]
    fn links_written_and_closed() {
        let p = parse(
            "<ul><li><a href=/1>one</a></li><li><a href=/2>two</a> <a href=/2>2</a></ul>\
             <a href=/card><div><h3>Card</h3><p>teaser</p></div></a>",
        );
        let t = |s: &str| (s.to_string(), LinkOrigin::Closed);
        assert_eq!(links(&p), vec![t("one"), t("two"), t("2"), t("Cardteaser")]);
    }

    #[test]
    fn a_link_left_open_is_copied_into_the_following_blocks() {
        let p =
            parse("<div><a href=/f>Forum</div><p>Body one.</p><p>Body two.</p><a href=/n>next</a>");
        assert_eq!(
            links(&p),
            vec![
                ("Forum".into(), LinkOrigin::LeftOpen),
                ("Body one.".into(), LinkOrigin::Copy),
                ("Body two.".into(), LinkOrigin::Copy),
                ("next".into(), LinkOrigin::Closed)
            ]
        );
    }

    #[test]
    fn links_left_open_and_self_closing() {
        let p =
            parse("<ul><li><a href=/1>one</li><li><a href=/2>two</li></ul><p><a id=\"x\"/>text");
        assert_eq!(
            links(&p),
            vec![
                ("one".into(), LinkOrigin::LeftOpen),
                ("two".into(), LinkOrigin::LeftOpen),
                ("text".into(), LinkOrigin::SelfClosing)
            ]
        );
    }
}
