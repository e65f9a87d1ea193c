//! [`ClientIdentity`]: the certificate chain and private key a client presents for mutual TLS,
//! checked when it is built so that a broken pair is the caller's error at once, never a failed
//! handshake later.
//!
//! What is checked, in order: the chain holds a certificate; the key is one PEM private key
//! (PKCS#8, SEC1 or PKCS#1), not encrypted; its type is one every provider signs with
//! ([`KeyType`]); and it is the private half of the leaf certificate's public key.
//!
//! **The key/certificate match** needs public-key arithmetic for some keys (an Ed25519 or EC key
//! need not carry its public half), so it is done by a crypto library compiled into the build,
//! the first of: rustls's ring, aws-lc-rs or FIPS provider (rustls's `CertifiedKey::keys_match`,
//! which compares the SubjectPublicKeyInfo the loaded key derives with the certificate's), the
//! system's OpenSSL (`EVP_PKEY` comparison of the key with the certificate's public key),
//! aws-lc-rs as s2n-tls builds it (the public key the private key derives against the bits of
//! the certificate's SubjectPublicKeyInfo), or, in a `rustls-custom` build, the application's
//! `CryptoProvider` when one is installed by then. Only a `rustls-custom` build whose provider is
//! installed later leaves the match to rustls when the client's TLS is prepared (a configuration
//! error before any handshake). No crypto crate is added to any build for this: each build checks
//! with the crypto it already has (a FIPS build with its FIPS module).
//!
//! **Key material.** The key's DER is held in memory only, zeroed when the last clone of the
//! identity is dropped (`zeroize`), never logged, and not in `Debug`. Each TLS library takes its
//! own copy when a client's TLS is prepared and keeps it as long as that client's configuration
//! lives (rustls: the signing key in its `ClientConfig`; OpenSSL: the `EVP_PKEY` in its
//! `SSL_CTX`, freed with it).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pkcs8::der::asn1::UintRef;
use pkcs8::der::Decode;
use pkcs8::ObjectIdentifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use zeroize::Zeroizing;

const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const SECP256R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const SECP384R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const SECP521R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.35");

/// A client certificate chain and its private key, for servers that ask for one (mutual TLS).
///
/// Built with [`from_pem`](ClientIdentity::from_pem) or
/// [`from_pem_files`](ClientIdentity::from_pem_files), which check the pair (see
/// [`IdentityError`]), and given to a client with
/// [`Builder::client_identity`](crate::Builder::client_identity). Cloning is cheap (the clones
/// share one copy of the key); two identities are equal when one is a clone of the other.
///
/// Its `Debug` shows the key's type and the number of certificates, never the key.
#[derive(Clone)]
pub struct ClientIdentity {
    inner: Arc<Inner>,
}

struct Inner {
    chain: Vec<CertificateDer<'static>>,
    /// The key's DER, zeroed on drop.
    key: Zeroizing<Vec<u8>>,
    format: KeyFormat,
    key_type: KeyType,
}

/// The encoding a private key came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyFormat {
    Pkcs8,
    Sec1,
    Pkcs1,
}

/// The type of a client identity's key. FIPS providers take the ECDSA types and RSA of 2048 bits
/// or more ([`KeyType::is_fips_approved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyType {
    /// ECDSA on P-256.
    EcdsaP256,
    /// ECDSA on P-384.
    EcdsaP384,
    /// ECDSA on P-521 (not with `rustls-ring`: ring does not sign with it).
    EcdsaP521,
    /// Ed25519 (not with the FIPS providers).
    Ed25519,
    /// RSA, with the modulus's size in bits.
    Rsa {
        /// The modulus's size in bits.
        bits: u32,
    },
}

impl KeyType {
    /// Whether the FIPS providers take this key: ECDSA on P-256, P-384 or P-521, or RSA of at
    /// least 2048 bits (FIPS 186-5; Ed25519 is not among the signature schemes rustls's and
    /// s2n-tls's FIPS configurations offer).
    pub fn is_fips_approved(self) -> bool {
        match self {
            KeyType::EcdsaP256 | KeyType::EcdsaP384 | KeyType::EcdsaP521 => true,
            KeyType::Rsa { bits } => bits >= 2048,
            KeyType::Ed25519 => false,
        }
    }
}

impl fmt::Display for KeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyType::EcdsaP256 => f.write_str("ECDSA P-256"),
            KeyType::EcdsaP384 => f.write_str("ECDSA P-384"),
            KeyType::EcdsaP521 => f.write_str("ECDSA P-521"),
            KeyType::Ed25519 => f.write_str("Ed25519"),
            KeyType::Rsa { bits } => write!(f, "RSA {bits}"),
        }
    }
}

/// Which input of a client identity an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdentityPart {
    /// The certificate chain.
    CertificateChain,
    /// The private key.
    PrivateKey,
}

impl fmt::Display for IdentityPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdentityPart::CertificateChain => "certificate chain",
            IdentityPart::PrivateKey => "private key",
        })
    }
}

/// Why a [`ClientIdentity`] cannot be built.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum IdentityError {
    /// A file could not be read ([`ClientIdentity::from_pem_files`]).
    Unreadable {
        /// Which input the file holds.
        part: IdentityPart,
        /// The path.
        path: PathBuf,
        /// Why it could not be read.
        source: Arc<std::io::Error>,
    },
    /// The PEM text is malformed (a section without its end, bad base64); the source is the
    /// parser's error.
    MalformedPem {
        /// Which input.
        part: IdentityPart,
        /// The parser's error.
        source: Arc<rustls_pki_types::pem::Error>,
    },
    /// The chain holds no `CERTIFICATE` section.
    NoCertificate,
    /// The key input holds no private key (`PRIVATE KEY`, `EC PRIVATE KEY` or
    /// `RSA PRIVATE KEY` section).
    NoPrivateKey,
    /// The key input holds more than one private key.
    SeveralPrivateKeys,
    /// The key is encrypted (`ENCRYPTED PRIVATE KEY`, or a legacy `Proc-Type: 4,ENCRYPTED`
    /// header): decrypt it first (`openssl pkcs8 -in key.pem -out plain.pem`), and keep the
    /// result as private as the password was.
    EncryptedKey,
    /// The key's DER is not the structure its PEM label promises.
    MalformedKey,
    /// A key type no provider signs with here; `algorithm` is its object identifier (and curve).
    UnsupportedKeyType {
        /// The algorithm's object identifier, dotted, with the curve's when there is one.
        algorithm: String,
    },
    /// The key is not the private half of the leaf certificate's public key.
    KeyMismatch,
    /// The crypto library checking the pair refused the key or the certificate; the source is
    /// its error.
    Rejected(Arc<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityError::Unreadable { part, path, source } => {
                write!(f, "client {part} {} cannot be read: {source}", path.display())
            }
            IdentityError::MalformedPem { part, source } => write!(f, "client {part}: malformed PEM: {source}"),
            IdentityError::NoCertificate => f.write_str("client certificate chain: no CERTIFICATE section"),
            IdentityError::NoPrivateKey => f.write_str(
                "client private key: no PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY section (an encrypted key is \
                 reported as such)",
            ),
            IdentityError::SeveralPrivateKeys => f.write_str("client private key: more than one private key"),
            IdentityError::EncryptedKey => f.write_str(
                "client private key is encrypted: decrypt it first (e.g. `openssl pkcs8 -in key.pem -out plain.pem`)",
            ),
            IdentityError::MalformedKey => f.write_str("client private key: malformed DER"),
            IdentityError::UnsupportedKeyType { algorithm } => write!(
                f,
                "client private key: unsupported key type {algorithm} (use ECDSA P-256/P-384/P-521, Ed25519 or RSA)"
            ),
            IdentityError::KeyMismatch => {
                f.write_str("client private key does not match the public key of the chain's first certificate")
            }
            IdentityError::Rejected(e) => write!(f, "client identity rejected: {e}"),
        }
    }
}

impl std::error::Error for IdentityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IdentityError::Unreadable { source, .. } => Some(&**source),
            IdentityError::MalformedPem { source, .. } => Some(&**source),
            IdentityError::Rejected(e) => Some(&**e),
            _ => None,
        }
    }
}

impl ClientIdentity {
    /// An identity from a PEM certificate chain (leaf first, then any intermediates) and a PEM
    /// private key (PKCS#8 `PRIVATE KEY`, SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`),
    /// checked as the [module](self) says.
    ///
    /// # Errors
    /// An [`IdentityError`] saying what is wrong with which input.
    pub fn from_pem(cert_chain_pem: impl AsRef<[u8]>, key_pem: impl AsRef<[u8]>) -> Result<Self, IdentityError> {
        let chain = parse_chain(cert_chain_pem.as_ref())?;
        let (format, key) = parse_key(key_pem.as_ref())?;
        let key_type = key_type(format, &key)?;
        let identity = ClientIdentity { inner: Arc::new(Inner { chain, key, format, key_type }) };
        check_match(&identity)?;
        Ok(identity)
    }

    /// [`from_pem`](Self::from_pem) with the chain and the key read from files (the key's bytes
    /// are zeroed once parsed).
    ///
    /// # Errors
    /// [`IdentityError::Unreadable`] naming the file, or as [`from_pem`](Self::from_pem).
    pub fn from_pem_files(cert_chain: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<Self, IdentityError> {
        let read = |part, path: &Path| {
            std::fs::read(path).map(Zeroizing::new).map_err(|e| IdentityError::Unreadable {
                part,
                path: path.to_owned(),
                source: Arc::new(e),
            })
        };
        let chain = read(IdentityPart::CertificateChain, cert_chain.as_ref())?;
        let key = read(IdentityPart::PrivateKey, key.as_ref())?;
        Self::from_pem(&*chain, &*key)
    }

    /// The certificate chain, leaf first.
    pub fn certificate_chain(&self) -> &[CertificateDer<'static>] {
        &self.inner.chain
    }

    /// The private key's type.
    pub fn key_type(&self) -> KeyType {
        self.inner.key_type
    }

    /// The key as rustls takes it: a copy (rustls's key provider takes it by value), which the
    /// caller hands straight to the library. rustls parses it into its signing key and drops it
    /// (not zeroed: from here on it is the library's copy, as the module says).
    #[cfg(rustls)]
    pub(crate) fn private_key_der(&self) -> PrivateKeyDer<'static> {
        use rustls_pki_types::{PrivatePkcs1KeyDer, PrivatePkcs8KeyDer, PrivateSec1KeyDer};
        let bytes = self.inner.key.to_vec();
        match self.inner.format {
            KeyFormat::Pkcs8 => PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(bytes)),
            KeyFormat::Sec1 => PrivateKeyDer::Sec1(PrivateSec1KeyDer::from(bytes)),
            KeyFormat::Pkcs1 => PrivateKeyDer::Pkcs1(PrivatePkcs1KeyDer::from(bytes)),
        }
    }

    /// The chain and the key as PEM text, as s2n-tls loads them; the key's text is zeroed on
    /// drop.
    #[cfg(s2n)]
    pub(crate) fn pem(&self) -> (String, Zeroizing<String>) {
        let mut chain = String::new();
        for cert in &self.inner.chain {
            chain.push_str(&pem_section("CERTIFICATE", cert));
        }
        let label = match self.inner.format {
            KeyFormat::Pkcs8 => "PRIVATE KEY",
            KeyFormat::Sec1 => "EC PRIVATE KEY",
            KeyFormat::Pkcs1 => "RSA PRIVATE KEY",
        };
        (chain, Zeroizing::new(pem_section(label, &self.inner.key)))
    }

    /// The key's DER, borrowed (for OpenSSL, which parses it itself).
    #[cfg(openssl_provider)]
    pub(crate) fn private_key_bytes(&self) -> &[u8] {
        &self.inner.key
    }
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("certificates", &self.inner.chain.len())
            .field("key_type", &self.inner.key_type)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ClientIdentity {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for ClientIdentity {}

impl std::hash::Hash for ClientIdentity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.inner), state);
    }
}

/// One PEM section: `der` in base64, 64 characters a line, between `label`'s markers. Every
/// intermediate the text passes through is zeroed on drop (it may be a key).
#[cfg(s2n)]
fn pem_section(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let body = Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(der));
    let mut pem = String::with_capacity(body.len() + body.len() / 64 + 2 * label.len() + 40);
    pem.push_str(&format!("-----BEGIN {label}-----\n"));
    for line in body.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

fn parse_chain(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, IdentityError> {
    let malformed = |e| IdentityError::MalformedPem { part: IdentityPart::CertificateChain, source: Arc::new(e) };
    let chain = CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>().map_err(malformed)?;
    if chain.is_empty() {
        return Err(IdentityError::NoCertificate);
    }
    Ok(chain)
}

/// Whether `pem` holds an encrypted key: a PKCS#8 `ENCRYPTED PRIVATE KEY` section, or a legacy
/// OpenSSL one whose headers say `Proc-Type: 4,ENCRYPTED` (which the PEM parser cannot read).
fn is_encrypted(pem: &[u8]) -> bool {
    let contains = |needle: &[u8]| pem.windows(needle.len()).any(|w| w == needle);
    contains(b"-----BEGIN ENCRYPTED PRIVATE KEY-----") || contains(b"Proc-Type: 4,ENCRYPTED")
}

fn parse_key(pem: &[u8]) -> Result<(KeyFormat, Zeroizing<Vec<u8>>), IdentityError> {
    if is_encrypted(pem) {
        return Err(IdentityError::EncryptedKey);
    }
    let mut keys = PrivateKeyDer::pem_slice_iter(pem);
    // The parser's copies are zeroed when dropped (rustls-pki-types zeroizes on request only).
    let key = match keys.next() {
        None => return Err(IdentityError::NoPrivateKey),
        Some(Err(e)) => {
            return Err(IdentityError::MalformedPem { part: IdentityPart::PrivateKey, source: Arc::new(e) })
        }
        Some(Ok(key)) => Zeroizing::new(key),
    };
    let format = match &*key {
        PrivateKeyDer::Pkcs8(_) => KeyFormat::Pkcs8,
        PrivateKeyDer::Sec1(_) => KeyFormat::Sec1,
        PrivateKeyDer::Pkcs1(_) => KeyFormat::Pkcs1,
        _ => return Err(IdentityError::NoPrivateKey),
    };
    if let Some(another) = keys.next() {
        drop(another.map(Zeroizing::new));
        return Err(IdentityError::SeveralPrivateKeys);
    }
    Ok((format, Zeroizing::new(key.secret_der().to_vec())))
}

/// The key's type, from its DER structure.
fn key_type(format: KeyFormat, der: &[u8]) -> Result<KeyType, IdentityError> {
    match format {
        KeyFormat::Pkcs1 => rsa_key_type(der),
        KeyFormat::Sec1 => {
            let key = sec1::EcPrivateKey::try_from(der).map_err(|_| IdentityError::MalformedKey)?;
            ec_key_type(key.parameters.and_then(|p| p.named_curve()))
        }
        KeyFormat::Pkcs8 => {
            let info = pkcs8::PrivateKeyInfoRef::try_from(der).map_err(|_| IdentityError::MalformedKey)?;
            let oid = info.algorithm.oid;
            if oid == RSA_ENCRYPTION {
                rsa_key_type(info.private_key.as_bytes())
            } else if oid == ED25519 {
                Ok(KeyType::Ed25519)
            } else if oid == EC_PUBLIC_KEY {
                let curve = match info.algorithm.parameters {
                    Some(params) => {
                        Some(params.decode_as::<ObjectIdentifier>().map_err(|_| IdentityError::MalformedKey)?)
                    }
                    // Named in the SEC1 structure inside, if anywhere.
                    None => sec1::EcPrivateKey::try_from(info.private_key.as_bytes())
                        .map_err(|_| IdentityError::MalformedKey)?
                        .parameters
                        .and_then(|p| p.named_curve()),
                };
                ec_key_type(curve)
            } else {
                Err(IdentityError::UnsupportedKeyType { algorithm: oid.to_string() })
            }
        }
    }
}

fn ec_key_type(curve: Option<ObjectIdentifier>) -> Result<KeyType, IdentityError> {
    match curve {
        Some(c) if c == SECP256R1 => Ok(KeyType::EcdsaP256),
        Some(c) if c == SECP384R1 => Ok(KeyType::EcdsaP384),
        Some(c) if c == SECP521R1 => Ok(KeyType::EcdsaP521),
        Some(c) => Err(IdentityError::UnsupportedKeyType { algorithm: format!("{EC_PUBLIC_KEY} on curve {c}") }),
        None => Err(IdentityError::UnsupportedKeyType { algorithm: format!("{EC_PUBLIC_KEY} without a named curve") }),
    }
}

/// A PKCS#1 `RSAPrivateKey`: nine integers (two-prime; multi-prime keys, with a tenth field,
/// are not supported), the second the modulus.
fn rsa_key_type(der: &[u8]) -> Result<KeyType, IdentityError> {
    let fields = Vec::<UintRef<'_>>::from_der(der).map_err(|_| IdentityError::MalformedKey)?;
    let modulus = match fields.as_slice() {
        [_version, modulus, _e, _d, _p, _q, _dp, _dq, _qinv] => modulus.as_bytes(),
        _ => return Err(IdentityError::MalformedKey),
    };
    let leading = modulus.first().map_or(8, |b| b.leading_zeros());
    let bits = u32::try_from(modulus.len() * 8).unwrap_or(u32::MAX).saturating_sub(leading);
    Ok(KeyType::Rsa { bits })
}

/// Checks that the key is the leaf certificate's, with the first crypto library compiled in
/// (see the module's documentation).
#[allow(unreachable_code)] // in builds that compile one of the checks
fn check_match(identity: &ClientIdentity) -> Result<(), IdentityError> {
    #[cfg(provider = "rustls-ring")]
    return check_with_rustls(identity, &rustls::crypto::ring::default_provider());
    #[cfg(all(not(provider = "rustls-ring"), provider = "rustls-aws-lc"))]
    return check_with_rustls(identity, &rustls::crypto::aws_lc_rs::default_provider());
    #[cfg(all(not(provider = "rustls-ring"), not(provider = "rustls-aws-lc"), provider = "rustls-aws-lc-fips"))]
    return check_with_rustls(identity, &rustls::crypto::default_fips_provider());
    #[cfg(all(
        not(any(provider = "rustls-ring", provider = "rustls-aws-lc", provider = "rustls-aws-lc-fips")),
        openssl_provider
    ))]
    return check_with_openssl(identity);
    #[cfg(all(
        not(any(provider = "rustls-ring", provider = "rustls-aws-lc", provider = "rustls-aws-lc-fips")),
        not(openssl_provider),
        s2n
    ))]
    return check_with_aws_lc(identity);
    #[cfg(all(
        not(any(provider = "rustls-ring", provider = "rustls-aws-lc", provider = "rustls-aws-lc-fips")),
        not(openssl_provider),
        not(s2n),
        provider = "rustls-custom"
    ))]
    if let Ok(provider) = crate::provider::custom::crypto_provider() {
        return check_with_rustls(identity, &provider);
    }
    // Nothing here to check with: the TLS library checks when the client's TLS is prepared.
    let _ = identity;
    Ok(())
}

#[cfg(rustls)]
fn check_with_rustls(identity: &ClientIdentity, crypto: &rustls::crypto::CryptoProvider) -> Result<(), IdentityError> {
    let key = crypto
        .key_provider
        .load_private_key(identity.private_key_der())
        .map_err(|e| IdentityError::Rejected(Arc::new(e)))?;
    let certified = rustls::sign::CertifiedKey::new(identity.inner.chain.clone(), key);
    match certified.keys_match() {
        Ok(()) => Ok(()),
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => Err(IdentityError::KeyMismatch),
        Err(e) => Err(IdentityError::Rejected(Arc::new(e))),
    }
}

#[cfg(openssl_provider)]
#[allow(dead_code)] // used only when no rustls provider of ours is compiled
fn check_with_openssl(identity: &ClientIdentity) -> Result<(), IdentityError> {
    let rejected = |e: openssl::error::ErrorStack| IdentityError::Rejected(Arc::new(e));
    let key = openssl_private_key(identity).map_err(rejected)?;
    let leaf = openssl::x509::X509::from_der(&identity.inner.chain[0]).map_err(rejected)?;
    let public = leaf.public_key().map_err(rejected)?;
    if public.public_eq(&key) {
        Ok(())
    } else {
        Err(IdentityError::KeyMismatch)
    }
}

/// The check with aws-lc-rs, s2n-tls's libcrypto: the public key the private key derives,
/// against the bits of the leaf certificate's SubjectPublicKeyInfo (an EC point, an Ed25519 key,
/// or a DER `RSAPublicKey`, in both spellings).
#[cfg(s2n)]
#[allow(dead_code)] // used only when neither rustls's crypto nor OpenSSL is compiled
fn check_with_aws_lc(identity: &ClientIdentity) -> Result<(), IdentityError> {
    use aws_lc_rs::signature::{self, KeyPair as _};
    use pkcs8::der::Decode as _;
    let rejected = |e: aws_lc_rs::error::KeyRejected| IdentityError::Rejected(Arc::new(e));
    let der = &identity.inner.key[..];
    let ec = |alg| signature::EcdsaKeyPair::from_private_key_der(alg, der).map(|k| k.public_key().as_ref().to_vec());
    let public = match (identity.inner.key_type, identity.inner.format) {
        (KeyType::EcdsaP256, _) => ec(&signature::ECDSA_P256_SHA256_ASN1_SIGNING),
        (KeyType::EcdsaP384, _) => ec(&signature::ECDSA_P384_SHA384_ASN1_SIGNING),
        (KeyType::EcdsaP521, _) => ec(&signature::ECDSA_P521_SHA512_ASN1_SIGNING),
        (KeyType::Ed25519, _) => {
            signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map(|k| k.public_key().as_ref().to_vec())
        }
        (KeyType::Rsa { .. }, KeyFormat::Pkcs1) => {
            signature::RsaKeyPair::from_der(der).map(|k| k.public_key().as_ref().to_vec())
        }
        (KeyType::Rsa { .. }, _) => signature::RsaKeyPair::from_pkcs8(der).map(|k| k.public_key().as_ref().to_vec()),
    }
    .map_err(rejected)?;
    let leaf =
        x509_cert::Certificate::from_der(&identity.inner.chain[0]).map_err(|e| IdentityError::Rejected(Arc::new(e)))?;
    match leaf.tbs_certificate().subject_public_key_info().subject_public_key.as_bytes() {
        Some(bits) if bits == public.as_slice() => Ok(()),
        _ => Err(IdentityError::KeyMismatch),
    }
}

/// The key as OpenSSL's `EVP_PKEY` (OpenSSL's decoder takes all three encodings).
#[cfg(openssl_provider)]
pub(crate) fn openssl_private_key(
    identity: &ClientIdentity,
) -> Result<openssl::pkey::PKey<openssl::pkey::Private>, openssl::error::ErrorStack> {
    match identity.inner.format {
        KeyFormat::Pkcs1 => openssl::rsa::Rsa::private_key_from_der(identity.private_key_bytes())
            .and_then(openssl::pkey::PKey::from_rsa),
        KeyFormat::Sec1 => openssl::ec::EcKey::private_key_from_der(identity.private_key_bytes())
            .and_then(openssl::pkey::PKey::from_ec_key),
        // OpenSSL's PKCS#8 decoder refuses version 2 (RFC 5958, the public key included, as
        // ring writes Ed25519 keys): the same key without its public half is version 1.
        KeyFormat::Pkcs8 => openssl::pkey::PKey::private_key_from_pkcs8(identity.private_key_bytes()).or_else(|e| {
            match pkcs8_without_public_key(identity.private_key_bytes()) {
                Some(v1) => openssl::pkey::PKey::private_key_from_pkcs8(&v1),
                None => Err(e),
            }
        }),
    }
}

/// A PKCS#8 version 2 key re-encoded as version 1 (without its public key), zeroed on drop;
/// `None` for a key without a public key, or one that cannot be re-encoded.
#[cfg(openssl_provider)]
fn pkcs8_without_public_key(der: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    use pkcs8::der::Encode;
    let mut info = pkcs8::PrivateKeyInfoRef::try_from(der).ok()?;
    info.public_key.take()?;
    info.to_der().ok().map(Zeroizing::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encrypted_keys_are_recognised_in_both_forms() {
        assert!(is_encrypted(b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMII=\n-----END ENCRYPTED PRIVATE KEY-----\n"));
        assert!(is_encrypted(
            b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nMII=\n"
        ));
        assert!(!is_encrypted(b"-----BEGIN PRIVATE KEY-----\nMII=\n-----END PRIVATE KEY-----\n"));
    }

    #[test]
    fn key_types_name_themselves_and_know_fips() {
        assert_eq!(KeyType::Rsa { bits: 2048 }.to_string(), "RSA 2048");
        assert!(KeyType::Rsa { bits: 2048 }.is_fips_approved());
        assert!(!KeyType::Rsa { bits: 1024 }.is_fips_approved());
        assert!(!KeyType::Ed25519.is_fips_approved());
        assert!(KeyType::EcdsaP384.is_fips_approved());
    }
}
