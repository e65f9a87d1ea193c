//! On TLS 1.3 a server refuses our certificate after the client's handshake is done, so a client
//! sending a large body can meet the closed connection on a write before any read has seen the
//! alert. That write reports the refusal the same way a read does (README's mutual-TLS section):
//! every provider, many tries, each one the typed `UnknownIssuer`, never a transport error and
//! never a request left waiting; the runtime's debug event shows the write path was taken. (A
//! binary of its own: it installs the process's tracing subscriber.)
#![cfg(feature = "webpki")]

use std::time::Duration;

use aws_smithy_types::body::SdkBody;
use smithy_default_tls::{
    ClientCertificateProblem, ClientIdentity, HandshakeFailure, SmithyTlsClient, TlsHandshakeError, TlsProvider,
};
use smithy_tls_test_support::logs::Capture;
use smithy_tls_test_support::{call, error_chain, find_in_chain, rustls, settings, Alpn, TestCa, TestServer};

/// The runtime's debug event when a write resolves to the refusal.
const WRITE_PATH: &str = "a write met the server's refusal of our certificate";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_meets_the_refusal_reports_it_as_a_read_does() {
    std::env::remove_var("AWS_CA_BUNDLE");
    let events = Capture::only(|metadata| metadata.target().starts_with("smithy_default_tls"));
    tracing::subscriber::set_global_default(events.clone()).expect("the only subscriber");
    let (server_ca, client_ca, stranger) =
        (TestCa::new("server CA"), TestCa::new("client CA"), TestCa::new("a CA the server does not trust"));
    let pem = stranger.client_leaf("client", &rcgen::KeyPair::generate().expect("key"));
    let identity = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity");
    // A body far larger than the socket buffers: the client is still writing it when the
    // server's verdict arrives.
    let body = bytes::Bytes::from(vec![0u8; 16 << 20]);
    let mut seen = Vec::new();
    for &provider in TlsProvider::ALL.iter().filter(|p| p.name() != "rustls-custom") {
        let before = events.count(WRITE_PATH);
        // Up to 100 tries, until three went by the write path (how often the write comes first
        // differs by library: about one try in eight with OpenSSL, one in a hundred with s2n-tls).
        for attempt in 0..100 {
            let server = TestServer::start_requiring_client_auth(
                &server_ca.leaf(&["localhost"]),
                Alpn::Http1Only,
                &client_ca.pem,
                &[&rustls::version::TLS13],
            )
            .await;
            let client = SmithyTlsClient::builder()
                .provider(provider)
                .extra_root_pem(&server_ca.pem)
                .expect("CA")
                .client_identity(identity.clone())
                .build()
                .expect("client");
            let request = http::Request::builder()
                .method("PUT")
                .uri(server.url("/upload"))
                .body(SdkBody::from(body.clone()))
                .expect("request");
            let timeouts = settings(Some(Duration::from_secs(10)), None);
            let outcome = tokio::time::timeout(Duration::from_secs(30), call(&client, &timeouts, request))
                .await
                .unwrap_or_else(|_| panic!("{provider} try {attempt}: no outcome within 30 s"));
            let err = outcome.map(|r| r.status()).expect_err("the server refuses the certificate");
            let case = format!("{provider} try {attempt}: {}", error_chain(&err));
            let kind = find_in_chain::<TlsHandshakeError>(&err).map(TlsHandshakeError::kind);
            assert_eq!(
                kind,
                Some(HandshakeFailure::ClientCertificate(ClientCertificateProblem::UnknownIssuer)),
                "{case}"
            );
            assert!(!err.is_io() && !err.is_timeout(), "a refusal is not retried: {case}");
            if events.count(WRITE_PATH) - before >= 3 {
                break;
            }
        }
        seen.push((provider, events.count(WRITE_PATH) - before));
    }
    println!("write-path refusals per provider: {seen:?}");
    assert!(seen.iter().any(|(_, n)| *n > 0), "no try went by the write path: {seen:?}");
}
