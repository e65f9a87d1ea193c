//! The `curl` command line tool as an outside reference: one single-stream HTTP/1.1 download
//! in its own process, timed by curl itself.

use std::process::Command;

use super::servers::Server;

/// The `curl` command line tool, when installed: an outside reference for single-stream h1.
pub(crate) struct Curl {
    /// "curl VERSION (TLS library)", for the report.
    pub(crate) version: String,
    ca_file: std::path::PathBuf,
}

impl Curl {
    /// curl, when it runs, with `ca_pem` written to a temporary file for it to trust.
    pub(crate) fn find(ca_pem: &str) -> Option<Curl> {
        let out = Command::new("curl").arg("--version").output().ok()?;
        let first = String::from_utf8_lossy(&out.stdout).lines().next()?.to_owned();
        // "curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/7.88.1 OpenSSL/3.0.19 ..." -> name, version, TLS library
        let words: Vec<&str> = first.split_whitespace().collect();
        let tls = words.iter().find(|w| w.contains("SSL/") || w.contains("TLS/") || w.contains("rustls")).copied();
        let version = format!("curl {} ({})", words.get(1).unwrap_or(&"?"), tls.unwrap_or("unknown TLS"));
        let ca_file = std::env::temp_dir().join(format!("smithy-tls-bench-ca-{}.pem", std::process::id()));
        std::fs::write(&ca_file, ca_pem).ok()?;
        Some(Curl { version, ca_file })
    }

    /// Seconds for one download of `total` bytes over HTTP/1.1, as curl reports them.
    pub(crate) fn download(&self, server: &dyn Server, total: u64) -> Option<f64> {
        let out = Command::new("curl")
            .args(["-sS", "--http1.1", "-o", "/dev/null", "-w", "%{time_total} %{size_download}", "--cacert"])
            .arg(&self.ca_file)
            .arg(format!("https://localhost:{}/obj/{total}", server.h1().port()))
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut fields = text.split_whitespace();
        let secs: f64 = fields.next()?.parse().ok()?;
        let size: f64 = fields.next()?.parse().ok()?;
        (out.status.success() && size as u64 == total).then_some(secs)
    }
}

impl Drop for Curl {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}
