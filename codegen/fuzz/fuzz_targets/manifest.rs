//! The manifest rewriter on arbitrary text, with a shipped preset. Properties: never panics;
//! an edited manifest parses as TOML and editing it again changes nothing; an error leaves the
//! input as it was (the function is pure: it returns text, it never writes).
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use smithy_tls_codegen::manifest::{edit_manifest, inspect_manifest, ManifestEdit, RuntimeDepSpec};
use smithy_tls_codegen::model::{CompiledPolicy, LegacyRustls};
use smithy_tls_codegen::{compile, policy, presets};

fn compiled() -> &'static CompiledPolicy {
    static COMPILED: OnceLock<CompiledPolicy> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let parsed = policy::parse_policy(presets::preset("platform-default").expect("preset")).expect("parses");
        compile::compile(&parsed).expect("compiles")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("fuzz/Cargo.toml");
    let _ = inspect_manifest(path, text);
    for legacy_rustls in [LegacyRustls::Keep, LegacyRustls::AliasDefault] {
        let edit = ManifestEdit {
            compiled: compiled(),
            runtime: RuntimeDepSpec { package: "smithy-default-tls", version: "0.1", path: Some("../smithy-default-tls") },
            legacy_rustls,
            loader_made_mut: false,
        };
        let Ok(edited) = edit_manifest(path, text, &edit) else { continue };
        edited.parse::<toml_edit::DocumentMut>().expect("the edited manifest parses");
        let again = edit_manifest(path, &edited, &edit).expect("an edited manifest edits again");
        assert_eq!(again, edited, "editing is idempotent");
    }
});
