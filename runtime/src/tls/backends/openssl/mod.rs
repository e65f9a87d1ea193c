//! The openssl backend: the operating system's libssl (through the `openssl` crate, linked
//! dynamically as distros build it), so that the system's crypto policy and, where the system
//! runs it, its FIPS module govern this client's TLS.
//!
//! The context is made with `SslContextBuilder::new` (not `SslConnector::builder`, which sets a
//! cipher list of its own and so replaces the system's): OpenSSL applies the configuration's
//! `system_default` section then, and [`floor`] only takes away what is below this crate's
//! floor. Verification is OpenSSL's own (chain, host name or IP address, no partial wildcards)
//! at the security level the floor keeps (2 or above: no SHA-1 signatures, no RSA keys under
//! 2048 bits).
//!
//! Modules: [`floor`] (what to keep of the system's settings), [`sessions`] (resumption),
//! [`key_log`] (`SSLKEYLOGFILE`), [`stream`] (the connection's reads), `ffi` (the few libssl calls the safe crate lacks; the
//! backend's only `unsafe`).

mod ffi;
mod floor;
mod key;
mod key_log;
mod sessions;
mod stream;

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use openssl::error::ErrorStack;
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslMode, SslRef, SslSessionCacheMode, SslVerifyMode,
};
use openssl::x509::verify::X509CheckFlags;
use openssl::x509::X509;
use tokio_openssl::SslStream;

use self::sessions::SessionCache;
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
use crate::tls::read_ahead::ReadAhead;
use crate::tls::refusal::ReadRefusal;
use crate::tls::settings::TlsSettings;
use crate::tls::transport::Transport;

pub(crate) use self::stream::OpensslStream;

pub(crate) struct OpensslBackend {
    provider: TlsProvider,
    context: SslContext,
    sessions: Option<Arc<SessionCache>>,
    /// The ALPN protocols offered (checked against the server's choice after the handshake).
    offered_alpn: Vec<Vec<u8>>,
    /// Whether the process's OpenSSL is in FIPS mode (a process-wide setting, read once).
    fips: bool,
    /// Whether a client identity is configured (presented when a server asks).
    has_identity: bool,
}

impl std::fmt::Debug for OpensslBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpensslBackend")
            .field("provider", &self.provider)
            .field("library", &openssl::version::version())
            .field("fips", &self.fips)
            .finish_non_exhaustive()
    }
}

/// The protocols in ALPN's wire format: each prefixed by its length.
fn alpn_wire(protocols: &[Vec<u8>]) -> Vec<u8> {
    let mut wire = Vec::new();
    for protocol in protocols {
        // Ours are `h2` and `http/1.1`: far below 256 bytes.
        wire.push(u8::try_from(protocol.len()).unwrap_or(u8::MAX));
        wire.extend_from_slice(protocol);
    }
    wire
}

/// Trusts the bundled Mozilla roots (webpki-root-certs), not the system store.
#[cfg(roots = "webpki")]
fn trust_bundled_roots(builder: &mut SslContextBuilder, provider: TlsProvider) -> Result<(), Error> {
    for cert in webpki_root_certs::TLS_SERVER_ROOT_CERTS {
        let cert = X509::from_der(cert.as_ref()).map_err(config_error(provider))?;
        builder.cert_store_mut().add_cert(cert).map_err(config_error(provider))?;
    }
    Ok(())
}

fn config_error(provider: TlsProvider) -> impl Fn(ErrorStack) -> Error + Copy {
    move |e| Error::TlsConfig { provider, reason: TlsConfigError::Library(Arc::new(e)) }
}

/// A client context with the system's settings at or above the floor, verifying the peer,
/// offering the settings' ALPN protocols.
fn context_builder(settings: &TlsSettings) -> Result<SslContextBuilder, ErrorStack> {
    // The system's configuration (`OPENSSL_CONF` or the default file) is loaded by libssl's
    // initialization, and its `system_default` section applied to this new context.
    let mut builder = SslContextBuilder::new(SslMethod::tls_client())?;
    let tightened = floor::apply(&mut builder)?;
    if !tightened.is_empty() {
        tracing::debug!(
            ?tightened,
            library = openssl::version::version(),
            "openssl: the system's TLS settings were below the floor and were tightened"
        );
    }
    builder.set_verify(SslVerifyMode::PEER);
    // An idle pooled connection gives its record buffers back (libssl keeps 16 KiB and more
    // per direction otherwise): what a pool of many hosts holds. A write retried after the
    // socket was full may come from another buffer holding the same bytes (h2's gathered
    // writes are copied afresh each time, `crate::tls::gather`).
    builder.set_mode(SslMode::RELEASE_BUFFERS | SslMode::ACCEPT_MOVING_WRITE_BUFFER);
    // Without read-ahead libssl reads each record's 5-byte header, then its body, then finds the
    // socket empty: three reads per small response instead of one.
    builder.set_read_ahead(true);
    builder.set_alpn_protos(&alpn_wire(&settings.alpn()))?;
    Ok(builder)
}

/// Trusts the settings' roots source and extra certificates; trusting nothing is an error.
fn trust_roots(builder: &mut SslContextBuilder, settings: &TlsSettings) -> Result<(), Error> {
    match settings.compiled_roots()? {
        #[cfg(roots = "native")]
        Some(CompiledRoots::Native) => {
            crate::roots::check_native_store()?;
            builder.set_default_verify_paths().map_err(config_error(settings.provider))?;
        }
        #[cfg(roots = "webpki")]
        Some(CompiledRoots::Webpki) => trust_bundled_roots(builder, settings.provider)?,
        // As `Native` where the store yields a certificate (OpenSSL reading it itself, as
        // there); the bundled roots where it does not. OpenSSL loads an empty or missing
        // store without a word, so the store is read here first to know.
        #[cfg(native_or_webpki)]
        Some(CompiledRoots::NativeOrWebpki) => {
            match crate::roots::check_native_store().and_then(|()| crate::roots::load_native_certificates().map(drop)) {
                Ok(()) => builder.set_default_verify_paths().map_err(config_error(settings.provider))?,
                Err(why) => {
                    trust_bundled_roots(builder, settings.provider)?;
                    let roots = webpki_root_certs::TLS_SERVER_ROOT_CERTS.len();
                    crate::tls::preparing::warn_native_fallback(settings.provider, &why, roots);
                }
            }
        }
        None => {}
        // Refused by `TlsProvider::validate_roots` before any backend is prepared.
        #[cfg(roots = "platform-verifier")]
        Some(CompiledRoots::PlatformVerifier) => {
            settings.provider.validate_roots(crate::roots::TrustRoots::PlatformVerifier)?
        }
    }
    for cert in &settings.extra_roots.certificates {
        let invalid = |e: ErrorStack| Error::InvalidPem {
            origin: "extra root certificate".to_owned(),
            reason: PemError::Rejected(Arc::new(e)),
        };
        let cert = X509::from_der(cert.as_ref()).map_err(invalid)?;
        builder.cert_store_mut().add_cert(cert).map_err(invalid)?;
    }
    if settings.roots.is_none() && settings.extra_roots.is_empty() {
        return Err(Error::NoTrustRoots);
    }
    Ok(())
}

/// The client identity, presented when a server asks: the leaf, the rest of the chain, the
/// key (OpenSSL keeps its own copies, in the context, freed with it). FIPS mode (the system's
/// OpenSSL in it) takes FIPS-approved key types only.
fn client_identity(builder: &mut SslContextBuilder, settings: &TlsSettings, fips: bool) -> Result<(), Error> {
    let provider = settings.provider;
    let Some(identity) = &settings.client_identity else { return Ok(()) };
    if fips && !identity.key_type().is_fips_approved() {
        return Err(Error::TlsConfig {
            provider,
            reason: TlsConfigError::ClientKeyNotFipsApproved(identity.key_type()),
        });
    }
    let config_error = config_error(provider);
    let mut chain = identity.certificate_chain().iter();
    if let Some(leaf) = chain.next() {
        let leaf = X509::from_der(leaf).map_err(config_error)?;
        builder.set_certificate(&leaf).map_err(config_error)?;
    }
    for cert in chain {
        builder.add_extra_chain_cert(X509::from_der(cert).map_err(config_error)?).map_err(config_error)?;
    }
    let key = key::checked_private_key(provider, identity)?;
    builder.set_private_key(&key).map_err(config_error)?;
    Ok(())
}

/// With `resumption`, the client-side session cache the context's connections fill (sessions
/// go to it, none to OpenSSL's own store, a server's lookup table of no use to a client);
/// without, no caching at all.
fn session_cache(builder: &mut SslContextBuilder, resumption: bool) -> Result<Option<Arc<SessionCache>>, ErrorStack> {
    if !resumption {
        builder.set_session_cache_mode(SslSessionCacheMode::OFF);
        return Ok(None);
    }
    let index = sessions::server_name_index()?;
    let cache = Arc::new(SessionCache::default());
    let sink = Arc::clone(&cache);
    builder.set_session_cache_mode(SslSessionCacheMode::CLIENT | SslSessionCacheMode::NO_INTERNAL_STORE);
    builder.set_new_session_callback(move |ssl, session| {
        if let Some(name) = ssl.ex_data(index) {
            sink.put(name, session);
        }
    });
    Ok(Some(cache))
}

impl OpensslBackend {
    /// Builds the context: the system's settings at or above the floor, the roots, the key log
    /// when `SSLKEYLOGFILE` asks for one, the session cache.
    pub(crate) fn prepare(settings: &TlsSettings) -> Result<Self, Error> {
        let provider = settings.provider;
        let config_error = config_error(provider);
        let mut builder = context_builder(settings).map_err(config_error)?;
        trust_roots(&mut builder, settings)?;
        if let Some(path) = crate::tls::key_log_file::key_log_file() {
            key_log::install(&mut builder, &path)
                .map_err(|e| Error::TlsConfig { provider, reason: TlsConfigError::KeyLog(e) })?;
        }
        let sessions = session_cache(&mut builder, settings.session_resumption).map_err(config_error)?;
        let fips = ffi::fips_enabled();
        client_identity(&mut builder, settings, fips)?;
        ffi::watch_certificate_requests(&mut builder);
        Ok(OpensslBackend {
            provider,
            context: builder.build(),
            sessions,
            offered_alpn: settings.alpn(),
            fips,
            has_identity: settings.client_identity.is_some(),
        })
    }

    /// One connection's `Ssl`: SNI, the name or address to verify, a session to resume, and
    /// the flag set when the server asks for a certificate.
    fn ssl(&self, server_name: &str, asked: &Arc<AtomicBool>) -> Result<Ssl, ErrorStack> {
        let mut ssl = Ssl::new(&self.context)?;
        ssl.set_ex_data(ffi::certificate_requested_index()?, Arc::clone(asked));
        let unbracketed = server_name.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(server_name);
        if let Ok(ip) = unbracketed.parse::<std::net::IpAddr>() {
            // No SNI for an address (RFC 6066); the certificate must name the address.
            ssl.param_mut().set_ip(ip)?;
        } else {
            ssl.set_hostname(server_name)?;
            ssl.param_mut().set_hostflags(X509CheckFlags::NO_PARTIAL_WILDCARDS);
            ssl.param_mut().set_host(server_name)?;
        }
        if let Some(cache) = &self.sessions {
            ssl.set_ex_data(sessions::server_name_index()?, server_name.to_owned());
            if let Some(session) = cache.take(server_name) {
                // The cache holds sessions of `self.context` only, which `ssl` was made from.
                ffi::resume(&mut ssl, &session);
            }
        }
        Ok(ssl)
    }

    pub(crate) async fn handshake(
        &self,
        server_name: &str,
        tcp: Transport,
    ) -> Result<(OpensslStream, Negotiated), TlsHandshakeError> {
        let provider = self.provider;
        let setup = |e: ErrorStack| TlsHandshakeError {
            provider,
            kind: HandshakeFailure::Protocol,
            source: Arc::new(OpensslError(e.to_string(), None)),
        };
        let asked = Arc::new(AtomicBool::new(false));
        let ssl = self.ssl(server_name, &asked).map_err(setup)?;
        let mut stream = SslStream::new(ssl, ReadAhead::new(tcp)).map_err(setup)?;
        if let Err(e) = Pin::new(&mut stream).connect().await {
            return Err(classify(provider, stream.ssl(), e, self.answer(&asked, stream.ssl())));
        }
        let ssl = stream.ssl();
        let alpn = names::selected_alpn(provider, ssl.selected_alpn_protocol(), &self.offered_alpn)?;
        let info = Negotiated {
            // OpenSSL's own names: `TLSv1.3`, `TLS_AES_256_GCM_SHA384`, `ECDHE-RSA-AES128-GCM-SHA256`.
            protocol_version: ssl.version_str(),
            cipher_suite: ssl.current_cipher().map_or("", |c| c.name()),
            key_exchange_group: ffi::group_name(ssl),
            alpn,
            resumed: ssl.session_reused(),
            fips: self.fips,
            client_certificate_sent: self.answer(&asked, ssl) == CertificateAnswer::Sent,
        };
        let refusal = ReadRefusal::new(provider, self.answer(&asked, ssl));
        let h2 = info.alpn == Some(names::H2);
        Ok((OpensslStream::new(stream, refusal, h2), info))
    }

    /// How the handshake on `ssl` answered the server's request for a certificate (`asked`:
    /// whether it made one). libssl sends the configured certificate (it has no other) when the
    /// key can sign a scheme the request names, and none otherwise.
    fn answer(&self, asked: &AtomicBool, ssl: &SslRef) -> CertificateAnswer {
        match (asked.load(Ordering::Relaxed), self.has_identity) {
            (false, _) => CertificateAnswer::NotAsked,
            (true, false) => CertificateAnswer::NoIdentity,
            (true, true) if ffi::chose_a_signature(ssl) => CertificateAnswer::Sent,
            (true, true) => CertificateAnswer::KeyCannotSign,
        }
    }
}

/// The certificate problem an X.509 verification result names.
fn certificate_problem(code: std::ffi::c_int) -> CertificateProblem {
    use openssl_sys as sys;
    match code {
        sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
        | sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        | sys::X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE
        | sys::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        | sys::X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN => CertificateProblem::UnknownIssuer,
        sys::X509_V_ERR_HOSTNAME_MISMATCH | sys::X509_V_ERR_IP_ADDRESS_MISMATCH => CertificateProblem::NameMismatch,
        sys::X509_V_ERR_CERT_HAS_EXPIRED => CertificateProblem::Expired,
        sys::X509_V_ERR_CERT_NOT_YET_VALID => CertificateProblem::NotYetValid,
        // Below the security level: a SHA-1 (or weaker) signature, a key too small.
        sys::X509_V_ERR_CA_MD_TOO_WEAK | sys::X509_V_ERR_EE_KEY_TOO_SMALL | sys::X509_V_ERR_CA_KEY_TOO_SMALL => {
            CertificateProblem::WeakAlgorithm
        }
        _ => CertificateProblem::Other,
    }
}

/// Whether libssl reported the peer closing the connection mid-handshake (OpenSSL 3 reports an
/// unexpected EOF as a protocol error; it is a transport failure a retry can get past).
fn is_unexpected_eof(stack: &ErrorStack) -> bool {
    #[cfg(ossl300)]
    {
        // From OpenSSL 3's err.h and sslerr.h (openssl-sys does not name them).
        const ERR_LIB_SSL: std::ffi::c_int = 20;
        const SSL_R_UNEXPECTED_EOF_WHILE_READING: std::ffi::c_int = 294;
        stack.errors().iter().any(|e| {
            openssl_sys::ERR_GET_LIB(e.code()) == ERR_LIB_SSL
                && openssl_sys::ERR_GET_REASON(e.code()) == SSL_R_UNEXPECTED_EOF_WHILE_READING
        })
    }
    #[cfg(not(ossl300))]
    {
        let _ = stack;
        false
    }
}

/// The TLS alert the server sent, from libssl's error stack: its reason codes for a received
/// alert are 1000 plus the alert's code (`SSL_AD_REASON_OFFSET`).
fn received_alert(stack: &ErrorStack) -> Option<u8> {
    stack.errors().iter().find_map(|e| {
        let reason = openssl_sys::ERR_GET_REASON(e.code());
        u8::try_from(reason - 1000).ok().filter(|_| reason > 1000)
    })
}

/// The client-certificate problem libssl's error names, if any (see `received_alert`).
fn client_certificate_problem(e: &openssl::ssl::Error, answer: CertificateAnswer) -> Option<ClientCertificateProblem> {
    let alert = e.ssl_error().and_then(received_alert)?;
    ClientCertificateProblem::from_alert(alert, answer)
}

/// Whether a read's error is a server's refusal of our certificate (TLS 1.3: after the
/// client's handshake is done), and which.
pub(crate) fn refusal_on_read(io: &std::io::Error, answer: CertificateAnswer) -> Option<ClientCertificateProblem> {
    io.get_ref()
        .and_then(|e| e.downcast_ref::<openssl::ssl::Error>())
        .and_then(|e| client_certificate_problem(e, answer))
}

fn classify(
    provider: TlsProvider,
    ssl: &SslRef,
    e: openssl::ssl::Error,
    answer: CertificateAnswer,
) -> TlsHandshakeError {
    let verify = ssl.verify_result();
    let kind = if let Some(problem) = client_certificate_problem(&e, answer) {
        HandshakeFailure::ClientCertificate(problem)
    } else if verify.as_raw() != openssl_sys::X509_V_OK {
        HandshakeFailure::Certificate(certificate_problem(verify.as_raw()))
    } else if e.code() == ErrorCode::SYSCALL || e.code() == ErrorCode::ZERO_RETURN || e.io_error().is_some() {
        // A reset, or the peer closing before the handshake finished.
        HandshakeFailure::Io
    } else if e.ssl_error().is_some_and(is_unexpected_eof) {
        HandshakeFailure::Io
    } else {
        HandshakeFailure::Protocol
    };
    let message = match kind {
        HandshakeFailure::Certificate(_) => format!("{} ({e})", verify.error_string()),
        _ => e.to_string(),
    };
    TlsHandshakeError { provider, kind, source: Arc::new(OpensslError(message, Some(e))) }
}

/// libssl's error, with the verification result in the message where there is one.
#[derive(Debug)]
struct OpensslError(String, Option<openssl::ssl::Error>);

impl std::fmt::Display for OpensslError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpensslError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.1.as_ref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_read_ahead() {
        let builder = context_builder(&TlsSettings::for_tests(TlsProvider::OpenSsl)).expect("context");
        assert!(ffi::reads_ahead(&builder), "libssl would read each record's header apart from its body");
    }

    #[test]
    fn alpn_in_wire_format() {
        assert_eq!(alpn_wire(&[b"h2".to_vec(), b"http/1.1".to_vec()]), b"\x02h2\x08http/1.1");
        assert_eq!(alpn_wire(&[]), b"");
    }

    #[test]
    fn verification_results_name_the_problem() {
        use openssl_sys as sys;
        assert_eq!(certificate_problem(sys::X509_V_ERR_CERT_HAS_EXPIRED), CertificateProblem::Expired);
        assert_eq!(certificate_problem(sys::X509_V_ERR_HOSTNAME_MISMATCH), CertificateProblem::NameMismatch);
        assert_eq!(certificate_problem(sys::X509_V_ERR_CA_MD_TOO_WEAK), CertificateProblem::WeakAlgorithm);
        assert_eq!(certificate_problem(sys::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT), CertificateProblem::UnknownIssuer);
        assert_eq!(certificate_problem(sys::X509_V_ERR_CERT_REVOKED), CertificateProblem::Other);
    }

    #[test]
    fn the_system_default_context_is_tightened_to_the_floor_at_most() {
        // Whatever this machine's configuration says, the prepared context is at the floor.
        let mut builder = SslContextBuilder::new(SslMethod::tls_client()).expect("context");
        floor::apply(&mut builder).expect("floor");
        let min = builder.min_proto_version();
        assert!(min == Some(openssl::ssl::SslVersion::TLS1_2) || min == Some(openssl::ssl::SslVersion::TLS1_3));
        assert!(ffi::security_level(&builder) >= floor::MIN_SECURITY_LEVEL);
        for cipher in ffi::context_ciphers(&builder) {
            let modern = floor::MODERN_TLS13.contains(&cipher.id) || floor::MODERN_TLS12.contains(&cipher.id);
            assert!(modern || min == Some(openssl::ssl::SslVersion::TLS1_3), "{cipher:?} is below the floor");
        }
        // A second pass changes nothing: the floor is a fixed point.
        assert!(floor::apply(&mut builder).expect("floor").is_empty());
    }
}
