//! For each TLS provider: a fixture crate shaped like a generated client is rewritten with a
//! policy whose host rule picks that provider, compiled against the runtime crate, and its
//! installed client serves a request from a local TLS server. One more pass wires the
//! `platform-verifier` roots (the OS verifier; on Linux the native store, here SSL_CERT_FILE).

use std::process::Command;

use smithy_tls_e2e::support::{Alpn, TestCa, TestServer};
use smithy_tls_e2e::{
    copy_dir, copy_runtime_crate, pin_lock, repo_root, run, scratch_cargo, scratch_root, smithy_tls_binary,
};

fn policy(provider: &str, roots: &str) -> String {
    // The system OpenSSL serves Linux only (P013 on macOS, which has its own TLS stack).
    let host_os = match provider {
        "openssl" => r#"target_os = "linux""#,
        _ => r#"any(target_os = "linux", target_os = "macos")"#,
    };
    format!(
        r#"name = "probe-{provider}"

[runtime]
version = "0.1"
path = "smithy-default-tls"

[[rule]]
name = "wasm"
cfg = 'cfg(target_family = "wasm")'
provider = "none"

[[rule]]
name = "host"
cfg = 'cfg(all({host_os}, any(target_arch = "x86_64", target_arch = "aarch64"), target_endian = "little", target_pointer_width = "64"))'
provider = "{provider}"
roots = "{roots}"

[fallback]
name = "elsewhere"
provider = "none"
"#
    )
}

#[test]
fn each_provider_wires_builds_and_serves() {
    let tree = scratch_root().join("fixture-tree");
    let _ = std::fs::remove_dir_all(&tree);
    copy_dir(&repo_root().join("tests/fixtures/wired-client"), &tree.join("fixture-wired-client"), &["target"]);
    copy_runtime_crate(&tree);
    std::fs::write(
        tree.join("Cargo.toml"),
        "# Scratch tree made by tests/tests/fixture_providers.rs; not committed.\n[workspace]\nresolver = \"2\"\nmembers = [\"fixture-wired-client\"]\n",
    )
    .expect("workspace manifest");
    let smithy_tls = smithy_tls_binary();
    let ca = TestCa::new("fixture probe CA");
    let bundle = tree.join("ca.pem");
    std::fs::write(&bundle, &ca.pem).expect("CA bundle");
    let runtime = tokio::runtime::Runtime::new().expect("tokio");
    let server = runtime.block_on(TestServer::start(&ca.leaf(&["localhost"]), Alpn::H2AndHttp1));

    for (provider, roots) in [
        ("rustls-aws-lc", "native"),
        ("rustls-ring", "native"),
        ("s2n-tls", "native"),
        ("openssl", "native"),
        ("rustls-ring", "platform-verifier"),
    ] {
        let policy_path = tree.join(format!("policy-{provider}-{roots}.toml"));
        std::fs::write(&policy_path, policy(provider, roots)).expect("policy");
        run(Command::new(&smithy_tls).arg("apply").arg("--policy").arg(&policy_path).arg(&tree));
        let manifest = std::fs::read_to_string(tree.join("fixture-wired-client/Cargo.toml")).expect("manifest");
        assert!(manifest.contains(&format!("features = [\"{provider}\", \"{roots}\"]")), "{provider}: {manifest}");
        // Every policy adds the same dependency (the runtime crate, with other features): one lock.
        pin_lock(&tree, "fixture-wired-client");
        let out = run(scratch_cargo(&tree)
            .env("PROBE_URL", server.url("/"))
            .env("PROBE_PROVIDER", provider)
            .env("SSL_CERT_FILE", &bundle)
            // An AWS_CA_BUNDLE in the environment would replace the native store it trusts.
            .env_remove("AWS_CA_BUNDLE")
            .args(["test", "-q", "-p", "fixture-wired-client", "--test", "probe", "--", "--nocapture"]));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("PROBE provider={provider} ok")), "{provider}:\n{stdout}");
        println!("fixture wired with {provider} and {roots} roots: built and served a request");
    }
}
