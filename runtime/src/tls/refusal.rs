//! A server's refusal of this client's certificate met on a read after the handshake: recorded
//! on the connection's stream and in the client's log.

#[cfg(tls_backend)]
use std::io;
use std::sync::{Arc, OnceLock};

use crate::error::TlsHandshakeError;
use crate::provider::TlsProvider;

/// Where a connection's stream records a server's refusal of this client's certificate met on a
/// read (TLS 1.3 sends it after the client's handshake is done). The read's error carries it
/// too, but hyper keeps only the kind and text of a connection's I/O error (HTTP/2), or none of
/// it when the connection dies before the request went out on it ("channel closed"): the client
/// finds it here, through the connection's extras, or through the client's [`RefusalLog`].
#[derive(Debug, Clone)]
pub(crate) struct ReadRefusal {
    #[cfg_attr(not(tls_backend), allow(dead_code))]
    provider: TlsProvider,
    #[cfg_attr(not(tls_backend), allow(dead_code))]
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
    #[cfg(tls_backend)]
    pub(crate) fn new(provider: TlsProvider, answer: crate::error::CertificateAnswer) -> Self {
        ReadRefusal { provider, answer, shared: Arc::default() }
    }

    /// Reports a refusal this stream's reads meet to `log`, the client's, as met with `server_name`.
    pub(crate) fn report_to(&self, log: &Arc<RefusalLog>, server_name: &str) {
        let _ = self.shared.log.set((Arc::clone(log), server_name.to_owned()));
    }

    /// The refusal, once a read met one.
    pub(crate) fn get(&self) -> Option<&TlsHandshakeError> {
        self.shared.refused.get()
    }

    /// A read's error: `classify` (the backend's) says whether it is a refusal of our
    /// certificate, which is then recorded (here and in the client's log) and carried by the
    /// error returned.
    #[cfg(tls_backend)]
    pub(crate) fn read_error(
        &self,
        io: io::Error,
        classify: impl FnOnce(&io::Error, crate::error::CertificateAnswer) -> Option<crate::error::ClientCertificateProblem>,
    ) -> io::Error {
        let Some(problem) = classify(&io, self.answer) else { return io };
        let kind = io.kind();
        let refused = TlsHandshakeError {
            provider: self.provider,
            kind: crate::error::HandshakeFailure::ClientCertificate(problem),
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
    #[cfg_attr(not(tls_backend), allow(dead_code))]
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
