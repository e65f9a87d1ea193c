//! The runtime crate's sources, shipped inside the generator (`codegen/runtime/`, a copy of
//! `runtime/` kept equal by a test), so `apply --vendor-runtime` can put the runtime the
//! generated code was made for where the policy's `[runtime] path` points, and every tree pairs
//! the two; `revert --vendor-runtime` takes it out again.

use std::path::{Path, PathBuf};

use crate::plan::FileChange;

/// `(path inside the crate, contents)` of every file of the runtime crate as shipped: its
/// manifest (without dev-dependencies), build script and sources.
pub const RUNTIME_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../runtime/Cargo.toml.in")),
    ("build.rs", include_str!("../runtime/build.rs")),
    // The runtime's own formatting settings, so formatting the tree it is placed in (cargo fmt,
    // rustfmt over every file) leaves it as shipped and `check --vendor-runtime` green.
    ("rustfmt.toml", include_str!("../runtime/rustfmt.toml")),
    ("src/client.rs", include_str!("../runtime/src/client.rs")),
    ("src/connect.rs", include_str!("../runtime/src/connect.rs")),
    ("src/dns.rs", include_str!("../runtime/src/dns.rs")),
    ("src/error.rs", include_str!("../runtime/src/error.rs")),
    ("src/lib.rs", include_str!("../runtime/src/lib.rs")),
    ("src/limits.rs", include_str!("../runtime/src/limits.rs")),
    ("src/provider.rs", include_str!("../runtime/src/provider.rs")),
    ("src/proxy.rs", include_str!("../runtime/src/proxy.rs")),
    ("src/roots.rs", include_str!("../runtime/src/roots.rs")),
    ("src/shared.rs", include_str!("../runtime/src/shared.rs")),
    ("src/tls/mod.rs", include_str!("../runtime/src/tls/mod.rs")),
    ("src/tls/names.rs", include_str!("../runtime/src/tls/names.rs")),
    ("src/tls/read_ahead.rs", include_str!("../runtime/src/tls/read_ahead.rs")),
    ("src/tls/transport.rs", include_str!("../runtime/src/tls/transport.rs")),
    ("src/tls/rustls.rs", include_str!("../runtime/src/tls/rustls.rs")),
    ("src/tls/s2n/chain.rs", include_str!("../runtime/src/tls/s2n/chain.rs")),
    ("src/tls/s2n/key_log.rs", include_str!("../runtime/src/tls/s2n/key_log.rs")),
    ("src/tls/s2n/mod.rs", include_str!("../runtime/src/tls/s2n/mod.rs")),
    ("src/tls/s2n/stream.rs", include_str!("../runtime/src/tls/s2n/stream.rs")),
    ("src/tls/s2n/tickets.rs", include_str!("../runtime/src/tls/s2n/tickets.rs")),
];

/// The runtime crate's files to write under `dir`, with their contents.
pub fn runtime_files(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    RUNTIME_FILES.iter().map(|(path, text)| (dir.join(path), *text)).collect()
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
pub fn plan_runtime_removal(dir: &Path) -> Result<Vec<FileChange>, UnvendorError> {
    let mut removals = Vec::new();
    let mut differing = Vec::new();
    for (path, text) in runtime_files(dir) {
        match crate::read::read_text(&path) {
            Ok(existing) if existing == text => {
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
    let mut dirs: Vec<PathBuf> = RUNTIME_FILES
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
        let text = RUNTIME_FILES.iter().find(|(path, _)| *path == "Cargo.toml").map_or("", |(_, text)| text);
        // Built into the tool from codegen/runtime/Cargo.toml.in, which a test parses.
        text.parse().expect("the shipped runtime manifest is valid TOML")
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
    shipped_manifest().get("dependencies")?.get(crate::vintage::RUNTIME_API)?.get("version")?.as_str()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    /// What `codegen/runtime/` must hold: `runtime/`'s build script and sources, and its
    /// manifest without `[dev-dependencies]` (as `Cargo.toml.in`: cargo package leaves nested
    /// manifests out).
    fn expected() -> BTreeMap<String, String> {
        let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime");
        let mut files = BTreeMap::new();
        let manifest = std::fs::read_to_string(runtime.join("Cargo.toml")).expect("runtime/Cargo.toml");
        let start = manifest.find("[dev-dependencies]").expect("the runtime has dev-dependencies");
        let end = manifest[start + 1..].find("\n[").map_or(manifest.len(), |i| start + 1 + i + 1);
        files.insert("Cargo.toml".to_owned(), format!("{}{}", &manifest[..start], &manifest[end..]));
        files.insert("build.rs".to_owned(), std::fs::read_to_string(runtime.join("build.rs")).expect("build.rs"));
        files.insert(
            "rustfmt.toml".to_owned(),
            std::fs::read_to_string(runtime.join("rustfmt.toml")).expect("rustfmt.toml"),
        );
        let mut stack = vec![runtime.join("src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("runtime/src") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(&runtime).expect("inside").to_string_lossy().into_owned();
                    files.insert(rel, std::fs::read_to_string(&path).expect("source"));
                }
            }
        }
        files
    }

    #[test]
    fn the_shipped_runtime_is_the_runtime() {
        let expected = expected();
        let shipped: BTreeMap<String, String> =
            super::RUNTIME_FILES.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect();
        if shipped != expected && std::env::var_os("SMITHY_TLS_SYNC_RUNTIME").is_some() {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
            let _ = std::fs::remove_dir_all(&dir);
            for (path, text) in &expected {
                let path = if path == "Cargo.toml" { dir.join("Cargo.toml.in") } else { dir.join(path) };
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(&path, text).expect("write");
            }
            panic!("codegen/runtime/ rewritten from runtime/; update the list in src/vendor.rs if files were added, and re-run");
        }
        let stale: std::collections::BTreeSet<&String> =
            expected.keys().chain(shipped.keys()).filter(|p| expected.get(*p) != shipped.get(*p)).collect();
        assert!(
            stale.is_empty(),
            "codegen/runtime/ is stale for {stale:?}: run `SMITHY_TLS_SYNC_RUNTIME=1 cargo test -p smithy-tls-codegen --lib vendor`"
        );
        assert_eq!(super::runtime_version(), Some("0.1.0"));
    }
}
