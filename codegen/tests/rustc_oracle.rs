//! The compiler as an oracle for the builtin target list.
//!
//! `Cfg::matches` evaluates a rule's predicate against cfg-expr's builtin list of targets;
//! cargo evaluates the same predicate against what rustc says about the target. For a sample of
//! targets this asks rustc (`rustc --print cfg --target T`, which needs no std for T) and checks
//! that every compiled rule of every preset matches the same targets both ways, so each target
//! is served by the same rule according to the tool and according to the compiler.

use std::process::Command;

use cfg_expr::targets::{get_builtin_target_by_triple, TargetInfo};
use smithy_tls_codegen::cfg::Cfg;
use smithy_tls_codegen::model::CompiledPolicy;
use smithy_tls_codegen::{compile, policy, presets, targets};

/// Targets that must be compared besides `targets::NOTABLE_TARGETS` (minus wasm32-wasip2, which
/// is optional below): if rustc or cfg-expr lacks one of these, the test fails.
const REQUIRED_EXTRA: &[&str] = &["i686-pc-windows-msvc", "x86_64-unknown-freebsd"];

fn required() -> Vec<&'static str> {
    targets::NOTABLE_TARGETS
        .iter()
        .copied()
        .filter(|t| *t != "wasm32-wasip2")
        .chain(REQUIRED_EXTRA.iter().copied())
        .collect()
}

/// More targets, compared when both rustc and cfg-expr know them (skipped with a note otherwise).
const OPTIONAL: &[&str] = &[
    "wasm32-wasip1",
    "wasm32-wasip2",
    "wasm32-wasip1-threads",
    "wasm32-unknown-emscripten",
    "wasm32-wali-linux-musl",
    "wasm64-unknown-unknown",
    "aarch64-unknown-linux-musl",
    "i686-unknown-linux-gnu",
    "i686-pc-windows-gnu",
    "aarch64-pc-windows-msvc",
    "x86_64-pc-windows-gnullvm",
    "armv7-linux-androideabi",
    "x86_64-linux-android",
    "arm-unknown-linux-gnueabihf",
    "armv7-unknown-linux-musleabihf",
    "riscv64gc-unknown-linux-musl",
    "riscv32imac-unknown-none-elf",
    "powerpc64le-unknown-linux-gnu",
    "s390x-unknown-linux-gnu",
    "loongarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-gnux32",
    "x86_64-unknown-netbsd",
    "x86_64-unknown-openbsd",
    "x86_64-unknown-illumos",
    "aarch64-apple-ios-sim",
    "x86_64-apple-ios",
    "aarch64-apple-tvos",
    "aarch64-apple-visionos",
    "aarch64-unknown-linux-ohos",
    "x86_64-unknown-fuchsia",
    "x86_64-unknown-uefi",
    "thumbv7em-none-eabihf",
    "x86_64-fortanix-unknown-sgx",
    "x86_64-pc-cygwin",
];

fn rustc() -> String {
    std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned())
}

fn rustc_output(args: &[&str]) -> Result<String, String> {
    let out = Command::new(rustc()).args(args).output().map_err(|e| format!("cannot run {}: {e}", rustc()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

fn rustc_cfg(triple: &str) -> String {
    rustc_output(&["--print", "cfg", "--target", triple])
        .unwrap_or_else(|e| panic!("rustc --print cfg --target {triple}: {e}"))
}

fn compiled_presets() -> Vec<CompiledPolicy> {
    presets::names()
        .map(|name| {
            let parsed =
                policy::parse_policy(presets::preset(name).unwrap()).unwrap_or_else(|d| panic!("{name}:\n{d}"));
            compile::compile(&parsed).unwrap_or_else(|d| panic!("{name}:\n{d}"))
        })
        .collect()
}

/// Every disagreement between rustc's view and cfg-expr's view of one target, over every compiled
/// rule of every preset; plus a check that rustc sees exactly one rule serving the target and
/// that it is the rule whose `targets` list the triple.
fn disagreements(policies: &[CompiledPolicy], triple: &str, cfg: &str, info: &TargetInfo) -> Vec<String> {
    let mut found = Vec::new();
    for compiled in policies {
        let name = &compiled.policy.name;
        let mut served_by_rustc = Vec::new();
        let mut served_by_list = Vec::new();
        for rule in &compiled.rules {
            let by_rustc = rule.predicate.matches_rustc_cfg(cfg);
            let by_list = rule.predicate.matches(info);
            if by_rustc != by_list {
                found.push(format!(
                    "{triple}: {name}/{}: cfg({}) is {by_rustc} for rustc but {by_list} for the builtin list",
                    rule.name, rule.predicate
                ));
            }
            if by_rustc {
                served_by_rustc.push(rule.name.as_str());
            }
            if rule.targets.iter().any(|t| t == triple) {
                served_by_list.push(rule.name.as_str());
            }
        }
        // A target that cannot host an SDK is in no rule's list (the policy need not serve it), but
        // the predicates stay exclusive for it too.
        let host = smithy_tls_codegen::platforms::sdk_host(info).is_ok();
        if served_by_rustc.len() != 1
            || (host && served_by_rustc != served_by_list)
            || (!host && !served_by_list.is_empty())
        {
            found.push(format!(
                "{triple}: {name}: served by {served_by_rustc:?} according to rustc, by {served_by_list:?} according to the matrix"
            ));
        }
    }
    found
}

#[test]
fn presets_pick_the_same_rule_as_rustc_would() {
    let target_list = rustc_output(&["--print", "target-list"]).expect("rustc --print target-list");
    let rustc_knows = |t: &str| target_list.lines().any(|l| l.trim() == t);
    let policies = compiled_presets();

    let mut compared = Vec::new();
    let mut problems = Vec::new();
    let must = required();
    for triple in must.iter().copied().chain(OPTIONAL.iter().copied()) {
        let required = must.contains(&triple);
        let info = get_builtin_target_by_triple(triple);
        match (rustc_knows(triple), info) {
            (true, Some(info)) => {
                problems.extend(disagreements(&policies, triple, &rustc_cfg(triple), info));
                compared.push(triple);
            }
            (knows, info) => {
                let why = match (knows, info.is_some()) {
                    (false, true) => "rustc does not know it",
                    (true, false) => "cfg-expr's builtin list does not have it",
                    _ => "neither rustc nor cfg-expr knows it",
                };
                if required {
                    problems.push(format!("{triple}: required target, but {why}"));
                } else {
                    println!("note: skipped {triple}: {why}");
                }
            }
        }
    }
    println!("compared {} targets against `{} --print cfg`", compared.len(), rustc());
    assert!(problems.is_empty(), "builtin list and rustc disagree:\n{}", problems.join("\n"));
    assert!(compared.len() >= 30, "only {} targets compared: {compared:?}", compared.len());
}

/// The comparison above can fail: one target's rustc cfg against another target's builtin entry
/// disagrees for some preset rule.
#[test]
fn oracle_notices_a_wrong_target() {
    let policies = compiled_presets();
    let windows_cfg = rustc_cfg("x86_64-pc-windows-gnu");
    let linux = get_builtin_target_by_triple("x86_64-unknown-linux-gnu").unwrap();
    let found = disagreements(&policies, "x86_64-unknown-linux-gnu", &windows_cfg, linux);
    // Each preset has a Windows rule (platform verifier) the Linux target must not match.
    assert!(found.iter().any(|f| f.contains("platform-default/linux-gnu")), "{found:#?}");
    assert!(found.iter().any(|f| f.contains("platform-default/windows")), "{found:#?}");
    assert!(found.iter().any(|f| f.contains("portable/windows-gnu")), "{found:#?}");
    assert!(found.iter().any(|f| f.contains("rustls-everywhere/windows")), "{found:#?}");
}

/// `matches_rustc_cfg` on hand-written listings: key="value" lines, bare family flags, and the
/// combinators, with no compiler involved.
#[test]
fn matches_rustc_cfg_reads_rustc_listings() {
    let linux = "target_os=\"linux\"\ntarget_env=\"gnu\"\ntarget_family=\"unix\"\nunix\ntarget_arch=\"x86_64\"\ntarget_pointer_width=\"64\"\ntarget_endian=\"little\"\n";
    let m = |p: &str| Cfg::parse(p).unwrap().matches_rustc_cfg(linux);
    assert!(m(r#"all(target_os = "linux", target_env = "gnu")"#));
    assert!(!m(r#"all(target_os = "linux", target_env = "musl")"#));
    assert!(m("unix"));
    assert!(!m("windows"));
    assert!(m(r#"target_family = "unix""#));
    assert!(m(r#"not(target_family = "wasm")"#));
    assert!(m(r#"target_pointer_width = "64""#));
    assert!(m(r#"target_endian = "little""#));
    assert!(!m(r#"target_endian = "big""#));
    assert!(m(r#"any(target_arch = "arm", target_arch = "x86_64")"#));
    // A value is only a match as a whole line, not as a prefix of another.
    assert!(!m(r#"target_env = "gn""#));
    assert!(Cfg::parse("all(").is_err());
}
