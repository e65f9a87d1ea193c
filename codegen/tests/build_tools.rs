//! What each target builds, as `explain` says it: per target the native libraries and the
//! tools their builds need (JSON and for people), per rule the tools beyond a C compiler, and
//! the note P020 for a rule that makes a tier-1 or tier-2 target need cmake, Go or libclang,
//! whose advice is checked by following it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use smithy_tls_codegen::diag::Severity;
use smithy_tls_codegen::native_build::{policy_notes, NOTE_CODE};
use smithy_tls_codegen::policy::{parse_policy, PolicySource};
use smithy_tls_codegen::{compile, presets};

/// Runs the tool in `dir` without colour; returns the exit code, stdout and stderr.
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_smithy-tls"));
    cmd.current_dir(dir).args(["--color", "never"]).args(args);
    for var in ["CLICOLOR", "CLICOLOR_FORCE"] {
        cmd.env_remove(var);
    }
    let out = cmd.env("NO_COLOR", "1").output().unwrap();
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn here() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The JSON document of an `explain` that must succeed (JSON puts the notes in the document,
/// nothing on stderr).
fn json_of(args: &[&str]) -> Value {
    let (code, stdout, stderr) = run_in(here(), args);
    assert_eq!((code, stderr.as_str()), (0, ""), "{args:?}");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}):\n{stdout}"));
    assert_eq!((&doc["command"], &doc["status"]), (&Value::from("explain"), &Value::from("ok")), "{doc:#}");
    doc
}

/// (library, [required tools], [optional tools]) of one target's `native_build`.
fn builds(target: &Value) -> Vec<(String, Vec<String>, Vec<String>)> {
    let tools = |needs: &Value, necessity: &str| -> Vec<String> {
        needs
            .as_array()
            .expect("needs")
            .iter()
            .filter(|n| n["necessity"] == necessity)
            .map(|n| n["tool"].as_str().expect("tool").to_owned())
            .collect()
    };
    target["native_build"]
        .as_array()
        .unwrap_or_else(|| panic!("no native_build: {target:#}"))
        .iter()
        .map(|b| {
            (
                b["library"].as_str().expect("library").to_owned(),
                tools(&b["needs"], "required"),
                tools(&b["needs"], "optional"),
            )
        })
        .collect()
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn explain_json_lists_what_a_target_compiles_and_the_tools_it_needs() {
    let doc = json_of(&["explain", "--format", "json", "--target", "x86_64-unknown-linux-gnu"]);
    let target = &doc["targets"][0];
    assert_eq!(target["tier"], 1, "{target:#}");
    assert_eq!(
        builds(target),
        [
            ("aws-lc-sys".to_owned(), owned(&["c-compiler"]), owned(&["pkg-config"])),
            ("s2n-tls-sys".to_owned(), owned(&["c-compiler"]), owned(&["clang"])),
        ]
    );
    for build in target["native_build"].as_array().unwrap() {
        assert!(build["version"].as_str().is_some_and(|v| v.starts_with("0.")), "{build:#}");
        assert_eq!(build["route"], "cc", "{build:#}");
        for need in build["needs"].as_array().unwrap() {
            let source = need["source"].as_str().unwrap();
            assert!(source.starts_with(build["library"].as_str().unwrap()), "a source names its crate: {need:#}");
            assert!(!need["why"].as_str().unwrap().is_empty(), "{need:#}");
        }
    }
    assert_eq!(doc["notes"], Value::Array(vec![]), "{doc:#}");

    // Windows: NASM for x86 (no prebuilt objects), optional for x86-64 (prebuilt objects).
    let doc = json_of(&["explain", "--format", "json", "--target", "i686-pc-windows-msvc"]);
    assert_eq!(builds(&doc["targets"][0]), [("aws-lc-sys".to_owned(), owned(&["c-compiler", "nasm"]), owned(&[]))]);
    let doc = json_of(&["explain", "--format", "json", "--target", "x86_64-pc-windows-msvc"]);
    assert_eq!(builds(&doc["targets"][0]), [("aws-lc-sys".to_owned(), owned(&["c-compiler"]), owned(&["nasm"]))]);

    // OpenHarmony: CMake, and the note about it in the document.
    let doc = json_of(&["explain", "--format", "json", "--target", "aarch64-unknown-linux-ohos"]);
    let target = &doc["targets"][0];
    assert_eq!((&target["tier"], &target["native_build"][0]["route"]), (&Value::from(2), &Value::from("cmake")));
    let notes = doc["notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "{doc:#}");
    assert_eq!((&notes[0]["code"], &notes[0]["severity"]), (&Value::from(NOTE_CODE), &Value::from("note")), "{doc:#}");

    // No default client, nothing built; a target that cannot host an SDK has no build at all.
    let doc = json_of(&["explain", "--format", "json", "--target", "wasm32-wasip2"]);
    assert_eq!(doc["targets"][0]["native_build"], Value::Array(vec![]), "{doc:#}");
    let doc = json_of(&["explain", "--format", "json", "--target", "x86_64-unknown-none"]);
    assert!(doc["targets"][0].get("native_build").is_none(), "{doc:#}");
}

#[test]
fn explain_json_summarises_the_rules_that_need_more_than_a_c_compiler() {
    let doc = json_of(&["explain", "--format", "json", "--preset", "platform-default"]);
    let extra = |rule: &str| -> Vec<(String, String, Vec<String>)> {
        let rule = doc["rules"].as_array().unwrap().iter().find(|r| r["name"] == rule).expect(rule);
        rule["extra_build_tools"]
            .as_array()
            .expect("extra_build_tools")
            .iter()
            .map(|n| {
                let targets = n["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
                (n["tool"].as_str().unwrap().to_owned(), n["library"].as_str().unwrap().to_owned(), targets)
            })
            .collect()
    };
    let ohos = [
        "aarch64-unknown-linux-ohos",
        "armv7-unknown-linux-ohos",
        "loongarch64-unknown-linux-ohos",
        "x86_64-unknown-linux-ohos",
    ];
    assert_eq!(extra("elsewhere"), [("cmake".to_owned(), "aws-lc-sys".to_owned(), owned(&ohos))]);
    let x86 = [
        "i686-pc-windows-gnu",
        "i686-pc-windows-gnullvm",
        "i686-pc-windows-msvc",
        "i686-win7-windows-gnu",
        "i686-win7-windows-msvc",
    ];
    assert_eq!(
        extra("windows"),
        [
            ("clang-cl".to_owned(), "aws-lc-sys".to_owned(), owned(&["aarch64-pc-windows-msvc"])),
            ("nasm".to_owned(), "aws-lc-sys".to_owned(), owned(&x86)),
        ]
    );
    for rule in ["wasm", "no-tls-provider", "apple", "android", "no-aws-lc", "linux-gnu"] {
        assert_eq!(extra(rule), [], "{rule}");
    }
    // The whole matrix: the notes of every rule.
    assert_eq!(doc["notes"].as_array().map(Vec::len), Some(1), "{doc:#}");
}

#[test]
fn explain_for_people_shows_the_build_and_the_note_on_stderr() {
    let (code, stdout, stderr) = run_in(here(), &["explain", "--target", "aarch64-unknown-linux-ohos"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "\n  native build for this tier-2 target: 1 library; the build host needs a C compiler and cmake\n    \
             aws-lc-sys 0.47.0, AWS-LC's libcrypto, with CMake\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("\n      needs cmake: OpenHarmony targets are built with CMake only"), "{stdout}");
    assert!(stderr.starts_with("note[P020]: rule `elsewhere` makes 1 tier-1/2 target need cmake"), "{stderr}");
    assert!(!stdout.contains("P020"), "the note goes to stderr: {stdout}");

    // The matrix: which rules need more than a C compiler, and why.
    let (code, stdout, stderr) = run_in(here(), &["explain"]);
    assert_eq!(code, 0, "{stderr}");
    let section = stdout
        .split_once("\nbuild tools beyond a C compiler (which every provider needs):\n")
        .map(|(_, rest)| rest.split("\n\n").next().unwrap_or_default())
        .unwrap_or_else(|| panic!("no build tools section:\n{stdout}"));
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(lines[0], "rule `windows`:", "{section}");
    assert!(lines[1].starts_with("  clang-cl on aarch64-pc-windows-msvc (aws-lc-sys 0.47.0: "), "{section}");
    assert!(lines[2].starts_with("  nasm on i686-pc-windows-gnu, "), "{section}");
    assert_eq!(lines[3], "rule `elsewhere`:", "{section}");
    assert!(lines[4].starts_with("  cmake on aarch64-unknown-linux-ohos, armv7-unknown-linux-ohos, "), "{section}");
    assert_eq!(lines[5], "the other 4 rule(s) with a provider need only a C compiler", "{section}");
    assert_eq!(stderr.matches("note[P020]").count(), 1, "{stderr}");

    // --quiet: nothing, the note included.
    let (code, stdout, stderr) = run_in(here(), &["--quiet", "explain", "--target", "aarch64-unknown-linux-ohos"]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
}

/// The notes of an embedded preset, rendered, with `only` as `explain --target` passes it.
fn preset_notes(name: &str, only: Option<&str>) -> Vec<String> {
    let parsed = parse_policy(presets::preset(name).unwrap()).unwrap();
    let compiled = compile::compile(&parsed).unwrap();
    let notes = policy_notes(&parsed, &compiled, only);
    assert!(notes.iter().all(|n| n.severity == Severity::Note && n.code == NOTE_CODE), "{notes:?}");
    notes.iter().map(ToString::to_string).collect()
}

#[test]
fn every_preset_gets_the_note_where_a_tier_1_or_2_target_needs_cmake_go_or_libclang() {
    // aws-lc-sys builds OpenHarmony with CMake; ring does not need it.
    for (preset, rule, count) in
        [("platform-default", "elsewhere", 3), ("portable", "elsewhere", 2), ("rustls-everywhere", "everywhere", 3)]
    {
        let notes = preset_notes(preset, None);
        assert_eq!(notes.len(), 1, "{preset}: {notes:#?}");
        let start = format!("note[P020]: rule `{rule}` makes {count} tier-1/2 targets need cmake to build provider `rustls-aws-lc`: aarch64-unknown-linux-ohos (tier 2)");
        assert!(notes[0].starts_with(&start), "{preset}: {}", notes[0]);
        assert!(notes[0].contains("= help: `rustls-ring` builds for them with only a C compiler"), "{}", notes[0]);
        // Tier 3 is not named.
        assert!(!notes[0].contains("loongarch64-unknown-linux-ohos"), "{}", notes[0]);
    }
    // FIPS: no FIPS provider needs less, and the note says so.
    let notes = preset_notes("fips", None);
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert!(notes[0].contains("= help: no FIPS provider builds for them with only a C compiler"), "{}", notes[0]);
    // A tool that only some of the rule's targets need is named with those targets.
    assert!(
        notes[0].contains(
            "need cmake, Go, Perl, libclang (on 3 of them: x86_64-unknown-linux-gnuasan, \
             x86_64-unknown-linux-gnumsan, x86_64-unknown-linux-gnutsan) and Linux kernel headers (on 2 of \
             them: aarch64-unknown-linux-musl, x86_64-unknown-linux-musl) to build"
        ),
        "{}",
        notes[0]
    );
    // About one target: only a note that concerns it.
    assert_eq!(preset_notes("platform-default", Some("x86_64-unknown-linux-gnu")), Vec::<String>::new());
    assert_eq!(preset_notes("fips", Some("x86_64-unknown-linux-gnu")).len(), 1);
    assert!(preset_notes("fips", Some("x86_64-unknown-linux-gnu"))[0].contains("need cmake, Go and Perl"));
}

#[test]
fn following_the_notes_advice_removes_it() {
    // platform-default, with the OpenHarmony targets given the alternative the note names.
    let text = presets::preset("platform-default").unwrap().text;
    assert_eq!(preset_notes("platform-default", None).len(), 1, "the preset's note is what this test removes");
    let fixed = text.replacen(
        "[[rule]]\nname = \"linux-gnu\"",
        "[[rule]]\nname = \"ohos\"\ncfg = 'cfg(target_env = \"ohos\")'\nprovider = \"rustls-ring\"\nroots = \"native\"\n\n[[rule]]\nname = \"linux-gnu\"",
        1,
    );
    assert_ne!(fixed, text, "the preset's linux-gnu rule moved: update this test");
    let parsed = parse_policy(PolicySource { path: "fixed.toml".into(), text: fixed }).unwrap();
    let compiled = compile::compile(&parsed).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(policy_notes(&parsed, &compiled, None), []);
}

#[test]
fn snapshot_the_notes_of_the_presets() {
    insta::assert_snapshot!("p020_platform_default", preset_notes("platform-default", None).join("\n\n"));
    insta::assert_snapshot!("p020_fips", preset_notes("fips", None).join("\n\n"));
}
