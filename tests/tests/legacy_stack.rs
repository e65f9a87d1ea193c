//! No preset brings back the stack the rewrite exists to remove. An application on aws-config,
//! aws-sdk-sts and aws-sdk-s3 (the published crates, fetched at test time; the consumer app)
//! that depends on the SDK crates as a user's application does, from a workspace of its own, is
//! given the SDK rewritten with each preset, and its lock file must hold none of hyper 0.14,
//! rustls 0.21, rustls-webpki 0.101 and h2 0.3: the legacy `rustls` feature's stack, and with it
//! RustSec advisories (rustls-webpki 0.101.7: RUSTSEC-2026-0098, -0099, -0104; h2 0.3.27:
//! RUSTSEC-2026-0258). The lock is what an advisory scanner reads; it is resolved, nothing is
//! compiled. Controls, which must resolve all four: the SDK untouched, and rewritten with the
//! test policy that keeps the legacy feature.
//!
//! The application's lock is resolved from the SDK tree's committed lock (`tests/locks/`): every
//! package it holds must come from there at the same version, so a registry release changes
//! nothing here until scripts/bless refreshes the locks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::presets;
use smithy_tls_e2e::support::fs::link_tree;
use smithy_tls_e2e::{
    pin_lock, prepare_sdk_tree, repo_root, run, scratch_cargo, scratch_root, smithy_tls_binary, PUBLISHED,
    PUBLISHED_REWRITTEN_LOCK,
};

/// The legacy stack, as (package, version prefix).
const LEGACY: &[(&str, &str)] = &[("hyper", "0.14."), ("rustls", "0.21."), ("rustls-webpki", "0.101."), ("h2", "0.3.")];

/// What rewrites the SDK tree in a variant.
enum Rewrite {
    /// Left as published (upstream's default client): a control.
    Untouched,
    /// `apply --preset NAME`.
    Preset(&'static str),
    /// `apply --policy` with the test policy that keeps the legacy `rustls` feature: a control.
    KeepLegacy,
}

fn keep_legacy_policy() -> PathBuf {
    repo_root().join("codegen/tests/fixtures/policies/keep-legacy-rustls.toml")
}

/// Every package (name, version) of a lock file.
fn locked_packages(lock: &Path) -> BTreeSet<(String, String)> {
    let text = std::fs::read_to_string(lock).unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    let doc: toml_edit::DocumentMut = text.parse().unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    let packages = doc["package"].as_array_of_tables().expect("[[package]] tables");
    packages
        .iter()
        .map(|p| {
            let field = |key: &str| p[key].as_str().unwrap_or_else(|| panic!("a package without {key}")).to_owned();
            (field("name"), field("version"))
        })
        .collect()
}

/// The consumer app in `<tree>/app`, a workspace of its own whose `[patch.crates-io]` points at
/// the tree's crates (those of the tree's own workspace manifest): they are its dependencies, not
/// members, so its lock holds what their features select, as an application's does.
fn consumer_app(tree: &Path) -> PathBuf {
    let app = tree.join("app");
    let consumer = repo_root().join("tests/e2e-consumer");
    for file in ["src/main.rs", "src/bin/cold.rs", "src/bin/components.rs"] {
        let to = app.join("consumer").join(file);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(consumer.join(file), to).expect("consumer source");
    }
    let manifest = std::fs::read_to_string(consumer.join("Cargo.toml.in")).expect("consumer manifest");
    let runtime = "path = \"../smithy-default-tls\"";
    assert!(manifest.contains(runtime), "the consumer names the runtime crate by {runtime}");
    let manifest = manifest.replace(runtime, "path = \"../../smithy-default-tls\"");
    std::fs::write(app.join("consumer/Cargo.toml"), manifest).expect("write the consumer manifest");

    let tree_manifest: toml_edit::DocumentMut =
        std::fs::read_to_string(tree.join("Cargo.toml")).expect("tree manifest").parse().expect("tree manifest parses");
    let mut patches = String::new();
    for (key, item) in tree_manifest["patch"]["crates-io"].as_table_like().expect("[patch.crates-io]").iter() {
        let path = item.get("path").and_then(|p| p.as_str()).expect("a path patch");
        let package = item.get("package").and_then(|p| p.as_str()).unwrap_or(key);
        patches.push_str(&format!("{key} = {{ path = \"../{path}\", package = \"{package}\" }}\n"));
    }
    std::fs::write(
        app.join("Cargo.toml"),
        format!(
            "# An application on the scratch SDK tree, made by tests/tests/legacy_stack.rs; not committed.\n\
             [workspace]\nresolver = \"2\"\nmembers = [\"consumer\"]\n\n[patch.crates-io]\n{patches}"
        ),
    )
    .expect("write the app's workspace manifest");
    app
}

#[test]
fn no_preset_resolves_the_legacy_stack_in_an_applications_lock() {
    let root = scratch_root().join("legacy-stack");
    let _ = std::fs::remove_dir_all(&root);
    let pristine = prepare_sdk_tree(&root.join("pristine"), PUBLISHED, &["aws-sdk-sts"], true).root;
    let binary = smithy_tls_binary();
    let mut variants = vec![("untouched".to_owned(), Rewrite::Untouched)];
    variants.extend(presets::names().map(|p| (p.to_owned(), Rewrite::Preset(p))));
    variants.push(("keep-legacy-rustls".to_owned(), Rewrite::KeepLegacy));

    let mut failures = Vec::new();
    for (name, rewrite) in &variants {
        let tree = root.join(name);
        link_tree(&pristine, &tree, &[]).expect("link a copy of the tree");
        let mut apply = Command::new(&binary);
        apply.arg("apply");
        match rewrite {
            Rewrite::Untouched => {}
            Rewrite::Preset(preset) => {
                run(apply.args(["--preset", preset]).arg(&tree));
            }
            Rewrite::KeepLegacy => {
                run(apply.arg("--policy").arg(keep_legacy_policy()).arg(&tree));
            }
        }
        // The tree's lock (every feature of every crate: hyper 0.14 included either way) is the
        // seed the application resolves from.
        let seed_name = match rewrite {
            Rewrite::Untouched => "published-untouched",
            _ => PUBLISHED_REWRITTEN_LOCK,
        };
        pin_lock(&tree, seed_name);
        // The committed lock fits the tree as rewritten (published_sdk builds this same tree with it).
        run(scratch_cargo(&tree).args(["metadata", "-q", "--format-version", "1"]));
        let seed = locked_packages(&tree.join("Cargo.lock"));
        let app = consumer_app(&tree);
        std::fs::copy(tree.join("Cargo.lock"), app.join("Cargo.lock")).expect("seed the app's lock");
        run(Command::new(env!("CARGO")).current_dir(&app).args(["metadata", "-q", "--format-version", "1"]));
        let resolved = locked_packages(&app.join("Cargo.lock"));
        let fresh: Vec<&(String, String)> = resolved.difference(&seed).collect();
        assert!(fresh.is_empty(), "{name}: resolved outside the committed lock {seed_name}: {fresh:?}");

        let legacy: Vec<String> = resolved
            .iter()
            .filter(|(package, version)| LEGACY.iter().any(|(p, v)| p == package && version.starts_with(v)))
            .map(|(package, version)| format!("{package} {version}"))
            .collect();
        let control = matches!(rewrite, Rewrite::Untouched | Rewrite::KeepLegacy);
        println!(
            "{name}: {} packages in the application's lock; legacy stack: {}",
            resolved.len(),
            if legacy.is_empty() { "none".to_owned() } else { legacy.join(", ") }
        );
        if control && legacy.len() != LEGACY.len() {
            failures.push(format!("{name} (a control) must resolve all of {LEGACY:?}, resolved {legacy:?}"));
        }
        if !control && !legacy.is_empty() {
            failures.push(format!("{name} brings back the legacy stack: {}", legacy.join(", ")));
        }
        let _ = std::fs::remove_dir_all(&tree);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&root);
}
