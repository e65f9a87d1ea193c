//! The values builtin rustc targets give each target key, and the nearest of them to a value no
//! builtin target has (a misspelling, another tool's name for a platform).
//!
//! The list is cfg-expr's builtin target list, the one every policy is proved against; it can be
//! ahead of the installed rustc (a target renamed in a release not out yet), which is why the
//! emitted module allows `unexpected_cfgs` (see `crate::emit`).

use std::collections::BTreeSet;

use cfg_expr::targets::{Endian, TargetInfo, ALL_BUILTINS};

use crate::cfg::TargetKey;

/// Other names people write for a platform, and the value rustc uses. Checked before the
/// edit distance, which cannot find `darwin` → `macos`.
const ALIASES: &[(TargetKey, &str, &str)] = &[
    (TargetKey::Os, "darwin", "macos"),
    (TargetKey::Os, "osx", "macos"),
    (TargetKey::Os, "macosx", "macos"),
    (TargetKey::Os, "mac", "macos"),
    (TargetKey::Os, "iphoneos", "ios"),
    (TargetKey::Os, "win32", "windows"),
    (TargetKey::Os, "win64", "windows"),
    (TargetKey::Os, "win", "windows"),
    (TargetKey::Arch, "amd64", "x86_64"),
    (TargetKey::Arch, "x64", "x86_64"),
    (TargetKey::Arch, "arm64", "aarch64"),
    (TargetKey::Arch, "i386", "x86"),
    (TargetKey::Arch, "i586", "x86"),
    (TargetKey::Arch, "i686", "x86"),
    (TargetKey::Env, "glibc", "gnu"),
];

/// The value of `key` for `target`, spelled as a cfg predicate that matches it would spell it:
/// targets without an OS are `target_os = "none"`, without an environment or ABI `""`, without
/// a vendor `"unknown"` (how rustc, and so cfg-expr's matching, treats them).
fn values_of(key: TargetKey, target: &'static TargetInfo) -> Vec<&'static str> {
    match key {
        TargetKey::Os => vec![target.os.as_ref().map_or("none", |o| o.as_str())],
        TargetKey::Family => target.families.iter().map(|f| f.as_str()).collect(),
        TargetKey::Env => vec![target.env.as_ref().map_or("", |e| e.as_str())],
        TargetKey::Arch => vec![target.arch.as_str()],
        TargetKey::Vendor => vec![target.vendor.as_ref().map_or("unknown", |v| v.as_str())],
        TargetKey::PointerWidth => vec![match target.pointer_width {
            16 => "16",
            32 => "32",
            64 => "64",
            _ => "",
        }],
        TargetKey::Endian => vec![if target.endian == Endian::big { "big" } else { "little" }],
        TargetKey::Abi => vec![target.abi.as_ref().map_or("", |a| a.as_str())],
    }
}

/// Every value some builtin target has for `key`, sorted.
///
/// ```
/// use smithy_tls_codegen::cfg::TargetKey;
/// use smithy_tls_codegen::cfg_values::known_values;
/// let os = known_values(TargetKey::Os);
/// assert!(os.contains("linux") && os.contains("nto") && os.contains("none"));
/// assert!(!os.contains("darwin"));
/// ```
pub fn known_values(key: TargetKey) -> BTreeSet<&'static str> {
    ALL_BUILTINS.iter().flat_map(|t| values_of(key, t)).filter(|v| !v.is_empty() || key_allows_empty(key)).collect()
}

/// Whether rustc sets the key to `""` on some targets (an environment or ABI it does not name).
fn key_allows_empty(key: TargetKey) -> bool {
    matches!(key, TargetKey::Env | TargetKey::Abi)
}

/// Whether some builtin target has `value` for `key`.
pub fn is_known(key: TargetKey, value: &str) -> bool {
    known_values(key).contains(value)
}

/// The known value of `key` a user most likely meant by `value`, which no builtin target has:
/// another name for it (`darwin` → `macos`), the same name in other case, or the closest by edit
/// distance when it is close enough (at most a third of the value's characters, one at least).
///
/// ```
/// use smithy_tls_codegen::cfg::TargetKey;
/// use smithy_tls_codegen::cfg_values::nearest_known;
/// assert_eq!(nearest_known(TargetKey::Os, "darwin"), Some("macos"));
/// assert_eq!(nearest_known(TargetKey::Os, "andriod"), Some("android"));
/// assert_eq!(nearest_known(TargetKey::Arch, "arm64"), Some("aarch64"));
/// assert_eq!(nearest_known(TargetKey::Os, "plan9"), None);
/// ```
pub fn nearest_known(key: TargetKey, value: &str) -> Option<&'static str> {
    let known = known_values(key);
    let lower = value.to_ascii_lowercase();
    if let Some((_, _, alias)) = ALIASES.iter().find(|(k, from, _)| *k == key && *from == lower) {
        return known.contains(alias).then_some(*alias);
    }
    let limit = (value.chars().count() / 3).max(1);
    // Ties go to the first value in sorted order, so the suggestion is deterministic.
    known
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| (strsim::osa_distance(&lower, v), *v))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;

    /// The values listed are exactly those a predicate matches some builtin target with: the
    /// check and the coverage proof cannot disagree about a value.
    #[test]
    fn every_listed_value_matches_the_targets_it_was_read_from() {
        for key in TargetKey::ALL {
            for target in ALL_BUILTINS {
                for value in values_of(key, target) {
                    let cfg = Cfg::Key(key, value.to_owned());
                    assert!(cfg.matches(target), "{key:?} = {value:?} does not match {}", target.triple.as_str());
                }
            }
            assert!(!known_values(key).is_empty(), "{key:?}");
        }
    }

    #[test]
    fn known_values_include_the_implicit_ones() {
        assert!(is_known(TargetKey::Os, "none"));
        assert!(is_known(TargetKey::Env, ""));
        assert!(is_known(TargetKey::Vendor, "unknown"));
        assert!(is_known(TargetKey::PointerWidth, "16"));
        assert!(!is_known(TargetKey::PointerWidth, "128"));
        assert!(!is_known(TargetKey::Os, ""));
        assert!(is_known(TargetKey::Family, "wasm"));
    }

    #[test]
    fn suggestions_prefer_aliases_then_case_then_distance() {
        assert_eq!(nearest_known(TargetKey::Os, "Linux"), Some("linux"));
        assert_eq!(nearest_known(TargetKey::Os, "osx"), Some("macos"));
        assert_eq!(nearest_known(TargetKey::Arch, "x86-64"), Some("x86_64"));
        assert_eq!(nearest_known(TargetKey::Env, "glibc"), Some("gnu"));
        assert_eq!(nearest_known(TargetKey::Env, "mus"), Some("musl"));
        assert_eq!(nearest_known(TargetKey::Vendor, "aple"), Some("apple"));
        // Too far from anything: no guess.
        assert_eq!(nearest_known(TargetKey::Os, "beos"), None);
    }
}
