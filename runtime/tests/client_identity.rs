//! Mutual TLS: a client identity presented to servers that ask for one, on every provider
//! compiled in (as the conformance suite runs per provider, these tests loop over
//! `TlsProvider::ALL`; `rustls-custom` needs the application's crypto and is left to its own
//! binary). The servers: rustls with a client verifier (test-support's `TestServer`), and
//! `openssl s_server -Verify 1`. Also: what `ClientIdentity` refuses when it is built.

use std::process::Command;
use std::time::Duration;

use aws_smithy_runtime_api::client::result::ConnectorError;
use rcgen::KeyPair;
use smithy_default_tls::{
    ClientCertificateProblem, ClientIdentity, ConnectionInfo, HandshakeFailure, IdentityError, KeyType,
    SmithyTlsClient, TlsHandshakeError, TlsProvider,
};
use smithy_tls_test_support::openssl::{KeySpec, OpensslCa, OpensslServer};
use smithy_tls_test_support::rustls;
use smithy_tls_test_support::*;

/// The providers under test: every one compiled in but `rustls-custom` (the application's own
/// provider, tested in its own suite).
fn providers() -> impl Iterator<Item = TlsProvider> {
    TlsProvider::ALL.iter().copied().filter(|p| p.name() != "rustls-custom")
}

fn client(provider: TlsProvider, ca_pem: &str, identity: Option<&ClientIdentity>) -> SmithyTlsClient {
    let builder = SmithyTlsClient::builder().provider(provider).extra_root_pem(ca_pem).expect("CA PEM");
    let builder = match identity {
        Some(identity) => builder.client_identity(identity.clone()),
        None => builder,
    };
    builder.build().expect("client")
}

/// Every call is bounded in time: a refusal that never reaches the client fails its test with a
/// timeout naming the provider and version, instead of hanging the suite (seen once, in a FIPS
/// run of the whole suite: `a_key_that_cannot_sign_any_scheme_the_server_takes_says_so`).
fn bounded() -> aws_smithy_runtime_api::client::http::HttpConnectorSettings {
    settings(Some(Duration::from_secs(30)), Some(Duration::from_secs(30)))
}

/// The key types every provider here signs with (Ed25519: not the FIPS providers).
fn key_pairs(provider: TlsProvider) -> Vec<(&'static str, KeyPair)> {
    let mut keys = vec![
        ("ECDSA P-256", KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256")),
        ("RSA 2048", rsa_key_pair()),
    ];
    if !provider.name().ends_with("-fips") && !is_s2n(provider) {
        keys.push(("Ed25519", KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("Ed25519")));
    }
    keys
}

fn is_s2n(provider: TlsProvider) -> bool {
    provider.name().starts_with("s2n-tls")
}

/// s2n-tls takes no Ed25519 certificate, and a FIPS provider no Ed25519 key (FIPS does not
/// approve it): each says so when the client is prepared, before any byte of a handshake is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ed25519_is_refused_plainly_by_s2n_tls_and_the_fips_providers() {
    let client_ca = TestCa::new("client CA");
    let identity = identity_for(&client_ca, &KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("Ed25519"));
    let refusing = providers().filter(|&p| is_s2n(p) || p.name().ends_with("-fips")).collect::<Vec<_>>();
    assert!(
        !refusing.is_empty()
            || !cfg!(any(feature = "s2n-tls", feature = "s2n-tls-fips", feature = "rustls-aws-lc-fips"))
    );
    for provider in refusing {
        let err = refused_before_any_byte(provider, &identity).await;
        let refused = find_in_chain::<smithy_default_tls::Error>(&err);
        let fips = provider.name().ends_with("-fips");
        assert!(
            matches!(
                refused,
                Some(smithy_default_tls::Error::TlsConfig {
                    reason: smithy_default_tls::TlsConfigError::ClientKeyNotFipsApproved(KeyType::Ed25519),
                    ..
                }) if fips
            ) || matches!(
                refused,
                Some(smithy_default_tls::Error::TlsConfig {
                    reason: smithy_default_tls::TlsConfigError::ClientKeyTypeUnsupported(KeyType::Ed25519),
                    ..
                }) if !fips
            ),
            "{provider}: {}",
            error_chain(&err)
        );
    }
}

/// An RSA-2048 key (rcgen on ring cannot generate one): made by the `openssl` program.
fn rsa_key_pair() -> KeyPair {
    let pem = openssl_stdout(&["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], None);
    KeyPair::from_pem(&pem).expect("RSA key")
}

/// Runs `openssl` with `args` (and `stdin`), returning what it printed.
fn openssl_stdout(args: &[&str], stdin: Option<&str>) -> String {
    use std::io::Write;
    let mut child = Command::new("openssl")
        .args(args)
        .env_remove("OPENSSL_CONF")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run openssl (apt-get install openssl)");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.unwrap_or("").as_bytes()).expect("write stdin");
    drop(input);
    let output = child.wait_with_output().expect("openssl output");
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn identity_for(ca: &TestCa, key: &KeyPair) -> ClientIdentity {
    let pem = ca.client_leaf("client", key);
    ClientIdentity::from_pem(&pem.cert, &pem.key).expect("client identity")
}

static TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
static TLS12: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];

fn tls13_and_12() -> [(&'static str, &'static [&'static rustls::SupportedProtocolVersion]); 2] {
    [("TLS 1.3", TLS13), ("TLS 1.2", TLS12)]
}

/// The client-certificate problem of a failed request, and that it is not retried.
fn client_certificate_problem(err: &ConnectorError, case: &str) -> Option<ClientCertificateProblem> {
    assert!(!sdk_retries(err), "{case}: a refused client certificate is never retried: {}", error_chain(err));
    match find_in_chain::<TlsHandshakeError>(err)?.kind() {
        HandshakeFailure::ClientCertificate(problem) => Some(problem),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_asks_accepts_each_key_type_on_both_versions() {
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    for provider in providers() {
        for (key_name, key) in key_pairs(provider) {
            let identity = identity_for(&client_ca, &key);
            for (version, versions) in tls13_and_12() {
                let leaf = server_ca.leaf(&["localhost"]);
                let server =
                    TestServer::start_requiring_client_auth(&leaf, Alpn::H2AndHttp1, &client_ca.pem, versions).await;
                let client = client(provider, &server_ca.pem, Some(&identity));
                let result = call(&client, &bounded(), get(&server.url("/"))).await;
                let case = format!("{provider} {key_name} {version}");
                let response = result.unwrap_or_else(|e| panic!("{case}: {}", error_chain(&e)));
                assert_eq!(response.status().as_u16(), 200, "{case}");
                let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
                assert!(tls.client_certificate_sent, "{case}: {tls:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_ask_gets_no_certificate() {
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    let identity = identity_for(&client_ca, &KeyPair::generate().expect("key"));
    let server = TestServer::start(&server_ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    for provider in providers() {
        let client = client(provider, &server_ca.pem, Some(&identity));
        let response = call(&client, &bounded(), get(&server.url("/"))).await.expect("GET");
        let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
        assert!(!tls.client_certificate_sent, "{provider}: {tls:?}");
    }
}

/// How the server of a refusal treats the client certificate it asks for.
enum Asking<'a> {
    /// Verifies it against the client CA, naming only these signature schemes where given.
    Verifies(Option<&'a [rustls::SignatureScheme]>),
    /// Refuses every certificate with this error, sending the alert rustls gives it.
    RefusesAs(rustls::CertificateError),
}

/// Each refusal on both versions: in TLS 1.2 during the handshake; in TLS 1.3 the server's alert
/// comes after the client's handshake, as the first read's error, with the same variant.
async fn assert_refused(identity: Option<&ClientIdentity>, client_ca: &TestCa, expected: ClientCertificateProblem) {
    assert_refused_asking_for(identity, client_ca, Asking::Verifies(None), expected).await;
}

/// [`assert_refused`] by a server that asks as `asking` says.
async fn assert_refused_asking_for(
    identity: Option<&ClientIdentity>,
    client_ca: &TestCa,
    asking: Asking<'_>,
    expected: ClientCertificateProblem,
) {
    let server_ca = TestCa::new("server CA");
    for provider in providers() {
        for (version, versions) in tls13_and_12() {
            let leaf = server_ca.leaf(&["localhost"]);
            let server = match &asking {
                Asking::Verifies(schemes) => {
                    TestServer::start_requiring_client_auth_with_schemes(
                        &leaf,
                        Alpn::H2AndHttp1,
                        &client_ca.pem,
                        versions,
                        *schemes,
                    )
                    .await
                }
                Asking::RefusesAs(refusal) => {
                    let (alpn, ca) = (Alpn::H2AndHttp1, &client_ca.pem);
                    TestServer::start_refusing_client_certificates(&leaf, alpn, ca, versions, refusal.clone()).await
                }
            };
            let client = client(provider, &server_ca.pem, identity);
            let result = call(&client, &bounded(), get(&server.url("/"))).await;
            let err = result.map(|r| r.status()).expect_err(&format!("{provider} {version}: refused"));
            let case = format!("{provider} {version}: {}", error_chain(&err));
            assert_eq!(client_certificate_problem(&err, &case), Some(expected), "{case}");
        }
    }
}

/// The server's own verdict, as its alert names it: `certificate_revoked` is `Revoked`;
/// `access_denied`, `bad_certificate`, `unsupported_certificate` and `certificate_unknown` are
/// `Rejected`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_verdict_is_named_by_its_alert() {
    use rustls::CertificateError as Why;
    let ca = TestCa::new("client CA");
    let identity = identity_for(&ca, &KeyPair::generate().expect("key"));
    let verdicts = [
        (Why::Revoked, ClientCertificateProblem::Revoked),
        (Why::ApplicationVerificationFailure, ClientCertificateProblem::Rejected),
        (Why::NotValidForName, ClientCertificateProblem::Rejected),
        (Why::InvalidPurpose, ClientCertificateProblem::Rejected),
        (Why::Other(rustls::OtherError(std::sync::Arc::new(std::fmt::Error))), ClientCertificateProblem::Rejected),
    ];
    for (why, expected) in verdicts {
        assert_refused_asking_for(Some(&identity), &ca, Asking::RefusesAs(why), expected).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_from_a_ca_the_server_does_not_trust_is_refused_as_unknown_issuer() {
    let (trusted, other) = (TestCa::new("client CA"), TestCa::new("another CA"));
    let identity = identity_for(&other, &KeyPair::generate().expect("key"));
    assert_refused(Some(&identity), &trusted, ClientCertificateProblem::UnknownIssuer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_certificate_is_refused_as_expired() {
    let ca = TestCa::new("client CA");
    let key = KeyPair::generate().expect("key");
    let pem = ca.expired_client_leaf("client", &key);
    let identity = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("an expired certificate is still an identity");
    assert_refused(Some(&identity), &ca, ClientCertificateProblem::Expired).await;
}

/// A server that takes only RSA signatures, and an ECDSA identity: nothing can be sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_that_cannot_sign_any_scheme_the_server_takes_says_so() {
    use rustls::SignatureScheme as S;
    let ca = TestCa::new("client CA");
    let identity = identity_for(&ca, &KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256"));
    let rsa_only = [S::RSA_PSS_SHA256, S::RSA_PSS_SHA384, S::RSA_PKCS1_SHA256];
    assert_refused_asking_for(
        Some(&identity),
        &ca,
        Asking::Verifies(Some(&rsa_only)),
        ClientCertificateProblem::KeyCannotSign,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_identity_for_a_server_that_requires_one_is_required() {
    let ca = TestCa::new("client CA");
    assert_refused(None, &ca, ClientCertificateProblem::Required).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openssl_s_server_with_verify_accepts_the_identity_and_requires_one() {
    let server_ca = OpensslCa::new();
    let leaf = server_ca.leaf("localhost", KeySpec::EcP256, "sha256");
    let client_ca = TestCa::new("client CA");
    let ca_file = std::env::temp_dir().join(format!("smithy-tls-client-ca-{}.pem", std::process::id()));
    std::fs::write(&ca_file, &client_ca.pem).expect("client CA file");
    let ca_path = ca_file.to_str().expect("UTF-8 path");
    let identity = identity_for(&client_ca, &KeyPair::generate().expect("key"));
    for provider in providers() {
        for version in ["-tls1_3", "-tls1_2"] {
            let server =
                OpensslServer::start(&leaf, &["-Verify", "1", "-verify_return_error", "-CAfile", ca_path, version]);
            let with = client(provider, &server_ca.pem, Some(&identity));
            let timeouts = settings(Some(Duration::from_secs(10)), Some(Duration::from_secs(10)));
            let response = call(&with, &timeouts, get(&server.url())).await;
            let response = response.unwrap_or_else(|e| panic!("{provider} {version}: {}", error_chain(&e)));
            assert_eq!(response.status().as_u16(), 200);
            let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
            assert!(tls.client_certificate_sent, "{provider} {version}: {tls:?}");

            // s_server serves one connection at a time, and the first client's is still open.
            let server =
                OpensslServer::start(&leaf, &["-Verify", "1", "-verify_return_error", "-CAfile", ca_path, version]);
            let without = client(provider, &server_ca.pem, None);
            let timeouts = settings(Some(Duration::from_secs(10)), Some(Duration::from_secs(10)));
            let err = call(&without, &timeouts, get(&server.url())).await.expect_err("no identity");
            let case = format!("{provider} {version}: {}", error_chain(&err));
            assert_eq!(client_certificate_problem(&err, &case), Some(ClientCertificateProblem::Required), "{case}");
        }
    }
    let _ = std::fs::remove_file(&ca_file);
}

/// The configuration error a request failed with, if it failed with one.
fn tls_config_error(err: &ConnectorError) -> Option<&smithy_default_tls::TlsConfigError> {
    match find_in_chain::<smithy_default_tls::Error>(err) {
        Some(smithy_default_tls::Error::TlsConfig { reason, .. }) => Some(reason),
        _ => None,
    }
}

/// A request with `identity` to `openssl s_server` verifying client certificates against
/// `client_ca_file` only (so an intermediate must come from the client), on `version`.
async fn call_verifying_server(
    provider: TlsProvider,
    identity: &ClientIdentity,
    server_ca: &OpensslCa,
    client_ca_file: &std::path::Path,
    version: &str,
) -> Result<aws_smithy_runtime_api::client::orchestrator::HttpResponse, ConnectorError> {
    let leaf = server_ca.leaf("localhost", KeySpec::EcP256, "sha256");
    let ca_path = client_ca_file.to_str().expect("UTF-8 path");
    let server = OpensslServer::start(&leaf, &["-Verify", "1", "-verify_return_error", "-CAfile", ca_path, version]);
    call(&client(provider, &server_ca.pem, Some(identity)), &bounded(), get(&server.url())).await
}

/// ECDSA P-384 and P-521 keys, and a chain with an intermediate the server does not have, on
/// every provider and both versions, to a server that verifies them: each is sent and taken. A
/// provider whose crypto cannot load a key type says so, typed, before any handshake (ring:
/// P-521), and the identity is still taken for the others in the same build.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_curve_and_an_intermediate_are_presented_by_every_provider_that_can() {
    let (server_ca, client_ca) = (OpensslCa::new(), OpensslCa::new());
    let cases = [
        ("ECDSA P-384", client_ca.client_leaf("p384", KeySpec::EcP384, false)),
        ("ECDSA P-521", client_ca.client_leaf("p521", KeySpec::EcP521, false)),
        ("RSA 2048 via an intermediate", client_ca.client_leaf("chained", KeySpec::Rsa(2048), true)),
    ];
    for (name, files) in &cases {
        let identity = ClientIdentity::from_pem(files.chain_pem(), files.key_pem())
            .unwrap_or_else(|e| panic!("{name}: taken whatever providers are compiled: {e}"));
        assert_eq!(identity.certificate_chain().len(), if files.intermediate.is_some() { 2 } else { 1 }, "{name}");
        for provider in providers() {
            let ring_p521 = provider.name() == "rustls-ring" && identity.key_type() == KeyType::EcdsaP521;
            for version in ["-tls1_3", "-tls1_2"] {
                let case = format!("{provider} {name} {version}");
                let result =
                    call_verifying_server(provider, &identity, &server_ca, &client_ca.ca_file(), version).await;
                if ring_p521 {
                    let err = result.expect_err(&case);
                    assert!(
                        matches!(
                            tls_config_error(&err),
                            Some(smithy_default_tls::TlsConfigError::ClientKeyRefused {
                                key_type: KeyType::EcdsaP521,
                                ..
                            })
                        ),
                        "{case}: {}",
                        error_chain(&err)
                    );
                    assert!(!sdk_retries(&err), "{case}: a configuration error is not retried");
                    continue;
                }
                // rustls offers no secp521r1 key exchange, so a TLS 1.2 client hello from it
                // names no P-521 in supported_groups, and OpenSSL's TLS 1.2 server then refuses a
                // P-521 client certificate (illegal_parameter): TLS 1.3 has no such tie.
                if provider.name().starts_with("rustls") && name.ends_with("P-521") && version == "-tls1_2" {
                    let err = result.expect_err(&format!("{case}: rustls has no P-521 group to offer"));
                    let failed = find_in_chain::<TlsHandshakeError>(&err).map(TlsHandshakeError::kind);
                    assert!(matches!(failed, Some(HandshakeFailure::Protocol)), "{case}: {}", error_chain(&err));
                    continue;
                }
                let response = result.unwrap_or_else(|e| panic!("{case}: {}", error_chain(&e)));
                assert_eq!(response.status().as_u16(), 200, "{case}");
                let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
                assert!(tls.client_certificate_sent, "{case}: {tls:?}");
            }
        }
    }
}

/// A P-256 leaf of `client_ca` with its key written without the public half (SEC1, `-no_public`),
/// as the identity that fits (`right`) and with another leaf's key written so (`wrong`).
struct BareKeys {
    files: smithy_tls_test_support::openssl::OpensslLeaf,
    other: smithy_tls_test_support::openssl::OpensslLeaf,
    right: ClientIdentity,
    wrong: ClientIdentity,
}

fn bare_keys(client_ca: &OpensslCa) -> BareKeys {
    let files = client_ca.client_leaf("bare", KeySpec::EcP256, false);
    let bare = openssl_stdout(&["ec", "-no_public"], Some(&files.key_pem()));
    let other = client_ca.client_leaf("other", KeySpec::EcP256, false);
    let other_bare = openssl_stdout(&["ec", "-no_public"], Some(&other.key_pem()));
    let right = ClientIdentity::from_pem(files.chain_pem(), &bare).expect("a bare key is taken");
    let wrong = ClientIdentity::from_pem(files.chain_pem(), &other_bare).expect("nothing to compare it with here");
    BareKeys { files, other, right, wrong }
}

/// A key whose encoding carries no public half (SEC1 written with `-no_public`):
/// `ClientIdentity::from_pem` cannot compare it with the certificate, so the provider's own
/// crypto does when the client is prepared. The right key is sent; another is refused as
/// `ClientKeyMismatch`, typed, before any handshake, by every provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_without_its_public_half_is_checked_by_the_provider_that_presents_it() {
    let (server_ca, client_ca) = (OpensslCa::new(), OpensslCa::new());
    let BareKeys { files, other, right, wrong } = bare_keys(&client_ca);
    for provider in providers() {
        // ring loads no EC key without its public half: refused as such, typed, either way.
        if provider.name() == "rustls-ring" {
            for identity in [&right, &wrong] {
                let ca_file = client_ca.ca_file();
                let result = call_verifying_server(provider, identity, &server_ca, &ca_file, "-tls1_3").await;
                let err = result.expect_err("ring takes no bare EC key");
                assert!(
                    matches!(
                        tls_config_error(&err),
                        Some(smithy_default_tls::TlsConfigError::ClientKeyRefused { key_type: KeyType::EcdsaP256, .. })
                    ),
                    "{provider}: {}",
                    error_chain(&err)
                );
            }
            continue;
        }
        let case = format!("{provider}, the right key");
        let result = call_verifying_server(provider, &right, &server_ca, &client_ca.ca_file(), "-tls1_3").await;
        let response = result.unwrap_or_else(|e| panic!("{case}: {}", error_chain(&e)));
        let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
        assert!(tls.client_certificate_sent, "{case}: {tls:?}");

        let case = format!("{provider}, another key");
        let result = call_verifying_server(provider, &wrong, &server_ca, &client_ca.ca_file(), "-tls1_3").await;
        let err = result.expect_err(&case);
        assert!(
            matches!(tls_config_error(&err), Some(smithy_default_tls::TlsConfigError::ClientKeyMismatch)),
            "{case}: {}",
            error_chain(&err)
        );
        assert!(!sdk_retries(&err), "{case}: a configuration error is not retried");
    }
    // Where the key carries its public half, `from_pem` itself refuses the pair.
    let err = ClientIdentity::from_pem(files.chain_pem(), other.key_pem()).expect_err("mismatch");
    assert!(matches!(err, IdentityError::KeyMismatch), "{err:?}");
}

/// A request with `identity` that must fail when the client prepares TLS, before its handshake:
/// the peer it connects to (a plain TCP listener on 127.0.0.1) reads not one byte, no
/// ClientHello, before the client hangs up. The request's error, which must not be retried.
async fn refused_before_any_byte(provider: TlsProvider, identity: &ClientIdentity) -> ConnectorError {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local addr").port();
    // Once the client has its answer, a connection it made is in the accept queue; none is fine
    // too (nothing was sent).
    let (done, client_done) = tokio::sync::oneshot::channel::<()>();
    let peer = tokio::spawn(async move {
        let mut tcp = tokio::select! {
            biased;
            accepted = listener.accept() => accepted.expect("accept").0,
            _ = client_done => return Ok(0),
        };
        let mut seen = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut seen)).await;
        read.map(|_| seen.len())
    });
    // Any CA: the refusal comes before a server certificate could be checked.
    let ca = TestCa::new("unused server CA");
    let url = format!("https://localhost:{port}/");
    let err = call(&client(provider, &ca.pem, Some(identity)), &bounded(), get(&url))
        .await
        .expect_err(&format!("{provider}: the identity is refused"));
    assert!(!sdk_retries(&err), "{provider}: a configuration error is not retried");
    let _ = done.send(());
    let read = peer.await.expect("peer task");
    assert_eq!(read.ok(), Some(0), "{provider}: the peer read nothing before the client hung up");
    err
}

/// A pair the provider cannot use fails before its handshake ([`refused_before_any_byte`]):
/// ring loads no EC key without its public half; the other providers find such a key apart from
/// the certificate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pair_the_provider_cannot_use_fails_before_any_handshake() {
    let BareKeys { right, wrong, .. } = bare_keys(&OpensslCa::new());
    for provider in providers() {
        let ring = provider.name() == "rustls-ring";
        let err = refused_before_any_byte(provider, if ring { &right } else { &wrong }).await;
        let refused = match tls_config_error(&err) {
            Some(smithy_default_tls::TlsConfigError::ClientKeyRefused { .. }) => ring,
            Some(smithy_default_tls::TlsConfigError::ClientKeyMismatch) => !ring,
            _ => false,
        };
        assert!(refused, "{provider}: {}", error_chain(&err));
    }
}

/// RSA under 2048 bits: a FIPS provider refuses it as not approved, typed, before any handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rsa_under_2048_bits_is_refused_by_the_fips_providers() {
    let (server_ca, client_ca) = (OpensslCa::new(), OpensslCa::new());
    let files = client_ca.client_leaf("rsa1024", KeySpec::Rsa(1024), false);
    let identity = ClientIdentity::from_pem(files.chain_pem(), files.key_pem()).expect("RSA-1024 is an identity");
    assert_eq!(identity.key_type(), KeyType::Rsa { bits: 1024 });
    assert!(!identity.key_type().is_fips_approved());
    let fips = providers().filter(|p| p.name().ends_with("-fips")).collect::<Vec<_>>();
    assert!(!fips.is_empty() || !cfg!(any(feature = "s2n-tls-fips", feature = "rustls-aws-lc-fips")));
    for provider in fips {
        let result = call_verifying_server(provider, &identity, &server_ca, &client_ca.ca_file(), "-tls1_3").await;
        let err = result.expect_err(&format!("{provider}: refused"));
        assert!(
            matches!(
                tls_config_error(&err),
                Some(smithy_default_tls::TlsConfigError::ClientKeyNotFipsApproved(KeyType::Rsa { bits: 1024 }))
            ),
            "{provider}: {}",
            error_chain(&err)
        );
        assert!(!sdk_retries(&err), "{provider}: a configuration error is not retried");
    }
}

/// A resumed session presents no certificate in its own handshake: `client_certificate_sent` is
/// `false` there (README: whether the handshake that made the session sent one is not known), on
/// every provider, while the server still knows the client from the first handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_reports_no_certificate_sent() {
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    let identity = identity_for(&client_ca, &KeyPair::generate().expect("key"));
    for provider in providers() {
        let leaf = server_ca.leaf(&["localhost"]);
        let server =
            TestServer::start_requiring_client_auth(&leaf, Alpn::Http1Only, &client_ca.pem, rustls::DEFAULT_VERSIONS)
                .await;
        let client = client(provider, &server_ca.pem, Some(&identity));
        let mut seen = Vec::new();
        for _ in 0..2 {
            let mut request = get(&server.url("/"));
            request.headers_mut().insert("connection", http::HeaderValue::from_static("close"));
            let response = call(&client, &bounded(), request).await.unwrap_or_else(|e| panic!("{provider}: {e:?}"));
            let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
            seen.push((tls.resumed, tls.client_certificate_sent));
        }
        assert_eq!(
            seen,
            [(false, true), (true, false)],
            "{provider}: (resumed, client_certificate_sent) per connection"
        );
    }
}

// Construction: what `ClientIdentity` refuses, and what it takes.

#[test]
fn each_key_encoding_is_taken_and_typed() {
    let ca = TestCa::new("client CA");
    let p256 = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256");
    let pem = ca.client_leaf("client", &p256);
    let pkcs8 = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("PKCS#8");
    assert_eq!(pkcs8.key_type(), KeyType::EcdsaP256);
    let sec1 = openssl_stdout(&["ec"], Some(&pem.key));
    assert!(sec1.contains("BEGIN EC PRIVATE KEY"), "{sec1}");
    assert_eq!(ClientIdentity::from_pem(&pem.cert, &sec1).expect("SEC1").key_type(), KeyType::EcdsaP256);

    let rsa = rsa_key_pair();
    let pem = ca.client_leaf("client", &rsa);
    assert_eq!(ClientIdentity::from_pem(&pem.cert, &pem.key).expect("PKCS#8").key_type(), KeyType::Rsa { bits: 2048 });
    let pkcs1 = openssl_stdout(&["rsa", "-traditional"], Some(&pem.key));
    assert!(pkcs1.contains("BEGIN RSA PRIVATE KEY"), "{pkcs1}");
    assert_eq!(ClientIdentity::from_pem(&pem.cert, &pkcs1).expect("PKCS#1").key_type(), KeyType::Rsa { bits: 2048 });

    let ed = KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("Ed25519");
    let pem = ca.client_leaf("client", &ed);
    assert_eq!(ClientIdentity::from_pem(&pem.cert, &pem.key).expect("Ed25519").key_type(), KeyType::Ed25519);
}

#[test]
fn a_key_that_is_not_the_certificates_is_refused() {
    let ca = TestCa::new("client CA");
    let pem = ca.client_leaf("client", &KeyPair::generate().expect("key"));
    let other = KeyPair::generate().expect("other key").serialize_pem();
    let err = ClientIdentity::from_pem(&pem.cert, &other).expect_err("mismatch");
    assert!(matches!(err, IdentityError::KeyMismatch), "{err:?}");
    // Of another type too.
    let ed = KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("Ed25519").serialize_pem();
    let err = ClientIdentity::from_pem(&pem.cert, &ed).expect_err("mismatch");
    assert!(matches!(err, IdentityError::KeyMismatch | IdentityError::Rejected(_)), "{err:?}");
}

/// The match is found from the key's own encoding in every form that carries the public half:
/// an RSA key (PKCS#8 and PKCS#1) and a SEC1 EC key, each against another key's certificate.
#[test]
fn a_mismatch_is_found_in_rsa_and_sec1_keys_too() {
    let ca = TestCa::new("client CA");
    let rsa_leaf = ca.client_leaf("client", &rsa_key_pair());
    let other_rsa = rsa_key_pair().serialize_pem();
    let other_pkcs1 = openssl_stdout(&["rsa", "-traditional"], Some(&other_rsa));
    assert!(other_pkcs1.contains("BEGIN RSA PRIVATE KEY"), "{other_pkcs1}");
    let ec_leaf = ca.client_leaf("client", &KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256"));
    let other_ec = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256").serialize_pem();
    let other_sec1 = openssl_stdout(&["ec"], Some(&other_ec));
    assert!(other_sec1.contains("BEGIN EC PRIVATE KEY"), "{other_sec1}");
    for (form, cert, key) in [
        ("RSA PKCS#8", &rsa_leaf.cert, &other_rsa),
        ("RSA PKCS#1", &rsa_leaf.cert, &other_pkcs1),
        ("SEC1", &ec_leaf.cert, &other_sec1),
    ] {
        let err = ClientIdentity::from_pem(cert, key).expect_err(form);
        assert!(matches!(err, IdentityError::KeyMismatch), "{form}: {err:?}");
    }
}

#[test]
fn an_encrypted_key_is_refused_as_encrypted() {
    let ca = TestCa::new("client CA");
    let pem = ca.client_leaf("client", &KeyPair::generate().expect("key"));
    let encrypted =
        openssl_stdout(&["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:secret"], Some(&pem.key));
    assert!(encrypted.contains("BEGIN ENCRYPTED PRIVATE KEY"), "{encrypted}");
    let err = ClientIdentity::from_pem(&pem.cert, &encrypted).expect_err("encrypted");
    assert!(matches!(err, IdentityError::EncryptedKey), "{err:?}");
    let legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0011\n\nAAAA\n\
                  -----END RSA PRIVATE KEY-----\n";
    let err = ClientIdentity::from_pem(&pem.cert, legacy).expect_err("legacy encrypted");
    assert!(matches!(err, IdentityError::EncryptedKey), "{err:?}");
}

#[test]
fn garbage_and_missing_parts_are_typed() {
    let ca = TestCa::new("client CA");
    let pem = ca.client_leaf("client", &KeyPair::generate().expect("key"));
    let err = ClientIdentity::from_pem("not PEM at all", &pem.key).expect_err("no certificate");
    assert!(matches!(err, IdentityError::NoCertificate), "{err:?}");
    let err = ClientIdentity::from_pem(&pem.cert, "garbage").expect_err("no key");
    assert!(matches!(err, IdentityError::NoPrivateKey), "{err:?}");
    let bad =
        "-----BEGIN PRIVATE KEY-----\nMIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEA\n-----END PRIVATE KEY-----\n";
    let err = ClientIdentity::from_pem(&pem.cert, bad).expect_err("truncated DER");
    assert!(matches!(err, IdentityError::MalformedKey), "{err:?}");
    let unterminated = "-----BEGIN CERTIFICATE-----\nMIIB\n";
    let err = ClientIdentity::from_pem(unterminated, &pem.key).expect_err("unterminated");
    assert!(matches!(err, IdentityError::MalformedPem { .. }), "{err:?}");
    let two = format!("{}{}", pem.key, pem.key);
    let err = ClientIdentity::from_pem(&pem.cert, &two).expect_err("two keys");
    assert!(matches!(err, IdentityError::SeveralPrivateKeys), "{err:?}");
    let p384 = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("P-384");
    let x25519 = openssl_stdout(&["genpkey", "-algorithm", "X25519"], None);
    let err = ClientIdentity::from_pem(ca.client_leaf("client", &p384).cert, &x25519).expect_err("X25519");
    assert!(matches!(err, IdentityError::UnsupportedKeyType { .. }), "{err:?}");
    let err = ClientIdentity::from_pem_files("/no/such/cert.pem", "/no/such/key.pem").expect_err("no files");
    assert!(matches!(err, IdentityError::Unreadable { .. }), "{err:?}");
}

#[test]
fn debug_shows_no_key_material() {
    let ca = TestCa::new("client CA");
    let key = KeyPair::generate().expect("key");
    let pem = ca.client_leaf("client", &key);
    let identity = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity");
    let debug = format!("{identity:?}");
    assert_eq!(debug, "ClientIdentity { certificates: 1, key_type: EcdsaP256, .. }");
    let der = key.serialize_der();
    let client = SmithyTlsClient::builder().client_identity(identity).build().expect("client");
    let debug = format!("{client:?}");
    assert!(debug.contains("ClientIdentity { certificates: 1"), "{debug}");
    // No run of the key's secret bytes, in any spelling a formatter would use.
    let secret = &der[der.len() - 16..];
    for spelled in [format!("{secret:?}"), secret.iter().map(|b| format!("{b:02x}")).collect::<String>()] {
        assert!(!debug.contains(&spelled[1..spelled.len() - 1]), "{debug}");
    }
}

/// An RSA key restricted to PSS (`id-RSASSA-PSS`, as `openssl req -newkey rsa-pss:2048` writes):
/// no provider's crypto loads one, so it is refused when built, typed, naming what to use.
#[test]
fn an_rsa_pss_key_is_refused_as_unsupported_naming_it() {
    let ca = OpensslCa::new();
    let files = ca.client_leaf("pss", KeySpec::RsaPss(2048), false);
    let err = ClientIdentity::from_pem(files.chain_pem(), files.key_pem()).expect_err("RSA-PSS");
    match &err {
        IdentityError::UnsupportedKeyType { algorithm } => assert!(algorithm.contains("RSASSA-PSS"), "{err}"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("rsaEncryption"), "{err}");
}
