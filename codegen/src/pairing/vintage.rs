//! Which SDK vintages the runtime crate can serve. The emitted module hands the generated crate
//! an `aws_smithy_runtime_api::client::http::SharedHttpClient` made by `smithy-default-tls`; that
//! is only the crate's own type when both resolve to the same aws-smithy-runtime-api, which
//! cargo does only within one semver-compatible range. `smithy-default-tls` needs
//! [`min_runtime_api`] or later within 1.x, so a crate that depends on a 0.x release (SDKs of
//! October 2023 and before: aws-sdk-* 0.x, aws-config 0.x) or pins an older 1.x cannot be served:
//! wired, it fails to compile (E0308, mismatched `SharedHttpClient` types).

use std::path::{Path, PathBuf};

use semver::{Version, VersionReq};

use crate::manifest::{ManifestFacts, RUNTIME_API};

/// The oldest aws-smithy-runtime-api the runtime crate works with: what the manifest of the
/// runtime this tool ships requires (runtime/Cargo.toml, which the tool embeds through the
/// `codegen/runtime/Cargo.toml.in` link), so the floor is declared in one place.
///
/// ```
/// assert!(*smithy_tls_codegen::pairing::vintage::min_runtime_api() >= semver::Version::new(1, 19, 0));
/// ```
pub fn min_runtime_api() -> &'static Version {
    static MIN: std::sync::LazyLock<Version> = std::sync::LazyLock::new(|| {
        let requirement = super::shipped::runtime_api_requirement()
            .expect("the shipped runtime manifest names its aws-smithy-runtime-api version");
        Version::parse(requirement).expect("the runtime requires aws-smithy-runtime-api as a full version (x.y.z)")
    });
    &MIN
}

/// Why the runtime crate cannot serve a crate: the aws-smithy-runtime-api the crate builds on
/// is missing, unreadable, or outside what the runtime accepts. Its `Display` is the reason the
/// crate is left alone, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unserved {
    /// The crate does not depend on aws-smithy-runtime-api at all.
    #[error(
        "it does not depend on {RUNTIME_API}, which the emitted module uses: not a smithy-rs client this tool can wire"
    )]
    NoRuntimeApi,
    /// Its requirement is not one cargo accepts.
    #[error("its {RUNTIME_API} requirement `{requirement}` is not a version requirement cargo accepts ({error})")]
    BadRequirement {
        /// The requirement as the manifest writes it.
        requirement: String,
        /// Why it does not parse (semver's message).
        error: String,
    },
    /// Its requirement admits no release the runtime can use.
    #[error(
        "it depends on {RUNTIME_API} `{requirement}`{era}; the smithy-tls runtime needs {RUNTIME_API} {min} or a \
         later 1.x, which that requirement excludes: upgrade the SDK (aws-sdk-* and aws-config 1.x) or leave this \
         crate out",
        era = if parsed.comparators.iter().all(|c| c.major == 0) {
            " (an SDK from before 1.x, October 2023 or older)"
        } else {
            ""
        }
    )]
    Excluded {
        /// The requirement as the manifest writes it (`=x.y.z` for a sibling crate's version).
        requirement: String,
        /// The same, parsed.
        parsed: VersionReq,
        /// The oldest aws-smithy-runtime-api the runtime works with ([`min_runtime_api`]).
        min: Version,
    },
    /// It names aws-smithy-runtime-api by path only, and no version can be read there.
    #[error(
        "its {RUNTIME_API} dependency names neither a version nor a sibling crate whose version can be read ({}): \
         add `version = \"..\"` to it",
        sibling.as_ref().map_or_else(|| "no path".to_owned(), |p| p.display().to_string())
    )]
    NoVersion {
        /// The sibling's manifest, when the dependency has a `path`.
        sibling: Option<PathBuf>,
    },
}

/// Whether a crate that depends on aws-smithy-runtime-api with `requirement` (as its manifest
/// writes it) can be served, and if not, why.
///
/// ```
/// use smithy_tls_codegen::pairing::vintage::{check_requirement, Unserved};
/// assert!(check_requirement("1.7.1").is_ok()); // ^1.7.1: cargo picks a 1.x the runtime accepts
/// assert!(matches!(check_requirement("0.57.1"), Err(Unserved::Excluded { .. })));
/// assert!(check_requirement("=1.1.0").is_err());
/// ```
///
/// # Errors
/// [`Unserved::BadRequirement`] or [`Unserved::Excluded`].
pub fn check_requirement(requirement: &str) -> Result<(), Unserved> {
    let parsed = VersionReq::parse(requirement.trim())
        .map_err(|e| Unserved::BadRequirement { requirement: requirement.to_owned(), error: e.to_string() })?;
    if serves(&parsed) {
        return Ok(());
    }
    Err(Unserved::Excluded { requirement: requirement.to_owned(), parsed, min: min_runtime_api().clone() })
}

/// Whether the runtime crate can serve the crate whose manifest facts are `facts` (in `dir`),
/// and if not, why. A path dependency (a sibling crate of the tree) is judged by the version of
/// the crate it points to, with or without a `version` beside the `path`: cargo builds the
/// sibling whenever it is there, so a requirement such as `^1.7` over a 1.18 sibling resolves
/// to 1.18. The requirement alone is judged only where no sibling version can be read.
///
/// # Errors
/// [`Unserved`]: no aws-smithy-runtime-api, no version to judge, or one the runtime cannot serve.
pub fn serves_crate(facts: &ManifestFacts, dir: &Path) -> Result<(), Unserved> {
    let Some(api) = &facts.runtime_api else {
        return Err(Unserved::NoRuntimeApi);
    };
    let sibling = api.path.as_deref().map(|path| dir.join(path).join("Cargo.toml"));
    let sibling_version = sibling.as_deref().and_then(|manifest| {
        let text = crate::read::read_text(manifest).ok()?;
        let doc: toml_edit::DocumentMut = text.parse().ok()?;
        crate::manifest::package_str(&doc, "version").map(str::to_owned)
    });
    match (sibling_version, &api.version) {
        (Some(version), _) => check_requirement(&format!("={version}")),
        (None, Some(requirement)) => check_requirement(requirement),
        (None, None) => Err(Unserved::NoVersion { sibling }),
    }
}

/// Whether some release in the runtime's range — [`min_runtime_api`] up to the next major — satisfies
/// `req` (cargo would then resolve both the crate and the runtime to it). Decided exactly, not by
/// sampling: over releases, each comparator matches one interval of versions, so the versions
/// `req` matches form one interval too, and the least of them in the runtime's range is the floor
/// or the lower bound of one comparator; every such bound is a comparator's own version or one of
/// its neighbours (next patch, next minor, next major). Pre-releases never count: the runtime's
/// requirement excludes them, so cargo cannot pick one for both.
fn serves(req: &VersionReq) -> bool {
    let min = min_runtime_api();
    let ceiling = Version::new(min.major + 1, 0, 0);
    candidates(req, min).filter(|v| v >= min && *v < ceiling).any(|v| req.matches(&v))
}

/// The releases at which the versions `req` matches can begin: the floor, and each comparator's
/// version (missing parts as 0, pre-release dropped) with its next patch, minor and major.
fn candidates<'a>(req: &'a VersionReq, min: &Version) -> impl Iterator<Item = Version> + 'a {
    std::iter::once(min.clone()).chain(req.comparators.iter().flat_map(|c| {
        let (major, minor, patch) = (c.major, c.minor.unwrap_or(0), c.patch.unwrap_or(0));
        [
            Version::new(major, minor, patch),
            Version::new(major, minor, patch + 1),
            Version::new(major, minor + 1, 0),
            Version::new(major + 1, 0, 0),
        ]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_the_runtime_can_and_cannot_serve() {
        for served in ["1.7.1", "1.7", "1", "^1.2", "~1.19", "1.*", ">=1.0, <2", "=1.19.0", ">=1.7.4"] {
            assert!(check_requirement(served).is_ok(), "{served}");
        }
        for refused in ["0.57.1", "0.55", "=1.1.0", ">=1.0, <1.5", "~1.8", "=1.9.0", "2.0", "<1.19.0"] {
            assert!(check_requirement(refused).is_err(), "{refused}");
        }
        let old = check_requirement("0.57.1").unwrap_err().to_string();
        assert!(old.contains("before 1.x") && old.contains("1.19.0") && old.contains("upgrade the SDK"), "{old}");
        let bad = check_requirement("not a version").unwrap_err().to_string();
        assert!(bad.contains("not a version requirement"), "{bad}");
    }

    #[test]
    fn exact_requirements_paths_and_ranges_at_any_patch_are_served() {
        // Each admits a served version only at a patch other than .0 or .999 of its minor.
        for served in ["=1.19.3", "=1.21.11", "=1.20.7", ">=1.19.5, <1.19.7", ">1.19.998, <1.20.0", "~1.19.4"] {
            assert!(check_requirement(served).is_ok(), "{served}");
        }
        for refused in ["=1.18.9", ">=1.18.5, <1.19.0", "=1.20.0-beta.1", ">=2.0.0-alpha, <2.0.0", "=2.0.0"] {
            assert!(check_requirement(refused).is_err(), "{refused}");
        }
    }

    /// The versions a brute-force search tries: every release of 0.0–0.3, 1.0–1.26 (patches up
    /// to 13) and 2.0–2.1, which holds every comparator below, its neighbours and the floor.
    fn grid() -> Vec<Version> {
        let mut out = Vec::new();
        for minor in 0..=3 {
            out.extend((0..=3).map(|patch| Version::new(0, minor, patch)));
        }
        for minor in 0..=26 {
            out.extend((0..=13).map(|patch| Version::new(1, minor, patch)));
        }
        out.extend([Version::new(2, 0, 0), Version::new(2, 1, 0)]);
        out
    }

    /// One comparator of every kind cargo accepts (exact, caret, tilde, bare, greater, less,
    /// wildcards) on versions around the floor, with and without minor and patch, and pre-releases.
    fn comparators() -> Vec<String> {
        let versions = [
            "1",
            "0",
            "2",
            "1.18",
            "1.19",
            "1.20",
            "1.18.9",
            "1.19.0",
            "1.19.3",
            "1.19.12",
            "1.20.7",
            "1.21.11",
            "0.57.1",
            "1.19.5-beta.1",
            "1.20.0-rc.1",
            "2.0.0-alpha",
        ];
        let mut out: Vec<String> = ["*", "1.*", "1.19.*", "1.20.*", "0.*", "1.19.x", "2.*"].map(str::to_owned).to_vec();
        for op in ["=", ">", ">=", "<", "<=", "~", "^", ""] {
            out.extend(versions.iter().map(|v| format!("{op}{v}")));
        }
        out
    }

    #[test]
    fn serves_agrees_with_a_brute_force_search_for_every_comparator_kind_and_pair() {
        let grid = grid();
        let min = min_runtime_api();
        let ceiling = Version::new(min.major + 1, 0, 0);
        let in_range: Vec<&Version> = grid.iter().filter(|v| *v >= min && **v < ceiling).collect();
        let comparators = comparators();
        let mut checked = 0;
        for (i, a) in comparators.iter().enumerate() {
            for b in comparators[i..].iter().map(Some).chain([None]) {
                let text = b.map_or_else(|| a.clone(), |b| format!("{a}, {b}"));
                let Ok(req) = VersionReq::parse(&text) else { continue };
                let expected = in_range.iter().any(|v| req.matches(v));
                assert_eq!(serves(&req), expected, "`{text}`");
                checked += 1;
            }
        }
        assert!(checked > 9_000, "only {checked} requirements parsed");
    }

    /// The verdict on a crate whose aws-smithy-runtime-api entry is `dependency` (an inline
    /// table's body), in a tree that holds the sibling `rust-runtime/aws-smithy-runtime-api` at
    /// `sibling` (none: no sibling).
    fn verdict(dependency: &str, sibling: Option<&str>) -> Result<(), Unserved> {
        let tree = tempfile::tempdir().unwrap();
        let dir = tree.path().join("sdk/alpha");
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(version) = sibling {
            let api = tree.path().join("sdk/rust-runtime/aws-smithy-runtime-api");
            std::fs::create_dir_all(&api).unwrap();
            let manifest = format!("[package]\nname = \"{RUNTIME_API}\"\nversion = \"{version}\"\n");
            std::fs::write(api.join("Cargo.toml"), manifest).unwrap();
        }
        let manifest = dir.join("Cargo.toml");
        let text = format!(
            "[package]\nname = \"alpha\"\nversion = \"1.0.0\"\n\n[dependencies]\n{RUNTIME_API} = {{ {dependency} }}\n"
        );
        let facts = crate::manifest::inspect_manifest(&manifest, &text).expect("a package manifest");
        serves_crate(&facts, &dir)
    }

    #[test]
    fn a_path_and_version_dependency_is_judged_by_the_sibling_cargo_builds() {
        let floor = min_runtime_api().to_string();
        let path = "path = \"../rust-runtime/aws-smithy-runtime-api\"";
        // `^1.7` admits the floor, but cargo builds the 1.18 sibling: refused, naming the sibling.
        match verdict(&format!("{path}, version = \"1.7\""), Some("1.18.9")) {
            Err(Unserved::Excluded { requirement, .. }) => assert_eq!(requirement, "=1.18.9"),
            other => panic!("an old sibling under `^1.7` must be refused: {other:?}"),
        }
        // The same requirement over a sibling at the floor is served.
        assert_eq!(verdict(&format!("{path}, version = \"1.7\""), Some(&floor)), Ok(()));
        // No sibling to read: the requirement decides, as it would for a registry dependency.
        assert_eq!(verdict(&format!("{path}, version = \"1.7\""), None), Ok(()));
        assert!(matches!(verdict(&format!("{path}, version = \"0.57\""), None), Err(Unserved::Excluded { .. })));
        assert!(matches!(verdict(path, None), Err(Unserved::NoVersion { sibling: Some(_) })));
        // Path only, and version only, as before.
        assert!(matches!(verdict(path, Some("1.18.9")), Err(Unserved::Excluded { .. })));
        assert_eq!(verdict(path, Some(&floor)), Ok(()));
        assert_eq!(verdict("version = \"1.7\"", Some("1.18.9")), Ok(()));
    }

    #[test]
    fn the_minimum_is_what_the_runtime_crate_requires() {
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/Cargo.toml");
        let text = std::fs::read_to_string(&manifest).expect("runtime/Cargo.toml");
        let doc: toml_edit::DocumentMut = text.parse().expect("parses");
        let version = doc["dependencies"][RUNTIME_API]["version"].as_str().expect("a version requirement");
        assert_eq!(version, min_runtime_api().to_string(), "the floor is read from the runtime's manifest");
    }
}
