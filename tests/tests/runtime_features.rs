//! Generated crates build `smithy-default-tls` with exactly one provider feature and one roots
//! feature per target. Every such combination must compile without a warning, since SDK trees
//! build it as a path dependency, where its warnings show in every user's build. A provider
//! without any roots feature (trust only the certificates the application adds) must build too.

use std::path::PathBuf;
use std::process::{Command, Output};

use smithy_tls_e2e::support::skip::record as record_skip;
use smithy_tls_e2e::{repo_root, workspace_target};

/// The FIPS provider builds in its own target dir (as scripts/test runs its suite), never in
/// the workspace's, where aws-lc-rs is built without `fips`.
fn fips_target_dir() -> PathBuf {
    workspace_target().join("fips")
}

/// `cargo check` of the runtime's library with exactly `features` (a FIPS build in its own
/// target dir, as scripts/test runs the FIPS suite).
fn check_runtime(features: &str) -> Output {
    check_command(features, "short").output().expect("run cargo check")
}

/// The `cargo check` of [`check_runtime`], printing messages in `format`.
fn check_command(features: &str, format: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(repo_root()).args(["check", "-p", "smithy-default-tls"]);
    cmd.args(["--lib", "--no-default-features", "--features", features]);
    if features.contains("fips") {
        cmd.env("CARGO_TARGET_DIR", fips_target_dir());
    }
    cmd.args(["--message-format", format]);
    cmd
}

/// Where the FIPS module's build script ran in a check of `features` (a FIPS build): its out
/// dir, which differs whenever the module was built from a different build-time graph.
fn fips_module_out_dir(features: &str) -> String {
    let out = check_command(features, "json").output().expect("run cargo check");
    assert!(out.status.success(), "{features}: does not build:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dirs: Vec<String> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "build-script-executed")
        .filter(|m| m["package_id"].as_str().is_some_and(|id| id.contains("aws-lc-fips-sys")))
        .filter_map(|m| m["out_dir"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(dirs.len(), 1, "{features}: expected one build of aws-lc-fips-sys, cargo reported {dirs:?}");
    dirs.into_iter().next().unwrap_or_default()
}

/// Whether this host can build the FIPS module (aws-lc-fips-sys: Linux x86_64/aarch64).
const FIPS_HOST: bool = cfg!(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")));

#[test]
fn every_provider_and_roots_combination_builds_without_warnings_including_no_roots() {
    if !FIPS_HOST {
        record_skip(
            "runtime_features: the FIPS providers' feature combinations",
            "aws-lc-fips-sys builds on Linux x86_64/aarch64 only",
        );
    }
    let providers = smithy_tls_codegen::model::Provider::ALL.map(|p| p.name());
    for provider in providers.into_iter().filter(|p| FIPS_HOST || !p.contains("fips")) {
        for roots in [",native", ",webpki", ",platform-verifier", ""] {
            let features = format!("{provider}{roots}");
            let out = check_runtime(&features);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{features}: does not build:\n{stderr}");
            let warnings: Vec<&str> =
                stderr.lines().filter(|l| l.starts_with("runtime/src") && l.contains("warning")).collect();
            assert!(warnings.is_empty(), "{features}: warnings in smithy-default-tls:\n{}", warnings.join("\n"));
        }
    }
}

#[test]
fn the_fips_provider_refuses_to_share_a_build_with_another_provider() {
    if !FIPS_HOST {
        record_skip(
            "runtime_features::the_fips_provider_refuses_to_share_a_build_with_another_provider",
            "aws-lc-fips-sys builds on Linux x86_64/aarch64 only",
        );
        return;
    }
    // Five of the six pairs: each FIPS provider with rustls-aws-lc and rustls-ring, and
    // s2n-tls-fips with s2n-tls, which covers every feature the refusal names. The sixth
    // (rustls-aws-lc-fips with s2n-tls) would compile s2n-tls-sys's CMake build once more, for a
    // feature set no other check here builds, to test the same condition.
    let pairs = [
        ("rustls-aws-lc-fips", "rustls-aws-lc"),
        ("rustls-aws-lc-fips", "rustls-ring"),
        ("s2n-tls-fips", "rustls-aws-lc"),
        ("s2n-tls-fips", "rustls-ring"),
        ("s2n-tls-fips", "s2n-tls"),
    ];
    for (fips, other) in pairs {
        let out = check_runtime(&format!("{fips},{other},webpki"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{fips} with {other} must not build");
        assert!(
            stderr.contains("cannot be combined")
                && stderr.contains("with `rustls-aws-lc`, `rustls-ring` or `s2n-tls`"),
            "{fips} with {other}: the refusal must say why:\n{stderr}"
        );
    }
    // The two FIPS providers may share a build: both use the FIPS module.
    let out = check_runtime("rustls-aws-lc-fips,s2n-tls-fips,webpki");
    assert!(out.status.success(), "both FIPS providers build together:\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_fips_check_shares_one_build_of_the_fips_module() {
    if !FIPS_HOST {
        record_skip(
            "runtime_features::every_fips_check_shares_one_build_of_the_fips_module",
            "aws-lc-fips-sys builds on Linux x86_64/aarch64 only",
        );
        return;
    }
    // With s2n-tls in the graph and without it: bindgen, a build dependency of the FIPS module,
    // is compiled with the features the build-time graph gives its syn, and a different bindgen
    // means building the module (a CMake build of a minute and a half) again.
    let with_s2n = fips_module_out_dir("s2n-tls-fips,webpki");
    let without = fips_module_out_dir("rustls-aws-lc-fips,webpki");
    assert_eq!(with_s2n, without, "the FIPS checks build the FIPS module twice");
}
