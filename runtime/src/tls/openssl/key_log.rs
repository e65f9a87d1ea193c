//! `SSLKEYLOGFILE` for OpenSSL: libssl hands each TLS secret to a callback as one NSS key log
//! line (without the newline), which is appended to the file.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use openssl::ssl::SslContextBuilder;

/// The open key log for `path`, shared by every context prepared while the variable names it
/// (created readable by its owner only: it holds secrets).
fn open(path: &Path) -> Result<Arc<Mutex<File>>, String> {
    static OPEN: Mutex<Option<HashMap<PathBuf, Arc<Mutex<File>>>>> = Mutex::new(None);
    let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
    let open = open.get_or_insert_with(HashMap::new);
    if let Some(file) = open.get(path) {
        return Ok(Arc::clone(file));
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file =
        options.open(path).map_err(|e| format!("SSLKEYLOGFILE={}: cannot open for appending: {e}", path.display()))?;
    let file = Arc::new(Mutex::new(file));
    open.insert(path.to_path_buf(), Arc::clone(&file));
    Ok(file)
}

/// Appends every secret of `builder`'s connections to the file at `path`, one line each.
pub(super) fn install(builder: &mut SslContextBuilder, path: &Path) -> Result<(), String> {
    let file = open(path)?;
    builder.set_keylog_callback(move |_, line| {
        // One write per line, so that lines from concurrent handshakes never interleave. A
        // failed write loses the line, never the connection.
        let mut record = Vec::with_capacity(line.len() + 1);
        record.extend_from_slice(line.as_bytes());
        record.push(b'\n');
        let _ = file.lock().unwrap_or_else(PoisonError::into_inner).write_all(&record);
    });
    Ok(())
}
