//! The runtime crate shipped inside the generator, so `apply --vendor-runtime` can put the
//! runtime the generated code was made for where the policy's `[runtime] path` points
//! ([`plan_vendored_runtime`]), and every tree pairs the two. `codegen/runtime/` links to the
//! repository's `runtime/` (its manifest as `Cargo.toml.in`: cargo package leaves out a directory
//! holding a `Cargo.toml`), and `codegen/runtime/crypto/` likewise to the feature carrier the
//! runtime names by `path = "crypto"` (`smithy-default-tls-crypto`, published with it but placed
//! inside it); build.rs lists the files found there. `revert --vendor-runtime` takes the placed
//! crate, carrier included, out again.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::change::{change, FileChange};

include!(concat!(env!("OUT_DIR"), "/runtime_sources.rs"));

/// The runtime's manifest as the repository holds it, dev-dependencies included.
const MANIFEST_SOURCE: &str = include_str!("../../runtime/Cargo.toml.in");

/// The runtime's manifest as shipped: the repository's without `[dev-dependencies]`, which name
/// this workspace's test crates and mean nothing where the runtime is placed.
///
/// ```
/// let manifest = smithy_tls_codegen::pairing::shipped::shipped_manifest_text();
/// assert!(manifest.contains("name = \"smithy-default-tls\"") && !manifest.contains("[dev-dependencies]"));
/// ```
pub fn shipped_manifest_text() -> &'static str {
    static TEXT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        // The table runs from its header to the next table header (or the end of the file).
        match MANIFEST_SOURCE.find("\n[dev-dependencies]\n") {
            Some(at) => {
                let start = at + 1;
                let end = MANIFEST_SOURCE[start + 1..].find("\n[").map_or(MANIFEST_SOURCE.len(), |i| start + 1 + i + 1);
                format!("{}{}", &MANIFEST_SOURCE[..start], &MANIFEST_SOURCE[end..])
            }
            None => MANIFEST_SOURCE.to_owned(),
        }
    });
    &TEXT
}

/// Where the placed runtime crate finds the crates it shares with the tree: package name → `path`
/// relative to the runtime crate's directory (forward slashes), for each of its dependencies
/// that the tree's crates name by `path`. Empty for a tree built against the registry.
pub type SiblingPaths = BTreeMap<String, String>;

/// The runtime crate's files to write under `dir`, with their contents, the crate it carries
/// under `dir/crypto` included; its manifest names the `siblings` by path (see
/// [`runtime_manifest`]).
pub fn runtime_files(dir: &Path, siblings: &SiblingPaths) -> Vec<(PathBuf, Cow<'static, str>)> {
    std::iter::once((dir.join("Cargo.toml"), runtime_manifest(siblings)))
        .chain(RUNTIME_SOURCES.iter().map(|(path, text)| (dir.join(path), carried_file(path, text, siblings))))
        .collect()
}

/// A file of the runtime's directory as placed: a carried crate's manifest (`wasi-http/Cargo.toml`)
/// names the `siblings` by path too, from its own directory, in every dependency table (its
/// dependencies on the SDK's runtime crates must be the tree's copies, as the runtime's are).
fn carried_file(path: &str, text: &'static str, siblings: &SiblingPaths) -> Cow<'static, str> {
    let Some(crate_dir) = path.strip_suffix("/Cargo.toml") else { return Cow::Borrowed(text) };
    if siblings.is_empty() {
        return Cow::Borrowed(text);
    }
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else { return Cow::Borrowed(text) };
    let up = "../".repeat(Path::new(crate_dir).components().count());
    if let Some(dependencies) = doc.get_mut("dependencies").and_then(toml_edit::Item::as_table_like_mut) {
        point_at_siblings(dependencies, siblings, &up);
    }
    if let Some(targets) = doc.get_mut("target").and_then(toml_edit::Item::as_table_like_mut) {
        for (_, platform) in targets.iter_mut() {
            let dependencies = platform.get_mut("dependencies").and_then(toml_edit::Item::as_table_like_mut);
            if let Some(dependencies) = dependencies {
                point_at_siblings(dependencies, siblings, &up);
            }
        }
    }
    Cow::Owned(doc.to_string())
}

/// The shipped runtime manifest, with a `path` added to each dependency in `siblings` (its
/// version requirement kept): in a tree whose crates name aws-smithy-runtime-api and its
/// companions by path, a registry copy beside the tree's own would be a second crate, and the
/// `SharedHttpClient` the generated code receives a different type (E0308). The feature
/// carrier the runtime names by `path = "crypto"` keeps that path (it ships in `crypto/`).
///
/// ```
/// use smithy_tls_codegen::pairing::shipped::{runtime_manifest, SiblingPaths};
/// let siblings = SiblingPaths::from([("aws-smithy-types".to_owned(), "../aws-smithy-types".to_owned())]);
/// let manifest = runtime_manifest(&siblings);
/// assert!(manifest.contains("aws-smithy-types = { path = \"../aws-smithy-types\", version = "));
/// assert!(!runtime_manifest(&SiblingPaths::new()).contains("aws-smithy-types = { path"));
/// let carrier = "smithy-default-tls-crypto = { version = \"0.1.0\", path = \"crypto\"";
/// assert!(manifest.contains(carrier) && runtime_manifest(&SiblingPaths::new()).contains(carrier));
/// ```
pub fn runtime_manifest(siblings: &SiblingPaths) -> Cow<'static, str> {
    let shipped = shipped_manifest_text();
    if siblings.is_empty() {
        return Cow::Borrowed(shipped);
    }
    let mut doc = shipped_manifest().clone();
    let Some(dependencies) = doc.get_mut("dependencies").and_then(toml_edit::Item::as_table_like_mut) else {
        return Cow::Borrowed(shipped);
    };
    point_at_siblings(dependencies, siblings, "");
    Cow::Owned(doc.to_string())
}

/// Adds a `path` (`siblings`' own, after `up`) to each entry of `dependencies` that `siblings`
/// names, its version requirement and other keys kept.
fn point_at_siblings(dependencies: &mut dyn toml_edit::TableLike, siblings: &SiblingPaths, up: &str) {
    for (package, path) in siblings {
        let Some(item) = dependencies.get_mut(package) else { continue };
        let mut entry = toml_edit::InlineTable::new();
        entry.insert("path", format!("{up}{path}").into());
        match item.as_value() {
            Some(toml_edit::Value::String(version)) => {
                entry.insert("version", version.value().as_str().into());
            }
            Some(toml_edit::Value::InlineTable(table)) => {
                for (key, value) in table.iter().filter(|(key, _)| *key != "path") {
                    entry.insert(key, value.clone());
                }
            }
            _ => continue,
        }
        // Decor of the first and last keys as the shipped entry had them (one space inside braces).
        entry.fmt();
        *item = toml_edit::Item::Value(toml_edit::Value::InlineTable(entry).decorated(" ", ""));
    }
}

/// Why the runtime crate cannot build against the tree's own copies of its dependencies.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SiblingError {
    /// Two crates of the tree name the same package at different paths.
    #[error("the tree's crates name `{package}` at two paths, {} and {}: point them at one copy", .first.display(), .second.display())]
    TwoPaths {
        /// The package.
        package: String,
        /// One directory named.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// The sibling's version is one the runtime's requirement excludes, or cannot be read.
    #[error(
        "{}: `{package}` {found}, where the runtime crate needs `{requirement}`: upgrade the tree's `{package}`",
        .manifest.display()
    )]
    Version {
        /// The package.
        package: String,
        /// The sibling's manifest.
        manifest: PathBuf,
        /// What was found there (`version x.y.z`, or why none could be read).
        found: String,
        /// The runtime's requirement.
        requirement: String,
    },
}

/// The [`SiblingPaths`] of a runtime crate placed at `runtime_dir`, from the `path` dependencies
/// of the tree's wired crates (package name → directory, as `discover` resolves them). A
/// package of the runtime's `[dependencies]` that some crate names by path is taken from that
/// directory; its version must meet the runtime's requirement.
///
/// # Errors
/// [`SiblingError`] when crates disagree on a package's directory, or its version does not fit.
pub fn sibling_paths<'a>(
    runtime_dir: &Path,
    crates: impl IntoIterator<Item = &'a BTreeMap<String, PathBuf>>,
) -> Result<SiblingPaths, SiblingError> {
    let Some(dependencies) = shipped_manifest().get("dependencies").and_then(toml_edit::Item::as_table_like) else {
        return Ok(SiblingPaths::new());
    };
    let mut found: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for paths in crates {
        for (package, dir) in paths {
            let Some((key, _)) = dependencies.iter().find(|(key, _)| key == package) else { continue };
            let dir = normalize(dir);
            match found.get(key) {
                Some(first) if *first != dir => {
                    return Err(SiblingError::TwoPaths { package: package.clone(), first: first.clone(), second: dir })
                }
                _ => {
                    found.insert(key, dir);
                }
            }
        }
    }
    let runtime_dir = normalize(runtime_dir);
    let mut out = SiblingPaths::new();
    for (package, dir) in found {
        let requirement = dependencies
            .get(package)
            .and_then(|item| item.as_str().or_else(|| item.get("version")?.as_str()))
            .unwrap_or("*");
        let manifest = dir.join("Cargo.toml");
        let text = match crate::read::read_text(&manifest) {
            // Named but absent (a tree that does not build as it stands): the registry serves the
            // runtime, as it would without the path.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            other => other,
        };
        let version = text
            .map_err(|e| format!("cannot be read ({e})"))
            .and_then(|text| text.parse::<toml_edit::DocumentMut>().map_err(|e| format!("is not valid TOML ({e})")))
            .and_then(|doc| {
                crate::manifest::package_str(&doc, "version")
                    .map(str::to_owned)
                    .ok_or_else(|| "has no package.version".to_owned())
            });
        let fits = |version: &str| {
            semver::VersionReq::parse(requirement)
                .ok()
                .zip(semver::Version::parse(version).ok())
                .is_some_and(|(req, version)| req.matches(&version))
        };
        match version {
            Ok(version) if fits(&version) => {
                out.insert(package.to_owned(), relative(&runtime_dir, &dir));
            }
            found => {
                return Err(SiblingError::Version {
                    package: package.to_owned(),
                    manifest,
                    found: found.map_or_else(|why| format!("whose manifest {why}"), |v| format!("version {v}")),
                    requirement: requirement.to_owned(),
                })
            }
        }
    }
    Ok(out)
}

/// `path` with `.` dropped and each `..` taking back the component before it (lexically: the
/// tree's paths are compared as written, not through links).
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path from directory `from` to `to` (both normalized), with `/` separators.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(to[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The runtime crate the generated code was made for, written under `dir` (the policy's
/// `[runtime] path`, inside the SDK tree): one change per file that is missing or differs, and,
/// when `dir` already holds a runtime crate (its manifest names the shipped package), the
/// removal of every Rust source under `src/` (and the carrier's `crypto/src/`) the shipped
/// crates do not have (left by the runtime an earlier smithy-tls placed there; a linked `src/`
/// is not followed). Other files of the directory are left alone. The manifest names the tree's
/// own copies of the runtime's dependencies by path (`siblings`, see [`sibling_paths`]).
///
/// # Errors
/// [`ReadError`] when a file cannot be read.
pub fn plan_vendored_runtime(dir: &Path, siblings: &SiblingPaths) -> Result<Vec<FileChange>, ReadError> {
    let shipped = runtime_files(dir, siblings);
    let mut changes = Vec::new();
    for (path, text) in &shipped {
        let existing = read_optional(path)?;
        changes.extend(change(path.clone(), existing, text.clone().into_owned()));
    }
    // Only in a runtime crate (the shipped package's name in the manifest already there): the
    // sources of any other crate the path might point at are not the tool's to remove.
    let manifest = read_optional(&dir.join("Cargo.toml"))?;
    let is_runtime = manifest.and_then(|text| text.parse::<toml_edit::DocumentMut>().ok()).is_some_and(|doc| {
        crate::manifest::package_str(&doc, "name") == crate::manifest::package_str(shipped_manifest(), "name")
    });
    if !is_runtime {
        return Ok(changes);
    }
    for crate_dir in crate_dirs() {
        let sources = walkdir::WalkDir::new(dir.join(crate_dir).join("src"))
            .follow_links(false)
            .follow_root_links(false)
            .sort_by_file_name();
        for entry in sources.into_iter().filter_map(Result::ok) {
            let path = entry.path();
            let stale = entry.file_type().is_file()
                && path.extension().is_some_and(|e| e == "rs")
                && !shipped.iter().any(|(shipped, _)| shipped == path);
            if stale {
                let original = read_optional(path)?;
                changes.push(FileChange { path: path.to_path_buf(), original, updated: None });
            }
        }
    }
    Ok(changes)
}

/// The shipped crates' directories, relative to the runtime's: the runtime's own (empty), then
/// each crate it carries (a directory of [`RUNTIME_SOURCES`] holding a `Cargo.toml`).
fn crate_dirs() -> impl Iterator<Item = &'static Path> {
    let carried = RUNTIME_SOURCES
        .iter()
        .map(|(path, _)| Path::new(*path))
        .filter(|path| path.file_name().is_some_and(|name| name == "Cargo.toml"))
        .filter_map(Path::parent);
    std::iter::once(Path::new("")).chain(carried)
}

/// A file of the runtime's directory that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot read: {source}", path = .path.display())]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

fn read_optional(path: &Path) -> Result<Option<String>, ReadError> {
    match crate::read::read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReadError { path: path.to_path_buf(), source }),
    }
}

/// Why `revert --vendor-runtime` leaves the runtime crate under a directory alone (R002).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnvendorError {
    /// A file the runtime ships is there with other contents: edited since, placed by another
    /// smithy-tls version, or another crate's.
    #[error("{}: differs from the runtime this smithy-tls ships{}", .first.display(), if *.more > 0 { format!(" (and {} more file(s))", .more) } else { String::new() })]
    Differs {
        /// The first such file.
        first: PathBuf,
        /// How many more there are.
        more: usize,
    },
    /// A file the runtime ships cannot be read.
    #[error("{path}: cannot read: {source}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What `revert --vendor-runtime` removes under `dir` (the policy's `[runtime] path`): each file
/// `apply --vendor-runtime` writes, when it holds exactly what it writes; nothing else (a
/// `Cargo.lock`, `target/` or notes beside it stay). Missing files are already gone. All or
/// nothing: when one of them differs, the crate is not the one this smithy-tls placed, and
/// removing the rest would leave half a crate.
///
/// # Errors
/// [`UnvendorError::Differs`] names the first file that differs; [`UnvendorError::Io`] one that
/// cannot be read.
pub fn plan_runtime_removal(dir: &Path, siblings: &SiblingPaths) -> Result<Vec<FileChange>, UnvendorError> {
    let mut removals = Vec::new();
    let mut differing = Vec::new();
    for (path, text) in runtime_files(dir, siblings) {
        match crate::read::read_text(&path) {
            Ok(existing) if existing == *text => {
                removals.push(FileChange { path, original: Some(existing), updated: None })
            }
            Ok(_) => differing.push(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // Not UTF-8, say: not what the tool wrote either.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => differing.push(path),
            Err(source) => return Err(UnvendorError::Io { path, source }),
        }
    }
    match differing.len() {
        0 => Ok(removals),
        n => Err(UnvendorError::Differs { first: differing.swap_remove(0), more: n - 1 }),
    }
}

/// The directories the runtime's files sit in under `dir`, deepest first, `dir` last: what to
/// remove, when empty, once its files are gone.
pub fn runtime_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = RUNTIME_SOURCES
        .iter()
        .flat_map(|(path, _)| Path::new(path).ancestors().skip(1).map(|a| dir.join(a)).collect::<Vec<_>>())
        .collect();
    dirs.sort_by(|a, b| b.components().count().cmp(&a.components().count()).then_with(|| a.cmp(b)));
    dirs.dedup();
    dirs
}

/// The manifest of the runtime crate shipped here, parsed once.
pub fn shipped_manifest() -> &'static toml_edit::DocumentMut {
    static MANIFEST: std::sync::LazyLock<toml_edit::DocumentMut> = std::sync::LazyLock::new(|| {
        // runtime/Cargo.toml, which cargo itself parses to build the runtime in this workspace.
        shipped_manifest_text().parse().expect("the shipped runtime manifest is valid TOML")
    });
    &MANIFEST
}

/// The version of the runtime crate shipped here (its manifest's `package.version`).
pub fn runtime_version() -> Option<&'static str> {
    crate::manifest::package_str(shipped_manifest(), "version")
}

/// The aws-smithy-runtime-api requirement of the runtime crate shipped here, as its manifest
/// writes it (e.g. `1.19.0`): the one place the runtime's floor is declared.
pub fn runtime_api_requirement() -> Option<&'static str> {
    shipped_manifest().get("dependencies")?.get(crate::manifest::RUNTIME_API)?.get("version")?.as_str()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    #[test]
    fn siblings_named_by_path_are_found_relative_to_the_runtime_and_checked() {
        let tree = tempfile::tempdir().expect("temp dir");
        let root = tree.path();
        let write = |dir: &str, version: &str| {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            let manifest = format!("[package]\nname = \"{dir}\"\nversion = \"{version}\"\n");
            std::fs::write(root.join(dir).join("Cargo.toml"), manifest).unwrap();
        };
        write("aws-smithy-runtime-api", "1.19.3");
        write("aws-smithy-types", "1.3.6");
        let sts = BTreeMap::from([
            ("aws-smithy-runtime-api".to_owned(), root.join("sdk/sts/../../aws-smithy-runtime-api")),
            ("aws-smithy-types".to_owned(), root.join("sdk/sts/./../../aws-smithy-types")),
            ("aws-sigv4".to_owned(), root.join("aws-sigv4")), // not a dependency of the runtime
        ]);
        let s3 = BTreeMap::from([("aws-smithy-types".to_owned(), root.join("aws-smithy-types"))]);
        let found = super::sibling_paths(&root.join("vendor/smithy-default-tls"), [&sts, &s3]).unwrap();
        assert_eq!(
            found,
            BTreeMap::from([
                ("aws-smithy-runtime-api".to_owned(), "../../aws-smithy-runtime-api".to_owned()),
                ("aws-smithy-types".to_owned(), "../../aws-smithy-types".to_owned()),
            ])
        );
        let manifest = super::runtime_manifest(&found);
        let doc: toml_edit::DocumentMut = manifest.parse().expect("valid TOML");
        assert_eq!(
            doc["dependencies"]["aws-smithy-runtime-api"]["path"].as_str(),
            Some("../../aws-smithy-runtime-api")
        );
        assert_eq!(doc["dependencies"]["aws-smithy-runtime-api"]["version"].as_str(), Some("1.19.0"));
        assert!(doc["dependencies"]["aws-smithy-async"].get("path").is_none());

        let elsewhere = BTreeMap::from([("aws-smithy-types".to_owned(), root.join("other/aws-smithy-types"))]);
        let err = super::sibling_paths(&root.join("rt"), [&s3, &elsewhere]).unwrap_err();
        assert!(matches!(err, super::SiblingError::TwoPaths { .. }), "{err}");
        write("aws-smithy-async", "1.1.0"); // the runtime needs 1.2 or later
        let old = BTreeMap::from([("aws-smithy-async".to_owned(), root.join("aws-smithy-async"))]);
        let err = super::sibling_paths(&root.join("rt"), [&old]).unwrap_err().to_string();
        assert!(err.contains("version 1.1.0") && err.contains("`1.2`"), "{err}");
        let missing = BTreeMap::from([("aws-smithy-async".to_owned(), root.join("nowhere"))]);
        assert_eq!(super::sibling_paths(&root.join("rt"), [&missing]), Ok(BTreeMap::new()));
        std::fs::create_dir_all(root.join("broken")).unwrap();
        std::fs::write(root.join("broken/Cargo.toml"), "[package\n").unwrap();
        let broken = BTreeMap::from([("aws-smithy-async".to_owned(), root.join("broken"))]);
        let err = super::sibling_paths(&root.join("rt"), [&broken]).unwrap_err().to_string();
        assert!(err.contains("is not valid TOML"), "{err}");
    }

    /// The policy's providers and roots are the shipped runtime's features (their names are
    /// written into manifests as features), one for one.
    #[test]
    fn the_policy_vocabulary_is_the_runtimes_features() {
        use crate::model::{Provider, Roots};
        let features = super::shipped_manifest().get("features").and_then(|f| f.as_table()).expect("[features]");
        // `experimental-*` features switch a provider's implementation, not the policy's choice.
        let mut features: Vec<&str> = features
            .iter()
            .map(|(name, _)| name)
            .filter(|n| *n != "default" && !n.starts_with("experimental-"))
            .collect();
        features.sort_unstable();
        let mut vocabulary: Vec<&str> =
            Provider::ALL.map(Provider::name).into_iter().chain(Roots::ALL.map(Roots::name)).collect();
        vocabulary.sort_unstable();
        assert_eq!(vocabulary, features);
    }

    #[test]
    fn the_shipped_runtime_is_the_runtime_without_its_dev_dependencies() {
        let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime");
        let mut expected: toml_edit::DocumentMut =
            std::fs::read_to_string(runtime.join("Cargo.toml")).expect("runtime/Cargo.toml").parse().expect("parses");
        expected.remove("dev-dependencies");
        let shipped: toml_edit::DocumentMut = super::shipped_manifest_text().parse().expect("parses");
        assert_eq!(shipped.to_string(), expected.to_string());
        assert_eq!(super::runtime_version(), Some("0.1.0"));
        // Every source file of runtime/src, runtime/crypto/src and runtime/wasi-http/src ships,
        // with the carried crates' manifests, and nothing else: smithy-wasi-http is what
        // `wasi-http` rules depend on, at `<runtime path>/wasi-http`.
        let mut sources: Vec<String> = walk(&runtime.join("src"), "src");
        sources.extend(walk(&runtime.join("crypto/src"), "crypto/src"));
        sources.extend(walk(&runtime.join("wasi-http/src"), "wasi-http/src"));
        sources.extend(["build.rs", "rustfmt.toml", "crypto/Cargo.toml", "wasi-http/Cargo.toml"].map(str::to_owned));
        sources.sort();
        let shipped: Vec<&str> = super::RUNTIME_SOURCES.iter().map(|(path, _)| *path).collect();
        assert_eq!(shipped, sources);
        for (path, text) in super::RUNTIME_SOURCES {
            let on_disk = std::fs::read_to_string(runtime.join(path)).expect("runtime file");
            assert_eq!(*text, on_disk, "{path}");
        }
    }

    /// Every dependency the shipped runtime names by `path` (the feature carrier, `path =
    /// "crypto"`) ships with it, at that path, as a crate that builds where it is placed: that
    /// package, at a version the requirement allows, with no workspace inheritance and no
    /// dev-dependencies naming this workspace's crates. The manifest rewritten for a tree's
    /// sibling crates keeps those paths.
    #[test]
    fn the_runtime_ships_the_crates_it_names_by_path() {
        let dir = Path::new("vendor/smithy-default-tls");
        let siblings = super::SiblingPaths::from([
            ("aws-smithy-runtime-api".to_owned(), "../aws-smithy-runtime-api".to_owned()),
            ("aws-smithy-types".to_owned(), "../aws-smithy-types".to_owned()),
        ]);
        for siblings in [super::SiblingPaths::new(), siblings] {
            let files = super::runtime_files(dir, &siblings);
            let manifest: toml_edit::DocumentMut = files[0].1.parse().expect("runtime manifest parses");
            let carried: Vec<(String, String, String)> =
                path_dependencies(&manifest).into_iter().filter(|(name, _, _)| !siblings.contains_key(name)).collect();
            let names: Vec<&str> = carried.iter().map(|(name, _, _)| name.as_str()).collect();
            assert_eq!(names, ["smithy-default-tls-crypto"], "the crates the runtime names by path");
            for (name, path, requirement) in &carried {
                let file = |relative: &str| files.iter().find(|(p, _)| *p == dir.join(path).join(relative));
                let (_, text) = file("Cargo.toml").unwrap_or_else(|| panic!("{name}: {path}/Cargo.toml not shipped"));
                assert!(file("src/lib.rs").is_some(), "{name}: {path}/src/lib.rs not shipped");
                let doc: toml_edit::DocumentMut = text.parse().expect("carried manifest parses");
                assert_eq!(crate::manifest::package_str(&doc, "name"), Some(name.as_str()));
                let version = crate::manifest::package_str(&doc, "version").expect("a version");
                let req = semver::VersionReq::parse(requirement).expect("requirement");
                assert!(req.matches(&semver::Version::parse(version).expect("version")), "{name} {version}");
                assert!(doc.get("dev-dependencies").is_none(), "{name}: dev-dependencies ship");
                assert!(!text.contains("workspace = true") && !text.contains(".workspace"), "{name}: inherits");
            }
        }
    }

    /// `(package, path, version requirement)` of every dependency `doc` names by `path`, in any
    /// dependency table (target tables included).
    fn path_dependencies(doc: &toml_edit::DocumentMut) -> Vec<(String, String, String)> {
        let mut tables: Vec<&dyn toml_edit::TableLike> = Vec::new();
        for kind in ["dependencies", "build-dependencies"] {
            tables.extend(doc.get(kind).and_then(toml_edit::Item::as_table_like));
            if let Some(targets) = doc.get("target").and_then(toml_edit::Item::as_table_like) {
                tables.extend(targets.iter().filter_map(|(_, t)| t.get(kind)?.as_table_like()));
            }
        }
        let mut out: Vec<(String, String, String)> = tables
            .into_iter()
            .flat_map(|table| table.iter())
            .filter_map(|(key, item)| {
                let path = item.get("path")?.as_str()?.to_owned();
                let package = item.get("package").and_then(toml_edit::Item::as_str).unwrap_or(key).to_owned();
                let version = item.get("version").and_then(toml_edit::Item::as_str).unwrap_or("*").to_owned();
                Some((package, path, version))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The carrier's files are the runtime's for apply, revert and check: written, compared, taken
    /// out only as shipped, and a stale source of its `src/` removed.
    /// smithy-wasi-http, placed at `<runtime>/wasi-http`, names the tree's copies of the SDK's
    /// runtime crates from one directory further down; without siblings it ships as it is.
    #[test]
    fn the_wasi_http_crate_names_the_siblings_from_its_own_directory() {
        use super::SiblingPaths;
        use std::borrow::Cow;
        let siblings = SiblingPaths::from([(
            "aws-smithy-runtime-api".to_owned(),
            "../rust-runtime/aws-smithy-runtime-api".to_owned(),
        )]);
        let placed = super::runtime_files(Path::new("rt"), &siblings);
        let manifest = |files: &[(std::path::PathBuf, Cow<'static, str>)]| {
            let (_, text) =
                files.iter().find(|(path, _)| path == Path::new("rt/wasi-http/Cargo.toml")).expect("placed");
            text.to_string()
        };
        let text = manifest(&placed);
        assert!(
            text.contains(
                r#"aws-smithy-runtime-api = { path = "../../rust-runtime/aws-smithy-runtime-api", version = "#
            ),
            "{text}"
        );
        assert!(!text.contains(r#"aws-smithy-types = { path"#), "only the siblings get a path:\n{text}");
        let alone = manifest(&super::runtime_files(Path::new("rt"), &SiblingPaths::new()));
        assert_eq!(alone, std::fs::read_to_string("../runtime/wasi-http/Cargo.toml").expect("the crate's manifest"));
    }

    #[test]
    fn the_carrier_is_placed_and_taken_out_with_the_runtime() {
        let tree = tempfile::tempdir().expect("temp dir");
        let dir = tree.path().join("smithy-default-tls");
        let siblings = super::SiblingPaths::new();
        let planned = super::plan_vendored_runtime(&dir, &siblings).expect("plan");
        let written: Vec<_> = planned.iter().map(|c| c.path.strip_prefix(&dir).unwrap().to_path_buf()).collect();
        assert!(written.contains(&"crypto/Cargo.toml".into()) && written.contains(&"crypto/src/lib.rs".into()));
        for change in &planned {
            std::fs::create_dir_all(change.path.parent().unwrap()).unwrap();
            std::fs::write(&change.path, change.updated.as_deref().unwrap()).unwrap();
        }
        assert!(super::plan_vendored_runtime(&dir, &siblings).expect("plan").is_empty(), "up to date");

        std::fs::write(dir.join("crypto/src/old.rs"), "// from an earlier carrier\n").unwrap();
        let stale = super::plan_vendored_runtime(&dir, &siblings).expect("plan");
        assert_eq!(stale.iter().map(|c| c.path.clone()).collect::<Vec<_>>(), [dir.join("crypto/src/old.rs")]);
        assert!(stale[0].updated.is_none());
        std::fs::remove_file(dir.join("crypto/src/old.rs")).unwrap();

        let removals = super::plan_runtime_removal(&dir, &siblings).expect("removal");
        assert_eq!(removals.len(), super::RUNTIME_SOURCES.len() + 1);
        assert!(removals.iter().any(|c| c.path == dir.join("crypto/Cargo.toml")));
        assert!(removals.iter().any(|c| c.path == dir.join("crypto/src/lib.rs")));
        let dirs = super::runtime_dirs(&dir);
        let position = |d: &str| dirs.iter().position(|p| *p == dir.join(d)).unwrap_or_else(|| panic!("{d}"));
        assert!(position("crypto/src") < position("crypto") && position("crypto") < dirs.len() - 1);

        std::fs::write(dir.join("crypto/src/lib.rs"), "// edited\n").unwrap();
        let err = super::plan_runtime_removal(&dir, &siblings).unwrap_err();
        assert!(
            matches!(&err, super::UnvendorError::Differs { first, more: 0 } if *first == dir.join("crypto/src/lib.rs"))
        );
        let fixed = super::plan_vendored_runtime(&dir, &siblings).expect("plan");
        assert_eq!(fixed.iter().map(|c| c.path.clone()).collect::<Vec<_>>(), [dir.join("crypto/src/lib.rs")]);
    }

    fn walk(dir: &Path, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let name = format!("{prefix}/{}", path.file_name().expect("name").to_string_lossy());
            if path.is_dir() {
                out.extend(walk(&path, &name));
            } else {
                out.push(name);
            }
        }
        out
    }
}
