//! `ProxyConfig::from_env` reads HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY in either case
//! (a single-purpose binary: it sets process environment variables; its tests take `ENV` first,
//! so they run one at a time).
#![cfg(all(feature = "rustls-ring", feature = "webpki"))]

use std::net::{IpAddr, Ipv4Addr};

use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_runtime_api::client::dns::{DnsFuture, ResolveDns};
use smithy_default_tls::{
    shared_client, shared_client_for, ConnectionInfo, ProxyConfig, SmithyTlsClient, TlsProvider, TrustRoots,
};
use smithy_tls_test_support::{call, get, settings, Alpn, ConnectProxy, ProxyMode, TestCa, TestServer};

/// Held by every test here while it reads or changes the process environment.
static ENV: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The proxy variables, both cases.
const PROXY_VARS: [&str; 8] =
    ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"];

fn clear_proxy_env() {
    for name in PROXY_VARS {
        std::env::remove_var(name);
    }
    std::env::remove_var("REQUEST_METHOD");
}

/// Exactly these proxy variables.
fn set_env(vars: &[(&str, &str)]) {
    clear_proxy_env();
    for (name, value) in vars {
        std::env::set_var(name, value);
    }
}

/// Answers every name with 127.0.0.1, so `api.localhost` reaches the test server when the client
/// connects direct (through the proxy, the proxy resolves the origin itself: those cases use
/// `localhost` or `127.0.0.1`).
#[derive(Debug)]
struct Loopback;

impl ResolveDns for Loopback {
    fn resolve_dns<'a>(&'a self, _name: &'a str) -> DnsFuture<'a> {
        DnsFuture::ready(Ok(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]))
    }
}

/// A CA, a server on 127.0.0.1 whose certificate names `localhost`, `api.localhost` and
/// `127.0.0.1`, and an open proxy.
async fn fixtures() -> (TestCa, TestServer, ConnectProxy) {
    let ca = TestCa::new("no_proxy CA");
    let server = TestServer::start(&ca.leaf(&["localhost", "api.localhost", "127.0.0.1"]), Alpn::Http1Only).await;
    let proxy = ConnectProxy::start(ProxyMode::Open).await;
    (ca, server, proxy)
}

/// One GET of `url` by a fresh client configured with `ProxyConfig::from_env()` as the
/// environment is now: it must succeed, and go through `proxy` (one `CONNECT` tunnel to the
/// URL's authority) when `via_proxy`, else straight to `server` with the proxy seeing nothing.
async fn check(case: &str, ca: &TestCa, server: &TestServer, proxy: &ConnectProxy, url: &str, via_proxy: bool) {
    let config = ProxyConfig::from_env();
    // (`NO_PROXY=*` leaves nothing to proxy: the configuration is then disabled.)
    assert!(config.is_enabled() || !via_proxy, "{case}: a proxy variable is set");
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::RustlsRing)
        .extra_root_pem(&ca.pem)
        .expect("CA")
        .dns_resolver(Loopback)
        .proxy(config)
        .build()
        .expect("client");
    let (tunnels, accepted) = (proxy.seen().len(), server.accepted());
    let response =
        call(&client, &settings(None, None), get(url)).await.unwrap_or_else(|e| panic!("{case}: GET {url}: {e:?}"));
    assert_eq!(response.status().as_u16(), 200, "{case}");
    let info = response.extension::<ConnectionInfo>().unwrap_or_else(|| panic!("{case}: no ConnectionInfo"));
    let seen = proxy.seen();
    if via_proxy {
        assert_eq!(info.proxy, Some(proxy.addr.to_string()), "{case}: through the proxy");
        assert_eq!(seen.len(), tunnels + 1, "{case}: one tunnel: {seen:?}");
        let authority = url.trim_start_matches("https://").split('/').next().unwrap_or_default();
        assert_eq!((seen[tunnels].method.as_str(), seen[tunnels].target.as_str()), ("CONNECT", authority), "{case}");
    } else {
        assert_eq!(info.proxy, None, "{case}: direct");
        assert_eq!(seen.len(), tunnels, "{case}: the proxy saw nothing: {seen:?}");
        assert_eq!(info.remote_addr, Some(server.addr), "{case}: straight to the server");
    }
    assert_eq!(server.accepted(), accepted + 1, "{case}: one connection reached the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated)] // BehaviorVersion::v2024_03_28, an old version on purpose
async fn the_environment_names_the_proxies() {
    let _env = ENV.lock().await;
    clear_proxy_env();
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

    // NO_PROXY sends matching hosts direct (`localhost` matches here; CIDR ranges: below).
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
    std::env::remove_var("AWS_CA_BUNDLE");
    clear_proxy_env();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_proxy_from_the_environment_sends_matching_hosts_direct() {
    let _env = ENV.lock().await;
    clear_proxy_env();
    let (ca, server, proxy) = fixtures().await;
    let port = server.addr.port();
    let by_name = format!("https://localhost:{port}/bytes/1");
    let by_ip = format!("https://127.0.0.1:{port}/bytes/1");
    let subdomain = format!("https://api.localhost:{port}/bytes/1");
    let https_proxy = proxy.url();
    let https_proxy = https_proxy.as_str();

    set_env(&[("HTTPS_PROXY", https_proxy)]);
    check("no NO_PROXY", &ca, &server, &proxy, &by_name, true).await;

    // `*`: everything goes direct.
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", "*")]);
    check("NO_PROXY=*", &ca, &server, &proxy, &by_name, false).await;

    // A CIDR range matches IP-literal origins inside it (the only rule, so nothing else matched)...
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", "127.0.0.0/8")]);
    check("NO_PROXY=127.0.0.0/8, origin 127.0.0.1", &ca, &server, &proxy, &by_ip, false).await;
    // ... not names, whatever they resolve to ...
    check("NO_PROXY=127.0.0.0/8, origin localhost", &ca, &server, &proxy, &by_name, true).await;
    // ... and not addresses outside it.
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", "10.0.0.0/8")]);
    check("NO_PROXY=10.0.0.0/8, origin 127.0.0.1", &ca, &server, &proxy, &by_ip, true).await;

    // Lower-case variables only.
    set_env(&[("https_proxy", https_proxy)]);
    check("https_proxy", &ca, &server, &proxy, &by_ip, true).await;
    set_env(&[("https_proxy", https_proxy), ("no_proxy", "localhost")]);
    check("https_proxy, no_proxy=localhost", &ca, &server, &proxy, &by_name, false).await;
    set_env(&[("https_proxy", https_proxy), ("no_proxy", "10.0.0.0/8, 127.0.0.1")]);
    check("https_proxy, no_proxy=10.0.0.0/8, 127.0.0.1", &ca, &server, &proxy, &by_ip, false).await;

    // Domain rules: `.localhost` and `localhost` both cover subdomains ...
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", ".localhost")]);
    check("NO_PROXY=.localhost, origin api.localhost", &ca, &server, &proxy, &subdomain, false).await;
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", "localhost")]);
    check("NO_PROXY=localhost, origin api.localhost", &ca, &server, &proxy, &subdomain, false).await;
    // ... a subdomain's rule does not cover its parent ...
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", "api.localhost")]);
    check("NO_PROXY=api.localhost, origin localhost", &ca, &server, &proxy, &by_name, true).await;
    // ... and a suffix matches only at a label boundary.
    set_env(&[("HTTPS_PROXY", https_proxy), ("NO_PROXY", "calhost")]);
    check("NO_PROXY=calhost, origin localhost", &ca, &server, &proxy, &by_name, true).await;

    clear_proxy_env();
}

/// `ProxyConfig` documents `*` as "all"; curl sends every host direct with it, IP literals too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_proxy_star_covers_ip_literal_origins() {
    let _env = ENV.lock().await;
    clear_proxy_env();
    let (ca, server, proxy) = fixtures().await;
    std::env::set_var("HTTPS_PROXY", proxy.url());
    std::env::set_var("NO_PROXY", "*");
    let by_ip = format!("https://127.0.0.1:{}/bytes/1", server.addr.port());
    check("NO_PROXY=*, origin 127.0.0.1", &ca, &server, &proxy, &by_ip, false).await;
    clear_proxy_env();
}
