//! `AWS_CA_BUNDLE` reaches the process-wide default client, with the meaning the AWS CLI gives
//! it: the bundle's certificates are the trusted roots, replacing the default ones (here the
//! native store, which `SSL_CERT_FILE` points at another CA), for every provider. A missing or
//! malformed bundle fails the request with an error that names the variable and the path.
//!
//! One test in its own binary: it changes the process environment, step by step.
#![cfg(all(feature = "native", feature = "webpki"))]

use smithy_default_tls::{shared_client, CertificateProblem, TlsProvider, TrustRoots};
use smithy_tls_test_support::*;

async fn get_via(
    client: &aws_smithy_runtime_api::client::http::SharedHttpClient,
    server: &TestServer,
) -> Result<(), String> {
    match call(client, &settings(None, None), get(&server.url("/bytes/100"))).await {
        Ok(response) => {
            assert_eq!(digest_body(response.into_body()).await, Digest::of_pattern(100));
            Ok(())
        }
        Err(err) => Err(error_chain(&err)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_ca_bundle_replaces_the_default_roots_for_every_provider() {
    let (bundle_ca, native_ca) = (TestCa::new("AWS_CA_BUNDLE CA"), TestCa::new("native store CA"));
    let dir = native_ca.install_as_ssl_cert_file("aws-ca-bundle");
    let bundle = dir.join("bundle.pem");
    std::fs::write(&bundle, &bundle_ca.pem).unwrap();
    let by_bundle = TestServer::start(&bundle_ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let by_native = TestServer::start(&native_ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;

    std::env::set_var("AWS_CA_BUNDLE", &bundle);
    for &provider in TlsProvider::ALL {
        let client = shared_client(provider, TrustRoots::Native);
        get_via(&client, &by_bundle).await.unwrap_or_else(|e| panic!("{provider}: the bundle's CA is trusted: {e}"));
        let refused = get_via(&client, &by_native).await.expect_err("the native store is replaced");
        assert!(refused.contains(&CertificateProblem::UnknownIssuer.to_string()), "{provider}: {refused}");
    }

    let missing = dir.join("no-such-bundle.pem");
    std::env::set_var("AWS_CA_BUNDLE", &missing);
    for &provider in TlsProvider::ALL {
        let error = get_via(&shared_client(provider, TrustRoots::Webpki), &by_bundle).await.expect_err("missing");
        assert!(error.contains(&format!("AWS_CA_BUNDLE={}", missing.display())), "{provider}: {error}");
    }

    let malformed = dir.join("malformed.pem");
    std::fs::write(&malformed, "this is not PEM").unwrap();
    std::env::set_var("AWS_CA_BUNDLE", &malformed);
    for &provider in TlsProvider::ALL {
        let error = get_via(&shared_client(provider, TrustRoots::Webpki), &by_bundle).await.expect_err("malformed");
        assert!(error.contains(&format!("AWS_CA_BUNDLE={}", malformed.display())), "{provider}: {error}");
        assert!(error.contains("no `-----BEGIN CERTIFICATE-----` block"), "{provider}: {error}");
    }

    // Unset (or empty): the roots the policy chose, here the native store.
    std::env::set_var("AWS_CA_BUNDLE", "");
    for &provider in TlsProvider::ALL {
        let client = shared_client(provider, TrustRoots::Native);
        get_via(&client, &by_native).await.unwrap_or_else(|e| panic!("{provider}: native roots again: {e}"));
        let refused = get_via(&client, &by_bundle).await.expect_err("the bundle no longer applies");
        assert!(refused.contains("untrusted certificate authority"), "{provider}: {refused}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
