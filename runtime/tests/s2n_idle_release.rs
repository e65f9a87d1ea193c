//! s2n-tls gives a connection's record buffers back once it has sat idle in the pool, on a live
//! connection: the timer wakes hyper's reader, the empty read releases, and the connection
//! still carries the next request and releases again after it. A single-purpose binary: it
//! installs a global tracing subscriber and counts the runtime's release events.
#![cfg(all(feature = "s2n-tls", unix))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, Digest, TestCa, TestServer};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The event the s2n-tls stream records when it released its buffers.
const RELEASED: &str = "idle connection: s2n-tls record buffers released";

/// Counts the release events recorded in the process.
struct Releases(AtomicUsize);

/// Whether an event's message is [`RELEASED`].
struct IsRelease(bool);

impl Visit for IsRelease {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" && format!("{value:?}") == RELEASED {
            self.0 = true;
        }
    }
}

impl Subscriber for &'static Releases {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut is_release = IsRelease(false);
        event.record(&mut is_release);
        if is_release.0 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// How many times the buffers were released so far.
fn releases() -> usize {
    static RELEASES: OnceLock<&'static Releases> = OnceLock::new();
    let releases = RELEASES.get_or_init(|| {
        let releases: &'static Releases = Box::leak(Box::new(Releases(AtomicUsize::new(0))));
        tracing::subscriber::set_global_default(releases).expect("the only subscriber");
        releases
    });
    releases.0.load(Ordering::SeqCst)
}

/// Waits until the release count passes `count`, for at most `limit`; the count then.
async fn releases_above(count: usize, limit: Duration) -> usize {
    let started = Instant::now();
    while releases() <= count && started.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    releases()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_releases_its_buffers_and_still_serves_the_next_request() {
    assert_eq!(releases(), 0, "nothing released before any connection");
    let ca = TestCa::new("idle release CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    let client = SmithyTlsClient::builder()
        .provider(TlsProvider::S2nTls)
        .extra_root_pem(&ca.pem)
        .expect("CA")
        .build()
        .expect("client");
    // Large enough to fill s2n-tls's buffers with many records and to reach the read-ahead.
    let len = 1 << 20;
    let mut connections = Vec::new();
    let mut counts = Vec::new();
    for round in 0..2 {
        let response = call(&client, &settings(None, None), get(&server.url(&format!("/bytes/{len}"))))
            .await
            .unwrap_or_else(|e| panic!("GET in round {round}: {e}"));
        connections.push(response.extension::<ConnectionInfo>().expect("connection info").id);
        assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(len), "body in round {round}");
        let before = releases();
        // 100 ms of quiet releases them; the limit only bounds a failing run.
        let after = releases_above(before, Duration::from_secs(10)).await;
        assert!(after > before, "round {round}: the idle connection never released its buffers");
        counts.push(after);
    }
    assert_eq!(connections[0], connections[1], "the second request reused the connection whose buffers went back");
    // Idle and released: no further release until data comes again.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(releases(), counts[1], "released again without new data");
}
