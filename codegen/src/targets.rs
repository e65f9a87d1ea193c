//! Targets: first-match rules compiled into mutually exclusive predicates, what each provider
//! and roots choice can serve, and the proof that a policy serves every builtin rustc target
//! exactly once.

use std::collections::BTreeMap;

use cfg_expr::targets::{TargetInfo, ALL_BUILTINS};

use crate::cfg::Cfg;
use crate::diag::Diagnostics;
use crate::model::{CompiledPolicy, CompiledRule, Provider, Roots, Stack};
use crate::policy::ParsedPolicy;

/// Well-known targets: named in generated docs when a rule serves them, and the targets whose
/// dependency graphs the end-to-end tests check for every preset.
pub const NOTABLE_TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "x86_64-pc-windows-gnu",
    "aarch64-linux-android",
    "aarch64-apple-ios",
    "armv7-unknown-linux-gnueabihf",
    "riscv64gc-unknown-linux-gnu",
    "wasm32-unknown-unknown",
    "wasm32-wasip2",
];

/// Whether `provider` can serve `target`, and if not, why.
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple;
/// use smithy_tls_codegen::model::Provider;
/// use smithy_tls_codegen::targets::provider_support;
///
/// let windows = get_builtin_target_by_triple("x86_64-pc-windows-msvc").unwrap();
/// assert!(provider_support(Provider::RustlsAwsLc, windows).is_ok());
/// assert!(provider_support(Provider::S2nTls, windows).is_err());
/// ```
pub fn provider_support(provider: Provider, target: &TargetInfo) -> Result<(), &'static str> {
    let os = target.os.as_ref().map(|o| o.as_str());
    let wasm = target.families.contains(&cfg_expr::targets::Family::wasm);
    match provider {
        _ if wasm => Err("wasm targets have no sockets for the runtime's tokio/hyper stack; use provider \"none\""),
        Provider::S2nTls if !matches!(os, Some("linux") | Some("macos")) => {
            Err("s2n-tls builds only for Linux and macOS")
        }
        _ => Ok(()),
    }
}

/// Whether trust roots can be used on a target, and if not, why.
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple;
/// use smithy_tls_codegen::model::Roots;
/// use smithy_tls_codegen::targets::roots_support;
///
/// let mac = get_builtin_target_by_triple("aarch64-apple-darwin").unwrap();
/// let android = get_builtin_target_by_triple("aarch64-linux-android").unwrap();
/// assert!(roots_support(Roots::PlatformVerifier, mac).is_ok());
/// assert!(roots_support(Roots::PlatformVerifier, android).unwrap_err().contains("JNI"));
/// assert!(roots_support(Roots::Native, android).is_ok());
/// ```
pub fn roots_support(roots: Roots, target: &TargetInfo) -> Result<(), &'static str> {
    let os = target.os.as_ref().map(|o| o.as_str());
    match roots {
        Roots::PlatformVerifier if os == Some("android") => {
            Err("on Android the platform verifier needs the application's JNI context, which generated code cannot \
             provide; use roots \"webpki\" or \"native\" there")
        }
        _ => Ok(()),
    }
}

/// The error for a rule whose provider or roots (`what`) cannot serve some of the targets it
/// gets, naming up to four of them and why; `None` when `refused` is empty.
fn cannot_serve(
    parsed: &ParsedPolicy,
    code: &'static str,
    what: &str,
    rule: &str,
    refused: &[(&str, &str)],
    span: std::ops::Range<usize>,
) -> Option<crate::diag::Diagnostic> {
    let (_, why) = refused.first()?;
    let sample: Vec<&str> = refused.iter().take(4).map(|(t, _)| *t).collect();
    let more = refused.len() - sample.len();
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let message = format!(
        "{what} of rule `{rule}` cannot serve {} of the targets the rule gets: {}{more}",
        refused.len(),
        sample.join(", ")
    );
    Some(
        parsed
            .diagnostic(code, message, span)
            .with_help(format!("{why}; add an earlier rule for those targets or narrow this rule's cfg")),
    )
}

/// Compiles a parsed policy: exclusive predicates, the target matrix, and every target-level
/// check (rules that can never match, providers that cannot serve a target they match, and the
/// coverage proof). Errors point into the policy file.
pub fn compile(parsed: &ParsedPolicy) -> Result<CompiledPolicy, Diagnostics> {
    let policy = &parsed.policy;
    let all_rules: Vec<_> = policy.all_rules().collect();
    let mut diagnostics = Vec::new();
    let mut compiled = Vec::new();
    let mut earlier: Vec<Cfg> = Vec::new();
    for (index, rule) in all_rules.iter().enumerate() {
        let own = rule.scope.cfg();
        let predicate = Cfg::first_match(own, &earlier);
        let spans = &rule.spans;
        let targets: Vec<&TargetInfo> = ALL_BUILTINS.iter().filter(|t| predicate.matches(t)).collect();
        if let (true, Some(own)) = (targets.is_empty(), own) {
            let alone = ALL_BUILTINS.iter().filter(|t| own.matches(t)).count();
            let span = spans.cfg.clone().unwrap_or(spans.table.clone());
            let d = if alone == 0 {
                parsed
                    .diagnostic("P012", format!("rule `{}` matches no builtin rustc target", rule.name), span)
                    .with_help("check the spelling of the cfg values (e.g. target_os = \"macos\", not \"darwin\")")
            } else {
                let covering: Vec<&str> = all_rules[..index]
                    .iter()
                    .filter(|r| {
                        ALL_BUILTINS.iter().any(|t| own.matches(t) && r.scope.cfg().is_some_and(|c| c.matches(t)))
                    })
                    .map(|r| r.name.as_str())
                    .collect();
                parsed
                    .diagnostic(
                        "P011",
                        format!(
                            "rule `{}` can never match: earlier rules ({}) already cover all {alone} of its targets",
                            rule.name,
                            covering.join(", ")
                        ),
                        span,
                    )
                    .with_help("move this rule above the rules that cover it, or remove it")
            };
            diagnostics.push(d);
        }
        if let Stack::Tls { provider, roots } = rule.stack {
            let unsupported: Vec<(&str, &str)> = targets
                .iter()
                .filter_map(|t| provider_support(provider, t).err().map(|why| (t.triple.as_str(), why)))
                .collect();
            let span = spans.provider.clone().unwrap_or(spans.table.clone());
            let what = format!("provider `{provider}`");
            diagnostics.extend(cannot_serve(parsed, "P013", &what, &rule.name, &unsupported, span));
            let refused: Vec<(&str, &str)> = targets
                .iter()
                .filter_map(|t| roots_support(roots, t).err().map(|why| (t.triple.as_str(), why)))
                .collect();
            let span = spans.roots.clone().unwrap_or(spans.table.clone());
            diagnostics.extend(cannot_serve(parsed, "P016", &format!("roots `{roots}`"), &rule.name, &refused, span));
        }
        compiled.push(CompiledRule {
            name: rule.name.clone(),
            predicate,
            stack: rule.stack,
            targets: targets.iter().map(|t| t.triple.as_str().to_owned()).collect(),
        });
        earlier.extend(own.cloned());
    }

    // Coverage proof: each builtin target is served by exactly one compiled rule.
    for target in ALL_BUILTINS {
        let serving: Vec<&str> =
            compiled.iter().filter(|r| r.predicate.matches(target)).map(|r| r.name.as_str()).collect();
        if serving.len() != 1 {
            let span = policy.fallback.spans.table.clone();
            diagnostics.push(
                parsed
                    .diagnostic(
                        "P015",
                        format!(
                            "target {} is served by {} rules ({})",
                            target.triple.as_str(),
                            serving.len(),
                            serving.join(", ")
                        ),
                        span,
                    )
                    .with_help("this is a bug in smithy-tls: please report it with the policy file"),
            );
        }
    }

    if diagnostics.is_empty() {
        Ok(CompiledPolicy { policy: policy.clone(), rules: compiled })
    } else {
        Err(Diagnostics(diagnostics))
    }
}

/// One row of the target matrix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MatrixRow {
    /// The rustc target triple.
    pub target: String,
    /// The rule that serves it.
    pub rule: String,
    /// What it gets.
    #[serde(flatten)]
    pub stack: Stack,
}

/// Every builtin target with the rule that serves it, sorted by triple.
pub fn matrix(compiled: &CompiledPolicy) -> Vec<MatrixRow> {
    let mut rows: BTreeMap<&str, MatrixRow> = BTreeMap::new();
    for rule in &compiled.rules {
        for target in &rule.targets {
            rows.insert(target, MatrixRow { target: target.clone(), rule: rule.name.clone(), stack: rule.stack });
        }
    }
    rows.into_values().collect()
}

/// Why a target gets what it gets: each rule in order, whether its own cfg matches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explanation {
    /// The target triple asked about.
    pub target: String,
    /// The winning row.
    pub row: MatrixRow,
    /// `(rule name, its own cfg, matches)` for every rule up to and including the winner.
    pub considered: Vec<(String, Option<String>, bool)>,
}

/// Explains one target, or `None` when cfg-expr does not know the triple.
pub fn explain(compiled: &CompiledPolicy, triple: &str) -> Option<Explanation> {
    let target = cfg_expr::targets::get_builtin_target_by_triple(triple)?;
    let mut considered = Vec::new();
    for rule in compiled.policy.all_rules() {
        let hit = rule.scope.cfg().is_none_or(|c| c.matches(target));
        considered.push((rule.name.clone(), rule.scope.cfg().map(Cfg::to_string), hit));
        if hit {
            return Some(Explanation {
                target: triple.to_owned(),
                row: MatrixRow { target: triple.to_owned(), rule: rule.name.clone(), stack: rule.stack },
                considered,
            });
        }
    }
    None
}

/// How many builtin targets the compiled policy is checked against.
pub fn builtin_target_count() -> usize {
    ALL_BUILTINS.len()
}
