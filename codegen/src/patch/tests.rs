//! Patches on fixture files written in the shapes of generated code; the same checks on real
//! published crates run in the end-to-end tests (tests/tests/real_sources.rs).

use std::path::{Path, PathBuf};

use smithy_tls_test_support::text::inserted_lines;

use super::*;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/patch")
}

fn fixture(name: &str) -> String {
    let path = fixture_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// A short, stable path for error messages.
fn fx(name: &str) -> PathBuf {
    PathBuf::from("fixtures").join(name)
}

fn snapshot(name: &str, value: &str) {
    insta::with_settings!({
        snapshot_path => "../../tests/fixtures/patch/snapshots",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!(name, value);
    });
}

const SERVICE_HOOK: &str = "crate::default_http_client::runtime_plugin()";
/// The hook when the default plugins get `.with_behavior_version(config.behavior_version.expect(..))`.
const SERVICE_HOOK_FOR_CONFIG: &str = "crate::default_http_client::runtime_plugin_for(config.behavior_version)";
const LOADER_HOOK: &str = "crate::default_http_client::default_http_client()";

/// Patches, checks the common invariants and returns the output.
fn patch_ok(f: fn(&Path, &str) -> Result<String, PatchError>, name: &str, input: &str, hook: &str) -> String {
    let out = f(&fx(name), input).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_ne!(out, input, "{name}: nothing was inserted");
    syn::parse_file(out.trim_start_matches('\u{feff}'))
        .unwrap_or_else(|e| panic!("{name}: output does not parse: {e}"));
    assert_eq!(out.matches(hook).count(), input.matches(hook).count() + 1, "{name}: hook count");
    assert_eq!(f(&fx(name), &out).as_deref(), Ok(out.as_str()), "{name}: not idempotent");
    out
}

// ----- crate root ------------------------------------------------------------------------

#[test]
fn crate_root_goes_after_last_mod() {
    let input = fixture("lib_root.rs");
    let out = patch_ok(patch_crate_root, "lib_root.rs", &input, "pub mod default_http_client;");
    assert_eq!(
        inserted_lines(&input, &out),
        Some(vec![
            "// smithy-tls: default HTTP client chosen by the smithy-tls policy",
            "pub mod default_http_client;"
        ])
    );
    let lines: Vec<&str> = out.lines().collect();
    let at = lines.iter().position(|l| *l == "pub mod default_http_client;").unwrap();
    assert_eq!(lines[at - 2], "mod serde_util;");
    snapshot("crate_root_lib", &out);
}

#[test]
fn crate_root_without_mods_appends_after_inner_attributes() {
    let input = fixture("lib_no_mods.rs");
    let out = patch_ok(patch_crate_root, "lib_no_mods.rs", &input, "pub mod default_http_client;");
    assert!(out.starts_with(&input));
    snapshot("crate_root_no_mods", &out);

    // Only inner attributes and docs, no trailing newline.
    let input = "#![allow(dead_code)]\n//! Docs only.";
    let out = patch_ok(patch_crate_root, "tiny.rs", input, "pub mod default_http_client;");
    assert_eq!(
        out,
        "#![allow(dead_code)]\n//! Docs only.\n// smithy-tls: default HTTP client chosen by the smithy-tls policy\npub mod default_http_client;\n"
    );
    // Empty file.
    let out = patch_ok(patch_crate_root, "empty.rs", "", "pub mod default_http_client;");
    assert!(out.starts_with("// smithy-tls:"));
}

#[test]
fn crate_root_is_noop_when_module_exists() {
    for input in [
        "pub mod a;\npub mod default_http_client;\n",
        "mod default_http_client { pub fn default_http_client() {} }\nmod z;\n",
        "#[cfg(feature = \"x\")]\npub(crate) mod default_http_client;\n",
    ] {
        assert_eq!(patch_crate_root(&fx("lib.rs"), input).as_deref(), Ok(input));
    }
}

#[test]
fn crate_root_after_inline_mod_and_trailing_comment() {
    let input = "#![allow(x)]\nmod a;\nmod loader {\n    pub struct ConfigLoader;\n} // end loader\n\npub use loader::ConfigLoader;\n";
    let out = patch_ok(patch_crate_root, "lib.rs", input, "pub mod default_http_client;");
    assert_eq!(
        out,
        "#![allow(x)]\nmod a;\nmod loader {\n    pub struct ConfigLoader;\n} // end loader\n// smithy-tls: default HTTP client chosen by the smithy-tls policy\npub mod default_http_client;\n\npub use loader::ConfigLoader;\n"
    );
    // Code after the last mod on the same line: the line is broken after the mod item.
    let input = "mod a; pub use a::A;\n";
    let out = patch_ok(patch_crate_root, "lib.rs", input, "pub mod default_http_client;");
    assert_eq!(
        out,
        "mod a;\n// smithy-tls: default HTTP client chosen by the smithy-tls policy\npub mod default_http_client;\n pub use a::A;\n"
    );
}

#[test]
fn crate_root_keeps_crlf_and_bom() {
    let input = format!("\u{feff}{}", fixture("lib_root.rs").replace('\n', "\r\n"));
    let out = patch_ok(patch_crate_root, "lib_root.rs", &input, "pub mod default_http_client;");
    assert!(out.starts_with('\u{feff}'));
    assert_eq!(out.matches('\n').count(), out.matches("\r\n").count(), "mixed line endings");
    assert_eq!(inserted_lines(&input, &out).map(|l| l.len()), Some(2));
}

// ----- revert ----------------------------------------------------------------------------

#[test]
fn revert_leaves_an_inline_module_of_that_name_alone() {
    let input = "mod a;\nmod default_http_client {\n    pub fn mine() {}\n}\n";
    assert_eq!(unpatch_crate_root(&fx("lib.rs"), input).as_deref(), Ok(input));
}

// ----- service config --------------------------------------------------------------------

#[test]
fn service_config_passes_the_behavior_version_as_given_to_the_default_plugins() {
    let chain = |version: &str| {
        format!(
            "fn base_client_runtime_plugins(config: Config) -> P {{\n    P::new()\n        \
             .with_client_plugins(default_plugins(Params::new().with_behavior_version({version})))\n        \
             .with_client_plugin(y)\n}}\n"
        )
    };
    for (given, passed) in [
        ("config.behavior_version.expect(\"set\")", "config.behavior_version"),
        ("bv.unwrap()", "bv"),
        ("BehaviorVersion::latest()", "Some(BehaviorVersion::latest())"),
    ] {
        let input = chain(given);
        let hook = format!("crate::default_http_client::runtime_plugin_for({passed})");
        let out = patch_ok(patch_service_config, "c.rs", &input, &hook);
        assert_eq!(unpatch_service_config(&fx("c.rs"), &out).as_deref(), Ok(input.as_str()), "{given}");
    }
    // No version given to the default plugins: the version-less hook.
    let input =
        "fn base_client_runtime_plugins() -> P {\n    P::new()\n        .with_client_plugins(default_plugins(x))\n}\n";
    patch_ok(patch_service_config, "c.rs", input, SERVICE_HOOK);
    // A hook written by an earlier smithy-tls (`runtime_plugin()`) is upgraded to pass the version.
    let old = chain("v.expect(\"x\")").replace(
        "        .with_client_plugin(y)",
        "        // smithy-tls: install the policy-chosen default HTTP client\n        \
         .with_client_plugins(crate::default_http_client::runtime_plugin())\n        .with_client_plugin(y)",
    );
    let upgraded = patch_service_config(&fx("c.rs"), &old).unwrap();
    assert_eq!(upgraded, old.replace("runtime_plugin()", "runtime_plugin_for(v)"));
    assert_eq!(patch_service_config(&fx("c.rs"), &upgraded).as_deref(), Ok(upgraded.as_str()), "idempotent");
}

#[test]
fn service_config_formatted_chain() {
    let input = fixture("config_formatted.rs");
    assert_eq!(has_service_config_anchor(&fx("config_formatted.rs"), &input), Ok(true));
    let out = patch_ok(patch_service_config, "config_formatted.rs", &input, SERVICE_HOOK_FOR_CONFIG);
    let indent = " ".repeat(24);
    // The client's behavior version, as the default plugins get it (without the `.expect`).
    assert_eq!(
        inserted_lines(&input, &out),
        Some(vec![
            format!("{indent}// smithy-tls: install the policy-chosen default HTTP client").as_str(),
            format!("{indent}.with_client_plugins({SERVICE_HOOK_FOR_CONFIG})").as_str(),
        ])
    );
    // Right after the line closing the default plugins, before `// user config`.
    let lines: Vec<&str> = out.lines().collect();
    let at = lines.iter().position(|l| l.contains(SERVICE_HOOK_FOR_CONFIG)).unwrap();
    assert_eq!(lines[at - 2].trim(), "))");
    assert_eq!(lines[at + 1].trim(), "// user config");
    assert_eq!(has_service_config_anchor(&fx("config_formatted.rs"), &out), Ok(true));
    snapshot("service_config_formatted", &out);
}

#[test]
fn service_config_config_moved_with_trailing_comment() {
    let input = fixture("config_moved.rs");
    // An older generator's shape: the version in a local `behavior_version`.
    let hook = "crate::default_http_client::runtime_plugin_for(behavior_version)";
    let out = patch_ok(patch_service_config, "config_moved.rs", &input, hook);
    let inserted = inserted_lines(&input, &out).expect("only insertions");
    assert_eq!(inserted.len(), 2);
    assert_eq!(inserted[1], format!("{}.with_client_plugins({hook})", " ".repeat(20)));
    assert!(out.contains("    )) // trailing note\n                    // smithy-tls:"));
    snapshot("service_config_moved", &out);
}

#[test]
fn service_config_one_line_unicode() {
    let input = fixture("config_oneline.rs");
    let out = patch_ok(patch_service_config, "config_oneline.rs", &input, SERVICE_HOOK);
    assert_eq!(out.lines().count(), input.lines().count());
    assert!(out.contains(
        "with_retry_partition_name(\"ëxample\"))) /* smithy-tls: install the policy-chosen default HTTP client */ \
         .with_client_plugins(crate::default_http_client::runtime_plugin()).with_client_plugin("
    ));
    snapshot("service_config_oneline", &out);
}

#[test]
fn service_config_use_imported_default_plugins_in_impl() {
    let input = fixture("config_use_import.rs");
    assert_eq!(has_service_config_anchor(&fx("config_use_import.rs"), &input), Ok(true));
    let out = patch_ok(patch_service_config, "config_use_import.rs", &input, SERVICE_HOOK);
    // The anchor is the last call: the `;` moves after the hook.
    assert!(out.contains(
        "            .with_client_plugins(default_plugins(DefaultPluginParams::new()))\n            \
         // smithy-tls: install the policy-chosen default HTTP client\n            \
         .with_client_plugins(crate::default_http_client::runtime_plugin());\n"
    ));
    snapshot("service_config_use_import", &out);
}

#[test]
fn service_config_crlf_bom_and_tabs() {
    let input = format!("\u{feff}{}", fixture("config_formatted.rs").replace('\n', "\r\n"));
    let out = patch_ok(patch_service_config, "config_formatted.rs", &input, SERVICE_HOOK_FOR_CONFIG);
    assert_eq!(out.matches('\n').count(), out.matches("\r\n").count(), "mixed line endings");
    assert_eq!(inserted_lines(&input, &out).map(|l| l.len()), Some(2));

    let input = "fn base_client_runtime_plugins() -> P {\n\tP::new()\n\t\t.with_client_plugins(default_plugins(x))\n\t\t.with_client_plugin(y)\n}\n";
    let out = patch_ok(patch_service_config, "tabs.rs", input, SERVICE_HOOK);
    assert_eq!(
        inserted_lines(input, &out),
        Some(vec![
            "\t\t// smithy-tls: install the policy-chosen default HTTP client",
            "\t\t.with_client_plugins(crate::default_http_client::runtime_plugin())",
        ])
    );
}

#[test]
fn service_config_missing_function() {
    let input = fixture("config_no_fn.rs");
    let err = patch_service_config(&fx("config_no_fn.rs"), &input).unwrap_err();
    assert!(matches!(&err, PatchError::AnchorNotFound { what, .. } if what.contains("base_client_runtime_plugins")));
    let msg = err.to_string();
    assert!(msg.starts_with("fixtures/config_no_fn.rs: cannot find fn `base_client_runtime_plugins`"), "{msg}");
    assert!(msg.contains("leave this crate out of the policy"), "{msg}");
    assert_eq!(has_service_config_anchor(&fx("config_no_fn.rs"), &input), Ok(false));
}

#[test]
fn service_config_missing_anchor() {
    let input = fixture("config_no_anchor.rs");
    let err = patch_service_config(&fx("config_no_anchor.rs"), &input).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, PatchError::AnchorNotFound { .. }));
    assert!(msg.contains("(line 1)") && msg.contains("by hand"), "{msg}");
    assert_eq!(has_service_config_anchor(&fx("config_no_anchor.rs"), &input), Ok(false));
}

#[test]
fn service_config_two_candidates_is_ambiguous() {
    let input = fixture("config_two_anchors.rs");
    let err = patch_service_config(&fx("config_two_anchors.rs"), &input).unwrap_err();
    assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![4, 7]), "{err:?}");
    let msg = err.to_string();
    assert!(msg.starts_with("fixtures/config_two_anchors.rs: lines 4, 7: found 2 candidates"), "{msg}");
    assert_eq!(has_service_config_anchor(&fx("config_two_anchors.rs"), &input), Err(err));

    let two_fns = "fn base_client_runtime_plugins() {}\nmod m {\n    fn base_client_runtime_plugins() {}\n}\n";
    let err = patch_service_config(&fx("two.rs"), two_fns).unwrap_err();
    assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![1, 3]), "{err:?}");
}

#[test]
fn service_config_syntax_error() {
    let input = fixture("config_syntax_error.rs");
    let err = patch_service_config(&fx("config_syntax_error.rs"), &input).unwrap_err();
    let PatchError::Parse { line, column, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*line, 4, "{err}");
    assert!(*column > 1);
    let msg = err.to_string();
    assert!(msg.starts_with(&format!("fixtures/config_syntax_error.rs:4:{column}: cannot parse")), "{msg}");
    assert_eq!(has_service_config_anchor(&fx("config_syntax_error.rs"), &input), Err(err.clone()));
    assert!(matches!(patch_crate_root(&fx("x.rs"), &input), Err(PatchError::Parse { line: 4, .. })));
    assert!(matches!(patch_aws_config_loader(&fx("x.rs"), &input), Err(PatchError::Parse { line: 4, .. })));
    // Lexer errors point at the mismatched closer, or at the unclosed opener.
    let err = patch_service_config(&fx("lex.rs"), "fn a() {\n    let b = (1, 2;\n    c\n}\n").unwrap_err();
    assert!(
        matches!(&err, PatchError::Parse { line: 4, column: 1, message, .. } if message.contains("unbalanced")),
        "{err:?}"
    );
    let err = patch_service_config(&fx("eof.rs"), "fn a() {\n    let x = 1;\n").unwrap_err();
    assert!(matches!(err, PatchError::Parse { line: 1, column: 8, .. }), "{err:?}");
}

#[test]
fn service_config_hook_anywhere_in_fn_counts_as_patched() {
    let input = "fn base_client_runtime_plugins() -> P {\n    let p = P::new().with_client_plugins(default_plugins(x));\n    p.with_client_plugins(crate::default_http_client::runtime_plugin())\n}\n";
    assert_eq!(patch_service_config(&fx("c.rs"), input).as_deref(), Ok(input));
    assert_eq!(has_service_config_anchor(&fx("c.rs"), input), Ok(true));
}

// ----- aws-config loader -----------------------------------------------------------------

#[test]
fn loader_in_inline_module() {
    let input = fixture("loader.rs");
    let out = patch_ok(patch_aws_config_loader, "loader.rs", &input, LOADER_HOOK);
    assert!(out.contains("        pub async fn load(mut self) -> SdkConfig {\n"));
    let unmutated = out.replacen("load(mut self)", "load(self)", 1);
    let indent = " ".repeat(12);
    assert_eq!(
        inserted_lines(&input, &unmutated),
        Some(vec![
            format!("{indent}// smithy-tls: fall back to the policy-chosen default HTTP client").as_str(),
            format!("{indent}if self.http_client.is_none() {{").as_str(),
            format!("{indent}    self.http_client = crate::default_http_client::default_http_client();").as_str(),
            format!("{indent}}}").as_str(),
        ])
    );
    snapshot("loader", &out);
}

#[test]
fn loader_already_mut_self_with_tabs_nested() {
    let input = fixture("loader_mut_self.rs");
    let out = patch_ok(patch_aws_config_loader, "loader_mut_self.rs", &input, LOADER_HOOK);
    assert_eq!(inserted_lines(&input, &out).map(|l| l.len()), Some(4), "receiver must stay as is");
    assert!(out.contains("\t\t\t\tif self.http_client.is_none() {\n\t\t\t\t\tself.http_client ="));
    snapshot("loader_mut_self", &out);
}

#[test]
fn loader_partially_patched_gets_mut_only() {
    let input = "mod loader {\n    impl ConfigLoader {\n        pub async fn load(self) -> SdkConfig {\n            if self.http_client.is_none() { self.http_client = crate::default_http_client::default_http_client(); }\n            todo!()\n        }\n    }\n}\n";
    let out = patch_aws_config_loader(&fx("l.rs"), input).unwrap();
    assert_eq!(out, input.replace("load(self)", "load(mut self)"));
    assert_eq!(patch_aws_config_loader(&fx("l.rs"), &out).as_deref(), Ok(out.as_str()));
}

#[test]
fn loader_one_line_body() {
    let input = "impl ConfigLoader { pub async fn load(self) -> SdkConfig { build(self.http_client) } }\n";
    let out = patch_ok(patch_aws_config_loader, "l.rs", input, LOADER_HOOK);
    assert_eq!(
        out,
        "impl ConfigLoader { pub async fn load(mut self) -> SdkConfig { /* smithy-tls: fall back to the policy-chosen default HTTP client */ \
         if self.http_client.is_none() { self.http_client = crate::default_http_client::default_http_client(); } build(self.http_client) } }\n"
    );
}

#[test]
fn loader_errors() {
    let err = patch_aws_config_loader(&fx("loader_old.rs"), &fixture("loader_old.rs")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, PatchError::AnchorNotFound { .. }));
    assert!(msg.contains("field `http_client`") && msg.contains("(line 2)"), "{msg}");

    let err = patch_aws_config_loader(&fx("config_formatted.rs"), &fixture("config_formatted.rs")).unwrap_err();
    assert!(err.to_string().contains("cannot find `async fn load(self)`"), "{err}");

    // `load(&self)`, trait impls and non-async `load` do not qualify.
    let input = "impl ConfigLoader { async fn load(&self) {} fn load2(self) {} }\nimpl Load for ConfigLoader { async fn load(self) {} }\n";
    assert!(matches!(patch_aws_config_loader(&fx("l.rs"), input), Err(PatchError::AnchorNotFound { .. })));

    let input = "#[cfg(a)]\nimpl ConfigLoader {\n    async fn load(self) {}\n}\n#[cfg(not(a))]\nimpl ConfigLoader {\n    async fn load(self) {}\n}\n";
    let err = patch_aws_config_loader(&fx("l.rs"), input).unwrap_err();
    assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![3, 7]), "{err:?}");
}

// ----- aws-config provider config ---------------------------------------------------------

const PROVIDER_HOOK: &str = ".or_else(crate::default_http_client::default_http_client)";

#[test]
fn provider_config_accessors_fall_back_to_the_default_client() {
    let input = fixture("provider_config.rs");
    let out = patch_aws_config_provider_config(&fx("provider_config.rs"), &input).unwrap();
    syn::parse_file(&out).unwrap();
    assert_eq!(out.matches(PROVIDER_HOOK).count(), 2, "{out}");
    assert!(out.contains(&format!("        builder.set_http_client(self.http_client.clone(){PROVIDER_HOOK});\n")));
    assert!(out.contains(&format!("        self.http_client.clone(){PROVIDER_HOOK}\n")));
    // One comment line above each hooked statement, indented like it; nothing else changes.
    let without_hooks = out.replace(PROVIDER_HOOK, "");
    let note = "        // smithy-tls: without a client of its own, use the policy-chosen default HTTP client";
    assert_eq!(inserted_lines(&input, &without_hooks), Some(vec![note, note]));
    assert_eq!(without_hooks.replace(&format!("{note}\n"), ""), input);
    assert_eq!(patch_aws_config_provider_config(&fx("p.rs"), &out).as_deref(), Ok(out.as_str()), "idempotent");
    snapshot("provider_config", &out);
}

#[test]
fn provider_config_with_a_behavior_version_passes_it() {
    let input = fixture("provider_config.rs").replace(
        "    region: Option<String>,\n",
        "    region: Option<String>,\n    behavior_version: Option<BehaviorVersion>,\n",
    );
    let hook = ".or_else(|| crate::default_http_client::default_http_client_for(self.behavior_version))";
    let out = patch_aws_config_provider_config(&fx("p.rs"), &input).unwrap();
    assert_eq!(out.matches(hook).count(), 2, "{out}");
    assert_eq!(patch_aws_config_provider_config(&fx("p.rs"), &out).as_deref(), Ok(out.as_str()), "idempotent");
    assert_eq!(unpatch_aws_config_provider_config(&fx("p.rs"), &out).as_deref(), Ok(input.as_str()));
    // rustfmt wraps the long closure body in a block: still the hook.
    let wrapped = out.replace(
        "|| crate::default_http_client::default_http_client_for(self.behavior_version))",
        "|| {\n            crate::default_http_client::default_http_client_for(self.behavior_version)\n        })",
    );
    assert_ne!(wrapped, out);
    assert_eq!(patch_aws_config_provider_config(&fx("p.rs"), &wrapped).as_deref(), Ok(wrapped.as_str()));
    assert_eq!(unpatch_aws_config_provider_config(&fx("p.rs"), &wrapped).map(|u| u.contains("or_else")), Ok(false));
    // Hooks an earlier smithy-tls wrote without the version are upgraded.
    let old = out.replace(hook, PROVIDER_HOOK);
    assert_eq!(patch_aws_config_provider_config(&fx("p.rs"), &old).as_deref(), Ok(out.as_str()));
}

#[test]
fn loader_hook_of_an_earlier_smithy_tls_is_upgraded() {
    let input = "struct ConfigLoader { http_client: Option<C>, behavior_version: Option<B> }\n\
                 impl ConfigLoader {\n    async fn load(self) -> SdkConfig {\n        todo!()\n    }\n}\n";
    let out = patch_aws_config_loader(&fx("l.rs"), input).unwrap();
    assert!(out.contains("default_http_client_for(self.behavior_version)"), "{out}");
    let old = out.replace("default_http_client_for(self.behavior_version)", "default_http_client()");
    assert_eq!(patch_aws_config_loader(&fx("l.rs"), &old).as_deref(), Ok(out.as_str()));
}

#[test]
fn old_hooks_are_found_in_code_not_in_comments_or_strings() {
    use super::{has_ident, OldHook};
    let call = OldHook::BareCall("default_http_client");
    assert!(call.is_in("fn f() { let c = crate::default_http_client::default_http_client(); }"));
    assert!(!call.is_in("fn f() { let c = crate::default_http_client::default_http_client(v); }"), "new form");
    assert!(!call.is_in("// crate::default_http_client::default_http_client()\nfn f() {}"));
    assert!(!call.is_in("fn f() { let s = \"default_http_client::default_http_client()\"; }"));
    assert!(!call.is_in("fn f( {"), "does not parse");
    let passed = OldHook::OrElse("default_http_client");
    assert!(passed.is_in("fn f() { x.or_else(crate::default_http_client::default_http_client) }"));
    assert!(!passed.is_in("fn f() { x.or_else(|| crate::default_http_client::default_http_client_for(v)) }"));
    assert!(has_ident("struct L { behavior_version: Option<B> }", "behavior_version"));
    assert!(!has_ident("// behavior_version\nstruct L { with_behavior_version: B }", "behavior_version"));
}

#[test]
fn provider_config_hooks_are_recognised_after_reformatting() {
    // rustfmt (or a person) may re-lay the chain out; the hooks are still found.
    let input = fixture("provider_config.rs");
    let out = patch_aws_config_provider_config(&fx("p.rs"), &input).unwrap();
    let reformatted = out.replace(
        &format!("self.http_client.clone(){PROVIDER_HOOK}\n"),
        "self.http_client\n            .clone()\n            .or_else(crate::default_http_client::default_http_client)\n",
    );
    assert_ne!(reformatted, out);
    assert_eq!(patch_aws_config_provider_config(&fx("p.rs"), &reformatted).as_deref(), Ok(reformatted.as_str()));
}

#[test]
fn provider_config_half_patched_gets_the_missing_hook() {
    let input = fixture("provider_config.rs")
        .replace("        self.http_client.clone()\n", &format!("        self.http_client.clone(){PROVIDER_HOOK}\n"));
    let out = patch_aws_config_provider_config(&fx("p.rs"), &input).unwrap();
    assert_eq!(out.matches(PROVIDER_HOOK).count(), 2);
    assert_eq!(out.matches("// smithy-tls:").count(), 1, "only the new hook gets a note");
}

#[test]
fn provider_config_errors() {
    let input = fixture("provider_config.rs");
    // A method missing: the file is not aws-config 1.x's.
    let err =
        patch_aws_config_provider_config(&fx("p.rs"), &input.replace("fn client_config", "fn sdk_config")).unwrap_err();
    assert!(matches!(err, PatchError::AnchorNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("`fn client_config(&self)` in an inherent `impl ProviderConfig`"), "{err}");
    // The accessor reads the field differently: refused, not guessed.
    let err = patch_aws_config_provider_config(
        &fx("p.rs"),
        &input.replace("        self.http_client.clone()\n", "        self.http_client.as_ref().cloned()\n"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("exactly one `self.http_client.clone()` in `ProviderConfig::http_client` (line 25), found 0"),
        "{err}"
    );
    let err = patch_aws_config_provider_config(
        &fx("p.rs"),
        &input.replace(
            "        self.http_client.clone()\n",
            "        self.http_client.clone().or(self.http_client.clone())\n",
        ),
    )
    .unwrap_err();
    assert!(err.to_string().contains("found 2"), "{err}");
    // Two impls with the accessor (e.g. cfg-gated): ambiguous.
    let twice = format!(
        "{input}\nimpl ProviderConfig {{\n    fn http_client(&self) -> Option<SharedHttpClient> {{ None }}\n}}\n"
    );
    let err = patch_aws_config_provider_config(&fx("p.rs"), &twice).unwrap_err();
    assert!(matches!(&err, PatchError::Ambiguous { lines, .. } if *lines == vec![25, 36]), "{err:?}");
    assert!(matches!(patch_aws_config_provider_config(&fx("p.rs"), "fn ("), Err(PatchError::Parse { .. })));
}

// ----- robustness ------------------------------------------------------------------------

#[test]
fn never_panics_on_truncated_input() {
    for name in ["config_formatted.rs", "config_oneline.rs", "loader.rs", "lib_root.rs", "provider_config.rs"] {
        let text = fixture(name);
        let cuts = text.char_indices().map(|(i, _)| i).step_by(5).chain([text.len()]);
        for cut in cuts {
            let prefix = &text[..cut];
            let _ = patch_crate_root(&fx(name), prefix);
            let _ = patch_service_config(&fx(name), prefix);
            let _ = has_service_config_anchor(&fx(name), prefix);
            let _ = patch_aws_config_loader(&fx(name), prefix);
            let _ = patch_aws_config_provider_config(&fx(name), prefix);
        }
    }
}
