//! Configuration errors fail a request once: through the connector, as the orchestrator calls
//! it, they are user errors the SDK's retry strategy does not retry, with their messages intact,
//! while network failures stay retryable. (A single-purpose binary: it sets `SSL_CERT_FILE`,
//! `AWS_CA_BUNDLE` and `SSLKEYLOGFILE`, one step after another.)
#![cfg(all(feature = "native", feature = "webpki"))]

use aws_smithy_runtime_api::client::result::ConnectorError;
use smithy_default_tls::{Error, KeyLogError, RootsError, SmithyTlsClient, TlsConfigError, TlsProvider, TrustRoots};
use smithy_tls_test_support::*;

/// A port on 127.0.0.1 nothing listens on: a request there fails without a configuration error
/// only if the network is all that is wrong.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

async fn fails(client: &dyn aws_smithy_runtime_api::client::http::HttpClient, url: &str) -> ConnectorError {
    call(client, &settings(None, None), get(url)).await.expect_err("the request fails")
}

/// `err` is a configuration error of the kind `expected` accepts, reported as a user error the
/// SDK does not retry, and its message says `says`.
fn assert_configuration_error(what: &str, err: &ConnectorError, expected: impl Fn(&Error) -> bool, says: &str) {
    let message = error_chain(err);
    let found = find_in_chain::<Error>(err).unwrap_or_else(|| panic!("{what}: an Error in the chain: {message}"));
    assert!(expected(found), "{what}: {found:?}");
    assert!(err.is_user(), "{what}: a user error: {err:?}");
    assert!(!sdk_retries(err), "{what}: not retried: {err:?}");
    assert!(message.contains(says), "{what}: the message says `{says}`: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_errors_are_not_retried_and_network_errors_are() {
    std::env::remove_var("AWS_CA_BUNDLE");
    std::env::remove_var("SSLKEYLOGFILE");
    std::env::remove_var("SSL_CERT_DIR");
    let dir = std::env::temp_dir().join(format!("smithy-tls-configuration-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let url = format!("https://127.0.0.1:{}/", closed_port());

    // A network failure, for contrast: retried.
    for &provider in TlsProvider::ALL {
        let client = SmithyTlsClient::builder().provider(provider).trust_roots(TrustRoots::Webpki).build().unwrap();
        let err = fails(&client, &url).await;
        assert!(err.is_io() && sdk_retries(&err), "{provider}: a refused connection is retried: {err:?}");
    }

    // No readable system store (a wrong SSL_CERT_FILE; a `FROM scratch` image is the same error).
    let missing = dir.join("no-such-store.pem");
    std::env::set_var("SSL_CERT_FILE", &missing);
    for &provider in TlsProvider::ALL {
        let client = SmithyTlsClient::builder().provider(provider).trust_roots(TrustRoots::Native).build().unwrap();
        let err = fails(&client, &url).await;
        let is_roots = |e: &Error| matches!(e, Error::Roots(RootsError::NativeUnreadable { .. }));
        assert_configuration_error(&format!("{provider}: no store"), &err, is_roots, "SSL_CERT_FILE");
    }

    // A malformed CA bundle (AWS_CA_BUNDLE reaches the builder the same way).
    let malformed = dir.join("malformed.pem");
    std::fs::write(&malformed, "this is not PEM").expect("bundle");
    for &provider in TlsProvider::ALL {
        let client = SmithyTlsClient::builder().provider(provider).ca_bundle_file(&malformed).build().unwrap();
        let err = fails(&client, &url).await;
        let is_pem = |e: &Error| matches!(e, Error::InvalidPem { .. });
        assert_configuration_error(
            &format!("{provider}: bad bundle"),
            &err,
            is_pem,
            "no `-----BEGIN CERTIFICATE-----`",
        );
    }

    // A scheme the client cannot connect with.
    for &provider in TlsProvider::ALL {
        let client = SmithyTlsClient::builder().provider(provider).trust_roots(TrustRoots::Webpki).build().unwrap();
        let err = fails(&client, &format!("ftp://127.0.0.1:{}/", closed_port())).await;
        let is_uri = |e: &Error| matches!(e, Error::InvalidUri { .. });
        assert_configuration_error(&format!("{provider}: ftp"), &err, is_uri, "use http or https");
    }

    // Roots the provider cannot use (a shared client still yields a client for them).
    #[cfg(feature = "platform-verifier")]
    for &provider in TlsProvider::ALL {
        if provider.validate_roots(TrustRoots::PlatformVerifier).is_ok() {
            continue;
        }
        let client = smithy_default_tls::shared_tls_client(provider, TrustRoots::PlatformVerifier);
        let err = fails(&client, &url).await;
        let is_unsupported = |e: &Error| matches!(e, Error::UnsupportedRoots { .. });
        assert_configuration_error(&format!("{provider}: platform verifier"), &err, is_unsupported, "rustls");
    }

    // A TLS configuration that cannot be set up: a key log file that cannot be opened, with
    // every provider (none drops the log silently).
    std::env::set_var("SSLKEYLOGFILE", dir.join("no-such-directory").join("keys.log"));
    for &provider in TlsProvider::ALL {
        let client = SmithyTlsClient::builder().provider(provider).trust_roots(TrustRoots::Webpki).build().unwrap();
        let err = fails(&client, &url).await;
        let is_key_log =
            |e: &Error| matches!(e, Error::TlsConfig { reason: TlsConfigError::KeyLog(KeyLogError::Open { .. }), .. });
        assert_configuration_error(&format!("{provider}: key log"), &err, is_key_log, "SSLKEYLOGFILE");
        assert!(error_chain(&err).contains("No such file or directory"), "{provider}: {}", error_chain(&err));
    }
    std::env::remove_var("SSLKEYLOGFILE");
    std::fs::remove_dir_all(&dir).ok();
}
