//! One client shared by several tokio runtimes, as a test suite with a runtime per test shares
//! one SDK client, or the S3 transfer manager runs a runtime per core: each runtime's requests
//! travel on connections of its own.
#![cfg(feature = "rustls-ring")]

use std::time::Duration;

use smithy_default_tls::{SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, TestCa, TestServer};

fn runtime() -> tokio::runtime::Runtime {
    // Its own worker thread drives its connections while the test thread waits elsewhere.
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
}

#[test]
fn a_runtime_shutting_down_fails_no_request_on_another() {
    let ca = TestCa::new("runtimes CA");
    let server_runtime = runtime();
    let server = server_runtime.block_on(TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only));
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::RustlsRing)
        .extra_root_pem(&ca.pem)
        .expect("CA")
        .build()
        .expect("client");
    let (first, second) = (runtime(), runtime());

    // The first runtime's call leaves its connection idle in the pool, driven by that runtime.
    first.block_on(async {
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        digest_body(response.into_body()).await;
    });
    // The second runtime's call starts a download larger than the sockets hold, and the first
    // runtime shuts down while it reads: lent the first runtime's connection, it would fail.
    let response = second.block_on(async {
        call(&client, &settings(None, None), get(&server.url("/bytes/67108864"))).await.expect("GET")
    });
    drop(first);
    second.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), digest_body(response.into_body()))
            .await
            .expect("the download ends within a minute");
    });
    assert_eq!(server.accepted(), 2, "each runtime opened a connection of its own");

    // Calls on one runtime share its connections.
    second.block_on(async {
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        digest_body(response.into_body()).await;
    });
    assert_eq!(server.accepted(), 2, "the second runtime's connection was reused");
}
