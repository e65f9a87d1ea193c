//! Benchmark support: one local HTTPS server for every client in a run, and drivers that use
//! each client exactly as an SDK does (`http_connector(settings, components)` then `call`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use aws_smithy_async::rt::sleep::{SharedAsyncSleep, TokioSleep};
use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnector, HttpConnectorSettings, SharedHttpClient};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::runtime_components::{RuntimeComponents, RuntimeComponentsBuilder};
use aws_smithy_types::body::SdkBody;
use bytes::Bytes;
use http_body::{Body, Frame};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The certificate authority and server identities (shared with the runtime's tests).
#[path = "../../runtime/tests/support/mod.rs"]
#[allow(unreachable_pub)]
pub mod support;

/// What one TLS handshake negotiated, seen from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// Protocol version.
    pub version: String,
    /// Cipher suite.
    pub cipher: String,
    /// Key exchange group.
    pub group: String,
    /// Whether the session was resumed.
    pub resumed: bool,
    /// ALPN protocol.
    pub alpn: String,
}

/// The benchmark server: an HTTP/1.1-only TLS port (like S3), an h2+h1 TLS port and a plain
/// HTTP port, all serving `GET /obj/<bytes>` from memory with `Range` support.
pub struct BenchServer {
    /// HTTP/1.1-only TLS port.
    pub h1: SocketAddr,
    /// h2 + HTTP/1.1 TLS port.
    pub h2: SocketAddr,
    /// Plain HTTP port (no TLS ceiling).
    pub plain: SocketAddr,
    /// Every handshake, in order.
    pub handshakes: Arc<Mutex<Vec<Negotiated>>>,
    /// The CA that signed the server certificate, PEM.
    pub ca_pem: String,
}

const BLOCK: usize = 16 << 20;
const CHUNK: usize = 256 << 10;

/// A body of `len` bytes served as slices of one shared block (no copies).
struct SliceBody {
    block: Bytes,
    remaining: u64,
    offset: usize,
}

impl Body for SliceBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.remaining == 0 {
            return Poll::Ready(None);
        }
        let n = (self.remaining.min(CHUNK as u64) as usize).min(BLOCK - self.offset);
        let chunk = self.block.slice(self.offset..self.offset + n);
        self.offset = (self.offset + n) % BLOCK;
        self.remaining -= n as u64;
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.remaining)
    }
}

fn parse_range(header: Option<&http::HeaderValue>, len: u64) -> Option<(u64, u64)> {
    let text = header?.to_str().ok()?.strip_prefix("bytes=")?;
    let (a, b) = text.split_once('-')?;
    let start: u64 = a.parse().ok()?;
    let end: u64 = if b.is_empty() { len - 1 } else { b.parse().ok()? };
    (start <= end && end < len).then_some((start, end))
}

async fn serve(
    req: http::Request<hyper::body::Incoming>,
    block: Bytes,
) -> Result<http::Response<SliceBody>, Infallible> {
    let len: u64 = req.uri().path().strip_prefix("/obj/").and_then(|n| n.parse().ok()).unwrap_or(0);
    let (status, start, end) = match parse_range(req.headers().get("range"), len) {
        Some((a, b)) => (206, a, b),
        None => (200, 0, len.saturating_sub(1)),
    };
    let body_len = if len == 0 { 0 } else { end - start + 1 };
    let mut response = http::Response::builder().status(status).header("content-length", body_len);
    if status == 206 {
        response = response.header("content-range", format!("bytes {start}-{end}/{len}"));
    }
    let body = SliceBody { block, remaining: body_len, offset: (start % BLOCK as u64) as usize };
    Ok(response.body(body).expect("response"))
}

impl BenchServer {
    /// Starts all three ports on 127.0.0.1 with a fresh CA. The server uses rustls with aws-lc-rs,
    /// so it can negotiate every group the clients offer (post-quantum hybrids included).
    pub async fn start() -> BenchServer {
        let ca = support::TestCa::new("smithy-tls bench CA");
        let identity = ca.leaf(&["localhost"]);
        let block = Bytes::from((0..BLOCK).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
        let handshakes: Arc<Mutex<Vec<Negotiated>>> = Arc::default();
        let mut addrs = Vec::new();
        for alpn in [vec![b"http/1.1".to_vec()], vec![b"h2".to_vec(), b"http/1.1".to_vec()]] {
            let mut config =
                rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
                    .with_safe_default_protocol_versions()
                    .expect("versions")
                    .with_no_client_auth()
                    .with_single_cert(
                        identity.chain.clone(),
                        rustls::pki_types::PrivateKeyDer::Pkcs8(identity.key.clone_key()),
                    )
                    .expect("certificate");
            config.alpn_protocols = alpn;
            config.send_tls13_tickets = 2;
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            addrs.push(listener.local_addr().expect("addr"));
            let block = block.clone();
            let handshakes = Arc::clone(&handshakes);
            tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let _ = tcp.set_nodelay(true);
                    let acceptor = acceptor.clone();
                    let block = block.clone();
                    let handshakes = Arc::clone(&handshakes);
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else { return };
                        {
                            let (_, conn) = tls.get_ref();
                            handshakes.lock().expect("lock").push(Negotiated {
                                version: conn.protocol_version().map(|v| format!("{v:?}")).unwrap_or_default(),
                                cipher: conn
                                    .negotiated_cipher_suite()
                                    .map(|s| format!("{:?}", s.suite()))
                                    .unwrap_or_default(),
                                group: conn
                                    .negotiated_key_exchange_group()
                                    .map(|g| format!("{:?}", g.name()))
                                    .unwrap_or_default(),
                                resumed: matches!(conn.handshake_kind(), Some(rustls::HandshakeKind::Resumed)),
                                alpn: conn
                                    .alpn_protocol()
                                    .map(|p| String::from_utf8_lossy(p).into_owned())
                                    .unwrap_or_default(),
                            });
                        }
                        let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                        builder
                            .http2()
                            .initial_stream_window_size(4 << 20)
                            .initial_connection_window_size(16 << 20)
                            .max_frame_size(256 << 10);
                        let _ = builder
                            .serve_connection(TokioIo::new(tls), service_fn(move |req| serve(req, block.clone())))
                            .await;
                    });
                }
            });
        }
        let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let plain_addr = plain.local_addr().expect("addr");
        let plain_block = block.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = plain.accept().await {
                let _ = tcp.set_nodelay(true);
                let block = plain_block.clone();
                tokio::spawn(async move {
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tcp), service_fn(move |req| serve(req, block.clone())))
                        .await;
                });
            }
        });
        BenchServer { h1: addrs[0], h2: addrs[1], plain: plain_addr, handshakes, ca_pem: ca.pem }
    }
}

/// Runtime components as an SDK client has them.
pub fn components() -> RuntimeComponents {
    RuntimeComponentsBuilder::for_tests()
        .with_sleep_impl(Some(SharedAsyncSleep::new(TokioSleep::new())))
        .with_time_source(Some(aws_smithy_async::time::SharedTimeSource::new(
            aws_smithy_async::time::SystemTimeSource::new(),
        )))
        .build()
        .expect("components")
}

/// GET `url` (optionally a byte range) through `client` the way an SDK does, copying the body
/// into `sink` as it arrives. Returns the number of bytes received.
pub async fn fetch(
    client: &SharedHttpClient,
    url: &str,
    range: Option<(u64, u64)>,
    sink: &mut Vec<u8>,
    close: bool,
) -> u64 {
    let connector = client.http_connector(&HttpConnectorSettings::default(), &components());
    let mut request = http::Request::get(url);
    if let Some((a, b)) = range {
        request = request.header("range", format!("bytes={a}-{b}"));
    }
    if close {
        request = request.header("connection", "close");
    }
    let request = HttpRequest::try_from(request.body(SdkBody::empty()).expect("request")).expect("request");
    let response = connector.call(request).await.unwrap_or_else(|e| panic!("GET {url}: {e:?}"));
    assert!(response.status().is_success(), "GET {url}: {}", response.status());
    let mut body = response.into_body();
    sink.clear();
    let mut received = 0u64;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.unwrap_or_else(|e| panic!("body of {url}: {e}"));
        if let Some(data) = frame.data_ref() {
            sink.extend_from_slice(data);
            received += data.len() as u64;
        }
    }
    received
}

/// Downloads `total` bytes from `base` (`scheme://host:port`): one GET when `parallel` is 1,
/// else ranged GETs of `part` bytes with `parallel` in flight. Returns the elapsed time.
pub async fn download(client: &SharedHttpClient, base: &str, total: u64, parallel: usize, part: u64) -> Duration {
    let url = format!("{base}/obj/{total}");
    let started = Instant::now();
    if parallel <= 1 {
        // One buffer for the process, kept across runs: like a real downloader's reused buffer,
        // and it keeps first-touch page faults out of every run after the first.
        static SINK: Mutex<Vec<u8>> = Mutex::new(Vec::new());
        let mut sink = std::mem::take(&mut *SINK.lock().expect("lock"));
        sink.reserve(total as usize);
        let started = Instant::now();
        let got = fetch(client, &url, None, &mut sink, false).await;
        let elapsed = started.elapsed();
        *SINK.lock().expect("lock") = sink;
        assert_eq!(got, total);
        return elapsed;
    }
    let parts: Vec<(u64, u64)> =
        (0..total.div_ceil(part)).map(|i| (i * part, ((i + 1) * part).min(total) - 1)).collect();
    let queue = Arc::new(Mutex::new(parts.into_iter()));
    let mut workers = Vec::new();
    for _ in 0..parallel {
        let client = client.clone();
        let url = url.clone();
        let queue = Arc::clone(&queue);
        workers.push(tokio::spawn(async move {
            let mut sink = Vec::with_capacity(part as usize);
            let mut got = 0;
            loop {
                let next = queue.lock().expect("lock").next();
                let Some((a, b)) = next else { break };
                got += fetch(&client, &url, Some((a, b)), &mut sink, false).await;
            }
            got
        }));
    }
    let mut got = 0;
    for w in workers {
        got += w.await.expect("worker");
    }
    assert_eq!(got, total);
    started.elapsed()
}

/// The median of some numbers (upper median for even counts).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The smallest and largest of some numbers (`(inf, -inf)` when there are none).
pub fn min_max(values: &[f64]) -> (f64, f64) {
    values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

/// The peak resident set size of this process, from /proc (Linux), in KiB.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// One line describing the machine, for reports.
pub fn machine_description() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpu}, {cores} cores, Linux {}", kernel.trim())
}
