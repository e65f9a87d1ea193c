//! The reports for people: diffs, stat tables and tables on stdout, warnings and summaries on
//! stderr. Everything is written with ANSI styles; the caller's stream (`anstream`) strips them
//! where colour is off (`--color`, `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`, not a terminal).

use std::io::{self, Write};

use anstyle::{AnsiColor, Effects, Style};

use super::{
    ExplainReport, FailureReport, HostHttpNeeds, OverrideEffect, PresetsReport, RewriteReport, StackReport,
    TargetReport, TreeReport, Unusable, Verdict,
};
use crate::model::{Provider, TlsOverride};
use crate::native_build::{BuildTool, LibraryBuild, Necessity, RuleToolNeed};

const ERROR: Style = AnsiColor::Red.on_default().effects(Effects::BOLD);
const WARNING: Style = AnsiColor::Yellow.on_default().effects(Effects::BOLD);
const ADDED: Style = AnsiColor::Green.on_default();
const REMOVED: Style = AnsiColor::Red.on_default();
const HUNK: Style = AnsiColor::Cyan.on_default();
const HEADER: Style = Style::new().effects(Effects::BOLD);

/// Which of the rewriting commands a report is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteCommand {
    /// `apply`.
    Apply,
    /// `check`.
    Check,
    /// `diff`.
    Diff,
    /// `revert`.
    Revert,
}

impl RewriteCommand {
    /// Whether the command writes files (`apply`, `revert`) rather than compares them.
    pub fn writes(self) -> bool {
        matches!(self, RewriteCommand::Apply | RewriteCommand::Revert)
    }
}

/// How a rewrite report is shown.
#[derive(Debug, Clone, Default)]
pub struct RewriteView {
    /// Print nothing but errors.
    pub quiet: bool,
    /// `check`/`diff`: a stat table instead of the diff.
    pub stat: bool,
    /// `check`: the command line that would update the trees, for the summary.
    pub apply_command: Option<String>,
}

/// Prints a rewrite report: the diff or its stat table on `out` (`check`, `diff`), warnings and
/// the summary on `err`.
///
/// ```
/// use smithy_tls_codegen::report::human::{print_rewrite, RewriteCommand, RewriteView};
/// use smithy_tls_codegen::report::{PolicyStamp, RewriteReport, RewriteSummary};
/// let report = RewriteReport {
///     policy: PolicyStamp { name: "portable".into(), sha256: "0".into() },
///     trees: vec![],
///     summary: RewriteSummary { up_to_date: true, ..Default::default() },
///     diff: Some(String::new()),
/// };
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// print_rewrite(&report, RewriteCommand::Check, &RewriteView::default(), &mut out, &mut err).unwrap();
/// assert_eq!(String::from_utf8(err).unwrap(), "policy `portable`: 0 crate(s) up to date\n");
/// ```
pub fn print_rewrite(
    report: &RewriteReport,
    command: RewriteCommand,
    view: &RewriteView,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<()> {
    if view.quiet {
        return Ok(());
    }
    if !command.writes() {
        if view.stat {
            print_stat(&report.trees, out)?;
        } else if let Some(diff) = &report.diff {
            print_diff(diff, out)?;
        }
    }
    for tree in &report.trees {
        for skipped in tree.skipped.iter().filter(|s| s.unsupported()) {
            writeln!(err, "{WARNING}warning{WARNING:#}: left {} untouched: {}", skipped.name, skipped.reason)?;
        }
        for note in tree.crates.iter().flat_map(|c| &c.notes) {
            writeln!(err, "{WARNING}warning{WARNING:#}: {note}")?;
        }
    }
    let s = &report.summary;
    let policy = &report.policy.name;
    let summary = match command {
        RewriteCommand::Apply => format!(
            "policy `{policy}`: {} crate(s) wired, {} changed, {} file(s) written, {} left untouched ({} unsupported)",
            s.wired_crates, s.changed_crates, s.written_files, s.skipped_crates, s.unsupported_crates
        ),
        RewriteCommand::Revert => format!(
            "{} crate(s) reverted, {} file(s) written; {} crate(s) had nothing of smithy-tls",
            s.changed_crates,
            s.written_files,
            s.wired_crates - s.changed_crates
        ),
        RewriteCommand::Check | RewriteCommand::Diff if s.up_to_date => {
            format!("policy `{policy}`: {} crate(s) up to date", s.wired_crates)
        }
        RewriteCommand::Check | RewriteCommand::Diff => {
            let mut line =
                format!("policy `{policy}`: {} file(s) in {} crate(s) would change", s.changed_files, s.changed_crates);
            if let Some(apply) = &view.apply_command {
                line.push_str(&format!("; run `{apply}` to update them"));
            }
            line
        }
    };
    writeln!(err, "{summary}")
}

/// A unified diff with added, removed, hunk and header lines styled. Each line keeps its own
/// ending (`\r\n` lines of CRLF files stay `\r\n`), so the text is the patch as computed.
fn print_diff(diff: &str, out: &mut dyn Write) -> io::Result<()> {
    for line in diff.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let style = if body.starts_with("+++") || body.starts_with("---") {
            HEADER
        } else if body.starts_with('+') {
            ADDED
        } else if body.starts_with('-') {
            REMOVED
        } else if body.starts_with("@@") {
            HUNK
        } else {
            Style::new()
        };
        write!(out, "{style}{body}{style:#}{ending}")?;
    }
    Ok(())
}

/// The widest a stat bar gets; longer ones are scaled down, keeping at least one mark each.
const STAT_BAR_WIDTH: usize = 40;

/// `git diff --stat`'s table: one line per file with its changed-line count and a bar of `+`
/// and `-`, then the totals.
fn print_stat(trees: &[TreeReport], out: &mut dyn Write) -> io::Result<()> {
    let files: Vec<(String, usize, usize)> = trees
        .iter()
        .flat_map(|t| t.files.iter().map(|f| (f.path.display().to_string(), f.insertions, f.deletions)))
        .collect();
    let name_width = files.iter().map(|(name, ..)| name.chars().count()).max().unwrap_or(0);
    let most = files.iter().map(|(_, i, d)| i + d).max().unwrap_or(0);
    let count_width = most.to_string().len();
    let scale = |n: usize| {
        if most <= STAT_BAR_WIDTH || n == 0 {
            n
        } else {
            (n * STAT_BAR_WIDTH).div_ceil(most).max(1)
        }
    };
    for (name, insertions, deletions) in &files {
        let plus = "+".repeat(scale(*insertions));
        let minus = "-".repeat(scale(*deletions));
        writeln!(
            out,
            " {name:<name_width$} | {:>count_width$} {ADDED}{plus}{ADDED:#}{REMOVED}{minus}{REMOVED:#}",
            insertions + deletions
        )?;
    }
    let insertions: usize = files.iter().map(|(_, i, _)| i).sum();
    let deletions: usize = files.iter().map(|(_, _, d)| d).sum();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    writeln!(
        out,
        " {} changed, {}, {}",
        plural(files.len(), "file", "files"),
        plural(insertions, "insertion(+)", "insertions(+)"),
        plural(deletions, "deletion(-)", "deletions(-)")
    )
}

/// Prints `explain`'s report: the matrix, or one target and why, on `out`; its notes, rendered
/// as rustc renders diagnostics, on `err`.
pub fn print_explain(report: &ExplainReport, single: bool, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<()> {
    if single {
        for target in &report.targets {
            print_target(report, target, out)?;
        }
    } else {
        print_matrix(report, out)?;
        if let Some(value) = report.tls_override {
            writeln!(out)?;
            print_override_matrix(value, report, out)?;
        }
    }
    for note in &report.notes {
        writeln!(err, "{}", note.render(true).trim_end())?;
        writeln!(err)?;
    }
    Ok(())
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The rules whose providers need more than a C compiler on some of their targets: the tool,
/// the targets, and why.
fn print_build_tools(report: &ExplainReport, out: &mut dyn Write) -> io::Result<()> {
    let heavy: Vec<(&str, &[RuleToolNeed])> = report
        .rules
        .iter()
        .filter(|r| !r.extra_build_tools.is_empty())
        .map(|r| (r.name.as_str(), r.extra_build_tools.as_slice()))
        .collect();
    if heavy.is_empty() {
        return writeln!(out, "build tools: every rule with a provider needs only a C compiler");
    }
    writeln!(out, "build tools beyond a C compiler (which every provider needs):")?;
    for (rule, needs) in &heavy {
        writeln!(out, "rule `{rule}`:")?;
        for need in *needs {
            writeln!(
                out,
                "  {} on {} ({} {}: {})",
                need.tool.name(),
                need.targets.join(", "),
                need.library.crate_name(),
                need.library.version(),
                need.why
            )?;
        }
    }
    let light = report.rules.iter().filter(|r| r.stack.roots().is_some()).count() - heavy.len();
    if light > 0 {
        writeln!(out, "the other {light} rule(s) with a provider need only a C compiler")?;
    }
    Ok(())
}

/// What the host of a `wasi-http` target provides, and the application's Cargo.toml there.
/// What serves the S3 transfer manager's requests on the target.
fn print_transfer_manager(transport: crate::transfer_manager::Transport, out: &mut dyn Write) -> io::Result<()> {
    use crate::transfer_manager::Transport;
    let exceptions = match transport {
        Transport::Pool { .. } => "; the S3 client's HTTP client where AWS_CA_BUNDLE or an override is set",
        Transport::SdkClient { .. } => "",
    };
    writeln!(out, "  S3 transfer manager: {}{exceptions}", transport.describe())
}

fn print_host_http(needs: &HostHttpNeeds, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "  native build: none (the host makes the connections and runs TLS)")?;
    writeln!(out, "  the host provides:")?;
    for import in &needs.imports {
        writeln!(out, "    {}: {}", import.interface, import.used_for)?;
    }
    let refused: Vec<String> =
        needs.refused_defaults.iter().map(|r| format!("{}'s `{}` ({})", r.crates, r.feature, r.why)).collect();
    writeln!(
        out,
        "  default features that do not build here: {}; cargo features cannot differ by target, so an \
         application turns them off in its Cargo.toml:",
        refused.join(", ")
    )?;
    for line in needs.application_manifest.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

/// What a target's provider compiles, and the tools each build needs, each line after `indent`.
fn print_native_build(tier: u8, builds: &[LibraryBuild], indent: &str, out: &mut dyn Write) -> io::Result<()> {
    if builds.is_empty() {
        return writeln!(out, "{indent}native build: none (no default client)");
    }
    let required: Vec<&str> = crate::native_build::required_tools(builds).into_iter().map(BuildTool::name).collect();
    writeln!(
        out,
        "{indent}native build for this tier-{tier} target: {} librar{}; the build host needs {}",
        builds.len(),
        if builds.len() == 1 { "y" } else { "ies" },
        and_list(&required)
    )?;
    for build in builds {
        writeln!(
            out,
            "{indent}  {} {}, {}, {}",
            build.library.crate_name(),
            build.version,
            build.library.compiles(),
            build.route.name()
        )?;
        for need in &build.needs {
            let verb = match need.necessity {
                Necessity::Required => "needs",
                Necessity::Optional => "can use",
            };
            writeln!(out, "{indent}    {verb} {}: {}", need.tool.name(), need.why)?;
        }
    }
    Ok(())
}

/// The matrix: every target that can host an SDK with its rule, the rules, the build tools
/// beyond a C compiler, and the targets that cannot host an SDK.
fn print_matrix(report: &ExplainReport, out: &mut dyn Write) -> io::Result<()> {
    let served: Vec<(&TargetReport, &str, StackReport)> = report
        .targets
        .iter()
        .filter_map(|t| match &t.verdict {
            Verdict::Served { rule, stack, .. } => Some((t, rule.as_str(), *stack)),
            Verdict::NotAHost { .. } => None,
        })
        .collect();
    let width = report.targets.iter().map(|t| t.target.len()).max().unwrap_or(6);
    writeln!(
        out,
        "policy `{}`: {} builtin targets can host an SDK, each served by exactly one rule",
        report.policy,
        served.len()
    )?;
    writeln!(out)?;
    writeln!(out, "{HEADER}{:width$}  {:<14} {:<8} rule{HEADER:#}", "target", "provider", "roots")?;
    for (target, rule, stack) in &served {
        writeln!(out, "{:width$}  {:<14} {:<8} {rule}", target.target, stack.0.provider_name(), stack.0.roots_name())?;
    }
    writeln!(out)?;
    for rule in &report.rules {
        writeln!(
            out,
            "rule `{}`: {} target(s) → [target.'cfg({})'.dependencies]",
            rule.name, rule.target_count, rule.table_cfg
        )?;
        if let Some((roots, empty_store)) = rule.stack.roots().filter(|(_, e)| !e.is_fail()) {
            writeln!(out, "  roots `{roots}`, empty-store `{empty_store}`: {}", empty_store.meaning())?;
        }
        if let Some(note) = &rule.note {
            writeln!(out, "  note: {note}")?;
        }
    }
    writeln!(out)?;
    print_build_tools(report, out)?;
    let others: Vec<(&str, &str)> = report
        .targets
        .iter()
        .filter_map(|t| match &t.verdict {
            Verdict::NotAHost { why } => Some((t.target.as_str(), why.as_str())),
            Verdict::Served { .. } => None,
        })
        .collect();
    writeln!(out)?;
    writeln!(out, "{} builtin targets cannot host an SDK and need no stack:", others.len())?;
    for (target, why) in others {
        writeln!(out, "{target:width$}  {why}")?;
    }
    Ok(())
}

fn print_target(report: &ExplainReport, target: &TargetReport, out: &mut dyn Write) -> io::Result<()> {
    let triple = &target.target;
    match &target.verdict {
        Verdict::NotAHost { why } => {
            writeln!(out, "{triple}: cannot host an SDK ({why}); no rule serves it and none needs to")?;
            if let (Some(value), Some(effect)) = (report.tls_override, &target.under_override) {
                print_override_target(value, triple, 0, effect, out)?;
            }
            Ok(())
        }
        Verdict::Served {
            rule,
            stack,
            considered,
            unusable,
            tier,
            native_build,
            host_http,
            transfer_manager,
            suite,
        } => {
            writeln!(
                out,
                "{triple}: rule `{rule}` → provider {}, roots {}",
                stack.0.provider_name(),
                stack.0.roots_name()
            )?;
            if let Some(note) = report.rules.iter().find(|r| r.name == *rule).and_then(|r| r.note.as_deref()) {
                writeln!(out, "  note: {note}")?;
            }
            for c in considered {
                let cfg = c.cfg.as_deref().map_or("(fallback: every other target)".to_owned(), |c| format!("cfg({c})"));
                let mark = if c.matches { format!("{ADDED}✔ matches{ADDED:#}") } else { "✘ no match".to_owned() };
                writeln!(out, "  {mark} {}: {cfg}", c.rule)?;
            }
            if let Some((roots, empty_store)) = stack.roots() {
                writeln!(out, "  roots `{roots}`: {}", roots.meaning())?;
                if !empty_store.is_fail() {
                    writeln!(out, "  empty-store `{empty_store}`: {}", empty_store.meaning())?;
                }
            }
            match host_http {
                Some(needs) => print_host_http(needs, out)?,
                None => print_native_build(*tier, native_build, "  ", out)?,
            }
            print_transfer_manager(*transfer_manager, out)?;
            writeln!(out, "  smithy-tls's suite: {}", suite.describe())?;
            for item in unusable {
                match item {
                    Unusable::Provider { provider, why } => {
                        writeln!(out, "  not here: provider {}: {why}", provider.name())?
                    }
                    Unusable::Roots { roots, why } => writeln!(out, "  not here: roots `{roots}`: {why}")?,
                }
            }
            if let Some(compiled) = report.rules.iter().find(|r| &r.name == rule) {
                writeln!(out, "  compiled table: [target.'cfg({})'.dependencies]", compiled.table_cfg)?;
            }
            if let (Some(value), Some(effect)) = (report.tls_override, &target.under_override) {
                print_override_target(value, triple, *tier, effect, out)?;
            }
            Ok(())
        }
    }
}

/// What the application's override does to one target: the provider it compiles there, with
/// its native build, or no TLS library, or why the provider does not build there and what does,
/// or that nothing changes.
fn print_override_target(
    value: TlsOverride,
    triple: &str,
    tier: u8,
    effect: &OverrideEffect,
    out: &mut dyn Write,
) -> io::Result<()> {
    write!(out, "  {HEADER}under {value}{HEADER:#}: ")?;
    match effect {
        OverrideEffect::Compiles { provider, replaces, native_build, roots, needs_feature, .. } => {
            if provider == replaces {
                writeln!(out, "provider {provider}, the rule's provider too")?;
            } else {
                writeln!(out, "provider {provider} in place of the rule's {replaces}")?;
            }
            if *needs_feature {
                writeln!(out, "    needs: {}", feature_advice(*provider))?;
            }
            if provider.brings_crypto() {
                print_native_build(tier, native_build, "    ", out)?;
            } else {
                writeln!(
                    out,
                    "    native build: none: smithy-default-tls compiles rustls and no crypto library; the \
                     application's own CryptoProvider (set_custom_crypto_provider, or rustls's process-wide \
                     default), installed before the first request, brings it"
                )?;
            }
            if let Some(roots) = roots {
                writeln!(out, "    roots: {roots}")?;
            }
            Ok(())
        }
        OverrideEffect::NoHostClient => writeln!(
            out,
            "no default client in place of the host's HTTP (wasi-http): the generated crates hand the SDK \
             neither client nor sleep; give each SDK client both (smithy-wasi-http's, say)"
        ),
        OverrideEffect::NoTls { replaces } => writeln!(
            out,
            "no TLS library at all in place of the rule's {replaces}: nothing native is compiled for TLS and the \
             default client fails every request with a non-retryable error naming the cfg; give each SDK client \
             an HTTP client of your own"
        ),
        OverrideEffect::DoesNotBuild { provider, why, instead } => {
            writeln!(out, "{WARNING}{provider} does not build for this target{WARNING:#}: {why}")?;
            let names: Vec<String> = instead.iter().map(|p| format!("`{p}`")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let fips_lost = provider.is_fips() && !instead.iter().any(|p| p.is_fips());
            let per_target = format!("to set one for this target alone: `[target.{triple}] rustflags`");
            match (names.is_empty(), fips_lost) {
                (true, _) => writeln!(
                    out,
                    "    instead: no other provider builds here; `none` with an HTTP client of your own ({per_target})"
                ),
                (false, true) => writeln!(
                    out,
                    "    instead: no FIPS provider builds here; without the FIPS module, {} ({per_target})",
                    or_list(&names)
                ),
                (false, false) => writeln!(out, "    instead: {} ({per_target})", or_list(&names)),
            }
        }
        OverrideEffect::Unchanged { why } => writeln!(out, "changes nothing here: {why}"),
    }
}

/// "a", "a or b", "a, b or c".
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Up to four items, then how many more: "a, b, c, d and 3 more".
fn sample(items: &[&str]) -> String {
    let shown = &items[..items.len().min(4)];
    match items.len() - shown.len() {
        0 => and_list(shown),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// What the application adds beside the cfg where the SDK crates do not ask for `provider`.
fn feature_advice(provider: Provider) -> String {
    format!(
        "the runtime's `{provider}` feature in the application's Cargo.toml as well (`features = [\"{provider}\"]` on \
         its smithy-default-tls dependency): the SDK crates do not ask for {provider} here, so its crates are not in \
         the application's lock"
    )
}

/// What an override does over the whole matrix, target by target, grouped for printing.
#[derive(Default)]
struct OverrideTally<'a> {
    /// The targets that compile the override's provider, with the build tools each needs.
    compiles: Vec<(&'a str, &'a [BuildTool])>,
    /// How many targets compile no TLS library (`none`).
    no_tls: usize,
    /// How many targets lose the host's HTTP (`none` where `wasi-http` serves).
    no_host_client: usize,
    /// How many targets keep the host's HTTP (a provider value where `wasi-http` serves).
    host_http: usize,
    /// Where the provider does not build, grouped by why.
    refused: Vec<(&'a str, Vec<&'a str>)>,
    /// The rules whose targets stay unchanged (no provider), and how many targets that is.
    unchanged_rules: Vec<&'a str>,
    unchanged: usize,
    /// Targets that cannot host an SDK (unchanged too).
    not_hosts: usize,
    /// The rules whose roots the override's provider cannot use.
    roots_rules: Vec<&'a str>,
    /// How many of the targets that compile the provider need its feature as well.
    needs_feature: usize,
}

impl<'a> OverrideTally<'a> {
    fn of(report: &'a ExplainReport) -> OverrideTally<'a> {
        let mut tally = OverrideTally::default();
        for target in &report.targets {
            let (rule, host_http) = match &target.verdict {
                Verdict::Served { rule, stack, .. } => (Some(rule.as_str()), stack.0 == crate::model::Stack::WasiHttp),
                Verdict::NotAHost { .. } => (None, false),
            };
            match (&target.under_override, rule) {
                (Some(OverrideEffect::Compiles { required_tools, roots, needs_feature, .. }), _) => {
                    tally.compiles.push((target.target.as_str(), required_tools));
                    tally.needs_feature += usize::from(*needs_feature);
                    if let (Some(_), Some(rule)) = (roots, rule) {
                        if !tally.roots_rules.contains(&rule) {
                            tally.roots_rules.push(rule);
                        }
                    }
                }
                (Some(OverrideEffect::NoTls { .. }), _) => tally.no_tls += 1,
                (Some(OverrideEffect::NoHostClient), _) => tally.no_host_client += 1,
                (Some(OverrideEffect::DoesNotBuild { why, .. }), _) => {
                    match tally.refused.iter_mut().find(|(w, _)| w == why) {
                        Some((_, targets)) => targets.push(&target.target),
                        None => tally.refused.push((why, vec![&target.target])),
                    }
                }
                (Some(OverrideEffect::Unchanged { .. }), Some(_)) if host_http => tally.host_http += 1,
                (Some(OverrideEffect::Unchanged { .. }), Some(rule)) => {
                    tally.unchanged += 1;
                    if !tally.unchanged_rules.contains(&rule) {
                        tally.unchanged_rules.push(rule);
                    }
                }
                (Some(OverrideEffect::Unchanged { .. }), None) => tally.not_hosts += 1,
                (None, _) => {}
            }
        }
        tally
    }
}

/// What `none` does over the matrix: targets that compile no TLS library, and those that lose
/// the host's HTTP.
fn print_none_counts(no_tls: usize, no_host_client: usize, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "  {no_tls} target(s) compile no TLS library in place of their rule's provider: the default client \
         fails every request; give each SDK client an HTTP client of your own"
    )?;
    if no_host_client > 0 {
        writeln!(out, "  {no_host_client} target(s) get no default client in place of the host's HTTP (wasi-http)")?;
    }
    Ok(())
}

/// The override over the whole matrix: how many targets compile its provider and what their
/// build hosts need, where it does not build (grouped by reason), and where it changes nothing.
fn print_override_matrix(value: TlsOverride, report: &ExplainReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{HEADER}under {value}:{HEADER:#}")?;
    let OverrideTally {
        compiles,
        no_tls,
        no_host_client,
        host_http,
        refused,
        unchanged_rules,
        unchanged,
        not_hosts,
        roots_rules,
        needs_feature,
    } = OverrideTally::of(report);
    match value.provider() {
        None => print_none_counts(no_tls, no_host_client, out)?,
        Some(provider) if !provider.brings_crypto() => writeln!(
            out,
            "  {} target(s) compile rustls with the application's own CryptoProvider in place of their rule's \
             provider, and no crypto library of smithy-default-tls's: install the provider before the first request",
            compiles.len()
        )?,
        Some(provider) => {
            writeln!(
                out,
                "  {} target(s) compile {provider} in place of their rule's provider; the build host needs {}",
                compiles.len(),
                override_tools(&compiles)
            )?;
        }
    }
    if let Some(provider) = value.provider().filter(|_| needs_feature > 0) {
        writeln!(out, "  {needs_feature} of them need {}", feature_advice(provider))?;
    }
    if !roots_rules.is_empty() {
        let rules: Vec<String> = roots_rules.iter().map(|r| format!("`{r}`")).collect();
        let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
        writeln!(
            out,
            "  the roots of rule(s) {} are ones {} cannot use: set --cfg smithy_tls_roots too (`--target` says which)",
            and_list(&rules),
            value.name()
        )?;
    }
    if let Some(provider) = value.provider().filter(|_| !refused.is_empty()) {
        let count: usize = refused.iter().map(|(_, targets)| targets.len()).sum();
        writeln!(out, "  {provider} does not build for {count} target(s):")?;
        for (why, targets) in &refused {
            writeln!(out, "    {}: {why}", sample(targets))?;
        }
    }
    if unchanged > 0 {
        let rules: Vec<String> = unchanged_rules.iter().map(|r| format!("`{r}`")).collect();
        let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
        writeln!(
            out,
            "  {unchanged} target(s) unchanged: their rule{} ({}) give{} them no provider, so the generated crates \
             have no runtime dependency there",
            if rules.len() == 1 { "" } else { "s" },
            and_list(&rules),
            if rules.len() == 1 { "s" } else { "" },
        )?;
    }
    if host_http > 0 {
        writeln!(
            out,
            "  {host_http} target(s) keep the host's HTTP (wasi-http): the host runs TLS, the value changes nothing"
        )?;
    }
    if not_hosts > 0 {
        writeln!(out, "  {not_hosts} target(s) that cannot host an SDK are unchanged too")?;
    }
    Ok(())
}

/// The tools the targets compiling the override's provider need: those every one of them needs,
/// then each of the others with the targets that need it (or, when that is most of them, the
/// targets that do not).
fn override_tools(compiles: &[(&str, &[BuildTool])]) -> String {
    let mut tools: Vec<BuildTool> = compiles.iter().flat_map(|(_, tools)| tools.iter().copied()).collect();
    tools.sort();
    tools.dedup();
    let (mut every, mut partly) = (Vec::new(), Vec::new());
    for tool in tools {
        let (needing, not_needing): (Vec<_>, Vec<_>) = compiles.iter().partition(|(_, tools)| tools.contains(&tool));
        let needing: Vec<&str> = needing.iter().map(|(target, _)| *target).collect();
        let not_needing: Vec<&str> = not_needing.iter().map(|(target, _)| *target).collect();
        if not_needing.is_empty() {
            every.push(tool.name());
        } else if not_needing.len() < needing.len() {
            partly.push(format!("{} on all but {}", tool.name(), sample(&not_needing)));
        } else {
            partly.push(format!("{} on {} of them ({})", tool.name(), needing.len(), sample(&needing)));
        }
    }
    std::iter::once(and_list(&every)).filter(|e| !e.is_empty()).chain(partly).collect::<Vec<_>>().join("; ")
}

/// Prints `presets`' list: name and description, one per line.
pub fn print_presets(report: &PresetsReport, out: &mut dyn Write) -> io::Result<()> {
    for preset in &report.presets {
        writeln!(out, "{:<18} {}", preset.name, preset.description)?;
    }
    Ok(())
}

/// Prints why a command failed: every diagnostic as rustc renders them, then the message.
pub fn print_failure(failure: &FailureReport, err: &mut dyn Write) -> io::Result<()> {
    for diagnostic in &failure.diagnostics {
        writeln!(err, "{}", diagnostic.render(true).trim_end())?;
        writeln!(err)?;
    }
    writeln!(err, "{ERROR}error{ERROR:#}: {}", failure.message)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_diff_keeps_every_line_ending_byte_for_byte() {
        let diff = "--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-old\r\n+new\r\n context\n";
        let mut out = Vec::new();
        super::print_diff(diff, &mut out).unwrap();
        let printed = String::from_utf8(out).unwrap();
        assert_eq!(anstream::adapter::strip_str(&printed).to_string(), diff);
    }
}
