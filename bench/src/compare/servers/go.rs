//! Go's `net/http` server with its stock HTTP/1.1 and HTTP/2 settings (bench/servers/go/main.go),
//! built with `go build` (standard library only, no network) into the target directory when the
//! benchmark starts.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::files::{build_dir, process_cpu_seconds, wait_listening, WorkDir};
use super::{listening, Server};

/// The Go server's source, in this repository.
const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/servers/go/main.go");

/// The Go server in a process of its own, stopped when dropped.
pub(crate) struct GoServer {
    child: Child,
    addrs: [SocketAddr; 3],
    files: WorkDir,
}

impl GoServer {
    /// Builds the server (when `go` is installed) and starts it with a fresh certificate.
    pub(crate) fn start() -> Result<GoServer, String> {
        let binary = build()?;
        let files = WorkDir::new(&std::env::temp_dir(), "go")?;
        let mut child = Command::new(&binary)
            .arg("-cert")
            .arg(&files.cert)
            .arg("-key")
            .arg(&files.key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no standard output")?;
        let first = std::io::BufReader::new(stdout).lines().next();
        let first = match first {
            Some(Ok(line)) => line,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the Go server printed no addresses".to_owned());
            }
        };
        let mut server = GoServer { child, addrs: listening(&first)?, files };
        wait_listening(&mut server.child, &server.addrs)?;
        Ok(server)
    }
}

/// `go build` of [`SOURCE`] into the target directory; the binary's path.
fn build() -> Result<PathBuf, String> {
    let dir = build_dir()?;
    let binary = dir.join("go-server");
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&binary)
        .arg(Path::new(SOURCE))
        .env("GO111MODULE", "off")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "")
        .env("CGO_ENABLED", "0")
        .env("GOCACHE", dir.join("go-cache"))
        .env("GOPATH", dir.join("go-path"))
        .output()
        .map_err(|e| format!("go is not installed or does not run ({e})"))?;
    if !out.status.success() {
        return Err(format!("go build {SOURCE} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(binary)
}

impl Server for GoServer {
    fn name(&self) -> &'static str {
        "go"
    }

    fn h1(&self) -> SocketAddr {
        self.addrs[0]
    }

    fn h2(&self) -> SocketAddr {
        self.addrs[1]
    }

    fn plain(&self) -> SocketAddr {
        self.addrs[2]
    }

    fn ca_pem(&self) -> &str {
        &self.files.ca_pem
    }

    fn cpu_seconds(&self) -> f64 {
        process_cpu_seconds(self.child.id())
    }
}

impl Drop for GoServer {
    fn drop(&mut self) {
        // Closing its standard input stops it; kill in case it does not.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
