//! The benchmark's own server (hyper and rustls) in a process of its own: the parent's handle
//! ([`ServerProcess`]) and the child's side (`--serve`), with the line protocol between them.
//! Started tuned for bulk transfer (`ours`) or with hyper's default h2 settings
//! (`hyper-default`).

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use super::{listening, Server};
use crate::compare::runtime;
use crate::{field, BenchServer, Usage};

/// The benchmark server in a process of its own, as S3 or DynamoDB is to an SDK: this executable
/// started with `--serve`, which prints its ports and CA, answers questions about the
/// handshakes it saw on its standard input, and serves until that closes (when this is
/// dropped). Every section that compares clients measures against this server, so no client
/// shares its process, runtime or allocator with the server.
pub(crate) struct ServerProcess {
    /// `ours` (h2 tuned) or `hyper-default`.
    name: &'static str,
    child: std::process::Child,
    /// The question channel: the server's standard input and the lines it prints.
    control:
        std::sync::Mutex<(std::process::ChildStdin, std::io::Lines<std::io::BufReader<std::process::ChildStdout>>)>,
    /// HTTP/1.1-only TLS port.
    pub(crate) h1: SocketAddr,
    /// h2 + HTTP/1.1 TLS port.
    pub(crate) h2: SocketAddr,
    /// Plain HTTP port.
    pub(crate) plain: SocketAddr,
    /// HTTP/1.1-only TLS port requiring a client certificate ([`ServerProcess::client_pem`]).
    pub(crate) mtls: SocketAddr,
    /// HTTP/1.1-only TLS port that never resumes a session.
    pub(crate) full: SocketAddr,
    /// The CA that signed the server certificate, PEM.
    pub(crate) ca_pem: String,
    /// A client identity the mutual-TLS port takes.
    pub(crate) client_pem: crate::support::ClientPem,
}

/// The TLS ports whose handshakes the server process counts on request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CountedPort {
    /// The HTTP/1.1-only port.
    H1,
    /// The mutual-TLS port.
    MutualTls,
}

impl CountedPort {
    fn name(self) -> &'static str {
        match self {
            CountedPort::H1 => "H1",
            CountedPort::MutualTls => "MTLS",
        }
    }
}

/// The lines the server process prints up to the next `END` line, joined.
fn section(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> String {
    let mut text = String::new();
    for line in lines.by_ref() {
        let line = line.expect("server output");
        if line == "END" {
            break;
        }
        text.push_str(&line);
        text.push('\n');
    }
    text
}

impl ServerProcess {
    /// Starts the server process, h2 tuned for bulk transfer (`ours`) or not (`hyper-default`),
    /// and reads its ports and CA.
    pub(crate) fn start(tuned: bool) -> ServerProcess {
        let exe = std::env::current_exe().expect("current exe");
        let mode = if tuned { "tuned" } else { "default" };
        let mut child = Command::new(exe)
            .args(["--serve", mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server process");
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let first = lines.next().and_then(Result::ok).expect("the server process prints its ports");
        let [h1, h2, plain, full] = listening(&first).unwrap_or_else(|e| panic!("{e}"));
        let mtls = first
            .split_whitespace()
            .find_map(|w| w.strip_prefix("mtls="))
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no mtls=<address> in the server's first line {first:?}"));
        let ca_pem = section(&mut lines);
        let client_pem = crate::support::ClientPem { cert: section(&mut lines), key: section(&mut lines) };
        let stdin = child.stdin.take().expect("stdin");
        let name = if tuned { "ours" } else { "hyper-default" };
        let control = std::sync::Mutex::new((stdin, lines));
        ServerProcess { name, child, control, h1, h2, plain, mtls, full, ca_pem, client_pem }
    }

    /// How many handshakes the server completed on `port` so far, and how many of them resumed
    /// a session.
    pub(crate) fn handshakes(&self, port: CountedPort) -> (usize, usize) {
        use std::io::Write as _;
        let mut control = self.control.lock().expect("server control");
        let (stdin, lines) = &mut *control;
        writeln!(stdin, "HANDSHAKES {}", port.name()).and_then(|()| stdin.flush()).expect("ask the server process");
        let answer = lines.next().and_then(Result::ok).expect("the server process answers");
        let number = |key: &str| field(&answer, key) as usize;
        (number("total="), number("resumed="))
    }

    /// The server process's CPU seconds (user + system) so far, from its own `getrusage`.
    pub(crate) fn cpu_seconds(&self) -> f64 {
        use std::io::Write as _;
        let mut control = self.control.lock().expect("server control");
        let (stdin, lines) = &mut *control;
        writeln!(stdin, "CPU").and_then(|()| stdin.flush()).expect("ask the server process");
        let answer = lines.next().and_then(Result::ok).expect("the server process answers");
        field(&answer, "seconds=")
    }
}

impl Server for ServerProcess {
    fn name(&self) -> &'static str {
        self.name
    }

    fn h1(&self) -> SocketAddr {
        self.h1
    }

    fn h2(&self) -> SocketAddr {
        self.h2
    }

    fn plain(&self) -> SocketAddr {
        self.plain
    }

    fn full(&self) -> SocketAddr {
        self.full
    }

    fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    fn cpu_seconds(&self) -> f64 {
        ServerProcess::cpu_seconds(self)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Child-process mode (`--serve tuned` or `--serve default`): the benchmark server, h2 tuned or
/// with hyper's defaults, until standard input closes. It prints its ports, then the server CA,
/// the client certificate and the client key the mutual-TLS port takes, each ended by `END`. A
/// line `HANDSHAKES H1` (or `HANDSHAKES MTLS`) on standard input is answered with that port's
/// handshake counts, a line `CPU` with the CPU seconds the process has used.
pub(crate) fn serve_child(tuned: bool) {
    let runtime = runtime();
    let server = runtime.block_on(BenchServer::start_with(tuned));
    println!(
        "SERVE h1={} h2={} plain={} full={} mtls={}",
        server.h1, server.h2, server.plain, server.full, server.mtls
    );
    for text in [&server.ca_pem, &server.client_pem.cert, &server.client_pem.key] {
        println!("{}", text.trim_end());
        println!("END");
    }
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        let port = match line.trim() {
            "HANDSHAKES H1" => Some(server.h1),
            "HANDSHAKES MTLS" => Some(server.mtls),
            _ => None,
        };
        if let Some(port) = port {
            let seen = server.handshakes(port);
            println!("HANDSHAKES total={} resumed={}", seen.len(), seen.iter().filter(|h| h.resumed).count());
            continue;
        }
        match line.trim() {
            "CPU" => println!("CPU seconds={:.6}", Usage::now().cpu_seconds),
            other => panic!("the server process does not know {other:?}"),
        }
    }
    drop(server);
}
