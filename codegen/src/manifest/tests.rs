use toml_edit::Value;

use super::*;
use crate::cfg::Cfg;
use crate::model::{CompiledRule, EmptyStore, Policy, Provider, Roots, Rule, RuntimeDependency, Scope, Stack};

const LINUX_GNU: &str = r#"all(target_os = "linux", target_env = "gnu")"#;
const WASM: &str = r#"all(target_family = "wasm", not(all(target_os = "linux", target_env = "gnu")))"#;
const FALLBACK: &str = r#"not(any(all(target_os = "linux", target_env = "gnu"), target_family = "wasm"))"#;
const APPLE: &str = r#"target_vendor = "apple""#;
const NOT_APPLE: &str = r#"not(target_vendor = "apple")"#;

const NORMALIZED: &str = include_str!("../../tests/fixtures/manifest/normalized.toml");
const INLINE: &str = include_str!("../../tests/fixtures/manifest/inline.toml");
const CONFIG_LIKE: &str = include_str!("../../tests/fixtures/manifest/config_like.toml");
const RENAMED: &str = include_str!("../../tests/fixtures/manifest/renamed.toml");
const MISSING_DHC: &str = include_str!("../../tests/fixtures/manifest/missing_default_https_client.toml");
const NO_FEATURES: &str = include_str!("../../tests/fixtures/manifest/no_features.toml");
const HAND_WRITTEN: &str = include_str!("../../tests/fixtures/manifest/hand_written.toml");
const BROKEN: &str = include_str!("../../tests/fixtures/manifest/broken.toml");
const WORKSPACE: &str = include_str!("../../tests/fixtures/manifest/workspace.toml");

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
    Rule { name: name.to_owned(), scope, stack, note: None, spans: Default::default() }
}

fn tls(provider: Provider, roots: Roots) -> Stack {
    Stack::Tls { provider, roots, empty_store: EmptyStore::Fail }
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
        runtime: RuntimeDependency { package: "smithy-default-tls".to_owned(), version: "0.1".to_owned(), path: None },
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
    let edit = ManifestEdit { compiled, runtime: RUNTIME, legacy_rustls, loader_made_mut: false };
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
        snapshot_path => "../../tests/fixtures/manifest/snapshots",
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
        let mut entries: Vec<String> = table.iter().map(|(key, item)| format!("{key:?}={}", canonical(item))).collect();
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
        assert_eq!(edit_with(name, &edited, &policy_a(), LegacyRustls::AliasDefault), edited, "{name}: not idempotent");
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
                    // may differ, and which tables the record lists as the tool's (one the
                    // first policy removed and the second put back is the tool's now).
                    let without_tables = |text: &str| {
                        let mut doc = parse(text);
                        if let Some(record) = doc["package"]["metadata"]["smithy-tls"].as_table_mut() {
                            record.remove("tables");
                        }
                        canonical(doc.as_item())
                    };
                    assert_eq!(
                        without_tables(&direct),
                        without_tables(&switched),
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
    // Nothing but the target tables and the record of them differs between the two.
    let strip = |text: &str| -> String {
        sections(text)
            .into_iter()
            .filter(|s| !s.starts_with("[target.") && !s.starts_with("[package.metadata.smithy-tls"))
            .collect::<String>()
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
    let (manifest, record) = edited.split_once("[package.metadata.smithy-tls]").expect("the tool's record");
    assert!(!manifest.contains("smithy-default-tls"), "{edited}");
    assert!(!record.contains("tables"), "{edited}");
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
    let headers: Vec<&str> = edited
        .lines()
        .filter(|line| line.starts_with('[') && !line.starts_with("[package.metadata.smithy-tls"))
        .collect();
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
fn an_empty_store_fallback_enables_the_webpki_feature_too() {
    let fallback = Stack::Tls { provider: Provider::S2nTls, roots: Roots::Native, empty_store: EmptyStore::Webpki };
    let compiled = compiled(
        "fallback",
        &[("linux-gnu", LINUX_GNU, fallback), ("fallback", FALLBACK, tls(Provider::RustlsAwsLc, Roots::Native))],
    );
    let doc = parse(&edit_with("normalized.toml", NORMALIZED, &compiled, LegacyRustls::Keep));
    let entry = |cfg: &str| {
        get(&doc, &["target", &format!("cfg({cfg})"), "dependencies", "smithy-default-tls", "features"]).map(canonical)
    };
    assert_eq!(entry(LINUX_GNU).as_deref(), Some(r#"["s2n-tls","native","webpki"]"#));
    assert_eq!(entry(FALLBACK).as_deref(), Some(r#"["rustls-aws-lc","native"]"#));
    // Turning the fallback off takes the feature out again.
    let edited = edit_with("normalized.toml", NORMALIZED, &compiled, LegacyRustls::Keep);
    let off = edit_with("normalized.toml", &edited, &policy_a(), LegacyRustls::Keep);
    assert_eq!(off, edit_with("normalized.toml", NORMALIZED, &policy_a(), LegacyRustls::Keep));
}

#[test]
fn registry_only_dependency_has_no_path() {
    let compiled = policy_b();
    let edit = ManifestEdit {
        compiled: &compiled,
        runtime: RuntimeDepSpec { package: "smithy-default-tls", version: "0.2.0", path: None },
        legacy_rustls: LegacyRustls::Keep,
        loader_made_mut: false,
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
    // Switching between the two settings is a plain re-run; the alias leaves nothing behind.
    assert_eq!(edit_with("normalized.toml", &alias, &policy_a(), LegacyRustls::Keep), keep);
    assert_eq!(edit_with("normalized.toml", &keep, &policy_a(), LegacyRustls::AliasDefault), alias);
}

#[test]
fn already_edited_manifest_is_returned_unchanged() {
    for (name, text) in FIXTURES {
        let edited = edit_a(name, text);
        assert_eq!(edit_a(name, &edited), edited);
    }
}

#[test]
fn an_inline_package_metadata_is_refused_not_left_without_a_record() {
    let text = "[package]\nname = \"x\"\nmetadata = { docs = 1 }\n\n[dependencies]\naws-smithy-runtime = \"1\"\n";
    let compiled = policy_a();
    let edit = ManifestEdit {
        compiled: &compiled,
        runtime: RUNTIME,
        legacy_rustls: LegacyRustls::Keep,
        loader_made_mut: false,
    };
    let err = edit_manifest(Path::new("inline-metadata.toml"), text, &edit).expect_err("refused").to_string();
    assert!(err.contains("`package.metadata` is an inline table") && err.contains(":3"), "{err}");
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
            runtime_api: None,
            smithy_metadata: false,
            legacy_smithy_client: false,
            path_dependencies: std::collections::BTreeMap::new(),
        }
    );
    let facts = inspect_manifest(Path::new("no_features.toml"), NO_FEATURES).expect("inspects");
    assert_eq!(facts.package_name, "example-bare");
}

#[test]
fn the_runtime_api_dependency_is_read_in_every_spelling() {
    let dependency = |deps: &str| {
        let text = format!("[package]\nname = \"x\"\n\n[dependencies]\n{deps}\n");
        inspect_manifest(Path::new("Cargo.toml"), &text).expect("inspects").runtime_api
    };
    let api = |version: Option<&str>, path: Option<&str>| {
        Some(RuntimeApiDependency { version: version.map(str::to_owned), path: path.map(str::to_owned) })
    };
    assert_eq!(dependency("aws-smithy-runtime-api = \"1.7.1\""), api(Some("1.7.1"), None));
    assert_eq!(
        dependency("aws-smithy-runtime-api = { version = \"0.57.1\", features = [\"client\"] }"),
        api(Some("0.57.1"), None)
    );
    assert_eq!(
        dependency("api = { package = \"aws-smithy-runtime-api\", path = \"../aws-smithy-runtime-api\" }"),
        api(None, Some("../aws-smithy-runtime-api"))
    );
    assert_eq!(dependency("aws-smithy-types = \"1\""), None);
}

fn facts(text: &str) -> ManifestFacts {
    inspect_manifest(Path::new("Cargo.toml"), text).expect("inspects")
}

#[test]
fn smithy_markers_in_comments_and_strings_do_not_count() {
    let commented = r#"# [package.metadata.smithy] aws-smithy-client
[package]
name = "x"
description = "not aws-smithy-client"

[dependencies]
# aws-smithy-client = "0.55"
"#;
    let found = facts(commented);
    assert!(!found.smithy_metadata && !found.legacy_smithy_client, "{found:?}");
}

#[test]
fn smithy_markers_and_path_dependencies_are_read_from_the_tables() {
    let real = r#"[package]
name = "x"

[package.metadata.smithy]
codegen-version = "a"

[dependencies]
client = { package = "aws-smithy-client", version = "0.55" }
aws-smithy-types = { path = "../aws-smithy-types", version = "1.3" }
"#;
    let found = facts(real);
    assert!(found.smithy_metadata && found.legacy_smithy_client, "{found:?}");
    assert_eq!(
        found.path_dependencies,
        std::collections::BTreeMap::from([("aws-smithy-types".to_owned(), "../aws-smithy-types".to_owned())])
    );
    // Dotted metadata tables count as well.
    assert!(facts("[package]\nname = \"x\"\nmetadata.smithy.codegen-version = \"a\"\n").smithy_metadata);
}

#[test]
fn broken_toml_names_file_and_line() {
    let error = edit_manifest(
        Path::new("sdk/broken/Cargo.toml"),
        BROKEN,
        &ManifestEdit {
            compiled: &policy_a(),
            runtime: RUNTIME,
            legacy_rustls: LegacyRustls::Keep,
            loader_made_mut: false,
        },
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
        &ManifestEdit {
            compiled: &policy_a(),
            runtime: RUNTIME,
            legacy_rustls: LegacyRustls::Keep,
            loader_made_mut: false,
        },
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
            &ManifestEdit {
                compiled: &policy_a(),
                runtime: RUNTIME,
                legacy_rustls: LegacyRustls::Keep,
                loader_made_mut: false,
            },
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

/// A crate's own aws-smithy-http-client entry in a table the tool added stays through re-apply
/// and revert: only the transfer manager's record lets the tool take that package out.
#[test]
fn an_sdk_crates_own_transport_entry_in_a_tool_table_survives_reapply_and_revert() {
    let edited = edit_a("normalized.toml", NORMALIZED);
    let key = format!("cfg({LINUX_GNU})");
    let mut doc = parse(&edited);
    let dependencies = doc["target"][key.as_str()]["dependencies"].as_table_like_mut().expect("the tool's table");
    dependencies.insert("aws-smithy-http-client", toml_edit::value("1.5"));
    let with_user = doc.to_string();
    let reapplied = edit_a("normalized.toml", &with_user);
    assert!(reapplied.contains("aws-smithy-http-client = \"1.5\""), "{reapplied}");
    let reverted = revert_manifest(Path::new("normalized.toml"), &reapplied).unwrap().text;
    assert!(reverted.contains("aws-smithy-http-client = \"1.5\""), "{reverted}");
    assert!(!reverted.contains("smithy-default-tls"), "the tool's own entry is gone: {reverted}");
}
