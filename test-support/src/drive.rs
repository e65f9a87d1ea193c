//! Driving a client the way the Smithy orchestrator does: `http_connector(settings,
//! components)` then `call(request)`, and reading what comes back.

use std::sync::OnceLock;
use std::time::Duration;

use aws_smithy_async::rt::sleep::{SharedAsyncSleep, TokioSleep};
use aws_smithy_async::time::{SharedTimeSource, SystemTimeSource};
use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnector, HttpConnectorSettings};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::{RuntimeComponents, RuntimeComponentsBuilder};
use aws_smithy_types::body::SdkBody;
use http_body_util::BodyExt;

use crate::Digest;

/// Runtime components as an SDK client has them: tokio's sleep and the system clock, made once
/// per process and cloned per call, as a client's configuration hands the same sleep to every
/// operation.
pub fn components() -> RuntimeComponents {
    static COMPONENTS: OnceLock<RuntimeComponents> = OnceLock::new();
    COMPONENTS.get_or_init(|| components_sleeping_with(SharedAsyncSleep::new(TokioSleep::new()))).clone()
}

/// Runtime components as another SDK client has them: its own `sleep`, and the system clock.
pub fn components_sleeping_with(sleep: SharedAsyncSleep) -> RuntimeComponents {
    RuntimeComponentsBuilder::for_tests()
        .with_sleep_impl(Some(sleep))
        .with_time_source(Some(SharedTimeSource::new(SystemTimeSource::new())))
        .build()
        .expect("runtime components")
}

/// Connector settings with the given timeouts.
pub fn settings(connect: Option<Duration>, read: Option<Duration>) -> HttpConnectorSettings {
    let mut builder = HttpConnectorSettings::builder();
    builder.set_connect_timeout(connect).set_read_timeout(read);
    builder.build()
}

/// `http_connector(settings, components)` then `call(request)`.
pub async fn call(
    client: &dyn HttpClient,
    settings: &HttpConnectorSettings,
    request: http::Request<SdkBody>,
) -> Result<HttpResponse, ConnectorError> {
    let connector = client.http_connector(settings, &components());
    connector.call(HttpRequest::try_from(request).expect("valid request")).await
}

/// Whether the SDK would retry an attempt that failed with `err`: aws-smithy-runtime's
/// `SmithyErrorClassifier` (the retry classifier every generated client has) classifies timeout
/// and I/O connector errors as transient, an `other` error as the error kind it carries (not
/// retried without one), and a `user` error not at all.
pub fn sdk_retries(err: &ConnectorError) -> bool {
    err.is_timeout() || err.is_io() || err.as_other().is_some()
}

/// A GET of `url` with an empty body.
pub fn get(url: &str) -> http::Request<SdkBody> {
    http::Request::get(url).body(SdkBody::empty()).expect("request")
}

/// Reads a body to its end, chunk by chunk, hashing as it goes.
pub async fn digest_body(body: SdkBody) -> Digest {
    let mut digest = Digest::default();
    let mut body = body;
    while let Some(frame) = body.frame().await {
        let frame = frame.expect("body frame");
        if let Some(data) = frame.data_ref() {
            digest.update(data);
        }
    }
    digest
}

/// Reads a body to its end like [`digest_body`], returning the error (with what arrived before
/// it) instead of panicking: for tests where the body must fail.
pub async fn try_digest_body(body: SdkBody) -> Result<Digest, (Digest, String)> {
    let mut digest = Digest::default();
    let mut body = body;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Some(data) = frame.data_ref() {
                    digest.update(data);
                }
            }
            Err(e) => return Err((digest, error_chain(&*e))),
        }
    }
    Ok(digest)
}

/// Every message in an error's source chain, joined: what a user would read.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        out.push_str(": ");
        out.push_str(&e.to_string());
        next = e.source();
    }
    out
}

/// Finds a `T` in an error's source chain, looking inside `io::Error`s too (whose `source()`
/// skips the error they wrap).
pub fn find_in_chain<'a, T: std::error::Error + 'static>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        let inner = e.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
        if let Some(found) = inner.and_then(|inner| inner.downcast_ref::<T>()) {
            return Some(found);
        }
        next = e.source();
    }
    None
}
