//! What the runtime logs about a client identity: never its key (README: "never logged"), at
//! any level, through a mutual-TLS handshake on every provider and a rotation; and a pair of
//! files that does not make an identity is said once, at warn level, however many connections
//! look at it. (A binary of its own: it installs the process's tracing subscriber.)

use std::time::Duration;

use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider, WatchedIdentity};
use smithy_tls_test_support::logs::Capture;
use smithy_tls_test_support::{call, get, rustls, settings, Alpn, TestCa, TestServer};
use tracing::Level;

fn providers() -> impl Iterator<Item = TlsProvider> {
    TlsProvider::ALL.iter().copied().filter(|p| p.name() != "rustls-custom")
}

/// The base64 lines of a PEM's body, long enough not to occur by chance.
fn body_lines(pem: &str) -> Vec<String> {
    pem.lines().filter(|l| !l.starts_with("-----") && l.len() >= 32).map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_material_is_logged_and_an_unusable_pair_is_said_once() {
    std::env::remove_var("AWS_CA_BUNDLE");
    let capture = Capture::all();
    tracing::subscriber::set_global_default(capture.clone()).expect("the only subscriber of this binary");
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    // Removed on drop, whether the test passes or not.
    let dir = tempfile::Builder::new().prefix("smithy-tls-identity-logging-").tempdir().expect("scratch directory");
    let (cert, key) = (dir.path().join("client.pem"), dir.path().join("client.key"));
    let pairs = ["first", "second"].map(|n| client_ca.client_leaf(n, &rcgen::KeyPair::generate().expect("key")));
    std::fs::write(&cert, &pairs[0].cert).expect("certificate");
    std::fs::write(&key, &pairs[0].key).expect("key");
    let watched = WatchedIdentity::from_pem_files(&cert, &key, Duration::ZERO).expect("identity");
    let leaf = server_ca.leaf(&["localhost"]);
    let server =
        TestServer::start_requiring_client_auth(&leaf, Alpn::Http1Only, &client_ca.pem, rustls::DEFAULT_VERSIONS).await;
    let request = || {
        let mut request = get(&server.url("/"));
        request.headers_mut().insert("connection", http::HeaderValue::from_static("close"));
        request
    };
    for provider in providers() {
        let client = SmithyTlsClient::builder()
            .provider(provider)
            .extra_root_pem(&server_ca.pem)
            .expect("CA")
            .watched_client_identity(watched.clone())
            .build()
            .expect("client");
        let response = call(&client, &settings(None, None), request()).await.expect("GET with the identity");
        let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
        assert!(tls.client_certificate_sent, "{provider}: {tls:?}");
    }

    // Half written: the second certificate with the first key, looked at by three connections.
    std::fs::write(&cert, &pairs[1].cert).expect("new certificate only");
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::ALL[0])
        .extra_root_pem(&server_ca.pem)
        .expect("CA")
        .watched_client_identity(watched.clone())
        .build()
        .expect("client");
    for _ in 0..3 {
        call(&client, &settings(None, None), request()).await.expect("the previous pair still serves");
    }
    std::fs::write(&key, &pairs[1].key).expect("then its key");
    call(&client, &settings(None, None), request()).await.expect("the new pair");
    assert_eq!(watched.generation(), 1);

    let logged = capture.lines();
    assert!(logged.len() > 10, "the capture sees the runtime's events: {}", logged.len());
    for pair in &pairs {
        for line in body_lines(&pair.key) {
            let leaked = logged.iter().find(|(_, text)| text.contains(&line));
            assert!(leaked.is_none(), "a key's PEM line was logged: {leaked:?}");
        }
    }
    let unusable: Vec<&(Level, String)> =
        logged.iter().filter(|(_, text)| text.contains("do not make a usable identity")).collect();
    assert_eq!(unusable.len(), 1, "said once: {unusable:#?}");
    assert_eq!(unusable[0].0, Level::WARN);
}
