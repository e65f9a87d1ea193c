//! A client identity rotated under load, on every provider compiled in (as `client_identity.rs`
//! chooses them): 1,000 requests from 8 tasks over HTTP/1.1 connections that the server closes
//! every few requests, while the identity's files change twice, the second time half written
//! for a while. Nothing may fail, and each connection must present the certificate its files
//! held when its handshake began.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use rcgen::KeyPair;
use smithy_default_tls::{ConnectionInfo, IdentityError, SmithyTlsClient, TlsProvider, WatchedIdentity};
use smithy_tls_test_support::*;

const TASKS: usize = 8;
const REQUESTS_PER_TASK: usize = 125;
/// Each task's pause between requests: the load lasts about 3 s, over which the files change.
const PAUSE: Duration = Duration::from_millis(25);
/// The server closes a connection after this many requests, so new connections keep coming.
const REQUESTS_PER_CONNECTION: usize = 5;
/// Time from the client's look at the files to its ClientHello reaching the server: a
/// connection whose ClientHello arrived this long after a change must present the new pair.
const MARGIN: Duration = Duration::from_millis(250);

fn providers() -> impl Iterator<Item = TlsProvider> {
    TlsProvider::ALL.iter().copied().filter(|p| p.name() != "rustls-custom")
}

/// Writes `text` beside `path` and renames it over `path`, as deployment tools replace files.
fn replace(path: &Path, text: &str) {
    let staged = path.with_extension("staged");
    std::fs::write(&staged, text).expect("write staged file");
    std::fs::rename(&staged, path).expect("rename over");
}

struct Pair {
    cert: String,
    key: String,
    leaf_der: Vec<u8>,
}

fn pair(ca: &TestCa, name: &str) -> Pair {
    use rustls::pki_types::pem::PemObject;
    let pem = ca.client_leaf(name, &KeyPair::generate().expect("key"));
    let leaf_der = rustls::pki_types::CertificateDer::from_pem_slice(pem.cert.as_bytes()).expect("leaf").to_vec();
    Pair { cert: pem.cert, key: pem.key, leaf_der }
}

/// A server that requires a client certificate from `client_ca` and closes each connection
/// after [`REQUESTS_PER_CONNECTION`] requests.
async fn server(server_ca: &TestCa, client_ca: &TestCa) -> HttpsServer {
    let crypto = smithy_tls_test_support::ring_crypto();
    let config = server_config_requiring_client_auth(
        &server_ca.leaf(&["localhost"]),
        Alpn::Http1Only,
        crypto,
        &client_ca.pem,
        rustls::DEFAULT_VERSIONS,
    );
    HttpsServer::start(config, http_builder(), || {
        let served = Arc::new(AtomicUsize::new(0));
        hyper::service::service_fn(move |_request| {
            let served = served.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                let mut response = hyper::Response::new(Full::new(Bytes::from_static(b"ok")));
                if served.is_multiple_of(REQUESTS_PER_CONNECTION) {
                    response.headers_mut().insert("connection", hyper::header::HeaderValue::from_static("close"));
                }
                Ok::<_, std::convert::Infallible>(response)
            }
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_under_load_fails_nothing_and_presents_no_stale_certificate() {
    let (server_ca, client_ca) = (TestCa::new("server CA"), TestCa::new("client CA"));
    for provider in providers() {
        let dir =
            tempfile::Builder::new().prefix(&format!("smithy-tls-rotation-{provider}-")).tempdir().expect("temp dir");
        let (cert_path, key_path) = (dir.path().join("client.pem"), dir.path().join("client.key"));
        let [a, b, c] = ["client A", "client B", "client C"].map(|name| pair(&client_ca, name));
        replace(&cert_path, &a.cert);
        replace(&key_path, &a.key);

        let watched = WatchedIdentity::from_pem_files(&cert_path, &key_path, Duration::ZERO).expect("identity A");
        let server = server(&server_ca, &client_ca).await;
        let client = SmithyTlsClient::builder()
            .provider(provider)
            .extra_root_pem(&server_ca.pem)
            .expect("CA PEM")
            .watched_client_identity(watched.clone())
            .build()
            .expect("client");
        let url = server.url("/");
        let started = Instant::now();

        let load: Vec<_> = (0..TASKS)
            .map(|_| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move {
                    let timeouts = settings(Some(Duration::from_secs(10)), Some(Duration::from_secs(10)));
                    let mut failures = Vec::new();
                    for _ in 0..REQUESTS_PER_TASK {
                        match call(&client, &timeouts, get(&url)).await {
                            Ok(response) if response.status().as_u16() == 200 => {
                                let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls);
                                if !tls.is_some_and(|t| t.resumed || t.client_certificate_sent) {
                                    failures.push(format!("no certificate sent: {tls:?}"));
                                }
                            }
                            Ok(response) => failures.push(format!("status {}", response.status())),
                            Err(e) => failures.push(error_chain(&e)),
                        }
                        tokio::time::sleep(PAUSE).await;
                    }
                    failures
                })
            })
            .collect();

        // The files change twice while the load runs: B at once; then C's certificate alone
        // (half written: it does not match B's key), and C's key a while later. Each instant is
        // taken before its write: no file changed before it, however long the write is delayed
        // (a loaded machine can stop this thread between a rename and the next clock reading).
        tokio::time::sleep(Duration::from_millis(500)).await;
        let b_at = Instant::now();
        replace(&cert_path, &b.cert);
        replace(&key_path, &b.key);
        tokio::time::sleep(Duration::from_millis(800)).await;
        let half_at = Instant::now();
        replace(&cert_path, &c.cert);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(watched.current().certificate_chain()[0].as_ref(), b.leaf_der.as_slice(), "{provider}: B kept");
        assert!(
            matches!(watched.last_error(), Some(IdentityError::KeyMismatch)),
            "{provider}: the half-written pair is reported: {:?}",
            watched.last_error()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let c_at = Instant::now();
        replace(&key_path, &c.key);

        let mut failures = Vec::new();
        for task in load {
            failures.extend(task.await.expect("load task"));
        }
        let elapsed = started.elapsed();
        assert!(failures.is_empty(), "{provider}: {} of 1000 requests failed: {failures:#?}", failures.len());
        assert!(c_at + MARGIN < started + elapsed, "{provider}: the load ended before the last change ({elapsed:?})");
        assert_eq!(watched.generation(), 2, "{provider}: two pairs read after the first");
        assert!(watched.last_error().is_none(), "{provider}: {:?}", watched.last_error());

        // Which certificate each connection presented, against when its handshake began.
        let name = |der: &[u8]| match der {
            d if d == a.leaf_der.as_slice() => "A",
            d if d == b.leaf_der.as_slice() => "B",
            d if d == c.leaf_der.as_slice() => "C",
            _ => "unknown",
        };
        let mut per_window = [0usize; 3];
        for hello in server.stats.client_hellos() {
            let presented = hello.client_certificate.as_deref().map_or("none", name);
            // What the files held at `at`, and what a slow connection may still present.
            let (expected, also) = if hello.at < b_at {
                ("A", "A")
            } else if hello.at < b_at + MARGIN {
                ("B", "A")
            } else if hello.at < c_at {
                per_window[0] += 1;
                if hello.at > half_at + MARGIN {
                    per_window[1] += 1;
                }
                ("B", "B")
            } else if hello.at < c_at + MARGIN {
                ("C", "B")
            } else {
                per_window[2] += 1;
                ("C", "C")
            };
            assert!(
                presented == expected || presented == also,
                "{provider}: a connection whose handshake began {:?} after the start presented {presented}, not {expected} \
                 (B at {:?}, C's certificate at {:?}, C's key at {:?})",
                hello.at - started,
                b_at - started,
                half_at - started,
                c_at - started
            );
        }
        // Each window saw new connections (else the test checked nothing there).
        assert!(
            per_window.iter().all(|&n| n >= 3),
            "{provider}: new connections per window (B, B while half written, C): {per_window:?}"
        );
        eprintln!(
            "{provider}: 1000 requests, {} handshakes in {elapsed:?}; new connections in the B, half-written and C windows: {per_window:?}",
            server.stats.client_hellos().len()
        );
    }
}
