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
//! comments, key order, quoting, table styles and whitespace. Edits are idempotent, and editing
//! an already edited manifest with another policy removes what the previous policy added.

use std::path::{Path, PathBuf};

use toml_edit::{Array, Document, DocumentMut, InlineTable, Item, Key, RawString, Table, TableLike, Value};

use crate::model::{CompiledPolicy, LegacyRustls, Provider, Roots, Stack};

/// The package generated crates depend on for their orchestrator.
const SMITHY_RUNTIME: &str = "aws-smithy-runtime";
/// The feature generated crates use to turn on their default HTTPS client.
const DEFAULT_HTTPS_CLIENT: &str = "default-https-client";
/// The legacy feature [`LegacyRustls::AliasDefault`] rewrites.
const LEGACY_RUSTLS: &str = "rustls";

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
    /// [`Provider::None`].
    pub compiled: &'a CompiledPolicy,
    /// How to depend on the runtime crate.
    pub runtime: RuntimeDepSpec<'a>,
    /// What to do with a `rustls` feature, if the crate has one.
    pub legacy_rustls: LegacyRustls,
}

/// What [`inspect_manifest`] learns about a crate without changing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFacts {
    /// `package.name`.
    pub package_name: String,
    /// The key under which `aws-smithy-runtime` is depended on in `[dependencies]` (handles
    /// `package = "aws-smithy-runtime"` renames), if any.
    pub smithy_runtime_key: Option<String>,
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

fn line_suffix(line: &Option<usize>) -> String {
    match line {
        Some(line) => format!(":{line}"),
        None => String::new(),
    }
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
    Ok(ManifestFacts { package_name, smithy_runtime_key: smithy_runtime_key(root) })
}

/// Applies `edit` to the manifest text `original` read from `path`.
///
/// Returns the new file text, equal to `original` when nothing needs to change.
pub fn edit_manifest(path: &Path, original: &str, edit: &ManifestEdit<'_>) -> Result<String, ManifestError> {
    let source = Source::parse(path, original)?;
    source.package_name(source.spans.as_table())?;
    let runtime_key = smithy_runtime_key(source.spans.as_table());

    let mut doc: DocumentMut = source.spans.clone().into_mut();
    let root = doc.as_table_mut();
    let mut next_position = max_position(root).saturating_add(1);

    let features_changed = edit_features(&source, root, runtime_key.as_deref(), edit, &mut next_position)?;
    let targets_changed = edit_target_tables(&source, root, edit, &mut next_position)?;
    if !features_changed && !targets_changed {
        return Ok(original.to_owned());
    }

    let edited = match_line_endings(original, doc.to_string());
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

/// The parsed original, kept with its spans so errors can name lines.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
    spans: Document<&'a str>,
}

impl<'a> Source<'a> {
    fn parse(path: &'a Path, text: &'a str) -> Result<Self, ManifestError> {
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

    fn shape(&self, keys: &[&str], what: impl Into<String>, help: impl Into<String>) -> ManifestError {
        ManifestError::UnexpectedShape {
            path: self.path.to_owned(),
            line: self.line_of(keys),
            what: what.into(),
            help: help.into(),
        }
    }

    /// `package.name` and `package.version`, or why the file is not a package manifest.
    fn package_name(&self, root: &Table) -> Result<String, ManifestError> {
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

    fn features_table<'t>(&self, item: &'t Item) -> Result<&'t dyn TableLike, ManifestError> {
        item.as_table_like().ok_or_else(|| self.not_a_features_table())
    }

    fn not_a_features_table(&self) -> ManifestError {
        self.shape(
            &["features"],
            "`features` is not a table",
            "declare features under a [features] header, one `name = [...]` array each",
        )
    }

    /// The string entries of feature `name`.
    fn feature_entries(&self, features: &dyn TableLike, name: &str) -> Result<Vec<String>, ManifestError> {
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

/// Rewires the crate's features; returns whether anything changed.
fn edit_features(
    source: &Source<'_>,
    root: &mut Table,
    runtime_key: Option<&str>,
    edit: &ManifestEdit<'_>,
    next_position: &mut isize,
) -> Result<bool, ManifestError> {
    let mut changed = false;
    if !root.contains_key("features") {
        let mut features = Table::new();
        features.set_position(Some(take_position(next_position)));
        root.insert("features", Item::Table(features));
        changed = true;
    }
    let features =
        root.get_mut("features").and_then(Item::as_table_like_mut).ok_or_else(|| source.not_a_features_table())?;

    // Entries that enable the runtime's own default client.
    let runtime_entries: Vec<String> = runtime_key
        .map(|key| vec![format!("{key}/{DEFAULT_HTTPS_CLIENT}"), format!("{key}?/{DEFAULT_HTTPS_CLIENT}")])
        .unwrap_or_default();
    let dep_entry = format!("dep:{}", edit.runtime.package);
    // With no target table there is no dependency for `dep:` to name (cargo would reject it):
    // the feature then enables no client anywhere.
    let any_client = edit.compiled.rules.iter().any(|rule| rule.stack != Stack::None);
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
        changed |= set_feature(features, name, &desired);
    }

    // `default` turns the default client on.
    if features.contains_key("default") {
        let mut desired = source.feature_entries(&*features, "default")?;
        if !desired.iter().any(|entry| entry == DEFAULT_HTTPS_CLIENT) {
            desired.push(DEFAULT_HTTPS_CLIENT.to_owned());
            changed |= set_feature(features, "default", &desired);
        }
    } else {
        features.insert("default", feature_item(&[DEFAULT_HTTPS_CLIENT]));
        changed = true;
    }

    // `default-https-client` enables the runtime crate instead of the runtime's client.
    if features.contains_key(DEFAULT_HTTPS_CLIENT) {
        let entries = source.feature_entries(&*features, DEFAULT_HTTPS_CLIENT)?;
        let mut desired: Vec<String> = any_client.then(|| dep_entry.clone()).into_iter().collect();
        desired.extend(entries.into_iter().filter(|entry| *entry != dep_entry && !runtime_entries.contains(entry)));
        changed |= set_feature(features, DEFAULT_HTTPS_CLIENT, &desired);
    } else {
        let entries: &[&str] = if any_client { &[&dep_entry] } else { &[] };
        features.insert(DEFAULT_HTTPS_CLIENT, feature_item(entries));
        changed = true;
    }

    if alias_rustls && features.contains_key(LEGACY_RUSTLS) {
        // Validates the shape before rewriting.
        source.feature_entries(&*features, LEGACY_RUSTLS)?;
        changed |= set_feature(features, LEGACY_RUSTLS, &[DEFAULT_HTTPS_CLIENT.to_owned()]);
    }
    Ok(changed)
}

fn feature_item(entries: &[&str]) -> Item {
    Item::Value(Value::Array(entries.iter().copied().collect()))
}

/// Sets an existing feature's entries; returns whether anything changed.
fn set_feature(features: &mut dyn TableLike, name: &str, desired: &[String]) -> bool {
    features.get_mut(name).and_then(Item::as_array_mut).is_some_and(|array| rewrite_string_array(array, desired))
}

/// How an array lays out its items, learned from the items already there.
struct ArrayLayout {
    first_prefix: String,
    rest_prefix: String,
    inner_suffix: String,
    last_suffix: String,
}

fn decor_text(raw: Option<&RawString>) -> Option<&str> {
    raw.and_then(RawString::as_str)
}

fn is_blank(text: &str) -> bool {
    text.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

impl ArrayLayout {
    fn of(array: &Array) -> ArrayLayout {
        let items: Vec<&Value> = array.iter().collect();
        let prefix = |index: usize| items.get(index).and_then(|item| decor_text(item.decor().prefix()));
        let suffix = |index: usize| items.get(index).and_then(|item| decor_text(item.decor().suffix()));
        let blank = |text: Option<&str>| text.filter(|text| is_blank(text)).map(str::to_owned);

        let multiline_prefix =
            items.iter().filter_map(|item| decor_text(item.decor().prefix())).find(|prefix| prefix.contains('\n'));
        let multiline =
            multiline_prefix.is_some() || decor_text(Some(array.trailing())).is_some_and(|t| t.contains('\n'));
        let (first_prefix, rest_prefix) = if multiline {
            let line_prefix = multiline_prefix
                .and_then(|prefix| {
                    let newline = if prefix.contains("\r\n") { "\r\n" } else { "\n" };
                    let indent = &prefix[prefix.rfind('\n')? + 1..];
                    is_blank(indent).then(|| format!("{newline}{indent}"))
                })
                .unwrap_or_else(|| "\n    ".to_owned());
            (line_prefix.clone(), line_prefix)
        } else {
            (blank(prefix(0)).unwrap_or_default(), blank(prefix(1)).unwrap_or_else(|| " ".to_owned()))
        };
        let inner_suffix = if items.len() > 1 || array.trailing_comma() {
            blank(suffix(0)).unwrap_or_default()
        } else {
            String::new()
        };
        let last_suffix = if array.trailing_comma() {
            inner_suffix.clone()
        } else {
            blank(items.len().checked_sub(1).and_then(suffix)).unwrap_or_default()
        };
        ArrayLayout { first_prefix, rest_prefix, inner_suffix, last_suffix }
    }

    fn prefix(&self, index: usize) -> &str {
        if index == 0 {
            &self.first_prefix
        } else {
            &self.rest_prefix
        }
    }

    fn suffix(&self, is_last: bool) -> &str {
        if is_last {
            &self.last_suffix
        } else {
            &self.inner_suffix
        }
    }
}

/// Makes `array`'s items the strings `desired`. Items that stay keep their formatting (and
/// comments); new items are laid out like their neighbours. Returns whether anything changed.
fn rewrite_string_array(array: &mut Array, desired: &[String]) -> bool {
    let unchanged = array.len() == desired.len()
        && array.iter().zip(desired).all(|(item, want)| item.as_str() == Some(want.as_str()));
    if unchanged {
        return false;
    }
    let layout = ArrayLayout::of(array);
    let old: Vec<Value> = array.iter().cloned().collect();
    let old_last = old.len().checked_sub(1);
    let new_last = desired.len().checked_sub(1);
    let mut used = vec![false; old.len()];
    let mut items = Vec::with_capacity(desired.len());
    for (index, want) in desired.iter().enumerate() {
        let is_last = Some(index) == new_last;
        let reused = (0..old.len()).find(|&j| !used[j] && old[j].as_str() == Some(want.as_str()));
        let item = match reused {
            Some(j) => {
                used[j] = true;
                let mut item = old[j].clone();
                let decor = item.decor_mut();
                if (j == 0) != (index == 0) && decor_text(decor.prefix()).is_none_or(is_blank) {
                    decor.set_prefix(layout.prefix(index));
                }
                if !array.trailing_comma()
                    && (Some(j) == old_last) != is_last
                    && decor_text(decor.suffix()).is_none_or(is_blank)
                {
                    decor.set_suffix(layout.suffix(is_last));
                }
                item
            }
            None => Value::from(want.as_str()).decorated(layout.prefix(index), layout.suffix(is_last)),
        };
        items.push(item);
    }
    array.clear();
    if items.is_empty() {
        array.set_trailing_comma(false);
    }
    for item in items {
        array.push_formatted(item);
    }
    true
}

/// The dependency one rule's target table holds.
struct DepSpec<'a> {
    version: &'a str,
    path: Option<&'a str>,
    features: Vec<&'static str>,
}

impl<'a> DepSpec<'a> {
    fn new(runtime: &RuntimeDepSpec<'a>, provider: Provider, roots: Roots) -> Self {
        DepSpec { version: runtime.version, path: runtime.path, features: vec![provider.name(), roots.name()] }
    }

    fn features_value(&self) -> Value {
        Value::Array(self.features.iter().copied().collect())
    }

    /// The fields in the order they are written.
    fn fields(&self) -> Vec<(&'static str, Value)> {
        let mut fields = vec![("version", Value::from(self.version))];
        if let Some(path) = self.path {
            fields.push(("path", Value::from(path)));
        }
        fields.push(("optional", Value::from(true)));
        fields.push(("default-features", Value::from(false)));
        fields.push(("features", self.features_value()));
        fields
    }

    fn inline(&self) -> InlineTable {
        let mut table = InlineTable::new();
        for (key, value) in self.fields() {
            table.insert(key, value);
        }
        table
    }

    /// Whether an existing entry already says exactly this.
    fn matches(&self, existing: &dyn TableLike) -> bool {
        let string = |key: &str| existing.get(key).and_then(Item::as_str);
        let boolean = |key: &str| existing.get(key).and_then(Item::as_bool);
        let features_match = existing
            .get("features")
            .and_then(Item::as_array)
            .is_some_and(|array| array.iter().map(Value::as_str).eq(self.features.iter().map(|f| Some(*f))));
        existing.len() == 4 + usize::from(self.path.is_some())
            && string("version") == Some(self.version)
            && self.path.is_none_or(|path| string("path") == Some(path))
            && boolean("optional") == Some(true)
            && boolean("default-features") == Some(false)
            && features_match
    }
}

/// The key of a `target` table for `cfg`, written as a literal string when possible so the
/// predicate's double quotes need no escaping.
fn cfg_key(cfg: &str) -> Key {
    if !cfg.contains('\'') && !cfg.chars().any(char::is_control) {
        if let Ok(key) = format!("'{cfg}'").parse::<Key>() {
            return key;
        }
    }
    Key::new(cfg)
}

const TARGET_HELP: &str = "write platform dependencies as [target.'cfg(...)'.dependencies] tables";

/// Adds, updates and removes the runtime crate's target dependencies; returns whether anything
/// changed.
fn edit_target_tables(
    source: &Source<'_>,
    root: &mut Table,
    edit: &ManifestEdit<'_>,
    next_position: &mut isize,
) -> Result<bool, ManifestError> {
    let package = edit.runtime.package;
    let active: Vec<(String, DepSpec<'_>)> = edit
        .compiled
        .rules
        .iter()
        .filter_map(|rule| match rule.stack {
            Stack::None => None,
            Stack::Tls { provider, roots } => {
                Some((format!("cfg({})", rule.predicate), DepSpec::new(&edit.runtime, provider, roots)))
            }
        })
        .collect();
    let mut changed = remove_stale_entries(root, package, &active);
    let relaid = tables_to_relay(root, package, &active);

    for (cfg, spec) in &active {
        if !root.contains_key("target") {
            let mut target = Table::new();
            target.set_implicit(true);
            root.insert("target", Item::Table(target));
        }
        let target = root
            .get_mut("target")
            .and_then(Item::as_table_mut)
            .ok_or_else(|| source.shape(&["target"], "`target` is not a table", TARGET_HELP))?;
        if !target.contains_key(cfg) {
            let mut platform = Table::new();
            platform.set_implicit(true);
            target.insert_formatted(&cfg_key(cfg), Item::Table(platform));
        }
        let platform = target
            .get_mut(cfg)
            .and_then(Item::as_table_mut)
            .ok_or_else(|| source.shape(&["target", cfg], format!("`target.'{cfg}'` is not a table"), TARGET_HELP))?;
        if !platform.contains_key("dependencies") {
            let mut dependencies = Table::new();
            dependencies.set_position(Some(take_position(next_position)));
            platform.insert("dependencies", Item::Table(dependencies));
        } else if relaid.contains(cfg) {
            if let Some(dependencies) = platform.get_mut("dependencies").and_then(Item::as_table_mut) {
                dependencies.set_position(Some(take_position(next_position)));
            }
        }
        let dependencies = platform.get_mut("dependencies").and_then(Item::as_table_like_mut).ok_or_else(|| {
            source.shape(
                &["target", cfg, "dependencies"],
                format!("`target.'{cfg}'.dependencies` is not a table"),
                TARGET_HELP,
            )
        })?;
        changed |= upsert_dependency(source, dependencies, package, spec, cfg)?;
    }
    Ok(changed)
}

/// The active tables to move so that, when new tables are added, the tables this tool owns at the
/// end of the file stay in rule order (so switching policies gives the same text as editing the
/// original).
///
/// Empty when no table needs creating: existing tables are then only updated in place. Otherwise
/// these are the active `[target.'cfg(..)'.dependencies]` tables that hold nothing but `package`
/// and come after every other table of the file.
fn tables_to_relay(root: &Table, package: &str, active: &[(String, DepSpec<'_>)]) -> Vec<String> {
    let target = root.get("target").and_then(Item::as_table_like);
    let dependencies_of =
        |cfg: &str| target.and_then(|target| target.get(cfg)).and_then(|platform| platform.get("dependencies"));
    if active.iter().all(|(cfg, _)| dependencies_of(cfg).is_some()) {
        return Vec::new();
    }
    let owned: Vec<(&str, &Table, isize)> = active
        .iter()
        .filter_map(|(cfg, _)| {
            let table = dependencies_of(cfg)?.as_table()?;
            let position = table.position()?;
            let only_ours = table.len() == 1 && table.get(package).is_some_and(Item::is_value);
            (only_ours && !table.is_implicit() && !table.is_dotted()).then_some((cfg.as_str(), table, position))
        })
        .collect();
    let others = max_position_except(root, &|table| owned.iter().any(|(_, ours, _)| std::ptr::eq(*ours, table)));
    owned
        .into_iter()
        .filter(|(_, _, position)| others.is_none_or(|others| *position > others))
        .map(|(cfg, _, _)| cfg.to_owned())
        .collect()
}

/// The largest position among the header tables not picked by `skip`.
fn max_position_except(table: &Table, skip: &dyn Fn(&Table) -> bool) -> Option<isize> {
    let mut max = if skip(table) || table.is_implicit() || table.is_dotted() { None } else { table.position() };
    let mut consider = |child: &Table| {
        if let Some(position) = max_position_except(child, skip) {
            max = Some(max.map_or(position, |max: isize| max.max(position)));
        }
    };
    for (_, item) in table.iter() {
        match item {
            Item::Table(child) => consider(child),
            Item::ArrayOfTables(array) => array.iter().for_each(&mut consider),
            _ => {}
        }
    }
    max
}

/// Removes `package` from every `target.*.dependencies` table the policy no longer uses, then
/// the tables that become empty. Returns whether anything changed.
fn remove_stale_entries(root: &mut Table, package: &str, active: &[(String, DepSpec<'_>)]) -> bool {
    let Some(target) = root.get_mut("target").and_then(Item::as_table_like_mut) else {
        return false;
    };
    let platforms: Vec<String> = target.iter().map(|(key, _)| key.to_owned()).collect();
    let mut changed = false;
    for platform_key in platforms {
        if active.iter().any(|(cfg, _)| *cfg == platform_key) {
            continue;
        }
        let Some(platform) = target.get_mut(&platform_key).and_then(Item::as_table_like_mut) else {
            continue;
        };
        let Some(dependencies) = platform.get_mut("dependencies").and_then(Item::as_table_like_mut) else {
            continue;
        };
        if dependencies.remove(package).is_none() {
            continue;
        }
        changed = true;
        if dependencies.is_empty() {
            platform.remove("dependencies");
        }
        if platform.is_empty() {
            target.remove(&platform_key);
        }
    }
    if changed && target.is_empty() {
        root.remove("target");
    }
    changed
}

/// Makes `dependencies[package]` say `spec`; returns whether anything changed.
fn upsert_dependency(
    source: &Source<'_>,
    dependencies: &mut dyn TableLike,
    package: &str,
    spec: &DepSpec<'_>,
    cfg: &str,
) -> Result<bool, ManifestError> {
    match dependencies.get_mut(package) {
        None => {
            dependencies.insert(package, Item::Value(Value::InlineTable(spec.inline())));
            Ok(true)
        }
        Some(Item::Value(value)) => {
            if value.as_inline_table().is_some_and(|existing| spec.matches(existing)) {
                return Ok(false);
            }
            let decor = value.decor().clone();
            let mut replacement = Value::InlineTable(spec.inline());
            *replacement.decor_mut() = decor;
            *value = replacement;
            Ok(true)
        }
        Some(Item::Table(table)) => {
            // Written as its own `[target.'cfg(..)'.dependencies.<package>]` table: keep that
            // style and rewrite the keys.
            if spec.matches(&*table) {
                return Ok(false);
            }
            table.clear();
            for (key, value) in spec.fields() {
                table.insert(key, Item::Value(value));
            }
            Ok(true)
        }
        Some(_) => Err(source.shape(
            &["target", cfg, "dependencies", package],
            format!("`{package}` in `target.'{cfg}'.dependencies` is not a dependency specification"),
            format!("remove it; the tool writes `{package} = {{ version = ..., optional = true, ... }}` itself"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;
    use crate::model::{CompiledRule, Policy, Rule, RuntimeDependency, Scope};

    const LINUX_GNU: &str = r#"all(target_os = "linux", target_env = "gnu")"#;
    const WASM: &str = r#"all(target_family = "wasm", not(all(target_os = "linux", target_env = "gnu")))"#;
    const FALLBACK: &str = r#"not(any(all(target_os = "linux", target_env = "gnu"), target_family = "wasm"))"#;
    const APPLE: &str = r#"target_vendor = "apple""#;
    const NOT_APPLE: &str = r#"not(target_vendor = "apple")"#;

    const NORMALIZED: &str = include_str!("../tests/fixtures/manifest/normalized.toml");
    const INLINE: &str = include_str!("../tests/fixtures/manifest/inline.toml");
    const CONFIG_LIKE: &str = include_str!("../tests/fixtures/manifest/config_like.toml");
    const RENAMED: &str = include_str!("../tests/fixtures/manifest/renamed.toml");
    const MISSING_DHC: &str = include_str!("../tests/fixtures/manifest/missing_default_https_client.toml");
    const NO_FEATURES: &str = include_str!("../tests/fixtures/manifest/no_features.toml");
    const HAND_WRITTEN: &str = include_str!("../tests/fixtures/manifest/hand_written.toml");
    const BROKEN: &str = include_str!("../tests/fixtures/manifest/broken.toml");
    const WORKSPACE: &str = include_str!("../tests/fixtures/manifest/workspace.toml");

    const FIXTURES: [(&str, &str); 7] = [
        ("normalized.toml", NORMALIZED),
        ("inline.toml", INLINE),
        ("config_like.toml", CONFIG_LIKE),
        ("renamed.toml", RENAMED),
        ("missing_default_https_client.toml", MISSING_DHC),
        ("no_features.toml", NO_FEATURES),
        ("hand_written.toml", HAND_WRITTEN),
    ];

    fn rule(name: &str, scope: Scope, stack: Stack) -> Rule {
        Rule { name: name.to_owned(), scope, stack, spans: Default::default() }
    }

    fn tls(provider: Provider, roots: Roots) -> Stack {
        Stack::Tls { provider, roots }
    }

    fn cfg(text: &str) -> Cfg {
        Cfg::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// Builds a compiled policy from `(name, predicate, stack)` rows, the last being the
    /// fallback.
    fn compiled(name: &str, rows: &[(&str, &str, Stack)]) -> CompiledPolicy {
        let (last, rest) = rows.split_last().expect("at least the fallback");
        let policy = Policy {
            name: name.to_owned(),
            description: None,
            runtime: RuntimeDependency {
                package: "smithy-default-tls".to_owned(),
                version: "0.1".to_owned(),
                path: None,
            },
            legacy_rustls: LegacyRustls::AliasDefault,
            rules: rest.iter().map(|(n, p, stack)| rule(n, Scope::When(cfg(p)), *stack)).collect(),
            fallback: rule(last.0, Scope::Fallback, last.2),
            content_hash: "0".repeat(64),
        };
        let rules = rows
            .iter()
            .map(|(name, predicate, stack)| CompiledRule {
                name: (*name).to_owned(),
                predicate: cfg(predicate),
                stack: *stack,
                targets: Vec::new(),
            })
            .collect();
        CompiledPolicy { policy, rules }
    }

    /// linux-gnu → s2n-tls, wasm → none, everything else → rustls with aws-lc.
    fn policy_a() -> CompiledPolicy {
        compiled(
            "a",
            &[
                ("linux-gnu", LINUX_GNU, tls(Provider::S2nTls, Roots::Native)),
                ("wasm", WASM, Stack::None),
                ("fallback", FALLBACK, tls(Provider::RustlsAwsLc, Roots::Native)),
            ],
        )
    }

    /// Apple → rustls with ring and webpki roots, everything else → rustls with aws-lc.
    fn policy_b() -> CompiledPolicy {
        compiled(
            "b",
            &[
                ("apple", APPLE, tls(Provider::RustlsRing, Roots::Webpki)),
                ("fallback", NOT_APPLE, tls(Provider::RustlsAwsLc, Roots::Webpki)),
            ],
        )
    }

    /// Same linux-gnu predicate as [`policy_a`] with another provider; wasm gets a stack now.
    fn policy_c() -> CompiledPolicy {
        compiled(
            "c",
            &[
                ("linux-gnu", LINUX_GNU, tls(Provider::RustlsAwsLc, Roots::Native)),
                ("wasm", WASM, tls(Provider::RustlsRing, Roots::Webpki)),
                ("fallback", FALLBACK, tls(Provider::RustlsAwsLc, Roots::Native)),
            ],
        )
    }

    const RUNTIME: RuntimeDepSpec<'static> =
        RuntimeDepSpec { package: "smithy-default-tls", version: "0.1", path: Some("../smithy-default-tls") };

    fn edit_with(name: &str, text: &str, compiled: &CompiledPolicy, legacy_rustls: LegacyRustls) -> String {
        let edit = ManifestEdit { compiled, runtime: RUNTIME, legacy_rustls };
        match edit_manifest(Path::new(name), text, &edit) {
            Ok(edited) => edited,
            Err(error) => panic!("editing {name} failed: {error}"),
        }
    }

    fn edit_a(name: &str, text: &str) -> String {
        edit_with(name, text, &policy_a(), LegacyRustls::AliasDefault)
    }

    fn snapshot(name: &str, text: &str) {
        insta::with_settings!({
            snapshot_path => "../tests/fixtures/manifest/snapshots",
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(name, text);
        });
    }

    /// Splits a manifest into chunks, each starting at a table header line.
    fn sections(text: &str) -> Vec<String> {
        let mut sections = vec![String::new()];
        for line in text.split_inclusive('\n') {
            if line.starts_with('[') {
                sections.push(String::new());
            }
            if let Some(last) = sections.last_mut() {
                last.push_str(line);
            }
        }
        sections
    }

    /// Whether the tool may edit the section (features, target dependency tables).
    fn editable(section: &str) -> bool {
        let header = section.lines().next().unwrap_or_default();
        header == "[features]" || (header.starts_with("[target.") && header.ends_with(".dependencies]"))
    }

    fn assert_untouched_sections_survive(name: &str, original: &str, edited: &str) {
        for section in sections(original) {
            if !editable(&section) {
                assert!(edited.contains(&section), "{name}: section changed or lost:\n{section}\n--- in ---\n{edited}");
            }
        }
    }

    fn get<'d>(doc: &'d DocumentMut, keys: &[&str]) -> Option<&'d Item> {
        let mut item = doc.as_item();
        for key in keys {
            item = item.as_table_like()?.get(key)?;
        }
        Some(item)
    }

    fn feature(doc: &DocumentMut, name: &str) -> Option<Vec<String>> {
        let array = get(doc, &["features", name])?.as_array()?;
        Some(array.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
    }

    fn parse(text: &str) -> DocumentMut {
        text.parse().expect("edited manifest parses")
    }

    /// Renders an item with sorted keys and no formatting, for comparing meaning only.
    fn canonical(item: &Item) -> String {
        if let Some(table) = item.as_table_like() {
            let mut entries: Vec<String> =
                table.iter().map(|(key, item)| format!("{key:?}={}", canonical(item))).collect();
            entries.sort();
            return format!("{{{}}}", entries.join(","));
        }
        match item {
            Item::Value(Value::Array(array)) => {
                let items: Vec<String> = array.iter().map(|v| canonical(&Item::Value(v.clone()))).collect();
                format!("[{}]", items.join(","))
            }
            Item::Value(Value::String(s)) => format!("{:?}", s.value()),
            Item::Value(value) => value.clone().decorated("", "").to_string(),
            Item::ArrayOfTables(array) => {
                let items: Vec<String> = array.iter().map(|t| canonical(&Item::Table(t.clone()))).collect();
                format!("[{}]", items.join(","))
            }
            _ => String::new(),
        }
    }

    #[test]
    fn normalized_manifest_full_output() {
        snapshot("normalized_policy_a", &edit_a("normalized.toml", NORMALIZED));
    }

    #[test]
    fn inline_manifest_full_output() {
        snapshot("inline_policy_a", &edit_a("inline.toml", INLINE));
    }

    #[test]
    fn config_like_manifest_full_output() {
        snapshot("config_like_policy_a", &edit_a("config_like.toml", CONFIG_LIKE));
    }

    #[test]
    fn hand_written_target_tables_full_output() {
        snapshot("hand_written_policy_a", &edit_a("hand_written.toml", HAND_WRITTEN));
    }

    #[test]
    fn no_features_full_output() {
        snapshot("no_features_policy_b", &edit_with("no_features.toml", NO_FEATURES, &policy_b(), LegacyRustls::Keep));
    }

    #[test]
    fn untouched_sections_stay_byte_for_byte() {
        for policy in [policy_a(), policy_b(), policy_c()] {
            for (name, text) in FIXTURES {
                let edited = edit_with(name, text, &policy, LegacyRustls::AliasDefault);
                assert_untouched_sections_survive(name, text, &edited);
            }
        }
    }

    #[test]
    fn crlf_manifests_get_crlf_for_added_lines() {
        for (name, text) in FIXTURES {
            let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
            let edited = edit_with(name, &crlf, &policy_a(), LegacyRustls::AliasDefault);
            assert_ne!(edited, crlf, "{name}: nothing was edited");
            assert_eq!(edited.matches('\n').count(), edited.matches("\r\n").count(), "{name}: mixed line endings");
            // Same content as the LF edit, and a second run changes nothing.
            let lf = edit_with(name, text, &policy_a(), LegacyRustls::AliasDefault);
            assert_eq!(edited.replace("\r\n", "\n"), lf.replace("\r\n", "\n"), "{name}");
            assert_eq!(
                edit_with(name, &edited, &policy_a(), LegacyRustls::AliasDefault),
                edited,
                "{name}: not idempotent"
            );
        }
    }

    #[test]
    fn edits_are_idempotent() {
        for policy in [policy_a(), policy_b(), policy_c()] {
            for legacy in [LegacyRustls::Keep, LegacyRustls::AliasDefault] {
                for (name, text) in FIXTURES {
                    let once = edit_with(name, text, &policy, legacy);
                    let twice = edit_with(name, &once, &policy, legacy);
                    assert_eq!(once, twice, "{name} with policy {}", policy.policy.name);
                    parse(&once);
                }
            }
        }
    }

    #[test]
    fn switching_policy_equals_editing_the_original() {
        let policies = [policy_a(), policy_b(), policy_c()];
        for first in &policies {
            for second in &policies {
                for (name, text) in FIXTURES {
                    let direct = edit_with(name, text, second, LegacyRustls::AliasDefault);
                    let via_first = edit_with(name, text, first, LegacyRustls::AliasDefault);
                    let switched = edit_with(name, &via_first, second, LegacyRustls::AliasDefault);
                    if name == "hand_written.toml" {
                        // Its original holds tables a policy may reuse in place; only placement
                        // may differ.
                        assert_eq!(
                            canonical(parse(&direct).as_item()),
                            canonical(parse(&switched).as_item()),
                            "{name}: {} then {}",
                            first.policy.name,
                            second.policy.name
                        );
                    } else {
                        assert_eq!(direct, switched, "{name}: {} then {}", first.policy.name, second.policy.name);
                    }
                }
            }
        }
    }

    #[test]
    fn policy_switch_removes_stale_tables() {
        let with_a = edit_a("normalized.toml", NORMALIZED);
        assert!(with_a.contains(&format!("[target.'cfg({LINUX_GNU})'.dependencies]")));
        let with_b = edit_with("normalized.toml", &with_a, &policy_b(), LegacyRustls::AliasDefault);
        assert!(!with_b.contains(LINUX_GNU), "{with_b}");
        assert!(!with_b.contains("s2n-tls"), "{with_b}");
        let headers: Vec<&str> = with_b.lines().filter(|line| line.starts_with("[target.")).collect();
        assert_eq!(
            headers,
            [
                r#"[target.'cfg(target_vendor = "apple")'.dependencies]"#,
                r#"[target.'cfg(not(target_vendor = "apple"))'.dependencies]"#,
            ]
        );
        // Nothing but the target tables differs between the two.
        let strip = |text: &str| -> String {
            sections(text).into_iter().filter(|s| !s.starts_with("[target.")).collect::<String>()
        };
        assert_eq!(strip(&with_a), strip(&with_b));
    }

    #[test]
    fn none_provider_rules_get_no_table() {
        let edited = edit_a("normalized.toml", NORMALIZED);
        assert!(!edited.contains("target_family = \"wasm\", not"), "{edited}");
        // A previous policy that gave wasm a stack leaves nothing behind.
        let with_c = edit_with("normalized.toml", NORMALIZED, &policy_c(), LegacyRustls::AliasDefault);
        assert!(with_c.contains(&format!("[target.'cfg({WASM})'.dependencies]")));
        assert_eq!(edit_a("normalized.toml", &with_c), edited);
    }

    #[test]
    fn policy_without_any_client_names_no_dependency() {
        let nothing = compiled("nothing", &[("fallback", "any()", Stack::None)]);
        let with_a = edit_a("config_like.toml", CONFIG_LIKE);
        let edited = edit_with("config_like.toml", &with_a, &nothing, LegacyRustls::AliasDefault);
        assert!(!edited.contains("smithy-default-tls"), "{edited}");
        assert!(edited.contains("\ndefault-https-client = []\n"), "{edited}");
        assert_eq!(edited, edit_with("config_like.toml", CONFIG_LIKE, &nothing, LegacyRustls::AliasDefault));
        // And back.
        assert_eq!(edit_a("config_like.toml", &edited), with_a);
    }

    #[test]
    fn existing_unrelated_target_table_is_untouched_and_new_tables_go_last() {
        let edited = edit_a("inline.toml", INLINE);
        assert!(edited.contains(
            "[target.\"cfg(windows)\".dev-dependencies]\n# Only needed by the named-pipe tests.\ntempfile =   \"3\"\n"
        ));
        let headers: Vec<&str> = edited.lines().filter(|line| line.starts_with('[')).collect();
        assert_eq!(
            &headers[headers.len() - 3..],
            [
                "[features]",
                r#"[target.'cfg(all(target_os = "linux", target_env = "gnu"))'.dependencies]"#,
                r#"[target.'cfg(not(any(all(target_os = "linux", target_env = "gnu"), target_family = "wasm")))'.dependencies]"#,
            ]
        );
        assert!(!edited.contains("\n[target]"), "{edited}");
    }

    #[test]
    fn dependency_entry_has_the_rule_features() {
        let doc = parse(&edit_a("normalized.toml", NORMALIZED));
        let linux = get(&doc, &["target", &format!("cfg({LINUX_GNU})"), "dependencies", "smithy-default-tls"])
            .and_then(Item::as_inline_table)
            .map(|t| t.to_string().trim().to_owned());
        assert_eq!(
            linux.as_deref(),
            Some(
                r#"{ version = "0.1", path = "../smithy-default-tls", optional = true, default-features = false, features = ["s2n-tls", "native"] }"#
            )
        );
    }

    #[test]
    fn registry_only_dependency_has_no_path() {
        let compiled = policy_b();
        let edit = ManifestEdit {
            compiled: &compiled,
            runtime: RuntimeDepSpec { package: "smithy-default-tls", version: "0.2.0", path: None },
            legacy_rustls: LegacyRustls::Keep,
        };
        let edited = edit_manifest(Path::new("renamed.toml"), RENAMED, &edit).expect("edits");
        assert!(edited.contains(
            "smithy-default-tls = { version = \"0.2.0\", optional = true, default-features = false, features = [\"rustls-ring\", \"webpki\"] }"
        ));
        assert!(!edited.contains("path ="), "{edited}");
        // Switching to a path dependency updates the entries in place.
        let with_path = edit_with("renamed.toml", &edited, &compiled, LegacyRustls::Keep);
        assert_eq!(with_path, edit_with("renamed.toml", RENAMED, &compiled, LegacyRustls::Keep));
    }

    #[test]
    fn renamed_runtime_dependency() {
        let facts = inspect_manifest(Path::new("renamed.toml"), RENAMED).expect("inspects");
        assert_eq!(facts.smithy_runtime_key.as_deref(), Some("runtime"));
        let edited = edit_a("renamed.toml", RENAMED);
        let doc = parse(&edited);
        assert_eq!(feature(&doc, "default-https-client").unwrap(), ["dep:smithy-default-tls", "extra-logging"]);
        assert_eq!(feature(&doc, "hyper-client").unwrap(), ["default-https-client"]);
        assert_eq!(feature(&doc, "default").unwrap(), ["default-https-client"]);
        assert!(edited.contains(
            "runtime = { package = \"aws-smithy-runtime\", version = \"1.9\", features = [\"client\"] }\n\
             aws-smithy-runtime-api = \"1.9\"   # a different crate with a similar name\n"
        ));
        assert!(edited.contains("default-https-client = [\"dep:smithy-default-tls\", \"extra-logging\"]\n"));
        assert!(edited.contains("hyper-client = [\"default-https-client\"]\n"));
    }

    #[test]
    fn missing_default_https_client_feature_is_created() {
        let edited = edit_a("missing.toml", MISSING_DHC);
        assert!(edited.contains(
            "[features]\ndefault = [\"rt-tokio\", \"default-https-client\"]\nrt-tokio = []\n\
             default-https-client = [\"dep:smithy-default-tls\"]\n"
        ));
    }

    #[test]
    fn features_table_is_created() {
        let edited = edit_a("no_features.toml", NO_FEATURES);
        assert!(edited.contains(
            "\n[features]\ndefault = [\"default-https-client\"]\ndefault-https-client = [\"dep:smithy-default-tls\"]\n"
        ));
        let doc = parse(&edited);
        assert!(doc["features"].as_table().is_some_and(|t| !t.is_implicit()));
    }

    #[test]
    fn legacy_rustls_keep_leaves_the_feature() {
        let keep = edit_with("normalized.toml", NORMALIZED, &policy_a(), LegacyRustls::Keep);
        assert!(keep.contains("\nrustls = [\"aws-smithy-runtime/tls-rustls\"]\n"));
        let alias = edit_a("normalized.toml", NORMALIZED);
        assert!(alias.contains("\nrustls = [\"default-https-client\"]\n"));
        // aws-config's `rustls = ["client-hyper"]`.
        let config_keep = edit_with("config_like.toml", CONFIG_LIKE, &policy_a(), LegacyRustls::Keep);
        assert!(config_keep.contains("\nrustls = [\"client-hyper\"]\n"));
        assert!(config_keep.contains("\nclient-hyper = [\"default-https-client\"]\n"));
        let config_alias = edit_a("config_like.toml", CONFIG_LIKE);
        assert!(config_alias.contains("\nrustls = [\"default-https-client\"]\n"));
        // Switching between the two settings is a plain re-run.
        assert_eq!(edit_with("normalized.toml", &alias, &policy_a(), LegacyRustls::Keep), alias);
    }

    #[test]
    fn already_edited_manifest_is_returned_unchanged() {
        for (name, text) in FIXTURES {
            let edited = edit_a(name, text);
            assert_eq!(edit_a(name, &edited), edited);
        }
    }

    #[test]
    fn multiline_arrays_keep_their_layout() {
        let text = "[package]\nname = \"x\"\n\n[dependencies]\naws-smithy-runtime = \"1\"\n\n[features]\n\
                    default = [\n    \"a\",\n    # keep me\n    \"b\"\n]\n\
                    default-https-client = [\n  \"aws-smithy-runtime/default-https-client\",\n  \"a\", # why\n]\n\
                    a = []\nb = [ \"aws-smithy-runtime/default-https-client\" ]\n";
        let edited = edit_a("multiline.toml", text);
        let features = edited.split("[features]\n").nth(1).unwrap_or_default();
        let features = features.split("\n\n").next().unwrap_or_default();
        assert_eq!(
            features,
            "default = [\n    \"a\",\n    # keep me\n    \"b\",\n    \"default-https-client\"\n]\n\
             default-https-client = [\n  \"dep:smithy-default-tls\",\n  \"a\", # why\n]\n\
             a = []\nb = [ \"default-https-client\" ]"
        );
    }

    #[test]
    fn dotted_dependency_table_is_updated_in_place() {
        let text = format!(
            "[package]\nname = \"x\"\n\n[target.'cfg({LINUX_GNU})'.dependencies.smithy-default-tls]\n\
             version = \"0.0.9\"\noptional = true\n\n[features]\ndefault = [\"default-https-client\"]\n"
        );
        let edited = edit_a("dotted.toml", &text);
        assert!(edited.contains(&format!(
            "[target.'cfg({LINUX_GNU})'.dependencies.smithy-default-tls]\nversion = \"0.1\"\n\
             path = \"../smithy-default-tls\"\noptional = true\ndefault-features = false\n\
             features = [\"s2n-tls\", \"native\"]\n"
        )));
        assert_eq!(edit_a("dotted.toml", &edited), edited);
    }

    #[test]
    fn inspect_reports_facts() {
        let facts = inspect_manifest(Path::new("normalized.toml"), NORMALIZED).expect("inspects");
        assert_eq!(
            facts,
            ManifestFacts {
                package_name: "example-sdk-widgets".to_owned(),
                smithy_runtime_key: Some("aws-smithy-runtime".to_owned()),
            }
        );
        let facts = inspect_manifest(Path::new("no_features.toml"), NO_FEATURES).expect("inspects");
        assert_eq!(facts.package_name, "example-bare");
    }

    #[test]
    fn broken_toml_names_file_and_line() {
        let error = edit_manifest(
            Path::new("sdk/broken/Cargo.toml"),
            BROKEN,
            &ManifestEdit { compiled: &policy_a(), runtime: RUNTIME, legacy_rustls: LegacyRustls::Keep },
        )
        .expect_err("does not parse");
        match &error {
            ManifestError::Parse { line, column, .. } => assert_eq!((*line, *column), (7, 1)),
            other => panic!("unexpected error {other:?}"),
        }
        let message = error.to_string();
        assert!(message.starts_with("sdk/broken/Cargo.toml:7:1: invalid TOML: "), "{message}");
        let inspect_error = inspect_manifest(Path::new("sdk/broken/Cargo.toml"), BROKEN).expect_err("does not parse");
        assert_eq!(inspect_error.to_string(), message);
    }

    #[test]
    fn workspace_manifest_is_not_a_package() {
        let error = edit_manifest(
            Path::new("Cargo.toml"),
            WORKSPACE,
            &ManifestEdit { compiled: &policy_a(), runtime: RUNTIME, legacy_rustls: LegacyRustls::Keep },
        )
        .expect_err("not a package");
        assert!(matches!(error, ManifestError::NotAPackage { .. }));
        assert!(error.to_string().starts_with("Cargo.toml: not a package manifest"));
        assert!(matches!(inspect_manifest(Path::new("Cargo.toml"), WORKSPACE), Err(ManifestError::NotAPackage { .. })));
    }

    #[test]
    fn unexpected_shapes_name_the_line() {
        let cases = [
            ("[package]\nname = \"x\"\n\n[features]\ndefault = \"nope\"\n".to_owned(), 5, "feature `default`"),
            ("[package]\nname = \"x\"\n\n[features]\nrt = [1]\n".to_owned(), 5, "feature `rt`"),
            ("features = 3\n[package]\nname = \"x\"\n".to_owned(), 1, "`features` is not a table"),
            ("target = 3\n[package]\nname = \"x\"\n".to_owned(), 1, "`target` is not a table"),
            (format!("[package]\nname = \"x\"\n\n[target]\nfoo = 1\n'cfg({LINUX_GNU})' = 2\n"), 6, "is not a table"),
            (
                format!("[package]\nname = \"x\"\n\n[[target.'cfg({LINUX_GNU})'.dependencies.smithy-default-tls]]\nversion = \"1\"\n"),
                4,
                "not a dependency specification",
            ),
            ("[package]\nversion = \"1\"\n".to_owned(), 1, "[package] has no `name`"),
        ];
        for (text, line, what_contains) in cases {
            let text = text.as_str();
            let error = match edit_manifest(
                Path::new("Cargo.toml"),
                text,
                &ManifestEdit { compiled: &policy_a(), runtime: RUNTIME, legacy_rustls: LegacyRustls::Keep },
            ) {
                Err(error) => error,
                Ok(edited) => panic!("expected an error for {text:?}, got {edited}"),
            };
            match &error {
                ManifestError::UnexpectedShape { line: got, what, .. } => {
                    assert!(what.contains(what_contains), "{what}");
                    assert_eq!(*got, Some(line), "{error}");
                }
                other => panic!("unexpected error {other:?}"),
            }
            assert!(error.to_string().starts_with("Cargo.toml:"), "{error}");
        }
    }
}
