//! The TLS providers this crate can build a client with.

use std::fmt;

use crate::roots::TrustRoots;

// The table of provider facts (`facts.rs`), which the build script and the generator include too:
// they read columns this crate does not.
#[allow(dead_code)]
mod facts;

pub(crate) mod application;
pub(crate) mod compiled;
#[cfg(provider = "rustls-custom")]
pub(crate) mod custom;

use facts::{ProviderFacts, TlsLibrary, PROVIDERS, ROOTS};

/// The `name` column of a table of the provider table's (`PROVIDERS`, `ROOTS`), as an array.
macro_rules! names_of {
    ($table:expr) => {{
        let mut names = [""; $table.len()];
        let mut i = 0;
        while i < $table.len() {
            names[i] = $table[i].name;
            i += 1;
        }
        names
    }};
}

/// The cargo feature of every trust-root source, compiled into this build or not: the one list
/// messages name when they list the sources (the provider table's `ROOTS`, in its order).
pub(crate) const ROOTS_FEATURES: &[&str] = &names_of!(ROOTS);

/// Which TLS implementation (and, for rustls, which crypto library) a client uses.
///
/// The choice is one value: code that picks a provider names a variant, and everything
/// provider-specific lives behind it. Each variant exists only when its cargo feature is enabled
/// (or the application's `--cfg smithy_tls` names it), so naming a provider that no crate asked
/// for is a compile error rather than a runtime surprise. Under an application's override the
/// variants other crates' features name still exist, so their code compiles, and the shared
/// clients serve them with the application's provider ([`ALL`](TlsProvider::ALL) lists what is
/// compiled).
/// Each variant's discriminant is its row in the provider table (`provider/facts.rs`).
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
    #[cfg(named_provider = "rustls-aws-lc")]
    RustlsAwsLc = 0,
    /// rustls with the ring crypto provider. Cargo feature `rustls-ring`.
    #[cfg(named_provider = "rustls-ring")]
    RustlsRing = 1,
    /// rustls with the FIPS build of aws-lc-rs (aws-lc-fips-sys), configured so that rustls
    /// reports FIPS mode (`TlsInfo::fips`); building a client that would not be is an error.
    /// Cargo feature `rustls-aws-lc-fips`, which no other provider may share a build with.
    #[cfg(named_provider = "rustls-aws-lc-fips")]
    RustlsAwsLcFips = 3,
    /// s2n-tls with aws-lc, security policy
    #[doc = concat!("`", "20251014", "`")]
    /// (TLS 1.2+, forward secrecy, post-quantum hybrid key exchange first), receive buffering
    /// on. Linux and macOS only. Cargo feature `s2n-tls`.
    #[cfg(named_provider = "s2n-tls")]
    S2nTls = 2,
    /// s2n-tls with the FIPS build of aws-lc (s2n-tls's `fips`), security policy `20251015`
    /// (s2n-tls's FIPS default: FIPS 140-3 rules, TLS 1.2+, forward secrecy), in FIPS mode
    /// (`TlsInfo::fips`; a client whose libcrypto is not in FIPS mode is refused). Cargo feature
    /// `s2n-tls-fips`, which no non-FIPS provider may share a build with.
    #[cfg(named_provider = "s2n-tls-fips")]
    S2nTlsFips = 4,
    /// The operating system's OpenSSL (libssl, linked dynamically): the system's crypto policy
    /// (`OPENSSL_CONF`, the distro's `system_default` section) applies, tightened only where it
    /// is below this crate's floor (TLS 1.2, forward-secret AEAD suites, security level 2); in
    /// FIPS mode when the system's OpenSSL is (`TlsInfo::fips`). Cargo feature `openssl`.
    #[cfg(named_provider = "openssl")]
    OpenSsl = 5,
    /// rustls with the application's own `CryptoProvider`: the one given to
    /// `set_custom_crypto_provider` (compiled with this provider), else rustls's
    /// process-wide default (`CryptoProvider::install_default`); a connection made with neither
    /// fails with [`Error::NoCryptoProvider`](crate::Error::NoCryptoProvider). No crypto crate of
    /// this crate's is compiled for it. Cargo feature `rustls-custom`, or the application's
    /// `--cfg smithy_tls="rustls-custom"`.
    #[cfg(named_provider = "rustls-custom")]
    RustlsCustom = 6,
}

/// The cargo feature of every provider, compiled into this build or not: the one list messages
/// name when they list the providers (a test checks it against the manifest's features).
pub(crate) const PROVIDER_FEATURES: &[&str] = &names_of!(PROVIDERS);

impl TlsProvider {
    /// Every provider compiled into this build, in a stable order.
    pub const ALL: &'static [TlsProvider] = &[
        #[cfg(provider = "rustls-aws-lc")]
        TlsProvider::RustlsAwsLc,
        #[cfg(provider = "rustls-ring")]
        TlsProvider::RustlsRing,
        #[cfg(provider = "rustls-aws-lc-fips")]
        TlsProvider::RustlsAwsLcFips,
        #[cfg(s2n_plain)]
        TlsProvider::S2nTls,
        #[cfg(s2n_fips)]
        TlsProvider::S2nTlsFips,
        #[cfg(openssl_provider)]
        TlsProvider::OpenSsl,
        #[cfg(provider = "rustls-custom")]
        TlsProvider::RustlsCustom,
    ];

    /// The provider's name as used in cargo features and policy files (e.g. `rustls-aws-lc`).
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// The provider's row in the provider table.
    fn facts(self) -> &'static ProviderFacts {
        &PROVIDERS[self as usize]
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
    pub fn validate_roots(self, roots: TrustRoots) -> Result<(), UnsupportedRoots> {
        if roots.needs_rustls() && !self.facts().platform_verifier() {
            return Err(UnsupportedRoots { provider: self, roots });
        }
        Ok(())
    }

    /// Whether the provider runs rustls, in Rust, over whichever cryptography (the rustls
    /// providers, `rustls-custom` among them). The others, s2n-tls and OpenSSL, are C libraries:
    /// the certificates and keys a client hands them live in their memory, freed by them, and
    /// they verify with the system store themselves (no platform verifier).
    ///
    /// ```
    /// # #[cfg(all(feature = "rustls-ring", feature = "s2n-tls"))] {
    /// use smithy_default_tls::TlsProvider;
    /// assert!(TlsProvider::RustlsRing.is_rustls());
    /// assert!(!TlsProvider::S2nTls.is_rustls());
    /// # }
    /// ```
    pub fn is_rustls(self) -> bool {
        matches!(self.facts().library, TlsLibrary::Rustls)
    }

    /// Whether the provider's cryptography is aws-lc, whose first use seeds its random generator
    /// from CPU-jitter entropy (milliseconds: worth preparing off the caller's thread).
    pub(crate) fn is_built_on_aws_lc(self) -> bool {
        self.facts().seeds_aws_lc()
    }

    /// Whether the provider's cryptography is aws-lc's FIPS module (the FIPS providers).
    #[cfg(rustls_backend)]
    pub(crate) fn is_fips(self) -> bool {
        self.facts().fips()
    }
}

/// A provider that cannot use the trust roots it was given ([`TlsProvider::validate_roots`]):
/// only rustls verifies with the platform verifier; the other libraries read the system store
/// themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnsupportedRoots {
    /// The provider.
    pub provider: TlsProvider,
    /// The roots it cannot use.
    pub roots: TrustRoots,
}

impl fmt::Display for UnsupportedRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cannot use `{}` trust roots: only rustls providers can use the platform verifier ({} reads the \
             system store itself): use `native` (or `webpki`) roots, or a rustls provider",
            self.provider, self.roots, self.provider
        )
    }
}

impl std::error::Error for UnsupportedRoots {}

/// A provider or trust-root source that other crates' features name but that is not compiled into
/// this build, because the application's `--cfg smithy_tls` (or `smithy_tls_roots`) chose another
/// ([`Error::NotCompiled`](crate::Error::NotCompiled)). Every client, shared or built by hand,
/// serves a provider asked for with the application's instead, and asked-for roots with a compiled
/// source the provider can use; a connection fails with this only where no compiled source can
/// serve (an override to a provider whose roots the build left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotCompiled {
    /// The provider asked for. The builders replace it with the application's provider, so this
    /// crate's clients do not fail with it; it completes the map from every named provider
    /// (`TlsProvider::compiled`).
    Provider(TlsProvider),
    /// The trust roots asked for.
    Roots(TrustRoots),
}

impl fmt::Display for NotCompiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, compiled) = match self {
            NotCompiled::Provider(p) => (format!("TLS provider {p}"), TlsProvider::ALL.first().map(|p| p.name())),
            NotCompiled::Roots(r) => (format!("trust roots `{r}`"), TrustRoots::ALL.first().map(|r| r.name())),
        };
        write!(
            f,
            "{what} is not compiled into this build: the application's --cfg smithy_tls / smithy_tls_roots chose {}; \
             build the client with what is compiled (`TlsProvider::ALL`, `TrustRoots::ALL`), or change the cfg",
            compiled.unwrap_or("none"),
        )
    }
}

impl std::error::Error for NotCompiled {}

impl fmt::Display for TlsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_its_row_in_the_table() {
        for provider in TlsProvider::ALL {
            assert_eq!(format!("{provider:?}"), provider.facts().variant);
        }
    }
}
