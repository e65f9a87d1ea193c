//! P017: `native` roots are refused on targets where no native trust store can be read (iOS,
//! tvOS, watchOS, visionOS, Android, ...). The diagnostic points at the rule's `roots` value,
//! names the targets it cannot serve, and its help says what to use there instead
//! (`platform-verifier` on Apple systems, `webpki` on Android). Roots that work there compile.
//!
//! The helpers are those of `policy_diagnostics.rs` (each integration test is its own crate).
//! Every policy text starts on line 1, so line numbers can be read straight off the text.

use smithy_tls_codegen::diag::{Diagnostic, Diagnostics, Location, Severity};
use smithy_tls_codegen::model::{CompiledPolicy, Provider, Roots};
use smithy_tls_codegen::policy::{parse_policy, ParsedPolicy, PolicySource};
use smithy_tls_codegen::targets;

/// Where a policy diagnostic points: every one of them has a place.
fn loc(d: &Diagnostic) -> &Location {
    d.location.as_ref().unwrap_or_else(|| panic!("a policy diagnostic without a place: {d}"))
}

const FILE: &str = "policies/roots.toml";

fn parse(text: &str) -> Result<ParsedPolicy, Diagnostics> {
    parse_policy(PolicySource { path: FILE.into(), text: text.to_owned() })
}

/// Diagnostics of a policy that parses but must fail to compile.
fn compile_errors(text: &str) -> Vec<Diagnostic> {
    let parsed = parse(text).unwrap_or_else(|d| panic!("expected the policy to parse:\n{d}"));
    match targets::compile(&parsed) {
        Ok(_) => panic!("expected compile errors, but the policy compiled"),
        Err(d) => d.0,
    }
}

/// Every target-level diagnostic of a policy that parses (none when it compiles).
fn compile_diagnostics(text: &str) -> Vec<Diagnostic> {
    let parsed = parse(text).unwrap_or_else(|d| panic!("expected the policy to parse:\n{d}"));
    match targets::compile(&parsed) {
        Ok(_) => Vec::new(),
        Err(d) => d.0,
    }
}

fn compiled(text: &str) -> CompiledPolicy {
    let parsed = parse(text).unwrap_or_else(|d| panic!("expected the policy to parse:\n{d}"));
    targets::compile(&parsed).unwrap_or_else(|d| panic!("expected the policy to compile:\n{d}"))
}

/// The one diagnostic with `code`; fails when there are none or several.
fn only<'a>(diags: &'a [Diagnostic], code: &str) -> &'a Diagnostic {
    let found: Vec<&Diagnostic> = diags.iter().filter(|d| d.code == code).collect();
    assert_eq!(found.len(), 1, "expected exactly one {code}, got:\n{}", Diagnostics(diags.to_vec()));
    found[0]
}

/// The diagnostics with `code`.
fn with_code<'a>(diags: &'a [Diagnostic], code: &str) -> Vec<&'a Diagnostic> {
    diags.iter().filter(|d| d.code == code).collect()
}

/// Checks one diagnostic's code, location (1-based line and column), and message/help fragments.
#[track_caller]
fn check(d: &Diagnostic, code: &str, line: usize, column: usize, message: &str, help: &str) {
    assert_eq!(d.code, code, "code of:\n{d}");
    assert_eq!(d.severity, Severity::Error, "severity of:\n{d}");
    assert_eq!(d.file.to_str(), Some(FILE), "file of:\n{d}");
    assert_eq!((loc(d).line, loc(d).column), (line, column), "line:column of:\n{d}");
    assert!(d.message.contains(message), "message {:?} lacks {message:?}", d.message);
    let h = d.help.as_deref().unwrap_or_default();
    assert!(h.contains(help), "help {h:?} lacks {help:?}");
    // The rendered form carries the same code and location.
    let rendered = d.to_string();
    assert!(rendered.contains(&format!("error[{code}]")), "rendered:\n{rendered}");
    assert!(rendered.contains(&format!("--> {FILE}:{line}:{column}\n")), "rendered:\n{rendered}");
}

/// The message P017 gives when `native` roots of `rule` cannot serve any of `refused` (in target
/// order): the count, the first four targets, and how many more.
fn refusal_message(rule: &str, refused: &[String]) -> String {
    let named: Vec<&str> = refused.iter().take(4).map(String::as_str).collect();
    let more = if refused.len() > 4 { format!(" and {} more", refused.len() - 4) } else { String::new() };
    format!(
        "roots `native` of rule `{rule}` cannot serve {} of the targets the rule gets: {}{more}",
        refused.len(),
        named.join(", ")
    )
}

/// The targets compiled rule `name` serves.
fn targets_of(c: &CompiledPolicy, name: &str) -> Vec<String> {
    c.rules.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no rule `{name}`")).targets.clone()
}

/// The roots advice of the help's reason for the first target named `first`: the help gives
/// one reason per line of targets (`first and N more: why`), each ending with `use roots "..."`.
fn advice_after<'a>(help: &'a str, first: &str) -> &'a str {
    let start = help.find(first).unwrap_or_else(|| panic!("help {help:?} does not name {first}"));
    let rest = &help[start..];
    let at = rest.find("use roots \"").unwrap_or_else(|| panic!("no `use roots` after {first} in {help:?}"));
    let quoted = &rest[at + "use roots \"".len()..];
    &quoted[..quoted.find('"').expect("closing quote")]
}

/// A policy with one rule for the 64-bit Apple systems other than macOS (iOS, tvOS, watchOS,
/// visionOS) with `apple_roots` (line 10, column 9), one for Android with `android_roots`
/// (line 16, column 9), and no client elsewhere. rustls + aws-lc-rs builds on every target the
/// two rules get, so provider support (P013) never gets in the way.
fn mobile(apple_roots: &str, android_roots: &str) -> String {
    format!(
        r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "apple-mobile"
cfg = 'cfg(all(any(target_os = "ios", target_os = "tvos", target_os = "watchos", target_os = "visionos"), target_pointer_width = "64"))'
provider = "rustls-aws-lc"
roots = "{apple_roots}"

[[rule]]
name = "android"
cfg = 'cfg(target_os = "android")'
provider = "rustls-aws-lc"
roots = "{android_roots}"

[fallback]
name = "elsewhere"
provider = "none"
"#
    )
}

#[test]
fn platform_verifier_on_apple_mobile_and_webpki_on_android_compile() {
    let c = compiled(&mobile("platform-verifier", "webpki"));
    let apple = targets_of(&c, "apple-mobile");
    let android = targets_of(&c, "android");
    for triple in [
        "aarch64-apple-ios",
        "aarch64-apple-ios-sim",
        "aarch64-apple-ios-macabi",
        "x86_64-apple-ios",
        "aarch64-apple-tvos",
        "aarch64-apple-watchos",
        "aarch64-apple-visionos",
    ] {
        assert!(apple.iter().any(|t| t == triple), "apple-mobile lacks {triple}: {apple:?}");
    }
    assert!(!apple.iter().any(|t| t.ends_with("-apple-darwin")), "macOS is not Apple mobile: {apple:?}");
    for triple in ["aarch64-linux-android", "armv7-linux-androideabi", "i686-linux-android", "x86_64-linux-android"] {
        assert!(android.iter().any(|t| t == triple), "android lacks {triple}: {android:?}");
    }
    assert!(android.iter().all(|t| t.contains("-linux-android")), "{android:?}");
    let rule = |name: &str| c.rules.iter().find(|r| r.name == name).expect("rule");
    assert_eq!(rule("apple-mobile").stack.roots(), Some(Roots::PlatformVerifier));
    assert_eq!(rule("android").stack.roots(), Some(Roots::Webpki));
    assert_eq!(rule("android").stack.provider(), Some(Provider::RustlsAwsLc));

    // webpki works everywhere, Apple mobile included.
    compiled(&mobile("webpki", "webpki"));
}

#[test]
fn p017_native_roots_on_apple_mobile_and_android_name_the_targets_and_what_to_use() {
    // What each rule gets, from the same policy with roots that work there.
    let ok = compiled(&mobile("platform-verifier", "webpki"));
    let apple = targets_of(&ok, "apple-mobile");
    let android = targets_of(&ok, "android");
    assert!(apple.len() > 4 && android.len() > 4, "{apple:?} {android:?}");

    let diags = compile_errors(&mobile("native", "native"));
    // Nothing but the two refusals, one per rule, in rule order.
    let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["P017", "P017"], "{}", Diagnostics(diags.clone()));

    // Apple mobile: every target the rule gets is refused, the system verifier is the advice.
    let d = &diags[0];
    check(d, "P017", 10, 9, "roots `native` of rule `apple-mobile` cannot serve", "use roots \"platform-verifier\"");
    assert_eq!(loc(d).width, "\"native\"".len(), "{d}");
    assert_eq!(d.message, refusal_message("apple-mobile", &apple));
    assert!(d.message.contains("aarch64-apple-ios, "), "{}", d.message);
    let help = d.help.as_deref().unwrap();
    assert!(
        help.starts_with(&format!(
            "aarch64-apple-ios and {} more: no native trust store is readable here",
            apple.len() - 1
        )),
        "{help}"
    );
    assert!(help.contains("Security.framework"), "{help}");
    assert_eq!(advice_after(help, "aarch64-apple-ios"), "platform-verifier", "{help}");
    // One reason for all of them, and not the Android advice.
    assert_eq!(help.matches("no native trust store").count(), 1, "{help}");
    assert!(!help.contains("webpki"), "{help}");
    assert!(help.ends_with("add an earlier rule for those targets or narrow this rule's cfg"), "{help}");

    // Android: bundled roots are the advice (the platform verifier needs a JNI context there).
    let d = &diags[1];
    check(d, "P017", 16, 9, "roots `native` of rule `android` cannot serve", "use roots \"webpki\"");
    assert_eq!(d.message, refusal_message("android", &android));
    assert!(d.message.contains("aarch64-linux-android, "), "{}", d.message);
    let help = d.help.as_deref().unwrap();
    assert!(
        help.starts_with(&format!(
            "aarch64-linux-android and {} more: no native trust store is readable here",
            android.len() - 1
        )),
        "{help}"
    );
    assert!(help.contains("/system/etc/security/cacerts"), "{help}");
    assert_eq!(advice_after(help, "aarch64-linux-android"), "webpki", "{help}");
    assert_eq!(help.matches("no native trust store").count(), 1, "{help}");
    assert!(!help.contains("platform-verifier"), "{help}");
}

#[test]
fn p017_is_reported_on_the_rule_that_gives_native_roots_only() {
    let diags = compile_errors(&mobile("native", "webpki"));
    let d = only(&diags, "P017");
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(d, "P017", 10, 9, "rule `apple-mobile`", "platform-verifier");

    let diags = compile_errors(&mobile("platform-verifier", "native"));
    let d = only(&diags, "P017");
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    check(d, "P017", 16, 9, "rule `android`", "webpki");
}

#[test]
fn p017_native_roots_for_target_os_ios() {
    let text = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "ios"
cfg = 'cfg(target_os = "ios")'
provider = "rustls-aws-lc"
roots = "native"

[fallback]
name = "elsewhere"
provider = "none"
"#;
    let diags = compile_errors(text);
    assert_eq!(diags.len(), 1, "{}", Diagnostics(diags.clone()));
    let d = &diags[0];
    check(d, "P017", 10, 9, "roots `native` of rule `ios` cannot serve", "use roots \"platform-verifier\"");
    assert!(d.message.contains("aarch64-apple-ios"), "{}", d.message);
    // Every iOS target (32-bit ones included) is refused.
    let ios = targets_of(&compiled(&text.replace("roots = \"native\"", "roots = \"platform-verifier\"")), "ios");
    assert!(ios.iter().any(|t| t == "armv7s-apple-ios") && ios.iter().any(|t| t == "x86_64-apple-ios"), "{ios:?}");
    assert_eq!(d.message, refusal_message("ios", &ios));
}

/// Native roots for every target but wasm: the fallback's roots value is on line 14.
const NATIVE_EVERYWHERE: &str = r#"name = "t"

[runtime]
version = "0.1"

[[rule]]
name = "wasm"
cfg = 'target_family = "wasm"'
provider = "none"

[fallback]
name = "everywhere"
provider = "rustls-aws-lc"
roots = "native"
"#;

#[test]
fn p017_fallback_with_native_roots_everywhere_names_ios_and_android() {
    // (aws-lc also misses a few targets: P013, not checked here.)
    let diags = compile_errors(NATIVE_EVERYWHERE);
    let d = only(&diags, "P017");
    check(d, "P017", 14, 9, "roots `native` of rule `everywhere` cannot serve", "aarch64-apple-ios and ");
    // The first target refused, in target order (macOS, before it, reads its keychain).
    assert!(d.message.contains(": aarch64-apple-ios, "), "{}", d.message);
    assert!(!d.message.contains("apple-darwin"), "{}", d.message);
    assert!(d.message.contains(" more"), "{}", d.message);
    let help = d.help.as_deref().unwrap();
    // One reason per kind of target, each with its first target and its advice.
    assert!(help.contains("aarch64-linux-android and "), "{help}");
    assert_eq!(advice_after(help, "aarch64-apple-ios and "), "platform-verifier", "{help}");
    assert_eq!(advice_after(help, "aarch64-linux-android and "), "webpki", "{help}");
    assert!(help.find("aarch64-apple-ios").unwrap() < help.find("aarch64-linux-android").unwrap(), "{help}");
    // No P016: the other roots checks are not about `native`.
    assert!(with_code(&diags, "P016").is_empty(), "{}", Diagnostics(diags.clone()));
}

#[test]
fn earlier_rules_for_apple_and_android_take_them_out_of_the_native_fallback() {
    let text = NATIVE_EVERYWHERE.replace(
        "[fallback]",
        r#"[[rule]]
name = "apple"
cfg = 'target_vendor = "apple"'
provider = "rustls-aws-lc"
roots = "platform-verifier"

[[rule]]
name = "android"
cfg = 'cfg(target_os = "android")'
provider = "rustls-aws-lc"
roots = "webpki"

[fallback]"#,
    );
    let diags = compile_diagnostics(&text);
    assert!(with_code(&diags, "P016").is_empty(), "{}", Diagnostics(diags.clone()));
    // Whatever the fallback's native roots still cannot serve, it is neither Apple nor Android.
    for d in with_code(&diags, "P017") {
        assert!(d.message.contains("rule `everywhere`"), "{d}");
        let help = d.help.as_deref().unwrap_or_default();
        for said in [d.message.as_str(), help] {
            assert!(!said.contains("-apple-") && !said.contains("android"), "{d}");
        }
        assert!(!help.contains("Security.framework") && !help.contains("cacerts"), "{d}");
    }
}

#[test]
fn webpki_everywhere_has_no_roots_refusal() {
    let text = NATIVE_EVERYWHERE.replace("roots = \"native\"", "roots = \"webpki\"");
    assert_ne!(text, NATIVE_EVERYWHERE);
    let diags = compile_diagnostics(&text);
    let refusals: Vec<&Diagnostic> = diags.iter().filter(|d| matches!(d.code, "P016" | "P017")).collect();
    assert!(refusals.is_empty(), "{}", Diagnostics(diags.clone()));
}
