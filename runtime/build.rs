//! Names for the feature sets the code is gated on, so each is spelled once (`#[cfg(rustls)]`
//! rather than `#[cfg(any(feature = "rustls-aws-lc", feature = "rustls-ring"))]` everywhere).

fn main() {
    cfg_aliases::cfg_aliases! {
        // A rustls provider is compiled in (aws-lc-rs, its FIPS build, or ring).
        rustls: { any(feature = "rustls-aws-lc", feature = "rustls-ring", feature = "rustls-aws-lc-fips") },
        // `rustls-aws-lc` runs on rustls 0.24 (tls/rustls_in_place/).
        rustls_in_place: { feature = "experimental-rustls-024" },
        // The rustls 0.23 backend (tls/rustls.rs) serves some provider: every rustls one but
        // `rustls-aws-lc` when that runs on rustls 0.24.
        rustls_backend: {
            any(feature = "rustls-ring", feature = "rustls-aws-lc-fips", all(feature = "rustls-aws-lc", not(rustls_in_place)))
        },
        // s2n-tls on the regular aws-lc, or on its FIPS build (Unix only; lib.rs refuses other
        // targets).
        s2n_plain: { all(feature = "s2n-tls", unix) },
        s2n_fips: { all(feature = "s2n-tls-fips", unix) },
        // Some s2n-tls provider is compiled in.
        s2n: { any(s2n_plain, s2n_fips) },
        // The system's OpenSSL (`openssl`).
        openssl_provider: { feature = "openssl" },
        // Some backend reads the socket through `tls::ReadAhead` (all but rustls 0.24's stream).
        read_ahead: { any(rustls_backend, s2n, openssl_provider) },
        // Some trust-root source is compiled in.
        roots_source: { any(feature = "native", feature = "webpki", feature = "platform-verifier") },
        // A provider whose library reads the native store itself (through its default paths).
        store_by_library: { any(s2n, openssl_provider) },
        // The native store is read by this crate (rustls); s2n-tls reads it itself.
        rustls_native: { all(rustls, feature = "native") },
        // `TrustRoots::NativeOrWebpki`: the native store, or the bundled roots where it is empty.
        native_or_webpki: { all(feature = "native", feature = "webpki") },
    }
    openssl_version();
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
