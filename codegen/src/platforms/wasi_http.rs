//! `wasi-http` on `wasm32-wasip2`: where it serves, what the host provides, and what the SDK
//! crates' default features need there (read from the pinned crates: `rt-tokio` and
//! `credentials-process` turn on tokio features tokio refuses on wasm, "Only features
//! sync,macros,io-util,rt,time are supported on wasm").

use cfg_expr::targets::{Family, TargetInfo};

/// The WASI 0.2 interfaces a component with `smithy-wasi-http` imports, each with what the SDK
/// uses it for: the host must provide them (wasmtime's `-S http`, jco, a wasi:http proxy host).
pub const HOST_IMPORTS: [(&str, &str); 3] = [
    (
        "wasi:http/outgoing-handler",
        "every request: the host connects, runs TLS and checks certificates against its own trust store",
    ),
    ("wasi:clocks/monotonic-clock", "retries' backoff and the SDK's timeouts"),
    ("wasi:io/poll", "waiting for both"),
];

/// A default feature of the SDK crates that does not build for `wasm32-wasip2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WasmRefusedFeature {
    /// Which crates have it (`aws-config`, or every service crate).
    pub crates: &'static str,
    /// The feature.
    pub feature: &'static str,
    /// Why it does not build there.
    pub why: &'static str,
}

/// The SDK crates' default features that do not build for `wasm32-wasip2` once rewritten (the
/// rewritten `default-https-client` builds there; the legacy `rustls` too where the policy aliases
/// it). Cargo features cannot differ by target, so the generator cannot leave them out there
/// alone: the application does, with [`APPLICATION_MANIFEST`].
pub const WASM_REFUSED_DEFAULTS: [WasmRefusedFeature; 2] = [
    WasmRefusedFeature {
        crates: "every service crate",
        feature: "rt-tokio",
        why: "aws-smithy-types' `rt-tokio` turns on tokio's `fs`",
    },
    WasmRefusedFeature { crates: "aws-config", feature: "credentials-process", why: "tokio's `process`" },
];

/// The `Cargo.toml` lines an application that builds for `wasm32-wasip2` writes instead of the
/// SDK crates' default features (aws-config and one service crate, aws-sdk-s3, shown): every
/// default but [`WASM_REFUSED_DEFAULTS`] everywhere, and those (with aws-config's `rt-tokio`,
/// whose sleep would need tokio's timer) on the other targets. Other service crates take the same
/// lines without S3's `sigv4a` and `http-1x`.
pub const APPLICATION_MANIFEST: &str = r#"[dependencies]
aws-config = { version = "1", default-features = false, features = ["default-https-client", "sso", "behavior-version-latest"] }
aws-sdk-s3 = { version = "1", default-features = false, features = ["default-https-client", "sigv4a", "http-1x", "behavior-version-latest"] }

[target.'cfg(not(target_family = "wasm"))'.dependencies]
aws-config = { version = "1", features = ["rt-tokio", "credentials-process"] }
aws-sdk-s3 = { version = "1", features = ["rt-tokio"] }
"#;

/// Whether `wasi-http` (the host's `wasi:http/outgoing-handler`, WASI 0.2) can serve `target`:
/// the targets with `target_os = "wasi"` and `target_env = "p2"`; `Err` with why elsewhere.
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as target;
/// use smithy_tls_codegen::platforms::wasi_http_support;
/// assert!(wasi_http_support(target("wasm32-wasip2").unwrap()).is_ok());
/// assert!(wasi_http_support(target("wasm32-wasip1").unwrap()).is_err());
/// ```
pub fn wasi_http_support(target: &TargetInfo) -> Result<(), &'static str> {
    if is_wasip2(target) {
        Ok(())
    } else if target.families.contains(&Family::wasm) {
        Err("wasi:http is a WASI 0.2 interface that only wasm32-wasip2 hosts offer; use provider \"none\"")
    } else {
        Err("wasi:http is the host's HTTP on wasm32-wasip2; give this target a TLS provider")
    }
}

/// Whether `target` is a WASI 0.2 target (`target_os = "wasi"`, `target_env = "p2"`).
pub(super) fn is_wasip2(target: &TargetInfo) -> bool {
    target.os.as_ref().is_some_and(|os| os.as_str() == "wasi")
        && target.env.as_ref().is_some_and(|env| env.as_str() == "p2")
}
