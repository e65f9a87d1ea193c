//! The [`HttpClient`] implementation: hyper 1 connection pools (`pools`), driven the way the
//! Smithy orchestrator drives every client.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use aws_smithy_async::future::timeout::Timeout;
use aws_smithy_async::rt::sleep::{AsyncSleep, SharedAsyncSleep, TokioSleep};
use aws_smithy_runtime_api::client::connection::{CaptureSmithyConnection, ConnectionMetadata};
use aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata;
use aws_smithy_runtime_api::client::dns::{ResolveDns, SharedDnsResolver};
use aws_smithy_runtime_api::client::http::telemetry::{
    CaptureHttpAttemptTelemetry, ConnectionAcquisitionTelemetry, ConnectionUsage,
};
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use hyper_util::client::legacy::connect::{capture_connection, CaptureConnection};

use crate::connect::ConnectionInfo;
use crate::dns::Resolver;
use crate::error::{ConnectTimeout, Error, HandshakeFailure, ProxyError, ReadTimeout, TlsHandshakeError};
use crate::identity::IdentitySource;
use crate::pools::{PoolSettings, Pools};
use crate::provider::TlsProvider;
use crate::proxy::ProxyConfig;
use crate::roots::ExtraRoots;
use crate::roots::TrustRoots;
use crate::tls::{LazyTlsBackend, TlsSettings};

/// Idle pooled connections are closed after this long unless the builder says otherwise.
pub const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The TCP keepalive idle time set on every connection unless
/// [`Builder::tcp_keepalive`] says otherwise.
pub const DEFAULT_TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// An HTTPS client for Smithy-generated SDKs, implementing [`HttpClient`].
///
/// Cloning is cheap and clones share everything: the TLS configuration, the trust roots and the
/// connection pools. Build one with [`SmithyTlsClient::builder`], or get the process-wide one for
/// a (provider, roots) choice with [`shared_client`](crate::shared_client).
///
/// ```
/// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
/// use smithy_default_tls::{SmithyTlsClient, TlsProvider, TrustRoots};
///
/// let client = SmithyTlsClient::builder()
///     .provider(TlsProvider::RustlsRing)
///     .trust_roots(TrustRoots::Webpki)
///     .build()
///     .expect("valid configuration");
/// // Hand it to an SDK config: `.http_client(client.into_shared())`.
/// let _shared = client.into_shared();
/// # }
/// ```
#[derive(Clone)]
pub struct SmithyTlsClient {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    tls: Arc<LazyTlsBackend>,
    /// One per connect timeout and runtime: SDK clients configured alike (the common case) on
    /// one runtime share one pool.
    pools: Arc<Pools>,
    /// The connectors handed out per (connect timeout, read timeout), each with the sleep it was
    /// made with, oldest first: the orchestrator asks for one on every attempt.
    connectors: RwLock<HashMap<ConnectorKey, Vec<CachedConnector>>>,
}

/// How many distinct timeout settings keep their connectors: past it the cache starts over.
const MAX_CONNECTOR_SETTINGS: usize = 32;

/// How many sleeps (SDK clients sharing this client) keep a connector per setting: past it the
/// oldest is dropped.
const MAX_SLEEPS_PER_SETTINGS: usize = 8;

/// The settings a [`Connector`] is made for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ConnectorKey {
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
}

/// A connector handed out, and the runtime components' sleep it times out with (`None`: the
/// components had none, and it sleeps on tokio).
struct CachedConnector {
    sleep: Option<SharedAsyncSleep>,
    connector: SharedHttpConnector,
}

impl CachedConnector {
    /// Whether this connector sleeps with `sleep`: the same one, not merely an equal one (a sleep
    /// carries no equality, and two may time differently).
    fn sleeps_with(&self, sleep: Option<&SharedAsyncSleep>) -> bool {
        match (&self.sleep, sleep) {
            (None, None) => true,
            (Some(cached), Some(sleep)) => std::ptr::addr_eq(cached.as_ref(), sleep.as_ref()),
            _ => false,
        }
    }
}

impl fmt::Debug for SmithyTlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = self.inner.tls.settings();
        f.debug_struct("SmithyTlsClient")
            .field("provider", &settings.provider)
            .field("trust_roots", &settings.roots)
            .field("extra_roots", &settings.extra_roots.certificates.len())
            .field("http2", &settings.enable_http2)
            .field("session_resumption", &settings.session_resumption)
            .field("client_identity", &self.inner.tls.identity_source())
            .field("proxy", self.inner.pools.proxy())
            .finish()
    }
}

impl SmithyTlsClient {
    /// A builder with nothing chosen yet.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The TLS provider this client uses.
    pub fn provider(&self) -> TlsProvider {
        self.inner.tls.settings().provider
    }

    /// Whether `self` and `other` are handles to the same client (same pools, same TLS state).
    pub fn ptr_eq(&self, other: &SmithyTlsClient) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Wraps this client for an SDK config (`.http_client(..)`).
    pub fn into_shared(self) -> SharedHttpClient {
        SharedHttpClient::new(self)
    }

    /// A connector for `key`'s timeouts, sleeping with `sleep` (on tokio when `None`).
    fn connector(&self, key: ConnectorKey, sleep: Option<SharedAsyncSleep>) -> SharedHttpConnector {
        let sleep = sleep.unwrap_or_else(|| SharedAsyncSleep::new(TokioSleep::new()));
        SharedHttpConnector::new(Connector {
            pools: Arc::clone(&self.inner.pools),
            refusals: Arc::clone(self.inner.tls.refusals()),
            connect_timeout: key.connect_timeout,
            read_timeout: key.read_timeout,
            sleep,
        })
    }
}

impl HttpClient for SmithyTlsClient {
    fn http_connector(&self, settings: &HttpConnectorSettings, components: &RuntimeComponents) -> SharedHttpConnector {
        let key = ConnectorKey { connect_timeout: settings.connect_timeout(), read_timeout: settings.read_timeout() };
        let sleep = components.sleep_impl();
        let cached = |connectors: &HashMap<ConnectorKey, Vec<CachedConnector>>| {
            let made = connectors.get(&key)?;
            made.iter().find(|cached| cached.sleeps_with(sleep.as_ref())).map(|cached| cached.connector.clone())
        };
        if let Some(connector) = cached(&self.inner.connectors.read().unwrap_or_else(PoisonError::into_inner)) {
            return connector;
        }
        let mut connectors = self.inner.connectors.write().unwrap_or_else(PoisonError::into_inner);
        // Another attempt may have made it while this one waited for the lock.
        if let Some(connector) = cached(&connectors) {
            return connector;
        }
        // A cache, bounded: settings computed per operation (a deadline's read timeout) or many
        // SDK clients' sleeps on one shared client would otherwise grow it without end.
        if connectors.len() >= MAX_CONNECTOR_SETTINGS && !connectors.contains_key(&key) {
            connectors.clear();
        }
        let connector = self.connector(key, sleep.clone());
        let made = connectors.entry(key).or_default();
        if made.len() >= MAX_SLEEPS_PER_SETTINGS {
            made.remove(0);
        }
        made.push(CachedConnector { sleep, connector: connector.clone() });
        connector
    }

    fn connector_metadata(&self) -> Option<ConnectorMetadata> {
        Some(ConnectorMetadata::new(env!("CARGO_PKG_NAME"), Some(env!("CARGO_PKG_VERSION").into())))
    }
}

/// The connector handed to the orchestrator: the client's pools and the attempt's timeouts.
struct Connector {
    pools: Arc<Pools>,
    /// Refusals of our certificate the client's connections met on reads (`RefusalLog`).
    refusals: Arc<crate::tls::RefusalLog>,
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
    /// Times the read timeout, and the connects of a pool this connector makes.
    sleep: SharedAsyncSleep,
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector").field("read_timeout", &self.read_timeout).finish_non_exhaustive()
    }
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        // The application built without any TLS stack: every request fails, and is not retried.
        if cfg!(no_tls) {
            return HttpConnectorFuture::ready(Err(ConnectorError::user(Error::TlsDisabled.into())));
        }
        let mut request = match request.try_into_http1x() {
            Ok(request) => request,
            Err(e) => return HttpConnectorFuture::ready(Err(ConnectorError::user(e.into()))),
        };
        // A plain-HTTP request forwarded by a proxy carries the proxy's credentials itself (an
        // `https://` one sends them in the tunnel's CONNECT instead).
        if request.uri().scheme_str() == Some("http") {
            if let Some(auth) = self.pools.proxy().route(request.uri()).and_then(|route| route.auth) {
                request.headers_mut().insert(http::header::PROXY_AUTHORIZATION, auth);
            }
        }
        let telemetry = request.extensions().get::<CaptureHttpAttemptTelemetry>().cloned();
        let started = SystemTime::now();
        let capture = capture_connection(&mut request);
        if let Some(smithy_capture) = request.extensions().get::<CaptureSmithyConnection>() {
            let capture = capture.clone();
            smithy_capture.set_connection_retriever(move || connection_metadata(&capture));
        }
        // The authority shares the URI's bytes (a reference, not a copy of the text): its host
        // names the server for the client's refusal log, read only when the call fails.
        let authority = request.uri().authority().cloned();
        let refusals = Arc::clone(&self.refusals);
        let response = self.pools.request(self.connect_timeout, &self.sleep, request);
        let read_timeout = self.read_timeout.map(|after| (after, self.sleep.sleep(after)));
        HttpConnectorFuture::new(async move {
            let response = match read_timeout {
                None => response.await.map_err(classify),
                Some((after, sleep)) => match Timeout::new(response, sleep).await {
                    Ok(response) => response.map_err(classify),
                    Err(_elapsed) => Err(ConnectorError::timeout(Box::new(ReadTimeout { after }))),
                },
            };
            // The connection is read once: for the pool events, the telemetry and the error to
            // carry (and not at all when none of them wants it).
            let pool_events = tracing::enabled!(tracing::Level::TRACE);
            let connection =
                if telemetry.is_some() || pool_events || response.is_err() { connection_of(&capture) } else { None };
            let used = connection.as_ref().and_then(|(metadata, info, _)| {
                info.as_ref().map(|info| (metadata, info.id, Acquired::of(info, started)))
            });
            if let Some((_, id, acquired)) = used.filter(|_| pool_events) {
                match acquired {
                    Acquired::Fresh { .. } => tracing::trace!(connection = id, "new connection"),
                    Acquired::Reused => tracing::trace!(connection = id, "reusing a pooled connection"),
                }
            }
            if let Some(telemetry) = &telemetry {
                record_attempt(telemetry, used.map(|(metadata, _, acquired)| (metadata, acquired)), started);
            }
            let response = response.map_err(|error| {
                // The server refused our certificate after the handshake (TLS 1.3): not retried.
                // hyper keeps no typed error of the connection, so the refusal is read from the
                // connection's record, or (when it died before the request went out on it and
                // none was captured) from the client's, for this host since the call started.
                let refused = connection
                    .as_ref()
                    .and_then(|(_, _, refusal)| refusal.as_ref()?.get().cloned())
                    .or_else(|| refusals.since(authority.as_ref()?.host(), started));
                let error = match refused {
                    Some(refused) => ConnectorError::other(Box::new(refused), None),
                    None => error,
                };
                match &connection {
                    Some((metadata, _, _)) => error.with_connection(metadata.clone()),
                    None => error,
                }
            })?;
            let response = response.map(SdkBody::from_body_1_x);
            HttpResponse::try_from(response).map_err(|e| ConnectorError::other(e.into(), None))
        })
    }
}

/// How an attempt got its connection.
#[derive(Clone, Copy)]
enum Acquired {
    /// Connected after the call started: this call opened it (and waited for it until then).
    Fresh { connected_at: SystemTime },
    /// Taken from the pool.
    Reused,
}

impl Acquired {
    fn of(info: &ConnectionInfo, started: SystemTime) -> Acquired {
        if info.connected_at >= started {
            Acquired::Fresh { connected_at: info.connected_at }
        } else {
            Acquired::Reused
        }
    }
}

/// Records what the attempt's telemetry asks for (as upstream's client does): how long the call
/// took to its response head (or failure), and, when a connection was used, whether it was
/// fresh or reused, how long getting it took, and its metadata.
fn record_attempt(
    telemetry: &CaptureHttpAttemptTelemetry,
    connection: Option<(&ConnectionMetadata, Acquired)>,
    started: SystemTime,
) {
    let now = SystemTime::now();
    telemetry.record_connector_call_duration(now.duration_since(started).unwrap_or_default());
    let Some((metadata, acquired)) = connection else { return };
    let acquisition = match acquired {
        Acquired::Fresh { connected_at } => {
            ConnectionAcquisitionTelemetry::from_interval(started, connected_at, ConnectionUsage::Fresh)
        }
        Acquired::Reused => ConnectionAcquisitionTelemetry::new(Duration::ZERO, ConnectionUsage::Reused),
    };
    telemetry.record_connection_selection(acquisition, metadata.clone());
}

fn connection_metadata(capture: &CaptureConnection) -> Option<ConnectionMetadata> {
    connection_of(capture).map(|(metadata, _, _)| metadata)
}

/// The captured connection as the orchestrator sees it (metadata, with a poison switch), what
/// this crate knows of it, and where its reads record a refusal of our certificate, read from
/// the connection once.
fn connection_of(
    capture: &CaptureConnection,
) -> Option<(ConnectionMetadata, Option<ConnectionInfo>, Option<crate::tls::ReadRefusal>)> {
    let guard = capture.connection_metadata();
    let connected = guard.as_ref()?;
    let mut extensions = http::Extensions::new();
    connected.get_extras(&mut extensions);
    let info = extensions.remove::<ConnectionInfo>();
    let refusal = extensions.remove::<crate::tls::ReadRefusal>();
    let to_poison = capture.clone();
    let proxied = connected.is_proxied() || info.as_ref().is_some_and(|i| i.proxy.is_some());
    let mut builder = ConnectionMetadata::builder().proxied(proxied).poison_fn(move || {
        match to_poison.connection_metadata().as_ref() {
            Some(connected) => connected.poison(),
            None => tracing::trace!("no connection to poison"),
        }
    });
    builder.set_remote_addr(info.as_ref().and_then(|i| i.remote_addr));
    builder.set_local_addr(info.as_ref().and_then(|i| i.local_addr));
    Some((builder.build(), info, refusal))
}

fn find_source<'a, T: StdError + 'static>(err: &'a (dyn StdError + 'static)) -> Option<&'a T> {
    let mut next = Some(err);
    while let Some(err) = next {
        if let Some(found) = err.downcast_ref::<T>() {
            return Some(found);
        }
        // An `io::Error`'s `source()` is its inner error's source, skipping the inner error
        // itself: a read's error carries a `TlsHandshakeError` there (tls/mod.rs, `poll_read`).
        let inner = err.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
        if let Some(found) = inner.and_then(|inner| inner.downcast_ref::<T>()) {
            return Some(found);
        }
        next = err.source();
    }
    None
}

/// Sorts a hyper-util error into the kinds the SDK's retry strategy understands (aws-smithy-runtime
/// retries `timeout` and `io` as transient, `other` only with an explicit error kind, never
/// `user`): timeouts and transport failures are retried; certificate and protocol failures, and
/// configuration errors and misuse, are not.
fn classify(err: hyper_util::client::legacy::Error) -> ConnectorError {
    // Before everything else: hyper-util reports the connector's failures as connect errors,
    // and a configuration problem (no trust roots, a malformed CA bundle, an unusable TLS
    // configuration, an unsupported URI) fails the same way at every attempt.
    if find_source::<Error>(&err).is_some() {
        return ConnectorError::user(err.into());
    }
    if find_source::<ConnectTimeout>(&err).is_some() {
        return ConnectorError::timeout(err.into());
    }
    if let Some(proxy) = find_source::<ProxyError>(&err) {
        return if proxy.failure.is_transient() {
            ConnectorError::io(err.into())
        } else {
            ConnectorError::other(err.into(), None)
        };
    }
    if let Some(handshake) = find_source::<TlsHandshakeError>(&err) {
        return match handshake.kind() {
            HandshakeFailure::Io => ConnectorError::io(err.into()),
            HandshakeFailure::Certificate(_) | HandshakeFailure::Protocol | HandshakeFailure::ClientCertificate(_) => {
                ConnectorError::other(err.into(), None)
            }
            // A variant added later: not retried unless it says it is a transport failure.
            #[allow(unreachable_patterns)]
            _ => ConnectorError::other(err.into(), None),
        };
    }
    if let Some(hyper_err) = find_source::<hyper::Error>(&err) {
        if hyper_err.is_timeout() {
            return ConnectorError::timeout(err.into());
        }
        if hyper_err.is_user() {
            return ConnectorError::user(err.into());
        }
        if hyper_err.is_closed() || hyper_err.is_canceled() || hyper_err.is_incomplete_message() {
            return ConnectorError::io(err.into());
        }
    }
    if err.is_connect() || find_source::<std::io::Error>(&err).is_some() {
        return ConnectorError::io(err.into());
    }
    ConnectorError::other(err.into(), None)
}

/// Configures a [`SmithyTlsClient`].
///
/// ```
/// # #[cfg(feature = "rustls-aws-lc")] {
/// use smithy_default_tls::{SmithyTlsClient, TlsProvider};
///
/// let pem = b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
/// let err = SmithyTlsClient::builder().provider(TlsProvider::RustlsAwsLc).extra_root_pem(pem);
/// assert!(err.is_err(), "bad PEM is reported when it is added");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    provider: Option<TlsProvider>,
    resolver: Resolver,
    roots: Option<TrustRoots>,
    extra_roots: ExtraRoots,
    enable_http2: bool,
    session_resumption: bool,
    pool_idle_timeout: Duration,
    ca_bundle: Option<std::path::PathBuf>,
    proxy: ProxyConfig,
    pool_max_idle_per_host: usize,
    tcp_keepalive: Option<Duration>,
    max_connections_per_host: Option<usize>,
    client_identity: Option<IdentitySource>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            provider: None,
            resolver: Resolver::System,
            roots: None,
            extra_roots: ExtraRoots::default(),
            enable_http2: true,
            session_resumption: true,
            pool_idle_timeout: DEFAULT_POOL_IDLE_TIMEOUT,
            ca_bundle: None,
            proxy: ProxyConfig::disabled(),
            pool_max_idle_per_host: usize::MAX,
            tcp_keepalive: Some(DEFAULT_TCP_KEEPALIVE),
            max_connections_per_host: None,
            client_identity: None,
        }
    }
}

impl Builder {
    /// How many idle connections to keep per host in each pool (default: no limit; idle ones
    /// close after [`pool_idle_timeout`](Builder::pool_idle_timeout)). `0` keeps none: every
    /// request opens a connection. Each tokio runtime has pools of its own, so an application
    /// with several runtimes keeps up to this many per runtime.
    pub fn pool_max_idle_per_host(mut self, max: usize) -> Self {
        self.pool_max_idle_per_host = max;
        self
    }

    /// At most `max` connections open to one host (`host:port`) at a time (default: no limit;
    /// `0` counts as 1). A request that finds them all busy waits for one to come free (within
    /// the connect timeout) instead of opening another. Over HTTP/2 one connection carries
    /// every request to a host anyway. With a limit the tokio runtimes share their pools (a
    /// request waits for whichever connection comes free), so a connection may be lent to a
    /// runtime other than the one that drives it, and fails with that runtime's shutdown.
    ///
    /// ```
    /// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
    /// use smithy_default_tls::{SmithyTlsClient, TlsProvider, TrustRoots};
    /// let client = SmithyTlsClient::builder()
    ///     .provider(TlsProvider::RustlsRing)
    ///     .trust_roots(TrustRoots::Webpki)
    ///     .max_connections_per_host(16)
    ///     .build()
    ///     .unwrap();
    /// # let _ = client;
    /// # }
    /// ```
    pub fn max_connections_per_host(mut self, max: usize) -> Self {
        self.max_connections_per_host = Some(max);
        self
    }

    /// TCP keepalive on every connection: probes after this much idle time (default 60 s, as
    /// upstream's default client); `None` turns it off.
    pub fn tcp_keepalive(mut self, idle: Option<Duration>) -> Self {
        self.tcp_keepalive = idle;
        self
    }

    /// Sends requests through a proxy ([`ProxyConfig`]: explicit, from the environment, or
    /// disabled, the default). `https://` origins are reached through an HTTP `CONNECT` tunnel
    /// with TLS end to end; `http://` origins are forwarded.
    pub fn proxy(mut self, proxy: ProxyConfig) -> Self {
        self.proxy = proxy;
        self
    }

    /// Picks the TLS provider. Without this, the first compiled-in one in
    /// [`TlsProvider::ALL`] is used.
    pub fn provider(mut self, provider: TlsProvider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Picks the trust-root source. Without this, and without extra certificates, the first
    /// compiled-in one in [`TrustRoots::ALL`] is used.
    pub fn trust_roots(mut self, roots: TrustRoots) -> Self {
        self.roots = Some(roots);
        self
    }

    /// Also trusts every certificate in a PEM bundle (for a private CA). Fails if the bundle
    /// holds no certificate or a malformed one.
    pub fn extra_root_pem(mut self, pem: impl AsRef<[u8]>) -> Result<Self, Error> {
        self.extra_roots.add_pem("<memory>", pem.as_ref())?;
        Ok(self)
    }

    /// Like [`extra_root_pem`](Self::extra_root_pem), reading the bundle from a file.
    pub fn extra_root_pem_file(mut self, path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        self.extra_roots.add_pem_file(&path.display().to_string(), path)?;
        Ok(self)
    }

    /// Offers HTTP/2 through ALPN (on by default); when off, only HTTP/1.1 is offered.
    pub fn enable_http2(mut self, enable: bool) -> Self {
        self.enable_http2 = enable;
        self
    }

    /// Resumes earlier TLS sessions on new connections to the same server (on by default):
    /// a resumed handshake skips certificate verification and a round of key exchange.
    pub fn session_resumption(mut self, enable: bool) -> Self {
        self.session_resumption = enable;
        self
    }

    /// Resolves host names with `resolver` instead of the system's resolver (`getaddrinfo`),
    /// as upstream's `dns_resolver` option does: for a caching resolver, a test that points many
    /// host names at a local server, or a name service of the application's own.
    ///
    /// ```
    /// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
    /// use std::net::{IpAddr, Ipv4Addr};
    /// use aws_smithy_runtime_api::client::dns::{DnsFuture, ResolveDns};
    /// use smithy_default_tls::{SmithyTlsClient, TlsProvider, TrustRoots};
    ///
    /// #[derive(Debug)]
    /// struct Loopback;
    /// impl ResolveDns for Loopback {
    ///     fn resolve_dns<'a>(&'a self, _name: &'a str) -> DnsFuture<'a> {
    ///         DnsFuture::ready(Ok(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]))
    ///     }
    /// }
    /// let client = SmithyTlsClient::builder()
    ///     .provider(TlsProvider::RustlsRing)
    ///     .trust_roots(TrustRoots::Webpki)
    ///     .dns_resolver(Loopback)
    ///     .build()
    ///     .unwrap();
    /// # }
    /// ```
    pub fn dns_resolver(mut self, resolver: impl ResolveDns + 'static) -> Self {
        self.resolver = Resolver::Custom(SharedDnsResolver::new(resolver));
        self
    }

    /// Trusts exactly the certificates of the PEM file at `path`, replacing the
    /// [`trust_roots`](Builder::trust_roots) source (certificates added with
    /// [`extra_root_pem`](Builder::extra_root_pem) still count): the meaning the AWS CLI gives
    /// `AWS_CA_BUNDLE`. The file is read when TLS is prepared; a missing or malformed one fails
    /// every connection with an error naming the path.
    pub fn ca_bundle_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.ca_bundle = Some(path.into());
        self
    }

    /// [`ca_bundle_file`](Builder::ca_bundle_file) with the file `AWS_CA_BUNDLE` names, when
    /// that variable is set and not empty; otherwise nothing changes. The process-wide default
    /// client ([`shared_client`](crate::shared_client)) reads the variable the same way.
    pub fn ca_bundle_from_env(mut self) -> Self {
        if let Some(path) = crate::roots::ca_bundle_from_env() {
            self.ca_bundle = Some(path);
        }
        self
    }

    /// Presents `identity` (a certificate chain and its key, checked when it was built) to
    /// servers that ask for a client certificate (mutual TLS); a server that does not ask gets
    /// none, so the same client serves endpoints with and without mutual TLS.
    /// [`TlsInfo::client_certificate_sent`](crate::TlsInfo::client_certificate_sent) says when it
    /// was sent, and a refusal fails the request with
    /// [`HandshakeFailure::ClientCertificate`](crate::HandshakeFailure::ClientCertificate), never
    /// retried. Presented by every provider: rustls (0.23, and 0.24 with
    /// `experimental-rustls-024`), s2n-tls and `openssl` (s2n-tls takes no Ed25519 key).
    ///
    /// For every default client of the process (those generated SDK crates install), hand it to
    /// [`configure_default`](crate::configure_default); for one client, to its builder:
    ///
    /// ```
    /// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
    /// use smithy_default_tls::{configure_default, ClientIdentity, SmithyTlsClient, TlsProvider, TrustRoots};
    /// # let ca = rcgen::CertificateParams::new(vec!["client".to_owned()]).unwrap();
    /// # let key = rcgen::KeyPair::generate().unwrap();
    /// # let (cert_pem, key_pem) = (ca.self_signed(&key).unwrap().pem(), key.serialize_pem());
    ///
    /// // Checked here: a key that does not match, or an encrypted one, is an error now.
    /// let identity = ClientIdentity::from_pem(cert_pem, key_pem).expect("usable client identity");
    ///
    /// // Every default client of the process presents it.
    /// let for_all = identity.clone();
    /// configure_default(move |builder| builder.client_identity(for_all.clone())).expect("first call");
    ///
    /// // One client of the application's own.
    /// let client = SmithyTlsClient::builder()
    ///     .provider(TlsProvider::RustlsRing)
    ///     .trust_roots(TrustRoots::Webpki)
    ///     .client_identity(identity)
    ///     .build()
    ///     .expect("client");
    /// # let _ = client;
    /// # }
    /// ```
    pub fn client_identity(mut self, identity: crate::identity::ClientIdentity) -> Self {
        self.client_identity = Some(IdentitySource::Fixed(identity));
        self
    }

    /// Presents the identity in `identity`'s files, read again when they change (rotation
    /// without a restart): each new connection presents the newest pair that makes a valid
    /// identity, pooled connections keep the one they shook hands with, and a pair that does not
    /// (half written, mismatched) keeps the previous one and is logged. Otherwise as
    /// [`client_identity`](Self::client_identity), which it replaces (the last call wins).
    ///
    /// A new pair prepares the client's TLS again at the next connection (the trust roots are
    /// read again, and the session cache starts empty, so that no connection resumes a session
    /// made under the old identity).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use smithy_default_tls::{SmithyTlsClient, WatchedIdentity};
    ///
    /// let identity = WatchedIdentity::from_pem_files("client.pem", "client.key", Duration::from_secs(1))
    ///     .expect("usable client identity");
    /// let client = SmithyTlsClient::builder().watched_client_identity(identity).build().expect("client");
    /// # let _ = client;
    /// ```
    pub fn watched_client_identity(mut self, identity: crate::identity::WatchedIdentity) -> Self {
        self.client_identity = Some(IdentitySource::Watched(identity));
        self
    }

    /// How long an idle pooled connection is kept ([`DEFAULT_POOL_IDLE_TIMEOUT`] by default).
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.pool_idle_timeout = timeout;
        self
    }

    /// Builds the client. Never blocks: trust roots and TLS configuration are prepared when
    /// first needed — on a background thread started here when that is slow (aws-lc, the system
    /// store), else inline at the first connection.
    ///
    /// Without [`trust_roots`](Builder::trust_roots) or extra roots, the first compiled source
    /// the provider supports is used (`native`, then `webpki`, then `platform-verifier`).
    pub fn build(self) -> Result<SmithyTlsClient, Error> {
        // `ALL` is empty only under the application's `--cfg smithy_tls="none"` (build.rs refuses
        // a build without a provider otherwise).
        let provider = match self.provider.or_else(|| TlsProvider::ALL.first().copied()) {
            Some(provider) if !cfg!(no_tls) => provider,
            _ => return Err(Error::TlsDisabled),
        };
        let (provider, asked_roots, chosen_by) = crate::provider::application::resolve(provider, self.roots);
        let roots = match asked_roots {
            Some(roots) => Some(roots),
            None if self.extra_roots.is_empty() => Some(
                TrustRoots::ALL
                    .iter()
                    .copied()
                    .find(|&roots| provider.validate_roots(roots).is_ok())
                    .ok_or(Error::NoTrustRoots)?,
            ),
            None => None,
        };
        if let Some(roots) = roots {
            provider.validate_roots(roots)?;
        }
        Ok(self.build_with(provider, roots, chosen_by))
    }

    /// Builds with a provider and roots already resolved against the application's override
    /// (`provider::application::resolve`, which also says who chose them); cannot fail (a pair
    /// that [`TlsProvider::validate_roots`] refuses fails at every connection instead). Starts the
    /// background warm-up.
    pub(crate) fn build_with(
        self,
        provider: TlsProvider,
        roots: Option<TrustRoots>,
        chosen_by: crate::provider::application::ChosenBy,
    ) -> SmithyTlsClient {
        let settings = TlsSettings {
            provider,
            roots,
            chosen_by,
            extra_roots: self.extra_roots,
            enable_http2: self.enable_http2,
            session_resumption: self.session_resumption,
            ca_bundle: self.ca_bundle,
            client_identity: None,
        };
        let tls = LazyTlsBackend::with_identity(settings, self.client_identity);
        tls.warm_up_in_background();
        let pools = Pools::new(PoolSettings {
            tls: Arc::clone(&tls),
            resolver: self.resolver,
            proxy: self.proxy,
            tcp_keepalive: self.tcp_keepalive,
            host_limits: self.max_connections_per_host.map(crate::limits::HostLimits::new),
            idle_timeout: self.pool_idle_timeout,
            max_idle_per_host: self.pool_max_idle_per_host,
        });
        let inner = ClientInner { tls, pools, connectors: RwLock::default() };
        SmithyTlsClient { inner: Arc::new(inner) }
    }
}
