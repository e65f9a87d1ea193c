//! aws-config's `src/provider_config.rs`: the default client for everything aws-config builds on
//! its own (IMDS, ECS and HTTP credentials through `ProviderConfig::http_client()`; SSO, web
//! identity and profile chains through the `SdkConfig` of `ProviderConfig::client_config()`).

use std::path::Path;

use syn::visit::{self, Visit};

use super::text::{apply, Edit, Source};
use super::{
    first_span_of_stmt, has_named_field, is_provider_hook, type_is_named, PatchError, MARKER, MODULE_NAME,
    PROVIDER_CONFIG_NOTE,
};
use crate::emit::hook_fn::{CLIENT, CLIENT_FOR};

/// The `ProviderConfig` methods that hand its HTTP client out, each reading `self.http_client`.
const ACCESSORS: [&str; 2] = ["http_client", "client_config"];

/// Patches aws-config's `src/provider_config.rs`: in `impl ProviderConfig`, the one
/// `self.http_client.clone()` of `fn http_client(&self)` and of `fn client_config(&self)` gets
/// `.or_else(crate::default_http_client::default_http_client)`, with a `// smithy-tls:` comment
/// line above its statement. A client set with `ProviderConfig::with_http_client` (or by the
/// loader) still wins; without one, every component gets the policy's default client, as the
/// loader's clients do.
///
/// Returns the input unchanged when both methods already fall back to
/// `default_http_client::default_http_client` (however the file was formatted since).
///
/// # Errors
/// [`PatchError::Parse`] for invalid Rust; [`PatchError::AnchorNotFound`] when a method is
/// missing or does not read `self.http_client.clone()` exactly once; [`PatchError::Ambiguous`]
/// when several methods of that name qualify; [`PatchError::InvalidResult`] if the result fails
/// validation (a bug).
pub fn patch_aws_config_provider_config(path: &Path, text: &str) -> Result<String, PatchError> {
    // Hooks an earlier smithy-tls wrote without the behavior version are replaced.
    super::with_old_hooks_upgraded(
        text,
        super::OldHook::OrElse(CLIENT),
        "behavior_version",
        |text| super::unpatch_aws_config_provider_config(path, text),
        |text| patch_fresh(path, text),
    )
}

/// [`patch_aws_config_provider_config`] on a file as it is (existing hooks of any form count).
fn patch_fresh(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    // With a behavior version on `ProviderConfig` (aws-config 1.x), the fallback client is the
    // one for that version, so the proxy environment counts as for the SDK's clients.
    let fallback = if provider_config_has_behavior_version(&file) {
        format!(".or_else(|| crate::{MODULE_NAME}::{CLIENT_FOR}(self.behavior_version))")
    } else {
        format!(".or_else(crate::{MODULE_NAME}::{CLIENT})")
    };
    let mut edits = Vec::new();
    for name in ACCESSORS {
        let method = one_accessor(&src, &file, name)?;
        let found = scan(&method.block);
        if found.hooks > 0 {
            continue;
        }
        let [(stmt, call)] = found.clones.as_slice() else {
            return Err(PatchError::AnchorNotFound {
                path: path.to_owned(),
                what: format!(
                    "exactly one `self.http_client.clone()` in `ProviderConfig::{name}` (line {}), found {}",
                    method.sig.ident.span().start().line,
                    found.clones.len()
                ),
                help: "this aws-config hands out its HTTP client differently from the 1.x releases \
                       smithy-tls knows; leave aws-config out of the policy and set the client with \
                       `ProviderConfig::with_http_client` in application code"
                    .to_owned(),
            });
        };
        let stmt_start = src.start_of(first_span_of_stmt(&method.block.stmts[*stmt]).unwrap_or(call.1))?;
        if src.starts_its_line(stmt_start) {
            let indent = src.indent_of_line_at(stmt_start);
            let nl = src.newline();
            edits.push(Edit {
                at: src.line_start(stmt_start),
                text: format!("{indent}// {MARKER} {PROVIDER_CONFIG_NOTE}{nl}"),
            });
        }
        edits.push(Edit { at: src.end_of(call.0)?, text: fallback.clone() });
    }
    if edits.is_empty() {
        return Ok(text.to_owned());
    }
    let out = apply(text, edits);

    let patched = src.reparse(&out)?;
    for name in ACCESSORS {
        let method = one_accessor(&src, &patched, name).map_err(|e| src.invalid(e.to_string()))?;
        let found = scan(&method.block);
        if found.hooks != 1 || !found.clones.is_empty() {
            return Err(src.invalid(format!(
                "expected `ProviderConfig::{name}` to fall back to `{MODULE_NAME}::{CLIENT}` once \
                 after patching, found {} fallbacks and {} bare reads",
                found.hooks,
                found.clones.len()
            )));
        }
    }
    Ok(out)
}

/// Whether `struct ProviderConfig` has a `behavior_version` field.
fn provider_config_has_behavior_version(file: &syn::File) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
            if s.ident == "ProviderConfig" && has_named_field(s, "behavior_version") {
                self.0 = true;
            }
        }
    }
    let mut find = Find(false);
    find.visit_file(file);
    find.0
}

/// The one `fn <name>(&self)` of an inherent `impl ProviderConfig`.
fn one_accessor<'f>(src: &Source<'_>, file: &'f syn::File, name: &str) -> Result<&'f syn::ImplItemFn, PatchError> {
    let mut search = AccessorSearch { name, found: Vec::new() };
    search.visit_file(file);
    match search.found.as_slice() {
        [one] => Ok(*one),
        [] => Err(PatchError::AnchorNotFound {
            path: src.path.to_owned(),
            what: format!("`fn {name}(&self)` in an inherent `impl ProviderConfig`"),
            help: "this does not look like aws-config 1.x's `src/provider_config.rs`; leave aws-config \
                   out of the policy, or set the HTTP client with `ProviderConfig::with_http_client` \
                   in application code"
                .to_owned(),
        }),
        many => Err(PatchError::Ambiguous {
            path: src.path.to_owned(),
            lines: many.iter().map(|f| f.sig.ident.span().start().line).collect(),
            what: format!("`fn {name}(&self)` in `impl ProviderConfig`"),
        }),
    }
}

struct AccessorSearch<'ast, 'n> {
    name: &'n str,
    found: Vec<&'ast syn::ImplItemFn>,
}

impl<'ast> Visit<'ast> for AccessorSearch<'ast, '_> {
    fn visit_item_impl(&mut self, imp: &'ast syn::ItemImpl) {
        if imp.trait_.is_none() && type_is_named(&imp.self_ty, "ProviderConfig") {
            for item in &imp.items {
                if let syn::ImplItem::Fn(f) = item {
                    let by_ref_self =
                        matches!(f.sig.inputs.first(), Some(syn::FnArg::Receiver(r)) if r.reference.is_some());
                    if f.sig.ident == self.name && by_ref_self {
                        self.found.push(f);
                    }
                }
            }
        }
        visit::visit_item_impl(self, imp);
    }
}

/// What one accessor's body holds.
#[derive(Default)]
struct Scan {
    /// Each bare `self.http_client.clone()`: the index of its top-level statement, and the spans
    /// of its closing parenthesis and of `self`.
    clones: Vec<(usize, (proc_macro2::Span, proc_macro2::Span))>,
    /// `.or_else(..::default_http_client::default_http_client)` calls.
    hooks: usize,
}

fn scan(block: &syn::Block) -> Scan {
    struct Visitor {
        stmt: usize,
        scan: Scan,
    }
    impl<'ast> Visit<'ast> for Visitor {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            if is_provider_hook(call) {
                self.scan.hooks += 1;
                // The receiver is the hooked read: not a bare one.
                if matches!(&*call.receiver, syn::Expr::MethodCall(inner) if self_http_client_clone(inner).is_some()) {
                    return;
                }
            }
            if let Some(spans) = self_http_client_clone(call) {
                self.scan.clones.push((self.stmt, spans));
            }
            visit::visit_expr_method_call(self, call);
        }
    }
    let mut visitor = Visitor { stmt: 0, scan: Scan::default() };
    for (i, stmt) in block.stmts.iter().enumerate() {
        visitor.stmt = i;
        visitor.visit_stmt(stmt);
    }
    visitor.scan
}

/// For `self.http_client.clone()`: the spans of its closing parenthesis and of `self`.
fn self_http_client_clone(call: &syn::ExprMethodCall) -> Option<(proc_macro2::Span, proc_macro2::Span)> {
    if call.method != "clone" || !call.args.is_empty() || call.turbofish.is_some() {
        return None;
    }
    let syn::Expr::Field(field) = &*call.receiver else { return None };
    let is_field = matches!(&field.member, syn::Member::Named(ident) if ident == "http_client");
    let syn::Expr::Path(base) = &*field.base else { return None };
    (is_field && base.path.is_ident("self"))
        .then(|| (call.paren_token.span.close(), base.path.segments[0].ident.span()))
}
