//! Whole-tree runs over fixture crates we wrote in the shapes of real generated crates:
//! the unified diff per fixture and preset is snapshotted; re-running is a no-op; output is
//! deterministic; crates that cannot be wired are left untouched with the reason.

use std::path::{Path, PathBuf};

use smithy_tls_codegen::discover::discover;
use smithy_tls_codegen::model::{CompiledPolicy, LegacyRustls};
use smithy_tls_codegen::plan::{plan, Plan};
use smithy_tls_codegen::write::{unified_diff, write_plan};
use smithy_tls_codegen::{compile, policy, presets};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees")
}

fn compiled(preset: &str) -> CompiledPolicy {
    let parsed = policy::parse_policy(presets::preset(preset).unwrap()).unwrap();
    compile::compile(&parsed).unwrap()
}

/// The test policy that keeps the SDK's legacy `rustls` feature (no shipped preset does).
fn keep_legacy_rustls() -> CompiledPolicy {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policies/keep-legacy-rustls.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = policy::parse_policy(policy::PolicySource { path: "keep-legacy-rustls.toml".into(), text })
        .unwrap_or_else(|d| panic!("{d}"));
    compile::compile(&parsed).unwrap_or_else(|d| panic!("{d}"))
}

/// A scratch SDK root holding one fixture crate at `<root>/<case>`.
fn scratch(case: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    smithy_tls_test_support::copy_tree(&fixtures().join(case), &root.path().join(case), &[]).unwrap();
    root
}

fn plan_tree(root: &Path, compiled: &CompiledPolicy) -> Plan {
    let discovery = discover(root, &compiled.policy.runtime.package).unwrap();
    plan(compiled, &discovery).unwrap_or_else(|e| panic!("{e:?}"))
}

fn diff_of(plan: &Plan, root: &Path) -> String {
    plan.changes().map(|c| unified_diff(c, root)).collect()
}

/// What a snapshot holds for a planned tree: the diff, then each skipped crate and why.
fn report_of(plan: &Plan, root: &Path) -> String {
    let mut report = diff_of(plan, root);
    for skipped in &plan.skipped {
        report.push_str(&format!(
            "skipped {} (unsupported: {}): {}\n",
            skipped.name,
            skipped.unsupported(),
            skipped.reason
        ));
    }
    report
}

/// Compares `report` with the `diff` snapshot for `suffix` (`<case>@<policy>`), versions, hashes
/// and temporary paths masked.
fn assert_diff_snapshot(suffix: &str, report: &str) {
    insta::with_settings!({
        snapshot_suffix => suffix,
        filters => vec![
            (r"smithy-tls \d+\.\d+\.\d+", "smithy-tls [VERSION]"),
            (r"sha256 [0-9a-f]{16}", "sha256 [HASH]"),
            (r"/tmp/\.tmp[A-Za-z0-9]+", "[ROOT]"),
        ],
    }, {
        insta::assert_snapshot!("diff", report);
    });
}

fn cases() -> Vec<String> {
    let mut cases: Vec<String> =
        std::fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    cases.sort();
    cases
}

#[test]
fn snapshot_diffs_for_every_fixture_and_preset() {
    for case in cases() {
        for preset in presets::names() {
            let root = scratch(&case);
            let compiled = compiled(preset);
            let planned = plan_tree(root.path(), &compiled);
            let report = report_of(&planned, root.path());
            assert_diff_snapshot(&format!("{case}@{preset}"), &report);
        }
    }
}

/// `legacy-rustls = "keep"`: the `rustls` feature stays as generated (aws-config's still enables
/// `client-hyper`, which the rewrite points at the default client), and the rest of the edit is
/// what the presets do.
#[test]
fn snapshot_diffs_with_the_legacy_rustls_feature_kept() {
    let compiled = keep_legacy_rustls();
    for case in cases() {
        let root = scratch(&case);
        let planned = plan_tree(root.path(), &compiled);
        let report = report_of(&planned, root.path());
        let kept = match case.as_str() {
            "aws-config" => Some("\n rustls = [\"client-hyper\"]\n"),
            "dotted-tables" => Some("\n rustls = [\"aws-smithy-runtime/tls-rustls\"]\n"),
            _ => None,
        };
        if let Some(line) = kept {
            assert!(report.contains(line), "{case}: `rustls` must be left as generated:\n{report}");
        }
        assert!(
            !report.contains("\n+rustls =") && !report.contains("\n-rustls ="),
            "{case}: `rustls` rewritten:\n{report}"
        );
        assert_diff_snapshot(&format!("{case}@keep-legacy-rustls"), &report);
        write_plan(&planned).unwrap();
        assert!(plan_tree(root.path(), &compiled).is_up_to_date(), "{case}: a second run must change nothing");
    }
}

/// No shipped preset keeps the legacy `rustls` feature: kept, it compiles hyper 0.14 and rustls
/// 0.21 (the stack the rewrite exists to remove) into every application using the SDK's defaults.
#[test]
fn no_preset_keeps_the_legacy_rustls_feature() {
    for preset in presets::names() {
        assert_eq!(compiled(preset).policy.legacy_rustls, LegacyRustls::AliasDefault, "{preset}");
    }
    assert_eq!(keep_legacy_rustls().policy.legacy_rustls, LegacyRustls::Keep);
}

#[test]
fn apply_then_plan_is_a_no_op_and_deterministic() {
    for case in cases() {
        for preset in presets::names() {
            let root = scratch(&case);
            let compiled = compiled(preset);
            let first = plan_tree(root.path(), &compiled);
            let again = plan_tree(root.path(), &compiled);
            assert_eq!(first, again, "{case}@{preset}: planning must be deterministic");
            write_plan(&first).unwrap();
            let after = plan_tree(root.path(), &compiled);
            assert!(
                after.is_up_to_date(),
                "{case}@{preset}: second run must change nothing:\n{}",
                diff_of(&after, root.path())
            );
        }
    }
}

#[test]
fn switching_policy_rewrites_cleanly() {
    for case in ["dotted-tables", "renamed-inline", "aws-config"] {
        let root = scratch(case);
        let a = compiled("platform-default");
        let b = compiled("portable");
        write_plan(&plan_tree(root.path(), &a)).unwrap();
        write_plan(&plan_tree(root.path(), &b)).unwrap();
        let via_a: Vec<(PathBuf, String)> = std::fs::read_dir(root.path().join(case))
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let text = if p.is_file() { std::fs::read_to_string(&p).unwrap() } else { String::new() };
                (p, text)
            })
            .collect();
        let direct = scratch(case);
        write_plan(&plan_tree(direct.path(), &b)).unwrap();
        for (path, text) in via_a {
            if text.is_empty() {
                continue;
            }
            let other = direct.path().join(case).join(path.file_name().unwrap());
            assert_eq!(
                text,
                std::fs::read_to_string(other).unwrap(),
                "{case}: {} differs after a policy switch",
                path.display()
            );
        }
        // And the sources hold exactly one hook each.
        let config = direct.path().join(case).join("src/config.rs");
        if let Ok(text) = std::fs::read_to_string(config) {
            assert_eq!(text.matches("default_http_client::runtime_plugin").count(), 1);
        }
    }
}

#[test]
fn legacy_crate_is_left_untouched_with_a_reason() {
    let root = scratch("legacy-2023");
    let before = std::fs::read_to_string(root.path().join("legacy-2023/Cargo.toml")).unwrap();
    let planned = plan_tree(root.path(), &compiled("platform-default"));
    assert!(planned.is_up_to_date());
    let skipped = planned.skipped.iter().find(|s| s.name == "fixture-sdk-legacy").expect("reported");
    assert!(skipped.unsupported());
    assert!(skipped.reason.to_string().contains("base_client_runtime_plugins"), "{}", skipped.reason);
    write_plan(&planned).unwrap();
    assert_eq!(before, std::fs::read_to_string(root.path().join("legacy-2023/Cargo.toml")).unwrap());
}

/// Rewrites every text file of a tree with CRLF line endings.
fn to_crlf(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            to_crlf(&path);
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            std::fs::write(&path, text.replace("\r\n", "\n").replace('\n', "\r\n")).unwrap();
        }
    }
}

#[test]
fn crlf_crates_stay_crlf_in_every_file_written_and_rerun_is_a_no_op() {
    for case in ["dotted-tables", "aws-config"] {
        let root = scratch(case);
        to_crlf(root.path());
        let compiled = compiled("platform-default");
        let planned = plan_tree(root.path(), &compiled);
        assert!(planned.changes().count() >= 3, "{case}: manifest, module and source edits expected");
        write_plan(&planned).unwrap();
        for change in planned.changes() {
            let written = std::fs::read_to_string(&change.path).unwrap();
            let lone = written.matches('\n').count() - written.matches("\r\n").count();
            assert_eq!(lone, 0, "{case}: {} has {lone} LF-only lines", change.path.display());
        }
        let after = plan_tree(root.path(), &compiled);
        assert!(after.is_up_to_date(), "{case}: second run must change nothing:\n{}", diff_of(&after, root.path()));
    }
}
