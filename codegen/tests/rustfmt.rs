//! The output is a fixed point of rustfmt, as SDK pipelines run it over generated code:
//!
//! - the emitted module, for every preset and for generated policies with long, nested
//!   predicates, under rustfmt's default style for editions 2018, 2021 and 2024 (never this
//!   repository's or this machine's rustfmt.toml: an empty one is passed explicitly);
//! - a whole tree: `apply`, then rustfmt over every Rust file (which reformats the hooks patched
//!   into files we do not own), then `check` is green and a second `apply` changes nothing.
//!
//! rustfmt is part of the stable toolchain this project builds with; without it these tests
//! fail (they never pass with nothing checked).

use std::path::{Path, PathBuf};
use std::process::Command;

use smithy_tls_codegen::policy::PolicySource;
use smithy_tls_codegen::{compile, emit, policy, presets};

const EDITIONS: [&str; 3] = ["2018", "2021", "2024"];

/// An empty rustfmt.toml, so only rustfmt's defaults apply.
fn empty_config(dir: &Path) -> PathBuf {
    let config = dir.join("rustfmt.toml");
    std::fs::write(&config, "").unwrap();
    config
}

/// rustfmt's output for `text` under `edition`'s default style. Through stdin, so `mod`
/// declarations are not followed (fixture crates declare modules they do not ship).
fn rustfmt(text: &str, edition: &str, scratch: &Path) -> String {
    use std::io::Write;
    let mut child = Command::new("rustfmt")
        .args(["--edition", edition, "--emit", "stdout", "--config-path"])
        .arg(empty_config(scratch))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rustfmt is part of the stable toolchain; install it with `rustup component add rustfmt`");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "rustfmt failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn module_for(source: PolicySource) -> String {
    let text = source.text.clone();
    let parsed = policy::parse_policy(source).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let compiled = compile::compile(&parsed).unwrap_or_else(|d| panic!("{d}\n{text}"));
    emit::render_module(&compiled).unwrap()
}

fn assert_fixed_point(what: &str, module: &str, scratch: &Path) {
    for edition in EDITIONS {
        let formatted = rustfmt(module, edition, scratch);
        assert!(
            formatted == module,
            "{what}: rustfmt (edition {edition}) changes the emitted module:\n{}",
            similar::TextDiff::from_lines(module, &formatted).unified_diff().header("emitted", "rustfmt")
        );
    }
}

#[test]
fn the_module_of_every_preset_is_a_rustfmt_fixed_point() {
    let scratch = tempfile::tempdir().unwrap();
    for name in presets::names() {
        let module = module_for(presets::preset(name).unwrap());
        assert_fixed_point(name, &module, scratch.path());
    }
}

#[test]
fn the_module_of_a_policy_with_the_empty_store_fallback_is_a_rustfmt_fixed_point() {
    let scratch = tempfile::tempdir().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policies/empty-store.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_fixed_point("empty-store.toml", &module_for(PolicySource { path, text }), scratch.path());
}

/// Operating systems that builtin targets have and aws-lc supports, so generated rules stay
/// reachable and buildable.
const OSES: [&str; 13] = [
    "linux", "macos", "ios", "windows", "android", "freebsd", "netbsd", "openbsd", "illumos", "solaris", "tvos",
    "watchos", "visionos",
];

/// The targets that can host an SDK but where aws-lc does not build.
const NO_AWS_LC: &str = "cfg(any(target_os = \"nto\", target_os = \"qnx\", target_os = \"nuttx\", target_os = \"vxworks\", \
    target_os = \"rtems\", target_os = \"espidf\", target_os = \"cygwin\", target_os = \"hermit\", target_os = \"vita\", \
    target_arch = \"arm64ec\", all(target_os = \"windows\", target_arch = \"arm\"), all(any(target_arch = \"x86_64\", \
    target_arch = \"aarch64\"), target_pointer_width = \"32\"), target_os = \"dragonfly\", target_os = \"fuchsia\", \
    target_os = \"haiku\", target_os = \"hurd\", target_os = \"redox\", target_arch = \"m68k\", target_arch = \"csky\", \
    target_arch = \"hexagon\", all(any(target_arch = \"aarch64\", target_arch = \"arm\"), target_endian = \"big\")))";

/// A deterministic policy of `rules` rules over disjoint sets of operating systems, with
/// predicates of every shape the emitter lays out: single keys, `any` lists short and long,
/// `all` with nested `not(any(..))`, and `none` rules feeding the feature-off gate.
fn generated_policy(seed: u64) -> String {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut text = format!("name = \"generated-{seed}\"\n\n[runtime]\nversion = \"0.1\"\n");
    text.push_str("\n[[rule]]\nname = \"wasm\"\ncfg = 'cfg(target_family = \"wasm\")'\nprovider = \"none\"\n");
    // No default client where aws-lc does not build (as the presets' `no-tls-provider` and
    // `no-aws-lc` rules say), so every generated rule can use it.
    text.push_str(&format!("\n[[rule]]\nname = \"no-aws-lc\"\ncfg = '{NO_AWS_LC}'\nprovider = \"none\"\n"));
    let mut oses: Vec<&str> = OSES.to_vec();
    let mut rule = 0;
    while !oses.is_empty() {
        let take = (1 + next(4) as usize).min(oses.len());
        let group: Vec<&str> = oses.drain(..take).collect();
        let any = group.iter().map(|os| format!("target_os = \"{os}\"")).collect::<Vec<_>>().join(", ");
        let cfg = match (next(3), group.len()) {
            (_, 1) if next(2) == 0 => format!("target_os = \"{}\"", group[0]),
            (0, _) => format!("any({any})"),
            (1, _) => format!("all(any({any}), not(any(target_env = \"musl\", target_arch = \"x86\")))"),
            _ => format!("all(any({any}), target_pointer_width = \"64\", not(target_env = \"sgx\"))"),
        };
        let stack = if next(4) == 0 {
            "provider = \"none\"".to_owned()
        } else {
            "provider = \"rustls-aws-lc\"\nroots = \"webpki\"".to_owned()
        };
        text.push_str(&format!("\n[[rule]]\nname = \"r{rule}\"\ncfg = 'cfg({cfg})'\n{stack}\n"));
        rule += 1;
    }
    text.push_str("\n[fallback]\nname = \"rest\"\nprovider = \"rustls-aws-lc\"\nroots = \"webpki\"\n");
    text
}

#[test]
fn modules_with_long_nested_predicates_are_rustfmt_fixed_points() {
    let scratch = tempfile::tempdir().unwrap();
    for seed in 0..24 {
        let source = generated_policy(seed);
        let module = module_for(PolicySource { path: format!("generated-{seed}.toml").into(), text: source.clone() });
        assert_fixed_point(&format!("generated policy {seed}:\n{source}"), &module, scratch.path());
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees")
}

fn smithy_tls(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_smithy-tls")).args(args).arg(dir).output().expect("run smithy-tls");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

#[test]
fn check_is_green_after_rustfmt_formats_the_applied_tree() {
    for preset in presets::names() {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("sdk");
        // legacy-2023 is refused by the vintage gate and stays as it is.
        smithy_tls_test_support::copy_tree(&fixtures(), &tree, &[]).unwrap();
        let (code, out) = smithy_tls(&["apply", "--preset", preset], &tree);
        assert_eq!(code, Some(0), "{preset}: {out}");

        let files = smithy_tls_test_support::fs::files_with(&tree, "rs");
        let mut formatted = Vec::new();
        for file in files {
            let text = rustfmt(&std::fs::read_to_string(&file).unwrap(), "2021", root.path());
            std::fs::write(&file, &text).unwrap();
            formatted.push((file, text));
        }

        let (code, out) = smithy_tls(&["check", "--preset", preset], &tree);
        assert_eq!(code, Some(0), "{preset}: check after rustfmt:\n{out}");
        let (code, out) = smithy_tls(&["apply", "--preset", preset], &tree);
        assert_eq!(code, Some(0), "{preset}: {out}");
        for (file, text) in &formatted {
            assert_eq!(&std::fs::read_to_string(file).unwrap(), text, "{preset}: {} changed", file.display());
        }
    }
}

/// A pipeline with its own rustfmt settings reflows the emitted module; it is still the same
/// code, so `check` stays green and `apply` leaves the formatted file alone.
#[test]
fn a_module_formatted_with_other_settings_is_up_to_date() {
    let root = tempfile::tempdir().unwrap();
    let tree = root.path().join("sdk");
    smithy_tls_test_support::copy_tree(&fixtures(), &tree, &[]).unwrap();
    let (code, out) = smithy_tls(&["apply"], &tree);
    assert_eq!(code, Some(0), "{out}");
    let module = tree.join("dotted-tables/src/default_http_client.rs");
    let out = Command::new("rustfmt")
        .args(["--edition", "2021", "--config", "max_width=60,hard_tabs=true"])
        .arg(&module)
        .output()
        .expect("rustfmt");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let formatted = std::fs::read_to_string(&module).unwrap();
    assert!(formatted.contains('\t'), "rustfmt reformatted it");
    let (code, out) = smithy_tls(&["check"], &tree);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = smithy_tls(&["apply"], &tree);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(std::fs::read_to_string(&module).unwrap(), formatted);
}
