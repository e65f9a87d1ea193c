//! aws-config's `src/lib.rs`: the default client in `ConfigLoader::load` when the user set none.

use std::path::Path;

use syn::visit::{self, Visit};

use super::text::{apply, Edit, Source};
use super::{
    first_span_of_stmt, has_named_field, is_loader_hook, type_is_named, PatchError, LOADER_NOTE, MARKER, MODULE_NAME,
};
use crate::emit::hook_fn::{CLIENT, CLIENT_FOR};
/// [`patch_aws_config_loader`](super::patch_aws_config_loader) on a file as it is (an existing
/// hook of any form counts).
pub(super) fn patch_loader_fresh(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let found = find_loader(&file);
    let load = the_loader(path, &found)?;

    let has_hook = loader_hooks(&load.block) > 0;
    let receiver = match load.sig.inputs.first() {
        Some(syn::FnArg::Receiver(r)) => r,
        // `find_loader` only accepts functions whose first input is a receiver.
        _ => return Err(src.invalid("`load` lost its receiver".to_owned())),
    };
    let needs_mut = receiver.mutability.is_none();
    if has_hook && !needs_mut {
        return Ok(text.to_owned());
    }

    let mut edits = Vec::new();
    if needs_mut {
        edits.push(Edit { at: src.start_of(receiver.self_token.span)?, text: "mut ".to_owned() });
    }
    if !has_hook {
        // The loader's behavior version decides whether the default client reads the proxy
        // environment (2025-08-07 and later, like upstream's), when the loader has one.
        let call = if found.structs.iter().any(|s| has_named_field(s, "behavior_version")) {
            format!("crate::{MODULE_NAME}::{CLIENT_FOR}(self.behavior_version)")
        } else {
            format!("crate::{MODULE_NAME}::{CLIENT}()")
        };
        edits.push(hook_edit(&src, load, &call)?);
    }
    let out = apply(text, edits);
    check_patched(&src, &out)?;
    Ok(out)
}

/// The one `load` to patch, in an aws-config whose `ConfigLoader` has an `http_client` field.
fn the_loader<'ast>(path: &Path, found: &LoaderSearch<'ast>) -> Result<&'ast syn::ImplItemFn, PatchError> {
    if !found.structs.is_empty() && !found.structs.iter().any(|s| has_named_field(s, "http_client")) {
        return Err(PatchError::AnchorNotFound {
            path: path.to_owned(),
            what: format!(
                "field `http_client` on `struct ConfigLoader` (line {})",
                found.structs[0].ident.span().start().line
            ),
            help: "this aws-config predates `ConfigLoader::http_client`; upgrade to aws-config 1.x \
                   or leave aws-config out of the policy"
                .to_owned(),
        });
    }
    match found.loads.as_slice() {
        [] => Err(PatchError::AnchorNotFound {
            path: path.to_owned(),
            what: "`async fn load(self)` in an inherent `impl ConfigLoader`".to_owned(),
            help: "this does not look like aws-config's `src/lib.rs` (or its loader has an \
                   unexpected shape); leave aws-config out of the policy, or set the HTTP \
                   client with `ConfigLoader::http_client` in application code"
                .to_owned(),
        }),
        [one] => Ok(*one),
        many => Err(PatchError::Ambiguous {
            path: path.to_owned(),
            lines: many.iter().map(|f| f.sig.ident.span().start().line).collect(),
            what: "`async fn load(self)` in `impl ConfigLoader`".to_owned(),
        }),
    }
}

/// The hook as the first statement of `load`'s body, `self.http_client = <call>` where none is
/// set: over several lines indented like the body when the body's `{` ends its line, inline
/// otherwise.
fn hook_edit(src: &Source<'_>, load: &syn::ImplItemFn, call: &str) -> Result<Edit, PatchError> {
    let open = src.end_of(load.block.brace_token.span.open())?;
    let field = "self.http_client";
    if !src.rest_is_ignorable(open) {
        return Ok(Edit {
            at: open,
            text: format!(" /* {MARKER} {LOADER_NOTE} */ if {field}.is_none() {{ {field} = {call}; }}"),
        });
    }
    let fn_indent = src.indent_of_line_at(src.start_of(load.sig.fn_token.span)?);
    let unit = if fn_indent.contains('\t') { "\t" } else { "    " };
    let body_indent = body_indent(src, &load.block, open, fn_indent).unwrap_or_else(|| format!("{fn_indent}{unit}"));
    let lines = [
        format!("{body_indent}// {MARKER} {LOADER_NOTE}"),
        format!("{body_indent}if {field}.is_none() {{"),
        format!("{body_indent}{unit}{field} = {call};"),
        format!("{body_indent}}}"),
    ];
    Ok(src.lines_after_line_of(open, &lines))
}

/// Checks the patched text: one `load`, taking `mut self`, with exactly one hook.
fn check_patched(src: &Source<'_>, out: &str) -> Result<(), PatchError> {
    let patched = src.reparse(out)?;
    let again = find_loader(&patched);
    let ok = match again.loads.as_slice() {
        [f] => {
            let is_mut = matches!(f.sig.inputs.first(), Some(syn::FnArg::Receiver(r)) if r.mutability.is_some());
            let hooks = loader_hooks(&f.block);
            if !is_mut || hooks != 1 {
                Err(format!(
                    "expected `load(mut self)` with exactly one call of `{MODULE_NAME}::{CLIENT}` \
                     after patching, found mut: {is_mut}, calls: {hooks}"
                ))
            } else {
                Ok(())
            }
        }
        other => Err(format!("expected one `ConfigLoader::load` after patching, found {}", other.len())),
    };
    ok.map_err(|message| src.invalid(message))
}

/// Whether aws-config's `ConfigLoader::load` already takes `mut self` (so the loader patch does
/// not change its receiver). `false` when there is no single such `load`.
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust.
pub fn aws_config_loader_takes_mut_self(path: &Path, text: &str) -> Result<bool, PatchError> {
    let file = Source::new(path, text).parse()?;
    let found = find_loader(&file);
    Ok(matches!(found.loads.as_slice(),
        [load] if matches!(load.sig.inputs.first(), Some(syn::FnArg::Receiver(r)) if r.mutability.is_some())))
}

/// The indentation of the first statement of `block`, when it starts its own line after the
/// opening brace (at offset `open`) and is indented deeper than the fn.
fn body_indent(src: &Source<'_>, block: &syn::Block, open: usize, fn_indent: &str) -> Option<String> {
    let first = block.stmts.first()?;
    let start = src.start_of(first_span_of_stmt(first)?).ok()?;
    if start <= open || !src.starts_its_line(start) {
        return None;
    }
    let indent = src.indent_of_line_at(start);
    (indent.len() > fn_indent.len()).then(|| indent.to_owned())
}

/// What [`find_loader`] found.
pub(super) struct LoaderSearch<'ast> {
    /// `async fn load(self)` (by-value receiver) in inherent `impl ConfigLoader` blocks.
    pub(super) loads: Vec<&'ast syn::ImplItemFn>,
    /// `struct ConfigLoader` definitions.
    structs: Vec<&'ast syn::ItemStruct>,
}

impl<'ast> Visit<'ast> for LoaderSearch<'ast> {
    fn visit_item_impl(&mut self, imp: &'ast syn::ItemImpl) {
        if imp.trait_.is_none() && type_is_named(&imp.self_ty, "ConfigLoader") {
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item {
                    let by_value_self =
                        matches!(f.sig.inputs.first(), Some(syn::FnArg::Receiver(r)) if r.reference.is_none());
                    if f.sig.ident == "load" && f.sig.asyncness.is_some() && by_value_self {
                        self.loads.push(f);
                    }
                }
            }
        }
        visit::visit_item_impl(self, imp);
    }
    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        if s.ident == "ConfigLoader" {
            self.structs.push(s);
        }
        visit::visit_item_struct(self, s);
    }
}

pub(super) fn find_loader(file: &syn::File) -> LoaderSearch<'_> {
    let mut search = LoaderSearch { loads: Vec::new(), structs: Vec::new() };
    search.visit_file(file);
    search
}

/// Number of calls of a path ending in `default_http_client::default_http_client` in `block`.
fn loader_hooks(block: &syn::Block) -> usize {
    block.stmts.iter().map(loader_hooks_in).sum()
}

/// Number of loader hook calls ([`is_loader_hook`]) in one statement.
pub(super) fn loader_hooks_in(stmt: &syn::Stmt) -> usize {
    struct Hooks(usize);
    impl<'ast> Visit<'ast> for Hooks {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if is_loader_hook(&call.func) {
                self.0 += 1;
            }
            visit::visit_expr_call(self, call);
        }
    }
    let mut hooks = Hooks(0);
    hooks.visit_stmt(stmt);
    hooks.0
}
