//! Runs converge, through the real binary on the fixture trees (the same on the published crates
//! runs in tests/tests/preset_switching.rs):
//!
//! - `apply --preset B` on a tree rewritten with preset A gives byte for byte what B gives on the
//!   untouched tree, for every ordered pair of presets;
//! - `revert` gives the untouched tree back byte for byte, after any preset or switch, and then
//!   has nothing left to do;
//! - what a user changed after `apply` is never undone.

use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::presets;
use smithy_tls_test_support::fs::tree_files;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees")
}

fn smithy_tls(args: &[&str], dir: &Path) -> String {
    let (code, text) = smithy_tls_status(args, dir);
    assert_eq!(code, Some(0), "smithy-tls {args:?}: {text}");
    text
}

/// A fresh copy of the fixture trees.
fn fresh(root: &Path, name: &str) -> PathBuf {
    let tree = root.join(name);
    smithy_tls_test_support::copy_tree(&fixtures(), &tree, &[]).unwrap();
    tree
}

fn assert_same_tree(what: &str, got: &Path, want: &Path) {
    let (got, want) = (tree_files(got), tree_files(want));
    let paths: Vec<&PathBuf> = got.keys().chain(want.keys()).collect();
    for path in paths {
        let (a, b) = (got.get(path), want.get(path));
        assert!(
            a == b,
            "{what}: {} differs:\n--- got\n{}\n--- want\n{}",
            path.display(),
            a.map(|a| String::from_utf8_lossy(a).into_owned()).unwrap_or_else(|| "(missing)".to_owned()),
            b.map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_else(|| "(missing)".to_owned()),
        );
    }
}

#[test]
fn switching_presets_equals_applying_to_the_untouched_tree() {
    let root = tempfile::tempdir().unwrap();
    let names: Vec<&str> = presets::names().collect();
    for b in &names {
        let direct = fresh(root.path(), &format!("direct-{b}"));
        smithy_tls(&["apply", "--preset", b], &direct);
        for a in &names {
            let switched = fresh(root.path(), &format!("{a}-then-{b}"));
            smithy_tls(&["apply", "--preset", a], &switched);
            smithy_tls(&["apply", "--preset", b], &switched);
            assert_same_tree(&format!("{a} then {b}"), &switched, &direct);
        }
    }
}

#[test]
fn revert_gives_the_untouched_tree_back() {
    let root = tempfile::tempdir().unwrap();
    let names: Vec<&str> = presets::names().collect();
    for (i, preset) in names.iter().enumerate() {
        let tree = fresh(root.path(), preset);
        smithy_tls(&["apply", "--preset", preset], &tree);
        // And once through a switch, so the record of a re-applied crate is undone too.
        let next = names[(i + 1) % names.len()];
        smithy_tls(&["apply", "--preset", next], &tree);
        let out = smithy_tls(&["revert"], &tree);
        assert!(out.contains("4 crate(s) reverted"), "{out}");
        assert_same_tree(&format!("{preset}, {next}, revert"), &tree, &fixtures());
        let again = smithy_tls(&["revert"], &tree);
        assert!(again.contains("0 crate(s) reverted, 0 file(s) written"), "{again}");
    }
}

#[test]
fn a_feature_the_user_changed_after_apply_is_kept() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    smithy_tls(&["apply", "--preset", "platform-default"], &tree);
    let manifest = tree.join("unformatted/Cargo.toml");
    let applied = std::fs::read_to_string(&manifest).unwrap();
    let edited = applied.replacen(
        "default-https-client = [\"dep:smithy-default-tls\", \"dep:smithy-wasi-http\", \"aws-smithy-runtime/rt-tokio\"]",
        "default-https-client = [\"dep:smithy-default-tls\", \"dep:smithy-wasi-http\", \"aws-smithy-runtime/rt-tokio\", \"tracing\"]",
        1,
    );
    assert_ne!(edited, applied, "the fixture's feature has the expected spelling");
    std::fs::write(&manifest, &edited).unwrap();

    let out = smithy_tls(&["revert"], &tree);
    assert!(out.contains("feature `default-https-client` changed after smithy-tls wrote it; left as it is"), "{out}");
    let reverted = std::fs::read_to_string(&manifest).unwrap();
    // The user's feature stays, without its references to the runtime crate and
    // smithy-wasi-http, whose dependencies are gone (cargo would reject the manifest otherwise).
    assert!(reverted.contains("default-https-client = [\"aws-smithy-runtime/rt-tokio\", \"tracing\"]"), "{reverted}");
    assert!(!reverted.contains("smithy-default-tls") && !reverted.contains("smithy-wasi-http"), "{reverted}");
    assert!(!reverted.contains("[package.metadata.smithy-tls]"), "{reverted}");
    // Every other crate is back to the original.
    for krate in ["aws-config", "dotted-tables", "renamed-inline", "legacy-2023"] {
        assert_same_tree(krate, &tree.join(krate), &fixtures().join(krate));
    }
}

#[test]
fn a_feature_only_reformatted_after_apply_is_still_the_tools() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    smithy_tls(&["apply", "--preset", "platform-default"], &tree);
    let manifest = tree.join("unformatted/Cargo.toml");
    let applied = std::fs::read_to_string(&manifest).unwrap();
    // What a TOML formatter might do: one entry per line.
    let formatted = applied.replacen(
        "default-https-client = [\"dep:smithy-default-tls\", \"dep:smithy-wasi-http\", \"aws-smithy-runtime/rt-tokio\"]",
        "default-https-client = [\n    \"dep:smithy-default-tls\",\n    \"dep:smithy-wasi-http\",\n    \"aws-smithy-runtime/rt-tokio\",\n]",
        1,
    );
    assert_ne!(formatted, applied);
    std::fs::write(&manifest, &formatted).unwrap();
    let out = smithy_tls(&["revert"], &tree);
    assert!(!out.contains("left as it is"), "{out}");
    assert_same_tree("unformatted", &tree.join("unformatted"), &fixtures().join("unformatted"));
}

#[test]
fn a_module_file_the_user_replaced_keeps_its_mod_line() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    smithy_tls(&["apply", "--preset", "platform-default"], &tree);
    let module = tree.join("dotted-tables/src/default_http_client.rs");
    std::fs::write(&module, "// the application's own module now\npub fn mine() {}\n").unwrap();
    let out = smithy_tls(&["revert"], &tree);
    assert!(out.contains("not written by smithy-tls; left as it is, with its `mod` line"), "{out}");
    assert!(module.exists());
    let lib = std::fs::read_to_string(tree.join("dotted-tables/src/lib.rs")).unwrap();
    assert!(lib.contains("pub mod default_http_client;"), "{lib}");
}

fn smithy_tls_status(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls")).args(args).arg(dir).output().expect("run smithy-tls");
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn apply_refuses_a_tree_without_the_runtime_it_points_at_before_writing_anything() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    let runtime = tree.join("smithy-default-tls/Cargo.toml");
    for (manifest, says) in [
        (None, "missing (the policy's `[runtime] path` points there)"),
        (Some("[package]\nname = \"something-else\"\nversion = \"0.1.0\"\n"), "package `something-else`"),
        (Some("[package]\nname = \"smithy-default-tls\"\nversion = \"0.2.0\"\n"), "version `0.2.0`"),
    ] {
        match manifest {
            None => std::fs::remove_file(&runtime).unwrap(),
            Some(text) => std::fs::write(&runtime, text).unwrap(),
        }
        let before = tree_files(&tree);
        let (code, out) = smithy_tls_status(&["apply"], &tree);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains(says) && out.contains("--vendor-runtime") && out.contains("no file was written"), "{out}");
        assert!(out.contains("R001"), "the refusal has its code: {out}");
        assert_eq!(tree_files(&tree), before, "nothing written");
        // The machine contract carries the same diagnostic, with the manifest it is about.
        let (code, json) = smithy_tls_status(&["apply", "--format", "json"], &tree);
        assert_eq!(code, Some(2), "{json}");
        let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
        let diagnostic = &doc["diagnostics"][0];
        assert_eq!(diagnostic["code"], "R001", "{doc}");
        assert!(diagnostic["file"].as_str().is_some_and(|f| f.ends_with("smithy-default-tls/Cargo.toml")), "{doc}");
        assert!(diagnostic["message"].as_str().is_some_and(|m| m.contains(says)), "{doc}");
    }
}

#[test]
fn vendor_runtime_refuses_a_policy_whose_runtime_it_does_not_ship() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    std::fs::remove_dir_all(tree.join("smithy-default-tls")).unwrap();
    let preset = presets::preset("platform-default").expect("the preset").text;
    for (runtime, says) in [
        ("version = \"0.2\"", "version `0.1.0`, which the policy's requirement `0.2` excludes"),
        ("package = \"my-tls\"\nversion = \"0.1\"", "package `smithy-default-tls`, where the policy names `my-tls`"),
    ] {
        let policy = root.path().join("policy.toml");
        let text = preset.replacen("version = \"0.1\"", runtime, 1);
        assert_ne!(text, preset, "the preset's [runtime] version line is where this test expects it");
        std::fs::write(&policy, text).unwrap();
        let before = tree_files(&tree);
        let (code, out) =
            smithy_tls_status(&["apply", "--vendor-runtime", "--policy", policy.to_str().unwrap()], &tree);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains("R001") && out.contains(says) && out.contains("no file was written"), "{out}");
        assert_eq!(tree_files(&tree), before, "nothing written");
    }
}

#[test]
fn vendor_runtime_places_the_runtime_and_check_reports_it_stale() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    std::fs::remove_dir_all(tree.join("smithy-default-tls")).unwrap();
    smithy_tls(&["apply", "--vendor-runtime"], &tree);
    let vendored = tree.join("smithy-default-tls");
    let shipped = smithy_tls_codegen::pairing::shipped::runtime_files(&vendored, &Default::default());
    assert!(shipped.len() > 20, "{} files", shipped.len());
    // With the feature carrier its manifest names by `path = "crypto"`.
    assert!(shipped.iter().any(|(path, _)| *path == vendored.join("crypto/Cargo.toml")));
    assert!(shipped.iter().any(|(path, _)| *path == vendored.join("crypto/src/lib.rs")));
    for (path, text) in shipped {
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{}", path.display());
    }
    // Up to date, with and without the flag (the runtime is there, the right version).
    smithy_tls(&["check", "--vendor-runtime"], &tree);
    smithy_tls(&["check"], &tree);
    // A vendored file changed by hand is stale: check says so, apply puts it back. The
    // carrier's files are compared like the runtime's.
    for file in ["src/dns.rs", "crypto/src/lib.rs"] {
        std::fs::write(vendored.join(file), "// edited\n").unwrap();
        let (code, out) = smithy_tls_status(&["check", "--vendor-runtime"], &tree);
        assert_eq!(code, Some(1), "{file}: {out}");
        assert!(out.contains(&format!("smithy-default-tls/{file}")), "{out}");
        smithy_tls(&["apply", "--vendor-runtime"], &tree);
        smithy_tls(&["check", "--vendor-runtime"], &tree);
    }
    // A source an earlier runtime had and this one does not is stale too: apply removes it.
    // Files outside src/ are not the runtime's sources and stay.
    std::fs::write(vendored.join("src/old_module.rs"), "// from an earlier runtime\n").unwrap();
    std::fs::write(vendored.join("NOTES.md"), "the team's notes\n").unwrap();
    let (code, out) = smithy_tls_status(&["check", "--vendor-runtime"], &tree);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("src/old_module.rs"), "{out}");
    smithy_tls(&["apply", "--vendor-runtime"], &tree);
    assert!(!vendored.join("src/old_module.rs").exists());
    assert!(vendored.join("NOTES.md").exists());
    smithy_tls(&["check", "--vendor-runtime"], &tree);
}

#[test]
fn vendor_runtime_removes_no_source_of_a_crate_that_is_not_a_runtime() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    let dir = tree.join("smithy-default-tls");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"my-own-crate\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(dir.join("src/mine.rs"), "// the team's code\n").unwrap();
    smithy_tls(&["apply", "--vendor-runtime"], &tree);
    assert_eq!(std::fs::read_to_string(dir.join("src/mine.rs")).unwrap(), "// the team's code\n");
}

/// A tree laid out as smithy-rs's in-repo builds write one: the service crate names
/// aws-smithy-runtime-api and aws-smithy-async by `path` only, the siblings at patch versions
/// other than .0. The vintage gate serves it, and the placed runtime names the same siblings by
/// path (a registry copy beside them would be a second aws-smithy-runtime-api).
#[test]
fn an_in_repo_tree_with_path_only_siblings_is_wired_and_the_runtime_names_them() {
    let root = tempfile::tempdir().unwrap();
    let tree = root.path().join("tree");
    let service = tree.join("sdk/alpha");
    smithy_tls_test_support::copy_tree(&fixtures().join("dotted-tables"), &service, &[]).unwrap();
    let manifest = std::fs::read_to_string(service.join("Cargo.toml")).unwrap();
    let manifest = manifest
        .replace(
            "[dependencies.aws-smithy-async]\nversion = \"1.2\"",
            "[dependencies.aws-smithy-async]\npath = \"../../rust-runtime/aws-smithy-async\"",
        )
        .replace(
            "[dependencies.aws-smithy-runtime-api]\nversion = \"1.7\"",
            "[dependencies.aws-smithy-runtime-api]\npath = \"../../rust-runtime/aws-smithy-runtime-api\"",
        );
    assert_eq!(manifest.matches("rust-runtime").count(), 2, "the fixture's dependency lines moved:\n{manifest}");
    std::fs::write(service.join("Cargo.toml"), manifest).unwrap();
    for (name, version) in [("aws-smithy-runtime-api", "1.19.3"), ("aws-smithy-async", "1.2.7")] {
        let dir = tree.join("rust-runtime").join(name);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), format!("[package]\nname = \"{name}\"\nversion = \"{version}\"\n"))
            .unwrap();
        std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    }
    let policy = root.path().join("policy.toml");
    let preset =
        presets::preset("portable").unwrap().text.replace("path = \"smithy-default-tls\"", "path = \"vendor/rt\"");
    std::fs::write(&policy, preset).unwrap();
    let out = smithy_tls(&["apply", "--strict", "--vendor-runtime", "--policy", policy.to_str().unwrap()], &tree);
    assert!(service.join("src/default_http_client.rs").exists(), "not wired:\n{out}");
    let runtime = std::fs::read_to_string(tree.join("vendor/rt/Cargo.toml")).unwrap();
    let doc: toml_edit::DocumentMut = runtime.parse().unwrap();
    let dependencies = &doc["dependencies"];
    assert_eq!(
        dependencies["aws-smithy-runtime-api"]["path"].as_str(),
        Some("../../rust-runtime/aws-smithy-runtime-api")
    );
    assert_eq!(dependencies["aws-smithy-async"]["path"].as_str(), Some("../../rust-runtime/aws-smithy-async"));
    assert!(dependencies["aws-smithy-types"].get("path").is_none(), "not a sibling here:\n{runtime}");
    smithy_tls(&["check", "--vendor-runtime", "--policy", policy.to_str().unwrap()], &tree);
    // The gate still refuses a sibling the runtime cannot serve.
    let api = tree.join("rust-runtime/aws-smithy-runtime-api/Cargo.toml");
    std::fs::write(&api, "[package]\nname = \"aws-smithy-runtime-api\"\nversion = \"1.18.9\"\n").unwrap();
    let (code, out) = smithy_tls_status(&["check", "--strict", "--policy", policy.to_str().unwrap()], &tree);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("`=1.18.9`") && out.contains("1.19.0"), "{out}");
}

/// A service crate that names aws-smithy-runtime-api by `path` and `version` (the fixture
/// renamed-inline: `^1.7`, `../aws-smithy-runtime-api`) is judged by the sibling cargo builds
/// there, with and without `--vendor-runtime`: a sibling below the runtime's floor leaves the
/// crate alone (the requirement alone admits the floor, and the build would then fail on
/// mismatched types), one at the floor is wired.
#[test]
fn a_path_and_version_dependency_is_judged_by_its_sibling_in_both_modes() {
    let floor = smithy_tls_codegen::pairing::vintage::min_runtime_api().to_string();
    let root = tempfile::tempdir().unwrap();
    for (sibling, served) in [("1.18.9", false), (floor.as_str(), true)] {
        for vendor in [false, true] {
            let case = format!("sibling {sibling}, vendor {vendor}");
            // Without the 2023 crate, which --strict would refuse on its own.
            let tree = root.path().join(format!("{sibling}-{vendor}"));
            smithy_tls_test_support::copy_tree(&fixtures(), &tree, &["legacy-2023"]).unwrap();
            let manifest = std::fs::read_to_string(tree.join("renamed-inline/Cargo.toml")).unwrap();
            assert!(manifest.contains("version = \"1.7\", path = \"../aws-smithy-runtime-api\""), "{manifest}");
            let api = tree.join("aws-smithy-runtime-api");
            std::fs::create_dir_all(api.join("src")).unwrap();
            let text = format!("[package]\nname = \"aws-smithy-runtime-api\"\nversion = \"{sibling}\"\n");
            std::fs::write(api.join("Cargo.toml"), text).unwrap();
            std::fs::write(api.join("src/lib.rs"), "").unwrap();
            let mode: &[&str] = if vendor {
                std::fs::remove_dir_all(tree.join("smithy-default-tls")).unwrap();
                &["--vendor-runtime"]
            } else {
                &[]
            };
            let wired = || tree.join("renamed-inline/src/default_http_client.rs").exists();
            let (code, out) = smithy_tls_status(&[&["apply", "--strict"], mode].concat(), &tree);
            if served {
                assert_eq!(code, Some(0), "{case}: {out}");
                assert!(wired(), "{case}: not wired:\n{out}");
                if vendor {
                    let runtime = std::fs::read_to_string(tree.join("smithy-default-tls/Cargo.toml")).unwrap();
                    let doc: toml_edit::DocumentMut = runtime.parse().unwrap();
                    let api = doc["dependencies"]["aws-smithy-runtime-api"]["path"].as_str();
                    assert_eq!(api, Some("../aws-smithy-runtime-api"), "{case}:\n{runtime}");
                }
                continue;
            }
            assert_eq!(code, Some(2), "{case}: {out}");
            assert!(out.contains("`=1.18.9`") && out.contains(&floor) && !out.contains("R001"), "{case}: {out}");
            assert!(!wired(), "{case}: wired");
            // Without --strict the crate is left alone and the rest of the tree is wired.
            let out = smithy_tls(&[&["apply"], mode].concat(), &tree);
            assert!(!wired(), "{case}: wired:\n{out}");
            assert!(tree.join("dotted-tables/src/default_http_client.rs").exists(), "{case}: the rest:\n{out}");
        }
    }
}

/// Trees written by the release before the record's format 2 (the fixture trees applied by
/// commit 819241d, kept in tests/fixtures/upgrade/<preset>/): applying the current release to
/// them gives byte for byte what it gives on the untouched trees, with every preset, and
/// `revert` gives the generator's bytes back.
#[test]
fn trees_written_by_the_previous_format_upgrade_in_place_and_revert() {
    let upgrade = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade");
    let root = tempfile::tempdir().unwrap();
    let pristine = fresh(root.path(), "pristine");
    let written: Vec<String> = std::fs::read_dir(&upgrade)
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(written.len() >= 2, "fixtures: {written:?}");
    for old in &written {
        let reverted = root.path().join(format!("{old}-reverted"));
        smithy_tls_test_support::copy_tree(&upgrade.join(old), &reverted, &[]).unwrap();
        smithy_tls(&["revert"], &reverted);
        assert_same_tree(&format!("revert of a tree {old} wrote in format 1"), &reverted, &pristine);
        for new in presets::names() {
            let direct = fresh(root.path(), &format!("{old}-direct-{new}"));
            smithy_tls(&["apply", "--preset", new], &direct);
            let upgraded = root.path().join(format!("{old}-then-{new}"));
            smithy_tls_test_support::copy_tree(&upgrade.join(old), &upgraded, &[]).unwrap();
            smithy_tls(&["apply", "--preset", new], &upgraded);
            assert_same_tree(&format!("{new} over a tree {old} wrote in format 1"), &upgraded, &direct);
        }
    }
}

/// Every directory under `root`, relative to it.
fn dirs_of(root: &Path) -> std::collections::BTreeSet<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_dir())
        .map(|e| e.path().strip_prefix(root).unwrap().to_path_buf())
        .collect()
}

#[test]
fn revert_vendor_runtime_removes_the_runtime_apply_placed_and_nothing_else() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    std::fs::remove_dir_all(tree.join("smithy-default-tls")).unwrap();
    let (files, dirs) = (tree_files(&tree), dirs_of(&tree));
    smithy_tls(&["apply", "--vendor-runtime"], &tree);
    assert!(tree.join("smithy-default-tls/src/tls/backends/s2n/mod.rs").exists());
    assert!(tree.join("smithy-default-tls/crypto/src/lib.rs").exists());

    // Without the flag, revert leaves the runtime (it may be the team's own copy).
    smithy_tls(&["revert"], &tree);
    assert!(tree.join("smithy-default-tls/Cargo.toml").exists());
    smithy_tls(&["apply", "--vendor-runtime"], &tree);

    let out = smithy_tls(&["revert", "--vendor-runtime"], &tree);
    // Its sources and the carrier's (its manifest among them), and the runtime's manifest.
    let runtime_files = smithy_tls_codegen::pairing::shipped::RUNTIME_SOURCES.len() + 1;
    assert!(out.contains(&format!("4 crate(s) reverted, {} file(s) written", 16 + runtime_files)), "{out}");
    assert_eq!(tree_files(&tree), files, "every file as before apply");
    assert_eq!(dirs_of(&tree), dirs, "no directory left behind");
    let again = smithy_tls(&["revert", "--vendor-runtime"], &tree);
    assert!(again.contains("0 file(s) written"), "{again}");

    // What a build or a person added beside the runtime stays, and so do the directories holding it.
    smithy_tls(&["apply", "--vendor-runtime"], &tree);
    let runtime = tree.join("smithy-default-tls");
    std::fs::write(runtime.join("Cargo.lock"), "# a lock file\n").unwrap();
    std::fs::create_dir_all(runtime.join("src/tls/notes")).unwrap();
    std::fs::write(runtime.join("src/tls/notes/todo.md"), "the team's notes\n").unwrap();
    smithy_tls(&["revert", "--vendor-runtime"], &tree);
    let left: Vec<PathBuf> = tree_files(&runtime).into_keys().collect();
    assert_eq!(left, [PathBuf::from("Cargo.lock"), PathBuf::from("src/tls/notes/todo.md")]);
    assert!(!runtime.join("src/tls/backends/s2n").exists(), "emptied directories go");
}

#[test]
fn revert_vendor_runtime_refuses_a_runtime_that_is_not_as_placed_before_writing_anything() {
    let root = tempfile::tempdir().unwrap();
    let tree = fresh(root.path(), "tree");
    std::fs::remove_dir_all(tree.join("smithy-default-tls")).unwrap();
    smithy_tls(&["apply", "--vendor-runtime"], &tree);
    let edited = tree.join("smithy-default-tls/src/dns.rs");
    std::fs::write(&edited, "// the team's change\n").unwrap();
    let before = tree_files(&tree);
    let (code, out) = smithy_tls_status(&["revert", "--vendor-runtime"], &tree);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("R002") && out.contains("src/dns.rs: differs from the runtime this smithy-tls ships"),
        "{out}"
    );
    assert!(out.contains("no file was written") && out.contains("apply --vendor-runtime"), "{out}");
    assert_eq!(tree_files(&tree), before, "nothing written");
    // Another crate at the runtime's path is never taken apart.
    let other = tree.join("smithy-default-tls");
    std::fs::remove_dir_all(&other).unwrap();
    std::fs::create_dir_all(other.join("src")).unwrap();
    std::fs::write(other.join("Cargo.toml"), "[package]\nname = \"my-own-crate\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(other.join("src/lib.rs"), "// the team's code\n").unwrap();
    let (code, out) = smithy_tls_status(&["revert", "--vendor-runtime"], &tree);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("Cargo.toml: differs") && out.contains("(and 1 more file(s))"), "{out}");
}
