//! File-tree helpers for tests and examples that work on copies of fixture trees.

use std::io;
use std::path::Path;

/// Copies the directory tree `from` to `to` (created as needed), leaving out entries whose
/// file name is in `skip`, at any depth. Directories are recursed into; everything else is
/// copied with [`std::fs::copy`] (a symbolic link to a file yields a copy of the file; a link to a
/// directory is not followed, so a link loop cannot recurse). Writable files keep their
/// modification time, so a cargo build of a fresh copy at the same path reuses what it built
/// before.
///
/// ```
/// let from = std::env::temp_dir().join(format!("copy-tree-doc-{}", std::process::id()));
/// std::fs::create_dir_all(from.join("src")).unwrap();
/// std::fs::write(from.join("src/lib.rs"), "").unwrap();
/// std::fs::create_dir_all(from.join("target")).unwrap();
/// let to = from.with_extension("copy");
/// smithy_tls_test_support::copy_tree(&from, &to, &["target"]).unwrap();
/// assert!(to.join("src/lib.rs").is_file());
/// assert!(!to.join("target").exists());
/// # std::fs::remove_dir_all(&from).unwrap(); std::fs::remove_dir_all(&to).unwrap();
/// ```
pub fn copy_tree(from: &Path, to: &Path, skip: &[&str]) -> io::Result<()> {
    let context = |what: &str, path: &Path| {
        let path = path.display().to_string();
        let what = what.to_owned();
        move |e: io::Error| io::Error::new(e.kind(), format!("{what} {path}: {e}"))
    };
    std::fs::create_dir_all(to).map_err(context("create", to))?;
    for entry in std::fs::read_dir(from).map_err(context("read", from))? {
        let entry = entry.map_err(context("read", from))?;
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let (source, dest) = (entry.path(), to.join(&name));
        if entry.file_type().map_err(context("inspect", &source))?.is_dir() {
            copy_tree(&source, &dest, skip)?;
        } else {
            std::fs::copy(&source, &dest).map_err(context("copy", &source))?;
            // Keeping the time only saves rebuilds: a read-only copy keeps the copy's time.
            let modified =
                std::fs::metadata(&source).and_then(|m| m.modified()).map_err(context("inspect", &source))?;
            if let Ok(file) = std::fs::File::options().write(true).open(&dest) {
                file.set_modified(modified).map_err(context("set the time of", &dest))?;
            }
        }
    }
    Ok(())
}

/// Every regular file under `dir` with its bytes, keyed by its path relative to `dir`; symbolic
/// links are neither followed nor read. For checking that a run wrote nothing, or exactly what
/// another run wrote.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("tree-files-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("src")).unwrap();
/// std::fs::write(dir.join("src/lib.rs"), "x").unwrap();
/// let files = smithy_tls_test_support::fs::tree_files(&dir);
/// assert_eq!(files.get(std::path::Path::new("src/lib.rs")).map(Vec::as_slice), Some(&b"x"[..]));
/// ```
///
/// # Panics
/// When the tree cannot be read (a test has nothing to check then).
pub fn tree_files(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let entry = entry.expect("directory entry");
            let kind = entry.file_type().expect("file type");
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(path.strip_prefix(dir).expect("inside the tree").to_path_buf(), bytes);
            }
        }
    }
    out
}
