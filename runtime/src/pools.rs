//! The client's connection pools: one per connect timeout and tokio runtime.
//!
//! A pooled connection is driven by a task on the runtime that opened it. Lent to a request on
//! another runtime, each of its reads is a wake-up across threads, and the request fails
//! ("runtime dropped the dispatch task") if the first runtime shuts down meanwhile: tests that
//! each run a runtime and share one SDK client, or the S3 transfer manager's runtime per core. So
//! each runtime gets pools of its own, dropped when it shuts down. An application with one
//! runtime has one pool per connect timeout.
//!
//! With [`Builder::max_connections_per_host`](crate::Builder::max_connections_per_host) the
//! runtimes share their pools: a request waiting for a slot of its host is served by a
//! connection another request gives back, which it could not take from another runtime's pool.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use aws_smithy_async::rt::sleep::SharedAsyncSleep;
use aws_smithy_types::body::SdkBody;
use hyper_util::client::legacy::ResponseFuture;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::runtime::{Handle, Id as RuntimeId};
use tokio::sync::oneshot;

use crate::connect::TlsConnectService;
use crate::dns::Resolver;
use crate::limits::HostLimits;
use crate::proxy::ProxyConfig;
use crate::tls::LazyTlsBackend;

type HyperClient = hyper_util::client::legacy::Client<TlsConnectService, SdkBody>;

/// How many pools a client keeps at once (connect timeouts × runtimes running): past it they
/// start over, so that connect timeouts computed per operation cannot grow them without end.
const MAX_POOLS: usize = 256;

/// What every pool of a client is made with.
pub(crate) struct PoolSettings {
    pub(crate) tls: Arc<LazyTlsBackend>,
    pub(crate) resolver: Resolver,
    pub(crate) proxy: ProxyConfig,
    pub(crate) tcp_keepalive: Option<Duration>,
    /// Open connections per host, shared by every pool of the client (`None`: no limit).
    pub(crate) host_limits: Option<Arc<HostLimits>>,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_idle_per_host: usize,
}

/// A client's pools, made as requests need them.
pub(crate) struct Pools {
    settings: PoolSettings,
    pools: RwLock<HashMap<PoolKey, Pool>>,
}

/// Which pool serves a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PoolKey {
    connect_timeout: Option<Duration>,
    /// The runtime the request runs on; `None` when the runtimes share pools (or there is no
    /// runtime, and hyper cannot spawn a connection anyway).
    runtime: Option<RuntimeId>,
}

/// One pool, and the end of the task that forgets it when its runtime shuts down.
struct Pool {
    client: HyperClient,
    /// Dropped with the pool: ends that task on a runtime that outlives the pool.
    _dropped: oneshot::Sender<()>,
}

impl Pools {
    /// No pools yet.
    pub(crate) fn new(settings: PoolSettings) -> Arc<Pools> {
        Arc::new(Pools { settings, pools: RwLock::default() })
    }

    /// The proxy every pool connects through.
    pub(crate) fn proxy(&self) -> &ProxyConfig {
        &self.settings.proxy
    }

    /// Sends `request` through the pool for `connect_timeout` on the runtime this runs on, made
    /// (its connects timed with `sleep`) if there is none yet.
    pub(crate) fn request(
        self: &Arc<Self>,
        connect_timeout: Option<Duration>,
        sleep: &SharedAsyncSleep,
        request: http::Request<SdkBody>,
    ) -> ResponseFuture {
        let runtime = Handle::try_current().ok().filter(|_| self.settings.host_limits.is_none());
        let key = PoolKey { connect_timeout, runtime: runtime.as_ref().map(Handle::id) };
        if let Some(pool) = self.pools.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return pool.client.request(request);
        }
        let mut pools = self.pools.write().unwrap_or_else(PoisonError::into_inner);
        let started_over = if pools.len() >= MAX_POOLS && !pools.contains_key(&key) {
            std::mem::take(&mut *pools)
        } else {
            HashMap::new()
        };
        // The new pool's end of its watching task; none when another request made the pool first.
        let mut pool_dropped = None;
        let pool = pools.entry(key).or_insert_with(|| {
            let (dropped, watch) = oneshot::channel();
            pool_dropped = Some(watch);
            Pool { client: self.make(connect_timeout, sleep), _dropped: dropped }
        });
        let response = pool.client.request(request);
        drop(pools);
        // Outside the lock: their connections close as they go, and a runtime already shutting
        // down drops the task as it is spawned, which takes the lock.
        drop(started_over);
        if let (Some(pool_dropped), Some(runtime)) = (pool_dropped, runtime) {
            self.forget_at_shutdown(key, &runtime, pool_dropped);
        }
        response
    }

    /// A new pool's hyper client: connects time out after `connect_timeout`, on `sleep`.
    fn make(&self, connect_timeout: Option<Duration>, sleep: &SharedAsyncSleep) -> HyperClient {
        let settings = &self.settings;
        let service = TlsConnectService::new(
            Arc::clone(&settings.tls),
            settings.resolver.clone(),
            settings.proxy.clone(),
            settings.tcp_keepalive,
            settings.host_limits.clone(),
            connect_timeout,
            sleep.clone(),
        );
        hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(settings.idle_timeout)
            .pool_max_idle_per_host(settings.max_idle_per_host)
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .http2_initial_stream_window_size(8 * 1024 * 1024)
            .http2_initial_connection_window_size(32 * 1024 * 1024)
            .http2_max_frame_size(256 * 1024)
            .build(service)
    }

    /// Spawns on `runtime` a task that waits for the pool at `key` to be dropped
    /// (`pool_dropped`); when the runtime shuts down first, the task is dropped unfinished and
    /// removes the pool.
    fn forget_at_shutdown(self: &Arc<Self>, key: PoolKey, runtime: &Handle, pool_dropped: oneshot::Receiver<()>) {
        let forget = ForgetPool { pools: Arc::downgrade(self), key: Some(key) };
        runtime.spawn(async move {
            // Never sent: this ends when the pool is gone.
            let _ = pool_dropped.await;
            forget.disarm();
        });
    }

    /// How many pools there are.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pools.read().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// Removes the pool at its key when dropped with the key still set: its runtime shut down. (A
/// pool made again at that key after the pools started over is on the same runtime, and goes
/// with it too.)
struct ForgetPool {
    pools: Weak<Pools>,
    key: Option<PoolKey>,
}

impl ForgetPool {
    /// Its pool is gone already: it removes nothing.
    fn disarm(mut self) {
        self.key = None;
    }
}

impl Drop for ForgetPool {
    fn drop(&mut self) {
        let (Some(key), Some(pools)) = (self.key, self.pools.upgrade()) else { return };
        let removed = pools.pools.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
        drop(removed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_smithy_async::rt::sleep::TokioSleep;

    fn pools(host_limits: Option<Arc<HostLimits>>) -> Arc<Pools> {
        let tls = crate::tls::LazyTlsBackend::with_identity(
            crate::tls::TlsSettings::for_tests(crate::provider::TlsProvider::ALL[0]),
            None,
        );
        Pools::new(PoolSettings {
            tls,
            resolver: Resolver::System,
            proxy: ProxyConfig::disabled(),
            tcp_keepalive: None,
            host_limits,
            idle_timeout: Duration::from_secs(90),
            max_idle_per_host: usize::MAX,
        })
    }

    /// Sends a request (to a port nothing listens on: only the pool it takes matters here).
    fn send(pools: &Arc<Pools>, connect_timeout: Option<Duration>) {
        let sleep = SharedAsyncSleep::new(TokioSleep::new());
        let request = http::Request::get("https://127.0.0.1:9/").body(SdkBody::empty()).expect("request");
        drop(pools.request(connect_timeout, &sleep, request));
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
    }

    #[test]
    fn each_runtime_has_its_pools_until_it_shuts_down() {
        let pools = pools(None);
        let (first, second) = (runtime(), runtime());
        first.block_on(async { send(&pools, None) });
        first.block_on(async { send(&pools, None) });
        assert_eq!(pools.len(), 1, "one runtime, one connect timeout: one pool");
        first.block_on(async { send(&pools, Some(Duration::from_secs(1))) });
        second.block_on(async { send(&pools, None) });
        assert_eq!(pools.len(), 3, "a pool per connect timeout and runtime");
        drop(first);
        assert_eq!(pools.len(), 1, "the pools of a runtime that shut down are gone");
        drop(second);
        assert_eq!(pools.len(), 0);
    }

    #[test]
    fn a_pool_dropped_before_its_runtime_ends_its_task() {
        let runtime = runtime();
        let tasks = || runtime.metrics().num_alive_tasks();
        let pools = pools(None);
        runtime.block_on(async {
            send(&pools, None);
            // The task waits on the pool before the pool goes.
            tokio::task::yield_now().await;
        });
        let with_pool = tasks();
        drop(pools);
        runtime.block_on(async {
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
        });
        assert_eq!(tasks(), with_pool - 1, "the task that would forget the pool has ended");
    }

    #[test]
    fn with_a_host_limit_the_runtimes_share_a_pool() {
        let pools = pools(Some(HostLimits::new(4)));
        let (first, second) = (runtime(), runtime());
        first.block_on(async { send(&pools, None) });
        second.block_on(async { send(&pools, None) });
        assert_eq!(pools.len(), 1);
        drop(first);
        assert_eq!(pools.len(), 1, "a shared pool outlives the runtimes");
    }

    #[test]
    fn past_the_bound_the_pools_start_over() {
        let pools = pools(None);
        let runtime = runtime();
        runtime.block_on(async {
            for millis in 0..MAX_POOLS as u64 {
                send(&pools, Some(Duration::from_millis(millis)));
            }
            assert_eq!(pools.len(), MAX_POOLS);
            send(&pools, None);
            assert_eq!(pools.len(), 1, "started over, with the new one");
            // The first pool had this key too: its task, woken now, must not remove the new one.
            send(&pools, Some(Duration::from_millis(0)));
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            assert_eq!(pools.len(), 2, "the old pools' tasks ended without removing their successors");
        });
    }
}
