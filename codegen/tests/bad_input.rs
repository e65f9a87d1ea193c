//! The generator under bad input, through the real binary: each case gives exit code 2 and a
//! message that names the file (with its line where there is one) and what to do, and leaves
//! every file of every tree byte-identical.

use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_test_support::fs::tree_files;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees")
}

/// A tree with two fixture crates that can be wired, `dotted-tables` and `unformatted`.
fn good_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for case in ["dotted-tables", "unformatted"] {
        smithy_tls_test_support::copy_tree(&fixtures().join(case), &root.path().join(case), &[]).unwrap();
    }
    root
}

/// The default preset without `[runtime] path`: these trees hold no runtime crate, and what is
/// checked here is the generator's handling of bad input, not the pairing with the runtime.
fn policy_without_runtime_path() -> &'static Path {
    static POLICY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        let text = smithy_tls_codegen::presets::preset("platform-default").unwrap().text;
        let text = text.replace("path = \"smithy-default-tls\"\n", "");
        // In cargo's scratch dir for integration tests, under one name: the text is the same on
        // every run, and nothing is left in the system's temporary directory.
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad-input-policy.toml");
        std::fs::write(&path, text).unwrap();
        path
    })
}

/// Runs `smithy-tls apply [extra] dirs...`; returns the exit code and stderr.
fn apply(dirs: &[&Path], extra: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls"))
        .arg("apply")
        .arg("--policy")
        .arg(policy_without_runtime_path())
        .args(extra)
        .args(dirs)
        .output()
        .expect("run smithy-tls");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Applies to `dirs`, expecting exit 2, every fragment in stderr, and no file changed under
/// `watch`.
fn refused(watch: &Path, dirs: &[&Path], fragments: &[&str]) {
    refused_with(watch, dirs, &[], fragments);
}

fn refused_with(watch: &Path, dirs: &[&Path], extra: &[&str], fragments: &[&str]) {
    let before = tree_files(watch);
    let (code, stderr) = apply(dirs, extra);
    assert_eq!(code, Some(2), "{stderr}");
    for fragment in fragments {
        assert!(stderr.contains(fragment), "missing `{fragment}` in:\n{stderr}");
    }
    assert_eq!(tree_files(watch), before, "a refused run changed files:\n{stderr}");
}

#[test]
fn a_manifest_that_is_not_utf8_is_named_with_its_line() {
    let tree = good_tree();
    let manifest = tree.path().join("unformatted/Cargo.toml");
    let mut bytes = std::fs::read(&manifest).unwrap();
    bytes.splice(0..0, b"# caf\xe9\n".iter().copied());
    std::fs::write(&manifest, bytes).unwrap();
    refused(
        tree.path(),
        &[tree.path()],
        &[&manifest.display().to_string(), "not valid UTF-8 at line 1, column 6", "fix the file's encoding"],
    );
}

#[test]
fn a_source_that_is_not_utf8_is_named_with_its_line() {
    let tree = good_tree();
    let config = tree.path().join("unformatted/src/config.rs");
    let mut bytes = std::fs::read(&config).unwrap();
    bytes.extend(b"\n// \xff\n");
    std::fs::write(&config, bytes).unwrap();
    refused(
        tree.path(),
        &[tree.path()],
        &[&config.display().to_string(), "not valid UTF-8", "fix the file's encoding"],
    );
}

#[test]
fn a_malformed_manifest_is_named_with_line_and_column() {
    let tree = good_tree();
    let manifest = tree.path().join("unformatted/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replacen("[package]", "[package", 1);
    std::fs::write(&manifest, text).unwrap();
    refused(
        tree.path(),
        &[tree.path()],
        &[&format!("{}:", manifest.display()), "invalid TOML", "fix the syntax error"],
    );
}

#[test]
fn a_hand_edited_config_with_a_second_plugin_function_is_left_untouched_with_both_lines() {
    let tree = good_tree();
    let config = tree.path().join("dotted-tables/src/config.rs");
    let mut text = std::fs::read_to_string(&config).unwrap();
    let first = text.lines().position(|l| l.contains("fn base_client_runtime_plugins")).expect("the function") + 1;
    let second = text.lines().count() + 2;
    text.push_str(
        "mod hand_edited {\n    pub(crate) fn base_client_runtime_plugins() { x.with_client_plugins(default_plugins(p)); }\n}\n",
    );
    std::fs::write(&config, text).unwrap();
    let fragments = [&config.display().to_string(), "base_client_runtime_plugins", &format!("lines {first}, {second}")];
    refused_with(tree.path(), &[tree.path()], &["--strict"], &fragments);
    // Without --strict the other crate is wired and this one is left as it is, with the reason.
    let crate_dir = tree.path().join("dotted-tables");
    let before = tree_files(&crate_dir);
    let (code, stderr) = apply(&[tree.path()], &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(fragments.iter().all(|f| stderr.contains(f)), "{stderr}");
    assert_eq!(tree_files(&crate_dir), before);
}

#[test]
fn one_broken_crate_in_400_leaves_all_400_untouched() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..400 {
        let dir = root.path().join(format!("crate-{i:03}"));
        smithy_tls_test_support::copy_tree(&fixtures().join("unformatted"), &dir, &[]).unwrap();
        let manifest = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let renamed = text.replacen("name = \"", &format!("name = \"c{i:03}-"), 1);
        let text = if i == 200 { renamed.replacen("[features]", "[features", 1) } else { renamed };
        std::fs::write(&manifest, text).unwrap();
    }
    refused(root.path(), &[root.path()], &["crate-200/Cargo.toml:", "invalid TOML"]);
}

#[test]
fn several_trees_where_the_last_is_broken_leave_the_first_untouched() {
    let scratch = tempfile::tempdir().unwrap();
    let (first, last) = (scratch.path().join("first"), scratch.path().join("last"));
    smithy_tls_test_support::copy_tree(&fixtures().join("dotted-tables"), &first.join("dotted-tables"), &[]).unwrap();
    smithy_tls_test_support::copy_tree(&fixtures().join("unformatted"), &last.join("unformatted"), &[]).unwrap();
    let manifest = last.join("unformatted/Cargo.toml");
    std::fs::write(&manifest, std::fs::read_to_string(&manifest).unwrap().replacen("[package]", "[package", 1))
        .unwrap();
    refused(scratch.path(), &[&first, &last], &["unformatted/Cargo.toml:", "invalid TOML"]);
}

#[test]
fn a_read_only_manifest_is_refused_before_anything_is_written() {
    let tree = good_tree();
    let manifest = tree.path().join("unformatted/Cargo.toml");
    let mut perms = std::fs::metadata(&manifest).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&manifest, perms).unwrap();
    refused(tree.path(), &[tree.path()], &[&manifest.display().to_string(), "is read-only", "make it writable"]);
}

#[cfg(unix)]
#[test]
fn a_symlinked_crate_is_not_followed_and_strict_refuses_it() {
    let scratch = tempfile::tempdir().unwrap();
    let (tree, elsewhere) = (scratch.path().join("tree"), scratch.path().join("elsewhere"));
    smithy_tls_test_support::copy_tree(&fixtures().join("dotted-tables"), &tree.join("dotted-tables"), &[]).unwrap();
    smithy_tls_test_support::copy_tree(&fixtures().join("unformatted"), &elsewhere.join("unformatted"), &[]).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("unformatted"), tree.join("linked")).unwrap();
    let outside = tree_files(&elsewhere);

    let before = tree_files(&tree);
    let (code, stderr) = apply(&[&tree], &["--strict"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link to a crate") && stderr.contains("linked"), "{stderr}");
    assert_eq!(tree_files(&tree), before);

    // Without --strict the rest of the tree is wired; the link and what it points to are not.
    let (code, stderr) = apply(&[&tree], &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("symbolic link to a crate"), "the skipped link is reported:\n{stderr}");
    assert_ne!(tree_files(&tree), before);
    assert_eq!(tree_files(&elsewhere), outside, "nothing outside the tree is written");
}

#[cfg(unix)]
#[test]
fn a_crate_whose_src_is_a_link_is_refused_and_nothing_outside_is_written() {
    let scratch = tempfile::tempdir().unwrap();
    let (tree, elsewhere) = (scratch.path().join("tree"), scratch.path().join("elsewhere"));
    smithy_tls_test_support::copy_tree(&fixtures().join("unformatted"), &tree.join("unformatted"), &[]).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::rename(tree.join("unformatted/src"), elsewhere.join("src")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("src"), tree.join("unformatted/src")).unwrap();
    refused(scratch.path(), &[&tree], &["unformatted/src", "directory that is a symbolic link"]);
}

#[cfg(unix)]
#[test]
fn a_link_to_a_folder_of_crates_is_reported_and_strict_refuses_it() {
    let scratch = tempfile::tempdir().unwrap();
    let (tree, vendor) = (scratch.path().join("tree"), scratch.path().join("vendor"));
    smithy_tls_test_support::copy_tree(&fixtures().join("dotted-tables"), &tree.join("dotted-tables"), &[]).unwrap();
    for case in ["unformatted", "renamed-inline"] {
        smithy_tls_test_support::copy_tree(&fixtures().join(case), &vendor.join(case), &[]).unwrap();
    }
    std::os::unix::fs::symlink(&vendor, tree.join("vendored")).unwrap();
    refused_with(scratch.path(), &[&tree], &["--strict"], &["a symbolic link to 2 crates", "vendored"]);
}
