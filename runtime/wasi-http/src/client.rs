//! The SDK's `HttpClient` over `wasi:http/outgoing-handler`.

use std::borrow::Cow;
use std::time::Duration;

use aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_runtime_api::shared::IntoShared;
use aws_smithy_types::body::SdkBody;
use wasip2::http::outgoing_handler;
use wasip2::http::types::FutureIncomingResponse;
use wasip2::http::types::IncomingResponse;

use crate::body::{write_request_body, ResponseBody};
use crate::error::{Stage, WasiHttpError};
use crate::request;

/// The client the SDK is given: each request goes to the host through `wasi:http`, with the
/// SDK's connect and read timeouts as the host's request options.
///
/// ```no_run
/// # #[cfg(all(target_os = "wasi", target_env = "p2"))]
/// # fn example() {
/// use aws_smithy_runtime_api::client::http::HttpClient;
/// let client = smithy_wasi_http::WasiHttpClient::default();
/// assert_eq!(client.connector_metadata().unwrap().name(), "smithy-wasi-http");
/// # }
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct WasiHttpClient {}

/// The client, shared, as the SDK's config takes it.
///
/// ```no_run
/// # #[cfg(all(target_os = "wasi", target_env = "p2"))]
/// # fn example() {
/// let client = smithy_wasi_http::http_client();
/// # let _ = client;
/// # }
/// ```
pub fn http_client() -> SharedHttpClient {
    WasiHttpClient::default().into_shared()
}

impl HttpClient for WasiHttpClient {
    fn http_connector(&self, settings: &HttpConnectorSettings, _components: &RuntimeComponents) -> SharedHttpConnector {
        SharedHttpConnector::new(WasiHttpConnector {
            connect: settings.connect_timeout(),
            read: settings.read_timeout(),
        })
    }

    fn connector_metadata(&self) -> Option<ConnectorMetadata> {
        Some(ConnectorMetadata::new("smithy-wasi-http", Some(Cow::Borrowed(env!("CARGO_PKG_VERSION")))))
    }
}

/// A connector with the SDK's timeouts for it.
#[derive(Debug)]
struct WasiHttpConnector {
    connect: Option<Duration>,
    read: Option<Duration>,
}

impl HttpConnector for WasiHttpConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let (connect, read) = (self.connect, self.read);
        HttpConnectorFuture::new(async move { send(request, connect, read).await })
    }
}

/// Hands the request to the host, writes its body, and waits for the response's head.
async fn send(
    request: HttpRequest,
    connect: Option<Duration>,
    read: Option<Duration>,
) -> Result<HttpResponse, ConnectorError> {
    let request = request.try_into_http1x().map_err(|e| ConnectorError::other(e.into(), None))?;
    let (head, body) = request.into_parts();
    let outgoing = request::outgoing_request(&head).map_err(WasiHttpError::into_connector_error)?;
    let sending = |code| WasiHttpError::Host { stage: Stage::Sending, code }.into_connector_error();
    let outgoing_body =
        outgoing.body().map_err(|()| WasiHttpError::Closed { stage: Stage::Sending }.into_connector_error())?;
    // The host starts the request at once; the body streams to it after.
    let future = outgoing_handler::handle(outgoing, Some(request::options(connect, read))).map_err(sending)?;
    write_request_body(body, outgoing_body).await.map_err(WasiHttpError::into_connector_error)?;
    let response = response_head(&future).map_err(sending)?;
    drop(future);
    let mut builder = http::Response::builder().status(response.status());
    for (name, value) in response.headers().entries() {
        builder = builder.header(name, value);
    }
    let body = ResponseBody::new(response).map_err(WasiHttpError::into_connector_error)?;
    let response = builder.body(SdkBody::from_body_1_x(body)).map_err(|e| ConnectorError::other(e.into(), None))?;
    HttpResponse::try_from(response).map_err(|e| ConnectorError::other(e.into(), None))
}

/// The response's head, once the host has it (blocking until then).
fn response_head(future: &FutureIncomingResponse) -> Result<IncomingResponse, wasip2::http::types::ErrorCode> {
    loop {
        match future.get() {
            Some(Ok(result)) => return result,
            // Taken already: `send` asks once.
            Some(Err(())) => unreachable!("the response is taken once"),
            None => future.subscribe().block(),
        }
    }
}
