//! On h2 a small request costs every provider as many TLS records as rustls: two (the h2 codec
//! flushes HEADERS and DATA apart). The codec writes a DATA frame's header and its payload as two
//! buffers; s2n-tls and libssl take one buffer per write, so their streams gather the two
//! (`tls::gather`), or each request would cost them three records and three sends. Counted by a
//! relay between the client and the server that reads the record headers the client sends.
#![cfg(feature = "rustls-ring")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_smithy_types::body::SdkBody;
use smithy_default_tls::{ConnectionInfo, SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, settings, Alpn, TestCa, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Small POSTs counted on a warm connection.
const REQUESTS: usize = 20;

/// TLS records of type application data (23) in the bytes a client sends, read from their
/// 5-byte headers as the bytes pass.
#[derive(Default)]
struct RecordCounter {
    /// The part of the next header seen so far.
    header: Vec<u8>,
    /// Bytes of the current record's body still to pass.
    body_left: usize,
}

impl RecordCounter {
    /// Reads `bytes`; returns how many application-data records began in them.
    fn feed(&mut self, mut bytes: &[u8]) -> usize {
        let mut records = 0;
        while !bytes.is_empty() {
            if self.body_left > 0 {
                let skip = self.body_left.min(bytes.len());
                self.body_left -= skip;
                bytes = &bytes[skip..];
                continue;
            }
            let take = (5 - self.header.len()).min(bytes.len());
            self.header.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.header.len() == 5 {
                records += usize::from(self.header[0] == 23);
                self.body_left = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                self.header.clear();
            }
        }
        records
    }
}

/// A TCP relay on 127.0.0.1 to `server`, counting the application-data records clients send.
async fn relay(server: std::net::SocketAddr, records: Arc<AtomicUsize>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the relay");
    let port = listener.local_addr().expect("relay address").port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let records = records.clone();
            tokio::spawn(async move {
                let upstream = TcpStream::connect(server).await.expect("connect to the server");
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = upstream.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                });
                let mut counter = RecordCounter::default();
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n @ 1..) = client_read.read(&mut buf).await {
                    records.fetch_add(counter.feed(&buf[..n]), Ordering::SeqCst);
                    if server_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

/// A POST of 1 KiB to the server's `/digest`, which reads the body and answers without one.
fn post(url: &str) -> http::Request<SdkBody> {
    http::Request::post(url).body(SdkBody::from(vec![0x5a; 1024])).expect("request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_h2_request_costs_every_provider_as_many_records_as_rustls() {
    let ca = TestCa::new("h2 records CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let timeouts = settings(Some(Duration::from_secs(10)), Some(Duration::from_secs(10)));
    let mut counts: Vec<(TlsProvider, usize)> = Vec::new();
    for &provider in TlsProvider::ALL {
        let records = Arc::new(AtomicUsize::new(0));
        let port = relay(server.addr, records.clone()).await;
        let url = format!("https://localhost:{port}/digest");
        let client =
            SmithyTlsClient::builder().provider(provider).extra_root_pem(&ca.pem).expect("CA").build().expect("client");
        // The first request opens the connection (handshake, settings); the rest reuse it.
        let first = call(&client, &timeouts, post(&url)).await.expect("first POST");
        let alpn = first.extension::<ConnectionInfo>().and_then(|info| info.tls).and_then(|tls| tls.alpn);
        assert_eq!(alpn, Some("h2"), "{provider}: negotiated {alpn:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let before = records.load(Ordering::SeqCst);
        for _ in 0..REQUESTS {
            let response = call(&client, &timeouts, post(&url)).await.expect("POST");
            assert_eq!(response.status().as_u16(), 200, "{provider}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let sent = records.load(Ordering::SeqCst) - before;
        println!("{provider}: {sent} records for {REQUESTS} small h2 requests");
        counts.push((provider, sent));
    }
    let rustls = counts.iter().find(|(p, _)| *p == TlsProvider::RustlsRing).map(|&(_, n)| n).expect("rustls-ring ran");
    assert!(rustls <= 2 * REQUESTS + 2, "rustls-ring: {rustls} records for {REQUESTS} requests");
    for (provider, sent) in counts {
        // A little room for a frame sent on its own (a window update).
        assert!(sent <= rustls + 2, "{provider}: {sent} records for {REQUESTS} requests, rustls-ring {rustls}");
    }
}

#[test]
fn the_counter_reads_headers_split_across_reads() {
    let mut counter = RecordCounter::default();
    let record = |kind: u8, len: u16| [&[kind, 3, 3][..], &len.to_be_bytes(), &vec![0; usize::from(len)]].concat();
    let bytes = [record(22, 40), record(23, 3), record(23, 300), record(21, 2)].concat();
    let total: usize = bytes.chunks(7).map(|chunk| counter.feed(chunk)).sum();
    assert_eq!(total, 2);
}
