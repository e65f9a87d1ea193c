//! The dispatch to the backends: a prepared backend of the provider the settings name, its
//! handshakes, and the [`TlsInfo`] each one reports.

use std::sync::Arc;

use super::info::{Negotiated, TlsInfo};
use super::refusal::RefusalLog;
use super::settings::TlsSettings;
use super::stream::MaybeTlsStream;
use super::transport::Transport;
use crate::error::{Error, TlsHandshakeError};
use crate::provider::application::ChosenBy;
#[cfg(not(no_tls))]
use crate::provider::compiled::Compiled;
#[cfg(rustls)]
use crate::provider::compiled::RustlsCrypto;
use crate::provider::TlsProvider;
use crate::roots::TrustRoots;

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

/// The library-specific half of a prepared backend.
#[derive(Debug)]
enum Library {
    #[cfg(rustls_backend)]
    Rustls(super::rustls::RustlsBackend),
    #[cfg(rustls_in_place)]
    RustlsInPlace(super::rustls_in_place::InPlaceBackend),
    #[cfg(s2n)]
    S2n(super::s2n::S2nBackend),
    #[cfg(openssl_provider)]
    OpenSsl(super::openssl::OpensslBackend),
}

impl TlsBackend {
    /// Loads roots and builds the configuration. Blocking.
    pub(super) fn prepare(settings: &TlsSettings) -> Result<TlsBackend, Error> {
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
            Compiled::S2nTls => Ok(Library::S2n(super::s2n::S2nBackend::prepare(settings)?)),
            #[cfg(s2n_fips)]
            Compiled::S2nTlsFips => Ok(Library::S2n(super::s2n::S2nBackend::prepare(settings)?)),
            #[cfg(openssl_provider)]
            Compiled::OpenSsl => Ok(Library::OpenSsl(super::openssl::OpensslBackend::prepare(settings)?)),
        }
    }

    /// A rustls provider's library: rustls 0.24 serves rustls-aws-lc (with
    /// `experimental-rustls-024`) but for platform-verifier roots, whose verifier is built on
    /// rustls 0.23; everything else is the 0.23 backend.
    #[cfg(rustls)]
    fn rustls_library(settings: &TlsSettings, crypto: RustlsCrypto) -> Result<Library, Error> {
        #[cfg(all(rustls_in_place, rustls_backend))]
        if crypto == RustlsCrypto::AwsLc
            && (cfg!(not(rustls_aws_lc_on_023)) || settings.roots != Some(crate::roots::TrustRoots::PlatformVerifier))
        {
            return Ok(Library::RustlsInPlace(super::rustls_in_place::InPlaceBackend::prepare(settings)?));
        }
        #[cfg(rustls_backend)]
        return Ok(Library::Rustls(super::rustls::RustlsBackend::prepare(
            settings,
            crypto.provider().ok_or(Error::NoCryptoProvider)?,
        )?));
        // Without the 0.23 backend the one rustls provider is rustls-aws-lc on 0.24: the pattern
        // is irrefutable only in such a build.
        #[cfg(not(rustls_backend))]
        {
            let RustlsCrypto::AwsLc = crypto;
            Ok(Library::RustlsInPlace(super::rustls_in_place::InPlaceBackend::prepare(settings)?))
        }
    }

    /// The backend, reporting the refusals its connections meet on reads to `refusals` (the
    /// client's log, shared by every backend the client prepares).
    pub(super) fn reporting_to(self, refusals: &Arc<RefusalLog>) -> TlsBackend {
        TlsBackend { refusals: Arc::clone(refusals), ..self }
    }

    pub(crate) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(MaybeTlsStream, TlsInfo), TlsHandshakeError> {
        let (stream, negotiated) = self.library.handshake(server_name, tcp).await?;
        if let Some(refusal) = stream.read_refusal() {
            refusal.report_to(&self.refusals, server_name);
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
            Library::Rustls(ref b) => {
                let (stream, refusal, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((MaybeTlsStream::Rustls(Box::new(stream), refusal), negotiated))
            }
            #[cfg(rustls_in_place)]
            Library::RustlsInPlace(ref b) => {
                let (stream, refusal, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((MaybeTlsStream::RustlsInPlace(Box::new(stream), refusal), negotiated))
            }
            #[cfg(s2n)]
            Library::S2n(ref b) => {
                let (stream, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((MaybeTlsStream::S2n(Box::new(stream)), negotiated))
            }
            #[cfg(openssl_provider)]
            Library::OpenSsl(ref b) => {
                let (stream, negotiated) = b.handshake(server_name, tcp).await?;
                Ok((MaybeTlsStream::OpenSsl(Box::new(stream)), negotiated))
            }
        }
    }
}
