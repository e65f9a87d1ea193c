//! The parsed original manifest: its spans, and the errors that name its lines.

use std::path::Path;

use toml_edit::{Document, Item, Table, TableLike};

use super::ManifestError;

/// The parsed original, kept with its spans so errors can name lines.
pub(super) struct Source<'a> {
    path: &'a Path,
    text: &'a str,
    pub(super) spans: Document<&'a str>,
}

impl<'a> Source<'a> {
    pub(super) fn parse(path: &'a Path, text: &'a str) -> Result<Self, ManifestError> {
        match Document::parse(text) {
            Ok(spans) => Ok(Source { path, text, spans }),
            Err(error) => {
                let offset = error.span().map_or(0, |span| span.start);
                let (line, column) = line_column(text, offset);
                Err(ManifestError::Parse {
                    path: path.to_owned(),
                    line,
                    column,
                    message: error.message().trim().to_owned(),
                })
            }
        }
    }

    /// The 1-based line where the item at `keys` starts in the original text.
    fn line_of(&self, keys: &[&str]) -> Option<usize> {
        let mut item = self.spans.as_item();
        let mut span = None;
        for key in keys {
            let (found_key, found_item) = item.as_table_like()?.get_key_value(key)?;
            span = found_key.span().or_else(|| found_item.span());
            item = found_item;
        }
        span.map(|span| line_column(self.text, span.start).0)
    }

    pub(super) fn shape(&self, keys: &[&str], what: impl Into<String>, help: impl Into<String>) -> ManifestError {
        ManifestError::UnexpectedShape {
            path: self.path.to_owned(),
            line: self.line_of(keys),
            what: what.into(),
            help: help.into(),
        }
    }

    /// `package.name` and `package.version`, or why the file is not a package manifest.
    pub(super) fn package_name(&self, root: &Table) -> Result<String, ManifestError> {
        let Some(package) = root.get("package") else {
            return Err(ManifestError::NotAPackage { path: self.path.to_owned() });
        };
        let package = package.as_table_like().ok_or_else(|| {
            self.shape(&["package"], "`package` is not a table", "write the package metadata under a [package] header")
        })?;
        let name = package.get("name").and_then(Item::as_str).ok_or_else(|| {
            self.shape(
                &["package"],
                "[package] has no `name` string",
                "give the package a name, e.g. `name = \"aws-sdk-sts\"`",
            )
        })?;
        Ok(name.to_owned())
    }

    pub(super) fn features_table<'t>(&self, item: &'t Item) -> Result<&'t dyn TableLike, ManifestError> {
        item.as_table_like().ok_or_else(|| self.not_a_features_table())
    }

    pub(super) fn not_a_features_table(&self) -> ManifestError {
        self.shape(
            &["features"],
            "`features` is not a table",
            "declare features under a [features] header, one `name = [...]` array each",
        )
    }

    /// The string entries of feature `name`.
    pub(super) fn feature_entries(&self, features: &dyn TableLike, name: &str) -> Result<Vec<String>, ManifestError> {
        let not_strings = || {
            self.shape(
                &["features", name],
                format!("feature `{name}` is not an array of strings"),
                format!("write it as `{name} = [\"other-feature\", \"dependency/feature\"]`"),
            )
        };
        let array = features.get(name).and_then(Item::as_array).ok_or_else(not_strings)?;
        array.iter().map(|entry| entry.as_str().map(str::to_owned).ok_or_else(not_strings)).collect()
    }
}

/// 1-based line and character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}
