//! The `smithy-tls` command line, case by case: each `tests/cmd/*.toml` runs the binary once and
//! compares exit code, stdout and stderr (`*.stdout`, `*.stderr`, or inline); each
//! `tests/cmd/*.trycmd` runs several commands in one sandbox. `NAME.in/` is the working
//! directory (copied into a sandbox when the case may write), and files in `NAME.out/` must match
//! the sandbox afterwards. `[..]` and `...` elide what changes between versions and runs.

#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .register_bin("smithy-tls", std::path::Path::new(env!("CARGO_BIN_EXE_smithy-tls")))
        .env("NO_COLOR", "1")
        .case("tests/cmd/*.toml")
        .case("tests/cmd/*.trycmd");
}

/// Runs the binary on the bad-policy case's tree with `args` and `env`, returning stderr.
fn bad_policy_stderr(args: &[&str], env: &[(&str, &str)]) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmd/apply-bad-policy.in");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls"));
    cmd.current_dir(dir).args(args).args(["apply", "--policy", "bad.toml", "sdk"]);
    for var in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn colour_follows_the_flag_then_the_environment() {
    let colored = |s: &str| s.contains("\x1b[");
    // Not a terminal: plain unless forced.
    assert!(!colored(&bad_policy_stderr(&[], &[])));
    assert!(colored(&bad_policy_stderr(&[], &[("CLICOLOR_FORCE", "1")])));
    assert!(!colored(&bad_policy_stderr(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])));
    // The flag wins over the environment.
    assert!(colored(&bad_policy_stderr(&["--color", "always"], &[("NO_COLOR", "1")])));
    assert!(!colored(&bad_policy_stderr(&["--color", "never"], &[("CLICOLOR_FORCE", "1")])));
    // Coloured or not, the text is the same.
    let plain = bad_policy_stderr(&["--color", "never"], &[]);
    let styled = bad_policy_stderr(&["--color", "always"], &[]);
    assert_eq!(anstream::adapter::strip_str(&styled).to_string(), plain);
    assert!(plain.contains("error[P003]") && plain.contains("bad.toml:"), "{plain}");
}

#[test]
fn completions_are_printed_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out =
            std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls")).args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for word in ["apply", "check", "vendor-runtime", "stat"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
}

/// Runs the binary with stderr (and stdout) on a terminal, through util-linux's `script`, and
/// returns everything the terminal received.
fn on_a_terminal(args: &[&str], dir: &std::path::Path, env: &[(&str, &str)]) -> String {
    let script = std::path::Path::new("/usr/bin/script");
    assert!(script.exists(), "this test needs util-linux's `script` (Debian: bsdutils) to give the tool a terminal");
    let line = std::iter::once(env!("CARGO_BIN_EXE_smithy-tls"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = std::process::Command::new(script);
    cmd.current_dir(dir).args(["-qec", &line, "/dev/null"]);
    for var in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn on_a_terminal_planning_shows_a_progress_bar_and_clears_it() {
    let root = tempfile::tempdir().unwrap();
    let tree = root.path().join("tree");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees");
    smithy_tls_test_support::copy_tree(&fixtures, &tree, &[]).unwrap();
    let shown = on_a_terminal(&["diff", "--stat", "tree"], root.path(), &[]);
    assert!(shown.contains("planning") && shown.contains("crates"), "the bar on the terminal: {shown:?}");
    // Not a terminal: no bar at all (the bar draws nothing into a pipe).
    let piped = std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls"))
        .current_dir(root.path())
        .args(["diff", "--stat", "tree"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("planning"), "no bar into a pipe");
    // --quiet: no bar either, terminal or not.
    let quiet = on_a_terminal(&["--quiet", "diff", "--stat", "tree"], root.path(), &[]);
    assert!(!quiet.contains("planning"), "--quiet shows no bar: {quiet:?}");
}

#[test]
fn on_a_terminal_colour_is_on_unless_clicolor_or_no_color_say_no() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmd/apply-bad-policy.in");
    let colored = |s: &str| s.contains("\x1b[");
    let args = ["apply", "--policy", "bad.toml", "sdk"];
    assert!(colored(&on_a_terminal(&args, &dir, &[])), "auto colours a terminal");
    assert!(!colored(&on_a_terminal(&args, &dir, &[("CLICOLOR", "0")])), "CLICOLOR=0");
    assert!(!colored(&on_a_terminal(&args, &dir, &[("NO_COLOR", "1")])), "NO_COLOR");
    assert!(!colored(&on_a_terminal(&["--color", "never", "apply", "--policy", "bad.toml", "sdk"], &dir, &[])));
}

/// Every command that takes `--preset` names every embedded preset in its help, as `presets`
/// lists them.
#[test]
fn preset_help_names_every_preset() {
    for command in ["apply", "check", "diff", "revert", "explain"] {
        for flag in ["-h", "--help"] {
            let out =
                std::process::Command::new(env!("CARGO_BIN_EXE_smithy-tls")).args([command, flag]).output().unwrap();
            assert!(out.status.success(), "{command} {flag}");
            let help = String::from_utf8(out.stdout).unwrap();
            let line = help.lines().skip_while(|l| !l.contains("--preset")).take(2).collect::<Vec<_>>().join(" ");
            for name in smithy_tls_codegen::presets::names() {
                assert!(line.contains(name), "{command} {flag}: --preset help lacks {name}: {line}");
            }
        }
    }
}
