//! What smithy-tls's own test suite does with a TLS stack on a target: builds it from the
//! rewritten published SDK crates and runs it there, only resolves its dependency graph, or
//! neither. `explain` cites it per target; the suite's platform runs
//! (tests/tests/platform_runs.rs) run [`CROSS_RUNS`], and README's table of where each preset
//! rule runs is checked against the same runs.

use schemars::JsonSchema;
use serde::Serialize;

use crate::model::Stack;
use crate::targets::NOTABLE_TARGETS;

/// The host the suite runs on, where it builds and runs every preset's consumer.
pub const HOST: &str = "x86_64-unknown-linux-gnu";

/// The preset whose rewrite the suite builds for `wasm32-wasip2` and runs under a wasi:http host.
pub const WASI_RUN_PRESET: &str = "platform-default";

/// How the suite runs a target's programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Runner {
    /// On the host itself (x86_64 Linux, glibc).
    Host,
    /// Natively on the host: a statically linked musl program.
    Native,
    /// Under qemu-user, with Debian's arm64 libraries.
    QemuUser,
    /// Under Wine.
    Wine,
    /// As a wasi:http component under jco.
    Jco,
}

impl Runner {
    /// How it runs, in a phrase.
    pub fn describe(self) -> &'static str {
        match self {
            Runner::Host => "on the suite's host",
            Runner::Native => "natively on the suite's host",
            Runner::QemuUser => "under qemu-user",
            Runner::Wine => "under Wine",
            Runner::Jco => "under jco, a wasi:http host",
        }
    }
}

/// Where a run's trust in its test CA comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// The rule's roots: the native store (`SSL_CERT_FILE`), or under Wine the Windows `Root`
    /// store the CA is put in.
    RulesRoots,
    /// `AWS_CA_BUNDLE`, which replaces the rule's roots (under Wine the platform verifier reaches
    /// the Windows store, but Wine refuses certificates without revocation information).
    CaBundle,
}

/// A target the suite runs other than its host, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossTarget {
    /// The target triple.
    pub triple: &'static str,
    /// How its programs run here.
    pub runner: Runner,
}

/// x86_64 Linux with musl, run natively.
pub const MUSL: CrossTarget = CrossTarget { triple: "x86_64-unknown-linux-musl", runner: Runner::Native };
/// aarch64 Linux with glibc, under qemu-user.
pub const AARCH64_LINUX: CrossTarget = CrossTarget { triple: "aarch64-unknown-linux-gnu", runner: Runner::QemuUser };
/// Windows with the GNU toolchain (mingw), under Wine.
pub const WINDOWS_GNU: CrossTarget = CrossTarget { triple: "x86_64-pc-windows-gnu", runner: Runner::Wine };

/// The targets the suite runs other than its host.
pub const CROSS_TARGETS: &[CrossTarget] = &[MUSL, AARCH64_LINUX, WINDOWS_GNU];

/// One preset's rule, cross-built and run on a target other than the host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossRun {
    /// The target.
    pub target: CrossTarget,
    /// The preset whose rewrite is built.
    pub preset: &'static str,
    /// Where the run's trust in its CA comes from.
    pub trust: Trust,
}

/// Every cross run. A rule whose stack another preset's run already builds and runs on that
/// target is left out: its binary would differ only in which rule chose the stack.
pub const CROSS_RUNS: &[CrossRun] = &[
    CrossRun { target: MUSL, preset: "platform-default", trust: Trust::RulesRoots },
    CrossRun { target: MUSL, preset: "portable", trust: Trust::RulesRoots },
    // The FIPS module built for musl, with the kernel's headers given to musl-gcc.
    CrossRun { target: MUSL, preset: "fips", trust: Trust::RulesRoots },
    // OpenSSL 3.5 built for musl from openssl-src's sources (Debian has none built for musl).
    CrossRun { target: MUSL, preset: "system-crypto", trust: Trust::RulesRoots },
    CrossRun { target: AARCH64_LINUX, preset: "platform-default", trust: Trust::RulesRoots },
    CrossRun { target: AARCH64_LINUX, preset: "portable", trust: Trust::RulesRoots },
    // The system's OpenSSL: Debian's arm64 libssl3 through multiarch.
    CrossRun { target: AARCH64_LINUX, preset: "system-crypto", trust: Trust::RulesRoots },
    CrossRun { target: AARCH64_LINUX, preset: "fips", trust: Trust::RulesRoots },
    CrossRun { target: WINDOWS_GNU, preset: "platform-default", trust: Trust::CaBundle },
    CrossRun { target: WINDOWS_GNU, preset: "portable", trust: Trust::CaBundle },
];

/// What the suite does with a stack on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Evidence {
    /// Built from the rewritten published crates and run there: a request served by the stack
    /// (as `TlsInfo` reports it), an untrusted server refused, a `CONNECT` proxy used.
    Runs {
        /// How the program runs.
        runner: Runner,
        /// Where its trust in the test CA comes from.
        trust: Trust,
        /// The preset whose rule the run builds (the first that gives this stack there).
        preset: &'static str,
    },
    /// Its dependency graph is resolved there by cargo, not built.
    Resolved {
        /// The preset whose rule gives this stack there.
        preset: &'static str,
    },
    /// Not built from the rewritten SDK crates there (no preset gives it that target, or the
    /// target is not one the suite resolves): what it compiles is read from the libraries'
    /// sources.
    SourceOnly,
}

impl Evidence {
    /// What the suite does with it, in a sentence.
    pub fn describe(self) -> String {
        match self {
            Evidence::Runs { runner, trust, preset } => {
                let trust = match trust {
                    Trust::RulesRoots => "",
                    Trust::CaBundle => ", trusting its CA through AWS_CA_BUNDLE instead of these roots",
                };
                let checks = match runner {
                    // The host makes the connections: no proxy of the component's own.
                    Runner::Jco => "S3 requests served over HTTPS, a server of another CA refused",
                    _ => "a request served, an untrusted server refused, a CONNECT proxy used",
                };
                format!("built and run {} (preset `{preset}`){trust}: {checks}", runner.describe())
            }
            Evidence::Resolved { preset } => {
                format!("dependency graph resolved by cargo (preset `{preset}`), not built")
            }
            Evidence::SourceOnly => {
                "not built from the rewritten SDK crates here: what it compiles is read from the libraries' sources"
                    .to_owned()
            }
        }
    }
}

/// What the suite does with `stack` on `triple`: whatever policy the stack comes from, the
/// suite's runs are per preset, so it counts where some preset's rule gives the same stack there.
///
/// ```
/// use smithy_tls_codegen::suite_runs::{evidence, Evidence, Runner};
/// use smithy_tls_codegen::{compile, explain, policy, presets};
/// let preset = presets::preset("platform-default").unwrap();
/// let compiled = compile::compile(&policy::parse_policy(preset).unwrap()).unwrap();
/// let arm = "aarch64-unknown-linux-gnu";
/// let s2n = explain::explain(&compiled, arm).unwrap().stack().unwrap();
/// let run = evidence(s2n, arm);
/// assert!(matches!(run, Evidence::Runs { runner: Runner::QemuUser, preset: "platform-default", .. }));
/// // No preset gives s2n-tls to RISC-V Linux.
/// assert_eq!(evidence(s2n, "riscv64gc-unknown-linux-gnu"), Evidence::SourceOnly);
/// ```
pub fn evidence(stack: Stack, triple: &str) -> Evidence {
    let presets: Vec<&'static str> = crate::presets::names().collect();
    let gives = |preset: &str| crate::presets::stack_for(preset, triple) == Some(stack);
    if triple == HOST {
        if let Some(&preset) = presets.iter().find(|p| gives(p)) {
            if stack.provider().is_some() {
                return Evidence::Runs { runner: Runner::Host, trust: Trust::RulesRoots, preset };
            }
        }
    }
    if stack == Stack::WasiHttp && triple == "wasm32-wasip2" && gives(WASI_RUN_PRESET) {
        return Evidence::Runs { runner: Runner::Jco, trust: Trust::RulesRoots, preset: WASI_RUN_PRESET };
    }
    if let Some(run) = CROSS_RUNS.iter().find(|run| run.target.triple == triple && gives(run.preset)) {
        return Evidence::Runs { runner: run.target.runner, trust: run.trust, preset: run.preset };
    }
    match presets.iter().find(|p| gives(p)) {
        Some(&preset) if NOTABLE_TARGETS.contains(&triple) => Evidence::Resolved { preset },
        _ => Evidence::SourceOnly,
    }
}
