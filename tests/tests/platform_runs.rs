//! The default client of a preset's rule, run on a platform other than the host's: the
//! consumer (aws-config + aws-sdk-sts on the rewritten published crates, locked) is cross-built
//! for the target and run where this machine can run it (musl natively; aarch64 Linux under
//! qemu-user with the cross toolchain's sysroot) against local servers on 127.0.0.1. Each run
//! must show, from `TlsInfo`, that the rule's provider and roots served; refuse a server whose
//! CA it does not trust, typed and not retried; and go through a `CONNECT` proxy named by
//! `HTTPS_PROXY`. Each target's native libraries build once into a target dir of its own.
//!
//! The toolchains come from `scripts/test` (`rustup target add`, apt's musl-tools, qemu-user,
//! gcc-aarch64-linux-gnu); a missing one fails the test naming what to install.

use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_e2e::support::proxy::{ConnectProxy, ProxyMode};
use smithy_tls_e2e::support::TestCa;
use smithy_tls_e2e::{
    consumer_command, pin_lock, prepare_sdk_tree, rule_stack, run, scratch_root, smithy_tls_binary, tail, MockRun,
    PUBLISHED, PUBLISHED_REWRITTEN_LOCK,
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
}

const MUSL: Platform = Platform {
    triple: "x86_64-unknown-linux-musl",
    cc: "musl-gcc",
    ar: "ar",
    linker: None,
    runner: &[],
    install: "rustup target add x86_64-unknown-linux-musl; apt-get install musl-tools",
};

const AARCH64_LINUX: Platform = Platform {
    triple: "aarch64-unknown-linux-gnu",
    cc: "aarch64-linux-gnu-gcc",
    ar: "aarch64-linux-gnu-ar",
    linker: Some("aarch64-linux-gnu-gcc"),
    runner: &["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
    install: "rustup target add aarch64-unknown-linux-gnu; apt-get install gcc-aarch64-linux-gnu qemu-user",
};

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
        assert!(missing.is_empty(), "{}: missing {missing:?}: `{}` (scripts/test does)", self.triple, self.install);
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

    /// Builds the consumer of `tree` for the target, into a target dir of its own per preset
    /// (its native libraries are built once); the binary.
    fn build(&self, tree: &Path, preset: &str) -> PathBuf {
        let target_dir = scratch_root().join(format!("platform-target-{}-{preset}", self.triple));
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(tree)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("CARGO_INCREMENTAL", "0")
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .env(format!("CC_{}", self.env_key(false)), self.cc)
            .env(format!("AR_{}", self.env_key(false)), self.ar)
            .args(["build", "-q", "--locked", "-p", "e2e-consumer", "--no-default-features"])
            .args(["--features", "report-connections", "--target", self.triple]);
        if let Some(linker) = self.linker {
            cmd.env(format!("CARGO_TARGET_{}_LINKER", self.env_key(true)), linker);
        }
        run(&mut cmd);
        target_dir.join(self.triple).join("debug/e2e-consumer")
    }

    /// The consumer's command (its environment as `consumer_command` gives it), run through the
    /// runner where there is one.
    fn command(&self, binary: &Path, mock: &MockRun, scratch: &Path, bundle: &Path) -> Command {
        let native = consumer_command(binary, &mock.mock, scratch, bundle);
        let Some((runner, args)) = self.runner.split_first() else { return native };
        let mut cmd = Command::new(runner);
        cmd.args(args).arg(binary).env_clear();
        for (key, value) in native.get_envs() {
            if let Some(value) = value {
                cmd.env(key, value);
            }
        }
        cmd
    }
}

/// What one run printed.
struct Output {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn output(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    Output {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The published crates rewritten with `preset`, with the committed lock.
fn rewritten_tree(preset: &str, tag: &str) -> PathBuf {
    let tree = prepare_sdk_tree(&scratch_root().join(tag), PUBLISHED, &["aws-sdk-sts"], true).root;
    run(Command::new(smithy_tls_binary()).args(["apply", "--preset", preset]).arg(&tree));
    pin_lock(&tree, PUBLISHED_REWRITTEN_LOCK);
    tree
}

/// Builds `preset`'s consumer for `platform` and runs it three ways: a request served by the
/// rule's provider and roots; a server it must not trust; a `CONNECT` proxy from `HTTPS_PROXY`.
fn runs_the_rule(platform: &Platform, preset: &str) {
    platform.check_tools();
    let stack = rule_stack(preset, platform.triple);
    let provider = stack.provider().unwrap_or_else(|| panic!("{preset} has a provider for {}", platform.triple));
    let roots = stack.roots().expect("a provider's rule has roots");
    let case = format!("{preset} on {}", platform.triple);
    let tree = rewritten_tree(preset, &format!("platform-{}-{preset}", platform.triple));
    let binary = platform.build(&tree, preset);
    let scratch = tree.join("run");

    // Served by the rule's stack, as TlsInfo reports it.
    let served = MockRun::start("platform CA", scratch.join("ca.pem"));
    let run = output(&mut platform.command(&binary, &served, &scratch, &served.bundle));
    assert!(run.ok, "{case}: the consumer failed:\n{}\n{}", run.stdout, tail(&run.stderr, 30));
    assert!(run.stdout.contains("STS account=123456789012"), "{case}:\n{}", run.stdout);
    let conns: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("CONN ")).collect();
    assert!(!conns.is_empty(), "{case}: no CONN line:\n{}", run.stdout);
    for line in &conns {
        assert!(
            line.contains(&format!("provider={} roots={} chosen_by=builder", provider.name(), roots.name())),
            "{case}: TlsInfo must report the rule's stack: {line}"
        );
    }
    println!("PLATFORM {case}: served by {} with {} roots: {}", provider.name(), roots.name(), conns[0]);

    // A server whose CA the trust store does not hold: refused for that reason, once.
    let untrusted = MockRun::start("platform CA", scratch.join("served-ca.pem"));
    let other = scratch.join("other-ca.pem");
    std::fs::write(&other, TestCa::new("another CA").pem).expect("write the other CA");
    let refused = output(&mut platform.command(&binary, &untrusted, &scratch, &other));
    assert!(!refused.ok, "{case}: an untrusted server must be refused:\n{}", refused.stdout);
    let reason =
        format!("server certificate rejected by {}: issued by an untrusted certificate authority", provider.name());
    assert!(refused.stderr.contains(&reason), "{case}: the refusal says why:\n{}", tail(&refused.stderr, 10));
    assert_eq!(untrusted.mock.server.stats.accepted(), 1, "{case}: a refused certificate is not retried");
    println!("PLATFORM {case}: untrusted server refused, once: {reason}");

    // Through a CONNECT proxy named by HTTPS_PROXY: TLS end to end inside the tunnel.
    let proxy = served.runtime.block_on(ConnectProxy::start(ProxyMode::Open));
    let mut cmd = platform.command(&binary, &served, &scratch, &served.bundle);
    let proxied = output(cmd.env("HTTPS_PROXY", proxy.url()));
    assert!(proxied.ok, "{case}: through the proxy:\n{}\n{}", proxied.stdout, tail(&proxied.stderr, 30));
    let seen = proxy.seen();
    let tunnel = seen.iter().find(|r| r.method == "CONNECT");
    let tunnel = tunnel.unwrap_or_else(|| panic!("{case}: the proxy saw no CONNECT: {seen:?}"));
    assert_eq!(tunnel.target, format!("localhost:{}", served.mock.addr().port()), "{case}");
    assert_eq!(tunnel.first_tunnel_byte, Some(0x16), "{case}: TLS inside the tunnel");
    println!("PLATFORM {case}: through the CONNECT proxy, {} request(s)", seen.len());
    let _ = std::fs::remove_dir_all(&tree);
}

#[test]
fn musl_runs_platform_default_s_fallback_rule() {
    runs_the_rule(&MUSL, "platform-default");
}

#[test]
fn musl_runs_portable_s_ring_rule() {
    runs_the_rule(&MUSL, "portable");
}

#[test]
fn aarch64_linux_runs_platform_default_s_s2n_tls_rule_under_qemu() {
    runs_the_rule(&AARCH64_LINUX, "platform-default");
}
