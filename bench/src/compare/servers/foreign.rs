//! A server someone else wrote, in a child process: what the sections need of it, and its stop.

use std::net::SocketAddr;
use std::process::Child;

use super::files::{process_cpu_seconds, WorkDir};
use super::Server;

/// A server process we did not write (Go's, nginx), stopped when dropped; its files go with it.
pub(crate) struct Foreign {
    /// How the reports name it.
    pub(super) name: &'static str,
    /// The server process.
    pub(super) child: Child,
    /// Its HTTP/1.1-only TLS, h2 + HTTP/1.1 TLS, plain HTTP and full-handshake TLS addresses.
    pub(super) addrs: [SocketAddr; 4],
    /// Its certificate, key and whatever else it reads or writes.
    pub(super) files: WorkDir,
    /// What to report once it has stopped (from the files it wrote).
    pub(super) after_stop: fn(&WorkDir),
}

impl Server for Foreign {
    fn name(&self) -> &'static str {
        self.name
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

    fn full(&self) -> SocketAddr {
        self.addrs[3]
    }

    fn ca_pem(&self) -> &str {
        &self.files.ca_pem
    }

    fn cpu_seconds(&self) -> f64 {
        process_cpu_seconds(self.child.id())
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        // Closing its standard input stops a server that watches it; kill in case it does not.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.after_stop)(&self.files);
    }
}
