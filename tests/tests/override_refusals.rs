//! Every build README says the application's override refuses, refused by real cargo: a tiny
//! application that depends on the runtime (no provider feature, no SDK crate), `cargo check`ed
//! with the cfg as README sets it. Each case asserts the message README promises, with the valid
//! choices it lists taken from the generator's provider model. (tests/build_script.rs in the
//! runtime runs the build script alone over every cell; this is the way an application meets it.)
//!
//! A check stops at the runtime's build script, which cargo runs after the runtime's
//! dependencies: each case checks those again under its own flags.

use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::model::{Provider, TlsOverride};
use smithy_tls_e2e::{host_triple, lean_scratch_build, repo_root, scratch_root, tail};

/// A target whose std scripts/test installs, where neither s2n-tls nor the FIPS module builds.
const WINDOWS: &str = "x86_64-pc-windows-gnu";

/// The application: a library crate depending on the runtime by path, with the workspace's lock
/// (pruned by cargo to what it uses; `--offline`, so nothing newer is resolved).
fn application(name: &str) -> PathBuf {
    let dir = scratch_root().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    let runtime = repo_root().join("runtime");
    let manifest = format!(
        "[package]\nname = \"override-refusals\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nsmithy-default-tls = {{ path = {runtime:?}, default-features = false }}\n\n[workspace]\n",
        runtime = runtime.display().to_string(),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
    std::fs::write(dir.join("src/lib.rs"), "").expect("lib.rs");
    std::fs::copy(repo_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock");
    dir
}

/// `cargo check --target target` of the application with `rustflags` in RUSTFLAGS (or, with
/// `None`, the rustflags of its `.cargo/config.toml`); the refusal's `error:` line.
fn refusal(app: &Path, target: &str, rustflags: Option<&str>) -> String {
    let mut cmd = Command::new(env!("CARGO"));
    lean_scratch_build(&mut cmd).current_dir(app).env_remove("CARGO_ENCODED_RUSTFLAGS").env_remove("RUSTFLAGS");
    if let Some(flags) = rustflags {
        cmd.env("RUSTFLAGS", flags);
    }
    let out = cmd.args(["check", "--offline", "--target", target]).output().expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{target} {rustflags:?}: the build must be refused:\n{}", tail(&stderr, 20));
    let line = stderr.lines().find(|l| l.starts_with("error: smithy-default-tls@"));
    line.unwrap_or_else(|| panic!("{target} {rustflags:?}: no build-script error:\n{}", tail(&stderr, 20))).to_owned()
}

/// The quoted names after `after` in `message`, up to the first `;` or `(`.
fn choices_after<'a>(message: &'a str, after: &str) -> Vec<&'a str> {
    let rest = &message[message.find(after).unwrap_or_else(|| panic!("{after:?} in {message}")) + after.len()..];
    let list = rest.split([';', '(']).next().unwrap_or_default();
    list.split('"').skip(1).step_by(2).collect()
}

#[test]
fn every_refusal_readme_lists_stops_a_real_build_with_its_message() {
    let host = host_triple();
    let app = application("override-refusals");

    // A value the runtime does not know: every valid one is listed, and the way back.
    let unknown = refusal(&app, &host, Some("--cfg smithy_tls=\"rustls-wolfssl\""));
    assert!(unknown.contains("\"rustls-wolfssl\" is not a value smithy-default-tls knows"), "{unknown}");
    let every: Vec<&str> = TlsOverride::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(choices_after(&unknown, "set one of"), every, "{unknown}");
    assert!(unknown.contains("or remove it to keep what each SDK crate chose"), "{unknown}");

    // Set twice: README's pitfall, a `[target.<triple>]` and a matching `[target.'cfg(..)']`
    // entry, which cargo joins. The message names both values and says where cargo looked.
    std::fs::create_dir_all(app.join(".cargo")).expect("mkdir .cargo");
    let joined = format!(
        "[target.{host}]\nrustflags = [\"--cfg\", 'smithy_tls=\"rustls-ring\"']\n\n\
         [target.'cfg(all())']\nrustflags = [\"--cfg\", 'smithy_tls=\"rustls-aws-lc\"']\n"
    );
    std::fs::write(app.join(".cargo/config.toml"), joined).expect("config");
    let twice = refusal(&app, &host, None);
    assert!(
        twice.contains("--cfg smithy_tls is set 2 times (\"rustls-aws-lc\" and \"rustls-ring\"): set it once"),
        "{twice}"
    );
    assert!(twice.contains("matching [target] rustflags of .cargo/config.toml joined together"), "{twice}");
    std::fs::remove_dir_all(app.join(".cargo")).expect("remove .cargo");

    // A FIPS value that no crate asked for, without its feature: the Cargo.toml line to add.
    let fips = refusal(&app, &host, Some("--cfg smithy_tls=\"rustls-aws-lc-fips\""));
    assert!(
        fips.contains("turn the runtime's `rustls-aws-lc-fips` feature on")
            && fips.contains(r#"smithy-default-tls = { version = "0.1", features = ["rustls-aws-lc-fips"] }"#),
        "{fips}"
    );

    // s2n-tls off Linux and macOS: the providers that build everywhere are offered instead.
    let s2n = refusal(&app, WINDOWS, Some("--cfg smithy_tls=\"s2n-tls\""));
    assert!(s2n.contains("s2n-tls builds for target_os \"linux\" and \"macos\" only, not \"windows\""), "{s2n}");
    let anywhere: Vec<&str> =
        Provider::ALL.iter().filter(|p| p.only_on_os().is_empty() && !p.is_fips()).map(|p| p.name()).collect();
    assert_eq!(choices_after(&s2n, "choose"), anywhere, "{s2n}");
    assert!(s2n.contains("[target.<triple>] rustflags"), "{s2n}");

    // A FIPS value off Linux x86_64/aarch64: refused for the target before its missing feature
    // is, offering the system's FIPS-validated OpenSSL instead.
    let fips_off = refusal(&app, WINDOWS, Some("--cfg smithy_tls=\"rustls-aws-lc-fips\""));
    assert!(
        fips_off
            .contains("is a static module only on Linux x86_64 and aarch64 (glibc or musl), not x86_64-windows-gnu")
            && fips_off.contains("smithy_tls=\"openssl\""),
        "{fips_off}"
    );
    println!("E2E override refusals (real cargo check): unknown value, set twice, FIPS without its feature, s2n-tls and FIPS off Linux");
    let _ = std::fs::remove_dir_all(&app);
}
