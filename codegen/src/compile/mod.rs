//! Compiling a policy: first-match rules become mutually exclusive predicates, checked against
//! what each provider and roots choice can serve (`crate::platforms`), with the proof that the
//! policy serves every builtin rustc target that can host an SDK exactly once. What the rewrite
//! takes from a compiled policy is decided here too: the manifest's target tables
//! ([`manifest_tables`]) and how the emitted module picks a rule ([`module_selection`]).

mod selection;
mod tables;

use cfg_expr::targets::{TargetInfo, ALL_BUILTINS};

pub use self::selection::{module_selection, ModuleSelection};
pub use self::tables::manifest_tables;
use crate::cfg::Cfg;
use crate::diag::{Diagnostic, Diagnostics};
use crate::model::{CompiledPolicy, CompiledRule, Roots, Rule, Stack};
use crate::platforms::{provider_support, roots_support, wasi_http_support};
use crate::policy::ParsedPolicy;
use crate::targets::sdk_targets;

/// Compiles a parsed policy: exclusive predicates, the targets each rule serves, and every
/// target-level check (rules that can never match, providers that cannot serve a target they
/// match, and the coverage proof). Errors point into the policy file.
///
/// ```
/// use smithy_tls_codegen::{compile, policy, presets};
/// let compiled = compile::compile(&policy::parse_policy(presets::preset("portable").unwrap()).unwrap()).unwrap();
/// assert!(compiled.rules.iter().any(|rule| rule.targets.iter().any(|t| t == "x86_64-unknown-linux-gnu")));
/// ```
pub fn compile(parsed: &ParsedPolicy) -> Result<CompiledPolicy, Diagnostics> {
    let rules: Vec<&Rule> = parsed.policy.all_rules().collect();
    // Which builtin targets can host an SDK never changes: worked out once, not per rule.
    let hosts: Vec<&TargetInfo> = sdk_targets().collect();
    let mut diagnostics = Vec::new();
    let mut compiled = Vec::new();
    let mut earlier: Vec<Cfg> = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        let own = rule.scope.cfg();
        let predicate = Cfg::exclusive(own, &earlier);
        let targets: Vec<&TargetInfo> = hosts.iter().copied().filter(|t| predicate.matches(t)).collect();
        if let (true, Some(own)) = (targets.is_empty(), own) {
            diagnostics.push(never_matches(parsed, &rules[..index], rule, own, &hosts));
        }
        diagnostics.extend(cannot_serve_all(parsed, rule, &targets));
        compiled.push(CompiledRule {
            name: rule.name.clone(),
            predicate,
            stack: rule.stack,
            targets: targets.iter().map(|t| t.triple.as_str().to_owned()).collect(),
        });
        earlier.extend(own.cloned());
    }
    diagnostics.extend(coverage_errors(parsed, &compiled, &hosts));
    if diagnostics.is_empty() {
        Ok(CompiledPolicy { policy: parsed.policy.clone(), rules: compiled })
    } else {
        Err(Diagnostics(diagnostics))
    }
}

/// Why a rule with its own cfg `own` gets no target: it matches no host at all (P012), or the
/// `earlier` rules cover every host it matches (P011).
fn never_matches(
    parsed: &ParsedPolicy,
    earlier: &[&Rule],
    rule: &Rule,
    own: &Cfg,
    hosts: &[&TargetInfo],
) -> Diagnostic {
    let alone = hosts.iter().filter(|t| own.matches(t)).count();
    let span = rule.spans.cfg.clone().unwrap_or(rule.spans.table.clone());
    if alone == 0 {
        let only_non_hosts = ALL_BUILTINS.iter().any(|t| own.matches(t));
        let message = if only_non_hosts {
            format!("rule `{}` matches only targets that cannot host an SDK (no std or no sockets)", rule.name)
        } else {
            format!("rule `{}` matches no builtin rustc target", rule.name)
        };
        return parsed.diagnostic("P012", message, span).with_help(if only_non_hosts {
            "remove the rule: `smithy-tls explain` lists the targets an SDK cannot run on, which need no stack"
        } else {
            "no builtin target has all the values this cfg asks for together (e.g. target_os = \"macos\" with target_env = \"musl\"): check the combination"
        });
    }
    let covering: Vec<&str> = earlier
        .iter()
        .filter(|r| hosts.iter().any(|t| own.matches(t) && r.scope.cfg().is_some_and(|c| c.matches(t))))
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
}

/// The errors for a rule with a provider whose provider (P013) or roots (P016; P017 for native
/// roots where there is no native store to read) cannot serve some of the `targets` it gets.
fn cannot_serve_all(parsed: &ParsedPolicy, rule: &Rule, targets: &[&TargetInfo]) -> Vec<Diagnostic> {
    let spans = &rule.spans;
    let (provider, roots) = match rule.stack {
        Stack::None => return Vec::new(),
        Stack::WasiHttp => {
            let unsupported: Vec<(&str, &str)> =
                targets.iter().filter_map(|t| wasi_http_support(t).err().map(|why| (t.triple.as_str(), why))).collect();
            let span = spans.provider.clone().unwrap_or(spans.table.clone());
            let what = format!("provider `{}`", Stack::WASI_HTTP);
            return cannot_serve(parsed, "P013", &what, &rule.name, &unsupported, span).into_iter().collect();
        }
        Stack::Tls { provider, roots, .. } => (provider, roots),
    };
    let unsupported: Vec<(&str, &str)> = targets
        .iter()
        .filter_map(|t| provider_support(provider, t).err().map(|why| (t.triple.as_str(), why)))
        .collect();
    let span = spans.provider.clone().unwrap_or(spans.table.clone());
    let what = format!("provider `{provider}`");
    let provider_error = cannot_serve(parsed, "P013", &what, &rule.name, &unsupported, span);
    let refused: Vec<(&str, &str)> =
        targets.iter().filter_map(|t| roots_support(roots, t).err().map(|why| (t.triple.as_str(), why))).collect();
    let span = spans.roots.clone().unwrap_or(spans.table.clone());
    let code = if roots == Roots::Native { "P017" } else { "P016" };
    let roots_error = cannot_serve(parsed, code, &format!("roots `{roots}`"), &rule.name, &refused, span);
    provider_error.into_iter().chain(roots_error).collect()
}

/// The error for a rule whose provider or roots (`what`) cannot serve some of the targets it
/// gets, naming up to four of them and, for each distinct reason, why (with an example target);
/// `None` when `refused` is empty.
fn cannot_serve(
    parsed: &ParsedPolicy,
    code: &'static str,
    what: &str,
    rule: &str,
    refused: &[(&str, &str)],
    span: std::ops::Range<usize>,
) -> Option<Diagnostic> {
    if refused.is_empty() {
        return None;
    }
    let sample: Vec<&str> = refused.iter().take(4).map(|(t, _)| *t).collect();
    let more = refused.len() - sample.len();
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let message = format!(
        "{what} of rule `{rule}` cannot serve {} of the targets the rule gets: {}{more}",
        refused.len(),
        sample.join(", ")
    );
    // One line per distinct reason, in the order the reasons first appear.
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for (target, why) in refused {
        match reasons.iter_mut().find(|(reason, _)| reason == why) {
            Some((_, targets)) => targets.push(target),
            None => reasons.push((why, vec![target])),
        }
    }
    let help = reasons
        .iter()
        .map(|(why, targets)| {
            let others = if targets.len() > 1 { format!(" and {} more", targets.len() - 1) } else { String::new() };
            format!("{}{others}: {why}", targets[0])
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(
        parsed
            .diagnostic(code, message, span)
            .with_help(format!("{help}; add an earlier rule for those targets or narrow this rule's cfg")),
    )
}

/// The coverage proof: an error (P015, a bug in this tool) for each host that is not served by
/// exactly one of the `compiled` rules.
fn coverage_errors(parsed: &ParsedPolicy, compiled: &[CompiledRule], hosts: &[&TargetInfo]) -> Vec<Diagnostic> {
    let span = &parsed.policy.fallback.spans.table;
    let mut errors = Vec::new();
    for target in hosts {
        let serving: Vec<&str> =
            compiled.iter().filter(|r| r.predicate.matches(target)).map(|r| r.name.as_str()).collect();
        if serving.len() == 1 {
            continue;
        }
        let message =
            format!("target {} is served by {} rules ({})", target.triple.as_str(), serving.len(), serving.join(", "));
        errors.push(
            parsed
                .diagnostic("P015", message, span.clone())
                .with_help("this is a bug in smithy-tls: please report it with the policy file"),
        );
    }
    errors
}
