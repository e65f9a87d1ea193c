//! What the runtime tells an operator: a `smithy_tls.connect` tracing span per connection with
//! what was negotiated and how long each step took, and `SSLKEYLOGFILE` key logging (rustls) for
//! debugging, off unless the variable is set. A single-purpose binary: it installs a global
//! tracing subscriber and sets process environment variables.
#![cfg(feature = "rustls-ring")]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use smithy_default_tls::{ProxyConfig, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, ConnectProxy, ProxyMode, TestCa, TestServer};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's name and its fields as text.
type SpanRecord = (String, BTreeMap<String, String>);

/// Every span opened in the process.
#[derive(Default)]
struct Spans {
    next: AtomicU64,
    spans: Mutex<HashMap<u64, SpanRecord>>,
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
    fn event(&self, _: &Event<'_>) {}
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
async fn sslkeylogfile_captures_the_secrets_only_when_set() {
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
    let text = std::fs::read_to_string(&log).expect("the key log was written");
    assert!(text.contains("CLIENT_TRAFFIC_SECRET_0 "), "NSS key log lines: {text}");
    let _ = std::fs::remove_file(&log);
}
