//! The names in [`TlsInfo`](super::TlsInfo) as `&'static str`, so that it is `Copy` and every
//! connection and response can carry it without allocating: constants where the set is ours
//! (ALPN), the library's own otherwise, copied once per process where it only lends them.

use super::settings::{ALPN_H2, ALPN_HTTP11};

/// h2's name in [`TlsInfo::alpn`](super::TlsInfo::alpn).
pub(crate) const H2: &str = "h2";

/// The ALPN protocol as text: one of the two we offer, or `None` for any other bytes (which a
/// backend must refuse: rustls does itself, s2n-tls's backend checks).
pub(crate) fn alpn(protocol: &[u8]) -> Option<&'static str> {
    match protocol {
        ALPN_H2 => Some(H2),
        ALPN_HTTP11 => Some("http/1.1"),
        _ => None,
    }
}

/// The protocol the server selected, checked against what we `offered`: its name, `None` when it
/// selected none, or a protocol error. s2n-tls and older libssl accept whatever the server names,
/// and hyper would speak h2 to a server that picked `h2` from a client offering only HTTP/1.1.
#[cfg(alpn_checked_by_backend)]
pub(crate) fn selected_alpn(
    provider: crate::provider::TlsProvider,
    selected: Option<&[u8]>,
    offered: &[Vec<u8>],
) -> Result<Option<&'static str>, crate::error::TlsHandshakeError> {
    let Some(selected) = selected else { return Ok(None) };
    if let Some(name) = alpn(selected).filter(|_| offered.iter().any(|p| p == selected)) {
        return Ok(Some(name));
    }
    let shown = String::from_utf8_lossy(&selected[..selected.len().min(64)]).into_owned();
    let offered: Vec<String> = offered.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect();
    Err(crate::error::TlsHandshakeError {
        provider,
        kind: crate::error::HandshakeFailure::Protocol,
        source: std::sync::Arc::new(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "the server selected the application protocol {shown:?}, which was not offered ({})",
                offered.join(", ")
            ),
        )),
    })
}

/// The host name to verify the server's certificate against, as the rustls backends take it; a
/// name that is neither a DNS name nor an IP address fails the handshake before any byte is sent.
#[cfg(rustls)]
pub(crate) fn server_name(
    provider: crate::provider::TlsProvider,
    name: &str,
) -> Result<rustls_pki_types::ServerName<'static>, crate::error::TlsHandshakeError> {
    rustls_pki_types::ServerName::try_from(name.to_owned()).map_err(|e| crate::error::TlsHandshakeError {
        provider,
        kind: crate::error::HandshakeFailure::Protocol,
        source: std::sync::Arc::new(e),
    })
}

/// `known`, the library's own name for `value`, or else `value`'s `Debug` spelling, interned.
#[cfg(any(rustls, s2n))]
pub(crate) fn known_or_debug(known: Option<&'static str>, value: &dyn std::fmt::Debug) -> &'static str {
    known.unwrap_or_else(|| intern(&format!("{value:?}")))
}

/// `name` with a `'static` lifetime: the first time a name is seen it is copied once, for the
/// life of the process, and later calls return that copy.
///
/// Only for names out of a TLS library's own tables (protocol versions, cipher suites, key
/// exchange groups), never for bytes a peer sent: the tables are what bounds the memory, a few
/// dozen short names at most.
#[cfg(any(rustls, s2n, ossl320, test))]
pub(crate) fn intern(name: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, PoisonError};
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&known) = names.get(name) {
        return known;
    }
    let copy: &'static str = Box::leak(name.into());
    names.insert(copy);
    copy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_copied_once() {
        let first = intern(&String::from("TLS_TEST_NAME_ONLY_USED_HERE"));
        let second = intern(&String::from("TLS_TEST_NAME_ONLY_USED_HERE"));
        assert_eq!(first, "TLS_TEST_NAME_ONLY_USED_HERE");
        assert!(std::ptr::eq(first, second), "the second call returns the first copy");
        assert!(!std::ptr::eq(first, intern("TLS_ANOTHER_TEST_NAME")));
    }

    #[test]
    fn only_the_offered_protocols_have_names() {
        assert_eq!(alpn(b"h2"), Some("h2"));
        assert_eq!(alpn(b"http/1.1"), Some("http/1.1"));
        assert_eq!(alpn(b"spdy/3"), None);
        assert_eq!(alpn(b"h2\0"), None);
        assert_eq!(alpn(b""), None);
    }

    #[cfg(alpn_checked_by_backend)]
    #[test]
    fn the_server_may_select_only_an_offered_protocol() {
        use crate::error::HandshakeFailure;
        let provider = crate::provider::TlsProvider::ALL[0];
        let both = [b"h2".to_vec(), b"http/1.1".to_vec()];
        let http11_only = [b"http/1.1".to_vec()];
        assert_eq!(selected_alpn(provider, None, &both).ok(), Some(None));
        assert_eq!(selected_alpn(provider, Some(b"h2"), &both).ok(), Some(Some("h2")));
        assert_eq!(selected_alpn(provider, Some(b"http/1.1"), &http11_only).ok(), Some(Some("http/1.1")));
        // h2 from a client that offered HTTP/1.1 only: hyper would speak the wrong protocol.
        let refused = selected_alpn(provider, Some(b"h2"), &http11_only).expect_err("not offered");
        assert_eq!(refused.kind, HandshakeFailure::Protocol);
        let message = refused.source.to_string();
        assert!(message.contains("\"h2\", which was not offered (http/1.1)"), "{message}");
        // Anything else, whatever the offer: refused, and nothing of it is kept.
        for unknown in [&b"spdy/3"[..], b"", b"h2\xff", &[b'x'; 255][..]] {
            assert!(selected_alpn(provider, Some(unknown), &both).is_err(), "{unknown:?}");
        }
    }
}
