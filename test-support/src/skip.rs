//! Skipped checks that someone sees. libtest swallows a passing test's stderr, so a test that
//! cannot run a check here calls [`record`]: it says so on stderr and appends a line to the file
//! [`VAR`] names, which `scripts/test` sets and prints at the end of the run ("skipped: <check>:
//! <reason>", or "nothing skipped").

use std::io::Write as _;

/// The environment variable naming the file skips are appended to (`scripts/test` sets it to
/// `<target dir>/skipped-checks.txt`); unset, a skip is only printed.
pub const VAR: &str = "SMITHY_TLS_SKIP_LOG";

/// Records that `check` was not run, and why, as one line `<check>: <reason>`.
///
/// # Panics
/// When [`VAR`] names a file that cannot be appended to: a skip nobody would see fails the test
/// instead.
///
/// ```
/// let log = std::env::temp_dir().join(format!("skip-doc-{}.txt", std::process::id()));
/// std::env::set_var(smithy_tls_test_support::skip::VAR, &log);
/// smithy_tls_test_support::skip::record("the FIPS suite", "not a FIPS host");
/// assert_eq!(std::fs::read_to_string(&log).unwrap(), "the FIPS suite: not a FIPS host\n");
/// # std::fs::remove_file(&log).unwrap();
/// ```
pub fn record(check: &str, reason: &str) {
    let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = format!("{}: {}\n", one_line(check), one_line(reason));
    eprint!("SKIPPING {line}");
    let Some(path) = std::env::var_os(VAR).filter(|path| !path.is_empty()) else { return };
    // One write of one line in append mode: tests running side by side do not interleave.
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = appended {
        panic!(
            "cannot record the skip `{}` in {} ({VAR}): {e}",
            line.trim_end(),
            std::path::Path::new(&path).display()
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skip_that_cannot_be_recorded_fails() {
        // A directory cannot be appended to. The only test here that sets the variable.
        std::env::set_var(super::VAR, std::env::temp_dir());
        let recorded = std::panic::catch_unwind(|| super::record("a check", "a\nreason"));
        std::env::remove_var(super::VAR);
        let message = recorded.expect_err("must fail the test");
        let message = message.downcast_ref::<String>().expect("a message");
        assert!(message.contains("cannot record the skip `a check: a reason`"), "{message}");
    }
}
