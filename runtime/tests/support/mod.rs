//! Test support: a private PKI made with rcgen and in-process HTTPS servers on 127.0.0.1.
//!
//! Shared by the conformance suite (one copy per TLS provider), the single-purpose test
//! binaries and the runnable example.
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;

/// A certificate authority for tests, and leaf certificates it issues.
pub struct TestCa {
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A server identity: chain and key.
#[derive(Clone)]
pub struct ServerIdentity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: Arc<PrivatePkcs8KeyDer<'static>>,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("generate CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let cert = params.self_signed(&key).expect("self-sign CA");
        TestCa { pem: cert.pem(), issuer: Issuer::new(params, key) }
    }

    /// Writes this CA to a bundle in a fresh directory and points `SSL_CERT_FILE` at it, with
    /// `SSL_CERT_DIR` unset, so the native store (and the platform verifier on Linux) trusts
    /// exactly this CA. Only for a test binary whose one test reads the environment. Returns the
    /// directory, for the test to remove.
    pub fn install_as_ssl_cert_file(&self, tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("smithy-tls-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("bundle directory");
        let bundle = dir.join("ca.pem");
        std::fs::write(&bundle, &self.pem).expect("CA bundle");
        std::env::set_var("SSL_CERT_FILE", &bundle);
        std::env::remove_var("SSL_CERT_DIR");
        dir
    }

    /// A leaf for `names`, valid from yesterday for a year.
    pub fn leaf(&self, names: &[&str]) -> ServerIdentity {
        let now = time_now();
        self.leaf_valid(names, now - 86_400, now + 365 * 86_400)
    }

    /// A leaf that expired a year ago.
    pub fn expired_leaf(&self, names: &[&str]) -> ServerIdentity {
        let now = time_now();
        self.leaf_valid(names, now - 3 * 365 * 86_400, now - 365 * 86_400)
    }

    fn leaf_valid(&self, names: &[&str], from_unix: i64, to_unix: i64) -> ServerIdentity {
        let key = KeyPair::generate().expect("generate leaf key");
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, names[0]);
        params.not_before = rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(from_unix as u64);
        params.not_after = rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(to_unix as u64);
        let cert = params.signed_by(&key, &self.issuer).expect("sign leaf");
        ServerIdentity { chain: vec![cert.der().clone()], key: Arc::new(PrivatePkcs8KeyDer::from(key.serialize_der())) }
    }
}

fn time_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock after 1970").as_secs() as i64
}

/// Deterministic content: byte `i` of any stream is `(i % 251) as u8`.
pub fn pattern_byte(i: u64) -> u8 {
    (i % 251) as u8
}

/// Length and FNV-1a hash of a byte stream, updated chunk by chunk (no buffering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    pub len: u64,
    pub hash: u64,
}

impl Default for Digest {
    fn default() -> Self {
        Digest { len: 0, hash: 0xcbf2_9ce4_8422_2325 }
    }
}

impl Digest {
    pub fn update(&mut self, chunk: &[u8]) {
        for &b in chunk {
            self.hash ^= b as u64;
            self.hash = self.hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.len += chunk.len() as u64;
    }

    /// The digest of `len` pattern bytes, computed without allocating them all.
    pub fn of_pattern(len: u64) -> Digest {
        let mut d = Digest::default();
        let mut body = PatternBody::new(len);
        while let Some(chunk) = body.next_chunk() {
            d.update(&chunk);
        }
        d
    }

    pub fn header_value(&self) -> String {
        format!("len={};fnv={:016x}", self.len, self.hash)
    }
}

/// A streamed body of `len` pattern bytes in 64 KiB chunks.
pub struct PatternBody {
    offset: u64,
    len: u64,
}

impl PatternBody {
    pub const CHUNK: u64 = 64 * 1024;

    pub fn new(len: u64) -> Self {
        PatternBody { offset: 0, len }
    }

    fn next_chunk(&mut self) -> Option<Bytes> {
        if self.offset >= self.len {
            return None;
        }
        let n = (self.len - self.offset).min(Self::CHUNK);
        let chunk: Vec<u8> = (self.offset..self.offset + n).map(pattern_byte).collect();
        self.offset += n;
        Some(Bytes::from(chunk))
    }
}

impl Body for PatternBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.next_chunk().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.offset >= self.len
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.len - self.offset)
    }
}

/// Which protocols a server offers through ALPN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    Http1Only,
    H2AndHttp1,
}

/// What the server saw, for assertions.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// TCP connections accepted.
    pub accepted: AtomicUsize,
    /// TLS handshakes completed.
    pub handshakes: AtomicUsize,
    /// ALPN protocol of each completed handshake (`""` when none).
    pub alpn: Mutex<Vec<String>>,
    /// Whether each completed handshake resumed a session.
    pub resumed: Mutex<Vec<bool>>,
}

/// An HTTPS server on 127.0.0.1 serving:
/// - `GET /bytes/<n>`: `n` pattern bytes, streamed;
/// - `PUT /digest`: reads the body as it streams, answers its length and hash in `x-digest`;
/// - `GET /hang`: never answers;
/// - anything else: `200 ok`.
pub struct TestServer {
    pub addr: SocketAddr,
    pub stats: Arc<ServerStats>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    pub async fn start(identity: &ServerIdentity, alpn: Alpn) -> TestServer {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(identity.chain.clone(), PrivateKeyDer::Pkcs8(identity.key.clone_key()))
            .expect("server certificate");
        config.alpn_protocols = match alpn {
            Alpn::Http1Only => vec![b"http/1.1".to_vec()],
            Alpn::H2AndHttp1 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        };
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let stats = Arc::new(ServerStats::default());
        let task_stats = Arc::clone(&stats);
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { return };
                task_stats.accepted.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                let stats = Arc::clone(&task_stats);
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    {
                        let (_, conn) = tls.get_ref();
                        let alpn =
                            conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned()).unwrap_or_default();
                        stats.alpn.lock().unwrap().push(alpn);
                        stats
                            .resumed
                            .lock()
                            .unwrap()
                            .push(matches!(conn.handshake_kind(), Some(rustls::HandshakeKind::Resumed)));
                    }
                    stats.handshakes.fetch_add(1, Ordering::SeqCst);
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), service_fn(handle))
                        .await;
                });
            }
        });
        TestServer { addr, stats, task }
    }

    /// `https://localhost:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{}", self.addr.port(), path)
    }

    pub fn accepted(&self) -> usize {
        self.stats.accepted.load(Ordering::SeqCst)
    }
}

type ServerBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

async fn handle(req: Request<hyper::body::Incoming>) -> Result<Response<ServerBody>, Infallible> {
    let path = req.uri().path().to_owned();
    if let Some(n) = path.strip_prefix("/bytes/") {
        let n: u64 = n.parse().unwrap_or(0);
        return Ok(Response::builder()
            .header("content-length", n)
            .body(PatternBody::new(n).boxed())
            .expect("response"));
    }
    if path == "/hang" {
        std::future::pending::<()>().await;
    }
    if path == "/digest" {
        let mut digest = Digest::default();
        let mut body = req.into_body();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => {
                    if let Some(data) = frame.data_ref() {
                        digest.update(data);
                    }
                }
                Err(_) => break,
            }
        }
        return Ok(Response::builder().header("x-digest", digest.header_value()).body(empty()).expect("response"));
    }
    Ok(Response::new(full("ok")))
}

fn empty() -> ServerBody {
    http_body_util::Empty::new().map_err(|never: Infallible| match never {}).boxed()
}

fn full(s: &'static str) -> ServerBody {
    http_body_util::Full::new(Bytes::from_static(s.as_bytes())).map_err(|never: Infallible| match never {}).boxed()
}

/// A TCP listener that accepts connections and never says a word: TLS handshakes stall.
pub struct SilentServer {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SilentServer {
    pub async fn start() -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((tcp, _)) = listener.accept().await {
                held.push(tcp);
                if held.len() > 64 {
                    return;
                }
            }
        });
        SilentServer { addr, task }
    }
}

// ---- Driving a client the way the Smithy orchestrator does ----

use aws_smithy_async::rt::sleep::{SharedAsyncSleep, TokioSleep};
use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnector, HttpConnectorSettings};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::{RuntimeComponents, RuntimeComponentsBuilder};
use aws_smithy_types::body::SdkBody;

/// Runtime components as an SDK client has them (with a tokio sleep implementation).
pub fn components() -> RuntimeComponents {
    RuntimeComponentsBuilder::for_tests()
        .with_sleep_impl(Some(SharedAsyncSleep::new(TokioSleep::new())))
        .build()
        .expect("runtime components")
}

/// Connector settings with the given timeouts.
pub fn settings(connect: Option<Duration>, read: Option<Duration>) -> HttpConnectorSettings {
    let mut builder = HttpConnectorSettings::builder();
    builder.set_connect_timeout(connect).set_read_timeout(read);
    builder.build()
}

/// `http_connector(settings, components)` then `call(request)`.
pub async fn call(
    client: &dyn HttpClient,
    settings: &HttpConnectorSettings,
    request: http::Request<SdkBody>,
) -> Result<HttpResponse, ConnectorError> {
    let connector = client.http_connector(settings, &components());
    connector.call(HttpRequest::try_from(request).expect("valid request")).await
}

pub fn get(url: &str) -> http::Request<SdkBody> {
    http::Request::get(url).body(SdkBody::empty()).expect("request")
}

/// Reads a body to its end, chunk by chunk, hashing as it goes.
pub async fn digest_body(body: SdkBody) -> Digest {
    let mut digest = Digest::default();
    let mut body = body;
    while let Some(frame) = body.frame().await {
        let frame = frame.expect("body frame");
        if let Some(data) = frame.data_ref() {
            digest.update(data);
        }
    }
    digest
}

/// Every message in an error's source chain, joined: what a user would read.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        out.push_str(": ");
        out.push_str(&e.to_string());
        next = e.source();
    }
    out
}

/// Finds a `T` in an error's source chain.
pub fn find_in_chain<'a, T: std::error::Error + 'static>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        next = e.source();
    }
    None
}
