//! A backend prepared on first need, at most once, shared by every connection of a client; and
//! the backend for a rotated client identity.

use std::sync::{Arc, OnceLock};

use super::backend::TlsBackend;
use super::refusal::RefusalLog;
use super::settings::TlsSettings;
use crate::error::Error;
use crate::identity::IdentitySource;
use crate::roots::TrustRoots;

/// A backend prepared on first need, at most once, shared by every connection of a client.
#[derive(Debug)]
pub(crate) struct LazyTlsBackend {
    settings: TlsSettings,
    /// Refusals of our certificate met on reads, by every connection of the client.
    refusals: Arc<RefusalLog>,
    prepared: OnceLock<Result<Arc<TlsBackend>, Error>>,
    /// The backend for TLS to `https://` proxies: the same provider and roots, HTTP/1.1 only
    /// (the `CONNECT` is HTTP/1.1), no client identity, made on first use.
    for_proxies: OnceLock<Arc<LazyTlsBackend>>,
    /// Files the client identity is read from (`prepared` presents the pair read first).
    rotation: Option<Rotation>,
}

/// A client identity read from files, and the backend prepared with the newest pair.
#[derive(Debug)]
struct Rotation {
    watched: crate::identity::WatchedIdentity,
    /// The generation `LazyTlsBackend::prepared` presents.
    first: u64,
    /// The backend prepared with a later generation, once there is one. An async lock: the
    /// connections that find a new pair wait for one preparation.
    newest: tokio::sync::Mutex<Option<(u64, Arc<TlsBackend>)>>,
}

impl LazyTlsBackend {
    pub(crate) fn new(settings: TlsSettings) -> Arc<Self> {
        Self::with_identity(settings, None)
    }

    /// A backend presenting `identity` (replacing `settings.client_identity`).
    pub(crate) fn with_identity(mut settings: TlsSettings, identity: Option<IdentitySource>) -> Arc<Self> {
        let rotation = match identity {
            None => None,
            Some(IdentitySource::Fixed(identity)) => {
                settings.client_identity = Some(identity);
                None
            }
            Some(IdentitySource::Watched(watched)) => {
                let (identity, first) = watched.refresh();
                settings.client_identity = Some(identity);
                Some(Rotation { watched, first, newest: tokio::sync::Mutex::new(None) })
            }
        };
        Arc::new(LazyTlsBackend {
            settings,
            refusals: Arc::default(),
            prepared: OnceLock::new(),
            for_proxies: OnceLock::new(),
            rotation,
        })
    }

    /// Where the client identity comes from, for `Debug`.
    pub(crate) fn identity_source(&self) -> Option<IdentitySource> {
        match (&self.rotation, &self.settings.client_identity) {
            (Some(rotation), _) => Some(IdentitySource::Watched(rotation.watched.clone())),
            (None, Some(identity)) => Some(IdentitySource::Fixed(identity.clone())),
            (None, None) => None,
        }
    }

    /// The backend for TLS to `https://` proxies (see `for_proxies`).
    pub(crate) fn for_proxies(&self) -> Arc<LazyTlsBackend> {
        Arc::clone(
            self.for_proxies
                // The client identity is for origins: a proxy that asks for a certificate gets none.
                .get_or_init(|| {
                    LazyTlsBackend::new(TlsSettings {
                        enable_http2: false,
                        client_identity: None,
                        ..self.settings.clone()
                    })
                }),
        )
    }

    pub(crate) fn settings(&self) -> &TlsSettings {
        &self.settings
    }

    /// The refusals of our certificate this client's connections met on reads.
    pub(crate) fn refusals(&self) -> &Arc<RefusalLog> {
        &self.refusals
    }

    fn prepare_blocking(&self) -> Result<Arc<TlsBackend>, Error> {
        self.prepared
            .get_or_init(|| {
                let started = std::time::Instant::now();
                let backend = TlsBackend::prepare(&self.settings)
                    .map(|backend| Arc::new(backend.reporting_to(&self.refusals)));
                tracing::debug!(provider = %self.settings.provider, elapsed = ?started.elapsed(), ok = backend.is_ok(), "prepared TLS backend");
                backend
            })
            .clone()
    }

    /// Whether preparing takes long enough (milliseconds) to be worth a thread: aws-lc seeds
    /// its random generator from CPU-jitter entropy on first use, and the system trust store
    /// is read from disk. ring with bundled or given roots prepares in microseconds, less than
    /// starting a thread costs.
    fn preparation_is_slow(&self) -> bool {
        self.settings.provider.is_built_on_aws_lc() || self.settings.roots.is_some_and(TrustRoots::reads_the_store)
    }

    /// Starts preparing on a background thread so that the first connection finds it done.
    /// Does nothing when already prepared or when preparing is quick. Never blocks the caller.
    pub(crate) fn warm_up_in_background(self: &Arc<Self>) {
        if self.prepared.get().is_some() || !self.preparation_is_slow() {
            return;
        }
        let this = Arc::clone(self);
        let spawned = std::thread::Builder::new().name("smithy-tls-warm-up".into()).spawn(move || {
            let _ = this.prepare_blocking();
        });
        if let Err(e) = spawned {
            // Not fatal: the first connection prepares instead.
            tracing::debug!(error = %e, "could not start TLS warm-up thread");
        }
    }

    /// The prepared backend, preparing it on tokio's blocking pool if nobody has yet (inline
    /// when preparing is quick). With a watched client identity, the backend for the newest
    /// pair its files hold (looked at as `WatchedIdentity` says).
    pub(crate) async fn get(self: &Arc<Self>) -> Result<Arc<TlsBackend>, Error> {
        if let Some(rotation) = &self.rotation {
            let (identity, generation) = rotation.watched.refresh();
            if generation != rotation.first {
                return self.rotated(rotation, identity, generation).await;
            }
        }
        if let Some(done) = self.prepared.get() {
            return done.clone();
        }
        if !self.preparation_is_slow() {
            return self.prepare_blocking();
        }
        let this = Arc::clone(self);
        match tokio::task::spawn_blocking(move || this.prepare_blocking()).await {
            Ok(result) => result,
            // The blocking pool is shutting down or the task panicked: prepare inline.
            Err(_) => self.prepare_blocking(),
        }
    }
}

impl LazyTlsBackend {
    /// The backend presenting `identity`, the watched files' pair `generation`: prepared once
    /// (on tokio's blocking pool) by the first connection that finds it, a fresh configuration
    /// whose session cache holds no session of an older identity.
    async fn rotated(
        &self,
        rotation: &Rotation,
        identity: crate::identity::ClientIdentity,
        generation: u64,
    ) -> Result<Arc<TlsBackend>, Error> {
        let mut newest = rotation.newest.lock().await;
        if let Some((prepared, backend)) = &*newest {
            if *prepared >= generation {
                return Ok(Arc::clone(backend));
            }
        }
        let settings = TlsSettings { client_identity: Some(identity), ..self.settings.clone() };
        let refusals = Arc::clone(&self.refusals);
        let prepare = move || TlsBackend::prepare(&settings).map(|backend| Arc::new(backend.reporting_to(&refusals)));
        let started = std::time::Instant::now();
        let backend = tokio::task::spawn_blocking(prepare.clone()).await.unwrap_or_else(|_| prepare())?;
        tracing::debug!(provider = %self.settings.provider, generation, elapsed = ?started.elapsed(), "prepared TLS backend for the rotated client identity");
        *newest = Some((generation, Arc::clone(&backend)));
        Ok(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::TlsProvider;

    fn lazy(provider: TlsProvider, roots: Option<TrustRoots>) -> Arc<LazyTlsBackend> {
        LazyTlsBackend::new(TlsSettings { roots, ..TlsSettings::for_tests(provider) })
    }

    #[test]
    fn only_slow_preparations_get_a_warm_up_thread() {
        #[cfg(provider = "rustls-ring")]
        {
            assert!(!lazy(TlsProvider::RustlsRing, None).preparation_is_slow());
            #[cfg(roots = "webpki")]
            assert!(!lazy(TlsProvider::RustlsRing, Some(TrustRoots::Webpki)).preparation_is_slow());
            #[cfg(roots = "native")]
            assert!(lazy(TlsProvider::RustlsRing, Some(TrustRoots::Native)).preparation_is_slow());
            #[cfg(roots = "platform-verifier")]
            assert!(lazy(TlsProvider::RustlsRing, Some(TrustRoots::PlatformVerifier)).preparation_is_slow());
        }
        #[cfg(provider = "rustls-aws-lc")]
        assert!(lazy(TlsProvider::RustlsAwsLc, None).preparation_is_slow());
        #[cfg(provider = "rustls-aws-lc-fips")]
        assert!(lazy(TlsProvider::RustlsAwsLcFips, None).preparation_is_slow());
        #[cfg(s2n_plain)]
        assert!(lazy(TlsProvider::S2nTls, None).preparation_is_slow());
        #[cfg(s2n_fips)]
        assert!(lazy(TlsProvider::S2nTlsFips, None).preparation_is_slow());
        // OpenSSL prepares in well under a millisecond but for reading the system store.
        #[cfg(openssl_provider)]
        assert!(!lazy(TlsProvider::OpenSsl, None).preparation_is_slow());
        #[cfg(all(openssl_provider, roots = "native"))]
        assert!(lazy(TlsProvider::OpenSsl, Some(TrustRoots::Native)).preparation_is_slow());
    }

    #[cfg(provider = "rustls-ring")]
    #[tokio::test]
    async fn a_quick_preparation_happens_inline_at_first_use() {
        let tls = lazy(TlsProvider::RustlsRing, None);
        tls.warm_up_in_background();
        // A background preparation would take microseconds; give it ample time to show.
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(tls.prepared.get().is_none(), "no background preparation was started");
        // No roots at all is a configuration error, reported from the inline preparation.
        assert!(matches!(tls.get().await, Err(Error::NoTrustRoots)));
        assert!(tls.prepared.get().is_some());
    }
}
