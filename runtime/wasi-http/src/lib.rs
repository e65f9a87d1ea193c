//! The default HTTP client of Smithy SDK crates on `wasm32-wasip2`.
//!
//! On WASI 0.2 the host performs HTTP, TCP and TLS for the component through
//! `wasi:http/outgoing-handler`: no TLS library, no sockets and no reactor are compiled in, and the
//! host's trust store and TLS settings apply. This crate hands the SDK two things:
//!
//! | item | what the SDK uses it for |
//! |---|---|
//! | [`http_client`] | every request, sent through `wasi:http`, with the SDK's connect and read timeouts given to the host |
//! | [`sleep`] | retries' backoff and the SDK's timeouts, on `wasi:clocks` |
//! | [`default_client_plugin`] | both, installed as the SDK's defaults (what generated code hands it) |
//!
//! Off `wasm32-wasip2` the crate is empty.
//!
//! # Blocking, on any executor
//!
//! A component has one thread. This client waits for the host by blocking that thread on the
//! host's pollables, so its futures complete when first polled and need no reactor: they run
//! under any executor (tokio's current-thread runtime, `futures::executor::block_on`, `wstd`).
//! Requests from one component therefore go one at a time, and an SDK timeout shorter than the
//! host's cannot interrupt a request: the host enforces the connect and read timeouts.
//!
//! # Errors
//!
//! The host's `error-code` decides how the SDK sees a failure: timeouts as timeouts, a refused
//! or reset connection and DNS failures as I/O errors (both retried), TLS failures as errors that
//! are not retried, and a request the host refuses as the caller's error. The error keeps the
//! host's code ([`WasiHttpError::code`]).
//!
//! ```no_run
//! # #[cfg(all(target_os = "wasi", target_env = "p2"))]
//! # fn example() {
//! // What a generated crate's default client module does on wasm32-wasip2.
//! let http_client = smithy_wasi_http::http_client();
//! let sleep = smithy_wasi_http::sleep();
//! # let _ = (http_client, sleep);
//! # }
//! ```

#![warn(missing_docs, unreachable_pub)]
// Off wasm32-wasip2 the items are not compiled, so the links above have nothing to point at
// there (documenting a tree that holds this crate on another target).
#![cfg_attr(not(all(target_os = "wasi", target_env = "p2")), allow(rustdoc::broken_intra_doc_links))]

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod body;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod client;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod error;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod plugin;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod request;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod sleep;

#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub use client::{http_client, WasiHttpClient};
#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub use error::{RequestPart, Stage, WasiHttpError};
#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub use plugin::default_client_plugin;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub use sleep::{sleep, WasiSleep};
