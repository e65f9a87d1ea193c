//! What the runtime tells an operator: a `smithy_tls.connect` tracing span per connection with
//! what was negotiated and how long each step took, events for new and reused pooled
//! connections, and `SSLKEYLOGFILE` key logging (rustls) for debugging, off unless the variable
//! is set, with a warning event when it is. A single-purpose binary: it installs a global
//! tracing subscriber and sets process environment variables.
#![cfg(feature = "rustls-ring")]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use smithy_default_tls::{ConnectionInfo, ProxyConfig, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, ConnectProxy, ProxyMode, TestCa, TestServer};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's name and its fields as text.
type SpanRecord = (String, BTreeMap<String, String>);

/// Every span opened and every event recorded in the process.
#[derive(Default)]
struct Spans {
    next: AtomicU64,
    spans: Mutex<HashMap<u64, SpanRecord>>,
    /// Each event's level and fields (its text under `message`).
    events: Mutex<Vec<(tracing::Level, BTreeMap<String, String>)>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for &'static Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.spans.lock().unwrap().insert(id, (attrs.metadata().name().to_owned(), fields));
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.events.lock().unwrap().push((*event.metadata().level(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn spans() -> &'static Spans {
    static SPANS: OnceLock<&'static Spans> = OnceLock::new();
    SPANS.get_or_init(|| {
        let spans: &'static Spans = Box::leak(Box::default());
        tracing::subscriber::set_global_default(spans).expect("the only subscriber");
        spans
    })
}

/// Every event recorded so far whose text passes `text`: its level and fields.
fn events(text: impl Fn(&str) -> bool) -> Vec<(tracing::Level, BTreeMap<String, String>)> {
    let events = spans().events.lock().unwrap();
    events.iter().filter(|(_, fields)| fields.get("message").is_some_and(|m| text(m))).cloned().collect()
}

fn connect_spans() -> Vec<BTreeMap<String, String>> {
    spans()
        .spans
        .lock()
        .unwrap()
        .values()
        .filter(|(name, _)| name == "smithy_tls.connect")
        .map(|(_, f)| f.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_connection_has_a_span_with_what_was_negotiated_and_the_timings() {
    spans();
    let ca = TestCa::new("observability CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let proxy = ConnectProxy::start(ProxyMode::Open).await;
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::RustlsRing)
        .extra_root_pem(&ca.pem)
        .expect("CA")
        .proxy(ProxyConfig::builder().all(proxy.url()).build().expect("proxy"))
        .build()
        .expect("client");
    let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
    digest_body(response.into_body()).await;
    let origin = format!("localhost:{}", server.addr.port());
    let found = connect_spans();
    let span = found
        .iter()
        .find(|f| f.get("origin") == Some(&origin))
        .unwrap_or_else(|| panic!("no span for {origin}: {found:?}"));
    assert!(span["proxy"].contains(&proxy.addr.to_string()), "{span:?}");
    assert_eq!(span.get("provider").map(String::as_str), Some("rustls-ring"), "{span:?}");
    assert!(span["alpn"].contains("h2"), "{span:?}");
    for timing in ["tcp_ms", "tunnel_ms", "handshake_ms"] {
        let ms: f64 = span.get(timing).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{timing} in {span:?}"));
        assert!(ms >= 0.0, "{timing}: {ms}");
    }
    for field in ["version", "cipher", "group", "resumed"] {
        assert!(span.contains_key(field), "{field} in {span:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_events_say_whether_each_request_opened_or_reused_its_connection() {
    spans();
    let ca = TestCa::new("pool events CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::RustlsRing)
        .extra_root_pem(&ca.pem)
        .expect("CA")
        .build()
        .expect("client");
    // No telemetry extension on these requests: the events do not depend on one.
    let mut ids = Vec::new();
    for _ in 0..2 {
        let response = call(&client, &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        ids.push(response.extension::<ConnectionInfo>().expect("connection info").id);
        digest_body(response.into_body()).await;
        // Give the pool the moment in which it takes the connection back.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(ids[0], ids[1], "the second request reuses the first one's connection");
    let id = ids[0].to_string();
    let of_this_connection = |message: &str| {
        events(|text| text == message).into_iter().filter(|(_, fields)| fields.get("connection") == Some(&id)).count()
    };
    assert_eq!(of_this_connection("new connection"), 1, "one event for the connection opened");
    assert_eq!(of_this_connection("reusing a pooled connection"), 1, "one event for the reuse");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslkeylogfile_captures_the_secrets_only_when_set() {
    spans();
    let ca = TestCa::new("key log CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    let log = std::env::temp_dir().join(format!("smithy-tls-keylog-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let client = || {
        SmithyTlsClient::builder()
            .provider(TlsProvider::RustlsRing)
            .extra_root_pem(&ca.pem)
            .expect("CA")
            .build()
            .expect("client")
    };

    // Not set: nothing written.
    std::env::remove_var("SSLKEYLOGFILE");
    let response = call(&client(), &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
    digest_body(response.into_body()).await;
    assert!(!log.exists());

    std::env::set_var("SSLKEYLOGFILE", &log);
    let response = call(&client(), &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
    digest_body(response.into_body()).await;
    std::env::remove_var("SSLKEYLOGFILE");
    // The operator is warned, with the path, when (and only when) the variable is set.
    let warnings: Vec<_> = events(|text| text.starts_with("SSLKEYLOGFILE is set"))
        .into_iter()
        .filter(|(_, fields)| fields.get("path").is_some_and(|p| p.contains(&log.display().to_string())))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning for the client that logs secrets: {warnings:?}");
    assert_eq!(warnings[0].0, tracing::Level::WARN);
    let text = std::fs::read_to_string(&log).expect("the key log was written");
    assert!(text.contains("CLIENT_TRAFFIC_SECRET_0 "), "NSS key log lines: {text}");
    let _ = std::fs::remove_file(&log);
}
