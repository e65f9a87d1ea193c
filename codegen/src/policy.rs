//! The policy file: parsing with spans, and every check whose answer points into the file.
//!
//! ```toml
//! name = "example"
//!
//! [runtime]
//! version = "0.1"
//!
//! [[rule]]
//! name = "linux-gnu"
//! cfg = 'cfg(all(target_os = "linux", target_env = "gnu"))'
//! provider = "rustls-aws-lc"
//! roots = "native"
//!
//! [fallback]
//! name = "elsewhere"
//! provider = "rustls-ring"
//! roots = "webpki"
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use toml_edit::{Document, Item, Table, Value};

use crate::cfg::{Cfg, TargetKey};
use crate::cfg_values;
use crate::diag::{Diagnostic, Diagnostics};
pub use crate::model::RuleSpans;
use crate::model::{EmptyStore, LegacyRustls, Policy, Provider, Roots, Rule, RuntimeDependency, Scope, Stack};

/// The package name of the runtime crate, used when a policy does not name one.
pub const DEFAULT_RUNTIME_PACKAGE: &str = "smithy-default-tls";

/// A policy file's text and where it came from; kept so that later checks can point into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySource {
    /// The path shown in diagnostics (for an embedded preset, `<preset:NAME>`).
    pub path: PathBuf,
    /// The file's text.
    pub text: String,
}

/// `"a" | "b" | "c"`: the choices for a key, as a policy file spells them.
/// What a rule's `provider` names: a TLS provider of the runtime crate, or a stack without one
/// (`none`, `wasi-http`), which takes no roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Tls(Provider),
    Stack(Stack),
}

fn alternatives(names: &[&str]) -> String {
    names.iter().map(|name| format!("\"{name}\"")).collect::<Vec<_>>().join(" | ")
}

/// Where `key = "value"` is written inside `span` of `text` (a cfg string as the file spells it:
/// quoted, in a literal or a basic string): the quoted value, quotes included; `None` when it is
/// spelled with escapes the scan does not follow.
fn value_span(text: &str, span: Range<usize>, key: &str, value: &str) -> Option<Range<usize>> {
    let raw = text.get(span.clone())?;
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let quote_len = |s: &str| {
        if s.starts_with("\\\"") {
            Some(2)
        } else if s.starts_with('"') {
            Some(1)
        } else {
            None
        }
    };
    for (at, _) in raw.match_indices(key) {
        if raw[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let Some(after_eq) = raw[at + key.len()..].trim_start().strip_prefix('=') else { continue };
        let quoted = after_eq.trim_start();
        let Some(opening) = quote_len(quoted) else { continue };
        let Some(after_value) = quoted[opening..].strip_prefix(value) else { continue };
        let Some(closing) = quote_len(after_value) else { continue };
        let start = span.start + (raw.len() - quoted.len());
        return Some(start..start + opening + value.len() + closing);
    }
    None
}

/// A parsed policy and the source it came from (each rule carries its spans).
#[derive(Debug, Clone)]
pub struct ParsedPolicy {
    /// The policy.
    pub policy: Policy,
    /// The source it was parsed from.
    pub source: PolicySource,
}

impl ParsedPolicy {
    /// A diagnostic pointing at `span` in this policy's file.
    pub fn diagnostic(&self, code: &'static str, message: impl Into<String>, span: Range<usize>) -> Diagnostic {
        Diagnostic::error(code, message, &self.source.path, &self.source.text, span)
    }
}

/// Parses and checks a policy's syntax and vocabulary. Target-level checks (coverage,
/// unreachable rules, provider support) come later, in [`crate::compile`].
///
/// ```
/// use smithy_tls_codegen::policy::{parse_policy, PolicySource};
///
/// let text = r#"
/// name = "tiny"
/// [runtime]
/// version = "0.1"
/// [fallback]
/// name = "all"
/// provider = "rustls-ring"
/// roots = "webpki"
/// "#;
/// let parsed = parse_policy(PolicySource { path: "tiny.toml".into(), text: text.into() }).unwrap();
/// assert_eq!(parsed.policy.fallback.stack.provider_name(), "rustls-ring");
/// ```
pub fn parse_policy(source: PolicySource) -> Result<ParsedPolicy, Diagnostics> {
    let mut parser = Parser { source: &source, diagnostics: Vec::new() };
    let doc = match Document::parse(source.text.clone()) {
        Ok(doc) => doc,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let message = e.message().to_owned();
            return Err(Diagnostics(vec![parser
                .diag("P001", format!("not valid TOML: {message}"), span)
                .with_help("fix the TOML syntax at the marked place")]));
        }
    };
    let root = doc.as_table();
    parser.check_keys(root, &["name", "description", "runtime", "features", "rule", "fallback"], "the top level");

    let name = parser.required_str(root, "name", root.span().unwrap_or(0..0), "the top level");
    let description = match root.get("description") {
        Some(_) => parser.required_str(root, "description", 0..0, "the top level"),
        None => None,
    };
    let runtime = parser.runtime(root);
    let legacy_rustls = parser.features(root);

    let rules = parser.rules(root);
    let fallback = parser.fallback(root);
    parser.check_unique_names(rules.iter().chain(fallback.as_ref()));

    if !parser.diagnostics.is_empty() {
        return Err(Diagnostics(parser.diagnostics));
    }
    let (Some(name), Some(runtime), Some(fallback)) = (name, runtime, fallback) else {
        return Err(Diagnostics(parser.diagnostics));
    };
    let content_hash = format!("{:x}", Sha256::digest(source.text.as_bytes()));
    let policy = Policy { name, description, runtime, legacy_rustls, rules, fallback, content_hash };
    Ok(ParsedPolicy { policy, source })
}

/// Which kind of table a rule is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RuleKind {
    /// A `[[rule]]`, with a `cfg`.
    Rule,
    /// The `[fallback]`, without one.
    Fallback,
}

struct Parser<'a> {
    source: &'a PolicySource,
    diagnostics: Vec<Diagnostic>,
}

impl Parser<'_> {
    /// The `[[rule]]` tables.
    fn rules(&mut self, root: &Table) -> Vec<Rule> {
        match root.get("rule") {
            None => Vec::new(),
            Some(Item::ArrayOfTables(tables)) => {
                tables.iter().filter_map(|table| self.rule(table, RuleKind::Rule)).collect()
            }
            Some(other) => {
                let d = self
                    .diag("P002", "`rule` must be an array of tables", other.span().unwrap_or(0..0))
                    .with_help("write each rule as a `[[rule]]` table");
                self.push(d);
                Vec::new()
            }
        }
    }

    /// The `[fallback]` table, which every policy must have.
    fn fallback(&mut self, root: &Table) -> Option<Rule> {
        match root.get("fallback") {
            Some(Item::Table(table)) => self.rule(table, RuleKind::Fallback),
            Some(other) => {
                let d = self
                    .diag("P002", "`fallback` must be a table", other.span().unwrap_or(0..0))
                    .with_help("write it as a `[fallback]` table with name, provider and roots");
                self.push(d);
                None
            }
            None => {
                let end = self.source.text.trim_end().len();
                let d = self
                    .diag("P005", "the policy has no `[fallback]` rule", end..end)
                    .with_help("add a `[fallback]` table (name, provider, roots) for targets no rule matches");
                self.push(d);
                None
            }
        }
    }

    /// Rule names must be unique: they name tables and rows in reports.
    fn check_unique_names<'r>(&mut self, rules: impl Iterator<Item = &'r Rule>) {
        let mut seen: Vec<&str> = Vec::new();
        for rule in rules {
            if seen.contains(&rule.name.as_str()) {
                let d = self
                    .diag("P006", format!("rule name `{}` is used twice", rule.name), rule.spans.table.clone())
                    .with_help("give every rule a distinct name");
                self.push(d);
            }
            seen.push(&rule.name);
        }
    }

    fn diag(&self, code: &'static str, message: impl Into<String>, span: Range<usize>) -> Diagnostic {
        Diagnostic::error(code, message, &self.source.path, &self.source.text, span)
    }

    fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn check_keys(&mut self, table: &Table, allowed: &[&str], where_: &str) {
        for (key, item) in table.iter() {
            if !allowed.contains(&key) {
                let span = table.key(key).and_then(|k| k.span()).or_else(|| item.span()).unwrap_or(0..0);
                let d = self
                    .diag("P002", format!("unknown key `{key}` in {where_}"), span)
                    .with_help(format!("allowed keys here: {}", allowed.join(", ")));
                self.push(d);
            }
        }
    }

    fn string_value<'t>(&mut self, table: &'t Table, key: &str, where_: &str) -> Option<(&'t str, Range<usize>)> {
        let item = table.get(key)?;
        let span = item.span().unwrap_or(0..0);
        match item.as_value() {
            Some(Value::String(s)) => Some((s.value().as_str(), span)),
            _ => {
                let d = self
                    .diag("P002", format!("`{key}` in {where_} must be a string"), span)
                    .with_help(format!("write it as {key} = \"...\""));
                self.push(d);
                None
            }
        }
    }

    fn required_str(&mut self, table: &Table, key: &str, table_span: Range<usize>, where_: &str) -> Option<String> {
        if table.get(key).is_none() {
            let d = self
                .diag("P004", format!("missing `{key}` in {where_}"), table_span)
                .with_help(format!("add {key} = \"...\""));
            self.push(d);
            return None;
        }
        let (value, span) = self.string_value(table, key, where_)?;
        if value.trim().is_empty() {
            let d = self.diag("P004", format!("`{key}` in {where_} is empty"), span);
            self.push(d);
            return None;
        }
        Some(value.to_owned())
    }

    /// P018: each `key = "value"` of a rule's cfg that no builtin rustc target has (a misspelling,
    /// or another tool's name for a platform), pointing at its first place inside `span`.
    fn check_cfg_values(&mut self, cfg: &Cfg, span: Range<usize>) {
        let mut reported: Vec<(TargetKey, &str)> = Vec::new();
        for (key, value) in cfg.key_values() {
            if reported.contains(&(key, value)) || cfg_values::is_known(key, value) {
                continue;
            }
            reported.push((key, value));
            let place = value_span(&self.source.text, span.clone(), key.name(), value).unwrap_or(span.clone());
            let help = match cfg_values::nearest_known(key, value) {
                Some(near) => format!("did you mean {} = \"{near}\"?", key.name()),
                None => {
                    let known: Vec<String> = cfg_values::known_values(key).iter().map(|v| format!("\"{v}\"")).collect();
                    format!("the {} values of rustc's builtin targets: {}", key.name(), known.join(", "))
                }
            };
            let d = self
                .diag("P018", format!("no builtin rustc target has {} = {value:?}", key.name()), place)
                .with_help(help);
            self.push(d);
        }
    }

    fn runtime(&mut self, root: &Table) -> Option<RuntimeDependency> {
        let Some(item) = root.get("runtime") else {
            let d = self
                .diag("P004", "missing `[runtime]` table", 0..0)
                .with_help("add `[runtime]` with `version = \"...\"` (and `path`, relative to the SDK root, for side-by-side trees)");
            self.push(d);
            return None;
        };
        let Some(table) = item.as_table() else {
            let d = self.diag("P002", "`runtime` must be a table", item.span().unwrap_or(0..0));
            self.push(d);
            return None;
        };
        self.check_keys(table, &["package", "version", "path"], "[runtime]");
        let span = table.span().unwrap_or(0..0);
        let version = self.required_str(table, "version", span, "[runtime]");
        let package = match table.get("package") {
            Some(_) => self.required_str(table, "package", 0..0, "[runtime]"),
            None => Some(DEFAULT_RUNTIME_PACKAGE.to_owned()),
        };
        let path = match self.string_value(table, "path", "[runtime]") {
            Some((p, span)) => {
                if Path::new(p).is_absolute() || p.contains('\\') {
                    let d = self
                        .diag("P007", "`path` must be relative to the SDK root, with `/` separators", span)
                        .with_help(
                            "e.g. path = \"smithy-default-tls\" when the runtime crate sits beside the SDK crates",
                        );
                    self.push(d);
                }
                Some(p.trim_end_matches('/').to_owned())
            }
            None => None,
        };
        Some(RuntimeDependency { package: package?, version: version?, path })
    }

    fn features(&mut self, root: &Table) -> LegacyRustls {
        let Some(item) = root.get("features") else { return LegacyRustls::Keep };
        let Some(table) = item.as_table() else {
            let d = self.diag("P002", "`features` must be a table", item.span().unwrap_or(0..0));
            self.push(d);
            return LegacyRustls::Keep;
        };
        self.check_keys(table, &["legacy-rustls"], "[features]");
        match self.string_value(table, "legacy-rustls", "[features]") {
            None => LegacyRustls::Keep,
            Some(("keep", _)) => LegacyRustls::Keep,
            Some(("alias-default", _)) => LegacyRustls::AliasDefault,
            Some((other, span)) => {
                let d = self
                    .diag("P003", format!("unknown legacy-rustls mode `{other}`"), span)
                    .with_help("use \"keep\" (leave the feature as generated) or \"alias-default\" (make it a synonym of default-https-client)");
                self.push(d);
                LegacyRustls::Keep
            }
        }
    }

    /// One `[[rule]]` or the `[fallback]`: its keys, name, cfg, provider, roots, empty-store and
    /// note, each checked in that order; `None` when any of them was refused (already reported).
    fn rule(&mut self, table: &Table, kind: RuleKind) -> Option<Rule> {
        let (where_, allowed): (&str, &[&str]) = match kind {
            RuleKind::Rule => ("[[rule]]", &["name", "cfg", "provider", "roots", "empty-store", "note"]),
            RuleKind::Fallback => ("[fallback]", &["name", "provider", "roots", "empty-store", "note"]),
        };
        self.check_keys(table, allowed, where_);
        let table_span = table.span().unwrap_or(0..0);
        let name = self.required_str(table, "name", table_span.clone(), where_);
        let mut spans = RuleSpans { table: table_span, ..RuleSpans::default() };
        let scope = match kind {
            RuleKind::Fallback => Some(Scope::Fallback),
            RuleKind::Rule => self.rule_cfg(table, where_, &mut spans).map(Scope::When),
        };
        let provider = self.rule_provider(table, where_, &mut spans);
        let roots = self.rule_roots(table, where_, provider, &mut spans);
        let empty_store = self.empty_store(table, where_, provider, roots, &mut spans);
        let note = self.string_value(table, "note", where_).map(|(text, _)| text.to_owned());

        let stack = match provider? {
            Named::Stack(stack) => stack,
            Named::Tls(provider) => Stack::Tls { provider, roots: roots?, empty_store: empty_store? },
        };
        Some(Rule { name: name?, scope: scope?, stack, note, spans })
    }

    /// A `[[rule]]`'s `cfg`: required (P004), a cfg predicate (P010), with values some builtin
    /// target has (P018, reported without refusing the rule).
    fn rule_cfg(&mut self, table: &Table, where_: &str, spans: &mut RuleSpans) -> Option<Cfg> {
        let text = self.required_str(table, "cfg", spans.table.clone(), where_);
        spans.cfg = table.get("cfg").and_then(|i| i.span());
        let place = spans.cfg.clone().unwrap_or(spans.table.clone());
        match Cfg::parse(&text?) {
            Ok(cfg) => {
                self.check_cfg_values(&cfg, place);
                Some(cfg)
            }
            Err(message) => {
                let d = self
                    .diag("P010", format!("invalid cfg predicate: {message}"), place)
                    .with_help("write a Rust cfg predicate over target_* keys, e.g. 'cfg(all(target_os = \"linux\", target_env = \"gnu\"))'");
                self.push(d);
                None
            }
        }
    }

    /// The rule's `provider`: a TLS provider, or a stack without one ("none", "wasi-http"); `None`
    /// when it is missing (P004), not a string (P002) or unknown (P003).
    fn rule_provider(&mut self, table: &Table, where_: &str, spans: &mut RuleSpans) -> Option<Named> {
        let provider_names = || Provider::ALL.map(Provider::name).into_iter().chain([Stack::WASI_HTTP, Stack::NONE]);
        let Some((value, span)) = self.string_value(table, "provider", where_) else {
            if table.get("provider").is_none() {
                let names: Vec<&str> = provider_names().collect();
                let d = self
                    .diag("P004", format!("missing `provider` in {where_}"), spans.table.clone())
                    .with_help(format!("add provider = {}", alternatives(&names)));
                self.push(d);
            }
            return None;
        };
        spans.provider = Some(span.clone());
        match Provider::from_name(value) {
            Some(p) => Some(Named::Tls(p)),
            None if value == Stack::NONE => Some(Named::Stack(Stack::None)),
            None if value == Stack::WASI_HTTP => Some(Named::Stack(Stack::WasiHttp)),
            None => {
                let d = self
                    .diag("P003", format!("unknown provider `{value}`"), span)
                    .with_help(format!("use one of: {}", provider_names().collect::<Vec<_>>().join(", ")));
                self.push(d);
                None
            }
        }
    }

    /// The rule's `roots`, given its `provider` (as [`Self::rule_provider`] read it): required with
    /// a TLS provider (P004), refused with "none" and "wasi-http" (P008), known (P003), and one the
    /// provider can use (P009). `None` when absent or refused.
    fn rule_roots(
        &mut self,
        table: &Table,
        where_: &str,
        provider: Option<Named>,
        spans: &mut RuleSpans,
    ) -> Option<Roots> {
        let Some((value, span)) = self.string_value(table, "roots", where_) else {
            if matches!(provider, Some(Named::Tls(_))) && table.get("roots").is_none() {
                let names = Roots::ALL.map(Roots::name);
                let d = self
                    .diag("P004", format!("missing `roots` in {where_}"), spans.table.clone())
                    .with_help(format!("add roots = {}", alternatives(&names)));
                self.push(d);
            }
            return None;
        };
        if let Some(Named::Stack(stack)) = provider {
            let why = match stack {
                Stack::WasiHttp => " (the host verifies with its own trust store)",
                _ => "",
            };
            let d = self
                .diag("P008", format!("`roots` has no meaning with provider \"{}\"{why}", stack.provider_name()), span)
                .with_help("remove `roots` from this rule");
            self.push(d);
            return None;
        }
        spans.roots = Some(span.clone());
        let Some(roots) = Roots::from_name(value) else {
            let d = self
                .diag("P003", format!("unknown roots `{value}`"), span)
                .with_help(format!("use one of: {}", Roots::ALL.map(Roots::name).join(", ")));
            self.push(d);
            return None;
        };
        match provider {
            // The provider the rule named (s2n-tls or s2n-tls-fips), not its family.
            Some(Named::Tls(named)) if !named.supports_roots(roots) => {
                let named = named.name();
                let d = self
                    .diag("P009", format!("roots \"{roots}\" needs a rustls provider, not {named}"), span)
                    .with_help(format!("{named} reads the OS store itself: use \"native\", or a rustls provider"));
                self.push(d);
                None
            }
            _ => Some(roots),
        }
    }

    /// The rule's `empty-store` (what `native` roots do where the store yields no certificate):
    /// [`EmptyStore::Fail`] when absent; meaningless, and refused, without a provider or with
    /// roots that read no store. `None` when it is refused or unknown.
    fn empty_store(
        &mut self,
        table: &Table,
        where_: &str,
        provider: Option<Named>,
        roots: Option<Roots>,
        spans: &mut RuleSpans,
    ) -> Option<EmptyStore> {
        let Some((value, span)) = self.string_value(table, "empty-store", where_) else {
            // Absent (the default), or not a string (already reported).
            return table.get("empty-store").is_none().then_some(EmptyStore::Fail);
        };
        spans.empty_store = Some(span.clone());
        let Some(empty_store) = EmptyStore::from_name(value) else {
            let names = EmptyStore::ALL.map(EmptyStore::name);
            let d = self.diag("P003", format!("unknown empty-store `{value}`"), span).with_help(format!(
                "use one of: {} (\"fail\", the default: connections fail where the native store is empty; \
                     \"webpki\": the bundled roots stand in for it)",
                names.join(", ")
            ));
            self.push(d);
            return None;
        };
        let refused = match (provider, roots) {
            (Some(Named::Stack(stack)), _) => Some(format!("provider \"{}\"", stack.provider_name())),
            (_, Some(roots)) if roots != Roots::Native => Some(format!("roots \"{roots}\"")),
            _ => None,
        };
        if let Some(with) = refused {
            let d = self
                .diag(
                    "P008",
                    format!("`empty-store` has no meaning with {with}: only `native` roots read a store"),
                    span,
                )
                .with_help("remove `empty-store` from this rule, or use roots = \"native\"");
            self.push(d);
            return None;
        }
        Some(empty_store)
    }
}
