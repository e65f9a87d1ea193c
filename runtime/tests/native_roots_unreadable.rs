//! An unreadable native store is a clear error at first use, never a panic, and building the
//! client does not fail or block. Its own test binary: native roots load once per process.
#![cfg(feature = "native")]

use smithy_tls_test_support as support;

use smithy_default_tls::{RootsError, SmithyTlsClient, TlsProvider, TrustRoots};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_native_store_is_reported_at_first_use() {
    // The only test in this binary: nothing else reads the environment concurrently.
    std::env::set_var("SSL_CERT_FILE", "/nonexistent/smithy-tls/ca-bundle.pem");
    std::env::remove_var("SSL_CERT_DIR");
    let ca = TestCa::new("unused CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    for &provider in TlsProvider::ALL {
        let client = SmithyTlsClient::builder()
            .provider(provider)
            .trust_roots(TrustRoots::Native)
            .build()
            .expect("building never loads roots");
        for attempt in 0..2 {
            let err = call(&client, &settings(None, None), get(&server.url("/"))).await.expect_err("no roots");
            let roots = find_in_chain::<RootsError>(&err).unwrap_or_else(|| panic!("RootsError in chain: {err:?}"));
            assert!(matches!(roots, RootsError::NativeUnreadable { .. }), "{roots:?}");
            let message = error_chain(&err);
            assert!(message.contains("/nonexistent/smithy-tls/ca-bundle.pem"), "attempt {attempt}: {message}");
            assert!(message.contains("SSL_CERT_FILE"), "says what to do: {message}");
            assert!(!err.is_timeout(), "{err:?}");
            assert!(err.is_user() && !sdk_retries(&err), "a configuration error, not retried: {err:?}");
        }
    }
    assert_eq!(server.stats.handshakes().len(), 0);
}
