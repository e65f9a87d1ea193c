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
    replicate(from, to, skip, Make::Copy)
}

/// Like [`copy_tree`], but each regular file of the new tree is a hard link to the original
/// (falling back to a copy where linking fails, as across file systems; symbolic links are
/// copied as [`copy_tree`] copies them). Making a tree of thousands of files this way takes
/// links instead of bytes, and the links keep the originals' modification times.
///
/// Only for a tree whose files are read, or replaced whole (written to a new file that is
/// then renamed over the old, as smithy-tls writes): a write *into* a linked file changes the
/// original too. A test that relies on this should check the original afterwards.
///
/// ```
/// let from = std::env::temp_dir().join(format!("link-tree-doc-{}", std::process::id()));
/// std::fs::create_dir_all(from.join("src")).unwrap();
/// std::fs::write(from.join("src/lib.rs"), "pub fn f() {}").unwrap();
/// let to = from.with_extension("linked");
/// smithy_tls_test_support::fs::link_tree(&from, &to, &[]).unwrap();
/// // Replacing the linked file (write a new one, rename it over) leaves the original alone.
/// std::fs::write(to.join("src/lib.rs.new"), "changed").unwrap();
/// std::fs::rename(to.join("src/lib.rs.new"), to.join("src/lib.rs")).unwrap();
/// assert_eq!(std::fs::read_to_string(from.join("src/lib.rs")).unwrap(), "pub fn f() {}");
/// # std::fs::remove_dir_all(&from).unwrap(); std::fs::remove_dir_all(&to).unwrap();
/// ```
pub fn link_tree(from: &Path, to: &Path, skip: &[&str]) -> io::Result<()> {
    replicate(from, to, skip, Make::HardLink)
}

/// How [`replicate`] makes each file of the new tree.
#[derive(Clone, Copy)]
enum Make {
    Copy,
    HardLink,
}

fn replicate(from: &Path, to: &Path, skip: &[&str], make: Make) -> io::Result<()> {
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
        let kind = entry.file_type().map_err(context("inspect", &source))?;
        if kind.is_dir() {
            replicate(&source, &dest, skip, make)?;
            continue;
        }
        if matches!(make, Make::HardLink) && kind.is_file() && std::fs::hard_link(&source, &dest).is_ok() {
            continue;
        }
        std::fs::copy(&source, &dest).map_err(context("copy", &source))?;
        // Keeping the time only saves rebuilds: a read-only copy keeps the copy's time.
        let modified = std::fs::metadata(&source).and_then(|m| m.modified()).map_err(context("inspect", &source))?;
        if let Ok(file) = std::fs::File::options().write(true).open(&dest) {
            file.set_modified(modified).map_err(context("set the time of", &dest))?;
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
/// # std::fs::remove_dir_all(&dir).unwrap();
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

/// The files under `dir` whose name ends with `.{extension}`, at any depth, sorted: the source
/// walk of the tests that read a crate's `.rs` files.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("files-with-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("src/a")).unwrap();
/// std::fs::write(dir.join("src/a/b.rs"), "").unwrap();
/// std::fs::write(dir.join("src/c.toml"), "").unwrap();
/// let found = smithy_tls_test_support::fs::files_with(&dir, "rs");
/// assert_eq!(found, vec![dir.join("src/a/b.rs")]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
///
/// # Panics
/// When the tree cannot be read (a test has nothing to check then).
pub fn files_with(dir: &Path, extension: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Writes each `(relative path, text)` of `files` under `dir` (creating directories as needed),
/// leaving a file whose text is already that untouched, so that it keeps its modification time
/// and cargo does not rebuild a crate made of these files.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("write-changed-doc-{}", std::process::id()));
/// smithy_tls_test_support::fs::write_changed(&dir, &[("src/main.rs", "fn main() {}")]).unwrap();
/// let time = std::fs::metadata(dir.join("src/main.rs")).unwrap().modified().unwrap();
/// smithy_tls_test_support::fs::write_changed(&dir, &[("src/main.rs", "fn main() {}")]).unwrap();
/// assert_eq!(std::fs::metadata(dir.join("src/main.rs")).unwrap().modified().unwrap(), time);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write_changed(dir: &Path, files: &[(&str, &str)]) -> io::Result<()> {
    for (relative, text) in files {
        let path = dir.join(relative);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(*text) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    Ok(())
}
