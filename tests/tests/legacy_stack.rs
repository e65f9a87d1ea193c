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

use cfg_expr::expr::Predicate;
use cfg_expr::targets::ALL_BUILTINS;
use cfg_expr::Expression;
use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::model::Provider;
use smithy_tls_codegen::{policy, presets};
use smithy_tls_e2e::support::fs::link_tree;
use smithy_tls_e2e::{
    lock_for, lock_for_policy, pin_lock, prepare_sdk_tree, repo_root, run, scratch_cargo, scratch_root,
    smithy_tls_binary, PUBLISHED, PUBLISHED_REWRITTEN_LOCK,
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

/// The crates that only `provider`'s feature brings into a lock (the others' share rustls, aws-lc
/// and ring: every rustls lock holds ring, which rustls-webpki names beside its `alloc`).
fn own_crates(provider: Provider) -> &'static [&'static str] {
    match provider {
        Provider::S2nTls => &["s2n-tls", "s2n-tls-sys", "s2n-tls-tokio"],
        Provider::S2nTlsFips => &["s2n-tls", "s2n-tls-sys", "s2n-tls-tokio", "aws-lc-fips-sys"],
        Provider::OpenSsl => &["openssl", "openssl-sys", "tokio-openssl"],
        Provider::RustlsAwsLcFips => &["aws-lc-fips-sys"],
        Provider::RustlsAwsLc | Provider::RustlsRing | Provider::RustlsCustom => &[],
    }
}

/// The crates of providers `preset` never selects that no provider it selects brings.
fn never_selected_crates(preset: &str) -> BTreeSet<&'static str> {
    let parsed = policy::parse_policy(presets::preset(preset).expect("a preset")).expect("a valid preset");
    let selected: BTreeSet<Provider> = parsed.policy.all_rules().filter_map(|rule| rule.stack.provider()).collect();
    let kept: BTreeSet<&str> = selected.iter().flat_map(|p| own_crates(*p).iter().copied()).collect();
    Provider::ALL
        .iter()
        .filter(|p| !selected.contains(p))
        .flat_map(|p| own_crates(*p).iter().copied())
        .filter(|c| !kept.contains(c))
        .collect()
}

/// `manifest` without the `[target]` tables that only the application's `smithy_tls` or
/// `smithy_tls_roots` cfg activates (with both unset, they hold on no builtin target): the
/// runtime as it was before the override.
fn without_override_tables(manifest: &str) -> String {
    let mut doc: toml_edit::DocumentMut = manifest.parse().expect("the runtime's manifest parses");
    let targets = doc["target"].as_table_like_mut().expect("[target] tables");
    let keys: Vec<String> = targets.iter().map(|(key, _)| key.to_owned()).collect();
    let mut removed = 0;
    for key in keys.iter().filter(|k| k.starts_with("cfg(")) {
        let expr = Expression::parse(key).unwrap_or_else(|e| panic!("`{key}`: {e}"));
        let unset = ALL_BUILTINS.iter().any(|target| {
            expr.eval(|predicate| match predicate {
                Predicate::Target(p) => p.matches(target),
                _ => false,
            })
        });
        if !unset {
            targets.remove(key);
            removed += 1;
        }
    }
    assert!(removed >= 5, "only {removed} override tables found in the runtime's manifest");
    doc.to_string()
}

/// The application's lock resolved again from `seed` with the tree's runtime stripped of its
/// override tables; the runtime's manifest is put back.
fn resolved_without_override(tree: &Path, app: &Path, seed: &Path) -> BTreeSet<(String, String)> {
    let manifest_path = tree.join("smithy-default-tls/Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).expect("the tree's runtime manifest");
    // The trees' files are hard links to one copy: a new file, not a write through the link.
    std::fs::remove_file(&manifest_path).expect("unlink the tree's runtime manifest");
    std::fs::write(&manifest_path, without_override_tables(&manifest)).expect("write the stripped manifest");
    std::fs::copy(seed, app.join("Cargo.lock")).expect("seed the app's lock");
    run(Command::new(env!("CARGO")).current_dir(app).args(["metadata", "-q", "--format-version", "1"]));
    std::fs::write(&manifest_path, manifest).expect("put the runtime's manifest back");
    locked_packages(&app.join("Cargo.lock"))
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
            Rewrite::Untouched => "published-untouched".to_owned(),
            Rewrite::Preset(preset) => lock_for(PUBLISHED_REWRITTEN_LOCK, preset),
            Rewrite::KeepLegacy => {
                let text = std::fs::read_to_string(keep_legacy_policy()).expect("the test policy");
                lock_for_policy(PUBLISHED_REWRITTEN_LOCK, policy::PolicySource { path: keep_legacy_policy(), text })
            }
        };
        pin_lock(&tree, &seed_name);
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
        // Lean when unset: the override's optional crates of a provider the preset never selects
        // (the FIPS module, s2n-tls, OpenSSL) stay out of the application's lock, and the
        // override adds no package at all to it: the lock is the one the runtime without its
        // override tables gives.
        if let Rewrite::Preset(preset) = rewrite {
            let without = resolved_without_override(&tree, &app, &tree.join("Cargo.lock"));
            let added: Vec<&(String, String)> = resolved.difference(&without).collect();
            println!("{name}: {} packages without the override's tables, {} added by them", without.len(), added.len());
            if !added.is_empty() {
                failures.push(format!("{name}: the override's tables add to the application's lock: {added:?}"));
            }
            let unselected = never_selected_crates(preset);
            let present: Vec<&str> =
                resolved.iter().map(|(p, _)| p.as_str()).filter(|p| unselected.contains(p)).collect();
            if !present.is_empty() {
                failures.push(format!("{name}: crates of providers it never selects in the lock: {present:?}"));
            }
        }
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
