//! Turning host names into addresses: the system's resolver, or one the application supplies
//! (aws-smithy-runtime-api's `ResolveDns`, the trait upstream's `dns_resolver` option takes).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use aws_smithy_runtime_api::client::dns::{ResolveDns, SharedDnsResolver};
use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use tower_service::Service;

/// The resolver a client's connections use.
#[derive(Clone, Debug, Default)]
pub(crate) enum Resolver {
    /// `getaddrinfo` on tokio's blocking pool (hyper-util's `GaiResolver`).
    #[default]
    System,
    /// The application's resolver.
    Custom(SharedDnsResolver),
}

type Addrs = std::vec::IntoIter<SocketAddr>;

impl Service<Name> for Resolver {
    type Response = Addrs;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Addrs, io::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        match self {
            Resolver::System => {
                let lookup = GaiResolver::new().call(name);
                Box::pin(async move { Ok(lookup.await?.collect::<Vec<_>>().into_iter()) })
            }
            Resolver::Custom(resolver) => {
                let resolver = resolver.clone();
                Box::pin(async move {
                    let ips = resolver.resolve_dns(name.as_str()).await.map_err(|e| {
                        io::Error::other(format!(
                            "DNS lookup of {} by the configured resolver failed: {e}",
                            name.as_str()
                        ))
                    })?;
                    // The connector sets the port from the URI.
                    Ok(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect::<Vec<_>>().into_iter())
                })
            }
        }
    }
}
