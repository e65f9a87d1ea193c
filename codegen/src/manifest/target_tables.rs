//! The `[target.'cfg(..)'.dependencies]` tables holding the runtime crate (and, for `wasi-http`
//! rules, `smithy-wasi-http`): added, updated and removed as the policy's rules say.

use toml_edit::{InlineTable, Item, Key, Table, TableLike, Value};

use super::descend::descend;
use super::source::Source;
use super::{take_position, ManifestEdit, ManifestError, RuntimeDepSpec};
use crate::model::Stack;
use crate::transfer_manager::TRANSPORT_PACKAGE;

/// The package that serves `wasi-http` rules: released with the runtime crate (the same version
/// requirement) and kept beside it (`<runtime path>/wasi-http`) where the runtime has a path.
pub(crate) const WASI_HTTP_PACKAGE: &str = "smithy-wasi-http";

/// The dependency one rule's target table holds.
struct DepSpec<'a> {
    package: &'a str,
    version: &'a str,
    path: Option<String>,
    /// The runtime's features (never empty); none for `smithy-wasi-http`, which has none.
    features: Vec<&'static str>,
}

impl<'a> DepSpec<'a> {
    /// What a table of `stack` holds; `None` for [`Stack::None`].
    fn new(runtime: &RuntimeDepSpec<'a>, stack: Stack) -> Option<Self> {
        match stack {
            Stack::None => None,
            Stack::WasiHttp => Some(DepSpec {
                package: WASI_HTTP_PACKAGE,
                version: runtime.version,
                path: runtime.path.map(|path| format!("{path}/wasi-http")),
                features: Vec::new(),
            }),
            Stack::Tls { .. } => Some(DepSpec {
                package: runtime.package,
                version: runtime.version,
                path: runtime.path.map(str::to_owned),
                features: stack.runtime_features(),
            }),
        }
    }

    /// The fields in the order they are written.
    fn fields(&self) -> Vec<(&'static str, Value)> {
        let mut fields = vec![("version", Value::from(self.version))];
        if let Some(path) = &self.path {
            fields.push(("path", Value::from(path.as_str())));
        }
        fields.push(("optional", Value::from(true)));
        // smithy-wasi-http has no features to choose.
        if !self.features.is_empty() {
            fields.push(("default-features", Value::from(false)));
            fields.push(("features", Value::Array(self.features.iter().copied().collect())));
        }
        fields
    }

    fn inline(&self) -> InlineTable {
        let mut table = InlineTable::new();
        for (key, value) in self.fields() {
            table.insert(key, value);
        }
        table
    }

    /// Whether an existing entry already says exactly this (in any order and layout).
    fn matches(&self, existing: &dyn TableLike) -> bool {
        let fields = self.fields();
        existing.len() == fields.len()
            && fields.iter().all(|(key, value)| {
                existing.get(key).and_then(Item::as_value).is_some_and(|found| same_value(found, value))
            })
    }
}

/// The key of a `target` table for `cfg`, written as a literal string when possible so the
/// predicate's double quotes need no escaping.
pub(super) fn cfg_key(cfg: &str) -> Key {
    if !cfg.contains('\'') && !cfg.chars().any(char::is_control) {
        if let Ok(key) = format!("'{cfg}'").parse::<Key>() {
            return key;
        }
    }
    Key::new(cfg)
}

const TARGET_HELP: &str = "write platform dependencies as [target.'cfg(...)'.dependencies] tables";

/// The same string, boolean, or array of strings.
fn same_value(found: &Value, wanted: &Value) -> bool {
    match (found, wanted) {
        (Value::String(a), Value::String(b)) => a.value() == b.value(),
        (Value::Boolean(a), Value::Boolean(b)) => a.value() == b.value(),
        (Value::Array(a), Value::Array(b)) => a.iter().map(Value::as_str).eq(b.iter().map(Value::as_str)),
        _ => false,
    }
}

/// Adds, updates and removes the runtime crate's (and `smithy-wasi-http`'s) target dependencies.
pub(super) fn edit_target_tables(
    source: &Source<'_>,
    root: &mut Table,
    edit: &ManifestEdit<'_>,
    next_position: &mut isize,
) -> Result<(), ManifestError> {
    let active: Vec<(String, DepSpec<'_>)> = crate::compile::manifest_tables(edit.compiled)
        .into_iter()
        .filter_map(|(predicate, stack)| Some((format!("cfg({predicate})"), DepSpec::new(&edit.runtime, stack)?)))
        .collect();
    for package in [edit.runtime.package, WASI_HTTP_PACKAGE] {
        remove_entries(root, package, |key| !active.iter().any(|(cfg, spec)| cfg == key && spec.package == package));
    }
    let relaid = tables_to_relay(root, &active);

    for (cfg, spec) in &active {
        let path = [Key::new("target"), cfg_key(cfg), Key::new("dependencies")];
        let not_a_table = |depth: usize| {
            let keys: Vec<&str> = path[..depth].iter().map(Key::get).collect();
            let shown: Vec<_> = path[..depth].iter().map(Key::display_repr).collect();
            source.shape(&keys, format!("`{}` is not a table", shown.join(".")), TARGET_HELP)
        };
        let platform = descend(root, &path[..2]).map_err(not_a_table)?;
        let dependencies =
            dependencies_table(platform, relaid.contains(cfg), next_position).ok_or_else(|| not_a_table(3))?;
        upsert_dependency(source, dependencies, spec.package, spec, cfg)?;
    }
    Ok(())
}

/// A platform table's `dependencies`, added as a header table at the next position when missing,
/// moved there when `relay` says so; `None` when it is not a table.
pub(super) fn dependencies_table<'a>(
    platform: &'a mut Table,
    relay: bool,
    next_position: &mut isize,
) -> Option<&'a mut dyn TableLike> {
    if !platform.contains_key("dependencies") {
        let mut dependencies = Table::new();
        dependencies.set_position(Some(take_position(next_position)));
        platform.insert("dependencies", Item::Table(dependencies));
    } else if relay {
        if let Some(dependencies) = platform.get_mut("dependencies").and_then(Item::as_table_mut) {
            dependencies.set_position(Some(take_position(next_position)));
        }
    }
    platform.get_mut("dependencies").and_then(Item::as_table_like_mut)
}

/// The active tables to move so that, when new tables are added, the tables this tool owns at the
/// end of the file stay in rule order (so switching policies gives the same text as editing the
/// original).
///
/// Empty when no table needs creating: existing tables are then only updated in place. Otherwise
/// these are the active `[target.'cfg(..)'.dependencies]` tables that hold nothing but `package`
/// and come after every other table of the file.
fn tables_to_relay(root: &Table, active: &[(String, DepSpec<'_>)]) -> Vec<String> {
    let target = root.get("target").and_then(Item::as_table_like);
    let dependencies_of =
        |cfg: &str| target.and_then(|target| target.get(cfg)).and_then(|platform| platform.get("dependencies"));
    if active.iter().all(|(cfg, _)| dependencies_of(cfg).is_some()) {
        return Vec::new();
    }
    let owned: Vec<(&str, &Table, isize)> = active
        .iter()
        .filter_map(|(cfg, spec)| {
            let table = dependencies_of(cfg)?.as_table()?;
            let position = table.position()?;
            let only_ours = table.len() == 1 && table.get(spec.package).is_some_and(Item::is_value);
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

/// The packages the tool puts in a crate's target tables: the runtime crate and
/// `smithy-wasi-http`, and in the S3 transfer manager (`transfer_manager`) its transport. Only
/// these are taken out again: a crate's own entries of other packages stay.
pub(super) fn owned_packages(runtime: &str, transfer_manager: bool) -> Vec<&str> {
    let mut packages = vec![runtime, WASI_HTTP_PACKAGE];
    if transfer_manager {
        packages.push(TRANSPORT_PACKAGE);
    }
    packages
}

/// Removes `packages` from the `target.<cfg>.dependencies` tables whose keys have the marker's
/// `digests`, then the tables that become empty (undoing the tool's own additions).
pub(super) fn remove_runtime_entries(root: &mut Table, packages: &[&str], digests: &[String]) {
    for package in packages {
        remove_entries(root, package, |key| digests.contains(&super::marker::table_digest(key)));
    }
}

/// The `target` keys whose `dependencies` hold one of `packages`.
pub(super) fn runtime_entry_tables(root: &Table, packages: &[&str]) -> Vec<String> {
    let Some(target) = root.get("target").and_then(Item::as_table_like) else { return Vec::new() };
    target
        .iter()
        .filter(|(_, platform)| {
            platform
                .get("dependencies")
                .and_then(Item::as_table_like)
                .is_some_and(|deps| packages.iter().any(|p| deps.contains_key(p)))
        })
        .map(|(key, _)| key.to_owned())
        .collect()
}

/// Removes `package` from the `target.<key>.dependencies` tables whose key `remove` picks, then
/// the tables that become empty.
fn remove_entries(root: &mut Table, package: &str, remove: impl Fn(&str) -> bool) {
    let Some(target) = root.get_mut("target").and_then(Item::as_table_like_mut) else {
        return;
    };
    let platforms: Vec<String> = target.iter().map(|(key, _)| key.to_owned()).collect();
    let mut changed = false;
    for platform_key in platforms {
        if !remove(&platform_key) {
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
}

/// Makes `dependencies[package]` say `spec`; one that already does is left as it is.
fn upsert_dependency(
    source: &Source<'_>,
    dependencies: &mut dyn TableLike,
    package: &str,
    spec: &DepSpec<'_>,
    cfg: &str,
) -> Result<(), ManifestError> {
    match dependencies.get_mut(package) {
        None => {
            dependencies.insert(package, Item::Value(Value::InlineTable(spec.inline())));
            Ok(())
        }
        Some(Item::Value(value)) => {
            if value.as_inline_table().is_some_and(|existing| spec.matches(existing)) {
                return Ok(());
            }
            let decor = value.decor().clone();
            let mut replacement = Value::InlineTable(spec.inline());
            *replacement.decor_mut() = decor;
            *value = replacement;
            Ok(())
        }
        Some(Item::Table(table)) => {
            // Written as its own `[target.'cfg(..)'.dependencies.<package>]` table: keep that
            // style and rewrite the keys.
            if spec.matches(&*table) {
                return Ok(());
            }
            table.clear();
            for (key, value) in spec.fields() {
                table.insert(key, Item::Value(value));
            }
            Ok(())
        }
        Some(_) => Err(source.shape(
            &["target", cfg, "dependencies", package],
            format!("`{package}` in `target.'{cfg}'.dependencies` is not a dependency specification"),
            format!("remove it; the tool writes `{package} = {{ version = ..., optional = true, ... }}` itself"),
        )),
    }
}
