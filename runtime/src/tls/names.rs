//! The names in [`TlsInfo`](super::TlsInfo) as `&'static str`, so that it is `Copy` and every
//! connection and response can carry it without allocating: constants where the set is ours
//! (ALPN), the library's own otherwise, copied once per process where it only lends them.

use super::{ALPN_H2, ALPN_HTTP11};

/// The ALPN protocol as text: one of the two we offer, or `None` for any other bytes (which a
/// backend must refuse: rustls does itself, s2n-tls's backend checks).
pub(crate) fn alpn(protocol: &[u8]) -> Option<&'static str> {
    match protocol {
        ALPN_H2 => Some("h2"),
        ALPN_HTTP11 => Some("http/1.1"),
        _ => None,
    }
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
}
