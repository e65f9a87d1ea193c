//! The conformance suite against the openssl provider (the system's libssl).
#![cfg(provider = "openssl")]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::OpenSsl;

/// Nothing to prepare: the provider brings its crypto.
fn prepare() {}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");
