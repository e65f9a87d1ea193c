//! Which SDK vintages the runtime crate can serve. The emitted module hands the generated crate
//! an `aws_smithy_runtime_api::client::http::SharedHttpClient` made by `smithy-default-tls`; that
//! is only the crate's own type when both resolve to the same aws-smithy-runtime-api, which
//! cargo does only within one semver-compatible range. `smithy-default-tls` needs
//! [`min_runtime_api`] or later within 1.x, so a crate that depends on a 0.x release (SDKs of
//! October 2023 and before: aws-sdk-* 0.x, aws-config 0.x) or pins an older 1.x cannot be served:
//! wired, it fails to compile (E0308, mismatched `SharedHttpClient` types).

use semver::{Version, VersionReq};

/// The oldest aws-smithy-runtime-api the runtime crate works with: what the manifest of the
/// runtime this tool ships requires (runtime/Cargo.toml, copied into the tool and kept equal by
/// a test), so the floor is declared in one place.
///
/// ```
/// assert!(*smithy_tls_codegen::vintage::min_runtime_api() >= semver::Version::new(1, 19, 0));
/// ```
pub fn min_runtime_api() -> &'static Version {
    static MIN: std::sync::LazyLock<Version> = std::sync::LazyLock::new(|| {
        let requirement = crate::vendor::runtime_api_requirement()
            .expect("the shipped runtime manifest names its aws-smithy-runtime-api version");
        Version::parse(requirement).expect("the runtime requires aws-smithy-runtime-api as a full version (x.y.z)")
    });
    &MIN
}

/// The package the check is about.
pub const RUNTIME_API: &str = "aws-smithy-runtime-api";

/// Whether a crate that depends on aws-smithy-runtime-api with `requirement` (as its manifest
/// writes it) can be served, and if not, why, in words for the user.
///
/// ```
/// use smithy_tls_codegen::vintage::check_requirement;
/// assert!(check_requirement("1.7.1").is_ok()); // ^1.7.1: cargo picks a 1.x the runtime accepts
/// assert!(check_requirement("0.57.1").unwrap_err().contains("0.57.1"));
/// assert!(check_requirement("=1.1.0").is_err());
/// ```
pub fn check_requirement(requirement: &str) -> Result<(), String> {
    let req = VersionReq::parse(requirement.trim()).map_err(|e| {
        format!("its {RUNTIME_API} requirement `{requirement}` is not a version requirement cargo accepts ({e})")
    })?;
    if serves(&req) {
        return Ok(());
    }
    let era = if req.comparators.iter().all(|c| c.major == 0) {
        " (an SDK from before 1.x, October 2023 or older)"
    } else {
        ""
    };
    let min = min_runtime_api();
    Err(format!(
        "it depends on {RUNTIME_API} `{requirement}`{era}; the smithy-tls runtime needs {RUNTIME_API} \
         {min} or a later 1.x, which that requirement excludes: upgrade the SDK (aws-sdk-* and \
         aws-config 1.x) or leave this crate out"
    ))
}

/// Whether some 1.x version at or after [`min_runtime_api`] satisfies `req` (cargo would then
/// resolve both the crate and the runtime to it). Checks the minimum and the start and a late
/// patch of every later minor release up to 1.999, which covers caret, tilde, exact, wildcard and
/// range requirements.
fn serves(req: &VersionReq) -> bool {
    let min = min_runtime_api();
    std::iter::once(min.clone())
        .chain((min.minor..1000).flat_map(|minor| [Version::new(1, minor, 0), Version::new(1, minor, 999)]))
        .filter(|v| v >= min)
        .any(|v| req.matches(&v))
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
        let old = check_requirement("0.57.1").unwrap_err();
        assert!(old.contains("before 1.x") && old.contains("1.19.0") && old.contains("upgrade the SDK"), "{old}");
        assert!(check_requirement("not a version").unwrap_err().contains("not a version requirement"));
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
