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

/// ring's rustls provider: the test servers' and proxies' (no aws-lc beside the client's, so a
/// client on aws-lc is checked against another implementation), and the application's own
/// provider in the `rustls-custom` suite.
///
/// ```
/// let crypto = smithy_tls_test_support::ring_crypto();
/// assert!(!crypto.cipher_suites.is_empty());
/// ```
pub fn ring_crypto() -> Arc<CryptoProvider> {
    // rustls 0.23.48 deprecates it for lacking post-quantum key exchange, which the servers do
    // not need.
    #[allow(deprecated)]
    Arc::new(rustls::crypto::ring::default_provider())
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
    server_config_requiring_client_auth_with_schemes(identity, alpn, crypto, client_ca_pem, versions, None)
}

/// [`server_config_requiring_client_auth`] whose certificate request names only `schemes` (all
/// its verifier takes when `None`): a client whose key signs none of them has nothing to send.
pub fn server_config_requiring_client_auth_with_schemes(
    identity: &ServerIdentity,
    alpn: Alpn,
    crypto: Arc<CryptoProvider>,
    client_ca_pem: &str,
    versions: &[&'static rustls::SupportedProtocolVersion],
    schemes: Option<&[rustls::SignatureScheme]>,
) -> rustls::ServerConfig {
    let webpki = webpki_client_verifier(client_ca_pem, &crypto);
    let verifier: Arc<dyn rustls::server::danger::ClientCertVerifier> = match schemes {
        None => webpki,
        Some(schemes) => Arc::new(Asking { inner: webpki, schemes: Some(schemes.to_vec()), refusal: None }),
    };
    server_config_verifying_clients(identity, alpn, crypto, versions, verifier)
}

/// [`server_config_requiring_client_auth`] whose verifier asks for a certificate from a CA of
/// `client_ca_pem` and refuses every one it gets with `refusal`, sending the alert rustls gives
/// that error (`Revoked`: `certificate_revoked`; `ApplicationVerificationFailure`:
/// `access_denied`; `Other`: `certificate_unknown`).
pub fn server_config_refusing_client_certificates(
    identity: &ServerIdentity,
    alpn: Alpn,
    crypto: Arc<CryptoProvider>,
    client_ca_pem: &str,
    versions: &[&'static rustls::SupportedProtocolVersion],
    refusal: rustls::CertificateError,
) -> rustls::ServerConfig {
    let inner = webpki_client_verifier(client_ca_pem, &crypto);
    let verifier = Arc::new(Asking { inner, schemes: None, refusal: Some(refusal) });
    server_config_verifying_clients(identity, alpn, crypto, versions, verifier)
}

/// A rustls server configuration for `identity` offering `alpn` and `versions`, whose client
/// certificates `verifier` asks for and checks.
pub(crate) fn server_config_verifying_clients(
    identity: &ServerIdentity,
    alpn: Alpn,
    crypto: Arc<CryptoProvider>,
    versions: &[&'static rustls::SupportedProtocolVersion],
    verifier: Arc<dyn rustls::server::danger::ClientCertVerifier>,
) -> rustls::ServerConfig {
    let mut config = rustls::ServerConfig::builder_with_provider(crypto)
        .with_protocol_versions(versions)
        .expect("protocol versions")
        .with_client_cert_verifier(verifier)
        .with_single_cert(identity.chain.clone(), identity.private_key())
        .expect("server certificate");
    config.alpn_protocols = alpn.protocols();
    config
}

/// rustls's webpki client verifier over the CAs of `client_ca_pem`, with `crypto`.
fn webpki_client_verifier(
    client_ca_pem: &str,
    crypto: &Arc<CryptoProvider>,
) -> Arc<dyn rustls::server::danger::ClientCertVerifier> {
    let roots = Arc::new(root_store(client_ca_pem));
    rustls::server::WebPkiClientVerifier::builder_with_provider(roots, Arc::clone(crypto))
        .build()
        .expect("client verifier")
}

/// The certificates of `pem` (one or more CAs) as a rustls root store.
pub(crate) fn root_store(pem: &str) -> rustls::RootCertStore {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA certificate");
    }
    roots
}

/// A client verifier that asks as `inner` does, for signatures in `schemes` only where given
/// (refusing any other as a strict server does: rustls's server itself would take any scheme its
/// verifier can check), and refuses every certificate with `refusal` where given.
#[derive(Debug)]
struct Asking {
    inner: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    schemes: Option<Vec<rustls::SignatureScheme>>,
    refusal: Option<rustls::CertificateError>,
}

impl Asking {
    /// Refuses a signature in a scheme the certificate request did not name.
    fn check_scheme(&self, dss: &rustls::DigitallySignedStruct) -> Result<(), rustls::Error> {
        match &self.schemes {
            Some(schemes) if !schemes.contains(&dss.scheme) => {
                Err(rustls::Error::PeerMisbehaved(rustls::PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme))
            }
            _ => Ok(()),
        }
    }
}

impl rustls::server::danger::ClientCertVerifier for Asking {
    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        match &self.refusal {
            Some(refusal) => Err(rustls::Error::InvalidCertificate(refusal.clone())),
            None => self.inner.verify_client_cert(end_entity, intermediates, now),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.check_scheme(dss)?;
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.check_scheme(dss)?;
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.schemes.clone().unwrap_or_else(|| self.inner.supported_verify_schemes())
    }
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

/// When a connection's handshake began, and the certificate its client presented.
#[derive(Debug, Clone)]
pub struct ClientHelloSeen {
    /// When the server had read the client's ClientHello (the client chose what to present
    /// before sending it).
    pub at: std::time::Instant,
    /// The client's leaf certificate (DER), if it presented one.
    pub client_certificate: Option<Vec<u8>>,
    /// The cipher suites the ClientHello offered, in its order (IANA code points): how the
    /// client's TLS library and its settings show from the server.
    pub offered_suites: Vec<u16>,
}

/// What a server saw, for assertions.
#[derive(Debug, Default)]
pub struct ServerStats {
    accepted: AtomicUsize,
    handshakes: Mutex<Vec<Negotiated>>,
    client_hellos: Mutex<Vec<ClientHelloSeen>>,
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

    /// Every completed handshake's start and client certificate, in order of completion.
    pub fn client_hellos(&self) -> Vec<ClientHelloSeen> {
        self.client_hellos.lock().unwrap_or_else(|p| p.into_inner()).clone()
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
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let stats = Arc::new(ServerStats::default());
        let task_stats = Arc::clone(&stats);
        let make_service = Arc::new(make_service);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                task_stats.accepted.fetch_add(1, Ordering::SeqCst);
                let _ = tcp.set_nodelay(true);
                let (config, stats, http) = (Arc::clone(&config), Arc::clone(&task_stats), http.clone());
                let service = make_service();
                tokio::spawn(async move {
                    let acceptor = tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), tcp);
                    tokio::pin!(acceptor);
                    let start = match acceptor.as_mut().await {
                        Ok(start) => start,
                        Err(_) => {
                            if let Some(tcp) = acceptor.take_io() {
                                linger(tcp).await;
                            }
                            return;
                        }
                    };
                    let at = std::time::Instant::now();
                    let offered_suites: Vec<u16> =
                        start.client_hello().cipher_suites().iter().map(|suite| u16::from(*suite)).collect();
                    let tls = match start.into_stream(config).into_fallible().await {
                        Ok(tls) => tls,
                        Err((_, tcp)) => return linger(tcp).await,
                    };
                    let conn = tls.get_ref().1;
                    let client_certificate = conn.peer_certificates().and_then(|c| c.first()).map(|c| c.to_vec());
                    stats.handshakes.lock().unwrap_or_else(|p| p.into_inner()).push(Negotiated::of(conn));
                    let hello = ClientHelloSeen { at, client_certificate, offered_suites };
                    stats.client_hellos.lock().unwrap_or_else(|p| p.into_inner()).push(hello);
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

/// Closes a connection whose handshake failed the way a careful server does: the alert rustls
/// wrote is followed by a FIN, and what the client still sends is read and dropped (at most
/// 1 MiB, for at most 2 s). Closing with unread data would send a reset instead, which can reach
/// the client before it reads the alert (a TLS 1.2 client still writing its last flight sees
/// "connection reset", not the alert, and the test that expects the alert's reason flakes).
async fn linger(mut tcp: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = tcp.shutdown().await;
    let drain = async {
        let mut sink = [0u8; 16 * 1024];
        let mut left = 1usize << 20;
        while left > 0 {
            match tcp.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), drain).await;
}

/// hyper's server builder with its defaults (HTTP/1.1 and h2).
pub fn http_builder() -> auto::Builder<TokioExecutor> {
    auto::Builder::new(TokioExecutor::new())
}
