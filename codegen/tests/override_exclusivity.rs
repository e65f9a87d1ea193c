//! The application's override (`--cfg smithy_tls="..."`, `--cfg smithy_tls_roots="..."`) brings
//! exactly one provider's native crypto libraries, proven the way policy exclusivity is: on every
//! builtin rustc target, for every override value (and none set) and every set of runtime
//! features a generated crate can ask for, by evaluating the runtime's manifests
//! (runtime/Cargo.toml and its crypto carrier runtime/crypto/Cargo.toml) as cargo's resolver 2
//! does, without building anything.
//!
//! The model: a dependency declaration is active when its table is `[dependencies]` or its
//! `[target.'cfg(..)']` holds for the target with the override's key-value cfgs set (cargo
//! counts `--cfg` flags as target cfgs). Features then resolve to a fixpoint: `dep:X` turns X on
//! if some declaration of X is active, `X/f` turns X and its feature f on under the same
//! condition, `X?/f` turns f on only if X is on by other means; an active non-optional
//! declaration is always on, and every active declaration of a dependency that is on adds its
//! `features` (and `default` unless `default-features = false`). The carrier's features resolve
//! the same way inside it. The packages reached are then mapped to native libraries by
//! [`ROWS`], a small table read from the crates' manifests that folds each crate's own
//! dependencies into what it brings (those are not expanded here), and compared with
//! `native_build::libraries`: the override's provider's libraries (none for `none` and
//! `rustls-custom`), or, with no override, the union of the requested providers'. The roots
//! crates are checked too: with `smithy_tls_roots` set, only that source's crate is in the graph.
//!
//! Cells build.rs refuses (it stops the build with an error) are counted, per kind, and checked
//! only to compile nothing outside the libraries they should have.
//!
//! The model is checked against real cargo: `the_model_agrees_with_cargo_tree_on_every_class`
//! runs `cargo tree` for one cell of every class the model tells apart (refused ones included)
//! and compares the native libraries and roots crates, which also checks [`ROWS`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use cfg_expr::expr::Predicate;
use cfg_expr::targets::{TargetInfo, ALL_BUILTINS};
use cfg_expr::Expression;
use smithy_tls_codegen::model::{EmptyStore, Provider, Roots, Stack};
use smithy_tls_codegen::native_build::{libraries, NativeLibrary};
use smithy_tls_codegen::{policy, presets};

// The provider table, through the include the generator uses (codegen/src/model.rs): the
// columns build.rs refuses overrides by (`only_on_os`, `crypto`).
#[allow(dead_code)]
mod facts {
    include!("../runtime/src/provider/facts.rs");
}

use NativeLibrary::{AwsLcFipsSys, AwsLcSys, OpensslSys, Ring, S2nTlsSys};

/// A package and the features that make it compile native libraries: when any of `when` is on
/// (always, when `when` is empty), it brings `brings`. Packages are named `name@major`, the
/// semver-compatible part of the version requirement, so rustls 0.23 and 0.24 stay apart.
struct Row {
    krate: &'static str,
    when: &'static [&'static str],
    brings: &'static [NativeLibrary],
    /// Where it is read (versions as locked in Cargo.lock).
    source: &'static str,
}

/// What the crates the runtime's target tables (and its carrier) declare compile. Read from the crates'
/// manifests (`~/.cargo/registry/src/*/<crate>-<version>/Cargo.toml`).
const ROWS: &[Row] = &[
    Row {
        krate: "rustls@0.23",
        when: &["aws_lc_rs", "aws-lc-rs", "prefer-post-quantum", "fips", "default"],
        brings: &[AwsLcSys],
        source: "rustls 0.23.48: `aws_lc_rs` = dep:aws-lc-rs + aws-lc-rs/aws-lc-sys; `aws-lc-rs`, \
                 `prefer-post-quantum`, `fips` and `default` each turn `aws_lc_rs` on",
    },
    Row {
        krate: "rustls@0.23",
        when: &["fips"],
        brings: &[AwsLcFipsSys],
        source: "rustls 0.23.48: `fips` = aws-lc-rs?/fips (on through `aws_lc_rs`); aws-lc-rs 1.19.0: \
                 `fips` = dep:aws-lc-fips-sys",
    },
    Row { krate: "rustls@0.23", when: &["ring"], brings: &[Ring], source: "rustls 0.23.48: `ring` = dep:ring" },
    Row {
        krate: "tokio-rustls@0.26",
        when: &["aws_lc_rs", "aws-lc-rs", "fips", "default"],
        brings: &[AwsLcSys],
        source: "tokio-rustls 0.26.6: `default` has `aws_lc_rs` = rustls/aws_lc_rs; `fips` = rustls/fips",
    },
    Row { krate: "tokio-rustls@0.26", when: &["fips"], brings: &[AwsLcFipsSys], source: "tokio-rustls 0.26.6" },
    Row { krate: "tokio-rustls@0.26", when: &["ring"], brings: &[Ring], source: "tokio-rustls 0.26.6" },
    Row {
        krate: "aws-lc-rs@1",
        when: &["default", "aws-lc-sys", "non-fips"],
        brings: &[AwsLcSys],
        source: "aws-lc-rs 1.19.0: `default` and `non-fips` have aws-lc-sys; `prebuilt-nasm` is the weak \
                 aws-lc-sys?/prebuilt-nasm and brings nothing by itself",
    },
    Row { krate: "aws-lc-rs@1", when: &["fips"], brings: &[AwsLcFipsSys], source: "aws-lc-rs 1.19.0: `fips`" },
    Row {
        krate: "s2n-tls@0.3",
        when: &[],
        brings: &[S2nTlsSys, AwsLcSys],
        source: "s2n-tls 0.3.47 depends on s2n-tls-sys; s2n-tls-sys 0.3.47 on aws-lc-rs with its default \
                 features (aws-lc-sys)",
    },
    Row {
        krate: "s2n-tls@0.3",
        when: &["fips"],
        brings: &[AwsLcFipsSys],
        source: "s2n-tls 0.3.47: `fips` = s2n-tls-sys/fips = aws-lc-rs/fips",
    },
    Row {
        krate: "s2n-tls-sys@0.3",
        when: &[],
        brings: &[S2nTlsSys, AwsLcSys],
        source: "s2n-tls-sys 0.3.47 is libs2n; it depends on aws-lc-rs with its default features (aws-lc-sys)",
    },
    Row {
        krate: "s2n-tls-sys@0.3",
        when: &["fips"],
        brings: &[AwsLcFipsSys],
        source: "s2n-tls-sys 0.3.47: `fips` = aws-lc-rs/fips",
    },
    Row {
        krate: "s2n-tls-tokio@0.3",
        when: &[],
        brings: &[S2nTlsSys, AwsLcSys],
        source: "s2n-tls-tokio 0.3.47 depends on s2n-tls",
    },
    Row { krate: "openssl@0.10", when: &[], brings: &[OpensslSys], source: "openssl 0.10.82: ffi = openssl-sys" },
    Row { krate: "openssl-sys@0.9", when: &[], brings: &[OpensslSys], source: "the crate itself" },
    Row {
        krate: "tokio-openssl@0.6",
        when: &[],
        brings: &[OpensslSys],
        source: "tokio-openssl 0.6.5 depends on openssl and openssl-sys",
    },
    Row {
        krate: "rustls-aws-lc-rs@0.24",
        when: &["default", "aws-lc-sys"],
        brings: &[AwsLcSys],
        source: "rustls-aws-lc-rs 0.24.0-dev.2: `default` has `aws-lc-sys` = aws-lc-rs/aws-lc-sys",
    },
    Row {
        krate: "rustls-aws-lc-rs@0.24",
        when: &["fips"],
        brings: &[AwsLcFipsSys],
        source: "rustls-aws-lc-rs: `fips`",
    },
];

/// The crates of the runtime's target tables that compile no native library, and why.
const NO_LIBRARY: &[(&str, &str)] = &[
    ("rustls@0.24", "rustls 0.24.0-dev.2 has no crypto feature: its providers are crates of their own"),
    ("webpki-roots@1", "data; depends on rustls-pki-types only"),
    ("webpki-root-certs@1", "data; depends on rustls-pki-types only"),
    ("rustls-native-certs@0.8", "rustls-pki-types, openssl-probe, security-framework, schannel"),
    (
        "rustls-platform-verifier@0.7",
        "0.7.1: rustls with `std` only, rustls-webpki without default features, the platforms' crates",
    ),
    ("x509-cert@0.3", "pure Rust (der, spki, const-oid)"),
    ("der@0.8", "pure Rust"),
    ("foreign-types-shared@0.1", "pure Rust"),
];

/// The roots sources' crates.
fn roots_crate(roots: Roots) -> &'static str {
    match roots {
        Roots::Native => "rustls-native-certs@0.8",
        Roots::Webpki => "webpki-roots@1",
        Roots::PlatformVerifier => "rustls-platform-verifier@0.7",
    }
}

/// The bundled roots as whole certificates, the s2n-tls and OpenSSL providers' store.
const ROOT_CERTS: &str = "webpki-root-certs@1";

/// The runtime and its crypto carrier, as packages.
const RUNTIME: &str = "smithy-default-tls@0.1";
const CARRIER: &str = "smithy-default-tls-crypto@0.1";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn workspace_file(path: &str) -> String {
    let file = workspace().join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// `name@major` for a version requirement: `0.23.31` → `0.23`, `=0.24.0-dev.2` → `0.24`, `1.16` → `1`.
fn package_key(name: &str, requirement: &str) -> String {
    let version = requirement.trim_start_matches(['=', '^', '~', '>', '<', ' ']);
    let mut parts = version.split(['.', '-', '+']);
    let major = parts.next().unwrap_or_default();
    let class = if major == "0" { format!("0.{}", parts.next().unwrap_or_default()) } else { major.to_owned() };
    format!("{name}@{class}")
}

/// Where a declaration applies.
enum Scope {
    Always,
    Cfg(Box<Expression>),
    Triple(String),
}

/// One dependency declaration.
struct Decl {
    /// The name features use.
    name: String,
    /// The package it resolves to.
    krate: String,
    /// The table, for messages.
    table: String,
    scope: Scope,
    optional: bool,
    /// Its features, with `default` unless `default-features = false`.
    features: Vec<String>,
}

struct Manifest {
    features: BTreeMap<String, Vec<String>>,
    decls: Vec<Decl>,
}

fn decls_of(table: &dyn toml_edit::TableLike, table_name: String, scope: &dyn Fn() -> Scope, out: &mut Vec<Decl>) {
    for (name, item) in table.iter() {
        let (version, package, optional, default, mut features) = match item.as_str() {
            Some(version) => (version.to_owned(), name.to_owned(), false, true, Vec::new()),
            None => {
                let spec = item.as_table_like().unwrap_or_else(|| panic!("{table_name}: `{name}` is a table"));
                let string = |key: &str| spec.get(key).and_then(|v| v.as_str()).map(str::to_owned);
                let boolean = |key: &str| spec.get(key).and_then(|v| v.as_bool());
                let features: Vec<String> = spec
                    .get("features")
                    .and_then(|f| f.as_array())
                    .map(|a| a.iter().map(|f| f.as_str().expect("a feature name").to_owned()).collect())
                    .unwrap_or_default();
                (
                    string("version").unwrap_or_else(|| panic!("{table_name}: `{name}` has a version")),
                    string("package").unwrap_or_else(|| name.to_owned()),
                    boolean("optional").unwrap_or(false),
                    boolean("default-features").unwrap_or(true),
                    features,
                )
            }
        };
        if default {
            features.push("default".to_owned());
        }
        out.push(Decl {
            name: name.to_owned(),
            krate: package_key(&package, &version),
            table: table_name.clone(),
            scope: scope(),
            optional,
            features,
        });
    }
}

fn manifest(path: &str) -> Manifest {
    let doc: toml_edit::DocumentMut = workspace_file(path).parse().unwrap_or_else(|e| panic!("{path}: {e}"));
    let features = doc
        .get("features")
        .and_then(|f| f.as_table_like())
        .map(|t| {
            t.iter()
                .map(|(name, list)| {
                    let list = list.as_array().unwrap_or_else(|| panic!("{path}: feature `{name}` is a list"));
                    (name.to_owned(), list.iter().map(|v| v.as_str().expect("a string").to_owned()).collect())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut decls = Vec::new();
    if let Some(table) = doc.get("dependencies").and_then(|d| d.as_table_like()) {
        decls_of(table, format!("{path} [dependencies]"), &|| Scope::Always, &mut decls);
    }
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table_like()) {
        for (key, item) in targets.iter() {
            let Some(table) = item.get("dependencies").and_then(|d| d.as_table_like()) else { continue };
            let scope = || {
                if key.starts_with("cfg(") {
                    Scope::Cfg(Box::new(Expression::parse(key).unwrap_or_else(|e| panic!("{path}: `{key}`: {e}"))))
                } else {
                    Scope::Triple(key.to_owned())
                }
            };
            decls_of(table, format!("{path} [target.'{key}'.dependencies]"), &scope, &mut decls);
        }
    }
    // Declarations of one name resolve to one package, else features naming it would be ambiguous.
    for a in &decls {
        for b in decls.iter().filter(|b| b.name == a.name) {
            assert_eq!(a.krate, b.krate, "{path}: `{}` in {} and {}", a.name, a.table, b.table);
        }
    }
    Manifest { features, decls }
}

/// The application's override cfgs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Cfgs {
    tls: Option<&'static str>,
    roots: Option<&'static str>,
}

impl Cfgs {
    fn label(self) -> String {
        format!("smithy_tls={} smithy_tls_roots={}", self.tls.unwrap_or("(unset)"), self.roots.unwrap_or("(unset)"))
    }
}

fn holds(scope: &Scope, target: &TargetInfo, cfgs: Cfgs) -> bool {
    match scope {
        Scope::Always => true,
        Scope::Triple(triple) => triple == target.triple.as_str(),
        Scope::Cfg(expr) => expr.eval(|predicate| match predicate {
            Predicate::Target(p) => p.matches(target),
            Predicate::KeyValue { key: "smithy_tls", val } => cfgs.tls == Some(*val),
            Predicate::KeyValue { key: "smithy_tls_roots", val } => cfgs.roots == Some(*val),
            other => panic!("a runtime target table tests {other:?}, which this proof does not model"),
        }),
    }
}

impl Manifest {
    /// `features` with the manifest's own features they turn on.
    fn closure(&self, features: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<String> = features.iter().cloned().collect();
        while let Some(feature) = todo.pop() {
            if !out.insert(feature.clone()) {
                continue;
            }
            let Some(entries) = self.features.get(&feature) else {
                // `default` may be absent; any other name must be a feature.
                assert_eq!(feature, "default", "feature `{feature}` does not exist");
                continue;
            };
            todo.extend(entries.iter().filter(|e| !e.starts_with("dep:") && !e.contains('/')).cloned());
        }
        out
    }
}

/// The packages the runtime's graph has with `requested` on (their features), given which
/// declarations are active (`active[m][d]`: manifest m's declaration d).
fn resolve(manifests: &[(&str, &Manifest)], requested: &BTreeSet<String>, active: &[Vec<bool>]) -> Graph {
    let mut graph: Graph = BTreeMap::new();
    graph.insert(manifests[0].0.to_owned(), requested.clone());
    loop {
        let before = graph.clone();
        for (m, (krate, manifest)) in manifests.iter().enumerate() {
            let Some(enabled) = graph.get(*krate) else { continue };
            let enabled = manifest.closure(enabled);
            let declared = |dep: &str| manifest.decls.iter().zip(&active[m]).any(|(d, on)| *on && d.name == dep);
            let mut on: BTreeSet<&str> = manifest
                .decls
                .iter()
                .zip(&active[m])
                .filter(|(d, a)| **a && !d.optional)
                .map(|(d, _)| d.name.as_str())
                .collect();
            let (mut wanted, mut weak) = (Vec::new(), Vec::new());
            for entry in enabled.iter().filter_map(|f| manifest.features.get(f)).flatten() {
                if let Some(dep) = entry.strip_prefix("dep:") {
                    if declared(dep) {
                        on.insert(dep);
                    }
                } else if let Some((dep, feature)) = entry.split_once('/') {
                    if let Some(dep) = dep.strip_suffix('?') {
                        weak.push((dep, feature));
                    } else if declared(dep) {
                        on.insert(dep);
                        wanted.push((dep, feature));
                    }
                }
            }
            wanted.extend(weak.into_iter().filter(|(dep, _)| on.contains(dep)));
            let mut adds: Vec<(String, String)> = Vec::new();
            for (decl, _) in manifest.decls.iter().zip(&active[m]).filter(|(d, a)| **a && on.contains(d.name.as_str()))
            {
                graph.entry(decl.krate.clone()).or_default();
                adds.extend(decl.features.iter().map(|f| (decl.krate.clone(), f.clone())));
            }
            for (dep, feature) in wanted {
                let decl = manifest.decls.iter().find(|d| d.name == dep).expect("declared");
                adds.push((decl.krate.clone(), feature.to_owned()));
            }
            graph.get_mut(*krate).expect("on").extend(enabled);
            for (krate, feature) in adds {
                graph.entry(krate).or_default().insert(feature);
            }
        }
        if graph == before {
            return graph;
        }
    }
}

/// Packages and their features.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The native libraries `graph` compiles.
fn native_libraries(graph: &Graph) -> BTreeSet<NativeLibrary> {
    let mut out = BTreeSet::new();
    for (krate, features) in graph {
        for row in ROWS.iter().filter(|r| r.krate == krate) {
            if row.when.is_empty() || row.when.iter().any(|f| features.contains(*f)) {
                out.extend(row.brings.iter().copied());
            }
        }
    }
    out
}

/// A set of runtime features a generated crate (or several together) can ask for.
#[derive(Debug, Clone)]
struct FeatureSet {
    label: String,
    features: BTreeSet<String>,
}

impl FeatureSet {
    fn new(label: String, features: impl IntoIterator<Item = impl Into<String>>) -> FeatureSet {
        FeatureSet { label, features: features.into_iter().map(Into::into).collect() }
    }

    /// The providers it asks for (`experimental-rustls-024` is `rustls-aws-lc` on rustls 0.24).
    fn providers(&self) -> BTreeSet<Provider> {
        let named = self.features.iter().filter_map(|f| Provider::from_name(f));
        let experimental = self.features.contains("experimental-rustls-024").then_some(Provider::RustlsAwsLc);
        named.chain(experimental).collect()
    }

    fn roots(&self) -> BTreeSet<Roots> {
        self.features.iter().filter_map(|f| Roots::from_name(f)).collect()
    }
}

/// Every stack's features (each provider with each roots source it supports, and the webpki
/// fallback of `native`), and `experimental-rustls-024` with each roots source.
fn stack_feature_sets() -> Vec<FeatureSet> {
    let mut out = Vec::new();
    for provider in Provider::ALL {
        for roots in Roots::ALL.into_iter().filter(|r| provider.supports_roots(*r)) {
            for empty_store in EmptyStore::ALL {
                if empty_store == EmptyStore::Webpki && roots != Roots::Native {
                    continue;
                }
                let features = Stack::Tls { provider, roots, empty_store }.runtime_features();
                out.push(FeatureSet::new(features.join("+"), features));
            }
        }
    }
    for roots in Roots::ALL {
        let features = ["experimental-rustls-024", roots.name()];
        out.push(FeatureSet::new(features.join("+"), features));
    }
    out
}

/// The features the presets ask for on `target`, together: all of them, and all but the FIPS
/// stacks (a FIPS provider shares no build with a non-FIPS one).
fn preset_feature_sets(target: &TargetInfo, presets: &[policy::ParsedPolicy]) -> Vec<FeatureSet> {
    let stacks: Vec<Stack> = presets.iter().map(|parsed| parsed.policy.rule_for(target).stack).collect();
    let union = |stacks: &mut dyn Iterator<Item = &Stack>| -> BTreeSet<String> {
        stacks.flat_map(|s| s.runtime_features()).map(str::to_owned).collect()
    };
    let all = union(&mut stacks.iter());
    let non_fips = union(&mut stacks.iter().filter(|s| !s.provider().is_some_and(Provider::is_fips)));
    let mut out = vec![FeatureSet { label: "all presets".to_owned(), features: all }];
    if non_fips != out[0].features {
        out.push(FeatureSet { label: "the non-FIPS presets".to_owned(), features: non_fips });
    }
    out.retain(|set| !set.features.is_empty());
    out
}

fn facts_of(provider: Provider) -> &'static facts::ProviderFacts {
    facts::PROVIDERS.iter().find(|f| f.name == provider.name()).expect("in the table")
}

/// Why build.rs refuses the build, if it does (runtime/build.rs: `reach_refusal`,
/// `override_refusal`, `refusal`, `fips_target_refusal`, `roots_reach_refusal`, `roots_refusal`).
fn refusal(target: &TargetInfo, cfgs: Cfgs, set: &FeatureSet) -> Option<&'static str> {
    let requested = &set.providers();
    let os = target.os.as_ref().map_or("", |os| os.as_str());
    let env = target.env.as_ref().map_or("", |env| env.as_str());
    let misplaced = |p: &Provider| {
        let only = facts_of(*p).only_on_os;
        !only.is_empty() && !only.contains(&os)
    };
    let enabled: Vec<Provider> = match cfgs.tls {
        Some(value) if value == Stack::NONE => Vec::new(),
        Some(value) => vec![Provider::from_name(value).expect("a provider")],
        None => requested.iter().copied().collect(),
    };
    let refused = match cfgs.tls {
        Some(_) => enabled.first().and_then(|p| {
            let fips_target = smithy_tls_codegen::model::fips_module_builds(os, target.arch.as_str(), env);
            if !facts_of(*p).reached_by(requested.iter().map(|r| facts_of(*r))) {
                Some("the override's provider needs its feature where no crate asked for it (reach)")
            } else if misplaced(p) {
                Some("the override's provider does not build for this target_os (only_on_os)")
            } else if p.is_fips() && !fips_target {
                Some("a FIPS override outside Linux x86_64/aarch64 gnu/musl")
            } else {
                None
            }
        }),
        None => {
            let non_fips = |p: &Provider| matches!(facts_of(*p).crypto, facts::Crypto::AwsLc | facts::Crypto::Ring);
            if enabled.is_empty() {
                Some("no provider requested")
            } else if enabled.iter().any(|p| p.is_fips()) && enabled.iter().any(non_fips) {
                Some("a FIPS provider requested with a non-FIPS one")
            } else if enabled.iter().any(misplaced) {
                Some("a requested provider does not build for this target_os (only_on_os)")
            } else {
                None
            }
        }
    };
    let roots_unreached = cfgs.roots.and_then(|name| facts::ROOTS.iter().find(|r| r.name == name)).is_some_and(|r| {
        let usable = !r.rustls_only || enabled.iter().any(|p| p.supports_roots(Roots::PlatformVerifier));
        matches!(r.reach, facts::Reach::WithFeature) && !set.features.contains(r.name) && !enabled.is_empty() && usable
    });
    refused
        .or_else(|| roots_unreached.then_some("the roots override needs its feature where no crate asked for it"))
        .or_else(|| {
            let verifier = cfgs.roots == Some(Roots::PlatformVerifier.name());
            (verifier && !enabled.is_empty() && !enabled.iter().any(|p| p.supports_roots(Roots::PlatformVerifier)))
                .then_some("platform-verifier roots with a provider that cannot use them")
        })
}

/// The roots crates the graph should have: the override's source (else the requested ones),
/// each where the provider in use takes its roots from it: s2n-tls and OpenSSL take the bundled
/// roots from webpki-root-certs and have no platform verifier; `none` has no roots at all.
fn expected_roots(cfgs: Cfgs, set: &FeatureSet) -> BTreeSet<&'static str> {
    if cfgs.tls == Some(Stack::NONE) {
        return BTreeSet::new();
    }
    let overridden_to_library =
        cfgs.tls.and_then(Provider::from_name).is_some_and(|p| !p.supports_roots(Roots::PlatformVerifier));
    let sources: BTreeSet<Roots> = match cfgs.roots {
        // An override's source needs its feature unless the cfg alone selects it (build.rs refuses
        // the cells where a provider in use could use it and the feature is off).
        Some(roots) => {
            let facts = facts::ROOTS.iter().find(|r| r.name == roots).expect("a roots source");
            let reached = matches!(facts.reach, facts::Reach::CfgAlone) || set.features.contains(roots);
            reached.then(|| Roots::from_name(roots).expect("a roots source")).into_iter().collect()
        }
        None => set.roots(),
    };
    sources.into_iter().filter(|r| *r == Roots::Native || !overridden_to_library).map(roots_crate).collect()
}

/// Whether the provider(s) in use read their bundled roots from webpki-root-certs.
fn expects_root_certs(cfgs: Cfgs, set: &FeatureSet) -> bool {
    let library = |p: Provider| facts_of(p).library != facts::TlsLibrary::Rustls;
    match cfgs.tls {
        Some(value) => Provider::from_name(value).is_some_and(library),
        None => set.providers().into_iter().any(library),
    }
}

/// What a cell compiles against what it should, and the crates that bring it: each with its
/// features, the active declarations of it, and the rows (with their sources) that fire.
fn explain(
    got: &BTreeSet<NativeLibrary>,
    want: &BTreeSet<NativeLibrary>,
    graph: &Graph,
    manifests: &[(&str, &Manifest)],
    active: &[Vec<bool>],
) -> String {
    let mut lines = vec![format!("compiles {:?}, want {:?}", crate_label(got), crate_label(want))];
    for (krate, features) in graph {
        let rows: Vec<&str> = ROWS
            .iter()
            .filter(|r| r.krate == krate && (r.when.is_empty() || r.when.iter().any(|w| features.contains(*w))))
            .map(|r| r.source)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let tables: Vec<&str> = manifests
            .iter()
            .zip(active)
            .flat_map(|((_, m), a)| m.decls.iter().zip(a))
            .filter(|(d, a)| **a && d.krate == *krate)
            .map(|(d, _)| d.table.as_str())
            .collect();
        lines.push(format!("  {krate} {features:?}, declared in {tables:?}; {rows:?}"));
    }
    lines.join("\n")
}

fn override_values() -> Vec<Option<&'static str>> {
    std::iter::once(None).chain(Provider::ALL.iter().map(|p| Some(p.name())).chain([Some(Stack::NONE)])).collect()
}

fn roots_values() -> Vec<Option<&'static str>> {
    std::iter::once(None).chain(Roots::ALL.iter().map(|r| Some(r.name()))).collect()
}

fn crate_label(libraries: &BTreeSet<NativeLibrary>) -> Vec<&'static str> {
    libraries.iter().map(|l| l.crate_name()).collect()
}

#[test]
fn every_override_brings_the_native_libraries_of_one_provider_on_every_target() {
    let runtime = manifest("runtime/Cargo.toml");
    let carrier = manifest("runtime/crypto/Cargo.toml");
    let manifests = [(RUNTIME, &runtime), (CARRIER, &carrier)];
    assert!(runtime.decls.iter().any(|d| d.krate == CARRIER), "runtime/Cargo.toml declares the carrier as {CARRIER}");
    // Every crate a target table declares is classified, so a new one cannot slip past the proof.
    let classified = |krate: &str| {
        krate == CARRIER || ROWS.iter().any(|r| r.krate == krate) || NO_LIBRARY.iter().any(|(k, _)| *k == krate)
    };
    for decl in runtime.decls.iter().chain(&carrier.decls).filter(|d| !matches!(d.scope, Scope::Always)) {
        assert!(
            classified(&decl.krate),
            "{} in {} is in neither ROWS nor NO_LIBRARY: read its manifest and say what it compiles",
            decl.krate,
            decl.table
        );
    }
    let unconditional: BTreeSet<&str> =
        runtime.decls.iter().filter(|d| matches!(d.scope, Scope::Always)).map(|d| d.krate.as_str()).collect();

    let presets: Vec<policy::ParsedPolicy> = presets::names()
        .map(|name| policy::parse_policy(presets::preset(name).expect("preset")).expect("valid preset"))
        .collect();
    let stacks = stack_feature_sets();

    // A cell's graph depends on which declarations are active and the features asked for only.
    type Key = (Vec<bool>, Vec<bool>, BTreeSet<String>);
    let mut cache: HashMap<Key, Graph> = HashMap::new();
    let (mut checked, mut skipped) = (0usize, BTreeMap::<&str, usize>::new());
    let mut holes: Vec<String> = Vec::new();
    for target in ALL_BUILTINS {
        let mut sets = stacks.clone();
        sets.extend(preset_feature_sets(target, &presets));
        for tls in override_values() {
            for roots in roots_values() {
                let cfgs = Cfgs { tls, roots };
                let active: Vec<Vec<bool>> = manifests
                    .iter()
                    .map(|(_, m)| m.decls.iter().map(|d| holds(&d.scope, target, cfgs)).collect())
                    .collect();
                for set in &sets {
                    let key = (active[0].clone(), active[1].clone(), set.features.clone());
                    let graph = cache.entry(key).or_insert_with(|| resolve(&manifests, &set.features, &active));
                    for krate in graph.keys().filter(|k| *k != RUNTIME) {
                        assert!(
                            classified(krate) || unconditional.contains(krate.as_str()),
                            "{krate} is in the graph but not classified"
                        );
                    }
                    let got = native_libraries(graph);
                    let want: BTreeSet<NativeLibrary> = match tls {
                        Some(value) => {
                            Provider::from_name(value).map(libraries).unwrap_or_default().iter().copied().collect()
                        }
                        None => set.providers().into_iter().flat_map(|p| libraries(p).iter().copied()).collect(),
                    };
                    let cell = format!("{} with {}, features {}", target.triple, cfgs.label(), set.label);
                    if let Some(why) = refusal(target, cfgs, set) {
                        // build.rs stops these builds; still, nothing of another provider's is in them.
                        if !got.is_subset(&want) {
                            holes.push(format!(
                                "{cell} (refused: {why}): {}",
                                explain(&got, &want, graph, &manifests, &active)
                            ));
                        }
                        *skipped.entry(why).or_default() += 1;
                        continue;
                    }
                    if got != want {
                        holes.push(format!("{cell}: {}", explain(&got, &want, graph, &manifests, &active)));
                    }
                    let roots_got: BTreeSet<&str> =
                        Roots::ALL.into_iter().map(roots_crate).filter(|k| graph.contains_key(*k)).collect();
                    if let Some(roots) = roots {
                        let only = roots_crate(Roots::from_name(roots).expect("roots"));
                        assert!(
                            roots_got.iter().all(|k| *k == only),
                            "{cell}: roots crates {roots_got:?}, only {only}"
                        );
                    }
                    assert_eq!(roots_got, expected_roots(cfgs, set), "{cell}: the roots crates");
                    assert_eq!(
                        graph.contains_key(ROOT_CERTS),
                        expects_root_certs(cfgs, set),
                        "{cell}: {ROOT_CERTS} is the s2n-tls and OpenSSL providers' bundled store"
                    );
                    checked += 1;
                }
            }
        }
    }
    let skipped_total: usize = skipped.values().sum();
    println!(
        "override exclusivity: {checked} cells checked ({} targets × {} smithy_tls × {} smithy_tls_roots values × \
         {}-{} feature sets), {skipped_total} cells build.rs refuses checked only to compile nothing outside the override's \
         (or the requested) providers {skipped:?}, {} distinct resolutions",
        ALL_BUILTINS.len(),
        override_values().len(),
        roots_values().len(),
        stacks.len(),
        stacks.len() + 2,
        cache.len(),
    );
    assert!(holes.is_empty(), "{} cells compile libraries of another provider:\n{}", holes.len(), holes.join("\n"));
    assert!(checked > 100_000, "only {checked} cells checked");
    // Every kind of refusal the model knows occurs (`no provider requested` only in a build with
    // no provider feature, which no feature set here is), so each is exercised, not assumed.
    assert_eq!(skipped.len(), 7, "the kinds of refused cells: {skipped:?}");
    // How many of each, over the pinned cfg-expr's targets: a change says which refusal moved.
    let counts = BTreeMap::from([
        ("a FIPS override outside Linux x86_64/aarch64 gnu/musl", 5928),
        ("a FIPS provider requested with a non-FIPS one", 44),
        ("a requested provider does not build for this target_os (only_on_os)", 8496),
        ("platform-verifier roots with a provider that cannot use them", 1884),
        ("the override's provider does not build for this target_os (only_on_os)", 11388),
        ("the override's provider needs its feature where no crate asked for it (reach)", 131_020),
        ("the roots override needs its feature where no crate asked for it", 45712),
    ]);
    assert_eq!(skipped, counts, "the refused cells per kind");
    assert_eq!(checked, 139_220, "the cells checked");
}

/// The runtime's unconditional `[dependencies]` compile no native library: none of the crates
/// reachable from them in Cargo.lock (every package any feature or target could bring) is one.
#[test]
fn the_unconditional_dependencies_reach_no_native_library() {
    let lock: toml_edit::DocumentMut = workspace_file("Cargo.lock").parse().expect("Cargo.lock is TOML");
    let packages = lock["package"].as_array_of_tables().expect("[[package]]");
    let field = |p: &toml_edit::Table, key: &str| p.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
    // A lock entry's dependency: `name`, or `name version` where the name is ambiguous.
    let find = |entry: &str| -> Vec<&toml_edit::Table> {
        let mut words = entry.split_whitespace();
        let (name, version) = (words.next().unwrap_or_default(), words.next());
        packages
            .iter()
            .filter(|p| field(p, "name") == name && version.is_none_or(|v| field(p, "version") == v))
            .collect()
    };
    let runtime = manifest("runtime/Cargo.toml");
    let natives: Vec<&str> = NativeLibrary::ALL.iter().map(|l| l.crate_name()).collect();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut todo: Vec<(&toml_edit::Table, String)> = Vec::new();
    let own = find("smithy-default-tls");
    assert_eq!(own.len(), 1, "one smithy-default-tls in Cargo.lock");
    let own_deps: Vec<String> = own[0]
        .get("dependencies")
        .and_then(|d| d.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    for decl in runtime.decls.iter().filter(|d| matches!(d.scope, Scope::Always)) {
        let package = decl.krate.split('@').next().expect("a name");
        let entry = own_deps
            .iter()
            .find(|e| e.split_whitespace().next() == Some(package))
            .unwrap_or_else(|| panic!("Cargo.lock's smithy-default-tls depends on {package}"));
        for found in find(entry) {
            todo.push((found, decl.krate.clone()));
        }
    }
    let roots = todo.len();
    while let Some((package, from)) = todo.pop() {
        let (name, version) = (field(package, "name"), field(package, "version"));
        if !seen.insert((name.clone(), version)) {
            continue;
        }
        assert!(!natives.contains(&name.as_str()), "{from}, a dependency of every build, reaches {name}");
        for dep in package.get("dependencies").and_then(|d| d.as_array()).into_iter().flatten() {
            for found in find(dep.as_str().expect("a string")) {
                todo.push((found, from.clone()));
            }
        }
    }
    assert!(roots >= 10 && seen.len() > roots, "{roots} dependencies, {} packages reached", seen.len());
}

/// One class's cell as real cargo resolves it: `cargo tree` of the runtime for `triple` with
/// `features` and the override's cfgs (`CARGO_ENCODED_RUSTFLAGS`, nothing inherited), offline
/// and locked. Returns every package (`name@major`) and the runtime's direct dependencies.
fn cargo_tree_cell(triple: &str, cfgs: Cfgs, features: &BTreeSet<String>) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut flags: Vec<String> = Vec::new();
    for (key, value) in [("smithy_tls", cfgs.tls), ("smithy_tls_roots", cfgs.roots)] {
        if let Some(value) = value {
            flags.extend(["--cfg".to_owned(), format!("{key}=\"{value}\"")]);
        }
    }
    let features = features.iter().cloned().collect::<Vec<_>>().join(",");
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(workspace())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\u{1f}"))
        .args(["tree", "--offline", "--locked", "-p", "smithy-default-tls", "--target", triple])
        .args(["-e", "normal,build", "--prefix", "depth", "--format", "{p}", "--no-default-features"])
        .args(["--features", &features])
        .output()
        .expect("run cargo tree");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo tree {triple} {features}: {}", String::from_utf8_lossy(&out.stderr));
    let (mut all, mut direct) = (BTreeSet::new(), BTreeSet::new());
    for line in stdout.lines() {
        let depth_end = line.find(|c: char| !c.is_ascii_digit()).unwrap_or(line.len());
        let (depth, rest) = line.split_at(depth_end);
        let mut words = rest.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else { continue };
        let key = package_key(name, version.trim_start_matches('v'));
        if depth == "1" {
            direct.insert(key.clone());
        }
        all.insert(key);
    }
    (all, direct)
}

/// One class of cells the model tells apart: a target standing for it, the cfgs, the features,
/// and the model's graph.
struct Class {
    triple: &'static str,
    cfgs: Cfgs,
    features: BTreeSet<String>,
    graph: Graph,
}

/// The model against real cargo: for every class the model tells apart (which declarations of
/// the two manifests are active, over unix and non-unix targets, every override value and roots
/// value, and feature sets that turn each kind of provider on: a rustls one alone, every
/// non-FIPS one, the FIPS ones, rustls 0.24), `cargo tree` resolves the runtime with the same
/// cfgs and features, and the native libraries and the runtime's roots crates must be the ones
/// the model finds. A wrong row of [`ROWS`] (the hand-written crate → library table) shows here
/// as a class where they differ. Refused cells are compared too: cargo tree runs no build script.
#[test]
fn the_model_agrees_with_cargo_tree_on_every_class() {
    let runtime = manifest("runtime/Cargo.toml");
    let carrier = manifest("runtime/crypto/Cargo.toml");
    let manifests = [(RUNTIME, &runtime), (CARRIER, &carrier)];
    let sets: Vec<BTreeSet<String>> = [
        &["rustls-ring", "webpki"][..],
        &["rustls-aws-lc", "rustls-ring", "s2n-tls", "openssl", "native", "webpki", "platform-verifier"],
        &["rustls-aws-lc-fips", "s2n-tls-fips", "webpki"],
        &["experimental-rustls-024", "native"],
    ]
    .iter()
    .map(|set| set.iter().map(|f| (*f).to_owned()).collect())
    .collect();
    let mut classes: Vec<Class> = Vec::new();
    let mut seen: BTreeSet<(Vec<bool>, Vec<bool>, BTreeSet<String>)> = BTreeSet::new();
    for triple in ["x86_64-unknown-linux-gnu", "x86_64-pc-windows-msvc"] {
        let target = cfg_expr::targets::get_builtin_target_by_triple(triple).expect("builtin");
        for cfgs in override_values()
            .into_iter()
            .flat_map(|tls| roots_values().into_iter().map(move |roots| Cfgs { tls, roots }))
        {
            let active: Vec<Vec<bool>> = manifests
                .iter()
                .map(|(_, m)| m.decls.iter().map(|d| holds(&d.scope, target, cfgs)).collect())
                .collect();
            for set in &sets {
                if seen.insert((active[0].clone(), active[1].clone(), set.clone())) {
                    let graph = resolve(&manifests, set, &active);
                    classes.push(Class { triple, cfgs, features: set.clone(), graph });
                }
            }
        }
    }
    let natives: BTreeSet<&str> = NativeLibrary::ALL.iter().map(|l| l.crate_name()).collect();
    let roots_crates: BTreeSet<&str> = Roots::ALL.into_iter().map(roots_crate).chain([ROOT_CERTS]).collect();
    let name = |key: &str| key.split('@').next().unwrap_or(key).to_owned();
    // Two at a time: each `cargo tree` resolves the whole lock (a few hundred milliseconds).
    let chunks: Vec<&[Class]> = classes.chunks(classes.len().div_ceil(2)).collect();
    let differences: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    for Class { triple, cfgs, features: set, graph } in chunk.iter() {
                        let (all, direct) = cargo_tree_cell(triple, *cfgs, set);
                        let cargo_natives: BTreeSet<String> =
                            all.iter().map(|k| name(k)).filter(|n| natives.contains(n.as_str())).collect();
                        let model_natives: BTreeSet<String> =
                            native_libraries(graph).iter().map(|l| l.crate_name().to_owned()).collect();
                        let cargo_roots: BTreeSet<&String> =
                            direct.iter().filter(|k| roots_crates.contains(k.as_str())).collect();
                        let model_roots: BTreeSet<&String> =
                            graph.keys().filter(|k| roots_crates.contains(k.as_str())).collect();
                        let features = set.iter().cloned().collect::<Vec<_>>().join("+");
                        if cargo_natives != model_natives || cargo_roots != model_roots {
                            out.push(format!(
                                "{triple} {} features {features}: cargo {cargo_natives:?} roots {cargo_roots:?}, \
                                 model {model_natives:?} roots {model_roots:?}",
                                cfgs.label()
                            ));
                        }
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("cargo tree thread")).collect()
    });
    println!("override model against cargo tree: {} classes, {} differ", classes.len(), differences.len());
    assert!(classes.len() >= 100, "only {} classes", classes.len());
    assert!(differences.is_empty(), "the model and cargo disagree:\n{}", differences.join("\n"));
}
