//! `SSLKEYLOGFILE` for s2n-tls: s2n-tls hands each TLS secret to a C callback, in the NSS key
//! log format, without the newline. The only `unsafe` code of the crate is here: the callback
//! and the call that installs it.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use s2n_tls::ffi::s2n_connection;

/// The open key log file. One per path for the whole process, never freed: s2n-tls keeps a raw
/// pointer to it for as long as a configuration lives, and every configuration prepared while
/// the variable names that path shares it (so building many clients opens the file once).
struct KeyLog(Mutex<File>);

/// The key log for `path`, opened (created readable by its owner only: it holds secrets) the
/// first time.
fn key_log_for(path: &Path) -> Result<&'static KeyLog, String> {
    static OPEN: Mutex<Option<HashMap<PathBuf, &'static KeyLog>>> = Mutex::new(None);
    let mut open = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let open = open.get_or_insert_with(HashMap::new);
    if let Some(sink) = open.get(path) {
        return Ok(sink);
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("SSLKEYLOGFILE={}: cannot open for appending: {e}", path.display()))?;
    let sink: &'static KeyLog = Box::leak(Box::new(KeyLog(Mutex::new(file))));
    open.insert(path.to_path_buf(), sink);
    Ok(sink)
}

/// Appends every secret s2n-tls derives for connections of `builder`'s configuration to the
/// file at `path`, one line each.
pub(super) fn install(builder: &mut s2n_tls::config::Builder, path: &Path) -> Result<(), String> {
    let sink = key_log_for(path)?;
    let context = std::ptr::from_ref(sink).cast_mut().cast::<c_void>();
    // SAFETY: `context` points to a `KeyLog` that is never freed (leaked in `key_log_for`), so it outlives
    // the configuration as s2n-tls requires, and `write_line` casts it back to that same type.
    unsafe { builder.set_key_log_callback(Some(write_line), context) }
        .map(|_| ())
        .map_err(|e| format!("SSLKEYLOGFILE: s2n-tls refused the key log callback: {}", e.message()))
}

/// The callback s2n-tls calls with one key log line (`len` bytes at `line`, no newline).
/// Returns 0 when the line was written, -1 when it could not be (s2n-tls then fails nothing: the
/// connection goes on).
unsafe extern "C" fn write_line(context: *mut c_void, _conn: *mut s2n_connection, line: *mut u8, len: usize) -> c_int {
    if context.is_null() || (line.is_null() && len > 0) {
        return -1;
    }
    // SAFETY: `context` is the leaked `KeyLog` that `install` registered with this callback
    // (s2n-tls passes it back unchanged), valid for the rest of the process; only a shared
    // reference is made.
    let sink = unsafe { &*context.cast_const().cast::<KeyLog>() };
    // SAFETY: s2n-tls passes `len` initialized bytes at `line`, valid until this call returns;
    // they are copied into the file before it does.
    let line = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(line.cast_const(), len) } };
    let Ok(mut file) = sink.0.lock() else { return -1 };
    // One write per line, so that lines from concurrent handshakes never interleave.
    let mut record = Vec::with_capacity(len + 1);
    record.extend_from_slice(line);
    record.push(b'\n');
    match file.write_all(&record) {
        Ok(()) => 0,
        Err(_) => -1,
    }
}
