//! The record this tool keeps in every manifest it edits, `[package.metadata.smithy-tls]`: the
//! features it changed (each with its value before and the value it wrote) and what else it
//! did to the crate, so that the next `apply` (any policy) and `revert` undo exactly its own
//! edits and never a user's.
//!
//! Cargo ignores `package.metadata`; keeping the record in the manifest means a generator that
//! rewrites the manifest drops the record together with the edits it describes.
//!
//! The record is data only, read from and written to its table: undoing what it lists is the
//! work of the modules that made the edits (`manifest::undo`).

use std::collections::BTreeMap;

use toml_edit::{InlineTable, Item, Key, Table, Value};

use super::descend::descend;
use super::source::Source;
use super::ManifestError;

/// The key under `package.metadata`.
pub(super) const MARKER_KEY: &str = "smithy-tls";

/// The record of the transfer manager's transport features (`crate::transfer_manager`).
const TRANSPORT_FEATURES_KEY: &str = "transport-features";

const NOTE: &str = "what `smithy-tls revert` and the next apply need; do not edit";

/// The record's own format: 1 (no `format` key) listed each added table's `cfg(..)` key in full;
/// 2 lists a digest of each ([`table_digest`]).
const FORMAT: i64 = 2;

/// How the record names a target table the tool added: the first 12 hex digits of the SHA-256 of
/// its key (`cfg(..)`), enough to tell a manifest's few tables apart without repeating them.
pub(super) fn table_digest(key: &str) -> String {
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::digest(key.as_bytes());
    digest.iter().take(6).map(|byte| format!("{byte:02x}")).collect()
}

/// One feature this tool changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FeatureRecord {
    /// The value before (TOML text, without surrounding whitespace or comment); `None` when the
    /// tool added the feature.
    pub(super) was: Option<String>,
    /// The value the tool wrote (same form).
    pub(super) now: String,
}

/// What the marker records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Marker {
    /// The policy that was applied.
    pub(crate) policy: String,
    /// The runtime crate's package name (the dependency the target tables hold).
    pub(crate) runtime: String,
    /// Whether the tool added the `[features]` table.
    pub(super) features_table_added: bool,
    /// Whether the aws-config loader hook made `load(self)` take `mut self`.
    pub(crate) loader_made_mut: bool,
    /// Changed features by name.
    pub(super) features: BTreeMap<String, FeatureRecord>,
    /// The transfer manager's transport dependency's `features`, before and as written.
    pub(super) transport_features: Option<FeatureRecord>,
    /// The [`table_digest`]s of the `target` keys (`cfg(..)`) whose `dependencies` got the
    /// runtime crate from the tool (entries that were there before are updated in place and not
    /// listed).
    pub(super) tables: Vec<String>,
}

impl Marker {
    /// Reads the marker of a parsed manifest, if it has one.
    pub(super) fn read(source: &Source<'_>, root: &Table) -> Result<Option<Marker>, ManifestError> {
        let Some(item) = root.get("package").and_then(|p| p.get("metadata")).and_then(|m| m.get(MARKER_KEY)) else {
            return Ok(None);
        };
        let path = ["package", "metadata", MARKER_KEY];
        let bad = |what: &str| {
            source.shape(
                &path,
                format!("`[package.metadata.{MARKER_KEY}]` is not what smithy-tls writes ({what})"),
                "it is the tool's record of its own edits: restore the manifest the generator wrote (or remove \
                 the table and the edits it describes by hand), then re-run",
            )
        };
        let table = item.as_table_like().ok_or_else(|| bad("not a table"))?;
        let string = |key: &str| table.get(key).and_then(Item::as_str).map(str::to_owned);
        let flag = |key: &str| match table.get(key) {
            None => Ok(false),
            Some(item) => item.as_bool().ok_or_else(|| bad(&format!("`{key}` is not a boolean"))),
        };
        let mut marker = Marker {
            policy: string("policy").ok_or_else(|| bad("no `policy` string"))?,
            runtime: string("runtime").ok_or_else(|| bad("no `runtime` string"))?,
            features_table_added: flag("features-table-added")?,
            loader_made_mut: flag("loader-made-mut")?,
            features: BTreeMap::new(),
            transport_features: None,
            tables: Vec::new(),
        };
        let format = match table.get("format") {
            None => 1,
            Some(item) => item.as_integer().ok_or_else(|| bad("`format` is not an integer"))?,
        };
        if !(1..=FORMAT).contains(&format) {
            return Err(bad(&format!(
                "record format {format}, newer than this smithy-tls reads ({FORMAT}): run the smithy-tls that wrote it"
            )));
        }
        if let Some(tables) = table.get("tables") {
            let tables = tables.as_array().ok_or_else(|| bad("`tables` is not an array"))?;
            for entry in tables.iter() {
                let entry = entry.as_str().ok_or_else(|| bad("`tables` holds a non-string"))?;
                // Format 1 wrote each key in full; both read as digests from here on.
                let digest = if format == 1 { table_digest(entry) } else { entry.to_owned() };
                let well_formed = digest.len() == 12 && digest.bytes().all(|b| b.is_ascii_hexdigit());
                if !well_formed {
                    return Err(bad(&format!("`tables` holds `{entry}`, not a table digest")));
                }
                marker.tables.push(digest);
            }
        }
        if let Some(features) = table.get("features") {
            let features = features.as_table_like().ok_or_else(|| bad("`features` is not a table"))?;
            for (name, record) in features.iter() {
                let record = record.as_table_like().ok_or_else(|| bad(&format!("`features.{name}` is not a table")))?;
                // A CRLF manifest has its multi-line strings in CRLF too: compare in `\n`.
                let field = |key: &str| record.get(key).map(|v| v.as_str().map(|s| s.replace("\r\n", "\n")));
                let now = field("now").flatten().ok_or_else(|| bad(&format!("`features.{name}` has no `now`")))?;
                let was = match field("was") {
                    None => None,
                    Some(Some(was)) => Some(was),
                    Some(None) => return Err(bad(&format!("`features.{name}.was` is not a string"))),
                };
                marker.features.insert(name.to_owned(), FeatureRecord { was, now });
            }
        }
        if let Some(record) = table.get(TRANSPORT_FEATURES_KEY) {
            let record =
                record.as_table_like().ok_or_else(|| bad(&format!("`{TRANSPORT_FEATURES_KEY}` is not a table")))?;
            let field = |key: &str| record.get(key).and_then(Item::as_str).map(str::to_owned);
            let (Some(was), Some(now)) = (field("was"), field("now")) else {
                return Err(bad(&format!("`{TRANSPORT_FEATURES_KEY}` needs `was` and `now` strings")));
            };
            marker.transport_features = Some(FeatureRecord { was: Some(was), now });
        }
        Ok(Some(marker))
    }

    /// Writes the marker as the last table of the document (at `position`).
    ///
    /// # Errors
    /// When `package` or `package.metadata` is not a table the record can go into (an inline
    /// table): the edits are not made, so nothing is written that could not be undone.
    pub(super) fn write(&self, source: &Source<'_>, root: &mut Table, position: isize) -> Result<(), ManifestError> {
        let inline = |keys: &[&str]| {
            source.shape(
                keys,
                format!("`{}` is an inline table, where smithy-tls keeps its record of its edits", keys.join(".")),
                "write it as a `[package.metadata]` table (or `[package.metadata.<tool>]` tables), then re-run",
            )
        };
        let path = ["package", "metadata"];
        let metadata = descend(root, &path.map(Key::new)).map_err(|depth| inline(&path[..depth]))?;
        let mut table = Table::new();
        table.set_position(Some(position));
        table.insert("note", Item::Value(Value::from(NOTE)));
        table.insert("format", Item::Value(Value::from(FORMAT)));
        table.insert("policy", Item::Value(Value::from(self.policy.as_str())));
        table.insert("runtime", Item::Value(Value::from(self.runtime.as_str())));
        if self.features_table_added {
            table.insert("features-table-added", Item::Value(Value::from(true)));
        }
        if self.loader_made_mut {
            table.insert("loader-made-mut", Item::Value(Value::from(true)));
        }
        if !self.tables.is_empty() {
            // One digest a line, as a reviewer reads lists.
            let mut tables: toml_edit::Array = self.tables.iter().map(String::as_str).collect();
            for value in tables.iter_mut() {
                value.decor_mut().set_prefix("\n    ");
            }
            tables.set_trailing("\n");
            tables.set_trailing_comma(true);
            table.insert("tables", Item::Value(Value::Array(tables)));
        }
        if let Some(record) = &self.transport_features {
            let mut inline = InlineTable::new();
            if let Some(was) = &record.was {
                inline.insert("was", one_line(was));
            }
            inline.insert("now", one_line(&record.now));
            table.insert(TRANSPORT_FEATURES_KEY, Item::Value(Value::InlineTable(inline)));
        }
        if !self.features.is_empty() {
            let mut features = Table::new();
            features.set_position(Some(position + 1));
            for (name, record) in &self.features {
                let mut inline = InlineTable::new();
                if let Some(was) = &record.was {
                    inline.insert("was", one_line(was));
                }
                inline.insert("now", one_line(&record.now));
                features.insert(name, Item::Value(Value::InlineTable(inline)));
            }
            table.insert("features", Item::Table(features));
        }
        metadata.insert(MARKER_KEY, Item::Table(table));
        Ok(())
    }
}

/// A string value on one line: newlines escaped (an inline table cannot span lines, and a
/// multi-line value would read like part of the manifest).
fn one_line(text: &str) -> Value {
    if !text.contains(['\n', '\r']) {
        return Value::from(text);
    }
    // A JSON string is a TOML basic string with the same escapes.
    serde_json::to_string(text)
        .ok()
        .and_then(|quoted| quoted.parse::<Value>().ok())
        .unwrap_or_else(|| Value::from(text))
}

/// Removes the marker (and `package.metadata` when nothing else is in it).
pub(super) fn remove(root: &mut Table) {
    let Some(package) = root.get_mut("package").and_then(Item::as_table_like_mut) else { return };
    let Some(metadata) = package.get_mut("metadata").and_then(Item::as_table_like_mut) else { return };
    metadata.remove(MARKER_KEY);
    // An implicit `metadata` (only dotted headers under it) with nothing left was the tool's.
    let leftover = package.get("metadata").and_then(Item::as_table).is_some_and(|m| m.is_implicit() && m.is_empty());
    if leftover {
        package.remove("metadata");
    }
}
