//! The architecture of `src/`, checked (ARCHITECTURE.md "Rules"): the crate's modules are floors,
//! and a file imports only from its own floor or the floors below; no two files import each other,
//! directly or around a circle; and no file grows past the length one reader can hold, unless it
//! is one algorithm.
//!
//! Imports are read from the source with `syn`: every `use` and every path written out in code
//! (`crate::a::b`, `super::c`, `self::d`, or a name a `use` brought in), resolved through the
//! modules' own re-exports to the file that *defines* the item. A `pub use` of a module's own
//! descendants is naming, not a dependency, and is left out; so are test modules. Methods are not
//! paths: an `impl Index` block in another file is the index's own business.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The floors, lowest first: a module may import from its own floor and those below.
const FLOORS: &[&[&str]] = &[
    &["error", "quiet"],
    &["text"],
    &["fingerprint", "verify", "storage"],
    &["methods"],
    &["options"],
    &["signature"],
    &["index"],
    &["merge"],
    &["ffi"],
];

/// Imports allowed to run up a floor, each with its reason. Keep it a handful.
const UPWARD_ALLOWED: &[(&str, &str, &str)] = &[];

/// Files allowed past [`MAX_LINES`]: one algorithm each.
const LONG_FILES: &[(&str, &str)] = &[
    (
        "src/text/html/builder.rs",
        "the HTML5 tree builder: one state machine",
    ),
    (
        "src/text/extract.rs",
        "main-text extraction by text density: one scoring pass",
    ),
    (
        "src/text/html/tokenizer.rs",
        "the HTML5 tokenizer: one state machine",
    ),
];

/// The most lines of a file (tests included).
const MAX_LINES: usize = 800;

#[derive(Default)]
struct Module {
    file: PathBuf,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    /// Names a `use` binds here, with the absolute path it stands for and whether it is a
    /// `pub`/`pub(crate)` re-export.
    uses: Vec<(String, Vec<String>, bool)>,
    /// Glob imports (absolute paths).
    globs: Vec<Vec<String>>,
    /// Paths written out in code, as written (resolved once every module is known).
    paths: Vec<Vec<String>>,
    parent: Option<usize>,
    name: String,
}

struct Crate {
    modules: Vec<Module>,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Collects the paths written out in code.
struct Paths<'a>(&'a mut Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            self.0
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
}

impl Crate {
    fn load(src: &Path) -> Crate {
        let mut c = Crate {
            modules: Vec::new(),
        };
        c.load_file(src.join("lib.rs"), String::new(), None, src);
        c
    }

    fn load_file(&mut self, file: PathBuf, name: String, parent: Option<usize>, dir: &Path) {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        // Where this module's children live: `a/mod.rs` and `lib.rs` → `a/`; `a/b.rs` → `a/b/`.
        let fdir = file.parent().unwrap_or(dir);
        let child_dir = if file
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
        {
            fdir.to_path_buf()
        } else {
            fdir.join(file.file_stem().expect("a file name"))
        };
        self.load_items(&ast.items, file, name, parent, &child_dir);
    }

    fn load_items(
        &mut self,
        items: &[syn::Item],
        file: PathBuf,
        name: String,
        parent: Option<usize>,
        child_dir: &Path,
    ) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            file: file.clone(),
            parent,
            name: name.clone(),
            ..Module::default()
        });
        if let Some(p) = parent {
            self.modules[p].children.insert(name, id);
        }
        for item in items {
            if is_test(item_attrs(item)) {
                continue;
            }
            let defined = match item {
                syn::Item::Const(i) => Some(i.ident.to_string()),
                syn::Item::Enum(i) => Some(i.ident.to_string()),
                syn::Item::Fn(i) => Some(i.sig.ident.to_string()),
                syn::Item::Macro(i) => i.ident.as_ref().map(ToString::to_string),
                syn::Item::Static(i) => Some(i.ident.to_string()),
                syn::Item::Struct(i) => Some(i.ident.to_string()),
                syn::Item::Trait(i) => Some(i.ident.to_string()),
                syn::Item::Type(i) => Some(i.ident.to_string()),
                syn::Item::Union(i) => Some(i.ident.to_string()),
                _ => None,
            };
            if let Some(n) = defined {
                self.modules[id].items.insert(n);
            }
            match item {
                syn::Item::Mod(m) => {
                    let child = m.ident.to_string();
                    match &m.content {
                        Some((_, inner)) => {
                            self.load_items(inner, file.clone(), child, Some(id), child_dir);
                        }
                        None => {
                            let a = child_dir.join(format!("{child}.rs"));
                            let b = child_dir.join(&child).join("mod.rs");
                            let f = if a.exists() { a } else { b };
                            self.load_file(f, child, Some(id), child_dir);
                        }
                    }
                }
                syn::Item::Use(u) => {
                    let reexport = !matches!(u.vis, syn::Visibility::Inherited);
                    let mut bound = Vec::new();
                    flatten(&u.tree, Vec::new(), &mut bound);
                    for (name, path) in bound {
                        match name {
                            Some(n) => self.modules[id].uses.push((n, path, reexport)),
                            None => self.modules[id].globs.push(path),
                        }
                    }
                }
                other => {
                    let mut paths = Vec::new();
                    Paths(&mut paths).visit_item(other);
                    self.modules[id].paths.extend(paths);
                }
            }
        }
        id
    }

    fn module_path(&self, m: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = Some(m);
        while let Some(c) = cur {
            if self.modules[c].parent.is_some() {
                out.push(self.modules[c].name.clone());
            }
            cur = self.modules[c].parent;
        }
        out.reverse();
        out
    }

    /// A path as written in module `m` made absolute (from the crate root); `None` for a path
    /// into another crate or a local name.
    fn absolute(&self, m: usize, path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        let mut base = match first.as_str() {
            "crate" => return Some(path[1..].to_vec()),
            "self" => self.module_path(m),
            "super" => {
                let mut b = self.module_path(m);
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    b.pop();
                    rest = &rest[1..];
                }
                b.extend(rest.iter().cloned());
                return Some(b);
            }
            _ => {
                let module = &self.modules[m];
                if module.children.contains_key(first) || module.items.contains(first) {
                    let mut b = self.module_path(m);
                    b.extend(path.iter().cloned());
                    return Some(b);
                }
                let (_, target, _) = module.uses.iter().find(|(n, _, _)| n == first)?;
                let mut b = self.absolute_use(m, target)?;
                b.extend(path[1..].iter().cloned());
                return Some(b);
            }
        };
        base.extend(path[1..].iter().cloned());
        Some(base)
    }

    /// The module defining the item an absolute path names (`None`: outside the crate, or a
    /// module itself).
    fn resolve(&self, path: &[String], depth: usize) -> Option<usize> {
        if depth > 16 {
            return None;
        }
        let mut m = 0;
        for (i, seg) in path.iter().enumerate() {
            let module = &self.modules[m];
            if let Some(&c) = module.children.get(seg) {
                m = c;
                continue;
            }
            if module.items.contains(seg) {
                return Some(m);
            }
            if let Some((_, target, _)) = module.uses.iter().find(|(n, _, _)| n == seg) {
                let mut p = self.absolute_use(m, target)?;
                p.extend(path[i + 1..].iter().cloned());
                return self.resolve(&p, depth + 1);
            }
            for g in &module.globs {
                let Some(mut p) = self.absolute_use(m, g) else {
                    continue;
                };
                p.extend(path[i..].iter().cloned());
                if let Some(r) = self.resolve(&p, depth + 1) {
                    return Some(r);
                }
            }
            return None;
        }
        None
    }

    fn is_descendant(&self, m: usize, of: usize) -> bool {
        let mut cur = Some(m);
        while let Some(c) = cur {
            if c == of {
                return true;
            }
            cur = self.modules[c].parent;
        }
        false
    }

    /// File → files it imports from.
    fn edges(&self, root: &Path) -> BTreeMap<String, BTreeSet<String>> {
        let rel = |m: usize| {
            self.modules[m]
                .file
                .strip_prefix(root)
                .expect("under the root")
                .display()
                .to_string()
        };
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (id, module) in self.modules.iter().enumerate() {
            let from = rel(id);
            let entry = edges.entry(from.clone()).or_default();
            let mut targets: Vec<Vec<String>> = Vec::new();
            for (_, path, reexport) in &module.uses {
                let Some(t) = self.absolute_use(id, path) else {
                    continue;
                };
                if *reexport {
                    // A re-export of the module's own descendants names them; it is no
                    // dependency of this module's code.
                    if let Some(def) = self.resolve(&t, 0) {
                        if self.is_descendant(def, id) {
                            continue;
                        }
                    }
                }
                targets.push(t);
            }
            for p in &module.paths {
                if let Some(t) = self.absolute(id, p) {
                    targets.push(t);
                }
            }
            for t in targets {
                if let Some(def) = self.resolve(&t, 0) {
                    let to = rel(def);
                    if to != from {
                        entry.insert(to);
                    }
                }
            }
        }
        edges
    }

    /// A `use` path made absolute: in a `use`, a leading name is a child, an item or an
    /// external crate.
    fn absolute_use(&self, m: usize, path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        match first.as_str() {
            "crate" | "self" | "super" => self.absolute(m, path),
            _ => {
                let module = &self.modules[m];
                if module.children.contains_key(first) || module.items.contains(first) {
                    self.absolute(m, path)
                } else {
                    None
                }
            }
        }
    }
}

/// The names a use tree binds (`None` for a glob) with the paths they stand for.
fn flatten(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(Option<String>, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut pre = prefix;
            pre.push(p.ident.to_string());
            flatten(&p.tree, pre, out);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last().cloned() {
                    out.push((Some(last), prefix));
                }
            } else {
                let mut p = prefix;
                p.push(name.clone());
                out.push((Some(name), p));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix;
            let name = r.ident.to_string();
            if name != "self" {
                p.push(name);
            }
            out.push((Some(r.rename.to_string()), p));
        }
        syn::UseTree::Glob(_) => out.push((None, prefix)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix.clone(), out);
            }
        }
    }
}

/// The top module of a file (`src/index/write/txn.rs` → `index`; `src/lib.rs` → `crate`).
fn top(file: &str) -> String {
    let rest = file.strip_prefix("src/").unwrap_or(file);
    let first = rest.split('/').next().unwrap_or(rest);
    first.trim_end_matches(".rs").to_string()
}

fn floor(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

/// Files in circles of imports (strongly connected components of more than one file).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iterative enough for a crate.
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        if let Some(ws) = s.edges.get(v) {
            for w in ws {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(lw));
                } else if s.on.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(iw));
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v.as_str());
        }
    }
    s.out
}

fn crate_edges() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    Crate::load(&root.join("src")).edges(root)
}

#[test]
fn no_file_imports_from_a_file_that_imports_it_back() {
    let found = circles(&crate_edges());
    assert!(
        found.is_empty(),
        "import circles between files (break each by moving the shared item down a floor):\n{}",
        found
            .iter()
            .map(|c| format!("  {}", c.join(" <-> ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn modules_import_only_from_their_floor_and_below() {
    let mut upward = Vec::new();
    for (from, tos) in crate_edges() {
        let a = top(&from);
        if a == "lib" {
            continue;
        }
        let fa = floor(&a).unwrap_or_else(|| panic!("module `{a}` ({from}) has no floor"));
        for to in tos {
            let b = top(&to);
            let Some(fb) = floor(&b) else {
                panic!("module `{b}` ({to}) has no floor");
            };
            if fb > fa
                && !UPWARD_ALLOWED
                    .iter()
                    .any(|(f, t, _)| *f == from.as_str() && *t == to.as_str())
            {
                upward.push(format!("  {from} ({a}) -> {to} ({b})"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports running up a floor (FLOORS: {FLOORS:?}):\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_file_is_longer_than_one_reader_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src is readable") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p
                    .strip_prefix(root)
                    .expect("under the root")
                    .display()
                    .to_string();
                let n = std::fs::read_to_string(&p)
                    .expect("readable")
                    .lines()
                    .count();
                if n > MAX_LINES && !LONG_FILES.iter().any(|(f, _)| *f == rel) {
                    long.push(format!("  {rel}: {n} lines"));
                }
            }
        }
    }
    long.sort();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by role, or name the one algorithm in \
         LONG_FILES):\n{}",
        long.join("\n")
    );
}

/// The checks above see the imports: a few that must be there are.
#[test]
fn the_reader_sees_known_imports() {
    let edges = crate_edges();
    for (from, to) in [
        ("src/index/decide/mod.rs", "src/index/view.rs"),
        ("src/merge/apply.rs", "src/index/write/txn.rs"),
        ("src/signature.rs", "src/fingerprint/sentence.rs"),
        ("src/ffi/index.rs", "src/ffi/boundary.rs"),
        ("src/index/write/place.rs", "src/options.rs"),
    ] {
        assert!(
            edges.get(from).is_some_and(|t| t.contains(to)),
            "{from} -> {to} not seen; {from} imports {:?}",
            edges.get(from)
        );
    }
    let n: usize = edges.values().map(BTreeSet::len).sum();
    assert!(n > 300, "only {n} imports seen");
}
