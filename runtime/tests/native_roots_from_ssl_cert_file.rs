//! `native` trust roots honour SSL_CERT_FILE (and `native-or-webpki` roots, with a store that
//! holds a certificate, are the same), and the process-wide entry point hands every caller the
//! same client and pool. Its own test binary: native roots are loaded once per
//! process, so the environment must be set before anything loads them.
#![cfg(feature = "native")]

use smithy_tls_test_support as support;

use std::time::Duration;

use aws_smithy_runtime_api::client::http::HttpClient;
use smithy_default_tls::{shared_client, shared_tls_client, ConnectionInfo, TlsProvider, TrustRoots};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_roots_from_ssl_cert_file_and_one_shared_pool() {
    let ca = TestCa::new("SSL_CERT_FILE CA");
    // The only test in this binary: nothing else reads the environment concurrently.
    let dir = ca.install_as_ssl_cert_file("native");

    for &provider in TlsProvider::ALL {
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        let first = shared_tls_client(provider, TrustRoots::Native);
        assert!(first.ptr_eq(&shared_tls_client(provider, TrustRoots::Native)));

        // Four "SDK clients", each asking the entry point for a client and a connector, as
        // generated code does, with the same settings.
        let settings = settings(Some(Duration::from_secs(5)), Some(Duration::from_secs(5)));
        let mut ids = Vec::new();
        for _ in 0..4 {
            let client = shared_client(provider, TrustRoots::Native);
            let response =
                call(&client, &settings, get(&server.url("/bytes/1000"))).await.expect("GET via native roots");
            let info = response.extension::<ConnectionInfo>().cloned().expect("info");
            assert_eq!(info.tls.as_ref().map(|t| t.provider), Some(provider));
            ids.push(info.id);
            assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(1000));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(server.accepted(), 1, "{provider}: every caller must share one pool and connection");
        assert!(ids.windows(2).all(|w| w[0] == w[1]), "{ids:?}");
        assert!(shared_client(provider, TrustRoots::Native).connector_metadata().is_some());

        // With a store that holds a certificate, `native-or-webpki` is `native`: it trusts the
        // store's CA, which no bundled root does.
        #[cfg(feature = "webpki")]
        {
            let client = shared_client(provider, TrustRoots::NativeOrWebpki);
            let response = call(&client, &settings, get(&server.url("/bytes/10"))).await.expect("GET via the store");
            assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(10));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
