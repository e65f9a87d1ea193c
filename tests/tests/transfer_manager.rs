//! The S3 transfer manager on rewritten crates: aws-config, aws-sdk-s3 and
//! aws-sdk-s3-transfer-manager 0.3 (published, fetched) rewritten with platform-default, and an
//! application that uploads and downloads through the transfer manager with its defaults
//! (tests/tm-consumer), against the HTTPS mock on 127.0.0.1.
//!
//! The server tells the TLS stacks apart by the cipher suites each ClientHello offers: the
//! transfer manager's own pool with s2n-tls (aws-smithy-http-client's s2n-tls security policy),
//! the policy's default client with s2n-tls (the runtime's policy), and rustls.
//!
//! - Defaults, on x86_64 Linux: the linux-gnu rule's provider is s2n-tls, which the pool runs at
//!   more CPU per byte than the default client, so the transport stays off and the default
//!   client serves, with s2n-tls (the published crate says rustls + aws-lc in its pool).
//! - `AWS_CA_BUNDLE` set (and the system store without the test CA): the default client, which
//!   reads it, serves.
//! - The graph: the pool's aws-smithy-http-client has no TLS provider on this target, with or
//!   without the application's `--cfg smithy_tls` (the whole application: s2n-tls on aws-lc, no
//!   rustls and no ring).
//! - Where the pool serves the rule (on musl): tests/tests/platform_runs.rs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use smithy_tls_e2e::{
    prepare_transfer_manager_tree, run, scratch_cargo, scratch_root, scratch_target, transfer_manager_round_trip,
};

/// The preset the tree is rewritten with.
const PRESET: &str = "platform-default";

/// The object's size: one ranged GET per 8 MiB part, so a few parts and connections.
const OBJECT_BYTES: usize = 20 << 20;

/// The tree, rewritten, with tests/tm-consumer in it and the committed lock.
fn tree() -> PathBuf {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| prepare_transfer_manager_tree(&scratch_root().join("transfer-manager"), Some(PRESET))).clone()
}

/// The consumer, built once.
fn consumer() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            run(scratch_cargo(&tree()).args(["build", "-q", "-p", "tm-consumer"]));
            scratch_target().join("debug/tm-consumer")
        })
        .clone()
}

/// Runs the consumer once against a fresh mock with `adjust` applied to its command; returns the
/// cipher-suite lists the server saw, one per handshake.
fn round_trip(name: &str, adjust: impl FnOnce(&mut Command, &Path)) -> Vec<Vec<u16>> {
    transfer_manager_round_trip(&consumer(), &scratch_root().join(format!("tm-run-{name}")), OBJECT_BYTES, adjust)
}

/// What made a connection, from the suites its ClientHello offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// rustls (its TLS 1.2 suites include ECDHE with ChaCha20-Poly1305).
    Rustls,
    /// s2n-tls with the runtime's security policy (`20251014`: AEAD suites only, no TLS 1.2
    /// ChaCha20).
    RuntimeS2n,
    /// s2n-tls with aws-smithy-http-client's security policy (`20230317`: also ECDHE with
    /// AES-CBC and SHA-256).
    PoolS2n,
}

/// The TLS 1.2 ECDHE suites with ChaCha20-Poly1305.
const CHACHA_TLS12: [u16; 2] = [0xcca8, 0xcca9];
/// The TLS 1.2 ECDHE suites with AES-CBC and SHA-256/384.
const CBC_SHA2: [u16; 4] = [0xc023, 0xc024, 0xc027, 0xc028];

fn stack_of(suites: &[u16]) -> Stack {
    let chacha = suites.iter().any(|s| CHACHA_TLS12.contains(s));
    let cbc = suites.iter().any(|s| CBC_SHA2.contains(s));
    match (chacha, cbc) {
        (true, false) => Stack::Rustls,
        (false, true) => Stack::PoolS2n,
        (false, false) => Stack::RuntimeS2n,
        (true, true) => panic!("a ClientHello no stack here sends: {suites:04x?}"),
    }
}

#[test]
fn with_its_defaults_the_transfer_manager_sends_through_the_default_client_with_the_rules_provider() {
    let seen = round_trip("defaults", |cmd, _| {
        cmd.env_remove("AWS_CA_BUNDLE");
    });
    let stacks: Vec<Stack> = seen.iter().map(|suites| stack_of(suites)).collect();
    assert!(stacks.iter().all(|s| *s == Stack::RuntimeS2n), "{stacks:?}");
}

#[test]
fn with_aws_ca_bundle_set_the_default_client_serves() {
    let seen = round_trip("aws-ca-bundle", |cmd, scratch| {
        // Only AWS_CA_BUNDLE trusts the test CA: the system store is another CA's.
        let other = smithy_tls_test_support::pki::TestCa::new("smithy-tls transfer manager, another CA");
        let other_pem = scratch.join("other-ca.pem");
        std::fs::write(&other_pem, &other.pem).expect("write the other CA");
        let bundle = scratch.join("ca.pem");
        cmd.env("SSL_CERT_FILE", other_pem).env("AWS_CA_BUNDLE", bundle);
    });
    let stacks: Vec<Stack> = seen.iter().map(|suites| stack_of(suites)).collect();
    assert!(stacks.iter().all(|s| *s == Stack::RuntimeS2n), "{stacks:?}");
}

/// The features cargo resolves for the pool's aws-smithy-http-client on x86_64 Linux, with
/// `rustflags` (the application's override).
fn transport_features(rustflags: &str) -> String {
    let out = run(scratch_cargo(&tree()).env("RUSTFLAGS", rustflags).args([
        "tree",
        "-q",
        "-p",
        "tm-consumer",
        "-e",
        "features",
        "-i",
        "aws-smithy-http-client",
        "--target",
        "x86_64-unknown-linux-gnu",
        "--prefix",
        "none",
    ]));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The packages of the consumer's graph on x86_64 Linux (normal and build dependencies).
fn packages() -> Vec<String> {
    let out = run(scratch_cargo(&tree()).args(["tree", "-q", "-p", "tm-consumer", "-e", "normal,build"]).args([
        "--target",
        "x86_64-unknown-linux-gnu",
        "--prefix",
        "none",
        "--format",
        "{p}",
    ]));
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_pool_compiles_no_tls_provider_here_with_or_without_an_override() {
    let features = transport_features("");
    assert!(features.contains("aws-smithy-http-client feature \"default-client\""), "{features}");
    assert!(!features.contains("feature \"s2n-tls\"") && !features.contains("feature \"rustls"), "{features}");
    // The whole application: s2n-tls on aws-lc, and no rustls or ring (the published transfer
    // manager brings rustls 0.21 and 0.23, and ring).
    let packages = packages();
    for present in ["s2n-tls", "aws-lc-sys"] {
        assert!(packages.iter().any(|p| p == present), "{present} missing: {packages:?}");
    }
    for absent in ["rustls", "ring"] {
        assert!(!packages.iter().any(|p| p == absent), "{absent} in the graph: {packages:?}");
    }
    let features = transport_features(r#"--cfg smithy_tls="rustls-ring""#);
    assert!(!features.contains("feature \"s2n-tls\"") && !features.contains("feature \"rustls"), "{features}");
}
