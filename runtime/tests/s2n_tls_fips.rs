//! The conformance suite against s2n-tls on the FIPS build of aws-lc. It builds only without
//! the non-FIPS providers (`cargo test-fips`, in its own target dir: see scripts/test).
#![cfg(all(provider = "s2n-tls-fips", unix))]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::S2nTlsFips;

/// Nothing to prepare: the provider brings its crypto.
fn prepare() {}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");
