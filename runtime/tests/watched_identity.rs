//! How a `WatchedIdentity` follows its files through the ways they change in practice: a key
//! deleted, both files deleted and put back, the symlink swap Kubernetes uses for a mounted
//! secret, a half-written pair, and a poll interval that is not zero. Each test waits on what it
//! observes (a generation, an error), bounded in time, never on a fixed delay.

use std::path::Path;
use std::time::{Duration, Instant};

use rcgen::KeyPair;
use smithy_default_tls::{IdentityError, IdentityPart, WatchedIdentity};
use smithy_tls_test_support::*;

/// Looked at every time: each `current()` reads the files again when they changed.
const EVERY_TIME: Duration = Duration::ZERO;

/// A fresh directory under the system's temporary one, removed on drop.
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("smithy-tls-watched-{tag}-")).tempdir().expect("scratch directory")
}

fn client_pem(ca: &TestCa, name: &str) -> ClientPem {
    ca.client_leaf(name, &KeyPair::generate().expect("key"))
}

/// Writes the pair to `cert` and `key`.
fn write_pair(cert: &Path, key: &Path, pem: &ClientPem) {
    std::fs::write(cert, &pem.cert).expect("write certificate");
    std::fs::write(key, &pem.key).expect("write key");
}

/// Whether the watch presents `pem`'s certificate now.
fn presents(watch: &WatchedIdentity, pem: &ClientPem) -> bool {
    watch.current().certificate_chain()[0].as_ref() == pem.leaf_der().as_slice()
}

#[test]
fn a_deleted_key_keeps_the_previous_identity_until_a_pair_is_back() {
    let scratch = scratch("deleted-key");
    let (cert, key) = (scratch.path().join("client.pem"), scratch.path().join("client.key"));
    let ca = TestCa::new("client CA");
    let first = client_pem(&ca, "first");
    write_pair(&cert, &key, &first);
    let watch = WatchedIdentity::from_pem_files(&cert, &key, EVERY_TIME).expect("first pair");

    std::fs::remove_file(&key).expect("delete the key");
    assert!(presents(&watch, &first), "the previous identity stays");
    assert_eq!(watch.generation(), 0);
    assert!(
        matches!(watch.last_error(), Some(IdentityError::Unreadable { part: IdentityPart::PrivateKey, .. })),
        "{:?}",
        watch.last_error()
    );

    let second = client_pem(&ca, "second");
    write_pair(&cert, &key, &second);
    assert!(presents(&watch, &second), "the new pair once both files are there");
    assert_eq!(watch.generation(), 1);
    assert!(watch.last_error().is_none());
}

#[test]
fn both_files_deleted_and_put_back_are_read_again() {
    let scratch = scratch("both-deleted");
    let (cert, key) = (scratch.path().join("client.pem"), scratch.path().join("client.key"));
    let ca = TestCa::new("client CA");
    let first = client_pem(&ca, "first");
    write_pair(&cert, &key, &first);
    let watch = WatchedIdentity::from_pem_files(&cert, &key, EVERY_TIME).expect("first pair");

    std::fs::remove_file(&cert).expect("delete the certificate");
    std::fs::remove_file(&key).expect("delete the key");
    assert!(presents(&watch, &first), "the previous identity stays while both are gone");
    assert!(
        matches!(watch.last_error(), Some(IdentityError::Unreadable { part: IdentityPart::CertificateChain, .. })),
        "{:?}",
        watch.last_error()
    );
    // The same pair put back is read again (new files), and presents the same certificate.
    write_pair(&cert, &key, &first);
    assert!(presents(&watch, &first));
    assert_eq!(watch.generation(), 1, "put back: read again");
    assert!(watch.last_error().is_none());
}

/// A mounted Kubernetes secret: `tls.crt` and `tls.key` are symlinks through `..data`, itself a
/// symlink to a timestamped directory; an update writes a new directory and renames a new
/// `..data` link over the old one, so both files change in one step.
#[cfg(unix)]
#[test]
fn a_kubernetes_style_symlink_swap_is_one_change() {
    use std::os::unix::fs::symlink;
    let scratch = scratch("symlink-swap");
    let dir = scratch.path();
    let ca = TestCa::new("client CA");
    let publish = |version: &str, pem: &ClientPem| {
        let data = dir.join(version);
        std::fs::create_dir_all(&data).expect("data directory");
        write_pair(&data.join("tls.crt"), &data.join("tls.key"), pem);
        let staged = dir.join("..data_tmp");
        let _ = std::fs::remove_file(&staged);
        symlink(version, &staged).expect("stage ..data");
        std::fs::rename(&staged, dir.join("..data")).expect("swap ..data");
    };
    let first = client_pem(&ca, "first");
    publish("..2026_12_06_00_00_00.1", &first);
    symlink("..data/tls.crt", dir.join("tls.crt")).expect("tls.crt link");
    symlink("..data/tls.key", dir.join("tls.key")).expect("tls.key link");
    let watch = WatchedIdentity::from_pem_files(dir.join("tls.crt"), dir.join("tls.key"), EVERY_TIME).expect("first");
    assert!(presents(&watch, &first));

    let second = client_pem(&ca, "second");
    publish("..2026_12_06_00_01_00.2", &second);
    assert!(presents(&watch, &second), "the swap is seen through the links");
    assert_eq!(watch.generation(), 1, "one change, one new identity");
    assert!(watch.last_error().is_none());
}

#[test]
fn a_new_certificate_with_the_old_key_waits_for_its_key() {
    let scratch = scratch("half-written");
    let (cert, key) = (scratch.path().join("client.pem"), scratch.path().join("client.key"));
    let ca = TestCa::new("client CA");
    let first = client_pem(&ca, "first");
    write_pair(&cert, &key, &first);
    let watch = WatchedIdentity::from_pem_files(&cert, &key, EVERY_TIME).expect("first pair");

    let second = client_pem(&ca, "second");
    std::fs::write(&cert, &second.cert).expect("new certificate only");
    assert!(presents(&watch, &first), "half written: the previous identity stays");
    assert!(matches!(watch.last_error(), Some(IdentityError::KeyMismatch)), "{:?}", watch.last_error());
    std::fs::write(&key, &second.key).expect("then its key");
    assert!(presents(&watch, &second));
    assert_eq!(watch.generation(), 1);
}

/// With a poll interval, a change is not looked for before the interval has passed (an hour
/// here: deterministic), and is seen once it has (a short one, waited on by observation).
#[test]
fn a_poll_interval_defers_the_look_and_the_change_is_seen_after_it() {
    let scratch = scratch("poll-interval");
    let (cert, key) = (scratch.path().join("client.pem"), scratch.path().join("client.key"));
    let ca = TestCa::new("client CA");
    let first = client_pem(&ca, "first");
    write_pair(&cert, &key, &first);
    let hourly = WatchedIdentity::from_pem_files(&cert, &key, Duration::from_secs(3600)).expect("first pair");
    let short = WatchedIdentity::from_pem_files(&cert, &key, Duration::from_millis(200)).expect("first pair");

    let second = client_pem(&ca, "second");
    write_pair(&cert, &key, &second);
    assert!(presents(&hourly, &first), "not looked at again within the hour");
    assert_eq!(hourly.generation(), 0);

    let deadline = Instant::now() + Duration::from_secs(20);
    while !presents(&short, &second) {
        assert!(Instant::now() < deadline, "the change was never seen: {:?}", short.last_error());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(short.generation(), 1);
    assert_eq!(hourly.generation(), 0, "still not looked at");
}
