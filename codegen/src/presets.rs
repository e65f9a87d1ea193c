//! The policy presets shipped in `codegen/presets/` (also reachable as `templates/presets/`),
//! embedded in the binary and packaged with the crate.

use crate::model::Stack;
use crate::policy::{ParsedPolicy, PolicySource};

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

/// The stack `preset`'s first rule whose cfg matches `triple` gives it (the fallback's
/// elsewhere); `None` for an unknown preset or a triple rustc does not know. The presets are
/// parsed once.
///
/// ```
/// use smithy_tls_codegen::presets::stack_for;
/// let linux = stack_for("platform-default", "aarch64-unknown-linux-gnu").unwrap();
/// assert_eq!(linux.provider_name(), "s2n-tls");
/// assert!(stack_for("platform-default", "no-such-target").is_none());
/// ```
pub fn stack_for(preset: &str, triple: &str) -> Option<Stack> {
    static PARSED: std::sync::OnceLock<Vec<(&'static str, ParsedPolicy)>> = std::sync::OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        PRESETS
            .iter()
            .map(|&(name, _)| {
                let source = self::preset(name).expect("a preset of the list");
                (name, crate::policy::parse_policy(source).expect("every embedded preset parses"))
            })
            .collect()
    });
    let target = cfg_expr::targets::get_builtin_target_by_triple(triple)?;
    let (_, policy) = parsed.iter().find(|(name, _)| *name == preset)?;
    Some(policy.policy.rule_for(target).stack)
}
