//! What a backend is prepared from: the client's TLS settings, and the buffer sizes and ALPN
//! identifiers every backend shares.

#[cfg(not(no_tls))]
use crate::error::Error;
use crate::provider::application::ChosenBy;
#[cfg(not(no_tls))]
use crate::provider::compiled::CompiledRoots;
use crate::provider::TlsProvider;
use crate::roots::{ExtraRoots, TrustRoots};

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
    pub(crate) client_identity: Option<crate::identity::ClientIdentity>,
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

#[cfg(test)]
impl TlsSettings {
    /// What a builder that chose only `provider` gives: no roots, HTTP/2 and resumption on.
    pub(crate) fn for_tests(provider: TlsProvider) -> Self {
        TlsSettings {
            provider,
            roots: None,
            extra_roots: ExtraRoots::default(),
            enable_http2: true,
            session_resumption: true,
            ca_bundle: None,
            chosen_by: ChosenBy::Builder,
            client_identity: None,
        }
    }
}
