//! Benchmark support: one local HTTPS server for every client in a run, and drivers that use
//! each client exactly as an SDK does (`http_connector(settings, components)` then `call`).
//! [`compare`] is the `compare` benchmark itself, a module per section.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnector, HttpConnectorSettings, SharedHttpClient};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use bytes::Bytes;
use http_body::{Body, Frame};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};

pub mod compare;

/// The certificate authority, servers and drivers shared with the runtime's tests.
pub use smithy_tls_test_support as support;
pub use support::{components, Negotiated};

/// The benchmark server: an HTTP/1.1-only TLS port (like S3), an h2+h1 TLS port and a plain
/// HTTP port, all serving `GET /obj/<bytes>` from memory with `Range` support.
pub struct BenchServer {
    /// HTTP/1.1-only TLS port.
    pub h1: SocketAddr,
    /// h2 + HTTP/1.1 TLS port.
    pub h2: SocketAddr,
    /// Plain HTTP port (no TLS ceiling).
    pub plain: SocketAddr,
    /// HTTP/1.1-only TLS port that requires a client certificate from its own client CA
    /// (mutual TLS); [`BenchServer::client_pem`] is one it takes.
    pub mtls: SocketAddr,
    /// HTTP/1.1-only TLS port that never resumes a session (it issues no tickets and keeps no
    /// session cache): every handshake on it is a full one, whatever the client offers.
    pub full: SocketAddr,
    /// The CA that signed the server certificate, PEM.
    pub ca_pem: String,
    /// A client identity (ECDSA P-256) the mutual-TLS port takes.
    pub client_pem: support::ClientPem,
    /// The four TLS servers (h1, h2, mutual TLS, full handshakes); stopped when the bench server
    /// is dropped.
    tls: [support::HttpsServer; 4],
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
    // An upload (POST/PUT): the body is read to its end (and dropped) before the answer, as a
    // service does.
    let (parts, mut body) = req.into_parts();
    if parts.method == http::Method::POST || parts.method == http::Method::PUT {
        use http_body_util::BodyExt as _;
        while let Some(Ok(_frame)) = body.frame().await {}
    }
    let (status, start, end) = match parse_range(parts.headers.get("range"), len) {
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
    /// Starts all three ports on 127.0.0.1 with a fresh CA, h2 tuned for bulk transfer (4 MiB
    /// stream window, 16 MiB connection window, 256 KiB frames). The server uses rustls with
    /// aws-lc-rs, so it can negotiate every group the clients offer (post-quantum hybrids
    /// included); its one cipher suite is TLS_AES_128_GCM_SHA256, the suite every other server
    /// of the benchmark negotiates too (Go's TLS 1.3 server picks it and cannot be told not to).
    pub async fn start() -> BenchServer {
        BenchServer::start_with(true).await
    }

    /// [`BenchServer::start`], with h2 tuned for bulk transfer when `tuned`, else hyper's
    /// default h2 settings (the `hyper-default` server of the benchmark).
    pub async fn start_with(tuned: bool) -> BenchServer {
        let ca = support::TestCa::new("smithy-tls bench CA");
        // `*.idle.test`: the many-connections benchmark's distinct host names (resolved to
        // 127.0.0.1 by the clients' DNS resolver override).
        let identity = ca.leaf(&["localhost", "*.idle.test"]);
        let block = Bytes::from((0..BLOCK).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
        let client_ca = support::TestCa::new("smithy-tls bench client CA");
        let client_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("client key");
        let client_pem = client_ca.client_leaf("bench client", &client_key);
        let mut tls = Vec::new();
        // (ALPN, client certificate required, sessions resumed): h1, h2, mtls, full.
        for (alpn, mutual, resumes) in [
            (support::Alpn::Http1Only, false, true),
            (support::Alpn::H2AndHttp1, false, true),
            (support::Alpn::Http1Only, true, true),
            (support::Alpn::Http1Only, false, false),
        ] {
            let mut crypto = rustls::crypto::aws_lc_rs::default_provider();
            crypto.cipher_suites = vec![rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256];
            let crypto = Arc::new(crypto);
            let mut config = if mutual {
                support::server_config_requiring_client_auth(
                    &identity,
                    alpn,
                    crypto,
                    &client_ca.pem,
                    rustls::DEFAULT_VERSIONS,
                )
            } else {
                support::server_config(&identity, alpn, crypto)
            };
            if resumes {
                config.send_tls13_tickets = 2;
            } else {
                config.send_tls13_tickets = 0;
                config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
            }
            let mut http = support::http_builder();
            if tuned {
                http.http2()
                    .initial_stream_window_size(4 << 20)
                    .initial_connection_window_size(16 << 20)
                    .max_frame_size(256 << 10);
            }
            let block = block.clone();
            tls.push(
                support::HttpsServer::start(config, http, move || {
                    let block = block.clone();
                    service_fn(move |req| serve(req, block.clone()))
                })
                .await,
            );
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
        let tls: [support::HttpsServer; 4] = tls.try_into().unwrap_or_else(|_| unreachable!("four ports"));
        BenchServer {
            h1: tls[0].addr,
            h2: tls[1].addr,
            mtls: tls[2].addr,
            full: tls[3].addr,
            plain: plain_addr,
            ca_pem: ca.pem,
            client_pem,
            tls,
        }
    }

    /// Every handshake the TLS port at `addr` (`h1`, `h2`, `mtls` or `full`) completed, in order.
    pub fn handshakes(&self, addr: SocketAddr) -> Vec<Negotiated> {
        match self.tls.iter().find(|s| s.addr == addr) {
            Some(server) => server.stats.handshakes(),
            None => {
                let ports = [self.h1, self.h2, self.mtls, self.full].map(|a| a.to_string()).join(", ");
                panic!("{addr} is not one of the bench server's TLS ports ({ports})")
            }
        }
    }
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

/// One small call the way an SDK makes it: `POST url` with `body` (content-length set), the
/// response read to its end. Returns the response body's length.
pub async fn post(client: &SharedHttpClient, url: &str, body: Bytes) -> usize {
    let connector = client.http_connector(&HttpConnectorSettings::default(), &components());
    let request = http::Request::post(url)
        .header("content-length", body.len())
        .header("content-type", "application/x-amz-json-1.0")
        .body(SdkBody::from(body))
        .expect("request");
    let request = HttpRequest::try_from(request).expect("request");
    let response = connector.call(request).await.unwrap_or_else(|e| panic!("POST {url}: {e:?}"));
    assert!(response.status().is_success(), "POST {url}: {}", response.status());
    let mut body = response.into_body();
    let mut received = 0;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.unwrap_or_else(|e| panic!("body of {url}: {e}"));
        if let Some(data) = frame.data_ref() {
            received += data.len();
        }
    }
    received
}

/// The `q`-quantile (0..=1) of some numbers, by the nearest-rank method; NaN when there are none.
///
/// ```
/// let v: Vec<f64> = (1..=1000).map(f64::from).collect();
/// assert_eq!(smithy_tls_bench::quantile(&v, 0.5), 500.0);
/// assert_eq!(smithy_tls_bench::quantile(&v, 0.99), 990.0);
/// assert_eq!(smithy_tls_bench::quantile(&v, 0.999), 999.0);
/// ```
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// How a transfer moves its bytes: one request for all of them, or ranged parts of `part` bytes
/// with `parallel` at a time (as an S3 transfer manager does; `parallel: 1` is one part after
/// the other, as the SDK's own GetObject loop over ranges).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One request.
    Whole,
    /// Ranged requests of `part` bytes, `parallel` in flight.
    Parts {
        /// Requests in flight.
        parallel: usize,
        /// Bytes per request.
        part: u64,
    },
}

/// Downloads `total` bytes from `base` (`scheme://host:port`) in `shape`: one GET, or ranged
/// GETs. Returns the elapsed time.
pub async fn download(client: &SharedHttpClient, base: &str, total: u64, shape: Shape) -> Duration {
    let url = format!("{base}/obj/{total}");
    let started = Instant::now();
    let Shape::Parts { parallel, part } = shape else {
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
    };
    let client = client.clone();
    let got = in_parts(
        total,
        part,
        parallel,
        || Vec::with_capacity(part as usize),
        move |mut sink, start, len| {
            let (client, url) = (client.clone(), url.clone());
            async move {
                let got = fetch(&client, &url, Some((start, start + len - 1)), &mut sink, false).await;
                (sink, got)
            }
        },
    )
    .await;
    assert_eq!(got, total);
    started.elapsed()
}

/// Moves `total` bytes as parts of `part` bytes with `parallel` workers, each taking the next
/// part when it finishes one, as an S3 transfer manager does. A worker starts with `state()`
/// (a reused buffer, say) and hands it to each part it moves: `move_part(state, start, len)`
/// gives it back with the bytes it moved. Returns the bytes all parts moved.
async fn in_parts<S, F, Fut>(total: u64, part: u64, parallel: usize, state: impl Fn() -> S, move_part: F) -> u64
where
    S: Send + 'static,
    F: Fn(S, u64, u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = (S, u64)> + Send,
{
    use std::sync::atomic::{AtomicU64, Ordering};
    let count = total.div_ceil(part);
    let next = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..parallel.max(1))
        .map(|_| {
            let (next, move_part, mut state) = (Arc::clone(&next), move_part.clone(), state());
            tokio::spawn(async move {
                let mut moved = 0;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break moved;
                    }
                    let start = i * part;
                    let (back, n) = move_part(state, start, part.min(total - start)).await;
                    state = back;
                    moved += n;
                }
            })
        })
        .collect();
    let mut moved = 0;
    for worker in workers {
        moved += worker.await.expect("worker");
    }
    moved
}

/// Uploads `total` bytes to `base` (`scheme://host:port`) the way S3 PutObject / UploadPart do:
/// one PUT ([`Shape::Whole`]), or PUTs of `part` bytes with `parallel` in flight. Each
/// body streams slices of one shared block (no copies on the sender's side), with its
/// content-length set. Returns the elapsed time.
pub async fn upload(client: &SharedHttpClient, base: &str, total: u64, shape: Shape) -> Duration {
    let block = upload_block();
    let url = format!("{base}/obj/0");
    let started = Instant::now();
    let Shape::Parts { parallel, part } = shape else {
        put(client, &url, block, total).await;
        return started.elapsed();
    };
    let client = client.clone();
    let sent = in_parts(
        total,
        part,
        parallel,
        || (),
        move |(), _start, len| {
            let (client, url, block) = (client.clone(), url.clone(), block.clone());
            async move {
                put(&client, &url, block, len).await;
                ((), len)
            }
        },
    )
    .await;
    assert_eq!(sent, total);
    started.elapsed()
}

/// The block every upload body is sliced from, made once per process.
fn upload_block() -> Bytes {
    static BLOCK_BYTES: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();
    BLOCK_BYTES.get_or_init(|| Bytes::from((0..BLOCK).map(|i| (i % 253) as u8).collect::<Vec<u8>>())).clone()
}

/// One `PUT url` of `len` bytes streamed from `block`, answered with an empty 200.
async fn put(client: &SharedHttpClient, url: &str, block: Bytes, len: u64) {
    let connector = client.http_connector(&HttpConnectorSettings::default(), &components());
    let body = SdkBody::from_body_1_x(SliceBody { block, remaining: len, offset: 0 });
    let request = http::Request::put(url)
        .header("content-length", len)
        .header("content-type", "application/octet-stream")
        .body(body)
        .expect("request");
    let request = HttpRequest::try_from(request).expect("request");
    let response = connector.call(request).await.unwrap_or_else(|e| panic!("PUT {url}: {e:?}"));
    assert!(response.status().is_success(), "PUT {url}: {}", response.status());
    let mut body = response.into_body();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        frame.unwrap_or_else(|e| panic!("answer to PUT {url}: {e}"));
    }
}

/// What this process has used so far, every thread included: CPU time and page faults.
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    /// User + system CPU seconds.
    pub cpu_seconds: f64,
    /// Page faults served without I/O: mostly the kernel handing out (and zeroing) fresh
    /// pages, as it does when the allocator reuses memory it had returned to the kernel.
    pub minor_faults: u64,
}

impl Usage {
    /// The process's usage now (NaN CPU and no faults if `getrusage` fails).
    pub fn now() -> Usage {
        // SAFETY: `getrusage` only writes the `rusage` it is given, which outlives the call.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_SELF is a valid `who`.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
            return Usage { cpu_seconds: f64::NAN, minor_faults: 0 };
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            cpu_seconds: secs(usage.ru_utime) + secs(usage.ru_stime),
            minor_faults: u64::try_from(usage.ru_minflt).unwrap_or(0),
        }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            cpu_seconds: self.cpu_seconds - earlier.cpu_seconds,
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
        }
    }
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

/// `median (min–max)` of some numbers, two decimals each: how the reports show a sample.
///
/// ```
/// assert_eq!(smithy_tls_bench::median_range(&[3.0, 1.0, 2.0]), "2.00 (1.00–3.00)");
/// ```
pub fn median_range(values: &[f64]) -> String {
    let (low, high) = min_max(values);
    format!("{:.2} ({low:.2}–{high:.2})", median(values))
}

/// The number in environment variable `name`, or `default` when it is unset or not a number
/// (how the benchmarks take their run counts).
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs this executable again with `args` and `envs` (a benchmark's measurement in a process of
/// its own) and returns what it printed; panics with its stderr when it fails.
pub fn child(args: &[&str], envs: &[(&str, String)]) -> String {
    child_of(&std::env::current_exe().expect("current exe"), args, envs, &[])
}

/// Runs the benchmark executable `exe` (this one, or the same benchmark built otherwise) with
/// `args`, `envs` set and the variables `unset` removed, and returns its standard output; panics
/// when it fails.
pub fn child_of(exe: &std::path::Path, args: &[&str], envs: &[(&str, String)], unset: &[&str]) -> String {
    let mut command = std::process::Command::new(exe);
    for name in unset {
        command.env_remove(name);
    }
    let out = command.args(args).envs(envs.iter().map(|(k, v)| (*k, v))).output().expect("spawn child");
    assert!(out.status.success(), "child {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The number after `key` (e.g. `construct_us=`) in a child's output; NaN when absent.
///
/// ```
/// assert_eq!(smithy_tls_bench::field("COLD construct_us=120 first_us=9", "construct_us="), 120.0);
/// assert!(smithy_tls_bench::field("COLD", "construct_us=").is_nan());
/// ```
pub fn field(text: &str, key: &str) -> f64 {
    text.split_whitespace().find_map(|w| w.strip_prefix(key)).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// The peak resident set size of this process, from /proc (Linux), in KiB.
pub fn peak_rss_kib() -> Option<u64> {
    status_kib("VmHWM:")
}

/// The resident set size of this process now, from /proc (Linux), in KiB.
pub fn rss_kib() -> Option<u64> {
    status_kib("VmRSS:")
}

/// Bytes of heap this process holds: glibc's in-use chunks in every arena plus its mmap'd
/// chunks (`mallinfo2`). Unlike RSS it does not depend on which pages those bytes happen to
/// touch, so it tells two clients' holdings apart where RSS moves by a page here and there.
/// `None` without glibc.
pub fn heap_in_use() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        let info = unsafe { libc::mallinfo2() };
        Some((info.uordblks + info.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// The `key` line (e.g. `VmRSS:`) of /proc/self/status, in KiB.
fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A DNS resolver that answers every name with 127.0.0.1: many distinct host names (one pool
/// per host, like one S3 bucket host each) that all reach the local bench server.
#[derive(Debug, Clone, Copy)]
pub struct Loopback;

impl aws_smithy_runtime_api::client::dns::ResolveDns for Loopback {
    fn resolve_dns<'a>(&'a self, _name: &'a str) -> aws_smithy_runtime_api::client::dns::DnsFuture<'a> {
        aws_smithy_runtime_api::client::dns::DnsFuture::ready(Ok(vec![std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )]))
    }
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
