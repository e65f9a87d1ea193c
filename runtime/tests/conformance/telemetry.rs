// HTTP attempt telemetry, per provider: included by each provider's conformance file (it defines
// `PROVIDER` and names the test-support crate `support`).

mod telemetry {
    use aws_smithy_runtime_api::client::http::telemetry::{CaptureHttpAttemptTelemetry, ConnectionUsage};

    use super::support::*;
    use super::provider_builder;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn attempts_record_their_connection_and_duration() {
        let ca = TestCa::new("telemetry CA");
        let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
        let client = provider_builder().extra_root_pem(&ca.pem).expect("CA").build().expect("client");
        for expected in [ConnectionUsage::Fresh, ConnectionUsage::Reused] {
            let capture = CaptureHttpAttemptTelemetry::new();
            let mut request = get(&server.url("/bytes/1000"));
            request.extensions_mut().insert(capture.clone());
            let response = call(&client, &settings(None, None), request).await.expect("GET");
            digest_body(response.into_body()).await;
            // Give the pool the moment in which it takes the connection back.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let seen = capture.get();
            let acquisition = seen.acquisition().expect("connection selection recorded");
            assert_eq!(acquisition.usage(), expected);
            let duration = acquisition.duration().expect("acquisition duration");
            match expected {
                ConnectionUsage::Fresh => assert!(duration > std::time::Duration::ZERO, "a handshake takes time"),
                _ => assert_eq!(duration, std::time::Duration::ZERO),
            }
            let connection = seen.connection().expect("connection metadata");
            assert_eq!(connection.remote_addr(), Some(server.addr));
            assert!(seen.connector_call_duration().is_some_and(|d| d >= duration));
        }
        // Without the extension (nothing to record into) the call still succeeds.
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        digest_body(response.into_body()).await;
    }
}
