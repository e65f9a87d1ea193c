//! `cargo tree --prefix none` read as packages: the dependency graph a test inspects per target.

use std::collections::BTreeSet;

/// One package as `cargo tree` names it: `name vX.Y.Z`, then its source in parentheses when it
/// is not crates.io (a path, a git URL or another registry).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TreePackage {
    /// The package name.
    pub name: String,
    /// The version, without the `v`.
    pub version: String,
    /// Where it comes from, when that is not crates.io.
    pub source: Option<String>,
}

/// `tree -p <package> --target <target> -e normal,build --prefix none`: one line per package
/// that building `package` for `target` compiles (dev-dependencies left out), for
/// [`packages`] to read.
pub fn tree_args<'a>(package: &'a str, target: &'a str) -> [&'a str; 9] {
    ["tree", "-p", package, "--target", target, "-e", "normal,build", "--prefix", "none"]
}

/// The distinct packages in the output of a `cargo tree --prefix none` run (see [`tree_args`]);
/// the `(*)` of packages shown before and the `(proc-macro)` tag are dropped.
///
/// ```
/// use smithy_tls_test_support::cargo_tree::packages;
/// let out = "app v0.1.0 (/src/app)\nhyper v1.7.0\nserde_derive v1.0.228 (proc-macro)\nhyper v1.7.0 (*)\n";
/// let found = packages(out);
/// assert_eq!(found.len(), 3);
/// let app = found.iter().find(|p| p.name == "app").unwrap();
/// assert_eq!((app.version.as_str(), app.source.as_deref()), ("0.1.0", Some("/src/app")));
/// assert!(found.iter().any(|p| p.name == "serde_derive" && p.source.is_none()));
/// ```
pub fn packages(stdout: &str) -> BTreeSet<TreePackage> {
    stdout.lines().filter_map(package).collect()
}

/// One line of `cargo tree --prefix none`, or `None` for a blank or unexpected one.
fn package(line: &str) -> Option<TreePackage> {
    let mut rest = line.trim();
    for tag in [" (*)", " (proc-macro)"] {
        rest = rest.strip_suffix(tag).unwrap_or(rest);
    }
    let (name, rest) = rest.split_once(' ')?;
    let (version, source) = rest.split_once(' ').unwrap_or((rest, ""));
    let source = source.strip_prefix('(').and_then(|s| s.strip_suffix(')')).map(str::to_owned);
    Some(TreePackage { name: name.to_owned(), version: version.strip_prefix('v')?.to_owned(), source })
}
