//! Measurement of what the HTTPS stack costs the consumer application (aws-config, aws-sdk-sts
//! and aws-sdk-s3, pinned in [`PUBLISHED`]): ignored by default; prints figures and ratios
//! against upstream's default measured in the same run, asserts none (docs/BENCHMARKS.md,
//! "Consumer build cost").
//!
//! ```text
//! cargo test -p smithy-tls-e2e --test measure_builds -- --ignored --nocapture
//! MEASURE_ROUNDS=3 MEASURE_PRESETS=all cargo test ...   # rounds (default 2); presets (default
//!                                                        # platform-default,portable; `all`)
//! MEASURE_OVERRIDES=rustls-ring,openssl cargo test ...   # the application's `--cfg smithy_tls`
//!                                                        # values built on platform-default
//!                                                        # (default rustls-ring,openssl; `none`)
//! ```
//!
//! - `cold_builds`: per variant and round, a clean release build in a fresh target dir (its own
//!   `cargo` process; variants interleaved, the order rotated each round): wall and CPU seconds,
//!   crates compiled, the stripped binary, and a rebuild after touching the app. The variants:
//!   `no-client` (the SDK crates without their HTTPS client features, the rest of their defaults
//!   kept: the baseline to subtract), `upstream` (as published) and the crates rewritten with each
//!   preset, and platform-default's crates built by an application that overrides the provider
//!   (`platform-default smithy_tls=VALUE`: `--cfg smithy_tls="VALUE"` in RUSTFLAGS, nothing else
//!   changed). The HTTPS stack's share is a variant minus `no-client`, paired by round.
//! - `the_baseline_has_everything_but_the_https_stack` (not ignored): `no-client` compiles no
//!   HTTP client or TLS crate, and keeps what the SDK's defaults bring besides (SSO, SigV4a).
//! - `crates_per_target`: per target the presets name, from `cargo tree` (nothing is built): the
//!   crates the app depends on and the native libraries among them, ours against upstream's.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use smithy_tls_codegen::model::Provider;
use smithy_tls_codegen::presets;
use smithy_tls_e2e::{prepare_variant_tree, run, scratch_cargo, scratch_root, SdkTree, PUBLISHED};
use smithy_tls_test_support::cargo_tree::{self, TreePackage};

/// The crates compiled from a C or assembly source tree, and the library each one is.
const NATIVE: &[(&str, &str)] = &[
    ("aws-lc-sys", "AWS-LC"),
    ("aws-lc-fips-sys", "AWS-LC FIPS"),
    ("ring", "ring"),
    ("s2n-tls-sys", "s2n-tls"),
    ("openssl-sys", "system OpenSSL"),
];

/// Tier-1 and tier-2 targets the presets name (rustc's platform support lists).
const TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "armv7-unknown-linux-gnueabihf",
    "riscv64gc-unknown-linux-gnu",
    "x86_64-pc-windows-msvc",
    "aarch64-pc-windows-msvc",
    "x86_64-pc-windows-gnu",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
    "aarch64-apple-ios",
    "aarch64-linux-android",
    "x86_64-unknown-freebsd",
];

/// The consumer's features that every variant builds with: the S3 round trip, and aws-config's
/// own defaults (SSO, process credentials), as an application's default build has them.
const S3: &str = "s3,config-defaults";

/// A consumer tree to build: `name` (`no-client`, `upstream` or a preset) and its tree, built
/// with the application's `--cfg smithy_tls` override where `rustflags` holds it, and the
/// consumer's `features` (`s3`, and the runtime's feature of an override value that needs it).
struct Variant {
    name: String,
    tree: SdkTree,
    rustflags: Option<String>,
    features: String,
}

/// The override values `MEASURE_OVERRIDES` names (`none`: no override variant), by default
/// rustls-ring and openssl.
fn measured_overrides() -> Vec<String> {
    match std::env::var("MEASURE_OVERRIDES") {
        Ok(list) if list == "none" => Vec::new(),
        Ok(list) => list.split(',').map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()).collect(),
        Err(_) => vec!["rustls-ring".to_owned(), "openssl".to_owned()],
    }
}

/// The presets `MEASURE_PRESETS` names (`all`: every one), by default platform-default and portable.
fn measured_presets() -> Vec<String> {
    match std::env::var("MEASURE_PRESETS") {
        Ok(list) if list == "all" => presets::names().map(str::to_owned).collect(),
        Ok(list) => list.split(',').map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect(),
        Err(_) => vec!["platform-default".to_owned(), "portable".to_owned()],
    }
}

/// The trees: `no-client`, `upstream`, then one per measured preset.
fn variants() -> Vec<Variant> {
    let root = scratch_root();
    let mut variants = Vec::new();
    let no_client = prepare_variant_tree(&root.join("measure-no-client"), None);
    without_default_client(&no_client);
    variants.push(Variant { name: "no-client".to_owned(), tree: no_client, rustflags: None, features: S3.to_owned() });
    variants.push(Variant {
        name: "upstream".to_owned(),
        tree: prepare_variant_tree(&root.join("measure-upstream"), None),
        rustflags: None,
        features: S3.to_owned(),
    });
    for preset in measured_presets() {
        assert!(presets::preset(&preset).is_some(), "MEASURE_PRESETS: no preset `{preset}`");
        let tree = prepare_variant_tree(&root.join(format!("measure-{preset}")), Some(&preset));
        variants.push(Variant { name: preset, tree, rustflags: None, features: S3.to_owned() });
    }
    for value in measured_overrides() {
        // Its own copy of the tree: the variants' builds are timed one at a time, but each tree
        // keeps nothing of another's.
        let tree = prepare_variant_tree(&root.join(format!("measure-override-{value}")), Some("platform-default"));
        let rustflags = Some(format!("--cfg smithy_tls=\"{value}\""));
        // A value whose crates platform-default's rule for this host leaves out of the lock takes
        // the runtime's feature too, as the application's line does.
        let host_rule =
            smithy_tls_e2e::rule_provider("platform-default", &smithy_tls_e2e::host_triple()).expect("a host provider");
        let needs_feature = Provider::from_name(&value).is_some_and(|p| p.override_needs_feature(host_rule));
        let features = if needs_feature { format!("{S3},smithy-default-tls/{value}") } else { S3.to_owned() };
        variants.push(Variant { name: format!("platform-default smithy_tls={value}"), tree, rustflags, features });
    }
    variants
}

/// The SDK crates' features that bring an HTTPS client (the new default client and the legacy
/// hyper 0.14 + rustls one), across aws-config, aws-sdk-sts and aws-sdk-s3.
const CLIENT_FEATURES: [&str; 5] =
    ["default-https-client", "rustls", "client-hyper", "legacy-client", "legacy-https-client"];

/// Gives the consumer's SDK dependencies their crates' default features minus the HTTPS client
/// ones ([`CLIENT_FEATURES`]): the baseline keeps everything else a default build compiles
/// (aws-config's SSO and process credentials, SigV4a), so the difference is the HTTPS stack. The
/// consumer's `config-defaults` (aws-config's whole default, its client among it) turns nothing on.
fn without_default_client(tree: &SdkTree) {
    let manifest = tree.root.join("consumer/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("consumer manifest");
    let mut doc: toml_edit::DocumentMut = text.parse().expect("consumer manifest parses");
    doc["features"]["config-defaults"] = toml_edit::value(toml_edit::Array::new());
    for name in ["aws-config", "aws-sdk-sts", "aws-sdk-s3"] {
        let mut features: Vec<String> = default_features(&tree.root.join(name).join("Cargo.toml"))
            .into_iter()
            .filter(|f| !CLIENT_FEATURES.contains(&f.as_str()))
            .collect();
        features.push("behavior-version-latest".to_owned());
        let dep = doc["dependencies"][name].as_inline_table_mut().expect("an inline table");
        dep.insert("default-features", false.into());
        dep.insert("features", features.into_iter().collect::<toml_edit::Array>().into());
    }
    std::fs::write(&manifest, doc.to_string()).expect("write consumer manifest");
}

/// The `default` feature list of the crate whose manifest is `manifest`.
fn default_features(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let doc: toml_edit::DocumentMut = text.parse().unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let defaults = doc.get("features").and_then(|f| f.get("default")).and_then(|d| d.as_array());
    let defaults = defaults.unwrap_or_else(|| panic!("{}: no [features] default", manifest.display()));
    defaults.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
}

/// The CPU seconds (user + system) of every child process waited for so far.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0, "getrusage");
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// One variant's figures in one round.
#[derive(Clone, Copy, Debug)]
struct Build {
    wall: f64,
    cpu: f64,
    rebuild: f64,
    binary: u64,
    crates: usize,
}

/// `cargo build --release` of the consumer (no connection report, which needs our runtime), with
/// symbols stripped, into `target`.
fn release_build(variant: &Variant, target: &Path) -> Command {
    let mut cmd = scratch_cargo(&variant.tree.root);
    if let Some(rustflags) = &variant.rustflags {
        cmd.env("RUSTFLAGS", rustflags);
    }
    cmd.env("CARGO_TARGET_DIR", target).env("CARGO_PROFILE_RELEASE_STRIP", "symbols").args([
        "build",
        "--release",
        "-p",
        "e2e-consumer",
        "--bin",
        "e2e-consumer",
        "--no-default-features",
        "--features",
        &variant.features,
        "--message-format",
        "json-render-diagnostics",
    ]);
    cmd
}

/// A clean build, then a rebuild after touching the app's source.
fn measure(variant: &Variant) -> Build {
    let target = scratch_root().join(format!("measure-target-{}", variant.name.replace([' ', '=', '"'], "-")));
    let _ = std::fs::remove_dir_all(&target);
    let cpu_before = children_cpu_seconds();
    let started = Instant::now();
    let out = run(release_build(variant, &target).stderr(Stdio::inherit()));
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds() - cpu_before;
    let mut packages = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if message["reason"] == "compiler-artifact" {
            packages.insert(message["package_id"].as_str().unwrap_or_default().to_owned());
        }
    }
    let binary = std::fs::metadata(target.join("release/e2e-consumer")).expect("the consumer binary").len();
    let main = variant.tree.root.join("consumer/src/main.rs");
    std::fs::File::options().write(true).open(&main).and_then(|f| f.set_modified(SystemTime::now())).expect("touch");
    let started = Instant::now();
    run(&mut release_build(variant, &target));
    let rebuild = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&target);
    Build { wall, cpu, rebuild, binary, crates: packages.len() }
}

/// `median (min–max)` of `values`.
fn spread(values: &[f64], digits: usize) -> String {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2]
    } else {
        (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
    };
    match sorted.as_slice() {
        [_] => format!("{median:.digits$}"),
        _ => format!("{median:.digits$} ({:.digits$}–{:.digits$})", sorted[0], sorted[sorted.len() - 1]),
    }
}

#[test]
#[ignore = "a clean release build per variant and round (about 5 minutes each on 2 cores); run by hand"]
fn cold_builds() {
    let rounds: usize = std::env::var("MEASURE_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(2);
    let variants = variants();
    let mut builds: Vec<Vec<Build>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for step in 0..variants.len() {
            let index = (step + round) % variants.len();
            let build = measure(&variants[index]);
            println!("MEASURE round={round} variant={} {build:?}", variants[index].name);
            builds[index].push(build);
        }
    }
    let column = |i: usize, f: &dyn Fn(&Build) -> f64| builds[i].iter().map(f).collect::<Vec<f64>>();
    println!("\nmedian (min–max) over {rounds} round(s), each a clean release build on this machine\n");
    println!("| variant | crates | cold build wall (s) | CPU (s) | rebuild after touch (s) | stripped binary (MB) |");
    println!("|---|---|---|---|---|---|");
    for (i, variant) in variants.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            variant.name,
            spread(&column(i, &|b| b.crates as f64), 0),
            spread(&column(i, &|b| b.wall), 0),
            spread(&column(i, &|b| b.cpu), 0),
            spread(&column(i, &|b| b.rebuild), 1),
            spread(&column(i, &|b| b.binary as f64 / 1e6), 1),
        );
    }
    // Shares of the HTTPS stack, paired by round with the baseline and with upstream.
    let share = |i: usize, f: &dyn Fn(&Build) -> f64| -> Vec<f64> {
        builds[i].iter().zip(&builds[0]).map(|(b, base)| f(b) - f(base)).collect()
    };
    println!("\nthe HTTPS stack alone (variant minus no-client), and its ratio to upstream's in the same round\n");
    println!("| variant | crates | CPU (s) | × upstream | binary (MB) | × upstream | whole app CPU × upstream | whole app binary × upstream |");
    println!("|---|---|---|---|---|---|---|---|");
    for (i, variant) in variants.iter().enumerate().skip(1) {
        let ratio =
            |mine: Vec<f64>, theirs: Vec<f64>| -> Vec<f64> { mine.iter().zip(&theirs).map(|(a, b)| a / b).collect() };
        let cpu = |b: &Build| b.cpu;
        let bytes = |b: &Build| b.binary as f64 / 1e6;
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            variant.name,
            spread(&share(i, &|b| b.crates as f64), 0),
            spread(&share(i, &cpu), 0),
            spread(&ratio(share(i, &cpu), share(1, &cpu)), 2),
            spread(&share(i, &bytes), 1),
            spread(&ratio(share(i, &bytes), share(1, &bytes)), 2),
            spread(&ratio(column(i, &cpu), column(1, &cpu)), 2),
            spread(&ratio(column(i, &bytes), column(1, &bytes)), 2),
        );
    }
}

/// The packages `cargo tree` lists for the consumer on `target` (normal and build edges), with
/// `rustflags` (an application's override) where given, and the consumer's `features`.
fn tree_packages(tree: &SdkTree, target: &str, rustflags: Option<&str>, features: &str) -> BTreeSet<TreePackage> {
    let args = cargo_tree::tree_args("e2e-consumer", target);
    let mut cmd = scratch_cargo(&tree.root);
    if let Some(rustflags) = rustflags {
        cmd.env("RUSTFLAGS", rustflags);
    }
    let out = run(cmd.args(args).args(["--no-default-features", "--features", features]));
    let mut packages = cargo_tree::packages(&String::from_utf8_lossy(&out.stdout));
    packages.retain(|p| p.name != "e2e-consumer");
    packages
}

/// The native libraries among `packages`.
fn native(packages: &BTreeSet<TreePackage>) -> String {
    let names: Vec<&str> = NATIVE
        .iter()
        .filter(|(krate, _)| packages.iter().any(|p| p.name == *krate))
        .map(|(_, library)| *library)
        .collect();
    if names.is_empty() {
        "-".to_owned()
    } else {
        names.join(" + ")
    }
}

#[test]
fn the_baseline_has_everything_but_the_https_stack() {
    let tree = prepare_variant_tree(&scratch_root().join("measure-no-client"), None);
    without_default_client(&tree);
    let host = smithy_tls_e2e::host_triple();
    let names: BTreeSet<String> = tree_packages(&tree, &host, None, S3).into_iter().map(|p| p.name).collect();
    for stack in ["hyper", "hyper-util", "h2", "rustls", "aws-lc-sys", "ring", "aws-smithy-http-client"] {
        assert!(!names.contains(stack), "the no-client baseline compiles {stack}");
    }
    for kept in ["aws-sdk-sso", "aws-sdk-ssooidc", "p256", "aws-sdk-s3"] {
        assert!(names.contains(kept), "the no-client baseline lost {kept}, which the SDK's defaults compile");
    }
}

#[test]
#[ignore = "cargo tree per target and variant (a minute or two); run by hand"]
fn crates_per_target() {
    let variants: Vec<Variant> = variants().into_iter().filter(|v| v.name != "no-client").collect();
    print!("\n| target |");
    for variant in &variants {
        print!(" {} |", variant.name);
    }
    println!("\n|---|{}", "---|".repeat(variants.len()));
    let mut more_than_upstream = Vec::new();
    for target in TARGETS {
        // Printed whole once done: libtest's "running for over 60 seconds" would split a row.
        let mut row = format!("| {target} |");
        let mut upstream = 0;
        for variant in &variants {
            let packages = tree_packages(&variant.tree, target, variant.rustflags.as_deref(), &variant.features);
            if variant.name == "upstream" {
                upstream = packages.len();
            } else if packages.len() > upstream {
                more_than_upstream.push(format!("{} on {target}: {} > {upstream}", variant.name, packages.len()));
            }
            row.push_str(&format!(" {} ({}) |", packages.len(), native(&packages)));
        }
        println!("{row}");
    }
    println!("\ncrates (native libraries) the consumer depends on, from cargo tree; {PUBLISHED:?}");
    if more_than_upstream.is_empty() {
        println!("no preset depends on more crates than upstream on any target above");
    } else {
        println!("more crates than upstream: {more_than_upstream:#?}");
    }
}
