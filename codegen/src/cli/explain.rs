//! `explain`: the target matrix, or one target and why.

use std::process::ExitCode;

use cfg_expr::targets::TargetInfo;

use super::{finish, load_parsed_policy, ExplainArgs, Failure, EXIT_OK};
use crate::explain::{explain, Explanation, TargetVerdict};
use crate::model::{CompiledPolicy, Provider, Roots, Stack, TlsOverride};
use crate::native_build::{policy_notes, required_tools, rule_extra_tools, stack_build};
use crate::report::{
    human, Considered, ExplainReport, HostHttpNeeds, OverrideEffect, Report, RuleReport, TargetReport, Unusable,
    Verdict,
};
use crate::targets::non_hosts;

pub(crate) fn run(args: ExplainArgs, quiet: bool) -> ExitCode {
    let single = args.target.is_some();
    finish(
        args.format,
        build(&args),
        Report::Explain,
        |report, out, err| if quiet { Ok(()) } else { human::print_explain(report, single, out, err) },
        |_| EXIT_OK,
    )
}

fn build(args: &ExplainArgs) -> Result<ExplainReport, Failure> {
    let (parsed, compiled) = load_parsed_policy(&args.policy)?;
    let targets = match &args.target {
        Some(triple) => {
            let explanation = explain(&compiled, triple).ok_or_else(|| {
                Failure::new(format!(
                    "`{triple}` is not a builtin rustc target known to this tool; see `rustc --print target-list`"
                ))
            })?;
            vec![target_report(explanation, args.tls_override)]
        }
        None => {
            let mut all: Vec<TargetReport> = compiled
                .rules
                .iter()
                .flat_map(|rule| &rule.targets)
                .filter_map(|triple| explain(&compiled, triple))
                .map(|explanation| target_report(explanation, args.tls_override))
                .chain(non_hosts().into_iter().map(|(target, why)| TargetReport {
                    target: target.to_owned(),
                    verdict: Verdict::NotAHost { why: why.to_owned() },
                    under_override: args.tls_override.map(|_| not_a_host_unchanged()),
                }))
                .collect();
            all.sort_by(|a, b| a.target.cmp(&b.target));
            all
        }
    };
    let notes = policy_notes(&parsed, &compiled, args.target.as_deref());
    Ok(ExplainReport {
        policy: compiled.policy.name.clone(),
        rules: rules(&compiled),
        targets,
        notes,
        tls_override: args.tls_override,
    })
}

fn rules(compiled: &CompiledPolicy) -> Vec<RuleReport> {
    let tables = crate::compile::manifest_tables(compiled);
    compiled
        .policy
        .all_rules()
        .zip(&compiled.rules)
        .map(|(rule, compiled)| RuleReport {
            name: compiled.name.clone(),
            cfg: rule.scope.cfg().map(ToString::to_string),
            table_cfg: tables
                .iter()
                .find(|(_, stack)| *stack == compiled.stack)
                .map_or_else(|| compiled.predicate.to_string(), |(table, _)| table.to_string()),
            stack: compiled.stack.into(),
            note: rule.note.clone(),
            target_count: compiled.targets.len(),
            extra_build_tools: rule_extra_tools(compiled),
        })
        .collect()
}

fn target_report(explanation: Explanation, tls_override: Option<TlsOverride>) -> TargetReport {
    let target = cfg_expr::targets::get_builtin_target_by_triple(&explanation.target);
    let under_override = tls_override.map(|value| match (&explanation.verdict, target) {
        (TargetVerdict::Served { rule, stack, .. }, Some(target)) => override_effect(value, rule, *stack, target),
        _ => not_a_host_unchanged(),
    });
    let triple = explanation.target;
    let verdict = match explanation.verdict {
        TargetVerdict::Served { rule, stack, considered } => Verdict::Served {
            rule,
            stack: stack.into(),
            considered: considered
                .into_iter()
                .map(|m| Considered { rule: m.rule, cfg: m.cfg.map(|c| c.to_string()), matches: m.matches })
                .collect(),
            unusable: unusable(&triple),
            tier: target.map_or(3, |t| crate::platforms::tier(t).number()),
            // The policy compiled, so the provider builds for every target it serves.
            native_build: match (stack.provider(), target) {
                (Some(provider), Some(target)) => stack_build(provider, target).unwrap_or_default(),
                _ => Vec::new(),
            },
            host_http: (stack == Stack::WasiHttp).then(HostHttpNeeds::wasip2),
            transfer_manager: crate::transfer_manager::Transport::of(stack),
            suite: crate::suite_runs::evidence(stack, &triple),
        },
        TargetVerdict::NotAHost(why) => Verdict::NotAHost { why: why.to_owned() },
    };
    TargetReport { target: triple, verdict, under_override }
}

/// What `--cfg smithy_tls="VALUE"` does to a target that cannot host an SDK: nothing.
fn not_a_host_unchanged() -> OverrideEffect {
    OverrideEffect::Unchanged { why: "no SDK runs on this target, so no generated crate is built for it".to_owned() }
}

/// What `value` does to a target that rule `rule` serves with `stack`: the override's provider in
/// place of the rule's (what it compiles there and the tools that needs), no TLS library at all
/// (`none`), the reason the provider does not build there, or nothing, where the rule gives no
/// provider: the generated crates then have no runtime dependency on the target (the runtime
/// tables are all gated on the rules with a provider), so there is nothing to override.
fn override_effect(value: TlsOverride, rule: &str, stack: Stack, target: &TargetInfo) -> OverrideEffect {
    if stack == Stack::WasiHttp {
        return match value {
            TlsOverride::NoTls => OverrideEffect::NoHostClient,
            TlsOverride::Provider(_) => OverrideEffect::Unchanged {
                why: format!(
                    "rule `{rule}` gives this target the host's HTTP (wasi-http): the host runs TLS, so there is \
                     no TLS stack to override (only `none` turns the host's client off)"
                ),
            },
        };
    }
    let Stack::Tls { provider: replaces, roots, .. } = stack else {
        return OverrideEffect::Unchanged {
            why: format!(
                "rule `{rule}` gives this target no provider, so the generated crates have no runtime dependency \
                 on it: there is no TLS stack to override"
            ),
        };
    };
    let TlsOverride::Provider(provider) = value else { return OverrideEffect::NoTls { replaces } };
    match stack_build(provider, target) {
        Ok(native_build) => OverrideEffect::Compiles {
            provider,
            replaces,
            required_tools: required_tools(&native_build).into_iter().collect(),
            native_build,
            roots: (!provider.supports_roots(roots)).then(|| roots_advice(provider, roots, target)),
            needs_feature: provider.override_needs_feature(replaces),
        },
        Err(why) => OverrideEffect::DoesNotBuild { provider, why: why.to_owned(), instead: instead(provider, target) },
    }
}

/// Why `provider` cannot use the rule's `roots`, and the roots override that works with it on
/// `target`.
fn roots_advice(provider: Provider, roots: Roots, target: &TargetInfo) -> String {
    let usable: Vec<Roots> = Roots::ALL
        .into_iter()
        .filter(|&r| provider.supports_roots(r) && crate::platforms::roots_support(r, target).is_ok())
        .collect();
    let set = match usable.split_first() {
        None => "no roots override serves it here".to_owned(),
        Some((first, [])) => format!("set --cfg smithy_tls_roots=\"{first}\" beside it"),
        Some((first, rest)) => {
            let rest: Vec<String> = rest.iter().map(|r| format!("\"{r}\"")).collect();
            format!("set --cfg smithy_tls_roots=\"{first}\" beside it (or {})", rest.join(", "))
        }
    };
    format!(
        "{provider} cannot use the rule's roots `{roots}` (it reads the system store itself), so the override \
         leaves them out: {set}"
    )
}

/// The providers that build for `target` in place of `provider`, bringing their own crypto:
/// the FIPS ones for a FIPS provider where any builds, else the others.
fn instead(provider: Provider, target: &TargetInfo) -> Vec<Provider> {
    let builds =
        |p: &Provider| *p != provider && p.brings_crypto() && crate::platforms::provider_support(*p, target).is_ok();
    let same_kind: Vec<Provider> =
        Provider::ALL.into_iter().filter(|p| p.is_fips() == provider.is_fips()).filter(builds).collect();
    if !same_kind.is_empty() || !provider.is_fips() {
        return same_kind;
    }
    Provider::ALL.into_iter().filter(|p| !p.is_fips()).filter(builds).collect()
}

/// What `triple` cannot use, and why: the providers that do not build for it and the roots that
/// do not work on it (as the policy checks P013, P016 and P017 judge them; roots only where some
/// provider builds, since elsewhere there is no client to have roots).
fn unusable(triple: &str) -> Vec<Unusable> {
    let Some(target) = cfg_expr::targets::get_builtin_target_by_triple(triple) else { return Vec::new() };
    let mut unusable: Vec<Unusable> = Provider::ALL
        .into_iter()
        .filter_map(|provider| {
            crate::platforms::provider_support(provider, target)
                .err()
                .map(|why| Unusable::Provider { provider, why: why.to_owned() })
        })
        .collect();
    if unusable.len() < Provider::ALL.len() {
        unusable.extend(Roots::ALL.into_iter().filter_map(|roots| {
            crate::platforms::roots_support(roots, target)
                .err()
                .map(|why| Unusable::Roots { roots, why: why.to_owned() })
        }));
    }
    unusable
}
