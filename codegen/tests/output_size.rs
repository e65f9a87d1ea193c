//! What a reviewer reads per crate, for every preset: the bytes `apply` adds to a client's
//! Cargo.toml, its longest added line, and the emitted module's length. Printed (run with
//! `--nocapture` to see them) and held under ceilings so the output does not grow back
//! unnoticed; issue 27's goals and the measured values are in CHANGELOG.md.

use std::path::Path;
use std::process::Command;

use smithy_tls_codegen::presets;

/// (preset, most added bytes, longest added line, most module lines) allowed: issue 27's goals.
/// A table header cannot span lines, and a rule whose own cfg names several keys
/// (`any(target_os = .., target_arch = ..)`) or the fallback still negates the `none` rules in
/// full, so the longest line is a header; every other added line is held to 200 characters.
const CEILINGS: &[(&str, usize, usize, usize)] = &[
    // The three presets that give wasm32-wasip2 the host's client (issue 52) add its table, its
    // `dep:` entries and its `mod selected`: about 200 bytes and 20 module lines more each.
    ("platform-default", 4_150, 900, 175),
    ("portable", 4_750, 900, 175),
    // 3,326 bytes since it maps the legacy `rustls` feature to the default client (issue 43): the
    // feature line and its entry in the record, 123 bytes over the 3,203 it kept the feature with.
    ("rustls-everywhere", 3_600, 800, 175),
    ("fips", 1_000, 220, 110),
    ("system-crypto", 4_000, 900, 150),
];

/// The longest added line that is not a target table's header.
const MAX_OTHER_LINE: usize = 200;

#[test]
fn added_bytes_longest_line_and_module_lines_stay_under_their_ceilings() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees");
    let original = std::fs::read_to_string(fixtures.join("dotted-tables/Cargo.toml")).unwrap();
    assert_eq!(CEILINGS.len(), presets::names().count(), "a ceiling per preset");
    for (preset, max_bytes, max_line, max_lines) in CEILINGS {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        smithy_tls_test_support::copy_tree(&fixtures, &tree, &[]).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls"))
            .args(["apply", "--preset", preset])
            .arg(&tree)
            .output()
            .unwrap();
        assert!(out.status.success(), "{preset}: {}", String::from_utf8_lossy(&out.stderr));
        let edited = std::fs::read_to_string(tree.join("dotted-tables/Cargo.toml")).unwrap();
        let diff = similar::TextDiff::from_lines(&original, &edited);
        let added: Vec<&str> =
            diff.iter_all_changes().filter(|c| c.tag() == similar::ChangeTag::Insert).map(|c| c.value()).collect();
        let bytes: usize = added.iter().map(|l| l.len()).sum();
        let longest = added.iter().map(|l| l.trim_end().len()).max().unwrap_or(0);
        let module = std::fs::read_to_string(tree.join("dotted-tables/src/default_http_client.rs")).unwrap();
        let lines = module.lines().count();
        println!("{preset}: {bytes} bytes added to Cargo.toml, longest added line {longest}, module {lines} lines");
        assert!(bytes <= *max_bytes, "{preset}: {bytes} bytes added (ceiling {max_bytes})");
        assert!(longest <= *max_line, "{preset}: longest added line {longest} (ceiling {max_line})");
        assert!(lines <= *max_lines, "{preset}: module of {lines} lines (ceiling {max_lines})");
        for line in added.iter().filter(|l| !l.starts_with("[target.")) {
            assert!(line.trim_end().len() <= MAX_OTHER_LINE, "{preset}: added line over {MAX_OTHER_LINE}: {line}");
        }
    }
}
