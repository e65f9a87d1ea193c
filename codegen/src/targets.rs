//! Targets: first-match rules compiled into mutually exclusive predicates, checked against what
//! each provider and roots choice can serve (`crate::platforms`), and the proof that a policy
//! serves every builtin rustc target that can host an SDK exactly once.

use std::collections::BTreeMap;

use cfg_expr::targets::{TargetInfo, ALL_BUILTINS};

use crate::cfg::{Cfg, TargetKey};
use crate::diag::Diagnostics;
use crate::model::{CompiledPolicy, CompiledRule, Roots, Stack};
use crate::platforms::{provider_support, roots_support, sdk_host};
use crate::policy::ParsedPolicy;

/// The builtin targets that can host an SDK (std and sockets): the ones a policy must serve.
pub fn sdk_targets() -> impl Iterator<Item = &'static TargetInfo> {
    ALL_BUILTINS.iter().filter(|t| sdk_host(t).is_ok())
}

/// The builtin targets that cannot host an SDK, with why, sorted by triple.
pub fn non_hosts() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> =
        ALL_BUILTINS.iter().filter_map(|t| sdk_host(t).err().map(|why| (t.triple.as_str(), why))).collect();
    out.sort();
    out
}

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
) -> Option<crate::diag::Diagnostic> {
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

/// Compiles a parsed policy: exclusive predicates, the target matrix, and every target-level
/// check (rules that can never match, providers that cannot serve a target they match, and the
/// coverage proof). Errors point into the policy file.
pub fn compile(parsed: &ParsedPolicy) -> Result<CompiledPolicy, Diagnostics> {
    let policy = &parsed.policy;
    let all_rules: Vec<_> = policy.all_rules().collect();
    // Which builtin targets can host an SDK never changes: worked out once, not per rule.
    let hosts: Vec<&TargetInfo> = sdk_targets().collect();
    let mut diagnostics = Vec::new();
    let mut compiled = Vec::new();
    let mut earlier: Vec<Cfg> = Vec::new();
    for (index, rule) in all_rules.iter().enumerate() {
        let own = rule.scope.cfg();
        let predicate = Cfg::exclusive(own, &earlier);
        let spans = &rule.spans;
        let targets: Vec<&TargetInfo> = hosts.iter().copied().filter(|t| predicate.matches(t)).collect();
        if let (true, Some(own)) = (targets.is_empty(), own) {
            let alone = hosts.iter().filter(|t| own.matches(t)).count();
            let span = spans.cfg.clone().unwrap_or(spans.table.clone());
            let d = if alone == 0 {
                let only_non_hosts = ALL_BUILTINS.iter().any(|t| own.matches(t));
                let message = if only_non_hosts {
                    format!("rule `{}` matches only targets that cannot host an SDK (no std or no sockets)", rule.name)
                } else {
                    format!("rule `{}` matches no builtin rustc target", rule.name)
                };
                parsed.diagnostic("P012", message, span).with_help(if only_non_hosts {
                    "remove the rule: `smithy-tls explain` lists the targets an SDK cannot run on, which need no stack"
                } else {
                    "no builtin target has all the values this cfg asks for together (e.g. target_os = \"macos\" with target_env = \"musl\"): check the combination"
                })
            } else {
                let covering: Vec<&str> = all_rules[..index]
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
            };
            diagnostics.push(d);
        }
        if let Stack::Tls { provider, roots, .. } = rule.stack {
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
            // P017: no native store to read; P016: the roots cannot be used there at all.
            let code = if roots == Roots::Native { "P017" } else { "P016" };
            diagnostics.extend(cannot_serve(parsed, code, &format!("roots `{roots}`"), &rule.name, &refused, span));
        }
        compiled.push(CompiledRule {
            name: rule.name.clone(),
            predicate,
            stack: rule.stack,
            targets: targets.iter().map(|t| t.triple.as_str().to_owned()).collect(),
        });
        earlier.extend(own.cloned());
    }

    // Coverage proof: each builtin target that can host an SDK is served by exactly one rule.
    for &target in &hosts {
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

/// Every builtin target that can host an SDK with the rule that serves it, sorted by triple.
pub fn matrix(compiled: &CompiledPolicy) -> Vec<MatrixRow> {
    let mut rows: BTreeMap<&str, MatrixRow> = BTreeMap::new();
    for rule in &compiled.rules {
        for target in &rule.targets {
            rows.insert(target, MatrixRow { target: target.clone(), rule: rule.name.clone(), stack: rule.stack });
        }
    }
    rows.into_values().collect()
}

/// What a target gets, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The target triple asked about.
    pub target: String,
    /// Whether a rule serves it, or why none needs to.
    pub verdict: TargetVerdict,
}

/// Whether a target is served, and by what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetVerdict {
    /// The first rule whose own cfg matches serves it.
    Served {
        /// That rule's name.
        rule: String,
        /// What the target gets.
        stack: Stack,
        /// Every rule up to and including the winner.
        considered: Vec<RuleMatch>,
    },
    /// The target cannot host an SDK (the reason), so no rule serves it and none needs to.
    NotAHost(&'static str),
}

impl Explanation {
    /// What the target gets, `None` when it cannot host an SDK.
    pub fn stack(&self) -> Option<Stack> {
        match &self.verdict {
            TargetVerdict::Served { stack, .. } => Some(*stack),
            TargetVerdict::NotAHost(_) => None,
        }
    }
}

/// One rule looked at for a target: its own cfg and whether that matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMatch {
    /// The rule's name.
    pub rule: String,
    /// Its own cfg (`None` for the fallback, which matches every target).
    pub cfg: Option<Cfg>,
    /// Whether it matches the target.
    pub matches: bool,
}

/// Explains one target, or `None` when cfg-expr does not know the triple.
///
/// ```
/// use smithy_tls_codegen::{presets, policy, targets};
/// let compiled = targets::compile(&policy::parse_policy(presets::preset("portable").unwrap()).unwrap()).unwrap();
/// let explanation = targets::explain(&compiled, "x86_64-unknown-linux-gnu").unwrap();
/// assert!(explanation.stack().is_some());
/// let bare = targets::explain(&compiled, "x86_64-unknown-none").unwrap();
/// assert!(matches!(bare.verdict, targets::TargetVerdict::NotAHost(_)));
/// ```
pub fn explain(compiled: &CompiledPolicy, triple: &str) -> Option<Explanation> {
    let target = cfg_expr::targets::get_builtin_target_by_triple(triple)?;
    if let Err(why) = sdk_host(target) {
        return Some(Explanation { target: triple.to_owned(), verdict: TargetVerdict::NotAHost(why) });
    }
    let mut considered = Vec::new();
    for rule in compiled.policy.all_rules() {
        let matches = rule.scope.cfg().is_none_or(|c| c.matches(target));
        considered.push(RuleMatch { rule: rule.name.clone(), cfg: rule.scope.cfg().cloned(), matches });
        if matches {
            let verdict = TargetVerdict::Served { rule: rule.name.clone(), stack: rule.stack, considered };
            return Some(Explanation { target: triple.to_owned(), verdict });
        }
    }
    None
}

/// The manifest's target tables: one per distinct stack with a provider, in the order of the
/// first rule that has it, with a predicate that holds exactly on the targets those rules serve.
///
/// Rules that share a stack share a table. The union of first-match predicates needs fewer
/// clauses than its parts: a target whose first match among the earlier rules is one of the
/// same stack is the table's anyway, so each rule negates only the earlier rules of *other*
/// stacks.
///
/// ```
/// use smithy_tls_codegen::{presets, policy, targets};
/// let compiled = targets::compile(&policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap()).unwrap();
/// let tables = targets::manifest_tables(&compiled);
/// // apple and windows both get rustls-aws-lc with the platform verifier: one table.
/// assert_eq!(tables.len(), compiled.rules.iter().filter(|r| r.stack.provider().is_some()).count() - 1);
/// ```
pub fn manifest_tables(compiled: &CompiledPolicy) -> Vec<(Cfg, Stack)> {
    let owns: Vec<Option<&Cfg>> = compiled.policy.all_rules().map(|rule| rule.scope.cfg()).collect();
    let mut stacks: Vec<Stack> = Vec::new();
    for rule in &compiled.rules {
        if rule.stack.provider().is_some() && !stacks.contains(&rule.stack) {
            stacks.push(rule.stack);
        }
    }
    stacks
        .into_iter()
        .map(|stack| {
            let members: Vec<usize> = (0..compiled.rules.len()).filter(|&i| compiled.rules[i].stack == stack).collect();
            let predicate = match members.as_slice() {
                [only] => compiled.rules[*only].predicate.clone(),
                _ => {
                    let earlier: Vec<Vec<Cfg>> = members
                        .iter()
                        .map(|&i| (0..i).filter(|j| !members.contains(j)).filter_map(|j| owns[j].cloned()).collect())
                        .collect();
                    let parts = Cfg::any_of(members.iter().zip(&earlier).map(|(&i, e)| Cfg::exclusive(owns[i], e)));
                    let group: Option<Vec<(&Cfg, &[Cfg])>> =
                        members.iter().zip(&earlier).map(|(&i, e)| owns[i].map(|own| (own, e.as_slice()))).collect();
                    match group.and_then(|group| Cfg::exclusive_group(&group)) {
                        Some(factored) if factored.to_string().len() < parts.to_string().len() => factored,
                        _ => parts,
                    }
                }
            };
            (predicate, stack)
        })
        .collect()
}

/// How the emitted module picks a target's rule.
///
/// The module can name the runtime crate only where the manifest gives the target one, which
/// is where no `none` rule is the first match: [`runtime`](Self::runtime). Inside that, the
/// target's rule is the first rule *with a provider* whose own cfg holds (an earlier `none` rule
/// that held would have been the first match, and such targets are outside), so the module tests
/// the rules' own cfgs in the policy's order, an `if` / `else if` chain ([`chain`](Self::chain)),
/// with no rule repeating the negation of the ones before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSelection {
    /// Where the target gets the runtime crate; `None` when every rule has a provider.
    pub runtime: Option<Cfg>,
    /// Each rule with a provider, in policy order: its index in the compiled rules and its own
    /// cfg (`None` for the fallback, the chain's `else`).
    pub chain: Vec<(usize, Option<Cfg>)>,
}

impl ModuleSelection {
    /// The index of the rule the module picks where `holds` says which `key = value` atoms are
    /// true: `None` outside [`runtime`](Self::runtime) or where no rule of the chain holds.
    pub fn pick(&self, holds: &dyn Fn(TargetKey, &str) -> bool) -> Option<usize> {
        if self.runtime.as_ref().is_some_and(|runtime| !runtime.holds(holds)) {
            return None;
        }
        self.chain.iter().find(|(_, own)| own.as_ref().is_none_or(|cfg| cfg.holds(holds))).map(|(index, _)| *index)
    }
}

/// The [`ModuleSelection`] of a compiled policy.
///
/// ```
/// use smithy_tls_codegen::{presets, policy, targets};
/// let compiled = targets::compile(&policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap()).unwrap();
/// let selection = targets::module_selection(&compiled);
/// // The chain starts with the first rule with a provider, tested by its own cfg.
/// let (index, apple) = &selection.chain[0];
/// assert_eq!(compiled.rules[*index].name, "apple");
/// assert_eq!(apple.as_ref().unwrap().to_string(), "target_vendor = \"apple\"");
/// ```
pub fn module_selection(compiled: &CompiledPolicy) -> ModuleSelection {
    let mut earlier_tls: Vec<Cfg> = Vec::new();
    let mut none_first = Vec::new();
    let mut chain = Vec::new();
    for (index, rule) in compiled.policy.all_rules().enumerate() {
        let own = rule.scope.cfg();
        match rule.stack {
            Stack::None => none_first.push(Cfg::exclusive(own, &earlier_tls)),
            Stack::Tls { .. } => {
                chain.push((index, own.cloned()));
                earlier_tls.extend(own.cloned());
            }
        }
    }
    let runtime = match none_first.len() {
        0 => None,
        1 => Some(match none_first.remove(0) {
            Cfg::Not(inner) => *inner,
            other => Cfg::Not(Box::new(other)),
        }),
        _ => Some(Cfg::Not(Box::new(Cfg::any_of(none_first)))),
    };
    ModuleSelection { runtime, chain }
}

/// How many builtin targets cfg-expr knows.
pub fn builtin_target_count() -> usize {
    ALL_BUILTINS.len()
}

/// How many builtin targets can host an SDK, and so are checked against every policy.
pub fn sdk_target_count() -> usize {
    sdk_targets().count()
}
