//! Targets: cfg predicates, first-match rules compiled into mutually exclusive predicates, and
//! the proof that a policy serves every builtin rustc target exactly once.

use std::collections::BTreeMap;

use cfg_expr::expr::{Predicate, TargetPredicate};
use cfg_expr::targets::{TargetInfo, ALL_BUILTINS};
use cfg_expr::Expression;
use syn::punctuated::Punctuated;
use syn::{Meta, Token};

use crate::diag::Diagnostics;
use crate::model::{CompiledPolicy, CompiledRule, Provider};
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

/// cfg keys a policy may test: those that are fixed per target and known to the builtin list.
const TARGET_KEYS: &[&str] = &[
    "target_os",
    "target_family",
    "target_env",
    "target_arch",
    "target_vendor",
    "target_pointer_width",
    "target_endian",
    "target_abi",
];

/// Parses a cfg predicate (with or without the surrounding `cfg(...)`) and prints it in one
/// canonical spelling: `all(target_os = "linux", not(target_env = "musl"))`.
///
/// Only target keys, `unix`, `windows`, `all`, `any` and `not` are accepted: a policy decides per
/// target, so features, `test` or `debug_assertions` have no place in it.
///
/// ```
/// use smithy_tls_codegen::targets::normalize_predicate;
/// assert_eq!(
///     normalize_predicate("cfg( all(target_os=\"linux\" ,target_env = \"gnu\") )").unwrap(),
///     "all(target_os = \"linux\", target_env = \"gnu\")"
/// );
/// assert!(normalize_predicate("feature = \"x\"").is_err());
/// ```
pub fn normalize_predicate(text: &str) -> Result<String, String> {
    let meta: Meta = syn::parse_str(text.trim()).map_err(|e| format!("{e} in `{text}`"))?;
    let meta = match &meta {
        Meta::List(list) if list.path.is_ident("cfg") => {
            let inner: Punctuated<Meta, Token![,]> =
                list.parse_args_with(Punctuated::parse_terminated).map_err(|e| e.to_string())?;
            if inner.len() != 1 {
                return Err("cfg(...) takes exactly one predicate".to_owned());
            }
            inner.into_iter().next().ok_or_else(|| "empty cfg(...)".to_owned())?
        }
        _ => meta,
    };
    let printed = print_meta(&meta)?;
    // Cross-check with cfg-expr, which evaluates it later.
    Expression::parse(&printed).map_err(|e| e.to_string())?;
    Ok(printed)
}

fn print_meta(meta: &Meta) -> Result<String, String> {
    let name = meta.path().get_ident().map(|i| i.to_string()).ok_or_else(|| "expected a plain name".to_owned())?;
    match meta {
        Meta::Path(_) => match name.as_str() {
            "unix" | "windows" => Ok(name),
            other => Err(format!("`{other}` is not a target property; use target_* keys, `unix` or `windows`")),
        },
        Meta::NameValue(nv) => {
            if !TARGET_KEYS.contains(&name.as_str()) {
                return Err(format!(
                    "`{name}` cannot decide a target's TLS stack; use one of: {}",
                    TARGET_KEYS.join(", ")
                ));
            }
            match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Ok(format!("{name} = \"{}\"", s.value())),
                _ => Err(format!("the value of `{name}` must be a string literal")),
            }
        }
        Meta::List(list) => {
            let args: Punctuated<Meta, Token![,]> =
                list.parse_args_with(Punctuated::parse_terminated).map_err(|e| e.to_string())?;
            let printed = args.iter().map(print_meta).collect::<Result<Vec<_>, _>>()?;
            match name.as_str() {
                "all" | "any" => Ok(format!("{name}({})", printed.join(", "))),
                "not" if printed.len() == 1 => Ok(format!("not({})", printed[0])),
                "not" => Err("not(...) takes exactly one predicate".to_owned()),
                other => Err(format!("unknown combinator `{other}`; use all, any or not")),
            }
        }
    }
}

/// Whether a normalized predicate holds for a builtin target.
pub fn matches(predicate: &str, target: &TargetInfo) -> bool {
    match Expression::parse(predicate) {
        Ok(expr) => expr.eval(|p| match p {
            Predicate::Target(tp) => tp.matches(target),
            _ => false,
        }),
        Err(_) => false,
    }
}

/// Evaluates a normalized predicate against a `rustc --print cfg` listing (`key="value"` and bare
/// flag lines). Used to check the builtin list against the compiler.
pub fn matches_rustc_cfg(predicate: &str, rustc_cfg: &str) -> Result<bool, String> {
    let expr = Expression::parse(predicate).map_err(|e| e.to_string())?;
    let has = |key: &str, value: &str| rustc_cfg.lines().any(|l| l.trim() == format!("{key}=\"{value}\""));
    Ok(expr.eval(|p| match p {
        Predicate::Target(tp) => match tp {
            TargetPredicate::Os(v) => has("target_os", v.as_str()),
            TargetPredicate::Family(v) => {
                has("target_family", v.as_str()) || rustc_cfg.lines().any(|l| l.trim() == v.as_str())
            }
            TargetPredicate::Env(v) => has("target_env", v.as_str()),
            TargetPredicate::Arch(v) => has("target_arch", v.as_str()),
            TargetPredicate::Vendor(v) => has("target_vendor", v.as_str()),
            TargetPredicate::Abi(v) => has("target_abi", v.as_str()),
            TargetPredicate::PointerWidth(w) => has("target_pointer_width", &w.to_string()),
            TargetPredicate::Endian(e) => has("target_endian", &format!("{e:?}")),
            _ => false,
        },
        _ => false,
    }))
}

fn any_of(predicates: &[String]) -> String {
    match predicates {
        [one] => one.clone(),
        many => format!("any({})", many.join(", ")),
    }
}

/// Whether parentheses in `text` are balanced at every prefix (so it is a list of whole items).
fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    let mut in_string = false;
    for c in text.chars() {
        match c {
            '"' => in_string = !in_string,
            '(' if !in_string => depth += 1,
            ')' if !in_string => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0 && !in_string
}

/// The exclusive predicate for the rule at `index` given all rules' own predicates.
fn exclusive(own: Option<&str>, earlier: &[String]) -> String {
    match (own, earlier.is_empty()) {
        (Some(own), true) => own.to_owned(),
        (Some(own), false) => {
            // Splice a leading all(..) so the result reads all(a, b, not(..)), not all(all(a, b), not(..)).
            let own = own
                .strip_prefix("all(")
                .and_then(|rest| rest.strip_suffix(')'))
                .filter(|inner| !inner.trim().is_empty() && balanced(inner))
                .unwrap_or(own);
            format!("all({own}, not({}))", any_of(earlier))
        }
        (None, true) => "all()".to_owned(),
        (None, false) => format!("not({})", any_of(earlier)),
    }
}

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
        Provider::None => Ok(()),
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
/// assert!(roots_support(Some(Roots::PlatformVerifier), mac).is_ok());
/// assert!(roots_support(Some(Roots::PlatformVerifier), android).unwrap_err().contains("JNI"));
/// assert!(roots_support(Some(Roots::Native), android).is_ok());
/// ```
pub fn roots_support(roots: Option<crate::model::Roots>, target: &TargetInfo) -> Result<(), &'static str> {
    let os = target.os.as_ref().map(|o| o.as_str());
    match roots {
        Some(crate::model::Roots::PlatformVerifier) if os == Some("android") => {
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
    let all_rules: Vec<_> = policy.rules.iter().chain(std::iter::once(&policy.fallback)).collect();
    let mut diagnostics = Vec::new();
    let mut compiled = Vec::new();
    let mut earlier: Vec<String> = Vec::new();
    for (index, rule) in all_rules.iter().enumerate() {
        let predicate = exclusive(rule.cfg.as_deref(), &earlier);
        let spans = &parsed.spans[index];
        let targets: Vec<&TargetInfo> = ALL_BUILTINS.iter().filter(|t| matches(&predicate, t)).collect();
        if targets.is_empty() && rule.cfg.is_some() {
            let own = rule.cfg.as_deref().unwrap_or_default();
            let alone = ALL_BUILTINS.iter().filter(|t| matches(own, t)).count();
            let span = spans.cfg.clone().unwrap_or(spans.table.clone());
            let d = if alone == 0 {
                parsed
                    .diagnostic("P012", format!("rule `{}` matches no builtin rustc target", rule.name), span)
                    .with_help("check the spelling of the cfg values (e.g. target_os = \"macos\", not \"darwin\")")
            } else {
                let covering: Vec<&str> = all_rules[..index]
                    .iter()
                    .filter(|r| {
                        ALL_BUILTINS.iter().any(|t| matches(own, t) && r.cfg.as_deref().is_some_and(|c| matches(c, t)))
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
        let unsupported: Vec<(&str, &str)> = targets
            .iter()
            .filter_map(|t| provider_support(rule.provider, t).err().map(|why| (t.triple.as_str(), why)))
            .collect();
        let span = spans.provider.clone().unwrap_or(spans.table.clone());
        let what = format!("provider `{}`", rule.provider);
        diagnostics.extend(cannot_serve(parsed, "P013", &what, &rule.name, &unsupported, span));
        if let Some(roots) = rule.roots {
            let refused: Vec<(&str, &str)> = targets
                .iter()
                .filter_map(|t| roots_support(Some(roots), t).err().map(|why| (t.triple.as_str(), why)))
                .collect();
            let span = spans.roots.clone().unwrap_or(spans.table.clone());
            diagnostics.extend(cannot_serve(parsed, "P016", &format!("roots `{roots}`"), &rule.name, &refused, span));
        }
        compiled.push(CompiledRule {
            name: rule.name.clone(),
            predicate,
            provider: rule.provider,
            roots: rule.roots,
            targets: targets.iter().map(|t| t.triple.as_str().to_owned()).collect(),
        });
        if let Some(own) = &rule.cfg {
            earlier.push(own.clone());
        }
    }

    // Coverage proof: each builtin target is served by exactly one compiled rule.
    for target in ALL_BUILTINS {
        let serving: Vec<&str> =
            compiled.iter().filter(|r| matches(&r.predicate, target)).map(|r| r.name.as_str()).collect();
        if serving.len() != 1 {
            let span = parsed.spans.last().map(|s| s.table.clone()).unwrap_or(0..0);
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
    /// The provider it gets.
    pub provider: Provider,
    /// The roots it gets.
    pub roots: Option<crate::model::Roots>,
}

/// Every builtin target with the rule that serves it, sorted by triple.
pub fn matrix(compiled: &CompiledPolicy) -> Vec<MatrixRow> {
    let mut rows: BTreeMap<&str, MatrixRow> = BTreeMap::new();
    for rule in &compiled.rules {
        for target in &rule.targets {
            rows.insert(
                target,
                MatrixRow {
                    target: target.clone(),
                    rule: rule.name.clone(),
                    provider: rule.provider,
                    roots: rule.roots,
                },
            );
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
    let policy = &compiled.policy;
    let mut considered = Vec::new();
    for rule in policy.rules.iter().chain(std::iter::once(&policy.fallback)) {
        let hit = rule.cfg.as_deref().is_none_or(|c| matches(c, target));
        considered.push((rule.name.clone(), rule.cfg.clone(), hit));
        if hit {
            return Some(Explanation {
                target: triple.to_owned(),
                row: MatrixRow {
                    target: triple.to_owned(),
                    rule: rule.name.clone(),
                    provider: rule.provider,
                    roots: rule.roots,
                },
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

/// Every builtin target triple, sorted.
pub fn builtin_triples() -> impl Iterator<Item = &'static str> {
    ALL_BUILTINS.iter().map(|t| t.triple.as_str())
}
