//! [`ClientIdentity`]: the certificate chain and private key a client presents for mutual TLS,
//! checked when it is built so that a broken pair is the caller's error at once, never a failed
//! handshake later.
//!
//! What is checked and how the key is kept: [`ClientIdentity`]. Rotation from files:
//! [`WatchedIdentity`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::CertificateDer;
#[cfg(rustls)]
use rustls_pki_types::PrivateKeyDer;
use zeroize::Zeroizing;

mod key_match;
mod parse;
mod pem;
mod watched;

pub use watched::WatchedIdentity;

/// A client certificate chain and its private key, for servers that ask for one (mutual TLS).
///
/// Built with [`from_pem`](ClientIdentity::from_pem) or
/// [`from_pem_files`](ClientIdentity::from_pem_files), which check the pair (see
/// [`IdentityError`]), and given to a client with
/// [`Builder::client_identity`](crate::Builder::client_identity). Cloning is cheap (the clones
/// share one copy of the key); two identities are equal when one is a clone of the other.
///
/// Its `Debug` shows the key's type and the number of certificates, never the key.
///
/// What is checked, in order: the chain holds a certificate; the key is one PEM private key
/// (PKCS#8, SEC1 or PKCS#1), not encrypted; its type is one every provider signs with
/// ([`KeyType`]); and it is the private half of the leaf certificate's public key.
///
/// **The key/certificate match** is checked twice. Here, without any crypto library: the key's
/// algorithm and curve against the certificate's, and its public half where the key's encoding
/// carries one (every RSA key; the SEC1 and PKCS#8 v2 keys OpenSSL, ring and aws-lc write).
/// Then by the provider that presents the key, with its own crypto, when a client's TLS is
/// prepared: a key it cannot load is
/// [`TlsConfigError::ClientKeyRefused`](crate::TlsConfigError::ClientKeyRefused) (ring and
/// P-521, say) and a pair it finds apart is
/// [`TlsConfigError::ClientKeyMismatch`](crate::TlsConfigError::ClientKeyMismatch) (a key
/// without its public half), both configuration errors before any handshake. So a key type one
/// compiled provider cannot use is still taken for the others in the same build.
///
/// **Key material.** The key's DER is held in memory only, zeroed when the last clone of the
/// identity is dropped (`zeroize`), never logged, and not in `Debug`. Each TLS library takes its
/// own copy when a client's TLS is prepared and keeps it as long as that client's configuration
/// lives (rustls: the signing key in its `ClientConfig`; OpenSSL: the `EVP_PKEY` in its
/// `SSL_CTX`, freed with it; s2n-tls: the chain and key in its `s2n_config`, loaded from PEM text
/// we zero once loaded, freed with the config). A configuration lives while its client does and,
/// after a [`WatchedIdentity`] rotation, until the last connection made with it closes.
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
pub(crate) enum KeyFormat {
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
    /// A key type no provider signs with here; `algorithm` is its object identifier (and curve),
    /// after its name where one is known (`RSASSA-PSS (1.2.840.113549.1.1.10)`).
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
                "client private key: unsupported key type {algorithm} (use ECDSA P-256/P-384/P-521, Ed25519 or RSA \
                 with the rsaEncryption algorithm)"
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
    /// checked as the [type](ClientIdentity) says.
    ///
    /// # Errors
    /// An [`IdentityError`] saying what is wrong with which input.
    pub fn from_pem(cert_chain_pem: impl AsRef<[u8]>, key_pem: impl AsRef<[u8]>) -> Result<Self, IdentityError> {
        let chain = parse::parse_chain(cert_chain_pem.as_ref())?;
        let (format, key) = parse::parse_key(key_pem.as_ref())?;
        let key_type = parse::key_type(format, &key)?;
        let identity = ClientIdentity { inner: Arc::new(Inner { chain, key, format, key_type }) };
        key_match::check_match(&identity)?;
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
        let (format, der) = self.key_der();
        let bytes = der.to_vec();
        match format {
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

    /// The key's encoding and DER, borrowed (for the libraries that parse it themselves, and
    /// the backends' own check of the pair).
    pub(crate) fn key_der(&self) -> (KeyFormat, &[u8]) {
        (self.inner.format, &self.inner.key)
    }

    /// The leaf certificate's public key as its SubjectPublicKeyInfo holds it (an EC point, an
    /// Ed25519 key, or a DER `RSAPublicKey`), for the backends that check the pair with their own
    /// crypto; `None` where the bit string is not whole bytes.
    #[cfg(s2n)]
    pub(crate) fn leaf_public_key_bits(&self) -> Result<Option<&[u8]>, pkcs8::der::Error> {
        key_match::leaf_public_key(&self.inner.chain[0]).map(|spki| spki.subject_public_key.as_bytes())
    }
}

/// Where a client's identity comes from: one pair for the client's life, or files read again
/// when they change.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdentitySource {
    Fixed(ClientIdentity),
    Watched(WatchedIdentity),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_types_name_themselves_and_know_fips() {
        assert_eq!(KeyType::Rsa { bits: 2048 }.to_string(), "RSA 2048");
        assert!(KeyType::Rsa { bits: 2048 }.is_fips_approved());
        assert!(!KeyType::Rsa { bits: 1024 }.is_fips_approved());
        assert!(!KeyType::Ed25519.is_fips_approved());
        assert!(KeyType::EcdsaP384.is_fips_approved());
    }
}
