//! The layout SDK teams run the tool on: one tree holding the service crates and the smithy
//! runtime crates side by side, every dependency between them written with `path` — with
//! `version` too, as aws-sdk-rust's `sdk/` folder writes them, or `path` only, as smithy-rs's
//! in-repo builds do — and no `[patch]`. Built from the published crates at the harness's exact
//! versions (fetched at test time), rewritten with every preset and `--vendor-runtime`:
//!
//! - the vintage gate serves every client (`--strict`), the runtime-api sibling being at
//!   whatever patch version was published;
//! - the placed runtime resolves to the tree's own aws-smithy-runtime-api (one copy in the
//!   consumer's graph, on the host and on other notable targets), not a second one from the
//!   registry, which would fail the generated code with E0308;
//! - `check` is green afterwards, and the consumer passes `cargo check` in the path-only layout
//!   with the presets that give the host distinct stacks (FIPS aside: its module build takes
//!   minutes; runtime_features and `cargo test-fips` compile it, and its graph is checked here
//!   like the others'), aws-sdk-s3 included once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use smithy_tls_codegen::presets;
use smithy_tls_e2e::{
    fetch_dir, fetch_published, host_triple, lock_for, pin_lock, repo_root, run, scratch_cargo, scratch_root,
    smithy_tls_binary, PUBLISHED,
};
use smithy_tls_test_support::cargo_tree::{self, TreePackage};

/// How dependencies between the tree's crates are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `path` and `version` (aws-sdk-rust's `sdk/` folder).
    PathAndVersion,
    /// `path` only (smithy-rs's in-repo builds and generated test crates).
    PathOnly,
}

/// Where a package of the tree lives, relative to its root: clients and aws-config under `sdk/`,
/// the runtime crates under `rust-runtime/` (so paths between them cross directories).
fn home(name: &str) -> PathBuf {
    if name == "aws-config" || name.starts_with("aws-sdk-") {
        Path::new("sdk").join(name)
    } else {
        Path::new("rust-runtime").join(name)
    }
}

/// The path from directory `from` to `to`, both relative to the same root.
fn relative(from: &Path, to: &Path) -> String {
    let up = "../".repeat(from.components().count());
    format!("{up}{}", to.display())
}

/// Rewrites every dependency on a crate of the tree (`homes`: package → home) in the manifest
/// of the crate at `dir` to its path, keeping or dropping `version` as `layout` says, and drops
/// dev-dependencies (a consumer never builds them; registry-only test crates would add registry
/// copies of the runtime crates to the lock file). Returns how many entries it rewrote.
fn point_at_siblings(
    doc: &mut toml_edit::DocumentMut,
    dir: &Path,
    homes: &BTreeMap<String, PathBuf>,
    layout: Layout,
) -> usize {
    use toml_edit::{Item, Value};
    let root = doc.as_table_mut();
    root.remove("dev-dependencies");
    let mut rewritten = 0;
    let mut rewrite = |deps: &mut dyn toml_edit::TableLike| {
        for (key, item) in deps.iter_mut() {
            let package = item
                .as_table_like()
                .and_then(|t| t.get("package"))
                .and_then(Item::as_str)
                .unwrap_or(key.get())
                .to_owned();
            let Some(to) = homes.get(&package) else { continue };
            let path = relative(dir, to);
            if let Some(version) = item.as_str().map(str::to_owned) {
                let mut table = toml_edit::InlineTable::new();
                table.insert("version", version.into());
                *item = Item::Value(Value::InlineTable(table));
            }
            let table = item.as_table_like_mut().expect("a dependency is a version or a table");
            table.insert("path", Item::Value(path.into()));
            if layout == Layout::PathOnly {
                table.remove("version");
            }
            rewritten += 1;
        }
    };
    for kind in ["dependencies", "build-dependencies"] {
        if let Some(deps) = root.get_mut(kind).and_then(Item::as_table_like_mut) {
            rewrite(deps);
        }
    }
    if let Some(targets) = root.get_mut("target").and_then(Item::as_table_like_mut) {
        for (_, target) in targets.iter_mut() {
            let Some(target) = target.as_table_like_mut() else { continue };
            target.remove("dev-dependencies");
            for kind in ["dependencies", "build-dependencies"] {
                if let Some(deps) = target.get_mut(kind).and_then(Item::as_table_like_mut) {
                    rewrite(deps);
                }
            }
        }
    }
    rewritten
}

/// A fresh tree at `root` in `layout`: the published crates under `sdk/` and `rust-runtime/`,
/// the consumer app, and a workspace manifest with the consumer as its one listed member (the
/// crates it reaches by path are members by cargo's rule).
fn monorepo(root: &Path, layout: Layout) {
    let _ = std::fs::remove_dir_all(root);
    let found = fetch_published(&fetch_dir(root), PUBLISHED);
    let mut homes = BTreeMap::new();
    for (name, versions) in &found {
        assert_eq!(
            versions.len(),
            1,
            "{name} resolves at several versions ({versions:?}): one tree cannot hold them by path"
        );
        homes.insert(name.clone(), home(name));
    }
    for (name, versions) in &found {
        let dir = root.join(&homes[name]);
        smithy_tls_e2e::copy_dir(&versions[0].1, &dir, &["target"]);
        edit_manifest(&dir.join("Cargo.toml"), &homes[name], &homes, layout);
    }
    let consumer = repo_root().join("tests/e2e-consumer");
    for file in ["src/main.rs", "src/bin/cold.rs", "src/bin/components.rs"] {
        std::fs::create_dir_all(root.join("consumer").join(file).parent().expect("parent")).expect("mkdir");
        std::fs::copy(consumer.join(file), root.join("consumer").join(file)).expect("consumer source");
    }
    std::fs::copy(consumer.join("Cargo.toml.in"), root.join("consumer/Cargo.toml")).expect("consumer manifest");
    let pointed = edit_manifest(&root.join("consumer/Cargo.toml"), Path::new("consumer"), &homes, layout);
    assert!(pointed >= 5, "the consumer names {pointed} crates of the tree");
    std::fs::write(
        root.join("Cargo.toml"),
        "# Scratch SDK repository made by the smithy-tls end-to-end harness; not committed.\n\
         [workspace]\nresolver = \"2\"\nmembers = [\"consumer\"]\n",
    )
    .expect("write workspace manifest");
}

fn edit_manifest(path: &Path, home: &Path, homes: &BTreeMap<String, PathBuf>, layout: Layout) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let pointed = point_at_siblings(&mut doc, home, homes, layout);
    std::fs::write(path, doc.to_string()).expect("write manifest");
    pointed
}

/// Every aws-smithy-runtime-api package in the consumer's graph for `target`.
fn runtime_api_copies(root: &Path, target: &str) -> BTreeSet<TreePackage> {
    let out = run(scratch_cargo(root).args(cargo_tree::tree_args("e2e-consumer", target)));
    let mut packages = cargo_tree::packages(&String::from_utf8_lossy(&out.stdout));
    packages.retain(|p| p.name == "aws-smithy-runtime-api");
    packages
}

fn smithy_tls(binary: &Path, args: &[&str], root: &Path) -> String {
    let out = run(Command::new(binary).args(args).arg(root));
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Rewrites the tree in `layout` with every preset in turn (each switch converges, as
/// preset_switching proves) and checks what the module docs say. `checked` names the presets
/// whose consumer is compiled, and `s3` the one that compiles aws-sdk-s3 too.
fn exercise(layout: Layout, checked: &[&str], s3: Option<&str>) {
    let root = scratch_root().join(format!("monorepo-{layout:?}").to_lowercase());
    monorepo(&root, layout);
    let binary = smithy_tls_binary();
    let host = host_triple();
    let api_dir = root.join("rust-runtime/aws-smithy-runtime-api");
    for preset in presets::names() {
        let started = Instant::now();
        let out = smithy_tls(&binary, &["apply", "--strict", "--vendor-runtime", "--preset", preset], &root);
        for client in ["sdk/aws-sdk-sts", "sdk/aws-sdk-s3", "sdk/aws-config"] {
            let wired = root.join(client).join("src/default_http_client.rs").exists();
            assert!(wired, "{layout:?}, {preset}: {client} not wired\n{out}");
        }
        smithy_tls(&binary, &["check", "--strict", "--vendor-runtime", "--preset", preset], &root);
        // One lock for both layouts and every preset but for smithy-wasi-http (`lock_for`): a
        // lock records neither the `version` keys nor features.
        pin_lock(&root, &lock_for("monorepo", preset));
        let runtime = std::fs::read_to_string(root.join("smithy-default-tls/Cargo.toml")).expect("placed runtime");
        assert!(
            runtime.contains("path = \"../rust-runtime/aws-smithy-runtime-api\""),
            "{layout:?}, {preset}:\n{runtime}"
        );
        // wasm32-wasip2 too, where smithy-wasi-http (placed beside the runtime) serves.
        for target in [host.as_str(), "aarch64-apple-darwin", "x86_64-pc-windows-msvc", "wasm32-wasip2"] {
            let copies = runtime_api_copies(&root, target);
            assert_eq!(copies.len(), 1, "{layout:?}, {preset} on {target}: {copies:?}");
            let only = copies.iter().next().expect("one");
            let from_api_dir = only.source.as_deref().is_some_and(|s| s.contains(&api_dir.display().to_string()));
            assert!(from_api_dir, "{layout:?}, {preset} on {target}: {only:?}");
        }
        if checked.contains(&preset) {
            let mut features = vec!["report-connections"];
            features.extend(s3.filter(|p| *p == preset).map(|_| "s3"));
            run(scratch_cargo(&root)
                .args(["check", "-q", "-p", "e2e-consumer", "--no-default-features", "--features"])
                .arg(features.join(",")));
        }
        println!(
            "E2E monorepo {layout:?} {preset}: wired, check green, one aws-smithy-runtime-api, consumer {} in {:.0} s",
            if checked.contains(&preset) { "compiled (cargo check)" } else { "not compiled in this layout" },
            started.elapsed().as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// Compiled: platform-default (s2n-tls on a linux-gnu host, aws-sdk-s3 too) and portable
/// (rustls on aws-lc there; rustls-everywhere gives the host the same stack).
#[test]
fn path_only_siblings_with_every_preset() {
    exercise(Layout::PathOnly, &["platform-default", "portable"], Some("platform-default"));
}

/// Not compiled: the crates differ from the path-only layout in `version` keys only, which
/// decide resolution (checked here for every preset), not compilation.
#[test]
fn path_and_version_siblings_with_every_preset() {
    exercise(Layout::PathAndVersion, &[], None);
}
