//! The policy parser and compiler on arbitrary text. Properties: never panics; a policy that
//! parses and compiles emits a module that parses as Rust, the same bytes twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use smithy_tls_codegen::policy::{parse_policy, PolicySource};
use smithy_tls_codegen::{compile, emit};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let source = PolicySource { path: "fuzz.toml".into(), text: text.to_owned() };
    let Ok(parsed) = parse_policy(source) else { return };
    let Ok(compiled) = compile::compile(&parsed) else { return };
    let module = emit::render_module(&compiled).expect("a compiled policy emits");
    syn::parse_file(&module).expect("the emitted module parses");
    assert_eq!(emit::render_module(&compiled).expect("emits"), module, "emission is deterministic");
});
