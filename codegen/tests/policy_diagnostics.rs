//! Every policy check reports a stable code, the line and column it points at, and a message
//! and help that say what is wrong and what to do. Parse-time checks (P001–P010, P018) come from
//! `policy::parse_policy`; target-level checks (P011–P013) from `compile::compile`.
//!
//! Every policy text below starts on line 1 (no leading newline), so the line numbers in the
//! assertions can be read straight off the text.

use smithy_tls_codegen::diag::{Diagnostic, Diagnostics, Location, Severity};
use smithy_tls_codegen::model::{CompiledPolicy, Provider, Roots};
use smithy_tls_codegen::policy::{parse_policy, ParsedPolicy, PolicySource};
use smithy_tls_codegen::{compile, targets};

/// Where a policy diagnostic points: every one of them has a place.
fn loc(d: &Diagnostic) -> &Location {
    d.location.as_ref().unwrap_or_else(|| panic!("a policy diagnostic without a place: {d}"))
}

const FILE: &str = "policies/bad.toml";

fn source(text: &str) -> PolicySource {
    PolicySource { path: FILE.into(), text: text.to_owned() }
}

fn parse(text: &str) -> Result<ParsedPolicy, Diagnostics> {
    parse_policy(source(text))
}

/// Diagnostics of a policy that must fail to parse.
fn parse_errors(text: &str) -> Vec<Diagnostic> {
    match parse(text) {
        Ok(parsed) => panic!("expected parse errors, but the policy parsed: {:?}", parsed.policy),
        Err(d) => {
            assert!(d.has_errors(), "Err without an error-severity diagnostic:\n{d}");
            d.0
        }
    }
}

/// Diagnostics of a policy that parses but must fail to compile.
fn compile_errors(text: &str) -> Vec<Diagnostic> {
    let parsed = parse(text).unwrap_or_else(|d| panic!("expected the policy to parse:\n{d}"));
    match compile::compile(&parsed) {
        Ok(_) => panic!("expected compile errors, but the policy compiled"),
        Err(d) => d.0,
    }
}

fn compiled(text: &str) -> CompiledPolicy {
    let parsed = parse(text).unwrap_or_else(|d| panic!("expected the policy to parse:\n{d}"));
    compile::compile(&parsed).unwrap_or_else(|d| panic!("expected the policy to compile:\n{d}"))
}

/// The diagnostics other than the provider and roots support checks (P013, P016, P017), which
/// policies written to exercise another check also trip on the targets their rules do not
/// narrow for (big-endian ARM, QNX, iOS with native roots, ...).
fn without_support_checks(diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags.into_iter().filter(|d| !matches!(d.code, "P013" | "P016" | "P017")).collect()
}

/// The one diagnostic with `code`; fails when there are none or several.
fn only<'a>(diags: &'a [Diagnostic], code: &str) -> &'a Diagnostic {
    let found: Vec<&Diagnostic> = diags.iter().filter(|d| d.code == code).collect();
    assert_eq!(found.len(), 1, "expected exactly one {code}, got:\n{}", Diagnostics(diags.to_vec()));
    found[0]
}

/// Checks one diagnostic's code, location (1-based line and column), and message/help fragments.
#[track_caller]
fn check(d: &Diagnostic, code: &str, line: usize, column: usize, message: &str, help: &str) {
    assert_eq!(d.code, code, "code of:\n{d}");
    assert_eq!(d.severity, Severity::Error, "severity of:\n{d}");
    assert_eq!(d.file.to_str(), Some(FILE), "file of:\n{d}");
    assert_eq!((loc(d).line, loc(d).column), (line, column), "line:column of:\n{d}");
    assert!(d.message.contains(message), "message {:?} lacks {message:?}", d.message);
    let h = d.help.as_deref().unwrap_or_default();
    assert!(h.contains(help), "help {h:?} lacks {help:?}");
    // The rendered form carries the same location.
    assert!(d.to_string().contains(&format!("--> {FILE}:{line}:{column}\n")), "rendered:\n{d}");
}

// ---------------------------------------------------------------------------------------------
// Parse-time checks
// ---------------------------------------------------------------------------------------------

#[test]
fn p001_invalid_toml_points_at_the_syntax_error() {
    let text = r#"name = "t"
[runtime
version = "0.1"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    // Right after `[runtime`, where the `]` is missing.
    check(&diags[0], "P001", 2, 9, "not valid TOML", "fix the TOML syntax");
    assert!(diags[0].message.contains("expected `]`"), "{}", diags[0].message);
    assert_eq!(loc(&diags[0]).source_line, "[runtime");
}

#[test]
fn p001_duplicate_key_is_invalid_toml() {
    let text = r#"name = "t"
name = "u"

[runtime]
version = "0.1"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    let d = only(&diags, "P001");
    assert_eq!(loc(d).line, 2, "{d}");
    assert!(d.message.contains("duplicate key"), "{}", d.message);
}

#[test]
fn p002_unknown_top_level_key() {
    let text = r#"name = "t"
colour = "blue"

[runtime]
version = "0.1"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(
        &diags[0],
        "P002",
        2,
        1,
        "unknown key `colour` in the top level",
        "allowed keys here: name, description, runtime, features, rule, fallback",
    );
    // The marker covers the key, not the value.
    assert_eq!(loc(&diags[0]).width, "colour".len());
}

#[test]
fn p002_unknown_key_inside_a_rule() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "rustls-ring"
roots = "webpki"
priority = 1

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(
        &diags[0],
        "P002",
        11,
        1,
        "unknown key `priority` in [[rule]]",
        "allowed keys here: name, cfg, provider, roots",
    );
}

#[test]
fn p002_cfg_is_not_allowed_in_the_fallback() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[fallback]
name = "elsewhere"
cfg = 'unix'
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    check(
        only(&diags, "P002"),
        "P002",
        8,
        1,
        "unknown key `cfg` in [fallback]",
        "allowed keys here: name, provider, roots",
    );
}

#[test]
fn p003_unknown_provider() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "boringssl"
roots = "webpki"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(
        &diags[0],
        "P003",
        9,
        12,
        "unknown provider `boringssl`",
        &format!("use one of: {}, wasi-http, none", Provider::ALL.map(|p| p.name()).join(", ")),
    );
    // The marker covers the whole quoted value.
    assert_eq!(loc(&diags[0]).width, "\"boringssl\"".len());
}

#[test]
fn p003_unknown_roots() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "rustls-ring"
roots = "mozilla"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P003", 10, 9, "unknown roots `mozilla`", "use one of: native, webpki");
}

#[test]
fn p004_missing_roots_for_a_provider() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "rustls-ring"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    // Points at the rule's table header.
    check(&diags[0], "P004", 6, 1, "missing `roots` in [[rule]]", "add roots = \"native\" | \"webpki\"");
    assert_eq!(loc(&diags[0]).source_line, "[[rule]]");
}

#[test]
fn p004_missing_roots_in_the_fallback() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[fallback]
name = "elsewhere"
provider = "rustls-aws-lc"
"#;
    let diags = parse_errors(text);
    check(only(&diags, "P004"), "P004", 6, 1, "missing `roots` in [fallback]", "roots = \"native\"");
}

#[test]
fn p004_missing_runtime_table_points_at_the_start() {
    let text = r#"name = "t"

[fallback]
name = "elsewhere"
provider = "none"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P004", 1, 1, "missing `[runtime]` table", "add `[runtime]` with `version = \"...\"`");
}

#[test]
fn p007_absolute_runtime_path() {
    let text = r#"name = "t"

[runtime]
version = "0.1"
path = "/opt/smithy-default-tls"

[fallback]
name = "elsewhere"
provider = "none"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P007", 5, 8, "`path` must be relative to the SDK root", "path = \"smithy-default-tls\"");
}

#[test]
fn p005_missing_fallback_points_at_the_end_of_the_file() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    // Just after the last character of the file (not on the empty line past its final newline).
    check(&diags[0], "P005", 10, 17, "no `[fallback]` rule", "add a `[fallback]` table");
}

#[test]
fn p006_duplicate_rule_names() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "wasm"
cfg = 'target_os = "linux"'
provider = "rustls-ring"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    // Points at the second use.
    check(&diags[0], "P006", 11, 1, "rule name `wasm` is used twice", "give every rule a distinct name");
}

#[test]
fn p006_fallback_reusing_a_rule_name() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "rustls-ring"
roots = "native"

[fallback]
name = "linux"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    let d = only(&diags, "P006");
    check(d, "P006", 12, 1, "rule name `linux` is used twice", "distinct name");
    assert_eq!(loc(d).source_line, "[fallback]");
}

#[test]
fn p008_roots_with_provider_none() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"
roots = "webpki"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P008", 10, 9, "`roots` has no meaning with provider \"none\"", "remove `roots` from this rule");
}

/// A policy whose Linux rule has `provider`, `roots` (none when empty) and `empty-store`.
fn empty_store_with(provider: &str, roots: &str, empty_store: &str) -> String {
    let roots = if roots.is_empty() { String::new() } else { format!("roots = \"{roots}\"\n") };
    linux_rule_and_fallback(provider, &format!("{roots}empty-store = {empty_store}\n"), "")
}

/// A policy with one Linux rule for `provider`, its further lines `rule_lines` (from line 10),
/// and a rustls-ring fallback with bundled roots and the further lines `fallback_lines`.
fn linux_rule_and_fallback(provider: &str, rule_lines: &str, fallback_lines: &str) -> String {
    format!(
        r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "{provider}"
{rule_lines}
[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
{fallback_lines}"#
    )
}

#[test]
fn empty_store_is_fail_unless_a_native_rule_says_webpki() {
    use smithy_tls_codegen::model::{EmptyStore, Stack};
    let stack = |text: &str| parse(text).unwrap_or_else(|d| panic!("{d}")).policy.rules[0].stack;
    let native = |provider| Stack::Tls { provider, roots: Roots::Native, empty_store: EmptyStore::Webpki };
    assert_eq!(stack(&empty_store_with("rustls-aws-lc", "native", "\"webpki\"")), native(Provider::RustlsAwsLc));
    assert_eq!(stack(&empty_store_with("s2n-tls", "native", "\"webpki\"")), native(Provider::S2nTls));
    assert_eq!(stack(&empty_store_with("rustls-ring", "native", "\"fail\"")).empty_store(), EmptyStore::Fail);
    let default = parse(&empty_store_with("rustls-ring", "native", "\"fail\"").replace("empty-store = \"fail\"\n", ""));
    assert_eq!(default.unwrap().policy.rules[0].stack.empty_store(), EmptyStore::Fail, "off unless asked for");
}

#[test]
fn p008_empty_store_where_no_store_is_read() {
    for (roots, with) in [("webpki", "roots \"webpki\""), ("platform-verifier", "roots \"platform-verifier\"")] {
        let diags = parse_errors(&empty_store_with("rustls-ring", roots, "\"webpki\""));
        assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
        let message = format!("`empty-store` has no meaning with {with}: only `native` roots read a store");
        check(&diags[0], "P008", 11, 15, &message, "remove `empty-store`");
    }
    let diags = parse_errors(&empty_store_with("none", "", "\"webpki\""));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P008", 10, 15, "`empty-store` has no meaning with provider \"none\"", "remove `empty-store`");
}

#[test]
fn p003_unknown_empty_store_and_p002_not_a_string() {
    let diags = parse_errors(&empty_store_with("rustls-ring", "native", "\"mozilla\""));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P003", 11, 15, "unknown empty-store `mozilla`", "use one of: fail, webpki");
    let diags = parse_errors(&empty_store_with("rustls-ring", "native", "true"));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P002", 11, 15, "`empty-store` in [[rule]] must be a string", "empty-store = \"...\"");
}

/// A rule giving `provider` platform-verifier roots on Linux.
fn platform_verifier_with(provider: &str) -> String {
    format!(
        r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "{provider}"
roots = "platform-verifier"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#
    )
}

#[test]
fn p009_platform_verifier_needs_a_rustls_provider() {
    // The message names the provider the rule named, FIPS or not.
    for provider in ["s2n-tls", "s2n-tls-fips"] {
        let diags = parse_errors(&platform_verifier_with(provider));
        assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
        let message = format!("roots \"platform-verifier\" needs a rustls provider, not {provider}");
        check(&diags[0], "P009", 10, 9, &message, "use \"native\"");
        assert!(diags[0].message.ends_with(&format!("not {provider}")), "{}", diags[0].message);
        assert!(diags[0].help.as_deref().unwrap_or_default().starts_with(&format!("{provider} reads")));
        assert_eq!(loc(&diags[0]).width, "\"platform-verifier\"".len());
    }
}

#[test]
fn snapshot_p009_for_s2n_tls_fips() {
    let Err(diags) = parse(&platform_verifier_with("s2n-tls-fips")) else { panic!("expected errors") };
    insta::assert_snapshot!(diags.to_string());
}

const PLATFORM_VERIFIER_POLICY: &str = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "apple-and-windows"
cfg = 'all(any(target_vendor = "apple", target_os = "windows"), any(target_arch = "x86_64", target_arch = "aarch64"), target_pointer_width = "64")'
provider = "rustls-aws-lc"
roots = "platform-verifier"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "platform-verifier"
"#;

#[test]
fn p016_platform_verifier_on_android_is_refused_with_the_targets() {
    let diags = compile_errors(PLATFORM_VERIFIER_POLICY);
    let d = only(&diags, "P016");
    check(d, "P016", 20, 9, "roots `platform-verifier` of rule `elsewhere` cannot serve", "JNI context");
    assert!(d.message.contains("linux-android"), "names Android targets: {}", d.message);
}

#[test]
fn platform_verifier_with_rustls_off_android_compiles() {
    let text = PLATFORM_VERIFIER_POLICY
        .replace(
            "[fallback]",
            "[[rule]]\nname = \"android\"\ncfg = 'target_os = \"android\"'\nprovider = \"rustls-ring\"\nroots = \"webpki\"\n\n[fallback]",
        )
        .replace("provider = \"rustls-ring\"\nroots = \"platform-verifier\"", "provider = \"none\"");
    let policy = compiled(&text);
    let apple = policy.rules.iter().find(|r| r.name == "apple-and-windows").expect("rule");
    assert_eq!(apple.stack.roots(), Some(Roots::PlatformVerifier));
    assert!(apple.targets.iter().any(|t| t == "aarch64-apple-darwin"));
    assert!(apple.targets.iter().any(|t| t == "x86_64-pc-windows-msvc"));
}

/// A one-rule policy whose rule has `cfg = <cfg>` on line 8, column 7 (the opening quote).
/// Neither the rule nor the fallback gives a client, so the policy compiles whenever the cfg is
/// valid (what these tests are about), whatever targets it matches.
fn with_cfg(cfg: &str) -> String {
    format!(
        r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "r"
cfg = {cfg}
provider = "none"

[fallback]
name = "elsewhere"
provider = "none"
"#
    )
}

#[test]
fn p010_cfg_syntax_error() {
    let diags = parse_errors(&with_cfg(r#"'all(target_os = "linux"'"#));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    let d = &diags[0];
    check(d, "P010", 8, 7, "invalid cfg predicate", "write a Rust cfg predicate over target_* keys");
    // The message quotes what was written; the marker covers the whole value.
    assert!(d.message.contains(r#"`all(target_os = "linux"`"#), "{}", d.message);
    assert_eq!(loc(d).width, r#"'all(target_os = "linux"'"#.len());
}

#[test]
fn p010_feature_is_not_a_target_key() {
    let diags = parse_errors(&with_cfg(r#"'all(target_os = "linux", feature = "x")'"#));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P010", 8, 7, "`feature` cannot decide a target's TLS stack", "target_* keys");
    assert!(diags[0].message.contains("target_os, target_family, target_env"), "{}", diags[0].message);
}

#[test]
fn p010_test_flag_is_not_a_target_property() {
    let diags = parse_errors(&with_cfg("'any(test, unix)'"));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P010", 8, 7, "`test` is not a target property", "target_* keys");
}

#[test]
fn p010_other_malformed_predicates() {
    for (cfg, fragment) in [
        ("'debug_assertions'", "`debug_assertions` is not a target property"),
        (r#"'not(unix, windows)'"#, "not(...) takes exactly one predicate"),
        (r#"'either(unix, windows)'"#, "unknown combinator `either`"),
        (r#"'target_os = linux'"#, "must be a string literal"),
        (r#"'cfg(unix, windows)'"#, "cfg(...) takes exactly one predicate"),
    ] {
        let diags = parse_errors(&with_cfg(cfg));
        let d = only(&diags, "P010");
        assert_eq!((loc(d).line, loc(d).column), (8, 7), "{cfg}:\n{d}");
        assert!(d.message.contains(fragment), "{cfg}: message {:?} lacks {fragment:?}", d.message);
    }
}

#[test]
fn p018_value_no_builtin_target_has_points_at_the_value() {
    let diags = parse_errors(&with_cfg(r#"'cfg(any(target_os = "linux", target_os = "darwin"))'"#));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    let d = &diags[0];
    check(
        d,
        "P018",
        8,
        49,
        "no builtin rustc target has target_os = \"darwin\"",
        "did you mean target_os = \"macos\"?",
    );
    // The marker covers the quoted value, not the whole cfg.
    assert_eq!(loc(d).width, "\"darwin\"".len());
}

#[test]
fn p018_each_unknown_value_once_with_its_nearest_known_value() {
    let diags = parse_errors(&with_cfg(
        r#"'any(target_os = "andriod", target_arch = "arm64", target_env = "mus", target_os = "andriod")'"#,
    ));
    let found: Vec<(usize, &str)> =
        diags.iter().map(|d| (loc(d).column, d.help.as_deref().unwrap_or_default())).collect();
    assert_eq!(
        found,
        [
            (24, "did you mean target_os = \"android\"?"),
            (49, "did you mean target_arch = \"aarch64\"?"),
            (71, "did you mean target_env = \"musl\"?"),
        ],
        "{}",
        Diagnostics(diags.clone())
    );
}

#[test]
fn p018_without_a_near_value_lists_the_known_ones() {
    let diags = parse_errors(&with_cfg(r#"'target_os = "plan9"'"#));
    let d = only(&diags, "P018");
    check(d, "P018", 8, 20, "target_os = \"plan9\"", "the target_os values of rustc's builtin targets: \"aix\", ");
    let help = d.help.as_deref().unwrap_or_default();
    for known in ["\"linux\"", "\"nto\"", "\"windows\""] {
        assert!(help.contains(known), "{help}");
    }
}

#[test]
fn p018_in_a_basic_string_points_at_the_escaped_value() {
    let diags = parse_errors(&with_cfg(r#""cfg(target_vendor = \"aple\")""#));
    let d = only(&diags, "P018");
    check(d, "P018", 8, 28, "target_vendor = \"aple\"", "did you mean target_vendor = \"apple\"?");
    assert_eq!(loc(d).width, r#"\"aple\""#.len());
}

#[test]
fn p018_accepts_every_value_some_builtin_target_has() {
    // Implicit values (no OS, no environment, no vendor) and values cfg-expr's list knows ahead
    // of some rustc releases (QNX 8's `qnx`) are values of builtin targets.
    for cfg in [
        r#"'target_os = "none"'"#,
        r#"'all(target_os = "linux", target_env = "")'"#,
        r#"'all(target_os = "linux", target_vendor = "unknown")'"#,
        r#"'target_os = "qnx"'"#,
        r#"'all(target_pointer_width = "16", target_endian = "little")'"#,
    ] {
        if let Err(d) = parse(&with_cfg(cfg)) {
            panic!("{cfg}:\n{d}");
        }
    }
}

#[test]
fn several_parse_errors_are_reported_together_in_file_order() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "boringssl"
roots = "mozilla"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = parse_errors(text);
    let located: Vec<(&str, usize, usize)> = diags.iter().map(|d| (d.code, loc(d).line, loc(d).column)).collect();
    assert_eq!(located, [("P003", 9, 12), ("P003", 10, 9)]);
}

// ---------------------------------------------------------------------------------------------
// Target-level checks
// ---------------------------------------------------------------------------------------------

#[test]
fn p011_rule_shadowed_by_one_earlier_rule_names_it() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "unix"
cfg = 'unix'
provider = "rustls-ring"
roots = "native"

[[rule]]
name = "linux-gnu"
cfg = 'all(target_os = "linux", target_env = "gnu")'
provider = "rustls-aws-lc"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = without_support_checks(compile_errors(text));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    let d = &diags[0];
    check(d, "P011", 19, 7, "rule `linux-gnu` can never match", "move this rule above the rules that cover it");
    assert!(d.message.contains("earlier rules (unix) already cover all"), "{}", d.message);
    // `wasm` does not overlap linux-gnu, so it is not named as covering it.
    assert!(!d.message.contains("wasm"), "{}", d.message);
}

#[test]
fn p011_rule_shadowed_by_two_earlier_rules_names_both() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "rustls-ring"
roots = "native"

[[rule]]
name = "apple"
cfg = 'target_vendor = "apple"'
provider = "rustls-ring"
roots = "native"

[[rule]]
name = "linux-or-mac"
cfg = 'any(target_os = "linux", target_os = "macos")'
provider = "rustls-aws-lc"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = without_support_checks(compile_errors(text));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(
        &diags[0],
        "P011",
        25,
        7,
        // (The only Linux wasm target, wasm32-wali-linux-musl, has no std: `wasm` does not
        // overlap it.)
        "rule `linux-or-mac` can never match: earlier rules (linux, apple)",
        "remove it",
    );
}

#[test]
fn p012_rule_matching_no_builtin_target() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "mac-musl"
cfg = 'cfg(all(target_os = "macos", target_env = "musl"))'
provider = "rustls-aws-lc"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    // Each value is some target's (no P018); no target has both.
    let diags = without_support_checks(compile_errors(text));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(
        &diags[0],
        "P012",
        13,
        7,
        "rule `mac-musl` matches no builtin rustc target",
        "no builtin target has all the values this cfg asks for together",
    );
}

#[test]
fn p013_s2n_tls_on_windows() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "windows"
cfg = 'target_os = "windows"'
provider = "s2n-tls"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = compile_errors(text);
    // The rule on Windows (the fallback's ring also misses a few targets; not checked here).
    let on_rule: Vec<&Diagnostic> = diags.iter().filter(|d| loc(d).line == 14).collect();
    assert_eq!(on_rule.len(), 1, "{}", Diagnostics(diags.clone()));
    let d = on_rule[0];
    check(
        d,
        "P013",
        14,
        12,
        "provider `s2n-tls` of rule `windows` cannot serve",
        "s2n-tls builds only for Linux and macOS",
    );
    assert!(d.message.contains("x86_64-pc-windows-msvc") || d.message.contains(" more"), "{}", d.message);
    assert!(d.message.contains("aarch64-pc-windows-msvc"), "{}", d.message);
}

/// `wasi-http` serves WASI 0.2 only: a rule that also gets wasip1 (no host HTTP there) or a
/// target with sockets is refused, the help saying what to use there; on wasip2 alone it is
/// served, and it takes no roots (the host verifies).
#[test]
fn p013_wasi_http_off_wasip2_and_p008_its_roots() {
    let policy = |cfg: &str, extra: &str| {
        format!(
            r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasi"
cfg = '{cfg}'
provider = "wasi-http"
{extra}
[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[fallback]
name = "elsewhere"
provider = "rustls-custom"
roots = "webpki"
"#
        )
    };
    let diags = compile_errors(&policy(r#"target_os = "wasi""#, ""));
    let on_rule: Vec<&Diagnostic> = diags.iter().filter(|d| loc(d).line == 9).collect();
    assert_eq!(on_rule.len(), 1, "{}", Diagnostics(diags.clone()));
    check(on_rule[0], "P013", 9, 12, "provider `wasi-http` of rule `wasi` cannot serve", "only wasm32-wasip2 hosts");
    assert!(on_rule[0].message.contains("wasm32-wasip1"), "{}", on_rule[0].message);
    assert!(!on_rule[0].message.contains("wasm32-wasip2"), "{}", on_rule[0].message);

    let diags = compile_errors(&policy(r#"any(target_os = "linux", target_env = "p2")"#, ""));
    let on_rule: Vec<&Diagnostic> = diags.iter().filter(|d| loc(d).line == 9).collect();
    assert_eq!(on_rule.len(), 1, "{}", Diagnostics(diags.clone()));
    check(on_rule[0], "P013", 9, 12, "cannot serve", "give this target a TLS provider");

    let wasip2 = policy(r#"all(target_os = "wasi", target_env = "p2")"#, "");
    let compiled = compiled(&wasip2);
    let rule = &compiled.rules[0];
    assert_eq!((rule.stack.provider_name(), rule.targets.as_slice()), ("wasi-http", &["wasm32-wasip2".to_owned()][..]));

    let diags = parse_errors(&policy(r#"all(target_os = "wasi", target_env = "p2")"#, "roots = \"webpki\"\n"));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P008", 10, 9, "`roots` has no meaning with provider \"wasi-http\"", "remove `roots`");
}

#[test]
fn p013_openssl_where_the_system_has_no_openssl_to_honour() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "desktop"
cfg = 'any(target_os = "macos", target_os = "windows", target_os = "openbsd")'
provider = "openssl"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = compile_errors(text);
    let on_rule: Vec<&Diagnostic> = diags.iter().filter(|d| loc(d).line == 14).collect();
    assert_eq!(on_rule.len(), 1, "{}", Diagnostics(diags.clone()));
    let d = on_rule[0];
    check(d, "P013", 14, 12, "provider `openssl` of rule `desktop` cannot serve", "no system OpenSSL to honour here");
    let rendered = Diagnostics(diags.clone()).to_string();
    assert!(rendered.contains("ships LibreSSL, not OpenSSL"), "OpenBSD's reason: {rendered}");
    assert!(d.message.contains("aarch64-apple-darwin"), "{}", d.message);
}

#[test]
fn p013_openssl_on_linux_and_freebsd_is_fine() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "system"
cfg = 'any(target_os = "linux", target_os = "freebsd", target_os = "netbsd")'
provider = "openssl"
roots = "native"

[fallback]
name = "elsewhere"
provider = "none"
"#;
    let compiled = compile::compile(&parse(text).expect("parses")).expect("openssl serves Linux, FreeBSD and NetBSD");
    assert!(compiled.rules[1].targets.iter().any(|t| t == "x86_64-unknown-linux-gnu"));
}

#[test]
fn p013_s2n_tls_on_linux_and_macos_is_fine() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "s2n"
cfg = 'all(any(target_os = "linux", target_os = "macos"), any(target_arch = "x86_64", target_arch = "aarch64"), target_endian = "little", target_pointer_width = "64")'
provider = "s2n-tls"
roots = "native"

[fallback]
name = "elsewhere"
provider = "none"
"#;
    let c = compiled(text);
    assert!(c.rules[1].targets.contains(&"x86_64-unknown-linux-gnu".to_owned()));
    assert!(c.rules[1].targets.contains(&"aarch64-apple-darwin".to_owned()));
}

#[test]
fn p013_any_provider_on_wasm() {
    for provider in ["rustls-aws-lc", "rustls-ring", "s2n-tls"] {
        let text = format!(
            r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "browser"
cfg = 'target_arch = "wasm32"'
provider = "{provider}"
roots = "webpki"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#
        );
        let diags = compile_errors(&text);
        // The rule on wasm32, and the fallback on the remaining wasm targets (wasm64, …).
        let on_rule: Vec<&Diagnostic> = diags.iter().filter(|d| loc(d).line == 9).collect();
        assert_eq!(on_rule.len(), 1, "{provider}:\n{}", Diagnostics(diags.clone()));
        check(
            on_rule[0],
            "P013",
            9,
            12,
            &format!("provider `{provider}` of rule `browser` cannot serve"),
            "wasm targets have no sockets",
        );
        assert!(on_rule[0].message.contains("wasm32-wasip2"), "{}", on_rule[0].message);
    }
}

#[test]
fn p013_fallback_without_a_wasm_rule() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[fallback]
name = "everywhere"
provider = "rustls-aws-lc"
roots = "native"
"#;
    let diags = compile_errors(text);
    let d = only(&diags, "P013");
    check(d, "P013", 8, 12, "provider `rustls-aws-lc` of rule `everywhere` cannot serve", "use provider \"none\"");
    // Four targets are named, the rest counted; one help line per distinct reason.
    assert!(d.message.contains(" more"), "{}", d.message);
    assert!(d.help.as_deref().is_some_and(|h| h.contains("aws-lc has no support for this CPU")), "{d}");
}

// ---------------------------------------------------------------------------------------------
// The rendered layout
// ---------------------------------------------------------------------------------------------

#[test]
fn snapshot_rendered_diagnostic_with_two_digit_line() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "unix"
cfg = 'unix'
provider = "rustls-ring"
roots = "native"

[[rule]]
name = "linux-gnu"
cfg = 'all(target_os = "linux", target_env = "gnu")'
provider = "rustls-aws-lc"
roots = "native"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let diags = compile_errors(text);
    // The target count follows cfg-expr's builtin list; the layout is what is pinned here.
    insta::with_settings!({ filters => vec![(r"cover all \d+ of", "cover all [N] of")] }, {
        insta::assert_snapshot!(only(&diags, "P011").to_string());
    });
}

#[test]
fn snapshot_rendered_diagnostics_list() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "linux"
cfg = 'target_os = "linux"'
provider = "boringssl"
roots = "mozilla"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let Err(diags) = parse(text) else { panic!("expected errors") };
    insta::assert_snapshot!(diags.to_string());
}

#[test]
fn snapshot_rendered_unknown_cfg_values() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "no-client"
cfg = 'cfg(any(target_family = "wasm", target_os = "darwin", target_arch = "x86-64"))'
provider = "none"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let Err(diags) = parse(text) else { panic!("expected errors") };
    insta::assert_snapshot!(diags.to_string());
}

// ---------------------------------------------------------------------------------------------
// Accepted spellings
// ---------------------------------------------------------------------------------------------

#[test]
fn cfg_wrapper_is_optional() {
    let wrapped = compiled(&with_cfg(r#"'cfg(target_os = "windows")'"#));
    let bare = compiled(&with_cfg(r#"'target_os = "windows"'"#));
    assert_eq!(wrapped.policy.rules[0].scope.cfg().map(|c| c.to_string()).as_deref(), Some(r#"target_os = "windows""#));
    assert_eq!(wrapped.policy.rules, bare.policy.rules);
    assert_eq!(wrapped.rules, bare.rules);
    assert_eq!(wrapped.rules[0].predicate.to_string(), r#"target_os = "windows""#);
    assert!(wrapped.rules[0].targets.contains(&"x86_64-pc-windows-msvc".to_owned()));
}

#[test]
fn whitespace_is_normalised() {
    let messy = compiled(&with_cfg(r#"'cfg(  all( target_os="linux" ,target_env  =  "gnu" ) )'"#));
    let tidy = compiled(&with_cfg(r#"'all(target_os = "linux", target_env = "gnu")'"#));
    assert_eq!(
        messy.policy.rules[0].scope.cfg().map(|c| c.to_string()).as_deref(),
        Some(r#"all(target_os = "linux", target_env = "gnu")"#)
    );
    assert_eq!(messy.rules, tidy.rules);
    // The file differs, so its hash does; the rules do not.
    assert_ne!(messy.policy.content_hash, tidy.policy.content_hash);
}

#[test]
fn double_quoted_cfg_with_escapes_is_accepted() {
    let c = compiled(&with_cfg(r#""any(target_os = \"macos\", target_os = \"ios\")""#));
    assert_eq!(
        c.policy.rules[0].scope.cfg().map(|c| c.to_string()).as_deref(),
        Some(r#"any(target_os = "macos", target_os = "ios")"#)
    );
}

#[test]
fn later_rules_are_compiled_exclusive_of_earlier_ones() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "linux-gnu"
cfg = 'all(target_os = "linux", target_env = "gnu", target_arch = "x86_64", target_pointer_width = "64")'
provider = "s2n-tls"
roots = "native"

[fallback]
name = "elsewhere"
provider = "none"
"#;
    let c = compiled(text);
    let predicates: Vec<String> = c.rules.iter().map(|r| r.predicate.to_string()).collect();
    assert_eq!(
        predicates,
        [
            r#"target_family = "wasm""#,
            r#"all(target_os = "linux", target_env = "gnu", target_arch = "x86_64", target_pointer_width = "64", not(target_family = "wasm"))"#,
            r#"not(any(target_family = "wasm", all(target_os = "linux", target_env = "gnu", target_arch = "x86_64", target_pointer_width = "64")))"#,
        ]
    );
    assert_eq!(c.policy.fallback.stack.roots(), None);
    assert_eq!(c.rules[1].stack.provider(), Some(Provider::S2nTls));
}

/// `all()` is true for every target (as in rustc); as a later rule it takes every target that the
/// earlier rules left, and must not be reported as unreachable.
#[test]
fn empty_all_as_a_later_rule_takes_the_rest() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[[rule]]
name = "rest"
cfg = 'all()'
provider = "none"

[fallback]
name = "elsewhere"
provider = "rustls-ring"
roots = "webpki"
"#;
    let parsed = parse(text).unwrap();
    // The fallback is left with nothing, which is not an error (only [[rule]]s are checked).
    let c = compile::compile(&parsed)
        .unwrap_or_else(|d| panic!("{}", d.0.iter().take(3).map(|d| d.to_string()).collect::<Vec<_>>().join("\n\n")));
    let wasm = c.rules[0].targets.len();
    assert_eq!(c.rules[1].targets.len() + wasm, targets::sdk_target_count());
    assert!(c.rules[2].targets.is_empty());
    assert!(c.rules[1].targets.contains(&"x86_64-unknown-linux-gnu".to_owned()));
}

// ---------------------------------------------------------------------------------------------
// P017: `native` roots are refused on targets where no native trust store can be read (iOS,
// tvOS, watchOS, visionOS, Android, ...). The diagnostic points at the rule's `roots` value,
// names the targets it cannot serve, and its help says what to use there instead
// (`platform-verifier` on Apple systems, `webpki` on Android). Roots that work there compile.
// ---------------------------------------------------------------------------------------------

mod native_roots {
    use super::*;

    /// Every target-level diagnostic of a policy that parses (none when it compiles).
    fn compile_diagnostics(text: &str) -> Vec<Diagnostic> {
        let parsed = parse(text).unwrap_or_else(|d| panic!("expected the policy to parse:\n{d}"));
        match compile::compile(&parsed) {
            Ok(_) => Vec::new(),
            Err(d) => d.0,
        }
    }

    /// The diagnostics with `code`.
    fn with_code<'a>(diags: &'a [Diagnostic], code: &str) -> Vec<&'a Diagnostic> {
        diags.iter().filter(|d| d.code == code).collect()
    }

    /// The message P017 gives when `native` roots of `rule` cannot serve any of `refused` (in target
    /// order): the count, the first four targets, and how many more.
    fn refusal_message(rule: &str, refused: &[String]) -> String {
        let named: Vec<&str> = refused.iter().take(4).map(String::as_str).collect();
        let more = if refused.len() > 4 { format!(" and {} more", refused.len() - 4) } else { String::new() };
        format!(
            "roots `native` of rule `{rule}` cannot serve {} of the targets the rule gets: {}{more}",
            refused.len(),
            named.join(", ")
        )
    }

    /// The targets compiled rule `name` serves.
    fn targets_of(c: &CompiledPolicy, name: &str) -> Vec<String> {
        c.rules.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no rule `{name}`")).targets.clone()
    }

    /// The roots advice of the help's reason for the first target named `first`: the help gives
    /// one reason per line of targets (`first and N more: why`), each ending with `use roots "..."`.
    fn advice_after<'a>(help: &'a str, first: &str) -> &'a str {
        let start = help.find(first).unwrap_or_else(|| panic!("help {help:?} does not name {first}"));
        let rest = &help[start..];
        let at = rest.find("use roots \"").unwrap_or_else(|| panic!("no `use roots` after {first} in {help:?}"));
        let quoted = &rest[at + "use roots \"".len()..];
        &quoted[..quoted.find('"').expect("closing quote")]
    }

    /// A policy with one rule for the 64-bit Apple systems other than macOS (iOS, tvOS, watchOS,
    /// visionOS) with `apple_roots` (line 10, column 9), one for Android with `android_roots`
    /// (line 16, column 9), and no client elsewhere. rustls + aws-lc-rs builds on every target the
    /// two rules get, so provider support (P013) never gets in the way.
    fn mobile(apple_roots: &str, android_roots: &str) -> String {
        format!(
            r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "apple-mobile"
cfg = 'cfg(all(any(target_os = "ios", target_os = "tvos", target_os = "watchos", target_os = "visionos"), target_pointer_width = "64"))'
provider = "rustls-aws-lc"
roots = "{apple_roots}"

[[rule]]
name = "android"
cfg = 'cfg(target_os = "android")'
provider = "rustls-aws-lc"
roots = "{android_roots}"

[fallback]
name = "elsewhere"
provider = "none"
"#
        )
    }

    #[test]
    fn platform_verifier_on_apple_mobile_and_webpki_on_android_compile() {
        let c = compiled(&mobile("platform-verifier", "webpki"));
        let apple = targets_of(&c, "apple-mobile");
        let android = targets_of(&c, "android");
        for triple in [
            "aarch64-apple-ios",
            "aarch64-apple-ios-sim",
            "aarch64-apple-ios-macabi",
            "x86_64-apple-ios",
            "aarch64-apple-tvos",
            "aarch64-apple-watchos",
            "aarch64-apple-visionos",
        ] {
            assert!(apple.iter().any(|t| t == triple), "apple-mobile lacks {triple}: {apple:?}");
        }
        assert!(!apple.iter().any(|t| t.ends_with("-apple-darwin")), "macOS is not Apple mobile: {apple:?}");
        for triple in ["aarch64-linux-android", "armv7-linux-androideabi", "i686-linux-android", "x86_64-linux-android"]
        {
            assert!(android.iter().any(|t| t == triple), "android lacks {triple}: {android:?}");
        }
        assert!(android.iter().all(|t| t.contains("-linux-android")), "{android:?}");
        let rule = |name: &str| c.rules.iter().find(|r| r.name == name).expect("rule");
        assert_eq!(rule("apple-mobile").stack.roots(), Some(Roots::PlatformVerifier));
        assert_eq!(rule("android").stack.roots(), Some(Roots::Webpki));
        assert_eq!(rule("android").stack.provider(), Some(Provider::RustlsAwsLc));

        // webpki works everywhere, Apple mobile included.
        compiled(&mobile("webpki", "webpki"));
    }

    #[test]
    fn p017_native_roots_on_apple_mobile_and_android_name_the_targets_and_what_to_use() {
        // What each rule gets, from the same policy with roots that work there.
        let ok = compiled(&mobile("platform-verifier", "webpki"));
        let apple = targets_of(&ok, "apple-mobile");
        let android = targets_of(&ok, "android");
        assert!(apple.len() > 4 && android.len() > 4, "{apple:?} {android:?}");

        let diags = compile_errors(&mobile("native", "native"));
        // Nothing but the two refusals, one per rule, in rule order.
        let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["P017", "P017"], "{}", Diagnostics(diags.clone()));

        // Apple mobile: every target the rule gets is refused, the system verifier is the advice.
        let d = &diags[0];
        check(
            d,
            "P017",
            10,
            9,
            "roots `native` of rule `apple-mobile` cannot serve",
            "use roots \"platform-verifier\"",
        );
        assert_eq!(loc(d).width, "\"native\"".len(), "{d}");
        assert_eq!(d.message, refusal_message("apple-mobile", &apple));
        assert!(d.message.contains("aarch64-apple-ios, "), "{}", d.message);
        let help = d.help.as_deref().unwrap();
        assert!(
            help.starts_with(&format!(
                "aarch64-apple-ios and {} more: no native trust store is readable here",
                apple.len() - 1
            )),
            "{help}"
        );
        assert!(help.contains("Security.framework"), "{help}");
        assert_eq!(advice_after(help, "aarch64-apple-ios"), "platform-verifier", "{help}");
        // One reason for all of them, and not the Android advice.
        assert_eq!(help.matches("no native trust store").count(), 1, "{help}");
        assert!(!help.contains("webpki"), "{help}");
        assert!(help.ends_with("add an earlier rule for those targets or narrow this rule's cfg"), "{help}");

        // Android: bundled roots are the advice (the platform verifier needs a JNI context there).
        let d = &diags[1];
        check(d, "P017", 16, 9, "roots `native` of rule `android` cannot serve", "use roots \"webpki\"");
        assert_eq!(d.message, refusal_message("android", &android));
        assert!(d.message.contains("aarch64-linux-android, "), "{}", d.message);
        let help = d.help.as_deref().unwrap();
        assert!(
            help.starts_with(&format!(
                "aarch64-linux-android and {} more: no native trust store is readable here",
                android.len() - 1
            )),
            "{help}"
        );
        assert!(help.contains("/system/etc/security/cacerts"), "{help}");
        assert_eq!(advice_after(help, "aarch64-linux-android"), "webpki", "{help}");
        assert_eq!(help.matches("no native trust store").count(), 1, "{help}");
        assert!(!help.contains("platform-verifier"), "{help}");
    }

    #[test]
    fn p017_is_reported_on_the_rule_that_gives_native_roots_only() {
        let diags = compile_errors(&mobile("native", "webpki"));
        let d = only(&diags, "P017");
        assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
        check(d, "P017", 10, 9, "rule `apple-mobile`", "platform-verifier");

        let diags = compile_errors(&mobile("platform-verifier", "native"));
        let d = only(&diags, "P017");
        assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
        check(d, "P017", 16, 9, "rule `android`", "webpki");
    }

    #[test]
    fn p017_native_roots_for_target_os_ios() {
        let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "ios"
cfg = 'cfg(target_os = "ios")'
provider = "rustls-aws-lc"
roots = "native"

[fallback]
name = "elsewhere"
provider = "none"
"#;
        let diags = compile_errors(text);
        assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
        let d = &diags[0];
        check(d, "P017", 10, 9, "roots `native` of rule `ios` cannot serve", "use roots \"platform-verifier\"");
        assert!(d.message.contains("aarch64-apple-ios"), "{}", d.message);
        // Every iOS target (32-bit ones included) is refused.
        let ios = targets_of(&compiled(&text.replace("roots = \"native\"", "roots = \"platform-verifier\"")), "ios");
        assert!(ios.iter().any(|t| t == "armv7s-apple-ios") && ios.iter().any(|t| t == "x86_64-apple-ios"), "{ios:?}");
        assert_eq!(d.message, refusal_message("ios", &ios));
    }

    /// Native roots for every target but wasm: the fallback's roots value is on line 14.
    const NATIVE_EVERYWHERE: &str = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[fallback]
name = "everywhere"
provider = "rustls-aws-lc"
roots = "native"
"#;

    #[test]
    fn p017_fallback_with_native_roots_everywhere_names_ios_and_android() {
        // (aws-lc also misses a few targets: P013, not checked here.)
        let diags = compile_errors(NATIVE_EVERYWHERE);
        let d = only(&diags, "P017");
        check(d, "P017", 14, 9, "roots `native` of rule `everywhere` cannot serve", "aarch64-apple-ios and ");
        // The first target refused, in target order (macOS, before it, reads its keychain).
        assert!(d.message.contains(": aarch64-apple-ios, "), "{}", d.message);
        assert!(!d.message.contains("apple-darwin"), "{}", d.message);
        assert!(d.message.contains(" more"), "{}", d.message);
        let help = d.help.as_deref().unwrap();
        // One reason per kind of target, each with its first target and its advice.
        assert!(help.contains("aarch64-linux-android and "), "{help}");
        assert_eq!(advice_after(help, "aarch64-apple-ios and "), "platform-verifier", "{help}");
        assert_eq!(advice_after(help, "aarch64-linux-android and "), "webpki", "{help}");
        assert!(help.find("aarch64-apple-ios").unwrap() < help.find("aarch64-linux-android").unwrap(), "{help}");
        // No P016: the other roots checks are not about `native`.
        assert!(with_code(&diags, "P016").is_empty(), "{}", Diagnostics(diags.clone()));
    }

    #[test]
    fn earlier_rules_for_apple_and_android_take_them_out_of_the_native_fallback() {
        let text = NATIVE_EVERYWHERE.replace(
            "[fallback]",
            r#"[[rule]]
name = "apple"
cfg = 'target_vendor = "apple"'
provider = "rustls-aws-lc"
roots = "platform-verifier"

[[rule]]
name = "android"
cfg = 'cfg(target_os = "android")'
provider = "rustls-aws-lc"
roots = "webpki"

[fallback]"#,
        );
        let diags = compile_diagnostics(&text);
        assert!(with_code(&diags, "P016").is_empty(), "{}", Diagnostics(diags.clone()));
        // Whatever the fallback's native roots still cannot serve, it is neither Apple nor Android.
        for d in with_code(&diags, "P017") {
            assert!(d.message.contains("rule `everywhere`"), "{d}");
            let help = d.help.as_deref().unwrap_or_default();
            for said in [d.message.as_str(), help] {
                assert!(!said.contains("-apple-") && !said.contains("android"), "{d}");
            }
            assert!(!help.contains("Security.framework") && !help.contains("cacerts"), "{d}");
        }
    }

    #[test]
    fn webpki_everywhere_has_no_roots_refusal() {
        let text = NATIVE_EVERYWHERE.replace("roots = \"native\"", "roots = \"webpki\"");
        assert_ne!(text, NATIVE_EVERYWHERE);
        let diags = compile_diagnostics(&text);
        let refusals: Vec<&Diagnostic> = diags.iter().filter(|d| matches!(d.code, "P016" | "P017")).collect();
        assert!(refusals.is_empty(), "{}", Diagnostics(diags.clone()));
    }
}

/// A policy whose Linux rule and fallback carry `note` values written as given.
fn with_notes(rule_note: &str, fallback_note: &str) -> String {
    linux_rule_and_fallback(
        "rustls-ring",
        &format!("roots = \"webpki\"\nnote = {rule_note}\n"),
        &format!("note = {fallback_note}\n"),
    )
}

#[test]
fn a_note_is_kept_as_written_and_must_be_a_string() {
    let policy = parse(&with_notes("\"measured: 1.02x\"", "\"the rest\"")).expect("notes are allowed").policy;
    assert_eq!(policy.rules[0].note.as_deref(), Some("measured: 1.02x"));
    assert_eq!(policy.fallback.note.as_deref(), Some("the rest"));
    let diags = parse_errors(&with_notes("1.02", "\"the rest\""));
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(&diags[0], "P002", 11, 8, "`note` in [[rule]] must be a string", "note = \"...\"");
}
