//! The builtin rustc targets a policy answers for: those that can host an SDK (every policy
//! must serve each exactly once), those that cannot and why, and the well-known ones.

use cfg_expr::targets::{TargetInfo, ALL_BUILTINS};

use crate::platforms::sdk_host;

/// The builtin targets that can host an SDK (std and sockets): the ones a policy must serve.
pub fn sdk_targets() -> impl Iterator<Item = &'static TargetInfo> {
    ALL_BUILTINS.iter().filter(|t| sdk_host(t).is_ok())
}

/// The builtin targets that cannot host an SDK, with why, sorted by triple.
pub fn non_hosts() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> =
        ALL_BUILTINS.iter().filter_map(|t| sdk_host(t).err().map(|why| (t.triple.as_str(), why))).collect();
    out.sort();
    out
}

/// Well-known targets: named in generated docs when a rule serves them, and the targets whose
/// dependency graphs the end-to-end tests check for every preset.
pub const NOTABLE_TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "x86_64-pc-windows-gnu",
    "aarch64-linux-android",
    "aarch64-apple-ios",
    "armv7-unknown-linux-gnueabihf",
    "riscv64gc-unknown-linux-gnu",
    "wasm32-unknown-unknown",
    "wasm32-wasip2",
];

/// How many builtin targets cfg-expr knows.
pub fn builtin_target_count() -> usize {
    ALL_BUILTINS.len()
}

/// How many builtin targets can host an SDK, and so are checked against every policy.
pub fn sdk_target_count() -> usize {
    sdk_targets().count()
}
