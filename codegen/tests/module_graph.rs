//! Data flows one way between the modules of the generator and of the runtime
//! (docs/ARCHITECTURE.md): at every depth, the modules that share a parent (the top-level modules
//! of `codegen/src`, the submodules of `manifest`, ...) and the paths between them form no cycle.
//!
//! Each file is lexed into tokens (comments gone, strings and doc comments single literals, so
//! a path quoted in text is not a use), and every path that starts at `crate` (`$crate` too,
//! macro bodies included), `super` or `self` is resolved to an absolute path, through `{..}`
//! groups. A path from module `a::b::c` to `a::d::e` is an edge between the siblings `a::b` and
//! `a::d`; a path into a module's own ancestors or descendants is no edge. Test modules count:
//! they are part of their module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// A module's path below the crate root (`["manifest", "marker"]`); empty for the root.
type ModulePath = Vec<String>;

/// Module (`manifest::marker`) → the sibling modules it names.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module a file holds: `x.rs` and `x/mod.rs` hold `x`, `x/y.rs` holds `x::y`, and the crate
/// root files (`lib.rs`, `main.rs`) the root.
fn module_of(relative: &Path) -> ModulePath {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| last == "mod.rs")
        || matches!(parts.as_slice(), [only] if only == "lib.rs" || only == "main.rs")
    {
        parts.pop();
    } else if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    parts
}

/// What a scan of one file finds.
#[derive(Debug, Default)]
struct Scan {
    /// Every path named, as (the module naming it, the absolute path named).
    paths: Vec<(ModulePath, ModulePath)>,
    /// The inline modules (`mod name { .. }`) declared.
    inline_modules: Vec<ModulePath>,
    /// The names `use` items bring into a module, re-exports included: (the module, the name)
    /// → the path it stands for (relative ones start at the module: checked against the modules
    /// once all files are read).
    aliases: Vec<(ModulePath, String, ModulePath)>,
}

/// Whether `trees[i]` and `trees[i + 1]` are `::` (two `:` puncts).
fn path_sep(trees: &[TokenTree], i: usize) -> bool {
    matches!((trees.get(i), trees.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
        if a.as_char() == ':' && b.as_char() == ':')
}

fn ident(trees: &[TokenTree], i: usize) -> Option<String> {
    match trees.get(i) {
        Some(TokenTree::Ident(ident)) => Some(ident.to_string()),
        _ => None,
    }
}

/// Records in `out` the paths that the tokens of module `module` name.
fn scan(tokens: TokenStream, module: &ModulePath, out: &mut Scan) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for i in 0..trees.len() {
        if let TokenTree::Group(group) = &trees[i] {
            // `mod name { .. }`: the block is a module inside this one.
            let inline =
                if i >= 2 && ident(&trees, i - 2).as_deref() == Some("mod") { ident(&trees, i - 1) } else { None };
            let inner = match inline {
                Some(name) => {
                    let inner = [module.clone(), vec![name]].concat();
                    out.inline_modules.push(inner.clone());
                    inner
                }
                None => module.clone(),
            };
            scan(group.stream(), &inner, out);
            continue;
        }
        // A path starts at `crate`, `super` or `self` followed by `::`, not in the middle of one.
        if i >= 2 && path_sep(&trees, i - 2) {
            continue;
        }
        if ident(&trees, i).as_deref() == Some("use") {
            use_item(&trees, i + 1, module, out);
        }
        let Some(base) = path_base(&trees, i, module) else { continue };
        let mut named = Vec::new();
        continue_path(&trees, base.1, base.0, &mut named);
        out.paths.extend(named.into_iter().map(|path| (module.clone(), path)));
    }
}

/// Where a path starting at `trees[i]` begins (`crate`: the root, `super`: a parent per
/// `super`, `self`: `module`) and the index of its next segment; `None` when no path starts there.
fn path_base(trees: &[TokenTree], i: usize, module: &ModulePath) -> Option<(ModulePath, usize)> {
    let first = ident(trees, i)?;
    if !path_sep(trees, i + 1) {
        return None;
    }
    match first.as_str() {
        "crate" => Some((Vec::new(), i + 3)),
        "self" => Some((module.clone(), i + 3)),
        "super" => {
            let mut base = module.clone();
            let mut at = i;
            while ident(trees, at).as_deref() == Some("super") && path_sep(trees, at + 1) {
                base.pop()?;
                at += 3;
            }
            Some((base, at))
        }
        _ => None,
    }
}

/// Adds to `out` the absolute paths that continue `prefix` from `trees[at]`: one path, or one
/// per part of a `{a, b::c}` group.
fn continue_path(trees: &[TokenTree], mut at: usize, mut prefix: ModulePath, out: &mut Vec<ModulePath>) {
    loop {
        match trees.get(at) {
            Some(TokenTree::Ident(segment)) if *segment != "self" => {
                prefix.push(segment.to_string());
                if !path_sep(trees, at + 1) {
                    break;
                }
                at += 3;
            }
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                let mut part_start = 0;
                for (index, tree) in inner.iter().enumerate() {
                    if matches!(tree, TokenTree::Punct(p) if p.as_char() == ',') {
                        continue_path(&inner[part_start..index], 0, prefix.clone(), out);
                        part_start = index + 1;
                    }
                }
                continue_path(&inner[part_start..], 0, prefix, out);
                return;
            }
            _ => break,
        }
    }
    out.push(prefix);
}

/// Records the names a `use` item starting at `trees[at]` brings into `module`: each leaf of its
/// tree (under its `as` name), standing for the path it names. A path that does not start at
/// `crate`, `super` or `self` starts at `module` (a child module, or an extern crate: those never
/// match a module and resolve to nothing). Globs name nothing.
fn use_item(trees: &[TokenTree], at: usize, module: &ModulePath, out: &mut Scan) {
    let (base, at) = match path_base(trees, at, module) {
        Some(based) => based,
        None if ident(trees, at).is_some() => (module.clone(), at),
        None => return,
    };
    let mut leaves = Vec::new();
    use_tree(trees, at, base, &mut leaves);
    out.aliases.extend(leaves.into_iter().map(|(name, target)| (module.clone(), name, target)));
}

/// The leaves of a use tree from `trees[at]` below `prefix`: (the name it brings, the path).
fn use_tree(trees: &[TokenTree], mut at: usize, mut prefix: ModulePath, out: &mut Vec<(String, ModulePath)>) {
    loop {
        match trees.get(at) {
            Some(TokenTree::Ident(segment)) if *segment == "self" => {
                if let Some(last) = prefix.last().cloned() {
                    out.push((renamed(trees, at + 1).unwrap_or(last), prefix));
                }
                return;
            }
            Some(TokenTree::Ident(segment)) => {
                prefix.push(segment.to_string());
                if !path_sep(trees, at + 1) {
                    let name = renamed(trees, at + 1).unwrap_or_else(|| segment.to_string());
                    out.push((name, prefix));
                    return;
                }
                at += 3;
            }
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                for part in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
                    use_tree(part, 0, prefix.clone(), out);
                }
                return;
            }
            _ => return,
        }
    }
}

/// The name after `as` at `trees[at]`, if the tree is renamed there.
fn renamed(trees: &[TokenTree], at: usize) -> Option<String> {
    (ident(trees, at).as_deref() == Some("as")).then(|| ident(trees, at + 1)).flatten()
}

/// `path` with each leading name a `use` brought into a module replaced by what it stands for,
/// until none is left: `crate::Error` is `crate::error::Error` where the root re-exports it, and
/// `super::f` is the sibling module's `f` where the parent imported it.
fn resolve(path: &ModulePath, aliases: &BTreeMap<ModulePath, ModulePath>) -> ModulePath {
    let mut path = path.clone();
    // Bounded: an alias chain longer than this is a `use` cycle, which rustc refuses anyway.
    for _ in 0..16 {
        let Some(len) = (1..=path.len()).rev().find(|len| aliases.contains_key(&path[..*len])) else { break };
        let target = &aliases[&path[..len]];
        if target[..] == path[..len] {
            break;
        }
        path = [target.clone(), path[len..].to_vec()].concat();
    }
    path
}

/// The sibling edge a path from `from` to `to` makes, if any: the first modules where the two
/// paths part, when both are modules.
fn sibling_edge(from: &ModulePath, to: &ModulePath, modules: &BTreeSet<ModulePath>) -> Option<(String, String)> {
    let shared = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if shared >= from.len() || shared >= to.len() {
        return None;
    }
    let (a, b) = (&from[..=shared], &to[..=shared]);
    modules.contains(b).then(|| (a.join("::"), b.join("::")))
}

/// The graph of paths between sibling modules in `src`.
fn graph(src: &Path) -> Graph {
    let files = smithy_tls_test_support::fs::files_with(src, "rs");
    let mut modules = BTreeSet::new();
    let mut scanned = Scan::default();
    for file in files {
        let module = module_of(file.strip_prefix(src).expect("under src"));
        let text = std::fs::read_to_string(&file).expect("reads a source file");
        let tokens = TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{}: does not lex: {e}", file.display()));
        scan(tokens, &module, &mut scanned);
        modules.insert(module);
    }
    modules.extend(scanned.inline_modules);
    // A name is an alias where its path starts at a module of the crate (not an extern crate).
    let aliases: BTreeMap<ModulePath, ModulePath> = scanned
        .aliases
        .into_iter()
        .filter(|(_, _, target)| (1..=target.len()).any(|len| modules.contains(&target[..len])))
        .map(|(module, name, target)| ([module, vec![name]].concat(), target))
        .collect();
    let mut graph = Graph::new();
    for (from, to) in &scanned.paths {
        if let Some((a, b)) = sibling_edge(from, &resolve(to, &aliases), &modules) {
            graph.entry(a).or_default().insert(b);
        }
    }
    graph
}

/// One cycle of `graph` (its first module repeated at the end), if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit<'a>(
        graph: &'a Graph,
        node: &'a str,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| *n == node) {
            let mut cycle: Vec<String> = stack[at..].iter().map(|n| (*n).to_owned()).collect();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(graph, start, &mut Vec::new(), &mut done))
}

#[test]
fn modules_import_each_other_without_a_cycle_at_any_depth() {
    let graph = graph(&src());
    // The scan sees the imports it must see (a scan that finds nothing proves nothing), at the
    // top level and below it.
    let expected = [
        ("plan", "pairing"),
        ("discover", "pairing"),
        ("pairing", "manifest"),
        ("cli", "report"),
        ("manifest::features", "manifest::source"),
        ("manifest::target_tables", "manifest::marker"),
        ("patch::revert", "patch::loader"),
    ];
    for (from, to) in expected {
        assert!(graph.get(from).is_some_and(|uses| uses.contains(to)), "{from} -> {to} not found: {graph:#?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "codegen/src modules import each other in a cycle: {}\n(docs/ARCHITECTURE.md: modules use only those \
             before them; move the shared item down, or pass it in)",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn runtime_modules_import_each_other_without_a_cycle_at_any_depth() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    let graph = graph(&src);
    let expected =
        [("tls", "roots"), ("error", "provider"), ("client", "connect"), ("tls::backends", "tls::rustls_roots")];
    for (from, to) in expected {
        assert!(graph.get(from).is_some_and(|uses| uses.contains(to)), "{from} -> {to} not found: {graph:#?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "runtime/src modules import each other in a cycle: {}\n(docs/ARCHITECTURE.md: the runtime's layers; move \
             the shared item down, or pass it in)",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_scan_resolves_crate_super_and_self_paths() {
    let text = r#"
        //! Mentions crate::in_a_comment.
        use crate::alpha::Thing;
        use crate::{delta::X, epsilon::{self, Y}};
        pub(crate) fn f() { let _ = "crate::in_a_string"; crate::beta::call(); $crate::zeta::g(); }
        mod tests { use super::super::gamma::Z; use super::Thing; use self::inner::W; }
    "#;
    let module = vec!["top".to_owned(), "sub".to_owned()];
    let mut found = Scan::default();
    scan(TokenStream::from_str(text).unwrap(), &module, &mut found);
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<ModulePath>();
    let named: BTreeSet<(String, String)> =
        found.paths.iter().map(|(from, to)| (from.join("::"), to.join("::"))).collect();
    let expected = [
        ("top::sub", "alpha::Thing"),
        ("top::sub", "delta::X"),
        ("top::sub", "epsilon"),
        ("top::sub", "epsilon::Y"),
        ("top::sub", "beta::call"),
        ("top::sub", "zeta::g"),
        ("top::sub::tests", "top::gamma::Z"),
        ("top::sub::tests", "top::sub::Thing"),
        ("top::sub::tests", "top::sub::tests::inner::W"),
    ]
    .map(|(a, b)| (a.to_owned(), b.to_owned()));
    assert_eq!(named, BTreeSet::from(expected));
    assert_eq!(found.inline_modules, vec![path("top::sub::tests")]);

    let modules = BTreeSet::from([path("top"), path("top::sub"), path("top::gamma"), path("alpha")]);
    let edge = |from: &str, to: &str| sibling_edge(&path(from), &path(to), &modules);
    assert_eq!(edge("top::sub::tests", "top::gamma::Z"), Some(("top::sub".to_owned(), "top::gamma".to_owned())));
    assert_eq!(edge("top::sub", "alpha::Thing"), Some(("top".to_owned(), "alpha".to_owned())));
    // Into an ancestor's own items, or to an item that is not a module: no edge.
    assert_eq!(edge("top::sub", "top::Thing"), None);
    assert_eq!(edge("top::sub::tests", "top::sub::Thing"), None);
}

#[test]
fn bench_modules_import_each_other_without_a_cycle_at_any_depth() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/src");
    let graph = graph(&src);
    if let Some(cycle) = find_cycle(&graph) {
        panic!("bench/src modules import each other in a cycle: {}", cycle.join(" -> "));
    }
}

/// Names a `use` brings into a module resolve to what they stand for: a path through a parent's
/// re-export or import, or through the crate root's, is an edge to the module that defines it.
#[test]
fn paths_through_re_exports_resolve_to_their_module() {
    let parent = "pub use self::b::f; pub(crate) use crate::top::c::{g as renamed, self};";
    let child = "fn x() { super::f(); super::renamed(); super::c::h(); crate::top::f(); }";
    let module = |p: &str| p.split("::").map(str::to_owned).collect::<ModulePath>();
    let mut found = Scan::default();
    scan(TokenStream::from_str(parent).unwrap(), &module("top"), &mut found);
    scan(TokenStream::from_str(child).unwrap(), &module("top::a"), &mut found);
    let modules = BTreeSet::from([module("top"), module("top::a"), module("top::b"), module("top::c")]);
    let aliases: BTreeMap<ModulePath, ModulePath> = found
        .aliases
        .iter()
        .map(|(m, name, target)| ([m.clone(), vec![name.clone()]].concat(), target.clone()))
        .collect();
    let edges: BTreeSet<(String, String)> = found
        .paths
        .iter()
        .filter(|(from, _)| *from == module("top::a"))
        .filter_map(|(from, to)| sibling_edge(from, &resolve(to, &aliases), &modules))
        .collect();
    assert_eq!(
        edges,
        BTreeSet::from([("top::a".to_owned(), "top::b".to_owned()), ("top::a".to_owned(), "top::c".to_owned())])
    );
    assert_eq!(resolve(&module("top::renamed"), &aliases), module("top::c::g"));
    assert_eq!(resolve(&module("top::c::h"), &aliases), module("top::c::h"));
}

#[test]
fn a_cycle_is_named_in_full() {
    let graph = Graph::from([
        ("a::x".to_owned(), BTreeSet::from(["a::y".to_owned()])),
        ("a::y".to_owned(), BTreeSet::from(["a::z".to_owned()])),
        ("a::z".to_owned(), BTreeSet::from(["a::x".to_owned()])),
    ]);
    assert_eq!(find_cycle(&graph), Some(vec!["a::x", "a::y", "a::z", "a::x"].into_iter().map(str::to_owned).collect()));
    let acyclic = Graph::from([("a".to_owned(), BTreeSet::from(["b".to_owned()]))]);
    assert_eq!(find_cycle(&acyclic), None);
}
