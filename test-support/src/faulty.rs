//! HTTPS servers that fail on the wire in one chosen way, after a good TLS handshake: bodies cut
//! short or reset, responses that stall, pooled connections closed while idle (HTTP/1.1), and
//! streams reset or connections drained by GOAWAY (h2). Each writes its responses by hand, so
//! the fault is exactly the one asked for.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::https::{server_config, Alpn};
use crate::{pattern_byte, ServerIdentity};

/// What an HTTP/1.1 [`FaultyServer`] does with each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `200` with `Content-Length: len`, half the body, then a clean close (TLS close_notify
    /// and FIN): fewer bytes than announced.
    TruncatedBody {
        /// The announced length.
        len: usize,
    },
    /// `200` with `Content-Length: len`, half the body, then a TCP reset.
    ResetMidBody {
        /// The announced length.
        len: usize,
    },
    /// The response head, then nothing (the connection stays open).
    StallAfterHead,
    /// The head and half of a `len`-byte body, then nothing (the connection stays open).
    StallMidBody {
        /// The announced length.
        len: usize,
    },
    /// Every request answered in full (`len` pattern bytes, keep-alive); a connection idle for
    /// `idle` is closed by the server.
    CloseWhenIdle {
        /// The body length of each response.
        len: usize,
        /// How long a connection may sit idle.
        idle: Duration,
    },
}

/// A server on 127.0.0.1 with one fault: HTTP/1.1 over TLS with a [`Fault`]
/// ([`FaultyServer::start`]) or h2 over TLS with an [`H2Fault`] ([`FaultyServer::start_h2`]).
/// Stopped when dropped.
pub struct FaultyServer {
    /// Where it listens.
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultyServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The response head for a `len`-byte body.
fn head(len: usize) -> String {
    format!("HTTP/1.1 200 OK\r\ncontent-length: {len}\r\ncontent-type: application/octet-stream\r\n\r\n")
}

fn body(from: usize, to: usize) -> Vec<u8> {
    (from as u64..to as u64).map(pattern_byte).collect()
}

/// Reads one request head (up to the blank line); `false` on EOF, an error or garbage.
async fn read_request<S: tokio::io::AsyncRead + Unpin>(stream: &mut S) -> bool {
    matches!(crate::proxy::read_head(stream, 16 * 1024).await, Ok(Some(_)))
}

impl FaultyServer {
    /// Starts the server with `identity`.
    pub async fn start(identity: &ServerIdentity, fault: Fault) -> FaultyServer {
        let config = server_config(identity, Alpn::Http1Only, crate::https::ring_crypto());
        Self::listen(config, move |mut tls| async move {
            serve(&mut tls, fault).await;
            // Hold a stalled connection open until the client gives up.
            if matches!(fault, Fault::StallAfterHead | Fault::StallMidBody { .. }) {
                let _ = tls.read(&mut [0u8; 1]).await;
            }
        })
        .await
    }

    /// Accepts on 127.0.0.1, counts connections, and hands each one that completes its TLS
    /// handshake to `connection`.
    async fn listen<F, Fut>(config: rustls::ServerConfig, connection: F) -> FaultyServer
    where
        F: Fn(Tls) -> Fut + Clone + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let (acceptor, connection) = (acceptor.clone(), connection.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(tcp).await {
                        connection(tls).await;
                    }
                });
            }
        });
        FaultyServer { addr, accepted, task }
    }

    /// `https://localhost:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{}", self.addr.port(), path)
    }

    /// TCP connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A server-side TLS connection.
type Tls = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;

async fn serve(tls: &mut Tls, fault: Fault) {
    match fault {
        Fault::TruncatedBody { len } | Fault::ResetMidBody { len } | Fault::StallMidBody { len } => {
            if !read_request(tls).await {
                return;
            }
            let _ = tls.write_all(head(len).as_bytes()).await;
            let _ = tls.write_all(&body(0, len / 2)).await;
            let _ = tls.flush().await;
            match fault {
                Fault::TruncatedBody { .. } => {
                    let _ = tls.shutdown().await;
                }
                Fault::ResetMidBody { .. } => {
                    // Give the client the half body first, then reset instead of closing.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let _ = tls.get_ref().0.set_zero_linger();
                }
                _ => {}
            }
        }
        Fault::StallAfterHead => {
            if read_request(tls).await {
                let _ = tls.write_all(head(1024).as_bytes()).await;
                let _ = tls.flush().await;
            }
        }
        Fault::CloseWhenIdle { len, idle } => loop {
            match tokio::time::timeout(idle, read_request(tls)).await {
                Ok(true) => {
                    let mut response = head(len).into_bytes();
                    response.extend(body(0, len));
                    if tls.write_all(&response).await.is_err() || tls.flush().await.is_err() {
                        return;
                    }
                }
                // EOF, garbage, or idle too long: close.
                _ => {
                    let _ = tls.shutdown().await;
                    return;
                }
            }
        },
    }
}

/// What an h2 [`FaultyServer`] (started with [`FaultyServer::start_h2`]) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Fault {
    /// Each stream gets a `200`, half of a `len`-byte body, then `RST_STREAM(INTERNAL_ERROR)`.
    ResetStreamMidBody {
        /// The announced length.
        len: usize,
    },
    /// Each connection answers its first request in full (`len` pattern bytes), then sends
    /// GOAWAY and finishes what is in flight.
    GoAwayAfterFirst {
        /// The body length.
        len: usize,
    },
}

impl FaultyServer {
    /// Starts an h2-over-TLS server (ALPN `h2` only) with `identity` and one [`H2Fault`].
    pub async fn start_h2(identity: &ServerIdentity, fault: H2Fault) -> FaultyServer {
        let mut config = server_config(identity, Alpn::H2AndHttp1, crate::https::ring_crypto());
        config.alpn_protocols = vec![b"h2".to_vec()];
        Self::listen(config, move |tls| serve_h2(tls, fault)).await
    }
}

/// Serves one h2 connection with `fault`.
async fn serve_h2(tls: Tls, fault: H2Fault) {
    let Ok(mut connection) = h2::server::handshake(tls).await else { return };
    let mut served = 0usize;
    while let Some(Ok((_request, mut respond))) = connection.accept().await {
        served += 1;
        let response = http::Response::builder().status(200);
        match fault {
            H2Fault::ResetStreamMidBody { len } => {
                let response = response.header("content-length", len).body(()).expect("response");
                let Ok(mut stream) = respond.send_response(response, false) else { continue };
                let _ = stream.send_data(Bytes::from(body(0, len / 2)), false);
                // Let the head and the data reach the client first.
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    stream.send_reset(h2::Reason::INTERNAL_ERROR);
                });
            }
            H2Fault::GoAwayAfterFirst { len } => {
                let response = response.header("content-length", len).body(()).expect("response");
                let Ok(mut stream) = respond.send_response(response, false) else { continue };
                let _ = stream.send_data(Bytes::from(body(0, len)), true);
                if served == 1 {
                    connection.graceful_shutdown();
                }
            }
        }
    }
}
