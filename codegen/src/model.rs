//! The policy model shared by every step: what a policy says, once parsed and validated.

use std::fmt;
use std::ops::Range;

use crate::cfg::Cfg;

// The provider table the runtime crate keeps (its `src/provider/facts.rs`, through this package's
// link to the runtime's sources): names, runtime variants, roots and FIPS come from there.
#[allow(dead_code)] // the runtime and its build script read other columns
pub(crate) mod facts {
    include!("../runtime/src/provider/facts.rs");
}

/// A TLS provider a policy can pick for a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema)]
pub enum Provider {
    /// rustls with aws-lc-rs.
    #[serde(rename = "rustls-aws-lc")]
    RustlsAwsLc,
    /// rustls with ring.
    #[serde(rename = "rustls-ring")]
    RustlsRing,
    /// s2n-tls (Linux and macOS only).
    #[serde(rename = "s2n-tls")]
    S2nTls,
    /// rustls with the FIPS build of aws-lc-rs (Linux x86_64 and aarch64; a build with it holds
    /// no non-FIPS provider).
    #[serde(rename = "rustls-aws-lc-fips")]
    RustlsAwsLcFips,
    /// s2n-tls with the FIPS build of aws-lc (Linux x86_64 and aarch64; a build with it holds no
    /// non-FIPS provider).
    #[serde(rename = "s2n-tls-fips")]
    S2nTlsFips,
    /// The operating system's OpenSSL (Linux, FreeBSD, NetBSD): the distro's crypto policy and,
    /// where the system runs it, its FIPS module apply.
    #[serde(rename = "openssl")]
    OpenSsl,
    /// rustls with the application's own `CryptoProvider` (installed process-wide, or handed to
    /// the runtime's `set_custom_crypto_provider`): no crypto library is compiled for it.
    #[serde(rename = "rustls-custom")]
    RustlsCustom,
}

impl Provider {
    /// Every provider, in policy-file spelling order.
    pub const ALL: [Provider; 7] = [
        Provider::RustlsAwsLc,
        Provider::RustlsRing,
        Provider::S2nTls,
        Provider::RustlsAwsLcFips,
        Provider::S2nTlsFips,
        Provider::OpenSsl,
        Provider::RustlsCustom,
    ];

    /// The spelling used in policy files and as the runtime crate's cargo feature.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// Parses a policy-file spelling.
    pub fn from_name(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The runtime crate's `TlsProvider` variant.
    pub fn runtime_variant(self) -> &'static str {
        self.facts().variant
    }

    /// What it is, in one sentence (a report's description of a stack with it).
    pub fn summary(self) -> &'static str {
        self.facts().summary
    }

    /// Whether this provider can use `roots` (s2n-tls and OpenSSL read the system store
    /// themselves and have no platform verifier). The runtime crate decides from the same table.
    pub fn supports_roots(self, roots: Roots) -> bool {
        roots != Roots::PlatformVerifier || self.facts().platform_verifier()
    }

    /// Whether it brings its cryptography: `rustls-custom` needs the application's, so it is
    /// never suggested in another provider's place.
    pub fn brings_crypto(self) -> bool {
        self.facts().brings_crypto()
    }

    /// Whether a build with it is a FIPS build, which holds no non-FIPS provider.
    pub fn is_fips(self) -> bool {
        self.facts().fips()
    }

    /// The only `target_os` values the runtime builds it for; empty: wherever its libraries build.
    pub fn only_on_os(self) -> &'static [&'static str] {
        self.facts().only_on_os
    }

    /// Whether the application's `--cfg smithy_tls` override to this provider needs the
    /// runtime's feature of the same name on a target whose rule gives `rule_provider`: its
    /// crates are optional, in an application's lock only where some crate asks for them.
    pub fn override_needs_feature(self, rule_provider: Provider) -> bool {
        !self.facts().reached_by([rule_provider.facts()])
    }

    /// Its row in the runtime's provider table, which lists providers in this enum's order.
    pub(crate) fn facts(self) -> &'static facts::ProviderFacts {
        &facts::PROVIDERS[self as usize]
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A value of the application's override, `--cfg smithy_tls="VALUE"` in its RUSTFLAGS (or
/// `[build] rustflags`): a provider, which replaces the one every generated crate asked for, or
/// `none`, which compiles no TLS library at all. The runtime's build script (runtime/build.rs)
/// accepts exactly these values.
///
/// ```
/// use smithy_tls_codegen::model::{Provider, TlsOverride};
/// assert_eq!(TlsOverride::from_name("rustls-ring"), Some(TlsOverride::Provider(Provider::RustlsRing)));
/// assert_eq!(TlsOverride::from_name("none"), Some(TlsOverride::NoTls));
/// assert_eq!(TlsOverride::ALL.last().unwrap().name(), "none");
/// assert_eq!(TlsOverride::NoTls.to_string(), "--cfg smithy_tls=\"none\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TlsOverride {
    /// This provider, whatever the generated crates asked for.
    Provider(Provider),
    /// `none`: no TLS stack; the default client fails every request.
    NoTls,
}

impl TlsOverride {
    /// Every value, in policy-file spelling order, `none` last.
    pub const ALL: [TlsOverride; Provider::ALL.len() + 1] = {
        let mut all = [TlsOverride::NoTls; Provider::ALL.len() + 1];
        let mut i = 0;
        while i < Provider::ALL.len() {
            all[i] = TlsOverride::Provider(Provider::ALL[i]);
            i += 1;
        }
        all
    };

    /// The cfg's value.
    pub fn name(self) -> &'static str {
        match self {
            TlsOverride::Provider(provider) => provider.name(),
            TlsOverride::NoTls => Stack::NONE,
        }
    }

    /// Parses the cfg's value.
    pub fn from_name(name: &str) -> Option<TlsOverride> {
        TlsOverride::ALL.into_iter().find(|v| v.name() == name)
    }

    /// What the value compiles, in one sentence (`--help`, the JSON Schema).
    pub fn summary(self) -> &'static str {
        match self {
            TlsOverride::Provider(provider) => provider.summary(),
            TlsOverride::NoTls => "No TLS stack: the default client fails every request.",
        }
    }

    /// The provider, `None` for `none`.
    pub fn provider(self) -> Option<Provider> {
        match self {
            TlsOverride::Provider(provider) => Some(provider),
            TlsOverride::NoTls => None,
        }
    }
}

/// The flag as the application writes it: `--cfg smithy_tls="VALUE"`.
impl fmt::Display for TlsOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--cfg smithy_tls=\"{}\"", self.name())
    }
}

impl serde::Serialize for TlsOverride {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl schemars::JsonSchema for TlsOverride {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TlsOverride".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = TlsOverride::ALL.iter().map(|v| v.name()).collect();
        schemars::json_schema!({
            "description": "A value of the application's `--cfg smithy_tls`: a provider, which replaces the one \
                            every generated crate asked for, or `none` (no TLS stack).",
            "enum": names,
            "type": "string",
        })
    }
}

/// Where a client's trusted roots come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema)]
pub enum Roots {
    /// The operating system store.
    #[serde(rename = "native")]
    Native,
    /// The bundled Mozilla roots.
    #[serde(rename = "webpki")]
    Webpki,
    /// The platform's own certificate verifier (rustls providers only; not on Android).
    #[serde(rename = "platform-verifier")]
    PlatformVerifier,
}

impl Roots {
    /// Every roots choice, in policy-file spelling order.
    pub const ALL: [Roots; 3] = [Roots::Native, Roots::Webpki, Roots::PlatformVerifier];

    /// The spelling used in policy files and as the runtime crate's cargo feature.
    pub fn name(self) -> &'static str {
        match self {
            Roots::Native => "native",
            Roots::Webpki => "webpki",
            Roots::PlatformVerifier => "platform-verifier",
        }
    }

    /// Parses a policy-file spelling.
    pub fn from_name(name: &str) -> Option<Roots> {
        Roots::ALL.into_iter().find(|r| r.name() == name)
    }

    /// What the roots mean at run time, in one line (for `explain`).
    pub fn meaning(self) -> &'static str {
        match self {
            Roots::Native => "the operating system's trust store, read at start-up (keychain on macOS, the certificate store on Windows, the PEM bundle elsewhere; SSL_CERT_FILE/SSL_CERT_DIR override)",
            Roots::Webpki => "Mozilla's root certificates compiled into the binary (webpki-roots): nothing read at start-up, updated with the crate",
            Roots::PlatformVerifier => "the operating system verifies each certificate chain (Security.framework on Apple systems, CryptoAPI on Windows: nothing loaded at start-up, trusts what the OS trusts; on Linux and other Unix systems webpki over the native store, read at start-up)",
        }
    }

    /// The runtime crate's `TrustRoots` variant.
    pub fn runtime_variant(self) -> &'static str {
        match self {
            Roots::Native => "Native",
            Roots::Webpki => "Webpki",
            Roots::PlatformVerifier => "PlatformVerifier",
        }
    }
}

impl fmt::Display for Roots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a client with `native` roots does where the operating system store yields no
/// certificate (an image without a CA bundle, an empty or unreadable `SSL_CERT_FILE`): the
/// rule's `empty-store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EmptyStore {
    /// Every connection fails, with an error saying the store is empty (the default).
    #[default]
    Fail,
    /// The bundled Mozilla roots (webpki) stand in for the store, with a warning at run time.
    Webpki,
}

impl EmptyStore {
    /// Every choice, in policy-file spelling order.
    pub const ALL: [EmptyStore; 2] = [EmptyStore::Fail, EmptyStore::Webpki];

    /// The spelling used in policy files.
    pub fn name(self) -> &'static str {
        match self {
            EmptyStore::Fail => "fail",
            EmptyStore::Webpki => "webpki",
        }
    }

    /// Parses a policy-file spelling.
    pub fn from_name(name: &str) -> Option<EmptyStore> {
        EmptyStore::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether this is the default, [`EmptyStore::Fail`] (reports leave it out).
    pub fn is_fail(&self) -> bool {
        *self == EmptyStore::Fail
    }

    /// What it means at run time, in one line (for `explain`).
    pub fn meaning(self) -> &'static str {
        match self {
            EmptyStore::Fail => "where the native store yields no certificate, every connection fails saying so",
            EmptyStore::Webpki => "where the native store yields no certificate (no CA bundle in the image, an empty or unreadable SSL_CERT_FILE/SSL_CERT_DIR), Mozilla's bundled roots (webpki) are used instead, with a warning; the runtime's TrustRoots::NativeOrWebpki",
        }
    }
}

impl fmt::Display for EmptyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to do with a generated crate's legacy `rustls` feature (which upstream maps to the
/// hyper 0.14 client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LegacyRustls {
    /// Leave the feature as generated.
    Keep,
    /// Make `rustls` a synonym of `default-https-client`, so the legacy stack is not compiled.
    AliasDefault,
}

/// How generated crates depend on the runtime crate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuntimeDependency {
    /// The package name (normally `smithy-default-tls`).
    pub package: String,
    /// The version requirement written into manifests.
    pub version: String,
    /// A path relative to the SDK root, for trees that keep runtime crates side by side.
    pub path: Option<String>,
}

/// What a policy gives a target: a TLS stack, or no default client at all.
///
/// Serialized as the policy file spells it: `provider` and `roots` (`"none"` and `null`), and
/// `empty-store` when it is not the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stack {
    /// No default client on the target: users supply their own (`provider = "none"`).
    None,
    /// The host's HTTP on `wasm32-wasip2` (`provider = "wasi-http"`): requests go through
    /// `wasi:http/outgoing-handler`, so the host makes the connections, runs TLS and verifies with
    /// its own trust store. Served by the `smithy-wasi-http` crate, not by the runtime crate.
    WasiHttp,
    /// A TLS provider with its trust roots.
    Tls {
        /// The provider.
        provider: Provider,
        /// Where its trusted roots come from.
        roots: Roots,
        /// What `native` roots do where the store is empty ([`EmptyStore::Fail`] for the other
        /// roots: the policy refuses `empty-store` with them).
        empty_store: EmptyStore,
    },
}

impl Stack {
    /// The spelling of [`Stack::None`] in policy files.
    pub const NONE: &'static str = "none";

    /// The spelling of [`Stack::WasiHttp`] in policy files.
    pub const WASI_HTTP: &'static str = "wasi-http";

    /// The provider's spelling in policy files (`none` for [`Stack::None`], `wasi-http` for
    /// [`Stack::WasiHttp`]).
    pub fn provider_name(self) -> &'static str {
        match self {
            Stack::None => Stack::NONE,
            Stack::WasiHttp => Stack::WASI_HTTP,
            Stack::Tls { provider, .. } => provider.name(),
        }
    }

    /// Whether the target gets a default client: a TLS stack of the runtime crate, or the host's.
    pub fn has_client(self) -> bool {
        self != Stack::None
    }

    /// The roots' spelling, `-` for [`Stack::None`] and `host` for [`Stack::WasiHttp`] (for
    /// tables); `native, else webpki` for `native` roots with `empty-store = "webpki"`.
    pub fn roots_name(self) -> &'static str {
        match self {
            Stack::None => "-",
            Stack::WasiHttp => "host",
            Stack::Tls { roots: Roots::Native, empty_store: EmptyStore::Webpki, .. } => "native, else webpki",
            Stack::Tls { roots, .. } => roots.name(),
        }
    }

    /// What the empty store does, [`EmptyStore::Fail`] for [`Stack::None`].
    pub fn empty_store(self) -> EmptyStore {
        match self {
            Stack::None | Stack::WasiHttp => EmptyStore::Fail,
            Stack::Tls { empty_store, .. } => empty_store,
        }
    }

    /// The runtime crate's `TrustRoots` variant for this stack (`NativeOrWebpki` for `native`
    /// roots with the webpki fallback), `None` for [`Stack::None`] and [`Stack::WasiHttp`].
    pub fn runtime_roots_variant(self) -> Option<&'static str> {
        match self {
            Stack::None | Stack::WasiHttp => None,
            Stack::Tls { roots: Roots::Native, empty_store: EmptyStore::Webpki, .. } => Some("NativeOrWebpki"),
            Stack::Tls { roots, .. } => Some(roots.runtime_variant()),
        }
    }

    /// The runtime crate's features this stack needs: the provider's and the roots' (and
    /// `webpki` too for the fallback), empty for [`Stack::None`] and [`Stack::WasiHttp`].
    pub fn runtime_features(self) -> Vec<&'static str> {
        match self {
            Stack::None | Stack::WasiHttp => Vec::new(),
            Stack::Tls { provider, roots, empty_store } => {
                let mut features = vec![provider.name(), roots.name()];
                if empty_store == EmptyStore::Webpki && roots != Roots::Webpki {
                    features.push(Roots::Webpki.name());
                }
                features
            }
        }
    }

    /// The runtime crate's TLS provider, if the stack has one.
    pub fn provider(self) -> Option<Provider> {
        match self {
            Stack::None | Stack::WasiHttp => None,
            Stack::Tls { provider, .. } => Some(provider),
        }
    }

    /// The roots the runtime crate reads, if the stack has them.
    pub fn roots(self) -> Option<Roots> {
        match self {
            Stack::None | Stack::WasiHttp => None,
            Stack::Tls { roots, .. } => Some(roots),
        }
    }
}

impl serde::Serialize for Stack {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let fallback = !self.empty_store().is_fail();
        let mut map = serializer.serialize_map(Some(2 + usize::from(fallback)))?;
        map.serialize_entry("provider", self.provider_name())?;
        map.serialize_entry("roots", &self.roots())?;
        if fallback {
            map.serialize_entry("empty-store", &self.empty_store())?;
        }
        map.end()
    }
}

/// Which targets a rule is written for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A `[[rule]]`: the targets its cfg predicate matches (and no earlier rule did).
    When(Cfg),
    /// The `[fallback]`: every target no rule matches.
    Fallback,
}

impl Scope {
    /// The rule's own predicate; `None` for the fallback.
    pub fn cfg(&self) -> Option<&Cfg> {
        match self {
            Scope::When(cfg) => Some(cfg),
            Scope::Fallback => None,
        }
    }
}

impl serde::Serialize for Scope {
    /// The predicate's text, `null` for the fallback.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.cfg().serialize(serializer)
    }
}

/// Where a rule's parts sit in its policy file, for diagnostics raised after parsing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleSpans {
    /// The whole `[[rule]]` / `[fallback]` table.
    pub table: Range<usize>,
    /// The `cfg` value.
    pub cfg: Option<Range<usize>>,
    /// The `provider` value.
    pub provider: Option<Range<usize>>,
    /// The `roots` value.
    pub roots: Option<Range<usize>>,
    /// The `empty-store` value.
    pub empty_store: Option<Range<usize>>,
}

/// One row of the policy: the first rule whose `cfg` matches a target decides its stack.
///
/// Two rules are equal when they say the same (name, scope, stack), wherever they were written.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rule {
    /// A short name for reports (unique within the policy).
    pub name: String,
    /// Which targets it is for (serialized as `cfg`: the predicate, or `null` for the fallback).
    #[serde(rename = "cfg")]
    pub scope: Scope,
    /// What those targets get.
    #[serde(flatten)]
    pub stack: Stack,
    /// Why the rule chose that stack, in the policy author's words (`note`): `explain` shows it
    /// for every target the rule serves. Commentary: it changes nothing generated, and two rules
    /// that differ only in it are equal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where it was written (the default for rules built in code).
    #[serde(skip)]
    pub spans: RuleSpans,
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        (&self.name, &self.scope, self.stack) == (&other.name, &other.scope, other.stack)
    }
}

impl Eq for Rule {}

/// A parsed, validated policy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Policy {
    /// The policy's name (shown in generated headers).
    pub name: String,
    /// What the policy says it is for (`description`; shown by `smithy-tls presets`).
    pub description: Option<String>,
    /// How generated crates depend on the runtime crate.
    pub runtime: RuntimeDependency,
    /// What to do with the legacy `rustls` feature.
    pub legacy_rustls: LegacyRustls,
    /// Ordered rules; the first match wins.
    pub rules: Vec<Rule>,
    /// The rule for targets no other rule matches (its scope is [`Scope::Fallback`]).
    pub fallback: Rule,
    /// Hex SHA-256 of the policy file's bytes (in the JSON reports; generated headers hash what
    /// the policy means instead, so comments in it do not churn generated files).
    pub content_hash: String,
}

impl Policy {
    /// Every rule in order, the fallback last.
    pub fn all_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().chain(std::iter::once(&self.fallback))
    }

    /// The rule that serves `target`: the first whose own cfg matches it, else the fallback.
    ///
    /// ```
    /// use smithy_tls_codegen::{policy, presets};
    /// let parsed = policy::parse_policy(presets::preset("platform-default").unwrap()).unwrap();
    /// let arm = cfg_expr::targets::get_builtin_target_by_triple("aarch64-unknown-linux-gnu").unwrap();
    /// assert_eq!(parsed.policy.rule_for(arm).name, "linux-gnu");
    /// ```
    pub fn rule_for(&self, target: &cfg_expr::targets::TargetInfo) -> &Rule {
        let matching = self.rules.iter().find(|rule| rule.scope.cfg().is_none_or(|cfg| cfg.matches(target)));
        matching.unwrap_or(&self.fallback)
    }
}

/// A rule compiled against the ones before it: its predicate matches exactly the targets for
/// which it is the first match, so the compiled predicates are mutually exclusive.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CompiledRule {
    /// The rule's name.
    pub name: String,
    /// The exclusive predicate, e.g. `all(target_os = "linux", not(target_family = "wasm"))`.
    pub predicate: Cfg,
    /// What the targets it serves get.
    #[serde(flatten)]
    pub stack: Stack,
    /// The builtin rustc targets this rule serves, sorted.
    pub targets: Vec<String>,
}

/// A policy compiled into exclusive rules (the fallback last), with its target matrix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CompiledPolicy {
    /// The policy it came from.
    pub policy: Policy,
    /// One entry per rule plus the fallback, in policy order; predicates are mutually exclusive
    /// and together cover every target.
    pub rules: Vec<CompiledRule>,
}

/// Whether aws-lc's FIPS module builds as a static library for a target with these `target_os`,
/// `target_arch` and `target_env` values (the runtime's provider table; the FIPS providers' only
/// targets, with little-endian 64-bit pointers).
///
/// ```
/// assert!(smithy_tls_codegen::model::fips_module_builds("linux", "aarch64", "musl"));
/// assert!(!smithy_tls_codegen::model::fips_module_builds("macos", "aarch64", ""));
/// ```
pub fn fips_module_builds(os: &str, arch: &str, env: &str) -> bool {
    facts::FIPS_MODULE_TARGETS.contains(os, arch, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_is_its_row_in_the_runtime_table() {
        assert_eq!(Provider::ALL.len(), facts::PROVIDERS.len());
        for provider in Provider::ALL {
            assert_eq!(format!("{provider:?}"), provider.runtime_variant());
            assert_eq!(serde_json::to_value(provider).unwrap(), provider.name());
        }
    }
}
