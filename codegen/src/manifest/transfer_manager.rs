//! The S3 transfer manager's manifest: its own transport (aws-smithy-http-client) loses the TLS
//! provider the crate chose, keeps the pool (`default-client`), and gets the policy's provider
//! back in one `[target.'cfg(..)'.dependencies]` table per provider the pool serves (see
//! `crate::transfer_manager`).

use std::path::Path;

use toml_edit::{DocumentMut, InlineTable, Item, Key, Table, TableLike, Value};

use super::array_layout::rewrite_string_array;
use super::descend::descend;
use super::features::value_text;
use super::marker::{self, FeatureRecord, Marker};
use super::source::Source;
use super::target_tables::{cfg_key, dependencies_table, owned_packages, runtime_entry_tables};
use super::{finish, max_position, take_position, undo, ManifestError};
use crate::model::CompiledPolicy;
use crate::transfer_manager::{pool_tables, POOL_FEATURE, TLS_FEATURES, TRANSPORT_PACKAGE};

/// The keys of the transport's `[dependencies]` entry that say where it comes from: each pool
/// table's entry repeats them, so cargo sees one dependency.
const SOURCE_KEYS: [&str; 7] = ["version", "path", "package", "registry", "git", "branch", "rev"];

/// Rewrites the transfer manager's manifest for `compiled` (undoing the tool's earlier edit first,
/// as [`super::edit_manifest`] does), recording the edit for `revert`. `runtime` is the runtime
/// crate's package name, recorded beside the policy.
///
/// # Errors
/// As [`super::edit_manifest`]; [`ManifestError::UnexpectedShape`] when `[dependencies]` has no
/// aws-smithy-http-client written as a table with a `features` array.
pub fn edit_transfer_manager_manifest(
    path: &Path,
    original: &str,
    compiled: &CompiledPolicy,
    runtime: &str,
) -> Result<String, ManifestError> {
    let source = Source::parse(path, original)?;
    source.package_name(source.spans.as_table())?;
    let previous = Marker::read(&source, source.spans.as_table())?;
    let mut doc: DocumentMut = source.spans.clone().into_mut();
    let root = doc.as_table_mut();
    if let Some(previous) = &previous {
        undo(root, previous);
    }
    let owned = owned_packages(runtime, true);
    let tables_before = runtime_entry_tables(root, &owned);
    let mut next_position = max_position(root).saturating_add(1);

    let (source_fields, transport_features) = edit_transport_entry(&source, root)?;
    for table in pool_tables(compiled) {
        let cfg = format!("cfg({})", table.cfg());
        let keys = [Key::new("target"), cfg_key(&cfg), Key::new("dependencies")];
        let not_a_table = |_| {
            source.shape(
                &["target", &cfg, "dependencies"],
                format!("`target.'{cfg}'.dependencies` is not a table"),
                "write platform dependencies as [target.'cfg(...)'.dependencies] tables",
            )
        };
        let platform = descend(root, &keys[..2]).map_err(not_a_table)?;
        let dependencies = dependencies_table(platform, false, &mut next_position).ok_or_else(|| not_a_table(3))?;
        let mut entry = InlineTable::new();
        for (key, value) in &source_fields {
            entry.insert(key, value.clone());
        }
        entry.insert("features", Value::Array([table.tls.feature()].into_iter().collect()));
        // The tables of an earlier edit went with its record: every entry here is new.
        dependencies.insert(TRANSPORT_PACKAGE, Item::Value(Value::InlineTable(entry)));
    }

    let marker = Marker {
        policy: compiled.policy.name.clone(),
        runtime: runtime.to_owned(),
        transport_features: Some(transport_features),
        tables: runtime_entry_tables(root, &owned)
            .into_iter()
            .filter(|cfg| !tables_before.contains(cfg))
            .map(|cfg| marker::table_digest(&cfg))
            .collect(),
        ..Marker::default()
    };
    marker.write(&source, root, take_position(&mut next_position))?;
    finish(path, original, &doc)
}

/// Takes the TLS features out of the transport's `[dependencies]` entry and makes sure it keeps
/// the pool. Returns the entry's source fields and the record of its features.
fn edit_transport_entry(
    source: &Source<'_>,
    root: &mut Table,
) -> Result<(Vec<(String, Value)>, FeatureRecord), ManifestError> {
    let path = ["dependencies", TRANSPORT_PACKAGE];
    let missing = || {
        source.shape(
            &path,
            format!("`[dependencies]` has no `{TRANSPORT_PACKAGE}` table with a `features` array"),
            "this is not an aws-sdk-s3-transfer-manager layout smithy-tls knows (0.3); restore the published \
             manifest, or leave the crate out of the tree",
        )
    };
    let entry: &mut dyn TableLike = root
        .get_mut("dependencies")
        .and_then(Item::as_table_like_mut)
        .and_then(|deps| deps.get_mut(TRANSPORT_PACKAGE))
        .and_then(Item::as_table_like_mut)
        .ok_or_else(missing)?;
    let source_fields: Vec<(String, Value)> = SOURCE_KEYS
        .iter()
        .filter_map(|key| {
            let mut value = entry.get(key)?.as_value()?.clone();
            value.decor_mut().clear();
            Some(((*key).to_owned(), value))
        })
        .collect();
    let features = entry.get_mut("features").ok_or_else(missing)?;
    let was = value_text(features).ok_or_else(missing)?;
    let array = features.as_array_mut().ok_or_else(missing)?;
    let mut desired: Vec<String> =
        array.iter().filter_map(Value::as_str).filter(|f| !TLS_FEATURES.contains(f)).map(str::to_owned).collect();
    if !desired.iter().any(|f| f == POOL_FEATURE) {
        desired.push(POOL_FEATURE.to_owned());
    }
    rewrite_string_array(array, &desired);
    let now = value_text(features).ok_or_else(missing)?;
    Ok((source_fields, FeatureRecord { was: Some(was), now }))
}

/// Puts the transport's features back as `record` says; `false` (leaving them) when they changed
/// since the tool wrote them.
pub(super) fn undo_transport_features(root: &mut Table, record: &FeatureRecord) -> bool {
    let Some(features) = root
        .get_mut("dependencies")
        .and_then(Item::as_table_like_mut)
        .and_then(|deps| deps.get_mut(TRANSPORT_PACKAGE))
        .and_then(Item::as_table_like_mut)
        .and_then(|entry| entry.get_mut("features"))
    else {
        return false;
    };
    if value_text(features).as_deref() != Some(record.now.as_str()) {
        return false;
    }
    let Some(Ok(mut was)) = record.was.as_deref().map(str::parse::<Value>) else { return false };
    if let Item::Value(value) = features {
        *was.decor_mut() = value.decor().clone();
        *value = was;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "[package]\nname = \"aws-sdk-s3-transfer-manager\"\nversion = \"0.3.1\"\n\n\
        [dependencies.aws-smithy-http-client]\nversion = \"1.5.0\"\nfeatures = [\"rustls-aws-lc\", \"rt-tokio\"]\n\n\
        [dependencies.tokio]\nversion = \"1\"\n";

    fn compiled(preset: &str) -> CompiledPolicy {
        let parsed = crate::policy::parse_policy(crate::presets::preset(preset).unwrap()).unwrap();
        crate::compile::compile(&parsed).unwrap()
    }

    fn edit(text: &str, preset: &str) -> String {
        edit_transfer_manager_manifest(Path::new("Cargo.toml"), text, &compiled(preset), "smithy-default-tls").unwrap()
    }

    #[test]
    fn the_pool_keeps_no_provider_of_its_own_and_gets_the_policy_one_per_table() {
        let edited = edit(MANIFEST, "platform-default");
        assert!(edited.contains("features = [\"rt-tokio\", \"default-client\"]\n"), "{edited}");
        // linux-gnu's s2n-tls goes through the default client: no table gives the pool s2n-tls.
        assert!(!edited.contains("features = [\"s2n-tls\"]"), "{edited}");
        assert_eq!(edited.matches("features = [\"rustls-aws-lc\"] }").count(), 1, "{edited}");
        assert!(edited.contains(r#"smithy_tls_roots = "platform-verifier"))))'.dependencies]"#), "{edited}");
        assert_eq!(edit(&edited, "platform-default"), edited, "idempotent");
        assert_eq!(edit(&edit(&edited, "fips"), "platform-default"), edited, "switching policies leaves no residue");
        let reverted = super::super::revert_manifest(Path::new("Cargo.toml"), &edited).unwrap();
        assert_eq!(reverted.text, MANIFEST);
    }

    #[test]
    fn fips_leaves_the_pool_without_tls_and_a_user_change_is_kept() {
        let edited = edit(MANIFEST, "fips");
        assert!(!edited.contains("[target."), "{edited}");
        let changed = edited.replacen(
            "\nfeatures = [\"rt-tokio\", \"default-client\"]",
            "\nfeatures = [\"rt-tokio\", \"default-client\", \"s2n-tls\"]",
            1,
        );
        let reverted = super::super::revert_manifest(Path::new("Cargo.toml"), &changed).unwrap();
        assert!(reverted.text.contains("\"s2n-tls\"]"), "{}", reverted.text);
        assert_eq!(reverted.kept_features, ["aws-smithy-http-client's features"]);
    }

    #[test]
    fn a_manifest_without_the_transport_is_refused() {
        let text = "[package]\nname = \"aws-sdk-s3-transfer-manager\"\nversion = \"0.1.0\"\n";
        let err =
            edit_transfer_manager_manifest(Path::new("Cargo.toml"), text, &compiled("portable"), "x").unwrap_err();
        assert!(err.to_string().contains("no `aws-smithy-http-client` table"), "{err}");
    }
}
