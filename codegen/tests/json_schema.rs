//! The `--format json` contract: docs/report.schema.json is the schema the tool prints
//! (`smithy-tls schema`), and every command's output — success and failure — validates against
//! it, with `schema_version`, `command` and `status` where a pipeline looks first.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use smithy_tls_codegen::report::{Document, SCHEMA_VERSION};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schema_file() -> PathBuf {
    repo().join("docs/report.schema.json")
}

#[test]
fn the_committed_schema_is_the_one_the_tool_prints() {
    let printed = serde_json::to_string_pretty(&Document::json_schema()).unwrap() + "\n";
    let committed = std::fs::read_to_string(schema_file()).unwrap_or_default();
    if printed != committed {
        if smithy_tls_test_support::regenerate() {
            std::fs::write(schema_file(), &printed).unwrap();
        }
        panic!(
            "docs/report.schema.json is not what `smithy-tls schema` prints; if the report types changed on \
             purpose (bump report::SCHEMA_VERSION when a field is removed or changes meaning), write it with \
             `scripts/bless test -p smithy-tls-codegen --test json_schema`"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls")).arg("schema").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), printed);
}

/// Runs the tool in `dir` and returns its exit code and the JSON document it printed.
fn run_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls")).current_dir(dir).args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let doc: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document ({e}):\n{stdout}"));
    (out.status.code().unwrap(), doc)
}

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_file()).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, args: &[&str], doc: &Value) {
    let errors: Vec<String> =
        validator.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path().as_str())).collect();
    assert!(errors.is_empty(), "{args:?} does not match the schema:\n{}\n{doc:#}", errors.join("\n"));
    assert_eq!(doc["schema_version"], SCHEMA_VERSION, "{args:?}");
}

/// A copy of a fixture tree: one generated crate and the runtime crate it needs.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees");
    for case in ["unformatted", "smithy-default-tls"] {
        smithy_tls_test_support::copy_tree(&fixtures.join(case), &dir.path().join(case), &[]).unwrap();
    }
    dir
}

#[test]
fn every_command_prints_a_document_the_schema_accepts() {
    let validator = validator();
    let tree = tree();
    let root = tree.path();
    std::fs::write(root.join("bad.toml"), "name = \"bad\"\n[runtime]\npackage = 3\n").unwrap();
    let manifest = root.join("unformatted/Cargo.toml");
    let manifest_text = std::fs::read_to_string(&manifest).unwrap();

    let cases: Vec<(Vec<&str>, i32, &str, &str)> = vec![
        (vec!["presets", "--format", "json"], 0, "presets", "ok"),
        (vec!["explain", "--format", "json"], 0, "explain", "ok"),
        (vec!["explain", "--format", "json", "--target", "aarch64-apple-ios"], 0, "explain", "ok"),
        (vec!["explain", "--format", "json", "--target", "x86_64-unknown-none"], 0, "explain", "ok"),
        (vec!["explain", "--format", "json", "--target", "no-such-target"], 2, "explain", "error"),
        // Each effect of an override: compiles, no-tls, does-not-build, unchanged; and the matrix.
        (
            vec!["explain", "--format", "json", "--target", "aarch64-apple-darwin", "--override", "s2n-tls"],
            0,
            "explain",
            "ok",
        ),
        (
            vec!["explain", "--format", "json", "--target", "x86_64-unknown-linux-gnu", "--override", "none"],
            0,
            "explain",
            "ok",
        ),
        (
            vec!["explain", "--format", "json", "--target", "x86_64-pc-windows-msvc", "--override", "s2n-tls-fips"],
            0,
            "explain",
            "ok",
        ),
        (
            vec!["explain", "--format", "json", "--target", "wasm32-wasip2", "--override", "rustls-custom"],
            0,
            "explain",
            "ok",
        ),
        (
            vec!["explain", "--format", "json", "--target", "x86_64-unknown-none", "--override", "openssl"],
            0,
            "explain",
            "ok",
        ),
        (vec!["explain", "--format", "json", "--override", "rustls-ring"], 0, "explain", "ok"),
        (vec!["explain", "--format", "json", "--policy", "bad.toml"], 2, "explain", "error"),
        (vec!["check", "--format", "json", "."], 1, "check", "ok"),
        (vec!["diff", "--format", "json", "--stat", "."], 0, "diff", "ok"),
        (vec!["apply", "--format", "json", "--policy", "bad.toml", "."], 2, "apply", "error"),
        (vec!["apply", "--format", "json", "."], 0, "apply", "ok"),
        (vec!["check", "--format", "json", "."], 0, "check", "ok"),
        (vec!["revert", "--format", "json", "."], 0, "revert", "ok"),
    ];
    for (args, code, command, status) in &cases {
        let (exit, doc) = run_json(root, args);
        assert_valid(&validator, args, &doc);
        assert_eq!(
            (exit, doc["command"].as_str(), doc["status"].as_str()),
            (*code, Some(*command), Some(*status)),
            "{args:?}:\n{doc:#}"
        );
    }

    // A manifest that is not TOML: the error has a code and the place, in the JSON.
    std::fs::write(&manifest, manifest_text.replacen("[package]", "[package", 1)).unwrap();
    let args = ["apply", "--format", "json", "."];
    let (exit, doc) = run_json(root, &args);
    assert_valid(&validator, &args, &doc);
    assert_eq!(exit, 2);
    let diagnostic = &doc["diagnostics"][0];
    assert_eq!(diagnostic["code"], "M001", "{doc:#}");
    assert_eq!(diagnostic["line"], 1, "{doc:#}");
    assert!(diagnostic["file"].as_str().unwrap().ends_with("unformatted/Cargo.toml"), "{doc:#}");
}

#[test]
fn explain_reports_an_enum_per_target_not_positional_tuples() {
    let tree = tree();
    let (_, doc) = run_json(tree.path(), &["explain", "--format", "json", "--target", "x86_64-unknown-linux-gnu"]);
    let target = &doc["targets"][0];
    assert_eq!(target["verdict"], "served", "{doc:#}");
    assert!(target["considered"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["rule"].is_string() && c["matches"].is_boolean()));
    assert!(target["provider"].is_string() && target["roots"].is_string(), "{doc:#}");
    let (_, doc) = run_json(tree.path(), &["explain", "--format", "json", "--target", "x86_64-unknown-uefi"]);
    assert_eq!(doc["targets"][0]["verdict"], "not-a-host", "{doc:#}");
    assert!(doc["targets"][0]["why"].is_string(), "{doc:#}");
}
