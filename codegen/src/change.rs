//! [`FileChange`]: one file's planned content beside its current one, the unit every plan is
//! made of and every write, comparison and diff consumes.

use std::path::PathBuf;

/// One file the plan would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Its current content, `None` if it does not exist yet.
    pub original: Option<String>,
    /// Its planned content, `None` to remove it.
    pub updated: Option<String>,
}

/// Serialises changes as the paths of their files (the report shows paths, not contents).
pub(crate) fn serialize_paths<S: serde::Serializer>(changes: &[FileChange], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(changes.iter().map(|c| &c.path))
}

/// The change that gives `path` the content `updated`, or `None` when it already has it.
pub(crate) fn change(path: PathBuf, original: Option<String>, updated: String) -> Option<FileChange> {
    (original.as_deref() != Some(updated.as_str())).then_some(FileChange { path, original, updated: Some(updated) })
}
