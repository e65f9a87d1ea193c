//! An `http` request's head as a `wasi:http` outgoing request, and the SDK's timeouts as the
//! host's request options.

use std::time::Duration;

use http::request::Parts;
use wasip2::http::types::{Fields, Method, OutgoingRequest, RequestOptions, Scheme};

use crate::error::{RequestPart, WasiHttpError};

/// Headers the host manages itself (`wasi:http` hosts refuse them as forbidden): the host
/// derives them from the authority and the body.
const HOST_MANAGED: &[&str] = &["connection", "host", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"];

/// The request's head, for `outgoing-handler.handle`.
pub(crate) fn outgoing_request(head: &Parts) -> Result<OutgoingRequest, WasiHttpError> {
    let entries: Vec<(String, Vec<u8>)> = head
        .headers
        .iter()
        .filter(|(name, _)| !HOST_MANAGED.contains(&name.as_str()))
        .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
        .collect();
    let headers = Fields::from_list(&entries).map_err(|_| {
        // The host names no header: find the first it refuses on its own.
        let refused = entries.iter().find(|entry| Fields::from_list(std::slice::from_ref(entry)).is_err());
        WasiHttpError::Refused(RequestPart::Header(refused.map_or_else(String::new, |(name, _)| name.clone())))
    })?;
    let request = OutgoingRequest::new(headers);
    let refused = WasiHttpError::Refused;
    request.set_method(&method(&head.method)).map_err(|()| refused(RequestPart::Method(head.method.to_string())))?;
    let scheme_name = head.uri.scheme_str().unwrap_or("https");
    let scheme = match scheme_name {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_owned()),
    };
    request.set_scheme(Some(&scheme)).map_err(|()| refused(RequestPart::Scheme(scheme_name.to_owned())))?;
    let authority = head.uri.authority().map(|a| a.as_str());
    request
        .set_authority(authority)
        .map_err(|()| refused(RequestPart::Authority(authority.unwrap_or_default().to_owned())))?;
    let path = head.uri.path_and_query().map(|p| p.as_str());
    request
        .set_path_with_query(path)
        .map_err(|()| refused(RequestPart::PathAndQuery(path.unwrap_or_default().to_owned())))?;
    Ok(request)
}

fn method(method: &http::Method) -> Method {
    match *method {
        http::Method::GET => Method::Get,
        http::Method::HEAD => Method::Head,
        http::Method::POST => Method::Post,
        http::Method::PUT => Method::Put,
        http::Method::DELETE => Method::Delete,
        http::Method::CONNECT => Method::Connect,
        http::Method::OPTIONS => Method::Options,
        http::Method::TRACE => Method::Trace,
        http::Method::PATCH => Method::Patch,
        ref other => Method::Other(other.as_str().to_owned()),
    }
}

/// The SDK's timeouts as the host enforces them: connecting, and the read timeout both for the
/// response's first byte and between the body's bytes. A host that does not support one
/// (`Err`) keeps its own.
pub(crate) fn options(connect: Option<Duration>, read: Option<Duration>) -> RequestOptions {
    let options = RequestOptions::new();
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    if let Some(connect) = connect {
        let _ = options.set_connect_timeout(Some(nanos(connect)));
    }
    if let Some(read) = read {
        let _ = options.set_first_byte_timeout(Some(nanos(read)));
        let _ = options.set_between_bytes_timeout(Some(nanos(read)));
    }
    options
}
