//! `explain`: the target matrix, or one target and why.

use std::process::ExitCode;

use super::{load_policy, print_json, report_failure, ExplainArgs, Failure, Format, EXIT_OK};
use crate::model::Stack;
use crate::targets::{explain, matrix, non_hosts};

pub(crate) fn run(args: ExplainArgs) -> ExitCode {
    match run_inner(&args) {
        Ok(code) => code,
        Err(failure) => report_failure(args.format, failure),
    }
}

fn run_inner(args: &ExplainArgs) -> Result<ExitCode, Failure> {
    let compiled = load_policy(&args.policy)?;
    if let Some(triple) = &args.target {
        let explanation = explain(&compiled, triple).ok_or_else(|| {
            Failure::new(format!(
                "`{triple}` is not a builtin rustc target known to this tool; see `rustc --print target-list`"
            ))
        })?;
        match args.format {
            Format::Json => print_json(&explanation)?,
            Format::Human => match (&explanation.row, &explanation.not_a_host) {
                (Some(row), _) => {
                    println!(
                        "{triple}: rule `{}` → provider {}, roots {}",
                        row.rule,
                        row.stack.provider_name(),
                        row.stack.roots_name()
                    );
                    for (name, cfg, hit) in &explanation.considered {
                        let cfg =
                            cfg.as_deref().map_or("(fallback: every other target)".to_owned(), |c| format!("cfg({c})"));
                        println!("  {} {name}: {cfg}", if *hit { "✔ matches" } else { "✘ no match" });
                    }
                    if let Stack::Tls { roots, .. } = row.stack {
                        println!("  roots `{roots}`: {}", roots.meaning());
                    }
                    if let Some(rule) = compiled.rules.iter().find(|r| r.name == row.rule) {
                        println!("  compiled table: [target.'cfg({})'.dependencies]", rule.predicate);
                    }
                }
                (None, why) => println!(
                    "{triple}: cannot host an SDK ({}); no rule serves it and none needs to",
                    why.as_deref().unwrap_or("unknown")
                ),
            },
        }
        return Ok(ExitCode::from(EXIT_OK));
    }
    let rows = matrix(&compiled);
    match args.format {
        Format::Json => {
            let not_hosts: Vec<_> =
                non_hosts().iter().map(|(target, why)| serde_json::json!({ "target": target, "why": why })).collect();
            let doc = serde_json::json!({
                "policy": compiled.policy.name,
                "rules": compiled.rules,
                "matrix": rows,
                "not_hosts": not_hosts,
            });
            print_json(&doc)?;
        }
        Format::Human => {
            let width = rows.iter().map(|r| r.target.len()).max().unwrap_or(6);
            println!(
                "policy `{}`: {} builtin targets can host an SDK, each served by exactly one rule",
                compiled.policy.name,
                rows.len()
            );
            println!();
            println!("{:width$}  {:<14} {:<8} rule", "target", "provider", "roots");
            for row in &rows {
                println!(
                    "{:width$}  {:<14} {:<8} {}",
                    row.target,
                    row.stack.provider_name(),
                    row.stack.roots_name(),
                    row.rule
                );
            }
            println!();
            for rule in &compiled.rules {
                println!(
                    "rule `{}`: {} target(s) → [target.'cfg({})'.dependencies]",
                    rule.name,
                    rule.targets.len(),
                    rule.predicate
                );
            }
            let others = non_hosts();
            println!();
            println!("{} builtin targets cannot host an SDK and need no stack:", others.len());
            for (target, why) in others {
                println!("{target:width$}  {why}");
            }
        }
    }
    Ok(ExitCode::from(EXIT_OK))
}
