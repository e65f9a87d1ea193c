//! The platform tables against their sources: the standard-library table against rustc's own
//! target specifications (nightly's `--print all-target-specs-json`, installed for cargo-fuzz;
//! without it this test fails, it never passes unchecked), and the verdicts for the targets
//! SDK users build for, pinned.

use std::process::Command;

use cfg_expr::targets::{get_builtin_target_by_triple, ALL_BUILTINS};

use super::*;

fn target(triple: &str) -> &'static TargetInfo {
    get_builtin_target_by_triple(triple).unwrap_or_else(|| panic!("{triple} is not a builtin target"))
}

#[test]
fn the_std_table_matches_rustcs_target_specs() {
    let specs = rustc_target_specs();
    let mut compared = 0;
    for target in ALL_BUILTINS {
        let Some(spec) = specs.get(target.triple.as_str()) else { continue };
        let std = spec.pointer("/metadata/std").and_then(serde_json::Value::as_bool) == Some(true);
        assert_eq!(has_std(target), std, "{}: rustc says std = {:?}", target.triple, spec.pointer("/metadata/std"));
        compared += 1;
    }
    // cfg-expr and rustc list nearly the same targets; most must have been compared.
    assert!(compared > 300, "only {compared} targets compared");
}

/// rustc's target specifications, from the pinned nightly (`smithy_tls_test_support::toolchains`,
/// installed by scripts/test); without it the tests that need them fail, they never pass unchecked.
fn rustc_target_specs() -> serde_json::Map<String, serde_json::Value> {
    let nightly = smithy_tls_test_support::toolchains::nightly();
    let out = Command::new("rustc")
        .arg(format!("+{nightly}"))
        .args(["-Z", "unstable-options", "--print", "all-target-specs-json"])
        .output()
        .unwrap_or_else(|e| {
            panic!("rustc +{nightly} is needed to check the platform tables ({e}; scripts/test installs it)")
        });
    assert!(
        out.status.success(),
        "rustc +{nightly} --print all-target-specs-json (rustup toolchain install {nightly} --profile minimal): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn the_tier_lists_match_rustcs_target_specs() {
    let specs = rustc_target_specs();
    let rustc_tier =
        |triple: &str| specs.get(triple).and_then(|s| s.pointer("/metadata/tier")).and_then(|t| t.as_u64());
    // Every listed target is the tier rustc says, whether or not cfg-expr knows it.
    for (number, list) in [(1, tier::TIER_1), (2, tier::TIER_2)] {
        for triple in list {
            assert_eq!(rustc_tier(triple), Some(number), "{triple} is listed as tier {number}");
        }
    }
    // And every builtin target cfg-expr knows gets rustc's tier (none given: tier 3).
    let mut compared = 0;
    for target in ALL_BUILTINS {
        let Some(spec) = specs.get(target.triple.as_str()) else { continue };
        let expected = spec.pointer("/metadata/tier").and_then(|t| t.as_u64()).unwrap_or(3);
        assert_eq!(u64::from(tier(target).number()), expected, "{}", target.triple);
        compared += 1;
    }
    assert!(compared > 300, "only {compared} targets compared");
    assert!(tier::TIER_1.len() >= 8 && tier::TIER_2.len() > 90, "the lists are rustc's, not a sample");
}

#[test]
fn hosts_are_std_targets_with_sockets() {
    let hosts = ALL_BUILTINS.iter().filter(|t| sdk_host(t).is_ok()).count();
    assert_eq!(hosts, 217, "SDK hosts among cfg-expr's {} builtin targets", ALL_BUILTINS.len());
    for (triple, host) in [
        ("x86_64-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-musl", true),
        ("aarch64-apple-ios", true),
        ("aarch64-linux-android", true),
        ("x86_64-pc-windows-gnu", true),
        ("x86_64-unknown-freebsd", true),
        ("x86_64-unknown-hermit", true),
        ("wasm32-wasip1", true),
        ("wasm32-wasip2", true),
        ("wasm32-unknown-unknown", false),
        ("aarch64-unknown-none", false),
        ("x86_64-unknown-uefi", false),
        ("aarch64-nintendo-switch-freestanding", false),
        ("x86_64-fortanix-unknown-sgx", false),
        ("thumbv7em-none-eabihf", false),
    ] {
        assert_eq!(sdk_host(target(triple)).is_ok(), host, "{triple}");
    }
}

#[test]
fn providers_build_where_their_sources_say() {
    use Provider::{RustlsAwsLc as AwsLc, RustlsRing as Ring, S2nTls as S2n};
    for (triple, ring, aws_lc, s2n) in [
        ("x86_64-unknown-linux-gnu", true, true, true),
        ("aarch64-unknown-linux-gnu", true, true, true),
        ("x86_64-unknown-linux-musl", true, true, true),
        ("riscv64gc-unknown-linux-gnu", true, true, true),
        ("s390x-unknown-linux-gnu", true, true, true),
        ("aarch64_be-unknown-linux-gnu", true, false, false),
        ("m68k-unknown-linux-gnu", true, false, false),
        ("csky-unknown-linux-gnuabiv2", true, false, false),
        ("aarch64-apple-darwin", true, true, true),
        ("aarch64-apple-ios", true, true, false),
        ("armv7s-apple-ios", false, true, false),
        ("aarch64-linux-android", true, true, false),
        ("x86_64-pc-windows-msvc", true, true, false),
        ("x86_64-pc-windows-gnu", true, true, false),
        ("thumbv7a-uwp-windows-msvc", false, false, false),
        ("x86_64-unknown-freebsd", true, true, false),
        ("x86_64-unknown-dragonfly", true, false, false),
        ("x86_64-unknown-fuchsia", true, false, false),
        ("i586-unknown-linux-gnu", false, true, true),
        ("x86_64-unknown-haiku", true, false, false),
        ("x86_64-unknown-hermit", false, false, false),
        ("x86_64-pc-nto-qnx710", false, false, false),
        ("x86_64-linux-android", true, true, false),
        ("wasm32-wasip2", false, false, false),
    ] {
        let t = target(triple);
        assert_eq!(provider_support(Ring, t).is_ok(), ring, "{triple} ring: {:?}", provider_support(Ring, t));
        assert_eq!(provider_support(AwsLc, t).is_ok(), aws_lc, "{triple} aws-lc: {:?}", provider_support(AwsLc, t));
        assert_eq!(provider_support(S2n, t).is_ok(), s2n, "{triple} s2n: {:?}", provider_support(S2n, t));
    }
}

#[test]
fn native_roots_only_where_a_store_can_be_read() {
    for (triple, native, verifier) in [
        ("x86_64-unknown-linux-gnu", true, true),
        ("aarch64-apple-darwin", true, true),
        ("x86_64-pc-windows-msvc", true, true),
        ("x86_64-unknown-freebsd", true, true),
        ("aarch64-apple-ios", false, true),
        ("aarch64-apple-ios-sim", false, true),
        ("aarch64-apple-ios-macabi", false, true),
        ("aarch64-apple-tvos", false, true),
        ("aarch64-apple-watchos", false, true),
        ("aarch64-apple-visionos", false, true),
        ("aarch64-linux-android", false, false),
        ("armv7-linux-androideabi", false, false),
        ("x86_64-unknown-hermit", false, false),
        ("x86_64-unknown-fuchsia", false, false),
    ] {
        let t = target(triple);
        assert_eq!(roots_support(Roots::Native, t).is_ok(), native, "{triple} native");
        assert_eq!(roots_support(Roots::PlatformVerifier, t).is_ok(), verifier, "{triple} platform-verifier");
        assert!(roots_support(Roots::Webpki, t).is_ok(), "{triple} webpki");
    }
}
