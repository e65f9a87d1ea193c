//! The `smithy-tls` command line: a thin layer over the library, one file per subcommand.

mod explain;
mod rewrite;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diag::Diagnostic;
use crate::model::{CompiledPolicy, TlsOverride};
use crate::policy::{parse_policy, ParsedPolicy, PolicySource};
use crate::presets;
use crate::report::human::{self, RewriteCommand, RewriteView};
use crate::report::{Document, FailureReport, Outcome, PresetReport, PresetsReport, Report};

/// Exit code: success (and, for `check`, nothing to change).
pub const EXIT_OK: u8 = 0;
/// Exit code: `check` found files that `apply` would change.
pub const EXIT_CHANGES: u8 = 1;
/// Exit code: bad input (policy, tree, arguments) or an unsupported crate under `--strict`.
pub const EXIT_ERROR: u8 = 2;

/// Per-platform TLS defaults for Smithy-generated Rust SDKs.
#[derive(Debug, Parser)]
#[command(name = "smithy-tls", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Output options every command takes.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Output options every command takes.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// When to colour the output: `auto` colours a terminal unless NO_COLOR is set (CLICOLOR=0
    /// turns it off, CLICOLOR_FORCE=1 on where it is not a terminal).
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, global = true, value_name = "WHEN")]
    pub color: ColorWhen,
    /// Print nothing but errors (the exit code tells the rest).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, as the environment allows.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    fn choice(self) -> anstream::ColorChoice {
        match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rewrite the generated crates under DIR so each target gets the policy's TLS stack.
    Apply(RewriteArgs),
    /// Exit 1 and print a diff when `apply` would change anything (for CI).
    Check(CompareArgs),
    /// Print what `apply` would change, as a unified diff.
    Diff(CompareArgs),
    /// Take smithy-tls's edits out of the crates under DIR, back to what the generator wrote
    /// (the policy flags only name the runtime crate, and with --vendor-runtime where it is; every
    /// preset's is `smithy-default-tls` beside the crates).
    Revert(RewriteArgs),
    /// Show which rule, provider and roots every builtin target gets and what it compiles (or one
    /// target, and why).
    Explain(ExplainArgs),
    /// List the embedded policy presets.
    Presets {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Print the JSON Schema of every `--format json` document (draft 2020-12).
    Schema,
    /// Print a shell completion script (e.g. `smithy-tls completions bash > /etc/bash_completion.d/smithy-tls`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Where the policy comes from.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// A policy file (TOML). Without it, the embedded preset is used.
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub policy: Option<PathBuf>,
    /// An embedded preset (the help lists them, from [`presets::PRESETS`]).
    #[arg(long, value_name = "NAME", help = preset_help())]
    pub preset: Option<String>,
}

/// `--preset`'s help, naming every embedded preset and the default, so it cannot fall behind
/// the list.
fn preset_help() -> String {
    let names: Vec<&str> = presets::names().collect();
    let listed = match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("An embedded preset: {listed} (default: {})", presets::DEFAULT_PRESET)
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    Human,
    /// One JSON document on stdout, for pipelines.
    Json,
}

/// Arguments of apply, check, diff and revert.
#[derive(Debug, Args)]
pub struct RewriteArgs {
    /// The policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Treat crates that look like generated clients but cannot be wired as errors.
    #[arg(long)]
    pub strict: bool,
    /// Write the runtime crate the generated code is made for where the policy's `[runtime] path`
    /// points (check and diff: report it missing or stale; revert: remove the files it wrote there,
    /// when they are as written). Without it, that crate must already be there, the right package
    /// at a matching version.
    #[arg(long)]
    pub vendor_runtime: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// SDK trees (or single crates) to process, searched recursively.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

/// Arguments of check and diff.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// What to compare.
    #[command(flatten)]
    pub rewrite: RewriteArgs,
    /// Print how many lines each file would gain and lose (like `git diff --stat`) instead of
    /// the diff.
    #[arg(long)]
    pub stat: bool,
}

/// Arguments of explain.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Explain one target triple instead of printing the whole matrix.
    #[arg(long, value_name = "TRIPLE")]
    pub target: Option<String>,
    /// Also show what each target compiles when the application overrides the provider with
    /// `--cfg smithy_tls="VALUE"` in its RUSTFLAGS: the provider, its native libraries and the
    /// build tools they need, or why it does not build there.
    #[arg(long = "override", value_name = "VALUE")]
    pub tls_override: Option<TlsOverride>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `--override`'s values: the provider names and `none`, each with what it compiles.
impl ValueEnum for TlsOverride {
    fn value_variants<'a>() -> &'a [Self] {
        &TlsOverride::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.summary()))
    }
}

/// A failure that ends the command.
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl Failure {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Failure { message: message.into(), diagnostics: Vec::new() }
    }

    fn report(self) -> FailureReport {
        FailureReport { message: self.message, diagnostics: self.diagnostics }
    }
}

/// Prints what a command did, or why it failed, in the chosen format, and gives its exit code
/// (`code` for a report; [`EXIT_ERROR`] for a failure). `wrap` names the command in the JSON.
pub(crate) fn finish<T>(
    format: Format,
    result: Result<T, Failure>,
    wrap: fn(Outcome<T>) -> Report,
    human: impl FnOnce(&T, &mut dyn Write, &mut dyn Write) -> std::io::Result<()>,
    code: impl FnOnce(&T) -> u8,
) -> ExitCode {
    let (exit, printed) = match (format, result) {
        (Format::Json, Ok(report)) => {
            let exit = code(&report);
            (exit, print_json(&Document::new(wrap(Outcome::Ok(report)))))
        }
        (Format::Json, Err(failure)) => {
            (EXIT_ERROR, print_json(&Document::new(wrap(Outcome::Error(failure.report())))))
        }
        (Format::Human, Ok(report)) => {
            let exit = code(&report);
            (exit, human(&report, &mut anstream::stdout().lock(), &mut anstream::stderr().lock()))
        }
        (Format::Human, Err(failure)) => {
            (EXIT_ERROR, human::print_failure(&failure.report(), &mut anstream::stderr().lock()))
        }
    };
    match printed {
        Ok(()) => ExitCode::from(exit),
        // A closed pipe (`smithy-tls diff | head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(exit),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: cannot print the report: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Loads, parses and compiles the policy the arguments name.
pub(crate) fn load_policy(args: &PolicyArgs) -> Result<CompiledPolicy, Failure> {
    load_parsed_policy(args).map(|(_, compiled)| compiled)
}

/// Loads, parses and compiles the policy the arguments name, keeping the parsed policy for the
/// diagnostics raised about a policy that compiles (notes).
pub(crate) fn load_parsed_policy(args: &PolicyArgs) -> Result<(ParsedPolicy, CompiledPolicy), Failure> {
    let source = match (&args.policy, &args.preset) {
        (Some(path), _) => {
            let text = crate::read::read_text(path)
                .map_err(|e| Failure::new(format!("{}: cannot read the policy: {e}", path.display())))?;
            PolicySource { path: path.clone(), text }
        }
        (None, name) => {
            let name = name.as_deref().unwrap_or(presets::DEFAULT_PRESET);
            presets::preset(name).ok_or_else(|| {
                Failure::new(format!(
                    "unknown preset `{name}`; available: {}",
                    presets::names().collect::<Vec<_>>().join(", ")
                ))
            })?
        }
    };
    let shown = source.path.display().to_string();
    let parsed = parse_policy(source)
        .map_err(|d| Failure { message: format!("{shown}: the policy is not valid"), diagnostics: d.0 })?;
    let compiled = crate::compile::compile(&parsed).map_err(|d| Failure {
        message: format!("{shown}: the policy does not serve every target correctly"),
        diagnostics: d.0,
    })?;
    Ok((parsed, compiled))
}

/// Prints `value` as one pretty JSON document on stdout (a value that cannot be serialized is
/// a bug in smithy-tls, reported as an error rather than an empty document).
fn print_json<T: serde::Serialize>(value: &T) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| std::io::Error::other(format!("cannot write the JSON report: {e} (a bug in smithy-tls)")))?;
    writeln!(std::io::stdout().lock(), "{text}")
}

/// Parses the process arguments and runs the command.
pub fn main() -> ExitCode {
    run(Cli::parse())
}

/// Runs the command line `args` (the first item is the program name), as the binary would.
///
/// ```
/// let code = smithy_tls_codegen::cli::run_args(["smithy-tls", "presets"]);
/// assert_eq!(code, std::process::ExitCode::SUCCESS);
/// ```
pub fn run_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => run(cli),
        Err(e) => {
            let _ = e.print();
            ExitCode::from(if e.use_stderr() { EXIT_ERROR } else { EXIT_OK })
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    cli.output.color.choice().write_global();
    let quiet = cli.output.quiet;
    match cli.command {
        Command::Apply(args) => rewrite::run(RewriteCommand::Apply, args, RewriteView { quiet, ..Default::default() }),
        Command::Check(args) => rewrite::run(
            RewriteCommand::Check,
            args.rewrite,
            RewriteView { quiet, stat: args.stat, apply_command: None },
        ),
        Command::Diff(args) => rewrite::run(
            RewriteCommand::Diff,
            args.rewrite,
            RewriteView { quiet, stat: args.stat, apply_command: None },
        ),
        Command::Revert(args) => {
            rewrite::run(RewriteCommand::Revert, args, RewriteView { quiet, ..Default::default() })
        }
        Command::Explain(args) => explain::run(args, quiet),
        Command::Presets { format } => finish(
            format,
            Ok(presets_report()),
            Report::Presets,
            |report, out, _| if quiet { Ok(()) } else { human::print_presets(report, out) },
            |_| EXIT_OK,
        ),
        Command::Schema => match print_json(&Document::json_schema()) {
            Ok(()) => ExitCode::from(EXIT_OK),
            // `smithy-tls schema | head`: the reader chose to stop.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_OK),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(EXIT_ERROR)
            }
        },
        Command::Completions { shell } => {
            use clap::CommandFactory as _;
            use clap_complete::Generator as _;
            let mut command = Cli::command();
            command.set_bin_name("smithy-tls");
            command.build();
            match shell.try_generate(&command, &mut std::io::stdout().lock()) {
                Ok(()) => ExitCode::from(EXIT_OK),
                Err(e) => {
                    eprintln!("error: cannot print the completion script: {e}");
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
    }
}

/// Every embedded preset with its description. The presets are embedded and checked by tests;
/// one that did not parse would show without a description rather than take the listing down.
fn presets_report() -> PresetsReport {
    let presets = presets::names()
        .map(|name| {
            let parsed = presets::preset(name).and_then(|source| crate::policy::parse_policy(source).ok());
            PresetReport {
                name: name.to_owned(),
                description: parsed.and_then(|p| p.policy.description).unwrap_or_default(),
            }
        })
        .collect();
    PresetsReport { presets }
}
