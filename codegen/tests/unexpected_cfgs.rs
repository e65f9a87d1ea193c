//! The emitted module compiles with warnings denied on the toolchains generated crates are built
//! with: the suite's `rustc`, the pinned nightly, and the workspace's minimum Rust version (all
//! three installed by scripts/test; a missing one fails the test). rustc warns (`unexpected_cfgs`) about target values it does not
//! know, and cfg-expr's target list, which policies are checked against, knows values some
//! releases do not (QNX 8's `target_os = "qnx"`): the module's allowance must cover them.
//!
//! Each preset's module is compiled as a crate of its own against stubs of the two crates it
//! calls, with and without the `default-https-client` feature (rustc evaluates every predicate
//! of a `cfg` either way). tests/tests/warnings.rs builds the real thing on a published crate.

use std::path::Path;
use std::process::Command;

use smithy_tls_codegen::model::Provider;
use smithy_tls_codegen::{compile, emit, explain, policy, presets};
use smithy_tls_test_support::toolchains;

/// The types of aws-smithy-runtime-api the module names.
const RUNTIME_API_STUB: &str = "pub mod client {
    pub mod behavior_version { pub struct BehaviorVersion; }
    pub mod http { pub struct SharedHttpClient; }
    pub mod runtime_plugin { pub struct SharedRuntimePlugin; }
}
";

/// The runtime's `cfg_if!` (re-exported from the cfg-if crate there): the same `if` / `else if`
/// / `else` chain, each branch's items kept where its cfg holds and no earlier one's does.
const CFG_IF_STUB: &str = "#[macro_export]
macro_rules! cfg_if {
    (if #[cfg($c:meta)] { $($items:item)* } $(else $($rest:tt)*)?) => {
        $crate::cfg_if! { @after [] if #[cfg($c)] { $($items)* } $(else $($rest)*)? }
    };
    (@after $seen:tt if #[cfg($c:meta)] { $($items:item)* } $(else $($rest:tt)*)?) => {
        $crate::cfg_if! { @keep $seen $c { $($items)* } }
        $($crate::cfg_if! { @push $seen $c $($rest)* })?
    };
    (@after [$($seen:meta),*] { $($items:item)* }) => {
        #[cfg(not(any($($seen),*)))]
        $crate::cfg_if! { @items $($items)* }
    };
    (@keep [$($seen:meta),*] $c:meta { $($items:item)* }) => {
        #[cfg(all($c, not(any($($seen),*))))]
        $crate::cfg_if! { @items $($items)* }
    };
    (@push [$($seen:meta),*] $c:meta $($rest:tt)*) => {
        $crate::cfg_if! { @after [$($seen,)* $c] $($rest)* }
    };
    (@items $($items:item)*) => { $($items)* };
}
";

/// The runtime's items the module calls, as the manifest builds the runtime for this host under
/// `preset`: only that stack's provider and roots variants exist (the runtime's enums are gated
/// by its features), so a module naming another provider where the host compiles fails here.
fn runtime_stub(preset: &str) -> String {
    let parsed = policy::parse_policy(presets::preset(preset).unwrap()).unwrap();
    let compiled = compile::compile(&parsed).unwrap();
    let stack = explain::explain(&compiled, &host()).and_then(|e| e.stack());
    let provider = stack.and_then(|s| s.provider()).map(Provider::runtime_variant).unwrap_or_default();
    let roots = stack.and_then(|s| s.runtime_roots_variant()).unwrap_or_default();
    format!(
        "use aws_smithy_runtime_api::client::{{behavior_version::BehaviorVersion, http::SharedHttpClient, runtime_plugin::SharedRuntimePlugin}};
pub enum TlsProvider {{ {provider} }}
pub enum TrustRoots {{ {roots} }}
pub fn shared_client(_: TlsProvider, _: TrustRoots) -> SharedHttpClient {{ SharedHttpClient }}
pub fn shared_client_for(_: TlsProvider, _: TrustRoots, _: impl Into<Option<BehaviorVersion>>) -> SharedHttpClient {{ SharedHttpClient }}
pub fn default_client_plugin(_: TlsProvider, _: TrustRoots) -> SharedRuntimePlugin {{ SharedRuntimePlugin }}
pub fn default_client_plugin_for(_: TlsProvider, _: TrustRoots, _: impl Into<Option<BehaviorVersion>>) -> SharedRuntimePlugin {{ SharedRuntimePlugin }}
{CFG_IF_STUB}"
    )
}

/// The host's target triple (the stubs and the module are compiled for it).
fn host() -> String {
    let out = Command::new(rustc()).arg("-vV").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().find_map(|l| l.strip_prefix("host: ")).expect("rustc -vV names the host").to_owned()
}

/// A toolchain to compile with: `rustc` with these leading arguments (`+nightly-2026-05-20`).
struct Toolchain {
    name: String,
    args: Vec<String>,
}

fn rustc() -> String {
    std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned())
}

fn version(toolchain: &Toolchain) -> Option<String> {
    let out = Command::new(rustc()).args(&toolchain.args).arg("-V").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The suite's rustc, the pinned nightly and the minimum Rust version's toolchain
/// (`smithy_tls_test_support::toolchains`): all required, scripts/test installs them; a missing
/// one fails the test with the command that installs it.
fn toolchains() -> Vec<Toolchain> {
    let mut found = Vec::new();
    for name in ["default".to_owned(), toolchains::nightly(), toolchains::msrv()] {
        let args = if name == "default" { Vec::new() } else { vec![format!("+{name}")] };
        let toolchain = Toolchain { name: name.clone(), args };
        match version(&toolchain) {
            Some(v) => {
                println!("toolchain {name}: {v}");
                found.push(toolchain);
            }
            None => panic!(
                "`{} +{name} -V` failed: install it (rustup toolchain install {name} --profile minimal; scripts/test does)",
                rustc()
            ),
        }
    }
    found
}

/// Compiles `module` as a library crate (metadata only) against the stubs with warnings denied;
/// `Err` carries rustc's diagnostics.
fn compile(toolchain: &Toolchain, dir: &Path, preset: &str, module: &str, feature_on: bool) -> Result<(), String> {
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("api.rs", RUNTIME_API_STUB);
    write("runtime.rs", &runtime_stub(preset));
    write("module.rs", module);
    let run = |args: &[&str]| {
        let out = Command::new(rustc())
            .args(&toolchain.args)
            .args(["--edition", "2021", "--crate-type", "lib", "--emit", "metadata", "-D", "warnings"])
            .arg("--out-dir")
            .arg(dir)
            .arg("-L")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    };
    let path = |name: &str| dir.join(name).display().to_string();
    let api = format!("aws_smithy_runtime_api={}", path("libaws_smithy_runtime_api.rmeta"));
    let runtime = format!("smithy_default_tls={}", path("libsmithy_default_tls.rmeta"));
    run(&["--crate-name", "aws_smithy_runtime_api", &path("api.rs")]).map_err(|e| format!("stub: {e}"))?;
    run(&["--crate-name", "smithy_default_tls", "--extern", &api, &path("runtime.rs")])
        .map_err(|e| format!("stub: {e}"))?;
    let module = path("module.rs");
    let mut args = vec!["--crate-name", "generated", "--check-cfg", "cfg(feature, values(\"default-https-client\"))"];
    args.extend(["--extern", &api, "--extern", &runtime, &module]);
    if feature_on {
        args.extend(["--cfg", "feature=\"default-https-client\""]);
    }
    run(&args)
}

fn module(preset: &str) -> String {
    let parsed = policy::parse_policy(presets::preset(preset).unwrap()).unwrap();
    emit::render_module(&compile::compile(&parsed).unwrap()).unwrap()
}

/// How many `unexpected_cfgs` diagnostics rustc printed.
fn unexpected(stderr: &str) -> usize {
    stderr.matches("unexpected `cfg` condition").count()
}

#[test]
fn every_preset_module_compiles_without_warnings_on_every_toolchain() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for toolchain in toolchains() {
        for preset in presets::names() {
            let module = module(preset);
            for feature_on in [true, false] {
                if let Err(stderr) = compile(&toolchain, dir.path(), preset, &module, feature_on) {
                    failures.push(format!(
                        "{preset} on {} (feature {}): {} unexpected_cfgs\n{stderr}",
                        toolchain.name,
                        if feature_on { "on" } else { "off" },
                        unexpected(&stderr)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The check can fail, and the allowance is what keeps it green: a value no rustc knows, added
/// to a module, is an error without the allowance and nothing with it.
#[test]
fn the_allowance_covers_the_whole_module_and_only_it() {
    let dir = tempfile::tempdir().unwrap();
    let probe = "\n#[cfg(target_os = \"smithy_tls_probe\")]\npub fn probe() {}\n\npub fn probed() -> bool {\n    cfg!(target_os = \"smithy_tls_probe\")\n}\n";
    let allowed = format!("{}{probe}", module("portable"));
    assert!(allowed.contains("\n#![allow(unexpected_cfgs)]\n"), "the module has no allowance");
    let toolchain = Toolchain { name: "default".to_owned(), args: Vec::new() };
    compile(&toolchain, dir.path(), "portable", &allowed, true).unwrap_or_else(|e| panic!("with the allowance:\n{e}"));
    let denied = allowed.replace("\n#![allow(unexpected_cfgs)]\n", "\n");
    let stderr = compile(&toolchain, dir.path(), "portable", &denied, true).expect_err("without the allowance");
    assert!(unexpected(&stderr) >= 2, "{stderr}");
    assert!(stderr.contains("smithy_tls_probe"), "{stderr}");
}
