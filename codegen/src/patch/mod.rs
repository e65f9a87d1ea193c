//! Source patches: splice small smithy-tls hooks into existing Rust files without reprinting them.
//!
//! Every patch follows the same recipe:
//!
//! 1. parse the file with `syn` (spans carry line/column thanks to proc-macro2's
//!    `span-locations` feature);
//! 2. locate the anchor structurally (not by text search), refusing when it is missing or
//!    ambiguous;
//! 3. if the hook is already there, return the input unchanged (idempotence);
//! 4. convert the anchor's span to a byte offset (proc-macro2 columns count `char`s, not bytes)
//!    and insert a few lines of text there, copying the surrounding indentation and the file's
//!    line ending;
//! 5. re-parse the result and check structurally that exactly one hook is now present.
//!
//! Everything outside the inserted text is preserved byte for byte: comments, formatting and
//! odd indentation of generated code included. No function here writes to disk; `path` is used
//! only to name the file in errors.
//!
//! Modules: `crate_root` (`src/lib.rs`), `service_config` (a generated client's
//! `src/config.rs`), `loader` (aws-config's `ConfigLoader::load`), `provider_config` (aws-config's
//! `ProviderConfig` accessors), `transfer_manager` (the S3 transfer manager's transport), `fast_path` (cutting one
//! function out of a large file without parsing it), `text` (byte offsets, line table, edits).

mod crate_root;
mod fast_path;
mod loader;
mod provider_config;
mod revert;
mod service_config;
#[cfg(test)]
mod tests;
mod text;
mod transfer_manager;

use std::path::{Path, PathBuf};

use proc_macro2::Span;
use syn::visit::{self, Visit};

pub use self::crate_root::patch_crate_root;
pub use self::loader::aws_config_loader_takes_mut_self;
pub use self::provider_config::patch_aws_config_provider_config;
pub use self::revert::{
    unpatch_aws_config_loader, unpatch_aws_config_provider_config, unpatch_crate_root, unpatch_service_config,
};
pub use self::service_config::{
    has_service_config_anchor, patch_service_config, patch_service_config_without_fast_path,
};
pub use self::transfer_manager::{
    patch_transfer_manager_config, patch_transfer_manager_transport, unpatch_transfer_manager_config,
    unpatch_transfer_manager_transport, CONFIG_FILE as TRANSFER_MANAGER_CONFIG_FILE,
    TRANSPORT_FILE as TRANSFER_MANAGER_TRANSPORT_FILE,
};

use crate::emit::hook_fn::{CLIENT, CLIENT_FOR, PLUGIN, PLUGIN_FOR};
/// Name of the module that another step emits into each patched crate
/// (`src/default_http_client.rs`), and that the hooks inserted here call into.
pub use crate::emit::MODULE_NAME;

/// Patches aws-config's `src/lib.rs`: in `impl ConfigLoader`'s `async fn load(self)` (searched
/// in inline modules at any depth, e.g. `mod loader { ... }`), makes the receiver `mut self` if it
/// is not, and inserts as the first statement
/// `if self.http_client.is_none() { self.http_client = crate::default_http_client::default_http_client_for(self.behavior_version); }`
/// (`default_http_client()` when `ConfigLoader` has no `behavior_version` field)
/// with a `// smithy-tls:` comment above it.
///
/// The statement is laid out over several lines, indented like the body, when the body's `{`
/// ends its line (the normal case); inline otherwise. Returns the input unchanged when the body
/// already calls `crate::default_http_client::default_http_client` and the receiver is `mut`.
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust; [`PatchError::AnchorNotFound`] when there is no such
/// `load`, or when `struct ConfigLoader` is in the file but has no `http_client` field (an
/// aws-config too old for this hook); [`PatchError::Ambiguous`] when several `load`s qualify;
/// [`PatchError::InvalidResult`] if the result fails validation (a bug).
pub fn patch_aws_config_loader(path: &Path, text: &str) -> Result<String, PatchError> {
    // A hook an earlier smithy-tls wrote without the loader's behavior version is replaced (the
    // receiver's `mut` stays).
    with_old_hooks_upgraded(
        text,
        OldHook::BareCall(CLIENT),
        "behavior_version",
        |text| unpatch_aws_config_loader(path, text, false),
        |text| loader::patch_loader_fresh(path, text),
    )
}

/// Marker that starts every comment this module inserts, so hooks are easy to find with grep.
const MARKER: &str = "smithy-tls:";

/// Comment placed above the `pub mod default_http_client;` line of a crate root.
const CRATE_ROOT_NOTE: &str = "default HTTP client chosen by the smithy-tls policy";
/// Comment placed above the hook in `base_client_runtime_plugins`.
const SERVICE_CONFIG_NOTE: &str = "install the policy-chosen default HTTP client";
/// Comment placed above the hook in aws-config's `ConfigLoader::load`.
const LOADER_NOTE: &str = "fall back to the policy-chosen default HTTP client";
/// Comment placed above the hooks in aws-config's `ProviderConfig` accessors.
const PROVIDER_CONFIG_NOTE: &str = "without a client of its own, use the policy-chosen default HTTP client";

/// Name of the generated function whose plugin chain [`patch_service_config`] extends.
const SERVICE_CONFIG_FN: &str = "base_client_runtime_plugins";
/// Method whose call with `default_plugins(...)` is the anchor in the service config.
const WITH_CLIENT_PLUGINS: &str = "with_client_plugins";

/// Why a file could not be patched.
///
/// Every variant names the file; its `Display` also gives the line when it is known and says
/// what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    /// The input is not valid Rust.
    #[error(
        "{}:{line}:{column}: cannot parse the file as Rust: {message}; smithy-tls only patches \
         sources that compile, so fix the syntax error or re-extract the crate from its \
         published package",
        path.display()
    )]
    Parse {
        /// File being patched.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column (in characters) of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The place the hook belongs was not found.
    #[error("{}: cannot find {what}; {help}", path.display())]
    AnchorNotFound {
        /// File being patched.
        path: PathBuf,
        /// What was looked for (including the line of the enclosing item when known).
        what: String,
        /// What the user can do.
        help: String,
    },
    /// More than one place qualifies for the hook, so none is chosen.
    #[error(
        "{}: {} {}: found {} candidates for {what} where exactly one was expected; remove the \
         duplicate or add the hook by hand (smithy-tls then detects it and leaves the file alone)",
        path.display(),
        if lines.len() == 1 { "line" } else { "lines" },
        join_lines(lines),
        lines.len()
    )]
    Ambiguous {
        /// File being patched.
        path: PathBuf,
        /// 1-based lines of every candidate.
        lines: Vec<usize>,
        /// What was looked for.
        what: String,
    },
    /// The patched text failed validation; nothing should be written.
    #[error(
        "{}: the patched text is not valid ({message}); nothing was written. This is a bug in \
         smithy-tls: please report it with the original file attached",
        path.display()
    )]
    InvalidResult {
        /// File being patched.
        path: PathBuf,
        /// What is wrong with the result (with its line when known).
        message: String,
    },
}

impl PatchError {
    /// The error as a diagnostic: S001–S004 (docs/DIAGNOSTICS.md), with its place when it has one.
    pub fn diagnostic(&self) -> crate::diag::Diagnostic {
        use crate::diag::{place_in_file, Diagnostic};
        let message = self.to_string();
        match self {
            PatchError::Parse { path, line, column, .. } => {
                Diagnostic::in_file("S001", message, path, place_in_file(path, *line, *column))
            }
            PatchError::AnchorNotFound { path, .. } => Diagnostic::in_file("S002", message, path, None),
            PatchError::Ambiguous { path, lines, .. } => {
                Diagnostic::in_file("S003", message, path, lines.first().and_then(|line| place_in_file(path, *line, 1)))
            }
            PatchError::InvalidResult { path, .. } => Diagnostic::in_file("S004", message, path, None),
        }
    }
}

/// Formats line numbers as `3, 17`.
fn join_lines(lines: &[usize]) -> String {
    lines.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// If `expr` is a path whose last segments are `suffix`, returns the span of its first segment.
fn path_ends_with(expr: &syn::Expr, suffix: &[&str]) -> Option<Span> {
    let syn::Expr::Path(p) = expr else { return None };
    let segments: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    if segments.len() < suffix.len() {
        return None;
    }
    let tail = &segments[segments.len() - suffix.len()..];
    if tail.iter().zip(suffix).all(|(seg, want)| seg.ident == want) {
        segments.first().map(|seg| seg.ident.span())
    } else {
        None
    }
}

/// The span of the first token of a statement (its first attribute, if any).
pub(super) fn first_span_of_stmt(stmt: &syn::Stmt) -> Option<Span> {
    use quote::ToTokens;
    stmt.to_token_stream().into_iter().next().map(|tt| tt.span())
}

/// A hook an earlier smithy-tls wrote in the form it no longer writes, without the behavior
/// version: found in the syntax tree, so comments and strings that spell it do not count.
#[derive(Debug, Clone, Copy)]
enum OldHook {
    /// `…default_http_client::<name>()`, called with no arguments.
    BareCall(&'static str),
    /// `.or_else(…default_http_client::<name>)`, the function passed as it is.
    OrElse(&'static str),
}

impl OldHook {
    /// Whether `text` (Rust source) has this hook; `false` when it does not parse.
    fn is_in(self, text: &str) -> bool {
        struct Find {
            hook: OldHook,
            found: bool,
        }
        impl<'ast> Visit<'ast> for Find {
            fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
                if let OldHook::BareCall(name) = self.hook {
                    self.found |= call.args.is_empty() && path_ends_with(&call.func, &[MODULE_NAME, name]).is_some();
                }
                visit::visit_expr_call(self, call);
            }
            fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
                if let OldHook::OrElse(name) = self.hook {
                    let passed = call.args.first().filter(|_| call.args.len() == 1);
                    self.found |= call.method == "or_else"
                        && passed.is_some_and(|f| path_ends_with(f, &[MODULE_NAME, name]).is_some());
                }
                visit::visit_expr_method_call(self, call);
            }
        }
        // The hook's function name must be in the text: most files are rejected without a parse.
        let (OldHook::BareCall(name) | OldHook::OrElse(name)) = self;
        if !text.contains(name) {
            return false;
        }
        let Ok(file) = syn::parse_file(text.trim_start_matches('\u{feff}')) else { return false };
        let mut find = Find { hook: self, found: false };
        find.visit_file(&file);
        find.found
    }
}

/// Whether `text` (Rust source) has the identifier `name` outside comments and strings.
fn has_ident(text: &str, name: &str) -> bool {
    fn walk(tokens: proc_macro2::TokenStream, name: &str) -> bool {
        tokens.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(ident) => ident == name,
            proc_macro2::TokenTree::Group(group) => walk(group.stream(), name),
            _ => false,
        })
    }
    // Tokenised only when the name is in the text at all.
    text.contains(name) && text.parse::<proc_macro2::TokenStream>().is_ok_and(|tokens| walk(tokens, name))
}

/// Patches `text` with `patch`, first replacing an `old_hook` an earlier smithy-tls wrote (when
/// the file has the identifier `behavior_version_ident` to pass in the new form): the hooks are
/// taken out with `unpatch` and written again by `patch`; when that still gives the old form
/// (nothing newer to pass), the file is patched as it is.
fn with_old_hooks_upgraded(
    text: &str,
    old_hook: OldHook,
    behavior_version_ident: &str,
    unpatch: impl Fn(&str) -> Result<String, PatchError>,
    patch: impl Fn(&str) -> Result<String, PatchError>,
) -> Result<String, PatchError> {
    if has_ident(text, behavior_version_ident) && old_hook.is_in(text) {
        let unpatched = unpatch(text)?;
        if unpatched != text {
            let repatched = patch(&unpatched)?;
            if !old_hook.is_in(&repatched) {
                return Ok(repatched);
            }
        }
    }
    patch(text)
}

/// The span of the first token of `tokens`.
pub(super) fn first_span(tokens: &proc_macro2::TokenStream) -> Span {
    tokens.clone().into_iter().next().map_or_else(Span::call_site, |tt| tt.span())
}

/// The span of the last token of `tokens` (a group's closing delimiter).
pub(super) fn last_span(tokens: &proc_macro2::TokenStream) -> Span {
    match tokens.clone().into_iter().last() {
        Some(proc_macro2::TokenTree::Group(group)) => group.span_close(),
        Some(other) => other.span(),
        None => Span::call_site(),
    }
}

/// Whether `func` is the service-config hook's function: a path ending in
/// `default_http_client::runtime_plugin` or `default_http_client::runtime_plugin_for`.
pub(super) fn is_service_hook(func: &syn::Expr) -> bool {
    [PLUGIN, PLUGIN_FOR].iter().any(|name| path_ends_with(func, &[MODULE_NAME, name]).is_some())
}

/// Whether `ty` is a path type whose last segment is `name` (`ConfigLoader`, `loader::ConfigLoader`).
pub(super) fn type_is_named(ty: &syn::Type, name: &str) -> bool {
    match ty {
        syn::Type::Path(p) => p.qself.is_none() && p.path.segments.last().is_some_and(|seg| seg.ident == name),
        syn::Type::Paren(p) => type_is_named(&p.elem, name),
        syn::Type::Group(g) => type_is_named(&g.elem, name),
        _ => false,
    }
}

/// Whether struct `s` has a field called `name`.
pub(super) fn has_named_field(s: &syn::ItemStruct, name: &str) -> bool {
    s.fields.iter().any(|f| f.ident.as_ref().is_some_and(|ident| ident == name))
}

/// Whether `call` is the `ProviderConfig` hook: `.or_else(..)` with the one argument
/// [`is_provider_hook_arg`] recognises.
pub(super) fn is_provider_hook(call: &syn::ExprMethodCall) -> bool {
    call.method == "or_else" && call.args.len() == 1 && is_provider_hook_arg(&call.args[0])
}

/// Whether `arg` is what the `ProviderConfig` hook passes to `or_else`: the path
/// `..::default_http_client::default_http_client`, or a closure calling
/// `..::default_http_client::default_http_client_for(..)`.
fn is_provider_hook_arg(arg: &syn::Expr) -> bool {
    match arg {
        syn::Expr::Closure(closure) => {
            // rustfmt may wrap a long body in a block: `|| { call }`.
            let body = match &*closure.body {
                syn::Expr::Block(block) => match block.block.stmts.as_slice() {
                    [syn::Stmt::Expr(expr, None)] => expr,
                    _ => return false,
                },
                other => other,
            };
            closure.inputs.is_empty()
                && matches!(body, syn::Expr::Call(call)
                    if path_ends_with(&call.func, &[MODULE_NAME, CLIENT_FOR]).is_some())
        }
        other => path_ends_with(other, &[MODULE_NAME, CLIENT]).is_some(),
    }
}

/// Whether `func` is the loader hook's function: a path ending in
/// `default_http_client::default_http_client` or `default_http_client::default_http_client_for`.
pub(super) fn is_loader_hook(func: &syn::Expr) -> bool {
    [CLIENT, CLIENT_FOR].iter().any(|name| path_ends_with(func, &[MODULE_NAME, name]).is_some())
}
