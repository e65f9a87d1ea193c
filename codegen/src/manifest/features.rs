//! The `[features]` edits: `default-https-client` enables the runtime crate, and features that
//! reached for the runtime's own default client go through `default-https-client`.

use toml_edit::{Item, Table, TableLike, Value};

use super::array_layout::rewrite_string_array;
use super::marker::Marker;
use super::source::Source;
use super::target_tables::WASI_HTTP_PACKAGE;
use super::{take_position, ManifestEdit, ManifestError};
use crate::model::{LegacyRustls, Stack};

/// The feature generated crates use to turn on their default HTTPS client.
const DEFAULT_HTTPS_CLIENT: &str = "default-https-client";
/// The legacy feature [`LegacyRustls::AliasDefault`] rewrites.
const LEGACY_RUSTLS: &str = "rustls";

/// Rewires the crate's features.
pub(super) fn edit_features(
    source: &Source<'_>,
    root: &mut Table,
    runtime_key: Option<&str>,
    edit: &ManifestEdit<'_>,
    next_position: &mut isize,
) -> Result<(), ManifestError> {
    if !root.contains_key("features") {
        let mut features = Table::new();
        features.set_position(Some(take_position(next_position)));
        root.insert("features", Item::Table(features));
    }
    let features =
        root.get_mut("features").and_then(Item::as_table_like_mut).ok_or_else(|| source.not_a_features_table())?;

    // Entries that enable the runtime's own default client.
    let runtime_entries: Vec<String> = runtime_key
        .map(|key| vec![format!("{key}/{DEFAULT_HTTPS_CLIENT}"), format!("{key}?/{DEFAULT_HTTPS_CLIENT}")])
        .unwrap_or_default();
    let alias_rustls = edit.legacy_rustls == LegacyRustls::AliasDefault;

    // Other features reach the default client through `default-https-client`.
    let names: Vec<String> = features.iter().map(|(name, _)| name.to_owned()).collect();
    for name in &names {
        if name == DEFAULT_HTTPS_CLIENT || (alias_rustls && name == LEGACY_RUSTLS) {
            continue;
        }
        let entries = source.feature_entries(&*features, name)?;
        if !entries.iter().any(|entry| runtime_entries.contains(entry)) {
            continue;
        }
        let mut desired = Vec::with_capacity(entries.len());
        let mut has_default_client = false;
        for entry in entries {
            let entry = if runtime_entries.contains(&entry) { DEFAULT_HTTPS_CLIENT.to_owned() } else { entry };
            if entry == DEFAULT_HTTPS_CLIENT {
                if has_default_client {
                    continue;
                }
                has_default_client = true;
            }
            desired.push(entry);
        }
        set_feature(features, name, &desired);
    }

    // `default` turns the default client on.
    if features.contains_key("default") {
        let mut desired = source.feature_entries(&*features, "default")?;
        if !desired.iter().any(|entry| entry == DEFAULT_HTTPS_CLIENT) {
            desired.push(DEFAULT_HTTPS_CLIENT.to_owned());
            set_feature(features, "default", &desired);
        }
    } else {
        features.insert("default", feature_item(&[DEFAULT_HTTPS_CLIENT]));
    }

    set_default_client(source, features, &runtime_entries, edit)?;

    if alias_rustls && features.contains_key(LEGACY_RUSTLS) {
        // Validates the shape before rewriting.
        source.feature_entries(&*features, LEGACY_RUSTLS)?;
        set_feature(features, LEGACY_RUSTLS, &[DEFAULT_HTTPS_CLIENT.to_owned()]);
    }
    Ok(())
}

/// Makes `default-https-client` enable the crates the target tables hold (the runtime crate,
/// `smithy-wasi-http`) instead of the SDK runtime's client (`runtime_entries`), keeping the rest.
/// A crate without a table is left out: cargo would reject a `dep:` naming no dependency, so with
/// no table at all the feature enables no client anywhere.
fn set_default_client(
    source: &Source<'_>,
    features: &mut dyn TableLike,
    runtime_entries: &[String],
    edit: &ManifestEdit<'_>,
) -> Result<(), ManifestError> {
    let dep_entries = [edit.runtime.package, WASI_HTTP_PACKAGE].map(|package| format!("dep:{package}"));
    let has = |wanted: fn(Stack) -> bool| edit.compiled.rules.iter().any(|rule| wanted(rule.stack));
    let mut desired: Vec<String> = [has(|s| s.provider().is_some()), has(|s| s == Stack::WasiHttp)]
        .into_iter()
        .zip(&dep_entries)
        .filter(|(wanted, _)| *wanted)
        .map(|(_, entry)| entry.clone())
        .collect();
    if features.contains_key(DEFAULT_HTTPS_CLIENT) {
        let entries = source.feature_entries(&*features, DEFAULT_HTTPS_CLIENT)?;
        desired.extend(
            entries.into_iter().filter(|entry| !dep_entries.contains(entry) && !runtime_entries.contains(entry)),
        );
        set_feature(features, DEFAULT_HTTPS_CLIENT, &desired);
    } else {
        let entries: Vec<&str> = desired.iter().map(String::as_str).collect();
        features.insert(DEFAULT_HTTPS_CLIENT, feature_item(&entries));
    }
    Ok(())
}

fn feature_item(entries: &[&str]) -> Item {
    Item::Value(Value::Array(entries.iter().copied().collect()))
}

/// Sets an existing feature's entries.
fn set_feature(features: &mut dyn TableLike, name: &str, desired: &[String]) {
    if let Some(array) = features.get_mut(name).and_then(Item::as_array_mut) {
        rewrite_string_array(array, desired);
    }
}

/// Puts back the features the marker records as the tool's edits: each to its value before
/// (removed when the tool added it), and `[features]` removed when the tool added it and nothing
/// is left in it. Returns the features left as they are because they changed since the tool
/// wrote them (a user's edit).
pub(super) fn undo_features(root: &mut Table, marker: &Marker) -> Vec<String> {
    let Some(features) = root.get_mut("features").and_then(Item::as_table_like_mut) else { return Vec::new() };
    let mut kept = Vec::new();
    for (name, record) in &marker.features {
        let Some(current) = features.get(name).and_then(value_text) else { continue };
        // The same entries as written (a formatter may have re-laid the array out) count as the
        // tool's.
        let as_written = current == record.now
            || features.get(name).and_then(entries).is_some_and(|e| Some(e) == entries_of(&record.now));
        let restored = if as_written {
            restore(features, name, record.was.as_deref())
        } else {
            drop_runtime_entries(features, name, &marker.runtime);
            false
        };
        if !restored {
            kept.push(name.clone());
        }
    }
    if marker.features_table_added && features.is_empty() {
        root.remove("features");
    }
    kept
}

/// Puts a feature back to `was`, its value before the tool's edit, keeping its decor (removed
/// when `None`); `false`, leaving it as it is, when `was` does not parse.
fn restore(features: &mut dyn TableLike, name: &str, was: Option<&str>) -> bool {
    let Some(was) = was else {
        features.remove(name);
        return true;
    };
    let Ok(mut restored) = was.parse::<Value>() else { return false };
    if let Some(Item::Value(value)) = features.get_mut(name) {
        *restored.decor_mut() = value.decor().clone();
        *value = restored;
    }
    true
}

/// Takes `runtime`'s (and `smithy-wasi-http`'s) entries out of a feature a user changed: the
/// user's version stays, but not its references to those crates, whose dependencies go (cargo
/// would reject a `dep:` without one).
fn drop_runtime_entries(features: &mut dyn TableLike, name: &str, runtime: &str) {
    let Some(array) = features.get_mut(name).and_then(Item::as_array_mut) else { return };
    let ours = |entry: &str| {
        [runtime, WASI_HTTP_PACKAGE].iter().any(|package| {
            entry == format!("dep:{package}")
                || entry.starts_with(&format!("{package}/"))
                || entry.starts_with(&format!("{package}?/"))
        })
    };
    let desired: Vec<String> =
        array.iter().filter_map(|v| v.as_str()).filter(|e| !ours(e)).map(str::to_owned).collect();
    rewrite_string_array(array, &desired);
}

/// A feature's entries, when it is an array of strings.
fn entries(item: &Item) -> Option<Vec<String>> {
    item.as_array()?.iter().map(|v| v.as_str().map(str::to_owned)).collect()
}

/// The entries of a feature value recorded as text.
fn entries_of(text: &str) -> Option<Vec<String>> {
    let value: Value = text.parse().ok()?;
    value.as_array()?.iter().map(|v| v.as_str().map(str::to_owned)).collect()
}

/// A feature's value as TOML text, without its surrounding whitespace and comment.
/// Line endings are recorded as `\n` (TOML reads a multi-line string's line endings that way);
/// the manifest's own are put back when it is written.
pub(super) fn value_text(item: &Item) -> Option<String> {
    let mut value = item.as_value()?.clone();
    value.decor_mut().clear();
    Some(value.to_string().replace("\r\n", "\n"))
}
