//! The conformance suite against the rustls + aws-lc-rs FIPS provider. It builds only alone
//! (`--no-default-features --features rustls-aws-lc-fips,webpki`, in its own target dir: see
//! scripts/test), so a FIPS build never shares aws-lc-rs with the other providers' tests.
#![cfg(provider = "rustls-aws-lc-fips")]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::RustlsAwsLcFips;

/// Nothing to prepare: the provider brings its crypto.
fn prepare() {}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");
