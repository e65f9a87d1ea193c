//! `apply`, `check`, `diff` and `revert`: one code path that plans, then writes or compares,
//! and reports what it did.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{finish, load_policy, Failure, RewriteArgs, EXIT_CHANGES, EXIT_OK};
use crate::discover::discover;
use crate::lock::{Access, DirLock};
use crate::pairing::{pair, unpair, UnpairError};
use crate::plan::{plan_revert, plan_with_progress, FileChange, Plan};
use crate::report::human::{self, RewriteCommand, RewriteView};
use crate::report::{FileChangeKind, FileStat, PolicyStamp, Report, RewriteReport, RewriteSummary, TreeReport};
use crate::write::{line_counts, unified_diff, write_plans, RealFiles};

pub(crate) fn run(command: RewriteCommand, args: RewriteArgs, mut view: RewriteView) -> ExitCode {
    if !command.writes() {
        view.apply_command = Some(apply_command(&args));
    }
    let wrap = match command {
        RewriteCommand::Apply => Report::Apply,
        RewriteCommand::Check => Report::Check,
        RewriteCommand::Diff => Report::Diff,
        RewriteCommand::Revert => Report::Revert,
    };
    let progress = args.format == super::Format::Human && !view.quiet;
    finish(
        args.format,
        rewrite(command, &args, progress),
        wrap,
        |report, out, err| human::print_rewrite(report, command, &view, out, err),
        |report| if command == RewriteCommand::Check && !report.summary.up_to_date { EXIT_CHANGES } else { EXIT_OK },
    )
}

/// A progress bar on stderr while planning, drawn only when stderr is a terminal (and not
/// `--quiet` or JSON); it goes away before anything else is printed.
fn progress_bar(shown: bool) -> indicatif::ProgressBar {
    let target = if shown { indicatif::ProgressDrawTarget::stderr() } else { indicatif::ProgressDrawTarget::hidden() };
    // Cleared however planning ends, so an error is not printed under a stale bar.
    let bar = indicatif::ProgressBar::with_draw_target(None, target).with_finish(indicatif::ProgressFinish::AndClear);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {pos}/{len} crates") {
        bar.set_style(style);
    }
    bar
}

fn rewrite(command: RewriteCommand, args: &RewriteArgs, progress: bool) -> Result<RewriteReport, Failure> {
    let compiled = load_policy(&args.policy)?;
    check_distinct_trees(&args.dirs)?;
    // One run per crate at a time, held until this run is done with it.
    let access = if command.writes() { Access::Write } else { Access::Read };
    let mut locks = Vec::new();
    let bar = progress_bar(progress);

    // Plan every tree before writing anything.
    let mut plans: Vec<(PathBuf, Plan)> = Vec::new();
    for dir in &args.dirs {
        let discovery = discover(dir, &compiled.policy.runtime.package).map_err(|e| match e.diagnostic() {
            Some(diagnostic) => Failure {
                message: format!("{}: cannot read the tree; no file was written", dir.display()),
                diagnostics: vec![diagnostic],
            },
            None => Failure::new(e.to_string()),
        })?;
        for found in &discovery.crates {
            locks.push(DirLock::acquire(&found.dir, access).map_err(|e| Failure::new(e.to_string()))?);
        }
        bar.set_message(format!("planning {}", dir.display()));
        bar.set_length(discovery.crates.len() as u64);
        bar.set_position(0);
        let planned = match command {
            RewriteCommand::Revert => plan_revert(&discovery),
            RewriteCommand::Apply | RewriteCommand::Check | RewriteCommand::Diff => {
                plan_with_progress(&compiled, &discovery, &|| bar.inc(1))
            }
        };
        let mut planned = planned.map_err(|errors| Failure {
            message: format!("{} crate(s) could not be planned; no file was written", errors.len()),
            diagnostics: errors.iter().map(crate::plan::PlanError::diagnostic).collect(),
        })?;
        if command != RewriteCommand::Revert && !planned.crates.is_empty() {
            pair_with_runtime(&compiled, &discovery, args.vendor_runtime, &mut planned)?;
        }
        if command == RewriteCommand::Revert && args.vendor_runtime {
            plan_runtime_removal(&compiled, &discovery, &mut planned)?;
        }
        plans.push((dir.clone(), planned));
    }
    bar.finish_and_clear();

    let unsupported: Vec<String> = plans
        .iter()
        .flat_map(|(_, p)| p.skipped.iter().filter(|s| s.unsupported()))
        .map(|s| format!("{} ({}): {}", s.name, s.dir.display(), s.reason))
        .collect();
    if args.strict && !unsupported.is_empty() {
        return Err(Failure::new(format!(
            "--strict: {} crate(s) cannot be wired; no file was written:\n{}",
            unsupported.len(),
            unsupported.iter().map(|u| format!("  - {u}")).collect::<Vec<_>>().join("\n")
        )));
    }

    let mut written = 0;
    if command.writes() {
        // One all-or-nothing write across every tree of this invocation.
        let all: Vec<&Plan> = plans.iter().map(|(_, p)| p).collect();
        written = write_plans(&all, &RealFiles).map_err(|e| Failure::new(e.to_string()))?;
        if command == RewriteCommand::Revert {
            remove_emptied_runtime_dirs(&compiled, &plans);
        }
    }
    Ok(report(command, &compiled, plans, written))
}

/// The report of a finished run: built once, from the plans, for both printers.
fn report(
    command: RewriteCommand,
    compiled: &crate::model::CompiledPolicy,
    plans: Vec<(PathBuf, Plan)>,
    written_files: usize,
) -> RewriteReport {
    let diff = (!command.writes())
        .then(|| plans.iter().flat_map(|(root, p)| p.changes().map(move |c| unified_diff(c, root))).collect());
    let wired_crates = plans.iter().map(|(_, p)| p.crates.len()).sum();
    let changed_crates = plans.iter().map(|(_, p)| p.crates.iter().filter(|c| !c.changes.is_empty()).count()).sum();
    let trees: Vec<TreeReport> = plans.into_iter().map(|(root, plan)| tree_report(root, plan)).collect();
    let files = || trees.iter().flat_map(|t| &t.files);
    let summary = RewriteSummary {
        wired_crates,
        changed_crates,
        changed_files: files().count(),
        written_files,
        skipped_crates: trees.iter().map(|t| t.skipped.len()).sum(),
        unsupported_crates: trees.iter().map(|t| t.skipped.iter().filter(|s| s.unsupported()).count()).sum(),
        insertions: files().map(|f| f.insertions).sum(),
        deletions: files().map(|f| f.deletions).sum(),
        up_to_date: files().next().is_none(),
    };
    RewriteReport {
        policy: PolicyStamp { name: compiled.policy.name.clone(), sha256: compiled.policy.content_hash.clone() },
        trees,
        summary,
        diff,
    }
}

fn tree_report(root: PathBuf, plan: Plan) -> TreeReport {
    let files = plan.changes().map(|change| file_stat(&root, change)).collect();
    TreeReport { root, crates: plan.crates, skipped: plan.skipped, files }
}

fn file_stat(root: &Path, change: &FileChange) -> FileStat {
    let (insertions, deletions) = line_counts(change);
    let kind = match (&change.original, &change.updated) {
        (None, _) => FileChangeKind::Create,
        (Some(_), None) => FileChangeKind::Remove,
        (Some(_), Some(_)) => FileChangeKind::Modify,
    };
    FileStat {
        path: change.path.strip_prefix(root).unwrap_or(&change.path).to_path_buf(),
        change: kind,
        insertions,
        deletions,
    }
}

/// Makes sure the tree pairs the generated code with the runtime it is made for, before anything
/// is written (see [`crate::pairing::pair`]): the problems become R001 diagnostics.
fn pair_with_runtime(
    compiled: &crate::model::CompiledPolicy,
    discovery: &crate::discover::Discovery,
    vendor: bool,
    plan: &mut Plan,
) -> Result<(), Failure> {
    let wired = discovery.crates.iter().map(|found| &found.path_dependencies);
    plan.vendored =
        pair(&compiled.policy.runtime, &discovery.root, wired, vendor).map_err(|e| match e.diagnostic() {
            Some(diagnostic) => Failure {
                message: "the tree cannot pair the generated code with its runtime crate; no file was written"
                    .to_owned(),
                diagnostics: vec![diagnostic],
            },
            None => Failure::new(e.to_string()),
        })?;
    Ok(())
}

/// With `revert --vendor-runtime`: plans taking out the runtime crate `apply --vendor-runtime`
/// placed at the policy's `[runtime] path`, before anything is written (see
/// [`crate::pairing::unpair`]); refused (R002) when it is not the runtime this smithy-tls ships,
/// so no other crate's files, and no half crate, go.
fn plan_runtime_removal(
    compiled: &crate::model::CompiledPolicy,
    discovery: &crate::discover::Discovery,
    plan: &mut Plan,
) -> Result<(), Failure> {
    let wired = discovery.crates.iter().map(|found| &found.path_dependencies);
    plan.vendored =
        unpair(&compiled.policy.runtime, &discovery.root, wired).map_err(|e| match (&e, e.diagnostic()) {
            (UnpairError::Unvendor { dir, .. }, Some(diagnostic)) => Failure {
                message: format!(
                    "{}: not the runtime crate this smithy-tls places; no file was written",
                    dir.display()
                ),
                diagnostics: vec![diagnostic],
            },
            _ => Failure::new(e.to_string()),
        })?;
    Ok(())
}

/// After `revert --vendor-runtime` removed a runtime crate's files: its directories, when that
/// left them empty (what else is there, a `target/` or a lock file, keeps them).
fn remove_emptied_runtime_dirs(compiled: &crate::model::CompiledPolicy, plans: &[(PathBuf, Plan)]) {
    let Some(path) = &compiled.policy.runtime.path else { return };
    for (root, _) in plans.iter().filter(|(_, plan)| !plan.vendored.is_empty()) {
        for dir in crate::pairing::shipped::runtime_dirs(&root.join(path)) {
            // Fails, and is meant to, on a directory that is not empty.
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// The `apply` command line that updates what `check` found.
fn apply_command(args: &RewriteArgs) -> String {
    let mut line = "smithy-tls apply ".to_owned();
    match (&args.policy.policy, &args.policy.preset) {
        (Some(p), _) => line.push_str(&format!("--policy {} ", p.display())),
        (None, Some(name)) => line.push_str(&format!("--preset {name} ")),
        (None, None) => {}
    }
    if args.vendor_runtime {
        line.push_str("--vendor-runtime ");
    }
    line.push_str(&args.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" "));
    line
}

/// The DIR arguments must be distinct trees: the same tree twice, or one inside another, would
/// plan the same crate twice.
fn check_distinct_trees(dirs: &[PathBuf]) -> Result<(), Failure> {
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
