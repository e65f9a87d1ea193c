//! The floor under a client's CPU per GiB on a download: what the plain-HTTP client spends per
//! GiB in the same run (the kernel's copies, hyper, the body) plus what the negotiated AEAD
//! (TLS_AES_128_GCM_SHA256) costs to open a GiB of 16 KiB records with the TLS library's own
//! primitive, timed here. Ours and upstream's CPU per GiB over that floor say how much of each
//! client's cost is beyond the cipher and the kernel.

use std::sync::Arc;

use rustls::crypto::cipher::{InboundOpaqueMessage, OutboundChunks, OutboundPlainMessage};
use rustls::crypto::CryptoProvider;
use rustls::{CipherSuite, ContentType, ProtocolVersion, SupportedCipherSuite};

use crate::Usage;

/// Plaintext per record: the TLS maximum, as bulk transfers send.
const RECORD: usize = 16 * 1024;

/// Records opened per timing: 256 MiB.
const RECORDS: usize = 16 * 1024;

/// The crypto provider whose AES-128-GCM `provider` (a benchmark provider name) decrypts with:
/// s2n-tls's is AWS-LC's, the same primitive rustls-aws-lc calls through aws-lc-rs.
fn crypto(provider: &str) -> Arc<CryptoProvider> {
    Arc::new(match provider {
        // Deprecated from rustls 0.23.48 on (no post-quantum groups); the floor measures its AES.
        #[allow(deprecated)]
        "rustls-ring" => rustls::crypto::ring::default_provider(),
        _ => rustls::crypto::aws_lc_rs::default_provider(),
    })
}

/// CPU seconds one core spends opening (decrypting and authenticating) 1 GiB of 16 KiB
/// TLS 1.3 records with `provider`'s TLS_AES_128_GCM_SHA256; NaN if it has no such suite.
pub(crate) fn aead_seconds_per_gib(provider: &str) -> f64 {
    let crypto = crypto(provider);
    let suite = crypto.cipher_suites.iter().find_map(|s| match s {
        SupportedCipherSuite::Tls13(t) if s.suite() == CipherSuite::TLS13_AES_128_GCM_SHA256 => Some(*t),
        _ => None,
    });
    let Some(suite) = suite else { return f64::NAN };
    // Any secret will do: the cost does not depend on the key.
    let secret = [7u8; 32];
    let keys = || {
        let expander = suite.hkdf_provider.extract_from_secret(None, &secret);
        (
            rustls::internal::derive_traffic_key(expander.as_ref(), suite.aead_alg),
            rustls::internal::derive_traffic_iv(expander.as_ref()),
        )
    };
    let (key, iv) = keys();
    let mut encrypter = suite.aead_alg.encrypter(key, iv);
    let (key, iv) = keys();
    let mut decrypter = suite.aead_alg.decrypter(key, iv);
    let plaintext = vec![0x5au8; RECORD];
    let message = OutboundPlainMessage {
        typ: ContentType::ApplicationData,
        version: ProtocolVersion::TLSv1_2,
        payload: OutboundChunks::Single(&plaintext),
    };
    let Ok(sealed) = encrypter.encrypt(message, 0) else { return f64::NAN };
    // The record as it arrives: 5-byte header, then the sealed payload.
    let record = sealed.encode();
    let mut work = record.clone();
    // The least of three timings: the primitive's cost, with as little of the machine's other
    // load in it as a shared machine allows.
    let mut least = f64::INFINITY;
    for _ in 0..3 {
        let before = Usage::now();
        for _ in 0..RECORDS {
            // Opening is in place: each record starts again from the sealed bytes (a 16 KiB
            // copy, as a client copies each record out of its read buffer).
            work.copy_from_slice(&record);
            let inbound =
                InboundOpaqueMessage::new(ContentType::ApplicationData, ProtocolVersion::TLSv1_2, &mut work[5..]);
            if decrypter.decrypt(inbound, 0).is_err() {
                return f64::NAN;
            }
        }
        least = least.min(Usage::now().since(before).cpu_seconds);
    }
    least * (1u64 << 30) as f64 / (RECORDS * RECORD) as f64
}
