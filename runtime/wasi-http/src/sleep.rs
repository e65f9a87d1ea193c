//! The SDK's `AsyncSleep` on `wasi:clocks/monotonic-clock`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use aws_smithy_async::rt::sleep::{AsyncSleep, SharedAsyncSleep, Sleep};
use wasip2::clocks::monotonic_clock;

/// The longest a poll blocks the component's thread: a sleep waits in slices, so that a future
/// polled beside it (the request a timeout races) is polled again meanwhile.
const SLICE: Duration = Duration::from_millis(10);

/// Sleeps on the host's monotonic clock, under any executor: each poll blocks for at most
/// [`SLICE`] and then asks to be polled again.
///
/// ```no_run
/// # #[cfg(all(target_os = "wasi", target_env = "p2"))]
/// # fn example() {
/// use aws_smithy_async::rt::sleep::AsyncSleep;
/// let sleeping = smithy_wasi_http::WasiSleep::default().sleep(std::time::Duration::from_millis(5));
/// # let _ = sleeping;
/// # }
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct WasiSleep {}

/// The sleep, shared, as the SDK's config takes it.
///
/// ```no_run
/// # #[cfg(all(target_os = "wasi", target_env = "p2"))]
/// # fn example() {
/// let sleep = smithy_wasi_http::sleep();
/// # let _ = sleep;
/// # }
/// ```
pub fn sleep() -> SharedAsyncSleep {
    SharedAsyncSleep::new(WasiSleep::default())
}

impl AsyncSleep for WasiSleep {
    fn sleep(&self, duration: Duration) -> Sleep {
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        Sleep::new(Sliced { until: monotonic_clock::now().saturating_add(nanos) })
    }
}

/// A sleep until the monotonic clock reads `until`.
struct Sliced {
    until: monotonic_clock::Instant,
}

impl Future for Sliced {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let left = self.until.saturating_sub(monotonic_clock::now());
        if left == 0 {
            return Poll::Ready(());
        }
        let slice = u64::try_from(SLICE.as_nanos()).unwrap_or(u64::MAX);
        monotonic_clock::subscribe_duration(left.min(slice)).block();
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
