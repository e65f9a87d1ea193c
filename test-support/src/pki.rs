//! A private PKI made with rcgen: a certificate authority and the server identities it issues.

use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A certificate authority for tests, and leaf certificates it issues.
pub struct TestCa {
    /// The CA certificate, PEM.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A client identity as PEM text: what `ClientIdentity::from_pem` takes.
#[derive(Debug, Clone)]
pub struct ClientPem {
    /// The certificate, PEM.
    pub cert: String,
    /// The private key, PKCS#8 PEM.
    pub key: String,
}

impl ClientPem {
    /// The certificate's DER: what a server sees presented.
    pub fn leaf_der(&self) -> Vec<u8> {
        use rustls::pki_types::pem::PemObject;
        CertificateDer::from_pem_slice(self.cert.as_bytes()).expect("the client certificate's PEM").to_vec()
    }
}

/// A server identity: chain and key.
#[derive(Clone)]
pub struct ServerIdentity {
    /// The certificate chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's private key.
    pub key: Arc<PrivatePkcs8KeyDer<'static>>,
}

impl ServerIdentity {
    /// The chain as PEM, leaf first (what a server such as nginx reads).
    pub fn chain_pem(&self) -> String {
        self.chain.iter().map(|cert| pem("CERTIFICATE", cert.as_ref())).collect()
    }

    /// The private key as PKCS#8 PEM.
    pub fn key_pem(&self) -> String {
        pem("PRIVATE KEY", self.key.secret_pkcs8_der())
    }
}

/// `der` as a PEM block labelled `label`.
///
/// ```
/// assert_eq!(
///     smithy_tls_test_support::pki::pem("X", b"hi!"),
///     "-----BEGIN X-----\naGkh\n-----END X-----\n"
/// );
/// ```
pub fn pem(label: &str, der: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in der.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            let sextet = (n >> (18 - 6 * i)) & 63;
            text.push(if i <= chunk.len() { ALPHABET[sextet as usize] as char } else { '=' });
        }
    }
    let lines: Vec<&str> = text.as_bytes().chunks(64).map(|l| std::str::from_utf8(l).unwrap_or_default()).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

impl TestCa {
    /// A fresh CA (ECDSA P-256) with common name `name`.
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("generate CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let cert = params.self_signed(&key).expect("self-sign CA");
        TestCa { pem: cert.pem(), issuer: Issuer::new(params, key) }
    }

    /// Writes this CA to a bundle in a fresh directory and points `SSL_CERT_FILE` at it, with
    /// `SSL_CERT_DIR` and `AWS_CA_BUNDLE` (which would replace the native store for the default
    /// client) unset, so the native store (and the platform verifier on Linux) trusts exactly
    /// this CA. Only for a test binary whose one test reads the environment. Returns the
    /// directory, for the test to remove.
    pub fn install_as_ssl_cert_file(&self, tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("smithy-tls-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("bundle directory");
        let bundle = dir.join("ca.pem");
        std::fs::write(&bundle, &self.pem).expect("CA bundle");
        std::env::set_var("SSL_CERT_FILE", &bundle);
        std::env::remove_var("SSL_CERT_DIR");
        std::env::remove_var("AWS_CA_BUNDLE");
        dir
    }

    /// A leaf for `names`, valid from yesterday for a year.
    pub fn leaf(&self, names: &[&str]) -> ServerIdentity {
        let now = time_now();
        self.leaf_valid(names, now - 86_400, now + 365 * 86_400)
    }

    /// A leaf that becomes valid a year from now.
    pub fn not_yet_valid_leaf(&self, names: &[&str]) -> ServerIdentity {
        let now = time_now();
        self.leaf_valid(names, now + 365 * 86_400, now + 2 * 365 * 86_400)
    }

    /// A leaf that expired a year ago.
    pub fn expired_leaf(&self, names: &[&str]) -> ServerIdentity {
        let now = time_now();
        self.leaf_valid(names, now - 3 * 365 * 86_400, now - 365 * 86_400)
    }

    /// A client certificate (extended key usage `clientAuth`) for `key`, valid from yesterday
    /// for a year: the certificate PEM and the key's PKCS#8 PEM.
    pub fn client_leaf(&self, name: &str, key: &KeyPair) -> ClientPem {
        let now = time_now();
        self.client_leaf_valid(name, key, now - 86_400, now + 365 * 86_400)
    }

    /// [`client_leaf`](Self::client_leaf), expired a year ago.
    pub fn expired_client_leaf(&self, name: &str, key: &KeyPair) -> ClientPem {
        let now = time_now();
        self.client_leaf_valid(name, key, now - 3 * 365 * 86_400, now - 365 * 86_400)
    }

    fn client_leaf_valid(&self, name: &str, key: &KeyPair, from_unix: i64, to_unix: i64) -> ClientPem {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.not_before = rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(from_unix as u64);
        params.not_after = rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(to_unix as u64);
        let cert = params.signed_by(key, &self.issuer).expect("sign client leaf");
        ClientPem { cert: cert.pem(), key: key.serialize_pem() }
    }

    fn leaf_valid(&self, names: &[&str], from_unix: i64, to_unix: i64) -> ServerIdentity {
        let key = KeyPair::generate().expect("generate leaf key");
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, names[0]);
        params.not_before = rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(from_unix as u64);
        params.not_after = rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(to_unix as u64);
        let cert = params.signed_by(&key, &self.issuer).expect("sign leaf");
        ServerIdentity { chain: vec![cert.der().clone()], key: Arc::new(PrivatePkcs8KeyDer::from(key.serialize_der())) }
    }
}

impl ServerIdentity {
    /// A self-signed certificate for `names` (no CA: nothing vouches for it).
    pub fn self_signed(names: &[&str]) -> ServerIdentity {
        let key = KeyPair::generate().expect("generate key");
        let params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("params");
        let cert = params.self_signed(&key).expect("self-sign");
        ServerIdentity { chain: vec![cert.der().clone()], key: Arc::new(PrivatePkcs8KeyDer::from(key.serialize_der())) }
    }
}

fn time_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock after 1970").as_secs() as i64
}

impl ServerIdentity {
    /// The private key, as rustls takes it.
    pub fn private_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.key.clone_key())
    }
}
