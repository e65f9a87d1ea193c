//! The one switch that asks tests to rewrite checked-in expected output instead of failing on it.
//!
//! A test that compares what it produced with a checked-in file calls [`regenerate`]: when it is
//! true the test writes the file; otherwise a difference fails the test, naming the command that
//! rewrites it. `scripts/bless` sets [`VAR`] together with the
//! switches of insta (`INSTA_UPDATE=always`) and trycmd (`TRYCMD=overwrite`), which read only
//! their own variables.

/// The environment variable of the switch: set to anything but empty or `0` to regenerate.
pub const VAR: &str = "SMITHY_TLS_BLESS";

/// Whether this run should rewrite checked-in expected output: [`VAR`] is set, not empty and not `0`.
///
/// ```
/// if smithy_tls_test_support::regenerate() {
///     // write the checked-in file from what the test produced
/// }
/// ```
pub fn regenerate() -> bool {
    std::env::var_os(VAR).is_some_and(|value| !value.is_empty() && value != "0")
}
