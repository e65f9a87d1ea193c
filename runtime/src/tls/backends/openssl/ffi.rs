//! The libssl calls the safe `openssl` crate does not offer, and the one it marks `unsafe`. The
//! only `unsafe` code of the openssl backend is here, each call with its safety argument:
//!
//! - [`context_ciphers`]: the cipher list a context was given by the system's configuration
//!   (`SSL_CTX_get_ciphers`), read so that [`super::floor`] tightens it instead of replacing it;
//! - [`security_level`]: the context's security level (`SSL_CTX_get_security_level`);
//! - [`fips_enabled`]: whether the process's OpenSSL runs in FIPS mode
//!   (`EVP_default_properties_is_fips_enabled` on 3.x);
//! - [`group_name`]: the negotiated key exchange group (`SSL_get0_group_name` on 3.2+,
//!   `SSL_get_negotiated_group` on 3.0 and 3.1; unknown before 3.0);
//! - [`resume`]: `SSL_set_session`, whose precondition (a session of the same context) the
//!   session cache keeps;
//! - [`watch_certificate_requests`]: `SSL_CTX_set_cert_cb`, whose callback libssl calls on a
//!   client when the server asks for a certificate, so that `TlsInfo` can say one was sent;
//! - [`chose_a_signature`]: whether this end picked a signature scheme to sign with
//!   (`SSL_get_signature_nid`, a macro over `SSL_ctrl`);
//! - `reads_ahead` (tests): whether a context reads ahead (`SSL_CTX_get_read_ahead`, a macro
//!   over `SSL_CTX_ctrl`).
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use foreign_types_shared::ForeignTypeRef as _;
use openssl::ex_data::Index;
use openssl::ssl::{Ssl, SslCipherRef, SslContextBuilder, SslRef, SslSessionRef};

extern "C" {
    // In libssl since 1.1.0 (openssl-sys, which links it, does not declare it).
    fn SSL_CTX_get_ciphers(ctx: *const openssl_sys::SSL_CTX) -> *mut openssl_sys::stack_st_SSL_CIPHER;
    // A function since 1.1.0 (never a macro), which openssl-sys 0.9.118 declares too; the safe
    // `SslContextRef::security_level` (openssl 0.10.82) needs a built context, not a builder.
    fn SSL_CTX_get_security_level(ctx: *const openssl_sys::SSL_CTX) -> c_int;
    // In libssl since 1.0.2.
    fn SSL_CTX_set_cert_cb(
        ctx: *mut openssl_sys::SSL_CTX,
        cb: Option<unsafe extern "C" fn(*mut openssl_sys::SSL, *mut c_void) -> c_int>,
        arg: *mut c_void,
    );
}

/// A cipher of a context's list: its IANA code point and OpenSSL's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cipher {
    /// The two-byte code point (`0x1301` for `TLS_AES_128_GCM_SHA256`).
    pub(super) id: u16,
    /// OpenSSL's name, as `set_cipher_list` and `set_ciphersuites` take it.
    pub(super) name: &'static str,
}

/// The ciphers `builder` would offer now, TLS 1.3 suites and the older ones together, in its
/// order of preference: what the system's configuration (its `system_default` section, applied
/// when the context was created) left there.
pub(super) fn context_ciphers(builder: &SslContextBuilder) -> Vec<Cipher> {
    // SAFETY: `builder.as_ptr()` is a live SSL_CTX for the duration of this borrow.
    // `SSL_CTX_get_ciphers` returns the context's own stack (not a copy; null when it has none),
    // which stays valid and unchanged while the borrow lasts (nothing here modifies the context).
    let stack = unsafe { SSL_CTX_get_ciphers(builder.as_ptr()) };
    if stack.is_null() {
        return Vec::new();
    }
    let stack = stack.cast::<openssl_sys::OPENSSL_STACK>();
    // SAFETY: `stack` is a non-null OPENSSL_STACK of SSL_CIPHER pointers (above).
    let count = unsafe { openssl_sys::OPENSSL_sk_num(stack) };
    let mut ciphers = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for i in 0..count {
        // SAFETY: `i` is within the stack's bounds; each element is a `const SSL_CIPHER *` from
        // libssl's static cipher tables, never null in a context's list.
        let cipher = unsafe { openssl_sys::OPENSSL_sk_value(stack, i) };
        if cipher.is_null() {
            continue;
        }
        // SAFETY: `cipher` points to an SSL_CIPHER (above); the reference is used only within
        // this iteration, and the crate's own accessors (`name`, `protocol_id`) read it.
        let cipher = unsafe { SslCipherRef::from_ptr(cipher.cast()) };
        ciphers.push(Cipher { id: u16::from_be_bytes(cipher.protocol_id()), name: cipher.name() });
    }
    ciphers
}

/// The context's security level (0 to 5) as the system's configuration set it.
pub(super) fn security_level(builder: &SslContextBuilder) -> u32 {
    // SAFETY: a plain getter on the live SSL_CTX `builder` holds.
    let level = unsafe { SSL_CTX_get_security_level(builder.as_ptr()) };
    u32::try_from(level).unwrap_or(0)
}

/// Whether the process's OpenSSL fetches its algorithms from the FIPS provider by default (its
/// configuration's `default_properties = fips=yes`, as FIPS mode on RHEL and Fedora sets it).
/// Always false before OpenSSL 3.0 and on LibreSSL (this crate does not read 1.1.1's
/// vendor-specific FIPS modes).
pub(super) fn fips_enabled() -> bool {
    #[cfg(ossl300)]
    {
        // libssl loads the configuration (and the providers it names) when first initialized.
        openssl_sys::init();
        // SAFETY: a null library context means the default one, which `init` set up; the call
        // only reads its default properties.
        unsafe { openssl_sys::EVP_default_properties_is_fips_enabled(std::ptr::null_mut()) == 1 }
    }
    #[cfg(not(ossl300))]
    false
}

/// The key exchange group negotiated on `ssl`, by OpenSSL's name for it, once the handshake is
/// done; `None` when OpenSSL cannot say (before 3.0, or no group was used).
pub(super) fn group_name(ssl: &SslRef) -> Option<&'static str> {
    #[cfg(ossl320)]
    {
        // SAFETY: `ssl.as_ptr()` is a live SSL; the returned name (null when none) belongs to
        // libssl's group tables and is copied (interned) before this borrow ends.
        let name = unsafe { openssl_sys::SSL_get0_group_name(ssl.as_ptr()) };
        if name.is_null() {
            return None;
        }
        // SAFETY: non-null, a NUL-terminated string (above).
        let name = unsafe { std::ffi::CStr::from_ptr(name) };
        name.to_str().ok().map(crate::tls::names::intern)
    }
    #[cfg(all(ossl300, not(ossl320)))]
    {
        const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;
        // SAFETY: `SSL_get_negotiated_group` (a macro over `SSL_ctrl`) on a live SSL: a getter
        // that takes no pointer argument.
        let nid =
            unsafe { openssl_sys::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, std::ptr::null_mut()) };
        let nid = c_int::try_from(nid).ok().filter(|nid| *nid > 0)?;
        // A group libssl knows only by its code point comes back flagged, with no NID name.
        openssl::nid::Nid::from_raw(nid).short_name().ok()
    }
    #[cfg(not(ossl300))]
    {
        let _ = ssl;
        None
    }
}

/// Offers `session` for resumption on `ssl` (a stale or refused session only costs a full
/// handshake).
///
/// The caller guarantees what `SSL_set_session` requires: `session` came from a connection of
/// the same context as `ssl` (the backend's session cache holds sessions of its own context
/// only, and `ssl` is made from that context).
pub(super) fn resume(ssl: &mut SslRef, session: &SslSessionRef) {
    // SAFETY: the session belongs to `ssl`'s context (the caller's guarantee above); OpenSSL
    // takes its own reference to it.
    let _ = unsafe { ssl.set_session(session) };
}

/// The per-connection flag [`watch_certificate_requests`]'s callback sets: the server asked for
/// a client certificate.
pub(super) fn certificate_requested_index() -> Result<Index<Ssl, Arc<AtomicBool>>, openssl::error::ErrorStack> {
    static INDEX: OnceLock<Result<Index<Ssl, Arc<AtomicBool>>, openssl::error::ErrorStack>> = OnceLock::new();
    INDEX.get_or_init(Ssl::new_ex_index).clone()
}

/// libssl's certificate callback: on a client, called when the server's CertificateRequest is
/// processed, before the client's certificate goes out. Records it; changes nothing (returns 1,
/// carry on with the configured certificate).
unsafe extern "C" fn on_certificate_request(ssl: *mut openssl_sys::SSL, _arg: *mut c_void) -> c_int {
    // SAFETY: libssl passes the connection the callback runs for, valid for the call.
    let ssl = unsafe { SslRef::from_ptr(ssl) };
    if let Ok(index) = certificate_requested_index() {
        if let Some(flag) = ssl.ex_data(index) {
            flag.store(true, Ordering::Relaxed);
        }
    }
    1
}

/// Has libssl tell each connection of `builder`'s context (through its
/// [`certificate_requested_index`] flag) when the server asks for a client certificate.
pub(super) fn watch_certificate_requests(builder: &mut SslContextBuilder) {
    // SAFETY: the context is valid (the builder owns it); the callback is a plain function that
    // touches only the connection it is given and does not unwind, and takes no argument.
    unsafe { SSL_CTX_set_cert_cb(builder.as_ptr(), Some(on_certificate_request), std::ptr::null_mut()) }
}

/// Whether this end picked a signature scheme to sign its handshake with: on a client asked for
/// a certificate, whether it sent one (libssl sends none when the key can make no signature the
/// request names). `SSL_get_signature_nid`: `SSL_ctrl(SSL_CTRL_GET_SIGNATURE_NID)`, 1 when a
/// scheme was picked (libssl 1.1.1 on).
pub(super) fn chose_a_signature(ssl: &SslRef) -> bool {
    const SSL_CTRL_GET_SIGNATURE_NID: c_int = 132;
    let mut nid: c_int = 0;
    // SAFETY: `ssl` is a valid connection for the call; the control writes one `int` through the
    // pointer, which points at `nid`, alive for the call.
    unsafe {
        openssl_sys::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_SIGNATURE_NID, 0, (&mut nid as *mut c_int).cast::<c_void>())
            == 1
    }
}

/// Whether contexts made by `builder` read ahead: ask the socket for all libssl's buffer holds,
/// not a record header and then its body.
#[cfg(test)]
pub(super) fn reads_ahead(builder: &SslContextBuilder) -> bool {
    /// `SSL_CTRL_GET_READ_AHEAD` in ssl.h (openssl-sys declares only the setter's).
    const SSL_CTRL_GET_READ_AHEAD: c_int = 40;
    // SAFETY: `builder.as_ptr()` is a live SSL_CTX for the duration of this borrow; this control
    // only reads one of its flags.
    unsafe { openssl_sys::SSL_CTX_ctrl(builder.as_ptr(), SSL_CTRL_GET_READ_AHEAD, 0, std::ptr::null_mut()) != 0 }
}
