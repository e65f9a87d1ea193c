//! The hyper-util connector service: TCP connect, then (for `https://`) the TLS handshake, both
//! under one connect timeout.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use aws_smithy_async::future::timeout::Timeout;
use aws_smithy_async::rt::sleep::{AsyncSleep, SharedAsyncSleep};
use aws_smithy_runtime_api::box_error::BoxError;
use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_service::Service;
use tracing::Span;

use crate::dns::Resolver;
use crate::error::{ConnectTimeout, Error, ProxyError, ProxyFailure, UriError};
use crate::limits::{HostLimits, HostSlot};
use crate::proxy::{ProxyConfig, Route};
use crate::tls::{LazyTlsBackend, MaybeTlsStream, TlsBackend, TlsInfo, Transport};

/// Facts about one connection, attached to every response it carried (in the response
/// extensions) so that callers can see which connection and which TLS stack served them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionInfo {
    /// A process-wide sequence number, unique per connection.
    pub id: u64,
    /// The peer's address.
    pub remote_addr: Option<SocketAddr>,
    /// The local address.
    pub local_addr: Option<SocketAddr>,
    /// What TLS negotiated; `None` for plain `http://` connections.
    pub tls: Option<TlsInfo>,
    /// The proxy (`host:port`) the connection goes through: a `CONNECT` tunnel for `https://`
    /// origins, request forwarding for `http://` ones.
    pub proxy: Option<String>,
    /// When the connection was ready (TCP, tunnel and TLS done).
    pub connected_at: std::time::SystemTime,
    /// How long connecting took: TCP connect (to the proxy, if any), tunnel and TLS handshake.
    pub connect_duration: Duration,
}

static NEXT_CONNECTION_ID: AtomicU64 = AtomicU64::new(1);

/// Connects to the URI's authority; speaks TLS when the scheme is `https`.
#[derive(Clone, Debug)]
pub(crate) struct TlsConnectService {
    tcp: HttpConnector<Resolver>,
    tls: Arc<LazyTlsBackend>,
    proxy: ProxyConfig,
    host_limits: Option<Arc<HostLimits>>,
    connect_timeout: Option<Duration>,
    sleep: SharedAsyncSleep,
}

impl TlsConnectService {
    pub(crate) fn new(
        tls: Arc<LazyTlsBackend>,
        resolver: Resolver,
        proxy: ProxyConfig,
        tcp_keepalive: Option<Duration>,
        host_limits: Option<Arc<HostLimits>>,
        connect_timeout: Option<Duration>,
        sleep: SharedAsyncSleep,
    ) -> Self {
        let mut tcp = HttpConnector::new_with_resolver(resolver);
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_keepalive(tcp_keepalive);
        TlsConnectService { tcp, tls, proxy, host_limits, connect_timeout, sleep }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl Service<Uri> for TlsConnectService {
    type Response = ConnectedStream;
    type Error = BoxError;
    type Future = BoxFuture<Result<ConnectedStream, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let route = self.proxy.route(&uri);
        let span = connect_span(&uri, route.as_ref());
        let attempt = Attempt {
            tcp: self.tcp.clone(),
            tls: Arc::clone(&self.tls),
            host_limits: self.host_limits.clone(),
            route,
            span: span.clone(),
        };
        let connect = tracing::Instrument::instrument(attempt.run(uri), span);
        match self.connect_timeout {
            None => Box::pin(connect),
            Some(after) => {
                let sleep = self.sleep.sleep(after);
                Box::pin(async move {
                    match Timeout::new(connect, sleep).await {
                        Ok(result) => result,
                        Err(_elapsed) => Err(Box::new(ConnectTimeout { after }) as BoxError),
                    }
                })
            }
        }
    }
}

/// The `smithy_tls.connect` span: one per connection attempt, its timings and TLS facts
/// recorded by the steps as they finish.
fn connect_span(uri: &Uri, route: Option<&Route>) -> Span {
    tracing::debug_span!(
        "smithy_tls.connect",
        origin = %uri.authority().map_or("", |a| a.as_str()),
        proxy = route.map(|r| r.authority.as_str()),
        tcp_ms = tracing::field::Empty,
        tunnel_ms = tracing::field::Empty,
        handshake_ms = tracing::field::Empty,
        provider = tracing::field::Empty,
        version = tracing::field::Empty,
        cipher = tracing::field::Empty,
        group = tracing::field::Empty,
        alpn = tracing::field::Empty,
        resumed = tracing::field::Empty,
    )
}

/// Where one attempt connects, read from the URI before anything is dialled, so that a URI
/// this client cannot connect to fails first.
struct Target {
    /// The scheme is `https`: TLS to the origin.
    https: bool,
    /// The origin's `host:port` (IPv6 in brackets): the `CONNECT` target, the host-limit key and
    /// what proxy errors name.
    origin: String,
    /// The host without IPv6 brackets, for the origin's certificate (SNI).
    server_name: String,
}

impl Target {
    /// The target of `uri`; an unsupported scheme or a missing host is the caller's error (not
    /// retried), as `Error` says.
    fn of(uri: &Uri) -> Result<Target, BoxError> {
        let invalid = |reason| Box::new(Error::InvalidUri { uri: uri.to_string(), reason }) as BoxError;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            Some(other) => return Err(invalid(UriError::UnsupportedScheme(other.to_owned()))),
            None => return Err(invalid(UriError::NoScheme)),
        };
        let host = uri.host().ok_or_else(|| invalid(UriError::NoHost))?;
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let server_name = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        Ok(Target { https, origin: format!("{host}:{port}"), server_name })
    }
}

/// One connection attempt, owning what it needs from the service: its steps (dial, via the
/// proxy, handshake) are methods, each recording its timing in `span`.
struct Attempt {
    tcp: HttpConnector<Resolver>,
    tls: Arc<LazyTlsBackend>,
    host_limits: Option<Arc<HostLimits>>,
    route: Option<Route>,
    span: Span,
}

impl Attempt {
    /// Connects to `uri`: a slot among the host's connections, TCP, the proxy's steps, TLS.
    async fn run(mut self, uri: Uri) -> Result<ConnectedStream, BoxError> {
        let started = Instant::now();
        let target = Target::of(&uri)?;
        // A slot among the host's connections first (waiting, under the connect timeout, when
        // they are all open); it goes with the connection.
        let slot = match &self.host_limits {
            Some(limits) => Some(limits.acquire(&target.origin).await),
            None => None,
        };
        let (tcp, backend) = self.dial(uri, &target, started).await?;
        let mut transport = Transport::Tcp(tcp);
        if let Some(route) = &self.route {
            transport = self.via_proxy(route, transport, &target).await?;
        }
        let (stream, tls_info) = match backend {
            Some(backend) => self.handshake(&backend, &target.server_name, transport).await?,
            None => (MaybeTlsStream::Plain(transport), None),
        };
        let info = ConnectionInfo {
            id: NEXT_CONNECTION_ID.fetch_add(1, Ordering::Relaxed),
            remote_addr: stream.tcp().peer_addr().ok(),
            local_addr: stream.tcp().local_addr().ok(),
            tls: tls_info,
            proxy: self.route.map(|route| route.authority),
            connected_at: std::time::SystemTime::now(),
            connect_duration: started.elapsed(),
        };
        Ok(ConnectedStream::new(stream, info, slot))
    }

    /// TCP to the origin, or to the proxy if there is one; for `https`, the TLS backend is
    /// prepared (roots, config) while the connect is in flight, and returned with the stream.
    /// `tcp_ms` counts from `started`, the attempt's start (the wait for a slot included).
    async fn dial(
        &mut self,
        uri: Uri,
        target: &Target,
        started: Instant,
    ) -> Result<(TcpStream, Option<Arc<TlsBackend>>), BoxError> {
        let dial = self.route.as_ref().map_or(uri, |route| route.uri.clone());
        let (tcp, backend) = if target.https {
            let (tcp, backend) = tokio::join!(self.tcp.call(dial), self.tls.get());
            (tcp, Some(backend?))
        } else {
            (self.tcp.call(dial).await, None)
        };
        self.span.record("tcp_ms", millis(started.elapsed()));
        match (tcp, &self.route) {
            (Ok(tcp), _) => Ok((tcp.into_inner(), backend)),
            (Err(e), Some(route)) => Err(Box::new(ProxyError {
                proxy: route.authority.clone(),
                origin: target.origin.clone(),
                failure: ProxyFailure::Unreachable(e.into()),
            }) as BoxError),
            (Err(e), None) => Err(e.into()),
        }
    }

    /// The proxy's steps on a connection to it: for an `https://` proxy, TLS to the proxy
    /// first (its certificate checked like an origin's, HTTP/1.1 only); for an `https` origin,
    /// the `CONNECT` tunnel, inside which the origin's TLS then runs.
    async fn via_proxy(&self, route: &Route, mut transport: Transport, target: &Target) -> Result<Transport, BoxError> {
        if let Some(name) = &route.tls_name {
            let failed = |failure| {
                Box::new(ProxyError { proxy: route.authority.clone(), origin: target.origin.clone(), failure })
                    as BoxError
            };
            let proxy_tls = self.tls.for_proxies().get().await?;
            let (stream, info) =
                proxy_tls.handshake(name, transport).await.map_err(|e| failed(ProxyFailure::Handshake(e)))?;
            tracing::debug!(proxy = %route.authority, version = %info.protocol_version, "TLS to the proxy established");
            transport = Transport::ProxyTls(Box::new(stream));
        }
        if target.https {
            let started = Instant::now();
            crate::proxy::tunnel(&mut transport, route, &target.origin).await?;
            self.span.record("tunnel_ms", millis(started.elapsed()));
            tracing::debug!(proxy = %route.authority, origin = %target.origin, "proxy tunnel established");
        }
        Ok(transport)
    }

    /// The TLS handshake with the origin, its timing and what it negotiated recorded in the
    /// span and in a debug event.
    async fn handshake(
        &self,
        backend: &TlsBackend,
        server_name: &str,
        transport: Transport,
    ) -> Result<(MaybeTlsStream, Option<TlsInfo>), BoxError> {
        let started = Instant::now();
        let (stream, info) = backend.handshake(server_name, transport).await?;
        self.span.record("handshake_ms", millis(started.elapsed()));
        self.span.record("provider", info.provider.name());
        self.span.record("version", info.protocol_version);
        self.span.record("cipher", info.cipher_suite);
        self.span.record("group", info.key_exchange_group);
        self.span.record("alpn", info.alpn);
        self.span.record("resumed", info.resumed);
        tracing::debug!(
            provider = %info.provider,
            roots = info.roots.map_or("-", |r| r.name()),
            chosen_by = %info.chosen_by,
            version = %info.protocol_version,
            cipher = %info.cipher_suite,
            group = ?info.key_exchange_group,
            alpn = ?info.alpn,
            resumed = info.resumed,
            "TLS connection established"
        );
        Ok((stream, Some(info)))
    }
}

/// A duration in milliseconds, for span fields.
fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

pin_project_lite::pin_project! {
    /// A connected stream plus what is known about it.
    #[derive(Debug)]
    pub(crate) struct ConnectedStream {
        #[pin]
        io: TokioIo<MaybeTlsStream>,
        // What `connected` hands hyper-util. It asks once, right after connecting, and keeps
        // the answer with the pooled connection; the stream gives its copy away then, so the
        // connection's task (which owns the stream for the connection's life) does not carry a
        // second one while the connection sits idle.
        info: Mutex<Option<Box<ConnectionInfo>>>,
        // The flags of `connected`, kept for any later call.
        h2: bool,
        forwarded: bool,
        // The connection's place among its host's (`Builder::max_connections_per_host`),
        // freed when the connection is dropped.
        _slot: Option<HostSlot>,
    }
}

impl ConnectedStream {
    fn new(stream: MaybeTlsStream, info: ConnectionInfo, slot: Option<HostSlot>) -> ConnectedStream {
        let h2 = info.tls.is_some_and(|tls| tls.speaks_h2());
        // A forwarding proxy (plain `http://` origin) gets absolute-form request lines; a tunnel
        // carries origin-form requests like a direct connection.
        let forwarded = info.proxy.is_some() && info.tls.is_none();
        ConnectedStream { io: TokioIo::new(stream), info: Mutex::new(Some(Box::new(info))), h2, forwarded, _slot: slot }
    }
}

impl Connection for ConnectedStream {
    /// The first call carries the [`ConnectionInfo`] (hyper-util attaches it to every response
    /// of the connection); later calls, which hyper-util does not make, carry the same flags
    /// without it.
    fn connected(&self) -> Connected {
        let connected = Connected::new().proxy(self.forwarded);
        let connected = if self.h2 { connected.negotiated_h2() } else { connected };
        // Where a refusal of our certificate met on a read is recorded (see `ReadRefusal`).
        let connected = match self.io.inner().read_refusal() {
            Some(refusal) => connected.extra(refusal.clone()),
            None => connected,
        };
        match self.info.lock().unwrap_or_else(PoisonError::into_inner).take() {
            Some(info) => connected.extra(*info),
            None => connected,
        }
    }
}

impl hyper::rt::Read for ConnectedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        self.project().io.poll_read(cx, buf)
    }
}

impl hyper::rt::Write for ConnectedStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.project().io.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().io.poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn stream_with(info: ConnectionInfo) -> ConnectedStream {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let tcp = tokio::net::TcpStream::connect(listener.local_addr().expect("addr")).await.expect("connect");
        ConnectedStream::new(MaybeTlsStream::Plain(Transport::Tcp(tcp)), info, None)
    }

    fn info(tls: Option<TlsInfo>, proxy: Option<&str>) -> ConnectionInfo {
        ConnectionInfo {
            id: 7,
            remote_addr: None,
            local_addr: None,
            tls,
            proxy: proxy.map(str::to_owned),
            connected_at: std::time::SystemTime::UNIX_EPOCH,
            connect_duration: Duration::from_millis(3),
        }
    }

    fn extras(connected: &Connected) -> Option<ConnectionInfo> {
        let mut extensions = http::Extensions::new();
        connected.get_extras(&mut extensions);
        extensions.remove::<ConnectionInfo>()
    }

    #[tokio::test]
    async fn the_info_goes_to_hyper_util_once_and_the_flags_stay() {
        let tls = TlsInfo {
            provider: crate::provider::TlsProvider::ALL[0],
            roots: None,
            chosen_by: crate::provider::application::ChosenBy::Builder,
            protocol_version: "TLSv1_3",
            cipher_suite: "TLS13_AES_128_GCM_SHA256",
            key_exchange_group: Some("X25519"),
            alpn: Some("h2"),
            resumed: false,
            fips: false,
            client_certificate_sent: false,
            library: "rustls 0.23",
        };
        let stream = stream_with(info(Some(tls), None)).await;
        let first = stream.connected();
        assert_eq!(extras(&first), Some(info(Some(tls), None)));
        assert!(first.is_negotiated_h2());
        let second = stream.connected();
        assert_eq!(extras(&second), None, "given away with the first answer");
        assert!(second.is_negotiated_h2(), "the flags stay");
    }

    #[tokio::test]
    async fn a_forwarding_proxy_is_flagged_and_a_tunnel_is_not() {
        let forwarded = stream_with(info(None, Some("proxy.test:3128"))).await.connected();
        assert!(forwarded.is_proxied());
        assert!(!forwarded.is_negotiated_h2());
        let tls = TlsInfo {
            provider: crate::provider::TlsProvider::ALL[0],
            roots: None,
            chosen_by: crate::provider::application::ChosenBy::Builder,
            protocol_version: "TLSv1_3",
            cipher_suite: "TLS13_AES_128_GCM_SHA256",
            key_exchange_group: None,
            alpn: Some("http/1.1"),
            resumed: true,
            fips: false,
            client_certificate_sent: false,
            library: "rustls 0.23",
        };
        let tunnelled = stream_with(info(Some(tls), Some("proxy.test:3128"))).await.connected();
        assert!(!tunnelled.is_proxied());
        assert!(!tunnelled.is_negotiated_h2());
    }

    #[test]
    fn an_idle_connection_carries_no_second_copy_of_its_info() {
        // The stream lives in the connection's task for as long as the connection does: every
        // byte of it sits on each idle pooled connection. Its copy of the info is not among them.
        let size = std::mem::size_of::<ConnectedStream>();
        assert!(size < std::mem::size_of::<ConnectionInfo>(), "ConnectedStream is {size} bytes");
    }
}
