//! The build model against its sources: the versions against the workspace's Cargo.lock, the
//! libraries of each provider against the runtime's dependency graph (`cargo tree`), the facts
//! the model rests on against the build scripts themselves (found through `cargo metadata`;
//! without cargo or the crates' sources these tests fail, they never pass unchecked), and the
//! verdicts for the targets SDK users build for, pinned.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cfg_expr::targets::get_builtin_target_by_triple;
use smithy_tls_test_support::cargo_tree;

use super::*;
use BuildTool::{CCompiler, Clang, ClangCl, Cmake, Go, KernelHeaders, Libclang, Nasm, Perl, PkgConfig, SystemHeaders};

fn target(triple: &str) -> &'static TargetInfo {
    get_builtin_target_by_triple(triple).unwrap_or_else(|| panic!("{triple} is not a builtin target"))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs cargo in the workspace, offline and locked; its stdout.
fn cargo(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace())
        .args(args)
        .args(["--offline", "--locked"])
        .output()
        .unwrap_or_else(|e| panic!("cargo {args:?}: {e}"));
    assert!(
        out.status.success(),
        "cargo {args:?} (offline: a locked package missing from the cache needs `cargo fetch --locked`, which \
         scripts/test runs first): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The tools `builds` require, and the ones they may use.
fn tools(builds: &[LibraryBuild]) -> (Vec<BuildTool>, Vec<BuildTool>) {
    let optional: BTreeSet<BuildTool> =
        builds.iter().flat_map(|b| &b.needs).filter(|n| n.necessity == Necessity::Optional).map(|n| n.tool).collect();
    (required_tools(builds).into_iter().collect(), optional.into_iter().collect())
}

#[test]
fn the_versions_read_are_the_locked_ones() {
    let lock = std::fs::read_to_string(workspace().join("Cargo.lock")).expect("the workspace's Cargo.lock");
    let lock: toml_edit::DocumentMut = lock.parse().expect("Cargo.lock is TOML");
    let packages = lock["package"].as_array_of_tables().expect("[[package]]");
    for library in NativeLibrary::ALL {
        let versions: Vec<&str> = packages
            .iter()
            .filter(|p| p.get("name").and_then(|n| n.as_str()) == Some(library.crate_name()))
            .filter_map(|p| p.get("version").and_then(|v| v.as_str()))
            .collect();
        match versions.as_slice() {
            [locked] => assert_eq!(
                *locked,
                library.version(),
                "Cargo.lock moved {} to {locked}: read its build script and documentation again, then update \
                 native_build (facts, sources, versions)",
                library.crate_name()
            ),
            [] => panic!("{} is not in Cargo.lock", library.crate_name()),
            _ => panic!("Cargo.lock has several versions of {}: {versions:?}", library.crate_name()),
        }
    }
}

/// The native libraries in the runtime's dependency graph with `provider` on `triple`.
fn libraries_in_graph(provider: Provider, triple: &str) -> BTreeSet<String> {
    let features = format!("{provider},webpki");
    let mut args = cargo_tree::tree_args("smithy-default-tls", triple).to_vec();
    args.extend(["--no-default-features", "--features", &features]);
    let natives: Vec<&str> = NativeLibrary::ALL.iter().map(|l| l.crate_name()).collect();
    cargo_tree::packages(&cargo(&args))
        .into_iter()
        .map(|p| p.name)
        .filter(|name| natives.contains(&name.as_str()))
        .collect()
}

#[test]
fn each_provider_compiles_the_libraries_its_dependency_graph_has() {
    let mut compared = 0;
    for triple in
        ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin", "x86_64-pc-windows-msvc", "aarch64-linux-android"]
    {
        for provider in Provider::ALL {
            // Where the provider does not build, the graph says nothing about the model.
            let Ok(builds) = stack_build(provider, target(triple)) else { continue };
            let modelled: BTreeSet<String> = builds.iter().map(|b| b.library.crate_name().to_owned()).collect();
            assert_eq!(libraries_in_graph(provider, triple), modelled, "{provider} on {triple}");
            compared += 1;
        }
    }
    assert!(compared >= 12, "only {compared} provider/target pairs compared");
}

#[test]
fn pinned_verdicts_for_the_targets_sdk_users_build_for() {
    use Provider::{RustlsAwsLc as AwsLc, RustlsAwsLcFips as Fips, RustlsRing as Ring, S2nTls as S2n};
    let cases: &[(&str, Provider, &[BuildTool], &[BuildTool])] = &[
        ("x86_64-unknown-linux-gnu", AwsLc, &[CCompiler], &[PkgConfig]),
        ("x86_64-unknown-linux-gnu", Ring, &[CCompiler], &[]),
        // s2n-tls-sys prefers clang there, for LTO with rust-lld.
        ("x86_64-unknown-linux-gnu", S2n, &[CCompiler], &[Clang, PkgConfig]),
        ("aarch64-unknown-linux-gnu", S2n, &[CCompiler], &[PkgConfig]),
        // The FIPS module: CMake, Go and Perl; bindings pregenerated for Linux x86_64/aarch64.
        ("x86_64-unknown-linux-gnu", Fips, &[CCompiler, Cmake, Go, Perl], &[PkgConfig]),
        // musl toolchains bring no kernel headers, which the FIPS module's entropy source includes.
        ("aarch64-unknown-linux-musl", Fips, &[CCompiler, Cmake, Go, Perl, KernelHeaders], &[PkgConfig]),
        ("aarch64-unknown-linux-gnu", Provider::S2nTlsFips, &[CCompiler, Cmake, Go, Perl], &[PkgConfig]),
        // Windows x86-64: NASM when installed, the prebuilt objects otherwise.
        ("x86_64-pc-windows-msvc", AwsLc, &[CCompiler], &[Nasm]),
        ("x86_64-pc-windows-gnu", AwsLc, &[CCompiler], &[Nasm]),
        // Windows x86: NASM, no prebuilt objects. ring ships its NASM objects.
        ("i686-pc-windows-msvc", AwsLc, &[CCompiler, Nasm], &[]),
        ("i686-pc-windows-gnu", AwsLc, &[CCompiler, Nasm], &[]),
        ("i686-pc-windows-msvc", Ring, &[CCompiler], &[]),
        ("x86_64-pc-windows-msvc", Ring, &[CCompiler], &[]),
        // Windows ARM64: clang-cl for aws-lc, clang for ring.
        ("aarch64-pc-windows-msvc", AwsLc, &[ClangCl], &[]),
        ("aarch64-pc-windows-msvc", Ring, &[Clang], &[]),
        // OpenHarmony: aws-lc-sys only through CMake; ring needs a C compiler.
        ("aarch64-unknown-linux-ohos", AwsLc, &[CCompiler, Cmake], &[PkgConfig]),
        ("x86_64-unknown-linux-ohos", S2n, &[CCompiler, Cmake], &[PkgConfig]),
        ("aarch64-unknown-linux-ohos", Ring, &[CCompiler], &[]),
        ("aarch64-apple-darwin", AwsLc, &[CCompiler], &[PkgConfig]),
        ("aarch64-apple-darwin", S2n, &[CCompiler], &[PkgConfig]),
        ("aarch64-apple-ios", AwsLc, &[CCompiler], &[PkgConfig]),
        ("aarch64-linux-android", AwsLc, &[CCompiler], &[PkgConfig]),
        ("riscv64gc-unknown-linux-gnu", AwsLc, &[CCompiler], &[PkgConfig]),
        // The system's OpenSSL: its headers, found by pkg-config on Linux; optional on FreeBSD,
        // whose base system has it at a known path.
        ("x86_64-unknown-linux-gnu", Provider::OpenSsl, &[CCompiler, PkgConfig, SystemHeaders], &[]),
        ("aarch64-unknown-linux-musl", Provider::OpenSsl, &[CCompiler, PkgConfig, SystemHeaders], &[]),
        ("x86_64-unknown-freebsd", Provider::OpenSsl, &[CCompiler, SystemHeaders], &[PkgConfig]),
    ];
    for &(triple, provider, required, optional) in cases {
        let builds =
            stack_build(provider, target(triple)).unwrap_or_else(|why| panic!("{provider} on {triple}: {why}"));
        assert_eq!(tools(&builds), (required.to_vec(), optional.to_vec()), "{provider} on {triple}: {builds:#?}");
    }
    // A provider that does not build for the target has no build.
    assert!(stack_build(S2n, target("x86_64-pc-windows-msvc")).is_err());
    assert!(stack_build(Fips, target("aarch64-apple-darwin")).is_err());
    // No system OpenSSL to honour on Apple systems, Windows or Android; LibreSSL on OpenBSD.
    for triple in ["aarch64-apple-darwin", "x86_64-pc-windows-msvc", "aarch64-linux-android", "x86_64-unknown-openbsd"]
    {
        assert!(stack_build(Provider::OpenSsl, target(triple)).is_err(), "{} on {triple}", Provider::OpenSsl);
    }
}

#[test]
fn routes_follow_the_build_scripts() {
    let route = |library, triple| library_build(library, target(triple)).route;
    assert_eq!(route(NativeLibrary::AwsLcSys, "x86_64-unknown-linux-gnu"), BuildRoute::Cc);
    assert_eq!(route(NativeLibrary::AwsLcSys, "aarch64-unknown-linux-ohos"), BuildRoute::Cmake);
    assert_eq!(route(NativeLibrary::AwsLcFipsSys, "x86_64-unknown-linux-gnu"), BuildRoute::Cmake);
    assert_eq!(route(NativeLibrary::Ring, "x86_64-pc-windows-msvc"), BuildRoute::Cc);
    assert_eq!(route(NativeLibrary::S2nTlsSys, "aarch64-apple-darwin"), BuildRoute::Cc);
    assert_eq!(route(NativeLibrary::OpensslSys, "x86_64-unknown-linux-gnu"), BuildRoute::System);
    // Without pregenerated bindings the FIPS build runs bindgen, and so needs libclang.
    let needs = |library, triple| tools(&[library_build(library, target(triple))]);
    assert!(needs(NativeLibrary::AwsLcFipsSys, "i686-unknown-linux-gnu").0.contains(&Libclang));
    assert!(!needs(NativeLibrary::AwsLcFipsSys, "x86_64-unknown-linux-musl").0.contains(&Libclang));
    // aws-lc-sys builds for musl without kernel headers (platform_runs.rs builds both there).
    assert!(!needs(NativeLibrary::AwsLcSys, "x86_64-unknown-linux-musl").0.contains(&KernelHeaders));
    // The system OpenSSL: headers and libraries, found by pkg-config on Linux, vcpkg on MSVC.
    assert_eq!(
        needs(NativeLibrary::OpensslSys, "x86_64-unknown-linux-gnu"),
        (vec![CCompiler, PkgConfig, SystemHeaders], vec![])
    );
    assert_eq!(needs(NativeLibrary::OpensslSys, "x86_64-pc-windows-msvc"), (vec![CCompiler, SystemHeaders], vec![]));
    assert_eq!(
        needs(NativeLibrary::OpensslSys, "aarch64-apple-darwin"),
        (vec![CCompiler, SystemHeaders], vec![PkgConfig])
    );
}

/// Every package's source directory, by name and by `name@version` (a name the graph holds in
/// two versions is only sure by the second), from `cargo metadata` with every feature (so the
/// FIPS crates are in the graph; it resolves, it does not build). Read once for every test.
fn sources() -> &'static BTreeMap<String, PathBuf> {
    static SOURCES: std::sync::OnceLock<BTreeMap<String, PathBuf>> = std::sync::OnceLock::new();
    SOURCES.get_or_init(read_sources)
}

fn read_sources() -> BTreeMap<String, PathBuf> {
    let metadata: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--format-version", "1", "--all-features"]))
            .expect("cargo metadata JSON");
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| {
            let manifest = Path::new(p["manifest_path"].as_str()?);
            let (name, version) = (p["name"].as_str()?, p["version"].as_str()?);
            let dir = manifest.parent()?.to_path_buf();
            Some([(name.to_owned(), dir.clone()), (format!("{name}@{version}"), dir)])
        })
        .flatten()
        .collect()
}

/// The text of `file` in `library`'s sources.
fn read(sources: &BTreeMap<String, PathBuf>, library: NativeLibrary, file: &str) -> String {
    let dir =
        sources.get(library.crate_name()).unwrap_or_else(|| panic!("{} not in cargo metadata", library.crate_name()));
    assert!(dir.ends_with(format!("{}-{}", library.crate_name(), library.version())), "{}", dir.display());
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()))
}

#[test]
fn aws_lc_sys_builds_with_cc_universal_bindings_and_prebuilt_nasm() {
    let sources = sources();
    let aws_lc = |file: &str| read(sources, NativeLibrary::AwsLcSys, file);
    // aws-lc-sys: the cc builder refuses OpenHarmony, so CMake builds it.
    assert!(aws_lc("builder/cc_builder.rs").contains(
        "if target_env() == \"ohos\" {\n            return Err(\"OpenHarmony targets must be built with CMake.\""
    ));
    // Universal bindings unless `all-bindings`, which aws-lc-rs leaves off: no bindgen.
    assert!(
        aws_lc("builder/main.rs").contains("} else if !is_fips_crate() {\n            emit_rustc_cfg(\"universal\");")
    );
    let aws_lc_rs = std::fs::read_to_string(sources["aws-lc-rs"].join("Cargo.toml")).expect("aws-lc-rs Cargo.toml");
    assert!(aws_lc_rs
        .contains("[dependencies.aws-lc-sys]\nversion = \"0.47.0\"\noptional = true\ndefault-features = false\n"));
    // Prebuilt NASM objects: x86-64 only, one per x86-64 NASM source; x86 has NASM sources.
    assert!(aws_lc("builder/main.rs").contains(
        "fn use_prebuilt_nasm() -> bool {\n    target_os() == \"windows\"\n        && target_arch() == \"x86_64\""
    ));
    let prebuilt: BTreeSet<String> = std::fs::read_dir(sources["aws-lc-sys"].join("builder/prebuilt-nasm"))
        .expect("prebuilt-nasm")
        .map(|e| e.unwrap().file_name().to_string_lossy().replace(".obj", ""))
        .collect();
    let asm_stems = |file: &str| -> BTreeSet<String> {
        aws_lc(file)
            .split('"')
            .filter(|s| s.ends_with(".asm"))
            .map(|s| Path::new(s).file_stem().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    let x86_64 = asm_stems("builder/cc_builder/win_x86_64.rs");
    assert!(!x86_64.is_empty() && x86_64.is_subset(&prebuilt), "{x86_64:?} vs {prebuilt:?}");
    let x86 = asm_stems("builder/cc_builder/win_x86.rs");
    assert!(!x86.is_empty() && x86.is_disjoint(&prebuilt), "{x86:?}");
    // rustls's aws-lc-rs provider turns the prebuilt objects on (the rustls 0.23 the
    // `rustls-aws-lc` feature uses; rustls 0.24's provider crate is the experimental feature's).
    let rustls_023 = sources.iter().find(|(key, _)| key.starts_with("rustls@0.23.")).expect("rustls 0.23").1;
    let rustls = std::fs::read_to_string(rustls_023.join("Cargo.toml")).expect("rustls Cargo.toml");
    assert!(rustls.contains("\"aws-lc-rs/prebuilt-nasm\""));
    // clang-cl on Windows ARM64.
    assert!(aws_lc("builder/cc_builder.rs").contains("requires clang-cl"));
}

#[test]
fn aws_lc_fips_sys_builds_with_cmake_go_and_perl() {
    let fips = |file: &str| read(sources(), NativeLibrary::AwsLcFipsSys, file);
    // aws-lc-fips-sys: CMake always; Go and Perl; pregenerated bindings for the six targets.
    assert!(
        fips("builder/main.rs").contains("    if is_fips_build() {\n        return cmake_builder_builder();\n    }")
    );
    assert!(fips("aws-lc/CMakeLists.txt")
        .contains("message(FATAL_ERROR \"Building AWS-LC for FIPS requires Go and Perl\")"));
    let main = fips("builder/main.rs");
    let arm = main
        .split("(is_fips_crate(), target.as_str()) {")
        .nth(1)
        .and_then(|s| s.split("(\n                    false,").next());
    let pregenerated: Vec<&str> = arm.expect("the bindings match").split('"').skip(1).step_by(2).collect();
    assert_eq!(pregenerated, FIPS_PREGENERATED);
}

#[test]
fn ring_builds_its_pregenerated_sources_with_cc() {
    let sources = sources();
    // ring: packaged builds use the pregenerated sources; a NASM object for each NASM source;
    // clang on Windows ARM64.
    let ring = read(sources, NativeLibrary::Ring, "build.rs");
    assert!(ring.contains("let generated_dir = if !is_git {\n        c_root_dir.join(PREGENERATED)"));
    assert!(ring.contains("if target.os == WINDOWS && target.arch == AARCH64 && !compiler.is_like_clang() {\n        let _ = c.compiler(\"clang\");"));
    let pregenerated: BTreeSet<String> = std::fs::read_dir(sources["ring"].join("pregenerated"))
        .expect("ring pregenerated/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let nasm: Vec<&String> = pregenerated.iter().filter(|f| f.ends_with(".asm")).collect();
    assert!(!nasm.is_empty());
    for asm in nasm {
        assert!(pregenerated.contains(&asm.replace(".asm", ".o")), "ring ships no object for {asm}");
    }
}

#[test]
fn s2n_tls_sys_builds_with_cc_only() {
    // s2n-tls-sys: cc only (no cmake build dependency), clang preferred on x86_64 Linux glibc.
    let s2n = read(sources(), NativeLibrary::S2nTlsSys, "build.rs");
    assert!(s2n.contains("build.compile(\"s2n-tls\");"));
    assert!(s2n.contains(
        "if std::env::var(\"TARGET\").as_deref() != Ok(\"x86_64-unknown-linux-gnu\") {\n        return false;"
    ));
    let manifest = read(sources(), NativeLibrary::S2nTlsSys, "Cargo.toml");
    assert!(!manifest.contains("[build-dependencies.cmake]") && !manifest.contains("[build-dependencies.bindgen]"));
}
