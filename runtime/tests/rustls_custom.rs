//! The conformance suite against rustls with the application's own `CryptoProvider`
//! (`rustls-custom`): here ring's provider, handed to the runtime as an application would.
//! Run alone (`cargo test-rustls-custom`): a build whose only provider is this one.
#![cfg(feature = "rustls-custom")]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::RustlsCustom;

/// The application's step: its crypto provider, before the first connection (the first call
/// wins; the later ones hand the same provider back).
fn prepare() {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let _ = smithy_default_tls::set_custom_crypto_provider(provider);
}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");
