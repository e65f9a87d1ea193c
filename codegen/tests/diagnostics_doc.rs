//! docs/DIAGNOSTICS.md lists every diagnostic code the tool can emit (found in its sources), and
//! no code it cannot.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `"Pnnn"` string literal in `dir`'s Rust files.
fn codes_in(dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            codes_in(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices("\"P0") {
                let code = &text[i + 1..(i + 5).min(text.len())];
                if code.len() == 4 && code[1..].chars().all(|c| c.is_ascii_digit()) && text[i + 5..].starts_with('"') {
                    out.insert(code.to_owned());
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
    assert!(emitted.len() >= 15, "found only {emitted:?}");
    let doc = std::fs::read_to_string(root.join("../docs/DIAGNOSTICS.md")).expect("docs/DIAGNOSTICS.md");
    let documented: BTreeSet<String> =
        doc.lines().filter_map(|l| l.strip_prefix("| P0")).map(|rest| format!("P0{}", &rest[..2])).collect();
    let missing: Vec<&String> = emitted.difference(&documented).collect();
    let stale: Vec<&String> = documented.difference(&emitted).collect();
    assert!(missing.is_empty(), "codes missing from docs/DIAGNOSTICS.md: {missing:?}");
    assert!(stale.is_empty(), "codes documented but never emitted: {stale:?}");
}
