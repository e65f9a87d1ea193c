//! Switching policy and reverting on the published crates (aws-config, aws-sdk-sts, aws-sdk-s3
//! and the SSO clients, fetched at test time), compared byte for byte (nothing is built):
//!
//! - for every ordered pair of presets A, B: `apply --preset A` then `apply --preset B` gives
//!   exactly what `apply --preset B` gives on the untouched tree;
//! - `revert` after that gives the untouched tree back, and a second `revert` writes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::presets;
use smithy_tls_e2e::support::fs::{link_tree, tree_files};
use smithy_tls_e2e::{prepare_sdk_tree, run, scratch_root, smithy_tls_binary, PUBLISHED};

/// The paths whose bytes differ (or exist on one side only).
fn differences(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<PathBuf> {
    a.keys()
        .chain(b.keys())
        .filter(|p| a.get(*p) != b.get(*p))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn smithy_tls(binary: &Path, args: &[&str], tree: &Path) -> String {
    let out = run(Command::new(binary).args(args).arg(tree));
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn every_preset_switch_and_revert_on_the_published_crates() {
    let root = scratch_root().join("switching");
    let pristine = prepare_sdk_tree(&root.join("pristine"), PUBLISHED, &[], false).root;
    let untouched = tree_files(&pristine);
    let binary = smithy_tls_binary();
    let names: Vec<&str> = presets::names().collect();

    let mut direct = BTreeMap::new();
    for b in &names {
        let tree = root.join(format!("direct-{b}"));
        let _ = std::fs::remove_dir_all(&tree);
        link_tree(&pristine, &tree, &[]).expect("link a copy");
        smithy_tls(&binary, &["apply", "--preset", b], &tree);
        let applied = tree_files(&tree);
        assert!(applied.keys().any(|p| p.ends_with("src/default_http_client.rs")), "{b}: nothing wired");
        direct.insert(*b, applied);
        let _ = std::fs::remove_dir_all(&tree);
    }

    let tree = root.join("switched");
    for a in &names {
        for b in &names {
            let _ = std::fs::remove_dir_all(&tree);
            link_tree(&pristine, &tree, &[]).expect("link a copy");
            smithy_tls(&binary, &["apply", "--preset", a], &tree);
            smithy_tls(&binary, &["apply", "--preset", b], &tree);
            let diff = differences(&tree_files(&tree), &direct[b]);
            assert!(diff.is_empty(), "{a} then {b} differs from {b} on the untouched tree in {diff:?}");

            let out = smithy_tls(&binary, &["revert"], &tree);
            let diff = differences(&tree_files(&tree), &untouched);
            assert!(diff.is_empty(), "revert after {a}, {b} left {diff:?}\n{out}");
            let again = smithy_tls(&binary, &["revert"], &tree);
            assert!(again.contains("0 file(s) written"), "{again}");
        }
    }
    // The copies are hard links to the pristine tree's files (20 copies of ~3,000 files): a
    // run that wrote into a file instead of replacing it would have changed the pristine too.
    let diff = differences(&tree_files(&pristine), &untouched);
    assert!(diff.is_empty(), "a run wrote through a link into the pristine tree: {diff:?}");
    println!("E2E switching: {} ordered preset pairs and their reverts byte-identical", names.len() * names.len());
    let _ = std::fs::remove_dir_all(&root);
}
