//! The runtime plugin that gives an SDK client the host's HTTP and clocks by default.

use aws_smithy_runtime_api::client::runtime_components::RuntimeComponentsBuilder;
use aws_smithy_runtime_api::client::runtime_plugin::{Order, SharedRuntimePlugin, StaticRuntimePlugin};

use crate::{http_client, sleep};

/// A runtime plugin at `Order::Defaults` that installs [`http_client`] and [`sleep`]: what a
/// generated crate's default client module hands the SDK on wasm32-wasip2, where the SDK has
/// neither by default. A client or sleep set on the config still wins.
///
/// ```no_run
/// # #[cfg(all(target_os = "wasi", target_env = "p2"))]
/// # fn example() {
/// let plugin = smithy_wasi_http::default_client_plugin();
/// # let _ = plugin;
/// # }
/// ```
pub fn default_client_plugin() -> SharedRuntimePlugin {
    let components = RuntimeComponentsBuilder::new("smithy_wasi_http")
        .with_http_client(Some(http_client()))
        .with_sleep_impl(Some(sleep()));
    SharedRuntimePlugin::new(StaticRuntimePlugin::new().with_order(Order::Defaults).with_runtime_components(components))
}
