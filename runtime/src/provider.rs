//! The TLS providers this crate can build a client with.

use std::fmt;

use crate::{Error, TrustRoots};

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
    /// rustls with the FIPS build of aws-lc-rs (aws-lc-fips-sys), configured so that rustls
    /// reports FIPS mode (`TlsInfo::fips`); building a client that would not be is an error.
    /// Cargo feature `rustls-aws-lc-fips`, which no other provider may share a build with.
    #[cfg(feature = "rustls-aws-lc-fips")]
    RustlsAwsLcFips,
    /// s2n-tls with aws-lc, security policy
    #[doc = concat!("`", "20251014", "`")]
    /// (TLS 1.2+, forward secrecy, post-quantum hybrid key exchange first), receive buffering
    /// on. Linux and macOS only. Cargo feature `s2n-tls`.
    #[cfg(s2n_plain)]
    S2nTls,
    /// s2n-tls with the FIPS build of aws-lc (s2n-tls's `fips`), security policy `20251015`
    /// (s2n-tls's FIPS default: FIPS 140-3 rules, TLS 1.2+, forward secrecy), in FIPS mode
    /// (`TlsInfo::fips`; a client whose libcrypto is not in FIPS mode is refused). Cargo feature
    /// `s2n-tls-fips`, which no non-FIPS provider may share a build with.
    #[cfg(s2n_fips)]
    S2nTlsFips,
    /// The operating system's OpenSSL (libssl, linked dynamically): the system's crypto policy
    /// (`OPENSSL_CONF`, the distro's `system_default` section) applies, tightened only where it
    /// is below this crate's floor (TLS 1.2, forward-secret AEAD suites, security level 2); in
    /// FIPS mode when the system's OpenSSL is (`TlsInfo::fips`). Cargo feature `openssl`.
    #[cfg(openssl_provider)]
    OpenSsl,
}

/// The cargo feature of every provider, compiled into this build or not: the one list messages
/// name when they list the providers (a test checks it against the manifest's features).
pub(crate) const PROVIDER_FEATURES: &[&str] =
    &["rustls-aws-lc", "rustls-ring", "s2n-tls", "rustls-aws-lc-fips", "s2n-tls-fips", "openssl"];

impl TlsProvider {
    /// Every provider compiled into this build, in a stable order.
    pub const ALL: &'static [TlsProvider] = &[
        #[cfg(feature = "rustls-aws-lc")]
        TlsProvider::RustlsAwsLc,
        #[cfg(feature = "rustls-ring")]
        TlsProvider::RustlsRing,
        #[cfg(feature = "rustls-aws-lc-fips")]
        TlsProvider::RustlsAwsLcFips,
        #[cfg(s2n_plain)]
        TlsProvider::S2nTls,
        #[cfg(s2n_fips)]
        TlsProvider::S2nTlsFips,
        #[cfg(openssl_provider)]
        TlsProvider::OpenSsl,
    ];

    /// The provider's name as used in cargo features and policy files (e.g. `rustls-aws-lc`).
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "rustls-aws-lc")]
            TlsProvider::RustlsAwsLc => "rustls-aws-lc",
            #[cfg(feature = "rustls-ring")]
            TlsProvider::RustlsRing => "rustls-ring",
            #[cfg(feature = "rustls-aws-lc-fips")]
            TlsProvider::RustlsAwsLcFips => "rustls-aws-lc-fips",
            #[cfg(s2n_plain)]
            TlsProvider::S2nTls => "s2n-tls",
            #[cfg(s2n_fips)]
            TlsProvider::S2nTlsFips => "s2n-tls-fips",
            #[cfg(openssl_provider)]
            TlsProvider::OpenSsl => "openssl",
        }
    }
}

impl TlsProvider {
    /// Whether this provider can use `roots`. The one place that decides it: the builder, the
    /// shared clients and the backends all ask here. (s2n-tls
    /// and OpenSSL read the system store themselves and have no use for the platform verifier.)
    ///
    /// ```
    /// # #[cfg(all(feature = "rustls-ring", feature = "platform-verifier"))] {
    /// use smithy_default_tls::{TlsProvider, TrustRoots};
    /// assert!(TlsProvider::RustlsRing.validate_roots(TrustRoots::PlatformVerifier).is_ok());
    /// # }
    /// ```
    pub fn validate_roots(self, roots: TrustRoots) -> Result<(), Error> {
        if roots.needs_rustls() && !self.is_rustls() {
            return Err(Error::UnsupportedRoots {
                provider: self,
                roots,
                reason: "only rustls providers can use the platform verifier (s2n-tls and openssl read the system \
                         store themselves): use `native` (or `webpki`) roots, or a rustls provider",
            });
        }
        Ok(())
    }

    /// Whether this is one of the rustls providers.
    pub(crate) fn is_rustls(self) -> bool {
        match self {
            #[cfg(feature = "rustls-aws-lc")]
            TlsProvider::RustlsAwsLc => true,
            #[cfg(feature = "rustls-ring")]
            TlsProvider::RustlsRing => true,
            #[cfg(feature = "rustls-aws-lc-fips")]
            TlsProvider::RustlsAwsLcFips => true,
            #[cfg(s2n_plain)]
            TlsProvider::S2nTls => false,
            #[cfg(s2n_fips)]
            TlsProvider::S2nTlsFips => false,
            #[cfg(openssl_provider)]
            TlsProvider::OpenSsl => false,
        }
    }

    /// Whether the provider's cryptography is aws-lc, whose first use seeds its random generator
    /// from CPU-jitter entropy (milliseconds: worth preparing off the caller's thread).
    pub(crate) fn is_built_on_aws_lc(self) -> bool {
        match self {
            #[cfg(feature = "rustls-aws-lc")]
            TlsProvider::RustlsAwsLc => true,
            #[cfg(feature = "rustls-ring")]
            TlsProvider::RustlsRing => false,
            #[cfg(feature = "rustls-aws-lc-fips")]
            TlsProvider::RustlsAwsLcFips => true,
            #[cfg(s2n_plain)]
            TlsProvider::S2nTls => true,
            #[cfg(s2n_fips)]
            TlsProvider::S2nTlsFips => true,
            #[cfg(openssl_provider)]
            TlsProvider::OpenSsl => false,
        }
    }
}

impl fmt::Display for TlsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
