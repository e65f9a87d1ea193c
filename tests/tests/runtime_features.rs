//! Generated crates build `smithy-default-tls` with exactly one provider feature and one roots
//! feature per target. Every such combination must compile without a warning, since SDK trees
//! build it as a path dependency, where its warnings show in every user's build. A provider
//! without any roots feature (trust only the certificates the application adds) must build too.

use std::process::Command;

use smithy_tls_e2e::repo_root;

#[test]
fn every_provider_and_roots_combination_builds_without_warnings_including_no_roots() {
    for provider in ["rustls-aws-lc", "rustls-ring", "s2n-tls"] {
        for roots in [",native", ",webpki", ",platform-verifier", ""] {
            let features = format!("{provider}{roots}");
            let out = Command::new(env!("CARGO"))
                .current_dir(repo_root())
                .args(["check", "-p", "smithy-default-tls", "--lib", "--no-default-features", "--features", &features])
                .args(["--message-format", "short"])
                .output()
                .expect("run cargo check");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{features}: does not build:\n{stderr}");
            let warnings: Vec<&str> =
                stderr.lines().filter(|l| l.starts_with("runtime/src") && l.contains("warning")).collect();
            assert!(warnings.is_empty(), "{features}: warnings in smithy-default-tls:\n{}", warnings.join("\n"));
        }
    }
}
