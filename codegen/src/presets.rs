//! The policy presets shipped in `codegen/presets/` (also reachable as `templates/presets/`),
//! embedded in the binary and packaged with the crate.

use crate::policy::PolicySource;

/// `(name, file text)` of every preset, in a stable order.
pub const PRESETS: &[(&str, &str)] = &[
    ("platform-default", include_str!("../presets/platform-default.toml")),
    ("rustls-everywhere", include_str!("../presets/rustls-everywhere.toml")),
    ("portable", include_str!("../presets/portable.toml")),
    ("fips", include_str!("../presets/fips.toml")),
    ("system-crypto", include_str!("../presets/system-crypto.toml")),
];

/// The preset used when no policy is given.
pub const DEFAULT_PRESET: &str = "platform-default";

/// A preset's source, with a path that says where it came from in diagnostics.
///
/// ```
/// assert!(smithy_tls_codegen::presets::preset("portable").is_some());
/// assert!(smithy_tls_codegen::presets::preset("nope").is_none());
/// ```
pub fn preset(name: &str) -> Option<PolicySource> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| PolicySource { path: format!("<preset:{n}>").into(), text: (*text).to_owned() })
}

/// Every preset's name.
pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|(n, _)| *n)
}
