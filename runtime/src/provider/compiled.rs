//! What this build compiled: the one place a provider or roots source that other crates' features
//! name becomes the code that serves it, or [`NotCompiled`].
//!
//! build.rs decides which providers and roots are compiled (the `provider` and `roots` cfgs, from
//! the provider table, the features and the application's override). [`Compiled`] and
//! [`CompiledRoots`] have a variant for each of those and nothing else, so every `match` over them
//! is exhaustive without a wildcard: a provider that gains a variant and no arm fails to compile.
//! The variants a feature names but the override left out are mapped to [`NotCompiled`] here, once.

#[cfg(rustls_backend)]
use std::sync::Arc;

use crate::provider::NotCompiled;
use crate::provider::TlsProvider;
use crate::roots::TrustRoots;

/// A provider compiled into this build, by the library that serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compiled {
    /// A rustls provider, with its cryptography.
    #[cfg(rustls)]
    Rustls(RustlsCrypto),
    /// s2n-tls on aws-lc.
    #[cfg(s2n_plain)]
    S2nTls,
    /// s2n-tls on aws-lc's FIPS module.
    #[cfg(s2n_fips)]
    S2nTlsFips,
    /// The system's libssl.
    #[cfg(openssl_provider)]
    OpenSsl,
}

/// The cryptography of a rustls provider compiled into this build.
#[cfg(rustls)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RustlsCrypto {
    /// aws-lc-rs, post-quantum hybrid key exchange first.
    #[cfg(provider = "rustls-aws-lc")]
    AwsLc,
    /// ring.
    #[cfg(provider = "rustls-ring")]
    Ring,
    /// aws-lc-rs's FIPS module.
    #[cfg(provider = "rustls-aws-lc-fips")]
    AwsLcFips,
    /// The application's own `CryptoProvider`.
    #[cfg(provider = "rustls-custom")]
    Custom,
}

#[cfg(rustls_backend)]
impl RustlsCrypto {
    /// The rustls 0.23 `CryptoProvider`: the one map from a rustls provider to its crypto, for the
    /// 0.23 backend, which checks a client identity's key with it. `None` for `rustls-custom`
    /// before the application installed its provider.
    pub(crate) fn provider(self) -> Option<Arc<rustls::crypto::CryptoProvider>> {
        match self {
            // With the `prefer-post-quantum` feature, X25519MLKEM768 leads the key exchange groups.
            #[cfg(provider = "rustls-aws-lc")]
            RustlsCrypto::AwsLc => Some(Arc::new(rustls::crypto::aws_lc_rs::default_provider())),
            // rustls 0.23.48 deprecates ring's provider for lacking post-quantum key exchange;
            // ring is what this provider is chosen for (no aws-lc), so it stays.
            #[cfg(provider = "rustls-ring")]
            #[allow(deprecated)]
            RustlsCrypto::Ring => Some(Arc::new(rustls::crypto::ring::default_provider())),
            #[cfg(provider = "rustls-aws-lc-fips")]
            RustlsCrypto::AwsLcFips => Some(Arc::new(rustls::crypto::default_fips_provider())),
            #[cfg(provider = "rustls-custom")]
            RustlsCrypto::Custom => crate::provider::custom::crypto_provider(),
        }
    }
}

impl TlsProvider {
    /// The compiled provider this is, or that the application's override left it out.
    pub(crate) fn compiled(self) -> Result<Compiled, NotCompiled> {
        match self {
            #[cfg(provider = "rustls-aws-lc")]
            TlsProvider::RustlsAwsLc => Ok(Compiled::Rustls(RustlsCrypto::AwsLc)),
            #[cfg(all(named_provider = "rustls-aws-lc", not(provider = "rustls-aws-lc")))]
            TlsProvider::RustlsAwsLc => Err(NotCompiled::Provider(self)),
            #[cfg(provider = "rustls-ring")]
            TlsProvider::RustlsRing => Ok(Compiled::Rustls(RustlsCrypto::Ring)),
            #[cfg(all(named_provider = "rustls-ring", not(provider = "rustls-ring")))]
            TlsProvider::RustlsRing => Err(NotCompiled::Provider(self)),
            #[cfg(provider = "rustls-aws-lc-fips")]
            TlsProvider::RustlsAwsLcFips => Ok(Compiled::Rustls(RustlsCrypto::AwsLcFips)),
            #[cfg(all(named_provider = "rustls-aws-lc-fips", not(provider = "rustls-aws-lc-fips")))]
            TlsProvider::RustlsAwsLcFips => Err(NotCompiled::Provider(self)),
            #[cfg(provider = "rustls-custom")]
            TlsProvider::RustlsCustom => Ok(Compiled::Rustls(RustlsCrypto::Custom)),
            #[cfg(all(named_provider = "rustls-custom", not(provider = "rustls-custom")))]
            TlsProvider::RustlsCustom => Err(NotCompiled::Provider(self)),
            #[cfg(s2n_plain)]
            TlsProvider::S2nTls => Ok(Compiled::S2nTls),
            #[cfg(all(named_provider = "s2n-tls", not(s2n_plain)))]
            TlsProvider::S2nTls => Err(NotCompiled::Provider(self)),
            #[cfg(s2n_fips)]
            TlsProvider::S2nTlsFips => Ok(Compiled::S2nTlsFips),
            #[cfg(all(named_provider = "s2n-tls-fips", not(s2n_fips)))]
            TlsProvider::S2nTlsFips => Err(NotCompiled::Provider(self)),
            #[cfg(openssl_provider)]
            TlsProvider::OpenSsl => Ok(Compiled::OpenSsl),
            #[cfg(all(named_provider = "openssl", not(openssl_provider)))]
            TlsProvider::OpenSsl => Err(NotCompiled::Provider(self)),
        }
    }
}

/// A trust-root source compiled into this build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(no_tls, allow(dead_code))]
pub(crate) enum CompiledRoots {
    /// The operating system store.
    #[cfg(roots = "native")]
    Native,
    /// The bundled Mozilla roots.
    #[cfg(roots = "webpki")]
    Webpki,
    /// The operating system's verifier (rustls).
    #[cfg(roots = "platform-verifier")]
    PlatformVerifier,
    /// The store, or the bundled roots where it yields no certificate.
    #[cfg(native_or_webpki)]
    NativeOrWebpki,
}

impl TrustRoots {
    /// The compiled source this is, or that the application's override left it out.
    #[cfg_attr(no_tls, allow(dead_code))]
    pub(crate) fn compiled(self) -> Result<CompiledRoots, NotCompiled> {
        match self {
            #[cfg(roots = "native")]
            TrustRoots::Native => Ok(CompiledRoots::Native),
            #[cfg(all(named_roots = "native", not(roots = "native")))]
            TrustRoots::Native => Err(NotCompiled::Roots(self)),
            #[cfg(roots = "webpki")]
            TrustRoots::Webpki => Ok(CompiledRoots::Webpki),
            #[cfg(all(named_roots = "webpki", not(roots = "webpki")))]
            TrustRoots::Webpki => Err(NotCompiled::Roots(self)),
            #[cfg(roots = "platform-verifier")]
            TrustRoots::PlatformVerifier => Ok(CompiledRoots::PlatformVerifier),
            #[cfg(all(named_roots = "platform-verifier", not(roots = "platform-verifier")))]
            TrustRoots::PlatformVerifier => Err(NotCompiled::Roots(self)),
            #[cfg(native_or_webpki)]
            TrustRoots::NativeOrWebpki => Ok(CompiledRoots::NativeOrWebpki),
            #[cfg(all(named_native_or_webpki, not(native_or_webpki)))]
            TrustRoots::NativeOrWebpki => Err(NotCompiled::Roots(self)),
        }
    }
}
