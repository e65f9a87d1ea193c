//! The `SSLKEYLOGFILE` file every backend writes its key log to: opened once per path for the
//! whole process, created readable by its owner only, appended one whole line at a time.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::KeyLogError;

/// An open key log file. Never freed: s2n-tls keeps a raw pointer to it for as long as a
/// configuration lives (the other backends hold a `&'static` to it), and every configuration
/// prepared while the variable names the same path shares it (so building many clients opens
/// the file once).
#[derive(Debug)]
pub(crate) struct KeyLogFile(Mutex<File>);

impl KeyLogFile {
    /// The key log for `path`, opened the first time (created readable by its owner only: it
    /// holds secrets).
    pub(crate) fn for_path(path: &Path) -> Result<&'static KeyLogFile, KeyLogError> {
        static OPEN: Mutex<Option<HashMap<PathBuf, &'static KeyLogFile>>> = Mutex::new(None);
        let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
        let open = open.get_or_insert_with(HashMap::new);
        if let Some(file) = open.get(path) {
            return Ok(file);
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file =
            options.open(path).map_err(|e| KeyLogError::Open { path: path.to_path_buf(), source: Arc::new(e) })?;
        let file: &'static KeyLogFile = Box::leak(Box::new(KeyLogFile(Mutex::new(file))));
        open.insert(path.to_path_buf(), file);
        Ok(file)
    }

    /// Appends one secret as an NSS key log line (`LABEL <client random> <secret>`, both in
    /// hex), as the rustls backends hand them over; a failed write loses the line only.
    #[cfg(rustls)]
    pub(crate) fn append_secret(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        use std::fmt::Write as _;
        let mut line = String::with_capacity(label.len() + 2 + 2 * (client_random.len() + secret.len()));
        line.push_str(label);
        for part in [client_random, secret] {
            line.push(' ');
            for byte in part {
                let _ = write!(line, "{byte:02x}");
            }
        }
        let _ = self.append_line(line.as_bytes());
    }

    /// Appends `line` and a newline in one write, so that lines from concurrent handshakes never
    /// interleave. Callers ignore a failure or report it to the library: a failed write loses the
    /// line, never the connection.
    pub(crate) fn append_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut record = Vec::with_capacity(line.len() + 1);
        record.extend_from_slice(line);
        record.push(b'\n');
        self.0.lock().unwrap_or_else(PoisonError::into_inner).write_all(&record)
    }
}

/// `SSLKEYLOGFILE`, when set and not empty: where TLS secrets are logged for debugging (in the
/// NSS key log format Wireshark reads), with a warning that they are. Off otherwise.
pub(crate) fn key_log_file() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("SSLKEYLOGFILE").filter(|v| !v.is_empty()).map(std::path::PathBuf::from)?;
    tracing::warn!(
        path = %path.display(),
        "SSLKEYLOGFILE is set: TLS session secrets are written to it, so anyone who can read the \
         file can decrypt this process's traffic; unset it outside debugging"
    );
    Some(path)
}
