//! The conformance suite's servers: [`TestServer`] (bodies of any size, digests of uploads, a
//! request that never answers) and [`SilentServer`] (accepts, never speaks).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::ops::Deref;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::service::service_fn;
use hyper::{Request, Response};
use tokio::net::TcpListener;

use crate::https::{
    http_builder, server_config, server_config_refusing_client_certificates,
    server_config_requiring_client_auth_with_schemes, Alpn, HttpsServer,
};
use crate::{Digest, PatternBody, ServerIdentity};

/// An HTTPS server on 127.0.0.1 (rustls with ring) serving:
/// - `GET /bytes/<n>`: `n` pattern bytes, streamed;
/// - `PUT /digest`: reads the body as it streams, answers its length and hash in `x-digest`;
/// - `GET /hang`: never answers;
/// - anything else: `200 ok`.
///
/// Derefs to the [`HttpsServer`] it runs on (`addr`, `stats`, `url`).
pub struct TestServer(HttpsServer);

impl Deref for TestServer {
    type Target = HttpsServer;

    fn deref(&self) -> &HttpsServer {
        &self.0
    }
}

impl TestServer {
    /// Starts the server with `identity`, offering `alpn`.
    pub async fn start(identity: &ServerIdentity, alpn: Alpn) -> TestServer {
        let config = server_config(identity, alpn, crate::https::ring_crypto());
        TestServer(HttpsServer::start(config, http_builder(), || service_fn(handle)).await)
    }

    /// Starts the server with `identity`, offering `alpn` and `versions`, requiring a client
    /// certificate from a CA of `client_ca_pem` (mutual TLS).
    pub async fn start_requiring_client_auth(
        identity: &ServerIdentity,
        alpn: Alpn,
        client_ca_pem: &str,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> TestServer {
        Self::start_requiring_client_auth_with_schemes(identity, alpn, client_ca_pem, versions, None).await
    }

    /// [`start_requiring_client_auth`](Self::start_requiring_client_auth), asking for signatures
    /// in `schemes` only (all its verifier takes when `None`).
    pub async fn start_requiring_client_auth_with_schemes(
        identity: &ServerIdentity,
        alpn: Alpn,
        client_ca_pem: &str,
        versions: &[&'static rustls::SupportedProtocolVersion],
        schemes: Option<&[rustls::SignatureScheme]>,
    ) -> TestServer {
        let crypto = crate::https::ring_crypto();
        let config =
            server_config_requiring_client_auth_with_schemes(identity, alpn, crypto, client_ca_pem, versions, schemes);
        TestServer(HttpsServer::start(config, http_builder(), || service_fn(handle)).await)
    }

    /// Starts the server with `identity`, offering `alpn` and `versions`, asking for a client
    /// certificate from a CA of `client_ca_pem` and refusing every one with `refusal` (the
    /// alert rustls sends for it: [`server_config_refusing_client_certificates`]).
    pub async fn start_refusing_client_certificates(
        identity: &ServerIdentity,
        alpn: Alpn,
        client_ca_pem: &str,
        versions: &[&'static rustls::SupportedProtocolVersion],
        refusal: rustls::CertificateError,
    ) -> TestServer {
        let crypto = crate::https::ring_crypto();
        let config =
            server_config_refusing_client_certificates(identity, alpn, crypto, client_ca_pem, versions, refusal);
        TestServer(HttpsServer::start(config, http_builder(), || service_fn(handle)).await)
    }

    /// TCP connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.stats.accepted()
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

/// A TCP listener on 127.0.0.1 that accepts connections and never says a word: TLS handshakes
/// stall. Holds at most 64 connections, then stops accepting.
pub struct SilentServer {
    /// Where it listens.
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SilentServer {
    /// Starts listening.
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
