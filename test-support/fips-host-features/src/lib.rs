//! No code. The runtime's FIPS builds are checked with this crate beside them
//! (tests/tests/runtime_features.rs) so that every one of them sees the same build-time
//! features: its dependency adds syn's `visit`, which a build with s2n-tls gets from
//! x509-parser's derive macros and a build without it lacks. bindgen, a build dependency of the
//! FIPS module (aws-lc-fips-sys), is compiled with the features its syn has, and a different
//! bindgen means building the module again; with this crate, the FIPS checks and the FIPS suite
//! (`cargo test-fips`, which has s2n-tls) share one build of the module.
//!
//! It is a proc-macro crate only so that its dependencies count as build-time ones, like
//! bindgen's; it defines no macro and nothing depends on it.
//!
//! The syn it names is the one bindgen resolves to (2.x today, while bindgen accepts up to
//! 3.x); `every_fips_check_shares_one_build_of_the_fips_module` in runtime_features fails when
//! the two builds drift apart again.
