//! `configure_default` after a default client was built is an error that says what to do (a
//! single-purpose binary: it changes process-wide state).
#![cfg(all(feature = "rustls-ring", feature = "webpki"))]

use smithy_default_tls::{configure_default, shared_client, Error, TlsProvider, TrustRoots};

#[test]
fn configuring_after_the_first_default_client_is_refused() {
    let _client = shared_client(TlsProvider::RustlsRing, TrustRoots::Webpki);
    let err = configure_default(|builder| builder).expect_err("too late");
    assert!(matches!(err, Error::DefaultAlreadyBuilt), "{err}");
    assert!(err.to_string().contains("before any SDK client is created"), "{err}");
}
