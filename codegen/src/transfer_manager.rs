//! The S3 transfer manager (`aws-sdk-s3-transfer-manager`): which transport serves its requests
//! on each rule's targets.
//!
//! Its managed runtime brings its own transport, aws-smithy-http-client's partitioned connection
//! pool, whose TLS provider the crate writes in code (rustls with aws-lc). The generator gives
//! that pool the policy's provider where the pool has it and serves it as well as the default
//! client: rustls with aws-lc or ring, each with the operating system's trust store. Elsewhere
//! the transport stays off and the transfer manager's S3 client sends its requests through the
//! policy's default client, which serves every stack: s2n-tls included, which the pool has but
//! runs at more CPU per byte (docs/BENCHMARKS.md, "The S3 transfer manager"). The application's
//! `--cfg smithy_tls` or `smithy_tls_roots` turns the transport off too: the default client
//! follows the override.

use crate::cfg::Cfg;
use crate::model::{CompiledPolicy, EmptyStore, Provider, Roots, Stack, TlsOverride};

/// The transfer manager's package name.
pub const PACKAGE: &str = "aws-sdk-s3-transfer-manager";

/// The package of the transfer manager's own transport, whose features pick its TLS provider.
pub const TRANSPORT_PACKAGE: &str = "aws-smithy-http-client";

/// A TLS provider the transfer manager's connection pool serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PoolTls {
    /// rustls with aws-lc-rs (`Provider::Rustls(CryptoMode::AwsLc)`).
    RustlsAwsLc,
    /// rustls with ring (`Provider::Rustls(CryptoMode::Ring)`).
    RustlsRing,
}

impl PoolTls {
    /// The transport crate's feature that compiles this provider.
    pub fn feature(self) -> &'static str {
        match self {
            PoolTls::RustlsAwsLc => "rustls-aws-lc",
            PoolTls::RustlsRing => "rustls-ring",
        }
    }

    /// The transport crate's `tls::Provider` value for it, as Rust.
    pub fn expression(self) -> &'static str {
        match self {
            PoolTls::RustlsAwsLc => "Provider::Rustls(CryptoMode::AwsLc)",
            PoolTls::RustlsRing => "Provider::Rustls(CryptoMode::Ring)",
        }
    }

    /// The policy's provider it is.
    pub fn provider(self) -> Provider {
        match self {
            PoolTls::RustlsAwsLc => Provider::RustlsAwsLc,
            PoolTls::RustlsRing => Provider::RustlsRing,
        }
    }
}

/// The transport crate's TLS features: the transfer manager's own dependency loses them, and each
/// rule the pool serves gets one back on its targets.
pub const TLS_FEATURES: [&str; 4] = ["rustls-aws-lc", "rustls-ring", "rustls-aws-lc-fips", "s2n-tls"];

/// The transport crate's feature that holds the pool without any TLS provider.
pub const POOL_FEATURE: &str = "default-client";

/// Why the transfer manager's requests go through the S3 client's HTTP client on a rule's targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "reason")]
pub enum SdkClientReason {
    /// The rule gives the targets no client (`none`) or the host's (`wasi-http`).
    NoTlsProvider,
    /// The pool has no such provider (the FIPS ones, openssl, rustls-custom).
    Provider {
        /// The rule's provider.
        provider: Provider,
    },
    /// The pool has the provider (s2n-tls) but spends more CPU per byte with it than the
    /// default client does, and downloads no faster.
    CostlierInPool {
        /// The rule's provider.
        provider: Provider,
    },
    /// The pool reads only the operating system's store.
    Roots {
        /// The rule's roots.
        roots: Roots,
    },
    /// The pool has no fallback for an empty store (`empty-store = "webpki"`).
    EmptyStoreFallback,
}

impl std::fmt::Display for SdkClientReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SdkClientReason::NoTlsProvider => f.write_str("no TLS provider"),
            SdkClientReason::Provider { provider } => write!(f, "the pool has no {provider}"),
            SdkClientReason::CostlierInPool { provider } => {
                write!(f, "the pool's {provider} costs more CPU per byte")
            }
            SdkClientReason::Roots { roots } => write!(f, "the pool cannot use {} roots", roots.name()),
            SdkClientReason::EmptyStoreFallback => f.write_str("the pool has no fallback for an empty store"),
        }
    }
}

/// What serves the transfer manager's requests on a rule's targets, with no override set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "transport")]
pub enum Transport {
    /// Its own connection pool, with this provider and the operating system's trust store (but
    /// the S3 client's HTTP client wherever `AWS_CA_BUNDLE` is set: the pool does not read it).
    Pool {
        /// The pool's provider.
        tls: PoolTls,
    },
    /// The S3 client's HTTP client: the policy's default client.
    SdkClient {
        /// Why.
        #[serde(flatten)]
        why: SdkClientReason,
    },
}

impl Transport {
    /// What serves the transfer manager where a rule's stack is `stack`.
    ///
    /// ```
    /// use smithy_tls_codegen::model::{EmptyStore, Provider, Roots, Stack};
    /// use smithy_tls_codegen::transfer_manager::{PoolTls, Transport};
    /// let aws_lc = Stack::Tls { provider: Provider::RustlsAwsLc, roots: Roots::Native, empty_store: EmptyStore::Fail };
    /// assert_eq!(Transport::of(aws_lc), Transport::Pool { tls: PoolTls::RustlsAwsLc });
    /// let s2n = Stack::Tls { provider: Provider::S2nTls, roots: Roots::Native, empty_store: EmptyStore::Fail };
    /// assert!(matches!(Transport::of(s2n), Transport::SdkClient { .. }));
    /// let webpki = Stack::Tls { provider: Provider::RustlsRing, roots: Roots::Webpki, empty_store: EmptyStore::Fail };
    /// assert!(matches!(Transport::of(webpki), Transport::SdkClient { .. }));
    /// ```
    pub fn of(stack: Stack) -> Transport {
        let why = match stack {
            Stack::None | Stack::WasiHttp => SdkClientReason::NoTlsProvider,
            Stack::Tls { provider, roots, empty_store } => {
                let tls = match provider {
                    Provider::RustlsAwsLc => PoolTls::RustlsAwsLc,
                    Provider::RustlsRing => PoolTls::RustlsRing,
                    Provider::S2nTls => {
                        return Transport::SdkClient { why: SdkClientReason::CostlierInPool { provider } }
                    }
                    Provider::RustlsAwsLcFips | Provider::S2nTlsFips | Provider::OpenSsl | Provider::RustlsCustom => {
                        return Transport::SdkClient { why: SdkClientReason::Provider { provider } }
                    }
                };
                match (roots, empty_store) {
                    (Roots::Native, EmptyStore::Fail) => return Transport::Pool { tls },
                    (Roots::Native, EmptyStore::Webpki) => SdkClientReason::EmptyStoreFallback,
                    (Roots::Webpki | Roots::PlatformVerifier, _) => SdkClientReason::Roots { roots },
                }
            }
        };
        Transport::SdkClient { why }
    }

    /// In words, for people.
    pub fn describe(self) -> String {
        match self {
            Transport::Pool { tls } => format!("its own pool, {}", tls.provider()),
            Transport::SdkClient { why } => format!("the S3 client's HTTP client ({why})"),
        }
    }
}

/// The targets whose transfer manager runs its own pool with one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolTable {
    /// The provider.
    pub tls: PoolTls,
    /// Where the policy gives it (one manifest table's predicate), without the override clause.
    pub targets: Cfg,
    /// The names of the rules it serves, in policy order.
    pub rules: Vec<String>,
}

impl PoolTable {
    /// The manifest table's predicate: [`targets`](Self::targets) with no override set.
    pub fn cfg(&self) -> String {
        match &self.targets {
            Cfg::All(parts) if parts.is_empty() => format!("all({})", no_override()),
            Cfg::All(parts) => {
                let parts: Vec<String> = parts.iter().map(ToString::to_string).collect();
                format!("all({}, {})", parts.join(", "), no_override())
            }
            targets => format!("all({targets}, {})", no_override()),
        }
    }
}

/// The pool's tables of a compiled policy, one per provider, in policy order.
pub fn pool_tables(compiled: &CompiledPolicy) -> Vec<PoolTable> {
    crate::compile::manifest_tables(compiled)
        .into_iter()
        .filter_map(|(targets, stack)| {
            let Transport::Pool { tls } = Transport::of(stack) else { return None };
            let rules =
                compiled.rules.iter().filter(|rule| rule.stack == stack).map(|rule| rule.name.clone()).collect();
            Some(PoolTable { tls, targets, rules })
        })
        .collect()
}

/// The override values, as meta-item leaves (`smithy_tls = "openssl"`): every value of the
/// application's two override cfgs.
pub fn override_leaves() -> Vec<String> {
    let providers = TlsOverride::ALL.into_iter().map(|value| format!("smithy_tls = \"{}\"", value.name()));
    let roots = Roots::ALL.into_iter().map(|roots| format!("smithy_tls_roots = \"{}\"", roots.name()));
    providers.chain(roots).collect()
}

/// `not(any(..))` of [`override_leaves`]: true where the application sets neither cfg.
pub fn no_override() -> String {
    format!("not(any({}))", override_leaves().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(preset: &str) -> CompiledPolicy {
        let parsed = crate::policy::parse_policy(crate::presets::preset(preset).unwrap()).unwrap();
        crate::compile::compile(&parsed).unwrap()
    }

    #[test]
    fn platform_default_runs_the_pool_where_its_stack_is_one_the_pool_has() {
        let tables = pool_tables(&compiled("platform-default"));
        let found: Vec<(PoolTls, Vec<String>)> = tables.iter().map(|t| (t.tls, t.rules.clone())).collect();
        assert_eq!(found, [(PoolTls::RustlsAwsLc, vec!["elsewhere".to_owned()])]);
        assert!(tables[0].cfg().ends_with(r#"smithy_tls_roots = "platform-verifier")))"#), "{}", tables[0].cfg());
    }

    #[test]
    fn fips_leaves_the_pool_off_everywhere() {
        assert_eq!(pool_tables(&compiled("fips")), []);
    }

    #[test]
    fn no_override_names_every_value_of_both_cfgs() {
        assert_eq!(override_leaves().len(), TlsOverride::ALL.len() + Roots::ALL.len());
        assert!(no_override().contains(r#"smithy_tls = "none", smithy_tls_roots = "native""#));
    }
}
