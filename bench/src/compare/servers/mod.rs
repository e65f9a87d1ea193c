//! The servers the throughput, upload and small-call sections measure against, each in a
//! process of its own on 127.0.0.1: ours (hyper and rustls, h2 tuned for bulk transfer), and
//! servers no one here wrote, each with its stock HTTP/2 settings: hyper's with its defaults,
//! Go's `net/http`, and nginx. All present a certificate from the same CA code (ECDSA P-256,
//! rcgen) and negotiate TLS 1.3 with TLS_AES_128_GCM_SHA256.
//!
//! `BENCH_SERVERS` (comma-separated names, default all) picks them; one that cannot run is
//! reported as skipped, loudly, in the output and the report.

mod files;
mod foreign;
mod go;
mod nginx;
mod ours;

use std::net::SocketAddr;

pub(crate) use ours::{serve_child, CountedPort, ServerProcess};

/// A server the clients are measured against: where it listens and what it costs.
pub(crate) trait Server {
    /// How the reports name it (`ours`, `hyper-default`, `go`, `nginx`).
    fn name(&self) -> &'static str;
    /// Its HTTP/1.1-only TLS port.
    fn h1(&self) -> SocketAddr;
    /// Its h2 + HTTP/1.1 TLS port.
    fn h2(&self) -> SocketAddr;
    /// Its plain HTTP port.
    fn plain(&self) -> SocketAddr;
    /// Its HTTP/1.1-only TLS port that never resumes a session: every handshake a full one.
    fn full(&self) -> SocketAddr;
    /// The CA that signed its certificate, PEM.
    fn ca_pem(&self) -> &str;
    /// The server process's CPU seconds (user + system) so far.
    fn cpu_seconds(&self) -> f64;
}

/// Every server the benchmark knows, in the order the reports list them.
pub(crate) const NAMES: [&str; 4] = ["ours", "hyper-default", "go", "nginx"];

/// The small-call scenarios against `server`: (name, port, calls in flight).
pub(crate) fn call_scenarios(server: &dyn Server) -> [(&'static str, SocketAddr, usize); 4] {
    [("h1 c1", server.h1(), 1), ("h1 c64", server.h1(), 64), ("h2 c1", server.h2(), 1), ("h2 c64", server.h2(), 64)]
}

/// The servers `BENCH_SERVERS` names (default: all), started, with `ours` (already running for
/// the other sections) first; and a line for each one that could not start, saying why.
pub(crate) fn start_selected(ours: &ServerProcess) -> (Vec<Box<dyn Server + '_>>, Vec<String>) {
    let wanted = std::env::var("BENCH_SERVERS").unwrap_or_default();
    let wanted: Vec<&str> = wanted.split(',').map(str::trim).filter(|w| !w.is_empty()).collect();
    let mut started: Vec<Box<dyn Server + '_>> = Vec::new();
    let mut skipped = Vec::new();
    for unknown in wanted.iter().filter(|w| !NAMES.contains(w)) {
        skipped.push(format!("{unknown}: not a server this benchmark knows ({})", NAMES.join(", ")));
    }
    for name in NAMES.into_iter().filter(|n| wanted.is_empty() || wanted.contains(n)) {
        let server = match name {
            "ours" => Ok(Box::new(OursRef(ours)) as Box<dyn Server + '_>),
            _ => start(name),
        };
        match server {
            Ok(server) => started.push(server),
            Err(why) => skipped.push(format!("{name}: {why}")),
        }
    }
    for line in &skipped {
        eprintln!("\n!!! SERVER SKIPPED: {line}\n");
    }
    (started, skipped)
}

/// Starts the server called `name` (one of [`NAMES`]) in a process of its own.
pub(crate) fn start(name: &str) -> Result<Box<dyn Server>, String> {
    Ok(match name {
        "ours" => Box::new(ServerProcess::start(true)),
        "hyper-default" => Box::new(ServerProcess::start(false)),
        "go" => Box::new(go::start()?),
        "nginx" => Box::new(nginx::start()?),
        other => return Err(format!("{other}: not a server this benchmark knows ({})", NAMES.join(", "))),
    })
}

/// Child-process mode (`--server NAME`): starts the server `name`, prints
/// `SERVE h1=<addr> h2=<addr> plain=<addr> full=<addr>`, the CA (PEM) and `END`, as `--serve` does, and
/// keeps it running until standard input closes. For scripts (bench/ab-separate-process.sh)
/// that need one of the benchmark's servers.
pub(crate) fn serve_named(name: &str) {
    let server = start(name).unwrap_or_else(|why| {
        eprintln!("cannot start server {name}: {why}");
        std::process::exit(1);
    });
    println!("SERVE h1={} h2={} plain={} full={}", server.h1(), server.h2(), server.plain(), server.full());
    println!("{}", server.ca_pem().trim_end());
    println!("END");
    // Until the parent closes standard input (or it cannot be read).
    for line in std::io::stdin().lines() {
        if line.is_err() {
            break;
        }
    }
    drop(server);
}

/// The already running `ours` server, borrowed.
struct OursRef<'a>(&'a ServerProcess);

impl Server for OursRef<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn h1(&self) -> SocketAddr {
        self.0.h1
    }

    fn h2(&self) -> SocketAddr {
        self.0.h2
    }

    fn plain(&self) -> SocketAddr {
        self.0.plain
    }

    fn full(&self) -> SocketAddr {
        self.0.full
    }

    fn ca_pem(&self) -> &str {
        &self.0.ca_pem
    }

    fn cpu_seconds(&self) -> f64 {
        self.0.cpu_seconds()
    }
}

/// The four addresses in a server's first line, `SERVE h1=<addr> h2=<addr> plain=<addr>
/// full=<addr>`, in that order.
pub(crate) fn listening(line: &str) -> Result<[SocketAddr; 4], String> {
    let addr = |key: &str| -> Result<SocketAddr, String> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| format!("no {key}<address> in the server's first line {line:?}"))
    };
    Ok([addr("h1=")?, addr("h2=")?, addr("plain=")?, addr("full=")?])
}
