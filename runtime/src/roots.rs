//! Trust roots: where a client's trusted certificate authorities come from.
//!
//! `native` and `webpki` are loaded at most once per process and shared by every client that
//! uses them; `platform-verifier` is set up once per client configuration (the process-wide
//! shared clients: once per process). Nothing is loaded while a client is built; the first
//! connection (or a background warm-up started at construction) pays for it.

use rustls_pki_types::CertificateDer;

use crate::error::Error;

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
    #[cfg(feature = "native")]
    Native,
    /// The Mozilla root program bundled into the binary (`webpki-roots`); touches no file.
    /// Cargo feature `webpki`.
    #[cfg(feature = "webpki")]
    Webpki,
    /// The operating system's own certificate verifier (`rustls-platform-verifier`), rustls
    /// providers only. On macOS, iOS and Windows the system checks each chain (revocation and
    /// enterprise-installed roots included) and nothing is loaded at start-up; on Linux and other
    /// Unix systems the native store (honouring `SSL_CERT_FILE` / `SSL_CERT_DIR`) is read once
    /// per client configuration and chains are checked by webpki. On Android the application
    /// must first hand the verifier its JNI context (`rustls_platform_verifier::android::init_with_env`
    /// or a sibling), and extra root certificates are not supported there. Cargo feature
    /// `platform-verifier`.
    #[cfg(feature = "platform-verifier")]
    PlatformVerifier,
    /// The operating system's store, as [`Native`](TrustRoots::Native) — or, where it yields no
    /// usable certificate (no CA bundle installed, as in a `FROM scratch` image; an empty or
    /// unreadable `SSL_CERT_FILE` / `SSL_CERT_DIR`), the bundled Mozilla roots of
    /// [`Webpki`](TrustRoots::Webpki) instead, with a warning event saying so. What a smithy-tls
    /// policy's `empty-store = "webpki"` selects; plain `Native` fails every connection there.
    /// Cargo features `native` and `webpki`.
    #[cfg(native_or_webpki)]
    NativeOrWebpki,
}

/// The cargo feature of every trust-root source, compiled into this build or not: the one list
/// messages name when they list the sources (a test checks it against the manifest's features).
pub(crate) const ROOTS_FEATURES: &[&str] = &["native", "webpki", "platform-verifier"];

impl TrustRoots {
    /// Every trust-root source compiled into this build, in a stable order.
    pub const ALL: &'static [TrustRoots] = &[
        #[cfg(feature = "native")]
        TrustRoots::Native,
        #[cfg(feature = "webpki")]
        TrustRoots::Webpki,
        #[cfg(feature = "platform-verifier")]
        TrustRoots::PlatformVerifier,
        #[cfg(native_or_webpki)]
        TrustRoots::NativeOrWebpki,
    ];

    /// The source's name as used in cargo features and policy files (e.g. `native`);
    /// `native-or-webpki` for `TrustRoots::NativeOrWebpki`, which needs both
    /// features and which a policy writes as `roots = "native"` with `empty-store = "webpki"`.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "native")]
            TrustRoots::Native => "native",
            #[cfg(feature = "webpki")]
            TrustRoots::Webpki => "webpki",
            #[cfg(feature = "platform-verifier")]
            TrustRoots::PlatformVerifier => "platform-verifier",
            #[cfg(native_or_webpki)]
            TrustRoots::NativeOrWebpki => "native-or-webpki",
        }
    }
}

impl TrustRoots {
    /// Whether these roots work only with a rustls provider (the platform verifier is a rustls
    /// certificate verifier).
    pub(crate) fn needs_rustls(self) -> bool {
        match self {
            #[cfg(feature = "native")]
            TrustRoots::Native => false,
            #[cfg(feature = "webpki")]
            TrustRoots::Webpki => false,
            #[cfg(feature = "platform-verifier")]
            TrustRoots::PlatformVerifier => true,
            #[cfg(native_or_webpki)]
            TrustRoots::NativeOrWebpki => false,
        }
    }

    /// Whether preparing these roots reads the system store from disk (the platform verifier
    /// does on Linux and other Unix systems).
    pub(crate) fn reads_the_store(self) -> bool {
        match self {
            #[cfg(feature = "native")]
            TrustRoots::Native => true,
            #[cfg(feature = "webpki")]
            TrustRoots::Webpki => false,
            #[cfg(feature = "platform-verifier")]
            TrustRoots::PlatformVerifier => true,
            #[cfg(native_or_webpki)]
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
pub(crate) fn load_native_certificates() -> Result<Vec<CertificateDer<'static>>, crate::RootsError> {
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
            return Err(crate::RootsError::NativeEmpty { rejected: 0 });
        }
        return Err(crate::RootsError::NativeUnreadable {
            details: loaded.errors.iter().map(|e| e.to_string()).collect(),
        });
    }
    Ok(loaded.certs)
}

/// Says, once per backend prepared, that the native store yielded nothing and the bundled
/// roots stand in for it (`TrustRoots::NativeOrWebpki`).
#[cfg(native_or_webpki)]
pub(crate) fn warn_native_fallback(provider: crate::TlsProvider, why: &crate::RootsError, roots: usize) {
    tracing::warn!(
        %provider,
        reason = %why,
        fallback = "webpki",
        roots,
        "no usable certificate in the native trust store: using the bundled webpki roots instead \
         (native-or-webpki roots, a policy's empty-store = \"webpki\")"
    );
}

/// The environment variable the AWS CLI and the other AWS SDKs read for a CA bundle: a PEM file
/// whose certificates are the trusted roots, replacing the default ones.
pub const AWS_CA_BUNDLE: &str = "AWS_CA_BUNDLE";

/// The CA bundle `AWS_CA_BUNDLE` names, if it is set and not empty.
pub(crate) fn ca_bundle_from_env() -> Option<std::path::PathBuf> {
    std::env::var_os(AWS_CA_BUNDLE).filter(|v| !v.is_empty()).map(std::path::PathBuf::from)
}

/// Reads a CA bundle; errors name the variable and the path.
pub(crate) fn load_ca_bundle(path: &std::path::Path) -> Result<ExtraRoots, Error> {
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
    pub(crate) fn add_pem(&mut self, origin: &str, pem: &[u8]) -> Result<usize, Error> {
        use rustls_pki_types::pem::PemObject;
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| Error::InvalidPem { origin: origin.to_owned(), reason: e.to_string() })?;
            self.certificates.push(cert.into_owned());
            added += 1;
        }
        if added == 0 {
            return Err(Error::InvalidPem {
                origin: origin.to_owned(),
                reason: "no `-----BEGIN CERTIFICATE-----` block found".to_owned(),
            });
        }
        Ok(added)
    }

    /// [`add_pem`](Self::add_pem) for the bundle in the file at `path`; a file that cannot be
    /// read is an error of the same kind, named by `origin`.
    pub(crate) fn add_pem_file(&mut self, origin: &str, path: &std::path::Path) -> Result<usize, Error> {
        let pem =
            std::fs::read(path).map_err(|e| Error::InvalidPem { origin: origin.to_owned(), reason: e.to_string() })?;
        self.add_pem(origin, &pem)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.certificates.is_empty()
    }
}

/// s2n-tls and OpenSSL read the system store through libcrypto's default paths, which silently
/// skip missing files; they check here first so that an unusable store is a clear error.
#[cfg(all(feature = "native", store_by_library))]
pub(crate) fn check_native_store() -> Result<(), crate::RootsError> {
    use std::path::Path;
    let mut details = Vec::new();
    if let Some(file) = std::env::var_os("SSL_CERT_FILE") {
        match std::fs::metadata(&file) {
            Ok(m) if m.is_file() => return Ok(()),
            Ok(_) => details.push(format!("SSL_CERT_FILE={}: not a file", Path::new(&file).display())),
            Err(e) => details.push(format!("SSL_CERT_FILE={}: {e}", Path::new(&file).display())),
        }
        return Err(crate::RootsError::NativeUnreadable { details });
    }
    if let Some(dir) = std::env::var_os("SSL_CERT_DIR") {
        if Path::new(&dir).is_dir() {
            return Ok(());
        }
        details.push(format!("SSL_CERT_DIR={}: not a directory", Path::new(&dir).display()));
        return Err(crate::RootsError::NativeUnreadable { details });
    }
    const DEFAULTS: &[&str] =
        &["/etc/ssl/cert.pem", "/etc/ssl/certs", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem"];
    if DEFAULTS.iter().any(|p| Path::new(p).exists()) {
        return Ok(());
    }
    Err(crate::RootsError::NativeUnreadable { details: DEFAULTS.iter().map(|p| format!("{p}: not found")).collect() })
}
