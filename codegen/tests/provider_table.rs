//! The lists of providers written outside the provider table (`runtime/src/provider/facts.rs`) —
//! the cargo aliases the suite runs and the runtime's features and docs.rs metadata — name every
//! provider the table has, so a provider added to the table cannot be left out of the tests.

use std::collections::BTreeSet;
use std::path::Path;

use smithy_tls_codegen::model::{Provider, Roots};

fn workspace_file(path: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The runtime features an alias's `--features` argument names.
fn alias_features(config: &toml_edit::DocumentMut, alias: &str) -> BTreeSet<String> {
    let command = config["alias"][alias].as_str().unwrap_or_else(|| panic!("alias `{alias}` is a string"));
    let words: Vec<&str> = command.split_whitespace().collect();
    let list = words
        .windows(2)
        .find(|w| w[0] == "--features")
        .map(|w| w[1])
        .unwrap_or_else(|| panic!("alias `{alias}` has no --features: {command}"));
    list.split(',').map(|f| f.trim_start_matches("smithy-default-tls/").to_owned()).collect()
}

fn names(providers: impl Iterator<Item = Provider>, roots: &[Roots]) -> BTreeSet<String> {
    providers.map(|p| p.name().to_owned()).chain(roots.iter().map(|r| r.name().to_owned())).collect()
}

#[test]
fn the_suite_aliases_build_every_provider_of_the_table() {
    let config: toml_edit::DocumentMut =
        workspace_file(".cargo/config.toml").parse().expect(".cargo/config.toml parses");
    // Every provider but the FIPS ones, which cannot share a build with the others, and every roots choice.
    let all = names(Provider::ALL.into_iter().filter(|p| !p.is_fips()), &Roots::ALL);
    for alias in ["clippy-all", "doc-all"] {
        assert_eq!(alias_features(&config, alias), all, "alias `{alias}`");
    }
    // The tests leave out `rustls-custom`, which connects only once the application hands it a
    // crypto provider: it runs on its own, with every roots choice.
    let bringing_crypto = names(Provider::ALL.into_iter().filter(|p| !p.is_fips() && p.brings_crypto()), &Roots::ALL);
    assert_eq!(alias_features(&config, "test-all"), bringing_crypto, "alias `test-all`");
    let custom = names(Provider::ALL.into_iter().filter(|p| !p.brings_crypto()), &Roots::ALL);
    assert_eq!(alias_features(&config, "test-rustls-custom"), custom, "alias `test-rustls-custom`");
    let fips = names(Provider::ALL.into_iter().filter(|p| p.is_fips()), &[Roots::Webpki]);
    for alias in ["test-fips", "clippy-fips"] {
        assert_eq!(alias_features(&config, alias), fips, "alias `{alias}`");
    }
}

#[test]
fn the_runtime_manifest_has_a_feature_per_provider_and_documents_them_together() {
    let manifest: toml_edit::DocumentMut =
        workspace_file("runtime/Cargo.toml").parse().expect("runtime/Cargo.toml parses");
    for provider in Provider::ALL {
        assert!(manifest["features"].get(provider.name()).is_some(), "runtime feature `{}`", provider.name());
    }
    let docs_rs: BTreeSet<String> = manifest["package"]["metadata"]["docs"]["rs"]["features"]
        .as_array()
        .expect("docs.rs features")
        .iter()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    assert_eq!(docs_rs, names(Provider::ALL.into_iter().filter(|p| !p.is_fips()), &Roots::ALL));
}
