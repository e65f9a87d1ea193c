//! Builder validation: bad input is a clear error when it is given.

use smithy_default_tls::{Error, SmithyTlsClient};

#[test]
fn pem_without_certificates_is_rejected() {
    let err = SmithyTlsClient::builder().extra_root_pem("hello").expect_err("no certificate");
    assert!(matches!(err, Error::InvalidPem { .. }), "{err:?}");
    assert!(err.to_string().contains("BEGIN CERTIFICATE"), "{err}");
}

#[test]
fn missing_pem_file_names_the_file() {
    let err = SmithyTlsClient::builder().extra_root_pem_file("/nonexistent/extra.pem").expect_err("missing file");
    assert!(err.to_string().contains("/nonexistent/extra.pem"), "{err}");
}

#[test]
fn defaults_pick_a_compiled_in_provider_and_roots() {
    let client = SmithyTlsClient::builder().build().expect("defaults");
    assert_eq!(client.provider(), smithy_default_tls::TlsProvider::ALL[0]);
}
