//! Reads the provider table (`src/provider/facts.rs`) against the enabled features, the
//! application's override (`--cfg smithy_tls`, `--cfg smithy_tls_roots`) and the target: refuses
//! the builds this crate cannot make, with a message that names the fix, and names what the code
//! is gated on, so each is spelled once (`#[cfg(rustls)]` rather than
//! `#[cfg(any(feature = "rustls-aws-lc", feature = "rustls-ring", ...))]` everywhere). Under an
//! override the features say which `TlsProvider` / `TrustRoots` variants exist (generated code
//! names them) and the override what is compiled.

#[allow(dead_code)] // the generator and the library read other columns
mod facts {
    include!("src/provider/facts.rs");
}

use facts::{Crypto, ProviderFacts, Reach, TlsLibrary, FIPS_MODULE_TARGETS, PROVIDERS, ROOTS};

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let requested: Vec<&ProviderFacts> = PROVIDERS.iter().filter(|p| feature(p.name)).collect();
    let choice = match application_choice() {
        Ok(choice) => choice,
        Err(refusal) => {
            println!("cargo::error={refusal}");
            return;
        }
    };
    // What is compiled: the application's provider where it set one, else what the features ask.
    let enabled: Vec<&ProviderFacts> = match choice.provider {
        Some(Overridden::Provider(provider)) => vec![provider],
        Some(Overridden::NoTls) => Vec::new(),
        None => requested.clone(),
    };
    let refused = match choice.provider {
        Some(_) => override_refusal(&enabled, &target_os).or_else(|| reach_refusal(&enabled, &requested)),
        None => refusal(&enabled, &target_os),
    }
    .or_else(|| roots_reach_refusal(&choice, &enabled))
    .or_else(|| roots_refusal(&choice, &enabled));
    if let Some(refusal) = refused {
        println!("cargo::error={refusal}");
    }
    let roots = roots(&choice, &enabled);
    for (alias, on) in aliases(&enabled, &roots) {
        println!("cargo::rustc-check-cfg=cfg({alias})");
        if on {
            println!("cargo::rustc-cfg={alias}");
        }
    }
    variants(&requested, &enabled, &roots);
    // The application's choice, for `TlsInfo` and the shared clients' event (`provider::application`).
    println!("cargo::rustc-env=SMITHY_TLS_OVERRIDE={}", choice.provider.map_or("", Overridden::name));
    println!("cargo::rustc-env=SMITHY_TLS_ROOTS_OVERRIDE={}", choice.roots.unwrap_or(""));
    openssl_version();
}

/// Whether the cargo feature `name` is enabled.
fn feature(name: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", name.to_uppercase().replace('-', "_"));
    std::env::var_os(var).is_some()
}

/// A provider the application set with `--cfg smithy_tls="..."`.
#[derive(Clone, Copy)]
enum Overridden {
    Provider(&'static ProviderFacts),
    /// `none`: no TLS stack at all.
    NoTls,
}

impl Overridden {
    fn name(self) -> &'static str {
        match self {
            Overridden::Provider(provider) => provider.name,
            Overridden::NoTls => "none",
        }
    }
}

/// What the application's cfgs chose, if anything.
struct ApplicationChoice {
    provider: Option<Overridden>,
    roots: Option<&'static str>,
}

/// Reads `--cfg smithy_tls` and `--cfg smithy_tls_roots` (cargo passes the target's cfgs to
/// build scripts even when `--target` keeps RUSTFLAGS from the build script itself).
fn application_choice() -> Result<ApplicationChoice, String> {
    let provider = match single_value("smithy_tls")? {
        None => None,
        Some(value) if value == "none" => Some(Overridden::NoTls),
        Some(value) => match PROVIDERS.iter().find(|p| p.name == value) {
            Some(provider) => Some(Overridden::Provider(provider)),
            None => {
                return Err(format!(
                    "--cfg smithy_tls=\"{value}\" is not a value smithy-default-tls knows: set one of {} (or remove \
                     it to keep what each SDK crate chose); check RUSTFLAGS and the rustflags in .cargo/config.toml",
                    quoted(PROVIDERS.iter().map(|p| p.name).chain(["none"])),
                ))
            }
        },
    };
    let roots = match single_value("smithy_tls_roots")? {
        None => None,
        Some(value) => match ROOTS.iter().find(|r| r.name == value) {
            Some(roots) => Some(roots.name),
            None => {
                return Err(format!(
                "--cfg smithy_tls_roots=\"{value}\" is not a trust-root source smithy-default-tls knows: set one of \
                     {}; check RUSTFLAGS and the rustflags in .cargo/config.toml",
                quoted(ROOTS.iter().map(|r| r.name)),
            ))
            }
        },
    };
    Ok(ApplicationChoice { provider, roots })
}

/// The one value of the key-value cfg `name`, if set; two values are refused.
fn single_value(name: &str) -> Result<Option<String>, String> {
    let var = format!("CARGO_CFG_{}", name.to_uppercase());
    println!("cargo::rerun-if-env-changed={var}");
    let Some(values) = std::env::var(&var).ok() else { return Ok(None) };
    let values: Vec<&str> = values.split(',').filter(|v| !v.is_empty()).collect();
    match values.as_slice() {
        [] => Err(format!("--cfg {name} needs a value: --cfg {name}=\"...\"")),
        [one] => Ok(Some((*one).to_owned())),
        more => Err(format!(
            "--cfg {name} is set {} times ({}): set it once (cargo takes RUSTFLAGS, else the matching \
             [target] rustflags of .cargo/config.toml joined together, else [build] rustflags)",
            more.len(),
            listed(more.iter().copied(), '"', "and")
        )),
    }
}

/// The values as a message lists them: each between `mark`s, the last two joined by `last`
/// ("\"a\", \"b\" or \"c\"").
fn listed<'a>(values: impl Iterator<Item = &'a str>, mark: char, last: &str) -> String {
    let names: Vec<String> = values.map(|v| format!("{mark}{v}{mark}")).collect();
    match names.split_last() {
        Some((only, [])) => only.clone(),
        Some((final_one, rest)) => format!("{} {last} {final_one}", rest.join(", ")),
        None => String::new(),
    }
}

/// Cfg values, double-quoted, as alternatives: "\"a\", \"b\" or \"c\"".
fn quoted<'a>(values: impl Iterator<Item = &'a str>) -> String {
    listed(values, '"', "or")
}

/// The dependency line that turns the runtime's feature `feature` on, for an application's Cargo.toml.
fn feature_line(feature: &str) -> String {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let mut parts = version.split('.');
    let (major, minor) = (parts.next().unwrap_or("0"), parts.next().unwrap_or("0"));
    let requirement = if major == "0" { format!("{major}.{minor}") } else { major.to_owned() };
    format!("smithy-default-tls = {{ version = \"{requirement}\", features = [\"{feature}\"] }}")
}

/// Why the application's override cannot select its provider here: the provider's crates are
/// optional and no crate of this build turned on a feature that brings them for this target
/// (the provider table's `reach`).
fn reach_refusal(enabled: &[&ProviderFacts], requested: &[&ProviderFacts]) -> Option<String> {
    let provider = enabled.first()?;
    if provider.reached_by(requested.iter().copied()) {
        return None;
    }
    let asked = if requested.is_empty() { "no provider".to_owned() } else { one_of(requested.iter().copied()) };
    Some(format!(
        "--cfg smithy_tls=\"{name}\": the SDK crates asked for {asked} on this target, so {name}'s crates are not in \
         the application's Cargo.lock (only what a crate asks for is); turn the runtime's `{name}` feature on in the \
         application's Cargo.toml as well: `{line}` under [dependencies] (or [target.<triple>.dependencies] for the \
         targets this override is set for). The cfg alone selects {alone} everywhere",
        name = provider.name,
        line = feature_line(provider.name),
        alone = listed(
            PROVIDERS.iter().filter(|p| matches!(p.reach, Reach::CfgAlone)).map(|p| p.name).chain(["none"]),
            '"',
            "and"
        ),
    ))
}

/// Why the application's roots override cannot select its source here (as [`reach_refusal`]).
fn roots_reach_refusal(choice: &ApplicationChoice, enabled: &[&ProviderFacts]) -> Option<String> {
    let roots = ROOTS.iter().find(|r| Some(r.name) == choice.roots)?;
    if enabled.is_empty() || matches!(roots.reach, Reach::CfgAlone) || feature(roots.name) {
        return None;
    }
    // Roots that the provider in use cannot take are refused by `roots_refusal`, with the pairs.
    if roots.rustls_only && !enabled.iter().any(|p| p.platform_verifier()) {
        return None;
    }
    Some(format!(
        "--cfg smithy_tls_roots=\"{name}\": no SDK crate asked for {name} roots on this target, so its crate is not in \
         the application's Cargo.lock; turn the runtime's `{name}` feature on in the application's Cargo.toml as \
         well: `{line}` under [dependencies] (or [target.<triple>.dependencies]). The cfg alone selects {alone}",
        name = roots.name,
        line = feature_line(roots.name),
        alone = listed(ROOTS.iter().filter(|r| matches!(r.reach, Reach::CfgAlone)).map(|r| r.name), '"', "and"),
    ))
}

/// Why the application's override cannot be built for `target_os`, if it cannot.
fn override_refusal(enabled: &[&ProviderFacts], target_os: &str) -> Option<String> {
    let provider = enabled.first()?;
    if !provider.only_on_os.is_empty() && !provider.only_on_os.contains(&target_os) {
        return Some(format!(
            "--cfg smithy_tls=\"{}\": {} builds for target_os {} only, not \"{target_os}\"; choose {} for this \
             target (a `[target.<triple>] rustflags` entry in .cargo/config.toml sets it per target)",
            provider.name,
            provider.name,
            listed(provider.only_on_os.iter().copied(), '"', "and"),
            quoted(PROVIDERS.iter().filter(|p| p.only_on_os.is_empty() && !p.fips()).map(|p| p.name)),
        ));
    }
    fips_target_refusal(provider)
}

/// Why the application's roots override cannot be used by the providers compiled, if it cannot.
fn roots_refusal(choice: &ApplicationChoice, enabled: &[&ProviderFacts]) -> Option<String> {
    let roots = choice.roots?;
    if roots == "platform-verifier" && !enabled.is_empty() && !enabled.iter().any(|p| p.platform_verifier()) {
        let provider = one_of(enabled.iter().copied());
        return Some(format!(
            "--cfg smithy_tls_roots=\"platform-verifier\" cannot be used with {provider}: only rustls providers \
             verify with the platform verifier ({provider} reads the system store itself); valid \
             pairs: {} with \"native\", \"webpki\" or \"platform-verifier\"; {} with \"native\" or \"webpki\"",
            quoted(PROVIDERS.iter().filter(|p| p.platform_verifier()).map(|p| p.name)),
            quoted(PROVIDERS.iter().filter(|p| !p.platform_verifier()).map(|p| p.name)),
        ));
    }
    None
}

/// Why a FIPS provider cannot be built for this target: the FIPS module of aws-lc is a static
/// library only on Linux x86_64 and aarch64 (glibc or musl).
fn fips_target_refusal(provider: &ProviderFacts) -> Option<String> {
    if !provider.fips() {
        return None;
    }
    let cfg = |name: &str| std::env::var(format!("CARGO_CFG_{name}")).unwrap_or_default();
    let (os, arch, env) = (cfg("TARGET_OS"), cfg("TARGET_ARCH"), cfg("TARGET_ENV"));
    if FIPS_MODULE_TARGETS.contains(&os, &arch, &env) {
        return None;
    }
    Some(format!(
        "--cfg smithy_tls=\"{}\": the FIPS build of aws-lc (aws-lc-fips-sys) is a static module only on Linux \
         x86_64 and aarch64 (glibc or musl), not {arch}-{os}{}; use the system's FIPS-validated OpenSSL \
         (smithy_tls=\"openssl\", Linux) or a non-FIPS provider for this target",
        provider.name,
        if env.is_empty() { String::new() } else { format!("-{env}") },
    ))
}

/// Why this crate cannot be built with `enabled` for `target_os`, if it cannot.
fn refusal(enabled: &[&ProviderFacts], target_os: &str) -> Option<String> {
    if enabled.is_empty() {
        return Some(format!(
            "smithy-default-tls needs a TLS provider: enable the {} feature",
            one_of(PROVIDERS.iter())
        ));
    }
    // aws-lc-rs's `fips` switches every user of aws-lc-rs in the build to the FIPS module, and a
    // FIPS deployment wants no provider with non-FIPS crypto of ours next to it (the system's
    // OpenSSL may share it: it is FIPS when the system is). So `--all-features` fails here
    // instead of quietly making every provider FIPS.
    if enabled.iter().any(|p| p.fips()) && enabled.iter().any(|p| non_fips_crypto(p)) {
        return Some(format!(
            "the FIPS providers of smithy-default-tls ({}) cannot be combined with {} in one build: build the FIPS \
             client on its own (`--no-default-features --features <FIPS provider>,<roots>`), and do not use \
             `--all-features`",
            PROVIDERS.iter().filter(|p| p.fips()).map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", "),
            one_of(PROVIDERS.iter().filter(|p| non_fips_crypto(p))),
        ));
    }
    let misplaced: Vec<&ProviderFacts> =
        enabled.iter().copied().filter(|p| !p.only_on_os.is_empty() && !p.only_on_os.contains(&target_os)).collect();
    let first = misplaced.first()?;
    let systems: Vec<String> = first.only_on_os.iter().map(|os| format!("\"{os}\"")).collect();
    Some(format!(
        "the {} feature{} of smithy-default-tls build{} for target_os {} only, not \"{target_os}\"; pick {} for this \
         target (in a smithy-tls policy: a rule for this target with another provider)",
        listed(misplaced.iter().map(|p| p.name), '`', "and"),
        if misplaced.len() > 1 { "s" } else { "" },
        if misplaced.len() > 1 { "" } else { "s" },
        systems.join(" and "),
        one_of(PROVIDERS.iter().filter(|p| p.only_on_os.is_empty() && non_fips_crypto(p))),
    ))
}

/// Whether the provider brings crypto of this crate's (aws-lc or ring) that is not FIPS.
fn non_fips_crypto(provider: &ProviderFacts) -> bool {
    matches!(provider.crypto, Crypto::AwsLc | Crypto::Ring)
}

/// The providers' names quoted, as "`a`, `b` or `c`".
fn one_of<'a>(providers: impl Iterator<Item = &'a ProviderFacts>) -> String {
    listed(providers.map(|p| p.name), '`', "or")
}

/// The trust-root sources compiled in: the application's where it set one, else those the
/// features ask for that the compiled providers can use (the manifest's roots tables drop the
/// platform verifier's crate under an override to a provider that cannot use it).
fn roots(choice: &ApplicationChoice, enabled: &[&ProviderFacts]) -> Vec<&'static str> {
    if enabled.is_empty() {
        return Vec::new();
    }
    if let Some(roots) = choice.roots {
        return vec![roots];
    }
    let overridden_without_verifier =
        matches!(choice.provider, Some(Overridden::Provider(provider)) if !provider.platform_verifier());
    ROOTS
        .iter()
        .map(|r| r.name)
        .filter(|r| feature(r) && !(*r == "platform-verifier" && overridden_without_verifier))
        .collect()
}

/// The `TlsProvider` and `TrustRoots` variants that exist: those compiled, and those the
/// features name, which generated code may name although an override replaced them
/// (`named_provider = "..."`, `named_roots = "..."`); and what is compiled (`provider = "..."`,
/// `roots = "..."`).
fn variants(requested: &[&ProviderFacts], enabled: &[&ProviderFacts], roots: &[&str]) {
    let names =
        |values: &mut dyn Iterator<Item = &str>| values.map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ");
    let providers = names(&mut PROVIDERS.iter().map(|p| p.name));
    let root_names = names(&mut ROOTS.iter().map(|r| r.name));
    println!("cargo::rustc-check-cfg=cfg(named_provider, values({providers}))");
    println!("cargo::rustc-check-cfg=cfg(provider, values({providers}))");
    println!("cargo::rustc-check-cfg=cfg(named_roots, values({root_names}))");
    println!("cargo::rustc-check-cfg=cfg(roots, values({root_names}))");
    for provider in PROVIDERS.iter() {
        let compiled = enabled.iter().any(|p| p.name == provider.name);
        if compiled || requested.iter().any(|p| p.name == provider.name) {
            println!("cargo::rustc-cfg=named_provider=\"{}\"", provider.name);
        }
        if compiled {
            println!("cargo::rustc-cfg=provider=\"{}\"", provider.name);
        }
    }
    let named_roots: Vec<&str> = ROOTS.iter().map(|r| r.name).filter(|r| feature(r) || roots.contains(r)).collect();
    for root in ROOTS.iter().map(|r| r.name) {
        if named_roots.contains(&root) {
            println!("cargo::rustc-cfg=named_roots=\"{root}\"");
        }
        if roots.contains(&root) {
            println!("cargo::rustc-cfg=roots=\"{root}\"");
        }
    }
    println!("cargo::rustc-check-cfg=cfg(named_native_or_webpki)");
    if named_roots.contains(&"native") && named_roots.contains(&"webpki") {
        println!("cargo::rustc-cfg=named_native_or_webpki");
    }
}

/// Each cfg alias and whether it holds for this build.
fn aliases(enabled: &[&ProviderFacts], roots: &[&str]) -> Vec<(&'static str, bool)> {
    let on = |name: &str| enabled.iter().any(|p| p.name == name);
    let library = |library: TlsLibrary| enabled.iter().any(|p| p.library == library);
    let rustls = library(TlsLibrary::Rustls);
    let (native, webpki, verifier) =
        (roots.contains(&"native"), roots.contains(&"webpki"), roots.contains(&"platform-verifier"));
    // `rustls-aws-lc` runs on rustls 0.24 (tls/backends/rustls_in_place/), also under the application's
    // `smithy_tls="rustls-aws-lc"` (its target table declares the 0.24 crates too); under any other
    // override `rustls-aws-lc` is not compiled.
    let rustls_in_place = feature("experimental-rustls-024") && on("rustls-aws-lc");
    // `rustls-aws-lc` on the rustls 0.23 backend: always without rustls 0.24, and beside it for
    // platform-verifier roots (rustls-platform-verifier is built on 0.23), so that a crate that
    // turns `experimental-rustls-024` on in a build never breaks another's platform verifier.
    let rustls_aws_lc_on_023 = on("rustls-aws-lc") && (!rustls_in_place || verifier);
    // The rustls 0.23 backend (tls/backends/rustls.rs) serves every other rustls provider too.
    let rustls_backend =
        rustls_aws_lc_on_023 || enabled.iter().any(|p| p.library == TlsLibrary::Rustls && p.name != "rustls-aws-lc");
    let unix = std::env::var_os("CARGO_CFG_UNIX").is_some();
    let s2n_plain = unix && on("s2n-tls");
    let s2n_fips = unix && on("s2n-tls-fips");
    let s2n = unix && library(TlsLibrary::S2n);
    let openssl_provider = library(TlsLibrary::SystemLibssl);
    vec![
        // No TLS provider at all: the application's `--cfg smithy_tls="none"`.
        ("no_tls", enabled.is_empty()),
        // A rustls provider is compiled in (aws-lc-rs, its FIPS build, ring, or the application's).
        ("rustls", rustls),
        ("rustls_in_place", rustls_in_place),
        ("rustls_aws_lc_on_023", rustls_aws_lc_on_023),
        ("rustls_backend", rustls_backend),
        // s2n-tls on the regular aws-lc, or on its FIPS build (Unix only), or either.
        ("s2n_plain", s2n_plain),
        ("s2n_fips", s2n_fips),
        ("s2n", s2n),
        // The system's OpenSSL (`openssl`).
        ("openssl_provider", openssl_provider),
        // Some backend makes TLS connections; every backend presents a client identity.
        ("tls_backend", rustls_backend || rustls_in_place || s2n || openssl_provider),
        // Some backend reads the socket through `tls::ReadAhead` (all but rustls 0.24's stream).
        ("read_ahead", rustls_backend || s2n || openssl_provider),
        // A provider whose library takes one buffer per write, so its stream gathers h2's
        // vectored writes (`tls::gather`).
        ("gathered_writes", s2n || openssl_provider),
        // Some trust-root source is compiled in.
        ("roots_source", native || webpki || verifier),
        // A provider whose library reads the native store itself (through its default paths).
        ("store_by_library", s2n || openssl_provider),
        // A provider whose library accepts any application protocol the server selects, so its
        // backend checks it against what was offered (tls/names.rs).
        ("alpn_checked_by_backend", s2n || openssl_provider),
        // The native store is read by this crate (rustls); s2n-tls reads it itself.
        ("rustls_native", rustls && native),
        // `TrustRoots::NativeOrWebpki`: the native store, or the bundled roots where it is empty.
        ("native_or_webpki", native && webpki),
    ]
}

/// With the `openssl` feature: `ossl300` and `ossl320` when the libssl being linked is OpenSSL
/// 3.0 / 3.2 or newer (openssl-sys tells its direct dependents the version it found through
/// `DEP_OPENSSL_VERSION_NUMBER`), so that tls/backends/openssl/ffi.rs calls only what the library has.
fn openssl_version() {
    println!("cargo::rustc-check-cfg=cfg(ossl300)");
    println!("cargo::rustc-check-cfg=cfg(ossl320)");
    println!("cargo::rerun-if-env-changed=DEP_OPENSSL_VERSION_NUMBER");
    println!("cargo::rerun-if-env-changed=DEP_OPENSSL_LIBRESSL_VERSION_NUMBER");
    if std::env::var_os("DEP_OPENSSL_LIBRESSL_VERSION_NUMBER").is_some() {
        return;
    }
    let Some(version) =
        std::env::var("DEP_OPENSSL_VERSION_NUMBER").ok().and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
    else {
        return;
    };
    if version >= 0x3000_0000 {
        println!("cargo::rustc-cfg=ossl300");
    }
    if version >= 0x3020_0000 {
        println!("cargo::rustc-cfg=ossl320");
    }
}
