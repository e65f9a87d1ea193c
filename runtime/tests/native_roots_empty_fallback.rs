//! Where the native store is empty (here `SSL_CERT_FILE` and `SSL_CERT_DIR` point at an empty
//! file and an empty directory, as in an image without a CA bundle), `native-or-webpki` roots —
//! a policy's `empty-store = "webpki"` — fall back to the bundled roots with a warning event,
//! through the entry point generated code calls, while `native` roots still fail. A
//! single-purpose binary: it sets the environment and installs a global tracing subscriber.
#![cfg(all(feature = "native", feature = "webpki"))]

use std::collections::BTreeMap;
use std::sync::Mutex;

use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use smithy_default_tls::{
    shared_client_for, CertificateProblem, Error, HandshakeFailure, RootsError, TlsHandshakeError, TlsProvider,
    TrustRoots,
};
use smithy_tls_test_support::*;
use tracing::field::{Field, Visit};

/// The fields of every warning event recorded in the process.
static WARNINGS: Mutex<Vec<BTreeMap<String, String>>> = Mutex::new(Vec::new());

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Records warning events; everything else is off.
struct Warnings;

impl tracing::Subscriber for Warnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        WARNINGS.lock().unwrap().push(fields);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The fallback warnings recorded for `provider` so far.
fn fallbacks_for(provider: TlsProvider) -> Vec<BTreeMap<String, String>> {
    let warnings = WARNINGS.lock().unwrap();
    warnings
        .iter()
        .filter(|w| w.get("fallback").map(String::as_str) == Some("webpki"))
        .filter(|w| w.get("provider") == Some(&provider.to_string()))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_native_store_falls_back_to_the_bundled_roots_when_chosen() {
    tracing::subscriber::set_global_default(Warnings).expect("the only subscriber of this binary");
    // The only test in this binary: nothing else reads the environment concurrently.
    let dir = std::env::temp_dir().join(format!("smithy-tls-empty-store-{}", std::process::id()));
    let (file, certs) = (dir.join("ca-certificates.crt"), dir.join("certs"));
    std::fs::create_dir_all(&certs).expect("empty SSL_CERT_DIR");
    std::fs::write(&file, "").expect("empty SSL_CERT_FILE");
    std::env::set_var("SSL_CERT_FILE", &file);
    std::env::set_var("SSL_CERT_DIR", &certs);
    std::env::remove_var("AWS_CA_BUNDLE");

    // A private CA: no bundled root trusts it, so a connection that reaches certificate
    // verification shows the client had roots to verify with.
    let ca = TestCa::new("private CA");
    let server = TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1).await;
    let url = server.url("/bytes/10");
    for &provider in TlsProvider::ALL {
        // `native`: no roots, so every request fails (rustls says why; s2n-tls loads the empty
        // store without a word and rejects the certificate).
        let native = shared_client_for(provider, TrustRoots::Native, BehaviorVersion::latest());
        let err = call(&native, &settings(None, None), get(&url)).await.expect_err("no roots");
        if let Some(roots) = find_in_chain::<RootsError>(&err) {
            assert!(matches!(roots, RootsError::NativeEmpty { .. }), "{provider}: {roots:?}");
        }
        assert!(fallbacks_for(provider).is_empty(), "{provider}: `native` never falls back");

        // `native-or-webpki`: prepared with the bundled roots, which verify the certificate
        // (and reject this private CA's), and a warning says why.
        let fallback = shared_client_for(provider, TrustRoots::NativeOrWebpki, BehaviorVersion::latest());
        let err = call(&fallback, &settings(None, None), get(&url)).await.expect_err("private CA");
        let message = error_chain(&err);
        assert!(find_in_chain::<Error>(&err).is_none(), "{provider}: roots were found: {message}");
        let handshake = find_in_chain::<TlsHandshakeError>(&err).unwrap_or_else(|| panic!("{provider}: {message}"));
        let unknown_issuer = HandshakeFailure::Certificate(CertificateProblem::UnknownIssuer);
        assert_eq!(handshake.kind(), unknown_issuer, "{provider}: {message}");
        let warnings = fallbacks_for(provider);
        assert_eq!(warnings.len(), 1, "{provider}: one warning per prepared backend: {warnings:?}");
        let roots: usize = warnings[0]["roots"].parse().expect("a count");
        assert!(roots > 100, "{provider}: the bundled Mozilla roots: {roots}");
        assert!(warnings[0]["reason"].contains("native certificate store"), "{provider}: {warnings:?}");
        assert!(warnings[0]["message"].contains("webpki"), "{provider}: {warnings:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
