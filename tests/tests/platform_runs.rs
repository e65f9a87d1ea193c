//! The default client of a preset's rule, run on a platform other than the host's: the
//! consumer (aws-config + aws-sdk-sts on the rewritten published crates, locked) is cross-built
//! for the target and run where this machine can run it (musl natively; aarch64 Linux under
//! qemu-user with Debian's arm64 multiarch libraries; windows-gnu under Wine) against local
//! servers on 127.0.0.1. Which presets run where is codegen's `suite_runs`. Each run
//! must show, from `TlsInfo`, that the rule's provider and roots served; refuse a server whose
//! CA it does not trust, typed and not retried; and go through a `CONNECT` proxy named by
//! `HTTPS_PROXY`. Each target's native libraries build once into a target dir of its own (the
//! FIPS module on musl, which needs the kernel's headers, into a second one); musl's OpenSSL is
//! built from openssl-src's sources, since Debian has none built for musl. On musl the S3
//! transfer manager's consumer runs too, through its own pool, which the rule's provider serves.
//!
//! The runs are `#[ignore]`d in the main suite and run by `scripts/test-platforms` (which
//! `.ci/run` runs after `scripts/test`), which installs their toolchains first (`rustup target
//! add`, apt's musl-tools, qemu-user, gcc-aarch64-linux-gnu, gcc-mingw-w64-x86-64, wine64,
//! libssl-dev:arm64); a missing one fails the test naming what to install.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use smithy_tls_codegen::model::Provider;
use smithy_tls_codegen::native_build::{self, BuildTool};
use smithy_tls_codegen::suite_runs::{self, Evidence, Runner, Trust, HOST};
use smithy_tls_codegen::transfer_manager::Transport;
use smithy_tls_e2e::support::proxy::{ConnectProxy, ProxyMode};
use smithy_tls_e2e::support::TestCa;
use smithy_tls_e2e::{
    consumer_command, host_twin, lock_for, pin_lock, prepare_sdk_tree, prepare_transfer_manager_tree, rule_stack, run,
    run_bounded, scratch_root, smithy_tls_binary, tail, transfer_manager_round_trip, BoundedRun, MockRun, PUBLISHED,
    PUBLISHED_REWRITTEN_LOCK,
};

/// A target this machine can run, and how.
struct Platform {
    triple: &'static str,
    /// The C compiler for the target's native libraries (`CC_<triple>`), and its archiver.
    cc: &'static str,
    ar: &'static str,
    /// The linker, where rustc's default (`cc`) does not link for the target.
    linker: Option<&'static str>,
    /// The program that runs the target's binaries here, with its arguments; none: natively.
    runner: &'static [&'static str],
    /// What provides the pieces, for the message when one is missing.
    install: &'static str,
    /// More of the build's environment: where the target's system libraries are found.
    env: &'static [(&'static str, &'static str)],
    /// Where the target's `asm/` kernel headers are, for a stack whose build needs the kernel's
    /// headers (the generator's facts say which) and a C compiler that does not look in
    /// /usr/include: the build then gives it a directory of the kernel's headers alone.
    kernel_asm_headers: Option<&'static str>,
    /// Whether the `openssl` provider links an OpenSSL built here from source (openssl-src's,
    /// statically), where the distribution has none built for the target, instead of the
    /// system's (found through `env`). Only for a target that runs natively: the helper that
    /// builds it runs here.
    openssl_from_source: bool,
}

const MUSL: Platform = Platform {
    triple: "x86_64-unknown-linux-musl",
    cc: "musl-gcc",
    ar: "ar",
    linker: None,
    runner: &[],
    install: "rustup target add x86_64-unknown-linux-musl; apt-get install musl-tools linux-libc-dev",
    env: &[],
    // musl-gcc searches musl's headers only (README, "Building for musl").
    kernel_asm_headers: Some("/usr/include/x86_64-linux-gnu/asm"),
    // Debian has no OpenSSL built for musl; Alpine, the musl distribution, ships 3.5.
    openssl_from_source: true,
};

const AARCH64_LINUX: Platform = Platform {
    triple: "aarch64-unknown-linux-gnu",
    cc: "aarch64-linux-gnu-gcc",
    ar: "aarch64-linux-gnu-ar",
    linker: Some("aarch64-linux-gnu-gcc"),
    // The target's glibc from Debian's arm64 multiarch packages (/lib/ld-linux-aarch64.so.1 and
    // /lib/aarch64-linux-gnu), which libssl-dev:arm64 brings: one glibc for the loader and the
    // libraries. (The cross toolchain's sysroot as qemu's -L prefix mixes its loader with the
    // multiarch libc where a system library is linked, and the program hangs.)
    runner: &["qemu-aarch64"],
    install: "rustup target add aarch64-unknown-linux-gnu; dpkg --add-architecture arm64; apt-get install \
              gcc-aarch64-linux-gnu qemu-user libssl-dev:arm64",
    // The system's OpenSSL for arm64 (Debian multiarch), for system-crypto's openssl-sys: its
    // pkg-config file, and its headers beside the cross compiler's own.
    env: &[
        ("PKG_CONFIG_ALLOW_CROSS", "1"),
        ("PKG_CONFIG_LIBDIR_aarch64_unknown_linux_gnu", "/usr/lib/aarch64-linux-gnu/pkgconfig"),
        ("CFLAGS_aarch64_unknown_linux_gnu", "-idirafter /usr/include/aarch64-linux-gnu -idirafter /usr/include"),
    ],
    kernel_asm_headers: None,
    openssl_from_source: false,
};

const WINDOWS_GNU: Platform = Platform {
    triple: "x86_64-pc-windows-gnu",
    cc: "x86_64-w64-mingw32-gcc",
    ar: "x86_64-w64-mingw32-ar",
    linker: Some("x86_64-w64-mingw32-gcc"),
    runner: &[WINE64],
    install: "rustup target add x86_64-pc-windows-gnu; apt-get install gcc-mingw-w64-x86-64 wine64",
    env: &[],
    kernel_asm_headers: None,
    openssl_from_source: false,
};

/// The crate that builds OpenSSL for a target with openssl-src and prints its install prefix.
const OPENSSL_HELPER_MANIFEST: &str = r#"[package]
name = "openssl-from-source"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[build-dependencies]
openssl-src = "=300.5.5"
"#;

/// Its build script: openssl-src's `Build`, which knows each target's configuration.
const OPENSSL_HELPER_BUILD: &str = r#"fn main() {
    let artifacts = openssl_src::Build::new().build();
    let prefix = artifacts.lib_dir().parent().expect("the install prefix");
    println!("cargo:rustc-env=OPENSSL_PREFIX={}", prefix.display());
}
"#;

/// Its program: the prefix, for `OPENSSL_DIR`.
const OPENSSL_HELPER_MAIN: &str = r#"fn main() {
    println!("{}", env!("OPENSSL_PREFIX"));
}
"#;

/// Wine's 64-bit loader (Debian's wine64 package).
const WINE64: &str = "/usr/lib/wine/wine64";

/// Debian's Wine 8.0 has no `ProcessPrng` in bcryptprimitives.dll, which Rust's standard
/// library calls on Windows; without it the program does not load (c0000135). This DLL, put
/// beside the program, exports it over `SystemFunction036` (RtlGenRandom). Test support only.
const PROCESS_PRNG_SHIM: &str = r#"#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
"#;

impl Platform {
    /// Fails, naming what to install, unless the target's standard library, C compiler and
    /// runner are here.
    fn check_tools(&self) {
        let installed = run(Command::new("rustup").args(["target", "list", "--installed"]));
        let has = |tool: &str| Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
        let missing: Vec<&str> = [
            (!String::from_utf8_lossy(&installed.stdout).lines().any(|t| t == self.triple)).then_some(self.triple),
            (!has(self.cc)).then_some(self.cc),
            self.runner.first().filter(|runner| !has(runner)).copied(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let loader = (self.runner.first() == Some(&"qemu-aarch64")
            && !Path::new("/lib/ld-linux-aarch64.so.1").exists())
        .then_some("/lib/ld-linux-aarch64.so.1");
        let missing: Vec<&str> = missing.into_iter().chain(loader).collect();
        assert!(
            missing.is_empty(),
            "{}: missing {missing:?}: `{}` (scripts/test-platforms does)",
            self.triple,
            self.install
        );
    }

    /// The environment variable suffix cargo and the cc crate use for the target.
    fn env_key(&self, upper: bool) -> String {
        let key = self.triple.replace('-', "_");
        if upper {
            key.to_uppercase()
        } else {
            key
        }
    }

    /// The target's target dir for builds that share its native libraries (`suffix`: those whose
    /// C flags differ).
    fn target_dir(&self, suffix: &str) -> PathBuf {
        scratch_root().join(format!("platform-target-{}{suffix}", self.triple))
    }

    /// cargo in `dir` building for the target into `target_dir` with the target's C compiler and
    /// archiver, the caller's RUSTFLAGS left out.
    fn cargo(&self, dir: &Path, target_dir: &Path) -> Command {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env("CARGO_TARGET_DIR", target_dir)
            .env(format!("CC_{}", self.env_key(false)), self.cc)
            .env(format!("AR_{}", self.env_key(false)), self.ar);
        cmd
    }

    /// Builds the consumer of `tree`, whose TLS stack is `provider`'s, for the target, into the
    /// target's one target dir (every preset's build reuses the registry crates another built
    /// with the same features: the native libraries among them), or, where the stack's build
    /// needs the kernel's headers, into another (their CFLAGS would rebuild every C library the
    /// next build shares); the binary, copied into `tree` with what it loads beside it, so that
    /// the next preset's build does not replace it.
    fn build(&self, tree: &Path, provider: Provider) -> PathBuf {
        let target = cfg_expr::targets::get_builtin_target_by_triple(self.triple).expect("a builtin target");
        let builds = native_build::stack_build(provider, target).unwrap_or_else(|why| panic!("{provider}: {why}"));
        let kernel_headers = native_build::required_tools(&builds).contains(&BuildTool::KernelHeaders);
        let suffix = if kernel_headers { "-kernel-headers" } else { "" };
        let target_dir = self.target_dir(suffix);
        let mut cmd = self.cargo(tree, &target_dir);
        cmd.env("CARGO_INCREMENTAL", "0")
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .args(["build", "-q", "--locked", "-p", "e2e-consumer", "--no-default-features"])
            .args(["--features", "report-connections", "--target", self.triple]);
        if let Some(linker) = self.linker {
            cmd.env(format!("CARGO_TARGET_{}_LINKER", self.env_key(true)), linker);
        }
        cmd.envs(self.env.iter().copied());
        if provider == Provider::OpenSsl && self.openssl_from_source {
            cmd.env("OPENSSL_DIR", self.openssl_from_source(&target_dir)).env("OPENSSL_STATIC", "1");
        }
        if kernel_headers {
            let asm =
                self.kernel_asm_headers.unwrap_or_else(|| panic!("{}: where are its kernel headers?", self.triple));
            let headers = self.kernel_headers(asm, &target_dir);
            cmd.env(format!("CFLAGS_{}", self.env_key(false)), format!("-isystem {}", headers.display()));
        }
        run(&mut cmd);
        let name = if self.triple.contains("windows") { "e2e-consumer.exe" } else { "e2e-consumer" };
        let bin = tree.join("bin");
        std::fs::create_dir_all(&bin).expect("create the binary's directory");
        std::fs::copy(target_dir.join(self.triple).join("debug").join(name), bin.join(name)).expect("copy the binary");
        if self.triple.contains("windows") {
            let source = bin.join("process-prng-shim.c");
            std::fs::write(&source, PROCESS_PRNG_SHIM).expect("write the shim's source");
            run(Command::new(self.cc)
                .args(["-shared", "-O2", "-o"])
                .arg(bin.join("bcryptprimitives.dll"))
                .arg(&source)
                .arg("-ladvapi32"));
        }
        bin.join(name)
    }

    /// OpenSSL built for the target from openssl-src's sources (its `Build`, which knows each
    /// target's configuration), once, into `target_dir`: its install prefix, for `OPENSSL_DIR`.
    fn openssl_from_source(&self, target_dir: &Path) -> PathBuf {
        let helper = scratch_root().join(format!("openssl-from-source-{}", self.triple));
        assert!(self.runner.is_empty(), "{}: the OpenSSL helper runs natively only", self.triple);
        // Unchanged files keep their times, so cargo does not run OpenSSL's build again.
        let files = [
            ("Cargo.toml", OPENSSL_HELPER_MANIFEST),
            ("build.rs", OPENSSL_HELPER_BUILD),
            ("src/main.rs", OPENSSL_HELPER_MAIN),
        ];
        smithy_tls_test_support::fs::write_changed(&helper, &files).expect("write the helper crate");
        pin_lock(&helper, "openssl-from-source");
        let mut cmd = self.cargo(&helper, target_dir);
        cmd.args(["run", "-q", "--locked", "--target", self.triple]);
        let prefix = PathBuf::from(String::from_utf8_lossy(&run(&mut cmd).stdout).trim());
        assert!(
            prefix.join("include/openssl/ssl.h").exists(),
            "{}: OpenSSL built into {}",
            self.triple,
            prefix.display()
        );
        prefix
    }

    /// A directory of the Linux kernel's headers alone (`linux/`, `asm-generic/` and the target's
    /// `asm/`, linked from linux-libc-dev's), for a C compiler that would otherwise mix in the
    /// host libc's headers or find none; made once in `target_dir`.
    fn kernel_headers(&self, asm: &str, target_dir: &Path) -> PathBuf {
        let dir = target_dir.join("kernel-headers");
        for (name, source) in
            [("linux", "/usr/include/linux"), ("asm-generic", "/usr/include/asm-generic"), ("asm", asm)]
        {
            assert!(Path::new(source).is_dir(), "{}: no {source}: `{}`", self.triple, self.install);
            let link = dir.join(name);
            if std::fs::read_link(&link).is_err() {
                std::fs::create_dir_all(&dir).expect("create the kernel headers' directory");
                std::os::unix::fs::symlink(source, &link).expect("link the kernel's headers");
            }
        }
        dir
    }

    /// The consumer's command (its environment as `consumer_command` gives it), run through the
    /// runner where there is one.
    fn command(&self, binary: &Path, mock: &MockRun, scratch: &Path, bundle: &Path, trust: Trust) -> Command {
        let mut native = consumer_command(binary, &mock.mock, scratch, bundle);
        if trust == Trust::CaBundle {
            let windows = self.runner.first() == Some(&WINE64);
            native.env("AWS_CA_BUNDLE", if windows { wine_path(bundle) } else { bundle.display().to_string() });
        }
        let Some((runner, args)) = self.runner.split_first() else { return native };
        let mut cmd = Command::new(runner);
        cmd.args(args).arg(binary).env_clear();
        for (key, value) in native.get_envs() {
            if let Some(value) = value {
                cmd.env(key, value);
            }
        }
        if *runner == WINE64 {
            let prefix = wine_prefix(scratch);
            if trust == Trust::RulesRoots {
                trust_in_wine(&prefix, bundle);
            }
            cmd.env("WINEPREFIX", &prefix).env("WINEDEBUG", "-all");
        }
        cmd
    }
}

/// The Wine prefix of a run's scratch directory (made by Wine on first use).
fn wine_prefix(scratch: &Path) -> PathBuf {
    scratch.join("wine-prefix")
}

/// Makes the CA in `bundle` trusted the Windows way: a certificate in the local machine's `Root`
/// store, which Wine keeps in its registry (`HKLM\Software\Microsoft\SystemCertificates\
/// Root\Certificates\<SHA-1>`, value `Blob`: the serialized certificate context, here one
/// `CERT_CERT_PROP_ID` entry holding the DER). CryptoAPI's chain engine, which the platform
/// verifier asks on Windows, then trusts it; `SSL_CERT_FILE` means nothing there.
fn trust_in_wine(prefix: &Path, bundle: &Path) {
    use smithy_tls_e2e::support::rustls::pki_types::{pem::PemObject, CertificateDer};
    let pem = std::fs::read(bundle).expect("read the CA bundle");
    let der = CertificateDer::from_pem_slice(&pem).expect("a CA certificate");
    let fingerprint = run(Command::new("openssl").args(["x509", "-noout", "-fingerprint", "-sha1", "-in"]).arg(bundle));
    let fingerprint = String::from_utf8_lossy(&fingerprint.stdout);
    let thumbprint: String =
        fingerprint.split('=').nth(1).expect("a fingerprint").trim().chars().filter(|c| *c != ':').collect();
    let mut blob = Vec::new();
    for word in [32u32, 1, u32::try_from(der.len()).expect("a small certificate")] {
        blob.extend(word.to_le_bytes());
    }
    blob.extend(der.as_ref());
    let hex: String = blob.iter().map(|b| format!("{b:02X}")).collect();
    let key = format!("HKLM\\Software\\Microsoft\\SystemCertificates\\Root\\Certificates\\{thumbprint}");
    run(Command::new(WINE64).env("WINEPREFIX", prefix).env("WINEDEBUG", "-all").args([
        "reg",
        "add",
        &key,
        "/v",
        "Blob",
        "/t",
        "REG_BINARY",
        "/d",
        &hex,
        "/f",
    ]));
}

/// `path` as a Windows program under Wine sees it (Wine's `Z:` drive is the Unix root).
fn wine_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// How long one run of the consumer may take (emulated, it makes a few requests).
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// Runs `cmd` to its end, or kills it and fails after [`RUN_LIMIT`].
fn output(cmd: &mut Command) -> BoundedRun {
    run_bounded(cmd, RUN_LIMIT)
}

/// The published crates rewritten with `preset`, with the committed lock.
fn rewritten_tree(preset: &str, tag: &str) -> PathBuf {
    let tree = prepare_sdk_tree(&scratch_root().join(tag), PUBLISHED, &["aws-sdk-sts"], true).root;
    run(Command::new(smithy_tls_binary()).args(["apply", "--preset", preset]).arg(&tree));
    pin_lock(&tree, &lock_for(PUBLISHED_REWRITTEN_LOCK, preset));
    tree
}

/// Builds `preset`'s consumer for `platform` and runs it three ways, trusting the test CA
/// through `trust`: a request served by the rule's provider and roots; a server it must not
/// trust; a `CONNECT` proxy from `HTTPS_PROXY`. The consumer's binary and its scratch directory,
/// for more runs.
fn runs_the_rule_trusting(platform: &Platform, preset: &str, trust: Trust) -> (PathBuf, PathBuf) {
    // One build and run at a time: the presets of a target share its target dir.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    platform.check_tools();
    let stack = rule_stack(preset, platform.triple);
    let provider = stack.provider().unwrap_or_else(|| panic!("{preset} has a provider for {}", platform.triple));
    let roots = match trust {
        Trust::RulesRoots => stack.roots().expect("a provider's rule has roots").name(),
        Trust::CaBundle => "-",
    };
    let case = format!("{preset} on {}", platform.triple);
    let tree = rewritten_tree(preset, &format!("platform-{}-{preset}", platform.triple));
    let binary = platform.build(&tree, provider);
    let scratch = tree.join("run");

    // Served by the rule's stack, as TlsInfo reports it.
    let served = MockRun::start("platform CA", scratch.join("ca.pem"));
    let run = output(&mut platform.command(&binary, &served, &scratch, &served.bundle, trust));
    assert!(run.ok, "{case}: the consumer failed:\n{}\n{}", run.stdout, tail(&run.stderr, 30));
    assert!(run.stdout.contains("STS account=123456789012"), "{case}:\n{}", run.stdout);
    let conns: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("CONN ")).collect();
    assert!(!conns.is_empty(), "{case}: no CONN line:\n{}", run.stdout);
    for line in &conns {
        assert!(
            line.contains(&format!("provider={} roots={roots} chosen_by=builder", provider.name())),
            "{case}: TlsInfo must report the rule's stack: {line}"
        );
        // A FIPS provider's connections run in the FIPS module's approved mode (TlsInfo::fips).
        assert!(line.contains(&format!(" fips={} ", provider.is_fips())), "{case}: FIPS mode: {line}");
    }
    println!("PLATFORM {case}: served by {} with roots {roots}: {}", provider.name(), conns[0]);

    // A server whose CA the trust store does not hold: refused for that reason, once.
    let untrusted = MockRun::start("platform CA", scratch.join("served-ca.pem"));
    let other = scratch.join("other-ca.pem");
    std::fs::write(&other, TestCa::new("another CA").pem).expect("write the other CA");
    let refused = output(&mut platform.command(&binary, &untrusted, &scratch, &other, trust));
    assert!(!refused.ok, "{case}: an untrusted server must be refused:\n{}", refused.stdout);
    let reason =
        format!("server certificate rejected by {}: issued by an untrusted certificate authority", provider.name());
    assert!(refused.stderr.contains(&reason), "{case}: the refusal says why:\n{}", tail(&refused.stderr, 10));
    assert_eq!(untrusted.mock.server.stats.accepted(), 1, "{case}: a refused certificate is not retried");
    println!("PLATFORM {case}: untrusted server refused, once: {reason}");

    // Through a CONNECT proxy named by HTTPS_PROXY: TLS end to end inside the tunnel.
    let proxy = served.runtime.block_on(ConnectProxy::start(ProxyMode::Open));
    let mut cmd = platform.command(&binary, &served, &scratch, &served.bundle, trust);
    let proxied = output(cmd.env("HTTPS_PROXY", proxy.url()));
    assert!(proxied.ok, "{case}: through the proxy:\n{}\n{}", proxied.stdout, tail(&proxied.stderr, 30));
    let seen = proxy.seen();
    let tunnel = seen.iter().find(|r| r.method == "CONNECT");
    let tunnel = tunnel.unwrap_or_else(|| panic!("{case}: the proxy saw no CONNECT: {seen:?}"));
    assert_eq!(tunnel.target, format!("localhost:{}", served.mock.addr().port()), "{case}");
    assert_eq!(tunnel.first_tunnel_byte, Some(0x16), "{case}: TLS inside the tunnel");
    println!("PLATFORM {case}: through the CONNECT proxy, {} request(s)", seen.len());
    (binary, scratch)
}

/// TLS 1.3's ChaCha20-Poly1305 suite and TLS 1.2's ECDHE-ECDSA one: the default client's rustls
/// offers both, the S3 transfer manager's pool neither (aws-smithy-http-client's
/// `restrict_ciphers` keeps AES-GCM and ECDHE-RSA's ChaCha20).
const CHACHA_THE_POOL_DROPS: [u16; 2] = [0x1303, 0xcca9];

/// ECDHE-RSA with ChaCha20-Poly1305 (TLS 1.2), which every rustls here offers, the pool's too.
const RUSTLS_CHACHA_TLS12: u16 = 0xcca8;

/// On musl, platform-default's rule is one the S3 transfer manager's own pool serves: its
/// consumer, cross-built for musl into the target's target dir and run natively, goes through
/// the pool, with the rule's rustls.
#[test]
#[ignore = "a platform run: scripts/test-platforms runs these (cross toolchains, qemu-user, Wine)"]
fn musl_runs_the_transfer_managers_own_pool_with_the_rules_rustls() {
    const PRESET: &str = "platform-default";
    let transport = Transport::of(rule_stack(PRESET, MUSL.triple));
    assert!(matches!(transport, Transport::Pool { .. }), "{PRESET} on {}: {transport:?}", MUSL.triple);
    MUSL.check_tools();
    let tree =
        prepare_transfer_manager_tree(&scratch_root().join(format!("platform-tm-{}", MUSL.triple)), Some(PRESET));
    let target_dir = MUSL.target_dir("");
    run(MUSL.cargo(&tree, &target_dir).env("CARGO_INCREMENTAL", "0").env("CARGO_PROFILE_DEV_DEBUG", "false").args([
        "build",
        "-q",
        "--locked",
        "-p",
        "tm-consumer",
        "--target",
        MUSL.triple,
    ]));
    let binary = target_dir.join(MUSL.triple).join("debug/tm-consumer");
    let seen = transfer_manager_round_trip(&binary, &tree.join("run"), 20 << 20, |cmd, _| {
        cmd.env_remove("AWS_CA_BUNDLE");
    });
    for suites in &seen {
        let rustls = suites.contains(&RUSTLS_CHACHA_TLS12);
        let dropped = suites.iter().any(|s| CHACHA_THE_POOL_DROPS.contains(s));
        assert!(rustls && !dropped, "not the pool's rustls: {suites:04x?}");
    }
    let _ = std::fs::remove_dir_all(&tree);
}

/// The platform of a target the suite runs (codegen's `suite_runs::CROSS_TARGETS`).
fn platform(triple: &str) -> &'static Platform {
    let platform = [&MUSL, &AARCH64_LINUX, &WINDOWS_GNU].into_iter().find(|p| p.triple == triple);
    platform.unwrap_or_else(|| panic!("no platform here runs {triple}"))
}

/// Runs `platform`'s rows of codegen's `suite_runs::CROSS_RUNS` (which `explain` cites and
/// README's table is checked against); each preset with its consumer's binary and scratch
/// directory (inside its tree, which the caller removes).
fn runs_on(platform: &Platform) -> Vec<(&'static str, PathBuf, PathBuf)> {
    suite_runs::CROSS_RUNS
        .iter()
        .filter(|run| run.target.triple == platform.triple)
        .map(|run| {
            let (binary, scratch) = runs_the_rule_trusting(platform, run.preset, run.trust);
            (run.preset, binary, scratch)
        })
        .collect()
}

/// Removes the trees of `runs`.
fn remove_trees(runs: &[(&str, PathBuf, PathBuf)]) {
    for (_, _, scratch) in runs {
        let _ = std::fs::remove_dir_all(scratch.parent().expect("the tree"));
    }
}

#[test]
#[ignore = "a platform run: scripts/test-platforms runs these (cross toolchains, qemu-user, Wine)"]
fn musl_runs_its_rules() {
    remove_trees(&runs_on(&MUSL));
}

#[test]
#[ignore = "a platform run: scripts/test-platforms runs these (cross toolchains, qemu-user, Wine)"]
fn aarch64_linux_runs_its_rules_under_qemu() {
    remove_trees(&runs_on(&AARCH64_LINUX));
}

/// portable's windows-gnu rule (rustls-ring, no NASM, no cmake) built with mingw and run under
/// Wine, trusting the test CA through `AWS_CA_BUNDLE`. Then its platform verifier, with the CA
/// put in Wine's `Root` store: CryptoAPI builds the chain to it (without the CA, the refusal is
/// an untrusted root instead), but Wine's SSL policy reports revocation as failed for a
/// certificate without revocation information (CERT_E_REVOCATION_FAILURE), where Windows
/// honours the verifier's "ignore unknown revocation" flags. So the platform verifier is shown
/// consulting the Windows store, not serving a request. (Wine 8 also refuses the verifier's own
/// chain engine for extra roots, which the runtime now creates only when there are extra roots.)
#[test]
#[ignore = "a platform run: scripts/test-platforms runs these (cross toolchains, qemu-user, Wine)"]
fn windows_gnu_runs_its_rules_under_wine() {
    let runs = runs_on(&WINDOWS_GNU);
    let (_, binary, scratch) = runs.iter().find(|(preset, _, _)| *preset == "portable").expect("portable's run");
    let (binary, scratch) = (binary.clone(), scratch.clone());
    let case = "portable on x86_64-pc-windows-gnu, platform verifier";
    let trusted = MockRun::start("Windows store CA", scratch.join("store-ca.pem"));
    let run = output(&mut WINDOWS_GNU.command(&binary, &trusted, &scratch, &trusted.bundle, Trust::RulesRoots));
    assert!(!run.ok, "{case}: Wine's revocation check fails (see above):\n{}", run.stdout);
    assert!(run.stderr.contains(&CERT_E_REVOCATION_FAILURE.to_string()), "{case}:\n{}", tail(&run.stderr, 5));
    let untrusted = MockRun::start("Windows store CA", scratch.join("unstored-ca.pem"));
    let other = scratch.join("stored-other-ca.pem");
    std::fs::write(&other, TestCa::new("another stored CA").pem).expect("write the other CA");
    let run = output(&mut WINDOWS_GNU.command(&binary, &untrusted, &scratch, &other, Trust::RulesRoots));
    assert!(!run.ok, "{case}: a CA outside the store is not trusted:\n{}", run.stdout);
    // Refused before any revocation check: the chain does not reach a trusted root.
    assert!(
        run.stderr.contains("invalid peer certificate") && !run.stderr.contains(&CERT_E_REVOCATION_FAILURE.to_string()),
        "{case}:\n{}",
        tail(&run.stderr, 5)
    );
    println!("PLATFORM {case}: the Windows Root store is consulted; Wine refuses unknown revocation");
    remove_trees(&runs);
}

/// CryptoAPI's `CERT_E_REVOCATION_FAILURE` (0x800B010E), as the platform verifier prints it.
const CERT_E_REVOCATION_FAILURE: i32 = 0x800B_010E_u32 as i32;

/// Each cross target codegen's `suite_runs` names is run here the way it says, and no two of
/// its runs on a target build the same stack.
#[test]
fn the_suite_s_cross_targets_run_the_way_explain_says() {
    for target in suite_runs::CROSS_TARGETS {
        let expected: &[&str] = match target.runner {
            Runner::Native => &[],
            Runner::QemuUser => &["qemu-aarch64"],
            Runner::Wine => &[WINE64],
            Runner::Host | Runner::Jco => panic!("{}: not a cross runner", target.triple),
        };
        assert_eq!(platform(target.triple).runner, expected, "{}", target.triple);
    }
    for (i, run) in suite_runs::CROSS_RUNS.iter().enumerate() {
        let stack = rule_stack(run.preset, run.target.triple);
        let again = suite_runs::CROSS_RUNS[..i]
            .iter()
            .find(|r| r.target == run.target && r.trust == run.trust && rule_stack(r.preset, r.target.triple) == stack);
        assert!(again.is_none(), "{} on {}: {again:?} runs the same stack", run.preset, run.target.triple);
    }
}

/// README's table of where each preset rule runs lists every rule of every preset once, with
/// its stack, and each label is true: a target it names is one the rule serves, "runs" names
/// only pairs the suite runs (above), "resolved" only targets whose graphs `published_sdk.rs`
/// resolves for every preset.
#[test]
fn readme_s_table_of_where_each_rule_runs_is_complete_and_true() {
    use smithy_tls_codegen::{policy, presets};
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).expect("README");
    let section = readme.split("## Where each preset rule runs").nth(1).expect("the section");
    let rows: Vec<Vec<&str>> = section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| preset"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let mut listed = std::collections::BTreeSet::new();
    // (preset, target) pairs README labels as run, in any form.
    let mut labelled_runs = std::collections::BTreeSet::new();
    for row in &rows {
        let [preset, rule, stack, status] = row.as_slice() else { panic!("a row of four cells: {row:?}") };
        assert!(listed.insert((*preset, *rule)), "{preset} {rule} is listed twice");
        let parsed = policy::parse_policy(presets::preset(preset).expect("a preset")).expect("parses");
        let found = parsed.policy.all_rules().find(|r| r.name == *rule);
        let found = found.unwrap_or_else(|| panic!("{preset} has no rule {rule}"));
        let spelled = match (found.stack.provider(), found.stack.roots()) {
            (Some(provider), Some(roots)) => format!("{}, {}", provider.name(), roots.name()),
            _ => found.stack.provider_name().to_owned(),
        };
        assert_eq!(*stack, spelled, "{preset} {rule}: the stack");
        for part in status.split("; ") {
            let (label, targets) = part.split_once(": ").unwrap_or((part, ""));
            for target in targets.split(", ").filter(|t| !t.is_empty()) {
                let info = cfg_expr::targets::get_builtin_target_by_triple(target).expect("a builtin target");
                assert_eq!(parsed.policy.rule_for(info).name, *rule, "{preset}: {target} is not {rule}'s");
                let evidence = suite_runs::evidence(found.stack, target);
                match runs_label(label, preset) {
                    Some((ran_as, trust, jco)) => {
                        labelled_runs.insert((*preset, target));
                        assert!(
                            matches!(evidence, Evidence::Runs { preset, trust: t, runner }
                            if preset == ran_as && t == trust && (runner == Runner::Jco) == jco),
                            "{preset} {rule} on {target}: README says `{label}`, the suite: {evidence:?}"
                        )
                    }
                    None if label == "resolved" => {
                        assert!(matches!(evidence, Evidence::Resolved { .. }), "{preset} {target}: {evidence:?}")
                    }
                    None => panic!("{preset} {rule}: unknown label `{label}`"),
                }
            }
            assert!(targets.is_empty() == (label == "source only"), "{preset} {rule}: `{part}`");
        }
    }
    for preset in presets::names() {
        let parsed = policy::parse_policy(presets::preset(preset).expect("a preset")).expect("parses");
        for rule in parsed.policy.all_rules() {
            assert!(listed.contains(&(preset, rule.name.as_str())), "README's table misses {preset} {}", rule.name);
        }
    }
    // Every run the suite makes is in the table, as run.
    for run in suite_runs::CROSS_RUNS {
        let pair = (run.preset, run.target.triple);
        assert!(labelled_runs.contains(&pair), "README does not label {} on {} as run", pair.0, pair.1);
    }
    let wasi = (suite_runs::WASI_RUN_PRESET, "wasm32-wasip2");
    assert!(labelled_runs.contains(&wasi), "README does not label {} on {} as run", wasi.0, wasi.1);
    // published_sdk.rs runs every preset on the host but those whose stack an earlier one's
    // run serves (host_twin): what the suite's evidence says of the host.
    let all_presets: Vec<&str> = presets::names().collect();
    for preset in &all_presets {
        let host_provider = rule_stack(preset, HOST).provider().is_some();
        assert!(
            !host_provider || labelled_runs.contains(&(*preset, HOST)),
            "README does not label {preset} as run on {HOST}"
        );
        let ran_as = host_twin(&all_presets, preset, HOST).unwrap_or(preset);
        let evidence = suite_runs::evidence(rule_stack(preset, HOST), HOST);
        assert!(matches!(evidence, Evidence::Runs { preset, .. } if preset == ran_as), "{preset}: {evidence:?}");
    }
    println!("README: {} rules labelled", rows.len());
}

/// A "runs" label of README's table: the preset whose run serves the rule's stack (this one, or
/// "as" another), where the run's trust comes from, and whether it runs under jco; `None` for
/// another label.
fn runs_label<'a>(label: &'a str, preset: &'a str) -> Option<(&'a str, Trust, bool)> {
    let rest = label.strip_prefix("runs")?;
    let (rest, jco) = rest.strip_suffix(" (jco)").map_or((rest, false), |rest| (rest, true));
    let (rest, trust) =
        rest.strip_suffix(", CA bundle").map_or((rest, Trust::RulesRoots), |rest| (rest, Trust::CaBundle));
    match rest.strip_prefix(" as ") {
        Some(twin) => Some((twin, trust, jco)),
        None if rest.is_empty() => Some((preset, trust, jco)),
        None => None,
    }
}
