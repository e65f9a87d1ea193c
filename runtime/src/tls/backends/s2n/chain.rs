//! What a server's certificate chain must use, checked after s2n-tls has validated it.
//!
//! s2n-tls's security policy `20251014` limits the signatures of the handshake itself, but it has
//! no certificate signature or key preferences: a chain signed with SHA-1, or a leaf with an
//! RSA-1024 key, validates. The named policies that do restrict certificates either drop
//! post-quantum key exchange or TLS 1.2, or (`20251015`, the FIPS default) restrict signatures
//! but not key sizes and change the cipher suites. So the policy stays, and the chain s2n-tls
//! validated (trust anchor included) is checked here, after the handshake and before any request
//! byte is sent, against the algorithm set rustls's verifier (webpki) accepts with aws-lc-rs:
//!
//! - every signature in the chain is RSA PKCS#1 with SHA-256/384/512, RSA-PSS with
//!   SHA-256/384/512 (MGF1 with the same hash, salt as long as the hash), ECDSA with
//!   SHA-256/384/512, or Ed25519. The trust anchor's own signature is not checked (it is trusted,
//!   not verified) unless it is the only certificate: a server certificate trusted directly still
//!   has its own signature judged, as webpki does;
//! - every public key (the anchor's included: it verifies the next certificate's signature) is
//!   RSA of 2048 to 8192 bits, ECDSA on P-256, P-384 or P-521, or Ed25519.
//!
//! It is looser than webpki on one point: curve and hash are not paired (webpki with ring has no
//! P-521 and no ECDSA with SHA-512); both are sound choices, so they pass.

use std::fmt;

use der::asn1::{ObjectIdentifier as Oid, UintRef};
use der::{Decode, Sequence};
use x509_cert::spki::AlgorithmIdentifierOwned;
use x509_cert::Certificate;

/// The OIDs the checks name (RFC 3279, 4055, 5480, 5758, 8410).
mod oid {
    use super::Oid;

    pub(super) const RSA_ENCRYPTION: Oid = Oid::new_unwrap("1.2.840.113549.1.1.1");
    pub(super) const RSASSA_PSS: Oid = Oid::new_unwrap("1.2.840.113549.1.1.10");
    pub(super) const SHA256_WITH_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.11");
    pub(super) const SHA384_WITH_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.12");
    pub(super) const SHA512_WITH_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.13");
    pub(super) const MGF1: Oid = Oid::new_unwrap("1.2.840.113549.1.1.8");
    pub(super) const EC_PUBLIC_KEY: Oid = Oid::new_unwrap("1.2.840.10045.2.1");
    pub(super) const ECDSA_WITH_SHA256: Oid = Oid::new_unwrap("1.2.840.10045.4.3.2");
    pub(super) const ECDSA_WITH_SHA384: Oid = Oid::new_unwrap("1.2.840.10045.4.3.3");
    pub(super) const ECDSA_WITH_SHA512: Oid = Oid::new_unwrap("1.2.840.10045.4.3.4");
    pub(super) const P256: Oid = Oid::new_unwrap("1.2.840.10045.3.1.7");
    pub(super) const P384: Oid = Oid::new_unwrap("1.3.132.0.34");
    pub(super) const P521: Oid = Oid::new_unwrap("1.3.132.0.35");
    pub(super) const ED25519: Oid = Oid::new_unwrap("1.3.101.112");
    pub(super) const SHA256: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.1");
    pub(super) const SHA384: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.2");
    pub(super) const SHA512: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.3");
}

/// RSASSA-PSS-params (RFC 4055 section 3.1); absent fields take the RFC's defaults (SHA-1,
/// MGF1 with SHA-1, salt 20, trailer 1), which the checks below refuse or accept as such.
#[derive(Sequence)]
struct PssParams {
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    hash: Option<AlgorithmIdentifierOwned>,
    #[asn1(context_specific = "1", tag_mode = "EXPLICIT", optional = "true")]
    mask: Option<AlgorithmIdentifierOwned>,
    #[asn1(context_specific = "2", tag_mode = "EXPLICIT", optional = "true")]
    salt: Option<u32>,
    #[asn1(context_specific = "3", tag_mode = "EXPLICIT", optional = "true")]
    trailer: Option<u32>,
}

/// RSAPublicKey (RFC 8017 appendix A.1.1).
#[derive(Sequence)]
struct RsaPublicKey<'a> {
    modulus: UintRef<'a>,
    #[allow(dead_code)] // read to check the structure; only the modulus size is judged
    exponent: UintRef<'a>,
}

/// The smallest RSA modulus accepted, in bits (as webpki).
pub(crate) const MIN_RSA_BITS: usize = 2048;
/// The largest RSA modulus accepted, in bits (as webpki).
pub(crate) const MAX_RSA_BITS: usize = 8192;

/// Why a validated chain is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainRejection {
    /// Position in the chain: 0 is the server's own certificate, the last is the trust anchor.
    pub(crate) position: usize,
    /// How many certificates the chain has.
    pub(crate) chain_len: usize,
    /// The certificate's subject, as text.
    pub(crate) subject: String,
    /// What is wrong with it.
    pub(crate) reason: Weakness,
}

/// What makes a certificate unacceptable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Weakness {
    /// Signed with an algorithm outside the accepted set (SHA-1, MD5, DSA, SHA-224, …).
    Signature {
        /// The algorithm's dotted OID, and its name when known.
        algorithm: String,
    },
    /// An RSA key outside [`MIN_RSA_BITS`]..=[`MAX_RSA_BITS`].
    RsaKeySize {
        /// The modulus size in bits.
        bits: usize,
    },
    /// An EC key on a curve outside P-256, P-384 and P-521.
    Curve {
        /// The curve's dotted OID, and its name when known.
        curve: String,
    },
    /// A key of any other type (DSA, GOST, unknown).
    KeyType {
        /// The key algorithm's dotted OID, and its name when known.
        algorithm: String,
    },
    /// The certificate could not be parsed (s2n-tls accepted it; we cannot judge it): the
    /// parser's error, also the rejection's source.
    Unparsable(der::Error),
    /// The certificate's RSA public key could not be parsed.
    UnparsableRsaKey,
    /// s2n-tls handed over an empty validated chain.
    EmptyChain,
}

impl ChainRejection {
    /// Whether the problem is weak cryptography (as opposed to a certificate we could not read).
    pub(crate) fn is_weak_algorithm(&self) -> bool {
        !matches!(self.reason, Weakness::Unparsable(_) | Weakness::UnparsableRsaKey | Weakness::EmptyChain)
    }
}

impl fmt::Display for ChainRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let role = match self.position {
            0 => "the server's certificate",
            p if p + 1 == self.chain_len => "the trust anchor",
            _ => "an intermediate certificate",
        };
        write!(f, "{role} ({}) ", self.subject)?;
        match &self.reason {
            Weakness::Signature { algorithm } => write!(
                f,
                "is signed with {algorithm}; accepted: RSA or RSA-PSS with SHA-256/384/512, ECDSA with \
                 SHA-256/384/512, Ed25519"
            ),
            Weakness::RsaKeySize { bits } if *bits < MIN_RSA_BITS => {
                write!(f, "has a {bits}-bit RSA key; at least {MIN_RSA_BITS} bits are required")
            }
            Weakness::RsaKeySize { bits } => {
                write!(f, "has a {bits}-bit RSA key; at most {MAX_RSA_BITS} bits are accepted")
            }
            Weakness::Curve { curve } => {
                write!(f, "has an EC key on {curve}; accepted curves: P-256, P-384, P-521")
            }
            Weakness::KeyType { algorithm } => {
                write!(f, "has a {algorithm} key; accepted: RSA, ECDSA, Ed25519")
            }
            Weakness::Unparsable(e) => write!(f, "could not be parsed: {e}"),
            Weakness::UnparsableRsaKey => f.write_str("has an RSA public key that could not be parsed"),
            Weakness::EmptyChain => f.write_str("could not be parsed: the validated chain is empty"),
        }
    }
}

impl std::error::Error for ChainRejection {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.reason {
            Weakness::Unparsable(e) => Some(e),
            _ => None,
        }
    }
}

/// Checks a validated chain, leaf first and trust anchor last.
pub(crate) fn check_chain<'a>(chain: impl ExactSizeIterator<Item = &'a [u8]>) -> Result<(), ChainRejection> {
    let chain_len = chain.len();
    if chain_len == 0 {
        return Err(ChainRejection { position: 0, chain_len, subject: "-".to_owned(), reason: Weakness::EmptyChain });
    }
    for (position, der) in chain.enumerate() {
        let reject = |subject: String, reason| ChainRejection { position, chain_len, subject, reason };
        let cert = match Certificate::from_der(der) {
            Ok(cert) => cert,
            Err(e) => return Err(reject("?".to_owned(), Weakness::Unparsable(e))),
        };
        // The anchor is trusted, not verified; but a certificate trusted directly (a chain of
        // one) is still the server's, and its signature is judged.
        let is_anchor = position > 0 && position + 1 == chain_len;
        let weakness = key_weakness(&cert).or_else(|| (!is_anchor).then(|| signature_weakness(&cert)).flatten());
        if let Some(reason) = weakness {
            return Err(reject(cert.tbs_certificate().subject().to_string(), reason));
        }
    }
    Ok(())
}

fn signature_weakness(cert: &Certificate) -> Option<Weakness> {
    let id = cert.signature_algorithm();
    let weak = || Some(Weakness::Signature { algorithm: describe(&id.oid) });
    let accepted = [
        oid::SHA256_WITH_RSA,
        oid::SHA384_WITH_RSA,
        oid::SHA512_WITH_RSA,
        oid::ECDSA_WITH_SHA256,
        oid::ECDSA_WITH_SHA384,
        oid::ECDSA_WITH_SHA512,
        oid::ED25519,
    ];
    if accepted.contains(&id.oid) {
        return None;
    }
    if id.oid != oid::RSASSA_PSS {
        return weak();
    }
    // RSA-PSS names its hash, mask generation and salt in the parameters; webpki accepts only
    // MGF1 with the signature's own hash and a salt as long as the hash.
    let Some(Ok(params)) = id.parameters.as_ref().map(|any| any.decode_as::<PssParams>()) else { return weak() };
    let Some(hash) = params.hash.as_ref().map(|h| h.oid) else { return weak() };
    let hash_len = [(oid::SHA256, 32), (oid::SHA384, 48), (oid::SHA512, 64)]
        .into_iter()
        .find_map(|(known, len)| (known == hash).then_some(len));
    let mask_hash = params
        .mask
        .as_ref()
        .filter(|mask| mask.oid == oid::MGF1)
        .and_then(|mask| mask.parameters.as_ref()?.decode_as::<AlgorithmIdentifierOwned>().ok())
        .map(|mask_hash| mask_hash.oid);
    let salt = params.salt.unwrap_or(20);
    match hash_len {
        Some(len) if mask_hash == Some(hash) && salt == len && params.trailer.unwrap_or(1) == 1 => None,
        _ => Some(Weakness::Signature {
            algorithm: format!(
                "RSA-PSS with {} (salt {salt}, mask {})",
                describe(&hash),
                mask_hash.map(|h| describe(&h)).unwrap_or_else(|| "unreadable".to_owned())
            ),
        }),
    }
}

fn key_weakness(cert: &Certificate) -> Option<Weakness> {
    let spki = cert.tbs_certificate().subject_public_key_info();
    let algorithm = spki.algorithm.oid;
    if algorithm == oid::RSA_ENCRYPTION {
        let key = spki.subject_public_key.as_bytes().and_then(|bytes| RsaPublicKey::from_der(bytes).ok());
        return match key {
            Some(rsa) => {
                let bits = modulus_bits(rsa.modulus.as_bytes());
                (!(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits)).then_some(Weakness::RsaKeySize { bits })
            }
            None => Some(Weakness::UnparsableRsaKey),
        };
    }
    if algorithm == oid::EC_PUBLIC_KEY {
        let curve = spki.algorithm.parameters.as_ref().and_then(|p| p.decode_as::<Oid>().ok());
        return match curve {
            Some(c) if [oid::P256, oid::P384, oid::P521].contains(&c) => None,
            Some(c) => Some(Weakness::Curve { curve: describe(&c) }),
            None => Some(Weakness::Curve { curve: "an unnamed curve".to_owned() }),
        };
    }
    if algorithm == oid::ED25519 {
        return None;
    }
    Some(Weakness::KeyType { algorithm: describe(&algorithm) })
}

/// The size of a big-endian modulus in bits, leading zero bits not counted.
fn modulus_bits(modulus: &[u8]) -> usize {
    match modulus.iter().position(|&b| b != 0) {
        Some(first) => (modulus.len() - first) * 8 - modulus[first].leading_zeros() as usize,
        None => 0,
    }
}

/// An OID as `name (dotted)` when const-oid's database knows it, else dotted.
fn describe(oid: &Oid) -> String {
    match der::oid::db::DB.by_oid(oid) {
        Some(name) => format!("{name} ({oid})"),
        None => oid.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modulus_bits_ignores_leading_zeros() {
        assert_eq!(modulus_bits(&[]), 0);
        assert_eq!(modulus_bits(&[0, 0]), 0);
        assert_eq!(modulus_bits(&[0x00, 0x80, 0x00]), 16);
        assert_eq!(modulus_bits(&[0x01, 0xff]), 9);
        let mut rsa2048 = vec![0u8; 257];
        rsa2048[1] = 0xc3;
        assert_eq!(modulus_bits(&rsa2048), 2048);
        rsa2048[1] = 0x7f; // a 2047-bit modulus
        assert_eq!(modulus_bits(&rsa2048), 2047);
    }

    /// A CA and a leaf it signed, made by rcgen with `alg` (leaf first, CA last).
    fn chain_of(alg: &'static rcgen::SignatureAlgorithm) -> Vec<Vec<u8>> {
        let ca_key = rcgen::KeyPair::generate_for(alg).expect("CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).expect("CA");
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let leaf_key = rcgen::KeyPair::generate_for(alg).expect("leaf key");
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .expect("leaf params")
            .signed_by(&leaf_key, &issuer)
            .expect("leaf");
        vec![leaf.der().to_vec(), ca.der().to_vec()]
    }

    #[test]
    fn modern_chains_pass() {
        for alg in [&rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_ECDSA_P384_SHA384, &rcgen::PKCS_ED25519] {
            let chain = chain_of(alg);
            assert_eq!(check_chain(chain.iter().map(Vec::as_slice)), Ok(()), "{alg:?}");
        }
    }

    #[test]
    fn empty_chains_are_refused() {
        let err = check_chain(std::iter::empty()).expect_err("empty");
        assert!(err.to_string().contains("the validated chain is empty"), "{err}");
    }

    #[test]
    fn a_directly_trusted_certificate_is_judged_whole() {
        let chain = chain_of(&rcgen::PKCS_ECDSA_P256_SHA256);
        assert_eq!(check_chain([chain[1].as_slice()].into_iter()), Ok(()));
        assert_eq!(check_chain([chain[1].as_slice(), chain[1].as_slice()].into_iter()), Ok(()));
    }

    #[test]
    fn unparsable_certificates_are_refused_with_their_position() {
        let garbage: &[u8] = b"not a certificate";
        let err = check_chain([garbage].into_iter()).expect_err("garbage");
        assert_eq!(err.position, 0);
        assert!(!err.is_weak_algorithm());
        assert!(err.to_string().starts_with("the server's certificate (?) could not be parsed"), "{err}");
    }

    #[test]
    fn rejection_messages_say_what_is_accepted() {
        let rejection = |position, reason| ChainRejection { position, chain_len: 3, subject: "CN=x".into(), reason };
        let sha1 =
            rejection(0, Weakness::Signature { algorithm: "sha1WithRSAEncryption (1.2.840.113549.1.1.5)".into() });
        assert_eq!(
            sha1.to_string(),
            "the server's certificate (CN=x) is signed with sha1WithRSAEncryption (1.2.840.113549.1.1.5); \
             accepted: RSA or RSA-PSS with SHA-256/384/512, ECDSA with SHA-256/384/512, Ed25519"
        );
        let small = rejection(1, Weakness::RsaKeySize { bits: 1024 });
        assert_eq!(
            small.to_string(),
            "an intermediate certificate (CN=x) has a 1024-bit RSA key; at least 2048 bits are required"
        );
        let huge = rejection(0, Weakness::RsaKeySize { bits: 16384 });
        assert!(huge.to_string().ends_with("has a 16384-bit RSA key; at most 8192 bits are accepted"), "{huge}");
        assert!(rejection(2, Weakness::Curve { curve: "secp256k1".into() })
            .to_string()
            .starts_with("the trust anchor (CN=x) has an EC key on secp256k1"));
    }
}
