//! `apply`, `check`, `diff` and `revert`: one code path that plans, then writes, compares or
//! prints.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use super::{load_policy, report_failure, Failure, Format, RewriteArgs, EXIT_CHANGES, EXIT_OK};
use crate::discover::discover;
use crate::lock::{Access, DirLock};
use crate::plan::{plan, plan_revert, Plan};
use crate::write::{unified_diff, write_plans, RealFiles};

/// Which of the commands runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Apply,
    Check,
    Diff,
    Revert,
}

impl Mode {
    /// Whether the command writes its plan.
    fn writes(self) -> bool {
        matches!(self, Mode::Apply | Mode::Revert)
    }
}

pub(crate) fn run(mode: Mode, args: RewriteArgs) -> ExitCode {
    match run_inner(mode, &args) {
        Ok(code) => code,
        Err(failure) => report_failure(args.format, failure),
    }
}

fn run_inner(mode: Mode, args: &RewriteArgs) -> Result<ExitCode, Failure> {
    let compiled = load_policy(&args.policy)?;
    let progress = args.format == Format::Human && std::io::stderr().is_terminal();

    check_distinct_trees(&args.dirs)?;
    // One run per crate at a time, held until this run is done with it.
    let access = if mode.writes() { Access::Write } else { Access::Read };
    let mut locks = Vec::new();

    // Plan every tree before writing anything.
    let mut plans: Vec<(std::path::PathBuf, Plan)> = Vec::new();
    for dir in &args.dirs {
        if progress {
            eprint!("\rplanning {} …", dir.display());
        }
        let discovery = discover(dir, &compiled.policy.runtime.package).map_err(|e| Failure::new(e.to_string()))?;
        for found in &discovery.crates {
            locks.push(DirLock::acquire(&found.dir, access).map_err(|e| Failure::new(e.to_string()))?);
        }
        let planned = match mode {
            Mode::Revert => plan_revert(&discovery),
            Mode::Apply | Mode::Check | Mode::Diff => plan(&compiled, &discovery),
        };
        let planned = planned.map_err(|errors| {
            Failure::new(format!(
                "{} crate(s) could not be planned; no file was written:\n{}",
                errors.len(),
                errors.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n")
            ))
        })?;
        let mut planned = planned;
        if mode != Mode::Revert && !planned.crates.is_empty() {
            pair_with_runtime(&compiled, dir, args.vendor_runtime, &mut planned)?;
        }
        plans.push((dir.clone(), planned));
    }
    if progress {
        eprint!("\r\x1b[2K");
    }

    let unsupported: Vec<String> = plans
        .iter()
        .flat_map(|(_, p)| p.skipped.iter().filter(|s| s.unsupported))
        .map(|s| format!("{} ({}): {}", s.name, s.dir.display(), s.reason))
        .collect();
    if args.strict && !unsupported.is_empty() {
        return Err(Failure::new(format!(
            "--strict: {} crate(s) cannot be wired; no file was written:\n{}",
            unsupported.len(),
            unsupported.iter().map(|u| format!("  - {u}")).collect::<Vec<_>>().join("\n")
        )));
    }

    let changed_files: usize = plans.iter().map(|(_, p)| p.changes().count()).sum();
    let mut written = 0;
    if mode.writes() {
        // One all-or-nothing write across every tree of this invocation.
        let all: Vec<&Plan> = plans.iter().map(|(_, p)| p).collect();
        written = write_plans(&all, &RealFiles).map_err(|e| Failure::new(e.to_string()))?;
    }
    let color = !mode.writes() && super::stdout_is_terminal() && args.format == Format::Human;
    let diff: String = if mode.writes() {
        String::new()
    } else {
        plans.iter().flat_map(|(root, p)| p.changes().map(move |c| unified_diff(c, root, color))).collect()
    };

    match args.format {
        Format::Json => {
            let trees: Vec<_> = plans
                .iter()
                .map(|(root, p)| {
                    serde_json::json!({
                        "root": root,
                        "crates": p.crates.iter().map(|c| serde_json::json!({
                            "name": c.name,
                            "dir": c.dir,
                            "kind": c.kind,
                            "changed_files": c.changes.iter().map(|f| &f.path).collect::<Vec<_>>(),
                            "notes": c.notes,
                        })).collect::<Vec<_>>(),
                        "skipped": p.skipped,
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "ok": true,
                "command": format!("{mode:?}").to_lowercase(),
                "policy": { "name": compiled.policy.name, "sha256": compiled.policy.content_hash },
                "trees": trees,
                "changed_files": changed_files,
                "written_files": written,
                "up_to_date": changed_files == 0,
                "diff": if mode.writes() { None } else { Some(&diff) },
            });
            super::print_json(&doc)?;
        }
        Format::Human => {
            let mut out = std::io::stdout().lock();
            if !mode.writes() {
                let _ = write!(out, "{diff}");
            }
            let wired: usize = plans.iter().map(|(_, p)| p.crates.len()).sum();
            let changed_crates: usize =
                plans.iter().map(|(_, p)| p.crates.iter().filter(|c| !c.changes.is_empty()).count()).sum();
            for (_, p) in &plans {
                for s in p.skipped.iter().filter(|s| s.unsupported) {
                    eprintln!("warning: left {} untouched: {}", s.name, s.reason);
                }
                for note in p.crates.iter().flat_map(|c| &c.notes) {
                    eprintln!("warning: {note}");
                }
            }
            let summary = match mode {
                Mode::Apply => format!(
                    "policy `{}`: {wired} crate(s) wired, {changed_crates} changed, {written} file(s) written, {} left untouched ({} unsupported)",
                    compiled.policy.name,
                    plans.iter().map(|(_, p)| p.skipped.len()).sum::<usize>(),
                    unsupported.len()
                ),
                Mode::Revert => format!(
                    "{changed_crates} crate(s) reverted, {written} file(s) written; {} crate(s) had nothing of smithy-tls",
                    wired - changed_crates
                ),
                Mode::Check | Mode::Diff if changed_files == 0 => {
                    format!("policy `{}`: {wired} crate(s) up to date", compiled.policy.name)
                }
                Mode::Check | Mode::Diff => format!(
                    "policy `{}`: {changed_files} file(s) in {changed_crates} crate(s) would change; run `smithy-tls apply {}{}{}` to update them",
                    compiled.policy.name,
                    policy_flag(args),
                    if args.vendor_runtime { "--vendor-runtime " } else { "" },
                    args.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" ")
                ),
            };
            eprintln!("{summary}");
        }
    }
    Ok(ExitCode::from(if mode == Mode::Check && changed_files > 0 { EXIT_CHANGES } else { EXIT_OK }))
}

/// Makes sure the tree pairs the generated code with the runtime it is made for, before anything
/// is written: with `--vendor-runtime` the shipped runtime is planned at the policy's `[runtime]
/// path`; without, the crate there must be the policy's package at a matching version.
fn pair_with_runtime(
    compiled: &crate::model::CompiledPolicy,
    root: &std::path::Path,
    vendor: bool,
    plan: &mut Plan,
) -> Result<(), Failure> {
    let runtime = &compiled.policy.runtime;
    let Some(path) = &runtime.path else {
        if vendor {
            return Err(Failure::new(
                "--vendor-runtime: the policy's [runtime] has no `path` to write the runtime crate to",
            ));
        }
        return Ok(());
    };
    let dir = root.join(path);
    if vendor {
        plan.vendored = crate::plan::plan_vendored_runtime(&dir).map_err(|e| Failure::new(e.to_string()))?;
        return Ok(());
    }
    match crate::plan::check_runtime_crate(&dir, &runtime.package, &runtime.version) {
        None => Ok(()),
        Some(problem) => Err(Failure::new(format!(
            "the runtime crate the generated code needs is not usable: {problem}; no file was written. Pass \
             --vendor-runtime to write the runtime crate this smithy-tls ships there, or point the policy's \
             [runtime] `path` at it"
        ))),
    }
}

fn policy_flag(args: &RewriteArgs) -> String {
    match (&args.policy.policy, &args.policy.preset) {
        (Some(p), _) => format!("--policy {} ", p.display()),
        (None, Some(name)) => format!("--preset {name} "),
        (None, None) => String::new(),
    }
}

/// The DIR arguments must be distinct trees: the same tree twice, or one inside another, would
/// plan the same crate twice.
fn check_distinct_trees(dirs: &[std::path::PathBuf]) -> Result<(), Failure> {
    let canonical = dirs
        .iter()
        .map(|dir| dir.canonicalize().map_err(|e| Failure::new(format!("{}: cannot read: {e}", dir.display()))))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, a) in canonical.iter().enumerate() {
        for (j, b) in canonical.iter().enumerate() {
            if i != j && b.starts_with(a) {
                let what = if a == b { "is the same tree as" } else { "is inside" };
                return Err(Failure::new(format!(
                    "{} {what} {}: pass each SDK tree once, and not a crate of a tree given too",
                    dirs[j].display(),
                    dirs[i].display()
                )));
            }
        }
    }
    Ok(())
}
