//! A generated client's service config (`src/config.rs`): the runtime plugin after the default
//! plugins in fn `base_client_runtime_plugins`.

use std::path::Path;

use proc_macro2::Span;
use syn::visit::{self, Visit};

use super::fast_path::function_extent;
use super::text::{apply, Edit, Source};
use super::{
    path_ends_with, PatchError, MARKER, MODULE_NAME, SERVICE_CONFIG_FN, SERVICE_CONFIG_NOTE, WITH_CLIENT_PLUGINS,
};
use crate::emit::hook_fn::{PLUGIN, PLUGIN_FOR};

/// In fn `base_client_runtime_plugins`, right after the method call
/// `.with_client_plugins(<path ending in default_plugins>(...))`, inserts
/// `.with_client_plugins(crate::default_http_client::runtime_plugin_for(<behavior version>))`
/// (the version the default plugins get; `runtime_plugin()` when they get none).
///
/// When the chain is laid out one call per line (the anchor's `.` starts its line), the new call
/// gets its own line after the line that closes the anchor call, with the same indentation as the
/// anchor's `.with_client_plugins` line and a `// smithy-tls:` comment line above it. Otherwise
/// (unformatted code) it is inserted inline, right after the anchor's closing parenthesis,
/// preceded by a `/* smithy-tls: ... */` comment.
///
/// Returns the input unchanged when the function already contains a call of
/// `crate::default_http_client::runtime_plugin` or `runtime_plugin_for` (any path ending in
/// them counts).
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust; [`PatchError::AnchorNotFound`] when the function or
/// the `default_plugins` call is missing; [`PatchError::Ambiguous`] when there are several
/// functions or calls to choose from; [`PatchError::InvalidResult`] if the result fails
/// validation (a bug).
pub fn patch_service_config(path: &Path, text: &str) -> Result<String, PatchError> {
    // A hook an earlier smithy-tls wrote without the behavior version is replaced by the current
    // one when the default plugins get a version (so the proxy environment counts).
    super::with_old_hooks_upgraded(
        text,
        super::OldHook::BareCall(PLUGIN),
        "with_behavior_version",
        |text| super::unpatch_service_config(path, text),
        |text| patch_service_config_fresh(path, text),
    )
}

/// [`patch_service_config`] on a file as it is (an existing hook of any form counts as present).
fn patch_service_config_fresh(path: &Path, text: &str) -> Result<String, PatchError> {
    // Fast path: a generated config.rs runs to thousands of lines, and the function we edit is
    // a few dozen. Parse and patch just that function when it can be cut out unambiguously;
    // anything unusual (or any error, for exact diagnostics) goes through the whole file.
    if let Some(range) = function_extent(text, SERVICE_CONFIG_FN) {
        if let Ok(patched) = patch_service_config_without_fast_path(path, &text[range.clone()]) {
            let mut out = String::with_capacity(text.len() + patched.len() - range.len());
            out.push_str(&text[..range.start]);
            out.push_str(&patched);
            out.push_str(&text[range.end..]);
            return Ok(out);
        }
    }
    patch_service_config_without_fast_path(path, text)
}

/// [`patch_service_config`] without its fast path: parses and patches the whole file. The fast
/// path must agree with it on every input; exposed so that tests can check that on real files.
///
/// # Errors
/// As [`patch_service_config`].
pub fn patch_service_config_without_fast_path(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let anchor = match locate_service_config(&src, &file)? {
        ServiceConfigState::AlreadyPatched => return Ok(text.to_owned()),
        ServiceConfigState::NoFunction => {
            return Err(PatchError::AnchorNotFound {
                path: path.to_owned(),
                what: format!("fn `{SERVICE_CONFIG_FN}`"),
                help: "this does not look like the `config.rs` of a smithy-rs generated client \
                       (or it comes from an unsupported generator version); leave this crate out \
                       of the policy, or install the default HTTP client in its runtime plugins \
                       by hand"
                    .to_owned(),
            })
        }
        ServiceConfigState::NoAnchor { fn_line } => {
            return Err(PatchError::AnchorNotFound {
                path: path.to_owned(),
                what: format!(
                    "a call `.{WITH_CLIENT_PLUGINS}(...::default_plugins(...))` in fn \
                     `{SERVICE_CONFIG_FN}` (line {fn_line})"
                ),
                help: format!(
                    "the generated plugin chain has an unexpected shape; add \
                     `.{WITH_CLIENT_PLUGINS}(crate::{MODULE_NAME}::{PLUGIN}())` right after \
                     the default plugins by hand (smithy-tls then leaves the file alone), or \
                     leave this crate out of the policy"
                ),
            })
        }
        ServiceConfigState::Anchor(anchor) => anchor,
    };

    let nl = src.newline();
    // The client's behavior version, as the default plugins get it, decides whether the default
    // client reads the proxy environment (2025-08-07 and later, like upstream's).
    let hook = match &anchor.behavior_version {
        Some(version) => format!(".{WITH_CLIENT_PLUGINS}(crate::{MODULE_NAME}::{PLUGIN_FOR}({version}))"),
        None => format!(".{WITH_CLIENT_PLUGINS}(crate::{MODULE_NAME}::{PLUGIN}())"),
    };
    let dot = src.start_of(anchor.dot)?;
    let close = src.end_of(anchor.close_paren)?;
    let edit = if src.starts_its_line(dot) {
        let indent = src.indent_of_line_at(dot);
        let lines = [format!("{indent}// {MARKER} {SERVICE_CONFIG_NOTE}"), format!("{indent}{hook}")];
        if src.rest_is_ignorable(close) {
            src.lines_after_line_of(close, &lines)
        } else {
            // Something (`;`, another call) follows the anchor on its closing line: break the
            // line so that it ends up after the hook.
            let mut insert = String::new();
            for line in &lines {
                insert.push_str(nl);
                insert.push_str(line);
            }
            Edit { at: close, text: insert }
        }
    } else {
        Edit { at: close, text: format!(" /* {MARKER} {SERVICE_CONFIG_NOTE} */ {hook}") }
    };
    let out = apply(text, vec![edit]);

    let patched = src.reparse(&out)?;
    let fns = find_service_config_fns(&patched);
    let hooks = match fns.as_slice() {
        [(_, block)] => chain_calls(block).hooks.len(),
        _ => 0,
    };
    if hooks != 1 {
        return Err(src.invalid(format!(
            "expected exactly one call of `{MODULE_NAME}::{PLUGIN}` in fn \
             `{SERVICE_CONFIG_FN}` after patching, found {hooks}"
        )));
    }
    Ok(out)
}

/// Classifies a service `config.rs` without editing it: whether it has the anchor that
/// [`patch_service_config`] needs (or is already patched). Discovery uses it to tell generated
/// clients it can wire from crates it must refuse, with the same syntax-aware search the patch
/// itself uses (a comment or string that mentions the names does not count).
///
/// `Ok(false)` when fn `base_client_runtime_plugins` or its
/// `.with_client_plugins(...default_plugins(...))` call is missing.
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust and [`PatchError::Ambiguous`] when several functions or
/// calls qualify (exactly the cases where [`patch_service_config`] fails for a reason other than
/// a missing anchor).
///
/// ```
/// use std::path::Path;
/// use smithy_tls_codegen::patch::has_service_config_anchor;
/// let config = "fn base_client_runtime_plugins() { x.with_client_plugins(default_plugins(p)); }";
/// assert_eq!(has_service_config_anchor(Path::new("config.rs"), config), Ok(true));
/// let mentioned = "// fn base_client_runtime_plugins uses default_plugins\nfn other() {}";
/// assert_eq!(has_service_config_anchor(Path::new("config.rs"), mentioned), Ok(false));
/// ```
pub fn has_service_config_anchor(path: &Path, text: &str) -> Result<bool, PatchError> {
    if let Some(range) = function_extent(text, SERVICE_CONFIG_FN) {
        if let Ok(true) = has_service_config_anchor_whole(path, &text[range]) {
            return Ok(true);
        }
    }
    has_service_config_anchor_whole(path, text)
}

fn has_service_config_anchor_whole(path: &Path, text: &str) -> Result<bool, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    Ok(match locate_service_config(&src, &file)? {
        ServiceConfigState::NoFunction | ServiceConfigState::NoAnchor { .. } => false,
        ServiceConfigState::AlreadyPatched | ServiceConfigState::Anchor(_) => true,
    })
}

/// What [`locate_service_config`] found.
enum ServiceConfigState {
    /// No fn `base_client_runtime_plugins`.
    NoFunction,
    /// The function exists (at `fn_line`) but has no `default_plugins` anchor.
    NoAnchor { fn_line: usize },
    /// The hook is present.
    AlreadyPatched,
    /// Exactly one anchor and no hook.
    Anchor(ServiceAnchor),
}

/// The spans of the anchor call needed to place the hook.
struct ServiceAnchor {
    /// The `.` before `with_client_plugins`.
    dot: Span,
    /// The `)` that closes the `with_client_plugins(...)` call.
    close_paren: Span,
    /// The client's behavior version as an `Option<BehaviorVersion>` expression, taken from the
    /// default plugins' `.with_behavior_version(X)`: `R` when `X` is `R.expect(..)` (the
    /// generated code's shape), else `Some(X)`; `None` when the call is not there.
    behavior_version: Option<String>,
}

fn locate_service_config(src: &Source<'_>, file: &syn::File) -> Result<ServiceConfigState, PatchError> {
    let fns = find_service_config_fns(file);
    let (fn_span, block) = match fns.as_slice() {
        [] => return Ok(ServiceConfigState::NoFunction),
        [one] => *one,
        many => {
            return Err(PatchError::Ambiguous {
                path: src.path.to_owned(),
                lines: many.iter().map(|(span, _)| span.start().line).collect(),
                what: format!("fn `{SERVICE_CONFIG_FN}`"),
            })
        }
    };
    let calls = chain_calls(block);
    let anchor_line = |m: &syn::ExprMethodCall| m.method.span().start().line;
    if !calls.hooks.is_empty() {
        return Ok(ServiceConfigState::AlreadyPatched);
    }
    match calls.anchors.as_slice() {
        [] => Ok(ServiceConfigState::NoAnchor { fn_line: fn_span.start().line }),
        [one] => Ok(ServiceConfigState::Anchor(ServiceAnchor {
            dot: one.dot_token.spans[0],
            close_paren: one.paren_token.span.close(),
            behavior_version: behavior_version_expr(src, one),
        })),
        many => Err(PatchError::Ambiguous {
            path: src.path.to_owned(),
            lines: many.iter().map(|m| anchor_line(m)).collect(),
            what: format!("the call `.{WITH_CLIENT_PLUGINS}(...default_plugins(...))` in fn `{SERVICE_CONFIG_FN}`"),
        }),
    }
}

/// The behavior version passed to the default plugins inside `anchor`, as source text of an
/// `Option<BehaviorVersion>` expression (see [`ServiceAnchor::behavior_version`]).
fn behavior_version_expr(src: &Source<'_>, anchor: &syn::ExprMethodCall) -> Option<String> {
    struct Find<'ast>(Option<&'ast syn::Expr>);
    impl<'ast> Visit<'ast> for Find<'ast> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if m.method == "with_behavior_version" && m.args.len() == 1 && self.0.is_none() {
                self.0 = m.args.first();
            }
            visit::visit_expr_method_call(self, m);
        }
    }
    // Only inside the default plugins' arguments, not the chain before them.
    let mut find = Find(None);
    for arg in &anchor.args {
        find.visit_expr(arg);
    }
    let arg = find.0?;
    let text = |expr: &syn::Expr| {
        use quote::ToTokens;
        let tokens = expr.to_token_stream();
        let start = src.start_of(super::first_span(&tokens)).ok()?;
        let end = src.end_of(super::last_span(&tokens)).ok()?;
        src.text.get(start..end).map(str::to_owned)
    };
    match arg {
        syn::Expr::MethodCall(call) if matches!(call.method.to_string().as_str(), "expect" | "unwrap") => {
            text(&call.receiver)
        }
        other => text(other).map(|x| format!("Some({x})")),
    }
    // A multi-line expression would not fit the one-line hook.
    .filter(|x| !x.contains('\n'))
}

/// Every fn (free, or in an impl, at any depth) named `base_client_runtime_plugins`, with the
/// span of its name and its body.
fn find_service_config_fns(file: &syn::File) -> Vec<(Span, &syn::Block)> {
    struct Finder<'ast> {
        found: Vec<(Span, &'ast syn::Block)>,
    }
    impl<'ast> Visit<'ast> for Finder<'ast> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            if f.sig.ident == SERVICE_CONFIG_FN {
                self.found.push((f.sig.ident.span(), &f.block));
            }
            visit::visit_item_fn(self, f);
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            if f.sig.ident == SERVICE_CONFIG_FN {
                self.found.push((f.sig.ident.span(), &f.block));
            }
            visit::visit_impl_item_fn(self, f);
        }
    }
    let mut finder = Finder { found: Vec::new() };
    finder.visit_file(file);
    finder.found
}

/// Anchor and hook calls inside a function body.
struct ChainCalls<'ast> {
    /// `.with_client_plugins(<path ending in default_plugins>(...))` method calls.
    anchors: Vec<&'ast syn::ExprMethodCall>,
    /// Spans of calls of a path ending in `default_http_client::runtime_plugin`.
    hooks: Vec<Span>,
}

impl<'ast> Visit<'ast> for ChainCalls<'ast> {
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if m.method == WITH_CLIENT_PLUGINS && m.args.len() == 1 {
            if let Some(syn::Expr::Call(call)) = m.args.first() {
                if path_ends_with(&call.func, &["default_plugins"]).is_some() {
                    self.anchors.push(m);
                }
            }
        }
        visit::visit_expr_method_call(self, m);
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if super::is_service_hook(&call.func) {
            use quote::ToTokens;
            self.hooks.push(super::first_span(&call.func.to_token_stream()));
        }
        visit::visit_expr_call(self, call);
    }
}

fn chain_calls(block: &syn::Block) -> ChainCalls<'_> {
    let mut calls = ChainCalls { anchors: Vec::new(), hooks: Vec::new() };
    calls.visit_block(block);
    calls
}
