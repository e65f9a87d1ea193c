//! Older published SDK crates are either wired correctly (and still compile) or refused with a
//! clear message and left byte-for-byte untouched; never half-edited.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_e2e::{pin_lock, prepare_sdk_tree, scratch_cargo, scratch_root, smithy_tls_binary};

/// Every file under `dir` (skipping build output), with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let entry = entry.expect("entry");
            let path = entry.path();
            if entry.file_type().expect("type").is_dir() {
                if entry.file_name() != "target" {
                    stack.push(path);
                }
            } else {
                out.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    out
}

/// `cargo check -p krate` in the tree: Ok, or the distinct `error...` lines it printed.
fn check(tree: &Path, krate: &str) -> Result<(), Vec<String>> {
    let out = scratch_cargo(tree)
        .args(["check", "-q", "--message-format", "short", "-p", krate])
        .output()
        .expect("cargo check");
    if out.status.success() {
        return Ok(());
    }
    let mut errors: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("error") && !l.starts_with("error: could not compile") && !l.starts_with("warning"))
        .map(str::to_owned)
        .collect();
    errors.sort();
    errors.dedup();
    assert!(!errors.is_empty(), "cargo check failed without an error line:\n{}", String::from_utf8_lossy(&out.stderr));
    Err(errors)
}

enum Expect {
    /// Wired, and `cargo check` passes before and after the rewrite.
    Compiles,
    /// Wired; the crate does not build against today's runtime crates with or without
    /// smithy-tls, and the rewrite adds no error of its own.
    WiredFailsUpstream,
    /// Refused with a reason containing this text, and left untouched.
    Refused(&'static str),
}

fn case(label: &str, published: &[(&str, &str)], expect: Expect) {
    let krate = published[0].0;
    let tree_root = scratch_root().join(format!("older-{label}"));
    let tree = prepare_sdk_tree(&tree_root, published, &[krate], false);
    let version = tree.crates.get(krate).cloned().unwrap_or_default();
    let crate_dir = tree.root.join(krate);
    let before = snapshot(&crate_dir);
    if !matches!(expect, Expect::Refused(_)) {
        pin_lock(&tree.root, &format!("older-{label}"));
    }
    let compiles_before = (!matches!(expect, Expect::Refused(_))).then(|| check(&tree.root, krate));
    let out = Command::new(smithy_tls_binary())
        .args(["apply", "--format", "json", "--preset", "platform-default"])
        .arg(&tree.root)
        .output()
        .expect("run smithy-tls");
    assert!(out.status.success(), "{label}: apply failed: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let tree_report = &report["trees"][0];
    match expect {
        Expect::Refused(reason) => {
            let skipped = tree_report["skipped"]
                .as_array()
                .expect("skipped")
                .iter()
                .find(|s| s["name"] == krate)
                .unwrap_or_else(|| panic!("{label}: {krate} {version} not reported: {tree_report}"));
            assert_eq!(skipped["unsupported"], true, "{label}: {skipped}");
            let text = skipped["reason"].as_str().expect("reason");
            assert!(text.contains(reason), "{label}: reason must mention `{reason}`: {text}");
            assert!(before == snapshot(&crate_dir), "{label}: a refused crate must be left untouched");
            let strict =
                Command::new(smithy_tls_binary()).args(["apply", "--strict"]).arg(&tree.root).output().expect("strict");
            assert_eq!(strict.status.code(), Some(2), "{label}: --strict makes it an error");
            println!("{label}: {krate} {version} refused: {text}");
        }
        Expect::Compiles | Expect::WiredFailsUpstream => {
            // The rewrite adds the runtime crate to the tree's graph: a lock of its own.
            pin_lock(&tree.root, &format!("older-{label}-rewritten"));
            let wired = tree_report["crates"].as_array().expect("crates").iter().any(|c| c["name"] == krate);
            assert!(wired, "{label}: {krate} {version} must be wired: {tree_report}");
            assert!(before != snapshot(&crate_dir), "{label}: wiring must change the crate");
            let check_again = Command::new(smithy_tls_binary())
                .args(["check", "--preset", "platform-default"])
                .arg(&tree.root)
                .output()
                .expect("check");
            assert!(check_again.status.success(), "{label}: a second run must find nothing to change");
            let results = (compiles_before.expect("checked before"), check(&tree.root, krate));
            if matches!(expect, Expect::Compiles) {
                assert!(
                    matches!(results, (Ok(()), Ok(()))),
                    "{label}: {krate} {version} must compile before and after the rewrite: {results:#?}"
                );
            }
            match results {
                (Ok(()), Ok(())) => println!("{label}: {krate} {version} wired and compiles"),
                (Ok(()), Err(after)) => {
                    panic!("{label}: {krate} {version} compiled before the rewrite and not after:\n{after:#?}")
                }
                (Err(before), Ok(())) => {
                    println!("{label}: {krate} {version} wired; compiles now (did not before: {} errors)", before.len())
                }
                (Err(before), Err(after)) => {
                    let new: Vec<&String> = after.iter().filter(|e| !before.contains(e)).collect();
                    assert!(new.is_empty(), "{label}: the rewrite added compile errors: {new:?}");
                    println!(
                        "{label}: {krate} {version} wired; it does not build against today's runtime crates with or \
                         without smithy-tls (same {} upstream errors, none added), e.g. {}",
                        after.len(),
                        after.first().map(String::as_str).unwrap_or("")
                    );
                }
            }
        }
    }
}

#[test]
fn sts_0_28_from_2023_is_refused() {
    case("sts-0.28", &[("aws-sdk-sts", "=0.28.0")], Expect::Refused("base_client_runtime_plugins"));
}

#[test]
fn sts_1_34_is_wired_and_compiles() {
    case("sts-1.34", &[("aws-sdk-sts", "=1.34.0")], Expect::Compiles);
}

#[test]
fn sts_1_62_is_wired_and_compiles() {
    case("sts-1.62", &[("aws-sdk-sts", "=1.62.0")], Expect::Compiles);
}

#[test]
fn aws_config_1_5_is_wired_and_adds_no_compile_error() {
    // aws-config 1.5 does not build against today's aws-smithy-runtime (it uses items later
    // releases gate behind `http-02x`), with or without smithy-tls: the test then checks that
    // the rewrite adds no error of its own.
    case("aws-config-1.5", &[("aws-config", "=1.5.18")], Expect::WiredFailsUpstream);
}

/// October 2023: after the orchestrator (the service config has the anchor) but on
/// aws-smithy-runtime-api 0.57, whose `SharedHttpClient` is not the runtime crate's. Wired, it
/// failed to compile (E0308); it must be refused with the minimum version, and left untouched.
#[test]
fn sts_0_35_on_runtime_api_0_57_is_refused() {
    case("sts-0.35", &[("aws-sdk-sts", "=0.35.0")], Expect::Refused("aws-smithy-runtime-api `0.57.1`"));
}

#[test]
fn s3_0_35_on_runtime_api_0_57_is_refused() {
    case("s3-0.35", &[("aws-sdk-s3", "=0.35.0")], Expect::Refused("aws-smithy-runtime-api `0.57.1`"));
}

#[test]
fn aws_config_0_57_on_runtime_api_0_57_is_refused() {
    case("aws-config-0.57", &[("aws-config", "=0.57.1")], Expect::Refused("1.19.0"));
}

/// The oldest vintage the gate accepts that the registry still serves (1.0.x is no longer
/// available): aws-sdk-sts 1.1.0 (December 2023) asks for a caret 1.x aws-smithy-runtime-api, so
/// cargo resolves it to the 1.x the runtime needs.
#[test]
fn sts_1_1_the_oldest_accepted_vintage_is_wired() {
    case("sts-1-1", &[("aws-sdk-sts", "=1.1.0")], Expect::Compiles);
}
