//! `explain`: the target matrix, or one target and why.

use std::process::ExitCode;

use super::{finish, load_policy, ExplainArgs, Failure, EXIT_OK};
use crate::model::CompiledPolicy;
use crate::report::{human, Considered, ExplainReport, Report, RuleReport, TargetReport, Verdict};
use crate::targets::{explain, non_hosts, Explanation, TargetVerdict};

pub(crate) fn run(args: ExplainArgs, quiet: bool) -> ExitCode {
    let single = args.target.is_some();
    finish(
        args.format,
        build(&args),
        Report::Explain,
        |report, out, _| if quiet { Ok(()) } else { human::print_explain(report, single, out) },
        |_| EXIT_OK,
    )
}

fn build(args: &ExplainArgs) -> Result<ExplainReport, Failure> {
    let compiled = load_policy(&args.policy)?;
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
    Ok(ExplainReport { policy: compiled.policy.name.clone(), rules: rules(&compiled), targets })
}

fn rules(compiled: &CompiledPolicy) -> Vec<RuleReport> {
    compiled
        .policy
        .all_rules()
        .zip(&compiled.rules)
        .map(|(rule, compiled)| RuleReport {
            name: compiled.name.clone(),
            cfg: rule.scope.cfg().map(ToString::to_string),
            table_cfg: compiled.predicate.to_string(),
            stack: compiled.stack.into(),
            target_count: compiled.targets.len(),
        })
        .collect()
}

fn target_report(explanation: Explanation) -> TargetReport {
    let verdict = match explanation.verdict {
        TargetVerdict::Served { rule, stack, considered } => Verdict::Served {
            rule,
            stack: stack.into(),
            considered: considered
                .into_iter()
                .map(|m| Considered { rule: m.rule, cfg: m.cfg.map(|c| c.to_string()), matches: m.matches })
                .collect(),
        },
        TargetVerdict::NotAHost(why) => Verdict::NotAHost { why: why.to_owned() },
    };
    TargetReport { target: explanation.target, verdict }
}
