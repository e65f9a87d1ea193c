//! The toolchains the suite pins, each named in one place that `scripts/test` reads too: the
//! stable toolchain in `rust-toolchain.toml` (`channel`, which rustup also obeys inside the
//! repository), the dated nightly in the workspace manifest (`[workspace.metadata.smithy-tls]
//! nightly`), and the minimum Rust version, the workspace's `rust-version`. Tests name a
//! toolchain with these (`rustc +<name>`, `rustup run <name>`), never `stable` or `nightly`, so a
//! new release cannot change what CI runs without a commit. `SMITHY_TLS_STABLE` and
//! `SMITHY_TLS_NIGHTLY` replace the first two for a run against the newest toolchains
//! (scripts/test-newest), which reports rather than gates.

use std::path::{Path, PathBuf};

/// The repository root (this crate's parent directory).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("test-support/ has a parent").to_path_buf()
}

/// The quoted value of the first line `key = "value"` in `file` (relative to the repository
/// root); panics naming the file and key when there is none.
fn value(file: &str, key: &str) -> String {
    let path = repo_root().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter_map(|line| line.trim().strip_prefix(key)?.trim_start().strip_prefix('='))
        .find_map(|rest| rest.trim().strip_prefix('"')?.split('"').next().map(str::to_owned))
        .unwrap_or_else(|| panic!("{}: no `{key} = \"..\"` line", path.display()))
}

/// The stable toolchain the suite builds and lints with: `channel` in `rust-toolchain.toml`.
pub fn stable() -> String {
    overridden("SMITHY_TLS_STABLE").unwrap_or_else(|| value("rust-toolchain.toml", "channel"))
}

/// The dated nightly the suite uses (target specifications, lints on nightly), e.g.
/// `nightly-2026-05-20`: `nightly` in the workspace manifest's `[workspace.metadata.smithy-tls]`.
pub fn nightly() -> String {
    overridden("SMITHY_TLS_NIGHTLY").unwrap_or_else(|| value("Cargo.toml", "nightly"))
}

/// The toolchain named by `var` (set by scripts/test-newest), when it is set and not empty.
fn overridden(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|name| !name.trim().is_empty())
}

/// The minimum Rust version both published crates declare: the workspace's `rust-version`.
pub fn msrv() -> String {
    value("Cargo.toml", "rust-version")
}

#[cfg(test)]
mod tests {
    /// What the repository pins (not the overrides of a run against the newest toolchains).
    #[test]
    fn every_pin_is_a_concrete_toolchain() {
        let stable = super::value("rust-toolchain.toml", "channel");
        let nightly = super::value("Cargo.toml", "nightly");
        let numbered = |name: &str| name.split('.').count() == 3 && name.split('.').all(|p| p.parse::<u32>().is_ok());
        assert!(numbered(&stable), "{stable}");
        assert!(numbered(&super::msrv()), "{}", super::msrv());
        // The runtime declares its own (it is published alone); scripts/test checks the one pinned here.
        assert_eq!(super::value("runtime/Cargo.toml", "rust-version"), super::msrv(), "runtime/Cargo.toml");
        let date = nightly.strip_prefix("nightly-").unwrap_or_else(|| panic!("{nightly}: not nightly-YYYY-MM-DD"));
        assert!(date.len() == 10 && date.split('-').all(|p| p.parse::<u32>().is_ok()), "{nightly}");
    }
}
