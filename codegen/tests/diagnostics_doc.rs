//! docs/DIAGNOSTICS.md lists every diagnostic code the tool can emit (found in its sources), and
//! no code it cannot.

use std::collections::BTreeSet;
use std::path::Path;

/// The letters that start a diagnostic code: policy, manifest, source, file, emitted module,
/// runtime crate.
const PREFIXES: &[char] = &['P', 'M', 'S', 'F', 'E', 'R'];

/// Whether `s` is a code: a prefix letter and three digits.
fn is_code(s: &str) -> bool {
    s.len() == 4 && s.starts_with(PREFIXES) && s[1..].chars().all(|c| c.is_ascii_digit())
}

/// Every `"Xnnn"` string literal that is a code in `dir`'s Rust files (outside their tests).
fn codes_in(dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            codes_in(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "tests.rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text.split("#[cfg(test)]\nmod tests {").next().unwrap_or_default();
            for (i, _) in text.match_indices('"') {
                if let Some(code) = text.get(i + 1..i + 5) {
                    if is_code(code) && text[i + 5..].starts_with('"') {
                        out.insert(code.to_owned());
                    }
                }
            }
        }
    }
}

#[test]
fn every_code_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut emitted = BTreeSet::new();
    codes_in(&root.join("src"), &mut emitted);
    assert!(emitted.len() >= 27, "found only {emitted:?}");
    let doc = std::fs::read_to_string(root.join("../docs/DIAGNOSTICS.md")).expect("docs/DIAGNOSTICS.md");
    let documented: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| ").and_then(|rest| rest.get(..4)))
        .filter(|code| is_code(code))
        .map(str::to_owned)
        .collect();
    let missing: Vec<&String> = emitted.difference(&documented).collect();
    let stale: Vec<&String> = documented.difference(&emitted).collect();
    assert!(missing.is_empty(), "codes missing from docs/DIAGNOSTICS.md: {missing:?}");
    assert!(stale.is_empty(), "codes documented but never emitted: {stale:?}");
}
