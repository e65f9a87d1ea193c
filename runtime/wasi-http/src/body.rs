//! Bodies: the request's, written to the host's output stream; the response's, read from the
//! host's input stream as the SDK polls it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use wasip2::http::types::{IncomingBody, IncomingResponse, OutgoingBody};
use wasip2::io::streams::{InputStream, OutputStream, StreamError};

use crate::error::{Stage, WasiHttpError};

/// How much the response body asks the host for at a time.
const READ_SIZE: u64 = 64 * 1024;

/// The host's error for a failed stream operation at `stage`.
fn stream_error(stage: Stage, error: StreamError) -> WasiHttpError {
    match error {
        StreamError::Closed => WasiHttpError::Closed { stage },
        StreamError::LastOperationFailed(e) => match wasip2::http::types::http_error_code(&e) {
            Some(code) => WasiHttpError::Host { stage, code },
            None => WasiHttpError::Stream { stage, detail: e.to_debug_string() },
        },
    }
}

/// Writes `body` to the request's body stream, then finishes it.
pub(crate) async fn write_request_body<B>(mut body: B, outgoing: OutgoingBody) -> Result<(), WasiHttpError>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stage = Stage::RequestBody;
    let closed = || WasiHttpError::Closed { stage };
    let stream = outgoing.write().map_err(|()| closed())?;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| WasiHttpError::RequestBody(Arc::from(e.into())))?;
        if let Ok(data) = frame.into_data() {
            write_all(&stream, &data)?;
        }
    }
    stream.blocking_flush().map_err(|e| stream_error(stage, e))?;
    // The stream is a child of the body: it goes first.
    drop(stream);
    OutgoingBody::finish(outgoing, None).map_err(|code| WasiHttpError::Host { stage, code })
}

/// Writes all of `data`, as much at a time as the host takes.
fn write_all(stream: &OutputStream, mut data: &[u8]) -> Result<(), WasiHttpError> {
    while !data.is_empty() {
        let ready = stream.check_write().map_err(|e| stream_error(Stage::RequestBody, e))?;
        if ready == 0 {
            stream.subscribe().block();
            continue;
        }
        let n = data.len().min(usize::try_from(ready).unwrap_or(usize::MAX));
        stream.write(&data[..n]).map_err(|e| stream_error(Stage::RequestBody, e))?;
        data = &data[n..];
    }
    Ok(())
}

/// A response's body, read from the host as it is polled (each poll blocks until the host has
/// bytes, the end, or an error).
pub(crate) struct ResponseBody {
    // Declared in the order they must be dropped: a stream before its body, a body before its
    // response.
    stream: Option<InputStream>,
    body: Option<IncomingBody>,
    _response: IncomingResponse,
}

impl ResponseBody {
    pub(crate) fn new(response: IncomingResponse) -> Result<Self, WasiHttpError> {
        let closed = || WasiHttpError::Closed { stage: Stage::ResponseBody };
        let body = response.consume().map_err(|()| closed())?;
        let stream = body.stream().map_err(|()| closed())?;
        Ok(ResponseBody { stream: Some(stream), body: Some(body), _response: response })
    }

    /// Ends the body: the stream goes, then the body is finished (its trailers are not read).
    fn finish(&mut self) {
        self.stream = None;
        if let Some(body) = self.body.take() {
            drop(IncomingBody::finish(body));
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = WasiHttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, WasiHttpError>>> {
        let Some(stream) = &self.stream else { return Poll::Ready(None) };
        match stream.blocking_read(READ_SIZE) {
            Ok(chunk) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk))))),
            Err(StreamError::Closed) => {
                self.finish();
                Poll::Ready(None)
            }
            Err(error) => {
                self.finish();
                Poll::Ready(Some(Err(stream_error(Stage::ResponseBody, error))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.stream.is_none()
    }
}
