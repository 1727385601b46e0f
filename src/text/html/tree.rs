//! The light tree both parsers build: an arena of elements and texts, with exactly what
//! main-text extraction reads (names, attributes, texts, where each link comes from).

use std::borrow::Cow;

use super::tokenizer::Attr;

/// Where an `<a>` element comes from (see [`super::reference`]'s docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkOrigin {
    /// Written by the page and closed by its `</a>`.
    Closed,
    /// Written by the page, never closed by an `</a>`.
    LeftOpen,
    /// Written self-closing (`<a id="x"/>`): empty in XHTML, left open by an HTML5 parser.
    SelfClosing,
    /// Re-created by the tree builder: a copy of a link left open.
    Copy,
}

/// No node.
pub(crate) const NONE: u32 = u32::MAX;

/// An element's namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ns {
    /// HTML.
    Html,
    /// SVG (names kept ASCII lower-cased).
    Svg,
    /// MathML.
    Math,
}

/// An element.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Element<'a> {
    /// The local name, ASCII lower-cased.
    pub name: Cow<'a, str>,
    /// The namespace.
    pub ns: Ns,
    /// The attributes.
    pub attrs: Vec<Attr<'a>>,
    /// For an HTML `<a>`: where it comes from (see [`super::LinkOrigin`]).
    pub link: Option<LinkOrigin>,
}

impl Element<'_> {
    /// The value of an attribute.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_ref())
    }

    /// Is this the HTML element `name`?
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        self.ns == Ns::Html && self.name == name
    }
}

/// What a node is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Data<'a> {
    /// The document (node 0).
    Document,
    /// An element.
    Element(Element<'a>),
    /// Text (adjacent texts of one parent are merged).
    Text(Cow<'a, str>),
}

/// A node with its links.
#[derive(Clone, Debug)]
pub(crate) struct Node<'a> {
    pub parent: u32,
    pub first_child: u32,
    pub last_child: u32,
    pub prev: u32,
    pub next: u32,
    pub data: Data<'a>,
}

/// A walk event (pre-order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    /// Entering a node.
    Open(u32),
    /// Leaving a node.
    Close(u32),
}

/// The tree.
#[derive(Clone, Debug)]
pub(crate) struct Tree<'a> {
    pub nodes: Vec<Node<'a>>,
}

impl<'a> Tree<'a> {
    /// A tree holding only the document node.
    pub fn new() -> Self {
        Tree {
            nodes: vec![Node {
                parent: NONE,
                first_child: NONE,
                last_child: NONE,
                prev: NONE,
                next: NONE,
                data: Data::Document,
            }],
        }
    }

    /// Adds a node, not yet in the tree.
    pub fn create(&mut self, data: Data<'a>) -> u32 {
        self.nodes.push(Node {
            parent: NONE,
            first_child: NONE,
            last_child: NONE,
            prev: NONE,
            next: NONE,
            data,
        });
        (self.nodes.len() - 1) as u32
    }

    /// The element of a node (`None` for texts and the document).
    #[inline]
    pub fn element(&self, id: u32) -> Option<&Element<'a>> {
        match &self.nodes[id as usize].data {
            Data::Element(e) => Some(e),
            _ => None,
        }
    }

    /// Mutable access to an element.
    pub fn element_mut(&mut self, id: u32) -> Option<&mut Element<'a>> {
        match &mut self.nodes[id as usize].data {
            Data::Element(e) => Some(e),
            _ => None,
        }
    }

    /// Makes `child` (detached) the last child of `parent`.
    pub fn append(&mut self, parent: u32, child: u32) {
        let last = self.nodes[parent as usize].last_child;
        {
            let c = &mut self.nodes[child as usize];
            c.parent = parent;
            c.prev = last;
            c.next = NONE;
        }
        if last == NONE {
            self.nodes[parent as usize].first_child = child;
        } else {
            self.nodes[last as usize].next = child;
        }
        self.nodes[parent as usize].last_child = child;
    }

    /// Appends text to `parent`, merged into its last child when that is text.
    pub fn append_text(&mut self, parent: u32, text: Cow<'a, str>) {
        let last = self.nodes[parent as usize].last_child;
        if last != NONE {
            if let Data::Text(t) = &mut self.nodes[last as usize].data {
                t.to_mut().push_str(&text);
                return;
            }
        }
        let id = self.create(Data::Text(text));
        self.append(parent, id);
    }

    /// Detaches a node from its parent.
    pub fn detach(&mut self, id: u32) {
        let (parent, prev, next) = {
            let n = &self.nodes[id as usize];
            (n.parent, n.prev, n.next)
        };
        if parent == NONE {
            return;
        }
        if prev == NONE {
            self.nodes[parent as usize].first_child = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NONE {
            self.nodes[parent as usize].last_child = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        let n = &mut self.nodes[id as usize];
        n.parent = NONE;
        n.prev = NONE;
        n.next = NONE;
    }

    /// Moves every child of `from` to the end of `to`.
    pub fn reparent_children(&mut self, from: u32, to: u32) {
        let mut c = self.nodes[from as usize].first_child;
        while c != NONE {
            let next = self.nodes[c as usize].next;
            self.detach(c);
            self.append(to, c);
            c = next;
        }
    }

    /// The edges of a pre-order walk from the document.
    pub fn edges(&self) -> Edges<'_, 'a> {
        Edges {
            tree: self,
            next: Some(Edge::Open(0)),
        }
    }
}

/// The edges of a pre-order walk (see [`Tree::edges`]).
pub(crate) struct Edges<'t, 'a> {
    tree: &'t Tree<'a>,
    next: Option<Edge>,
}

impl Iterator for Edges<'_, '_> {
    type Item = Edge;

    fn next(&mut self) -> Option<Edge> {
        let edge = self.next.take()?;
        let nodes = &self.tree.nodes;
        self.next = match edge {
            Edge::Open(id) => {
                let first = nodes[id as usize].first_child;
                Some(if first != NONE {
                    Edge::Open(first)
                } else {
                    Edge::Close(id)
                })
            }
            Edge::Close(id) => {
                let n = &nodes[id as usize];
                if id == 0 {
                    None
                } else if n.next != NONE {
                    Some(Edge::Open(n.next))
                } else {
                    Some(Edge::Close(n.parent))
                }
            }
        };
        Some(edge)
    }
}
