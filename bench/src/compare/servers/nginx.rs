//! nginx with its stock HTTP/2 settings, one process (no master), serving files from a
//! directory in /dev/shm: `GET /obj/<n>` is a sparse file of n bytes (ranges as nginx serves
//! them), a POST is read to its end and answered with the same file, a PUT is stored (WebDAV).
//!
//! Needs nginx with the ssl, http_v2 and dav modules (Debian: nginx-light).

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use super::files::{free_ports, wait_listening, write, WorkDir};
use super::foreign::Foreign;
use crate::env_number;

/// Writes the configuration and the files to serve, and starts nginx in a process of its own.
pub(crate) fn start() -> Result<Foreign, String> {
    Command::new("nginx").arg("-v").output().map_err(|e| format!("nginx is not installed ({e})"))?;
    let files = WorkDir::new(Path::new("/dev/shm"), "nginx")?;
    let addrs = free_ports::<4>()?;
    for dir in ["www/obj", "body", "tmp"] {
        let dir = files.path.join(dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    }
    // The objects the sections fetch: the bulk size (BENCH_MIB), the small calls' 1 KiB, the
    // new connections' 1 byte and the idle connections' 256 KiB.
    for size in [env_number("BENCH_MIB", 1024) << 20, 1024, 1, 256 << 10] {
        let path = files.path.join(format!("www/obj/{size}"));
        let file = std::fs::File::create(&path).map_err(|e| format!("create {}: {e}", path.display()))?;
        file.set_len(size).map_err(|e| format!("size {}: {e}", path.display()))?;
    }
    let conf = files.path.join("nginx.conf");
    write(&conf, &config(&files, &addrs))?;
    let mut child = Command::new("nginx")
        .arg("-p")
        .arg(&files.path)
        .arg("-e")
        .arg(files.path.join("error.log"))
        .arg("-c")
        .arg(&conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("start nginx: {e}"))?;
    if let Err(why) = wait_listening(&mut child, &addrs) {
        let log = std::fs::read_to_string(files.path.join("error.log")).unwrap_or_default();
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("{why}; its log: {log}"));
    }
    Ok(Foreign { name: "nginx", child, addrs, files, after_stop: report_errors })
}

/// The configuration: stock settings but for what the benchmark needs (one process, room for
/// the idle section's thousand connections, no request limit per connection, no body size
/// limit, TLS 1.3 with the suite every server uses), an HTTP/1.1-only TLS port, an h2 TLS port,
/// a plain port, and an HTTP/1.1-only TLS port that never resumes a session (no tickets, no
/// session cache).
fn config(files: &WorkDir, [h1, h2, plain, full]: &[SocketAddr; 4]) -> String {
    let dir = files.path.display();
    format!(
        "daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 8192;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    client_max_body_size 0;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/tmp;
    fastcgi_temp_path {dir}/tmp;
    uwsgi_temp_path {dir}/tmp;
    scgi_temp_path {dir}/tmp;
    root {dir}/www;
    types {{ }}
    default_type application/octet-stream;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.3;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
    dav_methods PUT;
    error_page 405 =200 $uri;
    # A POST's body is read before the answer (as the other servers do), not discarded after
    # it: a mirror subrequest with the body reads it first.
    mirror_request_body on;
    server {{ listen {h1} ssl; {locations} }}
    server {{ listen {h2} ssl http2; {locations} }}
    server {{ listen {plain}; {locations} }}
    server {{ listen {full} ssl; ssl_session_tickets off; ssl_session_cache off; {locations} }}
}}
",
        cert = files.cert.display(),
        key = files.key.display(),
        locations = "location = /obj/1024 { mirror /read-body; } location = /read-body { internal; return 204; }",
    )
}

/// Prints the errors nginx logged, before its directory goes.
fn report_errors(files: &WorkDir) {
    let log = std::fs::read_to_string(files.path.join("error.log")).unwrap_or_default();
    let complaints: Vec<&str> =
        log.lines().filter(|l| ["[alert]", "[crit]", "[error]", "[emerg]"].iter().any(|k| l.contains(k))).collect();
    if !complaints.is_empty() {
        eprintln!(
            "nginx logged {} errors; the last:\n{}",
            complaints.len(),
            complaints[complaints.len().saturating_sub(5)..].join("\n")
        );
    }
}
