//! The orchestrator asks the client for a connector on every attempt. The client makes one per
//! (connect timeout, read timeout, sleep) and hands it out again without allocating; runtime
//! components with another sleep get a connector that times out with theirs. A single-purpose
//! binary: it counts this thread's allocations with its own global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_smithy_async::rt::sleep::{AsyncSleep, SharedAsyncSleep, Sleep, TokioSleep};
use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnector};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use smithy_default_tls::{SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{components, components_sleeping_with, get, settings, SilentServer, TestCa};

/// The system's allocator, counting the allocations of a thread that asked to be counted.
struct Counting;

thread_local! {
    /// This thread's allocations while counted (`None`: not counted).
    static ALLOCATIONS: Cell<Option<usize>> = const { Cell::new(None) };
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn count_one() {
    // `try_with`: the thread-local may already be gone while a thread exits.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get().map(|n| n + 1)));
}

// SAFETY: every call is passed on to `System` unchanged; counting touches only a thread-local.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }
}

/// How many times `f` allocated on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|count| count.set(Some(0)));
    f();
    ALLOCATIONS.with(|count| count.replace(None)).expect("counting")
}

/// A client of the first provider compiled, trusting `ca`.
fn client(ca: &TestCa) -> SmithyTlsClient {
    let provider = *TlsProvider::ALL.first().expect("a provider is compiled");
    SmithyTlsClient::builder().provider(provider).extra_root_pem(&ca.pem).expect("CA").build().expect("client")
}

/// Tokio's sleep, counting the sleeps asked of it.
#[derive(Debug, Default)]
struct CountedSleep(Arc<AtomicUsize>);

impl AsyncSleep for CountedSleep {
    fn sleep(&self, duration: Duration) -> Sleep {
        self.0.fetch_add(1, Ordering::SeqCst);
        TokioSleep::new().sleep(duration)
    }
}

#[test]
fn asking_again_for_a_connector_allocates_nothing() {
    let client = client(&TestCa::new("connector reuse CA"));
    let components = components();
    let timeouts = settings(Some(Duration::from_secs(3)), Some(Duration::from_secs(5)));
    drop(client.http_connector(&timeouts, &components));
    let again = allocations_in(|| drop(client.http_connector(&timeouts, &components)));
    assert_eq!(again, 0, "the second connector for the same settings and sleep was made anew");
    // Another connect timeout, or another read timeout, is another connector, made once too.
    for other in [settings(None, Some(Duration::from_secs(5))), settings(Some(Duration::from_secs(3)), None)] {
        assert_ne!(allocations_in(|| drop(client.http_connector(&other, &components))), 0, "a new connector allocates");
        assert_eq!(allocations_in(|| drop(client.http_connector(&other, &components))), 0);
    }
    // Two SDK clients (two sleeps) on this client, taking turns: each keeps its connector.
    let second = components_sleeping_with(SharedAsyncSleep::new(TokioSleep::new()));
    assert_ne!(allocations_in(|| drop(client.http_connector(&timeouts, &second))), 0, "a new connector allocates");
    for turn in [&components, &second, &components, &second] {
        assert_eq!(allocations_in(|| drop(client.http_connector(&timeouts, turn))), 0, "clients taking turns");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_sleep_times_out_its_own_reads() {
    let ca = TestCa::new("connector reuse CA");
    let silent = SilentServer::start().await;
    let client = client(&ca);
    let url = format!("https://localhost:{}/", silent.addr.port());
    let timeouts = settings(Some(Duration::from_secs(5)), Some(Duration::from_millis(200)));
    let read_with = |components: RuntimeComponents| {
        let connector = client.http_connector(&timeouts, &components);
        let request = HttpRequest::try_from(get(&url)).expect("request");
        async move { connector.call(request).await }
    };
    // The first components' connector is made and kept.
    let tokio_sleep = SharedAsyncSleep::new(TokioSleep::new());
    let err = read_with(components_sleeping_with(tokio_sleep.clone())).await.expect_err("times out");
    assert!(err.is_timeout(), "{err:?}");
    // Components with another sleep, the same settings: the read timeout sleeps with theirs.
    let slept = Arc::new(AtomicUsize::new(0));
    let counted = SharedAsyncSleep::new(CountedSleep(Arc::clone(&slept)));
    let err = read_with(components_sleeping_with(counted)).await.expect_err("times out");
    assert!(err.is_timeout(), "{err:?}");
    assert_ne!(slept.load(Ordering::SeqCst), 0, "the read timeout slept with the first components' sleep");
    // The first sleep again: its own connector, not the counted one's.
    let before = slept.load(Ordering::SeqCst);
    let err = read_with(components_sleeping_with(tokio_sleep)).await.expect_err("times out");
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(slept.load(Ordering::SeqCst), before, "the counted sleep timed the first components' read");
}
