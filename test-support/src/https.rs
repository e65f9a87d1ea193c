//! One HTTPS server for every test and benchmark: rustls on 127.0.0.1, any hyper service, and a
//! record of every connection and handshake it saw.

use std::error::Error as StdError;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body::Body;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::crypto::CryptoProvider;
use tokio::net::TcpListener;

use crate::ServerIdentity;

/// Which protocols a server offers through ALPN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    /// `http/1.1` only (like S3).
    Http1Only,
    /// `h2`, then `http/1.1`.
    H2AndHttp1,
}

impl Alpn {
    fn protocols(self) -> Vec<Vec<u8>> {
        match self {
            Alpn::Http1Only => vec![b"http/1.1".to_vec()],
            Alpn::H2AndHttp1 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        }
    }
}

/// A rustls server configuration for `identity` offering `alpn`, with `crypto` (TLS 1.2 and
/// 1.3, session tickets on).
pub fn server_config(identity: &ServerIdentity, alpn: Alpn, crypto: Arc<CryptoProvider>) -> rustls::ServerConfig {
    let mut config = rustls::ServerConfig::builder_with_provider(crypto)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(identity.chain.clone(), identity.private_key())
        .expect("server certificate");
    config.alpn_protocols = alpn.protocols();
    config
}

/// [`server_config`] that requires a client certificate issued by a CA of `client_ca_pem`
/// (rustls's webpki client verifier, with `crypto`).
/// `versions`: the protocol versions it speaks (`rustls::DEFAULT_VERSIONS`, or one).
pub fn server_config_requiring_client_auth(
    identity: &ServerIdentity,
    alpn: Alpn,
    crypto: Arc<CryptoProvider>,
    client_ca_pem: &str,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> rustls::ServerConfig {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(client_ca_pem.as_bytes()) {
        roots.add(cert.expect("client CA PEM")).expect("client CA");
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&crypto))
        .build()
        .expect("client verifier");
    let mut config = rustls::ServerConfig::builder_with_provider(crypto)
        .with_protocol_versions(versions)
        .expect("protocol versions")
        .with_client_cert_verifier(verifier)
        .with_single_cert(identity.chain.clone(), identity.private_key())
        .expect("server certificate");
    config.alpn_protocols = alpn.protocols();
    config
}

/// What one TLS handshake negotiated, seen from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// Protocol version, e.g. `TLSv1_3`.
    pub version: String,
    /// Cipher suite.
    pub cipher: String,
    /// Key exchange group.
    pub group: String,
    /// Whether the session was resumed.
    pub resumed: bool,
    /// ALPN protocol (`""` when none).
    pub alpn: String,
}

impl Negotiated {
    fn of(conn: &rustls::ServerConnection) -> Negotiated {
        Negotiated {
            version: conn.protocol_version().map(|v| format!("{v:?}")).unwrap_or_default(),
            cipher: conn.negotiated_cipher_suite().map(|s| format!("{:?}", s.suite())).unwrap_or_default(),
            group: conn.negotiated_key_exchange_group().map(|g| format!("{:?}", g.name())).unwrap_or_default(),
            resumed: matches!(conn.handshake_kind(), Some(rustls::HandshakeKind::Resumed)),
            alpn: conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned()).unwrap_or_default(),
        }
    }
}

/// What a server saw, for assertions.
#[derive(Debug, Default)]
pub struct ServerStats {
    accepted: AtomicUsize,
    handshakes: Mutex<Vec<Negotiated>>,
}

impl ServerStats {
    /// TCP connections accepted.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Every completed handshake, in order.
    pub fn handshakes(&self) -> Vec<Negotiated> {
        self.handshakes.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The ALPN protocol of each completed handshake.
    pub fn alpns(&self) -> Vec<String> {
        self.handshakes().into_iter().map(|h| h.alpn).collect()
    }

    /// Whether each completed handshake resumed a session.
    pub fn resumed(&self) -> Vec<bool> {
        self.handshakes().into_iter().map(|h| h.resumed).collect()
    }
}

/// An HTTPS server on 127.0.0.1, stopped when dropped.
pub struct HttpsServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// What it saw.
    pub stats: Arc<ServerStats>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HttpsServer {
    /// Listens on an ephemeral port of 127.0.0.1 and serves every connection that completes a
    /// handshake with `config` through `http` (HTTP/1.1 or h2, as ALPN says) and a service from
    /// `make_service`. Accepted sockets get TCP_NODELAY.
    pub async fn start<F, S, B>(
        config: rustls::ServerConfig,
        http: auto::Builder<TokioExecutor>,
        make_service: F,
    ) -> Self
    where
        F: Fn() -> S + Send + Sync + 'static,
        S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn StdError + Send + Sync>>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn StdError + Send + Sync>>,
    {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let stats = Arc::new(ServerStats::default());
        let task_stats = Arc::clone(&stats);
        let make_service = Arc::new(make_service);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                task_stats.accepted.fetch_add(1, Ordering::SeqCst);
                let _ = tcp.set_nodelay(true);
                let (acceptor, stats, http) = (acceptor.clone(), Arc::clone(&task_stats), http.clone());
                let service = make_service();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let negotiated = Negotiated::of(tls.get_ref().1);
                    stats.handshakes.lock().unwrap_or_else(|p| p.into_inner()).push(negotiated);
                    let _ = http.serve_connection(TokioIo::new(tls), service).await;
                });
            }
        });
        HttpsServer { addr, stats, task }
    }

    /// `https://localhost:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{}", self.addr.port(), path)
    }
}

/// hyper's server builder with its defaults (HTTP/1.1 and h2).
pub fn http_builder() -> auto::Builder<TokioExecutor> {
    auto::Builder::new(TokioExecutor::new())
}
