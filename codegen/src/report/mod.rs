//! What each command reports: one serializable type per command, built once from what the
//! command did, then printed either as one JSON document (`--format json`) or for people
//! ([`human`]). The JSON shape is versioned by [`SCHEMA_VERSION`] and described by the JSON
//! Schema that `smithy-tls schema` prints (kept in docs/report.schema.json, which a test
//! compares with it and validates every command's output against).

pub mod human;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use crate::diag::Diagnostic;
use crate::discover::SkippedCrate;
use crate::model::{EmptyStore, Provider, Roots, Stack, TlsOverride};
use crate::native_build::{BuildTool, LibraryBuild, RuleToolNeed};
use crate::plan::CratePlan;

/// The version of the JSON documents' shape. It changes when a field is removed, renamed or
/// changes meaning; new fields may appear without a change.
pub const SCHEMA_VERSION: u32 = 1;

/// One JSON document, as `--format json` prints it on stdout.
///
/// ```
/// use smithy_tls_codegen::report::{Document, Outcome, PresetsReport, Report};
/// let doc = Document::new(Report::Presets(Outcome::Ok(PresetsReport { presets: vec![] })));
/// let json = serde_json::to_value(&doc).unwrap();
/// assert_eq!(json["schema_version"], 1);
/// assert_eq!(json["command"], "presets");
/// assert_eq!(json["status"], "ok");
/// ```
#[derive(Debug, Serialize, JsonSchema)]
pub struct Document {
    /// [`SCHEMA_VERSION`]: the shape of this document.
    pub schema_version: u32,
    /// Which command ran, and what it reports.
    #[serde(flatten)]
    pub report: Report,
}

impl Document {
    /// Wraps `report` with the current schema version.
    pub fn new(report: Report) -> Document {
        Document { schema_version: SCHEMA_VERSION, report }
    }

    /// The JSON Schema of every document the tool prints (draft 2020-12).
    pub fn json_schema() -> serde_json::Value {
        schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<Document>()
            .to_value()
    }
}

/// What one command reports: `command` names it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum Report {
    /// `smithy-tls apply`.
    Apply(Outcome<RewriteReport>),
    /// `smithy-tls check`.
    Check(Outcome<RewriteReport>),
    /// `smithy-tls diff`.
    Diff(Outcome<RewriteReport>),
    /// `smithy-tls revert`.
    Revert(Outcome<RewriteReport>),
    /// `smithy-tls explain`.
    Explain(Outcome<ExplainReport>),
    /// `smithy-tls presets`.
    Presets(Outcome<PresetsReport>),
}

/// Whether the command did its job (`status`: `ok`), or why not (`error`).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome<T> {
    /// It did: what it did.
    Ok(T),
    /// It could not: nothing was written.
    Error(FailureReport),
}

/// Why a command failed. Nothing was written.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FailureReport {
    /// What failed, in one sentence.
    pub message: String,
    /// The problems found in the input, each with a code, its file and (when it has one) its
    /// place; empty when the failure is not about a file's content.
    pub diagnostics: Vec<Diagnostic>,
}

/// The policy a command used.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PolicyStamp {
    /// Its name.
    pub name: String,
    /// Hex SHA-256 of the policy file's bytes (the generated files' headers hash what the
    /// policy means instead).
    pub sha256: String,
}

/// What `apply`, `check`, `diff` or `revert` did to the trees it was given.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RewriteReport {
    /// The policy (for `revert`, the one named on the command line; it only names the runtime).
    pub policy: PolicyStamp,
    /// Every tree, in command-line order.
    pub trees: Vec<TreeReport>,
    /// Counts over every tree.
    pub summary: RewriteSummary,
    /// `check` and `diff`: the unified diff of every change (empty when up to date);
    /// `apply` and `revert`: `null`.
    pub diff: Option<String>,
}

/// Counts over every tree of one run.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct RewriteSummary {
    /// Crates wired (or, for `revert`, looked at).
    pub wired_crates: usize,
    /// Crates with at least one file that changes.
    pub changed_crates: usize,
    /// Files that change (or would, for `check` and `diff`).
    pub changed_files: usize,
    /// Files written (`apply` and `revert`; 0 for `check` and `diff`).
    pub written_files: usize,
    /// Crates left alone.
    pub skipped_crates: usize,
    /// Of those, crates that look like generated clients but cannot be wired.
    pub unsupported_crates: usize,
    /// Lines added over every changed file.
    pub insertions: usize,
    /// Lines removed over every changed file.
    pub deletions: usize,
    /// Whether nothing changes.
    pub up_to_date: bool,
}

/// What the run did to one tree.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TreeReport {
    /// The tree, as given on the command line.
    pub root: PathBuf,
    /// The crates wired, in directory order.
    pub crates: Vec<CratePlan>,
    /// The crates left alone, and why.
    pub skipped: Vec<SkippedCrate>,
    /// Every file that changes, relative to the root, with its line counts (`diff --stat`).
    pub files: Vec<FileStat>,
}

/// How one file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileChangeKind {
    /// The file is new.
    Create,
    /// The file's content changes.
    Modify,
    /// The file goes away.
    Remove,
}

/// One changed file and its line counts.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileStat {
    /// The file, relative to the tree root.
    pub path: PathBuf,
    /// How it changes.
    pub change: FileChangeKind,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
}

/// What a target (or a rule's targets) gets: a provider and its roots, the host's HTTP, or no
/// default client.
///
/// In JSON: `provider` (its name, `wasi-http` or `none`), and with a provider `roots` and, when
/// it is not the default, `empty_store`.
///
/// ```
/// use smithy_tls_codegen::model::{EmptyStore, Provider, Roots, Stack};
/// use smithy_tls_codegen::report::StackReport;
/// let stack = Stack::Tls { provider: Provider::RustlsRing, roots: Roots::Webpki, empty_store: EmptyStore::Fail };
/// let json = serde_json::to_value(StackReport::from(stack)).unwrap();
/// assert_eq!(json, serde_json::json!({ "provider": "rustls-ring", "roots": "webpki" }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackReport(pub Stack);

/// What `empty_store` says, in the schema.
const EMPTY_STORE_DOC: &str = "What `native` roots do where the store yields no certificate: present, `webpki`,
when the rule's `empty-store` falls back to the bundled roots; absent for the
default (connections fail).";

impl From<Stack> for StackReport {
    fn from(stack: Stack) -> Self {
        StackReport(stack)
    }
}

impl Serialize for StackReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("provider", self.0.provider_name())?;
        if let Stack::Tls { roots, empty_store, .. } = self.0 {
            map.serialize_entry("roots", &roots)?;
            if !empty_store.is_fail() {
                map.serialize_entry("empty_store", &empty_store)?;
            }
        }
        map.end()
    }
}

impl JsonSchema for StackReport {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StackReport".into()
    }

    fn inline_schema() -> bool {
        true
    }

    /// One branch per provider, told apart by the `provider` constant, and one for none.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use serde_json::json;
        let none = json!({
            "description": "No default client: the application supplies one.",
            "properties": { "provider": { "const": Stack::NONE, "type": "string" } },
            "required": ["provider"],
            "type": "object",
        });
        let wasi_http = json!({
            "description": "The host's HTTP on wasm32-wasip2 (wasi:http): the host connects, runs TLS and verifies with its own trust store.",
            "properties": { "provider": { "const": Stack::WASI_HTTP, "type": "string" } },
            "required": ["provider"],
            "type": "object",
        });
        let mut roots = generator.subschema_for::<Roots>();
        roots.insert("description".into(), "Where its trusted roots come from.".into());
        let mut empty_store = generator.subschema_for::<EmptyStore>();
        empty_store.insert("description".into(), EMPTY_STORE_DOC.into());
        let branches = Provider::ALL.map(|provider| {
            json!({
                "description": provider.summary(),
                "properties": {
                    "empty_store": empty_store,
                    "provider": { "const": provider.name(), "type": "string" },
                    "roots": roots,
                },
                "required": ["provider", "roots"],
                "type": "object",
            })
        });
        let one_of: Vec<_> = [none, wasi_http].into_iter().chain(branches).collect();
        schemars::json_schema!({
            "description": "What a target (or a rule's targets) gets: a provider and its roots, the host's HTTP, or no default client.",
            "oneOf": one_of,
        })
    }
}

impl StackReport {
    /// The roots and what an empty store does, `None` without roots of the runtime's.
    pub fn roots(self) -> Option<(Roots, EmptyStore)> {
        match self.0 {
            Stack::None | Stack::WasiHttp => None,
            Stack::Tls { roots, empty_store, .. } => Some((roots, empty_store)),
        }
    }
}

/// What `explain` found: the rules and, for every builtin target (or the one asked about),
/// what it gets and why.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExplainReport {
    /// The policy's name.
    pub policy: String,
    /// Every rule in order, the fallback last.
    pub rules: Vec<RuleReport>,
    /// The targets, sorted by triple (one with `--target`).
    pub targets: Vec<TargetReport>,
    /// Advice about the policy (diagnostics of severity `note`, such as P020: a rule that makes
    /// a tier-1 or tier-2 target need cmake, Go or libclang); with `--target`, the notes about
    /// that target. Never an error: the command succeeds.
    pub notes: Vec<Diagnostic>,
    /// With `--override VALUE`: the application's `--cfg smithy_tls` value whose effect every
    /// target reports (`under_override`); absent without it.
    #[serde(rename = "override", skip_serializing_if = "Option::is_none")]
    pub tls_override: Option<TlsOverride>,
}

/// One compiled rule.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RuleReport {
    /// Its name.
    pub name: String,
    /// The cfg it is written with (`null` for the fallback).
    pub cfg: Option<String>,
    /// The predicate of the `[target.'cfg(..)'.dependencies]` table its targets get, which every
    /// rule with the same provider and roots shares; for a rule without a provider (no table),
    /// the targets for which it is the first match.
    pub table_cfg: String,
    /// What its targets get.
    #[serde(flatten)]
    pub stack: StackReport,
    /// Why the rule chose that stack, in the policy author's words; absent when it says nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How many builtin targets it serves.
    pub target_count: usize,
    /// The build tools beyond a C compiler that its provider requires on some of its targets,
    /// each with the library that runs it, why, where that is read, and those targets; empty
    /// when a C compiler is all it needs (or it has no provider).
    pub extra_build_tools: Vec<RuleToolNeed>,
}

/// One target and what it gets.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TargetReport {
    /// The rustc target triple.
    pub target: String,
    /// Whether a rule serves it, or why none needs to.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// With `--override VALUE`: what the target compiles when the application sets
    /// `--cfg smithy_tls="VALUE"`; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under_override: Option<OverrideEffect>,
}

/// What the application's `--cfg smithy_tls="VALUE"` does to one target (`effect` says which).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "effect", rename_all = "kebab-case")]
pub enum OverrideEffect {
    /// The target compiles the override's provider in place of its rule's.
    Compiles {
        /// The override's provider.
        provider: Provider,
        /// The provider of the rule that serves the target, which the override replaces (the
        /// same provider when they agree).
        replaces: Provider,
        /// The native libraries the override's provider compiles for the target, in build order,
        /// each with the tools the build host needs; empty for `rustls-custom`, whose crypto is
        /// the application's own `CryptoProvider`.
        native_build: Vec<LibraryBuild>,
        /// The tools the build host must have for them (the optional ones left out).
        required_tools: Vec<BuildTool>,
        /// When the override's provider cannot use the rule's roots: that, and the
        /// `--cfg smithy_tls_roots` to set beside it; absent when it can.
        #[serde(skip_serializing_if = "Option::is_none")]
        roots: Option<String>,
        /// True when the rule's provider does not bring the override's crates into the
        /// application's lock: the application turns the runtime's feature of the provider's
        /// name on in its own Cargo.toml beside the cfg; absent when the cfg alone selects it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        needs_feature: bool,
    },
    /// `none`: no TLS library is compiled for the target; the default client fails every
    /// request with a non-retryable error, and the application sets its own HTTP client.
    NoTls {
        /// The provider of the rule that serves the target, which is no longer compiled.
        replaces: Provider,
    },
    /// `none` where a `wasi-http` rule serves the target: the generated crates hand the SDK neither
    /// the host's client nor its clocks there, and the application sets an HTTP client and a
    /// sleep of its own.
    NoHostClient,
    /// The override's provider does not build for the target.
    DoesNotBuild {
        /// The override's provider.
        provider: Provider,
        /// Why, from the library's own sources.
        why: String,
        /// The providers that build for the target instead (bringing their own crypto): FIPS
        /// ones for a FIPS provider where any builds, else the others.
        instead: Vec<Provider>,
    },
    /// Nothing changes: the target's rule gives it no provider, so the generated crates have no
    /// runtime dependency there (or the host's HTTP, which has no TLS stack to replace), or no
    /// SDK runs on the target at all.
    Unchanged {
        /// Why.
        why: String,
    },
}

/// Whether a target is served, and by what.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// The first matching rule serves it.
    Served {
        /// The rule that serves it.
        rule: String,
        /// What it gets.
        #[serde(flatten)]
        stack: StackReport,
        /// Every rule up to and including the winner, with whether its own cfg matches.
        considered: Vec<Considered>,
        /// The providers that do not build for this target and the roots that do not work on
        /// it, each with why: what a rule for it could not have chosen.
        unusable: Vec<Unusable>,
        /// rustc's support tier of the target (1, 2 or 3).
        tier: u8,
        /// The native libraries its provider compiles for it, in build order, each with the
        /// tools the build host needs (empty without a provider).
        native_build: Vec<LibraryBuild>,
        /// Where `wasi-http` serves it: what the host must provide, and what the application's
        /// Cargo.toml needs there.
        #[serde(skip_serializing_if = "Option::is_none")]
        host_http: Option<HostHttpNeeds>,
        /// What serves the S3 transfer manager's requests there (a tree with
        /// `aws-sdk-s3-transfer-manager`), with no override set.
        transfer_manager: crate::transfer_manager::Transport,
        /// What smithy-tls's own test suite does with this stack on this target.
        suite: crate::suite_runs::Evidence,
    },
    /// It cannot host an SDK (no std, no sockets, ...), so no rule serves it and none needs to.
    NotAHost {
        /// Why.
        why: String,
    },
}

/// What a target that `wasi-http` serves needs of its host and of the application's Cargo.toml.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HostHttpNeeds {
    /// The WASI 0.2 interfaces the component imports, each with what the SDK uses it for.
    pub imports: Vec<HostImport>,
    /// The SDK crates' default features that do not build there, each with why.
    pub refused_defaults: Vec<RefusedDefault>,
    /// The `Cargo.toml` lines an application writes instead of those defaults (aws-config and
    /// aws-sdk-s3 shown): the defaults but those everywhere, and those on the other targets.
    pub application_manifest: String,
}

/// A WASI interface the host provides.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HostImport {
    /// Its name, `wasi:http/outgoing-handler` for instance.
    pub interface: String,
    /// What the SDK uses it for.
    pub used_for: String,
}

/// A default feature of the SDK crates that does not build for the target.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RefusedDefault {
    /// Which crates have it.
    pub crates: String,
    /// The feature.
    pub feature: String,
    /// Why it does not build.
    pub why: String,
}

impl HostHttpNeeds {
    /// What `wasm32-wasip2` needs under `wasi-http`.
    pub fn wasip2() -> Self {
        use crate::platforms::{APPLICATION_MANIFEST, HOST_IMPORTS, WASM_REFUSED_DEFAULTS};
        HostHttpNeeds {
            imports: HOST_IMPORTS
                .iter()
                .map(|(interface, used_for)| HostImport {
                    interface: (*interface).to_owned(),
                    used_for: (*used_for).to_owned(),
                })
                .collect(),
            refused_defaults: WASM_REFUSED_DEFAULTS
                .iter()
                .map(|r| RefusedDefault {
                    crates: r.crates.to_owned(),
                    feature: r.feature.to_owned(),
                    why: r.why.to_owned(),
                })
                .collect(),
            application_manifest: APPLICATION_MANIFEST.to_owned(),
        }
    }
}

/// A provider or a roots choice a target cannot use, and why.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Unusable {
    /// A provider that does not build for the target.
    Provider {
        /// Its policy spelling.
        provider: Provider,
        /// Why, from the library's own sources.
        why: String,
    },
    /// Roots that do not work on the target at run time.
    Roots {
        /// Its policy spelling.
        roots: Roots,
        /// Why, and what to use instead.
        why: String,
    },
}

/// One rule looked at for a target.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Considered {
    /// The rule's name.
    pub rule: String,
    /// Its own cfg (`null` for the fallback, which matches every target).
    pub cfg: Option<String>,
    /// Whether its own cfg matches the target.
    pub matches: bool,
}

/// What `presets` lists.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PresetsReport {
    /// Every embedded preset, by name.
    pub presets: Vec<PresetReport>,
}

/// One embedded preset.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PresetReport {
    /// Its name, for `--preset`.
    pub name: String,
    /// What it is for.
    pub description: String,
}
