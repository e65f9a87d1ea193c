//! TLS backends: one module per implementation, behind one small interface.
//!
//! A backend is prepared once (trust roots loaded, configuration built) and then performs
//! handshakes over connected TCP streams. Preparation blocks: when it is slow (aws-lc's first
//! use, reading the system store) it runs on a background thread started when a client is built,
//! or on tokio's blocking pool at the first connection; when it is quick, inline at the first
//! connection.

mod backend;
pub(crate) mod backends;
#[cfg(any(rustls_backend, rustls_in_place))]
mod client_auth_seen;
#[cfg(gathered_writes)]
mod gather;
mod info;
mod key_log_file;
mod lazy;
mod names;
mod preparing;
#[cfg(read_ahead)]
mod read_ahead;
mod refusal;
#[cfg(rustls)]
mod rustls_roots;
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
