//! Reading a client identity's PEM input: the certificate chain, and the one private key with
//! its encoding and type, read from its DER structure.

use std::sync::Arc;

use pkcs8::der::asn1::UintRef;
use pkcs8::der::Decode;
use pkcs8::ObjectIdentifier;
use rustls_pki_types::CertificateDer;
use zeroize::Zeroizing;

use super::{IdentityError, IdentityPart, KeyFormat, KeyType};

pub(super) const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// `id-RSASSA-PSS`: an RSA key restricted to PSS signatures (RFC 4055).
pub(super) const RSASSA_PSS: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.10");
pub(super) const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
pub(super) const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const SECP256R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const SECP384R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const SECP521R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.35");

pub(super) fn parse_chain(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, IdentityError> {
    let malformed = |e| IdentityError::MalformedPem { part: IdentityPart::CertificateChain, source: Arc::new(e) };
    let mut chain = Vec::new();
    for section in super::pem::sections(pem) {
        let section = section.map_err(malformed)?;
        if section.label == b"CERTIFICATE" {
            let mut der = section.decode().map_err(malformed)?;
            chain.push(CertificateDer::from(std::mem::take(&mut *der)));
        }
    }
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

pub(super) fn parse_key(pem: &[u8]) -> Result<(KeyFormat, Zeroizing<Vec<u8>>), IdentityError> {
    if is_encrypted(pem) {
        return Err(IdentityError::EncryptedKey);
    }
    let malformed = |e| IdentityError::MalformedPem { part: IdentityPart::PrivateKey, source: Arc::new(e) };
    let mut found = None;
    for section in super::pem::sections(pem) {
        let section = section.map_err(malformed)?;
        let format = match section.label {
            b"PRIVATE KEY" => KeyFormat::Pkcs8,
            b"EC PRIVATE KEY" => KeyFormat::Sec1,
            b"RSA PRIVATE KEY" => KeyFormat::Pkcs1,
            _ => continue,
        };
        if found.is_some() {
            return Err(IdentityError::SeveralPrivateKeys);
        }
        found = Some((format, section.decode().map_err(malformed)?));
    }
    found.ok_or(IdentityError::NoPrivateKey)
}

/// The key's type, from its DER structure.
pub(super) fn key_type(format: KeyFormat, der: &[u8]) -> Result<KeyType, IdentityError> {
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
            } else if oid == RSASSA_PSS {
                Err(IdentityError::UnsupportedKeyType { algorithm: format!("RSASSA-PSS ({oid})") })
            } else {
                Err(IdentityError::UnsupportedKeyType { algorithm: oid.to_string() })
            }
        }
    }
}

pub(super) fn ec_key_type(curve: Option<ObjectIdentifier>) -> Result<KeyType, IdentityError> {
    match curve {
        Some(c) if c == SECP256R1 => Ok(KeyType::EcdsaP256),
        Some(c) if c == SECP384R1 => Ok(KeyType::EcdsaP384),
        Some(c) if c == SECP521R1 => Ok(KeyType::EcdsaP521),
        Some(c) => Err(IdentityError::UnsupportedKeyType { algorithm: format!("{EC_PUBLIC_KEY} on curve {c}") }),
        None => Err(IdentityError::UnsupportedKeyType { algorithm: format!("{EC_PUBLIC_KEY} without a named curve") }),
    }
}

/// A PKCS#1 `RSAPrivateKey`'s modulus and public exponent: nine integers (two-prime; multi-prime
/// keys, with a tenth field, are not supported), the second and third these two.
pub(super) fn rsa_public(der: &[u8]) -> Result<(&[u8], &[u8]), IdentityError> {
    let fields = Vec::<UintRef<'_>>::from_der(der).map_err(|_| IdentityError::MalformedKey)?;
    match fields.as_slice() {
        [_version, modulus, exponent, _d, _p, _q, _dp, _dq, _qinv] => Ok((modulus.as_bytes(), exponent.as_bytes())),
        _ => Err(IdentityError::MalformedKey),
    }
}

/// An RSA key's type, from its modulus's size.
fn rsa_key_type(der: &[u8]) -> Result<KeyType, IdentityError> {
    let (modulus, _) = rsa_public(der)?;
    let leading = modulus.first().map_or(8, |b| b.leading_zeros());
    let bits = u32::try_from(modulus.len() * 8).unwrap_or(u32::MAX).saturating_sub(leading);
    Ok(KeyType::Rsa { bits })
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
}
