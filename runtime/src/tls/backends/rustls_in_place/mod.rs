//! The experimental backend (`experimental-rustls-024`): `rustls-aws-lc` on rustls 0.24's
//! pre-release, whose connection decrypts each record where it was received and lends the
//! plaintext out of that buffer, so a download is copied once between the socket and the caller
//! (rustls 0.23 copies each record into its plaintext queue, and tokio-rustls copies it out).
//!
//! The trust roots are the rustls backend's (the same `TrustAnchor`s: both rustls versions use
//! the one rustls-pki-types), so every roots source but the platform verifier (a rustls 0.23
//! crate) works alike. [`stream`] is the connection.

mod stream;

use std::hash::Hasher;
use std::sync::Arc;

use rustls_024::client::{ClientConfig, ClientCredentialResolver, CredentialRequest, Resumption};
use rustls_024::crypto::{Credentials, Identity, SelectedCredential};
use rustls_024::enums::{ApplicationProtocol, CertificateType};
use rustls_024::{HandshakeKind, KeyLog, RootCertStore};
use rustls_pki_types::FipsStatus;

use crate::error::{
    CertificateAnswer, CertificateProblem, ClientCertificateProblem, Error, HandshakeFailure, TlsConfigError,
    TlsHandshakeError,
};
use crate::provider::TlsProvider;
use crate::tls::client_auth_seen::ClientAuthSeen;
use crate::tls::info::Negotiated;
use crate::tls::key_log_file::KeyLogFile;
use crate::tls::names;
use crate::tls::refusal::ReadRefusal;
use crate::tls::settings::TlsSettings;
use crate::tls::transport::Transport;
use stream::HandshakeError;
pub(crate) use stream::InPlaceStream;

/// A prepared configuration on rustls 0.24 with the aws-lc-rs provider.
#[derive(Debug)]
pub(crate) struct InPlaceBackend {
    provider: TlsProvider,
    config: Arc<ClientConfig>,
}

/// `SSLKEYLOGFILE` lines, as rustls 0.24 hands over each secret (it has no file writer of its own).
#[derive(Debug)]
struct FileKeyLog(&'static KeyLogFile);

impl KeyLog for FileKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        self.0.append_secret(label, client_random, secret);
    }
}

/// The client certificate rustls presents when a server asks for one (or none, without an
/// identity), recording that it was asked ([`ClientAuthSeen`]), as the rustls 0.23 backend's
/// resolver does.
#[derive(Debug)]
struct CredentialResolver(Option<Credentials>);

impl ClientCredentialResolver for CredentialResolver {
    fn resolve(&self, request: &CredentialRequest<'_>) -> Option<SelectedCredential> {
        let x509 = request.negotiated_type() == CertificateType::X509;
        // rustls sends the certificate only when the key can sign one of the server's schemes.
        let selected = self.0.as_ref().filter(|_| x509).and_then(|c| c.signer(request.signature_schemes()));
        ClientAuthSeen::asked(self.0.is_some(), selected.is_some());
        selected
    }

    fn supported_certificate_types(&self) -> &'static [CertificateType] {
        // Without an identity, none: rustls still asks `resolve` when a server wants one.
        if self.0.is_some() {
            &[CertificateType::X509]
        } else {
            &[]
        }
    }

    fn hash_config(&self, h: &mut dyn Hasher) {
        // Resumed sessions are kept apart per identity: the end-entity certificate names it.
        if let Some(Identity::X509(x509)) = self.0.as_ref().map(|c| &*c.identity) {
            h.write(x509.end_entity.as_ref());
        }
    }
}

/// The client identity as rustls 0.24 signs with it, its key loaded and the pair checked with
/// aws-lc-rs (a key without its public half is what `ClientIdentity::from_pem` could not compare).
fn credentials(
    settings: &TlsSettings,
    crypto: &rustls_024::crypto::CryptoProvider,
) -> Result<Option<Credentials>, Error> {
    let provider = settings.provider;
    let Some(identity) = &settings.client_identity else { return Ok(None) };
    let refused = |reason| Error::TlsConfig { provider, reason };
    let chain = Identity::from_cert_chain(identity.certificate_chain().to_vec())
        .map_err(|e| refused(TlsConfigError::Library(Arc::new(rustls_024::Error::from(e)))))?;
    let key = crypto.key_provider.load_private_key(identity.private_key_der()).map_err(|e| {
        refused(TlsConfigError::ClientKeyRefused { key_type: identity.key_type(), source: Arc::new(e) })
    })?;
    let chain = Arc::new(chain);
    match Credentials::new(Arc::clone(&chain), key) {
        Ok(credentials) => Ok(Some(credentials)),
        Err(rustls_024::Error::InconsistentKeys(rustls_024::crypto::InconsistentKeys::KeyMismatch)) => {
            Err(refused(TlsConfigError::ClientKeyMismatch))
        }
        Err(e) => Err(refused(TlsConfigError::Library(Arc::new(e)))),
    }
}

impl InPlaceBackend {
    /// Prepares `settings.provider` (`rustls-aws-lc`) on rustls 0.24.
    pub(crate) fn prepare(settings: &TlsSettings) -> Result<Self, Error> {
        let provider = settings.provider;
        let tls_error =
            |e: rustls_024::Error| Error::TlsConfig { provider, reason: TlsConfigError::Library(Arc::new(e)) };
        // With aws-lc-rs, X25519MLKEM768 leads the key exchange groups, as with rustls 0.23's
        // `prefer-post-quantum`.
        let crypto = Arc::new(rustls_aws_lc_rs_024::DEFAULT_PROVIDER);
        // aws-lc seeds its random generator on first use: here, not in the first handshake (as
        // the rustls 0.23 backend does), overlapped with reading the system store.
        let seed = || {
            let _ = crypto.secure_random.fill(&mut [0u8; 32]);
        };
        let roots = if settings.roots.is_some_and(crate::roots::TrustRoots::reads_the_store) {
            crate::tls::preparing::seeding_meanwhile(seed, || crate::tls::rustls_roots::root_store(settings))
        } else {
            seed();
            crate::tls::rustls_roots::root_store(settings)
        }?;
        let store = RootCertStore { roots: roots.roots.clone() };
        let credentials = credentials(settings, &crypto)?;
        let mut config = ClientConfig::builder(Arc::clone(&crypto))
            .with_root_certificates(store)
            .with_client_credential_resolver(Arc::new(CredentialResolver(credentials)))
            .map_err(tls_error)?;
        config.alpn_protocols = settings.alpn().into_iter().map(ApplicationProtocol::from).collect();
        if let Some(path) = crate::tls::key_log_file::key_log_file() {
            let file = KeyLogFile::for_path(&path)
                .map_err(|e| Error::TlsConfig { provider, reason: TlsConfigError::KeyLog(e) })?;
            config.key_log = Arc::new(FileKeyLog(file));
        }
        if !settings.session_resumption {
            config.resumption = Resumption::disabled();
        }
        Ok(InPlaceBackend { provider, config: Arc::new(config) })
    }

    pub(crate) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(InPlaceStream<Transport>, ReadRefusal, Negotiated), TlsHandshakeError> {
        let provider = self.provider;
        let name = names::server_name(provider, server_name)?;
        let mut hello = Vec::new();
        let conn = self
            .config
            .connect(name)
            .build(&mut hello)
            .map_err(|e| classify(provider, HandshakeError::Tls(e), CertificateAnswer::NotAsked))?;
        let (handshake, answer) = ClientAuthSeen::during(InPlaceStream::handshake(tcp, conn, hello)).await;
        let stream = handshake.map_err(|e| classify(provider, e, answer))?;
        let (_, conn) = stream.get_ref();
        // rustls 0.24 has no names of its own for these values; rustls 0.23 (compiled in beside
        // it) names the same code points, so the names match the rustls 0.23 backend's.
        let info = Negotiated {
            protocol_version: conn.protocol_version().map_or("", |v| {
                let v = rustls::ProtocolVersion::from(u16::from(v));
                names::known_or_debug(v.as_str(), &v)
            }),
            cipher_suite: conn.negotiated_cipher_suite().map_or("", |s| {
                let s = rustls::CipherSuite::from(u16::from(s.suite()));
                names::known_or_debug(s.as_str(), &s)
            }),
            key_exchange_group: conn.negotiated_key_exchange_group().map(|g| {
                let g = rustls::NamedGroup::from(u16::from(g.name()));
                names::known_or_debug(g.as_str(), &g)
            }),
            // rustls refuses a protocol we did not offer (`check_selected_alpn`, on by default).
            alpn: conn.alpn_protocol().and_then(|p| names::alpn(p.as_ref())),
            resumed: matches!(
                conn.handshake_kind(),
                Some(HandshakeKind::Resumed | HandshakeKind::ResumedWithHelloRetryRequest)
            ),
            fips: !matches!(conn.fips(), FipsStatus::Unvalidated),
            client_certificate_sent: answer == CertificateAnswer::Sent,
        };
        Ok((stream, ReadRefusal::new(self.provider, answer), info))
    }
}

/// The client-certificate problem an alert received from the server names, if any.
fn client_certificate_problem(e: &rustls_024::Error, answer: CertificateAnswer) -> Option<ClientCertificateProblem> {
    match e {
        rustls_024::Error::AlertReceived(alert) => ClientCertificateProblem::from_alert(alert.0, answer),
        _ => None,
    }
}

/// Whether a read's error is a server's refusal (TLS 1.3: after the client's handshake is
/// done; here, its demand for a certificate this backend does not present), and which.
pub(crate) fn refusal_on_read(io: &std::io::Error, answer: CertificateAnswer) -> Option<ClientCertificateProblem> {
    io.get_ref().and_then(|e| e.downcast_ref::<rustls_024::Error>()).and_then(|e| client_certificate_problem(e, answer))
}

fn classify(provider: TlsProvider, error: HandshakeError, answer: CertificateAnswer) -> TlsHandshakeError {
    use rustls_024::error::CertificateError as C;
    match error {
        HandshakeError::Io(io) => TlsHandshakeError { provider, kind: HandshakeFailure::Io, source: Arc::new(io) },
        HandshakeError::Tls(e) => {
            if let Some(problem) = client_certificate_problem(&e, answer) {
                let kind = HandshakeFailure::ClientCertificate(problem);
                return TlsHandshakeError { provider, kind, source: Arc::new(e) };
            }
            let kind = match &e {
                rustls_024::Error::InvalidCertificate(problem) => HandshakeFailure::Certificate(match problem {
                    C::UnknownIssuer => CertificateProblem::UnknownIssuer,
                    C::NotValidForName | C::NotValidForNameContext { .. } => CertificateProblem::NameMismatch,
                    C::Expired | C::ExpiredContext { .. } => CertificateProblem::Expired,
                    C::NotValidYet | C::NotValidYetContext { .. } => CertificateProblem::NotYetValid,
                    C::UnsupportedSignatureAlgorithm { .. } => CertificateProblem::WeakAlgorithm,
                    _ => CertificateProblem::Other,
                }),
                _ => HandshakeFailure::Protocol,
            };
            TlsHandshakeError { provider, kind, source: Arc::new(e) }
        }
    }
}
