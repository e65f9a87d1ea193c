//! A rule's `empty-store = "webpki"`: `native` roots that fall back to the bundled roots where
//! the system store yields no certificate. Off by default (every preset leaves it off); where a
//! rule turns it on, the emitted module asks the runtime for `TrustRoots::NativeOrWebpki`, the
//! manifest enables the runtime's `webpki` feature too (manifest/tests.rs), and `explain` names
//! it, for people and in the JSON.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use smithy_tls_codegen::model::{EmptyStore, Roots};
use smithy_tls_codegen::policy::{parse_policy, PolicySource};
use smithy_tls_codegen::{compile, emit, presets};

fn policy_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policies/empty-store.toml")
}

fn module() -> String {
    let text = std::fs::read_to_string(policy_file()).unwrap();
    let parsed = parse_policy(PolicySource { path: "empty-store.toml".into(), text }).unwrap_or_else(|d| panic!("{d}"));
    let compiled = compile::compile(&parsed).unwrap_or_else(|d| panic!("{d}"));
    emit::render_module(&compiled).unwrap()
}

/// Runs `explain` on the fixture policy without colour; returns stdout (the command must succeed
/// quietly).
fn explain(args: &[&str]) -> String {
    let policy = policy_file();
    let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls"))
        .args(["--color", "never", "explain", "--policy"])
        .arg(&policy)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "explain {args:?}:\n{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_preset_leaves_it_off() {
    for name in presets::names() {
        let parsed = parse_policy(presets::preset(name).unwrap()).unwrap();
        for rule in parsed.policy.all_rules() {
            assert_eq!(rule.stack.empty_store(), EmptyStore::Fail, "{name}: rule `{}`", rule.name);
        }
    }
}

#[test]
fn snapshot_module_with_the_fallback() {
    let module = module();
    // The rules that fall back ask for the runtime's fallback roots; the one that fails keeps
    // plain `Native`.
    assert_eq!(module.matches("R::NativeOrWebpki);").count(), 2, "{module}");
    assert_eq!(module.matches("R::Native);").count(), 1, "{module}");
    insta::assert_snapshot!(module);
}

#[test]
fn explain_names_it_for_one_target() {
    let out = explain(&["--target", "x86_64-unknown-linux-gnu"]);
    let first = out.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "x86_64-unknown-linux-gnu: rule `linux-gnu-x86_64` → provider s2n-tls, roots native, else webpki"
    );
    assert!(out.contains(&format!("  roots `native`: {}\n", Roots::Native.meaning())), "{out}");
    assert!(out.contains(&format!("  empty-store `webpki`: {}\n", EmptyStore::Webpki.meaning())), "{out}");
    // Where the rule keeps the default, nothing is said about it.
    let musl = explain(&["--target", "x86_64-unknown-linux-musl"]);
    assert!(musl.lines().next().unwrap_or_default().ends_with("roots native"), "{musl}");
    assert!(!musl.contains("empty-store"), "{musl}");
}

#[test]
fn explain_names_it_in_the_matrix() {
    let out = explain(&[]);
    let row = out.lines().find(|l| l.starts_with("aarch64-unknown-linux-gnu ")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("native, else webpki") && row.ends_with("linux-gnu-aarch64"), "{row}");
    let rules: Vec<&str> = out.lines().filter(|l| l.contains("empty-store `webpki`")).collect();
    assert_eq!(rules.len(), 2, "one line under each rule that falls back:\n{out}");
}

#[test]
fn explain_names_it_in_the_json() {
    let doc: Value = serde_json::from_str(&explain(&["--format", "json"])).unwrap();
    let rule = |name: &str| {
        doc["rules"].as_array().unwrap().iter().find(|r| r["name"] == name).cloned().unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(rule("linux-gnu-x86_64")["empty_store"], "webpki");
    assert_eq!(rule("linux-gnu-aarch64")["empty_store"], "webpki");
    // The default is left out, as it always was.
    assert!(rule("linux-musl").get("empty_store").is_none(), "{:#}", rule("linux-musl"));
    let target =
        doc["targets"].as_array().unwrap().iter().find(|t| t["target"] == "aarch64-unknown-linux-gnu").unwrap();
    assert_eq!((&target["roots"], &target["empty_store"]), (&Value::from("native"), &Value::from("webpki")));
}
