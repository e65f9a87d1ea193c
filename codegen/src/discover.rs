//! Finding the crates of an SDK tree and sorting them: generated clients and aws-config are
//! wired; crates that look like clients but cannot be wired are refused with the reason; the
//! rest (runtime crates, tools) are left alone. Nothing is guessed: a service config counts only
//! when the syntax-aware search the patch itself uses finds its anchor.

use std::path::{Path, PathBuf};

use crate::manifest::{inspect_manifest, ManifestError, ManifestFacts};
use crate::patch::has_service_config_anchor;

/// What kind of crate the tool will wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CrateKind {
    /// A Smithy-generated client (`src/config.rs` has `base_client_runtime_plugins`).
    GeneratedClient,
    /// The hand-written aws-config crate (its `ConfigLoader::load` gets the default client).
    AwsConfig,
}

/// A crate the tool will wire.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiscoveredCrate {
    /// The package name.
    pub name: String,
    /// The crate directory.
    pub dir: PathBuf,
    /// The crate directory relative to the tree root (`.` for the root itself).
    pub rel_dir: PathBuf,
    /// What it is.
    pub kind: CrateKind,
    /// Package name → directory (`dir` joined with the manifest's `path`) of every `[dependencies]`
    /// entry written with a `path`: the sibling crates of an SDK repository it builds against.
    #[serde(skip)]
    pub path_dependencies: std::collections::BTreeMap<String, PathBuf>,
}

/// A crate the tool leaves untouched, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedCrate {
    /// The package name.
    pub name: String,
    /// The crate directory.
    pub dir: PathBuf,
    /// Why it is left alone.
    pub reason: String,
    /// True when it looks like a generated client the tool cannot wire (an error with `--strict`);
    /// false for crates that are simply not clients.
    pub unsupported: bool,
}

/// Everything found under one root.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Discovery {
    /// The root that was searched.
    pub root: PathBuf,
    /// Crates to wire, sorted by directory.
    pub crates: Vec<DiscoveredCrate>,
    /// Crates left alone, sorted by directory.
    pub skipped: Vec<SkippedCrate>,
}

/// Why a tree could not be searched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoverError {
    /// A directory or file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The root is not a directory.
    #[error("{0}: not a directory; pass the root of an SDK tree (or a crate directory)")]
    NotADirectory(PathBuf),
    /// A manifest could not be parsed.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

impl DiscoverError {
    /// The error as a diagnostic, when it is about a file (a manifest that does not parse, a
    /// file that cannot be read); `None` for a root that is not a directory.
    pub fn diagnostic(&self) -> Option<crate::diag::Diagnostic> {
        match self {
            DiscoverError::Io { path, .. } => Some(crate::diag::unreadable(path, self.to_string())),
            DiscoverError::NotADirectory(_) => None,
            DiscoverError::Manifest(e) => Some(e.diagnostic()),
        }
    }
}

const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];

fn read(path: &Path) -> Result<String, DiscoverError> {
    crate::read::read_text(path).map_err(|source| DiscoverError::Io { path: path.to_path_buf(), source })
}

/// Collects the manifests under `dir` into `out`, and into `links` every symbolic link to a
/// directory (not followed; `dir` itself is read even when it is a link). Entries come in
/// file-name order, each directory's contents right after it.
fn manifests_under(dir: &Path, out: &mut Vec<PathBuf>, links: &mut Vec<PathBuf>) -> Result<(), DiscoverError> {
    let skipped = |entry: &walkdir::DirEntry| {
        let name = entry.file_name().to_string_lossy();
        entry.depth() > 0
            && entry.file_type().is_dir()
            && (name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref()))
    };
    let walk = walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name().into_iter();
    for entry in walk.filter_entry(|e| !skipped(e)) {
        let entry = entry.map_err(|e| DiscoverError::Io {
            path: e.path().unwrap_or(dir).to_path_buf(),
            source: std::io::Error::from(e),
        })?;
        let file_type = entry.file_type();
        if entry.depth() == 0 || file_type.is_dir() {
            continue;
        }
        if file_type.is_symlink() && entry.path().is_dir() {
            links.push(entry.into_path());
        } else if entry.file_name() == "Cargo.toml" {
            out.push(entry.into_path());
        }
    }
    Ok(())
}

/// Finds and classifies every package under `root` (recursively, skipping `target/` and hidden
/// directories). `runtime_package` (the runtime crate itself) is never wired.
pub fn discover(root: &Path, runtime_package: &str) -> Result<Discovery, DiscoverError> {
    if !root.is_dir() {
        return Err(DiscoverError::NotADirectory(root.to_path_buf()));
    }
    let mut manifests = Vec::new();
    let mut links = Vec::new();
    manifests_under(root, &mut manifests, &mut links)?;
    let mut crates = Vec::new();
    let mut skipped = Vec::new();
    // A link is not followed: writing through it would change files outside this tree (or a
    // crate shared by several). A link that leads to crates is refused, by name, with --strict.
    for link in links {
        let mut behind = Vec::new();
        // The link itself is followed this once to count what it hides; links under it are not.
        if manifests_under(&link, &mut behind, &mut Vec::new()).is_err() || behind.is_empty() {
            continue;
        }
        let name = match behind.as_slice() {
            [only] if only.parent() == Some(link.as_path()) => read(only)
                .ok()
                .and_then(|text| inspect_manifest(only, &text).ok())
                .map_or_else(|| link.display().to_string(), |facts| facts.package_name),
            _ => link.display().to_string(),
        };
        let what = if behind.len() == 1 { "a crate".to_owned() } else { format!("{} crates", behind.len()) };
        skipped.push(SkippedCrate {
            name,
            reason: format!(
                "a symbolic link to {what}: smithy-tls does not follow links (the crates may live outside this \
                 tree, or be shared by several); run smithy-tls on the tree the link points into"
            ),
            dir: link,
            unsupported: true,
        });
    }
    for manifest_path in manifests {
        let text = read(&manifest_path)?;
        let dir = manifest_path.parent().unwrap_or(root).to_path_buf();
        let rel_dir = dir.strip_prefix(root).map(Path::to_path_buf).unwrap_or_default();
        let rel_dir = if rel_dir.as_os_str().is_empty() { PathBuf::from(".") } else { rel_dir };
        let facts = match inspect_manifest(&manifest_path, &text) {
            Ok(facts) => facts,
            Err(ManifestError::NotAPackage { .. }) => continue, // a virtual workspace manifest
            Err(e) => return Err(e.into()),
        };
        let name = facts.package_name.clone();
        let path_dependencies =
            facts.path_dependencies.iter().map(|(package, path)| (package.clone(), dir.join(path))).collect();
        let skip = |reason: &str, unsupported: bool| SkippedCrate {
            name: name.clone(),
            dir: dir.clone(),
            reason: reason.to_owned(),
            unsupported,
        };
        if name == runtime_package {
            skipped.push(skip("the runtime crate itself", false));
            continue;
        }
        let lib_rs = dir.join("src/lib.rs");
        if name == "aws-config" {
            if !lib_rs.is_file() {
                skipped.push(skip("aws-config without src/lib.rs", true));
                continue;
            }
            let lib = read(&lib_rs)?;
            if !lib.contains("ConfigLoader") || !lib.contains("fn load(") {
                skipped.push(skip("aws-config without `ConfigLoader::load` in src/lib.rs: an unknown layout", true));
                continue;
            }
            match serves_vintage(&facts, &dir) {
                Ok(()) => {
                    crates.push(DiscoveredCrate { name, dir, rel_dir, kind: CrateKind::AwsConfig, path_dependencies })
                }
                Err(reason) => skipped.push(skip(&reason, true)),
            }
            continue;
        }
        // Generated clients carry `[package.metadata.smithy]`; older ones (2023) depend on
        // aws-smithy-client instead of aws-smithy-runtime.
        let looks_like_client =
            facts.smithy_runtime_key.is_some() || facts.smithy_metadata || facts.legacy_smithy_client;
        let config_rs = dir.join("src/config.rs");
        if !config_rs.is_file() {
            // Runtime crates (aws-types, aws-runtime, aws-smithy-*) carry the same metadata but
            // have no service config: only a crate named like a client is refused here.
            if looks_like_client && name.starts_with("aws-sdk-") {
                skipped.push(skip("generated crate without src/config.rs: an unknown layout", true));
            } else {
                skipped.push(skip("not a generated client", false));
            }
            continue;
        }
        if !lib_rs.is_file() {
            skipped.push(skip("no src/lib.rs", looks_like_client));
            continue;
        }
        let config = read(&config_rs)?;
        // A client whose config.rs does not parse, or has two anchors, is wired: planning then
        // reports the error with its line, alongside every other crate's. Any other crate with
        // an unparsable config.rs is simply not a client.
        let has_anchor = has_service_config_anchor(&config_rs, &config).unwrap_or(looks_like_client);
        match has_anchor {
            true => match serves_vintage(&facts, &dir) {
                Ok(()) => crates.push(DiscoveredCrate {
                    name,
                    dir,
                    rel_dir,
                    kind: CrateKind::GeneratedClient,
                    path_dependencies,
                }),
                Err(reason) => skipped.push(skip(&reason, true)),
            },
            false if looks_like_client => skipped.push(skip(
                "src/config.rs has no `base_client_runtime_plugins` with a `default_plugins(..)` call \
                 (generated by a smithy-rs older than the orchestrator, 2023): upgrade the SDK to wire it",
                true,
            )),
            false => skipped.push(skip("not a generated client", false)),
        }
    }
    skipped.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(Discovery { root: root.to_path_buf(), crates, skipped })
}

/// Whether the runtime crate can serve this crate's aws-smithy-runtime-api (see
/// [`crate::vintage`]); the reason when it cannot. A path dependency (a sibling crate of the
/// tree) is judged by the version of the crate it points to.
fn serves_vintage(facts: &ManifestFacts, dir: &Path) -> Result<(), String> {
    use crate::vintage::{check_requirement, RUNTIME_API};
    let Some(api) = &facts.runtime_api else {
        return Err(format!(
            "it does not depend on {RUNTIME_API}, which the emitted module uses: not a smithy-rs client this \
             tool can wire"
        ));
    };
    if let Some(version) = &api.version {
        return check_requirement(version);
    }
    let sibling = api.path.as_deref().map(|path| dir.join(path).join("Cargo.toml"));
    let version = sibling.as_deref().and_then(|manifest| {
        let text = read(manifest).ok()?;
        let doc: toml_edit::DocumentMut = text.parse().ok()?;
        crate::manifest::package_str(&doc, "version").map(str::to_owned)
    });
    match version {
        Some(version) => check_requirement(&format!("={version}")),
        None => Err(format!(
            "its {RUNTIME_API} dependency names neither a version nor a sibling crate whose version can be read \
             ({}): add `version = \"..\"` to it",
            sibling.map_or_else(|| "no path".to_owned(), |p| p.display().to_string())
        )),
    }
}

/// The path from `rel_dir` (relative to a root) to `target` (also relative to that root), with
/// `/` separators.
///
/// ```
/// use std::path::Path;
/// use smithy_tls_codegen::discover::relative_to_root;
/// assert_eq!(relative_to_root(Path::new("sdk/sts"), "smithy-default-tls"), "../../smithy-default-tls");
/// assert_eq!(relative_to_root(Path::new("."), "rt"), "rt");
/// ```
pub fn relative_to_root(rel_dir: &Path, target: &str) -> String {
    let depth = rel_dir.components().filter(|c| matches!(c, std::path::Component::Normal(_))).count();
    let mut out = "../".repeat(depth);
    out.push_str(target);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate named like a generated client, with `config` as its src/config.rs.
    fn tree_with_config(config: &str) -> tempfile::TempDir {
        tree_with(config, "aws-smithy-runtime-api = \"1.7.1\"")
    }

    /// The same, with `dependency` as its aws-smithy-runtime-api line.
    fn tree_with(config: &str, dependency: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("aws-sdk-widgets");
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        std::fs::write(
            dir.join("Cargo.toml"),
            format!(
                "[package]\nname = \"aws-sdk-widgets\"\nversion = \"1.0.0\"\n\n[package.metadata.smithy]\n\n\
                 [dependencies]\n{dependency}\n"
            ),
        )
        .expect("manifest");
        std::fs::write(dir.join("src/lib.rs"), "pub mod config;\n").expect("lib.rs");
        std::fs::write(dir.join("src/config.rs"), config).expect("config.rs");
        root
    }

    #[test]
    fn names_in_comments_are_not_an_anchor() {
        let root = tree_with_config(
            "// fn base_client_runtime_plugins() calls default_plugins(..) upstream\npub struct Config;\n",
        );
        let found = discover(root.path(), "smithy-default-tls").expect("discovers");
        assert!(found.crates.is_empty(), "{found:#?}");
        assert_eq!(found.skipped.len(), 1);
        assert!(found.skipped[0].unsupported);
        assert!(found.skipped[0].reason.contains("no `base_client_runtime_plugins`"), "{}", found.skipped[0].reason);
    }

    #[test]
    fn a_real_anchor_is_wired_and_an_unparsable_config_is_left_to_planning() {
        let anchored = "fn base_client_runtime_plugins() { x.with_client_plugins(default_plugins(p)); }\n";
        let found = discover(tree_with_config(anchored).path(), "smithy-default-tls").expect("discovers");
        assert_eq!(found.crates.len(), 1, "{found:#?}");
        assert_eq!(found.crates[0].kind, CrateKind::GeneratedClient);
        // Planning reports the parse error with its line, with every other crate's errors.
        let broken = "fn base_client_runtime_plugins( {\n";
        let found = discover(tree_with_config(broken).path(), "smithy-default-tls").expect("discovers");
        assert_eq!(found.crates.len(), 1, "{found:#?}");
    }

    const ANCHORED: &str = "fn base_client_runtime_plugins() { x.with_client_plugins(default_plugins(p)); }\n";

    #[test]
    fn a_crate_on_a_runtime_api_the_runtime_cannot_serve_is_refused_with_the_minimum() {
        let found =
            discover(tree_with(ANCHORED, "aws-smithy-runtime-api = \"0.57.1\"").path(), "smithy-default-tls").unwrap();
        assert!(found.crates.is_empty(), "{found:#?}");
        let reason = &found.skipped[0].reason;
        assert!(found.skipped[0].unsupported);
        assert!(
            reason.contains("`0.57.1`") && reason.contains("1.19.0") && reason.contains("upgrade the SDK"),
            "{reason}"
        );
        // No dependency at all: nothing for the emitted module to build on.
        let found = discover(tree_with(ANCHORED, "").path(), "smithy-default-tls").unwrap();
        assert!(found.skipped[0].reason.contains("does not depend on aws-smithy-runtime-api"), "{found:#?}");
    }

    #[test]
    fn a_path_dependency_is_judged_by_the_sibling_crate_version() {
        // Exact sibling versions at any patch: smithy-rs's in-repo builds name the runtime crates so.
        let cases = [("1.20.0", true), ("1.19.3", true), ("1.20.7", true), ("1.9.0", false), ("0.57.2", false)];
        for (version, wired) in cases {
            let root = tree_with(ANCHORED, "aws-smithy-runtime-api = { path = \"../aws-smithy-runtime-api\" }");
            let sibling = root.path().join("aws-smithy-runtime-api");
            std::fs::create_dir_all(&sibling).unwrap();
            std::fs::write(
                sibling.join("Cargo.toml"),
                format!("[package]\nname = \"aws-smithy-runtime-api\"\nversion = \"{version}\"\n"),
            )
            .unwrap();
            let found = discover(root.path(), "smithy-default-tls").unwrap();
            assert_eq!(found.crates.len(), usize::from(wired), "{version}: {found:#?}");
        }
    }

    #[test]
    fn smithy_names_in_comments_do_not_make_a_crate_a_client() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("aws-sdk-notes");
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        let manifest = "# Not [package.metadata.smithy]; no aws-smithy-client either.\n\
                        [package]\nname = \"aws-sdk-notes\"\nversion = \"1.0.0\"\n";
        std::fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
        std::fs::write(dir.join("src/lib.rs"), "").expect("lib.rs");
        let found = discover(root.path(), "smithy-default-tls").expect("discovers");
        assert_eq!(found.skipped.len(), 1, "{found:#?}");
        assert_eq!(found.skipped[0].reason, "not a generated client");
        assert!(!found.skipped[0].unsupported, "{found:#?}");
    }
}
