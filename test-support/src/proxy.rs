//! [`ConnectProxy`]: a small HTTP proxy on 127.0.0.1 that the tests run and inspect. It opens
//! `CONNECT` tunnels (and relays bytes it cannot read: TLS end to end) and forwards plain-HTTP
//! requests sent in absolute form; it can demand credentials or refuse every request with a
//! given status, and records what it saw. It listens in plain TCP (an `http://` proxy) or
//! behind TLS (an `https://` proxy, [`ConnectProxy::start_tls`]), which can ask the client for
//! a certificate ([`ConnectProxy::start_tls_asking_for_certificates`]).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::pki::ServerIdentity;

/// How the proxy answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyMode {
    /// Tunnels and forwards everything.
    Open,
    /// Answers `407` unless `Proxy-Authorization` is exactly this value.
    RequireAuth(String),
    /// Answers every request with this status (e.g. 403, 502).
    Refuse(u16),
}

/// What one request to the proxy looked like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxiedRequest {
    /// The method (`CONNECT`, or the forwarded request's).
    pub method: String,
    /// The request target (`host:port` for CONNECT, the absolute URL when forwarding).
    pub target: String,
    /// Its `Proxy-Authorization` header, if any.
    pub proxy_authorization: Option<String>,
    /// For a tunnel, the first byte the client sent through it (0x16: a TLS handshake record,
    /// so no plaintext crossed the proxy).
    pub first_tunnel_byte: Option<u8>,
    /// Whether the client presented a certificate in its TLS handshake with the proxy (always
    /// `false` for a plain-TCP proxy).
    pub client_certificate: bool,
}

/// A proxy on 127.0.0.1 for the duration of a test.
pub struct ConnectProxy {
    /// Where it listens.
    pub addr: SocketAddr,
    tls: bool,
    seen: Arc<Mutex<Vec<ProxiedRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ConnectProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ConnectProxy {
    /// Starts the proxy (plain TCP: an `http://` proxy).
    pub async fn start(mode: ProxyMode) -> ConnectProxy {
        Self::listen(mode, None).await
    }

    /// Starts the proxy behind TLS with `identity` (an `https://` proxy; HTTP/1.1 only). The
    /// client's TLS to the proxy is terminated here; TLS to the origin runs inside the tunnel.
    pub async fn start_tls(mode: ProxyMode, identity: &ServerIdentity) -> ConnectProxy {
        let config = crate::https::server_config(identity, crate::https::Alpn::Http1Only, crate::https::ring_crypto());
        Self::listen(mode, Some(tokio_rustls::TlsAcceptor::from(Arc::new(config)))).await
    }

    /// [`start_tls`](Self::start_tls), asking the client for a certificate issued by a CA of
    /// `client_ca_pem` without requiring one: each [`ProxiedRequest::client_certificate`] says
    /// whether one came.
    pub async fn start_tls_asking_for_certificates(
        mode: ProxyMode,
        identity: &ServerIdentity,
        client_ca_pem: &str,
    ) -> ConnectProxy {
        let crypto = crate::https::ring_crypto();
        let roots = Arc::new(crate::https::root_store(client_ca_pem));
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(roots, Arc::clone(&crypto))
            .allow_unauthenticated()
            .build()
            .expect("client verifier");
        let config = crate::https::server_config_verifying_clients(
            identity,
            crate::https::Alpn::Http1Only,
            crypto,
            rustls::DEFAULT_VERSIONS,
            verifier,
        );
        Self::listen(mode, Some(tokio_rustls::TlsAcceptor::from(Arc::new(config)))).await
    }

    async fn listen(mode: ProxyMode, tls: Option<tokio_rustls::TlsAcceptor>) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let seen: Arc<Mutex<Vec<ProxiedRequest>>> = Arc::default();
        let log = Arc::clone(&seen);
        let is_tls = tls.is_some();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = Arc::clone(&log);
                let mode = mode.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let _ = match tls {
                        None => serve(stream, &mode, &log, false).await,
                        Some(acceptor) => match acceptor.accept(stream).await {
                            Ok(stream) => {
                                let certificate = stream.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
                                serve(stream, &mode, &log, certificate).await
                            }
                            Err(_) => Ok(()),
                        },
                    };
                });
            }
        });
        ConnectProxy { addr, tls: is_tls, seen, task }
    }

    /// `http://127.0.0.1:<port>`, or `https://localhost:<port>` for a TLS proxy (the name its
    /// certificate is for).
    pub fn url(&self) -> String {
        if self.tls {
            format!("https://localhost:{}", self.addr.port())
        } else {
            format!("http://{}", self.addr)
        }
    }

    /// Every request it received, in order.
    pub fn seen(&self) -> Vec<ProxiedRequest> {
        self.seen.lock().expect("lock").clone()
    }
}

/// Reads one request head (up to and including the blank line), byte by byte so nothing after
/// it is consumed; `None` at end of stream or past `limit` bytes.
pub(crate) async fn read_head<S: tokio::io::AsyncRead + Unpin>(
    stream: &mut S,
    limit: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > limit || stream.read(&mut byte).await? == 0 {
            return Ok(None);
        }
        head.push(byte[0]);
    }
    Ok(Some(head))
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut client: S,
    mode: &ProxyMode,
    log: &Mutex<Vec<ProxiedRequest>>,
    client_certificate: bool,
) -> std::io::Result<()> {
    let Some(head) = read_head(&mut client, 64 * 1024).await? else { return Ok(()) };
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let target = request_line.next().unwrap_or_default().to_owned();
    let proxy_authorization = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("proxy-authorization"))
        .map(|(_, value)| value.trim().to_owned());
    let mut record = ProxiedRequest {
        method: method.clone(),
        target: target.clone(),
        proxy_authorization,
        first_tunnel_byte: None,
        client_certificate,
    };

    let refusal = match mode {
        ProxyMode::Open => None,
        ProxyMode::RequireAuth(expected) if record.proxy_authorization.as_deref() == Some(expected) => None,
        ProxyMode::RequireAuth(_) => Some((407, "Proxy Authentication Required")),
        ProxyMode::Refuse(status) => Some((*status, "Refused by the test proxy")),
    };
    if let Some((status, reason)) = refusal {
        log.lock().expect("lock").push(record);
        let extra = if status == 407 { "Proxy-Authenticate: Basic realm=\"test\"\r\n" } else { "" };
        let response = format!("HTTP/1.1 {status} {reason}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n");
        return client.write_all(response.as_bytes()).await;
    }

    if method == "CONNECT" {
        let mut origin = match TcpStream::connect(target.as_str()).await {
            Ok(origin) => origin,
            Err(_) => {
                log.lock().expect("lock").push(record);
                return client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n").await;
            }
        };
        client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await?;
        let mut first = [0u8; 1];
        if client.read(&mut first).await? == 1 {
            record.first_tunnel_byte = Some(first[0]);
            origin.write_all(&first).await?;
        }
        log.lock().expect("lock").push(record);
        tokio::io::copy_bidirectional(&mut client, &mut origin).await?;
        return Ok(());
    }

    // Forwarding: `GET http://host:port/path HTTP/1.1`. The origin (hyper) accepts the absolute
    // form, so the head is passed on as it came.
    log.lock().expect("lock").push(record);
    let authority = target.strip_prefix("http://").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    let mut origin = TcpStream::connect(authority).await?;
    origin.write_all(&head).await?;
    tokio::io::copy_bidirectional(&mut client, &mut origin).await?;
    Ok(())
}
