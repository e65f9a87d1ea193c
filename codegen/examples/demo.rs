//! The main job on the embedded example: copies the example SDK tree shipped with the tests
//! (crates we wrote in the shapes of real generated ones, plus a 2023-era crate the tool must
//! refuse) to `target/smithy-tls-demo/sdk`, then runs what a pipeline runs:
//!
//! 1. `smithy-tls explain --target x86_64-unknown-linux-gnu` — why this host gets its stack;
//! 2. `smithy-tls diff` — what `apply` will change, as a unified diff;
//! 3. `smithy-tls apply` — the rewrite;
//! 4. `smithy-tls check` — the CI gate, now green: a second run changes nothing.
//!
//! ```text
//! cargo run -p smithy-tls-codegen --example demo [-- --preset portable]
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let preset: Vec<String> = std::env::args().skip(1).collect();
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = manifest_dir.join("tests/fixtures/trees");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.parent().unwrap_or(manifest_dir).join("target"));
    let sdk = target.join("smithy-tls-demo/sdk");
    let _ = std::fs::remove_dir_all(&sdk);
    if let Err(e) = smithy_tls_test_support::copy_tree(&example, &sdk, &[]) {
        eprintln!("cannot copy the example tree to {}: {e}", sdk.display());
        return ExitCode::FAILURE;
    }
    let sdk_arg = sdk.display().to_string();
    let steps: [(&str, Vec<&str>); 4] = [
        ("explain", vec!["explain", "--target", "x86_64-unknown-linux-gnu"]),
        ("diff", vec!["diff", &sdk_arg]),
        ("apply", vec!["apply", &sdk_arg]),
        ("check", vec!["check", &sdk_arg]),
    ];
    for (name, mut args) in steps {
        for extra in &preset {
            args.insert(1, extra);
        }
        println!("\n=== smithy-tls {}\n", args.join(" "));
        let code = smithy_tls_codegen::cli::run_args(std::iter::once("smithy-tls").chain(args));
        if code != ExitCode::SUCCESS {
            eprintln!("step `{name}` failed");
            return code;
        }
    }
    println!("\nThe rewritten example tree is in {}", sdk.display());
    ExitCode::SUCCESS
}
