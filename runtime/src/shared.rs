//! The process-wide entry points that generated SDK code calls.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponentsBuilder;
use aws_smithy_runtime_api::client::runtime_plugin::{Order, SharedRuntimePlugin, StaticRuntimePlugin};

use crate::client::{Builder, SmithyTlsClient};
use crate::error::Error;
use crate::provider::TlsProvider;
use crate::proxy::ProxyConfig;
use crate::roots::TrustRoots;

/// The process-wide client for a (provider, roots) choice.
///
/// Every call with the same choice returns a handle to the same client: one TLS configuration,
/// one root store, one connection pool per tokio runtime, however many SDK clients ask. The first call returns at
/// once; when preparing TLS is slow (aws-lc, the system store) it starts that in the background.
///
/// `AWS_CA_BUNDLE`, when set, is honoured as the AWS CLI does: its certificates are the trusted
/// roots, replacing `roots` (see [`Builder::ca_bundle_file`](crate::Builder::ca_bundle_file)). It
/// is read at every call, so a change takes effect for clients asked for after it.
///
/// A choice the provider cannot serve ([`TlsProvider::validate_roots`]; a smithy-tls policy
/// never emits one) still yields a client, whose every connection fails with that error; use
/// [`try_shared_tls_client`] to learn of it up front.
///
/// ```
/// # #[cfg(all(feature = "rustls-aws-lc", feature = "webpki"))] {
/// use smithy_default_tls::{shared_tls_client, TlsProvider, TrustRoots};
///
/// let a = shared_tls_client(TlsProvider::RustlsAwsLc, TrustRoots::Webpki);
/// let b = shared_tls_client(TlsProvider::RustlsAwsLc, TrustRoots::Webpki);
/// assert!(a.ptr_eq(&b));
/// # }
/// ```
pub fn shared_tls_client(provider: TlsProvider, roots: TrustRoots) -> SmithyTlsClient {
    registered(provider, roots, ProxyConfig::disabled())
}

/// [`shared_tls_client`] for an SDK client of `behavior_version`: as upstream's default client
/// does, behavior version 2025-08-07 and later honour the proxy environment variables
/// (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, either case; see
/// [`ProxyConfig::from_env`]), read at every call; earlier versions connect directly.
///
/// ```
/// # #![allow(deprecated)] // an old behavior version on purpose
/// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
/// use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
/// use smithy_default_tls::{shared_tls_client, shared_tls_client_for, TlsProvider, TrustRoots};
///
/// let old = shared_tls_client_for(TlsProvider::RustlsRing, TrustRoots::Webpki, BehaviorVersion::v2024_03_28());
/// assert!(old.ptr_eq(&shared_tls_client(TlsProvider::RustlsRing, TrustRoots::Webpki)));
/// # }
/// ```
pub fn shared_tls_client_for(
    provider: TlsProvider,
    roots: TrustRoots,
    behavior_version: impl Into<Option<BehaviorVersion>>,
) -> SmithyTlsClient {
    let reads_env = behavior_version.into().is_some_and(reads_proxy_env);
    let proxy = if reads_env { ProxyConfig::from_env() } else { ProxyConfig::disabled() };
    registered(provider, roots, proxy)
}

/// Whether `behavior_version` is 2025-08-07 or later, the versions whose default client reads the
/// proxy environment upstream.
#[allow(deprecated)] // v2025_08_07 is superseded by later versions; it is the boundary here
fn reads_proxy_env(behavior_version: BehaviorVersion) -> bool {
    behavior_version.is_at_least(BehaviorVersion::v2025_08_07())
}

type Key = (TlsProvider, TrustRoots, Option<PathBuf>, ProxyConfig);
type Configure = Arc<dyn Fn(Builder) -> Builder + Send + Sync>;

/// The process-wide defaults: what [`configure_default`] set, whether a default client has read
/// it yet, and the clients built so far.
#[derive(Default)]
struct Registry {
    configure: Option<Configure>,
    /// Set, under the lock, by the first default client to read `configure`: from then on
    /// [`configure_default`] fails, so a call that succeeds is seen by every default client.
    frozen: bool,
    clients: HashMap<Key, SmithyTlsClient>,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// The registry: one client per (provider, roots, AWS_CA_BUNDLE, proxy settings).
fn registered(asked_provider: TlsProvider, asked_roots: TrustRoots, proxy: ProxyConfig) -> SmithyTlsClient {
    // Under the application's override every crate's choice maps to the application's: one client.
    let (provider, roots, chosen_by) = crate::provider::application::resolve(asked_provider, Some(asked_roots));
    // (A `match`, not `unwrap_or`: with no roots feature `TrustRoots` has no value, and a call
    // returning one would make the rest unreachable.)
    let roots = match roots {
        Some(roots) => roots,
        None => asked_roots,
    };
    let key = (provider, roots, crate::roots::ca_bundle_from_env(), proxy);
    let configure = {
        let mut registry = registry();
        if let Some(client) = registry.clients.get(&key) {
            return client.clone();
        }
        // Read and frozen in one critical section: a `configure_default` after this fails
        // instead of returning `Ok` for a client that is already being built without it.
        registry.frozen = true;
        registry.configure.clone()
    };
    #[cfg(test)]
    tests::before_build();
    // Built without the registry's lock: the application's closure may itself ask for a default
    // client (or log through something that does) without deadlocking.
    let (_, _, bundle, proxy) = &key;
    let builder = SmithyTlsClient::builder().proxy(proxy.clone());
    let builder = match bundle {
        Some(path) => builder.ca_bundle_file(path.clone()),
        None => builder,
    };
    let builder = match &configure {
        Some(configure) => configure(builder),
        None => builder,
    };
    let built = builder.build_with(provider, Some(roots), chosen_by);
    crate::provider::application::announce((asked_provider, asked_roots), (provider, Some(roots)));
    // Two callers may have raced: the first client registered is the one everybody shares.
    registry().clients.entry(key).or_insert(built).clone()
}

/// Configures the process-wide default clients — the ones generated SDK code installs, and
/// [`shared_client`] returns — before the first is built: call it once, early in `main`.
///
/// `configure` gets each default client's builder, already holding what the environment says
/// (`AWS_CA_BUNDLE`, and the proxy variables for behavior version 2025-08-07 and later), and
/// returns it with the application's settings: extra root certificates, a proxy (which replaces
/// the environment's), a DNS resolver, TCP keepalive, pool limits. The provider and roots stay
/// the policy's choice for each target.
///
/// # Errors
/// [`Error::DefaultAlreadyConfigured`] on a second call, [`Error::DefaultAlreadyBuilt`] when a
/// default client was already built or is being built (its settings could no longer change). A
/// call that returns `Ok` is honoured by every default client.
///
/// ```
/// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
/// use std::time::Duration;
/// use smithy_default_tls::{configure_default, shared_client, ProxyConfig, TlsProvider, TrustRoots};
///
/// configure_default(|builder| {
///     builder
///         .proxy(ProxyConfig::builder().all("http://proxy.internal:3128").build().expect("proxy URL"))
///         .tcp_keepalive(Some(Duration::from_secs(30)))
/// })
/// .expect("first call, before any default client");
/// let _client = shared_client(TlsProvider::RustlsRing, TrustRoots::Webpki);
/// assert!(configure_default(|b| b).is_err(), "once only");
/// # }
/// ```
pub fn configure_default(configure: impl Fn(Builder) -> Builder + Send + Sync + 'static) -> Result<(), Error> {
    let mut registry = registry();
    if registry.configure.is_some() {
        return Err(Error::DefaultAlreadyConfigured);
    }
    if registry.frozen {
        return Err(Error::DefaultAlreadyBuilt);
    }
    registry.configure = Some(Arc::new(configure));
    Ok(())
}

/// [`shared_tls_client`], refusing up front a choice the provider cannot serve (the check
/// [`Builder::build`](crate::Builder::build) makes).
///
/// ```
/// # #[cfg(all(feature = "s2n-tls", feature = "platform-verifier", unix))] {
/// use smithy_default_tls::{try_shared_tls_client, Error, TlsProvider, TrustRoots};
///
/// let refused = try_shared_tls_client(TlsProvider::S2nTls, TrustRoots::PlatformVerifier);
/// assert!(matches!(refused, Err(Error::UnsupportedRoots { .. })));
/// # }
/// ```
pub fn try_shared_tls_client(provider: TlsProvider, roots: TrustRoots) -> Result<SmithyTlsClient, Error> {
    provider.validate_roots(roots)?;
    Ok(shared_tls_client(provider, roots))
}

/// [`shared_tls_client`] wrapped for an SDK config (`.http_client(..)`).
///
/// ```
/// # #[cfg(all(feature = "rustls-ring", feature = "webpki"))] {
/// use smithy_default_tls::{shared_client, TlsProvider, TrustRoots};
/// let _client = shared_client(TlsProvider::RustlsRing, TrustRoots::Webpki);
/// # }
/// ```
pub fn shared_client(provider: TlsProvider, roots: TrustRoots) -> SharedHttpClient {
    shared_tls_client(provider, roots).into_shared()
}

/// [`shared_tls_client_for`] wrapped for an SDK config (`.http_client(..)`).
pub fn shared_client_for(
    provider: TlsProvider,
    roots: TrustRoots,
    behavior_version: impl Into<Option<BehaviorVersion>>,
) -> SharedHttpClient {
    shared_tls_client_for(provider, roots, behavior_version).into_shared()
}

/// [`try_shared_tls_client`] wrapped for an SDK config (`.http_client(..)`).
pub fn try_shared_client(provider: TlsProvider, roots: TrustRoots) -> Result<SharedHttpClient, Error> {
    try_shared_tls_client(provider, roots).map(SmithyTlsClient::into_shared)
}

/// A runtime plugin that installs [`shared_client`] as the HTTP client, at [`Order::Defaults`].
///
/// Generated SDK code adds it right after the default plugins: it replaces the upstream
/// default client, and an HTTP client the user sets on the service config still wins.
///
/// ```
/// # #[cfg(all(feature = "rustls-ring", feature = "native"))] {
/// use aws_smithy_runtime_api::client::runtime_plugin::{Order, RuntimePlugin};
/// use smithy_default_tls::{default_client_plugin, TlsProvider, TrustRoots};
///
/// let plugin = default_client_plugin(TlsProvider::RustlsRing, TrustRoots::Native);
/// assert_eq!(format!("{:?}", plugin.order()), format!("{:?}", Order::Defaults));
/// # }
/// ```
pub fn default_client_plugin(provider: TlsProvider, roots: TrustRoots) -> SharedRuntimePlugin {
    plugin_installing(shared_client(provider, roots))
}

/// [`default_client_plugin`] for an SDK client of `behavior_version`: installs
/// [`shared_client_for`], so behavior version 2025-08-07 and later honour the proxy environment
/// variables, as upstream's default client does. Generated code passes the client's version.
pub fn default_client_plugin_for(
    provider: TlsProvider,
    roots: TrustRoots,
    behavior_version: impl Into<Option<BehaviorVersion>>,
) -> SharedRuntimePlugin {
    plugin_installing(shared_client_for(provider, roots, behavior_version))
}

/// The runtime plugin that installs `client` as the default HTTP client.
fn plugin_installing(client: SharedHttpClient) -> SharedRuntimePlugin {
    SharedRuntimePlugin::new(
        StaticRuntimePlugin::new().with_order(Order::Defaults).with_runtime_components(
            RuntimeComponentsBuilder::new("smithy_default_tls").with_http_client(Some(client)),
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    thread_local! {
        /// What [`before_build`] runs on this thread (tests that need the window between a
        /// default client reading the configuration and being registered).
        static BEFORE_BUILD: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
    }

    /// Called by `registered` after it read the configuration and let go of the lock, before it
    /// builds the client.
    pub(super) fn before_build() {
        let hook = BEFORE_BUILD.with(|hook| hook.borrow_mut().take());
        if let Some(mut hook) = hook {
            hook();
        }
    }

    /// A `configure_default` that lands while the first default client is being built (after it
    /// read the configuration) must fail: an `Ok` there would be ignored by that client, which is
    /// then registered and shared. (The only unit test that touches the process-wide registry.)
    #[test]
    #[cfg(roots_source)]
    fn configuring_while_the_first_default_client_is_built_fails() {
        let outcome: std::rc::Rc<RefCell<Option<Result<(), Error>>>> = Default::default();
        let seen = std::rc::Rc::clone(&outcome);
        BEFORE_BUILD.with(|hook| {
            *hook.borrow_mut() = Some(Box::new(move || {
                *seen.borrow_mut() = Some(configure_default(|builder| builder.pool_max_idle_per_host(0)));
            }))
        });
        let _client = shared_tls_client(TlsProvider::ALL[0], TrustRoots::ALL[0]);
        let outcome = outcome.borrow_mut().take().expect("the hook ran between the read and the build");
        assert!(matches!(outcome, Err(Error::DefaultAlreadyBuilt)), "{outcome:?}");
        assert!(matches!(configure_default(|builder| builder), Err(Error::DefaultAlreadyBuilt)));
    }

    #[test]
    #[allow(deprecated)]
    fn the_proxy_environment_counts_from_2025_08_07() {
        assert!(reads_proxy_env(BehaviorVersion::latest()));
        assert!(reads_proxy_env(BehaviorVersion::v2025_08_07()));
        assert!(!reads_proxy_env(BehaviorVersion::v2025_01_17()));
        assert!(!reads_proxy_env(BehaviorVersion::v2024_03_28()));
        assert!(!reads_proxy_env(BehaviorVersion::v2023_11_09()));
    }
}
