//! Cargo.toml edits: give every target platform the TLS stack the policy picks for it.
//!
//! A generated crate's manifest gets, for every compiled rule with a provider, a
//! `[target.'cfg(<predicate>)'.dependencies]` table holding an optional dependency on the
//! runtime crate with that rule's provider and roots features. Its `default-https-client`
//! feature is rewired from `aws-smithy-runtime/default-https-client` to `dep:<runtime crate>`,
//! and features that reached for the runtime's default client now go through
//! `default-https-client`.
//!
//! Edits go through [`toml_edit`], so everything the edit does not touch keeps its exact bytes:
//! comments, key order, quoting, table styles and whitespace. Edits are idempotent. The tool
//! records what it changed in `[package.metadata.smithy-tls]` (`marker`), so editing an already
//! edited manifest with another policy, or reverting it, first undoes exactly its own edits.

mod array_layout;
mod descend;
mod features;
mod marker;
mod source;
mod target_tables;
mod transfer_manager;

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table};

use self::features::{edit_features, undo_features, value_text};
use self::marker::FeatureRecord;
pub(crate) use self::marker::Marker;
use self::source::Source;
use self::target_tables::{edit_target_tables, owned_packages, remove_runtime_entries, runtime_entry_tables};
pub use self::transfer_manager::edit_transfer_manager_manifest;
use crate::model::{CompiledPolicy, LegacyRustls};

/// The package generated crates depend on for their orchestrator.
const SMITHY_RUNTIME: &str = "aws-smithy-runtime";

/// The package whose `SharedHttpClient` the emitted module hands the generated crate: the one
/// the runtime crate and the crate it serves must share (see [`crate::pairing::vintage`]).
pub const RUNTIME_API: &str = "aws-smithy-runtime-api";

/// What to write for the runtime crate dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeDepSpec<'a> {
    /// The runtime crate's package name (normally `smithy-default-tls`); also the dependency key.
    pub package: &'a str,
    /// The version requirement to write.
    pub version: &'a str,
    /// A path to the runtime crate, already relative to the edited crate's directory and written
    /// with forward slashes; `None` to depend on the registry only.
    pub path: Option<&'a str>,
}

/// Everything [`edit_manifest`] needs to know about the policy being applied.
#[derive(Debug, Clone, Copy)]
pub struct ManifestEdit<'a> {
    /// The compiled policy: one target table per rule whose provider is not
    /// [`Stack::None`](crate::model::Stack::None).
    pub compiled: &'a CompiledPolicy,
    /// How to depend on the runtime crate.
    pub runtime: RuntimeDepSpec<'a>,
    /// What to do with a `rustls` feature, if the crate has one.
    pub legacy_rustls: LegacyRustls,
    /// Whether the aws-config loader hook made `load(self)` take `mut self` (recorded in the
    /// marker so `revert` can take it back).
    pub loader_made_mut: bool,
}

/// What [`inspect_manifest`] learns about a crate without changing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFacts {
    /// `package.name`.
    pub package_name: String,
    /// The key under which `aws-smithy-runtime` is depended on in `[dependencies]` (handles
    /// `package = "aws-smithy-runtime"` renames), if any.
    pub smithy_runtime_key: Option<String>,
    /// How `[dependencies]` asks for aws-smithy-runtime-api, if it does.
    pub runtime_api: Option<RuntimeApiDependency>,
    /// Whether the manifest has a `[package.metadata.smithy]` table (what smithy-rs writes into
    /// every generated crate).
    pub smithy_metadata: bool,
    /// Whether `[dependencies]` names `aws-smithy-client` (by key, or renamed with `package`):
    /// the client crate of smithy-rs releases before the orchestrator (2023).
    pub legacy_smithy_client: bool,
    /// Package name → `path` of every `[dependencies]` entry written with one (sibling crates of
    /// an SDK repository), as the manifest writes it.
    pub path_dependencies: std::collections::BTreeMap<String, String>,
}

/// A crate's dependency on aws-smithy-runtime-api, as its manifest writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeApiDependency {
    /// The version requirement, when written.
    pub version: Option<String>,
    /// The path, for a sibling crate in the same tree.
    pub path: Option<String>,
}

/// Why a manifest could not be inspected or edited.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The file is not valid TOML.
    #[error(
        "{}:{line}:{column}: invalid TOML: {message}; fix the syntax error (`cargo metadata` \
         reports it too) and run again",
        .path.display()
    )]
    Parse {
        /// The manifest's path.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column (in characters) of the error.
        column: usize,
        /// The parser's description of the problem.
        message: String,
    },
    /// The file has no `[package]` table (a virtual workspace manifest, for instance).
    #[error(
        "{}: not a package manifest (there is no [package] table); pass the Cargo.toml of a \
         generated crate, not a workspace root",
        .path.display()
    )]
    NotAPackage {
        /// The manifest's path.
        path: PathBuf,
    },
    /// The file is valid TOML but something has a shape the tool cannot edit.
    #[error("{}{}: {what}; {help}", .path.display(), line_suffix(.line))]
    UnexpectedShape {
        /// The manifest's path.
        path: PathBuf,
        /// 1-based line of the offending item, when known.
        line: Option<usize>,
        /// What is wrong.
        what: String,
        /// What to do about it.
        help: String,
    },
    /// The edited text no longer parses. This is a bug in the tool; nothing was written.
    #[error(
        "{}: internal error: the edited manifest would not parse ({message}); the file was left \
         as it is, please report this together with the file",
        .path.display()
    )]
    InvalidOutput {
        /// The manifest's path.
        path: PathBuf,
        /// The parser's complaint about the edited text.
        message: String,
    },
}

impl ManifestError {
    /// The error as a diagnostic: M001–M004 (docs/DIAGNOSTICS.md), with its place when it has one.
    pub fn diagnostic(&self) -> crate::diag::Diagnostic {
        use crate::diag::{place_in_file, Diagnostic};
        let message = self.to_string();
        match self {
            ManifestError::Parse { path, line, column, .. } => {
                Diagnostic::in_file("M001", message, path, place_in_file(path, *line, *column))
            }
            ManifestError::NotAPackage { path } => Diagnostic::in_file("M002", message, path, None),
            ManifestError::UnexpectedShape { path, line, .. } => {
                Diagnostic::in_file("M003", message, path, line.and_then(|line| place_in_file(path, line, 1)))
            }
            ManifestError::InvalidOutput { path, .. } => Diagnostic::in_file("M004", message, path, None),
        }
    }
}

fn line_suffix(line: &Option<usize>) -> String {
    match line {
        Some(line) => format!(":{line}"),
        None => String::new(),
    }
}

/// A string under `[package]` of a parsed manifest (its `name`, its `version`), when there is one.
///
/// ```
/// let doc: toml_edit::DocumentMut = "[package]\nname = \"a\"\nversion = \"1.2.0\"".parse().unwrap();
/// assert_eq!(smithy_tls_codegen::manifest::package_str(&doc, "version"), Some("1.2.0"));
/// assert_eq!(smithy_tls_codegen::manifest::package_str(&doc, "edition"), None);
/// ```
pub fn package_str<'a>(doc: &'a DocumentMut, key: &str) -> Option<&'a str> {
    doc.get("package")?.get(key)?.as_str()
}

/// Reads what the other steps need to know about a manifest.
pub fn inspect_manifest(path: &Path, original: &str) -> Result<ManifestFacts, ManifestError> {
    let source = Source::parse(path, original)?;
    let root = source.spans.as_table();
    let package_name = source.package_name(root)?;
    // A `features` that is not a table is refused here, at discovery, with its line.
    if let Some(item) = root.get("features") {
        source.features_table(item)?;
    }
    let legacy_smithy_client = dependency_entries(root).any(|(package, _)| package == LEGACY_SMITHY_CLIENT);
    let path_dependencies = dependency_entries(root)
        .filter_map(|(package, item)| {
            let path = item.as_table_like()?.get("path")?.as_str()?;
            Some((package.to_owned(), path.to_owned()))
        })
        .collect();
    Ok(ManifestFacts {
        package_name,
        smithy_runtime_key: smithy_runtime_key(root),
        runtime_api: runtime_api_dependency(root),
        smithy_metadata: root
            .get("package")
            .and_then(Item::as_table_like)
            .and_then(|package| package.get("metadata"))
            .and_then(Item::as_table_like)
            .is_some_and(|metadata| metadata.contains_key("smithy")),
        legacy_smithy_client,
        path_dependencies,
    })
}

/// The client crate of smithy-rs releases before the orchestrator.
const LEGACY_SMITHY_CLIENT: &str = "aws-smithy-client";

/// Every `[dependencies]` entry as (package name, entry): the key, or the `package` it renames.
fn dependency_entries(root: &Table) -> impl Iterator<Item = (&str, &Item)> {
    root.get("dependencies").and_then(Item::as_table_like).into_iter().flat_map(|dependencies| {
        dependencies.iter().map(|(key, item)| {
            let renamed = item.as_table_like().and_then(|dep| dep.get("package")).and_then(Item::as_str);
            (renamed.unwrap_or(key), item)
        })
    })
}

/// Applies `edit` to the manifest text `original` read from `path`.
///
/// When the manifest carries the tool's marker (`[package.metadata.smithy-tls]`), what it
/// records is undone first, so the result is what `edit` gives on the manifest the generator
/// wrote, whichever policy was applied before. The new marker records this edit.
///
/// Returns the new file text, equal to `original` when nothing needs to change.
pub fn edit_manifest(path: &Path, original: &str, edit: &ManifestEdit<'_>) -> Result<String, ManifestError> {
    let source = Source::parse(path, original)?;
    source.package_name(source.spans.as_table())?;
    let runtime_key = smithy_runtime_key(source.spans.as_table());
    let previous = Marker::read(&source, source.spans.as_table())?;

    let mut doc: DocumentMut = source.spans.clone().into_mut();
    let root = doc.as_table_mut();
    let mut loader_made_mut = edit.loader_made_mut;
    if let Some(previous) = &previous {
        undo(root, previous);
        loader_made_mut |= previous.loader_made_mut;
    }
    let had_features_table = root.contains_key("features");
    let before = feature_texts(root);
    let owned = owned_packages(edit.runtime.package, false);
    let tables_before = runtime_entry_tables(root, &owned);
    let mut next_position = max_position(root).saturating_add(1);

    edit_features(&source, root, runtime_key.as_deref(), edit, &mut next_position)?;
    edit_target_tables(&source, root, edit, &mut next_position)?;

    let after = feature_texts(root);
    let features = after
        .iter()
        .filter(|(name, now)| before.get(*name) != Some(*now))
        .map(|(name, now)| (name.clone(), FeatureRecord { was: before.get(name).cloned(), now: now.clone() }))
        .collect();
    let marker = Marker {
        policy: edit.compiled.policy.name.clone(),
        runtime: edit.runtime.package.to_owned(),
        features_table_added: !had_features_table,
        loader_made_mut,
        features,
        transport_features: None,
        tables: runtime_entry_tables(root, &owned)
            .into_iter()
            .filter(|cfg| !tables_before.contains(cfg))
            .map(|cfg| marker::table_digest(&cfg))
            .collect(),
    };
    marker.write(&source, root, take_position(&mut next_position))?;
    finish(path, original, &doc)
}

/// What [`revert_manifest`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertedManifest {
    /// The manifest without the tool's edits (equal to the input when it had no marker).
    pub text: String,
    /// Whether the manifest had the tool's marker.
    pub had_marker: bool,
    /// Whether the marker says the aws-config loader's `load(self)` was made `mut self`.
    pub loader_made_mut: bool,
    /// Features left as they are because they changed after the tool wrote them.
    pub kept_features: Vec<String>,
}

/// Undoes the tool's edits to a manifest, as its marker records them: features back to their
/// values before, the runtime crate's target tables and the marker removed. Features changed
/// since the tool wrote them are a user's edit and stay (listed in the result).
///
/// # Errors
/// As [`edit_manifest`]; a marker that is not in the shape the tool writes is refused.
pub fn revert_manifest(path: &Path, original: &str) -> Result<RevertedManifest, ManifestError> {
    let source = Source::parse(path, original)?;
    source.package_name(source.spans.as_table())?;
    let Some(marker) = Marker::read(&source, source.spans.as_table())? else {
        return Ok(RevertedManifest {
            text: original.to_owned(),
            had_marker: false,
            loader_made_mut: false,
            kept_features: Vec::new(),
        });
    };
    let mut doc: DocumentMut = source.spans.clone().into_mut();
    let root = doc.as_table_mut();
    let kept_features = undo(root, &marker);
    Ok(RevertedManifest {
        text: finish(path, original, &doc)?,
        had_marker: true,
        loader_made_mut: marker.loader_made_mut,
        kept_features,
    })
}

/// Undoes the edits `marker` records on `root` and removes the marker: the runtime crate's
/// entries in the recorded target tables (with the tables they leave empty), then the features.
/// Returns the features left as they are because they changed since the tool wrote them.
fn undo(root: &mut Table, marker: &Marker) -> Vec<String> {
    let owned = owned_packages(&marker.runtime, marker.transport_features.is_some());
    remove_runtime_entries(root, &owned, &marker.tables);
    let mut kept = undo_features(root, marker);
    if let Some(record) = &marker.transport_features {
        if !transfer_manager::undo_transport_features(root, record) {
            kept.push(format!("{}'s features", crate::transfer_manager::TRANSPORT_PACKAGE));
        }
    }
    marker::remove(root);
    kept
}

/// The features' values as text, by name.
fn feature_texts(root: &Table) -> std::collections::BTreeMap<String, String> {
    root.get("features")
        .and_then(Item::as_table_like)
        .map(|features| features.iter().filter_map(|(name, item)| Some((name.to_owned(), value_text(item)?))).collect())
        .unwrap_or_default()
}

/// The edited document as text in the original's line endings, checked to parse; the original
/// itself when nothing changed.
fn finish(path: &Path, original: &str, doc: &DocumentMut) -> Result<String, ManifestError> {
    let edited = match_line_endings(original, doc.to_string());
    if edited == original {
        return Ok(original.to_owned());
    }
    if let Err(error) = edited.parse::<DocumentMut>() {
        return Err(ManifestError::InvalidOutput { path: path.to_owned(), message: error.message().trim().to_owned() });
    }
    Ok(edited)
}

/// toml_edit writes the tables and entries it adds with `\n`; a CRLF manifest gets CRLF for
/// them too, so the file keeps one line-ending style.
fn match_line_endings(original: &str, edited: String) -> String {
    if !original.contains("\r\n") {
        return edited;
    }
    let mut out = String::with_capacity(edited.len() + edited.len() / 32);
    let mut previous = '\0';
    for c in edited.chars() {
        if c == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(c);
        previous = c;
    }
    out
}

/// The `[dependencies]` key under which `aws-smithy-runtime` is depended on.
fn smithy_runtime_key(root: &Table) -> Option<String> {
    let dependencies = root.get("dependencies")?.as_table_like()?;
    let mut renamed = None;
    for (key, item) in dependencies.iter() {
        let package = item.as_table_like().and_then(|dep| dep.get("package")).and_then(Item::as_str);
        match package {
            None if key == SMITHY_RUNTIME => return Some(key.to_owned()),
            Some(package) if package == SMITHY_RUNTIME => {
                if key == SMITHY_RUNTIME {
                    return Some(key.to_owned());
                }
                renamed.get_or_insert_with(|| key.to_owned());
            }
            _ => {}
        }
    }
    renamed
}

/// The `[dependencies]` entry for aws-smithy-runtime-api (by key, or renamed with `package`).
fn runtime_api_dependency(root: &Table) -> Option<RuntimeApiDependency> {
    let (_, item) = dependency_entries(root).find(|(package, _)| *package == RUNTIME_API)?;
    let field =
        |name: &str| item.as_table_like().and_then(|dep| dep.get(name)).and_then(Item::as_str).map(str::to_owned);
    Some(RuntimeApiDependency {
        version: item.as_str().map(str::to_owned).or_else(|| field("version")),
        path: field("path"),
    })
}

/// The largest document position of any table, so new tables can go after all of them.
fn max_position(table: &Table) -> isize {
    let mut max = table.position().unwrap_or(0);
    for (_, item) in table.iter() {
        match item {
            Item::Table(child) => max = max.max(max_position(child)),
            Item::ArrayOfTables(array) => {
                for child in array.iter() {
                    max = max.max(max_position(child));
                }
            }
            _ => {}
        }
    }
    max
}

fn take_position(next_position: &mut isize) -> isize {
    let position = *next_position;
    *next_position = next_position.saturating_add(1);
    position
}

#[cfg(test)]
mod tests;
