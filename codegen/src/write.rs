//! Writing a plan: every file staged beside its target first, then renamed into place, so a
//! failure while staging leaves every file as it was. Permissions are kept; unchanged files are
//! never touched.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::plan::{FileChange, Plan};

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Staging a file failed; nothing was renamed into place.
    #[error("{path}: cannot write: {source} (no file was changed)")]
    Stage {
        /// The file being staged.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Renaming a staged file into place failed after others had been renamed.
    #[error("{path}: cannot replace: {source} ({done} of {total} files were already written; re-run to finish)")]
    Commit {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
        /// How many files were in place already.
        done: usize,
        /// How many were to be written.
        total: usize,
    },
}

fn staging_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.smithy-tls-{}.tmp", std::process::id()))
}

fn stage(change: &FileChange) -> Result<PathBuf, std::io::Error> {
    if let Some(parent) = change.path.parent() {
        fs::create_dir_all(parent)?;
    }
    let staged = staging_path(&change.path);
    let mut file = fs::File::create(&staged)?;
    let result = (|| {
        file.write_all(change.updated.as_bytes())?;
        if let Ok(meta) = fs::metadata(&change.path) {
            fs::set_permissions(&staged, meta.permissions())?;
        }
        // No fsync: the rename below is what makes the change atomic for readers; the inputs
        // are regenerable, and an fsync per file costs seconds on a tree of 400 crates.
        file.flush()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&staged);
        return Err(e);
    }
    Ok(staged)
}

/// Writes every change in the plan and returns how many files were written.
pub fn write_plan(plan: &Plan) -> Result<usize, WriteError> {
    let changes: Vec<&FileChange> = plan.changes().collect();
    // Stage on every core (file creation dominates on large trees), then rename in order.
    let results: Vec<Result<PathBuf, std::io::Error>> = crate::parallel::map_in_order(&changes, |c| stage(c));
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
        for path in &staged {
            let _ = fs::remove_file(path);
        }
        return Err(failure);
    }
    let total = changes.len();
    for (done, (change, staged_path)) in changes.iter().zip(&staged).enumerate() {
        if let Err(source) = fs::rename(staged_path, &change.path) {
            for path in &staged[done..] {
                let _ = fs::remove_file(path);
            }
            return Err(WriteError::Commit { path: change.path.clone(), source, done, total });
        }
    }
    Ok(total)
}

/// A unified diff of one change, with paths relative to `base` when possible.
pub fn unified_diff(change: &FileChange, base: &Path, color: bool) -> String {
    let shown = change.path.strip_prefix(base).unwrap_or(&change.path).display().to_string();
    let original = change.original.as_deref().unwrap_or("");
    let old_header = if change.original.is_some() { format!("a/{shown}") } else { "/dev/null".to_owned() };
    let diff = similar::TextDiff::from_lines(original, change.updated.as_str());
    let text = diff.unified_diff().context_radius(3).header(&old_header, &format!("b/{shown}")).to_string();
    if !color {
        return text;
    }
    text.lines()
        .map(|line| {
            let code = if line.starts_with("+++") || line.starts_with("---") {
                "1"
            } else if line.starts_with('+') {
                "32"
            } else if line.starts_with('-') {
                "31"
            } else if line.starts_with("@@") {
                "36"
            } else {
                return format!("{line}\n");
            };
            format!("\x1b[{code}m{line}\x1b[0m\n")
        })
        .collect()
}
