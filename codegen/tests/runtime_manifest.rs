//! The provider-dependent parts of the runtime's manifests are generated from the provider table
//! (runtime/src/provider/facts.rs), so a provider, a crate or a version is written once there: the
//! provider and roots features and the override's `[target]` tables of runtime/Cargo.toml, its
//! check-cfg list, and the crypto carrier's features and tables (runtime/crypto/Cargo.toml).
//!
//! Each region sits between [`BEGIN`] and [`END`] lines. This test renders them and fails, with
//! the command that rewrites them, when a manifest differs; `SMITHY_TLS_BLESS=1` rewrites them.
//!
//! What the tables say (the README's override section is the user's view):
//! - With no `smithy_tls` cfg, each provider's crates are optional and its feature turns them on;
//!   the carrier sets their crypto features, so an override never inherits them.
//! - Under `smithy_tls = "X"`, X's crates are declared for that cfg. A [`Reach::CfgAlone`]
//!   provider's are not optional: they are in every application's lock. A [`Reach::WithFeature`]
//!   provider's are optional, turned on by the same features as without an override, so they are
//!   in a lock only where some crate asks for the provider; its crypto comes through the carrier's
//!   gate crate for X, declared for that cfg only. The roots work the same way.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[allow(dead_code)]
mod facts {
    include!("../runtime/src/provider/facts.rs");
}

use facts::{Dependency, ProviderFacts, Reach, RootsFacts, PROVIDERS, ROOTS, RUSTLS_024};
use smithy_tls_codegen::model::{Provider, Roots, Stack};

/// The first line of a generated region.
const BEGIN: &str = "# --- generated from src/provider/facts.rs by codegen/tests/runtime_manifest.rs: do not edit ---";
/// The last line of a generated region.
const END: &str = "# --- end of generated ---";
/// The carrier, as the runtime names it.
const CARRIER: &str = "smithy-default-tls-crypto";
/// The value of `smithy_tls` that compiles no TLS library.
const NONE: &str = Stack::NONE;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The carrier's version, as its manifest's `[package]` has it.
fn carrier_version() -> &'static str {
    let file = workspace().join("runtime/crypto/Cargo.toml");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let doc: toml_edit::DocumentMut = text.parse().unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let version = doc["package"]["version"].as_str().expect("the carrier's [package] version");
    Box::leak(version.to_owned().into_boxed_str())
}

/// `"a", "b"` for TOML arrays.
fn quoted_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items.into_iter().map(|i| format!("\"{i}\"")).collect::<Vec<_>>().join(", ")
}

/// One `cfg` predicate over the application's override values: `smithy_tls = "a"` or
/// `any(smithy_tls = "a", ...)`.
fn any_value(key: &str, values: &[&str]) -> String {
    let each: Vec<String> = values.iter().map(|v| format!("{key} = \"{v}\"")).collect();
    match each.as_slice() {
        [one] => one.clone(),
        _ => format!("any({})", each.join(", ")),
    }
}

/// Every value of `smithy_tls`.
fn all_values() -> Vec<&'static str> {
    PROVIDERS.iter().map(|p| p.name).chain([NONE]).collect()
}

/// `cfg(..)` that holds where no provider override is set.
fn no_override() -> String {
    format!("not({})", any_value("smithy_tls", &all_values()))
}

/// `all(unix, inner)` for Unix-only crates.
fn on_unix(unix: bool, inner: String) -> String {
    if unix {
        format!("all(unix, {inner})")
    } else {
        inner
    }
}

/// A dependency as an inline table: `features` on top of its own, optional or not.
fn declaration(dep: &Dependency, extra: &[&str], optional: bool, path: Option<&str>) -> String {
    let mut fields = Vec::new();
    if let Some(package) = dep.package {
        fields.push(format!("package = \"{package}\""));
    }
    fields.push(format!("version = \"{}\"", dep.version));
    if let Some(path) = path {
        fields.push(format!("path = \"{path}\""));
    }
    if optional {
        fields.push("optional = true".to_owned());
    }
    if !dep.default_features {
        fields.push("default-features = false".to_owned());
    }
    let features: Vec<&str> = dep.features.iter().chain(extra).copied().collect();
    if !features.is_empty() {
        fields.push(format!("features = [{}]", quoted_list(features)));
    }
    format!("{} = {{ {} }}\n", dep.name, fields.join(", "))
}

/// `[target.'cfg(..)'.dependencies]` tables in the order first added, each with comment lines
/// above it; declarations for a cfg already added join its table (TOML has one table per key).
#[derive(Default)]
struct Tables(Vec<(String, Vec<String>, Vec<String>)>);

impl Tables {
    fn add(&mut self, comment: &str, cfg: &str, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        match self.0.iter_mut().find(|(c, _, _)| c == cfg) {
            Some((_, comments, existing)) => {
                comments.push(comment.to_owned());
                existing.extend(lines.iter().cloned());
            }
            None => self.0.push((cfg.to_owned(), vec![comment.to_owned()], lines.to_vec())),
        }
    }

    fn render(self, out: &mut String) {
        for (cfg, comments, lines) in self.0 {
            out.push('\n');
            for comment in comments {
                let _ = writeln!(out, "# {comment}");
            }
            let _ = writeln!(out, "[target.'cfg({cfg})'.dependencies]");
            out.extend(lines);
        }
    }
}

/// The crates of every provider, each once, in table order.
fn provider_crates() -> Vec<&'static Dependency> {
    let mut out: Vec<&'static Dependency> = Vec::new();
    for dep in PROVIDERS.iter().flat_map(|p| p.crates.iter().copied()) {
        if !out.iter().any(|d| d.name == dep.name) {
            out.push(dep);
        }
    }
    out
}

/// The providers whose crates include `dep`.
fn users(dep: &Dependency) -> Vec<&'static ProviderFacts> {
    PROVIDERS.iter().filter(|p| p.crates.iter().any(|c| c.name == dep.name)).collect()
}

/// A feature's doc comment, `## ` lines of at most 100 characters.
fn doc_lines(doc: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("##");
    for word in doc.split_whitespace() {
        if line.len() + 1 + word.len() > 100 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("##");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// runtime/Cargo.toml's `[features]` entries of the providers and the roots sources.
fn runtime_features() -> String {
    let mut out = String::new();
    for provider in &PROVIDERS {
        let mut entries: Vec<String> = provider.crates.iter().map(|c| format!("dep:{}", c.name)).collect();
        if provider.crypto_features.is_some() {
            entries.push(format!("dep:{CARRIER}"));
            entries.push(format!("{CARRIER}/{}", provider.name));
        }
        out.push_str(&doc_lines(provider.feature_doc));
        let _ = writeln!(out, "{} = [{}]", provider.name, quoted_list(entries.iter().map(String::as_str)));
    }
    for roots in &ROOTS {
        out.push_str(&doc_lines(roots.feature_doc));
        let _ = writeln!(out, "{} = [\"dep:{}\"]", roots.name, roots.krate.name);
    }
    out
}

/// The providers that cannot use `roots` (they read or bundle their own store) and `none`.
fn cannot_use(roots: &RootsFacts) -> Vec<&'static str> {
    let library = PROVIDERS.iter().filter(|p| roots.rustls_only && !p.platform_verifier()).map(|p| p.name);
    library.chain([NONE]).collect()
}

/// The runtime's dependency on its crypto carrier.
fn carrier_dependency() -> Dependency {
    Dependency {
        name: CARRIER,
        package: None,
        version: carrier_version(),
        default_features: true,
        features: &[],
        unix_only: false,
    }
}

/// runtime/Cargo.toml's `[target]` tables: the providers' and roots' crates with and without
/// the application's override.
fn runtime_tables() -> String {
    let mut tables = Tables::default();
    no_override_tables(&mut tables);
    override_crate_tables(&mut tables);
    override_crypto_tables(&mut tables);
    roots_tables(&mut tables);
    let mut out = String::new();
    tables.render(&mut out);
    out
}

/// No override: every provider's crates, optional, and the carrier with their crypto.
fn no_override_tables(tables: &mut Tables) {
    for unix in [false, true] {
        let mut lines = Vec::new();
        if !unix {
            lines.push(declaration(&carrier_dependency(), &[], true, Some("crypto")));
        }
        let crates = provider_crates();
        lines.extend(crates.iter().filter(|d| d.unix_only == unix).map(|d| declaration(d, &[], true, None)));
        if !unix {
            lines.extend(RUSTLS_024.iter().map(|d| declaration(d, &[], true, None)));
        }
        let comment = if unix {
            "No provider override, Unix only."
        } else {
            "No provider override: the providers the features ask for."
        };
        tables.add(comment, &on_unix(unix, no_override()), &lines);
    }
}

/// An override: each crate for the values that use it, grouped by those values; optional unless
/// the cfg alone selects one of them.
fn override_crate_tables(tables: &mut Tables) {
    let mut groups: Vec<(String, bool, Vec<String>)> = Vec::new();
    for dep in provider_crates() {
        let users = users(dep);
        let optional = users.iter().all(|p| matches!(p.reach, Reach::WithFeature));
        let names: Vec<&str> = users.iter().map(|p| p.name).collect();
        let cfg = on_unix(dep.unix_only, any_value("smithy_tls", &names));
        let line = declaration(dep, &[], optional, None);
        match groups.iter_mut().find(|(c, o, _)| *c == cfg && *o == optional) {
            Some((_, _, lines)) => lines.push(line),
            None => groups.push((cfg, optional, vec![line])),
        }
    }
    for (cfg, optional, lines) in &groups {
        let comment = if *optional {
            "An override's crates, in a lock only where some crate asks for one of its providers."
        } else {
            "An override's crates, in every lock: the cfg alone selects one of their providers."
        };
        tables.add(comment, cfg, lines);
    }
}

/// An override's cryptography: in the runtime's table where the cfg alone selects it, through
/// the carrier's gate otherwise.
fn override_crypto_tables(tables: &mut Tables) {
    let mut gated = Vec::new();
    for provider in &PROVIDERS {
        let Some(crypto) = provider.crypto_features else { continue };
        if crypto.gate.is_some() {
            gated.push(provider.name);
            continue;
        }
        let mut lines = vec![declaration(crypto.krate, crypto.features, false, None)];
        if provider.name == "rustls-aws-lc" {
            lines.extend(RUSTLS_024.iter().map(|d| declaration(d, &[], true, None)));
        }
        let cfg = on_unix(crypto.krate.unix_only, any_value("smithy_tls", &[provider.name]));
        tables.add(&format!("`{}` under the override, in every lock.", provider.name), &cfg, &lines);
    }
    let lines = vec![declaration(&carrier_dependency(), &[], true, Some("crypto"))];
    tables.add("The gated overrides' cryptography, through the carrier.", &any_value("smithy_tls", &gated), &lines);
}

/// Trust roots: without a roots override the sources the features ask for, where the provider
/// in use can use them; with one, that source only.
fn roots_tables(tables: &mut Tables) {
    let roots_values: Vec<&str> = ROOTS.iter().map(|r| r.name).collect();
    for roots in &ROOTS {
        let excluded = cannot_use(roots);
        let without = format!(
            "not(any({}, {}))",
            any_inner("smithy_tls", &excluded),
            any_inner("smithy_tls_roots", &roots_values)
        );
        let lines = vec![declaration(roots.krate, &[], true, None)];
        tables.add(&format!("`{}` roots without a roots override.", roots.name), &without, &lines);
        let optional = matches!(roots.reach, Reach::WithFeature);
        let with = format!("all(smithy_tls_roots = \"{}\", not({}))", roots.name, any_value("smithy_tls", &excluded));
        let lines = vec![declaration(roots.krate, &[], optional, None)];
        tables.add(&format!("`{}` roots as the application's override.", roots.name), &with, &lines);
    }
}

/// `key = "a", key = "b"`.
fn any_inner(key: &str, values: &[&str]) -> String {
    values.iter().map(|v| format!("{key} = \"{v}\"")).collect::<Vec<_>>().join(", ")
}

/// runtime/Cargo.toml's check-cfg entry: the values build.rs accepts.
fn runtime_check_cfg() -> String {
    let roots: Vec<&str> = ROOTS.iter().map(|r| r.name).collect();
    format!(
        "unexpected_cfgs = {{ level = \"warn\", check-cfg = ['cfg(smithy_tls, values({}))', \
         'cfg(smithy_tls_roots, values({}))'] }}\n",
        quoted_list(all_values()),
        quoted_list(roots)
    )
}

/// runtime/crypto/Cargo.toml's features and tables: each provider's crypto features, on its crate
/// without an override and on its gate under its own.
fn carrier() -> String {
    let mut out = String::from("[features]\n");
    let mut tables = Tables::default();
    let mut plain: Vec<&Dependency> = Vec::new();
    let mut gates: Vec<(&str, &Dependency)> = Vec::new();
    for provider in &PROVIDERS {
        let Some(crypto) = provider.crypto_features else { continue };
        let mut entries = vec![format!("dep:{}", crypto.krate.name)];
        entries.extend(crypto.features.iter().map(|f| format!("{}/{f}", crypto.krate.name)));
        if !plain.iter().any(|d| d.name == crypto.krate.name) {
            plain.push(crypto.krate);
        }
        if let Some(gate) = crypto.gate {
            assert!(
                !gates.iter().any(|(_, g)| g.name == gate.name) && !plain.iter().any(|d| d.name == gate.name),
                "{}: the gate {} serves another provider, whose crypto it would bring",
                provider.name,
                gate.name
            );
            entries.push(format!("dep:{}", gate.name));
            entries.extend(crypto.features.iter().map(|f| format!("{}/{f}", gate.name)));
            gates.push((provider.name, gate));
        }
        let _ = writeln!(out, "{} = [{}]", provider.name, quoted_list(entries.iter().map(String::as_str)));
    }
    for (_, gate) in &gates {
        assert!(!plain.iter().any(|d| d.name == gate.name), "{} is a gate and a provider's crate", gate.name);
    }
    for unix in [false, true] {
        let lines: Vec<String> =
            plain.iter().filter(|d| d.unix_only == unix).map(|d| declaration(d, &[], true, None)).collect();
        let comment = "No override: the crypto the runtime's features ask for.";
        tables.add(comment, &on_unix(unix, no_override()), &lines);
    }
    for (provider, gate) in &gates {
        let cfg = on_unix(gate.unix_only, any_value("smithy_tls", &[provider]));
        let lines = vec![declaration(gate, &[], true, None)];
        tables.add(&format!("`{provider}` under the override: its gate."), &cfg, &lines);
    }
    tables.render(&mut out);
    out
}

/// `text` with each generated region replaced by the next of `regions`, or a message.
fn splice(path: &str, text: &str, regions: &[String]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    for region in regions {
        let start = rest.find(BEGIN).ok_or_else(|| format!("{path}: {} regions, found fewer", regions.len()))?;
        let after = start + BEGIN.len() + 1;
        let end = rest[after..].find(END).ok_or_else(|| format!("{path}: a region without its end line"))? + after;
        out.push_str(&rest[..after]);
        out.push_str(region);
        rest = &rest[end..];
    }
    if rest.contains(BEGIN) {
        return Err(format!("{path}: more generated regions than {}", regions.len()));
    }
    out.push_str(rest);
    Ok(out)
}

/// Compares `path` with its regions rendered; rewrites it under `SMITHY_TLS_BLESS`.
fn ensure(path: &str, regions: &[String]) -> Option<String> {
    let file = workspace().join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let want = splice(path, &text, regions).unwrap_or_else(|e| panic!("{e}"));
    if want == text {
        return None;
    }
    if smithy_tls_test_support::regenerate() {
        std::fs::write(&file, &want).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        return None;
    }
    let diff = similar::TextDiff::from_lines(&text, &want).unified_diff().header(path, "generated").to_string();
    Some(format!("{path} is stale:\n{diff}"))
}

#[test]
fn the_runtime_manifests_are_generated_from_the_provider_table() {
    let stale: Vec<String> = [
        ensure("runtime/Cargo.toml", &[runtime_features(), runtime_tables(), runtime_check_cfg()]),
        ensure("runtime/crypto/Cargo.toml", &[carrier()]),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(
        stale.is_empty(),
        "{}\nrewrite them: SMITHY_TLS_BLESS=1 cargo test -p smithy-tls-codegen --test runtime_manifest",
        stale.join("\n")
    );
}

/// The values the manifests, build.rs and the generator know are one list: build.rs and the
/// manifests take theirs from the table, the generator's `Provider` and `Roots` must match it, and
/// the table names each value once.
#[test]
fn every_override_value_is_named_once() {
    let providers: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).chain([Stack::NONE]).collect();
    assert_eq!(providers, all_values(), "the generator's Provider::ALL and the provider table");
    let roots: Vec<&str> = Roots::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(roots, ROOTS.iter().map(|r| r.name).collect::<Vec<_>>(), "the generator's Roots::ALL and ROOTS");
    let mut values = all_values();
    values.extend(ROOTS.iter().map(|r| r.name));
    let count = values.len();
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), count, "a name in both tables, or twice in one");
}

/// A provider's crypto features go through a gate exactly when the cfg alone does not select it:
/// a `CfgAlone` provider's are in the runtime's own table (in every lock, as its crates are); a
/// `WithFeature` provider's in its own table would put them in every lock too.
#[test]
fn crypto_is_gated_exactly_where_the_provider_needs_its_feature() {
    for provider in &PROVIDERS {
        let Some(crypto) = provider.crypto_features else { continue };
        assert_eq!(
            crypto.gate.is_some(),
            matches!(provider.reach, Reach::WithFeature),
            "{}: a gate for its crypto if and only if its reach is WithFeature",
            provider.name
        );
    }
}
