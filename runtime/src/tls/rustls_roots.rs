//! The trust anchors both rustls backends verify against (rustls 0.23's and 0.24's take the
//! same `rustls-pki-types` anchors): the roots source's store, built once per process, plus the
//! caller's extra certificates.

use std::sync::Arc;

use rustls::RootCertStore;

use super::settings::TlsSettings;
use crate::error::Error;
#[cfg(roots_source)]
use crate::provider::compiled::CompiledRoots;
use crate::roots::PemError;

/// The root store for a trust-root source, built once per process and source.
fn base_root_store(settings: &TlsSettings) -> Result<Arc<RootCertStore>, Error> {
    let Some(roots) = settings.compiled_roots()? else { return Ok(Arc::new(RootCertStore::empty())) };
    match roots {
        // The platform verifier brings its own roots; see `rustls::platform_verifier`.
        #[cfg(roots = "platform-verifier")]
        CompiledRoots::PlatformVerifier => Ok(Arc::new(RootCertStore::empty())),
        #[cfg(roots = "webpki")]
        CompiledRoots::Webpki => Ok(webpki_store()),
        #[cfg(roots = "native")]
        CompiledRoots::Native => Ok(native_store()?),
        // The native store while it yields a certificate; the bundled roots where it does not.
        #[cfg(native_or_webpki)]
        CompiledRoots::NativeOrWebpki => Ok(native_store().unwrap_or_else(|why| {
            let store = webpki_store();
            super::preparing::warn_native_fallback(settings.provider, &why, store.len());
            store
        })),
    }
}

/// The bundled Mozilla roots, built once per process.
#[cfg(roots = "webpki")]
fn webpki_store() -> Arc<RootCertStore> {
    static WEBPKI: std::sync::OnceLock<Arc<RootCertStore>> = std::sync::OnceLock::new();
    WEBPKI.get_or_init(|| Arc::new(RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() })).clone()
}

/// The operating system store, read once per process (the outcome, roots or error, is kept).
#[cfg(roots = "native")]
fn native_store() -> Result<Arc<RootCertStore>, crate::roots::RootsError> {
    type Cached = Result<Arc<RootCertStore>, crate::roots::RootsError>;
    static NATIVE: std::sync::OnceLock<Cached> = std::sync::OnceLock::new();
    NATIVE
        .get_or_init(|| {
            let certs = crate::roots::load_native_certificates()?;
            let mut store = RootCertStore::empty();
            let (added, rejected) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(crate::roots::RootsError::NativeEmpty { rejected });
            }
            Ok(Arc::new(store))
        })
        .clone()
}

/// Adds the caller's extra certificates to `store`; one that is not a usable trust anchor is
/// the caller's input error.
pub(super) fn add_extra_roots(store: &mut RootCertStore, settings: &TlsSettings) -> Result<(), Error> {
    for cert in &settings.extra_roots.certificates {
        store.add(cert.clone()).map_err(|e| Error::InvalidPem {
            origin: "extra root certificate".to_owned(),
            reason: PemError::Rejected(Arc::new(e)),
        })?;
    }
    Ok(())
}

/// The root store for the settings: the source's roots plus the extra certificates.
pub(super) fn root_store(settings: &TlsSettings) -> Result<Arc<RootCertStore>, Error> {
    let base = base_root_store(settings)?;
    let roots = if settings.extra_roots.is_empty() {
        base
    } else {
        let mut store = (*base).clone();
        add_extra_roots(&mut store, settings)?;
        Arc::new(store)
    };
    if roots.is_empty() {
        return Err(Error::NoTrustRoots);
    }
    Ok(roots)
}
