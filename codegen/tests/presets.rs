//! Every shipped preset parses, compiles (covering every builtin target exactly once) and emits
//! a module that parses and is byte-stable.

use smithy_tls_codegen::model::{Provider, Roots};
use smithy_tls_codegen::{compile, emit, matrix, policy, presets, targets};

fn compiled(name: &str) -> smithy_tls_codegen::model::CompiledPolicy {
    let source = presets::preset(name).expect("preset exists");
    let parsed = policy::parse_policy(source).unwrap_or_else(|d| panic!("{name}:\n{d}"));
    compile::compile(&parsed).unwrap_or_else(|d| panic!("{name}:\n{d}"))
}

/// The provider a target gets (`None`: no default client).
fn provider_for(compiled: &smithy_tls_codegen::model::CompiledPolicy, triple: &str) -> Option<Provider> {
    matrix::matrix(compiled)
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
        assert_eq!(total, targets::sdk_target_count(), "{name}");
        assert_eq!(matrix::matrix(&c).len(), targets::sdk_target_count(), "{name}");
    }
    // The others are listed as targets that cannot host an SDK.
    assert_eq!(targets::sdk_target_count() + targets::non_hosts().len(), targets::builtin_target_count());
}

/// The roots a target gets.
fn roots_for(compiled: &smithy_tls_codegen::model::CompiledPolicy, triple: &str) -> Option<Roots> {
    matrix::matrix(compiled)
        .into_iter()
        .find(|r| r.target == triple)
        .unwrap_or_else(|| panic!("{triple} missing"))
        .stack
        .roots()
}

#[test]
fn every_preset_gives_each_platform_roots_that_work_there() {
    for name in presets::names() {
        let c = compiled(name);
        for (triple, roots) in [
            ("aarch64-apple-darwin", Roots::PlatformVerifier),
            ("x86_64-apple-darwin", Roots::PlatformVerifier),
            ("aarch64-apple-ios", Roots::PlatformVerifier),
            ("aarch64-apple-ios-sim", Roots::PlatformVerifier),
            ("aarch64-apple-tvos", Roots::PlatformVerifier),
            ("aarch64-linux-android", Roots::Webpki),
            ("armv7-linux-androideabi", Roots::Webpki),
            ("x86_64-pc-windows-msvc", Roots::PlatformVerifier),
            ("x86_64-pc-windows-gnu", Roots::PlatformVerifier),
            ("x86_64-unknown-linux-gnu", Roots::Native),
            ("aarch64-unknown-linux-musl", Roots::Native),
            ("x86_64-unknown-freebsd", Roots::Native),
        ] {
            // The fips preset gives a client only where the FIPS module builds (Linux).
            let served = name != "fips" || triple.contains("-linux-gnu") || triple.contains("-linux-musl");
            assert_eq!(roots_for(&c, triple), served.then_some(roots), "{name}: {triple}");
        }
    }
}

#[test]
fn fips_gives_the_fips_provider_where_it_builds_and_nothing_else_anywhere() {
    let c = compiled("fips");
    for t in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
    ] {
        assert_eq!(provider_for(&c, t), Some(Provider::RustlsAwsLcFips), "{t}");
    }
    // Never a non-FIPS provider: where the module does not build, no default client.
    for row in matrix::matrix(&c) {
        assert!(
            matches!(row.stack.provider(), None | Some(Provider::RustlsAwsLcFips)),
            "{}: {:?}",
            row.target,
            row.stack
        );
    }
    for t in ["aarch64-apple-darwin", "x86_64-pc-windows-msvc", "i686-unknown-linux-gnu", "riscv64gc-unknown-linux-gnu"]
    {
        assert_eq!(provider_for(&c, t), None, "{t}");
    }
}

#[test]
fn system_crypto_gives_the_system_openssl_where_the_system_has_one() {
    let c = compiled("system-crypto");
    for t in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "riscv64gc-unknown-linux-gnu",
        "x86_64-unknown-freebsd",
        "x86_64-unknown-netbsd",
    ] {
        assert_eq!(provider_for(&c, t), Some(Provider::OpenSsl), "{t}");
        assert_eq!(roots_for(&c, t), Some(Roots::Native), "{t}");
    }
    // The OS verifier with rustls where the OS has its own TLS stack; platform-default's choice
    // elsewhere (LibreSSL on OpenBSD and DragonFly: no OpenSSL policy to honour).
    for (t, provider) in [
        ("aarch64-apple-darwin", Provider::RustlsAwsLc),
        ("aarch64-apple-ios", Provider::RustlsAwsLc),
        ("x86_64-pc-windows-msvc", Provider::RustlsAwsLc),
        ("aarch64-linux-android", Provider::RustlsAwsLc),
        ("x86_64-unknown-openbsd", Provider::RustlsAwsLc),
        ("x86_64-unknown-dragonfly", Provider::RustlsRing),
    ] {
        assert_eq!(provider_for(&c, t), Some(provider), "{t}");
    }
    assert_eq!(roots_for(&c, "aarch64-apple-darwin"), Some(Roots::PlatformVerifier));
    assert_eq!(roots_for(&c, "x86_64-pc-windows-msvc"), Some(Roots::PlatformVerifier));
    assert_eq!(provider_for(&c, "wasm32-wasip2"), None);
}

/// The notes P020 each preset gets, as README and CHANGELOG state them. aws-lc-sys builds
/// OpenHarmony with CMake: the presets that give those targets `rustls-aws-lc` get one note
/// naming them; `system-crypto` gives them the system's OpenSSL (a C compiler, pkg-config and
/// the headers, never cmake) and gets none; `fips` one for its Linux targets. A new preset fails
/// here until its notes are stated.
#[test]
fn every_presets_p020_notes_are_the_documented_ones() {
    for name in presets::names() {
        let parsed = policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset");
        let compiled = compile::compile(&parsed).expect("compiles");
        let notes: Vec<String> = smithy_tls_codegen::native_build::policy_notes(&parsed, &compiled, None)
            .iter()
            .map(ToString::to_string)
            .collect();
        let about_ohos = notes.iter().filter(|n| n.contains("-unknown-linux-ohos")).count();
        match name {
            "platform-default" | "portable" | "rustls-everywhere" => {
                assert_eq!(notes.len(), 1, "{name}: {notes:#?}");
                assert_eq!(about_ohos, 1, "{name}: {notes:#?}");
                assert!(notes[0].contains("need cmake to build provider `rustls-aws-lc`"), "{name}: {}", notes[0]);
            }
            "fips" => {
                assert_eq!(notes.len(), 1, "{name}: {notes:#?}");
                assert_eq!(about_ohos, 0, "{name}: {notes:#?}");
                assert!(notes[0].contains("x86_64-unknown-linux-gnu (tier 1)"), "{name}: {}", notes[0]);
            }
            "system-crypto" => {
                assert_eq!(notes, Vec::<String>::new(), "{name}");
                for ohos in ["aarch64-unknown-linux-ohos", "armv7-unknown-linux-ohos", "x86_64-unknown-linux-ohos"] {
                    assert_eq!(provider_for(&compiled, ohos), Some(Provider::OpenSsl), "{name}: {ohos}");
                }
            }
            other => panic!("preset `{other}`: state its P020 notes here and in README (`explain --preset {other}`)"),
        }
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
    assert_eq!(provider_for(&c, "wasm32-wasip2"), None);
    // s2n-tls on the glibc architectures it is deployed on; rustls + aws-lc-rs on the others,
    // ring where aws-lc does not build, nothing where neither does.
    assert_eq!(provider_for(&c, "riscv64gc-unknown-linux-gnu"), Some(Provider::RustlsAwsLc));
    assert_eq!(provider_for(&c, "s390x-unknown-linux-gnu"), Some(Provider::RustlsAwsLc));
    assert_eq!(provider_for(&c, "aarch64_be-unknown-linux-gnu"), Some(Provider::RustlsRing));
    assert_eq!(provider_for(&c, "x86_64-unknown-haiku"), Some(Provider::RustlsRing));
    assert_eq!(provider_for(&c, "x86_64-pc-nto-qnx710"), None);
    assert_eq!(provider_for(&c, "aarch64-linux-android"), Some(Provider::RustlsAwsLc));
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

/// The module's header names the output format and a hash of what it says, not the tool's version
/// or the policy file's bytes: a comment in the policy, or an upgrade that emits the same code,
/// changes no generated file; a change of meaning changes the hash.
#[test]
fn the_header_changes_only_when_the_module_does() {
    let source = presets::preset("platform-default").unwrap();
    let module = emit::render_module(&compiled("platform-default")).unwrap();
    let header = module.lines().next().unwrap();
    assert!(
        header.starts_with("// @generated by smithy-tls (output format 2) from policy `platform-default` (sha256 "),
        "{header}"
    );
    assert!(!header.contains(env!("CARGO_PKG_VERSION")), "no tool version in {header}");

    let commented = policy::PolicySource {
        path: source.path.clone(),
        text: format!("# a reviewer's note\n{}", source.text.replace("[runtime]", "# why this runtime\n[runtime]")),
    };
    let recompiled = compile::compile(&policy::parse_policy(commented).unwrap()).unwrap();
    assert_eq!(emit::render_module(&recompiled).unwrap(), module, "comments change nothing");

    let changed = policy::PolicySource {
        path: source.path.clone(),
        text: source.text.replacen("provider = \"s2n-tls\"", "provider = \"rustls-ring\"", 1),
    };
    let recompiled = compile::compile(&policy::parse_policy(changed).unwrap()).unwrap();
    let other = emit::render_module(&recompiled).unwrap();
    assert_ne!(other.lines().next(), Some(header), "a different stack, a different hash");
}
