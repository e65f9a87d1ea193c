//! The source patches on real published files: the service config and crate root of aws-sdk-sts
//! and the loader and crate root of aws-config, at the versions the tool wires (1.x) and at the
//! versions it must refuse (2023, before the orchestrator), fetched from the registry at test
//! time. Each patched file parses, holds the hook exactly once, is the input plus inserted lines
//! only, and patching again changes nothing; the fast path agrees with the whole-file path.
//!
//! A version that cannot be fetched fails the test (no registry, no check).

use std::path::{Path, PathBuf};

use smithy_tls_codegen::patch::{
    has_service_config_anchor, patch_aws_config_loader, patch_aws_config_provider_config, patch_crate_root,
    patch_service_config, patch_service_config_without_fast_path, unpatch_aws_config_loader,
    unpatch_aws_config_provider_config, unpatch_crate_root, unpatch_service_config, PatchError,
};
use smithy_tls_e2e::support::text::inserted_lines;
use smithy_tls_e2e::{fetch_published, scratch_root};

/// The hooks, up to their arguments (`runtime_plugin_for(<the version>)` / `runtime_plugin()`,
/// `default_http_client_for(self.behavior_version)`).
const SERVICE_HOOK: &str = "crate::default_http_client::runtime_plugin";
const LOADER_HOOK: &str = "crate::default_http_client::default_http_client";
const MOD_LINE: &str = "pub mod default_http_client;";
const PROVIDER_HOOK: &str = ".or_else(crate::default_http_client::default_http_client)";
const PROVIDER_HOOK_FOR: &str =
    ".or_else(|| crate::default_http_client::default_http_client_for(self.behavior_version))";

/// The source directory of `name` at exactly `version`, fetched from the registry once per
/// process: tests run in parallel and several read the same crate, and a second fetch would
/// remove the directory under the first one's `cargo metadata`.
fn published_source(name: &str, version: &str) -> PathBuf {
    static FETCHED: std::sync::Mutex<std::collections::BTreeMap<String, PathBuf>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut fetched = FETCHED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let key = format!("{name}-{version}");
    if let Some(dir) = fetched.get(&key) {
        return dir.clone();
    }
    let fetch = scratch_root().join(format!("real-sources/{key}"));
    let found = fetch_published(&fetch, &[(name, &format!("={version}"))]);
    let dir = found
        .get(name)
        .and_then(|versions| versions.iter().find(|(v, _)| v == version))
        .map(|(_, dir)| dir.clone())
        .unwrap_or_else(|| panic!("{name} {version} was not fetched: {found:?}"));
    fetched.insert(key, dir.clone());
    dir
}

fn read(dir: &Path, file: &str) -> (PathBuf, String) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, text)
}

/// Patches with `f` and checks: parses, one hook, idempotent, only `expected_inserted` lines
/// added (after undoing the one in-place edit `undo`, if any), the first a `// smithy-tls:`
/// comment.
fn check_patch(
    f: fn(&Path, &str) -> Result<String, PatchError>,
    (path, input): &(PathBuf, String),
    hook: &str,
    undo: Option<(&str, &str)>,
    expected_inserted: usize,
) {
    let shown = path.display();
    let out = f(path, input).unwrap_or_else(|e| panic!("{e}"));
    syn::parse_file(&out).unwrap_or_else(|e| panic!("{shown}: output does not parse: {e}"));
    assert_eq!(out.matches(hook).count(), 1, "{shown}: hook count");
    assert_eq!(f(path, &out).as_deref(), Ok(out.as_str()), "{shown}: not idempotent");
    let comparable = match undo {
        Some((from, to)) => out.replacen(from, to, 1),
        None => out.clone(),
    };
    let inserted = inserted_lines(input, &comparable)
        .unwrap_or_else(|| panic!("{shown}: output is not the input plus inserted lines"));
    assert_eq!(inserted.len(), expected_inserted, "{shown}: {inserted:#?}");
    assert!(inserted[0].trim_start().starts_with("// smithy-tls:"), "{shown}");
}

#[test]
fn aws_sdk_sts_service_config_and_crate_root() {
    for version in ["1.124.0", "1.62.0", "1.34.0"] {
        let dir = published_source("aws-sdk-sts", version);
        let config = read(&dir, "src/config.rs");
        assert_eq!(has_service_config_anchor(&config.0, &config.1), Ok(true), "{version}");
        assert_eq!(
            patch_service_config(&config.0, &config.1),
            patch_service_config_without_fast_path(&config.0, &config.1),
            "{version}: the fast path must agree with the whole-file path"
        );
        check_patch(patch_service_config, &config, SERVICE_HOOK, None, 2);
        let lib = read(&dir, "src/lib.rs");
        check_patch(patch_crate_root, &lib, MOD_LINE, None, 2);
        // `revert` takes exactly that back out.
        let patched = patch_service_config(&config.0, &config.1).unwrap();
        // The client's behavior version reaches the default client (for the proxy environment).
        assert!(
            patched.contains("runtime_plugin_for(config.behavior_version)")
                || patched.contains("runtime_plugin_for(behavior_version)"),
            "{version}: the hook passes the behavior version"
        );
        assert_eq!(unpatch_service_config(&config.0, &patched).as_deref(), Ok(config.1.as_str()), "{version}");
        let patched = patch_crate_root(&lib.0, &lib.1).unwrap();
        assert_eq!(unpatch_crate_root(&lib.0, &patched).as_deref(), Ok(lib.1.as_str()), "{version}");
    }
}

#[test]
fn pre_orchestrator_aws_sdk_sts_is_refused_not_mangled() {
    let dir = published_source("aws-sdk-sts", "0.28.0");
    let (path, text) = read(&dir, "src/config.rs");
    assert_eq!(has_service_config_anchor(&path, &text), Ok(false));
    let err = patch_service_config(&path, &text).expect_err("no anchor");
    assert!(matches!(err, PatchError::AnchorNotFound { .. }), "{err}");
}

#[test]
fn aws_config_loader_and_crate_root() {
    // 0.57 (October 2023) already has `ConfigLoader::http_client`: its loader patches cleanly
    // (whether such a crate should be wired at all is the vintage gate's call, not the patch's).
    for version in ["1.13.0", "1.5.18", "0.57.1"] {
        let dir = published_source("aws-config", version);
        let lib = read(&dir, "src/lib.rs");
        check_patch(
            patch_aws_config_loader,
            &lib,
            LOADER_HOOK,
            Some(("pub async fn load(mut self)", "pub async fn load(self)")),
            4,
        );
        check_patch(patch_crate_root, &lib, MOD_LINE, None, 2);
        let patched = patch_aws_config_loader(&lib.0, &patch_crate_root(&lib.0, &lib.1).unwrap()).unwrap();
        if version.starts_with("1.") {
            assert!(patched.contains("default_http_client_for(self.behavior_version)"), "{version}");
        }
        let unpatched = unpatch_aws_config_loader(&lib.0, &patched, true).unwrap();
        assert_eq!(unpatch_crate_root(&lib.0, &unpatched).as_deref(), Ok(lib.1.as_str()), "{version}");
    }
}

#[test]
fn aws_config_provider_config_accessors() {
    // Every 1.x aws-config the tool wires hands its client out through these two accessors.
    for version in ["1.13.0", "1.5.18", "1.1.10", "1.0.0"] {
        let dir = published_source("aws-config", version);
        let (path, input) = read(&dir, "src/provider_config.rs");
        let out = patch_aws_config_provider_config(&path, &input).unwrap_or_else(|e| panic!("{version}: {e}"));
        syn::parse_file(&out).unwrap_or_else(|e| panic!("{version}: output does not parse: {e}"));
        // With a behavior version on ProviderConfig, the fallback is the client for that version.
        let hook =
            if input.contains("behavior_version: Option<BehaviorVersion>") { PROVIDER_HOOK_FOR } else { PROVIDER_HOOK };
        assert_eq!(out.matches(hook).count(), 2, "{version}");
        assert_eq!(patch_aws_config_provider_config(&path, &out).as_deref(), Ok(out.as_str()), "{version}: idempotent");
        let without_hooks = out.replace(hook, "");
        let inserted = inserted_lines(&input, &without_hooks)
            .unwrap_or_else(|| panic!("{version}: output is not the input plus the hooks and their notes"));
        assert_eq!(inserted.len(), 2, "{version}: {inserted:#?}");
        assert_eq!(unpatch_aws_config_provider_config(&path, &out).as_deref(), Ok(input.as_str()), "{version}");
    }
}

#[test]
fn pre_orchestrator_aws_config_loader_is_refused_not_mangled() {
    // 0.55 (May 2023) predates `ConfigLoader::http_client`.
    let dir = published_source("aws-config", "0.55.3");
    let (path, text) = read(&dir, "src/lib.rs");
    let err = patch_aws_config_loader(&path, &text).expect_err("no http_client field");
    assert!(matches!(err, PatchError::AnchorNotFound { .. }), "{err}");
}
