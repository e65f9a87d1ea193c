//! What a handshake negotiated: each backend's [`Negotiated`], and the [`TlsInfo`] a connection
//! reports.

use crate::provider::application::ChosenBy;
use crate::provider::TlsProvider;
use crate::roots::TrustRoots;

use super::names;

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

impl TlsInfo {
    /// Whether the connection speaks h2 (ALPN).
    pub(crate) fn speaks_h2(&self) -> bool {
        self.alpn == Some(names::H2)
    }
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
