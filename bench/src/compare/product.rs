//! What a Linux user gets: each preset's provider on x86_64-unknown-linux-gnu, read from the
//! presets the generator ships (one source), against upstream's default client, rustls with
//! aws-lc-rs. The provider-to-provider tables compare code; this compares products.

use smithy_tls_codegen::model::Stack;
use smithy_tls_codegen::{compile, explain, policy, presets};

use super::contenders::{OURS_ONLY, PROVIDERS};

/// The target whose products the table compares.
pub(crate) const LINUX: &str = "x86_64-unknown-linux-gnu";

/// Upstream's default client's provider.
pub(crate) const UPSTREAM_DEFAULT: &str = "rustls-aws-lc";

/// A preset and the provider it gives [`LINUX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Product {
    pub(crate) preset: &'static str,
    pub(crate) provider: &'static str,
}

/// Every preset whose [`LINUX`] provider the benchmark builds (the FIPS providers are built
/// apart, so the `fips` preset is not measured here), in the presets' order.
pub(crate) fn products() -> Vec<Product> {
    presets::names()
        .filter_map(|preset| {
            let parsed = policy::parse_policy(presets::preset(preset)?).ok()?;
            let compiled = compile::compile(&parsed).ok()?;
            let Some(Stack::Tls { provider, .. }) = explain::explain(&compiled, LINUX)?.stack() else {
                return None;
            };
            let provider = PROVIDERS.iter().chain(OURS_ONLY.iter()).copied().find(|p| *p == provider.name())?;
            Some(Product { preset, provider })
        })
        .collect()
}
