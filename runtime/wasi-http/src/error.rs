//! The host's `error-code`, with what the client was doing, as the SDK's `ConnectorError`.

use std::fmt;
use std::sync::Arc;

use aws_smithy_runtime_api::client::result::ConnectorError;
use wasip2::http::types::ErrorCode;

/// What the client was doing when the host reported an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Handing the request to the host, or waiting for the response's head (connecting, TLS, the
    /// request's head).
    Sending,
    /// Writing the request's body.
    RequestBody,
    /// Reading the response's body.
    ResponseBody,
}

/// The part of a request the host would not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestPart {
    /// A header, by name.
    Header(String),
    /// The method.
    Method(String),
    /// The scheme (`http` or `https`).
    Scheme(String),
    /// The authority (host and port).
    Authority(String),
    /// The path and query.
    PathAndQuery(String),
}

/// A request the host did not complete.
#[derive(Debug, Clone)]
pub enum WasiHttpError {
    /// The host reported `code` while the client was at `stage`.
    Host {
        /// What the client was doing.
        stage: Stage,
        /// The host's `error-code`.
        code: ErrorCode,
    },
    /// The host closed a body stream without an error code: the connection ended early.
    Closed {
        /// What the client was doing.
        stage: Stage,
    },
    /// A body stream failed with an I/O error that carries no HTTP error code: the host's own
    /// description of it.
    Stream {
        /// What the client was doing.
        stage: Stage,
        /// The host's description.
        detail: String,
    },
    /// The request's own body (the SDK's, or the application's stream) failed while it was sent.
    RequestBody(Arc<dyn std::error::Error + Send + Sync>),
    /// The host would not take a part of the request.
    Refused(RequestPart),
}

impl WasiHttpError {
    /// The host's `error-code`, where it gave one.
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            WasiHttpError::Host { code, .. } => Some(code),
            _ => None,
        }
    }

    /// The SDK's view: timeouts, I/O errors (retried), errors in the request, or other (not
    /// retried).
    pub(crate) fn into_connector_error(self) -> ConnectorError {
        match self {
            WasiHttpError::Host { ref code, .. } if is_timeout(code) => ConnectorError::timeout(Box::new(self)),
            WasiHttpError::Host { ref code, .. } if is_transient(code) => ConnectorError::io(Box::new(self)),
            WasiHttpError::Host { ref code, .. } if is_the_request(code) => ConnectorError::user(Box::new(self)),
            WasiHttpError::Host { .. } => ConnectorError::other(Box::new(self), None),
            WasiHttpError::Closed { .. } => ConnectorError::io(Box::new(self)),
            WasiHttpError::Stream { .. } | WasiHttpError::RequestBody(_) => ConnectorError::other(Box::new(self), None),
            WasiHttpError::Refused(_) => ConnectorError::user(Box::new(self)),
        }
    }
}

fn is_timeout(code: &ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::DnsTimeout
            | ErrorCode::ConnectionTimeout
            | ErrorCode::ConnectionReadTimeout
            | ErrorCode::ConnectionWriteTimeout
            | ErrorCode::HttpResponseTimeout
    )
}

/// Failures another attempt can get past: the server or the network, not the request.
fn is_transient(code: &ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::DnsError(_)
            | ErrorCode::DestinationNotFound
            | ErrorCode::DestinationUnavailable
            | ErrorCode::ConnectionRefused
            | ErrorCode::ConnectionTerminated
            | ErrorCode::ConnectionLimitReached
            | ErrorCode::HttpResponseIncomplete
    )
}

/// The request itself is what the host refused.
fn is_the_request(code: &ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::HttpRequestDenied
            | ErrorCode::HttpRequestLengthRequired
            | ErrorCode::HttpRequestBodySize(_)
            | ErrorCode::HttpRequestMethodInvalid
            | ErrorCode::HttpRequestUriInvalid
            | ErrorCode::HttpRequestUriTooLong
            | ErrorCode::HttpRequestHeaderSectionSize(_)
            | ErrorCode::HttpRequestHeaderSize(_)
            | ErrorCode::HttpRequestTrailerSectionSize(_)
            | ErrorCode::HttpRequestTrailerSize(_)
            | ErrorCode::DestinationIpProhibited
            | ErrorCode::ConfigurationError
    )
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Sending => "sending the request through wasi:http",
            Stage::RequestBody => "writing the request body to wasi:http",
            Stage::ResponseBody => "reading the response body from wasi:http",
        })
    }
}

impl fmt::Display for WasiHttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WasiHttpError::Host { stage, code } => write!(f, "{stage}: the host reported {code:?}"),
            WasiHttpError::Closed { stage } => write!(f, "{stage}: the host closed the stream early"),
            WasiHttpError::Stream { stage, detail } => write!(f, "{stage}: the stream failed: {detail}"),
            WasiHttpError::RequestBody(source) => write!(f, "the request body failed while it was sent: {source}"),
            WasiHttpError::Refused(part) => {
                let (what, value) = match part {
                    RequestPart::Header(name) => ("header", name),
                    RequestPart::Method(method) => ("method", method),
                    RequestPart::Scheme(scheme) => ("scheme", scheme),
                    RequestPart::Authority(authority) => ("authority", authority),
                    RequestPart::PathAndQuery(path) => ("path", path),
                };
                write!(f, "the wasi:http host refused the request's {what} `{value}`")
            }
        }
    }
}

/// The host's code is in the message; a failed request body is the source.
impl std::error::Error for WasiHttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WasiHttpError::RequestBody(source) => Some(source.as_ref()),
            _ => None,
        }
    }
}
