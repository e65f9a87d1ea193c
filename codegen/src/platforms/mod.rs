//! What each builtin target can run, read from the sources of the libraries involved (no
//! target but the host can be built here, so these tables are the proof; `tests` pins the
//! standard-library table to rustc's own target specifications):
//!
//! - whether the target can host an SDK at all: it has `std` and sockets for tokio (mio);
//! - which TLS providers build for it (ring, aws-lc-sys, s2n-tls-sys);
//! - which trust roots work on it at run time (a native store that can be read; the platform
//!   verifier's backends).
//!
//! Versions read: ring 0.17.14 (getrandom 0.2.17), aws-lc-sys 0.47.0 (through aws-lc-rs 1.19.0),
//! s2n-tls-sys 0.3.47, mio 1.2.5, rustls-native-certs 0.8.5, openssl-probe 0.2.2,
//! rustls-platform-verifier 0.7.1; rustc target specs of 1.97.0-nightly (2026-05-19).

use cfg_expr::targets::{Endian, Family, TargetInfo};

use crate::model::facts::{Crypto, TlsLibrary};
use crate::model::{Provider, Roots};

mod tier;
mod wasi_http;

pub use tier::{tier, Tier};
use wasi_http::is_wasip2;
pub use wasi_http::{wasi_http_support, WasmRefusedFeature, APPLICATION_MANIFEST, HOST_IMPORTS, WASM_REFUSED_DEFAULTS};

/// Operating systems none of whose builtin targets has `std` (`metadata.std` false or unknown
/// in `rustc +nightly -Z unstable-options --print all-target-specs-json`).
const NO_STD_OS: &[&str] = &[
    "none",
    "uefi",
    "cuda",
    "amdhsa",
    "psp",
    "psx",
    "qurt",
    "lynxos178",
    "managarm",
    "aix",
    "l4re",
    "motor",
    "teeos",
    "xous",
    "zkvm",
];

/// Targets of operating systems that otherwise have `std`, whose own `metadata.std` is false or
/// unknown.
const NO_STD_TARGETS: &[&str] = &[
    "aarch64-nintendo-switch-freestanding",
    "aarch64-unknown-redox",
    "aarch64-uwp-windows-msvc",
    "armv6k-nintendo-3ds",
    "armv7-wrs-vxworks-eabihf",
    "i586-unknown-redox",
    "i686-pc-nto-qnx700",
    "i686-uwp-windows-gnu",
    "i686-uwp-windows-msvc",
    "powerpc-wrs-vxworks-spe",
    "thumbv7a-pc-windows-msvc",
    "wasm32-wali-linux-musl",
    "wasm64-unknown-unknown",
    "x86_64-unknown-linux-none",
    "xtensa-esp32-espidf",
    "xtensa-esp32s2-espidf",
    "xtensa-esp32s3-espidf",
];

/// The target's `target_os`; cfg-expr leaves it unset for bare-metal targets, which rustc
/// calls `none`.
fn os(target: &TargetInfo) -> &str {
    target.os.as_ref().map_or("none", |o| o.as_str())
}

fn arch(target: &TargetInfo) -> &str {
    target.arch.as_str()
}

fn apple(target: &TargetInfo) -> bool {
    matches!(os(target), "macos" | "ios" | "tvos" | "watchos" | "visionos")
}

/// Whether the target has the standard library (per rustc's target specifications).
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as t;
/// use smithy_tls_codegen::platforms::has_std;
/// assert!(has_std(t("x86_64-unknown-linux-gnu").unwrap()));
/// assert!(!has_std(t("x86_64-unknown-uefi").unwrap()));
/// assert!(!has_std(t("thumbv7em-none-eabihf").unwrap()));
/// ```
pub fn has_std(target: &TargetInfo) -> bool {
    !NO_STD_OS.contains(&os(target)) && !NO_STD_TARGETS.contains(&target.triple.as_str())
}

/// Whether an SDK can run on the target at all, and if not, why: it needs `std`, and sockets
/// through tokio's mio, which has backends for Unix, Windows, Hermit and WASI only
/// (mio `src/sys/mod.rs:53-75`). Targets that cannot host an SDK are listed, not served: a
/// policy need not (and cannot usefully) give them a stack.
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as t;
/// use smithy_tls_codegen::platforms::sdk_host;
/// assert!(sdk_host(t("aarch64-linux-android").unwrap()).is_ok());
/// assert!(sdk_host(t("wasm32-wasip2").unwrap()).is_ok());
/// assert!(sdk_host(t("aarch64-unknown-none").unwrap()).unwrap_err().contains("no standard library"));
/// assert!(sdk_host(t("wasm32-unknown-unknown").unwrap()).unwrap_err().contains("no sockets"));
/// ```
pub fn sdk_host(target: &TargetInfo) -> Result<(), &'static str> {
    if !has_std(target) {
        return Err("no standard library");
    }
    let unix = target.families.contains(&Family::unix);
    let windows = target.families.contains(&Family::windows);
    if unix || windows || matches!(os(target), "hermit" | "wasi") {
        Ok(())
    } else {
        Err("no sockets for tokio (mio has backends for Unix, Windows, Hermit and WASI only)")
    }
}

/// x32/ILP32 (a 64-bit architecture with 32-bit pointers) and arm64ec: neither library says it
/// supports them, and nothing here can check.
fn narrow_pointers(target: &TargetInfo) -> bool {
    let pointer_width = target.pointer_width;
    (matches!(arch(target), "x86_64" | "aarch64") && pointer_width == 32) || arch(target) == "arm64ec"
}

/// Whether ring 0.17 (rustls's `ring` provider) builds for the target, and if not, why.
fn ring_support(target: &TargetInfo) -> Result<(), &'static str> {
    // `SystemRandom` implements `SecureRandom` only on these (ring `src/rand.rs:124-162`), and
    // rustls's ring provider needs it.
    let random = matches!(
        os(target),
        "aix"
            | "android"
            | "dragonfly"
            | "freebsd"
            | "fuchsia"
            | "haiku"
            | "hermit"
            | "hurd"
            | "horizon"
            | "illumos"
            | "linux"
            | "netbsd"
            | "openbsd"
            | "redox"
            | "solaris"
            | "vita"
            | "windows"
    ) || apple(target)
        || (arch(target) == "wasm32" && os(target) == "wasi");
    if !random {
        return Err("ring has no system random number generator for this operating system (ring src/rand.rs)");
    }
    // Assembly is built for these (arch, os) pairs only (ring `build.rs:172-264`), but the Rust
    // side calls it for the arch whatever the os: elsewhere the link fails.
    let little = target.endian == Endian::little;
    let asm_arch = little && matches!(arch(target), "x86" | "x86_64" | "aarch64" | "arm");
    let linux_abi = matches!(
        os(target),
        "android"
            | "dragonfly"
            | "freebsd"
            | "fuchsia"
            | "haiku"
            | "hurd"
            | "illumos"
            | "netbsd"
            | "openbsd"
            | "linux"
            | "redox"
            | "solaris"
    );
    let has_asm = linux_abi
        || (arch(target) == "arm" && os(target) == "horizon")
        || (apple(target) && matches!(arch(target), "aarch64" | "x86_64"))
        || (os(target) == "windows" && matches!(arch(target), "x86" | "x86_64" | "aarch64"));
    if asm_arch && !has_asm {
        return Err("ring builds no assembly for this architecture on this operating system, which its code \
                    calls (ring build.rs ASM_TARGETS)");
    }
    if narrow_pointers(target) {
        return Err("ring's support for 32-bit pointers on a 64-bit architecture (and for arm64ec) is unverified");
    }
    // ring asserts SSE2 at compile time on x86 (src/cpu/intel.rs); the i586 targets lack it.
    if arch(target) == "x86" && target.triple.as_str().starts_with("i586") {
        return Err("ring requires SSE2 on x86 (src/cpu/intel.rs), which i586 targets do not have");
    }
    Ok(())
}

/// Whether aws-lc-sys 0.47 (rustls's `aws-lc-rs` provider, and s2n-tls's libcrypto) builds for
/// the target, and if not, why.
fn aws_lc_support(target: &TargetInfo) -> Result<(), &'static str> {
    // `include/openssl/target.h:39-91`: any other CPU is `#error "Unknown target CPU"`.
    let little = target.endian == Endian::little;
    let cpu = match arch(target) {
        "x86" | "x86_64" | "powerpc" | "powerpc64" | "s390x" | "sparc" | "sparc64" | "mips" | "mips64" | "mips32r6"
        | "mips64r6" | "riscv32" | "riscv64" | "loongarch64" => true,
        "aarch64" | "arm" => little,
        _ => false,
    };
    if !cpu {
        return Err("aws-lc has no support for this CPU (aws-lc include/openssl/target.h: \"Unknown target CPU\")");
    }
    // The operating systems aws-lc detects and supports (target.h:94-205, rand_extra/internal.h);
    // on others it falls back to guesses nobody tests.
    let known = matches!(
        os(target),
        "linux" | "android" | "windows" | "freebsd" | "openbsd" | "netbsd" | "illumos" | "solaris"
    ) || apple(target);
    if !known {
        return Err("aws-lc does not support this operating system (it detects Linux, Android, Apple, Windows, the \
                    BSDs but DragonFly, and illumos/Solaris)");
    }
    if narrow_pointers(target) {
        return Err("aws-lc's support for 32-bit pointers on a 64-bit architecture (and for arm64ec) is unverified");
    }
    // The cc builder has no source list for 32-bit ARM Windows (aws-lc-sys builder/cc_builder.rs).
    if os(target) == "windows" && arch(target) == "arm" {
        return Err("aws-lc-sys has no build for 32-bit ARM Windows");
    }
    Ok(())
}

/// Whether aws-lc-fips-sys 0.14 (the FIPS build of aws-lc-rs) builds for the target, and if
/// not, why. Its build is always CMake with `-DFIPS=1` (builder/main.rs:762-764,
/// cmake_builder.rs:185-186): a static, delocated module only on Linux and the BSDs on x86_64 and
/// aarch64 (main.rs:295-312; delocate knows x86_64, aarch64 and ppc64le only,
/// util/fipstools/delocate/delocate.go:55-60), a shared library elsewhere, which the application
/// has to ship and which needs the build host to run the target's binaries (MSVC's
/// capture_hash) or an ELF/Mach-O integrity hash (inject_hash.go:38,171: no MinGW). aws-lc-rs's
/// user guide lists Linux x86_64/aarch64 (glibc and musl), macOS and 64-bit Windows MSVC as
/// supported, and iOS, Android, 32-bit x86, windows-gnu and "other" architectures as not. Only
/// the static Linux builds — the ones with pregenerated bindings (main.rs:893-902), no shared
/// module to ship, and cross-compilable — are claimed here; macOS and Windows FIPS need a
/// native build host and a shipped shared library, which a generated SDK's dependency table
/// cannot arrange.
fn aws_lc_fips_support(target: &TargetInfo) -> Result<(), &'static str> {
    let env = target.env.as_ref().map_or("", |env| env.as_str());
    if !(crate::model::fips_module_builds(os(target), arch(target), env) && target.endian == Endian::little) {
        return Err("the FIPS build of aws-lc (aws-lc-fips-sys) is a static module only on Linux x86_64 and \
                    aarch64 (glibc or musl); elsewhere it needs a native build host and a shared library the \
                    application ships, or does not build at all");
    }
    if narrow_pointers(target) {
        return Err("aws-lc's FIPS module does not support 32-bit pointers on a 64-bit architecture");
    }
    Ok(())
}

/// Why the system's libssl is not served on `target`: that provider exists to put TLS under the
/// operating system's own OpenSSL (its crypto policy, its FIPS module), so it serves where the
/// system ships OpenSSL as its TLS library (the provider table's list) and nowhere it would mean
/// bringing an OpenSSL of one's own.
fn no_system_libssl(target: &TargetInfo) -> &'static str {
    match os(target) {
        "openbsd" | "dragonfly" => {
            "this system ships LibreSSL, not OpenSSL: the openssl provider serves systems whose \
                                    own TLS library is OpenSSL (use rustls-aws-lc or rustls-ring here)"
        }
        "android" => {
            "Android has no system OpenSSL for applications (BoringSSL is private to the platform): there is no \
                      system policy to honour"
        }
        _ if apple(target) || os(target) == "windows" => {
            "no system OpenSSL to honour here (Apple systems and Windows have their own TLS stacks): use rustls with \
             roots \"platform-verifier\" to follow the operating system"
        }
        _ => {
            "no system OpenSSL is known on this operating system: the openssl provider serves Linux, FreeBSD and \
              NetBSD"
        }
    }
}

/// Whether `provider` builds for `target`, and if not, why. Only meaningful for targets that
/// can host an SDK ([`sdk_host`]); wasm targets never get a provider (the runtime's tokio/hyper
/// stack has no sockets there, so SDKs on wasm bring their own client).
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as t;
/// use smithy_tls_codegen::model::Provider;
/// use smithy_tls_codegen::platforms::provider_support;
///
/// assert!(provider_support(Provider::RustlsAwsLc, t("x86_64-pc-windows-msvc").unwrap()).is_ok());
/// assert!(provider_support(Provider::S2nTls, t("x86_64-pc-windows-msvc").unwrap()).is_err());
/// // aws-lc refuses big-endian ARM; ring builds there.
/// assert!(provider_support(Provider::RustlsAwsLc, t("aarch64_be-unknown-linux-gnu").unwrap()).is_err());
/// assert!(provider_support(Provider::RustlsRing, t("aarch64_be-unknown-linux-gnu").unwrap()).is_ok());
/// ```
pub fn provider_support(provider: Provider, target: &TargetInfo) -> Result<(), &'static str> {
    if target.families.contains(&Family::wasm) {
        return Err(if is_wasip2(target) {
            "wasm32-wasip2 has no sockets for the runtime's tokio/hyper stack; use provider \"wasi-http\" (the host's HTTP)"
        } else {
            "wasm targets have no sockets for the runtime's tokio/hyper stack; use provider \"none\""
        });
    }
    let facts = provider.facts();
    // The FIPS module's targets first: they are the narrowest.
    if facts.crypto == Crypto::AwsLcFips {
        aws_lc_fips_support(target)?;
    }
    if !facts.only_on_os.is_empty() && !facts.only_on_os.contains(&os(target)) {
        return Err(outside_its_systems(facts.library, target));
    }
    match facts.crypto {
        Crypto::Ring => ring_support(target),
        // rustls's `fips` enables its `aws_lc_rs` too, and s2n-tls-sys depends on aws-lc-rs with
        // its default features: the non-FIPS aws-lc-sys builds beside the module.
        Crypto::AwsLc | Crypto::AwsLcFips => aws_lc_support(target),
        // The system's library is there on the systems the table lists; rustls alone is Rust, and
        // the application's provider decides the rest.
        Crypto::System | Crypto::Application => Ok(()),
    }
}

/// Why a library is not served off the operating systems the provider table lists for it.
fn outside_its_systems(library: TlsLibrary, target: &TargetInfo) -> &'static str {
    match library {
        // Its C library is POSIX (pthread.h, unistd.h), its libcrypto aws-lc.
        TlsLibrary::S2n => "s2n-tls builds only for Linux and macOS",
        TlsLibrary::SystemLibssl => no_system_libssl(target),
        TlsLibrary::Rustls => "the runtime does not build this provider for this operating system",
    }
}

/// Whether `roots` work on `target` at run time, and if not, why and what to use instead.
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as t;
/// use smithy_tls_codegen::model::Roots;
/// use smithy_tls_codegen::platforms::roots_support;
///
/// assert!(roots_support(Roots::PlatformVerifier, t("aarch64-apple-ios").unwrap()).is_ok());
/// assert!(roots_support(Roots::Native, t("aarch64-apple-ios").unwrap()).unwrap_err().contains("platform-verifier"));
/// assert!(roots_support(Roots::Native, t("aarch64-linux-android").unwrap()).unwrap_err().contains("webpki"));
/// assert!(roots_support(Roots::PlatformVerifier, t("aarch64-linux-android").unwrap()).unwrap_err().contains("JNI"));
/// assert!(roots_support(Roots::Native, t("x86_64-unknown-linux-gnu").unwrap()).is_ok());
/// ```
pub fn roots_support(roots: Roots, target: &TargetInfo) -> Result<(), &'static str> {
    let unix = target.families.contains(&Family::unix);
    let windows = target.families.contains(&Family::windows);
    match roots {
        Roots::Webpki => Ok(()),
        Roots::PlatformVerifier if os(target) == "android" => {
            Err("on Android the platform verifier needs the application's JNI context, which generated code cannot \
             provide; use roots \"webpki\" there")
        }
        // Backends: Apple (Security.framework), Windows, Android, other Unix through the native
        // store (rustls-platform-verifier src/verification/mod.rs:4-34).
        Roots::PlatformVerifier if !(unix || windows) => {
            Err("rustls-platform-verifier has no backend for this operating system; use roots \"webpki\"")
        }
        // Apple and Windows ask the OS; other Unix systems read the native store
        // (verification/others.rs), so they need one.
        Roots::PlatformVerifier if apple(target) || windows => Ok(()),
        Roots::PlatformVerifier => native_store(target).map_err(|_| {
            "rustls-platform-verifier reads the native trust store on this system, and none is readable here; use \
             roots \"webpki\""
        }),
        Roots::Native => native_store(target),
    }
}

/// Whether a native trust store can be read on the target (the SSL_CERT_FILE/SSL_CERT_DIR
/// variables aside, which an application cannot rely on its users to set).
fn native_store(target: &TargetInfo) -> Result<(), &'static str> {
    match os(target) {
        // rustls-native-certs reads the keychain on macOS only (src/lib.rs:31-44); every other
        // Apple OS falls to openssl-probe's /etc/ssl paths, which do not exist there.
        "ios" | "tvos" | "watchos" | "visionos" => Err(
            "no native trust store is readable here: the Apple store is in Security.framework, which \
             rustls-native-certs reads on macOS only (elsewhere it finds no certificates); use roots \
             \"platform-verifier\"",
        ),
        // openssl-probe 0.2.2 probes only Termux's path on Android (src/lib.rs:204-205), not
        // /system/etc/security/cacerts.
        "android" => Err(
            "no native trust store is readable here: rustls-native-certs (openssl-probe) does not look in \
             Android's /system/etc/security/cacerts and finds no certificates; use roots \"webpki\"",
        ),
        // openssl-probe's generic /etc/ssl paths (src/lib.rs:159-167, 210-221) hold no store
        // on these systems.
        "espidf" | "horizon" | "vita" | "emscripten" | "fuchsia" | "redox" => Err(
            "no native trust store is known at the paths rustls-native-certs probes on this system; use roots \"webpki\"",
        ),
        _ if target.families.contains(&Family::unix) || target.families.contains(&Family::windows) => Ok(()),
        _ => Err("rustls-native-certs has no backend for this operating system; use roots \"webpki\""),
    }
}

#[cfg(test)]
mod tests;
