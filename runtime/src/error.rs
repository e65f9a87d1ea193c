//! Errors reported by this crate.

use std::error::Error as StdError;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::provider::{NotCompiled, TlsProvider, UnsupportedRoots};
use crate::roots::{BadPem, PemError, RootsError};

/// An error building a client or preparing its TLS configuration: always a configuration
/// problem, which trying again does not fix. Met at a request (the trust roots, the TLS
/// configuration or the URI are checked when the first connection needs them), it reaches the
/// SDK as a user error (`ConnectorError::is_user`), which the SDK's retry strategy does not
/// retry: the request fails once, with this error in its source chain.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// No trust roots were chosen: neither a [`TrustRoots`](crate::TrustRoots) source nor any
    /// extra PEM certificate. A client that trusts nothing could never connect.
    NoTrustRoots,
    /// No TLS provider was chosen on the builder and none is compiled in. Never returned: the
    /// crate does not build without a provider.
    #[deprecated(note = "never returned (the crate does not build without a TLS provider); \
                         to be removed in the next breaking release")]
    NoProvider,
    /// A PEM bundle given to the builder (or named by `AWS_CA_BUNDLE`), or an extra root
    /// certificate in it, could not be used.
    InvalidPem {
        /// Where the bundle came from, as the caller named it (a path, `"<memory>"`, or
        /// `"extra root certificate"` when the TLS library refused one).
        origin: String,
        /// What was wrong with it.
        reason: PemError,
    },
    /// The trust roots could not be loaded.
    Roots(RootsError),
    /// The TLS library rejected the configuration, or the provider cannot serve it.
    TlsConfig {
        /// The provider that rejected it.
        provider: TlsProvider,
        /// Why.
        reason: TlsConfigError,
    },
    /// A proxy URL (builder or environment) that cannot be used.
    InvalidProxy {
        /// The URL, credentials hidden.
        url: String,
        /// What is wrong with it.
        reason: ProxyUrlError,
    },
    /// [`configure_default`](crate::configure_default) was called a second time.
    DefaultAlreadyConfigured,
    /// [`configure_default`](crate::configure_default) was called after a default client was
    /// built (or had started to be built); call it first, early in `main`.
    DefaultAlreadyBuilt,
    /// A request URI this client cannot connect to: a scheme other than `http` or `https`, or
    /// no host.
    InvalidUri {
        /// The URI.
        uri: String,
        /// What is wrong with it.
        reason: UriError,
    },
    /// The provider cannot use these trust roots (see [`TlsProvider::validate_roots`]).
    UnsupportedRoots(UnsupportedRoots),
    /// The application built with `--cfg smithy_tls="none"`: no TLS stack is compiled, and the
    /// default client fails every request with this. Set an HTTP client on the SDK config.
    TlsDisabled,
    /// A provider or trust-root source the application's `--cfg smithy_tls` left out of the build.
    NotCompiled(NotCompiled),
    /// A `rustls-custom` client found no `CryptoProvider`: none was handed to
    /// `set_custom_crypto_provider` (a function of builds with `rustls-custom`) and rustls has no
    /// process-wide default.
    NoCryptoProvider,
}

/// `` `a`, `b` or `c` ``: cargo features as a message lists them.
fn one_of(features: &[&str]) -> String {
    let quoted: Vec<String> = features.iter().map(|f| format!("`{f}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

impl fmt::Display for Error {
    #[allow(deprecated)] // `NoProvider` is still displayed while it exists
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoTrustRoots => write!(
                f,
                "no trust roots configured: enable the {} feature and pick it with `trust_roots(..)`, or add \
                 certificates with `extra_root_pem(..)`",
                one_of(crate::provider::ROOTS_FEATURES)
            ),
            Error::NoProvider => write!(
                f,
                "no TLS provider configured: enable the {} feature and pick it with `provider(..)`",
                one_of(crate::provider::PROVIDER_FEATURES)
            ),
            Error::InvalidPem { origin, reason } => {
                write!(f, "unusable PEM certificates from {origin}: {reason}")
            }
            Error::Roots(e) => write!(f, "trust roots unavailable: {e}"),
            Error::TlsConfig { provider, reason: reason @ TlsConfigError::KeyLog(_) } => {
                write!(f, "{provider}: {reason}")
            }
            Error::TlsConfig { provider, reason } => {
                write!(f, "{provider} rejected the TLS configuration: {reason}")
            }
            Error::InvalidProxy { url, reason } => write!(f, "unusable proxy `{url}`: {reason}"),
            Error::DefaultAlreadyConfigured => {
                f.write_str("the default clients were already configured: call `configure_default` once")
            }
            Error::DefaultAlreadyBuilt => f.write_str(
                "a default client was already built, so its settings can no longer change: call \
                 `configure_default` before any SDK client is created (early in `main`)",
            ),
            Error::InvalidUri { uri, reason } => write!(f, "unusable request URI {uri}: {reason}"),
            Error::UnsupportedRoots(unsupported) => write!(f, "{unsupported}"),
            Error::TlsDisabled => f.write_str(
                "no TLS stack: the application was built with --cfg smithy_tls=\"none\", so the default HTTP client \
                 fails every request; set an HTTP client on the SDK config (`.http_client(..)`), or set smithy_tls to a \
                 provider",
            ),
            Error::NotCompiled(not_compiled) => write!(f, "{not_compiled}"),
            Error::NoCryptoProvider => f.write_str(
                "the rustls-custom provider found no rustls CryptoProvider: hand one to \
                 `smithy_default_tls::set_custom_crypto_provider` (or install rustls's process-wide default with \
                 `CryptoProvider::install_default`) before the first request",
            ),
        }
    }
}

impl From<UnsupportedRoots> for Error {
    fn from(unsupported: UnsupportedRoots) -> Self {
        Error::UnsupportedRoots(unsupported)
    }
}

impl StdError for Error {
    #[allow(deprecated)] // `NoProvider` is matched while it exists
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Error::InvalidPem { reason, .. } => Some(reason),
            Error::Roots(e) => Some(e),
            Error::TlsConfig { reason, .. } => Some(reason),
            Error::InvalidProxy { reason, .. } => Some(reason),
            Error::InvalidUri { reason, .. } => Some(reason),
            Error::NoTrustRoots
            | Error::NoProvider
            | Error::DefaultAlreadyConfigured
            | Error::DefaultAlreadyBuilt
            | Error::UnsupportedRoots(_)
            | Error::TlsDisabled
            | Error::NotCompiled(_)
            | Error::NoCryptoProvider => None,
        }
    }
}

impl From<RootsError> for Error {
    fn from(e: RootsError) -> Self {
        Error::Roots(e)
    }
}

impl From<BadPem> for Error {
    fn from(e: BadPem) -> Self {
        Error::InvalidPem { origin: e.origin, reason: e.reason }
    }
}

/// Why a provider's TLS configuration could not be built ([`Error::TlsConfig`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// The TLS library refused a setting; the source is its error (a `rustls::Error`, an
    /// OpenSSL error stack, an s2n-tls error).
    Library(Arc<dyn StdError + Send + Sync>),
    /// `SSLKEYLOGFILE` is set, and the key log cannot be written as it asks.
    KeyLog(KeyLogError),
    /// A FIPS provider whose configuration rustls would not run in FIPS mode: refused rather
    /// than used quietly outside it.
    NotFipsMode,
    /// A FIPS provider whose libcrypto (s2n-tls's) is not in FIPS mode.
    LibcryptoNotFips,
    /// Extra root certificates with platform-verifier roots on Android, where the platform
    /// verifier does not take them.
    ExtraRootsWithPlatformVerifier,
    /// A FIPS provider with a client identity whose key type FIPS does not approve
    /// ([`KeyType::is_fips_approved`](crate::KeyType::is_fips_approved)).
    ClientKeyNotFipsApproved(crate::identity::KeyType),
    /// A client identity whose key type the provider does not present: s2n-tls takes no Ed25519
    /// certificates.
    ClientKeyTypeUnsupported(crate::identity::KeyType),
    /// The provider's crypto library could not load the client identity's key (ring takes no
    /// P-521 key, for one); the source is its error. Other providers in the build may take it.
    ClientKeyRefused {
        /// The key's type.
        key_type: crate::identity::KeyType,
        /// The library's error.
        source: Arc<dyn StdError + Send + Sync>,
    },
    /// The provider's crypto found the client identity's key not to be the private half of the
    /// leaf certificate's public key: a key whose encoding does not carry its public half, which
    /// [`ClientIdentity::from_pem`](crate::ClientIdentity::from_pem) could not compare.
    ClientKeyMismatch,
}

impl fmt::Display for TlsConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsConfigError::Library(e) => write!(f, "{e}"),
            TlsConfigError::KeyLog(e) => write!(f, "{e}"),
            TlsConfigError::NotFipsMode => f.write_str("rustls would not run this configuration in FIPS mode"),
            TlsConfigError::LibcryptoNotFips => f.write_str("s2n-tls's libcrypto is not in FIPS mode"),
            TlsConfigError::ExtraRootsWithPlatformVerifier => {
                f.write_str("extra root certificates are not supported with platform-verifier roots on Android")
            }
            TlsConfigError::ClientKeyNotFipsApproved(key_type) => write!(
                f,
                "the client identity's {key_type} key is not FIPS-approved: a FIPS provider presents ECDSA \
                 (P-256, P-384, P-521) or RSA (2048 bits or more) keys only"
            ),
            TlsConfigError::ClientKeyTypeUnsupported(key_type) => {
                write!(f, "this provider does not present a client certificate with an {key_type} key")
            }
            TlsConfigError::ClientKeyRefused { key_type, source } => {
                write!(f, "this provider's crypto cannot load the client identity's {key_type} key: {source}")
            }
            TlsConfigError::ClientKeyMismatch => {
                f.write_str("client private key does not match the public key of the chain's first certificate")
            }
        }
    }
}

impl StdError for TlsConfigError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            TlsConfigError::Library(e) => Some(&**e),
            TlsConfigError::KeyLog(e) => Some(e),
            TlsConfigError::ClientKeyRefused { source, .. } => Some(&**source),
            TlsConfigError::NotFipsMode
            | TlsConfigError::LibcryptoNotFips
            | TlsConfigError::ExtraRootsWithPlatformVerifier
            | TlsConfigError::ClientKeyNotFipsApproved(_)
            | TlsConfigError::ClientKeyTypeUnsupported(_)
            | TlsConfigError::ClientKeyMismatch => None,
        }
    }
}

/// Why the `SSLKEYLOGFILE` key log cannot be written ([`TlsConfigError::KeyLog`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum KeyLogError {
    /// The file cannot be created or opened for appending; the source says why.
    Open {
        /// The path the variable names.
        path: PathBuf,
        /// Why it cannot be opened.
        source: Arc<std::io::Error>,
    },
    /// The TLS library refused the callback that writes the key log (s2n-tls); the source is
    /// its error.
    Callback(Arc<dyn StdError + Send + Sync>),
}

impl fmt::Display for KeyLogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyLogError::Open { path, source } => {
                write!(f, "SSLKEYLOGFILE={}: cannot open for appending: {source}", path.display())
            }
            KeyLogError::Callback(e) => write!(f, "SSLKEYLOGFILE: the TLS library refused the key log callback: {e}"),
        }
    }
}

impl StdError for KeyLogError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            KeyLogError::Open { source, .. } => Some(&**source),
            KeyLogError::Callback(e) => Some(&**e),
        }
    }
}

/// Why a proxy URL cannot be used ([`Error::InvalidProxy`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ProxyUrlError {
    /// Not a URL at all; the source is the parser's error (`http`'s).
    NotAUrl(Arc<dyn StdError + Send + Sync>),
    /// No scheme: the URL must say `http://` (or `https://` for TLS to the proxy).
    NoScheme,
    /// A scheme other than `http` or `https` (`socks5`, ...).
    UnsupportedScheme(String),
    /// No host.
    NoHost,
    /// The credentials given to [`ProxyBuilder::basic_auth`](crate::ProxyBuilder::basic_auth)
    /// do not make a valid `Proxy-Authorization` header; the source is `http`'s error.
    InvalidCredentials(Arc<dyn StdError + Send + Sync>),
}

impl fmt::Display for ProxyUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyUrlError::NotAUrl(e) => write!(f, "not a URL: {e}"),
            ProxyUrlError::NoScheme => {
                f.write_str("no scheme: write http://host:port (or https:// for TLS to the proxy)")
            }
            ProxyUrlError::UnsupportedScheme(scheme) => {
                write!(f, "unsupported proxy scheme `{scheme}`: use http:// or https://")
            }
            ProxyUrlError::NoHost => f.write_str("no host"),
            ProxyUrlError::InvalidCredentials(e) => write!(f, "the credentials do not make a valid header: {e}"),
        }
    }
}

impl StdError for ProxyUrlError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            ProxyUrlError::NotAUrl(e) | ProxyUrlError::InvalidCredentials(e) => Some(&**e),
            ProxyUrlError::NoScheme | ProxyUrlError::UnsupportedScheme(_) | ProxyUrlError::NoHost => None,
        }
    }
}

/// Why this client cannot connect for a request URI ([`Error::InvalidUri`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UriError {
    /// The URI has no scheme.
    NoScheme,
    /// A scheme other than `http` or `https`.
    UnsupportedScheme(String),
    /// The URI has no host.
    NoHost,
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UriError::NoScheme => f.write_str("no scheme: use http or https"),
            UriError::UnsupportedScheme(scheme) => write!(f, "unsupported scheme `{scheme}`: use http or https"),
            UriError::NoHost => f.write_str("no host"),
        }
    }
}

impl StdError for UriError {}

/// Why a TLS handshake failed. Found in the source chain of the connector error, so callers and
/// retry classifiers can tell certificate problems (never worth retrying) from transport ones.
#[derive(Debug, Clone)]
pub struct TlsHandshakeError {
    pub(crate) provider: TlsProvider,
    pub(crate) kind: HandshakeFailure,
    pub(crate) source: Arc<dyn StdError + Send + Sync>,
}

/// The class of a TLS handshake failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeFailure {
    /// The server's certificate was rejected, and why.
    Certificate(CertificateProblem),
    /// The peer sent an alert or the parameters could not be agreed.
    Protocol,
    /// The transport failed during the handshake (reset, EOF).
    Io,
    /// The server refused the client's certificate, or wanted one and got none (mutual TLS).
    /// In TLS 1.3 the server says so after the client's side of the handshake is done, so this
    /// can also be the error of the first read on a new connection; it is never retried.
    ClientCertificate(ClientCertificateProblem),
}

/// Why a server refused this client's certificate (mutual TLS), as its alert says, in the same
/// terms for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientCertificateProblem {
    /// The server requires a client certificate and none was sent: none is configured
    /// ([`Builder::client_identity`](crate::Builder::client_identity)), or (TLS 1.2) the server
    /// named CAs none of ours is from (alert `certificate_required`, or `handshake_failure`
    /// after the server asked for a certificate and got none).
    Required,
    /// The server does not trust the certificate's issuer (alert `unknown_ca`).
    UnknownIssuer,
    /// The server found the certificate expired (alert `certificate_expired`).
    Expired,
    /// The server found the certificate revoked (alert `certificate_revoked`).
    Revoked,
    /// Any other refusal (`bad_certificate`, `unsupported_certificate`, `certificate_unknown`,
    /// `access_denied`); the source says which.
    Rejected,
    /// The server asked for a certificate, but the identity's key cannot make any of the
    /// signatures the server's request names (an ECDSA key for a server that takes only RSA
    /// signatures, …). rustls and OpenSSL then send no certificate, and know why; s2n-tls signs
    /// with its key's scheme anyway, and a server's refusal of that signature
    /// (`illegal_parameter` or `handshake_failure` after the certificate went out) is reported
    /// as this.
    KeyCannotSign,
}

/// How this client answered a server's request for a certificate: it tells what a bare refusal
/// (`handshake_failure`, `certificate_required`) is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // each backend builds the variants its library can tell apart; a build may have one
pub(crate) enum CertificateAnswer {
    /// The server did not ask for a certificate (or not yet).
    NotAsked,
    /// Asked, and the certificate was sent, signed with a scheme the request named (rustls and
    /// OpenSSL send none otherwise).
    Sent,
    /// Asked, and the certificate was sent, signed with the scheme the library picks for its key
    /// whether or not the request named it (s2n-tls).
    SentSchemeUnchecked,
    /// Asked, and no identity is configured.
    NoIdentity,
    /// Asked, and the identity's key signs none of the schemes the request names.
    KeyCannotSign,
}

impl fmt::Display for ClientCertificateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientCertificateProblem::Required => "the server requires a client certificate and none was sent",
            ClientCertificateProblem::UnknownIssuer => "the server does not trust the client certificate's issuer",
            ClientCertificateProblem::Expired => "the server found the client certificate expired",
            ClientCertificateProblem::Revoked => "the server found the client certificate revoked",
            ClientCertificateProblem::Rejected => "the server rejected the client certificate",
            ClientCertificateProblem::KeyCannotSign => "the client key cannot make any signature the server accepts",
        })
    }
}

impl ClientCertificateProblem {
    /// The problem a TLS alert (its code, RFC 8446 section 6) names, when it names one about the
    /// client's certificate. `answer`: when the server asked and got no certificate, a bare
    /// `handshake_failure` (TLS 1.2) or `certificate_required` is about that, and why.
    #[cfg_attr(not(tls_backend), allow(dead_code))]
    pub(crate) fn from_alert(alert: u8, answer: CertificateAnswer) -> Option<Self> {
        Some(match (alert, answer) {
            (116 | 40, CertificateAnswer::KeyCannotSign) => ClientCertificateProblem::KeyCannotSign,
            (116, _) | (40, CertificateAnswer::NoIdentity) => ClientCertificateProblem::Required,
            // A library that signs with a scheme the request did not name (s2n-tls signs with its
            // key's default then) meets a strict server's refusal of that signature:
            // `illegal_parameter` (rustls), `handshake_failure` (OpenSSL).
            (47 | 40, CertificateAnswer::SentSchemeUnchecked) => ClientCertificateProblem::KeyCannotSign,
            (alert, _) => match alert {
                48 => ClientCertificateProblem::UnknownIssuer,
                45 => ClientCertificateProblem::Expired,
                44 => ClientCertificateProblem::Revoked,
                // bad_certificate, unsupported_certificate, certificate_unknown, access_denied
                42 | 43 | 46 | 49 => ClientCertificateProblem::Rejected,
                _ => return None,
            },
        })
    }
}

/// Why a server certificate was rejected, in the same terms for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateProblem {
    /// The chain does not lead to a trusted root.
    UnknownIssuer,
    /// The certificate is not valid for the host name connected to.
    NameMismatch,
    /// The certificate has expired.
    Expired,
    /// The certificate is not valid yet.
    NotYetValid,
    /// A certificate in the chain is signed with an algorithm this client does not accept
    /// (SHA-1, …), or, with s2n-tls, has a key it does not accept (RSA under 2048 bits, …); the
    /// source says which certificate and what. rustls reports an RSA key too small to verify
    /// the handshake signature as [`Other`](CertificateProblem::Other) (a bad signature).
    WeakAlgorithm,
    /// Any other rejection (bad signature, revoked, wrong usage…); the source says which.
    Other,
}

impl fmt::Display for CertificateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CertificateProblem::UnknownIssuer => "issued by an untrusted certificate authority",
            CertificateProblem::NameMismatch => "not valid for the host name",
            CertificateProblem::Expired => "expired",
            CertificateProblem::NotYetValid => "not valid yet",
            CertificateProblem::WeakAlgorithm => "signed with an algorithm or using a key too weak to trust",
            CertificateProblem::Other => "invalid",
        })
    }
}

impl TlsHandshakeError {
    /// The provider that ran the handshake.
    pub fn provider(&self) -> TlsProvider {
        self.provider
    }

    /// The class of failure.
    pub fn kind(&self) -> HandshakeFailure {
        self.kind
    }
}

impl fmt::Display for TlsHandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            HandshakeFailure::Certificate(problem) => {
                write!(f, "server certificate rejected by {}: {problem}", self.provider)
            }
            HandshakeFailure::Protocol => write!(f, "TLS handshake failed ({})", self.provider),
            HandshakeFailure::Io => write!(f, "connection failed during the TLS handshake ({})", self.provider),
            HandshakeFailure::ClientCertificate(problem) => {
                write!(f, "client certificate refused ({}): {problem}", self.provider)
            }
        }
    }
}

impl StdError for TlsHandshakeError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.source)
    }
}

/// The TCP connect plus TLS handshake did not finish within the connect timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectTimeout {
    pub(crate) after: std::time::Duration,
}

impl fmt::Display for ConnectTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "connect timeout: TCP connect and TLS handshake did not finish within {:?}", self.after)
    }
}

impl StdError for ConnectTimeout {}

/// A proxy did not carry a connection to its origin.
#[derive(Debug)]
pub struct ProxyError {
    /// The proxy (`host:port`).
    pub proxy: String,
    /// The origin (`host:port`) the connection was for.
    pub origin: String,
    /// What went wrong.
    pub failure: ProxyFailure,
}

/// How a proxy failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProxyFailure {
    /// The proxy could not be reached (connection refused, no route, DNS).
    Unreachable(Box<dyn StdError + Send + Sync>),
    /// The proxy answered the `CONNECT` with a status other than 2xx (407: credentials needed or
    /// wrong; 403: the proxy's policy forbids the origin; 502/503/504: it could not reach it).
    Refused {
        /// The status code.
        status: u16,
        /// The reason phrase the proxy sent with it, as sent (possibly empty): the proxy's
        /// words, shown in the message.
        phrase: String,
    },
    /// The proxy closed the connection before answering.
    Closed,
    /// The proxy's answer was not an HTTP response.
    BadResponse(ProxyResponseError),
    /// Reading from or writing to the proxy failed.
    Io(std::io::Error),
    /// The TLS handshake with an `https://` proxy failed (its certificate, or the connection).
    Handshake(TlsHandshakeError),
}

impl ProxyFailure {
    /// Whether trying again may succeed: an unreachable or failing proxy (5xx but 501), a
    /// throttling one (429), a dropped connection. Credentials (407), policy refusals (403) and
    /// a proxy without CONNECT (501) do not change by retrying.
    pub fn is_transient(&self) -> bool {
        match self {
            ProxyFailure::Unreachable(_) | ProxyFailure::Closed | ProxyFailure::Io(_) => true,
            // 501: the proxy does not do CONNECT, which will not change; 429: come back later.
            ProxyFailure::Refused { status, .. } => (*status >= 500 && *status != 501) || *status == 429,
            ProxyFailure::BadResponse(_) => false,
            // As for the origin: a dropped connection may go better next time, a refused
            // certificate will not.
            ProxyFailure::Handshake(e) => e.kind() == HandshakeFailure::Io,
        }
    }
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (proxy, origin) = (&self.proxy, &self.origin);
        match &self.failure {
            ProxyFailure::Unreachable(e) => write!(f, "proxy {proxy} (for {origin}) is unreachable: {e}"),
            ProxyFailure::Refused { status: 407, phrase } => write!(
                f,
                "proxy {proxy} refused the tunnel to {origin}: 407 {phrase}: it needs credentials (in the proxy URL, \
                 http://user:password@host:port, or `ProxyBuilder::basic_auth`), or the ones given are wrong"
            ),
            ProxyFailure::Refused { status, phrase } => {
                write!(f, "proxy {proxy} refused the tunnel to {origin}: {status} {phrase}")
            }
            ProxyFailure::Closed => {
                write!(f, "proxy {proxy} closed the connection before answering the tunnel to {origin}")
            }
            ProxyFailure::BadResponse(what) => {
                write!(f, "proxy {proxy} answered the tunnel to {origin} with something that is not HTTP: {what}")
            }
            ProxyFailure::Io(e) => write!(f, "talking to proxy {proxy} (for {origin}) failed: {e}"),
            ProxyFailure::Handshake(e) => write!(f, "TLS to proxy {proxy} (for {origin}) failed: {e}"),
        }
    }
}

impl StdError for ProxyError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.failure {
            ProxyFailure::Unreachable(e) => Some(e.as_ref()),
            ProxyFailure::BadResponse(e) => Some(e),
            ProxyFailure::Io(e) => Some(e),
            ProxyFailure::Handshake(e) => Some(e),
            ProxyFailure::Refused { .. } | ProxyFailure::Closed => None,
        }
    }
}

/// How a proxy's answer to `CONNECT` was not an HTTP response ([`ProxyFailure::BadResponse`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ProxyResponseError {
    /// The response head did not end within `limit` bytes.
    HeadTooLong {
        /// The longest head read, in bytes.
        limit: usize,
    },
    /// The head is not an HTTP/1.x response; the source is the parser's error (`httparse`'s).
    Malformed {
        /// What the proxy sent (lossily decoded, surrounding whitespace trimmed).
        received: String,
        /// Why it does not parse.
        source: Arc<dyn StdError + Send + Sync>,
    },
    /// The head parsed but lacks its status line.
    NoStatus {
        /// What the proxy sent (lossily decoded, surrounding whitespace trimmed).
        received: String,
    },
}

impl fmt::Display for ProxyResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyResponseError::HeadTooLong { limit } => write!(f, "response head over {} KiB", limit / 1024),
            ProxyResponseError::Malformed { received, source } => write!(f, "{received} ({source})"),
            ProxyResponseError::NoStatus { received } => write!(f, "no status code: {received}"),
        }
    }
}

impl StdError for ProxyResponseError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            ProxyResponseError::Malformed { source, .. } => Some(&**source),
            ProxyResponseError::HeadTooLong { .. } | ProxyResponseError::NoStatus { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roots::TrustRoots;

    /// The lists messages name are every provider and roots feature of the manifest (and each
    /// compiled-in variant's name is in its list), so no message omits one.
    #[test]
    fn messages_list_every_provider_and_roots_feature() {
        let manifest = include_str!("../Cargo.toml");
        let section = manifest.split("\n[features]\n").nth(1).expect("a [features] table");
        let section = section.split("\n[").next().unwrap_or(section);
        let mut features: Vec<&str> = section
            .lines()
            .filter(|line| !line.starts_with('#') && line.contains(" = ["))
            .filter_map(|line| line.split(" = ").next())
            // Not a provider or roots choice: a provider's other implementation.
            .filter(|name| *name != "default" && !name.starts_with("experimental-"))
            .collect();
        features.sort_unstable();
        let mut listed: Vec<&str> =
            crate::provider::PROVIDER_FEATURES.iter().chain(crate::provider::ROOTS_FEATURES).copied().collect();
        listed.sort_unstable();
        assert_eq!(listed, features);
        assert!(TlsProvider::ALL.iter().all(|p| crate::provider::PROVIDER_FEATURES.contains(&p.name())));
        // `native-or-webpki` needs the features it is named after.
        assert!(TrustRoots::ALL
            .iter()
            .all(|r| r.name().split("-or-").all(|f| crate::provider::ROOTS_FEATURES.contains(&f))));

        #[allow(deprecated)]
        let no_provider = Error::NoProvider.to_string();
        for feature in crate::provider::PROVIDER_FEATURES {
            assert!(no_provider.contains(&format!("`{feature}`")), "{no_provider}");
        }
        let no_roots = Error::NoTrustRoots.to_string();
        for feature in crate::provider::ROOTS_FEATURES {
            assert!(no_roots.contains(&format!("`{feature}`")), "{no_roots}");
        }
        assert!(no_roots.contains("`native`, `webpki` or `platform-verifier` feature"), "{no_roots}");
    }

    /// The chain below `err`, each link's `Display`.
    fn chain(err: &(dyn StdError + 'static)) -> Vec<String> {
        let mut links = Vec::new();
        let mut next = err.source();
        while let Some(e) = next {
            links.push(e.to_string());
            next = e.source();
        }
        links
    }

    /// Every variant with a cause hands it on as its source, down to the library's error, and
    /// still says it all in its own message.
    #[test]
    fn causes_are_sources_down_to_the_library_error() {
        let missing = || Arc::new(std::io::Error::from(std::io::ErrorKind::NotFound));
        let pem = Error::InvalidPem { origin: "/ca.pem".to_owned(), reason: PemError::Unreadable(missing()) };
        assert!(pem.source().is_some_and(|e| e.is::<PemError>()));
        assert!(pem.source().and_then(StdError::source).is_some_and(|e| e.is::<std::io::Error>()));
        assert_eq!(pem.to_string(), "unusable PEM certificates from /ca.pem: cannot be read: entity not found");

        let key_log = Error::TlsConfig {
            provider: TlsProvider::ALL[0],
            reason: TlsConfigError::KeyLog(KeyLogError::Open { path: "/no/keys.log".into(), source: missing() }),
        };
        assert_eq!(chain(&key_log).len(), 3, "{:?}", chain(&key_log));
        assert!(key_log
            .to_string()
            .ends_with("SSLKEYLOGFILE=/no/keys.log: cannot open for appending: entity not found"));

        let proxy = Error::InvalidProxy {
            url: "http://".to_owned(),
            reason: ProxyUrlError::NotAUrl(Arc::new("http://".parse::<http::Uri>().unwrap_err())),
        };
        let not_a_url = proxy.source().and_then(StdError::source);
        assert!(not_a_url.is_some_and(|e| e.is::<http::uri::InvalidUri>()), "{:?}", chain(&proxy));

        let uri = Error::InvalidUri { uri: "ftp://h/".to_owned(), reason: UriError::UnsupportedScheme("ftp".into()) };
        assert_eq!(chain(&uri), ["unsupported scheme `ftp`: use http or https"]);

        let roots = Error::Roots(RootsError::NativeUnreadable {
            failures: vec![crate::roots::StoreError::CertFileUnreadable { path: "/s.pem".into(), source: missing() }],
        });
        assert_eq!(chain(&roots)[1..], ["SSL_CERT_FILE=/s.pem: entity not found", "entity not found"]);

        for cause_free in [Error::NoTrustRoots, Error::DefaultAlreadyBuilt, Error::DefaultAlreadyConfigured] {
            assert!(cause_free.source().is_none(), "{cause_free}");
        }
    }

    #[test]
    fn alerts_name_the_client_certificate_problem() {
        use CertificateAnswer as A;
        use ClientCertificateProblem as P;
        for (alert, problem) in [(116, P::Required), (48, P::UnknownIssuer), (45, P::Expired), (44, P::Revoked)] {
            assert_eq!(P::from_alert(alert, A::Sent), Some(problem), "{alert}");
        }
        for rejected in [42, 43, 46, 49] {
            assert_eq!(P::from_alert(rejected, A::Sent), Some(P::Rejected), "{rejected}");
        }
        // handshake_failure is about the certificate only when the server asked and got none.
        assert_eq!(P::from_alert(40, A::Sent), None);
        assert_eq!(P::from_alert(40, A::NoIdentity), Some(P::Required));
        // Nothing sent because the key signs nothing the server takes: that, not "required".
        assert_eq!(P::from_alert(40, A::KeyCannotSign), Some(P::KeyCannotSign));
        assert_eq!(P::from_alert(116, A::KeyCannotSign), Some(P::KeyCannotSign));
        assert_eq!(P::from_alert(48, A::KeyCannotSign), Some(P::UnknownIssuer));
        // illegal_parameter or handshake_failure after a certificate signed without checking
        // the request's schemes went out: that signature's scheme.
        assert_eq!(P::from_alert(47, A::SentSchemeUnchecked), Some(P::KeyCannotSign));
        assert_eq!(P::from_alert(40, A::SentSchemeUnchecked), Some(P::KeyCannotSign));
        assert_eq!(P::from_alert(47, A::Sent), None);
        assert_eq!(P::from_alert(40, A::Sent), None);
        assert_eq!(P::from_alert(47, A::NotAsked), None);
        assert_eq!(P::from_alert(40, A::NotAsked), None);
        // Alerts about anything else (protocol_version, decode_error) are not.
        assert_eq!(P::from_alert(70, A::NoIdentity), None);
        assert_eq!(P::from_alert(50, A::Sent), None);
    }

    #[test]
    fn which_proxy_refusals_are_worth_retrying() {
        let refused = |status| ProxyFailure::Refused { status, phrase: String::new() };
        for (status, transient) in [(407, false), (403, false), (501, false), (429, true), (502, true), (503, true)] {
            assert_eq!(refused(status).is_transient(), transient, "{status}");
        }
        assert!(ProxyFailure::Closed.is_transient());
        assert!(!ProxyFailure::BadResponse(ProxyResponseError::HeadTooLong { limit: 16 * 1024 }).is_transient());
    }
}

/// No response head arrived within the read timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTimeout {
    pub(crate) after: std::time::Duration,
}

impl fmt::Display for ReadTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "read timeout: no response head within {:?}", self.after)
    }
}

impl StdError for ReadTimeout {}
