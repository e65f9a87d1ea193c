//! The conformance suite against rustls with the application's own `CryptoProvider`
//! (`rustls-custom`): here ring's provider, handed to the runtime as an application would.
//! Run alone (`cargo test-rustls-custom`): a build whose only provider is this one.
#![cfg(provider = "rustls-custom")]

use smithy_tls_test_support as support;

const PROVIDER: smithy_default_tls::TlsProvider = smithy_default_tls::TlsProvider::RustlsCustom;

/// The application's step: its crypto provider, before the first connection (the first call
/// wins; the later ones hand the same provider back).
fn prepare() {
    let _ = smithy_default_tls::set_custom_crypto_provider(support::ring_crypto());
}

include!("conformance/suite.rs");
include!("conformance/proxy.rs");
include!("conformance/telemetry.rs");

/// A client identity with the application's provider: checked by that provider's crypto when
/// the client is prepared, and presented to a server that asks for one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_identity_is_presented_with_the_application_s_provider() {
    use support::*;
    prepare();
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    let pem = client_ca.client_leaf("client", &rcgen::KeyPair::generate().expect("key"));
    let identity = smithy_default_tls::ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity");
    let leaf = server_ca.leaf(&["localhost"]);
    let versions = rustls::DEFAULT_VERSIONS;
    let server = TestServer::start_requiring_client_auth(&leaf, Alpn::H2AndHttp1, &client_ca.pem, versions).await;
    let client = smithy_default_tls::SmithyTlsClient::builder()
        .provider(PROVIDER)
        .extra_root_pem(&server_ca.pem)
        .expect("CA PEM")
        .client_identity(identity)
        .build()
        .expect("client");
    let response = call(&client, &settings(None, None), get(&server.url("/"))).await;
    let response = response.unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let tls = response.extension::<smithy_default_tls::ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
    assert_eq!(tls.provider, PROVIDER);
    assert!(tls.client_certificate_sent, "{tls:?}");
}
