//! wasm32-wasip2 through the host's `wasi:http`, as the generator gives it: aws-config and
//! aws-sdk-s3 rewritten with platform-default (whose `wasip2` rule is `wasi-http`), in an
//! application with the SDK dependencies `explain` prints for the target and no code about the
//! client (`tests/wasi-consumer`), built as a component and run under jco (Node's HTTP and TLS
//! behind `wasi:http/outgoing-handler`) against moto on 127.0.0.1.
//!
//! - Over HTTP: create a bucket, put an object in chunks, get it back byte for byte, list it;
//!   with what the generated crates hand the SDK (aws-config's loader included), and with
//!   smithy-wasi-http's client and sleep set by hand, on the config and from its plugin.
//! - Over HTTPS, through a TLS relay in front of moto: the same, with the host trusting the test
//!   CA (`NODE_EXTRA_CA_CERTS`); with another CA the host refuses the server, and the SDK gets
//!   an error it does not retry (one connection).
//! - A stopped server: a typed I/O error after the configured attempts (retried, so the
//!   generated crates gave the SDK a sleep), not a hang.
//! - The application's `--cfg smithy_tls="none"`: no client from the generated crates; its own
//!   serves.
//!
//! jco (npm, pinned) and moto (`moto_server`) are what scripts/test installs; a missing one fails
//! the test, naming the install.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use smithy_tls_codegen::platforms::APPLICATION_MANIFEST;
use smithy_tls_e2e::{
    add_application, pin_lock, prepare_sdk_tree, repo_root, run, run_bounded, scratch_cargo, scratch_root,
    scratch_target, smithy_tls_binary, tail, BoundedRun, PUBLISHED, WASI_RUN_PRESET,
};
use smithy_tls_test_support::pki::TestCa;

/// The jco release the suite installs (npm `@bytecodealliance/jco`).
const JCO: &str = "1.35.0";

/// The longest one run of the component may take; it is killed after.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// jco, installed once per target dir with npm; its command.
fn jco() -> PathBuf {
    static JCO_BIN: OnceLock<PathBuf> = OnceLock::new();
    JCO_BIN
        .get_or_init(|| {
            let prefix = scratch_root().join(format!("jco-{JCO}"));
            let bin = prefix.join("node_modules/.bin/jco");
            if !bin.exists() {
                let npm = Command::new("npm").arg("--version").output();
                assert!(
                    npm.is_ok_and(|o| o.status.success()),
                    "npm is missing: `apt-get install nodejs npm` (scripts/test does)"
                );
                std::fs::create_dir_all(&prefix).expect("mkdir the jco prefix");
                run(Command::new("npm")
                    .current_dir(&prefix)
                    .args(["install", "--no-audit", "--no-fund", "--no-save", "--prefix"])
                    .arg(&prefix)
                    .arg(format!("@bytecodealliance/jco@{JCO}")));
            }
            bin
        })
        .clone()
}

/// The tree: aws-config and aws-sdk-s3 (the published crates, fetched) rewritten with
/// [`WASI_RUN_PRESET`], and tests/wasi-consumer in it with the SDK dependencies `explain` prints
/// for wasm32-wasip2, with the committed lock.
fn tree() -> PathBuf {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let installed = run(Command::new("rustup").args(["target", "list", "--installed"]));
        assert!(
            String::from_utf8_lossy(&installed.stdout).lines().any(|t| t == "wasm32-wasip2"),
            "the wasm32-wasip2 standard library is missing: `rustup target add wasm32-wasip2` (scripts/test does)"
        );
        let tree = prepare_sdk_tree(&scratch_root().join("wasi-consumer"), PUBLISHED, &[], false).root;
        run(Command::new(smithy_tls_binary()).args(["apply", "--preset", WASI_RUN_PRESET]).arg(&tree));
        add_application(&tree, "wasi-consumer", &application_manifest());
        pin_lock(&tree, "wasi-consumer");
        tree
    })
    .clone()
}

/// The component built for wasm32-wasip2 as the application's Cargo.toml says, no override.
fn component() -> PathBuf {
    static COMPONENT: OnceLock<PathBuf> = OnceLock::new();
    COMPONENT.get_or_init(|| build_component("", "wasi-consumer")).clone()
}

/// The component built with the application's `--cfg smithy_tls="none"` (RUSTFLAGS).
fn component_without_a_client() -> PathBuf {
    build_component(r#"--cfg smithy_tls="none""#, "wasi-consumer-none")
}

/// Builds the component with `rustflags` and copies it to `<scratch>/<name>.wasm`, out of the way
/// of the next build. Both builds share the e2e target dir: with `--target`, RUSTFLAGS reach only
/// the target's crates, so the build scripts and proc macros are built once, and cargo keeps each
/// flag set's crates apart.
fn build_component(rustflags: &str, name: &str) -> PathBuf {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let tree = tree();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    run(scratch_cargo(&tree).env("RUSTFLAGS", rustflags).args([
        "build",
        "-q",
        "-p",
        "wasi-consumer",
        "--target",
        "wasm32-wasip2",
    ]));
    let built = scratch_target().join("wasm32-wasip2/debug/wasi-consumer.wasm");
    let copy = scratch_root().join(format!("{name}.wasm"));
    std::fs::copy(&built, &copy).unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
    copy
}

/// tests/wasi-consumer/Cargo.toml.in with the SDK dependencies of the generator's
/// `APPLICATION_MANIFEST` (its `[dependencies]` and target tables) merged in.
fn application_manifest() -> String {
    let source = repo_root().join("tests/wasi-consumer/Cargo.toml.in");
    let mut manifest: toml_edit::DocumentMut =
        std::fs::read_to_string(source).expect("Cargo.toml.in").parse().expect("Cargo.toml.in parses");
    let lines: toml_edit::DocumentMut = APPLICATION_MANIFEST.parse().expect("APPLICATION_MANIFEST parses");
    for (name, item) in lines["dependencies"].as_table().expect("[dependencies]") {
        manifest["dependencies"][name] = item.clone();
    }
    manifest["target"] = lines["target"].clone();
    manifest.to_string()
}

/// moto's server on a free port of 127.0.0.1, stopped when dropped.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start() -> Moto {
        let port = free_port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start moto_server ({e}): `pip install 'moto[server]'` (scripts/test does)")
            });
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "moto_server did not listen on {port} within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        Moto { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 nothing listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1").local_addr().expect("addr").port()
}

/// TLS in front of moto: accepts on 127.0.0.1 with a leaf of `ca` for `localhost`, and relays
/// the plaintext to `upstream`; counts the connections it accepts.
struct TlsRelay {
    port: u16,
    accepted: Arc<AtomicUsize>,
    runtime: tokio::runtime::Runtime,
}

impl TlsRelay {
    fn start(ca: &TestCa, upstream: u16) -> TlsRelay {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("rt");
        let leaf = ca.leaf(&["localhost"]);
        let config = rustls::ServerConfig::builder_with_provider(smithy_tls_e2e::support::ring_crypto())
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(leaf.chain.clone(), leaf.private_key())
            .expect("the leaf");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("addr").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&accepted);
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                    let Ok(mut moto) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut moto).await;
                });
            }
        });
        TlsRelay { port, accepted, runtime }
    }

    fn url(&self) -> String {
        format!("https://localhost:{}", self.port)
    }
}

/// Runs the component under jco with `env`, bounded by [`RUN_LIMIT`]. The machine's trust
/// variables are left out: the host trusts what `env` says.
fn run_component(env: &[(&str, String)]) -> BoundedRun {
    run_component_at(&component(), env)
}

/// [`run_component`] for the component at `component`.
fn run_component_at(component: &Path, env: &[(&str, String)]) -> BoundedRun {
    let mut cmd = Command::new(jco());
    cmd.arg("run").arg(component);
    for var in ["AWS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "HTTPS_PROXY", "HTTP_PROXY"] {
        cmd.env_remove(var).env_remove(var.to_lowercase());
    }
    run_bounded(cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str()))), RUN_LIMIT)
}

/// Asserts the whole workflow ran: bucket, put, get equal, listed.
fn assert_workflow(case: &str, ran: &BoundedRun, len: usize) {
    assert!(ran.ok, "{case}: the component failed:\n{}\n{}", ran.stdout, tail(&ran.stderr, 30));
    for line in
        [format!("WASI put {len} bytes"), format!("WASI got {len} bytes, equal"), "WASI listed [\"object\"]".into()]
    {
        assert!(ran.stdout.contains(&line), "{case}: no `{line}` in:\n{}", ran.stdout);
    }
}

#[test]
fn the_s3_workflow_runs_over_http_through_the_hosts_wasi_http() {
    let moto = Moto::start();
    let len = 300_000;
    let ran = run_component(&[("S3_ENDPOINT", moto.url()), ("OBJECT_BYTES", len.to_string())]);
    assert_workflow("http", &ran, len);
    assert!(
        ran.stdout.contains("WASI sdk_config http_client=set"),
        "aws-config's loader set the client:\n{}",
        ran.stdout
    );
    println!("WASI http: the S3 workflow through jco's wasi:http, wired by the generated crates, in {:?}", ran.took);
    // smithy-wasi-http's client and sleep set by hand: its functions, and its plugin's.
    for wiring in ["config", "plugin"] {
        let ran = run_component(&[
            ("S3_ENDPOINT", moto.url()),
            ("S3_BUCKET", format!("wasi-{wiring}")),
            ("OBJECT_BYTES", len.to_string()),
            ("WIRING", wiring.into()),
        ]);
        assert_workflow(&format!("http, WIRING={wiring}"), &ran, len);
        println!(
            "WASI http: the same with smithy-wasi-http's client and sleep set by hand ({wiring}) in {:?}",
            ran.took
        );
    }
}

#[test]
fn over_https_the_host_trusts_the_given_ca_and_refuses_another() {
    let moto = Moto::start();
    let ca = TestCa::new("wasi-http CA");
    let dir = scratch_root().join("wasi-https");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let trusted = dir.join("ca.pem");
    std::fs::write(&trusted, &ca.pem).expect("write the CA");
    let relay = TlsRelay::start(&ca, moto.port);
    let len = 70_000;
    let ran = run_component(&[
        ("S3_ENDPOINT", relay.url()),
        ("S3_BUCKET", "wasi-https".into()),
        ("OBJECT_BYTES", len.to_string()),
        ("NODE_EXTRA_CA_CERTS", trusted.display().to_string()),
    ]);
    assert_workflow("https", &ran, len);
    println!("WASI https: the S3 workflow over TLS the host verified, in {:?}", ran.took);

    let other = dir.join("other-ca.pem");
    std::fs::write(&other, TestCa::new("another CA").pem).expect("write the other CA");
    let before = relay.accepted.load(Ordering::SeqCst);
    let ran = run_component(&[
        ("S3_ENDPOINT", relay.url()),
        ("S3_BUCKET", "wasi-untrusted".into()),
        ("NODE_EXTRA_CA_CERTS", other.display().to_string()),
    ]);
    assert!(!ran.ok, "a server the host does not trust must be refused:\n{}", ran.stdout);
    assert!(ran.stdout.contains("WASI ERROR kind=dispatch-other"), "not retried, not I/O:\n{}", ran.stdout);
    assert_eq!(relay.accepted.load(Ordering::SeqCst) - before, 1, "a refused server is not retried");
    println!("WASI https: untrusted server refused once: {}", ran.stdout.lines().last().unwrap_or_default());
    let _ = std::fs::remove_dir_all(&dir);
    drop(relay.runtime);
}

#[test]
fn a_stopped_server_is_a_typed_error_after_the_attempts_not_a_hang() {
    let port = free_port();
    let ran = run_component(&[("S3_ENDPOINT", format!("http://127.0.0.1:{port}")), ("ATTEMPTS", "3".into())]);
    assert!(!ran.ok, "nothing listens on {port}:\n{}", ran.stdout);
    assert!(ran.stdout.contains("WASI ERROR kind=dispatch-io"), "an I/O dispatch failure:\n{}", ran.stdout);
    assert!(ran.stdout.contains("ConnectionRefused"), "the host's code is kept:\n{}", ran.stdout);
    println!("WASI stopped server: {} after {:?}", ran.stdout.lines().last().unwrap_or_default(), ran.took);
}

/// The application's `--cfg smithy_tls="none"` on wasm32-wasip2: the generated crates hand the SDK
/// neither the host's client nor its clocks there (aws-config's loader sets no client, and the
/// SDK refuses a retrying client without a sleep), and the application's own serves
/// (smithy-wasi-http's, set by hand).
#[test]
fn the_none_override_leaves_the_sdk_without_the_hosts_client() {
    let moto = Moto::start();
    let component = component_without_a_client();
    let ran = run_component_at(&component, &[("S3_ENDPOINT", moto.url())]);
    assert!(!ran.ok, "no client, no request:\n{}", ran.stdout);
    assert!(ran.stdout.contains("WASI sdk_config http_client=unset"), "{}", ran.stdout);
    assert!(
        ran.stderr.contains("An async sleep implementation is required"),
        "the SDK has no sleep either:\n{}",
        tail(&ran.stderr, 5)
    );
    let ran = run_component_at(
        &component,
        &[("S3_ENDPOINT", moto.url()), ("S3_BUCKET", "wasi-none".into()), ("WIRING", "config".into())],
    );
    assert_workflow("none, the application's client", &ran, 300_000);
    println!("WASI smithy_tls=\"none\": no client from the generated crates; the application's own served");
}
