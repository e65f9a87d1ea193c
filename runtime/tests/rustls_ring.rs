//! The conformance suite against the rustls + ring provider.
#![cfg(feature = "rustls-ring")]

mod support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::RustlsRing;

include!("conformance/suite.rs");
