//! The source patcher on arbitrary Rust text. Properties: never panics; a patched file parses,
//! patching it again changes nothing, and the fast path (one function cut out of the file)
//! agrees with parsing the whole file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use smithy_tls_codegen::patch::{
    patch_aws_config_loader, patch_crate_root, patch_service_config, patch_service_config_without_fast_path,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("fuzz.rs");
    let fast = patch_service_config(path, text);
    let whole = patch_service_config_without_fast_path(path, text);
    if let (Ok(fast), Ok(whole)) = (&fast, &whole) {
        assert_eq!(fast, whole, "the fast path agrees with the whole-file path");
    }
    type Patch = fn(&Path, &str) -> Result<String, smithy_tls_codegen::patch::PatchError>;
    let patches: [Patch; 3] = [patch_service_config, patch_crate_root, patch_aws_config_loader];
    for patch in patches {
        let Ok(out) = patch(path, text) else { continue };
        syn::parse_file(out.trim_start_matches('\u{feff}')).expect("a patched file parses");
        assert_eq!(patch(path, &out).as_deref(), Ok(out.as_str()), "patching is idempotent");
    }
});
