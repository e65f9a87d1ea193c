//! Peers that break TLS on purpose, below any TLS library: a TCP server on 127.0.0.1 that reads
//! the client's first flight and then does one scripted thing, and a parser for the ClientHello
//! it captured.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What a [`RawPeer`] does after reading the client's ClientHello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Script {
    /// Answers with these bytes (not a ServerHello), then closes.
    Garbage(Vec<u8>),
    /// Sends the first `n` bytes of a plausible ServerHello record, then closes.
    CloseMidServerHello(usize),
    /// Closes without a word.
    Close,
}

/// A scripted TCP peer on 127.0.0.1, stopped when dropped. Every connection gets the script;
/// the first ClientHello record it read is kept.
pub struct RawPeer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The first TLS record each connection sent (its ClientHello), in order.
    pub client_hellos: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RawPeer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RawPeer {
    /// Starts the peer.
    pub async fn start(script: Script) -> RawPeer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let client_hellos: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let seen = Arc::clone(&client_hellos);
        let task = tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                let (script, seen) = (script.clone(), Arc::clone(&seen));
                tokio::spawn(async move {
                    let read = tokio::time::timeout(Duration::from_secs(5), read_record(&mut tcp)).await;
                    let Ok(Some(record)) = read else { return };
                    seen.lock().unwrap_or_else(|p| p.into_inner()).push(record);
                    let reply = match script {
                        Script::Garbage(bytes) => bytes,
                        Script::CloseMidServerHello(n) => {
                            SERVER_HELLO_START[..n.min(SERVER_HELLO_START.len())].to_vec()
                        }
                        Script::Close => Vec::new(),
                    };
                    let _ = tcp.write_all(&reply).await;
                    let _ = tcp.shutdown().await;
                });
            }
        });
        RawPeer { addr, client_hellos, task }
    }

    /// `https://localhost:<port>/`.
    pub fn url(&self) -> String {
        format!("https://localhost:{}/", self.addr.port())
    }
}

/// The start of a TLS 1.2 ServerHello record: handshake record header, then the message header
/// and a version, as a real server would send them.
const SERVER_HELLO_START: &[u8] = &[0x16, 0x03, 0x03, 0x00, 0x4a, 0x02, 0x00, 0x00, 0x46, 0x03, 0x03, 0x5a, 0x5a];

/// Reads one whole TLS record (header and body); `None` on EOF or a short read.
async fn read_record(tcp: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut header = [0u8; 5];
    tcp.read_exact(&mut header).await.ok()?;
    let len = u16::from_be_bytes([header[3], header[4]]) as usize;
    let mut record = header.to_vec();
    record.resize(5 + len, 0);
    tcp.read_exact(&mut record[5..]).await.ok()?;
    Some(record)
}

/// The cipher suites a ClientHello record offers, in order, or why it could not be read.
///
/// ```
/// use smithy_tls_test_support::raw_peer::offered_cipher_suites;
/// // record header, handshake header, version, 32 random bytes, empty session id, two suites
/// let mut hello = vec![0x16, 0x03, 0x01, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29, 0x03, 0x03];
/// hello.extend([0u8; 32]);
/// hello.extend([0x00, 0x00, 0x04, 0x13, 0x01, 0xc0, 0x2b]);
/// assert_eq!(offered_cipher_suites(&hello), Ok(vec![0x1301, 0xc02b]));
/// ```
pub fn offered_cipher_suites(record: &[u8]) -> Result<Vec<u16>, String> {
    let field = |at: usize, len: usize| record.get(at..at + len).ok_or(format!("record ends at byte {at}"));
    if field(0, 1)? != [0x16] || field(5, 1)? != [0x01] {
        return Err("not a handshake record holding a ClientHello".to_owned());
    }
    // 5 record header + 4 handshake header + 2 version + 32 random.
    let session_id_len = field(43, 1)?[0] as usize;
    let suites_at = 44 + session_id_len;
    let suites_len = u16::from_be_bytes(field(suites_at, 2)?.try_into().map_err(|_| "short")?) as usize;
    let suites = field(suites_at + 2, suites_len)?;
    Ok(suites.chunks_exact(2).map(|pair| u16::from_be_bytes([pair[0], pair[1]])).collect())
}

/// GREASE values (RFC 8701) and signalling suites, which a client may send but no server picks.
pub fn is_placeholder_suite(suite: u16) -> bool {
    let grease = suite & 0x0f0f == 0x0a0a && (suite >> 8) == (suite & 0xff);
    grease || matches!(suite, 0x00ff | 0x5600)
}

/// Modern cipher suites: the TLS 1.3 AEAD suites and the TLS 1.2 ECDHE suites with AES-GCM or
/// ChaCha20-Poly1305, by IANA value and name. Anything else (RC4, 3DES, DES, export, NULL,
/// anonymous, CBC, static RSA) is not on this list.
pub const MODERN_SUITES: &[(u16, &str)] = &[
    (0x1301, "TLS_AES_128_GCM_SHA256"),
    (0x1302, "TLS_AES_256_GCM_SHA384"),
    (0x1303, "TLS_CHACHA20_POLY1305_SHA256"),
    (0xc02b, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
    (0xc02c, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
    (0xc02f, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    (0xc030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
    (0xcca8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    (0xcca9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
];
