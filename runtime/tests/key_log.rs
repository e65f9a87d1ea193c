//! `SSLKEYLOGFILE`, with every provider: off unless the variable is set; when it is, every TLS
//! 1.3 secret of a handshake is appended to the file in the NSS key log format, one line each,
//! and the file is created readable and writable by its owner only (it holds the keys to the
//! traffic). rustls's warning that the variable is set is in `observability.rs`. A
//! single-purpose binary: it sets a process environment variable.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;

use smithy_default_tls::{SmithyTlsClient, TlsProvider};
use smithy_tls_test_support::{call, digest_body, get, settings, Alpn, TestCa, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslkeylogfile_captures_the_secrets_only_when_set_in_a_file_only_its_owner_reads() {
    let ca = TestCa::new("key log CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::Http1Only).await;
    for &provider in TlsProvider::ALL {
        captures_only_when_set(provider, &ca, &server).await;
    }
}

async fn captures_only_when_set(provider: TlsProvider, ca: &TestCa, server: &TestServer) {
    let log = std::env::temp_dir().join(format!("smithy-tls-{provider}-keylog-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let client = || {
        SmithyTlsClient::builder()
            .provider(provider)
            .extra_root_pem(&ca.pem)
            .expect("CA")
            .session_resumption(false)
            .build()
            .expect("client")
    };

    // Not set: nothing written.
    std::env::remove_var("SSLKEYLOGFILE");
    let response = call(&client(), &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
    digest_body(response.into_body()).await;
    assert!(!log.exists(), "{provider}");

    std::env::set_var("SSLKEYLOGFILE", &log);
    for _ in 0..2 {
        let response = call(&client(), &settings(None, None), get(&server.url("/bytes/10"))).await.expect("GET");
        digest_body(response.into_body()).await;
    }
    std::env::remove_var("SSLKEYLOGFILE");
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{provider}: the key log was written: {e}"));
    // Created by the client (it did not exist before): owner read and write, nothing for the
    // group or others, whatever the umask lets through.
    let mode = std::fs::metadata(&log).expect("key log metadata").permissions().mode() & 0o777;
    let _ = std::fs::remove_file(&log);
    assert_eq!(mode, 0o600, "{provider}: the key log's mode is {mode:o}");
    // TLS 1.3: four secrets per handshake, each `LABEL <client random hex> <secret hex>`.
    let lines: Vec<&str> = text.lines().collect();
    for label in [
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
        "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        "CLIENT_TRAFFIC_SECRET_0",
        "SERVER_TRAFFIC_SECRET_0",
    ] {
        assert_eq!(
            lines.iter().filter(|l| l.starts_with(&format!("{label} "))).count(),
            2,
            "{provider} {label}:\n{text}"
        );
    }
    for line in &lines {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 3, "{provider}: NSS key log line: {line}");
        assert_eq!(fields[1].len(), 64, "client random in hex: {line}");
        assert!(fields[1..].iter().all(|f| f.chars().all(|c| c.is_ascii_hexdigit())), "{line}");
    }
}
