// The facts about each TLS provider that the runtime, its build script and the generator all need,
// kept in one table. Plain data with no dependencies: the runtime declares it as a module, its
// build script and the generator (smithy-tls-codegen, through its link to this crate's sources)
// include the file, so a new provider is one row here rather than a name repeated in each crate.
// Each includer reads the columns it needs, so each allows dead code where it includes it.

/// The TLS library a provider runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TlsLibrary {
    /// rustls: verifies certificates with roots this crate hands it, or the platform verifier.
    Rustls,
    /// s2n-tls: reads the native store through its libcrypto's default paths.
    S2n,
    /// The operating system's libssl: reads the native store itself.
    SystemLibssl,
}

/// Where a provider's cryptography comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crypto {
    /// aws-lc (aws-lc-sys), whose first use seeds its generator from CPU-jitter entropy.
    AwsLc,
    /// The FIPS build of aws-lc (aws-lc-fips-sys).
    AwsLcFips,
    /// ring.
    Ring,
    /// The operating system's libcrypto.
    System,
    /// The application's own rustls `CryptoProvider`: no crypto crate of this crate's.
    Application,
}

/// One TLS provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProviderFacts {
    /// Its name: the runtime's cargo feature, the policy-file spelling, `TlsProvider::name()`.
    pub(crate) name: &'static str,
    /// The runtime's `TlsProvider` variant, which generated code names.
    pub(crate) variant: &'static str,
    /// What it is, in one sentence (reports and schema descriptions).
    pub(crate) summary: &'static str,
    /// The TLS library.
    pub(crate) library: TlsLibrary,
    /// Its cryptography.
    pub(crate) crypto: Crypto,
    /// The only `target_os` values the runtime builds it for; empty: wherever its libraries build.
    pub(crate) only_on_os: &'static [&'static str],
}

impl ProviderFacts {
    /// Whether a build with it is a FIPS build, which no non-FIPS provider may share.
    pub(crate) const fn fips(&self) -> bool {
        matches!(self.crypto, Crypto::AwsLcFips)
    }

    /// Whether it can verify with the platform verifier (rustls-platform-verifier is a rustls
    /// verifier; the other libraries read the system store themselves).
    pub(crate) const fn platform_verifier(&self) -> bool {
        matches!(self.library, TlsLibrary::Rustls)
    }

    /// Whether it brings its cryptography (`rustls-custom` runs on the application's): only such a
    /// provider is suggested in its place.
    pub(crate) const fn brings_crypto(&self) -> bool {
        !matches!(self.crypto, Crypto::Application)
    }

    /// Whether its first use seeds aws-lc's generator (milliseconds: worth doing off the caller's
    /// thread).
    pub(crate) const fn seeds_aws_lc(&self) -> bool {
        matches!(self.crypto, Crypto::AwsLc | Crypto::AwsLcFips)
    }
}

/// Every provider, in policy-file spelling order: the generator's `Provider` and the runtime's
/// `TlsProvider` take their discriminants from this order.
pub(crate) const PROVIDERS: [ProviderFacts; 7] = [
    ProviderFacts {
        name: "rustls-aws-lc",
        variant: "RustlsAwsLc",
        summary: "rustls with aws-lc-rs.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::AwsLc,
        only_on_os: &[],
    },
    ProviderFacts {
        name: "rustls-ring",
        variant: "RustlsRing",
        summary: "rustls with ring.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::Ring,
        only_on_os: &[],
    },
    ProviderFacts {
        name: "s2n-tls",
        variant: "S2nTls",
        summary: "s2n-tls.",
        library: TlsLibrary::S2n,
        crypto: Crypto::AwsLc,
        only_on_os: &["linux", "macos"],
    },
    ProviderFacts {
        name: "rustls-aws-lc-fips",
        variant: "RustlsAwsLcFips",
        summary: "rustls with the FIPS build of aws-lc-rs.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::AwsLcFips,
        only_on_os: &[],
    },
    ProviderFacts {
        name: "s2n-tls-fips",
        variant: "S2nTlsFips",
        summary: "s2n-tls with the FIPS build of aws-lc.",
        library: TlsLibrary::S2n,
        crypto: Crypto::AwsLcFips,
        only_on_os: &["linux", "macos"],
    },
    ProviderFacts {
        name: "openssl",
        variant: "OpenSsl",
        summary: "The operating system's OpenSSL.",
        library: TlsLibrary::SystemLibssl,
        crypto: Crypto::System,
        // The systems whose own TLS library is OpenSSL (the generator's `openssl_support` says
        // why each other one is not served).
        only_on_os: &["linux", "freebsd", "netbsd"],
    },
    ProviderFacts {
        name: "rustls-custom",
        variant: "RustlsCustom",
        summary: "rustls with the application's own CryptoProvider.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::Application,
        only_on_os: &[],
    },
];
