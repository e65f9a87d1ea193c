//! Whether a client identity's key is the private half of its leaf certificate's public key,
//! checked with a crypto library the build already has (the module above says which).

#[cfg(any(rustls, openssl_provider, s2n))]
use std::sync::Arc;

#[cfg(openssl_provider)]
use zeroize::Zeroizing;

#[allow(unused_imports)] // which are used depends on the providers compiled
use super::{ClientIdentity, IdentityError, KeyFormat, KeyType};
#[cfg(not(no_tls))]
use crate::provider::compiled::Compiled;
use crate::provider::TlsProvider;

/// Checks that the key is the leaf certificate's, with the crypto library of the first provider
/// compiled in ([`TlsProvider::ALL`]'s order; see [`ClientIdentity`]'s documentation).
#[cfg_attr(no_tls, allow(unused_variables))]
pub(super) fn check_match(identity: &ClientIdentity) -> Result<(), IdentityError> {
    // Nothing to check with (`none`), or rustls-custom before the application installed its
    // provider: the TLS library checks when the client's TLS is prepared.
    let Some(compiled) = TlsProvider::ALL.first().and_then(|p| p.compiled().ok()) else { return Ok(()) };
    match compiled {
        #[cfg(rustls)]
        Compiled::Rustls(crypto) => match crypto.provider() {
            Some(provider) => check_with_rustls(identity, &provider),
            None => Ok(()),
        },
        #[cfg(openssl_provider)]
        Compiled::OpenSsl => check_with_openssl(identity),
        #[cfg(s2n_plain)]
        Compiled::S2nTls => check_with_aws_lc(identity),
        #[cfg(s2n_fips)]
        Compiled::S2nTlsFips => check_with_aws_lc(identity),
    }
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
