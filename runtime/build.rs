//! Names for the feature sets the code is gated on, so each is spelled once (`#[cfg(rustls)]`
//! rather than `#[cfg(any(feature = "rustls-aws-lc", feature = "rustls-ring"))]` everywhere).

fn main() {
    cfg_aliases::cfg_aliases! {
        // A rustls provider is compiled in (aws-lc-rs, its FIPS build, or ring).
        rustls: { any(feature = "rustls-aws-lc", feature = "rustls-ring", feature = "rustls-aws-lc-fips") },
        // s2n-tls on the regular aws-lc, or on its FIPS build (Unix only; lib.rs refuses other
        // targets).
        s2n_plain: { all(feature = "s2n-tls", unix) },
        s2n_fips: { all(feature = "s2n-tls-fips", unix) },
        // Some s2n-tls provider is compiled in.
        s2n: { any(s2n_plain, s2n_fips) },
        // Some trust-root source is compiled in.
        roots_source: { any(feature = "native", feature = "webpki", feature = "platform-verifier") },
        // The native store is read by this crate (rustls); s2n-tls reads it itself.
        rustls_native: { all(rustls, feature = "native") },
        // `TrustRoots::NativeOrWebpki`: the native store, or the bundled roots where it is empty.
        native_or_webpki: { all(feature = "native", feature = "webpki") },
    }
}
