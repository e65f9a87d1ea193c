//! Go's `net/http` server with its stock HTTP/1.1 and HTTP/2 settings (bench/servers/go/main.go),
//! built with `go build` (standard library only, no network) into the target directory when the
//! benchmark starts.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::files::{build_dir, wait_listening, WorkDir};
use super::foreign::Foreign;
use super::listening;

/// The Go server's source, in this repository.
const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/servers/go/main.go");

/// Builds the Go server (when `go` is installed) and starts it with a fresh certificate.
pub(crate) fn start() -> Result<Foreign, String> {
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
    let addrs = match first {
        Some(Ok(line)) => listening(&line),
        _ => Err("the Go server printed no addresses".to_owned()),
    };
    let addrs = match addrs {
        Ok(addrs) => addrs,
        Err(why) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(why);
        }
    };
    let mut server = Foreign { name: "go", child, addrs, files, after_stop: |_| {} };
    wait_listening(&mut server.child, &server.addrs)?;
    Ok(server)
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
