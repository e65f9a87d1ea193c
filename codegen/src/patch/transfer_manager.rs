//! The S3 transfer manager's hooks (see `crate::transfer_manager`):
//!
//! - `src/runtime/managed.rs`: the pool's `.tls_provider(..)` argument becomes
//!   `crate::default_http_client::transport_provider()`, its original kept in the note above the
//!   call for `revert`; the `use` of the transport's rustls types is compiled out (`#[cfg(any())]`),
//!   since those types exist only where a rustls feature is on;
//! - `src/config.rs`: `runtime_http`'s guard on `enable_runtime_http` also asks
//!   `crate::default_http_client::runtime_http()`, so the transport runs only where the policy
//!   gives the pool a provider.

use std::ops::Range;
use std::path::Path;

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::{self, Visit};

use super::text::Source;
use super::{first_span, last_span, path_ends_with, PatchError, MARKER, MODULE_NAME};
use crate::emit::transfer_manager_hook_fn::{RUNTIME_HTTP, TRANSPORT_PROVIDER};

/// The file that builds the transport.
pub const TRANSPORT_FILE: &str = "src/runtime/managed.rs";
/// The file that decides whether the transport runs.
pub const CONFIG_FILE: &str = "src/config.rs";

/// The note above the replaced provider; the original follows it in backquotes.
const PROVIDER_NOTE: &str = "the TLS provider the policy gives this target, was";
/// The note above the compiled-out `use`.
const USE_NOTE: &str = "the transport's provider comes from the policy: these types are not needed";
/// Never true: the `use` stays in the file, out of the build.
const NEVER: &str = "#[cfg(any())]";
/// The function whose guard gets the hook.
const RUNTIME_HTTP_FN: &str = "runtime_http";
/// The field the guard reads.
const ENABLE_FIELD: &str = "enable_runtime_http";
/// The method whose argument is replaced.
const TLS_PROVIDER: &str = "tls_provider";

fn help() -> String {
    "this is not an aws-sdk-s3-transfer-manager layout smithy-tls knows (0.3); restore the published sources, \
     or leave the crate out of the tree"
        .to_owned()
}

fn not_found(path: &Path, what: &str) -> PatchError {
    PatchError::AnchorNotFound { path: path.to_owned(), what: what.to_owned(), help: help() }
}

fn exactly_one<T>(src: &Source<'_>, found: Vec<(T, Span)>, what: &str) -> Result<T, PatchError> {
    let lines: Vec<usize> = found.iter().map(|(_, span)| span.start().line).collect();
    let mut found = found.into_iter();
    match (found.next(), found.next()) {
        (Some((one, _)), None) => Ok(one),
        (None, _) => Err(not_found(src.path, what)),
        (Some(_), Some(_)) => Err(PatchError::Ambiguous { path: src.path.to_owned(), lines, what: what.to_owned() }),
    }
}

/// Whether `expr` calls `crate::default_http_client::<name>()`.
fn is_hook_call(expr: &syn::Expr, name: &str) -> bool {
    matches!(expr, syn::Expr::Call(call) if call.args.is_empty() && path_ends_with(&call.func, &[MODULE_NAME, name]).is_some())
}

/// The `.tls_provider(..)` calls of a file.
#[derive(Default)]
struct ProviderCalls<'a>(Vec<&'a syn::ExprMethodCall>);

impl<'a> Visit<'a> for ProviderCalls<'a> {
    fn visit_expr_method_call(&mut self, call: &'a syn::ExprMethodCall) {
        if call.method == TLS_PROVIDER && call.args.len() == 1 {
            self.0.push(call);
        }
        visit::visit_expr_method_call(self, call);
    }
}

/// The top-level `use` items that name the transport's `rustls_provider` module.
fn rustls_uses(file: &syn::File) -> Vec<&syn::ItemUse> {
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Use(u) if u.to_token_stream().to_string().contains("rustls_provider") => Some(u),
            _ => None,
        })
        .collect()
}

fn is_never(attr: &syn::Attribute) -> bool {
    attr.to_token_stream().to_string().replace(' ', "") == NEVER
}

/// Patches `src/runtime/managed.rs`: the pool's provider from the policy, the rustls `use` out.
///
/// # Errors
/// [`PatchError::AnchorNotFound`] without exactly such a call and `use`;
/// [`PatchError::Ambiguous`] with several; [`PatchError::Parse`] for invalid Rust.
pub fn patch_transfer_manager_transport(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let nl = src.newline();
    let mut calls = ProviderCalls::default();
    calls.visit_file(&file);
    let found = calls.0.iter().map(|call| (*call, call.method.span())).collect();
    let call = exactly_one(&src, found, "the connection pool's `.tls_provider(..)` call")?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let arg = &call.args[0];
    if !is_hook_call(arg, TRANSPORT_PROVIDER) {
        let tokens = arg.to_token_stream();
        let (start, end) = (src.start_of(first_span(&tokens))?, src.end_of(last_span(&tokens))?);
        // The original goes into the note above the call, from where revert puts it back as it was.
        let original = &text[start..end];
        let dot = src.start_of(call.dot_token.spans[0])?;
        if !src.starts_its_line(dot) || original.contains(['`', '\n', '\r']) || original.contains("//") {
            return Err(not_found(path, "a `.tls_provider(..)` call on a line of its own, its argument on that line"));
        }
        let line = src.line_start(dot);
        let indent = src.indent_of_line_at(dot);
        edits.push((line..line, format!("{indent}// {MARKER} {PROVIDER_NOTE} `{original}`{nl}")));
        edits.push((start..end, format!("crate::{MODULE_NAME}::{TRANSPORT_PROVIDER}()")));
    }
    let uses = rustls_uses(&file).into_iter().map(|u| (u, u.use_token.span)).collect();
    let item = exactly_one(&src, uses, "the `use` of the transport's `rustls_provider` types")?;
    if !item.attrs.iter().any(is_never) {
        let start = src.start_of(first_span(&item.to_token_stream()))?;
        if !src.starts_its_line(start) {
            return Err(not_found(path, "the `use` of the transport's `rustls_provider` types on a line of its own"));
        }
        let line = src.line_start(start);
        let indent = src.indent_of_line_at(start);
        edits.push((line..line, format!("{indent}// {MARKER} {USE_NOTE}{nl}{indent}{NEVER}{nl}")));
    }
    let out = replace(text, edits);
    src.reparse(&out)?;
    Ok(out)
}

/// Takes [`patch_transfer_manager_transport`]'s edits out again.
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust; [`PatchError::InvalidResult`] when the replaced call's
/// note is missing (the original cannot be put back).
pub fn unpatch_transfer_manager_transport(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut calls = ProviderCalls::default();
    calls.visit_file(&file);
    for call in calls.0.iter().filter(|call| is_hook_call(&call.args[0], TRANSPORT_PROVIDER)) {
        let tokens = call.args[0].to_token_stream();
        let (start, end) = (src.start_of(first_span(&tokens))?, src.end_of(last_span(&tokens))?);
        let line = src.line_start(src.start_of(call.dot_token.spans[0])?);
        let note = (line > 0).then(|| src.line_start(line - 1)).and_then(|note| {
            let original = text[note..line].trim().strip_prefix(&format!("// {MARKER} {PROVIDER_NOTE} `"))?;
            Some((note..line, original.strip_suffix('`')?.to_owned()))
        });
        let Some((note, original)) = note else {
            return Err(src.invalid(format!("the `{TLS_PROVIDER}` hook has no note with its original above it")));
        };
        edits.push((note, String::new()));
        edits.push((start..end, original));
    }
    for item in rustls_uses(&file) {
        for attr in item.attrs.iter().filter(|attr| is_never(attr)) {
            let start = src.line_start(src.start_of(attr.pound_token.span)?);
            let end = src.newline_after(start).map_or(text.len(), |nl| nl + 1);
            let note = (start > 0)
                .then(|| src.line_start(start - 1))
                .filter(|note| text[*note..start].trim() == format!("// {MARKER} {USE_NOTE}"));
            edits.push((note.unwrap_or(start)..end, String::new()));
        }
    }
    let out = replace(text, edits);
    src.reparse(&out)?;
    Ok(out)
}

/// Whether `expr` reads the field `<x>.enable_runtime_http` and nothing else.
fn is_enable_field(expr: &syn::Expr) -> bool {
    matches!(expr, syn::Expr::Field(f) if matches!(&f.member, syn::Member::Named(name) if name == ENABLE_FIELD))
}

/// The match-arm guards of fn `runtime_http` that are `<x>.enable_runtime_http`, alone or with
/// the hook after it (`&& crate::default_http_client::runtime_http()`). Any other guard is not
/// one the hook can join without changing what it means.
fn runtime_http_guards(file: &syn::File) -> Vec<&syn::Expr> {
    struct Guards<'a>(Vec<&'a syn::Expr>);
    impl<'a> Visit<'a> for Guards<'a> {
        fn visit_arm(&mut self, arm: &'a syn::Arm) {
            if let Some((_, guard)) = &arm.guard {
                if is_enable_field(guard) || guard_hook(guard).is_some_and(is_enable_field) {
                    self.0.push(guard);
                }
            }
            visit::visit_arm(self, arm);
        }
    }
    struct Functions<'a>(Vec<&'a syn::ImplItemFn>);
    impl<'a> Visit<'a> for Functions<'a> {
        fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
            if f.sig.ident == RUNTIME_HTTP_FN {
                self.0.push(f);
            }
        }
    }
    let mut functions = Functions(Vec::new());
    functions.visit_file(file);
    let mut guards = Guards(Vec::new());
    for f in functions.0 {
        guards.visit_impl_item_fn(f);
    }
    guards.0
}

/// The hook at the end of a guard: `<guard> && crate::default_http_client::runtime_http()`.
fn guard_hook(guard: &syn::Expr) -> Option<&syn::Expr> {
    match guard {
        syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) && is_hook_call(&b.right, RUNTIME_HTTP) => {
            Some(&b.left)
        }
        _ => None,
    }
}

/// Patches `src/config.rs`: the transport runs only where [`RUNTIME_HTTP`] says.
///
/// # Errors
/// [`PatchError::AnchorNotFound`] without exactly one match-arm guard on `enable_runtime_http` in
/// a method `runtime_http`; [`PatchError::Parse`] for invalid Rust.
pub fn patch_transfer_manager_config(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let guards = runtime_http_guards(&file).into_iter().map(|g| (g, first_span(&g.to_token_stream()))).collect();
    let guard =
        exactly_one(&src, guards, "the `<config>.enable_runtime_http` guard in `S3ClientConfig`'s `runtime_http`")?;
    if guard_hook(guard).is_some() {
        return Ok(text.to_owned());
    }
    let end = src.end_of(last_span(&guard.to_token_stream()))?;
    let out = replace(text, vec![(end..end, format!(" && crate::{MODULE_NAME}::{RUNTIME_HTTP}()"))]);
    src.reparse(&out)?;
    Ok(out)
}

/// Takes [`patch_transfer_manager_config`]'s hook out again.
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust.
pub fn unpatch_transfer_manager_config(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    let mut edits = Vec::new();
    for guard in runtime_http_guards(&file) {
        if let Some(left) = guard_hook(guard) {
            let start = src.end_of(last_span(&left.to_token_stream()))?;
            let end = src.end_of(last_span(&guard.to_token_stream()))?;
            edits.push((start..end, String::new()));
        }
    }
    let out = replace(text, edits);
    src.reparse(&out)?;
    Ok(out)
}

/// `text` with each range replaced (ranges do not overlap).
fn replace(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for (range, with) in edits {
        out.push_str(&text[at..range.start.max(at)]);
        out.push_str(&with);
        at = range.end.max(at);
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSPORT: &str = "use aws_smithy_http_client::pool::ConnectionPool;\n\
        use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};\n\n\
        fn build() -> ConnectionPool {\n    ConnectionPool::builder()\n        .idle_timeout(T)\n        \
        .tls_provider(Provider::Rustls(CryptoMode::AwsLc))\n        .build_https()\n        .expect(\"pool\")\n}\n";

    const CONFIG: &str = "impl Config {\n    pub(crate) fn runtime_http(&self) -> Option<u8> {\n        \
        match self.source.as_ref()? {\n            Source::FromConfig(config) if config.enable_runtime_http => Some(1),\n            \
        _ => None,\n        }\n    }\n}\n";

    fn path() -> &'static Path {
        Path::new("src/runtime/managed.rs")
    }

    #[test]
    fn the_transport_takes_the_policy_provider_and_reverts_to_the_original() {
        let patched = patch_transfer_manager_transport(path(), TRANSPORT).unwrap();
        assert!(
            patched.contains("        .tls_provider(crate::default_http_client::transport_provider())\n"),
            "{patched}"
        );
        assert!(patched.contains("was `Provider::Rustls(CryptoMode::AwsLc)`\n"), "{patched}");
        assert!(patched.contains("#[cfg(any())]\nuse aws_smithy_http_client::tls::{rustls_provider"), "{patched}");
        assert_eq!(patch_transfer_manager_transport(path(), &patched).unwrap(), patched, "idempotent");
        assert_eq!(unpatch_transfer_manager_transport(path(), &patched).unwrap(), TRANSPORT);
        assert_eq!(unpatch_transfer_manager_transport(path(), TRANSPORT).unwrap(), TRANSPORT);
    }

    #[test]
    fn the_config_guard_asks_the_policy_and_reverts() {
        let patched = patch_transfer_manager_config(Path::new("src/config.rs"), CONFIG).unwrap();
        assert!(
            patched.contains("if config.enable_runtime_http && crate::default_http_client::runtime_http() =>"),
            "{patched}"
        );
        assert_eq!(patch_transfer_manager_config(Path::new("src/config.rs"), &patched).unwrap(), patched);
        assert_eq!(unpatch_transfer_manager_config(Path::new("src/config.rs"), &patched).unwrap(), CONFIG);
    }

    #[test]
    fn an_unknown_layout_is_refused_naming_what_is_missing() {
        let without_call = TRANSPORT.replace(".tls_provider(", ".other(");
        let err = patch_transfer_manager_transport(path(), &without_call).unwrap_err();
        assert!(matches!(err, PatchError::AnchorNotFound { .. }), "{err}");
        assert!(err.to_string().contains("`.tls_provider(..)`") && err.to_string().contains("(0.3)"), "{err}");
        let twice = format!("{TRANSPORT}\nfn again() {{ b().tls_provider(x) }}\n");
        let err = patch_transfer_manager_transport(path(), &twice).unwrap_err();
        assert!(matches!(err, PatchError::Ambiguous { .. }), "{err}");
        let err = patch_transfer_manager_config(Path::new("src/config.rs"), "fn f() {}\n").unwrap_err();
        assert!(err.to_string().contains("`<config>.enable_runtime_http` guard"), "{err}");
    }

    #[test]
    fn shapes_revert_could_not_restore_are_refused_not_patched() {
        // An argument over two lines, or with a comment: the note holds one line.
        let spread = TRANSPORT.replace(
            "Provider::Rustls(CryptoMode::AwsLc)",
            "Provider::Rustls(\n            CryptoMode::AwsLc,\n        )",
        );
        let commented =
            TRANSPORT.replace("CryptoMode::AwsLc)", "CryptoMode::AwsLc /* fast */)").replace("/* fast */", "// fast\n");
        for text in [spread, commented] {
            let err = patch_transfer_manager_transport(path(), &text).unwrap_err();
            assert!(matches!(err, PatchError::AnchorNotFound { .. }), "{err}\n{text}");
        }
        // The `use` sharing its line with another item: the attribute would go to that one.
        let shared = TRANSPORT.replace("\nuse aws_smithy_http_client::tls::", " use aws_smithy_http_client::tls::");
        let err = patch_transfer_manager_transport(path(), &shared).unwrap_err();
        assert!(err.to_string().contains("on a line of its own"), "{err}");
        // A guard that is more than the field: `&&` after it would bind to its last operand.
        let wider =
            CONFIG.replace("if config.enable_runtime_http =>", "if config.enable_runtime_http || cfg!(test) =>");
        let err = patch_transfer_manager_config(Path::new("src/config.rs"), &wider).unwrap_err();
        assert!(matches!(err, PatchError::AnchorNotFound { .. }), "{err}");
    }
}
