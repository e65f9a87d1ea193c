//! The conformance suite against the s2n-tls provider.
#![cfg(all(provider = "s2n-tls", unix))]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::S2nTls;

/// Nothing to prepare: the provider brings its crypto.
fn prepare() {}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");
