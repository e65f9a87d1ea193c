//! `explain`: the target matrix, or one target and why.

use std::process::ExitCode;

use super::{finish, load_parsed_policy, ExplainArgs, Failure, EXIT_OK};
use crate::explain::{explain, Explanation, TargetVerdict};
use crate::model::{CompiledPolicy, Provider, Roots};
use crate::native_build::{policy_notes, rule_extra_tools, stack_build};
use crate::report::{human, Considered, ExplainReport, Report, RuleReport, TargetReport, Unusable, Verdict};
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
            vec![target_report(explanation)]
        }
        None => {
            let mut all: Vec<TargetReport> = compiled
                .rules
                .iter()
                .flat_map(|rule| &rule.targets)
                .filter_map(|triple| explain(&compiled, triple))
                .map(target_report)
                .chain(non_hosts().into_iter().map(|(target, why)| TargetReport {
                    target: target.to_owned(),
                    verdict: Verdict::NotAHost { why: why.to_owned() },
                }))
                .collect();
            all.sort_by(|a, b| a.target.cmp(&b.target));
            all
        }
    };
    let notes = policy_notes(&parsed, &compiled, args.target.as_deref());
    Ok(ExplainReport { policy: compiled.policy.name.clone(), rules: rules(&compiled), targets, notes })
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
            target_count: compiled.targets.len(),
            extra_build_tools: rule_extra_tools(compiled),
        })
        .collect()
}

fn target_report(explanation: Explanation) -> TargetReport {
    let target = cfg_expr::targets::get_builtin_target_by_triple(&explanation.target);
    let verdict = match explanation.verdict {
        TargetVerdict::Served { rule, stack, considered } => Verdict::Served {
            rule,
            stack: stack.into(),
            considered: considered
                .into_iter()
                .map(|m| Considered { rule: m.rule, cfg: m.cfg.map(|c| c.to_string()), matches: m.matches })
                .collect(),
            unusable: unusable(&explanation.target),
            tier: target.map_or(3, |t| crate::platforms::tier(t).number()),
            // The policy compiled, so the provider builds for every target it serves.
            native_build: match (stack.provider(), target) {
                (Some(provider), Some(target)) => stack_build(provider, target).unwrap_or_default(),
                _ => Vec::new(),
            },
        },
        TargetVerdict::NotAHost(why) => Verdict::NotAHost { why: why.to_owned() },
    };
    TargetReport { target: explanation.target, verdict }
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
