//! The client identity's key checked with aws-lc-rs, s2n-tls's libcrypto, before s2n-tls loads
//! it: the public key the private key derives against the bits of the leaf certificate's
//! SubjectPublicKeyInfo (an EC point, an Ed25519 key, or a DER `RSAPublicKey`), so that a key
//! whose encoding lacks its public half still gets a typed answer.

use std::sync::Arc;

use aws_lc_rs::signature::{self, KeyPair as _};

use crate::error::{Error, TlsConfigError};
use crate::identity::{ClientIdentity, KeyFormat, KeyType};
use crate::provider::TlsProvider;

/// Checks that aws-lc-rs loads the key and that it is the leaf certificate's.
pub(super) fn check_pair(provider: TlsProvider, identity: &ClientIdentity) -> Result<(), Error> {
    let key_type = identity.key_type();
    let refused = |source: Arc<dyn std::error::Error + Send + Sync>| Error::TlsConfig {
        provider,
        reason: TlsConfigError::ClientKeyRefused { key_type, source },
    };
    let (format, der) = identity.key_der();
    let ec = |alg| signature::EcdsaKeyPair::from_private_key_der(alg, der).map(|k| k.public_key().as_ref().to_vec());
    let public = match (key_type, format) {
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
    .map_err(|e| refused(Arc::new(e)))?;
    match identity.leaf_public_key_bits().map_err(|e| refused(Arc::new(e)))? {
        Some(bits) if bits == public.as_slice() => Ok(()),
        _ => Err(Error::TlsConfig { provider, reason: TlsConfigError::ClientKeyMismatch }),
    }
}
