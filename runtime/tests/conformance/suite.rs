// The conformance suite: written once, compiled once per TLS provider. The including file
// defines `PROVIDER`, a `prepare()` that every client of the suite runs first (`rustls-custom`
// hands the runtime its crypto provider there), and names the test-support crate `support`.

use std::time::{Duration, Instant};

use aws_smithy_runtime_api::client::connection::CaptureSmithyConnection;
use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnector};
use aws_smithy_types::body::SdkBody;
use smithy_default_tls::{CertificateProblem, ChosenBy, ConnectionInfo, HandshakeFailure, SmithyTlsClient, TlsHandshakeError};
use support::*;

const MIB: u64 = 1024 * 1024;
const LARGE: u64 = 64 * MIB;

/// A builder for this provider, once the including file has prepared it.
fn provider_builder() -> smithy_default_tls::Builder {
    prepare();
    SmithyTlsClient::builder().provider(PROVIDER)
}

fn client_trusting(ca: &TestCa) -> SmithyTlsClient {
    client_trusting_pem(&ca.pem)
}

/// A client of this provider trusting only the CA certificates in `pem`.
fn client_trusting_pem(pem: &str) -> SmithyTlsClient {
    provider_builder().extra_root_pem(pem).expect("CA PEM").build().expect("client")
}

async fn server(ca: &TestCa, alpn: Alpn) -> TestServer {
    TestServer::start(&ca.leaf(&["localhost"]), alpn).await
}

fn no_timeouts() -> aws_smithy_runtime_api::client::http::HttpConnectorSettings {
    settings(None, None)
}

async fn get_and_check(alpn: Alpn, len: u64, expect_alpn: &str) {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, alpn).await;
    let client = client_trusting(&ca);
    let response = call(&client, &no_timeouts(), get(&server.url(&format!("/bytes/{len}")))).await.expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    let info = response.extension::<ConnectionInfo>().cloned().expect("connection info in extensions");
    let tls = info.tls.expect("TLS info");
    assert_eq!(tls.provider, PROVIDER);
    // Under the application's `--cfg smithy_tls` or `smithy_tls_roots` (build.rs passes their
    // values on), the override chose the stack; otherwise the builder did. A run that means to be
    // under the cfg says which value (scripts/test), so a lost flag fails here.
    let (tls_cfg, roots_cfg) = (env!("SMITHY_TLS_OVERRIDE"), env!("SMITHY_TLS_ROOTS_OVERRIDE"));
    if let Some(expected) = std::env::var("SMITHY_TLS_EXPECT_OVERRIDE").ok().filter(|v| !v.is_empty()) {
        assert_eq!(tls_cfg, expected, "this build was meant to be under --cfg smithy_tls=\"{expected}\"");
    }
    let override_set = !tls_cfg.is_empty() || !roots_cfg.is_empty();
    let chooser = if override_set { ChosenBy::ApplicationCfg } else { ChosenBy::Builder };
    assert_eq!(tls.chosen_by, chooser, "{tls:?}");
    assert_eq!(tls.alpn, Some(expect_alpn));
    // FIPS mode is on exactly with the FIPS providers; openssl follows the system's OpenSSL
    // (tests/openssl_fips.rs).
    if PROVIDER.name() != "openssl" {
        assert_eq!(tls.fips, PROVIDER.name().ends_with("-fips"), "{tls:?}");
    }
    // The library that served it: rustls-aws-lc runs on rustls 0.24 with the experimental feature.
    let library = match PROVIDER.name() {
        "s2n-tls" | "s2n-tls-fips" => "s2n-tls",
        "openssl" => "OpenSSL",
        "rustls-aws-lc" if cfg!(feature = "experimental-rustls-024") => "rustls 0.24",
        _ => "rustls 0.23",
    };
    assert!(tls.library.starts_with(library), "{PROVIDER} is served by {library}: {tls:?}");
    let digest = digest_body(response.into_body()).await;
    assert_eq!(digest, Digest::of_pattern(len), "body must arrive byte-exact");
    assert_eq!(server.stats.alpns().as_slice(), &[expect_alpn.to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_small_http1() {
    get_and_check(Alpn::Http1Only, 1000, "http/1.1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_small_h2() {
    get_and_check(Alpn::H2AndHttp1, 1000, "h2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_large_streamed_http1() {
    get_and_check(Alpn::Http1Only, LARGE, "http/1.1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_large_streamed_h2() {
    get_and_check(Alpn::H2AndHttp1, LARGE, "h2").await;
}

async fn put_and_check(alpn: Alpn, len: u64) {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, alpn).await;
    let client = client_trusting(&ca);
    let request = http::Request::put(server.url("/digest"))
        .header("content-length", len)
        .body(SdkBody::from_body_1_x(PatternBody::new(len)))
        .expect("request");
    let response = call(&client, &no_timeouts(), request).await.expect("PUT");
    assert_eq!(response.status().as_u16(), 200);
    let seen = response.headers().get("x-digest").expect("x-digest header").to_owned();
    assert_eq!(seen, Digest::of_pattern(len).header_value(), "server must receive the body byte-exact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_small_http1() {
    put_and_check(Alpn::Http1Only, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_large_streamed_http1() {
    put_and_check(Alpn::Http1Only, LARGE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_large_streamed_h2() {
    put_and_check(Alpn::H2AndHttp1, LARGE).await;
}

async fn reuse(alpn: Alpn) {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, alpn).await;
    let client = client_trusting(&ca);
    let mut ids = Vec::new();
    for _ in 0..5 {
        let response = call(&client, &no_timeouts(), get(&server.url("/bytes/10"))).await.expect("GET");
        ids.push(response.extension::<ConnectionInfo>().expect("info").id);
        digest_body(response.into_body()).await;
        // hyper hands an HTTP/1.1 connection back to the pool from its connection task, just
        // after the body ends; leave it that moment, as any real caller's gap between requests does.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.accepted(), 1, "five sequential requests must share one connection");
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "client saw one connection: {ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_reuse_http1() {
    reuse(Alpn::Http1Only).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_reuse_h2() {
    reuse(Alpn::H2AndHttp1).await;
}

/// A connection left idle long enough to give its receive buffers back (the read-ahead buffer
/// at once, s2n-tls's record buffers after 100 ms) carries the next responses byte-exact.
async fn reuse_after_idle(alpn: Alpn) {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, alpn).await;
    let client = client_trusting(&ca);
    for (round, len) in [(0, MIB), (1, 1000), (2, 3 * MIB)] {
        let response = call(&client, &no_timeouts(), get(&server.url(&format!("/bytes/{len}")))).await.expect("GET");
        assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(len), "round {round}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(server.accepted(), 1, "the idle connection must be reused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_idle_past_its_buffer_release_is_reused_intact_http1() {
    reuse_after_idle(Alpn::Http1Only).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_idle_past_its_buffer_release_is_reused_intact_h2() {
    reuse_after_idle(Alpn::H2AndHttp1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_can_be_disabled() {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, Alpn::H2AndHttp1).await;
    let client = provider_builder()
        .extra_root_pem(&ca.pem)
        .unwrap()
        .enable_http2(false)
        .build()
        .unwrap();
    let response = call(&client, &no_timeouts(), get(&server.url("/"))).await.expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(server.stats.alpns().as_slice(), &["http/1.1".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_sessions_are_resumed_on_new_connections() {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, Alpn::Http1Only).await;
    let client = client_trusting(&ca);
    for _ in 0..2 {
        let mut request = get(&server.url("/"));
        request.headers_mut().insert("connection", http::HeaderValue::from_static("close"));
        let response = call(&client, &no_timeouts(), request).await.expect("GET");
        digest_body(response.into_body()).await;
    }
    let resumed = server.stats.resumed();
    assert_eq!(resumed, vec![false, true], "second connection must resume the first session");
}

async fn expect_certificate_failure(identity: ServerIdentity, trusted: &TestCa, why: CertificateProblem) {
    let server = TestServer::start(&identity, Alpn::H2AndHttp1).await;
    let client = client_trusting(trusted);
    let err = call(&client, &no_timeouts(), get(&server.url("/"))).await.expect_err("must not connect");
    assert!(err.is_other() || err.is_io(), "certificate failures are io/other errors: {err:?}");
    assert!(!err.is_timeout() && !err.is_user(), "{err:?}");
    let handshake = find_in_chain::<TlsHandshakeError>(&err).expect("a TLS handshake error in the chain");
    assert_eq!(handshake.kind(), HandshakeFailure::Certificate(why), "{}", error_chain(&err));
    assert_eq!(handshake.provider(), PROVIDER);
    let message = error_chain(&err);
    assert!(message.contains(&why.to_string()), "error must say why ({why}): {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_ca_is_rejected() {
    let trusted = TestCa::new("trusted CA");
    let other = TestCa::new("untrusted CA");
    expect_certificate_failure(other.leaf(&["localhost"]), &trusted, CertificateProblem::UnknownIssuer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_hostname_is_rejected() {
    let ca = TestCa::new("trusted CA");
    expect_certificate_failure(ca.leaf(&["not-localhost.example"]), &ca, CertificateProblem::NameMismatch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_certificate_is_rejected() {
    let ca = TestCa::new("trusted CA");
    expect_certificate_failure(ca.expired_leaf(&["localhost"]), &ca, CertificateProblem::Expired).await;
}

/// Connects to an `openssl s_server` peer and returns the error, after checking that it is a
/// certificate rejection that is not retried as transient and that no body byte arrived.
async fn refused_by_outside_peer(key: support::openssl::KeySpec, digest: &str) -> (CertificateProblem, String) {
    let ca = support::openssl::OpensslCa::new();
    let leaf = ca.leaf("leaf", key, digest);
    let server = support::openssl::OpensslServer::start(&leaf, &[]);
    let client = client_trusting_pem(&ca.pem);
    let err = match call(&client, &no_timeouts(), get(&server.url())).await {
        Ok(response) => panic!(
            "{key:?} leaf signed with {digest} was accepted; body: {} bytes",
            digest_body(response.into_body()).await.len
        ),
        Err(err) => err,
    };
    assert!(err.is_other(), "a certificate rejection is not transient: {err:?}");
    let handshake = find_in_chain::<TlsHandshakeError>(&err).expect("a TLS handshake error in the chain");
    let HandshakeFailure::Certificate(problem) = handshake.kind() else {
        panic!("not a certificate rejection: {}", error_chain(&err));
    };
    (problem, error_chain(&err))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sha1_signed_leaf_is_refused() {
    let (problem, message) = refused_by_outside_peer(support::openssl::KeySpec::Rsa(2048), "sha1").await;
    if PROVIDER.name() == "s2n-tls-fips" {
        // s2n-tls's FIPS policy refuses SHA-1 signatures on certificates itself, while building
        // the chain, and calls the chain untrusted (its wording; our own check never runs).
        assert_eq!(problem, CertificateProblem::UnknownIssuer, "{message}");
        assert!(message.contains("S2N_ERR_CERT_UNTRUSTED"), "{message}");
        return;
    }
    assert_eq!(problem, CertificateProblem::WeakAlgorithm, "{message}");
    // rustls names the algorithm by its DER bytes; our s2n-tls check by name; OpenSSL's
    // verification by its security level.
    let named = match PROVIDER.name() {
        "openssl" => "CA signature digest algorithm too weak",
        name if name.starts_with("s2n-tls") => "sha1WithRSAEncryption",
        _ => "UnsupportedSignatureAlgorithm",
    };
    assert!(message.contains(named), "the error says which algorithm: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rsa_1024_leaf_is_refused() {
    let (problem, message) = refused_by_outside_peer(support::openssl::KeySpec::Rsa(1024), "sha256").await;
    // rustls sees the 1024-bit key fail to verify the handshake signature; our s2n-tls check
    // names the key size; OpenSSL's verification refuses the key at its security level.
    let (expected, named) = match PROVIDER.name() {
        "openssl" => (CertificateProblem::WeakAlgorithm, "EE certificate key too weak"),
        name if name.starts_with("s2n-tls") => {
            (CertificateProblem::WeakAlgorithm, "has a 1024-bit RSA key; at least 2048 bits are required")
        }
        _ => (CertificateProblem::Other, "BadSignature"),
    };
    assert_eq!(problem, expected, "{message}");
    assert!(message.contains(named), "the error says why: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_servers_session_is_never_resumed() {
    // TLS 1.2 hands the client its session ticket inside the handshake, before the chain can be
    // judged; a second connection resuming that session would skip certificate checks.
    let ca = support::openssl::OpensslCa::new();
    let client = client_trusting_pem(&ca.pem);
    // The control: the same peer with a sound chain does resume (each `-www` response closes
    // the connection), so the refusals below are not for want of a ticket.
    let sound = support::openssl::OpensslServer::start(&ca.leaf("sound", support::openssl::KeySpec::Rsa(2048), "sha256"), &["-tls1_2"]);
    let mut resumed = Vec::new();
    for _ in 0..2 {
        let response = call(&client, &no_timeouts(), get(&sound.url())).await.expect("GET from the sound peer");
        let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
        let tls12 = match PROVIDER.name() {
            "openssl" => "TLSv1.2",
            name if name.starts_with("s2n-tls") => "TLS12",
            _ => "TLSv1_2",
        };
        assert_eq!(tls.protocol_version, tls12);
        resumed.push(tls.resumed);
        digest_body(response.into_body()).await;
    }
    assert_eq!(resumed, [false, true], "the control peer's session must be resumed");
    let leaf = ca.leaf("leaf", support::openssl::KeySpec::Rsa(2048), "sha1");
    let server = support::openssl::OpensslServer::start(&leaf, &["-tls1_2"]);
    for attempt in 1..=3 {
        let err = match call(&client, &no_timeouts(), get(&server.url())).await {
            Ok(_) => panic!("attempt {attempt}: a server refused before was accepted"),
            Err(err) => err,
        };
        let handshake = find_in_chain::<TlsHandshakeError>(&err).expect("a TLS handshake error in the chain");
        assert_eq!(
            handshake.kind(),
            HandshakeFailure::Certificate(CertificateProblem::WeakAlgorithm),
            "attempt {attempt}: {}",
            error_chain(&err)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_peer_with_a_sound_chain_is_accepted() {
    // The control for the two refusals above: same peer, same CA, an RSA-2048 leaf with SHA-256.
    let ca = support::openssl::OpensslCa::new();
    let leaf = ca.leaf("leaf", support::openssl::KeySpec::Rsa(2048), "sha256");
    let server = support::openssl::OpensslServer::start(&leaf, &[]);
    let client = client_trusting_pem(&ca.pem);
    let response = call(&client, &no_timeouts(), get(&server.url())).await.expect("GET from openssl s_server");
    assert_eq!(response.status().as_u16(), 200);
    assert!(digest_body(response.into_body()).await.len > 0, "a body arrives");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_handshake_trips_connect_timeout() {
    let ca = TestCa::new("trusted CA");
    let silent = SilentServer::start().await;
    let client = client_trusting(&ca);
    let started = Instant::now();
    let url = format!("https://localhost:{}/", silent.addr.port());
    let err = call(&client, &settings(Some(Duration::from_millis(300)), None), get(&url))
        .await
        .expect_err("handshake never completes");
    assert!(err.is_timeout(), "must be a timeout: {err:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "timed out late: {:?}", started.elapsed());
    assert!(error_chain(&err).contains("connect timeout"), "{}", error_chain(&err));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_response_head_trips_read_timeout() {
    let ca = TestCa::new("trusted CA");
    let server = server(&ca, Alpn::Http1Only).await;
    let client = client_trusting(&ca);
    let started = Instant::now();
    let err = call(&client, &settings(Some(Duration::from_secs(5)), Some(Duration::from_millis(300))), get(&server.url("/hang")))
        .await
        .expect_err("server never answers");
    assert!(err.is_timeout(), "must be a timeout: {err:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "timed out late: {:?}", started.elapsed());
    assert!(error_chain(&err).contains("read timeout"), "{}", error_chain(&err));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_work_without_a_sleep_impl_in_components() {
    let ca = TestCa::new("trusted CA");
    let silent = SilentServer::start().await;
    let client = client_trusting(&ca);
    let components = aws_smithy_runtime_api::client::runtime_components::RuntimeComponentsBuilder::for_tests()
        .with_sleep_impl(None::<aws_smithy_async::rt::sleep::SharedAsyncSleep>)
        .build()
        .unwrap();
    let connector = client.http_connector(&settings(Some(Duration::from_millis(200)), None), &components);
    let url = format!("https://localhost:{}/", silent.addr.port());
    let request = aws_smithy_runtime_api::client::orchestrator::HttpRequest::try_from(get(&url)).unwrap();
    let err = connector.call(request).await.expect_err("times out");
    assert!(err.is_timeout(), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connection_is_an_io_error() {
    let ca = TestCa::new("trusted CA");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = client_trusting(&ca);
    let err = call(&client, &no_timeouts(), get(&format!("https://127.0.0.1:{port}/"))).await.expect_err("refused");
    assert!(err.is_io(), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poisoned_connection_is_not_reused() {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, Alpn::Http1Only).await;
    let client = client_trusting(&ca);
    let capture = CaptureSmithyConnection::new();
    let mut request = get(&server.url("/bytes/10"));
    request.extensions_mut().insert(capture.clone());
    let response = call(&client, &no_timeouts(), request).await.expect("GET");
    digest_body(response.into_body()).await;
    let metadata = capture.get().expect("connection metadata captured");
    assert_eq!(metadata.remote_addr(), Some(server.addr));
    metadata.poison();
    // Give the pool the moment in which it would take the connection back (see connection_reuse).
    tokio::time::sleep(Duration::from_millis(20)).await;
    let response = call(&client, &no_timeouts(), get(&server.url("/bytes/10"))).await.expect("GET");
    digest_body(response.into_body()).await;
    assert_eq!(server.accepted(), 2, "a poisoned connection must not be reused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_endpoints_work() {
    // IMDS and local test endpoints are http://; the same client must serve them.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        hyper::server::conn::http1::Builder::new()
            .serve_connection(
                hyper_util::rt::TokioIo::new(tcp),
                hyper::service::service_fn(|_req| async {
                    Ok::<_, std::convert::Infallible>(http::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"plain"))))
                }),
            )
            .await
            .ok();
    });
    let ca = TestCa::new("unused CA");
    let client = client_trusting(&ca);
    let response = call(&client, &no_timeouts(), get(&format!("http://{addr}/"))).await.expect("GET");
    assert!(response.extension::<ConnectionInfo>().expect("info").tls.is_none());
    let mut expected = Digest::default();
    expected.update(b"plain");
    assert_eq!(digest_body(response.into_body()).await, expected);
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_share_one_h2_connection() {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, Alpn::H2AndHttp1).await;
    let client = client_trusting(&ca);
    // Warm the pool, then fan out.
    let response = call(&client, &no_timeouts(), get(&server.url("/bytes/1"))).await.expect("GET");
    digest_body(response.into_body()).await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let client = client.clone();
        let url = server.url("/bytes/100000");
        tasks.push(tokio::spawn(async move {
            let response = call(&client, &settings(None, None), get(&url)).await.expect("GET");
            digest_body(response.into_body()).await
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), Digest::of_pattern(100000));
    }
    assert_eq!(server.accepted(), 1, "h2 multiplexes every caller over one connection");
}

#[test]
fn connector_metadata_names_this_crate() {
    let ca = TestCa::new("conformance CA");
    let client = client_trusting(&ca);
    let metadata = client.connector_metadata().expect("metadata");
    assert!(metadata.to_string().contains("smithy-default-tls"), "{metadata}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_resumption_can_be_disabled() {
    let ca = TestCa::new("conformance CA");
    let server = server(&ca, Alpn::Http1Only).await;
    let client = provider_builder()
        .extra_root_pem(&ca.pem)
        .unwrap()
        .session_resumption(false)
        .build()
        .unwrap();
    for _ in 0..2 {
        let mut request = get(&server.url("/"));
        request.headers_mut().insert("connection", http::HeaderValue::from_static("close"));
        let response = call(&client, &no_timeouts(), request).await.expect("GET");
        digest_body(response.into_body()).await;
    }
    assert_eq!(server.stats.resumed(), vec![false, false]);
}

#[cfg(roots = "webpki")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webpki_roots_load_and_do_not_trust_a_private_ca() {
    let ca = TestCa::new("private CA");
    let server = server(&ca, Alpn::Http1Only).await;
    let client = provider_builder()
        .trust_roots(smithy_default_tls::TrustRoots::Webpki)
        .build()
        .expect("client");
    let err = call(&client, &no_timeouts(), get(&server.url("/"))).await.expect_err("private CA is not a public root");
    let handshake = find_in_chain::<TlsHandshakeError>(&err).unwrap_or_else(|| panic!("{}", error_chain(&err)));
    assert_eq!(handshake.kind(), HandshakeFailure::Certificate(CertificateProblem::UnknownIssuer), "{}", error_chain(&err));
}

#[cfg(roots = "webpki")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webpki_roots_plus_extra_pem_trust_both() {
    let ca = TestCa::new("private CA");
    let server = server(&ca, Alpn::Http1Only).await;
    let client = provider_builder()
        .trust_roots(smithy_default_tls::TrustRoots::Webpki)
        .extra_root_pem(&ca.pem)
        .unwrap()
        .build()
        .expect("client");
    let response = call(&client, &no_timeouts(), get(&server.url("/"))).await.expect("extra PEM on top of webpki");
    assert_eq!(response.status().as_u16(), 200);
}

// ---- Faults on the wire ----------------------------------------------------------------------

use support::faulty::{Fault, FaultyServer, H2Fault};

const FAULT_BODY: usize = 256 * 1024;

/// GETs `url` through `client` and reads the body, which must fail: never a short success. The
/// fault may also reach the client before the response head does (under load, a reset can
/// overtake data the client has not read yet); the request then fails instead. Returns how many
/// body bytes arrived before the error, and the error.
async fn body_fails(client: &SmithyTlsClient, url: &str) -> (u64, String) {
    let response = match call(client, &settings(Some(Duration::from_secs(5)), Some(Duration::from_secs(5))), get(url)).await {
        Ok(response) => response,
        Err(err) => return (0, error_chain(&err)),
    };
    assert_eq!(response.status().as_u16(), 200);
    match tokio::time::timeout(Duration::from_secs(10), try_digest_body(response.into_body())).await {
        Ok(Err((arrived, error))) => (arrived.len, error),
        Ok(Ok(digest)) => panic!("a body cut short was reported complete ({} bytes)", digest.len),
        Err(_) => panic!("the body neither ended nor failed within 10 s"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_shorter_than_its_content_length_is_an_error() {
    let ca = TestCa::new("fault CA");
    let server = FaultyServer::start(&ca.leaf(&["localhost"]), Fault::TruncatedBody { len: FAULT_BODY }).await;
    let (arrived, error) = body_fails(&client_trusting(&ca), &server.url("/")).await;
    assert!(arrived < FAULT_BODY as u64, "{arrived}");
    assert!(!error.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_in_the_middle_of_the_body_is_an_error() {
    let ca = TestCa::new("fault CA");
    let server = FaultyServer::start(&ca.leaf(&["localhost"]), Fault::ResetMidBody { len: FAULT_BODY }).await;
    let (arrived, error) = body_fails(&client_trusting(&ca), &server.url("/")).await;
    assert!(arrived < FAULT_BODY as u64, "{arrived}");
    assert!(error.to_lowercase().contains("reset"), "the error says the connection was reset: {error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_that_arrives_behind_unread_data_is_still_an_error() {
    // The client reads nothing until the half body and the reset have both arrived, so the
    // kernel hands it the data and then the reset in one go: the reset must still be reported
    // (once told, the socket reads as a clean end of file).
    let ca = TestCa::new("fault CA");
    let server = FaultyServer::start(&ca.leaf(&["localhost"]), Fault::ResetMidBody { len: FAULT_BODY }).await;
    let client = client_trusting(&ca);
    let settings = settings(Some(Duration::from_secs(5)), Some(Duration::from_secs(5)));
    let response = match call(&client, &settings, get(&server.url("/"))).await {
        Ok(response) => response,
        // Under load the reset can overtake the head too; that is an error as well.
        Err(err) => {
            let chain = error_chain(&err);
            assert!(chain.to_lowercase().contains("reset"), "{chain}");
            return;
        }
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    match tokio::time::timeout(Duration::from_secs(10), try_digest_body(response.into_body())).await {
        Ok(Err((arrived, error))) => {
            assert!(arrived.len < FAULT_BODY as u64, "{}", arrived.len);
            assert!(error.to_lowercase().contains("reset"), "the error says the connection was reset: {error}");
        }
        Ok(Ok(digest)) => panic!("a body cut short was reported complete ({} bytes)", digest.len),
        Err(_) => panic!("the body neither ended nor failed within 10 s"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_h2_stream_reset_in_the_middle_of_the_body_is_an_error() {
    let ca = TestCa::new("fault CA");
    let server =
        FaultyServer::start_h2(&ca.leaf(&["localhost"]), H2Fault::ResetStreamMidBody { len: FAULT_BODY }).await;
    let (arrived, error) = body_fails(&client_trusting(&ca), &server.url("/")).await;
    assert!(arrived < FAULT_BODY as u64, "{arrived}");
    assert!(error.contains("stream error"), "the error names the stream reset: {error}");
}

/// A body that stops arriving stays pending (no error, no end) so that the SDK's stalled-stream
/// protection, which watches the bytes a body yields over time, sees the stall.
async fn stall_is_visible(fault: Fault, expect_bytes: bool) {
    let ca = TestCa::new("fault CA");
    let server = FaultyServer::start(&ca.leaf(&["localhost"]), fault).await;
    let response = call(&client_trusting(&ca), &settings(None, Some(Duration::from_secs(5))), get(&server.url("/")))
        .await
        .expect("the response head arrives");
    let mut body = response.into_body();
    let mut arrived = 0;
    loop {
        match tokio::time::timeout(Duration::from_millis(300), http_body_util::BodyExt::frame(&mut body)).await {
            Ok(Some(Ok(frame))) => arrived += frame.data_ref().map_or(0, |d| d.len()),
            Ok(other) => panic!("a stalled body must stay pending, got {:?}", other.map(|r| r.map(|_| ()))),
            Err(_) => break, // pending: the stall is visible
        }
    }
    assert_eq!(arrived > 0, expect_bytes, "{arrived} bytes before the stall");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_after_the_head_leaves_the_body_pending() {
    stall_is_visible(Fault::StallAfterHead, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_in_the_middle_of_the_body_leaves_it_pending() {
    stall_is_visible(Fault::StallMidBody { len: FAULT_BODY }, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pooled_connection_the_server_closed_is_replaced_or_the_error_is_retryable() {
    let ca = TestCa::new("fault CA");
    let idle = Duration::from_millis(100);
    let server = FaultyServer::start(&ca.leaf(&["localhost"]), Fault::CloseWhenIdle { len: 1000, idle }).await;
    let client = client_trusting(&ca);
    let connect = settings(Some(Duration::from_secs(5)), Some(Duration::from_secs(5)));
    let (mut fresh, mut retryable) = (0, 0);
    // Reuse around the moment the server closes the idle connection, before and after.
    for delay_ms in [0u64, 60, 90, 95, 100, 105, 110, 150, 250] {
        // A connection just used: the previous round's may be closing right now, so this
        // request may itself meet the race; it is allowed the retry the SDK would make.
        let mut attempts = 0;
        loop {
            attempts += 1;
            match call(&client, &connect, get(&server.url("/"))).await {
                Ok(response) => {
                    digest_body(response.into_body()).await;
                    break;
                }
                Err(err) if err.is_io() && attempts < 3 => continue,
                Err(err) => panic!("after {attempts} attempts: {err:?}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        let started = Instant::now();
        match tokio::time::timeout(Duration::from_secs(10), call(&client, &connect, get(&server.url("/")))).await {
            Err(_) => panic!("after {delay_ms} ms: the request hung"),
            Ok(Ok(response)) => {
                assert_eq!(try_digest_body(response.into_body()).await.map(|d| d.len), Ok(1000), "after {delay_ms} ms");
                fresh += 1;
            }
            Ok(Err(err)) => {
                assert!(err.is_io(), "after {delay_ms} ms: must be retryable (io): {err:?}");
                retryable += 1;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(5), "after {delay_ms} ms: took {:?}", started.elapsed());
    }
    println!("reuse after the server's idle close: {fresh} succeeded, {retryable} failed as retryable");
    assert!(fresh > 0, "a closed connection must be replaced when the close is seen first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_goaway_moves_new_requests_to_a_new_connection() {
    let ca = TestCa::new("fault CA");
    let server = FaultyServer::start_h2(&ca.leaf(&["localhost"]), H2Fault::GoAwayAfterFirst { len: 1000 }).await;
    let client = client_trusting(&ca);
    for round in 0..3 {
        let response = tokio::time::timeout(Duration::from_secs(10), call(&client, &no_timeouts(), get(&server.url("/"))))
            .await
            .unwrap_or_else(|_| panic!("round {round}: hung ({} connection(s) accepted so far)", server.accepted()));
        match response {
            Ok(response) => assert_eq!(try_digest_body(response.into_body()).await.map(|d| d.len), Ok(1000)),
            Err(err) => assert!(err.is_io(), "round {round}: a request refused by GOAWAY must be retryable: {err:?}"),
        }
    }
    assert!(server.accepted() >= 2, "after GOAWAY, new requests go to a new connection");
}

// ---- DNS resolver override --------------------------------------------------------------------

#[derive(Debug)]
struct FailingResolver;

impl aws_smithy_runtime_api::client::dns::ResolveDns for FailingResolver {
    fn resolve_dns<'a>(&'a self, _name: &'a str) -> aws_smithy_runtime_api::client::dns::DnsFuture<'a> {
        aws_smithy_runtime_api::client::dns::DnsFuture::ready(Err(
            aws_smithy_runtime_api::client::dns::ResolveDnsError::new("no such name in the test's resolver"),
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_dns_resolver_is_a_retryable_error_that_names_the_host() {
    let ca = TestCa::new("unused CA");
    let client = provider_builder()
        .extra_root_pem(&ca.pem)
        .unwrap()
        .dns_resolver(FailingResolver)
        .build()
        .unwrap();
    let err = call(&client, &no_timeouts(), get("https://nowhere.test/")).await.expect_err("cannot resolve");
    assert!(err.is_io(), "{err:?}");
    let message = error_chain(&err);
    assert!(message.contains("DNS lookup of nowhere.test"), "{message}");
}
