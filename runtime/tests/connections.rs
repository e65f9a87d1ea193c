//! Connection settings on the builder: TCP keepalive (checked in the kernel's socket table) and
//! the number of idle connections kept per host.
#![cfg(feature = "rustls-ring")]

use std::time::Duration;

use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, TestCa, TestServer};

fn client(
    ca: &TestCa,
    configure: impl FnOnce(smithy_default_tls::Builder) -> smithy_default_tls::Builder,
) -> SmithyTlsClient {
    let builder = SmithyTlsClient::builder().provider(TlsProvider::RustlsRing).extra_root_pem(&ca.pem).expect("CA");
    configure(builder).build().expect("client")
}

/// The `tr` (timer) field of the kernel's entry for the established TCP connection `info`
/// describes: 2 when the keepalive timer runs on an idle connection, 0 when no timer does. The
/// entry is matched on both ends, since another test's closed socket (timer 3, TIME_WAIT) may
/// hold the same local port towards a different server.
fn timer_of(info: &ConnectionInfo) -> u8 {
    let hex = |addr: std::net::SocketAddr| {
        assert_eq!(addr.ip(), std::net::Ipv4Addr::LOCALHOST, "test servers are on 127.0.0.1");
        format!("0100007F:{:04X}", addr.port())
    };
    let local = hex(info.local_addr.expect("local addr"));
    let remote = hex(info.remote_addr.expect("remote addr"));
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp (Linux)");
    // Fields: sl local rem st tx:rx tr:tm->when ...; state 01 is ESTABLISHED.
    let line = table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 5 && f[1] == local && f[2] == remote && f[3] == "01")
        .unwrap_or_else(|| panic!("no established socket {local} -> {remote} in /proc/net/tcp"));
    line[5].split(':').next().and_then(|t| t.parse().ok()).expect("timer kind")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_keepalive_is_on_by_default_and_can_be_turned_off() {
    let ca = TestCa::new("keepalive CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    for (keepalive, expected_timer) in [(Some(Duration::from_secs(60)), 2), (None, 0)] {
        let client = client(&ca, |b| b.tcp_keepalive(keepalive));
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
        digest_body(response.into_body()).await;
        tokio::time::sleep(Duration::from_millis(50)).await; // idle, back in the pool
        assert_eq!(timer_of(&info), expected_timer, "keepalive {keepalive:?}");
    }
    // The default is on.
    let client = client(&ca, |b| b);
    let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
    let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
    digest_body(response.into_body()).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(timer_of(&info), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_kept_per_host_are_bounded() {
    let ca = TestCa::new("pool CA");
    for (max_idle, expected_new) in [(usize::MAX, 0), (1, 2), (0, 3)] {
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        let client = client(&ca, |b| b.pool_max_idle_per_host(max_idle));
        let round = || async {
            // Three requests at once: three connections.
            let url = server.url("/bytes/2000000");
            let one = || async {
                let response = call(&client, &settings(None, None), get(&url)).await.expect("GET");
                digest_body(response.into_body()).await;
            };
            tokio::join!(one(), one(), one());
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        round().await;
        assert_eq!(server.stats.accepted(), 3, "max_idle {max_idle}: first round");
        round().await;
        assert_eq!(server.stats.accepted(), 3 + expected_new, "max_idle {max_idle}: connections opened again");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_connections_per_host_are_bounded() {
    let ca = TestCa::new("limit CA");
    // Six requests at once over HTTP/1.1: six connections without a limit, two with it (the
    // other requests wait for a connection to come free).
    for (limit, expected) in [(None, 6), (Some(2), 2), (Some(1), 1)] {
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
        let client = client(&ca, |b| match limit {
            Some(max) => b.max_connections_per_host(max),
            None => b,
        });
        let url = server.url("/bytes/2000000");
        let one = || async {
            let response = call(&client, &settings(None, None), get(&url)).await.expect("GET");
            let info = response.extension::<ConnectionInfo>().cloned().expect("connection info");
            digest_body(response.into_body()).await;
            info.id
        };
        let ids = tokio::time::timeout(Duration::from_secs(30), async {
            let (a, b, c, d, e, f) = tokio::join!(one(), one(), one(), one(), one(), one());
            [a, b, c, d, e, f]
        })
        .await
        .expect("every request is served, none waits forever");
        let distinct: std::collections::BTreeSet<u64> = ids.into_iter().collect();
        assert_eq!(server.stats.accepted(), expected, "limit {limit:?}: connections the server saw");
        // A request may take a connection that came free before its own was ready (hyper-util's
        // pool races the two; the new connection is pooled): at most as many served as opened.
        assert!(distinct.len() <= expected, "limit {limit:?}: {} connections served the requests", distinct.len());
    }
}
