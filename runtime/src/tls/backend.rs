//! A prepared backend of the provider the settings name (the library's half in
//! [`super::backends`]), its handshakes, and the [`TlsInfo`] each one reports.

use std::sync::Arc;

use super::backends::Library;
use super::info::{Negotiated, TlsInfo};
use super::refusal::RefusalLog;
use super::settings::TlsSettings;
use super::stream::MaybeTlsStream;
use super::transport::Transport;
use crate::error::{Error, TlsHandshakeError};
use crate::provider::application::ChosenBy;
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
        let library = Library::prepare(settings)?;
        Ok(TlsBackend {
            library,
            provider: settings.provider,
            roots: settings.roots,
            chosen_by: settings.chosen_by,
            refusals: Arc::default(),
        })
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
        stream.read_refusal().report_to(&self.refusals, server_name);
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
        Ok((MaybeTlsStream::Tls(stream), info))
    }
}
