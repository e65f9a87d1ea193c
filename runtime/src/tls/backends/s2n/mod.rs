//! The s2n-tls backend (Linux and macOS), with aws-lc as its libcrypto.
//!
//! Security policy: [`SECURITY_POLICY`] (`20251014`, s2n-tls's `default` as of this writing,
//! pinned so that an s2n-tls upgrade cannot change it silently): TLS 1.2 minimum, TLS 1.3
//! preferred, forward secrecy required, post-quantum hybrid key exchange (X25519MLKEM768) offered
//! first on TLS 1.3. The policy does not restrict the certificates themselves, so the validated
//! chain is checked after the handshake against the rules rustls applies (no SHA-1 signatures,
//! RSA keys of at least 2048 bits): see [`chain`].
//!
//! Throughput: receive buffering is turned on for every connection, so s2n-tls reads records in
//! large chunks instead of issuing one read per record header and one per body (about half the
//! read syscalls; see aws/s2n-tls#5301), and [`S2nStream`] hands the HTTP layer every decrypted
//! record at once.

mod chain;
mod key;
mod key_log;
mod stream;
mod tickets;

pub(crate) use self::stream::S2nStream;

use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::Arc;

use s2n_tls::connection::{Connection, ModifiedBuilder};
use s2n_tls::error::ErrorType;
use s2n_tls::security::Policy;

use self::tickets::{TicketGate, TicketSink, TicketStore};
use crate::error::{
    CertificateAnswer, CertificateProblem, ClientCertificateProblem, Error, HandshakeFailure, TlsConfigError,
    TlsHandshakeError,
};
#[cfg(roots_source)]
use crate::provider::compiled::CompiledRoots;
use crate::provider::TlsProvider;
use crate::roots::PemError;
use crate::tls::info::Negotiated;
use crate::tls::names;
use crate::tls::read_ahead::FirstByte;
use crate::tls::read_ahead::ReadAhead;
use crate::tls::refusal::ReadRefusal;
use crate::tls::settings::TlsSettings;
use crate::tls::transport::Transport;

/// The s2n-tls security policy every s2n-tls client uses.
pub(crate) const SECURITY_POLICY: &str = "20251014";

/// The security policy of `TlsProvider::S2nTlsFips`: s2n-tls's FIPS default (`default_fips` as
/// of this writing, pinned): the FIPS 140-3 rules (approved ciphers, groups — ML-KEM hybrids
/// included — and signatures), TLS 1.2 minimum, forward secrecy.
pub(crate) const FIPS_SECURITY_POLICY: &str = "20251015";

pub(crate) struct S2nBackend {
    provider: TlsProvider,
    config: s2n_tls::config::Config,
    tickets: Arc<TicketStore>,
    /// The ALPN protocols offered: s2n-tls takes whatever the server selects, offered or not.
    offered_alpn: Vec<Vec<u8>>,
    /// Whether a client identity is configured (presented when a server asks).
    has_identity: bool,
}

impl std::fmt::Debug for S2nBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S2nBackend")
            .field("provider", &self.provider)
            .field("security_policy", &security_policy(self.provider))
            .finish_non_exhaustive()
    }
}

/// Whether `provider` is s2n-tls on the FIPS module (whose libcrypto is checked to be in FIPS
/// mode when it is prepared).
fn is_fips(provider: TlsProvider) -> bool {
    #[cfg(s2n_fips)]
    return provider == TlsProvider::S2nTlsFips;
    #[cfg(not(s2n_fips))]
    {
        let _ = provider;
        false
    }
}

/// The pinned security policy of an s2n-tls provider.
fn security_policy(provider: TlsProvider) -> &'static str {
    if is_fips(provider) {
        FIPS_SECURITY_POLICY
    } else {
        SECURITY_POLICY
    }
}

fn config_error(provider: TlsProvider) -> impl Fn(s2n_tls::error::Error) -> Error + Copy {
    move |e| Error::TlsConfig { provider, reason: TlsConfigError::Library(Arc::new(NamedError(e))) }
}

/// An s2n-tls error shown with its name (`S2N_ERR_...`) after its message: s2n-tls's own
/// `Display` gives the message only, and the name is what its documentation and issues use.
#[derive(Debug)]
pub(super) struct NamedError(pub(super) s2n_tls::error::Error);

impl std::fmt::Display for NamedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.0.message(), self.0.name())
    }
}

impl std::error::Error for NamedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// A DER certificate as PEM, the only form s2n-tls's trust store takes.
fn der_to_pem(der: &[u8]) -> String {
    use base64::Engine as _;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem
}

/// Trusts the bundled Mozilla roots (webpki-root-certs) and not the system store.
#[cfg(roots = "webpki")]
fn trust_bundled_roots(
    builder: &mut s2n_tls::config::Builder,
    config_error: impl Fn(s2n_tls::error::Error) -> Error,
) -> Result<(), Error> {
    builder.with_system_certs(false).map_err(&config_error)?;
    for cert in webpki_root_certs::TLS_SERVER_ROOT_CERTS {
        builder.trust_pem(der_to_pem(cert.as_ref()).as_bytes()).map_err(&config_error)?;
    }
    Ok(())
}

/// Initializes s2n-tls once per process, seeding aws-lc's random generator on a second thread
/// meanwhile.
///
/// `s2n_init` first loads the system trust store into s2n-tls's built-in default config (which
/// no client of ours uses) and only then draws aws-lc's first random
/// bytes, which seeds aws-lc from CPU-jitter entropy (tens of milliseconds). The seeding is
/// aws-lc's own process-wide once: started on another thread first ([`crate::tls::preparing::seeding_meanwhile`]),
/// it runs while `s2n_init` loads the store, and `s2n_init` waits for it instead of starting it.
fn init() {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        let seed = || {
            let _ = aws_lc_rs::rand::fill(&mut [0u8; 1]);
        };
        crate::tls::preparing::seeding_meanwhile(seed, s2n_tls::init::init);
    });
}

/// Trusts the settings' roots source and extra certificates.
fn trust_roots(builder: &mut s2n_tls::config::Builder, settings: &TlsSettings) -> Result<(), Error> {
    let provider = settings.provider;
    let config_error = config_error(provider);
    match settings.compiled_roots()? {
        #[cfg(roots = "native")]
        Some(CompiledRoots::Native) => {
            crate::roots::check_native_store()?;
            builder.with_system_certs(true).map_err(config_error)?;
        }
        #[cfg(roots = "webpki")]
        Some(CompiledRoots::Webpki) => trust_bundled_roots(builder, config_error)?,
        // As `Native` where the store yields a certificate (s2n-tls reading it itself, as
        // there); the bundled roots where it does not. s2n-tls loads an empty or missing
        // store without a word, so the store is read here first to know (once per backend).
        #[cfg(native_or_webpki)]
        Some(CompiledRoots::NativeOrWebpki) => {
            match crate::roots::check_native_store().and_then(|()| crate::roots::load_native_certificates().map(drop)) {
                Ok(()) => {
                    builder.with_system_certs(true).map_err(config_error)?;
                }
                Err(why) => {
                    trust_bundled_roots(builder, config_error)?;
                    let roots = webpki_root_certs::TLS_SERVER_ROOT_CERTS.len();
                    crate::tls::preparing::warn_native_fallback(provider, &why, roots);
                }
            }
        }
        None => {
            builder.with_system_certs(false).map_err(config_error)?;
        }
        // Refused by `TlsProvider::validate_roots` before any backend is prepared.
        #[cfg(roots = "platform-verifier")]
        Some(CompiledRoots::PlatformVerifier) => provider.validate_roots(crate::roots::TrustRoots::PlatformVerifier)?,
    }
    for cert in &settings.extra_roots.certificates {
        builder.trust_pem(der_to_pem(cert.as_ref()).as_bytes()).map_err(|e| Error::InvalidPem {
            origin: "extra root certificate".to_owned(),
            reason: PemError::Rejected(Arc::new(NamedError(e))),
        })?;
    }
    Ok(())
}

/// The client identity, presented when a server asks (s2n-tls clients answer a
/// CertificateRequest by default: with this chain, or an empty one without). s2n-tls keeps its
/// own copy of the key in the config, freed with it.
fn present_identity(builder: &mut s2n_tls::config::Builder, settings: &TlsSettings) -> Result<(), Error> {
    let provider = settings.provider;
    if let Some(identity) = &settings.client_identity {
        if is_fips(provider) && !identity.key_type().is_fips_approved() {
            let reason = TlsConfigError::ClientKeyNotFipsApproved(identity.key_type());
            return Err(Error::TlsConfig { provider, reason });
        }
        // s2n-tls reads no Ed25519 certificate (S2N_ERR_DECODE_CERTIFICATE): said plainly.
        if identity.key_type() == crate::identity::KeyType::Ed25519 {
            let reason = TlsConfigError::ClientKeyTypeUnsupported(identity.key_type());
            return Err(Error::TlsConfig { provider, reason });
        }
        key::check_pair(provider, identity)?;
        let (chain, key) = identity.pem();
        // The chain builder hands s2n-tls our buffers as they are, where `Builder::load_pem`
        // copies them into `CString`s it frees unzeroed.
        let mut loaded = s2n_tls::cert_chain::Builder::new().map_err(config_error(provider))?;
        loaded.load_pem(chain.as_bytes(), key.as_bytes()).map_err(config_error(provider))?;
        builder.load_chain(loaded.build().map_err(config_error(provider))?).map_err(config_error(provider))?;
    }
    Ok(())
}

impl S2nBackend {
    pub(crate) fn prepare(settings: &TlsSettings) -> Result<Self, Error> {
        let provider = settings.provider;
        let config_error = config_error(provider);
        // (Initializing s2n-tls is when it learns its libcrypto's mode.)
        init();
        let mut builder = s2n_tls::config::Builder::new();
        // The FIPS provider promises FIPS mode: a libcrypto that is not in it is refused.
        if is_fips(provider) && !s2n_tls::init::fips_mode().is_ok_and(|mode| mode.is_enabled()) {
            return Err(Error::TlsConfig { provider, reason: TlsConfigError::LibcryptoNotFips });
        }
        if let Some(path) = crate::tls::key_log_file::key_log_file() {
            key_log::install(&mut builder, &path)
                .map_err(|e| Error::TlsConfig { provider, reason: TlsConfigError::KeyLog(e) })?;
        }
        let policy = Policy::from_version(security_policy(provider)).map_err(config_error)?;
        builder.set_security_policy(&policy).map_err(config_error)?;
        builder.set_application_protocol_preference(settings.alpn()).map_err(config_error)?;
        trust_roots(&mut builder, settings)?;
        // s2n-tls delays reporting a failed handshake by 10-30 s ("blinding") to hide timing
        // differences from an attacker. With this AEAD-only policy there is no padding oracle
        // to hide, and a client that waits half a minute to report an untrusted certificate
        // stalls the SDK's retries, so the delay is off.
        builder.set_max_blinding_delay(0).map_err(config_error)?;
        builder.set_send_buffer_size(128 << 10).map_err(config_error)?;
        present_identity(&mut builder, settings)?;
        let tickets = Arc::new(TicketStore::default());
        if settings.session_resumption {
            builder.enable_session_tickets(true).map_err(config_error)?;
            builder.set_session_ticket_callback(TicketSink).map_err(config_error)?;
        }
        let config = builder.build().map_err(config_error)?;
        Ok(S2nBackend {
            provider,
            config,
            tickets,
            offered_alpn: settings.alpn(),
            has_identity: settings.client_identity.is_some(),
        })
    }

    pub(crate) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(S2nStream, Negotiated), TlsHandshakeError> {
        let ticket = self.tickets.take(server_name);
        let gate = TicketGate::new(Arc::clone(&self.tickets));
        let conn_gate = Arc::clone(&gate);
        let builder = ModifiedBuilder::new(self.config.clone(), move |conn: &mut Connection| {
            conn.set_receive_buffering(true)?;
            conn.set_application_context(Arc::clone(&conn_gate));
            if let Some(ticket) = &ticket {
                // A stale or rejected ticket only costs a full handshake.
                let _ = conn.set_session_ticket(ticket);
            }
            Ok(conn)
        });
        let seen = Arc::new(Seen::default());
        let connector = s2n_tls_tokio::TlsConnector::new(WatchAlerts { builder, seen: Arc::clone(&seen) });
        let first_byte = FirstByte::new();
        let stream = connector
            .connect(server_name, ReadAhead::noting_first_byte(tcp, first_byte.clone()))
            .await
            .map_err(|e| {
                let alert = u8::try_from(seen.alert.load(Ordering::Relaxed)).ok();
                not_tls(self.provider, &first_byte).unwrap_or_else(|| {
                    classify(self.provider, e, alert, self.answer(seen.asked.load(Ordering::Relaxed)))
                })
            })?;
        // The connection leaves its watch: the stream holds it as s2n-tls's own type.
        let (watch, io) = stream.into_parts();
        let stream = s2n_tls_tokio::TlsStream::from_parts(watch.into_connection(), io);
        let conn: &Connection = stream.as_ref();
        // A resumed session has no chain to check: its ticket came from a connection that passed.
        if !conn.resumed() {
            check_peer_chain(self.provider, conn)?;
        }
        let alpn = names::selected_alpn(self.provider, conn.application_protocol(), &self.offered_alpn)?;
        gate.approve();
        let info = Negotiated {
            protocol_version: conn.actual_protocol_version().map_or("", version_name),
            // The names come out of s2n-tls's own tables of suites and groups (borrowed from the
            // connection, hence interned: one copy per name for the process), never from the peer.
            cipher_suite: conn.cipher_suite().map_or("", names::intern),
            key_exchange_group: conn.selected_key_exchange_group().map(names::intern),
            alpn,
            resumed: conn.resumed(),
            // FIPS mode: the FIPS provider, whose libcrypto was checked to be in it when the
            // backend was prepared, with its FIPS security policy. The regular provider never is.
            fips: is_fips(self.provider),
            client_certificate_sent: conn.client_cert_used(),
        };
        let refusal = ReadRefusal::new(self.provider, self.answer(asked_for_certificate(conn)));
        let h2 = info.alpn == Some(names::H2);
        Ok((S2nStream::new(stream, refusal, h2), info))
    }

    /// How the handshake answered the server's request for a certificate (`asked`: whether it
    /// made one).
    fn answer(&self, asked: bool) -> CertificateAnswer {
        match (asked, self.has_identity) {
            (false, _) => CertificateAnswer::NotAsked,
            // s2n-tls signs with its key's scheme whether or not the request named it.
            (true, true) => CertificateAnswer::SentSchemeUnchecked,
            (true, false) => CertificateAnswer::NoIdentity,
        }
    }
}

/// A handshake that failed because the server answered with something other than TLS (an HTTP
/// server on the port, say): a refusal, not a transport failure worth retrying. s2n-tls reads
/// such an answer as a record header, waits for the rest and reports the close that follows;
/// the first byte tells. TLS records start with a content type from 20 to 24.
fn not_tls(provider: TlsProvider, first_byte: &FirstByte) -> Option<TlsHandshakeError> {
    let byte = first_byte.get().filter(|b| !(20..=24).contains(b))?;
    let shown = if byte.is_ascii_graphic() { format!(" ('{}')", byte as char) } else { String::new() };
    let message = format!("the server did not answer with TLS: its first byte was 0x{byte:02x}{shown}");
    Some(TlsHandshakeError {
        provider,
        kind: HandshakeFailure::Protocol,
        source: Arc::new(std::io::Error::new(std::io::ErrorKind::InvalidData, message)),
    })
}

/// s2n-tls's name of a protocol version (its `Debug` spelling).
fn version_name(version: s2n_tls::enums::Version) -> &'static str {
    use s2n_tls::enums::Version;
    match version {
        Version::SSLV2 => "SSLV2",
        Version::SSLV3 => "SSLV3",
        Version::TLS10 => "TLS10",
        Version::TLS11 => "TLS11",
        Version::TLS12 => "TLS12",
        Version::TLS13 => "TLS13",
        other => names::known_or_debug(None, &other),
    }
}

/// Applies [`chain`]'s rules to the chain s2n-tls validated. Dropping the stream on refusal
/// closes the connection before any request byte is written.
fn check_peer_chain(provider: TlsProvider, conn: &Connection) -> Result<(), TlsHandshakeError> {
    let classify = |e| classify(provider, e, None, CertificateAnswer::NotAsked);
    let chain = conn.peer_cert_chain().map_err(classify)?;
    let certs = chain.iter().collect::<Result<Vec<_>, _>>().map_err(classify)?;
    let ders = certs.iter().map(|cert| cert.der()).collect::<Result<Vec<&[u8]>, _>>().map_err(classify)?;
    chain::check_chain(ders.into_iter()).map_err(|rejection| {
        let problem =
            if rejection.is_weak_algorithm() { CertificateProblem::WeakAlgorithm } else { CertificateProblem::Other };
        TlsHandshakeError { provider, kind: HandshakeFailure::Certificate(problem), source: Arc::new(rejection) }
    })
}

/// Whether a read's error on `conn` is a server's refusal of our certificate (TLS 1.3: after
/// the client's handshake is done), and which: the alert the connection received.
pub(crate) fn refusal_on_read(
    io: &std::io::Error,
    answer: CertificateAnswer,
    conn: &Connection,
) -> Option<ClientCertificateProblem> {
    let error = io.get_ref().and_then(|e| e.downcast_ref::<s2n_tls::error::Error>())?;
    if error.name() != "S2N_ERR_ALERT" {
        return None;
    }
    ClientCertificateProblem::from_alert(conn.alert()?, answer)
}

/// Connections whose last received alert is kept when they are dropped: s2n-tls's error names a
/// received alert (`S2N_ERR_ALERT`) but not which, and the connection that knows is dropped by
/// the time a failed handshake returns.
#[derive(Clone)]
struct WatchAlerts<B> {
    builder: B,
    seen: Arc<Seen>,
}

/// What a dropped connection had seen: the last alert it received (`u16::MAX`: none; alerts
/// are 0-255), and whether the server asked for a client certificate.
#[derive(Debug)]
struct Seen {
    alert: AtomicU16,
    asked: AtomicBool,
}

impl Default for Seen {
    fn default() -> Self {
        Seen { alert: AtomicU16::new(u16::MAX), asked: AtomicBool::new(false) }
    }
}

impl<B: s2n_tls::connection::Builder<Output = Connection>> s2n_tls::connection::Builder for WatchAlerts<B> {
    type Output = AlertWatch;

    fn build_connection(&self, mode: s2n_tls::enums::Mode) -> Result<AlertWatch, s2n_tls::error::Error> {
        let conn = self.builder.build_connection(mode)?;
        Ok(AlertWatch { conn: Some(conn), seen: Arc::clone(&self.seen) })
    }
}

/// A connection that records its last received alert when dropped (see [`WatchAlerts`]).
struct AlertWatch {
    /// Always `Some` until `into_connection` takes it.
    conn: Option<Connection>,
    seen: Arc<Seen>,
}

impl AlertWatch {
    fn into_connection(mut self) -> Connection {
        self.conn.take().expect("the connection is taken once, here")
    }
}

impl AsRef<Connection> for AlertWatch {
    fn as_ref(&self) -> &Connection {
        self.conn.as_ref().expect("the connection is taken only by into_connection")
    }
}

impl AsMut<Connection> for AlertWatch {
    fn as_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("the connection is taken only by into_connection")
    }
}

impl Drop for AlertWatch {
    fn drop(&mut self) {
        let Some(conn) = &self.conn else { return };
        if let Some(alert) = conn.alert() {
            self.seen.alert.store(u16::from(alert), Ordering::Relaxed);
        }
        self.seen.asked.store(asked_for_certificate(conn), Ordering::Relaxed);
    }
}

/// Whether the server asked for a client certificate: s2n-tls names the handshake by its flags,
/// `CLIENT_AUTH` once a CertificateRequest came.
fn asked_for_certificate(conn: &Connection) -> bool {
    conn.handshake_type().is_ok_and(|name| name.contains("CLIENT_AUTH"))
}

/// A failed handshake's error; `alert`: the last alert the connection received;
/// `answer`: how the client answered the server's request for a certificate.
fn classify(
    provider: TlsProvider,
    e: s2n_tls::error::Error,
    alert: Option<u8>,
    answer: CertificateAnswer,
) -> TlsHandshakeError {
    // The server refused our certificate (TLS 1.2: during the handshake).
    let refused = match e.name() {
        "S2N_ERR_ALERT" => alert.and_then(|alert| ClientCertificateProblem::from_alert(alert, answer)),
        _ => None,
    };
    if let Some(problem) = refused {
        let source = Arc::new(S2nError(format!("{} ({})", e.message(), e.name()), e));
        return TlsHandshakeError { provider, kind: HandshakeFailure::ClientCertificate(problem), source };
    }
    let kind = match e.name() {
        "S2N_ERR_CERT_UNTRUSTED" => HandshakeFailure::Certificate(CertificateProblem::UnknownIssuer),
        "S2N_ERR_CERT_INVALID_HOSTNAME" => HandshakeFailure::Certificate(CertificateProblem::NameMismatch),
        "S2N_ERR_CERT_EXPIRED" => HandshakeFailure::Certificate(CertificateProblem::Expired),
        "S2N_ERR_CERT_NOT_YET_VALID" => HandshakeFailure::Certificate(CertificateProblem::NotYetValid),
        // The FIPS policy restricts certificate keys and signatures itself.
        "S2N_ERR_SECURITY_POLICY_INCOMPATIBLE_CERT" => HandshakeFailure::Certificate(CertificateProblem::WeakAlgorithm),
        name if name.starts_with("S2N_ERR_CERT") => HandshakeFailure::Certificate(CertificateProblem::Other),
        // A reset, or the peer closing before the handshake finished: a transport failure that
        // a retry can get past (rustls reports the same as an I/O error).
        _ if matches!(e.kind(), ErrorType::IOError | ErrorType::ConnectionClosed) => HandshakeFailure::Io,
        _ => HandshakeFailure::Protocol,
    };
    TlsHandshakeError { provider, kind, source: Arc::new(S2nError(format!("{} ({})", e.message(), e.name()), e)) }
}

/// Keeps s2n-tls's error, with its name in the message.
#[derive(Debug)]
struct S2nError(String, s2n_tls::error::Error);

impl std::fmt::Display for S2nError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for S2nError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_are_s2n_tls_s_own() {
        use s2n_tls::enums::Version;
        for version in [Version::SSLV2, Version::SSLV3, Version::TLS10, Version::TLS11, Version::TLS12, Version::TLS13]
        {
            assert_eq!(version_name(version), format!("{version:?}"));
        }
    }

    #[test]
    fn der_becomes_pem_in_64_character_lines_that_decode_back() {
        use base64::Engine as _;
        for len in [0usize, 1, 47, 48, 49, 1000] {
            let der: Vec<u8> = (0..len).map(|i| (i * 7 % 256) as u8).collect();
            let pem = super::der_to_pem(&der);
            let mut lines: Vec<&str> = pem.lines().collect();
            assert_eq!(lines.remove(0), "-----BEGIN CERTIFICATE-----", "{pem}");
            assert_eq!(lines.pop(), Some("-----END CERTIFICATE-----"), "{pem}");
            assert!(lines.iter().all(|l| !l.is_empty() && l.len() <= 64), "{pem}");
            assert!(lines.iter().rev().skip(1).all(|l| l.len() == 64), "only the last line is short: {pem}");
            let decoded = base64::engine::general_purpose::STANDARD.decode(lines.concat()).expect("base64");
            assert_eq!(decoded, der, "{len} bytes");
        }
    }
}
