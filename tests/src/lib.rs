//! End-to-end harness: a scratch SDK tree made of crates fetched from the registry at test time,
//! rewritten by `smithy-tls`, built into a consumer application that talks to a local HTTPS mock
//! of S3 and STS.
#![allow(clippy::missing_panics_doc)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// Certificates, test servers and file helpers shared with the runtime's own tests.
pub use smithy_tls_test_support as support;

/// The published versions the harness fetches (pinned so runs are comparable).
pub const PUBLISHED: &[(&str, &str)] =
    &[("aws-config", "=1.13.0"), ("aws-sdk-sts", "=1.124.0"), ("aws-sdk-s3", "=1.157.0")];

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The workspace's cargo target dir (`CARGO_TARGET_DIR`, or `target/` in the repository).
pub fn workspace_target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo_root().join("target"))
}

/// Where the harness keeps its scratch trees (inside cargo's target dir, so CI caches and
/// cleans it like any build output).
pub fn scratch_root() -> PathBuf {
    workspace_target().join("e2e")
}

/// Where the scratch trees build: the workspace's own target dir. The registry crates they
/// share with the workspace build (aws-lc-sys, s2n-tls-sys and ring with their CMake and C
/// builds, tokio, hyper, rustls, ...) come out with the same cargo hashes there, dependencies
/// being built without debug info on both sides, so a run from a clean clone builds them once
/// instead of once for the workspace and once for the scratch trees.
pub fn scratch_target() -> PathBuf {
    workspace_target()
}

/// `cargo --locked` run in the scratch tree `dir`, building into [`scratch_target`], without
/// incremental state and debug info: the scratch trees are built once per run and never
/// debugged, and those two took 11 of the 12 GiB a full run's scratch builds left on disk (CI
/// machines can have less free space than that). `--locked`: the tree resolves from the lock
/// [`pin_lock`] gave it, or the command fails.
pub fn scratch_cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(dir).arg("--locked");
    lean_scratch_build(&mut cmd);
    cmd
}

/// Where the scratch workspaces' committed lock files are: `tests/locks/<name>.lock`.
pub fn locks_dir() -> PathBuf {
    repo_root().join("tests/locks")
}

/// Set (not empty, not `0`) by scripts/test-newest: the scratch workspaces resolve the newest
/// versions on the registry, and no committed lock is read or written.
pub const NEWEST_VAR: &str = "SMITHY_TLS_NEWEST";

/// Whether this run resolves the scratch workspaces afresh ([`NEWEST_VAR`]) without writing
/// their locks.
pub fn newest() -> bool {
    std::env::var_os(NEWEST_VAR).is_some_and(|value| !value.is_empty() && value != "0")
}

/// Gives the workspace at `dir` its committed lock file `tests/locks/<name>.lock`, so that
/// cargo resolves it from that lock (with `--locked`: [`scratch_cargo`]) and a release on the
/// registry changes nothing until the lock is refreshed. `scripts/bless` (the switch
/// `SMITHY_TLS_BLESS=1`) fits the committed lock to the manifests (cargo adds what they newly
/// depend on and drops what they no longer do, every other version kept) and writes it back;
/// without a committed lock (delete it to refresh every version) the workspace is resolved
/// afresh, with the newest versions. Call it with the workspace's manifests as cargo will read
/// them (after `apply`, which adds dependencies); a lock that does not fit them fails the next
/// `--locked` command, saying the lock needs an update. Under scripts/test-newest ([`newest`])
/// the workspace is resolved afresh and nothing is written.
pub fn pin_lock(dir: &Path, name: &str) {
    let committed = committed_lock(name);
    let lock = dir.join("Cargo.lock");
    if newest() {
        let _ = std::fs::remove_file(&lock);
        run(Command::new(env!("CARGO")).current_dir(dir).arg("generate-lockfile"));
    } else if support::regenerate() {
        let _ = std::fs::remove_file(&lock);
        if committed.exists() {
            std::fs::copy(&committed, &lock).unwrap_or_else(|e| panic!("copy {}: {e}", committed.display()));
            run(Command::new(env!("CARGO")).current_dir(dir).args(["metadata", "--format-version", "1"]));
        } else {
            run(Command::new(env!("CARGO")).current_dir(dir).arg("generate-lockfile"));
        }
        std::fs::create_dir_all(locks_dir()).expect("mkdir tests/locks");
        std::fs::copy(&lock, &committed).unwrap_or_else(|e| panic!("write {}: {e}", committed.display()));
    } else {
        std::fs::copy(&committed, &lock).unwrap_or_else(|e| {
            panic!(
                "no committed lock {} ({e}): make it with `scripts/bless test -p smithy-tls-e2e --test <this test>`",
                committed.display()
            )
        });
    }
}

/// The committed lock file `name`: `tests/locks/<name>.lock`.
pub fn committed_lock(name: &str) -> PathBuf {
    locks_dir().join(format!("{name}.lock"))
}

/// The lock name of a fetch of `published`: `fetch-` and each `name-version`, joined by `+`.
fn fetch_lock_name(published: &[(&str, &str)]) -> String {
    let parts: Vec<String> = published
        .iter()
        .map(|(name, requirement)| {
            let version: String =
                requirement.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-')).collect();
            format!("{name}-{version}")
        })
        .collect();
    format!("fetch-{}", parts.join("+"))
}

/// Points a command that runs `cargo` on scratch trees (directly or through a script) at
/// [`scratch_target`], with no incremental state and no debug info (see [`scratch_cargo`]).
pub fn lean_scratch_build(cmd: &mut Command) -> &mut Command {
    cmd.env("CARGO_TARGET_DIR", scratch_target())
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
}

/// Runs a command, failing the test with its output when it fails.
pub fn run(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    if !out.status.success() {
        panic!(
            "{shown} failed with {}\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            tail(&String::from_utf8_lossy(&out.stderr), 80)
        );
    }
    out
}

/// What a [`run_bounded`] command printed, whether it succeeded, and how long it took.
pub struct BoundedRun {
    /// Whether it exited with success.
    pub ok: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// From its start to its exit.
    pub took: std::time::Duration,
}

/// Runs `cmd` to its end, or kills it and fails the test after `limit` (with its last lines of
/// standard error). A failing command is not a failed test: the caller asserts on the run.
pub fn run_bounded(cmd: &mut Command, limit: std::time::Duration) -> BoundedRun {
    use std::io::Read as _;
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("wait for {cmd:?}: {e}")) {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran over {limit:?}: killed\n{}", tail(&stderr.join().unwrap_or_default(), 20));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    BoundedRun {
        ok: status.success(),
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
        took: started.elapsed(),
    }
}

/// The target triple `rustc` builds for by default here (`host:` of `rustc -vV`).
pub fn host_triple() -> String {
    let out = run(Command::new("rustc").arg("-vV"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// The package name in a cargo package id (cargo's JSON messages): `registry+URL#name@1.2.3`,
/// `path+file:///x/dir#name@1.2.3`, or `path+file:///x/name#1.2.3` (the directory's name is the
/// package's).
///
/// ```
/// use smithy_tls_e2e::package_name;
/// assert_eq!(package_name("path+file:///tmp/w/dir#my-crate@0.1.0"), "my-crate");
/// assert_eq!(package_name("path+file:///tmp/w/smithy-default-tls#0.1.0"), "smithy-default-tls");
/// ```
pub fn package_name(id: &str) -> String {
    let (url, fragment) = id.split_once('#').unwrap_or((id, ""));
    match fragment.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => url.rsplit('/').next().unwrap_or(url).to_owned(),
    }
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The `smithy-tls` binary, built from this workspace.
pub fn smithy_tls_binary() -> PathBuf {
    run(Command::new(env!("CARGO")).current_dir(repo_root()).args([
        "build",
        "-q",
        "-p",
        "smithy-tls-codegen",
        "--bin",
        "smithy-tls",
    ]));
    workspace_target().join("debug").join("smithy-tls")
}

/// Copies a directory tree, leaving out entries named in `skip` at any depth; fails the test
/// with the path and reason when it cannot.
pub fn copy_dir(from: &Path, to: &Path, skip: &[&str]) {
    support::copy_tree(from, to, skip).unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
}

/// Puts a copy of this repository's runtime crate at `<root>/smithy-default-tls`, where the
/// presets' `path = "smithy-default-tls"` points: sources and manifest, without the tests,
/// examples and their dev-dependencies (which point into this workspace), as a published copy
/// would be used.
pub fn copy_runtime_crate(root: &Path) {
    let dest = root.join("smithy-default-tls");
    copy_dir(&repo_root().join("runtime"), &dest, &["target", "tests", "examples"]);
    let manifest_path = dest.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest_path).expect("runtime manifest");
    let mut manifest: toml_edit::DocumentMut = text.parse().expect("runtime manifest parses");
    manifest.remove("dev-dependencies");
    std::fs::write(&manifest_path, manifest.to_string()).expect("write runtime manifest");
}

/// Whether a package belongs in an SDK tree (the SDK's crates and its runtime crates).
fn is_sdk_crate(name: &str) -> bool {
    name == "aws-config"
        || name.starts_with("aws-sdk-")
        || name.starts_with("aws-smithy-")
        || matches!(name, "aws-types" | "aws-runtime" | "aws-credential-types" | "aws-sigv4")
}

/// A scratch SDK tree: published crates side by side, our runtime crate beside them, and a
/// workspace manifest that patches crates.io to the tree (as an SDK repository does).
pub struct SdkTree {
    /// The tree's root.
    pub root: PathBuf,
    /// Package name → version of every crate copied in.
    pub crates: BTreeMap<String, String>,
}

/// Resolves `published` (name, version requirement) with cargo, in a scratch package at `fetch`
/// (recreated every time) from its committed lock ([`pin_lock`], named after `published`),
/// downloading what is missing into the cargo registry. Returns every SDK crate of the resolved
/// graph: name → [(version, source directory)]; a crate needed at two semver-incompatible
/// versions (0.x runtime crates across SDK eras) has one entry per version.
pub fn fetch_published(fetch: &Path, published: &[(&str, &str)]) -> BTreeMap<String, Vec<(String, PathBuf)>> {
    let _ = std::fs::remove_dir_all(fetch);
    std::fs::create_dir_all(fetch.join("src")).expect("mkdir fetch");
    let deps: String = published.iter().map(|(n, v)| format!("{n} = \"{v}\"\n")).collect();
    std::fs::write(
        fetch.join("Cargo.toml"),
        format!("[package]\nname = \"e2e-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n\n[dependencies]\n{deps}"),
    )
    .expect("write fetch manifest");
    std::fs::write(fetch.join("src/lib.rs"), "").expect("write fetch lib");
    pin_lock(fetch, &fetch_lock_name(published));
    let out =
        run(Command::new(env!("CARGO")).current_dir(fetch).args(["metadata", "--locked", "--format-version", "1"]));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let mut found: BTreeMap<String, Vec<(String, PathBuf)>> = BTreeMap::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name");
        if !is_sdk_crate(name) {
            continue;
        }
        let version = package["version"].as_str().expect("version").to_owned();
        let manifest = PathBuf::from(package["manifest_path"].as_str().expect("manifest_path"));
        found.entry(name.to_owned()).or_default().push((version, manifest.parent().expect("crate dir").to_path_buf()));
    }
    found
}

/// The scratch package that resolves a tree's published crates: the tree's own name plus
/// `.fetch`, so trees named `older-sts-1.34` and `older-sts-1.62` never share one while their
/// tests run in parallel (`with_extension` would map both to `older-sts-1.fetch`).
pub fn fetch_dir(root: &Path) -> PathBuf {
    let mut name = root.file_name().expect("a tree root has a name").to_os_string();
    name.push(".fetch");
    root.with_file_name(name)
}

/// Fetches `published` (name, version requirement) and everything they depend on from the
/// registry into a fresh tree at `root`, ready for `smithy-tls`. `members` (crates of the tree)
/// become workspace members so their own tests can run; `with_consumer` adds the consumer app.
pub fn prepare_sdk_tree(root: &Path, published: &[(&str, &str)], members: &[&str], with_consumer: bool) -> SdkTree {
    let _ = std::fs::remove_dir_all(root);
    let found = fetch_published(&fetch_dir(root), published);
    let mut crates = BTreeMap::new();
    let mut patches = String::new();
    for (name, versions) in &found {
        for (version, dir) in versions {
            let (key, dir_name) = if versions.len() == 1 {
                (name.clone(), name.clone())
            } else {
                (format!("{name}-{}", version.replace('.', "-")), format!("{name}-{version}"))
            };
            copy_dir(dir, &root.join(&dir_name), &["target"]);
            patches.push_str(&format!("{key} = {{ path = \"{dir_name}\", package = \"{name}\" }}\n"));
            crates.insert(dir_name, version.clone());
        }
    }
    copy_runtime_crate(root);
    let mut members: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    if with_consumer {
        let consumer = repo_root().join("tests/e2e-consumer");
        std::fs::create_dir_all(root.join("consumer/src")).expect("mkdir consumer");
        std::fs::copy(consumer.join("Cargo.toml.in"), root.join("consumer/Cargo.toml")).expect("consumer manifest");
        std::fs::copy(consumer.join("src/main.rs"), root.join("consumer/src/main.rs")).expect("consumer main");
        std::fs::create_dir_all(root.join("consumer/src/bin")).expect("mkdir consumer bin");
        std::fs::copy(consumer.join("src/bin/cold.rs"), root.join("consumer/src/bin/cold.rs")).expect("consumer cold");
        std::fs::copy(consumer.join("src/bin/components.rs"), root.join("consumer/src/bin/components.rs"))
            .expect("consumer components");
        members.push("\"consumer\"".to_owned());
    }
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "# Scratch SDK tree made by the smithy-tls end-to-end harness; not committed.\n\
             [workspace]\nresolver = \"2\"\nmembers = [{}]\n\n[patch.crates-io]\n{patches}",
            members.join(", ")
        ),
    )
    .expect("write tree manifest");
    SdkTree { root: root.to_path_buf(), crates }
}

/// The published crates plus the consumer in a fresh tree at `root`, rewritten with `preset`
/// (`None`: left as published, with upstream's default client). The variants measurements compare.
pub fn prepare_variant_tree(root: &Path, preset: Option<&str>) -> SdkTree {
    let tree = prepare_sdk_tree(root, PUBLISHED, &["aws-sdk-sts"], true);
    if let Some(preset) = preset {
        run(Command::new(smithy_tls_binary()).args(["apply", "--preset", preset]).arg(&tree.root));
    }
    // A lock records neither features nor target tables: one lock serves every preset but for
    // smithy-wasi-http (`lock_for`), and published_sdk's tree.
    pin_lock(&tree.root, &preset.map_or("published-untouched".to_owned(), |p| lock_for(PUBLISHED_REWRITTEN_LOCK, p)));
    tree
}

/// The lock of the published crates and the consumer (the tree of [`prepare_sdk_tree`] with
/// aws-sdk-sts and the consumer as members) once rewritten, by a preset that gives wasm32-wasip2
/// the host's HTTP; [`lock_for`] names the one for the others.
pub const PUBLISHED_REWRITTEN_LOCK: &str = "published-rewritten";

/// The preset whose rewrite tests/tests/wasi_http.rs builds for wasm32-wasip2 and runs under a
/// wasi:http host (codegen's, which `explain` cites).
pub use smithy_tls_codegen::suite_runs::WASI_RUN_PRESET;

/// The committed lock `base` names for a tree rewritten with the preset `preset`: `base` where
/// the preset has a `wasi-http` rule, `<base>-without-wasi-http` where it has none. Every preset
/// adds the runtime crate, and a lock records neither features nor target tables, so presets
/// differ in their locks only by smithy-wasi-http and what it depends on, there for every target
/// (cargo would drop them from a lock that has them, so `--locked` needs the right one).
///
/// ```
/// assert_eq!(smithy_tls_e2e::lock_for("published-rewritten", "platform-default"), "published-rewritten");
/// assert_eq!(smithy_tls_e2e::lock_for("monorepo", "fips"), "monorepo-without-wasi-http");
/// ```
pub fn lock_for(base: &str, preset: &str) -> String {
    let text = smithy_tls_codegen::presets::preset(preset).unwrap_or_else(|| panic!("no preset `{preset}`"));
    lock_for_policy(base, text)
}

/// [`lock_for`] a policy file's text.
pub fn lock_for_policy(base: &str, policy: smithy_tls_codegen::policy::PolicySource) -> String {
    let parsed = smithy_tls_codegen::policy::parse_policy(policy).unwrap_or_else(|d| panic!("the policy parses:\n{d}"));
    if parsed.policy.all_rules().any(|rule| rule.stack == smithy_tls_codegen::model::Stack::WasiHttp) {
        base.to_owned()
    } else {
        format!("{base}-without-wasi-http")
    }
}

/// Writes the application `name` into the tree at `tree` as a member of its workspace: `manifest`
/// as its Cargo.toml, and tests/<name>/src/main.rs.
pub fn add_application(tree: &Path, name: &str, manifest: &str) {
    let app = tree.join(name);
    std::fs::create_dir_all(app.join("src")).expect("mkdir the application");
    std::fs::write(app.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    let main = repo_root().join("tests").join(name).join("src/main.rs");
    std::fs::copy(&main, app.join("src/main.rs")).unwrap_or_else(|e| panic!("copy {}: {e}", main.display()));
    let root_manifest = tree.join("Cargo.toml");
    let mut workspace: toml_edit::DocumentMut =
        std::fs::read_to_string(&root_manifest).expect("the tree's manifest").parse().expect("parses");
    workspace["workspace"]["members"].as_array_mut().expect("members").push(name);
    std::fs::write(&root_manifest, workspace.to_string()).expect("write the tree's manifest");
}

/// The published crates of the S3 transfer manager's trees: it and the SDK crates it builds on.
pub const TRANSFER_MANAGER_PUBLISHED: &[(&str, &str)] =
    &[("aws-config", "=1.13.0"), ("aws-sdk-s3", "=1.157.0"), ("aws-sdk-s3-transfer-manager", "=0.3.1")];

/// A tree of [`TRANSFER_MANAGER_PUBLISHED`] at `root`, rewritten with `preset` (`None`: as
/// published), with tests/tm-consumer as a member and its committed lock
/// (`transfer-manager[-untouched]`). Returns the tree's root.
pub fn prepare_transfer_manager_tree(root: &Path, preset: Option<&str>) -> PathBuf {
    let tree = prepare_sdk_tree(root, TRANSFER_MANAGER_PUBLISHED, &[], false).root;
    if let Some(preset) = preset {
        run(Command::new(smithy_tls_binary()).args(["apply", "--preset", preset]).arg(&tree));
    }
    let manifest = std::fs::read_to_string(repo_root().join("tests/tm-consumer/Cargo.toml.in")).expect("Cargo.toml.in");
    add_application(&tree, "tm-consumer", &manifest);
    // A lock records neither features nor target tables, but a rewritten tree has the runtime.
    pin_lock(&tree, if preset.is_some() { "transfer-manager" } else { "transfer-manager-untouched" });
    tree
}

/// Runs the transfer manager's consumer `binary` (built from [`prepare_transfer_manager_tree`])
/// once: `object_bytes` up and down through a fresh mock, with its scratch files in `scratch`
/// (emptied first) and `adjust` applied to its command (given `scratch`). Returns the
/// cipher-suite lists the server saw, one per handshake.
pub fn transfer_manager_round_trip(
    binary: &Path,
    scratch: &Path,
    object_bytes: usize,
    adjust: impl FnOnce(&mut Command, &Path),
) -> Vec<Vec<u16>> {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch).expect("mkdir scratch");
    let mock = MockRun::start("smithy-tls transfer manager", scratch.join("ca.pem"));
    let mut cmd = consumer_command(binary, &mock.mock, scratch, &mock.bundle);
    cmd.env("TM_OBJECT_BYTES", object_bytes.to_string());
    adjust(&mut cmd, scratch);
    let out = run(&mut cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let done = format!("round trip: {object_bytes} bytes up and down");
    assert!(stdout.contains(&done), "{}: {stdout}", scratch.display());
    let hellos = mock.mock.server.stats.client_hellos();
    assert!(!hellos.is_empty(), "{}: the server saw no handshake", scratch.display());
    hellos.into_iter().map(|hello| hello.offered_suites).collect()
}

/// `cargo build -q --release -p e2e-consumer --no-default-features --features s3,config-defaults`
/// (without the connection report, which needs the runtime crate), plus `extra`, of `tree` into
/// `target`.
pub fn build_consumer_release(tree: &SdkTree, target: &Path, extra: &[&str]) {
    run(scratch_cargo(&tree.root)
        .env("CARGO_TARGET_DIR", target)
        .args([
            "build",
            "-q",
            "--release",
            "-p",
            "e2e-consumer",
            "--no-default-features",
            "--features",
            "s3,config-defaults",
        ])
        .args(extra));
}

/// A local HTTPS mock of the two services the consumer calls (on the shared test server).
pub struct MockAws {
    /// The server it runs on (`addr`; `stats` counts connections and handshakes).
    pub server: support::HttpsServer,
}

type Body = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

fn full(data: impl Into<bytes::Bytes>) -> Body {
    use http_body_util::BodyExt as _;
    http_body_util::Full::new(data.into()).boxed()
}

const CALLER_IDENTITY: &str = r#"<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>arn:aws:iam::123456789012:user/e2e</Arn>
    <UserId>AIDAE2EUSER</UserId>
    <Account>123456789012</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata><RequestId>e2e-request</RequestId></ResponseMetadata>
</GetCallerIdentityResponse>"#;

/// The one multipart upload id the mock hands out.
const UPLOAD_ID: &str = "e2e-upload";

/// Answers STS GetCallerIdentity, and S3 PUT (whole, or a multipart upload's parts) and GET
/// (whole, or one `Range: bytes=a-b`) of objects kept in `objects`; a body sent `aws-chunked` is
/// stored decoded.
async fn answer(
    req: http::Request<hyper::body::Incoming>,
    objects: &Mutex<BTreeMap<String, bytes::Bytes>>,
) -> Result<http::Response<Body>, std::convert::Infallible> {
    use http_body_util::BodyExt as _;
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (range, chunked) = (header("range"), header("content-encoding").is_some_and(|e| e.contains("aws-chunked")));
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let response = match (method.as_str(), path.as_str()) {
        ("POST", "/") if body.windows(17).any(|w| w == b"GetCallerIdentity") => {
            http::Response::builder().header("content-type", "text/xml").body(full(CALLER_IDENTITY))
        }
        ("POST", p) if p.starts_with("/e2e-bucket/") && query.split('&').any(|q| q == "uploads") => {
            let created = format!(
                "<InitiateMultipartUploadResult><Bucket>e2e-bucket</Bucket><Key>{}</Key>\
                 <UploadId>{UPLOAD_ID}</UploadId></InitiateMultipartUploadResult>",
                &p["/e2e-bucket/".len()..]
            );
            http::Response::builder().header("content-type", "application/xml").body(full(created))
        }
        ("PUT", p) if p.starts_with("/e2e-bucket/") => {
            let body = if chunked { decode_aws_chunked(&body) } else { body };
            // A part is kept under its number until the upload completes.
            let part = query.split('&').find_map(|q| q.strip_prefix("partNumber="));
            let key = match part {
                Some(number) => format!("{p}#{UPLOAD_ID}#{number:0>5}"),
                None => p.to_owned(),
            };
            objects.lock().expect("lock").insert(key, body);
            http::Response::builder().header("etag", "\"e2e\"").body(full(""))
        }
        ("POST", p) if query.contains(&format!("uploadId={UPLOAD_ID}")) => {
            let mut objects = objects.lock().expect("lock");
            let prefix = format!("{p}#{UPLOAD_ID}#");
            let parts: Vec<String> = objects.keys().filter(|k| k.starts_with(&prefix)).cloned().collect();
            let mut whole = Vec::new();
            for part in parts {
                whole.extend_from_slice(&objects.remove(&part).unwrap_or_default());
            }
            objects.insert(p.to_owned(), whole.into());
            let done = "<CompleteMultipartUploadResult><Bucket>e2e-bucket</Bucket><ETag>\"e2e\"</ETag>\
                        </CompleteMultipartUploadResult>";
            http::Response::builder().header("content-type", "application/xml").body(full(done))
        }
        ("GET", p) => match objects.lock().expect("lock").get(p).cloned() {
            Some(data) => match range.as_deref().and_then(|r| byte_range(r, data.len())) {
                Some((first, last)) => http::Response::builder()
                    .status(206)
                    .header("content-length", last + 1 - first)
                    .header("content-range", format!("bytes {first}-{last}/{}", data.len()))
                    .header("etag", "\"e2e\"")
                    .body(full(data.slice(first..=last))),
                None => http::Response::builder()
                    .header("content-length", data.len())
                    .header("etag", "\"e2e\"")
                    .body(full(data)),
            },
            None => http::Response::builder().status(404).body(full("<Error><Code>NoSuchKey</Code></Error>")),
        },
        _ => http::Response::builder().status(400).body(full("unexpected request")),
    };
    Ok(response.expect("response"))
}

/// The first and last byte of `bytes=a-b` (`b` capped at the object's end) in an object of `len`.
fn byte_range(range: &str, len: usize) -> Option<(usize, usize)> {
    let (first, last) = range.strip_prefix("bytes=")?.split_once('-')?;
    let first: usize = first.parse().ok()?;
    let end = len.checked_sub(1)?;
    let last = last.parse::<usize>().map_or(end, |last| last.min(end));
    (first <= last).then_some((first, last))
}

/// The payload of an `aws-chunked` body: `<hex size>[;ext]\r\n<data>\r\n` chunks up to the
/// zero-size one (the trailers after it are dropped).
fn decode_aws_chunked(body: &[u8]) -> bytes::Bytes {
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        rest = &rest[line_end + 2..];
        if size == 0 || rest.len() < size {
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
    out.into()
}

impl MockAws {
    /// Starts the mock on 127.0.0.1 with a certificate for `localhost` from `ca`.
    pub async fn start(ca: &support::TestCa) -> MockAws {
        MockAws::start_with_objects(ca, BTreeMap::new(), support::Alpn::H2AndHttp1).await
    }

    /// [`MockAws::start`], holding `objects` (by path, `/e2e-bucket/<key>`) from the start and
    /// offering `alpn`.
    pub async fn start_with_objects(
        ca: &support::TestCa,
        objects: BTreeMap<String, bytes::Bytes>,
        alpn: support::Alpn,
    ) -> MockAws {
        let identity = ca.leaf(&["localhost"]);
        let crypto = support::ring_crypto();
        let config = support::server_config(&identity, alpn, crypto);
        let objects: Arc<Mutex<BTreeMap<String, bytes::Bytes>>> = Arc::new(Mutex::new(objects));
        let server = support::HttpsServer::start(config, support::http_builder(), move || {
            let objects = Arc::clone(&objects);
            hyper::service::service_fn(move |req| {
                let objects = Arc::clone(&objects);
                async move { answer(req, &objects).await }
            })
        })
        .await;
        MockAws { server }
    }

    /// Where it listens.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.server.addr
    }
}

/// A [`MockAws`] for a consumer run: a fresh CA named `ca_name`, written to `bundle` (the
/// consumer's `SSL_CERT_FILE`), and the mock on a tokio runtime of its own, which it outlives
/// for as long as the value is kept.
pub struct MockRun {
    /// The mock (dropped before the runtime that serves it).
    pub mock: MockAws,
    /// The CA certificate the mock's leaf chains to, as a PEM file.
    pub bundle: PathBuf,
    /// The runtime serving the mock; other test servers of the run may start on it.
    pub runtime: tokio::runtime::Runtime,
}

impl MockRun {
    /// Starts it, creating `bundle`'s directory if needed.
    pub fn start(ca_name: &str, bundle: PathBuf) -> MockRun {
        let ca = support::TestCa::new(ca_name);
        if let Some(dir) = bundle.parent() {
            std::fs::create_dir_all(dir).expect("mkdir for the CA bundle");
        }
        std::fs::write(&bundle, &ca.pem).expect("write CA");
        let runtime = tokio::runtime::Runtime::new().expect("tokio");
        let mock = runtime.block_on(MockAws::start(&ca));
        MockRun { mock, bundle, runtime }
    }
}

/// A command for a consumer binary, with an environment that holds only what an SDK user's
/// would for this test: credentials and region from the environment, the endpoint of `mock`,
/// no profile files, IMDS off, and `bundle` as the trust store (SSL_CERT_FILE).
pub fn consumer_command(binary: &Path, mock: &MockAws, scratch: &Path, bundle: &Path) -> Command {
    let mut cmd = Command::new(binary);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch)
        .env("AWS_ACCESS_KEY_ID", "AKIDE2E")
        .env("AWS_SECRET_ACCESS_KEY", "e2e-secret")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", format!("https://localhost:{}", mock.addr().port()))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", scratch.join("no-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", scratch.join("no-credentials"))
        .env("SSL_CERT_FILE", bundle);
    cmd
}

/// What [`MockMetadata`] serves.
pub const MOCK_INSTANCE_ID: &str = "i-0e2e0e2e0e2e0e2e0";
/// The access key id [`MockMetadata`]'s container credentials carry.
pub const MOCK_ECS_ACCESS_KEY_ID: &str = "AKIDE2ECONTAINER";
/// Where [`MockMetadata`] serves container credentials (`AWS_CONTAINER_CREDENTIALS_FULL_URI`).
pub const MOCK_ECS_PATH: &str = "/v2/credentials/e2e";
/// The access key id of the credentials [`MockMetadata`]'s STS `AssumeRoleWithWebIdentity`
/// answer carries (a `POST /`, with the mock as `AWS_ENDPOINT_URL_STS`).
pub const MOCK_WEB_IDENTITY_ACCESS_KEY_ID: &str = "ASIAE2EWEBIDENTITY";

/// A plain-HTTP mock on 127.0.0.1 of what aws-config's components call without a client
/// configured: the EC2 instance metadata service (IMDSv2 token, then a metadata path), the
/// container credentials endpoint, and STS's `AssumeRoleWithWebIdentity` (the web-identity
/// provider's STS client, made from `ProviderConfig::client_config()`). Counts the requests it
/// answered.
pub struct MockMetadata {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// Requests answered with 200, by path.
    pub served: Arc<Mutex<BTreeMap<String, usize>>>,
    task: tokio::task::JoinHandle<()>,
}

const IMDS_TOKEN: &str = "e2e-imds-token";

fn metadata_answer(req: &http::Request<hyper::body::Incoming>) -> http::Response<Body> {
    let path = req.uri().path();
    let token_ok = req.headers().get("x-aws-ec2-metadata-token").is_some_and(|v| v == IMDS_TOKEN);
    let reply =
        |status: u16, body: String| http::Response::builder().status(status).body(full(body)).expect("response");
    match (req.method().as_str(), path) {
        ("PUT", "/latest/api/token") if req.headers().contains_key("x-aws-ec2-metadata-token-ttl-seconds") => {
            http::Response::builder()
                .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
                .body(full(IMDS_TOKEN))
                .expect("response")
        }
        ("GET", "/latest/meta-data/instance-id") if token_ok => reply(200, MOCK_INSTANCE_ID.to_owned()),
        ("GET", "/latest/meta-data/instance-id") => reply(401, String::new()),
        ("GET", MOCK_ECS_PATH) => reply(
            200,
            format!(
                r#"{{"AccessKeyId":"{MOCK_ECS_ACCESS_KEY_ID}","SecretAccessKey":"e2e-secret","Token":"e2e-token","Expiration":"2099-01-01T00:00:00Z"}}"#
            ),
        ),
        // STS (query protocol): every call is a form POST to the endpoint's root.
        ("POST", "/") if req.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"application/x-www-form-urlencoded")) => {
            http::Response::builder()
                .header("content-type", "text/xml")
                .body(full(format!(
                    "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\
                     <AssumeRoleWithWebIdentityResult><Credentials>\
                     <AccessKeyId>{MOCK_WEB_IDENTITY_ACCESS_KEY_ID}</AccessKeyId><SecretAccessKey>e2e-secret</SecretAccessKey>\
                     <SessionToken>e2e-token</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
                     </Credentials></AssumeRoleWithWebIdentityResult>\
                     <ResponseMetadata><RequestId>e2e</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>"
                )))
                .expect("response")
        }
        _ => reply(404, String::new()),
    }
}

impl MockMetadata {
    /// Starts the mock on 127.0.0.1 (HTTP/1.1, no TLS: both services are plain HTTP).
    pub async fn start() -> MockMetadata {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let served: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let counts = Arc::clone(&served);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let counts = Arc::clone(&counts);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let response = metadata_answer(&req);
                        if response.status() == 200 {
                            *counts.lock().expect("lock").entry(req.uri().path().to_owned()).or_default() += 1;
                        }
                        async move { Ok::<_, std::convert::Infallible>(response) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        MockMetadata { addr, served, task }
    }

    /// The requests answered with 200 for `path`.
    pub fn served(&self, path: &str) -> usize {
        self.served.lock().expect("lock").get(path).copied().unwrap_or(0)
    }
}

impl Drop for MockMetadata {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The provider `preset`'s rule gives the builtin target `triple`, if it gives one (the rule that
/// serves it: the first whose cfg matches, else the fallback).
///
/// ```
/// use smithy_tls_codegen::model::Provider;
/// let linux = smithy_tls_e2e::rule_provider("platform-default", "x86_64-unknown-linux-gnu");
/// assert_eq!(linux, Some(Provider::S2nTls));
/// assert_eq!(smithy_tls_e2e::rule_provider("platform-default", "wasm32-wasip1"), None);
/// ```
pub fn rule_provider(preset: &str, triple: &str) -> Option<smithy_tls_codegen::model::Provider> {
    rule_stack(preset, triple).provider()
}

/// The stack (provider and roots) `preset`'s rule gives the builtin target `triple`.
///
/// ```
/// use smithy_tls_codegen::model::Roots;
/// let musl = smithy_tls_e2e::rule_stack("platform-default", "x86_64-unknown-linux-musl");
/// assert_eq!(musl.roots(), Some(Roots::Native));
/// ```
pub fn rule_stack(preset: &str, triple: &str) -> smithy_tls_codegen::model::Stack {
    smithy_tls_codegen::presets::stack_for(preset, triple).unwrap_or_else(|| panic!("`{preset}` on `{triple}`"))
}

/// The preset whose consumer `published_sdk.rs` builds and runs on the host `triple` in place
/// of `preset`'s: the first of `presets` (in the order they run) before it whose rule there has
/// the same stack, since the two binaries would differ only in which rule chose it (README:
/// "runs as <that preset>"). `None`: `preset`'s consumer is built and run itself.
///
/// ```
/// let all = ["platform-default", "rustls-everywhere", "portable"];
/// let host = "x86_64-unknown-linux-gnu";
/// // portable's host rule gives rustls-aws-lc with native roots, as rustls-everywhere's does.
/// assert_eq!(smithy_tls_e2e::host_twin(&all, "portable", host), Some("rustls-everywhere"));
/// assert_eq!(smithy_tls_e2e::host_twin(&all, "rustls-everywhere", host), None);
/// assert_eq!(smithy_tls_e2e::host_twin(&all[2..], "portable", host), None);
/// ```
pub fn host_twin<'a>(presets: &[&'a str], preset: &str, triple: &str) -> Option<&'a str> {
    let stack = rule_stack(preset, triple);
    presets.iter().take_while(|p| **p != preset).find(|p| rule_stack(p, triple) == stack).copied()
}
