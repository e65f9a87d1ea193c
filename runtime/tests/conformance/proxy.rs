// Proxies, per provider: included by each provider's conformance file after the suite (it
// defines `PROVIDER` and names the test-support crate `support`). Every proxy is a
// `support::ConnectProxy` on 127.0.0.1 that records what it saw.

mod proxies {
    use aws_smithy_runtime_api::client::connection::CaptureSmithyConnection;
    use smithy_default_tls::{ConnectionInfo, ProxyConfig, ProxyError, ProxyFailure, SmithyTlsClient};
    use super::support::*;

    use super::{provider_builder, PROVIDER};

    fn client(ca: &TestCa, proxy: ProxyConfig) -> SmithyTlsClient {
        provider_builder()
            .extra_root_pem(&ca.pem)
            .expect("CA PEM")
            .proxy(proxy)
            .build()
            .expect("client")
    }

    fn through(url: &str) -> ProxyConfig {
        ProxyConfig::builder().all(url).build().expect("proxy URL")
    }

    async fn tunnelled(alpn: Alpn, expect_alpn: &str) {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), alpn).await;
        let proxy = ConnectProxy::start(ProxyMode::Open).await;
        let client = client(&ca, through(&proxy.url()));
        for _ in 0..2 {
            let response =
                call(&client, &settings(None, None), get(&server.url("/bytes/100000"))).await.expect("GET through the proxy");
            assert_eq!(response.status().as_u16(), 200);
            let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
            assert_eq!(info.proxy.as_deref(), Some(proxy.addr.to_string().as_str()));
            let tls = info.tls.expect("TLS to the origin");
            assert_eq!((tls.provider, tls.alpn), (PROVIDER, Some(expect_alpn)));
            assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(100_000));
            // Give the pool the moment in which it takes the connection back.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        // One tunnel (the connection was reused), to the origin, carrying TLS from its first byte.
        let seen = proxy.seen();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].method, "CONNECT");
        assert_eq!(seen[0].target, format!("localhost:{}", server.addr.port()));
        assert_eq!(seen[0].first_tunnel_byte, Some(0x16), "a TLS record, not plaintext");
        assert_eq!(seen[0].proxy_authorization, None);
        assert_eq!(server.stats.accepted(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn https_through_a_connect_tunnel_http1() {
        tunnelled(Alpn::Http1Only, "http/1.1").await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn https_through_a_connect_tunnel_h2() {
        tunnelled(Alpn::H2AndHttp1, "h2").await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_connection_reports_it_is_proxied() {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        let proxy = ConnectProxy::start(ProxyMode::Open).await;
        let client = client(&ca, through(&proxy.url()));
        let capture = CaptureSmithyConnection::new();
        let mut request = get(&server.url("/bytes/10"));
        request.extensions_mut().insert(capture.clone());
        let response = call(&client, &settings(None, None), request).await.expect("GET");
        let metadata = capture.get().expect("connection metadata");
        assert!(format!("{metadata:?}").contains("is_proxied: true"), "{metadata:?}");
        drop(response);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn credentials_in_the_url_or_set_reach_the_proxy() {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        // user:pass
        let proxy = ConnectProxy::start(ProxyMode::RequireAuth("Basic dXNlcjpwYXNz".to_owned())).await;
        let in_url = through(&format!("http://user:pass@{}", proxy.addr));
        let set = ProxyConfig::builder().all(proxy.url()).basic_auth("user", "pass").build().expect("proxy");
        for config in [in_url, set] {
            let response = call(&client(&ca, config), &settings(None, None), get(&server.url("/bytes/10")))
                .await
                .expect("GET with credentials");
            assert_eq!(response.status().as_u16(), 200);
        }
        assert!(proxy.seen().iter().all(|r| r.proxy_authorization.as_deref() == Some("Basic dXNlcjpwYXNz")));
    }

    /// The proxy error in the chain of a failed call.
    fn proxy_failure(err: &aws_smithy_runtime_api::client::result::ConnectorError) -> &ProxyError {
        find_in_chain::<ProxyError>(err).unwrap_or_else(|| panic!("no ProxyError in {}", error_chain(err)))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn refusals_are_clear_errors_with_the_right_retry_class() {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        for (mode, status, transient) in [
            (ProxyMode::RequireAuth("Basic c2VjcmV0".to_owned()), 407, false),
            (ProxyMode::Refuse(403), 403, false),
            (ProxyMode::Refuse(502), 502, true),
        ] {
            let proxy = ConnectProxy::start(mode).await;
            let err = call(&client(&ca, through(&proxy.url())), &settings(None, None), get(&server.url("/bytes/10")))
                .await
                .expect_err("refused");
            let failure = proxy_failure(&err);
            assert!(matches!(failure.failure, ProxyFailure::Refused { status: s, .. } if s == status), "{failure}");
            assert_eq!(err.is_io(), transient, "{status}: retry class of {}", error_chain(&err));
            assert!(!err.is_timeout() && !err.is_user(), "{status}");
            let text = error_chain(&err);
            assert!(text.contains(&proxy.addr.to_string()) && text.contains(&status.to_string()), "{text}");
            if status == 407 {
                assert!(text.contains("needs credentials"), "{text}");
            }
            assert_eq!(server.stats.accepted(), 0, "nothing reached the origin");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unreachable_proxy_is_a_retryable_error_naming_it() {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        // A port nothing listens on: bind, note it, close.
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        let err = call(
            &client(&ca, through(&format!("http://127.0.0.1:{port}"))),
            &settings(None, None),
            get(&server.url("/bytes/10")),
        )
        .await
        .expect_err("unreachable proxy");
        assert!(matches!(proxy_failure(&err).failure, ProxyFailure::Unreachable(_)), "{}", error_chain(&err));
        assert!(err.is_io(), "retryable: {}", error_chain(&err));
        assert!(error_chain(&err).contains(&format!("127.0.0.1:{port}")), "{}", error_chain(&err));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_proxy_hosts_go_direct() {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        let proxy = ConnectProxy::start(ProxyMode::Open).await;
        let config = ProxyConfig::builder().all(proxy.url()).no_proxy("localhost").build().expect("proxy");
        let response =
            call(&client(&ca, config), &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
        assert_eq!(info.proxy, None);
        assert!(proxy.seen().is_empty());
    }

    /// A plain-HTTP origin on 127.0.0.1 answering `ok` to anything.
    async fn plain_http_origin() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(|_req| async {
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(http_body_util::Full::new(
                            bytes::Bytes::from_static(b"ok"),
                        )))
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        (addr, task)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plain_http_is_forwarded_with_credentials() {
        let (origin, task) = plain_http_origin().await;
        let proxy = ConnectProxy::start(ProxyMode::RequireAuth("Basic dXNlcjpwYXNz".to_owned())).await;
        let ca = TestCa::new("unused CA");
        let client = client(&ca, through(&format!("http://user:pass@{}", proxy.addr)));
        let url = format!("http://127.0.0.1:{}/plain", origin.port());
        let response = call(&client, &settings(None, None), get(&url)).await.expect("GET through the proxy");
        assert_eq!(response.status().as_u16(), 200);
        let seen = proxy.seen();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!((seen[0].method.as_str(), seen[0].target.as_str()), ("GET", url.as_str()), "absolute form");
        assert_eq!(seen[0].proxy_authorization.as_deref(), Some("Basic dXNlcjpwYXNz"));
        task.abort();
    }

    /// Through an `https://` proxy: TLS to the proxy (its certificate checked against the
    /// client's roots, HTTP/1.1), the `CONNECT` inside it, and TLS to the origin inside the
    /// tunnel, so the proxy relays a TLS record stream it cannot read.
    async fn through_an_https_proxy(alpn: Alpn, expect_alpn: &str) {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), alpn).await;
        let proxy = ConnectProxy::start_tls(ProxyMode::Open, &ca.leaf(&["localhost"])).await;
        assert!(proxy.url().starts_with("https://"));
        let client = client(&ca, through(&proxy.url()));
        for _ in 0..2 {
            let response = call(&client, &settings(None, None), get(&server.url("/bytes/100000")))
                .await
                .expect("GET through the https proxy");
            assert_eq!(response.status().as_u16(), 200);
            let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
            assert_eq!(info.proxy, Some(format!("localhost:{}", proxy.addr.port())));
            let tls = info.tls.expect("TLS to the origin");
            assert_eq!((tls.provider, tls.alpn), (PROVIDER, Some(expect_alpn)));
            assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(100_000));
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let seen = proxy.seen();
        assert_eq!(seen.len(), 1, "one tunnel, reused: {seen:?}");
        assert_eq!((seen[0].method.as_str(), seen[0].target.clone()), ("CONNECT", format!("localhost:{}", server.addr.port())));
        assert_eq!(seen[0].first_tunnel_byte, Some(0x16), "the origin's TLS runs inside the tunnel");
        assert_eq!(server.stats.accepted(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn https_through_an_https_proxy_http1() {
        through_an_https_proxy(Alpn::Http1Only, "http/1.1").await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn https_through_an_https_proxy_h2() {
        through_an_https_proxy(Alpn::H2AndHttp1, "h2").await;
    }

    /// The client identity is for origins: an `https://` proxy that asks for a certificate gets
    /// none, while the origin behind it, which requires one, gets it through the tunnel.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_https_proxy_that_asks_for_a_certificate_gets_none() {
        let ca = TestCa::new("proxy CA");
        let key = rcgen::KeyPair::generate().expect("P-256 key");
        let pem = ca.client_leaf("client", &key);
        let identity = smithy_default_tls::ClientIdentity::from_pem(&pem.cert, &pem.key).expect("client identity");
        let server =
            TestServer::start_requiring_client_auth(&ca.leaf(&["localhost"]), Alpn::Http1Only, &ca.pem, rustls::DEFAULT_VERSIONS)
                .await;
        let proxy = ConnectProxy::start_tls_asking_for_certificates(ProxyMode::Open, &ca.leaf(&["localhost"]), &ca.pem).await;
        let client = provider_builder()
            .extra_root_pem(&ca.pem)
            .expect("CA PEM")
            .client_identity(identity)
            .proxy(through(&proxy.url()))
            .build()
            .expect("client");
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10")))
            .await
            .expect("GET through the https proxy");
        assert_eq!(response.status().as_u16(), 200);
        let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
        let tls = info.tls.expect("TLS to the origin");
        assert!(tls.client_certificate_sent, "the origin asked and got the certificate: {tls:?}");
        let seen = proxy.seen();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].method, "CONNECT");
        assert!(!seen[0].client_certificate, "the proxy asked and got no certificate: {seen:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plain_http_is_forwarded_through_an_https_proxy() {
        let (origin, task) = plain_http_origin().await;
        let ca = TestCa::new("proxy CA");
        let proxy = ConnectProxy::start_tls(ProxyMode::Open, &ca.leaf(&["localhost"])).await;
        let client = client(&ca, through(&proxy.url()));
        let url = format!("http://127.0.0.1:{}/plain", origin.port());
        let response = call(&client, &settings(None, None), get(&url)).await.expect("GET through the https proxy");
        assert_eq!(response.status().as_u16(), 200);
        let seen = proxy.seen();
        assert_eq!((seen.len(), seen[0].method.as_str(), seen[0].target.as_str()), (1, "GET", url.as_str()));
        task.abort();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_https_proxy_with_an_untrusted_certificate_is_refused_and_not_retried() {
        let ca = TestCa::new("proxy CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        let stranger = TestCa::new("a CA the client does not trust");
        let proxy = ConnectProxy::start_tls(ProxyMode::Open, &stranger.leaf(&["localhost"])).await;
        let client = client(&ca, through(&proxy.url()));
        let err = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect_err("untrusted proxy");
        let failure = &proxy_failure(&err).failure;
        assert!(
            matches!(failure, ProxyFailure::Handshake(e) if matches!(e.kind(), smithy_default_tls::HandshakeFailure::Certificate(_))),
            "{}",
            error_chain(&err)
        );
        assert!(!err.is_io() && !err.is_timeout(), "a refused certificate is not retried: {}", error_chain(&err));
        assert!(error_chain(&err).contains("TLS to proxy"), "{}", error_chain(&err));
        assert!(proxy.seen().is_empty(), "no CONNECT may be sent to an unverified proxy");
        assert_eq!(server.stats.accepted(), 0);
    }
}
