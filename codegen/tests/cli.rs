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
