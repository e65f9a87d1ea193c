//! The application's override, end to end on published crates: aws-sdk-sts and aws-config
//! (fetched at test time), rewritten with the platform-default preset, and the consumer app
//! beside them, which sets `--cfg smithy_tls="VALUE"` in its RUSTFLAGS, and turns the runtime's
//! feature of that value on where the SDK crates did not ask for it and the cfg alone cannot
//! select it (openssl, the FIPS values, s2n-tls off linux-gnu).
//!
//! - Graphs (`cargo tree`, nothing built): on x86_64 and aarch64 linux-gnu, musl, windows-gnu,
//!   windows-msvc and Apple, each value leaves exactly its provider's native libraries in the
//!   consumer's graph (`none` and `rustls-custom`: none at all); a value that needs its feature
//!   leaves nothing native without it.
//! - Builds and runs on this host (linux-gnu, whose policy rule is s2n-tls): `openssl` without its
//!   feature is refused with the line to add; `rustls-aws-lc` (rustls 0.23), `s2n-tls`, `openssl`
//!   (with its feature) and `rustls-ring` (in one build with `smithy_tls_roots="platform-verifier"`)
//!   connect to a local TLS server with the chosen provider, as `TlsInfo` and the `info` event report;
//!   `rustls-custom` connects with the provider the app installs and fails clearly without one;
//!   `none` compiles and fails at send with the SDK's error naming the cfg.
//! - `experimental-rustls-024` beside `rustls-aws-lc`: rustls 0.24 in the graph, aws-lc the only
//!   native library, and a run that connects on the in-place backend.
//! - A cross-target `cargo check` for aarch64-unknown-linux-gnu with `rustls-ring` builds no
//!   s2n-tls-sys and no aws-lc-sys.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::model::Provider;
use smithy_tls_codegen::native_build::libraries;
use smithy_tls_e2e::{
    consumer_command, package_name, pin_lock, prepare_sdk_tree, rule_provider, run, scratch_root, smithy_tls_binary,
    tail, MockRun, PUBLISHED, PUBLISHED_REWRITTEN_LOCK,
};

/// The targets whose graphs are checked for every value.
const GRAPH_TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "x86_64-pc-windows-gnu",
    "x86_64-pc-windows-msvc",
    "aarch64-apple-darwin",
];

/// Every native library some provider compiles (crate names).
const NATIVE: &[&str] = &["aws-lc-sys", "aws-lc-fips-sys", "ring", "s2n-tls-sys", "openssl-sys"];

/// Every override value: the providers, and `none`.
fn values() -> Vec<&'static str> {
    Provider::ALL.iter().map(|p| p.name()).chain(["none"]).collect()
}

/// The native libraries `value` compiles, or `None` where the runtime's build script refuses it
/// for `target` (s2n-tls off Linux and macOS, openssl off the systems that ship it; the FIPS
/// module off Linux gnu/musl x86_64/aarch64).
fn expected(value: &str, target: &str) -> Option<BTreeSet<&'static str>> {
    let Some(provider) = Provider::from_name(value) else { return Some(BTreeSet::new()) };
    let info = cfg_expr::targets::get_builtin_target_by_triple(target).expect("a builtin target");
    let os = info.os.as_ref().map_or("", |os| os.as_str());
    let env = info.env.as_ref().map_or("", |env| env.as_str());
    let only_on = provider.only_on_os();
    let refused = (!only_on.is_empty() && !only_on.contains(&os))
        || (provider.is_fips() && !smithy_tls_codegen::model::fips_module_builds(os, info.arch.as_str(), env));
    (!refused).then(|| libraries(provider).iter().map(|l| l.crate_name()).collect())
}

/// `--cfg smithy_tls="VALUE"`, as RUSTFLAGS carries it.
fn rustflags(value: &str) -> String {
    format!("--cfg smithy_tls=\"{value}\"")
}

/// The rewritten tree, with its committed lock.
fn rewritten_tree(name: &str) -> PathBuf {
    let tree = prepare_sdk_tree(&scratch_root().join(name), PUBLISHED, &["aws-sdk-sts"], true).root;
    run(Command::new(smithy_tls_binary()).args(["apply", "--preset", "platform-default"]).arg(&tree));
    pin_lock(&tree, PUBLISHED_REWRITTEN_LOCK);
    tree
}

/// The packages in the consumer's graph for `target` with the consumer's `features`, under
/// `value` where given: each name with the versions of it (`v0.24.0-dev.2`).
fn graph(tree: &Path, target: &str, value: Option<&str>, features: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut cmd = Command::new(env!("CARGO"));
    if let Some(value) = value {
        cmd.env("RUSTFLAGS", rustflags(value));
    }
    let out = run(cmd
        .current_dir(tree)
        .args(["tree", "--locked", "-p", "e2e-consumer", "--no-default-features", "--features", features])
        .args(["--target", target, "-e", "normal,build", "--prefix", "none", "--format", "{p}"]));
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut words = line.split_whitespace();
        if let (Some(name), Some(version)) = (words.next(), words.next()) {
            packages.entry(name.to_owned()).or_default().insert(version.to_owned());
        }
    }
    packages
}

/// The native libraries among `packages`.
fn native(packages: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<&'static str> {
    NATIVE.iter().copied().filter(|n| packages.contains_key(*n)).collect()
}

/// Whether `packages` has rustls 0.24.
fn has_rustls_024(packages: &BTreeMap<String, BTreeSet<String>>) -> bool {
    packages.get("rustls").is_some_and(|versions| versions.contains("v0.24.0-dev.2"))
}

/// Whether the cfg alone selects `value` on `target` in the platform-default tree (the provider
/// table's reach, against the provider the preset chose there); the others need the runtime's
/// feature from the application. The graph test asserts how many cells are which.
fn cfg_alone(value: &str, target: &str) -> bool {
    let rule = rule_provider("platform-default", target).unwrap_or_else(|| panic!("{target}: a rule with a provider"));
    Provider::from_name(value).is_none_or(|provider| !provider.override_needs_feature(rule))
}

/// The consumer's features for `value` on `target`: the runtime's feature beside the cfg where
/// the cfg alone does not select it, as the application's Cargo.toml line the build error names
/// turns it on (given on the command line: a feature of the consumer's own would put the crates
/// in every lock the consumer is resolved in, legacy_stack.rs's included).
fn features_for(value: &str, target: &str) -> String {
    if cfg_alone(value, target) {
        "report-connections".to_owned()
    } else {
        format!("report-connections,smithy-default-tls/{value}")
    }
}

#[test]
fn every_value_leaves_only_its_providers_libraries_in_the_graph() {
    let tree = rewritten_tree("override-graphs");
    let (mut checked, mut with_feature, mut refused) = (0, 0, 0);
    for target in GRAPH_TARGETS {
        for value in values() {
            // build.rs refuses these (tests build_script.rs shows with which message).
            let Some(expected) = expected(value, target) else {
                refused += 1;
                continue;
            };
            if !cfg_alone(value, target) {
                // Without the feature the value's own crates are not in the graph (nor in the
                // lock): at most what the crates it shares with the SDK's provider bring (s2n-tls's
                // under s2n-tls-fips), never the FIPS module; build.rs stops the build saying
                // which line to add.
                let bare = native(&graph(&tree, target, Some(value), "report-connections"));
                assert!(
                    bare.is_subset(&expected) && !bare.contains("aws-lc-fips-sys"),
                    "{target} {value} without its feature: {bare:?}"
                );
                with_feature += 1;
            }
            let packages = graph(&tree, target, Some(value), &features_for(value, target));
            assert!(packages.contains_key("smithy-default-tls"), "{target} {value}: the runtime is in the graph");
            assert_eq!(
                native(&packages),
                expected,
                "{target}, --cfg smithy_tls=\"{value}\": native libraries in the graph"
            );
            // The carrier is the FIPS values' gate under their override; under any other it is
            // out of the graph, and with it the crypto features the SDK crates asked for.
            let gated = matches!(value, "rustls-aws-lc-fips" | "s2n-tls-fips");
            assert_eq!(
                packages.contains_key("smithy-default-tls-crypto"),
                gated,
                "{target} {value}: the carrier is in the graph only as a FIPS override's gate"
            );
            checked += 1;
        }
    }
    // Unset: the policy's choice, as before (s2n-tls on linux-gnu, rustls-aws-lc on musl).
    let unset = |target: &str| native(&graph(&tree, target, None, "report-connections"));
    assert_eq!(unset("x86_64-unknown-linux-gnu"), BTreeSet::from(["aws-lc-sys", "s2n-tls-sys"]));
    assert_eq!(unset("x86_64-unknown-linux-musl"), BTreeSet::from(["aws-lc-sys"]));
    println!(
        "E2E override graphs: {checked} (target, value) pairs, each with one provider's libraries; \
         {with_feature} of them need the runtime's feature and hold nothing native without it; \
         {refused} refused by build.rs"
    );
    // 6 targets × 8 values: s2n-tls off Linux and macOS (2), openssl off Linux (3), the FIPS
    // values off Linux (2 × 3).
    assert_eq!((checked, with_feature, refused), (37, 11, 11), "the cells this test covers");
    let _ = std::fs::remove_dir_all(&tree);
}

/// The host, the one target the consumer is built for and run on here.
const HOST: &str = "x86_64-unknown-linux-gnu";

/// The consumer's build with `value`, unrun.
fn consumer_build(tree: &Path, value: &str, features: &str) -> Command {
    consumer_build_with(tree, &rustflags(value), features)
}

/// The consumer's build with `flags` as RUSTFLAGS, unrun. Every build shares one target dir:
/// with `--target`, RUSTFLAGS reach only the target's crates, so the build scripts and proc
/// macros are built once for every value, and cargo keeps each value's crates apart (RUSTFLAGS
/// are part of their file names).
fn consumer_build_with(tree: &Path, flags: &str, features: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(tree)
        .env("RUSTFLAGS", flags)
        .env("CARGO_TARGET_DIR", scratch_root().join("override-target"))
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .args(["build", "-q", "--locked", "-p", "e2e-consumer", "--no-default-features", "--features", features])
        .args(["--target", HOST]);
    cmd
}

/// The native libraries in the consumer's graph for `target` with the rustflags of the tree's
/// `.cargo/config.toml` (`RUSTFLAGS` left unset) or of `rustflags` (set, as a CI job exports it).
fn natives_with_config(tree: &Path, target: &str, rustflags: Option<&str>) -> BTreeSet<&'static str> {
    let env: Vec<(&str, &str)> = rustflags.map(|flags| ("RUSTFLAGS", flags)).into_iter().collect();
    natives_with_env(tree, target, &env)
}

/// [`natives_with_config`] with exactly the rustflags variables of `env` set.
fn natives_with_env(tree: &Path, target: &str, env: &[(&str, &str)]) -> BTreeSet<&'static str> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.env_remove("CARGO_ENCODED_RUSTFLAGS").env_remove("RUSTFLAGS").envs(env.iter().copied());
    let out = run(cmd
        .current_dir(tree)
        .args(["tree", "--locked", "-p", "e2e-consumer", "--no-default-features", "--features", "report-connections"])
        .args(["--target", target, "-e", "normal,build", "--prefix", "none", "--format", "{p}"]));
    let names: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    NATIVE.iter().copied().filter(|n| names.contains(*n)).collect()
}

/// README's recipe, in the forms it documents: the cfg in the application's `.cargo/config.toml`
/// under `[build] rustflags`; a `[target.<triple>]` or `[target.'cfg(..)']` rustflags entry, which
/// replaces `[build]`'s for the targets it matches only; and `RUSTFLAGS`, which replaces them all,
/// so that a CI job exporting `-D warnings` brings the crates' own providers back.
#[test]
fn the_config_file_forms_set_the_override_and_rustflags_replaces_them() {
    let tree = rewritten_tree("override-config");
    std::fs::create_dir_all(tree.join(".cargo")).expect("mkdir .cargo");
    let config = tree.join(".cargo/config.toml");
    let (gnu, arm) = ("x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu");
    let own = BTreeSet::from(["aws-lc-sys", "s2n-tls-sys"]);
    std::fs::write(&config, "[build]\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-ring\\\"\"]\n").expect("config");
    assert_eq!(natives_with_config(&tree, gnu, None), BTreeSet::from(["ring"]), "[build] rustflags");
    assert_eq!(natives_with_config(&tree, gnu, Some("-D warnings")), own, "RUSTFLAGS replaces [build] rustflags");
    let per_target = format!(
        "{}\n[target.{arm}]\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-aws-lc\\\"\"]\n",
        std::fs::read_to_string(&config).expect("config")
    );
    std::fs::write(&config, per_target).expect("config");
    assert_eq!(natives_with_config(&tree, arm, None), BTreeSet::from(["aws-lc-sys"]), "[target.{arm}] rustflags");
    assert_eq!(natives_with_config(&tree, gnu, None), BTreeSet::from(["ring"]), "[build] still serves {gnu}");
    assert_eq!(natives_with_config(&tree, arm, Some("-D warnings")), own, "RUSTFLAGS replaces [target.{arm}] too");
    // CARGO_ENCODED_RUSTFLAGS (flags split by 0x1f) comes first, before RUSTFLAGS.
    let encoded = "--cfg\u{1f}smithy_tls=\"rustls-ring\"";
    let both = [("CARGO_ENCODED_RUSTFLAGS", encoded), ("RUSTFLAGS", "-D warnings")];
    assert_eq!(natives_with_env(&tree, arm, &both), BTreeSet::from(["ring"]), "CARGO_ENCODED_RUSTFLAGS first");
    // A `[target.'cfg(..)']` entry works the same way, for every target it matches.
    let by_cfg = "[build]\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-ring\\\"\"]\n\
                  [target.'cfg(target_arch = \"aarch64\")']\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-aws-lc\\\"\"]\n";
    std::fs::write(&config, by_cfg).expect("config");
    assert_eq!(natives_with_config(&tree, arm, None), BTreeSet::from(["aws-lc-sys"]), "[target.'cfg(..)'] rustflags");
    assert_eq!(
        natives_with_config(&tree, gnu, None),
        BTreeSet::from(["ring"]),
        "[build] where the cfg entry does not match"
    );
    // A `[target.<triple>]` and a `[target.'cfg(..)']` entry that both match are joined: both
    // values reach the graph (the runtime's build then refuses the cfg set twice).
    let joined = format!(
        "[target.{arm}]\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-ring\\\"\"]\n\
         [target.'cfg(target_arch = \"aarch64\")']\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-aws-lc\\\"\"]\n"
    );
    std::fs::write(&config, joined).expect("config");
    assert_eq!(natives_with_config(&tree, arm, None), BTreeSet::from(["aws-lc-sys", "ring"]), "joined entries");
    assert_eq!(natives_with_config(&tree, gnu, None), own, "neither entry matches {gnu}");
    // Cargo reads the config of the directory it runs in and of its parents: from the consumer's
    // directory, the workspace's file still serves.
    std::fs::write(&config, "[build]\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-ring\\\"\"]\n").expect("config");
    assert_eq!(natives_with_config(&tree.join("consumer"), gnu, None), BTreeSet::from(["ring"]), "a parent's config");
    // A dependency's own config is never read: an SDK crate (here aws-config, a path crate of the
    // tree) cannot set the override for its users.
    std::fs::remove_file(&config).expect("remove the workspace's config");
    let dependency = tree.join("aws-config/.cargo");
    std::fs::create_dir_all(&dependency).expect("mkdir");
    std::fs::write(
        dependency.join("config.toml"),
        "[build]\nrustflags = [\"--cfg\", \"smithy_tls=\\\"rustls-ring\\\"\"]\n",
    )
    .expect("a dependency's config");
    assert_eq!(natives_with_config(&tree, gnu, None), own, "a dependency's config is not read");
    println!(
        "E2E override config forms: [build] and [target] rustflags select the provider; RUSTFLAGS replaces them, \
         CARGO_ENCODED_RUSTFLAGS comes first; matching [target] entries are joined; a parent directory's config \
         is read, a dependency's is not"
    );
    let _ = std::fs::remove_dir_all(&tree);
}

/// A consumer build: the binary, and what cargo did for it.
struct Built {
    /// The binary, copied into the tree before another build replaces it.
    binary: PathBuf,
    /// The packages whose crates this build compiled (cargo's `fresh: false`).
    compiled: BTreeSet<String>,
    /// The packages whose crates it found built (`fresh: true`).
    fresh: BTreeSet<String>,
    /// Each package's build-script output directories (where aws-lc's and ring's C builds live),
    /// one for the target and one for the host where a package is both.
    out_dirs: BTreeMap<String, BTreeSet<PathBuf>>,
}

/// Builds the consumer (STS and aws-config, the connection report, and `extra` features) with
/// `value`.
fn build_consumer(tree: &Path, value: &str, extra: &str) -> Built {
    let base = features_for(value, HOST);
    let features = if extra.is_empty() { base } else { format!("{base},{extra}") };
    build_consumer_with(tree, &rustflags(value), value, &features)
}

/// [`build_consumer`] with `flags` as RUSTFLAGS and exactly `features` (`case` names it).
fn build_consumer_with(tree: &Path, flags: &str, case: &str, features: &str) -> Built {
    // The shared target dir has one binary: each build and its copy at a time.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let out = run(consumer_build_with(tree, flags, features).arg("--message-format=json-render-diagnostics"));
    // The runtime is a path crate of the tree, so cargo shows its warnings: there must be none
    // under the override (unexpected_cfgs, dead code of the providers left out).
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| (l.starts_with("warning") && l.contains("smithy-default-tls")) || l.contains("unexpected `cfg`"))
        .collect();
    assert!(warnings.is_empty(), "{case}: the build warned:\n{}", tail(&stderr, 40));
    let built = scratch_root().join("override-target").join(HOST).join("debug/e2e-consumer");
    let binary = tree.join(format!("e2e-consumer-{}", case.replace(' ', "-")));
    std::fs::copy(&built, &binary).unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
    let (mut compiled, mut fresh, mut out_dirs) =
        (BTreeSet::new(), BTreeSet::new(), BTreeMap::<String, BTreeSet<PathBuf>>::new());
    for message in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(message) else { continue };
        let name = package_name(message["package_id"].as_str().unwrap_or_default());
        match message["reason"].as_str() {
            Some("compiler-artifact") if message["fresh"] == true => {
                fresh.insert(name);
            }
            Some("compiler-artifact") => {
                compiled.insert(name);
            }
            Some("build-script-executed") => {
                let dir = PathBuf::from(message["out_dir"].as_str().unwrap_or_default());
                out_dirs.entry(name).or_default().insert(dir);
            }
            _ => {}
        }
    }
    Built { binary, compiled, fresh, out_dirs }
}

/// Runs the consumer against a local mock of STS with the app's own trust store; (success,
/// stdout, stderr).
fn run_consumer(tree: &Path, binary: &Path, install_crypto: bool) -> (bool, String, String) {
    let scratch = tree.join("run");
    let run = MockRun::start("override CA", scratch.join("ca.pem"));
    let mut cmd = consumer_command(binary, &run.mock, &scratch, &run.bundle);
    if install_crypto {
        cmd.env("E2E_INSTALL_CRYPTO", "1");
    }
    let out = cmd.output().expect("run the consumer");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts a run that connected with `provider`, on native roots (the host rule's), chosen by
/// the application.
fn assert_connected_with(value: &str, run: &(bool, String, String)) {
    assert_connected_with_roots(value, "native", run);
}

/// README's way to check: the runtime's `info` event naming the provider it used; and every
/// connection made with `library`.
fn assert_announced_and_served_by(value: &str, library: &str, run: &(bool, String, String)) {
    let announcement = "the application's --cfg smithy_tls chose this client's TLS stack";
    let announced = run.2.lines().find(|l| l.contains(announcement));
    let announced = announced.unwrap_or_else(|| panic!("{value}: no info event on stderr:\n{}", tail(&run.2, 20)));
    assert!(
        announced.contains(" INFO ") && announced.contains(&format!("used_provider={value}")),
        "{value}: the info event names the provider used: {announced}"
    );
    let conns = run.1.lines().filter(|l| l.starts_with("CONN "));
    assert!(conns.clone().all(|l| l.contains(&format!("library={library}"))), "{value}:\n{}", run.1);
}

/// [`assert_connected_with`] on `roots`.
fn assert_connected_with_roots(value: &str, roots: &str, run: &(bool, String, String)) {
    let (ok, stdout, stderr) = run;
    assert!(ok, "{value}: the consumer failed:\n{stdout}\n{}", tail(stderr, 30));
    assert!(stdout.contains("STS account=123456789012"), "{value}:\n{stdout}");
    let conns: Vec<&str> = stdout.lines().filter(|l| l.starts_with("CONN ")).collect();
    assert!(!conns.is_empty(), "{value}: no CONN line:\n{stdout}");
    for line in conns {
        assert!(
            line.contains(&format!("provider={value} roots={roots} chosen_by=application")),
            "{value}: TlsInfo must report the application's provider: {line}"
        );
    }
}

#[test]
fn each_value_builds_and_runs_with_the_chosen_provider() {
    let tree = rewritten_tree("override-runs");
    // openssl's crates are not in the lock of a tree whose crates never ask for it: the cfg alone
    // stops the build, and the error names the line that adds them (then built below with it).
    let refused = consumer_build(&tree, "openssl", "report-connections").output().expect("run cargo");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "openssl without its feature must not build");
    assert!(
        stderr.contains("turn the runtime's `openssl` feature on")
            && stderr.contains(r#"smithy-default-tls = { version = "0.1", features = ["openssl"] }"#),
        "the refusal names the feature line:\n{}",
        tail(&stderr, 20)
    );
    println!("E2E override openssl without its feature: refused, naming the Cargo.toml line");
    // rustls-ring is built and run with platform-verifier roots beside it, in
    // `the_roots_override_builds_serves_and_refuses_as_documented`: each value's build is a
    // build of the whole graph (RUSTFLAGS reach every crate), so one build serves both.
    let served = [("rustls-aws-lc", "rustls 0.23"), ("s2n-tls", "s2n-tls"), ("openssl", "OpenSSL")];
    let mut aws_lc_builds = Vec::new();
    for (value, library) in served {
        let built = build_consumer(&tree, value, "log-events");
        let run = run_consumer(&tree, &built.binary, false);
        assert_connected_with(value, &run);
        assert_announced_and_served_by(value, library, &run);
        aws_lc_builds.extend(built.out_dirs.get("aws-lc-sys").map(|dirs| (value, dirs.clone())));
        println!("E2E override {value}: connected, TlsInfo provider={value} chosen_by=application library={library}");
    }
    // README: each set of flags is a build of its own. rustls-aws-lc and s2n-tls ask for the same
    // aws-lc-sys, yet each value compiled it (its C library too: an output directory each); going
    // back to a value built before compiles nothing and finds that value's own aws-lc build.
    let [(_, rustls_aws_lc), (_, s2n)] = aws_lc_builds.as_slice() else {
        panic!("rustls-aws-lc and s2n-tls both build aws-lc-sys: {aws_lc_builds:?}")
    };
    assert_ne!(rustls_aws_lc, s2n, "each value has its own aws-lc build");
    let again = build_consumer(&tree, "rustls-aws-lc", "log-events");
    assert!(again.compiled.is_empty(), "flags built before compile nothing: {:?}", again.compiled);
    assert!(again.fresh.contains("aws-lc-sys"), "the rebuild found aws-lc-sys built: {:?}", again.fresh);
    assert_eq!(again.out_dirs.get("aws-lc-sys"), Some(rustls_aws_lc), "rustls-aws-lc's own aws-lc build is kept");
    assert_eq!(rustls_aws_lc.len(), 1, "aws-lc-sys is built for the target only: {rustls_aws_lc:?}");
    println!("E2E override rebuilds: aws-lc built once per value; back to rustls-aws-lc: nothing compiled");

    let binary = build_consumer(&tree, "rustls-custom", "custom-crypto").binary;
    let installed = run_consumer(&tree, &binary, true);
    assert!(installed.1.contains("CRYPTO installed=true"), "{}", installed.1);
    assert_connected_with("rustls-custom", &installed);
    let (ok, stdout, stderr) = run_consumer(&tree, &binary, false);
    assert!(!ok, "rustls-custom without a provider must fail:\n{stdout}");
    assert!(
        stderr.contains("found no rustls CryptoProvider") && stderr.contains("set_custom_crypto_provider"),
        "rustls-custom without a provider: the error must say what to do:\n{}",
        tail(&stderr, 20)
    );
    println!("E2E override rustls-custom: connected with the app's provider; without one: {}", tail(&stderr, 1));

    let binary = build_consumer(&tree, "none", "").binary;
    let (ok, stdout, stderr) = run_consumer(&tree, &binary, false);
    assert!(!ok, "none: the request must fail:\n{stdout}");
    assert!(stdout.contains("SDKCONFIG http_client=set"), "none: the SDK still gets the runtime's client:\n{stdout}");
    assert!(
        stderr.contains("smithy_tls=\"none\"") && stderr.contains("http_client"),
        "none: the SDK's error must name the cfg and the way out:\n{}",
        tail(&stderr, 20)
    );
    println!("E2E override none: failed at send: {}", tail(&stderr, 1));
    let _ = std::fs::remove_dir_all(&tree);
}

/// `experimental-rustls-024` beside `--cfg smithy_tls="rustls-aws-lc"` (the consumer's `rustls-024`
/// feature turns it on in the runtime): rustls 0.24 joins the graph and aws-lc stays its only
/// native library; beside `rustls-ring` it brings neither. Built and run here, the consumer
/// connects with rustls-aws-lc as the application chose, through the in-place backend, the one
/// rustls-aws-lc backend such a build links (native roots).
#[test]
fn the_rustls_024_path_under_the_rustls_aws_lc_override() {
    let tree = rewritten_tree("override-rustls-024");
    let target = "x86_64-unknown-linux-gnu";
    let features = "report-connections,rustls-024";
    let aws_lc = graph(&tree, target, Some("rustls-aws-lc"), features);
    assert!(has_rustls_024(&aws_lc), "rustls 0.24 is in the graph: {aws_lc:?}");
    assert!(aws_lc.contains_key("rustls-aws-lc-rs"), "its aws-lc-rs provider is in the graph: {aws_lc:?}");
    assert_eq!(native(&aws_lc), BTreeSet::from(["aws-lc-sys"]), "rustls-aws-lc with rustls 0.24");
    let ring = graph(&tree, target, Some("rustls-ring"), features);
    assert!(!has_rustls_024(&ring), "rustls-ring leaves rustls 0.24 out: {ring:?}");
    assert_eq!(native(&ring), BTreeSet::from(["ring"]), "rustls-ring with the feature on");
    // Under every other value the feature changes nothing in the graph.
    for value in values().into_iter().filter(|v| *v != "rustls-aws-lc") {
        let base = features_for(value, target);
        let with = graph(&tree, target, Some(value), &format!("{base},rustls-024"));
        assert_eq!(
            with,
            graph(&tree, target, Some(value), &base),
            "{value}: experimental-rustls-024 changed the graph"
        );
    }

    let binary = build_consumer(&tree, "rustls-aws-lc", "rustls-024").binary;
    let run = run_consumer(&tree, &binary, false);
    assert_connected_with("rustls-aws-lc", &run);
    assert!(
        run.1.lines().filter(|l| l.starts_with("CONN ")).all(|l| l.ends_with("library=rustls 0.24")),
        "every connection was served by rustls 0.24 (TlsInfo::library):\n{}",
        run.1
    );
    let linked = std::fs::read(&binary).expect("read the consumer");
    assert!(
        linked.windows(b"rustls_in_place".len()).any(|w| w == b"rustls_in_place"),
        "the consumer links the in-place backend"
    );
    println!("E2E override rustls-aws-lc + experimental-rustls-024: connected on rustls 0.24, aws-lc only");
    let _ = std::fs::remove_dir_all(&tree);
}

/// The cross-compiling target of the check below, and the C compiler ring's build uses for it
/// (scripts/test installs both: `rustup target add`, the distribution's cross gcc).
const CROSS_TARGET: &str = "aarch64-unknown-linux-gnu";
const CROSS_CC: &str = "aarch64-linux-gnu-gcc";

#[test]
fn a_cross_target_check_with_rustls_ring_builds_neither_s2n_nor_aws_lc() {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output().expect("rustup");
    assert!(
        String::from_utf8_lossy(&installed.stdout).lines().any(|t| t == CROSS_TARGET),
        "the {CROSS_TARGET} standard library is not installed: `rustup target add {CROSS_TARGET}` (scripts/test does)"
    );
    assert!(
        Command::new(CROSS_CC).arg("--version").output().is_ok_and(|o| o.status.success()),
        "{CROSS_CC} is missing: `apt-get install gcc-aarch64-linux-gnu` (scripts/test does)"
    );
    let tree = rewritten_tree("override-cross");
    // In the consumer builds' target dir, whose build scripts and proc macros it reuses.
    let out = run(Command::new(env!("CARGO"))
        .current_dir(&tree)
        .env("RUSTFLAGS", rustflags("rustls-ring"))
        .env("CARGO_TARGET_DIR", scratch_root().join("override-target"))
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .args(["check", "--locked", "-p", "e2e-consumer", "--no-default-features", "--features"])
        .args(["report-connections", "--target", CROSS_TARGET, "--message-format", "json"]));
    let built: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| m["target"]["name"].as_str().map(str::to_owned))
        .collect();
    assert!(built.contains("ring"), "ring is rustls-ring's crypto: {built:?}");
    assert!(built.contains("smithy_default_tls"), "the runtime is checked: {built:?}");
    for absent in ["s2n_tls_sys", "aws_lc_sys", "aws_lc_rs", "s2n_tls"] {
        assert!(!built.contains(absent), "{CROSS_TARGET} with rustls-ring built {absent}");
    }
    println!(
        "E2E override cross check {CROSS_TARGET} rustls-ring: {} crates, no s2n-tls-sys, no aws-lc-sys",
        built.len()
    );
    let _ = std::fs::remove_dir_all(&tree);
}

/// The roots half of the override, built and run by cargo: `smithy_tls_roots` beside a provider
/// (rustls-ring with the platform verifier, which on Linux reads the native store the consumer
/// is given) serves with those roots, chosen by the application; the pair the runtime refuses
/// (`openssl` with `platform-verifier` roots) stops the build with README's message; and roots
/// no crate asked for (`webpki`, `platform-verifier`), set without their feature, stop it naming
/// the feature line to add.
#[test]
fn the_roots_override_builds_serves_and_refuses_as_documented() {
    let tree = rewritten_tree("override-roots");
    let pair = format!("{} --cfg smithy_tls_roots=\"platform-verifier\"", rustflags("rustls-ring"));
    // The rustls-ring value's run too (see `each_value_builds_and_runs_with_the_chosen_provider`).
    let features = "report-connections,smithy-default-tls/platform-verifier,log-events";
    let binary = build_consumer_with(&tree, &pair, "rustls-ring-platform-verifier", features).binary;
    let run = run_consumer(&tree, &binary, false);
    assert_connected_with_roots("rustls-ring", "platform-verifier", &run);
    assert_announced_and_served_by("rustls-ring", "rustls 0.23", &run);
    println!("E2E override rustls-ring + roots platform-verifier: connected, TlsInfo roots=platform-verifier");

    let refused_flags = format!("{} --cfg smithy_tls_roots=\"platform-verifier\"", rustflags("openssl"));
    let refused_features = "report-connections,smithy-default-tls/openssl,smithy-default-tls/platform-verifier";
    let out = consumer_build_with(&tree, &refused_flags, refused_features).output().expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "openssl with platform-verifier roots must not build");
    assert!(
        stderr.contains(r#"--cfg smithy_tls_roots="platform-verifier" cannot be used with"#)
            && stderr.contains("openssl"),
        "the refusal names the pair and the cfg:\n{}",
        tail(&stderr, 20)
    );
    println!("E2E override openssl + roots platform-verifier: refused by the build: {}", tail(&stderr, 1));

    // Roots no crate asked for on this target (beside ring, whose build is quick): the build
    // names the line to add.
    let unasked = format!("{} --cfg smithy_tls_roots=\"webpki\"", rustflags("rustls-ring"));
    let out = consumer_build_with(&tree, &unasked, "report-connections").output().expect("cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "webpki roots without their feature must not build");
    assert!(
        stderr.contains(r#"--cfg smithy_tls_roots="webpki""#)
            && stderr.contains(r#"smithy-default-tls = { version = "0.1", features = ["webpki"] }"#),
        "the refusal names the feature line:\n{}",
        tail(&stderr, 20)
    );
    println!("E2E override roots webpki without its feature: refused, naming the Cargo.toml line");

    // The platform verifier likewise, with the flags of the build that served above.
    let out = consumer_build_with(&tree, &pair, "report-connections").output().expect("cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "platform-verifier roots without their feature must not build");
    assert!(
        stderr.contains(r#"--cfg smithy_tls_roots="platform-verifier""#)
            && stderr.contains(r#"smithy-default-tls = { version = "0.1", features = ["platform-verifier"] }"#),
        "the refusal names the feature line:\n{}",
        tail(&stderr, 20)
    );
    println!("E2E override roots platform-verifier without its feature: refused, naming the Cargo.toml line");
    let _ = std::fs::remove_dir_all(&tree);
}
