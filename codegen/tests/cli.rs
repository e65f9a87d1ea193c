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
