//! The rustls 0.23 backend, with the aws-lc-rs or ring crypto provider.

use std::sync::Arc;

use rustls::client::ClientConfig;
use rustls::crypto::CryptoProvider;
use rustls::SupportedProtocolVersion;
use tokio_rustls::TlsConnector;

use crate::error::{
    CertificateAnswer, CertificateProblem, ClientCertificateProblem, Error, HandshakeFailure, TlsConfigError,
    TlsHandshakeError,
};
use crate::provider::TlsProvider;
use crate::tls::client_auth_seen::ClientAuthSeen;
use crate::tls::info::Negotiated;
use crate::tls::key_log_file::KeyLogFile;
use crate::tls::names;
use crate::tls::read_ahead::ReadAhead;
use crate::tls::refusal::ReadRefusal;
use crate::tls::rustls_roots::root_store;
use crate::tls::settings::TlsSettings;
use crate::tls::transport::Transport;

/// TLS 1.3 first, then TLS 1.2. Nothing older is ever offered.
static PROTOCOL_VERSIONS: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13, &rustls::version::TLS12];

/// A connection the rustls 0.23 backend made.
pub(crate) type RustlsStream = tokio_rustls::client::TlsStream<ReadAhead<Transport>>;

pub(crate) struct RustlsBackend {
    provider: TlsProvider,
    connector: TlsConnector,
}

impl std::fmt::Debug for RustlsBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RustlsBackend").field("provider", &self.provider).finish_non_exhaustive()
    }
}

/// `SSLKEYLOGFILE` lines, written to the file the other backends share (created readable by its
/// owner only, which `rustls::KeyLogFile` does not do).
#[derive(Debug)]
struct FileKeyLog(&'static KeyLogFile);

impl rustls::KeyLog for FileKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        self.0.append_secret(label, client_random, secret);
    }
}

/// The client certificate rustls presents when a server asks for one (or none, without an
/// identity), recording that it was asked ([`ClientAuthSeen`]). rustls's own resolver for
/// `with_client_auth_cert` does the same minus the record.
#[derive(Debug)]
struct ClientCertResolver(Option<Arc<rustls::sign::CertifiedKey>>);

impl rustls::client::ResolvesClientCert for ClientCertResolver {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        sigschemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        // rustls sends the certificate only when the key can sign one of the server's schemes.
        let can_sign = self.0.as_ref().is_some_and(|certified| certified.key.choose_scheme(sigschemes).is_some());
        ClientAuthSeen::asked(self.0.is_some(), can_sign);
        self.0.clone()
    }

    fn has_certs(&self) -> bool {
        self.0.is_some()
    }
}

/// The client identity as rustls signs with it, loaded with `crypto`'s key provider.
fn certified_key(
    settings: &TlsSettings,
    crypto: &CryptoProvider,
) -> Result<Option<Arc<rustls::sign::CertifiedKey>>, Error> {
    let provider = settings.provider;
    let Some(identity) = &settings.client_identity else { return Ok(None) };
    // FIPS: only the key types FIPS approves, said before rustls's own (less specific) check.
    if provider.is_fips() && !identity.key_type().is_fips_approved() {
        return Err(Error::TlsConfig {
            provider,
            reason: TlsConfigError::ClientKeyNotFipsApproved(identity.key_type()),
        });
    }
    let refused = |reason| Error::TlsConfig { provider, reason };
    let key = crypto.key_provider.load_private_key(identity.private_key_der()).map_err(|e| {
        refused(TlsConfigError::ClientKeyRefused { key_type: identity.key_type(), source: Arc::new(e) })
    })?;
    let certified = rustls::sign::CertifiedKey::new(identity.certificate_chain().to_vec(), key);
    // The pair with this provider's crypto: what `ClientIdentity::from_pem` could not compare
    // (a key without its public half). A key that cannot give its public half is left unchecked.
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            return Err(refused(TlsConfigError::ClientKeyMismatch))
        }
        Err(e) => return Err(refused(TlsConfigError::Library(Arc::new(e)))),
    }
    Ok(Some(Arc::new(certified)))
}

/// The operating system's verifier, with the extra certificates trusted as well. Built once per
/// client configuration (on Linux this reads the native store).
#[cfg(roots = "platform-verifier")]
fn platform_verifier(
    settings: &TlsSettings,
    crypto: Arc<CryptoProvider>,
) -> Result<rustls_platform_verifier::Verifier, Error> {
    let failed = |e: rustls::Error| Error::Roots(crate::roots::RootsError::PlatformVerifier { source: Arc::new(e) });
    #[cfg(target_os = "android")]
    {
        if !settings.extra_roots.is_empty() {
            return Err(Error::TlsConfig {
                provider: settings.provider,
                reason: TlsConfigError::ExtraRootsWithPlatformVerifier,
            });
        }
        rustls_platform_verifier::Verifier::new(crypto).map_err(failed)
    }
    #[cfg(not(target_os = "android"))]
    {
        // An unusable extra certificate is the caller's input error, as with the other roots,
        // not a problem of the platform's store: check them first.
        crate::tls::rustls_roots::add_extra_roots(&mut rustls::RootCertStore::empty(), settings)?;
        // Without extra certificates, the system's verifier as it is: on Windows, extra roots
        // need a chain engine of their own (`hExclusiveRoot`, Windows 8 on), which older
        // CryptoAPIs (Wine's, Windows 7's) refuse as an invalid parameter.
        if settings.extra_roots.is_empty() {
            return rustls_platform_verifier::Verifier::new(crypto).map_err(failed);
        }
        let extra = settings.extra_roots.certificates.iter().cloned();
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, crypto).map_err(failed)
    }
}

impl RustlsBackend {
    /// Prepares `settings.provider` (a rustls provider) with its `crypto`.
    pub(crate) fn prepare(settings: &TlsSettings, crypto: Arc<CryptoProvider>) -> Result<Self, Error> {
        let provider = settings.provider;
        // Draw once from the provider's RNG while preparing, on the warm-up thread: aws-lc seeds
        // its DRBG (CPU-jitter entropy, tens of milliseconds) on first use, and the first
        // handshake should not be the one to pay for it. When the roots are read from the
        // system store (milliseconds of reading and parsing), the seeding runs on a second
        // thread meanwhile instead of before.
        let seed = || {
            let _ = crypto.secure_random.fill(&mut [0u8; 32]);
        };
        let overlap =
            provider.is_built_on_aws_lc() && settings.roots.is_some_and(crate::roots::TrustRoots::reads_the_store);
        let builder = if overlap {
            crate::tls::preparing::seeding_meanwhile(seed, || Self::config_builder(settings, &crypto))
        } else {
            seed();
            Self::config_builder(settings, &crypto)
        }?;
        let resolver = ClientCertResolver(certified_key(settings, &crypto)?);
        let mut config = builder.with_client_cert_resolver(Arc::new(resolver));
        config.alpn_protocols = settings.alpn();
        if let Some(path) = crate::tls::key_log_file::key_log_file() {
            let file = KeyLogFile::for_path(&path)
                .map_err(|e| Error::TlsConfig { provider, reason: TlsConfigError::KeyLog(e) })?;
            config.key_log = Arc::new(FileKeyLog(file));
        }
        if !settings.session_resumption {
            config.resumption = rustls::client::Resumption::disabled();
        }
        // The FIPS provider promises FIPS mode: a configuration rustls would not run in FIPS
        // mode is refused, not used quietly.
        #[cfg(provider = "rustls-aws-lc-fips")]
        if provider == crate::provider::TlsProvider::RustlsAwsLcFips && !config.fips() {
            return Err(Error::TlsConfig { provider, reason: TlsConfigError::NotFipsMode });
        }
        Ok(RustlsBackend { provider, connector: TlsConnector::from(Arc::new(config)) })
    }

    /// rustls's configuration up to client authentication: protocol versions, and the roots
    /// or the platform verifier.
    fn config_builder(
        settings: &TlsSettings,
        crypto: &Arc<CryptoProvider>,
    ) -> Result<rustls::ConfigBuilder<ClientConfig, rustls::client::WantsClientCert>, Error> {
        let provider = settings.provider;
        let tls_error = |e: rustls::Error| Error::TlsConfig { provider, reason: TlsConfigError::Library(Arc::new(e)) };
        let builder = ClientConfig::builder_with_provider(Arc::clone(crypto))
            .with_protocol_versions(PROTOCOL_VERSIONS)
            .map_err(tls_error)?;
        // A custom verifier, but still a verifying one: the operating system checks the chain
        // and the name. (`dangerous()` is rustls's name for any non-webpki verifier.)
        #[cfg(roots = "platform-verifier")]
        let builder = if settings.roots == Some(crate::roots::TrustRoots::PlatformVerifier) {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(platform_verifier(settings, Arc::clone(crypto))?))
        } else {
            builder.with_root_certificates(root_store(settings)?)
        };
        #[cfg(not(roots = "platform-verifier"))]
        let builder = builder.with_root_certificates(root_store(settings)?);
        Ok(builder)
    }

    pub(crate) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(RustlsStream, ReadRefusal, Negotiated), TlsHandshakeError> {
        let provider = self.provider;
        let name = names::server_name(provider, server_name)?;
        let (connected, answer) = ClientAuthSeen::during(self.connector.connect(name, ReadAhead::new(tcp))).await;
        let stream = connected.map_err(|io| classify(provider, io, answer))?;
        let (_, conn) = stream.get_ref();
        let info = Negotiated {
            // rustls names every value it can negotiate; `Debug` spells the same name, and an
            // unknown one as `Type(0x..)`.
            protocol_version: conn.protocol_version().map_or("", |v| names::known_or_debug(v.as_str(), &v)),
            cipher_suite: conn
                .negotiated_cipher_suite()
                .map_or("", |s| names::known_or_debug(s.suite().as_str(), &s.suite())),
            key_exchange_group: conn
                .negotiated_key_exchange_group()
                .map(|g| names::known_or_debug(g.name().as_str(), &g.name())),
            // rustls refuses a protocol we did not offer (`SelectedUnofferedApplicationProtocol`),
            // and we offer only the two `names::alpn` knows.
            alpn: conn.alpn_protocol().and_then(names::alpn),
            resumed: matches!(conn.handshake_kind(), Some(rustls::HandshakeKind::Resumed)),
            fips: conn.fips(),
            client_certificate_sent: answer == CertificateAnswer::Sent,
        };
        Ok((stream, ReadRefusal::new(provider, answer), info))
    }
}

/// The client-certificate problem an error received from the server names, if any.
/// `answer`: how the client answered the server's request for a certificate.
fn client_certificate_problem(e: &rustls::Error, answer: CertificateAnswer) -> Option<ClientCertificateProblem> {
    match e {
        rustls::Error::AlertReceived(alert) => ClientCertificateProblem::from_alert(u8::from(*alert), answer),
        _ => None,
    }
}

/// Whether a read's error is a server's refusal of our certificate (TLS 1.3: after the
/// client's handshake is done), and which.
pub(crate) fn refusal_on_read(io: &std::io::Error, answer: CertificateAnswer) -> Option<ClientCertificateProblem> {
    io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()).and_then(|e| client_certificate_problem(e, answer))
}

fn classify(provider: TlsProvider, io: std::io::Error, answer: CertificateAnswer) -> TlsHandshakeError {
    use rustls::CertificateError as C;
    let error = io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    if let Some(problem) = error.and_then(|e| client_certificate_problem(e, answer)) {
        return TlsHandshakeError {
            provider,
            kind: HandshakeFailure::ClientCertificate(problem),
            source: Arc::new(io),
        };
    }
    let kind = match error {
        Some(rustls::Error::InvalidCertificate(problem)) => HandshakeFailure::Certificate(match problem {
            C::UnknownIssuer => CertificateProblem::UnknownIssuer,
            C::NotValidForName | C::NotValidForNameContext { .. } => CertificateProblem::NameMismatch,
            C::Expired | C::ExpiredContext { .. } => CertificateProblem::Expired,
            C::NotValidYet | C::NotValidYetContext { .. } => CertificateProblem::NotYetValid,
            #[allow(deprecated)] // rustls still reports the variant without context in places
            C::UnsupportedSignatureAlgorithm | C::UnsupportedSignatureAlgorithmContext { .. } => {
                CertificateProblem::WeakAlgorithm
            }
            _ => CertificateProblem::Other,
        }),
        Some(_) => HandshakeFailure::Protocol,
        None => HandshakeFailure::Io,
    };
    TlsHandshakeError { provider, kind, source: Arc::new(io) }
}
