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
    /// The CA that signed the server certificate, PEM.
    pub(crate) ca_pem: String,
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
        let [h1, h2, plain] = listening(&first).unwrap_or_else(|e| panic!("{e}"));
        let mut ca_pem = String::new();
        for line in lines.by_ref() {
            let line = line.expect("server output");
            if line == "END" {
                break;
            }
            ca_pem.push_str(&line);
            ca_pem.push('\n');
        }
        let stdin = child.stdin.take().expect("stdin");
        let name = if tuned { "ours" } else { "hyper-default" };
        ServerProcess { name, child, control: std::sync::Mutex::new((stdin, lines)), h1, h2, plain, ca_pem }
    }

    /// How many handshakes the server completed on its HTTP/1.1 port so far, and how many of
    /// them resumed a session.
    pub(crate) fn h1_handshakes(&self) -> (usize, usize) {
        use std::io::Write as _;
        let mut control = self.control.lock().expect("server control");
        let (stdin, lines) = &mut *control;
        writeln!(stdin, "HANDSHAKES H1").and_then(|()| stdin.flush()).expect("ask the server process");
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
/// with hyper's defaults, until standard input closes. A line
/// `HANDSHAKES H1` on standard input is answered with the HTTP/1.1 port's handshake counts, a
/// line `CPU` with the CPU seconds the process has used.
pub(crate) fn serve_child(tuned: bool) {
    let runtime = runtime();
    let server = runtime.block_on(BenchServer::start_with(tuned));
    println!("SERVE h1={} h2={} plain={}", server.h1, server.h2, server.plain);
    println!("{}", server.ca_pem.trim_end());
    println!("END");
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        match line.trim() {
            "HANDSHAKES H1" => {
                let seen = server.handshakes(server.h1);
                println!("HANDSHAKES total={} resumed={}", seen.len(), seen.iter().filter(|h| h.resumed).count());
            }
            "CPU" => println!("CPU seconds={:.6}", Usage::now().cpu_seconds),
            other => panic!("the server process does not know {other:?}"),
        }
    }
    drop(server);
}
