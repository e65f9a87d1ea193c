//! The floor under the system's crypto policy. OpenSSL applies the configuration's
//! `system_default` section (Fedora's and RHEL's crypto policies, Debian's `MinProtocol` and
//! `CipherString`) when a context is created, and any later call that sets a cipher list, a
//! minimum version or a security level *replaces* what the system chose. So nothing is set
//! unless the system's choice is below the floor every provider of this crate keeps, and then
//! only what is below it is taken away: a stricter system choice is never overwritten, and the
//! system's order of preference is kept.
//!
//! The floor: TLS 1.2 or later; the forward-secret AEAD suites ([`MODERN_TLS13`],
//! [`MODERN_TLS12`], what the rustls providers offer); security level 2 (RSA and DH keys of at
//! least 2048 bits, no SHA-1 signatures in certificates). Key exchange groups are left as the
//! system sets them.

use openssl::error::ErrorStack;
use openssl::ssl::{SslContextBuilder, SslVersion};

use super::ffi::{self, Cipher};

/// The TLS 1.3 suites the floor allows: AES-GCM and ChaCha20-Poly1305 (not the CCM suites).
pub(super) const MODERN_TLS13: &[u16] = &[0x1301, 0x1302, 0x1303];

/// The TLS 1.2 suites the floor allows: ECDHE with AES-GCM or ChaCha20-Poly1305, RSA or ECDSA
/// certificates.
pub(super) const MODERN_TLS12: &[u16] = &[0xc02b, 0xc02c, 0xc02f, 0xc030, 0xcca8, 0xcca9];

/// The lowest security level allowed.
pub(super) const MIN_SECURITY_LEVEL: u32 = 2;

/// What [`apply`] changed: empty when the system's configuration was at or above the floor.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Tightened {
    /// The minimum protocol version was below TLS 1.2 (or unset) and is now TLS 1.2 (or 1.3,
    /// when the system allowed no modern TLS 1.2 suite).
    pub(super) min_version: Option<&'static str>,
    /// TLS 1.3 suites taken out of the system's list.
    pub(super) tls13_removed: Vec<&'static str>,
    /// TLS 1.2 (and older) suites taken out of the system's list.
    pub(super) tls12_removed: Vec<&'static str>,
    /// The system's security level, when it was below [`MIN_SECURITY_LEVEL`].
    pub(super) security_level_was: Option<u32>,
}

impl Tightened {
    /// Whether the system's configuration was kept as it was.
    pub(super) fn is_empty(&self) -> bool {
        *self == Tightened::default()
    }
}

/// The system's cipher list split in two, and what the floor keeps of each: a pure function of
/// the list, so that the decision is tested without a context.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct CipherPlan {
    /// The TLS 1.3 suites to set, or `None` to leave the system's list untouched.
    pub(super) tls13: Option<Vec<&'static str>>,
    /// The TLS 1.2 suites to set, or `None` to leave the system's list untouched.
    pub(super) tls12: Option<Vec<&'static str>>,
    /// TLS 1.3 suites removed.
    pub(super) tls13_removed: Vec<&'static str>,
    /// TLS 1.2 suites removed.
    pub(super) tls12_removed: Vec<&'static str>,
    /// The system allowed TLS 1.2 suites and none of them is modern: TLS 1.2 must be off.
    pub(super) no_modern_tls12: bool,
}

/// What the floor keeps of `ciphers` (a context's list, TLS 1.3 suites included).
pub(super) fn plan_ciphers(ciphers: &[Cipher]) -> CipherPlan {
    let (tls13, tls12): (Vec<Cipher>, Vec<Cipher>) = ciphers.iter().partition(|c| c.id >> 8 == 0x13);
    let split = |list: &[Cipher], allowed: &[u16]| -> (Option<Vec<&'static str>>, Vec<&'static str>) {
        let removed: Vec<&'static str> = list.iter().filter(|c| !allowed.contains(&c.id)).map(|c| c.name).collect();
        if removed.is_empty() {
            return (None, removed);
        }
        let kept = list.iter().filter(|c| allowed.contains(&c.id)).map(|c| c.name).collect();
        (Some(kept), removed)
    };
    let (tls13_kept, tls13_removed) = split(&tls13, MODERN_TLS13);
    let (tls12_kept, tls12_removed) = split(&tls12, MODERN_TLS12);
    let no_modern_tls12 = !tls12.is_empty() && tls12_kept.as_ref().is_some_and(Vec::is_empty);
    CipherPlan {
        // An empty list cannot be set; what it would remove is then never offered anyway (no
        // modern TLS 1.2 suite: TLS 1.2 is turned off below).
        tls13: tls13_kept.filter(|kept| !kept.is_empty()),
        tls12: tls12_kept.filter(|kept| !kept.is_empty()),
        tls13_removed,
        tls12_removed,
        no_modern_tls12,
    }
}

/// Whether `version`, a context's minimum, is at the floor or above it (`None`: no minimum).
fn at_floor(version: Option<SslVersion>) -> bool {
    version == Some(SslVersion::TLS1_2) || version == Some(SslVersion::TLS1_3)
}

/// Tightens `builder`'s configuration (as the system left it) up to the floor. Errors are
/// OpenSSL refusing a setting; the caller reports them as configuration errors.
pub(super) fn apply(builder: &mut SslContextBuilder) -> Result<Tightened, ErrorStack> {
    let mut tightened = Tightened::default();
    let plan = plan_ciphers(&ffi::context_ciphers(builder));
    if let Some(kept) = &plan.tls13 {
        builder.set_ciphersuites(&kept.join(":"))?;
    }
    if let Some(kept) = &plan.tls12 {
        builder.set_cipher_list(&kept.join(":"))?;
    }
    // TLS 1.3 suites that the floor took out entirely (the system named only CCM suites, say)
    // leave TLS 1.3 with the system's list: the server picks from what is offered, and the
    // handshake fails rather than falls back.
    tightened.tls13_removed = plan.tls13_removed;
    tightened.tls12_removed = plan.tls12_removed;
    let system_min = builder.min_proto_version();
    let floor = if plan.no_modern_tls12 { SslVersion::TLS1_3 } else { SslVersion::TLS1_2 };
    if !at_floor(system_min) || (plan.no_modern_tls12 && system_min != Some(SslVersion::TLS1_3)) {
        builder.set_min_proto_version(Some(floor))?;
        tightened.min_version = Some(if floor == SslVersion::TLS1_3 { "TLSv1.3" } else { "TLSv1.2" });
    }
    let level = ffi::security_level(builder);
    if level < MIN_SECURITY_LEVEL {
        builder.set_security_level(MIN_SECURITY_LEVEL);
        tightened.security_level_was = Some(level);
    }
    Ok(tightened)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cipher(id: u16, name: &'static str) -> Cipher {
        Cipher { id, name }
    }

    #[test]
    fn a_modern_list_is_left_as_the_system_set_it() {
        let list = [
            cipher(0x1302, "TLS_AES_256_GCM_SHA384"),
            cipher(0x1301, "TLS_AES_128_GCM_SHA256"),
            cipher(0xc030, "ECDHE-RSA-AES256-GCM-SHA384"),
            cipher(0xcca8, "ECDHE-RSA-CHACHA20-POLY1305"),
        ];
        let plan = plan_ciphers(&list);
        assert_eq!(plan.tls13, None);
        assert_eq!(plan.tls12, None);
        assert!(plan.tls13_removed.is_empty() && plan.tls12_removed.is_empty());
        assert!(!plan.no_modern_tls12);
    }

    #[test]
    fn only_what_is_below_the_floor_is_removed_and_the_order_is_kept() {
        let list = [
            cipher(0x1303, "TLS_CHACHA20_POLY1305_SHA256"),
            cipher(0x1304, "TLS_AES_128_CCM_SHA256"),
            cipher(0xc030, "ECDHE-RSA-AES256-GCM-SHA384"),
            cipher(0x009f, "DHE-RSA-AES256-GCM-SHA384"),
            cipher(0xc02b, "ECDHE-ECDSA-AES128-GCM-SHA256"),
            cipher(0xc014, "ECDHE-RSA-AES256-SHA"),
            cipher(0x009d, "AES256-GCM-SHA384"),
        ];
        let plan = plan_ciphers(&list);
        assert_eq!(plan.tls13, Some(vec!["TLS_CHACHA20_POLY1305_SHA256"]));
        assert_eq!(plan.tls12, Some(vec!["ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES128-GCM-SHA256"]));
        assert_eq!(plan.tls13_removed, ["TLS_AES_128_CCM_SHA256"]);
        assert_eq!(plan.tls12_removed, ["DHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-SHA", "AES256-GCM-SHA384"]);
        assert!(!plan.no_modern_tls12);
    }

    #[test]
    fn no_modern_tls12_suite_turns_tls12_off_instead_of_emptying_the_list() {
        let list = [cipher(0x1301, "TLS_AES_128_GCM_SHA256"), cipher(0xc014, "ECDHE-RSA-AES256-SHA")];
        let plan = plan_ciphers(&list);
        assert_eq!(plan.tls12, None, "an empty list cannot be set");
        assert!(plan.no_modern_tls12);
        // A system that allows only TLS 1.3 suites has no TLS 1.2 to turn off.
        let plan = plan_ciphers(&[cipher(0x1301, "TLS_AES_128_GCM_SHA256")]);
        assert!(!plan.no_modern_tls12);
    }

    #[test]
    fn the_minimum_version_floor() {
        assert!(!at_floor(None));
        assert!(!at_floor(Some(SslVersion::TLS1)));
        assert!(!at_floor(Some(SslVersion::TLS1_1)));
        assert!(at_floor(Some(SslVersion::TLS1_2)));
        assert!(at_floor(Some(SslVersion::TLS1_3)));
    }
}
