//! The build script refuses every build the README says it refuses, with the message it promises,
//! and lets the others through with the cfgs the code reads. runtime/build.rs has no dependencies,
//! so it is compiled here with rustc as it is and run with the environment cargo gives a build
//! script (`CARGO_CFG_*` for the target and the application's `--cfg`s, `CARGO_FEATURE_*`), one
//! cell per promise: faster and more exact than a cargo build per cell, which
//! tests/tests/application_override.rs does for the cells that matter end to end.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// runtime/build.rs, compiled once per test run.
fn build_script() -> &'static PathBuf {
    static SCRIPT: OnceLock<PathBuf> = OnceLock::new();
    SCRIPT.get_or_init(|| {
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("build.rs");
        let binary = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("smithy-default-tls-build-script");
        let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned()))
            .args(["--edition", "2021", "--crate-name", "build_script_build", "-o"])
            .arg(&binary)
            .arg(&source)
            .output()
            .expect("run rustc");
        assert!(out.status.success(), "rustc build.rs:\n{}", String::from_utf8_lossy(&out.stderr));
        binary
    })
}

/// A target, as cargo describes it to build scripts.
struct Target {
    os: &'static str,
    arch: &'static str,
    env: &'static str,
    unix: bool,
}

const LINUX_GNU: Target = Target { os: "linux", arch: "x86_64", env: "gnu", unix: true };
const WINDOWS_MSVC: Target = Target { os: "windows", arch: "x86_64", env: "msvc", unix: false };
const MACOS: Target = Target { os: "macos", arch: "aarch64", env: "", unix: true };

/// What the build script printed: its `cargo::error=` messages and its `cargo::rustc-cfg=` cfgs.
struct Outcome {
    errors: Vec<String>,
    cfgs: Vec<String>,
}

/// Runs the build script for `target` with the runtime's `features` and the application's
/// `smithy_tls` / `smithy_tls_roots` cfg values (comma-separated, as cargo joins repeats).
fn run(target: &Target, features: &[&str], tls: Option<&str>, roots: Option<&str>) -> Outcome {
    let mut cmd = Command::new(build_script());
    cmd.env_clear()
        .env("CARGO_PKG_VERSION", env!("CARGO_PKG_VERSION"))
        .env("CARGO_CFG_TARGET_OS", target.os)
        .env("CARGO_CFG_TARGET_ARCH", target.arch)
        .env("CARGO_CFG_TARGET_ENV", target.env);
    if target.unix {
        cmd.env("CARGO_CFG_UNIX", "");
    }
    for feature in features {
        cmd.env(format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_")), "1");
    }
    if let Some(tls) = tls {
        cmd.env("CARGO_CFG_SMITHY_TLS", tls);
    }
    if let Some(roots) = roots {
        cmd.env("CARGO_CFG_SMITHY_TLS_ROOTS", roots);
    }
    let out = cmd.output().expect("run the build script");
    assert!(out.status.success(), "the build script itself failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let field = |prefix: &str| stdout.lines().filter_map(|l| l.strip_prefix(prefix)).map(str::to_owned).collect();
    Outcome { errors: field("cargo::error="), cfgs: field("cargo::rustc-cfg=") }
}

/// Asserts one refusal whose message has every one of `says`.
fn refused(outcome: &Outcome, says: &[&str]) {
    assert_eq!(outcome.errors.len(), 1, "one refusal expected: {:?}", outcome.errors);
    for part in says {
        assert!(outcome.errors[0].contains(part), "the refusal should say {part:?}:\n{}", outcome.errors[0]);
    }
}

#[test]
fn an_unknown_value_is_refused_with_the_valid_ones() {
    let outcome = run(&LINUX_GNU, &["rustls-aws-lc", "native"], Some("rustls-awslc"), None);
    refused(
        &outcome,
        &["\"rustls-awslc\" is not a value", "\"rustls-aws-lc\"", "\"openssl\"", "\"none\"", "RUSTFLAGS"],
    );
    let roots = run(&LINUX_GNU, &["rustls-aws-lc", "native"], None, Some("system"));
    refused(&roots, &["smithy_tls_roots=\"system\"", "\"native\", \"webpki\" or \"platform-verifier\""]);
}

#[test]
fn the_cfg_set_twice_is_refused() {
    let outcome = run(&LINUX_GNU, &["rustls-aws-lc", "native"], Some("rustls-ring,openssl"), None);
    refused(&outcome, &["set 2 times", "\"rustls-ring\" and \"openssl\"", "[build] rustflags"]);
}

#[test]
fn providers_off_their_systems_are_refused() {
    let s2n = run(&WINDOWS_MSVC, &["rustls-aws-lc", "s2n-tls", "native"], Some("s2n-tls"), None);
    refused(&s2n, &["smithy_tls=\"s2n-tls\"", "\"linux\" and \"macos\" only, not \"windows\""]);
    let fips = run(&MACOS, &["rustls-aws-lc-fips", "native"], Some("rustls-aws-lc-fips"), None);
    refused(&fips, &["FIPS build of aws-lc", "Linux x86_64 and aarch64", "not aarch64-macos"]);
    let openssl = run(&WINDOWS_MSVC, &["openssl", "native"], Some("openssl"), None);
    refused(&openssl, &["\"linux\", \"freebsd\" and \"netbsd\" only"]);
}

#[test]
fn platform_verifier_roots_with_a_library_that_reads_its_own_store_are_refused() {
    for provider in ["s2n-tls", "s2n-tls-fips", "openssl"] {
        let outcome = run(&LINUX_GNU, &[provider, "platform-verifier"], Some(provider), Some("platform-verifier"));
        refused(&outcome, &["smithy_tls_roots=\"platform-verifier\" cannot be used with", provider]);
    }
}

#[test]
fn a_value_whose_crates_no_crate_asked_for_names_the_feature_line() {
    // platform-default on linux-gnu asks for s2n-tls: openssl and the FIPS values need a line.
    for value in ["openssl", "rustls-aws-lc-fips", "s2n-tls-fips"] {
        let outcome = run(&LINUX_GNU, &["s2n-tls", "native"], Some(value), None);
        let line = format!("smithy-default-tls = {{ version = \"0.1\", features = [\"{value}\"] }}");
        refused(&outcome, &["the SDK crates asked for `s2n-tls`", &line]);
    }
    // Roots likewise, where a rustls provider would use them.
    let roots = run(&LINUX_GNU, &["rustls-aws-lc", "native"], None, Some("webpki"));
    refused(&roots, &["smithy_tls_roots=\"webpki\"", "features = [\"webpki\"]"]);
}

#[test]
fn what_the_cfg_alone_or_the_asked_for_crates_select_builds() {
    // The values every lock carries, over s2n-tls's features.
    for value in ["rustls-aws-lc", "rustls-ring", "rustls-custom", "none"] {
        let outcome = run(&LINUX_GNU, &["s2n-tls", "native"], Some(value), None);
        assert!(outcome.errors.is_empty(), "{value}: {:?}", outcome.errors);
        let compiled: Vec<&String> = outcome.cfgs.iter().filter(|c| c.starts_with("provider=")).collect();
        let want = if value == "none" { vec![] } else { vec![format!("provider=\"{value}\"")] };
        assert_eq!(compiled, want.iter().collect::<Vec<_>>(), "{value}: only the application's provider is compiled");
        assert!(outcome.cfgs.contains(&"named_provider=\"s2n-tls\"".to_owned()), "{value}: s2n-tls is still named");
    }
    // A value whose crates the asked-for features bring: s2n-tls's are s2n-tls-fips's too.
    let outcome = run(&LINUX_GNU, &["s2n-tls-fips", "native"], Some("s2n-tls"), None);
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    // The feature beside the cfg, as the refusal asks.
    let outcome = run(&LINUX_GNU, &["s2n-tls", "openssl", "native"], Some("openssl"), None);
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    assert!(outcome.cfgs.contains(&"openssl_provider".to_owned()) && !outcome.cfgs.contains(&"s2n".to_owned()));
    // And no override at all.
    let outcome = run(&LINUX_GNU, &["s2n-tls", "native"], None, None);
    assert!(outcome.errors.is_empty() && outcome.cfgs.contains(&"provider=\"s2n-tls\"".to_owned()));
}
