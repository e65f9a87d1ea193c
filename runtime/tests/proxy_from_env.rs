//! `ProxyConfig::from_env` reads HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY in either case
//! (a single-purpose binary: it sets process environment variables).
#![cfg(all(feature = "rustls-ring", feature = "webpki"))]

use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use smithy_default_tls::{
    shared_client, shared_client_for, ConnectionInfo, ProxyConfig, SmithyTlsClient, TlsProvider, TrustRoots,
};
use smithy_tls_test_support::{call, get, settings, Alpn, ConnectProxy, ProxyMode, TestCa, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated)] // BehaviorVersion::v2024_03_28, an old version on purpose
async fn the_environment_names_the_proxies() {
    for name in
        ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"]
    {
        std::env::remove_var(name);
    }
    assert!(!ProxyConfig::from_env().is_enabled(), "nothing set: no proxy");

    let ca = TestCa::new("env proxy CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    let proxy = ConnectProxy::start(ProxyMode::Open).await;
    let client = |config: ProxyConfig| {
        SmithyTlsClient::builder()
            .provider(TlsProvider::RustlsRing)
            .extra_root_pem(&ca.pem)
            .expect("CA")
            .proxy(config)
            .build()
            .expect("client")
    };
    let proxied = |response: &aws_smithy_runtime_api::client::orchestrator::HttpResponse| {
        response.extension::<ConnectionInfo>().and_then(|i| i.proxy.clone())
    };

    // Lower case works as upper case does.
    std::env::set_var("https_proxy", proxy.url());
    let response =
        call(&client(ProxyConfig::from_env()), &settings(None, None), get(&server.url("/bytes/1"))).await.expect("GET");
    assert_eq!(proxied(&response), Some(proxy.addr.to_string()));

    // NO_PROXY (a CIDR range here) sends matching hosts direct.
    std::env::set_var("NO_PROXY", "127.0.0.0/8,localhost");
    let response =
        call(&client(ProxyConfig::from_env()), &settings(None, None), get(&server.url("/bytes/1"))).await.expect("GET");
    assert_eq!(proxied(&response), None);
    std::env::remove_var("NO_PROXY");

    // Without a scheme the value means http:// (as curl reads it).
    std::env::remove_var("https_proxy");
    std::env::set_var("HTTPS_PROXY", proxy.addr.to_string());
    let response =
        call(&client(ProxyConfig::from_env()), &settings(None, None), get(&server.url("/bytes/1"))).await.expect("GET");
    assert_eq!(proxied(&response), Some(proxy.addr.to_string()));
    std::env::remove_var("HTTPS_PROXY");

    // Under CGI, HTTP_PROXY is a request header's, not a setting ("httpoxy"): ignored.
    std::env::set_var("HTTP_PROXY", proxy.url());
    std::env::set_var("REQUEST_METHOD", "GET");
    assert!(!ProxyConfig::from_env().is_enabled());
    std::env::remove_var("REQUEST_METHOD");
    assert!(ProxyConfig::from_env().is_enabled());
    std::env::remove_var("HTTP_PROXY");

    // An unusable value is ignored (with a warning), not fatal.
    std::env::remove_var("https_proxy");
    std::env::set_var("HTTPS_PROXY", "socks5://127.0.0.1:1");
    assert!(!ProxyConfig::from_env().is_enabled());
    std::env::set_var("ALL_PROXY", proxy.url());
    let config = ProxyConfig::from_env();
    assert!(config.is_enabled(), "ALL_PROXY still applies");
    assert_eq!(proxy.seen().len(), 2, "two tunnels so far");
    std::env::remove_var("ALL_PROXY");
    std::env::remove_var("HTTPS_PROXY");

    // The process-wide default: the environment counts from behavior version 2025-08-07 on, as
    // for upstream's default client (the test CA is trusted through AWS_CA_BUNDLE).
    let bundle = std::env::temp_dir().join(format!("proxy-env-ca-{}.pem", std::process::id()));
    std::fs::write(&bundle, &ca.pem).expect("write CA");
    std::env::set_var("AWS_CA_BUNDLE", &bundle);
    std::env::set_var("HTTPS_PROXY", proxy.url());
    let (provider, roots) = (TlsProvider::RustlsRing, TrustRoots::Webpki);
    for (client, expect_proxy) in [
        (shared_client_for(provider, roots, BehaviorVersion::latest()), true),
        (shared_client_for(provider, roots, BehaviorVersion::v2024_03_28()), false),
        (shared_client(provider, roots), false),
    ] {
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/1"))).await.expect("GET");
        assert_eq!(proxied(&response).is_some(), expect_proxy);
    }
    assert_eq!(proxy.seen().len(), 3, "one more tunnel, for the latest behavior version");
    let _ = std::fs::remove_file(&bundle);
}
