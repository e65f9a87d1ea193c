//! A client identity's key leaves nothing behind in freed memory: every heap block the process
//! gives back while an identity is built (from PEM text or files), cloned and dropped is
//! scanned for the key's secret scalar and for its PEM text, and none may hold either. This is
//! README's "held in memory only and zeroed on drop", checked on the allocator rather than on
//! the types. The same holds through a whole client's life with s2n-tls and OpenSSL, whose own
//! copies of the key live in the C library's heap: the PEM text s2n-tls loads from, and the DER
//! OpenSSL parses, are zeroed on our side. (rustls keeps its copy in Rust's heap, so its share
//! cannot be told apart here.) A single-purpose binary: it installs its own global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use smithy_default_tls::{ClientIdentity, ConnectionInfo, SmithyTlsClient, TlsProvider, WatchedIdentity};
use smithy_tls_test_support::{call, get, rustls, settings, Alpn, TestCa, TestServer};

/// The allocator: the system's, and while [`WATCHING`] every block freed or moved by a
/// reallocation is searched for each of [`NEEDLES`] first.
struct Scanning;

static WATCHING: AtomicBool = AtomicBool::new(false);
static NEEDLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
static FOUND: AtomicUsize = AtomicUsize::new(0);
static SCANNED: AtomicUsize = AtomicUsize::new(0);

#[global_allocator]
static ALLOCATOR: Scanning = Scanning;

fn scan(ptr: *mut u8, size: usize) {
    if !WATCHING.load(Ordering::Relaxed) {
        return;
    }
    let Some(needles) = NEEDLES.get() else { return };
    // SAFETY: the block is still allocated (it is freed after this returns) and `size` bytes long.
    let block = unsafe { std::slice::from_raw_parts(ptr, size) };
    SCANNED.fetch_add(1, Ordering::Relaxed);
    if needles.iter().any(|needle| block.windows(needle.len()).any(|w| w == needle.as_slice())) {
        FOUND.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed on to `System` unchanged; `scan` only reads a live block.
unsafe impl GlobalAlloc for Scanning {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        scan(ptr, layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation may move the block and free the old one as it was.
        scan(ptr, layout.size());
        System.realloc(ptr, layout, new_size)
    }
}

/// The 32-byte private scalar in a P-256 PKCS#8 key: the octet string after `ECPrivateKey`'s
/// version (`02 01 01 04 20`).
fn p256_scalar(pkcs8: &[u8]) -> Vec<u8> {
    let marker = [0x02, 0x01, 0x01, 0x04, 0x20];
    let at = pkcs8.windows(marker.len()).position(|w| w == marker).expect("ECPrivateKey in the PKCS#8 key");
    pkcs8[at + marker.len()..at + marker.len() + 32].to_vec()
}

/// Runs `f` with the scan on; the number of freed blocks that held a needle, and of blocks looked at.
fn freed_with_key_material(f: impl FnOnce()) -> (usize, usize) {
    FOUND.store(0, Ordering::SeqCst);
    SCANNED.store(0, Ordering::SeqCst);
    WATCHING.store(true, Ordering::SeqCst);
    f();
    WATCHING.store(false, Ordering::SeqCst);
    (FOUND.load(Ordering::SeqCst), SCANNED.load(Ordering::SeqCst))
}

#[test]
fn no_freed_block_holds_the_key() {
    std::env::remove_var("AWS_CA_BUNDLE");
    let ca = TestCa::new("key material CA");
    let key = rcgen::KeyPair::generate().expect("P-256 key");
    let pem = ca.client_leaf("client", &key);
    let scalar = p256_scalar(&key.serialize_der());
    // The key's PEM text: its first base64 line, which holds the scalar's first bytes.
    let first_line = pem.key.lines().nth(1).expect("a base64 line").as_bytes().to_vec();
    assert_eq!(first_line.len(), 64, "a full base64 line: {first_line:?}");
    NEEDLES.set(vec![scalar, first_line]).expect("needles set once");
    let dir = tempfile::Builder::new().prefix("smithy-tls-key-material-").tempdir().expect("scratch directory");
    let (cert_path, key_path) = (dir.path().join("client.pem"), dir.path().join("client.key"));
    std::fs::write(&cert_path, &pem.cert).expect("certificate");
    std::fs::write(&key_path, &pem.key).expect("key");

    // The control: the scan finds a freed copy of the key when one is left behind.
    let (found, _) = freed_with_key_material(|| drop(pem.key.clone().into_bytes()));
    assert_eq!(found, 1, "the scan must see an unzeroed copy");

    let (found, scanned) = freed_with_key_material(|| {
        let identity = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity from PEM");
        let copy = identity.clone();
        drop(identity);
        assert!(format!("{copy:?}").contains("ClientIdentity"));
        drop(copy);
    });
    assert!(scanned > 0, "the identity's build freed nothing: the scan did not run");
    assert_eq!(found, 0, "from_pem: {found} freed block(s) of {scanned} held the key");

    let (found, scanned) = freed_with_key_material(|| {
        drop(ClientIdentity::from_pem_files(&cert_path, &key_path).expect("identity from files"));
    });
    assert_eq!(found, 0, "from_pem_files: {found} freed block(s) of {scanned} held the key");

    let (found, scanned) = freed_with_key_material(|| {
        let watched = WatchedIdentity::from_pem_files(&cert_path, &key_path, std::time::Duration::ZERO)
            .expect("watched identity");
        drop(watched.current());
        drop(watched);
    });
    assert_eq!(found, 0, "WatchedIdentity: {found} freed block(s) of {scanned} held the key");

    // A client of each provider whose key copy lives in C: built, a handshake with a server that
    // requires the certificate, then the client, its connections and the runtime dropped.
    for provider in TlsProvider::ALL.iter().copied().filter(|p| !p.is_rustls()) {
        let (found, scanned) = freed_with_key_material(|| {
            let runtime =
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
            runtime.block_on(async {
                let server = TestServer::start_requiring_client_auth(
                    &ca.leaf(&["localhost"]),
                    Alpn::Http1Only,
                    &ca.pem,
                    rustls::DEFAULT_VERSIONS,
                )
                .await;
                let identity = ClientIdentity::from_pem(&pem.cert, &pem.key).expect("identity");
                let client = SmithyTlsClient::builder()
                    .provider(provider)
                    .extra_root_pem(&ca.pem)
                    .expect("CA")
                    .client_identity(identity)
                    .build()
                    .expect("client");
                let response = call(&client, &settings(None, None), get(&server.url("/bytes/10")))
                    .await
                    .expect("GET with the identity");
                let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
                assert!(tls.client_certificate_sent, "{provider}: {tls:?}");
            });
            drop(runtime);
        });
        assert!(scanned > 0, "{provider}: nothing freed: the scan did not run");
        assert_eq!(found, 0, "{provider}: {found} freed block(s) of {scanned} held the key");
    }
}
