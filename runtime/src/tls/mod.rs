//! TLS backends: one module per implementation, behind one small interface.
//!
//! A backend is prepared once (trust roots loaded, configuration built) and then performs
//! handshakes over connected TCP streams. Preparation blocks: when it is slow (aws-lc's first
//! use, reading the system store) it runs on a background thread started when a client is built,
//! or on tokio's blocking pool at the first connection; when it is quick, inline at the first
//! connection.

mod backend;
#[cfg(any(rustls_backend, rustls_in_place))]
mod client_auth_seen;
mod info;
mod key_log_file;
mod lazy;
mod names;
#[cfg(openssl_provider)]
pub(crate) mod openssl;
mod preparing;
#[cfg(read_ahead)]
mod read_ahead;
mod refusal;
#[cfg(rustls_backend)]
pub(crate) mod rustls;
#[cfg(rustls_in_place)]
pub(crate) mod rustls_in_place;
#[cfg(rustls)]
mod rustls_roots;
#[cfg(s2n)]
pub(crate) mod s2n;
mod settings;
mod stream;
mod transport;

pub(crate) use backend::TlsBackend;
pub use info::TlsInfo;
pub(crate) use lazy::LazyTlsBackend;
pub(crate) use refusal::{ReadRefusal, RefusalLog};
pub(crate) use settings::TlsSettings;
pub(crate) use stream::MaybeTlsStream;
pub(crate) use transport::Transport;
