//! `SSLKEYLOGFILE` for OpenSSL: libssl hands each TLS secret to a callback as one NSS key log
//! line (without the newline), which is appended to the file.

use std::path::Path;

use openssl::ssl::SslContextBuilder;

use crate::error::KeyLogError;
use crate::tls::key_log_file::KeyLogFile;

/// Appends every secret of `builder`'s connections to the file at `path`, one line each.
pub(super) fn install(builder: &mut SslContextBuilder, path: &Path) -> Result<(), KeyLogError> {
    let file = KeyLogFile::for_path(path)?;
    builder.set_keylog_callback(move |_, line| {
        let _ = file.append_line(line.as_bytes());
    });
    Ok(())
}
