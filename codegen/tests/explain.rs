//! What `smithy-tls explain` says, through the binary: for the platform-default preset, which
//! targets cannot host an SDK (and why), and which rule, provider and roots every other target
//! gets, in the JSON (`--format json`) and for people (`--target TRIPLE`, the whole matrix). A
//! policy giving `native` roots to iOS fails with P017. With `--override VALUE`, what each target
//! compiles under the application's `--cfg smithy_tls="VALUE"`: the provider's native build, no TLS
//! library (`none`), why it does not build there, or nothing where the rule gives no provider.
//! (json_schema.rs checks only the shape.)

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use smithy_tls_codegen::model::{Provider, Roots};
use smithy_tls_codegen::targets;

/// Runs the tool in `dir` without colour; returns the exit code, stdout and stderr.
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_smithy-tls"));
    cmd.current_dir(dir).arg("--color").arg("never").args(args);
    for var in ["CLICOLOR", "CLICOLOR_FORCE"] {
        cmd.env_remove(var);
    }
    cmd.env("NO_COLOR", "1");
    let out = cmd.output().unwrap();
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs a command that must succeed quietly; returns its stdout.
fn stdout_of(args: &[&str]) -> String {
    let (code, stdout, stderr) = run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args);
    assert_eq!(code, 0, "{args:?}:\n{stderr}");
    assert_eq!(stderr, "", "{args:?}");
    stdout
}

/// The JSON document of a command that must succeed.
fn json_of(args: &[&str]) -> Value {
    let stdout = stdout_of(args);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}):\n{stdout}"));
    assert_eq!(doc["command"], "explain", "{doc:#}");
    assert_eq!(doc["status"], "ok", "{doc:#}");
    doc
}

/// The one entry of `doc["targets"]` for `triple`.
fn target<'a>(doc: &'a Value, triple: &str) -> &'a Value {
    let found: Vec<&Value> =
        doc["targets"].as_array().expect("targets").iter().filter(|t| t["target"] == triple).collect();
    assert_eq!(found.len(), 1, "{triple} is listed {} times", found.len());
    found[0]
}

/// Checks that `triple` cannot host an SDK, for a reason containing `why`, and gets nothing.
#[track_caller]
fn assert_not_a_host(doc: &Value, triple: &str, why: &str) {
    let t = target(doc, triple);
    assert_eq!(t["verdict"], "not-a-host", "{t:#}");
    let reason = t["why"].as_str().unwrap_or_else(|| panic!("{triple}: no reason: {t:#}"));
    assert!(reason.contains(why), "{triple}: reason {reason:?} lacks {why:?}");
    for key in ["rule", "provider", "roots", "considered"] {
        assert!(t.get(key).is_none(), "{triple}: a target that cannot host an SDK has no `{key}`: {t:#}");
    }
}

/// Checks that `triple` is served by `rule` with `provider` and `roots` (`None`: no roots, as
/// with provider "none"), and that the rules considered are the policy's rules up to that one,
/// only the last of which matches.
#[track_caller]
fn assert_served(doc: &Value, triple: &str, rule: &str, provider: &str, roots: Option<&str>) {
    let t = target(doc, triple);
    assert_eq!(t["verdict"], "served", "{t:#}");
    assert_eq!(t["rule"], rule, "{t:#}");
    assert_eq!(t["provider"], provider, "{t:#}");
    match roots {
        Some(roots) => assert_eq!(t["roots"], roots, "{t:#}"),
        None => assert!(t.get("roots").is_none(), "{t:#}"),
    }
    assert!(t.get("why").is_none(), "{t:#}");

    let rules = doc["rules"].as_array().expect("rules");
    let index = rules.iter().position(|r| r["name"] == rule).unwrap_or_else(|| panic!("no rule `{rule}` in {doc:#}"));
    let considered = t["considered"].as_array().expect("considered");
    let names: Vec<&Value> = considered.iter().map(|c| &c["rule"]).collect();
    let expected: Vec<&Value> = rules[..=index].iter().map(|r| &r["name"]).collect();
    assert_eq!(names, expected, "{triple}: rules considered");
    for (c, r) in considered.iter().zip(rules) {
        assert_eq!(c["cfg"], r["cfg"], "{triple}: {c:#}");
    }
    let (winner, earlier) = considered.split_last().expect("the winner");
    assert_eq!(winner["matches"], true, "{t:#}");
    assert!(earlier.iter().all(|c| c["matches"] == false), "{t:#}");
}

#[test]
fn explain_json_gives_each_platform_its_stack_and_lists_what_cannot_host_an_sdk() {
    let doc = json_of(&["explain", "--format", "json", "--preset", "platform-default"]);
    assert_eq!(doc["policy"], "platform-default", "{doc:#}");

    assert_not_a_host(&doc, "aarch64-unknown-none", "no standard library");
    assert_not_a_host(&doc, "x86_64-unknown-uefi", "no standard library");
    assert_not_a_host(&doc, "thumbv7em-none-eabihf", "no standard library");
    assert_not_a_host(&doc, "wasm32-unknown-unknown", "no sockets");

    assert_served(&doc, "aarch64-apple-ios", "apple", "rustls-aws-lc", Some("platform-verifier"));
    assert_served(&doc, "aarch64-apple-darwin", "apple", "rustls-aws-lc", Some("platform-verifier"));
    assert_served(&doc, "aarch64-linux-android", "android", "rustls-aws-lc", Some("webpki"));
    assert_served(&doc, "x86_64-pc-windows-msvc", "windows", "rustls-aws-lc", Some("platform-verifier"));
    assert_served(&doc, "x86_64-unknown-linux-gnu", "linux-gnu", "s2n-tls", Some("native"));
    assert_served(&doc, "aarch64-unknown-linux-gnu", "linux-gnu", "s2n-tls", Some("native"));
    assert_served(&doc, "x86_64-unknown-linux-musl", "elsewhere", "rustls-aws-lc", Some("native"));
    assert_served(&doc, "wasm32-wasip2", "wasip2", "wasi-http", None);
    assert_served(&doc, "wasm32-wasip1", "wasm", "none", None);
    // What the host of wasip2 provides, and the manifest lines an application writes there.
    let host = &target(&doc, "wasm32-wasip2")["host_http"];
    let imports: Vec<&str> =
        host["imports"].as_array().unwrap().iter().map(|i| i["interface"].as_str().unwrap()).collect();
    assert_eq!(imports, ["wasi:http/outgoing-handler", "wasi:clocks/monotonic-clock", "wasi:io/poll"], "{host:#}");
    let refused: Vec<&str> =
        host["refused_defaults"].as_array().unwrap().iter().map(|r| r["feature"].as_str().unwrap()).collect();
    assert_eq!(refused, ["rt-tokio", "credentials-process"], "{host:#}");
    assert!(host["application_manifest"].as_str().unwrap().contains("default-features = false"), "{host:#}");
    assert!(target(&doc, "wasm32-wasip1").get("host_http").is_none(), "only wasi-http targets say it");

    // Every builtin target once, sorted; those that can host an SDK are served.
    let listed = doc["targets"].as_array().unwrap();
    let triples: Vec<&str> = listed.iter().map(|t| t["target"].as_str().expect("triple")).collect();
    assert!(triples.windows(2).all(|w| w[0] < w[1]), "targets are not sorted and unique");
    assert_eq!(triples.len(), targets::builtin_target_count());
    let served: Vec<&Value> = listed.iter().filter(|t| t["verdict"] == "served").collect();
    assert_eq!(served.len(), targets::sdk_target_count());
    assert!(listed.iter().all(|t| t["verdict"] == "served" || t["verdict"] == "not-a-host"), "{doc:#}");

    // Each rule's count and stack agree with the targets it serves; the fallback comes last.
    let rules = doc["rules"].as_array().unwrap();
    assert_eq!(rules.last().unwrap()["name"], "elsewhere", "{doc:#}");
    assert!(rules.last().unwrap()["cfg"].is_null(), "{doc:#}");
    for rule in rules {
        let mine: Vec<&&Value> = served.iter().filter(|t| t["rule"] == rule["name"]).collect();
        assert_eq!(rule["target_count"], mine.len(), "{rule:#}");
        for t in mine {
            assert_eq!((&t["provider"], &t["roots"]), (&rule["provider"], &rule["roots"]), "{t:#}\n{rule:#}");
        }
    }

    // platform-default is the default.
    assert_eq!(json_of(&["explain", "--format", "json"]), doc);
}

#[test]
fn explain_json_for_one_target() {
    for (triple, rule, provider, roots) in [
        ("aarch64-apple-ios", "apple", "rustls-aws-lc", "platform-verifier"),
        ("aarch64-linux-android", "android", "rustls-aws-lc", "webpki"),
        ("x86_64-unknown-linux-gnu", "linux-gnu", "s2n-tls", "native"),
        ("x86_64-pc-windows-msvc", "windows", "rustls-aws-lc", "platform-verifier"),
    ] {
        let doc = json_of(&["explain", "--format", "json", "--target", triple]);
        assert_eq!(doc["targets"].as_array().unwrap().len(), 1, "{doc:#}");
        assert_served(&doc, triple, rule, provider, Some(roots));
        // The rules are listed whatever the target.
        assert_eq!(doc["rules"].as_array().unwrap().len(), 9, "{doc:#}");
    }
    for triple in ["aarch64-unknown-none", "x86_64-unknown-uefi"] {
        let doc = json_of(&["explain", "--format", "json", "--target", triple]);
        assert_eq!(doc["targets"].as_array().unwrap().len(), 1, "{doc:#}");
        assert_not_a_host(&doc, triple, "no standard library");
    }
}

#[test]
fn explain_one_target_for_people() {
    let out = stdout_of(&["explain", "--target", "aarch64-apple-ios"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "aarch64-apple-ios: rule `apple` → provider rustls-aws-lc, roots platform-verifier", "{out}");
    assert_eq!(lines[1], "  ✘ no match wasip2: cfg(all(target_family = \"wasm\", target_env = \"p2\"))", "{out}");
    assert_eq!(lines[2], "  ✘ no match wasm: cfg(target_family = \"wasm\")", "{out}");
    assert!(lines.contains(&"  ✔ matches apple: cfg(target_vendor = \"apple\")"), "{out}");
    assert_eq!(out.matches("✔ matches").count(), 1, "{out}");
    let meaning = format!("  roots `platform-verifier`: {}", Roots::PlatformVerifier.meaning());
    assert!(lines.contains(&meaning.as_str()), "{out}");
    let table = lines.last().unwrap();
    // apple shares its table with windows (the same provider and roots).
    assert!(
        table.starts_with(
            "  compiled table: [target.'cfg(all(any(target_vendor = \"apple\", target_os = \"windows\"), not("
        ),
        "{out}"
    );
    assert!(table.ends_with(")'.dependencies]"), "{out}");

    let out = stdout_of(&["explain", "--target", "aarch64-linux-android"]);
    assert!(out.starts_with("aarch64-linux-android: rule `android` → provider rustls-aws-lc, roots webpki\n"), "{out}");
    assert!(out.contains(&format!("\n  roots `webpki`: {}\n", Roots::Webpki.meaning())), "{out}");

    let out = stdout_of(&["explain", "--target", "x86_64-pc-windows-msvc"]);
    assert!(
        out.starts_with("x86_64-pc-windows-msvc: rule `windows` → provider rustls-aws-lc, roots platform-verifier\n"),
        "{out}"
    );

    // The fallback has no cfg of its own.
    let out = stdout_of(&["explain", "--target", "x86_64-unknown-linux-musl"]);
    assert!(
        out.starts_with("x86_64-unknown-linux-musl: rule `elsewhere` → provider rustls-aws-lc, roots native\n"),
        "{out}"
    );
    assert!(out.contains("\n  ✔ matches elsewhere: (fallback: every other target)\n"), "{out}");

    // No client, so no roots.
    let out = stdout_of(&["explain", "--target", "wasm32-wasip1"]);
    assert!(out.starts_with("wasm32-wasip1: rule `wasm` → provider none, roots -\n"), "{out}");
    assert!(!out.contains("roots `"), "{out}");

    // The host's HTTP: what the host provides, and the application's Cargo.toml lines there.
    let out = stdout_of(&["explain", "--target", "wasm32-wasip2"]);
    assert!(out.starts_with("wasm32-wasip2: rule `wasip2` → provider wasi-http, roots host\n"), "{out}");
    assert!(out.contains("\n  the host provides:\n    wasi:http/outgoing-handler: every request"), "{out}");
    assert!(out.contains("\n  default features that do not build here: every service crate's `rt-tokio`"), "{out}");
    for line in smithy_tls_codegen::platforms::APPLICATION_MANIFEST.lines().filter(|l| !l.is_empty()) {
        assert!(out.contains(&format!("\n    {line}\n")), "{line}\n{out}");
    }
    // README states the same lines (the issue asks for both places).
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let block = format!("```toml\n{}```", smithy_tls_codegen::platforms::APPLICATION_MANIFEST);
    assert!(readme.contains(&block), "README's wasm32-wasip2 section must show:\n{block}");

    for triple in ["aarch64-unknown-none", "x86_64-unknown-uefi"] {
        let out = stdout_of(&["explain", "--target", triple]);
        assert_eq!(
            out,
            format!("{triple}: cannot host an SDK (no standard library); no rule serves it and none needs to\n")
        );
    }
}

#[test]
fn explain_matrix_for_people() {
    let (code, out, stderr) = run_in(Path::new(env!("CARGO_MANIFEST_DIR")), &["explain"]);
    assert_eq!(code, 0, "{stderr}");
    // stderr has the policy's notes (P020, tests/build_tools.rs) and nothing else.
    assert!(stderr.lines().all(|l| !l.contains("error") && !l.contains("warning")), "{stderr}");
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "policy `platform-default`: {} builtin targets can host an SDK, each served by exactly one rule",
            targets::sdk_target_count()
        )
    );
    let heading = format!(
        "{} builtin targets cannot host an SDK and need no stack:",
        targets::builtin_target_count() - targets::sdk_target_count()
    );
    let (served, others) = out.split_once(&heading).unwrap_or_else(|| panic!("no {heading:?} in:\n{out}"));
    /// The words of the one table row for `triple`.
    fn row<'a>(served: &'a str, triple: &str) -> Vec<&'a str> {
        let rows: Vec<&str> = served.lines().filter(|l| l.split_whitespace().next() == Some(triple)).collect();
        assert_eq!(rows.len(), 1, "{triple}: {rows:?}");
        rows[0].split_whitespace().collect()
    }
    assert_eq!(row(served, "aarch64-apple-ios"), ["aarch64-apple-ios", "rustls-aws-lc", "platform-verifier", "apple"]);
    assert_eq!(row(served, "aarch64-linux-android"), ["aarch64-linux-android", "rustls-aws-lc", "webpki", "android"]);
    assert_eq!(row(served, "x86_64-unknown-linux-gnu"), ["x86_64-unknown-linux-gnu", "s2n-tls", "native", "linux-gnu"]);
    assert_eq!(
        row(served, "x86_64-pc-windows-msvc"),
        ["x86_64-pc-windows-msvc", "rustls-aws-lc", "platform-verifier", "windows"]
    );
    assert_eq!(row(served, "wasm32-wasip2"), ["wasm32-wasip2", "wasi-http", "host", "wasip2"]);
    assert_eq!(row(served, "wasm32-wasip1"), ["wasm32-wasip1", "none", "-", "wasm"]);
    for triple in ["aarch64-unknown-none", "x86_64-unknown-uefi"] {
        assert!(!served.lines().any(|l| l.split_whitespace().next() == Some(triple)), "{triple} is listed as served");
        let line = others
            .lines()
            .find(|l| l.split_whitespace().next() == Some(triple))
            .unwrap_or_else(|| panic!("{triple} not listed as unable to host an SDK:\n{others}"));
        assert_eq!(line.split_once(' ').unwrap().1.trim(), "no standard library", "{line}");
    }
    assert_eq!(others.lines().filter(|l| !l.trim().is_empty()).count(), targets::non_hosts().len(), "{others}");
}

/// A policy giving `native` roots to iOS: `roots` is on line 10, column 9.
const IOS_NATIVE: &str = r#"name = "ios-native"

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

#[test]
fn explain_refuses_native_roots_on_ios_with_p017() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ios-native.toml"), IOS_NATIVE).unwrap();

    let (code, stdout, _) = run_in(
        dir.path(),
        &["explain", "--format", "json", "--policy", "ios-native.toml", "--target", "aarch64-apple-ios"],
    );
    assert_eq!(code, 2, "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"));
    assert_eq!((doc["command"].as_str(), doc["status"].as_str()), (Some("explain"), Some("error")), "{doc:#}");
    let diagnostics = doc["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diagnostics.len(), 1, "{doc:#}");
    let d = &diagnostics[0];
    assert_eq!(d["code"], "P017", "{doc:#}");
    assert_eq!(d["severity"], "error", "{doc:#}");
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(10), Some(9)), "{doc:#}");
    assert!(d["file"].as_str().unwrap().ends_with("ios-native.toml"), "{doc:#}");
    let message = d["message"].as_str().unwrap();
    assert!(message.starts_with("roots `native` of rule `ios` cannot serve "), "{message}");
    assert!(message.contains("aarch64-apple-ios"), "{message}");
    let help = d["help"].as_str().unwrap();
    assert!(help.contains("use roots \"platform-verifier\""), "{help}");

    // For people: the rendered diagnostic on stderr, nothing on stdout.
    let (code, stdout, stderr) = run_in(dir.path(), &["explain", "--policy", "ios-native.toml"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("error[P017]"), "{stderr}");
    assert!(stderr.contains("ios-native.toml:10:9"), "{stderr}");
    assert!(stderr.contains("the policy does not serve every target correctly"), "{stderr}");

    // With the system verifier on iOS it explains.
    let fixed = IOS_NATIVE.replace("roots = \"native\"", "roots = \"platform-verifier\"");
    std::fs::write(dir.path().join("ios-native.toml"), fixed).unwrap();
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &["explain", "--format", "json", "--policy", "ios-native.toml", "--target", "aarch64-apple-ios"],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_served(&doc, "aarch64-apple-ios", "ios", "rustls-aws-lc", Some("platform-verifier"));
}

/// The `under_override` of the one target `--target triple --override value` explains, with the
/// document's `override`.
fn under_override(triple: &str, value: &str) -> Value {
    let doc = json_of(&["explain", "--format", "json", "--target", triple, "--override", value]);
    assert_eq!(doc["override"], value, "{doc:#}");
    let targets = doc["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 1, "{doc:#}");
    targets[0]["under_override"].clone()
}

/// The crates of an effect's native build, in order.
fn libraries(effect: &Value) -> Vec<&str> {
    effect["native_build"]
        .as_array()
        .unwrap_or_else(|| panic!("no native_build: {effect:#}"))
        .iter()
        .map(|b| b["library"].as_str().expect("library"))
        .collect()
}

/// The required tools of an effect.
fn required_tools(effect: &Value) -> Vec<&str> {
    effect["required_tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no required_tools: {effect:#}"))
        .iter()
        .map(|t| t.as_str().expect("tool"))
        .collect()
}

#[test]
fn explain_override_on_linux_gnu_compiles_the_application_s_provider() {
    // platform-default gives x86_64-unknown-linux-gnu s2n-tls (aws-lc-sys and s2n-tls-sys);
    // rustls-ring compiles ring alone, with a C compiler alone.
    let ring = under_override("x86_64-unknown-linux-gnu", "rustls-ring");
    assert_eq!(ring["effect"], "compiles", "{ring:#}");
    assert_eq!((&ring["provider"], &ring["replaces"]), (&Value::from("rustls-ring"), &Value::from("s2n-tls")));
    assert_eq!(libraries(&ring), ["ring"], "{ring:#}");
    assert_eq!(required_tools(&ring), ["c-compiler"], "{ring:#}");
    assert!(ring.get("roots").is_none(), "rustls-ring can use the rule's native roots: {ring:#}");

    // openssl links the system's OpenSSL: its headers and pkg-config on Linux.
    let openssl = under_override("x86_64-unknown-linux-gnu", "openssl");
    assert_eq!(openssl["effect"], "compiles", "{openssl:#}");
    assert_eq!(libraries(&openssl), ["openssl-sys"], "{openssl:#}");
    assert_eq!(required_tools(&openssl), ["c-compiler", "pkg-config", "system-headers"], "{openssl:#}");

    // none: no TLS library, whatever the rule asked for.
    let none = under_override("x86_64-unknown-linux-gnu", "none");
    assert_eq!(none, serde_json::json!({ "effect": "no-tls", "replaces": "s2n-tls" }));

    // rustls-custom: rustls on the application's CryptoProvider, no crypto library of ours.
    let custom = under_override("x86_64-unknown-linux-gnu", "rustls-custom");
    assert_eq!(custom["effect"], "compiles", "{custom:#}");
    assert!(libraries(&custom).is_empty(), "{custom:#}");
    assert!(required_tools(&custom).is_empty(), "{custom:#}");

    // The FIPS module builds here, with cmake, Go and Perl.
    let fips = under_override("x86_64-unknown-linux-gnu", "rustls-aws-lc-fips");
    assert_eq!(fips["effect"], "compiles", "{fips:#}");
    assert_eq!(libraries(&fips), ["aws-lc-fips-sys", "aws-lc-sys"], "{fips:#}");
    assert_eq!(required_tools(&fips), ["c-compiler", "cmake", "go", "perl"], "{fips:#}");
}

#[test]
fn explain_override_refuses_fips_on_windows_and_names_what_builds_instead() {
    for value in ["rustls-aws-lc-fips", "s2n-tls-fips"] {
        let effect = under_override("x86_64-pc-windows-msvc", value);
        assert_eq!(effect["effect"], "does-not-build", "{value}: {effect:#}");
        assert_eq!(effect["provider"], value, "{effect:#}");
        assert!(effect["why"].as_str().unwrap().contains("only on Linux x86_64 and aarch64"), "{effect:#}");
        // No FIPS provider builds there: the non-FIPS ones that bring their crypto and build there.
        assert_eq!(effect["instead"], serde_json::json!(["rustls-aws-lc", "rustls-ring"]), "{effect:#}");
    }
    // A non-FIPS provider that does not build there gets the others that do.
    let s2n = under_override("x86_64-pc-windows-msvc", "s2n-tls");
    assert_eq!(s2n["effect"], "does-not-build", "{s2n:#}");
    assert_eq!(s2n["instead"], serde_json::json!(["rustls-aws-lc", "rustls-ring"]), "{s2n:#}");

    let out = stdout_of(&["explain", "--target", "x86_64-pc-windows-msvc", "--override", "rustls-aws-lc-fips"]);
    let tail: Vec<&str> = out.lines().rev().take(2).collect();
    assert!(
        tail[1].starts_with(
            "  under --cfg smithy_tls=\"rustls-aws-lc-fips\": rustls-aws-lc-fips does not build for this target: \
             the FIPS build of aws-lc"
        ),
        "{out}"
    );
    assert_eq!(
        tail[0],
        "    instead: no FIPS provider builds here; without the FIPS module, `rustls-aws-lc` or `rustls-ring` (to set \
         one for this target alone: `[target.x86_64-pc-windows-msvc] rustflags`)",
        "{out}"
    );
}

#[test]
fn explain_override_changes_nothing_where_the_rule_has_no_provider() {
    for value in ["rustls-ring", "openssl", "none", "rustls-custom"] {
        for triple in ["wasm32-wasip1", "wasm32-wasip1-threads"] {
            let effect = under_override(triple, value);
            assert_eq!(effect["effect"], "unchanged", "{triple} {value}: {effect:#}");
            assert!(effect["why"].as_str().unwrap().contains("no runtime dependency"), "{effect:#}");
        }
        // A target that cannot host an SDK: nothing either.
        let effect = under_override("x86_64-unknown-none", value);
        assert_eq!(effect["effect"], "unchanged", "{effect:#}");
    }
    let out = stdout_of(&["explain", "--target", "wasm32-wasip1", "--override", "rustls-ring"]);
    assert_eq!(
        out.lines().last().unwrap(),
        "  under --cfg smithy_tls=\"rustls-ring\": changes nothing here: rule `wasm` gives this target no provider, \
         so the generated crates have no runtime dependency on it: there is no TLS stack to override",
        "{out}"
    );
}

/// On wasip2 the host runs TLS: a provider value changes nothing there, and `none` takes the
/// host's client away too.
#[test]
fn explain_override_on_wasi_http_only_none_changes_anything() {
    for value in ["rustls-ring", "openssl", "rustls-custom"] {
        let effect = under_override("wasm32-wasip2", value);
        assert_eq!(effect["effect"], "unchanged", "{value}: {effect:#}");
        assert!(effect["why"].as_str().unwrap().contains("the host runs TLS"), "{effect:#}");
    }
    assert_eq!(under_override("wasm32-wasip2", "none")["effect"], "no-host-client");
    let out = stdout_of(&["explain", "--target", "wasm32-wasip2", "--override", "none"]);
    assert_eq!(
        out.lines().last().unwrap(),
        "  under --cfg smithy_tls=\"none\": no default client in place of the host's HTTP (wasi-http): the generated \
         crates hand the SDK neither client nor sleep; give each SDK client both (smithy-wasi-http's, say)",
        "{out}"
    );
}

#[test]
fn explain_override_for_people_shows_the_provider_s_native_build() {
    let out = stdout_of(&["explain", "--target", "x86_64-unknown-linux-gnu", "--override", "rustls-ring"]);
    let (before, after) =
        out.split_once("  under --cfg smithy_tls=\"rustls-ring\": ").unwrap_or_else(|| panic!("{out}"));
    // What the rule compiles is still shown above it.
    assert!(before.contains("\n    s2n-tls-sys 0.3.47, libs2n, with the cc crate\n"), "{out}");
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(lines[0], "provider rustls-ring in place of the rule's s2n-tls", "{out}");
    assert_eq!(
        lines[1], "    native build for this tier-1 target: 1 library; the build host needs a C compiler",
        "{out}"
    );
    assert_eq!(lines[2], "      ring 0.17.14, ring's C and assembly, with the cc crate", "{out}");
    assert!(lines[3].starts_with("        needs a C compiler: "), "{out}");
    assert_eq!(lines.len(), 4, "{out}");

    let out = stdout_of(&["explain", "--target", "x86_64-unknown-linux-gnu", "--override", "openssl"]);
    assert!(
        out.contains(
            "\n    native build for this tier-1 target: 1 library; the build host needs a C compiler, pkg-config and \
             system headers and libraries\n      openssl-sys 0.9.118, "
        ),
        "{out}"
    );
    // No SDK crate asks for openssl there: the application's feature line is needed, and said.
    assert!(
        out.contains(
            "\n    needs: the runtime's `openssl` feature in the application's Cargo.toml as well (`features = \
             [\"openssl\"]` on its smithy-default-tls dependency)"
        ),
        "{out}"
    );
    let doc =
        json_of(&["explain", "--format", "json", "--target", "x86_64-unknown-linux-gnu", "--override", "openssl"]);
    assert_eq!(doc["targets"][0]["under_override"]["needs_feature"], true, "{doc:#}");
    // The rule's own provider, or one whose crates every lock has, needs none.
    let doc =
        json_of(&["explain", "--format", "json", "--target", "x86_64-unknown-linux-gnu", "--override", "rustls-ring"]);
    assert!(doc["targets"][0]["under_override"].get("needs_feature").is_none_or(|v| v == false), "{doc:#}");

    let out = stdout_of(&["explain", "--target", "x86_64-unknown-linux-gnu", "--override", "none"]);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(
            "  under --cfg smithy_tls=\"none\": no TLS library at all in place of the rule's s2n-tls: nothing native"
        ),
        "{out}"
    );

    let out = stdout_of(&["explain", "--target", "x86_64-unknown-linux-gnu", "--override", "rustls-custom"]);
    assert!(
        out.contains("\n    native build: none: smithy-default-tls compiles rustls and no crypto library; "),
        "{out}"
    );

    // Without --override nothing is said about one, in either format.
    let out = stdout_of(&["explain", "--target", "x86_64-unknown-linux-gnu"]);
    assert!(!out.contains("under --cfg"), "{out}");
    let doc = json_of(&["explain", "--format", "json", "--target", "x86_64-unknown-linux-gnu"]);
    assert!(doc.get("override").is_none() && doc["targets"][0].get("under_override").is_none(), "{doc:#}");
}

#[test]
fn explain_override_names_the_roots_a_provider_cannot_use() {
    // apple's platform-verifier roots on macOS: s2n-tls reads the system store itself.
    let effect = under_override("aarch64-apple-darwin", "s2n-tls");
    assert_eq!(effect["effect"], "compiles", "{effect:#}");
    let roots = effect["roots"].as_str().unwrap_or_else(|| panic!("no roots advice: {effect:#}"));
    assert!(roots.starts_with("s2n-tls cannot use the rule's roots `platform-verifier`"), "{roots}");
    assert!(roots.ends_with("set --cfg smithy_tls_roots=\"native\" beside it (or \"webpki\")"), "{roots}");
}

#[test]
fn explain_override_over_the_matrix() {
    let doc = json_of(&["explain", "--format", "json", "--override", "rustls-ring"]);
    assert_eq!(doc["override"], "rustls-ring", "{doc:#}");
    let targets = doc["targets"].as_array().unwrap();
    assert_eq!(targets.len(), targets::builtin_target_count());
    assert!(targets.iter().all(|t| t["under_override"]["effect"].is_string()), "every target says what it gets");
    let effect = |triple: &str| target(&doc, triple)["under_override"]["effect"].as_str().unwrap().to_owned();
    assert_eq!(effect("x86_64-unknown-linux-gnu"), "compiles");
    assert_eq!(effect("wasm32-wasip2"), "unchanged");
    assert_eq!(effect("aarch64-unknown-none"), "unchanged");
    // ring has no SSE2-less x86 build.
    assert_eq!(effect("i586-unknown-linux-gnu"), "does-not-build");

    let (code, out, stderr) = run_in(Path::new(env!("CARGO_MANIFEST_DIR")), &["explain", "--override", "rustls-ring"]);
    assert_eq!(code, 0, "{stderr}");
    let section = out.split_once("\nunder --cfg smithy_tls=\"rustls-ring\":\n").unwrap_or_else(|| panic!("{out}")).1;
    let lines: Vec<&str> = section.lines().collect();
    assert!(lines[0].contains(" target(s) compile rustls-ring in place of their rule's provider; "), "{section}");
    assert!(lines[0].ends_with("clang on 1 of them (aarch64-pc-windows-msvc)"), "{section}");
    assert!(lines.iter().any(|l| l.starts_with("  rustls-ring does not build for ")), "{section}");
    assert!(lines.iter().any(|l| l.contains("i586-unknown-linux-gnu")), "{section}");
    // wasip2 keeps the host's HTTP: it has a client, only no TLS stack of ours to override.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("target(s) unchanged: their rules (`no-tls-provider` and `wasm`) give them no")),
        "{section}"
    );
    assert!(
        lines.contains(&"  1 target(s) keep the host's HTTP (wasi-http): the host runs TLS, the value changes nothing"),
        "{section}"
    );
}

#[test]
fn explain_override_refuses_a_value_it_does_not_know_and_lists_the_valid_ones() {
    let (code, stdout, stderr) =
        run_in(Path::new(env!("CARGO_MANIFEST_DIR")), &["explain", "--override", "rustls-wolfssl"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("invalid value 'rustls-wolfssl' for '--override <VALUE>'"), "{stderr}");
    let listed = stderr
        .split_once("[possible values: ")
        .and_then(|(_, rest)| rest.split_once(']'))
        .unwrap_or_else(|| panic!("no list of values: {stderr}"))
        .0;
    let listed: Vec<&str> = listed.split(", ").collect();
    // Exactly what the runtime's build script accepts: the provider table's names and `none`.
    let mut expected: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
    expected.push("none");
    assert_eq!(listed, expected, "{stderr}");
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/Cargo.toml")).unwrap();
    let check_cfg = manifest
        .lines()
        .find(|l| l.starts_with("unexpected_cfgs"))
        .and_then(|l| l.split_once("cfg(smithy_tls, values("))
        .and_then(|(_, rest)| rest.split_once("))"))
        .expect("the runtime declares smithy_tls's values")
        .0;
    let declared: Vec<&str> = check_cfg.split(", ").map(|v| v.trim_matches('"')).collect();
    assert_eq!(listed, declared, "runtime/Cargo.toml's check-cfg values");
}
