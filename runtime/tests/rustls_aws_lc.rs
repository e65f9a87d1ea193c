//! The conformance suite against the rustls + aws-lc-rs provider.
#![cfg(provider = "rustls-aws-lc")]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::RustlsAwsLc;

/// Nothing to prepare: the provider brings its crypto.
fn prepare() {}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");
