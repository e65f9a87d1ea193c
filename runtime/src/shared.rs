//! The process-wide entry points that generated SDK code calls.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use aws_smithy_runtime_api::client::http::SharedHttpClient;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponentsBuilder;
use aws_smithy_runtime_api::client::runtime_plugin::{Order, RuntimePlugin, SharedRuntimePlugin};

use crate::client::SmithyTlsClient;
use crate::{TlsProvider, TrustRoots};

/// The process-wide client for a (provider, roots) choice.
///
/// Every call with the same choice returns a handle to the same client: one TLS configuration,
/// one root store, one connection pool, however many SDK clients ask. The first call returns at
/// once; when preparing TLS is slow (aws-lc, the system store) it starts that in the background.
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
    static REGISTRY: OnceLock<Mutex<HashMap<(TlsProvider, TrustRoots), SmithyTlsClient>>> = OnceLock::new();
    let mut registry = REGISTRY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    registry
        .entry((provider, roots))
        .or_insert_with(|| SmithyTlsClient::builder().build_with(provider, Some(roots)))
        .clone()
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
    SharedRuntimePlugin::new(DefaultClientPlugin {
        components: RuntimeComponentsBuilder::new("smithy_default_tls")
            .with_http_client(Some(shared_client(provider, roots))),
    })
}

#[derive(Debug)]
struct DefaultClientPlugin {
    components: RuntimeComponentsBuilder,
}

impl RuntimePlugin for DefaultClientPlugin {
    fn order(&self) -> Order {
        Order::Defaults
    }

    fn runtime_components(&self, _current: &RuntimeComponentsBuilder) -> Cow<'_, RuntimeComponentsBuilder> {
        Cow::Borrowed(&self.components)
    }
}
