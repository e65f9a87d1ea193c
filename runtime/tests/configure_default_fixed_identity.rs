//! `configure_default` with a fixed client identity (`client_identity`, README's mutual-TLS
//! section): every process-wide default client built after it, whichever provider the policy
//! picked, presents the certificate to a server that requires one. (A single-purpose binary: it
//! changes process-wide state.)
#![cfg(feature = "webpki")]

use smithy_default_tls::{configure_default, shared_client, ClientIdentity, ConnectionInfo, TlsProvider, TrustRoots};
use smithy_tls_test_support::{call, get, rustls, settings, Alpn, TestCa, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_default_client_presents_the_configured_identity() {
    std::env::remove_var("AWS_CA_BUNDLE");
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    let pem = client_ca.client_leaf("configured client", &rcgen::KeyPair::generate().expect("key"));
    let identity = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity");
    let roots = server_ca.pem.clone();
    configure_default(move |builder| builder.extra_root_pem(&roots).expect("CA").client_identity(identity.clone()))
        .expect("first call, before any default client");

    let server = TestServer::start_requiring_client_auth(
        &server_ca.leaf(&["localhost"]),
        Alpn::Http1Only,
        &client_ca.pem,
        rustls::DEFAULT_VERSIONS,
    )
    .await;
    // rustls-custom needs the application's crypto provider; its suite covers identities.
    let providers: Vec<TlsProvider> =
        TlsProvider::ALL.iter().copied().filter(|p| p.name() != "rustls-custom").collect();
    assert!(!providers.is_empty(), "no provider compiled");
    for &provider in &providers {
        let client = shared_client(provider, TrustRoots::Webpki);
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10")))
            .await
            .unwrap_or_else(|e| panic!("{provider}: GET with the configured identity: {e}"));
        assert_eq!(response.status().as_u16(), 200, "{provider}");
        let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
        assert_eq!(tls.provider, provider);
        assert!(tls.client_certificate_sent, "{provider}: {tls:?}");
    }
    // The server's view: one handshake per provider, each with the configured certificate.
    let seen: Vec<Option<Vec<u8>>> = server.stats.client_hellos().into_iter().map(|h| h.client_certificate).collect();
    assert_eq!(seen, vec![Some(pem.leaf_der()); providers.len()]);
}
