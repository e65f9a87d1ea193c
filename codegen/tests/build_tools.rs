//! The note P020 for a rule that makes a tier-1 or tier-2 target need cmake, Go or libclang, on
//! the embedded presets, whose advice is checked by following it.

use smithy_tls_codegen::diag::Severity;
use smithy_tls_codegen::native_build::{policy_notes, NOTE_CODE};
use smithy_tls_codegen::policy::{parse_policy, PolicySource};
use smithy_tls_codegen::{presets, targets};

/// The notes of an embedded preset, rendered, with `only` as `explain --target` passes it.
fn preset_notes(name: &str, only: Option<&str>) -> Vec<String> {
    let parsed = parse_policy(presets::preset(name).unwrap()).unwrap();
    let compiled = targets::compile(&parsed).unwrap();
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
    let compiled = targets::compile(&parsed).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(policy_notes(&parsed, &compiled, None), []);
}

#[test]
fn snapshot_the_notes_of_the_presets() {
    insta::assert_snapshot!("p020_platform_default", preset_notes("platform-default", None).join("\n\n"));
    insta::assert_snapshot!("p020_fips", preset_notes("fips", None).join("\n\n"));
}
