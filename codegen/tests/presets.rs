//! Every shipped preset parses, compiles (covering every builtin target exactly once) and emits
//! a module that parses and is byte-stable.

use smithy_tls_codegen::model::Provider;
use smithy_tls_codegen::{emit, policy, presets, targets};

fn compiled(name: &str) -> smithy_tls_codegen::model::CompiledPolicy {
    let source = presets::preset(name).expect("preset exists");
    let parsed = policy::parse_policy(source).unwrap_or_else(|d| panic!("{name}:\n{d}"));
    targets::compile(&parsed).unwrap_or_else(|d| panic!("{name}:\n{d}"))
}

/// The provider a target gets (`None`: no default client).
fn provider_for(compiled: &smithy_tls_codegen::model::CompiledPolicy, triple: &str) -> Option<Provider> {
    targets::matrix(compiled)
        .into_iter()
        .find(|r| r.target == triple)
        .unwrap_or_else(|| panic!("{triple} missing"))
        .stack
        .provider()
}

#[test]
fn every_preset_describes_itself() {
    for name in presets::names() {
        let description = compiled(name).policy.description;
        assert!(description.as_deref().is_some_and(|d| d.len() > 20), "{name}: {description:?}");
    }
}

#[test]
fn every_preset_covers_every_builtin_target_once() {
    for name in presets::names() {
        let c = compiled(name);
        let total: usize = c.rules.iter().map(|r| r.targets.len()).sum();
        assert_eq!(total, targets::builtin_target_count(), "{name}");
        assert_eq!(targets::matrix(&c).len(), targets::builtin_target_count(), "{name}");
    }
}

#[test]
fn platform_default_picks_per_platform() {
    let c = compiled("platform-default");
    assert_eq!(provider_for(&c, "x86_64-unknown-linux-gnu"), Some(Provider::S2nTls));
    assert_eq!(provider_for(&c, "aarch64-unknown-linux-gnu"), Some(Provider::S2nTls));
    assert_eq!(provider_for(&c, "x86_64-unknown-linux-musl"), Some(Provider::RustlsAwsLc));
    assert_eq!(provider_for(&c, "aarch64-apple-darwin"), Some(Provider::RustlsAwsLc));
    assert_eq!(provider_for(&c, "x86_64-pc-windows-msvc"), Some(Provider::RustlsAwsLc));
    assert_eq!(provider_for(&c, "wasm32-unknown-unknown"), None);
}

#[test]
fn portable_uses_ring_where_aws_lc_is_hard_to_build() {
    let c = compiled("portable");
    for t in [
        "x86_64-pc-windows-gnu",
        "armv7-unknown-linux-gnueabihf",
        "riscv64gc-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
    ] {
        assert_eq!(provider_for(&c, t), Some(Provider::RustlsRing), "{t}");
    }
    assert_eq!(provider_for(&c, "x86_64-unknown-linux-gnu"), Some(Provider::RustlsAwsLc));
    assert_eq!(provider_for(&c, "x86_64-pc-windows-msvc"), Some(Provider::RustlsAwsLc));
}

#[test]
fn emitted_module_parses_and_is_deterministic() {
    for name in presets::names() {
        let c = compiled(name);
        let a = emit::render_module(&c).unwrap();
        let b = emit::render_module(&compiled(name)).unwrap();
        assert_eq!(a, b, "{name}: emission must be byte-stable");
        syn::parse_file(&a).unwrap_or_else(|e| panic!("{name}: {e}\n{a}"));
    }
}

#[test]
fn snapshot_platform_default_module() {
    let text = emit::render_module(&compiled("platform-default")).unwrap();
    insta::assert_snapshot!(text);
}
