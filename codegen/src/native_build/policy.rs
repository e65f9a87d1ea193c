//! A policy's build tools: per rule, the tools beyond a C compiler its provider needs on the
//! targets the rule serves (for `explain`), and the note P020 for a rule that makes a tier-1 or
//! tier-2 target need cmake, Go or libclang, naming a provider that builds there with only a C
//! compiler.

use std::collections::BTreeSet;

use cfg_expr::targets::{get_builtin_target_by_triple, TargetInfo};
use schemars::JsonSchema;
use serde::Serialize;

use super::{required_tools, stack_build, BuildTool, LibraryBuild, NativeLibrary, Necessity};
use crate::diag::{Diagnostic, Severity};
use crate::model::{CompiledPolicy, CompiledRule, Provider, Roots, Rule, Stack};
use crate::platforms::{tier, Tier};
use crate::policy::ParsedPolicy;

/// The code of the note for a rule that makes a tier-1 or tier-2 target need one of
/// [`NOTE_TOOLS`].
pub const NOTE_CODE: &str = "P020";

/// The tools whose need on a tier-1 or tier-2 target gets a note: each is a separate install
/// that a C toolchain does not bring along.
pub const NOTE_TOOLS: [BuildTool; 3] = [BuildTool::Cmake, BuildTool::Go, BuildTool::Libclang];

/// A tool beyond a C compiler that a rule's provider requires on some of the rule's targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RuleToolNeed {
    /// The tool.
    pub tool: BuildTool,
    /// The library whose build runs it.
    pub library: NativeLibrary,
    /// What that build does with it.
    pub why: &'static str,
    /// Where that is read.
    pub source: &'static str,
    /// The rule's targets that need it, sorted.
    pub targets: Vec<String>,
}

/// The tools beyond a C compiler that `rule`'s provider requires on the targets it serves,
/// one entry per tool, library and reason, ordered by tool; empty for a rule without a provider
/// and for one whose provider needs only a C compiler everywhere it serves.
///
/// ```
/// use smithy_tls_codegen::{compile, native_build, policy, presets};
/// let compiled = compile::compile(&policy::parse_policy(presets::preset("fips").unwrap()).unwrap()).unwrap();
/// let tools: Vec<_> = native_build::rule_extra_tools(&compiled.rules[0]).iter().map(|n| n.tool.name()).collect();
/// // Perl too, libclang on the targets without pregenerated bindings (the sanitizer ones) and
/// // the kernel's headers for musl.
/// assert_eq!(tools, ["cmake", "Go", "Perl", "libclang", "Linux kernel headers"]);
/// ```
pub fn rule_extra_tools(rule: &CompiledRule) -> Vec<RuleToolNeed> {
    let Some(provider) = rule.stack.provider() else { return Vec::new() };
    let mut out: Vec<RuleToolNeed> = Vec::new();
    for triple in &rule.targets {
        let Some(builds) = get_builtin_target_by_triple(triple).and_then(|t| stack_build(provider, t).ok()) else {
            continue;
        };
        for build in &builds {
            let extra =
                build.needs.iter().filter(|n| n.necessity == Necessity::Required && n.tool != BuildTool::CCompiler);
            for need in extra {
                match out.iter_mut().find(|o| (o.tool, o.library, o.why) == (need.tool, build.library, need.why)) {
                    Some(known) => known.targets.push(triple.clone()),
                    None => out.push(RuleToolNeed {
                        tool: need.tool,
                        library: build.library,
                        why: need.why,
                        source: need.source,
                        targets: vec![triple.clone()],
                    }),
                }
            }
        }
    }
    out.sort_by_key(|o| (o.tool, o.library));
    out
}

/// The notes (P020) for the rules of a policy that make tier-1 or tier-2 targets need cmake, Go
/// or libclang, pointing at each rule's provider; with `only`, about that target alone.
///
/// ```
/// use smithy_tls_codegen::{compile, native_build, policy, presets};
/// let parsed = policy::parse_policy(presets::preset("fips").unwrap()).unwrap();
/// let compiled = compile::compile(&parsed).unwrap();
/// let notes = native_build::policy_notes(&parsed, &compiled, None);
/// assert_eq!(notes.len(), 1);
/// // libclang only where aws-lc-fips-sys has no pregenerated bindings: the sanitizer targets.
/// assert!(notes[0].message.starts_with("rule `linux-fips` makes 7 tier-1/2 targets need cmake, Go, Perl, libclang (on 3 of them: x86_64-unknown-linux-gnuasan, "));
/// assert!(native_build::policy_notes(&parsed, &compiled, Some("aarch64-apple-darwin")).is_empty());
/// ```
pub fn policy_notes(parsed: &ParsedPolicy, compiled: &CompiledPolicy, only: Option<&str>) -> Vec<Diagnostic> {
    parsed
        .policy
        .all_rules()
        .zip(&compiled.rules)
        .filter_map(|(rule, served)| rule_note(parsed, rule, served, only))
        .collect()
}

/// Whether `builds` need nothing but a C compiler.
fn c_compiler_only(builds: &[LibraryBuild]) -> bool {
    required_tools(builds).iter().all(|&tool| tool == BuildTool::CCompiler)
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A tier-1 or tier-2 target a rule serves on which its provider's build needs one of
/// [`NOTE_TOOLS`].
struct Affected {
    target: &'static TargetInfo,
    tier: Tier,
    builds: Vec<LibraryBuild>,
}

/// The note P020 for one rule, when its provider needs one of [`NOTE_TOOLS`] on a tier-1 or
/// tier-2 target it serves (with `only`, that target alone): what it needs where, a provider
/// that would not, and why, per library.
fn rule_note(parsed: &ParsedPolicy, rule: &Rule, served: &CompiledRule, only: Option<&str>) -> Option<Diagnostic> {
    let Stack::Tls { provider, roots, .. } = rule.stack else { return None };
    let affected = affected_targets(provider, served, only);
    if affected.is_empty() {
        return None;
    }
    let message = note_message(&rule.name, provider, &affected);
    let alternative = lighter_alternative(provider, roots, &affected);
    let why = library_reasons(&affected);
    let span = rule.spans.provider.clone().unwrap_or(rule.spans.table.clone());
    Some(
        parsed
            .diagnostic(NOTE_CODE, message, span)
            .with_severity(Severity::Note)
            .with_help(format!("{alternative}. Why: {}", why.join(". "))),
    )
}

/// The targets of `served` (with `only`, that one alone) that are tier 1 or 2 and on which
/// `provider` needs one of [`NOTE_TOOLS`].
fn affected_targets(provider: Provider, served: &CompiledRule, only: Option<&str>) -> Vec<Affected> {
    served
        .targets
        .iter()
        .filter(|triple| only.is_none_or(|o| o == triple.as_str()))
        .filter_map(|triple| get_builtin_target_by_triple(triple))
        .filter_map(|target| {
            let tier = tier(target);
            let builds = stack_build(provider, target).ok()?;
            let needs_heavy = required_tools(&builds).iter().any(|tool| NOTE_TOOLS.contains(tool));
            (tier != Tier::Three && needs_heavy).then_some(Affected { target, tier, builds })
        })
        .collect()
}

/// The note's message: the tools beyond a C compiler and up to four of the targets that need
/// them, each with its tier.
fn note_message(rule: &str, provider: Provider, affected: &[Affected]) -> String {
    let sample: Vec<String> =
        affected.iter().take(4).map(|a| format!("{} (tier {})", a.target.triple.as_str(), a.tier.number())).collect();
    let more = affected.len() - sample.len();
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let plural = if affected.len() == 1 { "target" } else { "targets" };
    format!(
        "rule `{rule}` makes {} tier-1/2 {plural} need {} to build provider `{provider}`: {}{more}",
        affected.len(),
        and_list(&tool_names(affected)),
        sample.join(", ")
    )
}

/// The tools beyond a C compiler the affected targets need: those every one of them needs
/// first, then each of the others with the targets that need it.
fn tool_names(affected: &[Affected]) -> Vec<String> {
    let tools: BTreeSet<BuildTool> =
        affected.iter().flat_map(|a| required_tools(&a.builds)).filter(|&tool| tool != BuildTool::CCompiler).collect();
    let (mut every, mut partly) = (Vec::new(), Vec::new());
    for tool in tools {
        let needing: Vec<&str> = affected
            .iter()
            .filter(|a| required_tools(&a.builds).contains(&tool))
            .map(|a| a.target.triple.as_str())
            .collect();
        if needing.len() < affected.len() {
            partly.push(format!("{} (on {} of them: {})", tool.name(), needing.len(), needing.join(", ")));
        } else {
            every.push(tool.name().to_owned());
        }
    }
    every.extend(partly);
    every
}

/// Why, per library: each tool beyond a C compiler once, with what the library's build does
/// with it.
fn library_reasons(affected: &[Affected]) -> Vec<String> {
    let mut reasons: Vec<(NativeLibrary, Vec<String>)> = Vec::new();
    for build in affected.iter().flat_map(|a| &a.builds) {
        let index = match reasons.iter().position(|(library, _)| *library == build.library) {
            Some(index) => index,
            None => {
                reasons.push((build.library, Vec::new()));
                reasons.len() - 1
            }
        };
        let extra = build.needs.iter().filter(|n| n.necessity == Necessity::Required && n.tool != BuildTool::CCompiler);
        for need in extra {
            let reason = format!("{}: {}", need.tool.name(), need.why);
            if !reasons[index].1.contains(&reason) {
                reasons[index].1.push(reason);
            }
        }
    }
    reasons
        .iter()
        .filter(|(_, needs)| !needs.is_empty())
        .map(|(library, needs)| format!("{} {} needs {}", library.crate_name(), library.version(), needs.join("; ")))
        .collect()
}

/// The providers that would build for every affected target with only a C compiler, with the
/// same roots: of the same FIPS-ness as `provider`, else (for a FIPS provider) the non-FIPS
/// ones, named as such.
fn lighter_alternative(provider: Provider, roots: Roots, affected: &[Affected]) -> String {
    let serves_lightly = |candidate: Provider| {
        candidate != provider
            && candidate.brings_crypto()
            && candidate.supports_roots(roots)
            && affected.iter().all(|a| stack_build(candidate, a.target).is_ok_and(|b| c_compiler_only(&b)))
    };
    let them = if affected.len() == 1 { "it" } else { "them" };
    let alternatives: Vec<Provider> =
        Provider::ALL.into_iter().filter(|&p| p.is_fips() == provider.is_fips() && serves_lightly(p)).collect();
    if !alternatives.is_empty() {
        let verb = if alternatives.len() == 1 { "builds" } else { "build" };
        return format!(
            "{} {verb} for {them} with only a C compiler: give {them} an earlier rule with that provider",
            or_list(&alternatives)
        );
    }
    if !provider.is_fips() {
        return format!("no other provider with roots `{roots}` builds for {them} with only a C compiler");
    }
    let others: Vec<Provider> = Provider::ALL.into_iter().filter(|&p| !p.is_fips() && serves_lightly(p)).collect();
    match others.as_slice() {
        [] => format!("no provider builds for {them} with only a C compiler"),
        _ => format!(
            "no FIPS provider builds for {them} with only a C compiler; {} would, without the FIPS module",
            or_list(&others)
        ),
    }
}

/// "`a`", "`a` or `b`", "`a`, `b` or `c`".
fn or_list(providers: &[Provider]) -> String {
    let names: Vec<String> = providers.iter().map(|p| format!("`{p}`")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}
