//! `rustls-custom` with no crypto provider anywhere (none handed to the runtime, no rustls
//! process-wide default): every request fails with an error that says what to do, as a user
//! error the SDK does not retry. (A binary of its own: nothing in it installs a provider.)
#![cfg(provider = "rustls-custom")]

use smithy_default_tls::{Error, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_crypto_provider_fails_clearly_and_is_not_retried() {
    assert!(rustls::crypto::CryptoProvider::get_default().is_none(), "nothing installed a default in this binary");
    let ca = TestCa::new("no crypto CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::RustlsCustom)
        .extra_root_pem(&ca.pem)
        .expect("CA PEM")
        .build()
        .expect("building never needs the crypto provider");
    for attempt in 1..=2 {
        let err = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect_err("no provider");
        let message = error_chain(&err);
        assert!(matches!(find_in_chain::<Error>(&err), Some(Error::NoCryptoProvider)), "attempt {attempt}: {message}");
        assert!(err.is_user() && !sdk_retries(&err), "attempt {attempt}: not retried: {err:?}");
        assert!(message.contains("set_custom_crypto_provider"), "attempt {attempt}: says what to do: {message}");
    }
    // The TCP dial runs beside preparing TLS, so connections may be accepted; none reached TLS.
    assert!(server.stats.handshakes().is_empty(), "no handshake completed without a provider");
}

/// A client identity needs no crypto provider to be built (the pair is compared from the key's
/// own encoding); the provider checks it again when it is installed and the client prepared.
#[test]
fn a_client_identity_is_built_without_a_crypto_provider() {
    let ca = TestCa::new("no crypto CA");
    let pem = ca.client_leaf("client", &rcgen::KeyPair::generate().expect("key"));
    smithy_default_tls::ClientIdentity::from_pem(&pem.cert, &pem.key).expect("no crypto needed");
    let other = rcgen::KeyPair::generate().expect("other key").serialize_pem();
    let err = smithy_default_tls::ClientIdentity::from_pem(&pem.cert, &other).expect_err("mismatch");
    assert!(matches!(err, smithy_default_tls::IdentityError::KeyMismatch), "{err:?}");
}
