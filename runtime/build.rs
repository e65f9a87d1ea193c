//! Reads the provider table (`src/provider/facts.rs`) against the enabled features and the target:
//! refuses the builds this crate cannot make, with a message that names the fix, and names the
//! feature sets the code is gated on, so each is spelled once (`#[cfg(rustls)]` rather than
//! `#[cfg(any(feature = "rustls-aws-lc", feature = "rustls-ring", ...))]` everywhere).

#[allow(dead_code)] // the generator and the library read other columns
mod facts {
    include!("src/provider/facts.rs");
}

use facts::{Crypto, ProviderFacts, TlsLibrary, PROVIDERS};

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let enabled: Vec<&ProviderFacts> = PROVIDERS.iter().filter(|p| feature(p.name)).collect();
    if let Some(refusal) = refusal(&enabled, &target_os) {
        println!("cargo::error={refusal}");
    }
    for (alias, on) in aliases(&enabled) {
        println!("cargo::rustc-check-cfg=cfg({alias})");
        if on {
            println!("cargo::rustc-cfg={alias}");
        }
    }
    openssl_version();
}

/// Whether the cargo feature `name` is enabled.
fn feature(name: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", name.to_uppercase().replace('-', "_"));
    std::env::var_os(var).is_some()
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
        one_of(misplaced.iter().copied()).replace(" or ", " and "),
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
    let names: Vec<String> = providers.map(|p| format!("`{}`", p.name)).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Each cfg alias and whether it holds for this build.
fn aliases(enabled: &[&ProviderFacts]) -> Vec<(&'static str, bool)> {
    let on = |name: &str| enabled.iter().any(|p| p.name == name);
    let library = |library: TlsLibrary| enabled.iter().any(|p| p.library == library);
    let rustls = library(TlsLibrary::Rustls);
    // `rustls-aws-lc` runs on rustls 0.24 (tls/rustls_in_place/).
    let rustls_in_place = feature("experimental-rustls-024");
    // `rustls-aws-lc` on the rustls 0.23 backend: always without rustls 0.24, and beside it for
    // platform-verifier roots (rustls-platform-verifier is built on 0.23), so that a crate that
    // turns `experimental-rustls-024` on in a build never breaks another's platform verifier.
    let rustls_aws_lc_on_023 = on("rustls-aws-lc") && (!rustls_in_place || feature("platform-verifier"));
    // The rustls 0.23 backend (tls/rustls.rs) serves every other rustls provider too.
    let rustls_backend =
        rustls_aws_lc_on_023 || enabled.iter().any(|p| p.library == TlsLibrary::Rustls && p.name != "rustls-aws-lc");
    let unix = std::env::var_os("CARGO_CFG_UNIX").is_some();
    let s2n_plain = unix && on("s2n-tls");
    let s2n_fips = unix && on("s2n-tls-fips");
    let s2n = unix && library(TlsLibrary::S2n);
    let openssl_provider = library(TlsLibrary::SystemLibssl);
    let (native, webpki) = (feature("native"), feature("webpki"));
    vec![
        // A rustls provider is compiled in (aws-lc-rs, its FIPS build, or ring).
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
        // Some backend reads the socket through `tls::ReadAhead` (all but rustls 0.24's stream).
        ("read_ahead", rustls_backend || s2n || openssl_provider),
        // Some trust-root source is compiled in.
        ("roots_source", native || webpki || feature("platform-verifier")),
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
/// `DEP_OPENSSL_VERSION_NUMBER`), so that tls/openssl/ffi.rs calls only what the library has.
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
