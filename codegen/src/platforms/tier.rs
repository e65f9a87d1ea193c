//! rustc's support tier of each builtin target, as data: cfg-expr has no tier information, so
//! the lists are rustc's own (`metadata.tier` in `rustc +nightly -Z unstable-options --print
//! all-target-specs-json`, 1.97.0-nightly of 2026-05-19; `tests` compares them with that
//! command's output). Every target not listed is tier 3.

use cfg_expr::targets::TargetInfo;

/// How well rustc supports a target (<https://doc.rust-lang.org/rustc/platform-support.html>).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Tier 1: guaranteed to work (built and tested on every change).
    One,
    /// Tier 2: guaranteed to build.
    Two,
    /// Tier 3: supported in the code base, with no guarantee.
    Three,
}

impl Tier {
    /// The tier's number, as rustc's documentation and target specifications write it.
    pub fn number(self) -> u8 {
        match self {
            Tier::One => 1,
            Tier::Two => 2,
            Tier::Three => 3,
        }
    }
}

/// Tier-1 targets.
pub(crate) const TIER_1: &[&str] = &[
    "aarch64-apple-darwin",
    "aarch64-pc-windows-msvc",
    "aarch64-unknown-linux-gnu",
    "i686-pc-windows-msvc",
    "i686-unknown-linux-gnu",
    "x86_64-pc-windows-gnu",
    "x86_64-pc-windows-msvc",
    "x86_64-unknown-linux-gnu",
];
/// Tier-2 targets (with and without host tools).
pub(crate) const TIER_2: &[&str] = &[
    "aarch64-apple-ios",
    "aarch64-apple-ios-macabi",
    "aarch64-apple-ios-sim",
    "aarch64-apple-tvos",
    "aarch64-apple-tvos-sim",
    "aarch64-apple-visionos",
    "aarch64-apple-visionos-sim",
    "aarch64-apple-watchos",
    "aarch64-apple-watchos-sim",
    "aarch64-linux-android",
    "aarch64-pc-windows-gnullvm",
    "aarch64-unknown-fuchsia",
    "aarch64-unknown-linux-musl",
    "aarch64-unknown-linux-ohos",
    "aarch64-unknown-none",
    "aarch64-unknown-none-softfloat",
    "aarch64-unknown-uefi",
    "arm-linux-androideabi",
    "arm-unknown-linux-gnueabi",
    "arm-unknown-linux-gnueabihf",
    "arm-unknown-linux-musleabi",
    "arm-unknown-linux-musleabihf",
    "arm64ec-pc-windows-msvc",
    "armv5te-unknown-linux-gnueabi",
    "armv5te-unknown-linux-musleabi",
    "armv7-linux-androideabi",
    "armv7-unknown-linux-gnueabi",
    "armv7-unknown-linux-gnueabihf",
    "armv7-unknown-linux-musleabi",
    "armv7-unknown-linux-musleabihf",
    "armv7-unknown-linux-ohos",
    "armv7a-none-eabi",
    "armv7a-none-eabihf",
    "armv7r-none-eabi",
    "armv7r-none-eabihf",
    "armv8r-none-eabihf",
    "i586-unknown-linux-gnu",
    "i586-unknown-linux-musl",
    "i686-linux-android",
    "i686-pc-windows-gnu",
    "i686-pc-windows-gnullvm",
    "i686-unknown-freebsd",
    "i686-unknown-linux-musl",
    "i686-unknown-uefi",
    "loongarch64-unknown-linux-gnu",
    "loongarch64-unknown-linux-musl",
    "loongarch64-unknown-none",
    "loongarch64-unknown-none-softfloat",
    "nvptx64-nvidia-cuda",
    "powerpc-unknown-linux-gnu",
    "powerpc64-unknown-linux-gnu",
    "powerpc64-unknown-linux-musl",
    "powerpc64le-unknown-linux-gnu",
    "powerpc64le-unknown-linux-musl",
    "riscv32i-unknown-none-elf",
    "riscv32im-unknown-none-elf",
    "riscv32imac-unknown-none-elf",
    "riscv32imafc-unknown-none-elf",
    "riscv32imc-unknown-none-elf",
    "riscv64a23-unknown-linux-gnu",
    "riscv64gc-unknown-linux-gnu",
    "riscv64gc-unknown-linux-musl",
    "riscv64gc-unknown-none-elf",
    "riscv64imac-unknown-none-elf",
    "s390x-unknown-linux-gnu",
    "s390x-unknown-none-softfloat",
    "sparc64-unknown-linux-gnu",
    "sparcv9-sun-solaris",
    "thumbv6m-none-eabi",
    "thumbv7em-none-eabi",
    "thumbv7em-none-eabihf",
    "thumbv7m-none-eabi",
    "thumbv7neon-linux-androideabi",
    "thumbv7neon-unknown-linux-gnueabihf",
    "thumbv8m.base-none-eabi",
    "thumbv8m.main-none-eabi",
    "thumbv8m.main-none-eabihf",
    "wasm32-unknown-emscripten",
    "wasm32-unknown-unknown",
    "wasm32-wasip1",
    "wasm32-wasip1-threads",
    "wasm32-wasip2",
    "wasm32v1-none",
    "x86_64-apple-darwin",
    "x86_64-apple-ios",
    "x86_64-apple-ios-macabi",
    "x86_64-fortanix-unknown-sgx",
    "x86_64-linux-android",
    "x86_64-pc-solaris",
    "x86_64-pc-windows-gnullvm",
    "x86_64-unknown-freebsd",
    "x86_64-unknown-fuchsia",
    "x86_64-unknown-illumos",
    "x86_64-unknown-linux-gnuasan",
    "x86_64-unknown-linux-gnumsan",
    "x86_64-unknown-linux-gnutsan",
    "x86_64-unknown-linux-gnux32",
    "x86_64-unknown-linux-musl",
    "x86_64-unknown-linux-ohos",
    "x86_64-unknown-netbsd",
    "x86_64-unknown-none",
    "x86_64-unknown-redox",
    "x86_64-unknown-uefi",
];

/// rustc's support tier of `target`.
///
/// ```
/// use cfg_expr::targets::get_builtin_target_by_triple as t;
/// use smithy_tls_codegen::platforms::{tier, Tier};
/// assert_eq!(tier(t("x86_64-unknown-linux-gnu").unwrap()), Tier::One);
/// assert_eq!(tier(t("aarch64-unknown-linux-ohos").unwrap()), Tier::Two);
/// assert_eq!(tier(t("x86_64-unknown-dragonfly").unwrap()), Tier::Three);
/// ```
pub fn tier(target: &TargetInfo) -> Tier {
    let triple = target.triple.as_str();
    if TIER_1.contains(&triple) {
        Tier::One
    } else if TIER_2.contains(&triple) {
        Tier::Two
    } else {
        Tier::Three
    }
}
