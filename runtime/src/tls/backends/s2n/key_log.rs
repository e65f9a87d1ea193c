//! `SSLKEYLOGFILE` for s2n-tls: s2n-tls hands each TLS secret to a C callback, in the NSS key
//! log format, without the newline. The only `unsafe` code of the s2n-tls backend is here (the
//! crate's other is the system libssl backend's `ffi.rs`): the callback and the call that
//! installs it.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::sync::Arc;

use s2n_tls::ffi::s2n_connection;

use crate::error::KeyLogError;
use crate::tls::key_log_file::KeyLogFile;

/// Appends every secret s2n-tls derives for connections of `builder`'s configuration to the
/// file at `path`, one line each.
pub(super) fn install(builder: &mut s2n_tls::config::Builder, path: &Path) -> Result<(), KeyLogError> {
    let sink = KeyLogFile::for_path(path)?;
    let context = std::ptr::from_ref(sink).cast_mut().cast::<c_void>();
    // SAFETY: `context` points to a `KeyLogFile` that is never freed (leaked in `for_path`), so it outlives
    // the configuration as s2n-tls requires, and `write_line` casts it back to that same type.
    unsafe { builder.set_key_log_callback(Some(write_line), context) }
        .map(|_| ())
        .map_err(|e| KeyLogError::Callback(Arc::new(super::NamedError(e))))
}

/// The callback s2n-tls calls with one key log line (`len` bytes at `line`, no newline).
/// Returns 0 when the line was written, -1 when it could not be (s2n-tls then fails nothing: the
/// connection goes on).
unsafe extern "C" fn write_line(context: *mut c_void, _conn: *mut s2n_connection, line: *mut u8, len: usize) -> c_int {
    if context.is_null() || (line.is_null() && len > 0) {
        return -1;
    }
    // SAFETY: `context` is the leaked `KeyLogFile` that `install` registered with this callback
    // (s2n-tls passes it back unchanged), valid for the rest of the process; only a shared
    // reference is made.
    let sink = unsafe { &*context.cast_const().cast::<KeyLogFile>() };
    // SAFETY: s2n-tls passes `len` initialized bytes at `line`, valid until this call returns;
    // they are copied into the file before it does.
    let line = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(line.cast_const(), len) } };
    match sink.append_line(line) {
        Ok(()) => 0,
        Err(_) => -1,
    }
}
