//! Whether a client identity's key is the private half of its leaf certificate's public key, as
//! far as the key's own encoding tells, with no crypto library: the algorithm and curve always;
//! the public key itself where the key carries it (an RSA key's modulus and exponent; the public
//! point of a SEC1 key, which OpenSSL and ring write; a PKCS#8 v2 key's public key). A key that
//! carries no public half is checked by the provider that presents it, with its own crypto, when
//! the client's TLS is prepared (`TlsConfigError::ClientKeyMismatch`).

use std::sync::Arc;

use pkcs8::der::asn1::{AnyRef, UintRef};
use pkcs8::der::{Decode, Reader, SliceReader, Tag, TagNumber};
use pkcs8::{ObjectIdentifier, PrivateKeyInfoRef, SubjectPublicKeyInfoRef};

use super::parse::{ec_key_type, rsa_public, EC_PUBLIC_KEY, ED25519, RSASSA_PSS, RSA_ENCRYPTION};
use super::{ClientIdentity, IdentityError, KeyFormat, KeyType};

/// The public half a private key's encoding carries, when it does.
#[derive(Debug, PartialEq, Eq)]
enum PublicHalf<'a> {
    /// An RSA key's modulus and public exponent (every RSA private key holds both).
    Rsa { modulus: &'a [u8], exponent: &'a [u8] },
    /// An EC point (SEC1 encoding) or an Ed25519 public key, as the certificate's
    /// SubjectPublicKeyInfo holds it.
    Bits(&'a [u8]),
}

/// Checks the identity's key against its leaf certificate's public key (see the module).
pub(super) fn check_match(identity: &ClientIdentity) -> Result<(), IdentityError> {
    let rejected = |e: pkcs8::der::Error| IdentityError::Rejected(Arc::new(e));
    let leaf = leaf_public_key(&identity.inner.chain[0]).map_err(rejected)?;
    if !same_algorithm(identity.inner.key_type, &leaf) {
        return Err(IdentityError::KeyMismatch);
    }
    let theirs = leaf.subject_public_key.as_bytes().ok_or(IdentityError::KeyMismatch)?;
    match public_half(identity.inner.format, identity.inner.key_type, &identity.inner.key)? {
        None => Ok(()),
        Some(PublicHalf::Rsa { modulus, exponent }) => {
            let fields = Vec::<UintRef<'_>>::from_der(theirs).map_err(rejected)?;
            match fields.as_slice() {
                [n, e] if n.as_bytes() == modulus && e.as_bytes() == exponent => Ok(()),
                _ => Err(IdentityError::KeyMismatch),
            }
        }
        // A compressed point (first byte 2 or 3) against an uncompressed one (4) would need the
        // curve's arithmetic to compare: left to the provider.
        Some(PublicHalf::Bits(ours)) if ours.first() != theirs.first() && ours.len() != theirs.len() => Ok(()),
        Some(PublicHalf::Bits(ours)) if ours == theirs => Ok(()),
        Some(PublicHalf::Bits(_)) => Err(IdentityError::KeyMismatch),
    }
}

/// The SubjectPublicKeyInfo of a DER certificate: `Certificate ::= SEQUENCE { tbsCertificate
/// SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, validity, subject,
/// subjectPublicKeyInfo, .. }, .. }` (RFC 5280, 4.1).
pub(super) fn leaf_public_key(cert: &[u8]) -> Result<SubjectPublicKeyInfoRef<'_>, pkcs8::der::Error> {
    let mut reader = SliceReader::new(cert)?;
    reader.sequence(|certificate| {
        let spki = certificate.sequence(|tbs| {
            if Tag::peek(tbs)? == (Tag::ContextSpecific { constructed: true, number: TagNumber(0) }) {
                AnyRef::decode(tbs)?;
            }
            for _serial_signature_issuer_validity_subject in 0..5 {
                AnyRef::decode(tbs)?;
            }
            let spki = SubjectPublicKeyInfoRef::decode(tbs)?;
            skip_rest(tbs)?;
            Ok::<_, pkcs8::der::Error>(spki)
        })?;
        skip_rest(certificate)?;
        Ok::<_, pkcs8::der::Error>(spki)
    })
}

fn skip_rest<'a>(reader: &mut SliceReader<'a>) -> Result<(), pkcs8::der::Error> {
    while !reader.is_finished() {
        AnyRef::decode(reader)?;
    }
    Ok(())
}

/// Whether the certificate's key is of the key's algorithm (and curve).
fn same_algorithm(key_type: KeyType, leaf: &SubjectPublicKeyInfoRef<'_>) -> bool {
    let oid = leaf.algorithm.oid;
    match key_type {
        KeyType::Rsa { .. } => oid == RSA_ENCRYPTION || oid == RSASSA_PSS,
        KeyType::Ed25519 => oid == ED25519,
        KeyType::EcdsaP256 | KeyType::EcdsaP384 | KeyType::EcdsaP521 => {
            let curve = leaf.algorithm.parameters.and_then(|p| p.decode_as::<ObjectIdentifier>().ok());
            oid == EC_PUBLIC_KEY && ec_key_type(curve).is_ok_and(|curve| curve == key_type)
        }
    }
}

/// The public half `der` (a key of `format` and `key_type`, parsed before) carries, if any.
fn public_half(format: KeyFormat, key_type: KeyType, der: &[u8]) -> Result<Option<PublicHalf<'_>>, IdentityError> {
    match format {
        KeyFormat::Pkcs1 => rsa_public_half(der).map(Some),
        KeyFormat::Sec1 => Ok(sec1::EcPrivateKey::try_from(der)
            .map_err(|_| IdentityError::MalformedKey)?
            .public_key
            .map(PublicHalf::Bits)),
        KeyFormat::Pkcs8 => {
            let info = PrivateKeyInfoRef::try_from(der).map_err(|_| IdentityError::MalformedKey)?;
            let inner = info.private_key.as_bytes();
            let outer = info.public_key.and_then(|bits| bits.as_bytes()).map(PublicHalf::Bits);
            match key_type {
                KeyType::Rsa { .. } => rsa_public_half(inner).map(Some),
                KeyType::EcdsaP256 | KeyType::EcdsaP384 | KeyType::EcdsaP521 => {
                    let sec1 = sec1::EcPrivateKey::try_from(inner).map_err(|_| IdentityError::MalformedKey)?;
                    Ok(sec1.public_key.map(PublicHalf::Bits).or(outer))
                }
                KeyType::Ed25519 => Ok(outer),
            }
        }
    }
}

/// A PKCS#1 `RSAPrivateKey`'s public half.
fn rsa_public_half(der: &[u8]) -> Result<PublicHalf<'_>, IdentityError> {
    rsa_public(der).map(|(modulus, exponent)| PublicHalf::Rsa { modulus, exponent })
}
