//! `configure_default` shapes the process-wide default clients (those generated code installs):
//! extra roots and a proxy set once, early, reach every default client built after; a second
//! call is refused. (A single-purpose binary: it changes process-wide state.)
#![cfg(all(feature = "rustls-ring", feature = "webpki"))]

use smithy_default_tls::{
    configure_default, shared_client, ConnectionInfo, Error, ProxyConfig, TlsProvider, TrustRoots,
};
use smithy_tls_test_support::{call, get, settings, Alpn, ConnectProxy, ProxyMode, TestCa, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_clients_take_the_applications_settings() {
    std::env::remove_var("AWS_CA_BUNDLE");
    let ca = TestCa::new("configured default CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let proxy = ConnectProxy::start(ProxyMode::Open).await;
    let pem = ca.pem.clone();
    let proxy_url = proxy.url();
    configure_default(move |builder| {
        // The closure runs without the registry's lock held: calling back into it must not
        // deadlock (here it is told it is too late to configure again).
        assert!(configure_default(|b| b).is_err());
        builder
            .extra_root_pem(&pem)
            .expect("CA")
            .proxy(ProxyConfig::builder().all(proxy_url.clone()).build().expect("proxy URL"))
    })
    .expect("first call, before any default client");

    // The policy's choice (ring + webpki) now also trusts the application's CA, through its proxy.
    let client = shared_client(TlsProvider::RustlsRing, TrustRoots::Webpki);
    let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
    assert_eq!(info.proxy, Some(proxy.addr.to_string()));
    assert_eq!(proxy.seen().len(), 1);

    let again = configure_default(|builder| builder).expect_err("once only");
    assert!(matches!(again, Error::DefaultAlreadyConfigured), "{again}");
}
