//! `platform-verifier` roots with each rustls provider. On Linux the platform verifier checks
//! chains with webpki against the native store, which honours SSL_CERT_FILE; so a private CA in
//! SSL_CERT_FILE is trusted and everything else is refused with a provider-neutral reason. Its
//! own test binary: the environment must be set before anything reads the store.
#![cfg(all(
    feature = "platform-verifier",
    target_os = "linux",
    any(feature = "rustls-aws-lc", feature = "rustls-ring")
))]

use smithy_tls_test_support as support;

use std::time::Duration;

use smithy_default_tls::{
    CertificateProblem, ConnectionInfo, HandshakeFailure, SmithyTlsClient, TlsHandshakeError, TlsProvider, TrustRoots,
};
use support::*;

fn rustls_providers() -> Vec<TlsProvider> {
    TlsProvider::ALL.iter().copied().filter(|p| p.name().starts_with("rustls")).collect()
}

fn platform_client(provider: TlsProvider, extra: Option<&TestCa>) -> SmithyTlsClient {
    let mut builder = SmithyTlsClient::builder().provider(provider).trust_roots(TrustRoots::PlatformVerifier);
    if let Some(ca) = extra {
        builder = builder.extra_root_pem(ca.pem.as_bytes()).expect("PEM");
    }
    builder.build().expect("client")
}

async fn certificate_problem(client: &SmithyTlsClient, server: &TestServer) -> CertificateProblem {
    let settings = settings(Some(Duration::from_secs(5)), Some(Duration::from_secs(5)));
    let err = call(client, &settings, get(&server.url("/"))).await.expect_err("must not connect");
    let handshake = find_in_chain::<TlsHandshakeError>(&err).expect("a TLS handshake error in the chain");
    match handshake.kind() {
        HandshakeFailure::Certificate(problem) => problem,
        other => panic!("expected a certificate failure, got {other:?}: {}", error_chain(&err)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn platform_verifier_trusts_the_system_store_and_extra_roots_and_nothing_else() {
    let system_ca = TestCa::new("system store CA");
    let extra_ca = TestCa::new("extra CA");
    let stranger = TestCa::new("unknown CA");
    // The only test in this binary that reads the store or the environment.
    let dir = system_ca.install_as_ssl_cert_file("platform");

    let settings = settings(Some(Duration::from_secs(5)), Some(Duration::from_secs(5)));
    let providers = rustls_providers();
    assert!(!providers.is_empty(), "build with a rustls provider");
    for provider in providers {
        // Trusted through the store.
        let server = TestServer::start(&system_ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
        let client = platform_client(provider, None);
        let response = call(&client, &settings, get(&server.url("/bytes/5000"))).await.expect("GET via the store");
        let info = response.extension::<ConnectionInfo>().cloned().expect("info");
        assert_eq!(info.tls.as_ref().map(|t| t.provider), Some(provider));
        // The platform verifier is built on rustls 0.23: its clients stay there, also where
        // `experimental-rustls-024` puts rustls-aws-lc's other clients on 0.24.
        assert_eq!(info.tls.as_ref().map(|t| t.library), Some("rustls 0.23"), "{provider}");
        assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(5000));

        // Refused: unknown issuer, wrong name, expired.
        let unknown = TestServer::start(&stranger.leaf(&["localhost"]), Alpn::Http1Only).await;
        assert_eq!(certificate_problem(&client, &unknown).await, CertificateProblem::UnknownIssuer, "{provider}");
        let wrong_name = TestServer::start(&system_ca.leaf(&["elsewhere.example"]), Alpn::Http1Only).await;
        assert_eq!(certificate_problem(&client, &wrong_name).await, CertificateProblem::NameMismatch, "{provider}");
        let expired = TestServer::start(&system_ca.expired_leaf(&["localhost"]), Alpn::Http1Only).await;
        assert_eq!(certificate_problem(&client, &expired).await, CertificateProblem::Expired, "{provider}");

        // Extra roots are trusted on top of the store, and only by the client given them.
        let extra_server = TestServer::start(&extra_ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        assert_eq!(certificate_problem(&client, &extra_server).await, CertificateProblem::UnknownIssuer);
        let with_extra = platform_client(provider, Some(&extra_ca));
        let response = call(&with_extra, &settings, get(&extra_server.url("/bytes/10"))).await.expect("extra root");
        assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(10));
        let response = call(&with_extra, &settings, get(&server.url("/bytes/10"))).await.expect("store root too");
        assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(10));
    }

    // A PEM block that is not a certificate is the caller's input error, not the store's.
    let garbage = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
    let provider = rustls_providers()[0];
    let client = SmithyTlsClient::builder()
        .provider(provider)
        .trust_roots(TrustRoots::PlatformVerifier)
        .extra_root_pem(garbage.as_bytes())
        .expect("well-formed PEM")
        .build()
        .expect("client");
    let server = TestServer::start(&system_ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    let err = call(&client, &settings, get(&server.url("/"))).await.expect_err("unusable extra root");
    let message = error_chain(&err);
    assert!(message.contains("extra root certificate"), "{message}");
    assert!(!message.contains("SSL_CERT_FILE"), "must not blame the system store: {message}");
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(feature = "s2n-tls")]
#[test]
fn s2n_tls_refuses_platform_verifier_roots_when_built() {
    let err = SmithyTlsClient::builder()
        .provider(TlsProvider::S2nTls)
        .trust_roots(TrustRoots::PlatformVerifier)
        .build()
        .expect_err("s2n-tls has no platform verifier");
    let message = err.to_string();
    assert!(message.contains("rustls provider") && message.contains("native"), "{message}");
}

#[cfg(feature = "s2n-tls")]
#[test]
fn the_shared_client_refusal_is_available_up_front() {
    let err = smithy_default_tls::try_shared_client(TlsProvider::S2nTls, TrustRoots::PlatformVerifier)
        .expect_err("s2n-tls has no platform verifier");
    assert!(
        matches!(err, smithy_default_tls::Error::UnsupportedRoots(u) if u.provider == TlsProvider::S2nTls),
        "{err:?}"
    );
}
