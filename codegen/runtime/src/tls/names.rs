//! The names in [`TlsInfo`](super::TlsInfo) as `&'static str`, so that it is `Copy` and every
//! connection and response can carry it without allocating.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use super::{ALPN_H2, ALPN_HTTP11};

/// The ALPN protocol as text. A peer can only pick one of those we offered (both libraries
/// refuse anything else), so the answer is one of two constants; other bytes are interned.
pub(crate) fn alpn(protocol: &[u8]) -> &'static str {
    match protocol {
        ALPN_H2 => "h2",
        ALPN_HTTP11 => "http/1.1",
        other => intern(&String::from_utf8_lossy(other)),
    }
}

/// `name` with a `'static` lifetime: the first time a name is seen it is copied once, for the
/// life of the process, and later calls return that copy.
///
/// Only for names out of a TLS library's own tables (protocol versions, cipher suites, key
/// exchange groups), never for bytes a peer sent: the tables are what bounds the memory, a few
/// dozen short names at most.
pub(crate) fn intern(name: &str) -> &'static str {
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
    fn the_offered_protocols_are_constants() {
        assert_eq!(alpn(b"h2"), "h2");
        assert_eq!(alpn(b"http/1.1"), "http/1.1");
        assert_eq!(alpn(b"spdy/\xff"), "spdy/\u{fffd}");
    }
}
