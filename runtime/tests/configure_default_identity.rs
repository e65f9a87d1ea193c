//! `configure_default` with a watched client identity, as README's mutual-TLS section shows it:
//! the process-wide default clients built after present it to servers that ask, and follow its
//! files when they change. (A single-purpose binary: it changes process-wide state.)
#![cfg(all(feature = "rustls-ring", feature = "webpki"))]

use std::time::Duration;

use smithy_default_tls::{configure_default, shared_client, ConnectionInfo, TlsProvider, TrustRoots, WatchedIdentity};
use smithy_tls_test_support::{call, get, rustls, settings, Alpn, TestCa, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_clients_present_the_configured_watched_identity() {
    std::env::remove_var("AWS_CA_BUNDLE");
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    // Removed on drop, whether the test passes or not.
    let dir = tempfile::Builder::new().prefix("smithy-tls-configure-identity-").tempdir().expect("scratch directory");
    let (cert, key) = (dir.path().join("client.pem"), dir.path().join("client.key"));
    let [first, second] =
        ["first", "second"].map(|name| client_ca.client_leaf(name, &rcgen::KeyPair::generate().expect("key")));
    std::fs::write(&cert, &first.cert).expect("certificate");
    std::fs::write(&key, &first.key).expect("key");
    let watched = WatchedIdentity::from_pem_files(&cert, &key, Duration::ZERO).expect("identity");
    let pem = server_ca.pem.clone();
    configure_default(move |builder| {
        builder.extra_root_pem(&pem).expect("CA").watched_client_identity(watched.clone())
    })
    .expect("first call, before any default client");

    let server = TestServer::start_requiring_client_auth(
        &server_ca.leaf(&["localhost"]),
        Alpn::Http1Only,
        &client_ca.pem,
        rustls::DEFAULT_VERSIONS,
    )
    .await;
    let client = shared_client(TlsProvider::RustlsRing, TrustRoots::Webpki);
    for pair in [&first, &second] {
        // A new connection each time: its handshake reads the files as they are.
        let mut request = get(&server.url("/"));
        request.headers_mut().insert("connection", http::HeaderValue::from_static("close"));
        let response = call(&client, &settings(None, None), request).await.expect("GET with the identity");
        assert_eq!(response.status().as_u16(), 200);
        let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
        assert!(tls.client_certificate_sent, "{tls:?}");
        let presented = server.stats.client_hellos().last().and_then(|h| h.client_certificate.clone());
        assert_eq!(presented, Some(pair.leaf_der()), "the default client presents the files' pair");
        // Rotate: renamed over, as deployment tools replace files.
        for (path, text) in [(&cert, &second.cert), (&key, &second.key)] {
            let staged = path.with_extension("staged");
            std::fs::write(&staged, text).expect("staged");
            std::fs::rename(&staged, path).expect("rename over");
        }
    }
}
