//! Client-side session resumption: the latest session (TLS 1.2 session or TLS 1.3 ticket) each
//! server name gave a connection of one context, taken (used once) by the next connection to
//! that name.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use openssl::ex_data::Index;
use openssl::ssl::{Ssl, SslSession};

/// At most this many server names keep a session; a new name past it replaces an arbitrary one.
const MAX_NAMES: usize = 256;

/// The sessions of one context (one backend), by server name. Holding only sessions of its own
/// context is what makes resuming them sound (`ffi::resume`).
#[derive(Default)]
pub(super) struct SessionCache {
    sessions: Mutex<HashMap<String, SslSession>>,
}

impl std::fmt::Debug for SessionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.sessions.lock().map_or(0, |s| s.len());
        f.debug_struct("SessionCache").field("names", &names).finish()
    }
}

impl SessionCache {
    /// Keeps `session` as the one to offer `server_name` next.
    pub(super) fn put(&self, server_name: &str, session: SslSession) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.len() >= MAX_NAMES && !sessions.contains_key(server_name) {
            if let Some(evicted) = sessions.keys().next().cloned() {
                sessions.remove(&evicted);
            }
        }
        sessions.insert(server_name.to_owned(), session);
    }

    /// The session to offer `server_name`, if any; it is not offered again.
    pub(super) fn take(&self, server_name: &str) -> Option<SslSession> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(server_name)
    }
}

/// The slot of an `Ssl` that holds the server name its sessions are filed under (the
/// new-session callback gets the connection, not the name).
pub(super) fn server_name_index() -> Result<Index<Ssl, String>, openssl::error::ErrorStack> {
    static INDEX: OnceLock<Result<Index<Ssl, String>, openssl::error::ErrorStack>> = OnceLock::new();
    INDEX.get_or_init(Ssl::new_ex_index).clone()
}
