//! Writes are all or nothing across everything one invocation touches: two SDK trees (two DIR
//! arguments) planned together, then written with a failure injected at every stage and every
//! rename in turn. After each failure every file of both trees is byte-identical to before.
//! Read-only files and symbolic links are refused before anything is written.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use smithy_tls_codegen::discover::discover;
use smithy_tls_codegen::model::CompiledPolicy;
use smithy_tls_codegen::plan::{plan, plan_revert, Plan};
use smithy_tls_codegen::write::{write_plans, FileOps, RealFiles, WriteError};
use smithy_tls_codegen::{compile, policy, presets};

fn compiled() -> CompiledPolicy {
    let parsed = policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap();
    compile::compile(&parsed).unwrap()
}

/// Two SDK roots, each holding copies of fixture crates.
fn two_trees() -> (tempfile::TempDir, Vec<PathBuf>) {
    let scratch = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees");
    let roots = vec![scratch.path().join("sdk-a"), scratch.path().join("sdk-b")];
    for (root, cases) in roots.iter().zip([["aws-config", "dotted-tables"], ["renamed-inline", "unformatted"]]) {
        // The runtime crate the policy's `[runtime] path` points at.
        smithy_tls_test_support::copy_tree(&fixtures.join("smithy-default-tls"), &root.join("smithy-default-tls"), &[])
            .unwrap();
        for case in cases {
            smithy_tls_test_support::copy_tree(&fixtures.join(case), &root.join(case), &[]).unwrap();
        }
    }
    (scratch, roots)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn plans(roots: &[PathBuf]) -> Vec<Plan> {
    let compiled = compiled();
    roots
        .iter()
        .map(|root| plan(&compiled, &discover(root, &compiled.policy.runtime.package).unwrap()).unwrap())
        .collect()
}

/// The real file system, with the `n`-th stage or rename (0-based) failing.
struct Failing {
    stage_at: Option<usize>,
    rename_at: Option<usize>,
    stages: AtomicUsize,
    renames: AtomicUsize,
}

impl Failing {
    fn new(stage_at: Option<usize>, rename_at: Option<usize>) -> Self {
        Failing { stage_at, rename_at, stages: AtomicUsize::new(0), renames: AtomicUsize::new(0) }
    }
}

fn injected() -> io::Error {
    io::Error::other("injected failure")
}

impl FileOps for Failing {
    fn stage(&self, target: &Path, contents: &str) -> io::Result<PathBuf> {
        if Some(self.stages.fetch_add(1, Ordering::SeqCst)) == self.stage_at {
            return Err(injected());
        }
        RealFiles.stage(target, contents)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        if Some(self.renames.fetch_add(1, Ordering::SeqCst)) == self.rename_at {
            return Err(injected());
        }
        RealFiles.rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        RealFiles.remove(path)
    }
}

#[test]
fn a_failure_at_any_rename_or_stage_leaves_both_trees_byte_identical() {
    let (scratch, roots) = two_trees();
    let before = snapshot(scratch.path());
    let planned = plans(&roots);
    let all: Vec<&Plan> = planned.iter().collect();
    let total: usize = all.iter().map(|p| p.changes().count()).sum();
    assert!(total >= 8, "both trees have files to change ({total})");
    for n in 0..total {
        let err = write_plans(&all, &Failing::new(None, Some(n))).expect_err("rename fails");
        assert!(matches!(err, WriteError::Commit { restored, .. } if restored == n), "rename {n}: {err}");
        assert!(err.to_string().contains("no file was changed"), "{err}");
        assert_eq!(snapshot(scratch.path()), before, "after a failed rename {n} of {total}");

        let err = write_plans(&all, &Failing::new(Some(n), None)).expect_err("stage fails");
        assert!(matches!(err, WriteError::Stage { .. }), "stage {n}: {err}");
        assert_eq!(snapshot(scratch.path()), before, "after a failed stage {n} of {total}");
    }
    // And without a failure, both trees are written.
    assert_eq!(write_plans(&all, &RealFiles).unwrap(), total);
    assert_ne!(snapshot(scratch.path()), before);
    assert!(plans(&roots).iter().all(Plan::is_up_to_date), "a second run has nothing to do");
}

#[test]
fn a_failed_revert_puts_removed_files_back() {
    let (scratch, roots) = two_trees();
    let all: Vec<Plan> = plans(&roots);
    write_plans(&all.iter().collect::<Vec<_>>(), &RealFiles).unwrap();
    let applied = snapshot(scratch.path());
    let compiled = compiled();
    let reverts: Vec<Plan> = roots
        .iter()
        .map(|root| plan_revert(&discover(root, &compiled.policy.runtime.package).unwrap()).unwrap())
        .collect();
    let reverts: Vec<&Plan> = reverts.iter().collect();
    let total: usize = reverts.iter().map(|p| p.changes().count()).sum();
    let removals = reverts.iter().flat_map(|p| p.changes()).filter(|c| c.updated.is_none()).count();
    assert_eq!(removals, 4, "each crate's module is removed");
    for n in 0..total {
        let err = write_plans(&reverts, &Failing::new(None, Some(n))).expect_err("rename fails");
        assert!(matches!(err, WriteError::Commit { restored, .. } if restored == n), "rename {n}: {err}");
        assert_eq!(snapshot(scratch.path()), applied, "after a failed rename {n} of {total}");
    }
    for n in 0..total - removals {
        write_plans(&reverts, &Failing::new(Some(n), None)).expect_err("stage fails");
        assert_eq!(snapshot(scratch.path()), applied, "after a failed stage {n}");
    }
    assert_eq!(write_plans(&reverts, &RealFiles).unwrap(), total);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees");
    for (root, case) in roots.iter().flat_map(|r| std::iter::repeat(r).zip(std::fs::read_dir(r).unwrap())) {
        let case = case.unwrap().file_name();
        let got: Vec<Vec<u8>> = snapshot(&root.join(&case)).into_values().collect();
        let want: Vec<Vec<u8>> = snapshot(&fixtures.join(&case)).into_values().collect();
        assert_eq!(got, want, "{case:?} is back to the fixture");
    }
}

/// Fails the last rename, and the restoring rename of the first file.
struct RollbackFails {
    renames: AtomicUsize,
    fail: [usize; 2],
}

impl FileOps for RollbackFails {
    fn stage(&self, target: &Path, contents: &str) -> io::Result<PathBuf> {
        RealFiles.stage(target, contents)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        if self.fail.contains(&self.renames.fetch_add(1, Ordering::SeqCst)) {
            return Err(injected());
        }
        RealFiles.rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        RealFiles.remove(path)
    }
}

#[test]
fn a_restore_that_fails_is_reported_file_by_file() {
    let (_scratch, roots) = two_trees();
    let planned = plans(&roots);
    let all: Vec<&Plan> = planned.iter().collect();
    let total: usize = all.iter().map(|p| p.changes().count()).sum();
    // Renames 0..total-1 succeed and rename total-1 fails. Restoring runs newest first, with one
    // rename per replaced file that existed before (new files are removed instead), so the
    // first file's restore is the last of those renames.
    let first = all.iter().flat_map(|p| p.changes()).next().unwrap();
    assert!(first.original.is_some());
    let existed = all.iter().flat_map(|p| p.changes()).take(total - 1).filter(|c| c.original.is_some()).count();
    let ops = RollbackFails { renames: AtomicUsize::new(0), fail: [total - 1, total - 1 + existed] };
    let err = write_plans(&all, &ops).expect_err("fails");
    let WriteError::Rollback { unrestored, .. } = &err else { panic!("{err}") };
    assert_eq!(unrestored.iter().map(|(p, _)| p).collect::<Vec<_>>(), [&first.path], "{err}");
    assert!(err.to_string().contains("restore them from version control"), "{err}");
}

#[test]
fn read_only_files_and_symbolic_links_are_refused_before_anything_is_written() {
    let (scratch, roots) = two_trees();
    let planned = plans(&roots);
    let all: Vec<&Plan> = planned.iter().collect();
    let last = all.iter().flat_map(|p| p.changes()).filter(|c| c.original.is_some()).last().unwrap().path.clone();

    let mut perms = std::fs::metadata(&last).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&last, perms.clone()).unwrap();
    let before = snapshot(scratch.path());
    let err = write_plans(&all, &RealFiles).expect_err("read-only");
    assert!(err.to_string().contains("is read-only"), "{err}");
    assert_eq!(snapshot(scratch.path()), before);
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&last, perms).unwrap();

    #[cfg(unix)]
    {
        let real = last.with_extension("real");
        std::fs::rename(&last, &real).unwrap();
        std::os::unix::fs::symlink(&real, &last).unwrap();
        let before = snapshot(scratch.path());
        let err = write_plans(&all, &RealFiles).expect_err("symbolic link");
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert_eq!(snapshot(scratch.path()), before);
        assert!(std::fs::symlink_metadata(&last).unwrap().file_type().is_symlink(), "the link is left alone");
    }
}

#[test]
fn a_second_run_on_a_tree_in_use_is_refused_and_writes_nothing() {
    use smithy_tls_codegen::lock::{Access, DirLock};
    let (scratch, roots) = two_trees();
    let before = snapshot(scratch.path());
    // Another run holds one crate of the second tree (given the crate, not the tree).
    let crate_dir = roots[1].join("unformatted");
    let held = DirLock::acquire(&crate_dir, Access::Write).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls"))
        .args(["apply", "--preset", "platform-default"])
        .args(&roots)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another smithy-tls run is working on this crate"), "{stderr}");
    assert_eq!(snapshot(scratch.path()), before, "nothing written, in either tree");
    // A check only reads: it shares the tree with other readers, not with a writer.
    let check =
        std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls")).arg("check").arg(&roots[1]).output().unwrap();
    assert_eq!(check.status.code(), Some(2), "a check waits for no writer: {}", String::from_utf8_lossy(&check.stderr));
    drop(held);
    let reader = DirLock::acquire(&crate_dir, Access::Read).unwrap();
    let check =
        std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls")).arg("check").arg(&roots[1]).output().unwrap();
    assert_eq!(check.status.code(), Some(1), "check beside a reader runs (and finds changes)");
    drop(reader);
}

#[test]
fn the_same_tree_twice_or_a_crate_of_a_tree_given_too_is_refused() {
    let (scratch, roots) = two_trees();
    let before = snapshot(scratch.path());
    for dirs in [vec![roots[0].clone(), roots[0].clone()], vec![roots[0].clone(), roots[0].join("aws-config")]] {
        let out =
            std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls")).arg("apply").args(&dirs).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("pass each SDK tree once"), "{stderr}");
    }
    assert_eq!(snapshot(scratch.path()), before);
}
