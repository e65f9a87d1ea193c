//! The openssl provider keeps the system's crypto policy: OpenSSL reads its configuration
//! (`OPENSSL_CONF`, the `system_default` section) once per process, so each case runs in a child
//! process of its own (this test binary again, one `#[ignore]`d case selected by name, with
//! `OPENSSL_CONF` set). The parent test fails when the child does.
//!
//! - the default configuration talks to a TLS 1.2-only server;
//! - `MinProtocol = TLSv1.3` refuses it (and still talks TLS 1.3);
//! - a restricted TLS 1.3 suite list, and a restricted TLS 1.2 cipher string: the negotiated
//!   suite follows the system's choice;
//! - a configuration looser than the floor (TLS 1.0, security level 0) is tightened: TLS 1.0 and
//!   a SHA-1 signed certificate are still refused.
#![cfg(feature = "openssl")]

use std::path::PathBuf;
use std::process::Command;

use smithy_default_tls::{ConnectionInfo, HandshakeFailure, SmithyTlsClient, TlsHandshakeError, TlsInfo, TlsProvider};
use smithy_tls_test_support::openssl::{KeySpec, OpensslCa, OpensslServer};
use smithy_tls_test_support::*;

/// Set in the child: the case runs only there.
const CHILD: &str = "SMITHY_TLS_OPENSSL_POLICY_CHILD";

/// Runs the ignored test `case` of this binary in a child process, `OPENSSL_CONF` pointing at a
/// file holding `system_default` (or unset, for the system's own configuration); panics with
/// the child's output when it fails.
fn in_child(case: &str, system_default: Option<&str>) {
    let exe = std::env::current_exe().expect("test binary");
    let mut command = Command::new(exe);
    command.args([case, "--exact", "--ignored", "--nocapture", "--test-threads=1"]).env(CHILD, "1");
    let mut conf: Option<PathBuf> = None;
    match system_default {
        Some(section) => {
            let path = std::env::temp_dir().join(format!("smithy-tls-openssl-conf-{case}-{}.cnf", std::process::id()));
            std::fs::write(
                &path,
                format!(
                    "openssl_conf = openssl_init\n\n[openssl_init]\nssl_conf = ssl_sect\n\n[ssl_sect]\n\
                     system_default = system_default_sect\n\n[system_default_sect]\n{section}\n"
                ),
            )
            .expect("write OPENSSL_CONF");
            command.env("OPENSSL_CONF", &path);
            conf = Some(path);
        }
        None => {
            command.env_remove("OPENSSL_CONF");
        }
    }
    let output = command.output().expect("run the child");
    if let Some(path) = conf {
        let _ = std::fs::remove_file(path);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "case {case} failed in its child process ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Whether this process is a child running one case (the cases are no-ops elsewhere, so that
/// `--include-ignored` runs of the whole binary do not test the parent's configuration).
fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

fn client(pem: &str) -> SmithyTlsClient {
    SmithyTlsClient::builder()
        .provider(TlsProvider::OpenSsl)
        .extra_root_pem(pem)
        .expect("CA PEM")
        .build()
        .expect("client")
}

async fn tls_info(
    client: &SmithyTlsClient,
    url: &str,
) -> Result<TlsInfo, aws_smithy_runtime_api::client::result::ConnectorError> {
    let response = call(client, &settings(None, None), get(url)).await?;
    let tls = response.extension::<ConnectionInfo>().and_then(|i| i.tls).expect("TLS info");
    assert!(digest_body(response.into_body()).await.len > 0, "a body");
    Ok(tls)
}

fn tls12_only_server(ca: &OpensslCa) -> OpensslServer {
    OpensslServer::start(&ca.leaf("leaf", KeySpec::Rsa(2048), "sha256"), &["-tls1_2"])
}

fn refused_handshake(err: &aws_smithy_runtime_api::client::result::ConnectorError) -> HandshakeFailure {
    find_in_chain::<TlsHandshakeError>(err).unwrap_or_else(|| panic!("no handshake error: {}", error_chain(err))).kind()
}

#[test]
fn the_default_configuration_talks_to_a_tls12_only_server() {
    in_child("case_default_tls12", None);
}

#[test]
fn min_protocol_tls13_refuses_a_tls12_only_server() {
    in_child("case_min_protocol_tls13", Some("MinProtocol = TLSv1.3"));
}

#[test]
fn a_restricted_tls13_suite_list_is_followed() {
    in_child("case_tls13_chacha_only", Some("Ciphersuites = TLS_CHACHA20_POLY1305_SHA256"));
}

#[test]
fn a_restricted_tls12_cipher_string_is_followed() {
    in_child("case_tls12_one_cipher", Some("CipherString = ECDHE-RSA-AES128-GCM-SHA256"));
}

#[test]
fn a_configuration_below_the_floor_is_tightened() {
    in_child("case_below_the_floor", Some("MinProtocol = TLSv1\nCipherString = ALL:@SECLEVEL=0"));
}

#[tokio::test]
#[ignore = "a child case of the_default_configuration_talks_to_a_tls12_only_server"]
async fn case_default_tls12() {
    if !is_child() {
        return;
    }
    let ca = OpensslCa::new();
    let server = tls12_only_server(&ca);
    let tls = tls_info(&client(&ca.pem), &server.url()).await.expect("the default configuration allows TLS 1.2");
    assert_eq!(tls.protocol_version, "TLSv1.2");
}

#[tokio::test]
#[ignore = "a child case of min_protocol_tls13_refuses_a_tls12_only_server"]
async fn case_min_protocol_tls13() {
    if !is_child() {
        return;
    }
    let ca = OpensslCa::new();
    let server = tls12_only_server(&ca);
    let client = client(&ca.pem);
    let err = tls_info(&client, &server.url()).await.expect_err("the system's MinProtocol refuses TLS 1.2");
    assert_eq!(refused_handshake(&err), HandshakeFailure::Protocol, "{}", error_chain(&err));
    // TLS 1.3 still works under the same configuration.
    let tls13 = OpensslServer::start(&ca.leaf("leaf13", KeySpec::Rsa(2048), "sha256"), &["-tls1_3"]);
    assert_eq!(tls_info(&client, &tls13.url()).await.expect("TLS 1.3").protocol_version, "TLSv1.3");
}

#[tokio::test]
#[ignore = "a child case of a_restricted_tls13_suite_list_is_followed"]
async fn case_tls13_chacha_only() {
    if !is_child() {
        return;
    }
    let ca = TestCa::new("policy CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let tls = tls_info(&client(&ca.pem), &server.url("/bytes/100")).await.expect("GET");
    assert_eq!((tls.protocol_version, tls.cipher_suite), ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"));
}

#[tokio::test]
#[ignore = "a child case of a_restricted_tls12_cipher_string_is_followed"]
async fn case_tls12_one_cipher() {
    if !is_child() {
        return;
    }
    let ca = OpensslCa::new();
    let server = tls12_only_server(&ca);
    let tls = tls_info(&client(&ca.pem), &server.url()).await.expect("GET");
    assert_eq!((tls.protocol_version, tls.cipher_suite), ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"));
}

#[tokio::test]
#[ignore = "a child case of a_configuration_below_the_floor_is_tightened"]
async fn case_below_the_floor() {
    if !is_child() {
        return;
    }
    let ca = OpensslCa::new();
    let client = client(&ca.pem);
    let tls10 = OpensslServer::start(&ca.leaf("leaf10", KeySpec::Rsa(2048), "sha256"), &["-tls1"]);
    let err = tls_info(&client, &tls10.url()).await.expect_err("TLS 1.0 stays refused");
    assert_eq!(refused_handshake(&err), HandshakeFailure::Protocol, "{}", error_chain(&err));
    let sha1 = OpensslServer::start(&ca.leaf("sha1", KeySpec::Rsa(2048), "sha1"), &["-tls1_2"]);
    let err = tls_info(&client, &sha1.url()).await.expect_err("a SHA-1 signed leaf stays refused");
    assert!(
        matches!(
            refused_handshake(&err),
            HandshakeFailure::Certificate(smithy_default_tls::CertificateProblem::WeakAlgorithm)
        ),
        "{}",
        error_chain(&err)
    );
    // And what the floor allows still works.
    let sound = tls12_only_server(&ca);
    assert_eq!(tls_info(&client, &sound.url()).await.expect("TLS 1.2").protocol_version, "TLSv1.2");
}
