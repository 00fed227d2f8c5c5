//! Import circles between files: two modules of one crate that each name the other (directly or
//! through others) by `crate::…` or `super::…` paths. Such a pair usually shares a constant, a
//! helper or a type that belongs in one of them, and a newcomer cannot tell which file to stand
//! in. `cargo xtask ci` refuses a new one.
//!
//! Granularity is the file: every `.rs` under a crate's `src/` (but `main.rs` and `src/bin/`,
//! other crate roots) is one module, `a/mod.rs` being `a`. An edge is every `crate::` or
//! `super::` path in the code (`use` items, grouped `{…}` imports, and paths in expressions),
//! resolved to the deepest file it reaches; comments, doc links and `#[cfg(test)]` items are
//! not read, and a path into the file itself is no edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles allowed on purpose, each as its files (relative to the workspace root, sorted) and
/// why. Only mutually recursive decoders belong here: a decoder of one shape that calls the
/// decoder of a nested shape, which calls back for what is nested in that.
const ALLOWED: &[(&[&str], &str)] = &[
    (
        &[
            "crates/compact/src/serde_impls.rs",
            "crates/compact/src/verbatim.rs",
        ],
        "the value visitor hands `managedFields[].fieldsV1` to the verbatim seed, which decodes \
         a text it has not seen with the value visitor",
    ),
    (
        &[
            "crates/transport/src/decode/protobuf.rs",
            "crates/transport/src/decode/protobuf_kinds.rs",
        ],
        "the protobuf list decoder hands each item to its kind's decoder, which decodes the \
         messages nested in it (ObjectMeta, maps) with the list decoder's primitives",
    ),
];

/// Every crate under `crates/` (and `xtask/`): no import circle between its files but those in
/// [`ALLOWED`].
pub(crate) fn check(root: &Path) -> Result<(), String> {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .map_err(|e| format!("crates/: {e}"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.push(root.join("xtask"));
    dirs.sort();
    for dir in dirs {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let modules = read_modules(&src)?;
        for cycle in cycles(&edges(&modules)) {
            let files: Vec<String> = cycle
                .iter()
                .map(|m| {
                    modules[m]
                        .file
                        .strip_prefix(root)
                        .unwrap_or(&modules[m].file)
                        .display()
                        .to_string()
                })
                .collect();
            let mut sorted = files.clone();
            sorted.sort();
            sorted.dedup();
            if !ALLOWED.iter().any(|(allowed, _)| *allowed == sorted) {
                found.push(files.join(" -> "));
            }
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "import circles between files (move the shared piece to the file it belongs to; \
             see xtask/src/import_cycles.rs): {}",
            found.join("; ")
        ))
    }
}

/// A module path, `["handlers", "write"]` for `src/handlers/write.rs`; empty for the root.
type ModPath = Vec<String>;

/// One source file of a crate.
struct Module {
    file: PathBuf,
    /// The code with comments and `#[cfg(test)]` items removed.
    code: String,
}

/// Every module file under `src` (the crate root `lib.rs` as the empty path).
fn read_modules(src: &Path) -> Result<BTreeMap<ModPath, Module>, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                if path != src.join("bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path == src.join("main.rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap_or(&path).with_extension("");
            let mut segs: ModPath = rel
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
                segs.pop();
            }
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            out.insert(
                segs,
                Module {
                    file: path,
                    code: without_tests(&without_comments(&text)),
                },
            );
        }
    }
    Ok(out)
}

/// `text` without `//` and `/* */` comments (doc comments and their links included). String
/// literals are kept; a `//` inside one (a URL) cuts the rest of that line, which holds no path.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `code` without the items marked `#[cfg(test)]` (up to their matching `}` or `;`): test
/// modules name their parent and whatever they test, which is no dependency of the code.
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The module each module names, by its `crate::` and `super::` paths.
fn edges(modules: &BTreeMap<ModPath, Module>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut out = BTreeMap::new();
    for (path, module) in modules {
        // `super` of `a/b.rs` (path `a::b`) is `a`; of `a/mod.rs` (path `a`) the root.
        let parent: ModPath = path[..path.len().saturating_sub(1)].to_vec();
        let mut to = BTreeSet::new();
        for (base, tail) in paths(&module.code) {
            let mut start = if base == "crate" {
                ModPath::new()
            } else {
                parent.clone()
            };
            let mut tail = tail.as_slice();
            while let [first, rest @ ..] = tail {
                if first != "super" {
                    break;
                }
                start.pop();
                tail = rest;
            }
            let target = deepest(modules, start, tail);
            if &target != path {
                to.insert(target);
            }
        }
        out.insert(path.clone(), to);
    }
    out
}

/// The deepest module file `start::tail…` reaches.
fn deepest(modules: &BTreeMap<ModPath, Module>, mut at: ModPath, tail: &[String]) -> ModPath {
    for seg in tail {
        at.push(seg.clone());
        if !modules.contains_key(&at) {
            at.pop();
            break;
        }
    }
    at
}

/// Every `crate::…` / `super::…` path in `code` as its base and the segments after it, grouped
/// imports (`crate::{a, b::{c, d}}`) expanded into one path each.
fn paths(code: &str) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    for base in ["crate", "super"] {
        let needle = format!("{base}::");
        let mut from = 0;
        while let Some(i) = code[from..].find(&needle) {
            let at = from + i;
            from = at + needle.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '$')) {
                continue;
            }
            for tail in expand(&code[from..]) {
                out.push((base, tail));
            }
        }
    }
    out
}

/// The paths a use-tree starting at `s` names: `a::b`, or `a::{b, c::d}` expanded.
fn expand(s: &str) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(group) = s.strip_prefix('{') {
        let mut depth = 0usize;
        let mut items = Vec::new();
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    items.push(&group[start..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&group[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return items.into_iter().flat_map(expand).collect();
    }
    let ident_end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let ident = &s[..ident_end];
    if ident.is_empty() {
        return vec![Vec::new()];
    }
    let rest = &s[ident_end..];
    match rest.trim_start().strip_prefix("::") {
        Some(more) => expand(more)
            .into_iter()
            .map(|mut tail| {
                tail.insert(0, ident.to_string());
                tail
            })
            .collect(),
        None => vec![vec![ident.to_string()]],
    }
}

/// The circles of a graph: its strongly connected components with more than one module, each
/// as one cycle through them (Tarjan's algorithm, then a shortest walk around the component).
fn cycles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    let nodes: Vec<&ModPath> = graph.keys().collect();
    let index: BTreeMap<&ModPath, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            graph[*n]
                .iter()
                .filter_map(|m| index.get(m).copied())
                .collect()
        })
        .collect();
    let mut components = Vec::new();
    Tarjan {
        succ: &succ,
        next: 0,
        num: vec![None; nodes.len()],
        low: vec![0; nodes.len()],
        stack: Vec::new(),
        on_stack: vec![false; nodes.len()],
        out: &mut components,
    }
    .run();
    components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            walk(&succ, &c)
                .into_iter()
                .map(|i| nodes[i].clone())
                .collect()
        })
        .collect()
}

/// Tarjan's strongly connected components, recursive (module graphs are shallow).
struct Tarjan<'a> {
    succ: &'a [Vec<usize>],
    next: usize,
    num: Vec<Option<usize>>,
    low: Vec<usize>,
    stack: Vec<usize>,
    on_stack: Vec<bool>,
    out: &'a mut Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn run(&mut self) {
        for v in 0..self.succ.len() {
            if self.num[v].is_none() {
                self.visit(v);
            }
        }
    }

    fn visit(&mut self, v: usize) {
        self.num[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.succ[v] {
            match self.num[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(n) if self.on_stack[w] => self.low[v] = self.low[v].min(n),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.num[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            component.sort_unstable();
            self.out.push(component);
        }
    }
}

/// One shortest cycle inside `component` through its first module (breadth-first search back
/// to it), ending where it starts.
fn walk(succ: &[Vec<usize>], component: &[usize]) -> Vec<usize> {
    let start = component[0];
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &succ[v] {
            if !component.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while let Some(&p) = came_from.get(&at) {
                    path.push(p);
                    at = p;
                }
                path.reverse();
                return path;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = came_from.entry(w) {
                e.insert(v);
                queue.push_back(w);
            }
        }
    }
    component.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(modules: &[(&str, &str)]) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let modules = modules
            .iter()
            .map(|(path, code)| {
                let segs: ModPath = path
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                let module = Module {
                    file: PathBuf::from(path),
                    code: without_tests(&without_comments(code)),
                };
                (segs, module)
            })
            .collect();
        edges(&modules)
    }

    fn p(s: &str) -> ModPath {
        s.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn grouped_nested_and_inline_paths_are_edges() {
        let g = graph(&[
            ("", "mod a; mod b;"),
            (
                "a",
                "use crate::{b::{X, y::Z}, c};\nfn f() { crate::d::go(); }",
            ),
            ("b", ""),
            ("b/y", "use super::X;"),
            ("c", ""),
            ("d", ""),
        ]);
        assert_eq!(g[&p("a")], [p("b"), p("b/y"), p("c"), p("d")].into());
        assert_eq!(g[&p("b/y")], [p("b")].into());
    }

    #[test]
    fn comments_doc_links_and_test_modules_are_no_edges() {
        let g = graph(&[
            ("", ""),
            (
                "a",
                "//! see [`B`](crate::b::B)\n/* crate::c */ fn f() {}\n\
                 #[cfg(test)]\nmod tests { use crate::b::B; }\nuse crate::d::D;",
            ),
            ("b", ""),
            ("c", ""),
            ("d", ""),
        ]);
        assert_eq!(g[&p("a")], [p("d")].into());
    }

    #[test]
    fn finds_a_circle_through_three_files_and_none_in_a_tree() {
        let g = graph(&[
            ("", ""),
            ("config", "use crate::config::resolve::R;"),
            ("config/resolve", "use crate::tls::T;"),
            ("tls", "use crate::config::Identity;"),
            ("other", "use crate::tls::T;"),
        ]);
        let found = cycles(&g);
        assert_eq!(found.len(), 1, "{found:?}");
        let mut files = found[0].clone();
        files.sort();
        files.dedup();
        assert_eq!(files, [p("config"), p("config/resolve"), p("tls")]);
        let tree = graph(&[
            ("", ""),
            ("a", "use crate::b::B;"),
            ("b", "use crate::c::C;"),
            ("c", ""),
        ]);
        assert!(cycles(&tree).is_empty());
    }

    #[test]
    fn the_workspace_has_no_new_circle() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        check(root).unwrap();
    }
}
