//! One client shared by several tokio runtimes, as a test suite with a runtime per test shares
//! one SDK client, or the S3 transfer manager runs a runtime per core: each runtime's requests
//! travel on connections of its own.
#![cfg(feature = "rustls-ring")]

use std::time::Duration;

use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, TestCa, TestServer};

fn runtime() -> tokio::runtime::Runtime {
    // Its own worker thread drives its connections while the test thread waits elsewhere.
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
}

/// Which connection served `response`.
fn connection_of(response: &aws_smithy_runtime_api::client::orchestrator::HttpResponse) -> u64 {
    response.extension::<ConnectionInfo>().expect("connection info").id
}

/// A small call on `runtime`, read to its end and its connection back in the pool (hyper gives
/// it back from a task of its own); the connection that served it.
fn small_call(runtime: &tokio::runtime::Runtime, client: &SmithyTlsClient, server: &TestServer) -> u64 {
    runtime.block_on(async {
        let response = call(client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        let connection = connection_of(&response);
        digest_body(response.into_body()).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        connection
    })
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
    let firsts = small_call(&first, &client, &server);
    // The second runtime's call starts a download larger than the sockets hold, and the first
    // runtime shuts down while it reads: lent the first runtime's connection, it would fail.
    let response = second.block_on(async {
        call(&client, &settings(None, None), get(&server.url("/bytes/67108864"))).await.expect("GET")
    });
    let seconds = connection_of(&response);
    assert_ne!(seconds, firsts, "the second runtime was lent the first one's connection");
    drop(first);
    second.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), digest_body(response.into_body()))
            .await
            .expect("the download ends within a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    });

    // Calls on one runtime share its connections.
    assert_eq!(small_call(&second, &client, &server), seconds, "the second runtime's connection was reused");
    assert_eq!(server.accepted(), 2);
}
