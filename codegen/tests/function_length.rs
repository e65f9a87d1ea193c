//! No function in the generator's or the runtime's sources is longer than [`LIMIT`] lines, counted
//! as a reader counts them: from the `fn` line to the closing brace, comments and blank lines
//! included (clippy's `too_many_lines`, on in both crates, counts code lines only). Read with syn,
//! so functions in impls, traits and nested modules count too.

use std::path::Path;

use syn::spanned::Spanned;
use syn::visit::Visit;

/// The most lines a function may have.
const LIMIT: usize = 80;

/// The source trees held to the limit.
const TREES: &[&str] = &["codegen/src", "runtime/src", "runtime/build.rs"];

/// Collects every function with a body: its name, first line and length.
#[derive(Default)]
struct Functions(Vec<(String, usize, usize)>);

impl Functions {
    fn add(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let (start, end) = (fn_token.span().start().line, block.span().end().line);
        self.0.push((name.to_string(), start, end + 1 - start));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.add(&item.sig.ident, &item.sig.fn_token, &item.block);
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.add(&item.sig.ident, &item.sig.fn_token, &item.block);
        syn::visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.add(&item.sig.ident, &item.sig.fn_token, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut long, mut counted) = (Vec::new(), 0);
    for tree in TREES {
        let path = workspace.join(tree);
        let files = if path.is_file() { vec![path] } else { smithy_tls_test_support::fs::files_with(&path, "rs") };
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut functions = Functions::default();
            functions.visit_file(&parsed);
            counted += functions.0.len();
            let shown = file.strip_prefix(&workspace).unwrap_or(&file).display().to_string();
            long.extend(functions.0.into_iter().filter(|(_, _, lines)| *lines > LIMIT).map(|(name, line, lines)| {
                format!("{shown}:{line}: `{name}` is {lines} lines (limit {LIMIT}): split it")
            }));
        }
    }
    assert!(counted > 500, "only {counted} functions found: is the walk reading the sources?");
    assert!(long.is_empty(), "{}", long.join("\n"));
}
