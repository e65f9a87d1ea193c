//! Downloads through the S3 transfer manager 0.3.1, four clients side by side (`#[ignore]`: a
//! benchmark, run on a quiet machine; it asserts nothing about speed):
//!
//! | client | tree | the transfer manager's transport |
//! |---|---|---|
//! | `tm-untouched` | as published | its own pool, rustls + aws-lc (its default) |
//! | `tm-policy` | platform-default | as the rewritten crate chooses: off on x86_64 Linux, where the rule's s2n-tls goes through the S3 client's HTTP client |
//! | `ours-sdk` | platform-default | off: the S3 client's HTTP client, smithy-default-tls |
//! | `upstream-sdk` | as published | off: the S3 client's HTTP client, upstream's default |
//!
//! Two shapes (one large object; many 256 KiB objects, 64 at a time) against two servers on
//! 127.0.0.1: nginx (files in /dev/shm) and the suite's HTTPS mock (hyper + rustls, objects in
//! memory), both on HTTP/1.1 as S3 is (`TM_H2=1`: h2 offered too, which the SDK's clients then
//! take, each on one connection). Rounds interleave the clients; each client's process
//! downloads once to warm up, then `TM_RUNS` times. Prints each client's median throughput and
//! CPU seconds per GiB (its process's, user and system: the server's work is the same for every
//! client) and their ratios to `tm-untouched` per round, and the medians of those ratios.
//!
//! `cargo test --release`-independent: the consumers are release builds. Knobs: `TM_ROUNDS` (3),
//! `TM_RUNS` (3), `TM_LARGE_MIB` (1024), `TM_SMALL_OBJECTS` (2000), `TM_H2` (0).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use smithy_tls_e2e::{prepare_transfer_manager_tree, run, scratch_cargo, scratch_root, scratch_target, MockAws};
use smithy_tls_test_support::https::Alpn;
use smithy_tls_test_support::pki::TestCa;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A client: its name, which tree's consumer, and whether the transfer manager keeps its transport.
struct Client {
    name: &'static str,
    rewritten: bool,
    own_transport: bool,
}

const CLIENTS: [Client; 4] = [
    Client { name: "tm-untouched", rewritten: false, own_transport: true },
    Client { name: "tm-policy", rewritten: true, own_transport: true },
    Client { name: "ours-sdk", rewritten: true, own_transport: false },
    Client { name: "upstream-sdk", rewritten: false, own_transport: false },
];

/// The consumer of the tree at `root` (rewritten with platform-default or as published), in release.
fn consumer(rewritten: bool) -> PathBuf {
    let name = if rewritten { "measure-tm-policy" } else { "measure-tm-untouched" };
    let tree = prepare_transfer_manager_tree(&scratch_root().join(name), rewritten.then_some("platform-default"));
    run(scratch_cargo(&tree).args(["build", "-q", "--release", "-p", "tm-consumer"]));
    let built = scratch_target().join("release/tm-consumer");
    let copy = scratch_root().join(format!("{name}-consumer"));
    std::fs::copy(&built, &copy).expect("copy the consumer");
    copy
}

/// nginx serving `/e2e-bucket/bench/<bytes>/<i>` from /dev/shm over TLS (HTTP/1.1 and h2), in a
/// process of its own; stopped when dropped. Without ETags: nginx's (`"<mtime>-<size>"`) read as
/// a multipart upload's to the transfer manager, which then asks for part 1 (`?partNumber=1`),
/// a query nginx does not serve.
struct Nginx {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Nginx {
    fn start(ca: &TestCa, objects: &[(usize, usize)], h2: bool) -> Nginx {
        assert!(Command::new("nginx").arg("-v").output().is_ok(), "nginx is missing: apt-get install nginx-light");
        let dir = PathBuf::from(format!("/dev/shm/smithy-tls-tm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (size, count) in objects {
            let folder = dir.join(format!("www/e2e-bucket/bench/{size}"));
            std::fs::create_dir_all(&folder).expect("mkdir");
            for i in 0..*count {
                let file = std::fs::File::create(folder.join(i.to_string())).expect("create");
                file.set_len(*size as u64).expect("size");
            }
        }
        let identity = ca.leaf(&["localhost"]);
        std::fs::write(dir.join("leaf.pem"), identity.chain_pem()).expect("cert");
        std::fs::write(dir.join("leaf.key"), identity.key_pem()).expect("key");
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let d = dir.display();
        let conf = format!(
            "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; keepalive_requests 1000000; root {d}/www; types {{ }} default_type application/octet-stream;
  etag off;
  ssl_certificate {d}/leaf.pem; ssl_certificate_key {d}/leaf.key;
  server {{ listen 127.0.0.1:{port} ssl{h2}; }} }}
",
            h2 = if h2 { " http2" } else { "" }
        );
        std::fs::write(dir.join("nginx.conf"), conf).expect("conf");
        let child = Command::new("nginx")
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdin(Stdio::null())
            .spawn()
            .expect("start nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nginx did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx { child, port, dir }
    }
}

/// One timed run: throughput (MB/s) and the client's CPU seconds per GiB.
#[derive(Clone, Copy)]
struct Run {
    mb_per_s: f64,
    cpu_per_gib: f64,
}

/// Runs one client's process for one shape; its timed runs.
fn measure(binary: &Path, client: &Client, port: u16, bundle: &Path, (size, count): (usize, usize)) -> Vec<Run> {
    let home = scratch_root().join("measure-tm-home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    let mut cmd = Command::new(binary);
    cmd.env_clear()
        .env("HOME", &home)
        .env("AWS_ACCESS_KEY_ID", "AKIDE2E")
        .env("AWS_SECRET_ACCESS_KEY", "e2e-secret")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", format!("https://localhost:{port}"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", home.join("no-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", home.join("no-credentials"))
        .env("SSL_CERT_FILE", bundle)
        .env("TM_TRANSPORT", if client.own_transport { "default" } else { "sdk-client" })
        .env("TM_BENCH_RUNS", knob("TM_RUNS", 3).to_string())
        .env("TM_OBJECT_BYTES", size.to_string())
        .env("TM_OBJECTS", count.to_string());
    let out = run(&mut cmd);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.strip_prefix("run ")?.split(' ');
            let seconds: f64 = words.next()?.parse().ok()?;
            let bytes: f64 = words.next()?.parse().ok()?;
            let cpu: f64 = words.next()?.parse().ok()?;
            Some(Run { mb_per_s: bytes / seconds / 1e6, cpu_per_gib: cpu / (bytes / f64::from(1u32 << 30)) })
        })
        .collect()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[test]
#[ignore = "a benchmark: run on a quiet machine with --ignored --nocapture"]
fn transfer_manager_downloads_four_clients_two_shapes_two_servers() {
    let large = (knob("TM_LARGE_MIB", 1024) << 20, 1);
    let small = (256 << 10, knob("TM_SMALL_OBJECTS", 2000));
    let shapes = [("large", large), ("small", small)];
    let binaries: BTreeMap<bool, PathBuf> = [true, false].into_iter().map(|r| (r, consumer(r))).collect();

    let ca = TestCa::new("smithy-tls transfer manager benchmark");
    let bundle = scratch_root().join("measure-tm-ca.pem");
    std::fs::write(&bundle, &ca.pem).expect("write the CA");
    let h2 = knob("TM_H2", 0) == 1;
    let nginx = Nginx::start(&ca, &[large, small], h2);
    let runtime = tokio::runtime::Runtime::new().expect("tokio");
    let mut objects = BTreeMap::new();
    for (size, count) in [large, small] {
        let data = bytes::Bytes::from(vec![0u8; size]);
        for i in 0..count {
            objects.insert(format!("/e2e-bucket/bench/{size}/{i}"), data.clone());
        }
    }
    let alpn = if h2 { Alpn::H2AndHttp1 } else { Alpn::Http1Only };
    let ours = runtime.block_on(MockAws::start_with_objects(&ca, objects, alpn));
    let servers = [("nginx", nginx.port), ("ours", ours.addr().port())];

    // ratios[(measure, server, shape, client)]: one per round, to the round's tm-untouched.
    let mut ratios: BTreeMap<(&str, &str, &str, &str), Vec<f64>> = BTreeMap::new();
    for round in 0..knob("TM_ROUNDS", 3) {
        for (server, port) in servers {
            for (shape, objects) in shapes {
                let mut medians = BTreeMap::new();
                // Interleaved, and rotated each round so no client always goes first.
                for k in 0..CLIENTS.len() {
                    let client = &CLIENTS[(k + round) % CLIENTS.len()];
                    let runs = measure(&binaries[&client.rewritten], client, port, &bundle, objects);
                    assert!(!runs.is_empty(), "{} printed no timed run", client.name);
                    let speed = median(&mut runs.iter().map(|r| r.mb_per_s).collect::<Vec<_>>());
                    let cpu = median(&mut runs.iter().map(|r| r.cpu_per_gib).collect::<Vec<_>>());
                    medians.insert(client.name, (speed, cpu));
                }
                let (base_speed, base_cpu) = medians["tm-untouched"];
                let line: Vec<String> = CLIENTS
                    .iter()
                    .map(|c| {
                        let (speed, cpu) = medians[c.name];
                        format!(
                            "{} {speed:.0} MB/s ({:.2}x), {cpu:.3} CPU s/GiB ({:.2}x)",
                            c.name,
                            speed / base_speed,
                            cpu / base_cpu
                        )
                    })
                    .collect();
                println!("round {round} {server} {shape}: {}", line.join("; "));
                for client in &CLIENTS {
                    let (speed, cpu) = medians[client.name];
                    ratios.entry(("throughput", server, shape, client.name)).or_default().push(speed / base_speed);
                    ratios.entry(("cpu per GiB", server, shape, client.name)).or_default().push(cpu / base_cpu);
                }
            }
        }
    }
    println!("\nmedian ratio to tm-untouched (range over rounds); throughput higher is better, CPU lower:");
    for ((measure, server, shape, client), mut values) in ratios {
        let (low, high) = (values.iter().copied().fold(f64::MAX, f64::min), values.iter().copied().fold(0.0, f64::max));
        println!("{measure:11} {server:6} {shape:6} {client:13} {:.3} ({low:.3}-{high:.3})", median(&mut values));
    }
}
