//! Rewritten crates lint and document as warning-free as untouched ones: the published
//! aws-sdk-sts, rewritten with every preset (`apply --preset P --vendor-runtime`, so the placed
//! runtime crate is a workspace member beside it), passes `cargo clippy` and `cargo doc --no-deps`
//! with warnings denied on stable and on nightly, and so does the untouched crate, the control:
//! a toolchain whose own lints fail the published crate fails this test rather than passing it.
//!
//! Each variant is a workspace of its own (members share the package name `aws-sdk-sts`), its
//! dependencies from the registry, resolved as the other scratch trees resolve them, so their
//! builds (aws-lc-sys and s2n-tls-sys with their C builds among them) are shared through the
//! scratch target dir; the FIPS variant builds in `target/fips`, as the suite's FIPS builds do,
//! and nightly in `target/nightly` (none of its builds could be shared), beside stable: the two
//! toolchains' checks run side by side, as most of the time goes to compiling aws-sdk-sts on
//! one core.
//! Warnings are denied for the members only (`cargo clippy -- -D warnings`,
//! `RUSTDOCFLAGS=-D warnings`, which reaches rustdoc of the members only): what
//! `RUSTFLAGS=-D warnings` does to them, without making every dependency's build, the C ones
//! included, a new build for other flags.
//!
//! Stable builds each member with the features it has in use: the crate's defaults, and the
//! runtime with what the rewritten crate asks of it (`--no-default-features --features
//! aws-sdk-sts/default`; never the runtime's own defaults, which the FIPS provider refuses to
//! share a build with). Nightly, whose every build is a first one, leaves the TLS stacks out, so
//! it compiles no aws-lc, s2n-tls or FIPS module: the crate without `default-https-client` and
//! the legacy `rustls` (rustc still evaluates every `cfg` of the emitted module, the selected
//! one and the others alike), the runtime with rustls on ring and bundled roots. What that
//! leaves out (the provider modules' bodies, the runtime's aws-lc, s2n-tls and FIPS code) is
//! what stable checks.
//!
//! Needs clippy for both toolchains, the pinned stable (`rust-toolchain.toml`) and the dated
//! nightly (`[workspace.metadata.smithy-tls]` in Cargo.toml): scripts/test installs both; a
//! toolchain or clippy missing fails the test with what to run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use smithy_tls_codegen::presets;
use smithy_tls_e2e::{
    copy_dir, fetch_published, lean_scratch_build, lock_for, package_name, pin_lock, run, scratch_root,
    smithy_tls_binary, tail, workspace_target, PUBLISHED,
};

/// The toolchains every variant is checked with, by role; [`pinned`] names the toolchain of each.
const TOOLCHAINS: &[&str] = &["stable", "nightly"];

/// The rustup toolchain a role runs on: the suite's pinned stable and dated nightly
/// (`smithy_tls_test_support::toolchains`), so a new release changes nothing without a commit.
fn pinned(role: &str) -> String {
    match role {
        "stable" => smithy_tls_e2e::support::toolchains::stable(),
        "nightly" => smithy_tls_e2e::support::toolchains::nightly(),
        other => panic!("no toolchain for the role {other}"),
    }
}

/// The crate checked: the aws-sdk-sts the other end-to-end tests use.
const CRATE: &str = "aws-sdk-sts";

/// The variants: the published crate untouched (`None`), then each preset.
fn variants() -> Vec<Option<&'static str>> {
    std::iter::once(None).chain(presets::names().map(Some)).collect()
}

/// The package and feature selections `toolchain` checks for a variant: on stable, every member
/// as it is used; on nightly, the crate and the runtime each without a TLS stack but ring (two
/// runs: `--features smithy-default-tls/..` would also turn on the crate's optional dependency
/// of that name, and with it the preset's stack).
fn selections(toolchain: &str, preset: Option<&str>) -> Vec<Vec<&'static str>> {
    let lib = ["--lib", "--no-default-features", "--features"];
    if toolchain == "stable" {
        return vec![[&["--workspace"][..], &lib, &["aws-sdk-sts/default"]].concat()];
    }
    let mut runs = vec![[&["-p", CRATE][..], &lib, &["rt-tokio,sigv4a"]].concat()];
    if preset.is_some() {
        runs.push([&["-p", "smithy-default-tls"][..], &lib, &["rustls-ring,webpki"]].concat());
    }
    runs
}

/// `cargo` of `toolchain` through rustup, in `dir`, building into `target`, with no flags from
/// the environment that runs the tests (they would reach every unit, or pick another toolchain).
fn cargo(toolchain: &str, dir: &Path, target: &Path) -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", &pinned(toolchain), "cargo", "--locked"]).current_dir(dir);
    for var in [
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTUP_TOOLCHAIN",
        "CARGO",
    ] {
        cmd.env_remove(var);
    }
    lean_scratch_build(&mut cmd).env("CARGO_TARGET_DIR", target);
    cmd
}

/// Fails the test, saying what to install, unless `toolchain` has cargo, rustdoc and clippy.
fn require(role: &str) {
    let toolchain = pinned(role);
    let toolchain = toolchain.as_str();
    for (what, args) in
        [("cargo", &["cargo", "-V"][..]), ("rustdoc", &["rustdoc", "-V"]), ("clippy", &["cargo", "clippy", "-V"])]
    {
        let out = Command::new("rustup").args(["run", toolchain]).args(args).output();
        match out {
            Ok(out) if out.status.success() => println!("{toolchain}: {}", String::from_utf8_lossy(&out.stdout).trim()),
            Ok(out) => panic!(
                "{toolchain} has no {what} ({}): rustup toolchain install {toolchain} && rustup component add clippy \
                 --toolchain {toolchain} (scripts/test does this)",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => {
                panic!("cannot run rustup ({e}): this test checks the stable and nightly toolchains through rustup")
            }
        }
    }
}

/// What one cargo run said: whether it succeeded, and the diagnostics with a code (the lint or
/// error code), counted by package and code, with their rendered text.
struct Findings {
    ok: bool,
    counts: BTreeMap<(String, String), usize>,
    rendered: Vec<String>,
    /// Every package built (or found fresh: built before from the same files, flags and features).
    built: Vec<String>,
    stderr: String,
    secs: f64,
}

impl Findings {
    /// The findings of several runs as one.
    fn merge(all: Vec<Findings>) -> Findings {
        let mut merged = Findings {
            ok: true,
            counts: BTreeMap::new(),
            rendered: Vec::new(),
            built: Vec::new(),
            stderr: String::new(),
            secs: 0.0,
        };
        for f in all {
            merged.ok &= f.ok;
            for (key, n) in f.counts {
                *merged.counts.entry(key).or_insert(0) += n;
            }
            merged.rendered.extend(f.rendered);
            merged.built.extend(f.built);
            merged.stderr.push_str(&f.stderr);
            merged.secs += f.secs;
        }
        merged
    }

    fn total(&self) -> usize {
        self.counts.values().sum()
    }

    fn summary(&self) -> String {
        if self.counts.is_empty() {
            return "0".to_owned();
        }
        let parts: Vec<String> = self.counts.iter().map(|((pkg, code), n)| format!("{pkg}: {n} {code}")).collect();
        format!("{} ({})", self.total(), parts.join(", "))
    }
}

/// Runs `cmd` with JSON messages and reads them.
fn findings(cmd: &mut Command) -> Findings {
    let shown = format!("{cmd:?}");
    let started = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    let mut counts = BTreeMap::new();
    let mut rendered = Vec::new();
    let mut built = Vec::new();
    for message in
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
    {
        let name = package_name(message["package_id"].as_str().unwrap_or_default());
        match message["reason"].as_str() {
            Some("compiler-message") => {
                let diagnostic = &message["message"];
                let Some(code) = diagnostic["code"]["code"].as_str() else { continue };
                if matches!(diagnostic["level"].as_str(), Some("error" | "warning")) {
                    *counts.entry((name, code.to_owned())).or_insert(0) += 1;
                    rendered.push(diagnostic["rendered"].as_str().unwrap_or_default().to_owned());
                }
            }
            Some("compiler-artifact") => built.push(name),
            _ => {}
        }
    }
    Findings {
        ok: out.status.success(),
        counts,
        rendered,
        built,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        secs: started.elapsed().as_secs_f64(),
    }
}

/// The directory of the crate's copy in the workspace of variant `name`. Named after the variant:
/// cargo hashes a path package by its path inside the workspace, so copies at the same relative
/// path with the same features would share one build, and one variant's check would be taken
/// for another's (the files of a copy made earlier look older than that build).
fn member_dir(name: &str) -> String {
    format!("{CRATE}-{name}")
}

/// A workspace at `dir` holding a copy of the published crate (from `source`), rewritten with
/// `preset` and the runtime placed beside it as a second member, or left as published.
fn prepare_variant(dir: &Path, source: &Path, preset: Option<&str>, binary: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let member = member_dir(preset.unwrap_or("untouched"));
    copy_dir(source, &dir.join(&member), &["target"]);
    let mut members = vec![member.as_str()];
    if preset.is_some() {
        members.push("smithy-default-tls");
    }
    let members = members.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", ");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "# Scratch workspace made by the smithy-tls end-to-end tests (warnings.rs); not committed.\n\
             [workspace]\nresolver = \"2\"\nmembers = [{members}]\n"
        ),
    )
    .expect("write the workspace manifest");
    if let Some(preset) = preset {
        run(Command::new(binary).args(["apply", "--preset", preset, "--vendor-runtime"]).arg(dir));
        assert!(dir.join("smithy-default-tls/Cargo.toml").exists(), "{preset}: the runtime was not placed");
        assert!(dir.join(&member).join("src/default_http_client.rs").exists(), "{preset}: the crate was not wired");
    }
    // A lock records path packages by name, not directory: one for the untouched crate, one for
    // every rewritten variant (the presets add the same dependencies), on both toolchains.
    pin_lock(dir, &preset.map_or("warnings-untouched".to_owned(), |p| lock_for("warnings-rewritten", p)));
}

/// One variant's check on one toolchain.
struct Row {
    toolchain: &'static str,
    name: &'static str,
    clippy: Findings,
    doc: Findings,
}

/// Checks every variant with `toolchain`, in workspaces of its own under `root`: stable in the
/// scratch target dir (FIPS in `target/fips`), nightly in a target dir of its own (none of its
/// builds can be shared with stable's, and a separate dir lets the two run side by side).
fn check_with(toolchain: &'static str, root: &Path, source: &Path, binary: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    for preset in variants() {
        let name = preset.unwrap_or("untouched");
        let dir = root.join(toolchain).join(name);
        prepare_variant(&dir, source, preset, binary);
        let target = match (toolchain, preset) {
            // The FIPS provider builds apart from the others (aws-lc-rs's `fips` is build-wide).
            ("stable", Some("fips")) => workspace_target().join("fips"),
            ("stable", _) => workspace_target(),
            _ => workspace_target().join(toolchain),
        };
        let run_all = |tool: &str| {
            let all = selections(toolchain, preset)
                .iter()
                .map(|selected| {
                    let mut cmd = cargo(toolchain, &dir, &target);
                    if tool == "clippy" {
                        cmd.args(["clippy", "--message-format", "json"]).args(selected).args(["--", "-D", "warnings"]);
                    } else {
                        cmd.args(["doc", "--no-deps", "--message-format", "json"]).args(selected);
                        cmd.env("RUSTDOCFLAGS", "-D warnings");
                    }
                    findings(&mut cmd)
                })
                .collect();
            Findings::merge(all)
        };
        let (clippy, doc) = (run_all("clippy"), run_all("doc"));
        for (what, f) in [("clippy", &clippy), ("doc", &doc)] {
            println!("{toolchain} {name} {what}: {} finding(s) in {:.0} s", f.summary(), f.secs);
            // Both members were part of the checked build (a fresh one is the output of a build of
            // the same files, flags and features: each variant's crate has a path of its own).
            if f.ok {
                let mut expected = vec![CRATE];
                if preset.is_some() {
                    expected.push("smithy-default-tls");
                }
                for package in expected {
                    assert!(f.built.iter().any(|p| p == package), "{toolchain} {name} {what}: {package} was not built");
                }
            }
        }
        rows.push(Row { toolchain, name, clippy, doc });
    }
    rows
}

#[test]
fn rewritten_crates_lint_and_document_without_warnings_on_stable_and_nightly() {
    let started = Instant::now();
    for toolchain in TOOLCHAINS {
        require(toolchain);
    }
    let version =
        PUBLISHED.iter().find(|(name, _)| *name == CRATE).map(|(_, v)| *v).expect("the harness pins aws-sdk-sts");
    let root = scratch_root().join("warnings");
    let found = fetch_published(&root.join("fetch"), &[(CRATE, version)]);
    let source = &found.get(CRATE).and_then(|v| v.first()).expect("aws-sdk-sts resolved").1;
    let binary = smithy_tls_binary();

    // The toolchains side by side: most of the time goes to compiling aws-sdk-sts, one core each.
    let rows: Vec<Row> = std::thread::scope(|scope| {
        let lanes: Vec<_> =
            TOOLCHAINS.iter().map(|toolchain| scope.spawn(|| check_with(toolchain, &root, source, &binary))).collect();
        lanes.into_iter().flat_map(|lane| lane.join().expect("a toolchain's checks panicked")).collect()
    });

    let mut failures = Vec::new();
    println!("\n| toolchain | crate | clippy findings | doc findings | s |\n|---|---|---|---|---|");
    for row in &rows {
        let (toolchain, name) = (row.toolchain, row.name);
        println!(
            "| {toolchain} | {name} | {} | {} | {:.0} |",
            row.clippy.summary(),
            row.doc.summary(),
            row.clippy.secs + row.doc.secs
        );
        for (what, f) in [("clippy", &row.clippy), ("doc", &row.doc)] {
            if !f.ok || f.total() > 0 {
                failures.push(format!(
                    "{name} on {toolchain}, cargo {what}: {}\n{}\n--- stderr\n{}",
                    f.summary(),
                    f.rendered.join("\n"),
                    tail(&f.stderr, 40)
                ));
            }
        }
    }
    println!(
        "E2E warnings: {} variants x {} toolchains in {:.0} s",
        variants().len(),
        TOOLCHAINS.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "warnings denied, and some were found:\n\n{}", failures.join("\n\n"));
    let _ = std::fs::remove_dir_all(&root);
}

/// The package-name reading of cargo's JSON messages, on every package id form.
#[test]
fn package_names_are_read_from_every_id_form() {
    assert_eq!(package_name("path+file:///tmp/w/dir#my-crate@0.1.0"), "my-crate");
    let mut cmd = Command::new("printf");
    cmd.arg(concat!(
        r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#aws-sdk-sts@1.124.0"}"#,
        "\n",
        r#"{"reason":"compiler-artifact","package_id":"path+file:///tmp/w/smithy-default-tls#0.1.0"}"#,
        "\n",
        r#"{"reason":"compiler-message","package_id":"path+file:///tmp/w/aws-sdk-sts#1.124.0","message":{"level":"error","code":{"code":"unexpected_cfgs"},"rendered":"x"}}"#,
        "\n"
    ));
    let f = findings(&mut cmd);
    assert_eq!(f.built, ["aws-sdk-sts", "smithy-default-tls"]);
    assert_eq!(f.summary(), "1 (aws-sdk-sts: 1 unexpected_cfgs)");
}
