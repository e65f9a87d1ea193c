//! Trust roots: where a client's trusted certificate authorities come from.
//!
//! `native` and `webpki` are loaded at most once per process and shared by every client that
//! uses them; `platform-verifier` is set up once per client configuration (the process-wide
//! shared clients: once per process). Nothing is loaded while a client is built; the first
//! connection (or a background warm-up started at construction) pays for it.

use std::error::Error as StdError;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::CertificateDer;

/// A source of trusted root certificates.
///
/// ```
/// # #[cfg(feature = "webpki")] {
/// use smithy_default_tls::TrustRoots;
/// assert_eq!(TrustRoots::Webpki.name(), "webpki");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TrustRoots {
    /// The operating system's certificate store (via `rustls-native-certs`). On Linux and other
    /// Unix systems the `SSL_CERT_FILE` and `SSL_CERT_DIR` environment variables, when set,
    /// replace the default locations. Cargo feature `native`.
    #[cfg(named_roots = "native")]
    Native,
    /// The Mozilla root program bundled into the binary (`webpki-roots`); touches no file.
    /// Cargo feature `webpki`.
    #[cfg(named_roots = "webpki")]
    Webpki,
    /// The operating system's own certificate verifier (`rustls-platform-verifier`), rustls
    /// providers only. On macOS, iOS and Windows the system checks each chain (revocation and
    /// enterprise-installed roots included) and nothing is loaded at start-up; on Linux and other
    /// Unix systems the native store (honouring `SSL_CERT_FILE` / `SSL_CERT_DIR`) is read once
    /// per client configuration and chains are checked by webpki. On Android the application
    /// must first hand the verifier its JNI context (`rustls_platform_verifier::android::init_with_env`
    /// or a sibling), and extra root certificates are not supported there. Cargo feature
    /// `platform-verifier`.
    #[cfg(named_roots = "platform-verifier")]
    PlatformVerifier,
    /// The operating system's store, as [`Native`](TrustRoots::Native) — or, where it yields no
    /// usable certificate (no CA bundle installed, as in a `FROM scratch` image; an empty or
    /// unreadable `SSL_CERT_FILE` / `SSL_CERT_DIR`), the bundled Mozilla roots of
    /// [`Webpki`](TrustRoots::Webpki) instead, with a warning event saying so. What a smithy-tls
    /// policy's `empty-store = "webpki"` selects; plain `Native` fails every connection there.
    /// Cargo features `native` and `webpki`.
    #[cfg(named_native_or_webpki)]
    NativeOrWebpki,
}

impl TrustRoots {
    /// Every trust-root source compiled into this build, in a stable order.
    pub const ALL: &'static [TrustRoots] = &[
        #[cfg(roots = "native")]
        TrustRoots::Native,
        #[cfg(roots = "webpki")]
        TrustRoots::Webpki,
        #[cfg(roots = "platform-verifier")]
        TrustRoots::PlatformVerifier,
        #[cfg(native_or_webpki)]
        TrustRoots::NativeOrWebpki,
    ];

    /// The source's name as used in cargo features and policy files (e.g. `native`);
    /// `native-or-webpki` for `TrustRoots::NativeOrWebpki`, which needs both
    /// features and which a policy writes as `roots = "native"` with `empty-store = "webpki"`.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(named_roots = "native")]
            TrustRoots::Native => "native",
            #[cfg(named_roots = "webpki")]
            TrustRoots::Webpki => "webpki",
            #[cfg(named_roots = "platform-verifier")]
            TrustRoots::PlatformVerifier => "platform-verifier",
            #[cfg(named_native_or_webpki)]
            TrustRoots::NativeOrWebpki => "native-or-webpki",
        }
    }
}

impl TrustRoots {
    /// Whether these roots work only with a rustls provider (the platform verifier is a rustls
    /// certificate verifier).
    pub(crate) fn needs_rustls(self) -> bool {
        match self {
            #[cfg(named_roots = "native")]
            TrustRoots::Native => false,
            #[cfg(named_roots = "webpki")]
            TrustRoots::Webpki => false,
            #[cfg(named_roots = "platform-verifier")]
            TrustRoots::PlatformVerifier => true,
            #[cfg(named_native_or_webpki)]
            TrustRoots::NativeOrWebpki => false,
        }
    }

    /// Whether preparing these roots reads the system store from disk (the platform verifier
    /// does on Linux and other Unix systems).
    pub(crate) fn reads_the_store(self) -> bool {
        match self {
            #[cfg(named_roots = "native")]
            TrustRoots::Native => true,
            #[cfg(named_roots = "webpki")]
            TrustRoots::Webpki => false,
            #[cfg(named_roots = "platform-verifier")]
            TrustRoots::PlatformVerifier => true,
            #[cfg(named_native_or_webpki)]
            TrustRoots::NativeOrWebpki => true,
        }
    }
}

impl std::fmt::Display for TrustRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads the operating system store for the rustls backends (s2n-tls reads it itself, but asks
/// here first for `TrustRoots::NativeOrWebpki`). The rustls backends cache the outcome,
/// certificates or error, for the life of the process, so a broken store is reported the same
/// way at every connection.
#[cfg(any(rustls_native, native_or_webpki))]
pub(crate) fn load_native_certificates() -> Result<Vec<CertificateDer<'static>>, RootsError> {
    let started = std::time::Instant::now();
    let loaded = rustls_native_certs::load_native_certs();
    tracing::debug!(
        certificates = loaded.certs.len(),
        errors = loaded.errors.len(),
        elapsed = ?started.elapsed(),
        "loaded native trust roots"
    );
    if loaded.certs.is_empty() {
        if loaded.errors.is_empty() {
            return Err(RootsError::NativeEmpty { rejected: 0 });
        }
        let failures = loaded.errors.into_iter().map(|e| StoreError::Read(Arc::new(e))).collect();
        return Err(RootsError::NativeUnreadable { failures });
    }
    Ok(loaded.certs)
}

/// The environment variable the AWS CLI and the other AWS SDKs read for a CA bundle: a PEM file
/// whose certificates are the trusted roots, replacing the default ones.
pub const AWS_CA_BUNDLE: &str = "AWS_CA_BUNDLE";

/// The CA bundle `AWS_CA_BUNDLE` names, if it is set and not empty.
pub(crate) fn ca_bundle_from_env() -> Option<std::path::PathBuf> {
    std::env::var_os(AWS_CA_BUNDLE).filter(|v| !v.is_empty()).map(std::path::PathBuf::from)
}

/// Reads a CA bundle; errors name the variable and the path.
pub(crate) fn load_ca_bundle(path: &Path) -> Result<ExtraRoots, BadPem> {
    let mut roots = ExtraRoots::default();
    roots.add_pem_file(&format!("{AWS_CA_BUNDLE}={}", path.display()), path)?;
    Ok(roots)
}

/// Extra certificates a caller adds on top of (or instead of) a [`TrustRoots`] source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct ExtraRoots {
    pub(crate) certificates: Vec<CertificateDer<'static>>,
}

impl ExtraRoots {
    /// Parses every `CERTIFICATE` block of a PEM bundle; other blocks are ignored.
    pub(crate) fn add_pem(&mut self, origin: &str, pem: &[u8]) -> Result<usize, BadPem> {
        use rustls_pki_types::pem::PemObject;
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| BadPem::new(origin, PemError::Malformed(Arc::new(e))))?;
            self.certificates.push(cert.into_owned());
            added += 1;
        }
        if added == 0 {
            return Err(BadPem::new(origin, PemError::NoCertificate));
        }
        Ok(added)
    }

    /// [`add_pem`](Self::add_pem) for the bundle in the file at `path`; a file that cannot be
    /// read is an error of the same kind, named by `origin`.
    pub(crate) fn add_pem_file(&mut self, origin: &str, path: &Path) -> Result<usize, BadPem> {
        let pem = std::fs::read(path).map_err(|e| BadPem::new(origin, PemError::Unreadable(Arc::new(e))))?;
        self.add_pem(origin, &pem)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.certificates.is_empty()
    }
}

/// The libraries that read the system store themselves (`store_by_library`) use libcrypto's
/// default paths, which silently skip missing files; they check here first so that an unusable
/// store is a clear error.
#[cfg(all(roots = "native", store_by_library))]
pub(crate) fn check_native_store() -> Result<(), RootsError> {
    let unreadable = |failure| Err(RootsError::NativeUnreadable { failures: vec![failure] });
    if let Some(file) = std::env::var_os("SSL_CERT_FILE") {
        let path = PathBuf::from(file);
        return match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(()),
            Ok(_) => unreadable(StoreError::CertFileNotAFile { path }),
            Err(e) => unreadable(StoreError::CertFileUnreadable { path, source: Arc::new(e) }),
        };
    }
    if let Some(dir) = std::env::var_os("SSL_CERT_DIR") {
        let path = PathBuf::from(dir);
        if path.is_dir() {
            return Ok(());
        }
        return unreadable(StoreError::CertDirNotADirectory { path });
    }
    const DEFAULTS: &[&str] =
        &["/etc/ssl/cert.pem", "/etc/ssl/certs", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem"];
    if DEFAULTS.iter().any(|p| Path::new(p).exists()) {
        return Ok(());
    }
    let failures = DEFAULTS.iter().map(|p| StoreError::DefaultMissing { path: PathBuf::from(p) }).collect();
    Err(RootsError::NativeUnreadable { failures })
}

/// Why a trust-root source could not be used. Reported at the first connection that needs the
/// roots (loading never happens while a client is being built), and for every connection after
/// that: the outcome of loading is cached for the life of the process.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RootsError {
    /// The operating system store could not be read and yielded no certificate.
    NativeUnreadable {
        /// Every failure met while reading the store, in the order met (never empty); the
        /// first is the error's [`source`](StdError::source).
        failures: Vec<StoreError>,
    },
    /// The operating system store was read but holds no certificate this TLS library accepts.
    NativeEmpty {
        /// How many certificates were found and rejected as unparsable.
        rejected: usize,
    },
    /// The operating system's certificate verifier could not be set up (on Linux: no usable
    /// certificate in the native store).
    PlatformVerifier {
        /// What the verifier reported (a `rustls::Error`).
        source: Arc<dyn StdError + Send + Sync>,
    },
}

/// Where the platform verifier's trust comes from on this operating system, as advice.
const PLATFORM_STORE_HINT: &str = if cfg!(target_os = "windows") {
    "check the Windows certificate store (Trusted Root Certification Authorities)"
} else if cfg!(target_vendor = "apple") {
    "check the keychain's certificate trust settings"
} else if cfg!(target_os = "android") {
    "check the device's trusted credentials"
} else {
    "check SSL_CERT_FILE / SSL_CERT_DIR or install the system CA bundle"
};

impl fmt::Display for RootsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootsError::NativeUnreadable { failures } => {
                f.write_str("the native certificate store could not be read (")?;
                for (i, failure) in failures.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{failure}")?;
                }
                f.write_str(
                    "); check SSL_CERT_FILE / SSL_CERT_DIR, install the system CA bundle, or use the \
                     `webpki` roots",
                )
            }
            RootsError::NativeEmpty { rejected } => write!(
                f,
                "the native certificate store holds no usable certificate ({rejected} rejected); \
                 check SSL_CERT_FILE / SSL_CERT_DIR, install the system CA bundle, or use the \
                 `webpki` roots"
            ),
            RootsError::PlatformVerifier { source } => write!(
                f,
                "the platform certificate verifier could not be set up ({source}); {}, or use the \
                 `webpki` roots",
                PLATFORM_STORE_HINT
            ),
        }
    }
}

impl StdError for RootsError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            RootsError::NativeUnreadable { failures } => failures.first().map(|f| f as &(dyn StdError + 'static)),
            RootsError::NativeEmpty { .. } => None,
            RootsError::PlatformVerifier { source } => Some(&**source),
        }
    }
}

/// One failure reading the operating system's certificate store
/// ([`RootsError::NativeUnreadable`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StoreError {
    /// A file or directory of the store could not be read; the source (`rustls-native-certs`'s
    /// error) names it and says why.
    Read(Arc<dyn StdError + Send + Sync>),
    /// `SSL_CERT_FILE` names a path that cannot be examined (it does not exist, or is not
    /// accessible); the source says why.
    CertFileUnreadable {
        /// The path the variable names.
        path: PathBuf,
        /// Why it cannot be examined.
        source: Arc<std::io::Error>,
    },
    /// `SSL_CERT_FILE` names something other than a file (a directory, say).
    CertFileNotAFile {
        /// The path the variable names.
        path: PathBuf,
    },
    /// `SSL_CERT_DIR` names something other than a directory, or nothing.
    CertDirNotADirectory {
        /// The path the variable names.
        path: PathBuf,
    },
    /// Neither variable is set and none of the store's default locations exists; there is one
    /// such failure per location looked at.
    DefaultMissing {
        /// The location.
        path: PathBuf,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Read(e) => write!(f, "{e}"),
            StoreError::CertFileUnreadable { path, source } => write!(f, "SSL_CERT_FILE={}: {source}", path.display()),
            StoreError::CertFileNotAFile { path } => write!(f, "SSL_CERT_FILE={}: not a file", path.display()),
            StoreError::CertDirNotADirectory { path } => {
                write!(f, "SSL_CERT_DIR={}: not a directory", path.display())
            }
            StoreError::DefaultMissing { path } => write!(f, "{}: not found", path.display()),
        }
    }
}

impl StdError for StoreError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            StoreError::Read(e) => Some(&**e),
            StoreError::CertFileUnreadable { source, .. } => Some(&**source),
            StoreError::CertFileNotAFile { .. }
            | StoreError::CertDirNotADirectory { .. }
            | StoreError::DefaultMissing { .. } => None,
        }
    }
}

/// Why a PEM bundle or a certificate in it cannot be used
/// ([`Error::InvalidPem`](crate::Error::InvalidPem)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PemError {
    /// The file could not be read; the source says why.
    Unreadable(Arc<std::io::Error>),
    /// A PEM block is malformed; the source is the parser's error (`rustls-pki-types`).
    Malformed(Arc<dyn StdError + Send + Sync>),
    /// The bundle has no `CERTIFICATE` block.
    NoCertificate,
    /// The TLS library does not accept a certificate as a trust anchor; the source is its error.
    Rejected(Arc<dyn StdError + Send + Sync>),
}

impl fmt::Display for PemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PemError::Unreadable(e) => write!(f, "cannot be read: {e}"),
            PemError::Malformed(e) => write!(f, "malformed PEM: {e}"),
            PemError::NoCertificate => f.write_str("no `-----BEGIN CERTIFICATE-----` block found"),
            PemError::Rejected(e) => write!(f, "not usable as a trust anchor: {e}"),
        }
    }
}

impl StdError for PemError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            PemError::Unreadable(e) => Some(&**e),
            PemError::Malformed(e) | PemError::Rejected(e) => Some(&**e),
            PemError::NoCertificate => None,
        }
    }
}

/// A PEM bundle that cannot be used, and where it came from: what this module reports, and the
/// crate's callers turn into [`Error::InvalidPem`](crate::Error::InvalidPem) with `?`. (The
/// roots do not name the crate's `Error`, which names them.)
#[derive(Debug)]
pub(crate) struct BadPem {
    /// Where the bundle came from, as the caller named it.
    pub(crate) origin: String,
    /// What is wrong with it.
    pub(crate) reason: PemError,
}

impl BadPem {
    /// The bundle from `origin` is unusable for `reason`.
    pub(crate) fn new(origin: &str, reason: PemError) -> Self {
        BadPem { origin: origin.to_owned(), reason }
    }
}
