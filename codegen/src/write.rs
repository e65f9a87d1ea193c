//! Writing plans, all or nothing across everything one invocation touches: every file is staged
//! beside its target first (a failure there changes nothing), then renamed into place (a file to
//! remove is renamed aside, and deleted once everything is in place); if a rename fails, the
//! files already replaced get their original bytes back, files that were new are removed and
//! removed files come back. Permissions are kept; unchanged files are never touched; read-only files and
//! symbolic links are refused before anything is written.
//!
//! Every file operation goes through [`FileOps`], so tests can make any one of them fail.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::plan::{FileChange, Plan};

/// Why writing failed. In every case but [`WriteError::Rollback`] no file was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A file cannot be written in place (read-only, or a symbolic link); checked first.
    #[error("{path}: {reason}; no file was changed")]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// Staging a file failed; nothing was renamed into place.
    #[error("{path}: cannot write: {source} (no file was changed)")]
    Stage {
        /// The file being staged.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Renaming a staged file into place failed; the files replaced before it were restored.
    #[error("{path}: cannot replace: {source}; the {restored} file(s) already replaced were restored, so no file was changed")]
    Commit {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
        /// How many files had been replaced, and were restored.
        restored: usize,
    },
    /// A rename failed and restoring the files already replaced failed too.
    #[error(
        "{path}: cannot replace: {source}; restoring the files already replaced failed for {}: restore \
         them from version control",
        unrestored.iter().map(|(p, e)| format!("{} ({e})", p.display())).collect::<Vec<_>>().join(", ")
    )]
    Rollback {
        /// The file whose rename failed.
        path: PathBuf,
        /// The cause.
        source: io::Error,
        /// Files left with the new content (or left behind when new), and why.
        unrestored: Vec<(PathBuf, io::Error)>,
    },
}

/// The file operations a write is made of.
pub trait FileOps: Sync {
    /// Writes `contents` to a new file beside `target` (with `target`'s permissions when it
    /// exists) and returns its path.
    fn stage(&self, target: &Path, contents: &str) -> io::Result<PathBuf>;
    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFiles;

/// A fresh staging path beside `path`: the process id and a counter make it unique, and it is
/// created with `create_new`, so two stagings never share a file.
fn staging_path(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.smithy-tls-{}-{n}.tmp", std::process::id()))
}

impl FileOps for RealFiles {
    fn stage(&self, target: &Path, contents: &str) -> io::Result<PathBuf> {
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        let staged = staging_path(target);
        let mut file = fs::OpenOptions::new().write(true).create_new(true).open(&staged)?;
        let result = (|| {
            file.write_all(contents.as_bytes())?;
            if let Ok(meta) = fs::metadata(target) {
                fs::set_permissions(&staged, meta.permissions())?;
            }
            // No fsync: the rename is what makes the change atomic for readers; the inputs are
            // regenerable, and an fsync per file costs seconds on a tree of 400 crates.
            file.flush()
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&staged);
            return Err(e);
        }
        Ok(staged)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// Refuses, before anything is written, a target that is a symbolic link (renaming over it
/// would replace the link, not the file it points to), or in a directory that is one (the write
/// would land outside the tree), or read-only (its owner said not to).
fn check_writable(change: &FileChange) -> Result<(), WriteError> {
    let refuse = |reason: &str| Err(WriteError::Refused { path: change.path.clone(), reason: reason.to_owned() });
    if change.path.parent().and_then(|dir| fs::symlink_metadata(dir).ok()).is_some_and(|m| m.file_type().is_symlink()) {
        return refuse(
            "is in a directory that is a symbolic link: smithy-tls does not write through links; replace the \
             link with the directory, or leave its crate out of the tree",
        );
    }
    let Ok(meta) = fs::symlink_metadata(&change.path) else { return Ok(()) };
    let reason = if meta.file_type().is_symlink() {
        "is a symbolic link: smithy-tls does not write through links; run it on the tree the link points \
         into, or replace the link with the file"
    } else if meta.permissions().readonly() {
        "is read-only: make it writable (or leave its crate out of the tree) and re-run"
    } else {
        return Ok(());
    };
    refuse(reason)
}

/// Writes every change in the plan and returns how many files were written. All or nothing.
pub fn write_plan(plan: &Plan) -> Result<usize, WriteError> {
    write_plans(&[plan], &RealFiles)
}

/// Writes every change of every plan (one invocation's trees) through `ops`, all or nothing,
/// and returns how many files were written.
pub fn write_plans(plans: &[&Plan], ops: &dyn FileOps) -> Result<usize, WriteError> {
    let changes: Vec<&FileChange> = plans.iter().flat_map(|p| p.changes()).collect();
    let mut seen = std::collections::HashSet::new();
    for change in &changes {
        if !seen.insert(&change.path) {
            return Err(WriteError::Refused {
                path: change.path.clone(),
                reason: "is planned twice (the same crate in two plans): pass each SDK tree once".to_owned(),
            });
        }
        check_writable(change)?;
    }
    // Stage on every core (file creation dominates on large trees), then rename in order.
    // A removal stages nothing: its file is renamed aside when committed, so it can come back.
    let results: Vec<io::Result<Option<PathBuf>>> = {
        use rayon::prelude::*;
        changes
            .par_iter()
            .map(|c| match &c.updated {
                Some(contents) => ops.stage(&c.path, contents).map(Some),
                None => Ok(None),
            })
            .collect()
    };
    let mut staged = Vec::with_capacity(changes.len());
    let mut failure = None;
    for (change, result) in changes.iter().zip(results) {
        match result {
            Ok(path) => staged.push(path),
            Err(source) if failure.is_none() => failure = Some(WriteError::Stage { path: change.path.clone(), source }),
            Err(_) => {}
        }
    }
    if let Some(failure) = failure {
        for path in staged.iter().flatten() {
            let _ = ops.remove(path);
        }
        return Err(failure);
    }
    // What each committed change left to undo: the removed file's parked copy, if any.
    let mut committed: Vec<(&FileChange, Option<PathBuf>)> = Vec::with_capacity(changes.len());
    for (done, (change, staged_path)) in changes.iter().zip(&staged).enumerate() {
        let result = match staged_path {
            Some(staged_path) => ops.rename(staged_path, &change.path).map(|()| None),
            None => {
                let parked = staging_path(&change.path);
                ops.rename(&change.path, &parked).map(|()| Some(parked))
            }
        };
        match result {
            Ok(parked) => committed.push((change, parked)),
            Err(source) => {
                for path in staged[done..].iter().flatten() {
                    let _ = ops.remove(path);
                }
                let unrestored = restore(&committed, ops);
                let path = change.path.clone();
                return Err(if unrestored.is_empty() {
                    WriteError::Commit { path, source, restored: done }
                } else {
                    WriteError::Rollback { path, source, unrestored }
                });
            }
        }
    }
    for parked in committed.iter().filter_map(|(_, parked)| parked.as_ref()) {
        // The removal has happened; a parked copy that cannot be deleted is only litter.
        let _ = ops.remove(parked);
    }
    Ok(changes.len())
}

/// Puts back the original bytes of files already replaced (newest first), removes files that
/// did not exist before and moves removed files back; returns the ones that could not be
/// restored.
fn restore(committed: &[(&FileChange, Option<PathBuf>)], ops: &dyn FileOps) -> Vec<(PathBuf, io::Error)> {
    let mut unrestored = Vec::new();
    for (change, parked) in committed.iter().rev() {
        let result = match (parked, &change.original) {
            (Some(parked), _) => ops.rename(parked, &change.path),
            (None, Some(original)) => ops.stage(&change.path, original).and_then(|staged| {
                ops.rename(&staged, &change.path).inspect_err(|_| {
                    let _ = ops.remove(&staged);
                })
            }),
            (None, None) => ops.remove(&change.path),
        };
        if let Err(e) = result {
            unrestored.push((change.path.clone(), e));
        }
    }
    unrestored
}

/// A unified diff of one change, with paths relative to `base` when possible.
pub fn unified_diff(change: &FileChange, base: &Path) -> String {
    let shown = change.path.strip_prefix(base).unwrap_or(&change.path).display().to_string();
    let original = change.original.as_deref().unwrap_or("");
    let old_header = if change.original.is_some() { format!("a/{shown}") } else { "/dev/null".to_owned() };
    let new_header = if change.updated.is_some() { format!("b/{shown}") } else { "/dev/null".to_owned() };
    let diff = similar::TextDiff::from_lines(original, change.updated.as_deref().unwrap_or(""));
    diff.unified_diff().context_radius(3).header(&old_header, &new_header).to_string()
}

/// How many lines `change` adds and removes (what `diff --stat` counts).
///
/// ```
/// use smithy_tls_codegen::plan::FileChange;
/// let change = FileChange {
///     path: "Cargo.toml".into(),
///     original: Some("a\nb\n".into()),
///     updated: Some("a\nc\nd\n".into()),
/// };
/// assert_eq!(smithy_tls_codegen::write::line_counts(&change), (2, 1));
/// ```
pub fn line_counts(change: &FileChange) -> (usize, usize) {
    let diff = similar::TextDiff::from_lines(
        change.original.as_deref().unwrap_or(""),
        change.updated.as_deref().unwrap_or(""),
    );
    diff.iter_all_changes().fold((0, 0), |(added, removed), c| match c.tag() {
        similar::ChangeTag::Insert => (added + 1, removed),
        similar::ChangeTag::Delete => (added, removed + 1),
        similar::ChangeTag::Equal => (added, removed),
    })
}
