//! TLS backends: one module per implementation, behind one small interface.
//!
//! A backend is prepared once (trust roots loaded, configuration built) and then performs
//! handshakes over connected TCP streams. Preparation blocks: when it is slow (aws-lc's first
//! use, reading the system store) it runs on a background thread started when a client is built,
//! or on tokio's blocking pool at the first connection; when it is quick, inline at the first
//! connection.

#[cfg(any(rustls_backend, rustls_in_place))]
mod client_auth_seen;
mod key_log_file;
mod names;
#[cfg(openssl_provider)]
pub(crate) mod openssl;
#[cfg(read_ahead)]
mod read_ahead;
#[cfg(rustls_backend)]
pub(crate) mod rustls;
#[cfg(rustls_in_place)]
pub(crate) mod rustls_in_place;
#[cfg(rustls)]
mod rustls_roots;
#[cfg(s2n)]
pub(crate) mod s2n;
#[cfg(read_ahead)]
pub(crate) use read_ahead::ReadAhead;
mod transport;
pub(crate) use transport::Transport;

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::error::{Error, TlsHandshakeError};
use crate::identity::IdentitySource;
use crate::provider::application::ChosenBy;
#[cfg(rustls)]
use crate::provider::compiled::RustlsCrypto;
#[cfg(not(no_tls))]
use crate::provider::compiled::{Compiled, CompiledRoots};
use crate::roots::{ExtraRoots, TrustRoots};
use crate::TlsProvider;

/// How much one socket read may take in once a connection carries bulk data: four maximum-size
/// TLS records. Measured on a 2-core machine, 64 KiB and 256 KiB gave the same throughput; the
/// smaller buffer costs less memory per open connection. (`ReadAhead`, and the rustls 0.24
/// stream's input buffer.)
pub(crate) const READ_AHEAD_CAPACITY: usize = 64 * 1024;

/// The receive buffer a connection starts with: one maximum-size TLS record (16 KiB of data
/// plus header and tag). Enough for handshakes and small responses; a socket read that fills it
/// means bulk data is arriving, and the buffer grows to [`READ_AHEAD_CAPACITY`].
pub(crate) const INITIAL_CAPACITY: usize = 16 * 1024 + 256;

/// ALPN protocol identifiers offered by every backend, most preferred first.
pub(crate) const ALPN_H2: &[u8] = b"h2";
pub(crate) const ALPN_HTTP11: &[u8] = b"http/1.1";

/// What a backend needs to know to prepare itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TlsSettings {
    pub(crate) provider: TlsProvider,
    pub(crate) roots: Option<TrustRoots>,
    pub(crate) extra_roots: ExtraRoots,
    pub(crate) enable_http2: bool,
    pub(crate) session_resumption: bool,
    /// A PEM file whose certificates replace `roots` (AWS_CA_BUNDLE), read when preparing.
    pub(crate) ca_bundle: Option<std::path::PathBuf>,
    /// Whether `provider` and `roots` are what the builder asked for or the application's override.
    pub(crate) chosen_by: ChosenBy,
    /// The certificate and key presented to servers that ask for one (mutual TLS).
    pub(crate) client_identity: Option<crate::ClientIdentity>,
}

impl TlsSettings {
    /// The roots source to trust, as this build compiled it: `None` where only a CA bundle or
    /// extra certificates are trusted; `NotCompiled` where the application's override left it out
    /// (the clients it builds never ask for one).
    #[cfg(not(no_tls))]
    pub(crate) fn compiled_roots(&self) -> Result<Option<CompiledRoots>, Error> {
        self.roots.map(TrustRoots::compiled).transpose().map_err(Error::NotCompiled)
    }

    pub(crate) fn alpn(&self) -> Vec<Vec<u8>> {
        if self.enable_http2 {
            vec![ALPN_H2.to_vec(), ALPN_HTTP11.to_vec()]
        } else {
            vec![ALPN_HTTP11.to_vec()]
        }
    }
}

/// What was negotiated on a TLS connection. Attached to each connection, returned in the
/// extensions of every response it carried, and logged at debug level.
///
/// `Copy`: its names are constants (ours for ALPN and s2n-tls's versions, rustls's own, and one
/// copy each for the process of the suite and group names s2n-tls lends per connection), so
/// carrying it costs no allocation.
///
/// ```
/// use smithy_default_tls::ConnectionInfo;
///
/// // What a response's connection negotiated, from the response's extensions.
/// fn describe(info: &ConnectionInfo) -> String {
///     match info.tls {
///         Some(tls) => format!("{} {} via {}", tls.protocol_version, tls.cipher_suite, tls.provider),
///         None => "plain HTTP".to_owned(),
///     }
/// }
/// # let _ = describe;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsInfo {
    /// The provider that ran the handshake.
    pub provider: TlsProvider,
    /// The trust-root source the certificate was checked against; `None` where a CA bundle
    /// (`AWS_CA_BUNDLE`) or extra certificates alone were trusted.
    pub roots: Option<TrustRoots>,
    /// Who chose `provider` and `roots`: the client's builder (a generated crate's policy), or
    /// the application's `--cfg smithy_tls`.
    pub chosen_by: ChosenBy,
    /// The protocol version as the provider names it, e.g. `TLSv1_3` (rustls), `TLS13`
    /// (s2n-tls) or `TLSv1.3` (openssl).
    pub protocol_version: &'static str,
    /// The cipher suite as the provider names it, e.g. `TLS13_AES_256_GCM_SHA384` (rustls),
    /// `TLS_AES_256_GCM_SHA384` (s2n-tls, openssl) or `ECDHE-RSA-AES128-GCM-SHA256` (openssl's
    /// name of a TLS 1.2 suite).
    pub cipher_suite: &'static str,
    /// The key exchange group, e.g. `X25519MLKEM768`, when known (openssl: from OpenSSL 3.0 on,
    /// as OpenSSL names it).
    pub key_exchange_group: Option<&'static str>,
    /// The application protocol agreed through ALPN (`h2` or `http/1.1`), if any: a server
    /// that selects one the client did not offer fails the handshake, with every provider.
    pub alpn: Option<&'static str>,
    /// Whether the session was resumed from an earlier one.
    pub resumed: bool,
    /// Whether the connection ran in FIPS mode: FIPS-validated cryptography and the TLS
    /// settings NIST recommends (rustls's `ClientConnection::fips`; for s2n-tls, a libcrypto in
    /// FIPS mode and the FIPS security policy; for openssl, the system's OpenSSL 3 fetching its
    /// algorithms from its FIPS provider, `EVP_default_properties_is_fips_enabled`). True only
    /// with `TlsProvider::RustlsAwsLcFips`, `TlsProvider::S2nTlsFips`, and `TlsProvider::OpenSsl`
    /// on a system whose OpenSSL is in FIPS mode.
    pub fips: bool,
    /// Whether this client presented a certificate ([`Builder::client_identity`](crate::Builder::client_identity)):
    /// only when one is configured and the server asked for one. On a resumed session, whether
    /// the handshake that made it presented one is not known here: `false`.
    pub client_certificate_sent: bool,
    /// The TLS library that ran the handshake: `rustls 0.23`, `rustls 0.24` (the experimental
    /// `experimental-rustls-024` path), `s2n-tls`, or the system OpenSSL's own version string
    /// (e.g. `OpenSSL 3.0.17 1 Jul 2025`).
    pub library: &'static str,
}

/// Runs `work` here while `seed` runs on a second thread, and returns what `work` returned once
/// both are done; if no thread can be started, `seed` runs after `work`. `seed` is aws-lc's
/// first draw from its random generator, which seeds it from CPU-jitter entropy (tens of
/// milliseconds, once per process): the backends overlap it with the system trust store's
/// loading instead of doing one after the other.
#[cfg(any(rustls, s2n))]
fn seeding_meanwhile<T>(seed: impl Fn() + Sync, work: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        let seeding = std::thread::Builder::new().name("smithy-tls-seed".into()).spawn_scoped(scope, &seed);
        let done = work();
        match seeding {
            Ok(seeding) => {
                let _ = seeding.join();
            }
            Err(_) => seed(),
        }
        done
    })
}

/// `SSLKEYLOGFILE`, when set and not empty: where TLS secrets are logged for debugging (in the
/// NSS key log format Wireshark reads), with a warning that they are. Off otherwise.
fn key_log_file() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("SSLKEYLOGFILE").filter(|v| !v.is_empty()).map(std::path::PathBuf::from)?;
    tracing::warn!(
        path = %path.display(),
        "SSLKEYLOGFILE is set: TLS session secrets are written to it, so anyone who can read the \
         file can decrypt this process's traffic; unset it outside debugging"
    );
    Some(path)
}

/// Says, once per backend prepared, that the native store yielded nothing and the bundled
/// roots stand in for it (`TrustRoots::NativeOrWebpki`).
#[cfg(native_or_webpki)]
fn warn_native_fallback(provider: TlsProvider, why: &crate::RootsError, roots: usize) {
    tracing::warn!(
        %provider,
        reason = %why,
        fallback = "webpki",
        roots,
        "no usable certificate in the native trust store: using the bundled webpki roots instead \
         (native-or-webpki roots, a policy's empty-store = \"webpki\")"
    );
}

/// A prepared backend: its library's state, and what `TlsInfo` says of every connection.
#[derive(Debug)]
pub(crate) struct TlsBackend {
    library: Library,
    provider: TlsProvider,
    roots: Option<TrustRoots>,
    chosen_by: ChosenBy,
    /// The client's log of refusals of our certificate met on reads (`LazyTlsBackend`'s).
    refusals: Arc<RefusalLog>,
}

/// What a backend's handshake negotiated; [`TlsBackend::handshake`] makes it a [`TlsInfo`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Negotiated {
    pub(crate) protocol_version: &'static str,
    pub(crate) cipher_suite: &'static str,
    pub(crate) key_exchange_group: Option<&'static str>,
    pub(crate) alpn: Option<&'static str>,
    pub(crate) resumed: bool,
    pub(crate) fips: bool,
    pub(crate) client_certificate_sent: bool,
}

/// The library-specific half of a prepared backend.
#[derive(Debug)]
enum Library {
    #[cfg(rustls_backend)]
    Rustls(self::rustls::RustlsBackend),
    #[cfg(rustls_in_place)]
    RustlsInPlace(self::rustls_in_place::InPlaceBackend),
    #[cfg(s2n)]
    S2n(self::s2n::S2nBackend),
    #[cfg(openssl_provider)]
    OpenSsl(self::openssl::OpensslBackend),
}

impl TlsBackend {
    /// Loads roots and builds the configuration. Blocking.
    fn prepare(settings: &TlsSettings) -> Result<TlsBackend, Error> {
        // `--cfg smithy_tls="none"`: no provider is compiled (`Connector` refuses every request
        // before it gets here).
        #[cfg(no_tls)]
        {
            let _ = settings;
            Err(Error::TlsDisabled)
        }
        #[cfg(not(no_tls))]
        Self::prepare_library(settings)
    }

    #[cfg(not(no_tls))]
    fn prepare_library(settings: &TlsSettings) -> Result<TlsBackend, Error> {
        // A CA bundle replaces the roots source: its certificates, plus any the caller added.
        let with_bundle;
        let settings = match &settings.ca_bundle {
            None => settings,
            Some(path) => {
                let mut extra_roots = crate::roots::load_ca_bundle(path)?;
                extra_roots.certificates.extend(settings.extra_roots.certificates.iter().cloned());
                with_bundle = TlsSettings { roots: None, extra_roots, ca_bundle: None, ..settings.clone() };
                &with_bundle
            }
        };
        if let Some(roots) = settings.roots {
            settings.provider.validate_roots(roots)?;
        }
        let library = Self::library(settings)?;
        Ok(TlsBackend {
            library,
            provider: settings.provider,
            roots: settings.roots,
            chosen_by: settings.chosen_by,
            refusals: Arc::default(),
        })
    }

    /// The provider's library, prepared. A provider another crate's features name that the
    /// application's override left out is `NotCompiled`, which the builders never ask for (they
    /// resolve every provider to the application's).
    #[cfg(not(no_tls))]
    fn library(settings: &TlsSettings) -> Result<Library, Error> {
        match settings.provider.compiled().map_err(Error::NotCompiled)? {
            #[cfg(rustls)]
            Compiled::Rustls(crypto) => Self::rustls_library(settings, crypto),
            #[cfg(s2n_plain)]
            Compiled::S2nTls => Ok(Library::S2n(self::s2n::S2nBackend::prepare(settings)?)),
            #[cfg(s2n_fips)]
            Compiled::S2nTlsFips => Ok(Library::S2n(self::s2n::S2nBackend::prepare(settings)?)),
            #[cfg(openssl_provider)]
            Compiled::OpenSsl => Ok(Library::OpenSsl(self::openssl::OpensslBackend::prepare(settings)?)),
        }
    }

    /// A rustls provider's library: rustls 0.24 serves rustls-aws-lc (with
    /// `experimental-rustls-024`) but for platform-verifier roots, whose verifier is built on
    /// rustls 0.23; everything else is the 0.23 backend.
    #[cfg(rustls)]
    fn rustls_library(settings: &TlsSettings, crypto: RustlsCrypto) -> Result<Library, Error> {
        #[cfg(all(rustls_in_place, rustls_backend))]
        if crypto == RustlsCrypto::AwsLc
            && (cfg!(not(rustls_aws_lc_on_023)) || settings.roots != Some(crate::TrustRoots::PlatformVerifier))
        {
            return Ok(Library::RustlsInPlace(self::rustls_in_place::InPlaceBackend::prepare(settings)?));
        }
        #[cfg(rustls_backend)]
        return Ok(Library::Rustls(self::rustls::RustlsBackend::prepare(
            settings,
            crypto.provider().ok_or(Error::NoCryptoProvider)?,
        )?));
        // Without the 0.23 backend the one rustls provider is rustls-aws-lc on 0.24: the pattern
        // is irrefutable only in such a build.
        #[cfg(not(rustls_backend))]
        {
            let RustlsCrypto::AwsLc = crypto;
            Ok(Library::RustlsInPlace(self::rustls_in_place::InPlaceBackend::prepare(settings)?))
        }
    }

    pub(crate) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(MaybeTlsStream, TlsInfo), TlsHandshakeError> {
        let (stream, negotiated) = self.library.handshake(server_name, tcp).await?;
        if let Some(refusal) = stream.read_refusal() {
            let _ = refusal.shared.log.set((Arc::clone(&self.refusals), server_name.to_owned()));
        }
        let Negotiated {
            protocol_version,
            cipher_suite,
            key_exchange_group,
            alpn,
            resumed,
            fips,
            client_certificate_sent,
        } = negotiated;
        let info = TlsInfo {
            provider: self.provider,
            roots: self.roots,
            chosen_by: self.chosen_by,
            protocol_version,
            cipher_suite,
            key_exchange_group,
            alpn,
            resumed,
            fips,
            client_certificate_sent,
            library: self.library.name(),
        };
        Ok((stream, info))
    }
}

impl Library {
    /// The library's name as `TlsInfo::library` reports it.
    fn name(&self) -> &'static str {
        // With `--cfg smithy_tls="none"` there is no variant.
        #[cfg(no_tls)]
        let _ = self;
        match *self {
            #[cfg(rustls_backend)]
            Library::Rustls(_) => "rustls 0.23",
            #[cfg(rustls_in_place)]
            Library::RustlsInPlace(_) => "rustls 0.24",
            #[cfg(s2n)]
            Library::S2n(_) => "s2n-tls",
            #[cfg(openssl_provider)]
            Library::OpenSsl(_) => ::openssl::version::version(),
        }
    }

    async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(MaybeTlsStream, Negotiated), TlsHandshakeError> {
        // With `--cfg smithy_tls="none"` there is no variant, and no backend is ever prepared.
        #[cfg(no_tls)]
        let _ = (server_name, tcp);
        match *self {
            #[cfg(rustls_backend)]
            Library::Rustls(ref b) => b.handshake(server_name, tcp).await,
            #[cfg(rustls_in_place)]
            Library::RustlsInPlace(ref b) => b.handshake(server_name, tcp).await,
            #[cfg(s2n)]
            Library::S2n(ref b) => b.handshake(server_name, tcp).await,
            #[cfg(openssl_provider)]
            Library::OpenSsl(ref b) => b.handshake(server_name, tcp).await,
        }
    }
}

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
    watched: crate::WatchedIdentity,
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
                    .map(|backend| Arc::new(TlsBackend { refusals: Arc::clone(&self.refusals), ..backend }));
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
        identity: crate::ClientIdentity,
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
        let prepare = move || {
            TlsBackend::prepare(&settings)
                .map(|backend| Arc::new(TlsBackend { refusals: Arc::clone(&refusals), ..backend }))
        };
        let started = std::time::Instant::now();
        let backend = tokio::task::spawn_blocking(prepare.clone()).await.unwrap_or_else(|_| prepare())?;
        tracing::debug!(provider = %self.settings.provider, generation, elapsed = ?started.elapsed(), "prepared TLS backend for the rotated client identity");
        *newest = Some((generation, Arc::clone(&backend)));
        Ok(backend)
    }
}

/// Where a connection's stream records a server's refusal of this client's certificate met on a
/// read (TLS 1.3 sends it after the client's handshake is done). The read's error carries it
/// too, but hyper keeps only the kind and text of a connection's I/O error (HTTP/2), or none of
/// it when the connection dies before the request went out on it ("channel closed"): the client
/// finds it here, through the connection's extras, or through the client's [`RefusalLog`].
#[derive(Debug, Clone)]
pub(crate) struct ReadRefusal {
    #[cfg_attr(not(any(rustls_backend, openssl_provider, s2n)), allow(dead_code))]
    // the backends that present an identity
    provider: TlsProvider,
    #[cfg_attr(not(any(rustls_backend, openssl_provider, s2n)), allow(dead_code))]
    answer: crate::error::CertificateAnswer,
    shared: Arc<RefusalShared>,
}

#[derive(Debug, Default)]
struct RefusalShared {
    refused: OnceLock<TlsHandshakeError>,
    /// The client's log, and the server's name, to report a refusal to.
    log: OnceLock<(Arc<RefusalLog>, String)>,
}

impl ReadRefusal {
    /// `answer`: how the handshake answered the server's request for a certificate, which tells
    /// what a bare refusal on a read is about.
    #[cfg(any(rustls_backend, rustls_in_place, openssl_provider, s2n))]
    pub(crate) fn new(provider: TlsProvider, answer: crate::error::CertificateAnswer) -> Self {
        ReadRefusal { provider, answer, shared: Arc::default() }
    }

    /// The refusal, once a read met one.
    pub(crate) fn get(&self) -> Option<&TlsHandshakeError> {
        self.shared.refused.get()
    }

    /// A read's error: `classify` (the backend's) says whether it is a refusal of our
    /// certificate, which is then recorded (here and in the client's log) and carried by the
    /// error returned.
    #[cfg(any(rustls_backend, rustls_in_place, openssl_provider, s2n))]
    pub(crate) fn read_error(
        &self,
        io: io::Error,
        classify: impl FnOnce(&io::Error, crate::error::CertificateAnswer) -> Option<crate::ClientCertificateProblem>,
    ) -> io::Error {
        let Some(problem) = classify(&io, self.answer) else { return io };
        let kind = io.kind();
        let refused = TlsHandshakeError {
            provider: self.provider,
            kind: crate::HandshakeFailure::ClientCertificate(problem),
            source: Arc::new(io),
        };
        if self.shared.refused.set(refused.clone()).is_ok() {
            if let Some((log, server_name)) = self.shared.log.get() {
                log.record(server_name, refused.clone());
            }
        }
        io::Error::new(kind, refused)
    }
}

/// The latest refusal of our certificate that a client's connections met on a read after their
/// handshake, with the server's name and when: for a request whose connection died before the
/// request went out on it, which hyper reports without the connection's error.
#[derive(Debug, Default)]
pub(crate) struct RefusalLog(std::sync::Mutex<Option<(String, std::time::SystemTime, TlsHandshakeError)>>);

impl RefusalLog {
    #[cfg_attr(not(any(rustls_backend, openssl_provider, s2n)), allow(dead_code))] // the backends that present an identity
    fn record(&self, server_name: &str, refused: TlsHandshakeError) {
        let mut latest = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *latest = Some((server_name.to_owned(), std::time::SystemTime::now(), refused));
    }

    /// The refusal a connection to `server_name` met at `since` or later, if any.
    pub(crate) fn since(&self, server_name: &str, since: std::time::SystemTime) -> Option<TlsHandshakeError> {
        let latest = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*latest {
            Some((name, at, refused)) if name == server_name && *at >= since => Some(refused.clone()),
            _ => None,
        }
    }
}

/// A connected stream: plain for `http://`, or TLS for `https://`, over TCP or (through an
/// `https://` proxy) over TLS to the proxy.
#[derive(Debug)]
pub(crate) enum MaybeTlsStream {
    Plain(Transport),
    /// The stream, and where its reads record a refusal of our certificate.
    #[cfg(rustls_backend)]
    Rustls(Box<tokio_rustls::client::TlsStream<ReadAhead<Transport>>>, ReadRefusal),
    /// The stream, and where its reads record a server's demand for a certificate.
    #[cfg(rustls_in_place)]
    RustlsInPlace(Box<self::rustls_in_place::InPlaceStream<Transport>>, ReadRefusal),
    #[cfg(s2n)]
    S2n(Box<self::s2n::S2nStream>),
    #[cfg(openssl_provider)]
    OpenSsl(Box<self::openssl::OpensslStream>),
}

impl MaybeTlsStream {
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            MaybeTlsStream::Plain(s) => s.tcp(),
            #[cfg(rustls_backend)]
            MaybeTlsStream::Rustls(s, _) => s.get_ref().0.get_ref().tcp(),
            #[cfg(rustls_in_place)]
            MaybeTlsStream::RustlsInPlace(s, _) => s.get_ref().0.tcp(),
            #[cfg(s2n)]
            MaybeTlsStream::S2n(s) => s.tcp(),
            #[cfg(openssl_provider)]
            MaybeTlsStream::OpenSsl(s) => s.transport().tcp(),
        }
    }

    /// Where the stream's reads record a refusal of our certificate (TLS streams of the
    /// backends that present one).
    pub(crate) fn read_refusal(&self) -> Option<&ReadRefusal> {
        match self {
            #[cfg(rustls_backend)]
            MaybeTlsStream::Rustls(_, refusal) => Some(refusal),
            #[cfg(rustls_in_place)]
            MaybeTlsStream::RustlsInPlace(_, refusal) => Some(refusal),
            #[cfg(openssl_provider)]
            MaybeTlsStream::OpenSsl(s) => Some(s.read_refusal()),
            #[cfg(s2n)]
            MaybeTlsStream::S2n(s) => Some(s.read_refusal()),
            MaybeTlsStream::Plain(_) => None,
        }
    }
}

macro_rules! delegate {
    ($self:expr, $s:ident => $e:expr) => {
        match $self.get_mut() {
            MaybeTlsStream::Plain($s) => {
                let $s = Pin::new($s);
                $e
            }
            #[cfg(rustls_backend)]
            MaybeTlsStream::Rustls($s, _) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            #[cfg(rustls_in_place)]
            MaybeTlsStream::RustlsInPlace($s, _) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            #[cfg(s2n)]
            MaybeTlsStream::S2n($s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            #[cfg(openssl_provider)]
            MaybeTlsStream::OpenSsl($s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
        }
    };
}

impl AsyncRead for MaybeTlsStream {
    #[cfg_attr(not(any(rustls_backend, rustls_in_place)), allow(unused_mut))]
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        // In TLS 1.3 a server refuses the client's certificate after the client's handshake is
        // done: its alert is the first read's error, which carries the same typed error as a
        // refusal during the handshake (so that it is not retried as a transport failure).
        #[cfg(rustls_backend)]
        if let MaybeTlsStream::Rustls(s, refusal) = self.as_mut().get_mut() {
            return match Pin::new(&mut **s).poll_read(cx, buf) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(refusal.read_error(e, self::rustls::refusal_on_read))),
                other => other,
            };
        }
        #[cfg(rustls_in_place)]
        if let MaybeTlsStream::RustlsInPlace(s, refusal) = self.as_mut().get_mut() {
            return match Pin::new(&mut **s).poll_read(cx, buf) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(refusal.read_error(e, self::rustls_in_place::refusal_on_read))),
                other => other,
            };
        }
        delegate!(self, s => s.poll_read(cx, buf))
    }
}

impl MaybeTlsStream {
    /// A write's error, or the server's refusal of our certificate when one waits unread: in
    /// TLS 1.3 the server sends its alert and closes after the client's handshake is done, and
    /// the client's next write (its first request) can fail on the closed connection before any
    /// read has seen the alert. On a connection the peer closed or reset (the only write errors
    /// this looks past) the socket is readable, so the read resolves at once: the alert, or the
    /// end. Until the reactor has seen that (the read is pending) the write is pending too; it
    /// fails again when polled again, and the read decides.
    fn write_error(mut self: Pin<&mut Self>, cx: &mut Context<'_>, error: io::Error) -> Poll<io::Error> {
        let closed = matches!(
            error.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
        );
        if !closed || self.read_refusal().is_none_or(|r| r.get().is_some()) {
            return Poll::Ready(error);
        }
        let mut scratch = [0u8; 256];
        let read = self.as_mut().poll_read(cx, &mut ReadBuf::new(&mut scratch));
        match self.read_refusal().and_then(ReadRefusal::get) {
            Some(refused) => Poll::Ready(io::Error::new(error.kind(), refused.clone())),
            None if read.is_pending() => Poll::Pending,
            None => Poll::Ready(error),
        }
    }
}

impl AsyncWrite for MaybeTlsStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match delegate!(self.as_mut(), s => s.poll_write(cx, buf)) {
            Poll::Ready(Err(e)) => self.write_error(cx, e).map(Err),
            other => other,
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match delegate!(self.as_mut(), s => s.poll_write_vectored(cx, bufs)) {
            Poll::Ready(Err(e)) => self.write_error(cx, e).map(Err),
            other => other,
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            MaybeTlsStream::Plain(s) => s.is_write_vectored(),
            #[cfg(rustls_backend)]
            MaybeTlsStream::Rustls(s, _) => s.is_write_vectored(),
            #[cfg(rustls_in_place)]
            MaybeTlsStream::RustlsInPlace(s, _) => s.is_write_vectored(),
            #[cfg(s2n)]
            MaybeTlsStream::S2n(s) => s.is_write_vectored(),
            #[cfg(openssl_provider)]
            MaybeTlsStream::OpenSsl(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match delegate!(self.as_mut(), s => s.poll_flush(cx)) {
            Poll::Ready(Err(e)) => self.write_error(cx, e).map(Err),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => s.poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(provider: TlsProvider, roots: Option<TrustRoots>) -> Arc<LazyTlsBackend> {
        LazyTlsBackend::new(TlsSettings {
            provider,
            roots,
            extra_roots: ExtraRoots::default(),
            enable_http2: true,
            session_resumption: true,
            ca_bundle: None,
            chosen_by: ChosenBy::Builder,
            client_identity: None,
        })
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
