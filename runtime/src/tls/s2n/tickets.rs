//! Session tickets for resumption, kept only from connections whose chain passed our checks.
//!
//! A resumed session skips certificate validation, so a ticket must never come from a server
//! whose chain [`super::chain`] refused. On TLS 1.2 the ticket arrives inside the handshake,
//! before that check can run; so each connection carries a [`TicketGate`] that holds its ticket
//! back until the connection is approved, and passes later tickets (TLS 1.3 sends them after
//! the handshake) straight to the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use s2n_tls::callbacks::{SessionTicket, SessionTicketCallback};
use s2n_tls::connection::Connection;

/// The most recent session ticket per server name, for resumption on new connections.
#[derive(Default)]
pub(super) struct TicketStore {
    tickets: Mutex<HashMap<String, Vec<u8>>>,
}

impl TicketStore {
    /// The ticket to offer to `server_name`, if any.
    pub(super) fn get(&self, server_name: &str) -> Option<Vec<u8>> {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner()).get(server_name).cloned()
    }

    fn insert(&self, server_name: String, ticket: Vec<u8>) {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner()).insert(server_name, ticket);
    }
}

/// Where one connection's tickets go: held back until the connection is approved.
pub(super) struct TicketGate {
    store: Arc<TicketStore>,
    state: Mutex<GateState>,
}

enum GateState {
    /// Not approved yet: the latest ticket received, for this server name.
    Pending(Option<(String, Vec<u8>)>),
    /// Approved: tickets go to the store.
    Approved,
}

impl TicketGate {
    pub(super) fn new(store: Arc<TicketStore>) -> Arc<Self> {
        Arc::new(TicketGate { store, state: Mutex::new(GateState::Pending(None)) })
    }

    fn receive(&self, server_name: String, ticket: Vec<u8>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *state {
            GateState::Pending(slot) => *slot = Some((server_name, ticket)),
            GateState::Approved => self.store.insert(server_name, ticket),
        }
    }

    /// The connection's chain passed: its held ticket and every later one go to the store.
    /// A gate that is dropped without approval discards what it held.
    pub(super) fn approve(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let GateState::Pending(Some((name, ticket))) = std::mem::replace(&mut *state, GateState::Approved) {
            self.store.insert(name, ticket);
        }
    }
}

/// Hands tickets from s2n-tls to the connection's gate (set as its application context).
pub(super) struct TicketSink;

impl SessionTicketCallback for TicketSink {
    fn on_session_ticket(&self, connection: &mut Connection, ticket: &SessionTicket) {
        let Some(name) = connection.server_name().map(str::to_owned) else { return };
        let Some(gate) = connection.application_context::<Arc<TicketGate>>() else { return };
        let Ok(len) = ticket.len() else { return };
        let mut data = vec![0; len];
        if ticket.data(&mut data).is_ok() {
            gate.receive(name, data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_reach_the_store_only_after_approval() {
        let store = Arc::new(TicketStore::default());
        let refused = TicketGate::new(Arc::clone(&store));
        refused.receive("bad.example".into(), vec![1]);
        drop(refused);
        assert_eq!(store.get("bad.example"), None, "a refused connection's ticket is discarded");

        let approved = TicketGate::new(Arc::clone(&store));
        approved.receive("good.example".into(), vec![2]);
        assert_eq!(store.get("good.example"), None, "held until approved");
        approved.approve();
        assert_eq!(store.get("good.example"), Some(vec![2]));
        approved.receive("good.example".into(), vec![3]);
        assert_eq!(store.get("good.example"), Some(vec![3]), "after approval tickets go straight through");
    }
}
