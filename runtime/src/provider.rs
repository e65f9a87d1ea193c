//! The TLS providers this crate can build a client with.

use std::fmt;

/// Which TLS implementation (and, for rustls, which crypto library) a client uses.
///
/// The choice is one value: code that picks a provider names a variant, and everything
/// provider-specific lives behind it. Each variant exists only when its cargo feature is enabled,
/// so naming a provider that is not compiled in is a compile error rather than a runtime surprise.
///
/// ```
/// # #[cfg(feature = "rustls-aws-lc")] {
/// use smithy_default_tls::TlsProvider;
/// assert_eq!(TlsProvider::RustlsAwsLc.name(), "rustls-aws-lc");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TlsProvider {
    /// rustls with the aws-lc-rs crypto provider; post-quantum hybrid key exchange
    /// (X25519MLKEM768) is offered first. Cargo feature `rustls-aws-lc`.
    #[cfg(feature = "rustls-aws-lc")]
    RustlsAwsLc,
    /// rustls with the ring crypto provider. Cargo feature `rustls-ring`.
    #[cfg(feature = "rustls-ring")]
    RustlsRing,
    /// s2n-tls with aws-lc, security policy
    #[doc = concat!("`", "20251014", "`")]
    /// (TLS 1.2+, forward secrecy, post-quantum hybrid key exchange first), receive buffering
    /// on. Linux and macOS only. Cargo feature `s2n-tls`.
    #[cfg(all(feature = "s2n-tls", unix))]
    S2nTls,
}

impl TlsProvider {
    /// Every provider compiled into this build, in a stable order.
    pub const ALL: &'static [TlsProvider] = &[
        #[cfg(feature = "rustls-aws-lc")]
        TlsProvider::RustlsAwsLc,
        #[cfg(feature = "rustls-ring")]
        TlsProvider::RustlsRing,
        #[cfg(all(feature = "s2n-tls", unix))]
        TlsProvider::S2nTls,
    ];

    /// The provider's name as used in cargo features and policy files (e.g. `rustls-aws-lc`).
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "rustls-aws-lc")]
            TlsProvider::RustlsAwsLc => "rustls-aws-lc",
            #[cfg(feature = "rustls-ring")]
            TlsProvider::RustlsRing => "rustls-ring",
            #[cfg(all(feature = "s2n-tls", unix))]
            TlsProvider::S2nTls => "s2n-tls",
        }
    }
}

impl fmt::Display for TlsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
