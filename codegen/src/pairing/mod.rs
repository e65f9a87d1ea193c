//! Runtime pairing: which runtime crate the generated code is paired with, at which version,
//! where it sits in the tree, and whether it can serve a crate. Every answer is a typed result;
//! the CLI only turns the problems into diagnostics.
//!
//! - [`vintage`]: whether the runtime can serve a crate's aws-smithy-runtime-api ([`vintage::Unserved`]).
//! - [`shipped`]: the runtime shipped inside the tool, placed and taken out by `--vendor-runtime`.
//! - here: the runtime crate the policy's `[runtime]` names, checked ([`RuntimeMismatch`]) or
//!   planned ([`pair`], [`unpair`]).

pub mod shipped;
pub mod vintage;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::change::FileChange;
use crate::diag::Diagnostic;
use crate::manifest::package_str;
use crate::model::RuntimeDependency;

/// Whose manifest a [`RuntimeMismatch`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeSite {
    /// The crate at the policy's `[runtime] path`, by its manifest.
    Manifest(PathBuf),
    /// The runtime this smithy-tls ships (what `--vendor-runtime` writes).
    Shipped,
}

impl std::fmt::Display for RuntimeSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuntimeSite::Manifest(path) => write!(f, "{}", path.display()),
            RuntimeSite::Shipped => f.write_str("the runtime this smithy-tls ships"),
        }
    }
}

/// Why a runtime crate cannot pair with the generated code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeMismatch {
    /// No manifest can be read where the policy points.
    #[error("{}: missing (the policy's `[runtime] path` points there)", .manifest.display())]
    Missing {
        /// The manifest looked for.
        manifest: PathBuf,
    },
    /// The manifest there does not parse.
    #[error("{}: not valid TOML", .manifest.display())]
    NotToml {
        /// The manifest.
        manifest: PathBuf,
    },
    /// It is another package.
    #[error("{site}: package `{}`, where the policy names `{expected}`", .found.as_deref().unwrap_or("?"))]
    OtherPackage {
        /// Whose manifest.
        site: RuntimeSite,
        /// The package name found, if any.
        found: Option<String>,
        /// The policy's package.
        expected: String,
    },
    /// Its version is one the policy's requirement excludes.
    #[error("{site}: version `{found}`, which the policy's requirement `{requirement}` excludes")]
    VersionExcluded {
        /// Whose manifest.
        site: RuntimeSite,
        /// The version found (empty when there is none).
        found: String,
        /// The policy's requirement.
        requirement: String,
    },
}

/// Whether the runtime crate in `dir` is the policy's `runtime` package at a version its
/// requirement allows.
///
/// # Errors
/// [`RuntimeMismatch`]: missing, not TOML, another package or an excluded version.
pub fn check_runtime_crate(dir: &Path, runtime: &RuntimeDependency) -> Result<(), RuntimeMismatch> {
    let manifest = dir.join("Cargo.toml");
    let Ok(text) = crate::read::read_text(&manifest) else {
        return Err(RuntimeMismatch::Missing { manifest });
    };
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return Err(RuntimeMismatch::NotToml { manifest });
    };
    check_manifest(RuntimeSite::Manifest(manifest), &doc, runtime)
}

/// Whether the runtime this smithy-tls ships can be the policy's `runtime`.
///
/// # Errors
/// [`RuntimeMismatch`]: the policy names another package, or a requirement the shipped version
/// does not meet.
pub fn check_shipped_runtime(runtime: &RuntimeDependency) -> Result<(), RuntimeMismatch> {
    check_manifest(RuntimeSite::Shipped, shipped::shipped_manifest(), runtime)
}

fn check_manifest(
    site: RuntimeSite,
    doc: &toml_edit::DocumentMut,
    runtime: &RuntimeDependency,
) -> Result<(), RuntimeMismatch> {
    let name = package_str(doc, "name");
    if name != Some(runtime.package.as_str()) {
        return Err(RuntimeMismatch::OtherPackage {
            site,
            found: name.map(str::to_owned),
            expected: runtime.package.clone(),
        });
    }
    let version = package_str(doc, "version").unwrap_or("");
    let matches = semver::VersionReq::parse(&runtime.version)
        .ok()
        .zip(semver::Version::parse(version).ok())
        .is_some_and(|(req, version)| req.matches(&version));
    match matches {
        true => Ok(()),
        false => Err(RuntimeMismatch::VersionExcluded {
            site,
            found: version.to_owned(),
            requirement: runtime.version.clone(),
        }),
    }
}

/// Why a tree cannot be paired with its runtime crate; nothing is written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PairingError {
    /// `--vendor-runtime` with a policy whose `[runtime]` has no `path`.
    #[error("--vendor-runtime: the policy's [runtime] has no `path` to write the runtime crate to")]
    NoPath,
    /// The shipped runtime is not the policy's (`--vendor-runtime`).
    #[error("{problem}")]
    ShippedMismatch {
        /// Where it would be placed.
        dir: PathBuf,
        /// Why it does not fit.
        problem: RuntimeMismatch,
    },
    /// The tree's own copies of the runtime's dependencies do not fit it (`--vendor-runtime`).
    #[error("{problem}")]
    Siblings {
        /// Where it would be placed.
        dir: PathBuf,
        /// Why.
        problem: shipped::SiblingError,
    },
    /// A file where the runtime goes cannot be read (`--vendor-runtime`).
    #[error(transparent)]
    Read(#[from] shipped::ReadError),
    /// The runtime crate at the policy's `path` is not usable (without `--vendor-runtime`).
    #[error("{problem}")]
    Unusable {
        /// Its manifest.
        manifest: PathBuf,
        /// Why.
        problem: RuntimeMismatch,
    },
}

impl PairingError {
    /// The error as a diagnostic (R001 in docs/DIAGNOSTICS.md) with the manifest or directory it
    /// is about; `None` for a policy without a `path` and a file that cannot be read, which say
    /// all there is in their message.
    pub fn diagnostic(&self) -> Option<Diagnostic> {
        let (path, message, help) = match self {
            PairingError::NoPath | PairingError::Read(_) => return None,
            PairingError::ShippedMismatch { dir, problem } => (
                dir,
                format!("--vendor-runtime cannot serve this policy: {problem}"),
                "write the policy's [runtime] as `package = \"smithy-default-tls\"` with a `version` the shipped \
                 runtime meets, or place the runtime crate yourself and run without --vendor-runtime",
            ),
            PairingError::Siblings { dir, problem } => (
                dir,
                format!("--vendor-runtime cannot build against the tree's own runtime crates: {problem}"),
                "the placed runtime crate depends by path on the copies of aws-smithy-runtime-api and its companions \
                 that the tree's crates name by path, so both use one copy",
            ),
            PairingError::Unusable { manifest, problem } => (
                manifest,
                format!("the runtime crate the generated code needs is not usable: {problem}"),
                "pass --vendor-runtime to write the runtime crate this smithy-tls ships there, or point the policy's \
                 [runtime] `path` at it",
            ),
        };
        Some(Diagnostic::in_file("R001", message, path, None).with_help(help))
    }
}

/// Pairs a tree rooted at `root`, whose wired crates name their path dependencies as
/// `wired` (package → directory), with the policy's `runtime`: with `vendor`, the changes that
/// place the shipped runtime at its `path`; without, a check that the crate there fits (no
/// change). Without a `path` the registry serves the runtime: nothing to check.
///
/// # Errors
/// [`PairingError`]: what keeps the tree from building against the runtime.
pub fn pair<'a>(
    runtime: &RuntimeDependency,
    root: &Path,
    wired: impl IntoIterator<Item = &'a BTreeMap<String, PathBuf>>,
    vendor: bool,
) -> Result<Vec<FileChange>, PairingError> {
    let Some(path) = &runtime.path else {
        return if vendor { Err(PairingError::NoPath) } else { Ok(Vec::new()) };
    };
    let dir = root.join(path);
    if !vendor {
        return match check_runtime_crate(&dir, runtime) {
            Ok(()) => Ok(Vec::new()),
            Err(problem) => Err(PairingError::Unusable { manifest: dir.join("Cargo.toml"), problem }),
        };
    }
    if let Err(problem) = check_shipped_runtime(runtime) {
        return Err(PairingError::ShippedMismatch { dir, problem });
    }
    let siblings = match shipped::sibling_paths(&dir, wired) {
        Ok(siblings) => siblings,
        Err(problem) => return Err(PairingError::Siblings { dir, problem }),
    };
    Ok(shipped::plan_vendored_runtime(&dir, &siblings)?)
}

/// Why `revert --vendor-runtime` cannot take the runtime crate out; nothing is written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnpairError {
    /// The policy's `[runtime]` has no `path`.
    #[error("--vendor-runtime: the policy's [runtime] has no `path` to remove the runtime crate from")]
    NoPath,
    /// The crate there is not the runtime this smithy-tls places (R002), or cannot be read.
    #[error("{error}")]
    Unvendor {
        /// The runtime's directory.
        dir: PathBuf,
        /// Why.
        error: shipped::UnvendorError,
    },
}

impl UnpairError {
    /// The error as a diagnostic with the file it is about: R002 (docs/DIAGNOSTICS.md) for a
    /// runtime crate that is not as this smithy-tls ships it, or a file that cannot be read;
    /// `None` for a policy without a `path`, which says all there is in its message.
    pub fn diagnostic(&self) -> Option<Diagnostic> {
        let UnpairError::Unvendor { error, .. } = self else { return None };
        Some(match error {
            shipped::UnvendorError::Differs { first, .. } => {
                Diagnostic::in_file("R002", error.to_string(), first, None).with_help(
                    "revert --vendor-runtime removes the runtime only as this smithy-tls writes it: run \
                     `smithy-tls apply --vendor-runtime` first to put it back as shipped, or run revert without \
                     --vendor-runtime and remove the directory yourself",
                )
            }
            shipped::UnvendorError::Io { path, .. } => crate::diag::unreadable(path, error.to_string()),
        })
    }
}

/// The changes that take out the runtime crate `apply --vendor-runtime` placed at the policy's
/// `path` under `root` (its manifest as apply wrote it, naming the tree's copies of its
/// dependencies from `wired`, if any): see [`shipped::plan_runtime_removal`].
///
/// # Errors
/// [`UnpairError`]: no `path`, or not the crate this smithy-tls placed there.
pub fn unpair<'a>(
    runtime: &RuntimeDependency,
    root: &Path,
    wired: impl IntoIterator<Item = &'a BTreeMap<String, PathBuf>>,
) -> Result<Vec<FileChange>, UnpairError> {
    let Some(path) = &runtime.path else {
        return Err(UnpairError::NoPath);
    };
    let dir = root.join(path);
    let siblings = shipped::sibling_paths(&dir, wired).unwrap_or_default();
    shipped::plan_runtime_removal(&dir, &siblings).map_err(|error| UnpairError::Unvendor { dir, error })
}

/// The path from `rel_dir` (relative to a root) to `target` (also relative to that root), with
/// `/` separators: where a crate finds the runtime the policy's `path` names.
///
/// ```
/// use std::path::Path;
/// use smithy_tls_codegen::pairing::relative_to_root;
/// assert_eq!(relative_to_root(Path::new("sdk/sts"), "smithy-default-tls"), "../../smithy-default-tls");
/// assert_eq!(relative_to_root(Path::new("."), "rt"), "rt");
/// ```
pub fn relative_to_root(rel_dir: &Path, target: &str) -> String {
    let depth = rel_dir.components().filter(|c| matches!(c, std::path::Component::Normal(_))).count();
    let mut out = "../".repeat(depth);
    out.push_str(target);
    out
}
