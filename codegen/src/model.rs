//! The policy model shared by every step: what a policy says, once parsed and validated.

use std::fmt;

/// A TLS provider a policy can pick for a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// rustls with aws-lc-rs.
    RustlsAwsLc,
    /// rustls with ring.
    RustlsRing,
    /// s2n-tls (Linux and macOS only).
    S2nTls,
    /// No default client on the target: users supply their own.
    None,
}

impl Provider {
    /// Every provider, in policy-file spelling order.
    pub const ALL: [Provider; 4] = [Provider::RustlsAwsLc, Provider::RustlsRing, Provider::S2nTls, Provider::None];

    /// The spelling used in policy files and as the runtime crate's cargo feature.
    pub fn name(self) -> &'static str {
        match self {
            Provider::RustlsAwsLc => "rustls-aws-lc",
            Provider::RustlsRing => "rustls-ring",
            Provider::S2nTls => "s2n-tls",
            Provider::None => "none",
        }
    }

    /// Parses a policy-file spelling.
    pub fn from_name(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The runtime crate's `TlsProvider` variant, or `None` for [`Provider::None`].
    pub fn runtime_variant(self) -> Option<&'static str> {
        match self {
            Provider::RustlsAwsLc => Some("RustlsAwsLc"),
            Provider::RustlsRing => Some("RustlsRing"),
            Provider::S2nTls => Some("S2nTls"),
            Provider::None => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a client's trusted roots come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Roots {
    /// The operating system store.
    Native,
    /// The bundled Mozilla roots.
    Webpki,
    /// The platform's own certificate verifier (rustls providers only; not on Android).
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

/// One row of the policy: the first rule whose `cfg` matches a target decides its stack.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rule {
    /// A short name for reports (unique within the policy).
    pub name: String,
    /// The cfg predicate as written, without the surrounding `cfg(...)`, e.g.
    /// `all(target_os = "linux", target_env = "gnu")`. The fallback's is `None`.
    pub cfg: Option<String>,
    /// The provider picked by this rule.
    pub provider: Provider,
    /// The trust roots; `None` exactly when `provider` is [`Provider::None`].
    pub roots: Option<Roots>,
}

/// A parsed, validated policy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Policy {
    /// The policy's name (shown in generated headers).
    pub name: String,
    /// How generated crates depend on the runtime crate.
    pub runtime: RuntimeDependency,
    /// What to do with the legacy `rustls` feature.
    pub legacy_rustls: LegacyRustls,
    /// Ordered rules; the first match wins.
    pub rules: Vec<Rule>,
    /// The rule for targets no other rule matches (its `cfg` is `None`).
    pub fallback: Rule,
    /// Hex SHA-256 of the policy file's bytes (shown in generated headers).
    pub content_hash: String,
}

/// A rule compiled against the ones before it: its predicate matches exactly the targets for
/// which it is the first match, so the compiled predicates are mutually exclusive.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CompiledRule {
    /// The rule's name.
    pub name: String,
    /// The exclusive predicate, without the surrounding `cfg(...)`, e.g.
    /// `all(target_os = "linux", not(target_family = "wasm"))`. Deterministic text.
    pub predicate: String,
    /// The provider.
    pub provider: Provider,
    /// The trust roots (`None` for [`Provider::None`]).
    pub roots: Option<Roots>,
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
