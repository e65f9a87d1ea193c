//! docs/ARCHITECTURE.md's "Adding a provider" recipe lists every source and config file that names
//! a provider: each file that names `openssl` in code (identifiers, not comments or docs), outside
//! its own backend folder and test modules (`tests.rs` files, `#[cfg(test)] mod` blocks), is in the recipe's list, and every file the list names
//! exists. `openssl` stands for any provider: it is the one whose name is a word of its own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{TokenStream, TokenTree};

/// Where a provider may be named in code.
const TREES: &[&str] = &["codegen/src", "runtime/src", "runtime/build.rs", ".cargo/config.toml"];
/// The provider's own backend folder, which the recipe lists as `runtime/src/tls/<name>/`.
const BACKEND: &str = "runtime/src/tls/backends/openssl/";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `.rs` and `.toml` files under `path` (or `path` itself), relative to the workspace, with
/// forward slashes.
fn files(path: &str) -> Vec<String> {
    let full = workspace().join(path);
    if full.is_file() {
        return vec![path.to_owned()];
    }
    let found =
        ["rs", "toml"].into_iter().flat_map(|extension| smithy_tls_test_support::fs::files_with(&full, extension));
    found.map(|file| format!("{path}/{}", file.strip_prefix(&full).expect("under it").display())).collect()
}

/// Whether a Rust source names `openssl` in an identifier (comments are gone in tokens; doc
/// comments are string literals, not identifiers), outside `#[cfg(test)] mod .. { .. }` blocks.
fn names_in_rust(tokens: TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        if let Some(end) = test_module_end(&trees, i) {
            i = end;
            continue;
        }
        let names = match &trees[i] {
            TokenTree::Ident(ident) => ident.to_string().to_lowercase().contains("openssl"),
            TokenTree::Group(group) => names_in_rust(group.stream()),
            _ => false,
        };
        if names {
            return true;
        }
        i += 1;
    }
    false
}

/// Where a `#[cfg(test)] mod name { .. }` starting at `trees[i]` ends (the index after its body).
fn test_module_end(trees: &[TokenTree], i: usize) -> Option<usize> {
    let attribute = match (trees.get(i), trees.get(i + 1)) {
        (Some(TokenTree::Punct(hash)), Some(TokenTree::Group(attribute))) if hash.as_char() == '#' => attribute,
        _ => return None,
    };
    let is_test = attribute.stream().to_string().replace(' ', "") == "cfg(test)";
    match (trees.get(i + 2), trees.get(i + 3), trees.get(i + 4)) {
        (Some(TokenTree::Ident(m)), Some(TokenTree::Ident(_)), Some(TokenTree::Group(_))) if is_test && m == "mod" => {
            Some(i + 5)
        }
        _ => None,
    }
}

/// Whether a file names `openssl` in code: Rust identifiers, or TOML outside comments.
fn names_openssl(path: &str) -> bool {
    let text = std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    if path.ends_with(".rs") {
        let tokens = TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{path}: does not lex: {e}"));
        return names_in_rust(tokens);
    }
    text.lines().any(|line| !line.trim_start().starts_with('#') && line.contains("openssl"))
}

/// The backticked paths of the recipe in docs/ARCHITECTURE.md, up to "Then its tests".
fn recipe() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(workspace().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    let start = doc.find("### Adding a provider").expect("the recipe's heading");
    let section = &doc[start..];
    let section = &section[..section.find("Then its tests").expect("the recipe's end")];
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| TREES.iter().any(|tree| quoted.starts_with(tree.trim_end_matches(".rs"))))
        .map(|quoted| quoted.replace("<name>", "openssl"))
        .collect()
}

#[test]
fn the_recipe_lists_every_file_that_names_a_provider() {
    let listed = recipe();
    for path in &listed {
        assert!(workspace().join(path).exists(), "the recipe names {path}, which does not exist");
    }
    let naming: BTreeSet<String> = TREES
        .iter()
        .flat_map(|tree| files(tree))
        .filter(|path| !path.starts_with(BACKEND) && !path.ends_with("/tests.rs"))
        .filter(|path| names_openssl(path))
        .collect();
    assert!(naming.len() >= 8, "only {} files name openssl: is the scan reading the sources?", naming.len());
    let missing: Vec<&String> = naming.iter().filter(|path| !listed.contains(*path)).collect();
    assert!(
        missing.is_empty(),
        "these files name a provider but docs/ARCHITECTURE.md's recipe does not list them: {missing:?}\n(the recipe: \
         {listed:?})"
    );
    println!("provider recipe: {} files name openssl in code, all in the recipe", naming.len());
}

#[test]
fn test_modules_and_docs_do_not_count_as_naming() {
    let names = |source: &str| names_in_rust(TokenStream::from_str(source).expect("lexes"));
    assert!(names("fn f() { openssl::init(); }"));
    assert!(names("#[cfg(openssl_provider)] fn f() {}"));
    assert!(!names("/// Uses `openssl`.\nfn f() {} // openssl"));
    assert!(!names("#[cfg(test)]\nmod tests { fn f() { openssl::init(); } }"));
    assert!(names("#[cfg(test)]\nmod tests {}\nfn f() { openssl::init(); }"));
}
