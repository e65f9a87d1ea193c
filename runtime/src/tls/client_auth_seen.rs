//! What a rustls handshake saw of client authentication, recorded by the certificate resolver
//! (which rustls calls inside the handshake's poll) and read once the handshake is over: both
//! rustls backends (0.23, and 0.24 in place) classify a server's refusal with it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::CertificateAnswer;

tokio::task_local! {
    /// The record of the handshake running in this task: set around each handshake.
    static CLIENT_AUTH: Arc<ClientAuthSeen>;
}

/// Whether the server asked for a client certificate, whether one was sent, and whether the
/// key could sign a scheme the request named.
#[derive(Debug, Default)]
pub(super) struct ClientAuthSeen {
    asked: AtomicBool,
    sent: AtomicBool,
    cannot_sign: AtomicBool,
}

impl ClientAuthSeen {
    /// Runs `handshake` with a fresh record; its result, and how it answered the server's
    /// request for a certificate.
    pub(super) async fn during<T>(handshake: impl Future<Output = T>) -> (T, CertificateAnswer) {
        let seen = Arc::new(ClientAuthSeen::default());
        let result = CLIENT_AUTH.scope(Arc::clone(&seen), handshake).await;
        (result, seen.answer())
    }

    /// The server asked for a certificate: records whether the resolver had an identity
    /// (`has_identity`) and whether its key can sign one of the schemes asked for (`can_sign`),
    /// in which case rustls sends it. Outside [`during`](Self::during) it records nothing.
    pub(super) fn asked(has_identity: bool, can_sign: bool) {
        let _ = CLIENT_AUTH.try_with(|seen| {
            seen.asked.store(true, Ordering::Relaxed);
            seen.sent.store(has_identity && can_sign, Ordering::Relaxed);
            seen.cannot_sign.store(has_identity && !can_sign, Ordering::Relaxed);
        });
    }

    /// How the handshake answered the server's request for a certificate.
    fn answer(&self) -> CertificateAnswer {
        if !self.asked.load(Ordering::Relaxed) {
            CertificateAnswer::NotAsked
        } else if self.sent.load(Ordering::Relaxed) {
            CertificateAnswer::Sent
        } else if self.cannot_sign.load(Ordering::Relaxed) {
            CertificateAnswer::KeyCannotSign
        } else {
            CertificateAnswer::NoIdentity
        }
    }
}
