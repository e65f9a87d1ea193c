//! OpenSSL's FIPS provider for machines whose OpenSSL ships none (Debian and Ubuntu): version
//! 3.0.8, the one NIST validated, built from the openssl-src crate's sources (fetched by cargo
//! at test time, never committed) and loaded into the system's OpenSSL 3.0 through
//! `OPENSSL_MODULES`.
//!
//! A helper crate does the build in its build script (`Configure enable-fips`, then only
//! `providers/fips.so`), from the committed lock
//! `tests/locks/openssl-fips-module.lock`; cargo keeps the result, so later runs reuse it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The helper's manifest: openssl-src 300.0.13 carries OpenSSL 3.0.8.
const MANIFEST: &str = r#"[package]
name = "openssl-fips-module"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[build-dependencies]
openssl-src = "=300.0.13"
"#;

/// Its build script: the sources copied out of the registry (Configure writes beside them),
/// configured with the FIPS provider, its generated headers made, and only that module built.
const BUILD: &str = r#"use std::process::Command;

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let tree = out.join("openssl");
    if !tree.join("providers/fips.so").is_file() {
        let _ = std::fs::remove_dir_all(&tree);
        let copied = Command::new("cp").arg("-R").arg(openssl_src::source_dir()).arg(&tree).status();
        assert!(copied.expect("run cp").success(), "copy OpenSSL's sources");
        let step = |program: &str, args: &[&str]| {
            let status = Command::new(program).args(args).current_dir(&tree).status();
            assert!(status.expect(program).success(), "{program} {args:?} failed in {}", tree.display());
        };
        step("perl", &["./Configure", "enable-fips", "no-tests"]);
        let jobs = format!("-j{}", std::env::var("NUM_JOBS").unwrap_or_else(|_| "2".to_owned()));
        step("make", &[jobs.as_str(), "build_generated"]);
        step("make", &[jobs.as_str(), "providers/fips.so"]);
    }
    println!("cargo:rustc-env=FIPS_MODULE={}", tree.join("providers/fips.so").display());
}
"#;

/// Its program: where the module is.
const MAIN: &str = r#"fn main() {
    println!("{}", env!("FIPS_MODULE"));
}
"#;

/// Builds the module once under `work_dir` (or finds it built) and returns the directory that
/// holds `fips.so`, for `OPENSSL_MODULES`. Panics, saying why, when the build fails: a test that
/// needs the module must not pass without it.
pub fn fips_module_dir(work_dir: &Path) -> PathBuf {
    let helper = work_dir.join("openssl-fips-module");
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/locks/openssl-fips-module.lock");
    let lock = std::fs::read_to_string(&lock).unwrap_or_else(|e| panic!("read {}: {e}", lock.display()));
    let files = [("Cargo.toml", MANIFEST), ("build.rs", BUILD), ("src/main.rs", MAIN), ("Cargo.lock", &lock)];
    crate::fs::write_changed(&helper, &files).expect("write the helper crate");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .current_dir(&helper)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_TARGET_DIR", helper.join("target"))
        .args(["run", "-q", "--locked"])
        .output()
        .expect("run cargo for the FIPS module");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    assert!(out.status.success(), "building OpenSSL's FIPS provider failed:\n{tail}");
    let module = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(module.is_file(), "no FIPS module at {}", module.display());
    module.parent().expect("the module's directory").to_path_buf()
}
