//! The S3 transfer manager over a fixture we wrote in the shape of aws-sdk-s3-transfer-manager
//! 0.3 (`tests/fixtures/transfer-manager`): the diff per preset is snapshotted; applying twice
//! changes nothing; switching presets equals applying to the untouched crate; revert gives every
//! file back byte for byte, in LF and CRLF files alike; a layout without the transport is left
//! alone with the reason. The published crate itself: tests/tests/transfer_manager.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use smithy_tls_codegen::discover::{discover, CrateKind, SkipReason};
use smithy_tls_codegen::model::CompiledPolicy;
use smithy_tls_codegen::plan::{plan, plan_revert, Plan};
use smithy_tls_codegen::write::{unified_diff, write_plan};
use smithy_tls_codegen::{compile, policy, presets};

const CRATE: &str = "aws-sdk-s3-transfer-manager";

fn compiled(preset: &str) -> CompiledPolicy {
    let parsed = policy::parse_policy(presets::preset(preset).unwrap()).unwrap();
    compile::compile(&parsed).unwrap()
}

/// A scratch root holding the fixture at `<root>/transfer-manager`, in CRLF when `crlf`.
fn scratch(crlf: bool) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transfer-manager");
    let tree = root.path().join("transfer-manager");
    smithy_tls_test_support::copy_tree(&fixture, &tree, &[]).unwrap();
    if crlf {
        for (path, text) in files(&tree) {
            std::fs::write(path, text.replace('\n', "\r\n")).unwrap();
        }
    }
    root
}

/// Every file under `dir` with its text.
fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read_to_string(e.path()).unwrap()))
        .collect()
}

/// [`files`] by path relative to `root`.
fn relative(root: &Path) -> BTreeMap<PathBuf, String> {
    files(root).into_iter().map(|(path, text)| (path.strip_prefix(root).unwrap().to_path_buf(), text)).collect()
}

fn plan_tree(root: &Path, compiled: &CompiledPolicy) -> Plan {
    let discovery = discover(root, &compiled.policy.runtime.package).unwrap();
    plan(compiled, &discovery).unwrap_or_else(|e| panic!("{e:?}"))
}

fn apply(root: &Path, preset: &str) -> Plan {
    let planned = plan_tree(root, &compiled(preset));
    write_plan(&planned).unwrap();
    planned
}

fn revert(root: &Path) {
    let discovery = discover(root, "smithy-default-tls").unwrap();
    write_plan(&plan_revert(&discovery).unwrap_or_else(|e| panic!("{e:?}"))).unwrap();
}

#[test]
fn the_diff_per_preset() {
    for preset in presets::names() {
        let root = scratch(false);
        let planned = plan_tree(root.path(), &compiled(preset));
        assert_eq!(planned.crates.len(), 1, "{preset}: {planned:?}");
        assert_eq!((planned.crates[0].name.as_str(), planned.crates[0].kind), (CRATE, CrateKind::TransferManager));
        let diff: String = planned.changes().map(|c| unified_diff(c, root.path())).collect();
        insta::with_settings!({
            snapshot_suffix => preset,
            filters => vec![(r"sha256 [0-9a-f]{16}", "sha256 [HASH]")],
        }, {
            insta::assert_snapshot!("diff", diff);
        });
    }
}

#[test]
fn apply_is_idempotent_switching_converges_and_revert_restores_every_byte() {
    for crlf in [false, true] {
        let fresh = scratch(crlf);
        let untouched = relative(fresh.path());
        for preset in presets::names() {
            let direct = scratch(crlf);
            apply(direct.path(), preset);
            assert!(plan_tree(direct.path(), &compiled(preset)).is_up_to_date(), "{preset}: a second apply changes");
            for file in relative(direct.path()).values() {
                let lone = file.matches('\n').count() - file.matches("\r\n").count();
                assert!(!crlf || lone == 0, "{preset}: an LF line in a CRLF crate:\n{file}");
            }
            for other in presets::names() {
                let switched = scratch(crlf);
                apply(switched.path(), other);
                apply(switched.path(), preset);
                assert_eq!(relative(switched.path()), relative(direct.path()), "{other} then {preset}");
            }
            revert(direct.path());
            assert_eq!(relative(direct.path()), untouched, "{preset}: revert (crlf {crlf})");
        }
    }
}

#[test]
fn a_transfer_manager_without_the_transport_is_left_alone_with_the_reason() {
    let root = scratch(false);
    std::fs::remove_file(root.path().join("transfer-manager/src/runtime/managed.rs")).unwrap();
    let discovery = discover(root.path(), "smithy-default-tls").unwrap();
    assert!(discovery.crates.is_empty(), "{discovery:?}");
    assert_eq!(discovery.skipped[0].reason, SkipReason::TransferManagerWithoutTransport);
    assert!(discovery.skipped[0].unsupported());

    // A transport whose provider is not set where the tool looks: skipped, saying what is missing.
    let root = scratch(false);
    let managed = root.path().join("transfer-manager/src/runtime/managed.rs");
    let text = std::fs::read_to_string(&managed).unwrap().replace(".tls_provider(", ".provider(");
    std::fs::write(&managed, text).unwrap();
    let planned = plan_tree(root.path(), &compiled("platform-default"));
    assert!(planned.crates.is_empty() && planned.is_up_to_date(), "{planned:?}");
    let reason = planned.skipped[0].reason.to_string();
    assert!(reason.contains("`.tls_provider(..)`") && reason.contains("(0.3)"), "{reason}");
}
