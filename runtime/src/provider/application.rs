//! The application's override: `--cfg smithy_tls="<provider>"` and `--cfg smithy_tls_roots="<roots>"`
//! in its RUSTFLAGS replace the provider and roots every client asked for. build.rs reads the
//! cfgs, compiles only the chosen provider, and passes the names here.

use std::fmt;

use crate::provider::TlsProvider;
use crate::roots::TrustRoots;

/// The provider the application's `--cfg smithy_tls` chose (`none` included), or "" without one.
const PROVIDER: &str = env!("SMITHY_TLS_OVERRIDE");
/// The roots the application's `--cfg smithy_tls_roots` chose, or "" without one.
const ROOTS: &str = env!("SMITHY_TLS_ROOTS_OVERRIDE");

/// Who chose the TLS provider and trust roots a connection used ([`TlsInfo::chosen_by`](crate::TlsInfo::chosen_by)).
///
/// ```
/// use smithy_default_tls::ChosenBy;
/// assert_eq!(ChosenBy::ApplicationCfg.to_string(), "the application's --cfg smithy_tls");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChosenBy {
    /// The code that built the client: a generated SDK crate's smithy-tls policy, or the
    /// application's own builder calls.
    Builder,
    /// The application, with `--cfg smithy_tls="..."` (or `--cfg smithy_tls_roots="..."`) in
    /// its RUSTFLAGS, which replaced what the builder asked for.
    ApplicationCfg,
}

impl fmt::Display for ChosenBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChosenBy::Builder => "the client's builder",
            ChosenBy::ApplicationCfg => "the application's --cfg smithy_tls",
        })
    }
}

/// Whether the application set either override.
pub(crate) fn is_set() -> bool {
    !PROVIDER.is_empty() || !ROOTS.is_empty()
}

/// A client's provider and roots as the application's override has them: its provider in place
/// of any other; its roots, or else the asked-for roots where the provider can use them, or else
/// the first compiled source it can. Unchanged without an override; under `none` the provider
/// stays (no provider is compiled, and the client fails every request).
pub(crate) fn resolve(provider: TlsProvider, roots: Option<TrustRoots>) -> (TlsProvider, Option<TrustRoots>, ChosenBy) {
    if !is_set() {
        return (provider, roots, ChosenBy::Builder);
    }
    let provider = TlsProvider::ALL.iter().copied().find(|p| p.name() == PROVIDER).unwrap_or(provider);
    let usable = |r: TrustRoots| TrustRoots::ALL.contains(&r) && provider.validate_roots(r).is_ok();
    let roots = match TrustRoots::ALL.iter().copied().find(|r| r.name() == ROOTS) {
        Some(chosen) => Some(chosen),
        None => roots.map(|asked| {
            if usable(asked) {
                asked
            } else {
                TrustRoots::ALL.iter().copied().find(|&r| usable(r)).unwrap_or(asked)
            }
        }),
    };
    (provider, roots, ChosenBy::ApplicationCfg)
}

/// Says once per shared client that the application's override replaced what was asked for.
pub(crate) fn announce(asked: (TlsProvider, TrustRoots), used: (TlsProvider, Option<TrustRoots>)) {
    if !is_set() {
        return;
    }
    tracing::info!(
        provider = PROVIDER,
        roots = ROOTS,
        asked_provider = %asked.0,
        asked_roots = %asked.1,
        used_provider = %used.0,
        used_roots = ?used.1.map(TrustRoots::name),
        "the application's --cfg smithy_tls chose this client's TLS stack"
    );
}
