//! The client identity's key as OpenSSL takes it (`EVP_PKEY`), and the pair checked with it.

use std::sync::Arc;

use openssl::error::ErrorStack;
use openssl::pkey::{PKey, Private};
use openssl::x509::X509;
use zeroize::Zeroizing;

use crate::error::{Error, TlsConfigError};
use crate::identity::{ClientIdentity, KeyFormat};
use crate::provider::TlsProvider;

/// The key, loaded by OpenSSL and checked to be the leaf certificate's (`EVP_PKEY_eq`).
pub(super) fn checked_private_key(provider: TlsProvider, identity: &ClientIdentity) -> Result<PKey<Private>, Error> {
    let refused = |e: ErrorStack| Error::TlsConfig {
        provider,
        reason: TlsConfigError::ClientKeyRefused { key_type: identity.key_type(), source: Arc::new(e) },
    };
    let config_error = |e: ErrorStack| Error::TlsConfig { provider, reason: TlsConfigError::Library(Arc::new(e)) };
    let key = private_key(identity).map_err(refused)?;
    let leaf = X509::from_der(&identity.certificate_chain()[0]).map_err(config_error)?;
    if leaf.public_key().map_err(config_error)?.public_eq(&key) {
        Ok(key)
    } else {
        Err(Error::TlsConfig { provider, reason: TlsConfigError::ClientKeyMismatch })
    }
}

/// The key as OpenSSL's `EVP_PKEY` (OpenSSL's decoder takes all three encodings).
fn private_key(identity: &ClientIdentity) -> Result<PKey<Private>, ErrorStack> {
    let (format, der) = identity.key_der();
    match format {
        KeyFormat::Pkcs1 => openssl::rsa::Rsa::private_key_from_der(der).and_then(PKey::from_rsa),
        KeyFormat::Sec1 => openssl::ec::EcKey::private_key_from_der(der).and_then(PKey::from_ec_key),
        // OpenSSL's PKCS#8 decoder refuses version 2 (RFC 5958, the public key included, as
        // ring writes Ed25519 keys): the same key without its public half is version 1.
        KeyFormat::Pkcs8 => PKey::private_key_from_pkcs8(der).or_else(|e| match pkcs8_without_public_key(der) {
            Some(v1) => PKey::private_key_from_pkcs8(&v1),
            None => Err(e),
        }),
    }
}

/// A PKCS#8 version 2 key re-encoded as version 1 (without its public key), zeroed on drop;
/// `None` for a key without a public key, or one that cannot be re-encoded.
fn pkcs8_without_public_key(der: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    use pkcs8::der::Encode;
    let mut info = pkcs8::PrivateKeyInfoRef::try_from(der).ok()?;
    info.public_key.take()?;
    info.to_der().ok().map(Zeroizing::new)
}
