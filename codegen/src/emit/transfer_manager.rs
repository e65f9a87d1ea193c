//! The `default_http_client` module of the S3 transfer manager: the TLS provider of its own
//! transport on each target, and whether that transport runs (see `crate::transfer_manager`).

use super::layout::{self, Meta};
use super::{fill, with_header, EmitError};
use crate::model::CompiledPolicy;
use crate::transfer_manager::{override_leaves, pool_tables, Transport};

/// The functions the patched transfer manager calls.
pub mod hook_fn {
    /// `runtime_http()`: whether the managed runtime installs its own transport.
    pub const RUNTIME_HTTP: &str = "runtime_http";
    /// `transport_provider()`: the transport's TLS provider.
    pub const TRANSPORT_PROVIDER: &str = "transport_provider";
}

/// The module below its header. `POOL` is one constant per pool table, gated to its targets with
/// no override set, and `no_pool`'s `None` on every other target.
const MODULE: &str = r#"//! The TLS provider of this crate's own HTTP transport (the managed runtime's connection pool),
//! chosen per target by the smithy-tls policy `{{policy}}`.
//!
//! The pool serves rustls (aws-lc or ring) with the operating system's trust store. Where the
//! policy's rule asks for anything else (s2n-tls included: the default client runs it at less CPU
//! per byte), where `AWS_CA_BUNDLE` is set (the pool does not read it), and where the application
//! sets `--cfg smithy_tls` or `--cfg smithy_tls_roots`, the transport stays off: requests go
//! through the S3 client's HTTP client, the policy's default client, which follows the override.
//!
//! | rule | provider | roots | transfer manager's transport |
//! |---|---|---|---|
{{matrix}}

// Every target value below is one rustc knows; older releases warn of newer ones (`qnx`).
#![allow(unexpected_cfgs)]

use ::aws_smithy_http_client::tls::Provider;

// Where the policy gives the pool no provider, `POOL` is this one; a `POOL` below, gated to the
// targets the pool serves, replaces it (an item shadows a glob import).
#[allow(unused_imports)]
use self::no_pool::*;

mod no_pool {
    /// The S3 client's HTTP client serves.
    #[allow(dead_code)]
    pub(super) const POOL: Option<super::Provider> = None;
}
{{pools}}
/// Whether the managed runtime installs its own transport (else the S3 client's HTTP client serves).
pub(crate) fn {{runtime_http}}() -> bool {
    POOL.is_some() && std::env::var_os("AWS_CA_BUNDLE").is_none()
}

/// The transport's TLS provider; only called where [`{{runtime_http}}`] is true.
pub(crate) fn {{transport_provider}}() -> Provider {
    match POOL {
        Some(provider) => provider,
        None => unreachable!("the transfer manager's own transport is off on this target"),
    }
}
"#;

/// Renders the transfer manager's module for a compiled policy. Deterministic.
///
/// ```
/// use smithy_tls_codegen::{compile, emit, policy, presets};
/// let parsed = policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap();
/// let text = emit::render_transfer_manager_module(&compile::compile(&parsed).unwrap()).unwrap();
/// assert!(text.starts_with(emit::HEADER_MARKER));
/// assert!(text.contains("Some(Provider::Rustls(CryptoMode::AwsLc))"));
/// assert!(!text.contains("Provider::S2nTls"));
/// ```
pub fn render_transfer_manager_module(compiled: &CompiledPolicy) -> Result<String, EmitError> {
    let tables = pool_tables(compiled);
    let no_override =
        Meta::List("not", vec![Meta::List("any", override_leaves().into_iter().map(Meta::Leaf).collect())]);
    let mut pools = String::new();
    for table in &tables {
        let gate = match Meta::from_cfg(&table.targets) {
            Meta::List("all", mut parts) => {
                parts.push(no_override.clone());
                Meta::List("all", parts)
            }
            other => Meta::List("all", vec![other, no_override.clone()]),
        };
        // rustls's crypto modes live in a module only a rustls feature compiles: named inside the
        // gated constant.
        let value = match table.tls.expression() {
            expression if expression.contains("CryptoMode") => format!(
                "{{\n    use ::aws_smithy_http_client::tls::rustls_provider::CryptoMode;\n    Some({expression})\n}}"
            ),
            expression => format!("Some({expression})"),
        };
        pools.push_str(&format!(
            "\n/// Rule{} {}: {}.\n{}\nconst POOL: Option<Provider> = {value};\n",
            if table.rules.len() == 1 { "" } else { "s" },
            table.rules.iter().map(|rule| format!("`{rule}`")).collect::<Vec<_>>().join(", "),
            table.tls.provider(),
            layout::cfg_attribute(&gate),
        ));
    }
    let body = fill(
        MODULE,
        &[
            ("policy", &compiled.policy.name),
            ("matrix", &matrix_rows(compiled)),
            ("pools", &pools),
            ("runtime_http", hook_fn::RUNTIME_HTTP),
            ("transport_provider", hook_fn::TRANSPORT_PROVIDER),
        ],
    );
    let text = with_header(&compiled.policy.name, &body);
    syn::parse_file(&text).map_err(|e| EmitError::Unparsable(e.to_string()))?;
    Ok(text)
}

/// One doc row per rule: its stack and what serves the transfer manager there.
fn matrix_rows(compiled: &CompiledPolicy) -> String {
    let rows: Vec<String> = compiled
        .rules
        .iter()
        .map(|rule| {
            format!(
                "//! | {} | {} | {} | {} |",
                rule.name,
                rule.stack.provider_name(),
                rule.stack.roots_name(),
                Transport::of(rule.stack).describe()
            )
        })
        .collect();
    rows.join("\n")
}
