//! The `smithy-tls` command line: a thin layer over the library, one file per subcommand.

mod explain;
mod rewrite;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diag::Diagnostics;
use crate::model::CompiledPolicy;
use crate::policy::{parse_policy, PolicySource};
use crate::presets;

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
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rewrite the generated crates under DIR so each target gets the policy's TLS stack.
    Apply(RewriteArgs),
    /// Exit 1 and print a diff when `apply` would change anything (for CI).
    Check(RewriteArgs),
    /// Print what `apply` would change, as a unified diff.
    Diff(RewriteArgs),
    /// Take smithy-tls's edits out of the crates under DIR, back to what the generator wrote
    /// (the policy flags only name the runtime crate; every preset's is `smithy-default-tls`).
    Revert(RewriteArgs),
    /// Show which rule, provider and roots every builtin target gets (or one target, and why).
    Explain(ExplainArgs),
    /// List the embedded policy presets.
    Presets {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
}

/// Where the policy comes from.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// A policy file (TOML). Without it, the embedded preset is used.
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub policy: Option<PathBuf>,
    /// An embedded preset: platform-default, rustls-everywhere or portable.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
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
    /// points (check and diff: report it missing or stale). Without it, that crate must already be
    /// there, the right package at a matching version.
    #[arg(long)]
    pub vendor_runtime: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// SDK trees (or single crates) to process, searched recursively.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// A failure that ends the command, already rendered for the chosen format.
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) diagnostics: Option<Diagnostics>,
}

impl Failure {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Failure { message: message.into(), diagnostics: None }
    }
}

pub(crate) fn report_failure(format: Format, failure: Failure) -> ExitCode {
    match format {
        Format::Human => match &failure.diagnostics {
            Some(d) => eprintln!("{d}\n\nerror: {}", failure.message),
            None => eprintln!("error: {}", failure.message),
        },
        Format::Json => {
            let diagnostics = failure.diagnostics.map(|d| d.0).unwrap_or_default();
            let doc = serde_json::json!({ "ok": false, "error": failure.message, "diagnostics": diagnostics });
            if let Err(e) = print_json(&doc) {
                eprintln!("error: {} ({})", e.message, failure.message);
            }
        }
    }
    ExitCode::from(EXIT_ERROR)
}

/// Loads, parses and compiles the policy the arguments name.
pub(crate) fn load_policy(args: &PolicyArgs) -> Result<CompiledPolicy, Failure> {
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
        .map_err(|d| Failure { message: format!("{shown}: the policy is not valid"), diagnostics: Some(d) })?;
    crate::targets::compile(&parsed).map_err(|d| Failure {
        message: format!("{shown}: the policy does not serve every target correctly"),
        diagnostics: Some(d),
    })
}

/// Prints `value` as one pretty JSON document on stdout; when it cannot be serialized (a bug),
/// says so on stderr instead of printing nothing, and the command fails.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) -> Result<(), Failure> {
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            println!("{text}");
            Ok(())
        }
        Err(e) => Err(Failure::new(format!("cannot write the JSON report: {e} (a bug in smithy-tls)"))),
    }
}

pub(crate) fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
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
    match cli.command {
        Command::Apply(args) => rewrite::run(rewrite::Mode::Apply, args),
        Command::Check(args) => rewrite::run(rewrite::Mode::Check, args),
        Command::Diff(args) => rewrite::run(rewrite::Mode::Diff, args),
        Command::Revert(args) => rewrite::run(rewrite::Mode::Revert, args),
        Command::Explain(args) => explain::run(args),
        Command::Presets { format } => {
            // The presets are embedded and checked by tests; one that did not parse would show
            // without a description rather than take the listing down.
            let described: Vec<(&str, String)> = presets::names()
                .map(|name| {
                    let parsed = presets::preset(name).and_then(|source| crate::policy::parse_policy(source).ok());
                    (name, parsed.and_then(|p| p.policy.description).unwrap_or_default())
                })
                .collect();
            match format {
                Format::Human => {
                    for (name, description) in described {
                        println!("{name:<18} {description}");
                    }
                }
                Format::Json => {
                    let doc: Vec<_> = described
                        .iter()
                        .map(|(name, description)| serde_json::json!({ "name": name, "description": description }))
                        .collect();
                    if let Err(failure) = print_json(&doc) {
                        return report_failure(Format::Human, failure);
                    }
                }
            }
            ExitCode::from(EXIT_OK)
        }
    }
}
