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

use std::path::{Path, PathBuf};

use proc_macro2::{LineColumn, Span};
use syn::visit::{self, Visit};

/// Name of the module that another step emits into each patched crate
/// (`src/default_http_client.rs`), and that the hooks inserted here call into.
pub const MODULE_NAME: &str = "default_http_client";

/// Marker that starts every comment this module inserts, so hooks are easy to find with grep.
const MARKER: &str = "smithy-tls:";

/// Comment placed above the `pub mod default_http_client;` line of a crate root.
const CRATE_ROOT_NOTE: &str = "default HTTP client chosen by the smithy-tls policy";
/// Comment placed above the hook in `base_client_runtime_plugins`.
const SERVICE_CONFIG_NOTE: &str = "install the policy-chosen default HTTP client";
/// Comment placed above the hook in aws-config's `ConfigLoader::load`.
const LOADER_NOTE: &str = "fall back to the policy-chosen default HTTP client";

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

/// Formats line numbers as `3, 17`.
fn join_lines(lines: &[usize]) -> String {
    lines.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

// ---------------------------------------------------------------------------------------------
// Crate root
// ---------------------------------------------------------------------------------------------

/// Adds `pub mod default_http_client;`, preceded by a one-line `// smithy-tls:` comment, to a
/// crate root (`src/lib.rs`).
///
/// The declaration goes right after the last top-level `mod` item (inline or not, whatever its
/// visibility) if there is one, else at the end of the file; either way it lands after the inner
/// attributes (`#![...]`) and inner doc comments (`//!`), which must open the file. Returns the
/// input unchanged when a top-level `mod default_http_client` already exists.
///
/// # Errors
/// [`PatchError::Parse`] if `text` is not valid Rust, [`PatchError::InvalidResult`] if the
/// patched text fails validation (a bug).
pub fn patch_crate_root(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    if count_module_decls(&file) > 0 {
        return Ok(text.to_owned());
    }
    let nl = src.newline();
    let last_mod = file.items.iter().rev().find_map(|item| match item {
        syn::Item::Mod(m) => Some(m),
        _ => None,
    });
    let edit = match last_mod {
        Some(m) => {
            let end_span = match (&m.semi, &m.content) {
                (Some(semi), _) => semi.spans[0],
                (None, Some((brace, _))) => brace.span.close(),
                // syn never produces this; fall back to the `mod` keyword's line.
                (None, None) => m.ident.span(),
            };
            let end = src.end_of(end_span)?;
            let indent = src.indent_of_line_at(src.start_of(m.mod_token.span)?);
            let lines = [format!("{indent}// {MARKER} {CRATE_ROOT_NOTE}"), format!("{indent}pub mod {MODULE_NAME};")];
            if src.rest_is_ignorable(end) {
                src.lines_after_line_of(end, &lines)
            } else {
                // Code follows on the same line: break the line after the `mod` item.
                let mut insert = String::new();
                for line in &lines {
                    insert.push_str(nl);
                    insert.push_str(line);
                }
                insert.push_str(nl);
                Edit { at: end, text: insert }
            }
        }
        None => {
            let mut insert = String::new();
            if !text.is_empty() && !text.ends_with('\n') {
                insert.push_str(nl);
            }
            insert.push_str(&format!("// {MARKER} {CRATE_ROOT_NOTE}{nl}pub mod {MODULE_NAME};{nl}"));
            Edit { at: text.len(), text: insert }
        }
    };
    let out = apply(text, vec![edit]);
    let patched = src.reparse(&out)?;
    let count = count_module_decls(&patched);
    if count != 1 {
        return Err(
            src.invalid(format!("expected exactly one top-level `mod {MODULE_NAME}` after patching, found {count}"))
        );
    }
    Ok(out)
}

/// Number of top-level `mod default_http_client` items.
fn count_module_decls(file: &syn::File) -> usize {
    file.items.iter().filter(|item| matches!(item, syn::Item::Mod(m) if m.ident == MODULE_NAME)).count()
}

// ---------------------------------------------------------------------------------------------
// Service config (`src/config.rs` of a smithy-rs generated client)
// ---------------------------------------------------------------------------------------------

/// In fn `base_client_runtime_plugins`, right after the method call
/// `.with_client_plugins(<path ending in default_plugins>(...))`, inserts
/// `.with_client_plugins(crate::default_http_client::runtime_plugin())`.
///
/// When the chain is laid out one call per line (the anchor's `.` starts its line), the new call
/// gets its own line after the line that closes the anchor call, with the same indentation as the
/// anchor's `.with_client_plugins` line and a `// smithy-tls:` comment line above it. Otherwise
/// (unformatted code) it is inserted inline, right after the anchor's closing parenthesis,
/// preceded by a `/* smithy-tls: ... */` comment.
///
/// Returns the input unchanged when the function already contains a call of
/// `crate::default_http_client::runtime_plugin` (any path ending in
/// `default_http_client::runtime_plugin` counts).
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust; [`PatchError::AnchorNotFound`] when the function or
/// the `default_plugins` call is missing; [`PatchError::Ambiguous`] when there are several
/// functions or calls to choose from; [`PatchError::InvalidResult`] if the result fails
/// validation (a bug).
pub fn patch_service_config(path: &Path, text: &str) -> Result<String, PatchError> {
    // Fast path: a generated config.rs runs to thousands of lines, and the function we edit is
    // a few dozen. Parse and patch just that function when it can be cut out unambiguously;
    // anything unusual (or any error, for exact diagnostics) goes through the whole file.
    if let Some(range) = function_extent(text, SERVICE_CONFIG_FN) {
        if let Ok(patched) = patch_service_config_whole(path, &text[range.clone()]) {
            let mut out = String::with_capacity(text.len() + patched.len() - range.len());
            out.push_str(&text[..range.start]);
            out.push_str(&patched);
            out.push_str(&text[range.end..]);
            return Ok(out);
        }
    }
    patch_service_config_whole(path, text)
}

/// The byte range of the item `fn name` (from the start of its line to its closing brace), found
/// without parsing the file; `None` unless the name occurs exactly once as `fn name` and its body
/// braces balance under a lexer that skips comments, strings and character literals.
fn function_extent(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let needle = format!("fn {name}");
    let mut hits = text.match_indices(&needle).filter(|(i, _)| {
        let after = text[i + needle.len()..].chars().next();
        !matches!(after, Some(c) if c.is_alphanumeric() || c == '_')
    });
    let (at, _) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let bytes = text.as_bytes();
    let mut i = at + needle.len();
    let mut depth = 0usize;
    let mut opened = false;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut nesting = 1;
                i += 2;
                while i < bytes.len() && nesting > 0 {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        nesting += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        nesting -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
                if bytes.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                i = text[body..].find(&close).map(|n| body + n + close.len())?;
                continue;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): skip only the former.
                if bytes.get(i + 1) == Some(&b'\\') {
                    i = text[i + 2..].find('\'').map(|n| i + 2 + n + 1)?;
                    continue;
                }
                let next = text[i + 1..].chars().next()?;
                if text[i + 1 + next.len_utf8()..].starts_with('\'') {
                    i += 2 + next.len_utf8();
                    continue;
                }
            }
            b'{' => {
                depth += 1;
                opened = true;
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                if opened && depth == 0 {
                    return Some(start..i + 1);
                }
            }
            b';' if !opened => return None, // a declaration without a body
            _ => {}
        }
        i += 1;
    }
    None
}

fn patch_service_config_whole(path: &Path, text: &str) -> Result<String, PatchError> {
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
                     `.{WITH_CLIENT_PLUGINS}(crate::{MODULE_NAME}::runtime_plugin())` right after \
                     the default plugins by hand (smithy-tls then leaves the file alone), or \
                     leave this crate out of the policy"
                ),
            })
        }
        ServiceConfigState::Anchor(anchor) => anchor,
    };

    let nl = src.newline();
    let hook = format!(".{WITH_CLIENT_PLUGINS}(crate::{MODULE_NAME}::runtime_plugin())");
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
            "expected exactly one call of `{MODULE_NAME}::runtime_plugin` in fn \
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
        })),
        many => Err(PatchError::Ambiguous {
            path: src.path.to_owned(),
            lines: many.iter().map(|m| anchor_line(m)).collect(),
            what: format!("the call `.{WITH_CLIENT_PLUGINS}(...default_plugins(...))` in fn `{SERVICE_CONFIG_FN}`"),
        }),
    }
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
        if let Some(span) = path_ends_with(&call.func, &[MODULE_NAME, "runtime_plugin"]) {
            self.hooks.push(span);
        }
        visit::visit_expr_call(self, call);
    }
}

fn chain_calls(block: &syn::Block) -> ChainCalls<'_> {
    let mut calls = ChainCalls { anchors: Vec::new(), hooks: Vec::new() };
    calls.visit_block(block);
    calls
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

// ---------------------------------------------------------------------------------------------
// aws-config loader
// ---------------------------------------------------------------------------------------------

/// Patches aws-config's `src/lib.rs`: in `impl ConfigLoader`'s `async fn load(self)` (searched
/// in inline modules at any depth, e.g. `mod loader { ... }`), makes the receiver `mut self` if it
/// is not, and inserts as the first statement
/// `if self.http_client.is_none() { self.http_client = crate::default_http_client::default_http_client(); }`
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
    let src = Source::new(path, text);
    let file = src.parse()?;
    let found = find_loader(&file);

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
    let load = match found.loads.as_slice() {
        [] => {
            return Err(PatchError::AnchorNotFound {
                path: path.to_owned(),
                what: "`async fn load(self)` in an inherent `impl ConfigLoader`".to_owned(),
                help: "this does not look like aws-config's `src/lib.rs` (or its loader has an \
                       unexpected shape); leave aws-config out of the policy, or set the HTTP \
                       client with `ConfigLoader::http_client` in application code"
                    .to_owned(),
            })
        }
        [one] => *one,
        many => {
            return Err(PatchError::Ambiguous {
                path: path.to_owned(),
                lines: many.iter().map(|f| f.sig.ident.span().start().line).collect(),
                what: "`async fn load(self)` in `impl ConfigLoader`".to_owned(),
            })
        }
    };

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
        let open = src.end_of(load.block.brace_token.span.open())?;
        let field = "self.http_client";
        let call = format!("crate::{MODULE_NAME}::default_http_client()");
        if src.rest_is_ignorable(open) {
            let fn_indent = src.indent_of_line_at(src.start_of(load.sig.fn_token.span)?);
            let unit = if fn_indent.contains('\t') { "\t" } else { "    " };
            let body_indent =
                body_indent(&src, &load.block, open, fn_indent).unwrap_or_else(|| format!("{fn_indent}{unit}"));
            let lines = [
                format!("{body_indent}// {MARKER} {LOADER_NOTE}"),
                format!("{body_indent}if {field}.is_none() {{"),
                format!("{body_indent}{unit}{field} = {call};"),
                format!("{body_indent}}}"),
            ];
            edits.push(src.lines_after_line_of(open, &lines));
        } else {
            edits.push(Edit {
                at: open,
                text: format!(" /* {MARKER} {LOADER_NOTE} */ if {field}.is_none() {{ {field} = {call}; }}"),
            });
        }
    }
    let out = apply(text, edits);

    let patched = src.reparse(&out)?;
    let again = find_loader(&patched);
    let ok = match again.loads.as_slice() {
        [f] => {
            let is_mut = matches!(f.sig.inputs.first(), Some(syn::FnArg::Receiver(r)) if r.mutability.is_some());
            let hooks = loader_hooks(&f.block);
            if !is_mut || hooks != 1 {
                Err(format!(
                    "expected `load(mut self)` with exactly one call of `{MODULE_NAME}::default_http_client` \
                     after patching, found mut: {is_mut}, calls: {hooks}"
                ))
            } else {
                Ok(())
            }
        }
        other => Err(format!("expected one `ConfigLoader::load` after patching, found {}", other.len())),
    };
    ok.map_err(|message| src.invalid(message))?;
    Ok(out)
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

/// The span of the first token of a statement (its first attribute, if any).
fn first_span_of_stmt(stmt: &syn::Stmt) -> Option<Span> {
    use quote::ToTokens;
    stmt.to_token_stream().into_iter().next().map(|tt| tt.span())
}

/// What [`find_loader`] found.
struct LoaderSearch<'ast> {
    /// `async fn load(self)` (by-value receiver) in inherent `impl ConfigLoader` blocks.
    loads: Vec<&'ast syn::ImplItemFn>,
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

fn find_loader(file: &syn::File) -> LoaderSearch<'_> {
    let mut search = LoaderSearch { loads: Vec::new(), structs: Vec::new() };
    search.visit_file(file);
    search
}

/// Whether `ty` is a path type whose last segment is `name` (`ConfigLoader`, `loader::ConfigLoader`).
fn type_is_named(ty: &syn::Type, name: &str) -> bool {
    match ty {
        syn::Type::Path(p) => p.qself.is_none() && p.path.segments.last().is_some_and(|seg| seg.ident == name),
        syn::Type::Paren(p) => type_is_named(&p.elem, name),
        syn::Type::Group(g) => type_is_named(&g.elem, name),
        _ => false,
    }
}

fn has_named_field(s: &syn::ItemStruct, name: &str) -> bool {
    s.fields.iter().any(|f| f.ident.as_ref().is_some_and(|ident| ident == name))
}

/// Number of calls of a path ending in `default_http_client::default_http_client` in `block`.
fn loader_hooks(block: &syn::Block) -> usize {
    struct Hooks(usize);
    impl<'ast> Visit<'ast> for Hooks {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if path_ends_with(&call.func, &[MODULE_NAME, "default_http_client"]).is_some() {
                self.0 += 1;
            }
            visit::visit_expr_call(self, call);
        }
    }
    let mut hooks = Hooks(0);
    hooks.visit_block(block);
    hooks.0
}

// ---------------------------------------------------------------------------------------------
// Text positions and edits
// ---------------------------------------------------------------------------------------------

/// An insertion of `text` at byte offset `at` of the original text.
#[derive(Debug)]
struct Edit {
    at: usize,
    text: String,
}

/// Applies insertions (offsets refer to the original text).
fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| e.at);
    let mut out = String::with_capacity(text.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut pos = 0;
    for edit in edits {
        let at = edit.at.clamp(pos, text.len());
        out.push_str(text.get(pos..at).unwrap_or_default());
        out.push_str(&edit.text);
        pos = at;
    }
    out.push_str(text.get(pos..).unwrap_or_default());
    out
}

/// The text being patched, with a line table for turning spans into byte offsets.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
    /// Bytes skipped before parsing (a UTF-8 byte-order mark).
    base: usize,
    /// Byte offset (into `text`) of the start of each line; line `n` (1-based) starts at
    /// `line_starts[n - 1]`.
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    fn new(path: &'a Path, text: &'a str) -> Self {
        let base = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        let mut line_starts = vec![base];
        line_starts.extend(text.char_indices().filter(|&(_, c)| c == '\n').map(|(i, _)| i + 1));
        Source { path, text, base, line_starts }
    }

    fn parse(&self) -> Result<syn::File, PatchError> {
        syn::parse_file(&self.text[self.base..]).map_err(|e| {
            let at = e.span().start();
            let (line, column) = if at.line == 0 { (self.line_starts.len(), 1) } else { (at.line, at.column + 1) };
            let lexes = self.text[self.base..].parse::<proc_macro2::TokenStream>().is_ok();
            let message = if lexes {
                e.to_string()
            } else {
                "cannot split the file into tokens (unbalanced delimiter, or unterminated string, \
                 character or block comment)"
                    .to_owned()
            };
            PatchError::Parse { path: self.path.to_owned(), line, column, message }
        })
    }

    /// Parses the patched text, mapping failure to [`PatchError::InvalidResult`].
    fn reparse(&self, out: &str) -> Result<syn::File, PatchError> {
        syn::parse_file(out).map_err(|e| {
            let at = e.span().start();
            self.invalid(format!("line {}, column {}: {e}", at.line, at.column + 1))
        })
    }

    fn invalid(&self, message: String) -> PatchError {
        PatchError::InvalidResult { path: self.path.to_owned(), message }
    }

    /// `"\r\n"` if the file uses CRLF line endings, else `"\n"`.
    fn newline(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
    }

    /// Byte offset of a proc-macro2 position (1-based line, 0-based column in `char`s).
    fn offset(&self, at: LineColumn) -> Result<usize, PatchError> {
        let found = at.line.checked_sub(1).and_then(|idx| {
            let start = *self.line_starts.get(idx)?;
            let end = self.line_starts.get(idx + 1).copied().unwrap_or(self.text.len());
            let line = self.text.get(start..end)?;
            match line.char_indices().nth(at.column) {
                Some((i, _)) => Some(start + i),
                None if line.chars().count() == at.column => Some(end),
                None => None,
            }
        });
        found.ok_or_else(|| {
            self.invalid(format!(
                "internal error: source position line {}, column {} is outside the file",
                at.line,
                at.column + 1
            ))
        })
    }

    fn start_of(&self, span: Span) -> Result<usize, PatchError> {
        self.offset(span.start())
    }

    fn end_of(&self, span: Span) -> Result<usize, PatchError> {
        self.offset(span.end())
    }

    /// Byte offset of the start of the line containing `offset`.
    fn line_start(&self, offset: usize) -> usize {
        let idx = self.line_starts.partition_point(|&start| start <= offset);
        self.line_starts.get(idx.saturating_sub(1)).copied().unwrap_or(self.base)
    }

    /// Byte offset of the `\n` ending the line containing `offset`, if any.
    fn newline_after(&self, offset: usize) -> Option<usize> {
        self.text.get(offset..)?.find('\n').map(|i| offset + i)
    }

    /// The leading spaces and tabs of the line containing `offset`.
    fn indent_of_line_at(&self, offset: usize) -> &'a str {
        let start = self.line_start(offset);
        let line = self.text.get(start..).unwrap_or_default();
        let len = line.len() - line.trim_start_matches([' ', '\t']).len();
        &line[..len]
    }

    /// Whether only whitespace precedes `offset` on its line.
    fn starts_its_line(&self, offset: usize) -> bool {
        self.text
            .get(self.line_start(offset)..offset)
            .is_some_and(|before| before.chars().all(|c| c == ' ' || c == '\t'))
    }

    /// Whether the rest of the line after `offset` is blank or a plain `//` comment (not a doc
    /// comment, which would attach to what follows), so that whole lines may go after it.
    fn rest_is_ignorable(&self, offset: usize) -> bool {
        let end = self.newline_after(offset).unwrap_or(self.text.len());
        let rest = self.text.get(offset..end).unwrap_or_default().trim();
        rest.is_empty() || (rest.starts_with("//") && !rest.starts_with("///") && !rest.starts_with("//!"))
    }

    /// An edit inserting `lines` as whole lines after the line containing `offset`.
    fn lines_after_line_of(&self, offset: usize, lines: &[String]) -> Edit {
        let nl = self.newline();
        match self.newline_after(offset) {
            Some(newline) => {
                let mut text = String::new();
                for line in lines {
                    text.push_str(line);
                    text.push_str(nl);
                }
                Edit { at: newline + 1, text }
            }
            None => {
                let mut text = String::new();
                for line in lines {
                    text.push_str(nl);
                    text.push_str(line);
                }
                Edit { at: self.text.len(), text }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn function_extent_skips_braces_in_strings_comments_and_chars() {
        let text = "// fn other() {\nconst A: &str = \"}\";\npub(crate) fn base_client_runtime_plugins(x: u8) -> u8 {\n    let s = \"{ not a brace\";\n    let r = r#\"}}\"#;\n    let c = '}';\n    let l: &'static str = \"x\";\n    /* } /* nested } */ */\n    if x > 0 { x } else { 0 }\n}\nfn after() {}\n";
        let range = super::function_extent(text, "base_client_runtime_plugins").expect("found");
        let item = &text[range];
        assert!(item.starts_with("pub(crate) fn base_client_runtime_plugins"), "{item}");
        assert!(item.ends_with("else { 0 }\n}"), "{item}");
        syn::parse_file(item).expect("the extent is a whole item");
        assert_eq!(super::function_extent("fn base_client_runtime_plugins();", "base_client_runtime_plugins"), None);
        assert_eq!(
            super::function_extent(
                "fn base_client_runtime_plugins() {} fn base_client_runtime_plugins() {}",
                "base_client_runtime_plugins"
            ),
            None
        );
        assert_eq!(
            super::function_extent("fn base_client_runtime_plugins_x() {}", "base_client_runtime_plugins"),
            None
        );
    }

    #[test]
    fn fast_path_matches_the_whole_file_path_on_real_files() {
        for dir in registry_crates("aws-sdk-sts") {
            if let Some((path, text)) = real(&dir, "src/config.rs") {
                let fast = patch_service_config(&path, &text);
                let whole = patch_service_config_whole(&path, &text);
                assert_eq!(fast, whole, "{}", path.display());
            }
        }
    }

    use super::*;
    use std::path::PathBuf;

    fn fixture_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/patch")
    }

    fn fixture(name: &str) -> String {
        let path = fixture_dir().join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    /// A short, stable path for error messages.
    fn fx(name: &str) -> PathBuf {
        PathBuf::from("fixtures").join(name)
    }

    fn snapshot(name: &str, value: &str) {
        insta::with_settings!({
            snapshot_path => "../tests/fixtures/patch/snapshots",
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(name, value);
        });
    }

    /// If `after` is `before` with whole lines inserted (and nothing else changed), returns the
    /// inserted lines. Lines keep their `\r`, so a CRLF file must get CRLF insertions.
    fn inserted_lines<'a>(before: &str, after: &'a str) -> Option<Vec<&'a str>> {
        let mut old = before.split('\n').peekable();
        let mut inserted = Vec::new();
        for line in after.split('\n') {
            if old.peek() == Some(&line) {
                old.next();
            } else {
                inserted.push(line);
            }
        }
        old.peek().is_none().then_some(inserted)
    }

    const SERVICE_HOOK: &str = "crate::default_http_client::runtime_plugin()";
    const LOADER_HOOK: &str = "crate::default_http_client::default_http_client()";

    /// Patches, checks the common invariants and returns the output.
    fn patch_ok(f: fn(&Path, &str) -> Result<String, PatchError>, name: &str, input: &str, hook: &str) -> String {
        let out = f(&fx(name), input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_ne!(out, input, "{name}: nothing was inserted");
        syn::parse_file(out.trim_start_matches('\u{feff}'))
            .unwrap_or_else(|e| panic!("{name}: output does not parse: {e}"));
        assert_eq!(out.matches(hook).count(), input.matches(hook).count() + 1, "{name}: hook count");
        assert_eq!(f(&fx(name), &out).as_deref(), Ok(out.as_str()), "{name}: not idempotent");
        out
    }

    // ----- crate root ------------------------------------------------------------------------

    #[test]
    fn crate_root_goes_after_last_mod() {
        let input = fixture("lib_root.rs");
        let out = patch_ok(patch_crate_root, "lib_root.rs", &input, "pub mod default_http_client;");
        assert_eq!(
            inserted_lines(&input, &out),
            Some(vec![
                "// smithy-tls: default HTTP client chosen by the smithy-tls policy",
                "pub mod default_http_client;"
            ])
        );
        let lines: Vec<&str> = out.lines().collect();
        let at = lines.iter().position(|l| *l == "pub mod default_http_client;").unwrap();
        assert_eq!(lines[at - 2], "mod serde_util;");
        snapshot("crate_root_lib", &out);
    }

    #[test]
    fn crate_root_without_mods_appends_after_inner_attributes() {
        let input = fixture("lib_no_mods.rs");
        let out = patch_ok(patch_crate_root, "lib_no_mods.rs", &input, "pub mod default_http_client;");
        assert!(out.starts_with(&input));
        snapshot("crate_root_no_mods", &out);

        // Only inner attributes and docs, no trailing newline.
        let input = "#![allow(dead_code)]\n//! Docs only.";
        let out = patch_ok(patch_crate_root, "tiny.rs", input, "pub mod default_http_client;");
        assert_eq!(
            out,
            "#![allow(dead_code)]\n//! Docs only.\n// smithy-tls: default HTTP client chosen by the smithy-tls policy\npub mod default_http_client;\n"
        );
        // Empty file.
        let out = patch_ok(patch_crate_root, "empty.rs", "", "pub mod default_http_client;");
        assert!(out.starts_with("// smithy-tls:"));
    }

    #[test]
    fn crate_root_is_noop_when_module_exists() {
        for input in [
            "pub mod a;\npub mod default_http_client;\n",
            "mod default_http_client { pub fn default_http_client() {} }\nmod z;\n",
            "#[cfg(feature = \"x\")]\npub(crate) mod default_http_client;\n",
        ] {
            assert_eq!(patch_crate_root(&fx("lib.rs"), input).as_deref(), Ok(input));
        }
    }

    #[test]
    fn crate_root_after_inline_mod_and_trailing_comment() {
        let input = "#![allow(x)]\nmod a;\nmod loader {\n    pub struct ConfigLoader;\n} // end loader\n\npub use loader::ConfigLoader;\n";
        let out = patch_ok(patch_crate_root, "lib.rs", input, "pub mod default_http_client;");
        assert_eq!(
            out,
            "#![allow(x)]\nmod a;\nmod loader {\n    pub struct ConfigLoader;\n} // end loader\n// smithy-tls: default HTTP client chosen by the smithy-tls policy\npub mod default_http_client;\n\npub use loader::ConfigLoader;\n"
        );
        // Code after the last mod on the same line: the line is broken after the mod item.
        let input = "mod a; pub use a::A;\n";
        let out = patch_ok(patch_crate_root, "lib.rs", input, "pub mod default_http_client;");
        assert_eq!(
            out,
            "mod a;\n// smithy-tls: default HTTP client chosen by the smithy-tls policy\npub mod default_http_client;\n pub use a::A;\n"
        );
    }

    #[test]
    fn crate_root_keeps_crlf_and_bom() {
        let input = format!("\u{feff}{}", fixture("lib_root.rs").replace('\n', "\r\n"));
        let out = patch_ok(patch_crate_root, "lib_root.rs", &input, "pub mod default_http_client;");
        assert!(out.starts_with('\u{feff}'));
        assert_eq!(out.matches('\n').count(), out.matches("\r\n").count(), "mixed line endings");
        assert_eq!(inserted_lines(&input, &out).map(|l| l.len()), Some(2));
    }

    // ----- service config --------------------------------------------------------------------

    #[test]
    fn service_config_formatted_chain() {
        let input = fixture("config_formatted.rs");
        assert_eq!(has_service_config_anchor(&fx("config_formatted.rs"), &input), Ok(true));
        let out = patch_ok(patch_service_config, "config_formatted.rs", &input, SERVICE_HOOK);
        let indent = " ".repeat(24);
        assert_eq!(
            inserted_lines(&input, &out),
            Some(vec![
                format!("{indent}// smithy-tls: install the policy-chosen default HTTP client").as_str(),
                format!("{indent}.with_client_plugins(crate::default_http_client::runtime_plugin())").as_str(),
            ])
        );
        // Right after the line closing the default plugins, before `// user config`.
        let lines: Vec<&str> = out.lines().collect();
        let at = lines.iter().position(|l| l.contains(SERVICE_HOOK)).unwrap();
        assert_eq!(lines[at - 2].trim(), "))");
        assert_eq!(lines[at + 1].trim(), "// user config");
        assert_eq!(has_service_config_anchor(&fx("config_formatted.rs"), &out), Ok(true));
        snapshot("service_config_formatted", &out);
    }

    #[test]
    fn service_config_config_moved_with_trailing_comment() {
        let input = fixture("config_moved.rs");
        let out = patch_ok(patch_service_config, "config_moved.rs", &input, SERVICE_HOOK);
        let inserted = inserted_lines(&input, &out).expect("only insertions");
        assert_eq!(inserted.len(), 2);
        assert!(inserted[1].starts_with(&format!("{}.with_client_plugins(", " ".repeat(20))));
        assert!(out.contains("    )) // trailing note\n                    // smithy-tls:"));
        snapshot("service_config_moved", &out);
    }

    #[test]
    fn service_config_one_line_unicode() {
        let input = fixture("config_oneline.rs");
        let out = patch_ok(patch_service_config, "config_oneline.rs", &input, SERVICE_HOOK);
        assert_eq!(out.lines().count(), input.lines().count());
        assert!(out.contains(
            "with_retry_partition_name(\"ëxample\"))) /* smithy-tls: install the policy-chosen default HTTP client */ \
             .with_client_plugins(crate::default_http_client::runtime_plugin()).with_client_plugin("
        ));
        snapshot("service_config_oneline", &out);
    }

    #[test]
    fn service_config_use_imported_default_plugins_in_impl() {
        let input = fixture("config_use_import.rs");
        assert_eq!(has_service_config_anchor(&fx("config_use_import.rs"), &input), Ok(true));
        let out = patch_ok(patch_service_config, "config_use_import.rs", &input, SERVICE_HOOK);
        // The anchor is the last call: the `;` moves after the hook.
        assert!(out.contains(
            "            .with_client_plugins(default_plugins(DefaultPluginParams::new()))\n            \
             // smithy-tls: install the policy-chosen default HTTP client\n            \
             .with_client_plugins(crate::default_http_client::runtime_plugin());\n"
        ));
        snapshot("service_config_use_import", &out);
    }

    #[test]
    fn service_config_crlf_bom_and_tabs() {
        let input = format!("\u{feff}{}", fixture("config_formatted.rs").replace('\n', "\r\n"));
        let out = patch_ok(patch_service_config, "config_formatted.rs", &input, SERVICE_HOOK);
        assert_eq!(out.matches('\n').count(), out.matches("\r\n").count(), "mixed line endings");
        assert_eq!(inserted_lines(&input, &out).map(|l| l.len()), Some(2));

        let input = "fn base_client_runtime_plugins() -> P {\n\tP::new()\n\t\t.with_client_plugins(default_plugins(x))\n\t\t.with_client_plugin(y)\n}\n";
        let out = patch_ok(patch_service_config, "tabs.rs", input, SERVICE_HOOK);
        assert_eq!(
            inserted_lines(input, &out),
            Some(vec![
                "\t\t// smithy-tls: install the policy-chosen default HTTP client",
                "\t\t.with_client_plugins(crate::default_http_client::runtime_plugin())",
            ])
        );
    }

    #[test]
    fn service_config_missing_function() {
        let input = fixture("config_no_fn.rs");
        let err = patch_service_config(&fx("config_no_fn.rs"), &input).unwrap_err();
        assert!(
            matches!(&err, PatchError::AnchorNotFound { what, .. } if what.contains("base_client_runtime_plugins"))
        );
        let msg = err.to_string();
        assert!(msg.starts_with("fixtures/config_no_fn.rs: cannot find fn `base_client_runtime_plugins`"), "{msg}");
        assert!(msg.contains("leave this crate out of the policy"), "{msg}");
        assert_eq!(has_service_config_anchor(&fx("config_no_fn.rs"), &input), Ok(false));
    }

    #[test]
    fn service_config_missing_anchor() {
        let input = fixture("config_no_anchor.rs");
        let err = patch_service_config(&fx("config_no_anchor.rs"), &input).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, PatchError::AnchorNotFound { .. }));
        assert!(msg.contains("(line 1)") && msg.contains("by hand"), "{msg}");
        assert_eq!(has_service_config_anchor(&fx("config_no_anchor.rs"), &input), Ok(false));
    }

    #[test]
    fn service_config_two_candidates_is_ambiguous() {
        let input = fixture("config_two_anchors.rs");
        let err = patch_service_config(&fx("config_two_anchors.rs"), &input).unwrap_err();
        assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![4, 7]), "{err:?}");
        let msg = err.to_string();
        assert!(msg.starts_with("fixtures/config_two_anchors.rs: lines 4, 7: found 2 candidates"), "{msg}");
        assert_eq!(has_service_config_anchor(&fx("config_two_anchors.rs"), &input), Err(err));

        let two_fns = "fn base_client_runtime_plugins() {}\nmod m {\n    fn base_client_runtime_plugins() {}\n}\n";
        let err = patch_service_config(&fx("two.rs"), two_fns).unwrap_err();
        assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![1, 3]), "{err:?}");
    }

    #[test]
    fn service_config_syntax_error() {
        let input = fixture("config_syntax_error.rs");
        let err = patch_service_config(&fx("config_syntax_error.rs"), &input).unwrap_err();
        let PatchError::Parse { line, column, .. } = &err else { panic!("{err:?}") };
        assert_eq!(*line, 4, "{err}");
        assert!(*column > 1);
        let msg = err.to_string();
        assert!(msg.starts_with(&format!("fixtures/config_syntax_error.rs:4:{column}: cannot parse")), "{msg}");
        assert_eq!(has_service_config_anchor(&fx("config_syntax_error.rs"), &input), Err(err.clone()));
        assert!(matches!(patch_crate_root(&fx("x.rs"), &input), Err(PatchError::Parse { line: 4, .. })));
        assert!(matches!(patch_aws_config_loader(&fx("x.rs"), &input), Err(PatchError::Parse { line: 4, .. })));
        // Lexer errors point at the mismatched closer, or at the unclosed opener.
        let err = patch_service_config(&fx("lex.rs"), "fn a() {\n    let b = (1, 2;\n    c\n}\n").unwrap_err();
        assert!(
            matches!(&err, PatchError::Parse { line: 4, column: 1, message, .. } if message.contains("unbalanced")),
            "{err:?}"
        );
        let err = patch_service_config(&fx("eof.rs"), "fn a() {\n    let x = 1;\n").unwrap_err();
        assert!(matches!(err, PatchError::Parse { line: 1, column: 8, .. }), "{err:?}");
    }

    #[test]
    fn service_config_hook_anywhere_in_fn_counts_as_patched() {
        let input = "fn base_client_runtime_plugins() -> P {\n    let p = P::new().with_client_plugins(default_plugins(x));\n    p.with_client_plugins(crate::default_http_client::runtime_plugin())\n}\n";
        assert_eq!(patch_service_config(&fx("c.rs"), input).as_deref(), Ok(input));
        assert_eq!(has_service_config_anchor(&fx("c.rs"), input), Ok(true));
    }

    // ----- aws-config loader -----------------------------------------------------------------

    #[test]
    fn loader_in_inline_module() {
        let input = fixture("loader.rs");
        let out = patch_ok(patch_aws_config_loader, "loader.rs", &input, LOADER_HOOK);
        assert!(out.contains("        pub async fn load(mut self) -> SdkConfig {\n"));
        let unmutated = out.replacen("load(mut self)", "load(self)", 1);
        let indent = " ".repeat(12);
        assert_eq!(
            inserted_lines(&input, &unmutated),
            Some(vec![
                format!("{indent}// smithy-tls: fall back to the policy-chosen default HTTP client").as_str(),
                format!("{indent}if self.http_client.is_none() {{").as_str(),
                format!("{indent}    self.http_client = crate::default_http_client::default_http_client();").as_str(),
                format!("{indent}}}").as_str(),
            ])
        );
        snapshot("loader", &out);
    }

    #[test]
    fn loader_already_mut_self_with_tabs_nested() {
        let input = fixture("loader_mut_self.rs");
        let out = patch_ok(patch_aws_config_loader, "loader_mut_self.rs", &input, LOADER_HOOK);
        assert_eq!(inserted_lines(&input, &out).map(|l| l.len()), Some(4), "receiver must stay as is");
        assert!(out.contains("\t\t\t\tif self.http_client.is_none() {\n\t\t\t\t\tself.http_client ="));
        snapshot("loader_mut_self", &out);
    }

    #[test]
    fn loader_partially_patched_gets_mut_only() {
        let input = "mod loader {\n    impl ConfigLoader {\n        pub async fn load(self) -> SdkConfig {\n            if self.http_client.is_none() { self.http_client = crate::default_http_client::default_http_client(); }\n            todo!()\n        }\n    }\n}\n";
        let out = patch_aws_config_loader(&fx("l.rs"), input).unwrap();
        assert_eq!(out, input.replace("load(self)", "load(mut self)"));
        assert_eq!(patch_aws_config_loader(&fx("l.rs"), &out).as_deref(), Ok(out.as_str()));
    }

    #[test]
    fn loader_one_line_body() {
        let input = "impl ConfigLoader { pub async fn load(self) -> SdkConfig { build(self.http_client) } }\n";
        let out = patch_ok(patch_aws_config_loader, "l.rs", input, LOADER_HOOK);
        assert_eq!(
            out,
            "impl ConfigLoader { pub async fn load(mut self) -> SdkConfig { /* smithy-tls: fall back to the policy-chosen default HTTP client */ \
             if self.http_client.is_none() { self.http_client = crate::default_http_client::default_http_client(); } build(self.http_client) } }\n"
        );
    }

    #[test]
    fn loader_errors() {
        let err = patch_aws_config_loader(&fx("loader_old.rs"), &fixture("loader_old.rs")).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, PatchError::AnchorNotFound { .. }));
        assert!(msg.contains("field `http_client`") && msg.contains("(line 2)"), "{msg}");

        let err = patch_aws_config_loader(&fx("config_formatted.rs"), &fixture("config_formatted.rs")).unwrap_err();
        assert!(err.to_string().contains("cannot find `async fn load(self)`"), "{err}");

        // `load(&self)`, trait impls and non-async `load` do not qualify.
        let input = "impl ConfigLoader { async fn load(&self) {} fn load2(self) {} }\nimpl Load for ConfigLoader { async fn load(self) {} }\n";
        assert!(matches!(patch_aws_config_loader(&fx("l.rs"), input), Err(PatchError::AnchorNotFound { .. })));

        let input = "#[cfg(a)]\nimpl ConfigLoader {\n    async fn load(self) {}\n}\n#[cfg(not(a))]\nimpl ConfigLoader {\n    async fn load(self) {}\n}\n";
        let err = patch_aws_config_loader(&fx("l.rs"), input).unwrap_err();
        assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![3, 7]), "{err:?}");
    }

    // ----- robustness ------------------------------------------------------------------------

    #[test]
    fn never_panics_on_truncated_input() {
        for name in ["config_formatted.rs", "config_oneline.rs", "loader.rs", "lib_root.rs"] {
            let text = fixture(name);
            let cuts = text.char_indices().map(|(i, _)| i).step_by(5).chain([text.len()]);
            for cut in cuts {
                let prefix = &text[..cut];
                let _ = patch_crate_root(&fx(name), prefix);
                let _ = patch_service_config(&fx(name), prefix);
                let _ = has_service_config_anchor(&fx(name), prefix);
                let _ = patch_aws_config_loader(&fx(name), prefix);
            }
        }
    }

    // ----- real published sources -----------------------------------------------------------

    /// Source directories of every cached version of `krate` in the cargo registry.
    fn registry_crates(krate: &str) -> Vec<PathBuf> {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
        let Some(src) = cargo_home.map(|home| home.join("registry/src")) else {
            return Vec::new();
        };
        let prefix = format!("{krate}-");
        let mut found = Vec::new();
        for index in std::fs::read_dir(src).into_iter().flatten().flatten() {
            for dir in std::fs::read_dir(index.path()).into_iter().flatten().flatten() {
                let name = dir.file_name().to_string_lossy().into_owned();
                let is_version =
                    name.strip_prefix(&prefix).is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()));
                if is_version {
                    found.push(dir.path());
                }
            }
        }
        found.sort();
        if found.is_empty() {
            println!("note: no {krate} sources in the cargo registry; skipping the real-file check");
        }
        found
    }

    fn real(dir: &Path, file: &str) -> Option<(PathBuf, String)> {
        let path = dir.join(file);
        std::fs::read_to_string(&path).ok().map(|text| (path, text))
    }

    fn check_real(
        f: fn(&Path, &str) -> Result<String, PatchError>,
        path: &Path,
        input: &str,
        hook: &str,
        undo: Option<(&str, &str)>,
        expected_inserted: usize,
    ) {
        let out = f(path, input).unwrap_or_else(|e| panic!("{e}"));
        syn::parse_file(&out).unwrap_or_else(|e| panic!("{}: output does not parse: {e}", path.display()));
        assert_eq!(out.matches(hook).count(), 1, "{}: hook count", path.display());
        assert_eq!(f(path, &out).as_deref(), Ok(out.as_str()), "{}: not idempotent", path.display());
        let comparable = match undo {
            Some((from, to)) => out.replacen(from, to, 1),
            None => out.clone(),
        };
        let inserted = inserted_lines(input, &comparable)
            .unwrap_or_else(|| panic!("{}: output is not the input plus inserted lines", path.display()));
        assert_eq!(inserted.len(), expected_inserted, "{}: {inserted:#?}", path.display());
        assert!(inserted[0].trim_start().starts_with("// smithy-tls:"), "{}", path.display());
        println!("ok: {}", path.display());
    }

    #[test]
    fn real_aws_sdk_sts() {
        for dir in registry_crates("aws-sdk-sts") {
            if let Some((path, text)) = real(&dir, "src/config.rs") {
                if !text.contains("fn base_client_runtime_plugins") {
                    // Pre-orchestrator (2023) crates have no anchor: they are refused, not mangled.
                    assert_eq!(has_service_config_anchor(&path, &text), Ok(false), "{}", path.display());
                    assert!(matches!(patch_service_config(&path, &text), Err(PatchError::AnchorNotFound { .. })));
                    continue;
                }
                assert_eq!(has_service_config_anchor(&path, &text), Ok(true), "{}", path.display());
                check_real(patch_service_config, &path, &text, SERVICE_HOOK, None, 2);
            }
            if let Some((path, text)) = real(&dir, "src/lib.rs") {
                check_real(patch_crate_root, &path, &text, "pub mod default_http_client;", None, 2);
            }
        }
    }

    #[test]
    fn real_aws_config() {
        for dir in registry_crates("aws-config") {
            let Some((path, text)) = real(&dir, "src/lib.rs") else {
                continue;
            };
            let version = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if version.starts_with("aws-config-0.") {
                // Pre-1.0 loaders have no `http_client`: they must be refused, not mangled.
                if let Err(e) = patch_aws_config_loader(&path, &text) {
                    assert!(matches!(e, PatchError::AnchorNotFound { .. }), "{e}");
                    continue;
                }
            }
            check_real(
                patch_aws_config_loader,
                &path,
                &text,
                LOADER_HOOK,
                Some(("pub async fn load(mut self)", "pub async fn load(self)")),
                4,
            );
            check_real(patch_crate_root, &path, &text, "pub mod default_http_client;", None, 2);
        }
    }
}
