//! What a TLS stack compiles for a target, and which tools the build host needs for that: the
//! native libraries behind each provider and, per library, the route its build script takes
//! for the target and the tools that route runs. Nothing here can build for other targets, so
//! these facts, read from the crates' build scripts and documentation, are the proof; `tests`
//! pins them per target, checks the libraries each provider pulls in against the runtime's
//! dependency graph (`cargo tree --target`), and fails when Cargo.lock moves a crate off the
//! version read.
//!
//! Versions read: aws-lc-sys 0.47.0 (through aws-lc-rs 1.19.0, which depends on it with its
//! default features off, and rustls 0.23.48, whose `aws_lc_rs` feature turns on aws-lc-rs's
//! `prebuilt-nasm`), aws-lc-fips-sys 0.14.4, ring 0.17.14, s2n-tls-sys 0.3.47, openssl-sys
//! 0.9.118 (the `openssl` provider, on the system's OpenSSL).

use std::collections::BTreeSet;

use cfg_expr::targets::{Env, Family, TargetInfo};
use schemars::JsonSchema;
use serde::Serialize;

use crate::model::Provider;

mod policy;

pub use policy::{policy_notes, rule_extra_tools, RuleToolNeed, NOTE_CODE, NOTE_TOOLS};

/// A tool the build host runs to compile a native library for the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum BuildTool {
    /// A C compiler for the target (gcc, clang or MSVC's cl), which every native library needs.
    CCompiler,
    /// clang itself, where another C compiler will not do (or is second best).
    Clang,
    /// clang-cl, clang with MSVC's command line (Visual Studio's "C++ Clang Compiler for
    /// Windows").
    ClangCl,
    /// CMake.
    Cmake,
    /// The NASM assembler.
    Nasm,
    /// The Go toolchain.
    Go,
    /// Perl.
    Perl,
    /// libclang, which bindgen loads to generate Rust bindings at build time.
    Libclang,
    /// pkg-config, to find a library installed on the system.
    PkgConfig,
    /// A library's headers and libraries installed for the target (a `-dev`/`-devel` package).
    SystemHeaders,
    /// The Linux kernel's headers (`linux/`, `asm/`, `asm-generic/`) where the target's C
    /// compiler finds them.
    KernelHeaders,
}

impl BuildTool {
    /// What to call it in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            BuildTool::CCompiler => "a C compiler",
            BuildTool::Clang => "clang",
            BuildTool::ClangCl => "clang-cl",
            BuildTool::Cmake => "cmake",
            BuildTool::Nasm => "nasm",
            BuildTool::Go => "Go",
            BuildTool::Perl => "Perl",
            BuildTool::Libclang => "libclang",
            BuildTool::PkgConfig => "pkg-config",
            BuildTool::SystemHeaders => "system headers and libraries",
            BuildTool::KernelHeaders => "Linux kernel headers",
        }
    }
}

/// Whether a library's build fails without a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Necessity {
    /// The build stops without it.
    Required,
    /// The build uses it when it is installed and works without it.
    Optional,
}

/// One tool a library's build needs on a target, why, and where that is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ToolNeed {
    /// The tool.
    pub tool: BuildTool,
    /// Whether the build stops without it.
    pub necessity: Necessity,
    /// What the build does with it on this target.
    pub why: &'static str,
    /// Where that is read: the crate, its version and the file (lines, function).
    pub source: &'static str,
}

impl ToolNeed {
    fn required(tool: BuildTool, why: &'static str, source: &'static str) -> ToolNeed {
        ToolNeed { tool, necessity: Necessity::Required, why, source }
    }

    fn optional(tool: BuildTool, why: &'static str, source: &'static str) -> ToolNeed {
        ToolNeed { tool, necessity: Necessity::Optional, why, source }
    }
}

/// A crate whose build script compiles (or links) a native library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum NativeLibrary {
    /// aws-lc-sys: AWS-LC's libcrypto (rustls's aws-lc-rs provider, and s2n-tls's libcrypto).
    AwsLcSys,
    /// aws-lc-fips-sys: the FIPS build of AWS-LC's libcrypto.
    AwsLcFipsSys,
    /// ring's C and assembly.
    Ring,
    /// s2n-tls-sys: libs2n.
    S2nTlsSys,
    /// openssl-sys: the system's libssl and libcrypto (the `openssl` provider).
    OpensslSys,
}

impl NativeLibrary {
    /// Every library modelled.
    pub const ALL: [NativeLibrary; 5] = [
        NativeLibrary::AwsLcSys,
        NativeLibrary::AwsLcFipsSys,
        NativeLibrary::Ring,
        NativeLibrary::S2nTlsSys,
        NativeLibrary::OpensslSys,
    ];

    /// The crate's name.
    pub fn crate_name(self) -> &'static str {
        match self {
            NativeLibrary::AwsLcSys => "aws-lc-sys",
            NativeLibrary::AwsLcFipsSys => "aws-lc-fips-sys",
            NativeLibrary::Ring => "ring",
            NativeLibrary::S2nTlsSys => "s2n-tls-sys",
            NativeLibrary::OpensslSys => "openssl-sys",
        }
    }

    /// The version whose build script and documentation these facts are read from.
    pub fn version(self) -> &'static str {
        match self {
            NativeLibrary::AwsLcSys => "0.47.0",
            NativeLibrary::AwsLcFipsSys => "0.14.4",
            NativeLibrary::Ring => "0.17.14",
            NativeLibrary::S2nTlsSys => "0.3.47",
            NativeLibrary::OpensslSys => "0.9.118",
        }
    }

    /// What it compiles, in a few words.
    pub fn compiles(self) -> &'static str {
        match self {
            NativeLibrary::AwsLcSys => "AWS-LC's libcrypto",
            NativeLibrary::AwsLcFipsSys => "the FIPS module of AWS-LC",
            NativeLibrary::Ring => "ring's C and assembly",
            NativeLibrary::S2nTlsSys => "libs2n",
            NativeLibrary::OpensslSys => "nothing: it links the system's OpenSSL",
        }
    }
}

/// How a library's build script builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BuildRoute {
    /// The build script compiles the sources itself, through the cc crate.
    Cc,
    /// The build script runs CMake.
    Cmake,
    /// The build script links a library installed on the system.
    System,
}

impl BuildRoute {
    /// What to call it in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            BuildRoute::Cc => "with the cc crate",
            BuildRoute::Cmake => "with CMake",
            BuildRoute::System => "from the system",
        }
    }
}

/// How one native library builds for a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LibraryBuild {
    /// The crate.
    pub library: NativeLibrary,
    /// Its version these facts are read from.
    pub version: &'static str,
    /// How its build script builds it for the target.
    pub route: BuildRoute,
    /// The tools the build host needs for it, required ones first.
    pub needs: Vec<ToolNeed>,
}

impl LibraryBuild {
    fn new(library: NativeLibrary, route: BuildRoute, mut needs: Vec<ToolNeed>) -> LibraryBuild {
        needs.sort_by_key(|n| (n.necessity, n.tool));
        LibraryBuild { library, version: library.version(), route, needs }
    }
}

/// The native libraries `provider` compiles, in build order (a library before the ones that
/// link it). The match is exhaustive: a new provider must say what it builds here.
///
/// ```
/// use smithy_tls_codegen::model::Provider;
/// use smithy_tls_codegen::native_build::{libraries, NativeLibrary};
/// assert_eq!(libraries(Provider::S2nTls), [NativeLibrary::AwsLcSys, NativeLibrary::S2nTlsSys]);
/// ```
pub fn libraries(provider: Provider) -> &'static [NativeLibrary] {
    use NativeLibrary::{AwsLcFipsSys, AwsLcSys, OpensslSys, Ring, S2nTlsSys};
    match provider {
        Provider::RustlsAwsLc => &[AwsLcSys],
        Provider::RustlsRing => &[Ring],
        Provider::S2nTls => &[AwsLcSys, S2nTlsSys],
        // rustls's `fips` also enables its `aws_lc_rs` feature, and so aws-lc-rs's non-FIPS
        // aws-lc-sys (rustls Cargo.toml); s2n-tls-sys depends on aws-lc-rs with its default
        // features, which include aws-lc-sys (s2n-tls-sys Cargo.toml).
        Provider::RustlsAwsLcFips => &[AwsLcFipsSys, AwsLcSys],
        Provider::S2nTlsFips => &[AwsLcFipsSys, AwsLcSys, S2nTlsSys],
        Provider::OpenSsl => &[OpensslSys],
        Provider::RustlsCustom => &[],
    }
}

/// What `provider` compiles for `target` and the tools each library's build needs there; the
/// reason when the provider does not build for the target at all
/// ([`crate::platforms::provider_support`]).
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as t;
/// use smithy_tls_codegen::model::Provider;
/// use smithy_tls_codegen::native_build::{required_tools, stack_build, BuildTool};
///
/// let linux = stack_build(Provider::RustlsAwsLc, t("x86_64-unknown-linux-gnu").unwrap()).unwrap();
/// assert_eq!(required_tools(&linux).into_iter().collect::<Vec<_>>(), [BuildTool::CCompiler]);
/// // aws-lc-sys builds OpenHarmony targets with CMake only.
/// let ohos = stack_build(Provider::RustlsAwsLc, t("aarch64-unknown-linux-ohos").unwrap()).unwrap();
/// assert!(required_tools(&ohos).contains(&BuildTool::Cmake));
/// assert!(stack_build(Provider::S2nTls, t("x86_64-pc-windows-msvc").unwrap()).is_err());
/// ```
pub fn stack_build(provider: Provider, target: &TargetInfo) -> Result<Vec<LibraryBuild>, &'static str> {
    crate::platforms::provider_support(provider, target)?;
    Ok(libraries(provider).iter().map(|&library| library_build(library, target)).collect())
}

/// The tools the builds need, without the optional ones.
pub fn required_tools(builds: &[LibraryBuild]) -> BTreeSet<BuildTool> {
    builds.iter().flat_map(|b| &b.needs).filter(|n| n.necessity == Necessity::Required).map(|n| n.tool).collect()
}

/// How `library` builds for `target` (whether or not it builds there at all: that is
/// [`crate::platforms::provider_support`]'s to say).
pub fn library_build(library: NativeLibrary, target: &TargetInfo) -> LibraryBuild {
    match library {
        NativeLibrary::AwsLcSys => aws_lc_sys(&Facts::of(target)),
        NativeLibrary::AwsLcFipsSys => aws_lc_fips_sys(&Facts::of(target)),
        NativeLibrary::Ring => ring(&Facts::of(target)),
        NativeLibrary::S2nTlsSys => s2n_tls_sys(&Facts::of(target)),
        NativeLibrary::OpensslSys => openssl_sys(&Facts::of(target)),
    }
}

/// The parts of a target the build scripts look at.
struct Facts<'a> {
    triple: &'a str,
    os: &'a str,
    arch: &'a str,
    env: Option<&'a Env>,
    vendor_apple: bool,
    unix: bool,
}

impl<'a> Facts<'a> {
    fn of(target: &'a TargetInfo) -> Facts<'a> {
        Facts {
            triple: target.triple.as_str(),
            os: target.os.as_ref().map_or("none", |o| o.as_str()),
            arch: target.arch.as_str(),
            env: target.env.as_ref(),
            vendor_apple: target.vendor.as_ref().is_some_and(|v| v.as_str() == "apple"),
            unix: target.families.contains(&Family::unix),
        }
    }

    fn windows(&self) -> bool {
        self.os == "windows"
    }

    fn env_is(&self, env: &str) -> bool {
        self.env.is_some_and(|e| e.as_str() == env)
    }
}

/// aws-lc-sys, as aws-lc-rs builds it: default features off, so the universal pregenerated
/// bindings (never bindgen) and, through rustls, the `prebuilt-nasm` feature.
fn aws_lc_sys(t: &Facts) -> LibraryBuild {
    let ohos = t.env_is("ohos");
    let mut needs = Vec::new();
    if t.windows() && t.arch == "aarch64" && t.env_is("msvc") {
        needs.push(ToolNeed::required(
            BuildTool::ClangCl,
            "the C compiler must be clang-cl: MSVC's cl cannot assemble AWS-LC's ARM64 assembly (.S), so the \
             build script looks for clang-cl and compiles with it",
            "aws-lc-sys 0.47.0 builder/cc_builder.rs:1136-1152 (CcBuilder::build), builder/cmake_builder.rs:703-710",
        ));
    } else {
        needs.push(ToolNeed::required(
            BuildTool::CCompiler,
            "compiles AWS-LC's C sources and its pregenerated assembly; no Go, Perl or bindgen (universal \
             pregenerated bindings)",
            "aws-lc-sys 0.47.0 builder/main.rs:709-800 (get_builder), 887-926 (universal bindings without \
             `all-bindings`, which aws-lc-rs 1.19.0 leaves off), builder/cc_builder.rs:51-95",
        ));
    }
    if ohos {
        needs.push(ToolNeed::required(
            BuildTool::Cmake,
            "OpenHarmony targets are built with CMake only (the cc builder refuses them), with Go and Perl off",
            "aws-lc-sys 0.47.0 builder/cc_builder.rs:1125-1127, builder/cmake_builder.rs:187-203",
        ));
    }
    if t.windows() && t.arch == "x86_64" {
        needs.push(ToolNeed::optional(
            BuildTool::Nasm,
            "assembles AWS-LC's x86-64 assembly when on PATH; without it the crate's prebuilt NASM objects are \
             linked, which rustls's `aws_lc_rs` and the runtime's `s2n-tls` features allow (aws-lc-rs \
             `prebuilt-nasm`)",
            "aws-lc-sys 0.47.0 builder/main.rs:1155-1164 (use_prebuilt_nasm), builder/nasm_builder.rs:58-136, \
             README \"Use of prebuilt NASM objects\"; rustls 0.23.48 Cargo.toml",
        ));
    }
    if t.windows() && t.arch == "x86" {
        needs.push(ToolNeed::required(
            BuildTool::Nasm,
            "AWS-LC's Windows x86 assembly is NASM source and prebuilt objects exist for x86-64 only: without \
             nasm the build stops",
            "aws-lc-sys 0.47.0 builder/cc_builder/win_x86.rs, builder/nasm_builder.rs:137 (\"NASM command not \
             found\"), builder/main.rs:1155-1164",
        ));
    }
    if t.unix {
        needs.push(ToolNeed::optional(
            BuildTool::PkgConfig,
            "looks for an AWS-LC already installed (OPENSSL_DIR, then pkg-config); finding none, it builds the \
             bundled sources (AWS_LC_SYS_USE_SYSTEM=0 skips the search)",
            "aws-lc-sys 0.47.0 builder/system_detect.rs:1-45, 157, builder/main.rs:735-760",
        ));
    }
    LibraryBuild::new(NativeLibrary::AwsLcSys, if ohos { BuildRoute::Cmake } else { BuildRoute::Cc }, needs)
}

/// aws-lc-fips-sys's pregenerated bindings (aws-lc-fips-sys 0.14.4 builder/main.rs:893-902;
/// its README's "Pregenerated Bindings Availability").
const FIPS_PREGENERATED: &[&str] = &[
    "aarch64-apple-darwin",
    "aarch64-unknown-linux-gnu",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "x86_64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
];

/// aws-lc-fips-sys: always CMake with `-DFIPS=1`, which needs Go and Perl.
fn aws_lc_fips_sys(t: &Facts) -> LibraryBuild {
    let mut needs = vec![
        ToolNeed::required(
            BuildTool::CCompiler,
            "compiles the FIPS module's C sources and assembly",
            "aws-lc-fips-sys 0.14.4 builder/main.rs:762-764, builder/cmake_builder.rs",
        ),
        ToolNeed::required(
            BuildTool::Cmake,
            "the FIPS module is always built with CMake and -DFIPS=1",
            "aws-lc-fips-sys 0.14.4 builder/main.rs:762-764 (get_builder), builder/cmake_builder.rs:185-186",
        ),
        ToolNeed::required(
            BuildTool::Go,
            "the FIPS build runs Go programs (delocate, inject_hash) and stops without Go 1.17.13 or later",
            "aws-lc-fips-sys 0.14.4 aws-lc/CMakeLists.txt:1084-1087, aws-lc/cmake/go.cmake:1-20, \
             aws-lc/crypto/fipsmodule/CMakeLists.txt:445, 493",
        ),
        ToolNeed::required(
            BuildTool::Perl,
            "the FIPS build generates the module's assembly with Perl and stops without it",
            "aws-lc-fips-sys 0.14.4 aws-lc/CMakeLists.txt:1084-1087, 450-452",
        ),
    ];
    if !FIPS_PREGENERATED.contains(&t.triple) {
        needs.push(ToolNeed::required(
            BuildTool::Libclang,
            "bindings are pregenerated for Linux (glibc, musl) and macOS on x86_64 and aarch64 only: for this \
             target bindgen generates them at build time and loads libclang",
            "aws-lc-fips-sys 0.14.4 builder/main.rs:887-926, 1375-1397; README \"Pregenerated Bindings \
             Availability\"",
        ));
    }
    if t.os == "linux" && t.env_is("musl") {
        needs.push(ToolNeed::required(
            BuildTool::KernelHeaders,
            "the module's entropy source includes <linux/random.h>, which musl toolchains do not bring (Alpine: \
             linux-headers; Debian's musl-gcc: README, \"Building for musl\")",
            "aws-lc-fips-sys 0.14.4 aws-lc/crypto/rand_extra/urandom.c:33-39",
        ));
    }
    if t.windows() && matches!(t.arch, "x86" | "x86_64") {
        needs.push(ToolNeed::required(
            BuildTool::Nasm,
            "assembles the module's Windows x86 assembly: the FIPS crate has no prebuilt NASM objects",
            "aws-lc-fips-sys 0.14.4 builder/main.rs:144-146 (is_disable_prebuilt_nasm), README \"Prebuilt NASM \
             objects\"",
        ));
    }
    if t.unix {
        needs.push(ToolNeed::optional(
            BuildTool::PkgConfig,
            "looks for an AWS-LC FIPS module already installed (OPENSSL_DIR, then pkg-config); finding none, it \
             builds the bundled sources",
            "aws-lc-fips-sys 0.14.4 builder/system_detect.rs:1-45, README \"Automatic detection\"",
        ));
    }
    LibraryBuild::new(NativeLibrary::AwsLcFipsSys, BuildRoute::Cmake, needs)
}

/// ring, as published: pregenerated assembly and, for Windows x86 and x86-64, pregenerated NASM
/// objects, so no Perl and no NASM.
fn ring(t: &Facts) -> LibraryBuild {
    let need = if t.windows() && t.arch == "aarch64" && t.env_is("msvc") {
        ToolNeed::required(
            BuildTool::Clang,
            "ring compiles its C with clang on Windows ARM64, not with MSVC's cl",
            "ring 0.17.14 build.rs:560-566 (configure_cc)",
        )
    } else {
        ToolNeed::required(
            BuildTool::CCompiler,
            "compiles ring's C and its pregenerated assembly; the published crate needs no Perl, and no NASM on \
             Windows (it ships the NASM objects)",
            "ring 0.17.14 build.rs:340-361 (packaged builds use pregenerated/), 422-442 (build_c_code)",
        )
    };
    LibraryBuild::new(NativeLibrary::Ring, BuildRoute::Cc, vec![need])
}

/// s2n-tls-sys: libs2n through the cc crate, against aws-lc-sys's headers.
fn s2n_tls_sys(t: &Facts) -> LibraryBuild {
    let mut needs = vec![ToolNeed::required(
        BuildTool::CCompiler,
        "compiles libs2n's C (C11, POSIX headers); bindings are pregenerated",
        "s2n-tls-sys 0.3.47 build.rs:85-194 (build_vendored), 253-296 (builder)",
    )];
    if t.triple == "x86_64-unknown-linux-gnu" {
        needs.push(ToolNeed::optional(
            BuildTool::Clang,
            "preferred when on PATH and CC is unset: rust-lld, the default linker here since Rust 1.90, does \
             link-time optimisation only with clang's objects; with gcc libs2n builds without it",
            "s2n-tls-sys 0.3.47 build.rs:196-266 (clang_available_and_unpinned, rust_lld_is_default), README \
             \"Performance note\"",
        ));
    }
    LibraryBuild::new(NativeLibrary::S2nTlsSys, BuildRoute::Cc, needs)
}

/// openssl-sys without `vendored`: it finds and links the system's OpenSSL.
fn openssl_sys(t: &Facts) -> LibraryBuild {
    let mut needs = vec![
        ToolNeed::required(
            BuildTool::CCompiler,
            "preprocesses a header probe to read the installed OpenSSL's version and features",
            "openssl-sys 0.9.118 build/main.rs:312-330 (validate_headers, build/expando.c)",
        ),
        ToolNeed::required(
            BuildTool::SystemHeaders,
            "OpenSSL's headers and libraries for the target (libssl-dev, openssl-devel, Homebrew's openssl@3, \
             vcpkg or OPENSSL_DIR on Windows); the build stops without them",
            "openssl-sys 0.9.118 build/find_normal.rs:72-205 (find_openssl_dir)",
        ),
    ];
    let msvc = t.windows() && t.env_is("msvc");
    // Homebrew, pkgsrc and MacPorts paths on macOS, the base system on the BSDs, come first or
    // after pkg-config (find_normal.rs:75-105); MSVC uses vcpkg instead (find_normal.rs:216-220).
    let elsewhere = t.vendor_apple || matches!(t.os, "freebsd" | "openbsd" | "dragonfly");
    if !msvc {
        let why = "finds the installed OpenSSL (OPENSSL_DIR, or OPENSSL_LIB_DIR and OPENSSL_INCLUDE_DIR, instead)";
        let source = "openssl-sys 0.9.118 build/find_normal.rs:92-93, 210-240 (try_pkg_config)";
        needs.push(if elsewhere || t.windows() {
            ToolNeed::optional(BuildTool::PkgConfig, why, source)
        } else {
            ToolNeed::required(BuildTool::PkgConfig, why, source)
        });
    }
    LibraryBuild::new(NativeLibrary::OpensslSys, BuildRoute::System, needs)
}

#[cfg(test)]
mod tests;
