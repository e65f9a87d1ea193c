//! Taking the hooks out again (`smithy-tls revert`): each function removes exactly the text its
//! patch inserted — the hook and the `// smithy-tls:` note above it — located structurally, so
//! a file formatted since still has its hook found. A file without the hook comes back
//! unchanged; nothing else in the file is touched.

use std::ops::Range;
use std::path::Path;

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::{self, Visit};

use super::fast_path::function_extent;
use super::loader::{find_loader, loader_hooks_in};
use super::text::Source;
use super::{
    first_span, first_span_of_stmt, is_provider_hook, is_service_hook, last_span, type_is_named, PatchError,
    CRATE_ROOT_NOTE, LOADER_NOTE, MARKER, MODULE_NAME, PROVIDER_CONFIG_NOTE, SERVICE_CONFIG_FN, SERVICE_CONFIG_NOTE,
    WITH_CLIENT_PLUGINS,
};

/// Removes the `pub mod default_http_client;` line (and its note) from a crate root. An inline
/// `mod default_http_client { .. }` is not the tool's and stays.
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust; [`PatchError::InvalidResult`] if the result fails
/// validation (a bug).
pub fn unpatch_crate_root(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let mut ranges = Vec::new();
    for item in &file.items {
        if let syn::Item::Mod(m) = item {
            if m.ident == MODULE_NAME && m.content.is_none() {
                let start = src.start_of(first_span(&m.to_token_stream()))?;
                let end = src.end_of(last_span(&m.to_token_stream()))?;
                ranges.push(whole_lines(&src, start, end, CRATE_ROOT_NOTE).unwrap_or(start..end));
            }
        }
    }
    finish(&src, text, ranges, |file| {
        file.items
            .iter()
            .filter(|i| matches!(i, syn::Item::Mod(m) if m.ident == MODULE_NAME && m.content.is_none()))
            .count()
    })
}

/// Removes `.with_client_plugins(crate::default_http_client::runtime_plugin())` (and its note)
/// from a generated client's `src/config.rs`.
///
/// # Errors
/// As [`unpatch_crate_root`].
pub fn unpatch_service_config(path: &Path, text: &str) -> Result<String, PatchError> {
    // As the patch does: work on the one function when it can be cut out.
    if let Some(range) = function_extent(text, SERVICE_CONFIG_FN) {
        if let Ok(inner) = unpatch_service_config_whole(path, &text[range.clone()]) {
            return Ok(format!("{}{inner}{}", &text[..range.start], &text[range.end..]));
        }
    }
    unpatch_service_config_whole(path, text)
}

fn unpatch_service_config_whole(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let mut ranges = Vec::new();
    for call in service_hooks(&file) {
        let dot = src.start_of(call.dot_token.spans[0])?;
        let end = src.end_of(call.paren_token.span.close())?;
        let receiver_end = src.end_of(last_span(&call.receiver.to_token_stream()))?;
        ranges.push(whole_lines(&src, dot, end, SERVICE_CONFIG_NOTE).unwrap_or(receiver_end..end));
    }
    finish(&src, text, ranges, |file| service_hooks(file).len())
}

/// Removes the default-client statement (and its note) from aws-config's
/// `ConfigLoader::load`, and the `mut` the patch gave its receiver when `made_mut`.
///
/// # Errors
/// As [`unpatch_crate_root`].
pub fn unpatch_aws_config_loader(path: &Path, text: &str, made_mut: bool) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let mut ranges = Vec::new();
    for load in &find_loader(&file).loads {
        let hooked: Vec<(usize, &syn::Stmt)> =
            load.block.stmts.iter().enumerate().filter(|(_, stmt)| loader_hooks_in(stmt) > 0).collect();
        for (index, stmt) in &hooked {
            let start = src.start_of(first_span_of_stmt(stmt).unwrap_or_else(Span::call_site))?;
            let end = src.end_of(last_span(&stmt.to_token_stream()))?;
            let range = match whole_lines(&src, start, end, LOADER_NOTE) {
                Some(range) => range,
                // Inline (a one-line body): the statement and its `/* note */` right after `{`.
                None if *index == 0 => src.end_of(load.block.brace_token.span.open())?..end,
                None => start..end,
            };
            ranges.push(range);
        }
        if made_mut && !hooked.is_empty() {
            if let Some(syn::FnArg::Receiver(receiver)) = load.sig.inputs.first() {
                if let Some(mutability) = &receiver.mutability {
                    ranges.push(src.start_of(mutability.span)?..src.start_of(receiver.self_token.span)?);
                }
            }
        }
    }
    finish(&src, text, ranges, |file| {
        find_loader(file).loads.iter().flat_map(|f| f.block.stmts.iter()).map(loader_hooks_in).sum()
    })
}

/// Removes `.or_else(crate::default_http_client::default_http_client)` (and the note above its
/// statement) from aws-config's `ProviderConfig` accessors.
///
/// # Errors
/// As [`unpatch_crate_root`].
pub fn unpatch_aws_config_provider_config(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let mut ranges = Vec::new();
    let mut found = ProviderHooks::default();
    found.visit_file(&file);
    for (stmt_start, call) in &found.hooks {
        let receiver_end = src.end_of(last_span(&call.receiver.to_token_stream()))?;
        ranges.push(receiver_end..src.end_of(call.paren_token.span.close())?);
        let stmt_start = src.start_of(*stmt_start)?;
        if let Some(note) = note_line_before(&src, stmt_start, PROVIDER_CONFIG_NOTE) {
            ranges.push(note);
        }
    }
    finish(&src, text, ranges, |file| {
        let mut again = ProviderHooks::default();
        again.visit_file(file);
        again.hooks.len()
    })
}

/// Removes `ranges` from `text`, re-parses the result and checks that `count` finds no hook left.
fn finish(
    src: &Source<'_>,
    text: &str,
    mut ranges: Vec<Range<usize>>,
    count: impl Fn(&syn::File) -> usize,
) -> Result<String, PatchError> {
    if ranges.is_empty() {
        return Ok(text.to_owned());
    }
    ranges.sort_by_key(|r| r.start);
    ranges.dedup();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in ranges {
        if range.start < at {
            return Err(src.invalid("overlapping removals".to_owned()));
        }
        out.push_str(&text[at..range.start]);
        at = range.end;
    }
    out.push_str(&text[at..]);
    let file = src.reparse(&out)?;
    match count(&file) {
        0 => Ok(out),
        left => Err(src.invalid(format!("{left} hook(s) still present after removing them"))),
    }
}

/// The whole lines `start..end` stand on, with the `// smithy-tls: <note>` line above them, when
/// the hook has its lines to itself (as the patch writes it).
fn whole_lines(src: &Source<'_>, start: usize, end: usize, note: &str) -> Option<Range<usize>> {
    if !src.starts_its_line(start) {
        return None;
    }
    let line_end = src.newline_after(end).map_or(src.text.len(), |nl| nl + 1);
    if !src.text.get(end..line_end)?.trim().is_empty() {
        return None;
    }
    let first = src.line_start(start);
    let first = note_line_before(src, first, note).map_or(first, |note| note.start);
    Some(first..line_end)
}

/// The line before the one starting at `line_start`, when it is exactly the tool's note.
fn note_line_before(src: &Source<'_>, offset: usize, note: &str) -> Option<Range<usize>> {
    let line_start = src.line_start(offset);
    if line_start == 0 || !src.starts_its_line(offset) {
        return None;
    }
    let previous = src.line_start(line_start - 1);
    let line = src.text.get(previous..line_start)?;
    (line.trim() == format!("// {MARKER} {note}")).then_some(previous..line_start)
}

/// `.with_client_plugins(<path ending in default_http_client::runtime_plugin>())` calls in fn
/// `base_client_runtime_plugins`.
fn service_hooks(file: &syn::File) -> Vec<&syn::ExprMethodCall> {
    struct Hooks<'ast> {
        inside: bool,
        found: Vec<&'ast syn::ExprMethodCall>,
    }
    impl<'ast> Visit<'ast> for Hooks<'ast> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            let inside = self.inside || f.sig.ident == SERVICE_CONFIG_FN;
            let outer = std::mem::replace(&mut self.inside, inside);
            visit::visit_item_fn(self, f);
            self.inside = outer;
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            let inside = self.inside || f.sig.ident == SERVICE_CONFIG_FN;
            let outer = std::mem::replace(&mut self.inside, inside);
            visit::visit_impl_item_fn(self, f);
            self.inside = outer;
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let is_hook = m.method == WITH_CLIENT_PLUGINS
                && matches!(m.args.first(), Some(syn::Expr::Call(call))
                    if m.args.len() == 1 && is_service_hook(&call.func));
            if self.inside && is_hook {
                self.found.push(m);
            }
            visit::visit_expr_method_call(self, m);
        }
    }
    let mut hooks = Hooks { inside: false, found: Vec::new() };
    hooks.visit_file(file);
    hooks.found
}

/// `.or_else(<path ending in default_http_client::default_http_client>)` calls in the methods of
/// inherent `impl ProviderConfig` blocks, with the start of their top-level statement.
#[derive(Default)]
struct ProviderHooks<'ast> {
    stmt_start: Option<Span>,
    hooks: Vec<(Span, &'ast syn::ExprMethodCall)>,
}

impl<'ast> Visit<'ast> for ProviderHooks<'ast> {
    fn visit_item_impl(&mut self, imp: &'ast syn::ItemImpl) {
        if imp.trait_.is_none() && type_is_named(&imp.self_ty, "ProviderConfig") {
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item {
                    for stmt in &f.block.stmts {
                        self.stmt_start = first_span_of_stmt(stmt);
                        self.visit_stmt(stmt);
                    }
                }
            }
        }
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if let (true, Some(start)) = (is_provider_hook(call), self.stmt_start) {
            self.hooks.push((start, call));
        }
        visit::visit_expr_method_call(self, call);
    }
}
