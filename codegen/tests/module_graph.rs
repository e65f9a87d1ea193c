//! Data flows one way between the generator's top-level modules (docs/ARCHITECTURE.md): the
//! modules of `codegen/src` and the `crate::` paths between them form no cycle.
//!
//! Each file is lexed into tokens (comments gone, strings and doc comments single literals, so
//! a path quoted in text is not a use), and every `crate :: name` path (`$crate` too, macro
//! bodies included) is an edge from the file's top-level module to `name`; so is a
//! `super :: .. :: name` path that climbs to the crate root. Test modules count: they are part
//! of their module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{TokenStream, TokenTree};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("reads src").map(|e| e.expect("a directory entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to and how deep its own module sits (`x.rs` and
/// `x/mod.rs`: 1, `x/y.rs`: 2); `None` for the crate root files.
fn module_of(relative: &Path) -> Option<(String, usize)> {
    let parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let top = parts.first()?.trim_end_matches(".rs").to_owned();
    if parts.len() == 1 && (top == "lib" || top == "main") {
        return None;
    }
    let depth = if parts.last().is_some_and(|last| last == "mod.rs") { parts.len() - 1 } else { parts.len() };
    Some((top, depth))
}

/// Adds to `out` the top-level modules the tokens name, for a module at `depth` below the root.
fn scan(tokens: TokenStream, depth: usize, out: &mut BTreeSet<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let ident = |i: usize| match trees.get(i) {
        Some(TokenTree::Ident(ident)) => Some(ident.to_string()),
        _ => None,
    };
    // `::` is two `:` puncts.
    let path_sep = |i: usize| {
        matches!((trees.get(i), trees.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':')
    };
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Group(group) => {
                // `mod name { .. }`: the block is one module deeper.
                let inline_module = i >= 2 && ident(i - 2).as_deref() == Some("mod");
                scan(group.stream(), depth + usize::from(inline_module), out);
            }
            TokenTree::Ident(first) if *first == "crate" && path_sep(i + 1) => {
                out.extend(names_at(trees.get(i + 3)));
            }
            TokenTree::Ident(first) if *first == "super" && !(i >= 2 && path_sep(i - 2)) => {
                // `super :: super :: .. :: name`: climbs one module per `super`.
                let mut at = i;
                let mut climbed = 0;
                while ident(at).as_deref() == Some("super") && path_sep(at + 1) {
                    climbed += 1;
                    at += 3;
                }
                if climbed == depth {
                    out.extend(names_at(trees.get(at)));
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The module names a path continues with: one name, or the first name of each part of a
/// `{a, b::c}` group.
fn names_at(tree: Option<&TokenTree>) -> Vec<String> {
    match tree {
        Some(TokenTree::Ident(ident)) => vec![ident.to_string()],
        Some(TokenTree::Group(group)) if group.delimiter() == proc_macro2::Delimiter::Brace => {
            let mut names = Vec::new();
            let mut part_start = true;
            for tree in group.stream() {
                match tree {
                    TokenTree::Ident(ident) if part_start => {
                        names.push(ident.to_string());
                        part_start = false;
                    }
                    TokenTree::Punct(punct) if punct.as_char() == ',' => part_start = true,
                    _ => part_start = false,
                }
            }
            names
        }
        _ => Vec::new(),
    }
}

/// The import graph among `src`'s top-level modules (edges to a module from itself left out).
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let Some((module, depth)) = module_of(relative) else { continue };
        let text = std::fs::read_to_string(&file).expect("reads a source file");
        let tokens = TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{}: does not lex: {e}", file.display()));
        let mut uses = BTreeSet::new();
        scan(tokens, depth, &mut uses);
        uses.remove(&module);
        graph.entry(module).or_default().extend(uses);
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
fn the_top_level_modules_import_each_other_without_a_cycle() {
    let graph = graph(&src());
    // The scan sees the imports it must see (a scan that finds nothing proves nothing).
    for (from, to) in [("plan", "pairing"), ("discover", "pairing"), ("pairing", "manifest"), ("cli", "report")] {
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
fn the_scan_finds_crate_and_super_paths_and_names_a_cycle() {
    let text = r#"
        //! Mentions crate::in_a_comment.
        use crate::alpha::Thing;
        use crate::{delta::X, epsilon};
        fn f() { let _ = "crate::in_a_string"; crate::beta::call(); }
        mod tests { use super::super::gamma; use super::Thing; }
    "#;
    let mut found = BTreeSet::new();
    scan(TokenStream::from_str(text).unwrap(), 1, &mut found);
    let expected = ["alpha", "beta", "gamma", "delta", "epsilon"].map(str::to_owned);
    assert_eq!(found, BTreeSet::from(expected));

    let graph = Graph::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(find_cycle(&graph), Some(vec!["a", "b", "c", "a"].into_iter().map(str::to_owned).collect()));
    let acyclic = Graph::from([("a".to_owned(), BTreeSet::from(["b".to_owned()]))]);
    assert_eq!(find_cycle(&acyclic), None);
}
