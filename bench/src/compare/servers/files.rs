//! What the servers we did not write need from us: a working directory with the certificate
//! and key (from the same CA code as our server's, as PEM files), free ports, a wait until they
//! listen, and their CPU time read from /proc.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use crate::support::TestCa;

/// A fresh directory for one server's files, with a CA and a leaf it issued for `localhost` and
/// `*.idle.test` (ECDSA P-256, as our server's), removed when dropped.
pub(crate) struct WorkDir {
    /// The directory.
    pub(crate) path: PathBuf,
    /// The CA, PEM (what the clients trust).
    pub(crate) ca_pem: String,
    /// The leaf certificate chain, PEM.
    pub(crate) cert: PathBuf,
    /// The leaf's private key (PKCS#8), PEM.
    pub(crate) key: PathBuf,
}

impl WorkDir {
    /// Makes the directory under `parent` (named for `server` and this process) and writes the
    /// certificate and key to it.
    pub(crate) fn new(parent: &Path, server: &str) -> Result<WorkDir, String> {
        let path = parent.join(format!("smithy-tls-bench-{server}-{}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| format!("mkdir {}: {e}", path.display()))?;
        let ca = TestCa::new(&format!("smithy-tls bench CA ({server})"));
        // `*.idle.test`: the idle-connection measure's distinct host names, as on our server.
        let identity = ca.leaf(&["localhost", "*.idle.test"]);
        let chain = identity.chain_pem();
        let (cert, key) = (path.join("leaf.pem"), path.join("leaf.key"));
        write(&cert, &chain)?;
        write(&key, &identity.key_pem())?;
        Ok(WorkDir { path, ca_pem: ca.pem, cert, key })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Writes `text` to `path`, saying which file failed.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))
}

/// `count` ports of 127.0.0.1 free right now (each bound, then released).
pub(crate) fn free_ports<const N: usize>() -> Result<[SocketAddr; N], String> {
    let listeners: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind 127.0.0.1: {e}")))
        .collect::<Result<_, _>>()?;
    let addrs: Vec<SocketAddr> = listeners
        .iter()
        .map(|l| l.local_addr().map_err(|e| format!("local address: {e}")))
        .collect::<Result<_, _>>()?;
    addrs.try_into().map_err(|_| "port count".to_owned())
}

/// Waits (up to 10 s) until every one of `addrs` accepts a connection, failing early if
/// `child` exits.
pub(crate) fn wait_listening(child: &mut Child, addrs: &[SocketAddr]) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    for addr in addrs {
        while TcpStream::connect_timeout(addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("exited ({status}) before listening on {addr}"));
            }
            if Instant::now() > deadline {
                return Err(format!("not listening on {addr} after 10 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(())
}

/// The CPU seconds (user + system) process `pid` has used so far, from /proc; NaN if unknown.
pub(crate) fn process_cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return f64::NAN };
    // The fields after the command name (which may hold spaces) start at the state, field 3:
    // utime and stime are fields 14 and 15.
    let Some((_, rest)) = stat.rsplit_once(')') else { return f64::NAN };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    // SAFETY: sysconf only reads a system constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / per_second
}

/// Where built helpers go: `bench-servers/` beside the benchmark executable's directory in the
/// cargo target directory.
pub(crate) fn build_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let profile = exe.parent().and_then(Path::parent).ok_or("the benchmark executable has no target directory")?;
    Ok(profile.join("bench-servers"))
}
