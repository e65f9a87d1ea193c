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
    /// The crates the runtime compiles for it, declared in runtime/Cargo.toml's target tables
    /// (generated from this table: codegen/tests/runtime_manifest.rs).
    pub(crate) crates: &'static [&'static Dependency],
    /// The features of one of those crates that select its cryptography, if any.
    pub(crate) crypto_features: Option<CryptoFeatures>,
    /// What the application's `--cfg smithy_tls` needs to select it.
    pub(crate) reach: Reach,
    /// The runtime's cargo feature, documented (the `##` lines above it in runtime/Cargo.toml).
    pub(crate) feature_doc: &'static str,
}

/// A crate as runtime/Cargo.toml declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dependency {
    /// The name the runtime's code and features use.
    pub(crate) name: &'static str,
    /// The package, where it differs from `name`.
    pub(crate) package: Option<&'static str>,
    /// The version requirement.
    pub(crate) version: &'static str,
    /// Whether the package's default features are on.
    pub(crate) default_features: bool,
    /// The features every declaration of it turns on.
    pub(crate) features: &'static [&'static str],
    /// Whether it is declared for Unix targets only (s2n-tls's crates).
    pub(crate) unix_only: bool,
}

/// The features of one of a provider's crates that choose its cryptography. The crypto carrier
/// (runtime/crypto) sets them: without an override on `krate`, and under the application's
/// override to this provider on `gate`, which forwards them. A [`Reach::CfgAlone`] provider has no
/// gate: the runtime's own table for its override sets them, in every application's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CryptoFeatures {
    /// The crate whose features they are.
    pub(crate) krate: &'static Dependency,
    /// The features.
    pub(crate) features: &'static [&'static str],
    /// Under an override that needs the feature ([`Reach::WithFeature`]): the carrier's crate that
    /// forwards them (a feature of the same name), declared by the carrier for that override only.
    /// A crate is one provider's gate and nothing else in the carrier: a feature set on a crate
    /// reaches every build that has the crate, so a shared one would bring another's crypto.
    pub(crate) gate: Option<&'static Dependency>,
}

/// What the application's `--cfg smithy_tls` (or `smithy_tls_roots`) needs to select a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The cfg alone: its crates are in every application's lock, cfg set or not.
    CfgAlone,
    /// The cfg and, where no SDK crate asked for the value on that target, the runtime's feature of
    /// the same name in the application's own Cargo.toml: its crates enter a lock only where some
    /// crate turns the feature on, so an application that never selects it does not carry them.
    WithFeature,
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

    /// Whether the application's override can select it on a target where the crates turned on
    /// the features of `enabled`: the cfg alone selects it, or one of them is its own feature, or
    /// brings its crates and it needs no gate that only its own feature opens.
    pub(crate) fn reached_by<'a>(&self, enabled: impl IntoIterator<Item = &'a ProviderFacts>) -> bool {
        let gated = matches!(self.crypto_features, Some(CryptoFeatures { gate: Some(_), .. }));
        let brings = |other: &ProviderFacts| {
            self.name == other.name
                || (!gated && self.crates.iter().all(|c| other.crates.iter().any(|e| e.name == c.name)))
        };
        matches!(self.reach, Reach::CfgAlone) || enabled.into_iter().any(brings)
    }
}

/// A dependency declared with its defaults and these fields.
const fn dependency(name: &'static str, version: &'static str, features: &'static [&'static str]) -> Dependency {
    Dependency { name, package: None, version, default_features: false, features, unix_only: false }
}

/// rustls 0.23 without cryptography: each provider's features choose it.
pub(crate) const RUSTLS: Dependency = dependency("rustls", "0.23.31", &["std", "tls12", "logging"]);
/// rustls's tokio adapter; its `fips` forwards to rustls's, which makes it the carrier's gate for
/// `rustls-aws-lc-fips` under the override.
pub(crate) const TOKIO_RUSTLS: Dependency = dependency("tokio-rustls", "0.26", &["tls12", "logging"]);
/// s2n-tls, Linux and macOS.
pub(crate) const S2N_TLS: Dependency = Dependency {
    name: "s2n-tls",
    package: None,
    version: "0.3.47",
    default_features: true,
    features: &[],
    unix_only: true,
};
/// s2n-tls's bindings: the carrier's gate for `s2n-tls-fips` under the override (its `fips`).
pub(crate) const S2N_TLS_SYS: Dependency = Dependency { name: "s2n-tls-sys", ..S2N_TLS };
/// s2n-tls's tokio adapter.
pub(crate) const S2N_TLS_TOKIO: Dependency = Dependency { name: "s2n-tls-tokio", ..S2N_TLS };
/// s2n-tls's libcrypto, seeded on a thread of its own while s2n-tls initializes (tls/backends/s2n/mod.rs).
/// `prebuilt-nasm` is a Windows-only switch of aws-lc-sys that rustls-aws-lc enables: with it the
/// s2n-tls builds compile the same aws-lc-sys, so one target dir runs aws-lc's CMake build once.
pub(crate) const AWS_LC_RS: Dependency =
    Dependency { unix_only: true, ..dependency("aws-lc-rs", "1.16.1", &["prebuilt-nasm"]) };
/// X.509, read by the s2n-tls backend's certificate checks (tls/backends/s2n/chain.rs).
pub(crate) const X509_CERT: Dependency = Dependency { unix_only: true, ..dependency("x509-cert", "0.3", &[]) };
/// The DER structures read beside X.509 (RSA-PSS parameters, RSA public keys).
pub(crate) const DER: Dependency = Dependency { unix_only: true, ..dependency("der", "0.8", &["derive", "oid"]) };
/// The bundled Mozilla roots as whole certificates: the store of s2n-tls and OpenSSL.
pub(crate) const WEBPKI_ROOT_CERTS: Dependency =
    Dependency { default_features: true, ..dependency("webpki-root-certs", "1", &[]) };
/// The system's libssl.
pub(crate) const OPENSSL: Dependency = Dependency { default_features: true, ..dependency("openssl", "0.10.72", &[]) };
/// Direct for its version (build.rs reads DEP_OPENSSL_VERSION_NUMBER) and the calls the safe
/// crate lacks (tls/backends/openssl/ffi.rs).
pub(crate) const OPENSSL_SYS: Dependency =
    Dependency { default_features: true, ..dependency("openssl-sys", "0.9.108", &[]) };
/// OpenSSL's tokio adapter.
pub(crate) const TOKIO_OPENSSL: Dependency =
    Dependency { default_features: true, ..dependency("tokio-openssl", "0.6.5", &[]) };
/// The handle types of the openssl crate's foreign types.
pub(crate) const FOREIGN_TYPES_SHARED: Dependency =
    Dependency { default_features: true, ..dependency("foreign-types-shared", "0.1", &[]) };
/// The operating system's trust store.
pub(crate) const RUSTLS_NATIVE_CERTS: Dependency =
    Dependency { default_features: true, ..dependency("rustls-native-certs", "0.8", &[]) };
/// The bundled Mozilla roots (rustls).
pub(crate) const WEBPKI_ROOTS: Dependency =
    Dependency { default_features: true, ..dependency("webpki-roots", "1", &[]) };
/// The operating system's verifier (rustls).
pub(crate) const RUSTLS_PLATFORM_VERIFIER: Dependency =
    Dependency { default_features: true, ..dependency("rustls-platform-verifier", "0.7", &[]) };

/// rustls 0.24's pre-release and its aws-lc-rs provider, pinned: the crates of the runtime's
/// `experimental-rustls-024` feature, declared wherever `rustls-aws-lc`'s are and always optional.
pub(crate) const RUSTLS_024: [Dependency; 2] = [
    Dependency { package: Some("rustls"), ..dependency("rustls-024", "=0.24.0-dev.2", &["webpki"]) },
    Dependency {
        package: Some("rustls-aws-lc-rs"),
        default_features: true,
        ..dependency("rustls-aws-lc-rs-024", "=0.24.0-dev.2", &[])
    },
];

/// The crates of every rustls provider.
const RUSTLS_CRATES: &[&Dependency] = &[&RUSTLS, &TOKIO_RUSTLS];
/// The crates of both s2n-tls providers.
const S2N_CRATES: &[&Dependency] = &[&S2N_TLS, &S2N_TLS_TOKIO, &WEBPKI_ROOT_CERTS, &X509_CERT, &DER, &AWS_LC_RS];

/// One trust-root source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RootsFacts {
    /// Its name: the runtime's cargo feature, the policy-file spelling, `TrustRoots::name()`.
    pub(crate) name: &'static str,
    /// The crate that brings it.
    pub(crate) krate: &'static Dependency,
    /// Whether only the rustls providers can use it (the others read or bundle their own store).
    pub(crate) rustls_only: bool,
    /// What the application's `--cfg smithy_tls_roots` needs to select it.
    pub(crate) reach: Reach,
    /// The runtime's cargo feature, documented.
    pub(crate) feature_doc: &'static str,
}

/// Every trust-root source, in `TrustRoots` order.
pub(crate) const ROOTS: [RootsFacts; 3] = [
    RootsFacts {
        name: "native",
        krate: &RUSTLS_NATIVE_CERTS,
        rustls_only: false,
        reach: Reach::CfgAlone,
        feature_doc: "Trust roots from the operating system store (honours SSL_CERT_FILE / SSL_CERT_DIR).",
    },
    RootsFacts {
        name: "webpki",
        krate: &WEBPKI_ROOTS,
        rustls_only: true,
        reach: Reach::WithFeature,
        feature_doc: "Bundled Mozilla trust roots (no filesystem access).",
    },
    RootsFacts {
        name: "platform-verifier",
        krate: &RUSTLS_PLATFORM_VERIFIER,
        rustls_only: true,
        reach: Reach::WithFeature,
        feature_doc: "The operating system's certificate verifier (rustls providers only): Security.framework on \
                      Apple platforms and CryptoAPI on Windows, with no trust store to load at start-up; the native \
                      store checked by webpki on Linux and other Unix systems.",
    },
];

/// Where aws-lc's FIPS module (aws-lc-fips-sys) builds as a static library: the only targets of
/// the FIPS providers (little-endian, 64-bit pointers).
pub(crate) const FIPS_MODULE_TARGETS: FipsModuleTargets =
    FipsModuleTargets { os: &["linux"], arch: &["x86_64", "aarch64"], env: &["gnu", "musl"] };

/// Targets by their `target_os`, `target_arch` and `target_env`: a target is one when all three
/// of its values are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FipsModuleTargets {
    /// The `target_os` values.
    pub(crate) os: &'static [&'static str],
    /// The `target_arch` values.
    pub(crate) arch: &'static [&'static str],
    /// The `target_env` values.
    pub(crate) env: &'static [&'static str],
}

impl FipsModuleTargets {
    /// Whether a target with these cfg values is one.
    pub(crate) fn contains(&self, os: &str, arch: &str, env: &str) -> bool {
        self.os.contains(&os) && self.arch.contains(&arch) && self.env.contains(&env)
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
        crates: RUSTLS_CRATES,
        crypto_features: Some(CryptoFeatures { krate: &RUSTLS, features: &["aws_lc_rs", "prefer-post-quantum"], gate: None }),
        reach: Reach::CfgAlone,
        feature_doc: "rustls with the aws-lc-rs crypto provider (post-quantum hybrid key exchange preferred).",
    },
    ProviderFacts {
        name: "rustls-ring",
        variant: "RustlsRing",
        summary: "rustls with ring.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::Ring,
        only_on_os: &[],
        crates: RUSTLS_CRATES,
        crypto_features: Some(CryptoFeatures { krate: &RUSTLS, features: &["ring"], gate: None }),
        reach: Reach::CfgAlone,
        feature_doc: "rustls with the ring crypto provider.",
    },
    ProviderFacts {
        name: "s2n-tls",
        variant: "S2nTls",
        summary: "s2n-tls.",
        library: TlsLibrary::S2n,
        crypto: Crypto::AwsLc,
        only_on_os: &["linux", "macos"],
        crates: S2N_CRATES,
        crypto_features: None,
        reach: Reach::WithFeature,
        feature_doc: "s2n-tls (Linux and macOS only), with aws-lc as its libcrypto.",
    },
    ProviderFacts {
        name: "rustls-aws-lc-fips",
        variant: "RustlsAwsLcFips",
        summary: "rustls with the FIPS build of aws-lc-rs.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::AwsLcFips,
        only_on_os: &[],
        crates: RUSTLS_CRATES,
        crypto_features: Some(CryptoFeatures { krate: &RUSTLS, features: &["fips"], gate: Some(&TOKIO_RUSTLS) }),
        reach: Reach::WithFeature,
        feature_doc: "rustls with the FIPS build of aws-lc-rs (aws-lc-fips-sys: needs cmake, Go and Perl to build; Linux \
                      x86_64/aarch64). A build with it must not enable any other provider: aws-lc-rs's `fips` applies to \
                      the whole build, so s2n-tls and rustls-aws-lc would silently use the FIPS module too (the crate \
                      refuses that combination at compile time).",
    },
    ProviderFacts {
        name: "s2n-tls-fips",
        variant: "S2nTlsFips",
        summary: "s2n-tls with the FIPS build of aws-lc.",
        library: TlsLibrary::S2n,
        crypto: Crypto::AwsLcFips,
        only_on_os: &["linux", "macos"],
        crates: S2N_CRATES,
        crypto_features: Some(CryptoFeatures { krate: &S2N_TLS, features: &["fips"], gate: Some(&S2N_TLS_SYS) }),
        reach: Reach::WithFeature,
        feature_doc: "s2n-tls with the FIPS build of aws-lc as its libcrypto (s2n-tls's `fips`; security policy `20251015`, \
                      s2n-tls's FIPS default), Linux x86_64/aarch64. Like `rustls-aws-lc-fips`, it may share a build \
                      only with the other FIPS provider.",
    },
    ProviderFacts {
        name: "openssl",
        variant: "OpenSsl",
        summary: "The operating system's OpenSSL.",
        library: TlsLibrary::SystemLibssl,
        crypto: Crypto::System,
        // The systems whose own TLS library is OpenSSL (the generator's `no_system_libssl` says
        // why each other one is not served).
        only_on_os: &["linux", "freebsd", "netbsd"],
        crates: &[&OPENSSL, &OPENSSL_SYS, &TOKIO_OPENSSL, &FOREIGN_TYPES_SHARED, &WEBPKI_ROOT_CERTS],
        crypto_features: None,
        reach: Reach::WithFeature,
        feature_doc: "The operating system's OpenSSL (libssl 1.1.1 or 3.x, linked dynamically through pkg-config): the distro's \
                      crypto policy (`OPENSSL_CONF`, its `system_default` section) applies and is only tightened where it \
                      is below this crate's floor; in FIPS mode when the system's OpenSSL is. Needs pkg-config and the \
                      libssl headers (`libssl-dev`, `openssl-devel`) at build time.",
    },
    ProviderFacts {
        name: "rustls-custom",
        variant: "RustlsCustom",
        summary: "rustls with the application's own CryptoProvider.",
        library: TlsLibrary::Rustls,
        crypto: Crypto::Application,
        only_on_os: &[],
        crates: RUSTLS_CRATES,
        crypto_features: None,
        reach: Reach::CfgAlone,
        feature_doc: "rustls with the application's own `CryptoProvider`: the one handed to `set_custom_crypto_provider`, else \
                      rustls's process-wide default; no crypto crate of this crate's is compiled, and a connection \
                      without either fails with an error saying so.",
    },
];
