//! Session tickets for resumption, kept only from connections whose chain passed our checks.
//!
//! A resumed session skips certificate validation, so a ticket must never come from a server
//! whose chain [`super::chain`] refused. On TLS 1.2 the ticket arrives inside the handshake,
//! before that check can run; so each connection carries a [`TicketGate`] that holds its ticket
//! back until the connection is approved, and passes later tickets (TLS 1.3 sends them after
//! the handshake) straight to the store.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use s2n_tls::callbacks::{SessionTicket, SessionTicketCallback};
use s2n_tls::connection::Connection;

/// How many server names the store keeps a ticket for (rustls's client session cache keeps
/// 256 too). An S3 client talks to one host name per bucket; without a bound the store grew
/// with every bucket a process ever used.
pub(super) const MAX_SERVER_NAMES: usize = 256;

/// The most recent session ticket per server name, for resumption on new connections; at most
/// [`MAX_SERVER_NAMES`] names, the one least recently given a ticket leaving first.
#[derive(Default)]
pub(super) struct TicketStore {
    inner: Mutex<Tickets>,
}

#[derive(Default)]
struct Tickets {
    by_name: HashMap<String, Vec<u8>>,
    /// Names, least recently given a ticket first.
    order: VecDeque<String>,
}

impl TicketStore {
    /// The ticket to offer to `server_name`, if any, taken out of the store: a ticket is used
    /// once (RFC 8446 C.4: reusing one makes connections linkable), and the connection that
    /// uses it receives fresh ones.
    pub(super) fn take(&self, server_name: &str) -> Option<Vec<u8>> {
        let mut tickets = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = tickets.by_name.remove(server_name)?;
        tickets.order.retain(|name| name != server_name);
        Some(ticket)
    }

    fn insert(&self, server_name: String, ticket: Vec<u8>) {
        let mut tickets = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Tickets { by_name, order } = &mut *tickets;
        if by_name.insert(server_name.clone(), ticket).is_some() {
            order.retain(|name| *name != server_name);
        }
        order.push_back(server_name);
        while order.len() > MAX_SERVER_NAMES {
            if let Some(oldest) = order.pop_front() {
                by_name.remove(&oldest);
            }
        }
    }

    /// Whether `server_name` holds a ticket.
    #[cfg(test)]
    fn contains(&self, server_name: &str) -> bool {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).by_name.contains_key(server_name)
    }

    /// How many server names hold a ticket.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).by_name.len()
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
        assert_eq!(store.take("bad.example"), None, "a refused connection's ticket is discarded");

        let approved = TicketGate::new(Arc::clone(&store));
        approved.receive("good.example".into(), vec![2]);
        assert_eq!(store.take("good.example"), None, "held until approved");
        approved.approve();
        assert_eq!(store.take("good.example"), Some(vec![2]));
        approved.receive("good.example".into(), vec![3]);
        assert_eq!(store.take("good.example"), Some(vec![3]), "after approval tickets go straight through");
    }

    #[test]
    fn the_store_keeps_at_most_max_server_names_dropping_the_least_recent() {
        let store = TicketStore::default();
        for i in 0..1000 {
            store.insert(format!("bucket-{i}.s3.example"), vec![1]);
        }
        assert_eq!(store.len(), MAX_SERVER_NAMES);
        assert!(!store.contains("bucket-0.s3.example"), "the oldest name left");
        assert!(store.contains("bucket-999.s3.example"));
        // A name given a fresh ticket counts as recent again.
        let oldest_kept = format!("bucket-{}.s3.example", 1000 - MAX_SERVER_NAMES);
        store.insert(oldest_kept.clone(), vec![2]);
        store.insert("new.s3.example".to_owned(), vec![3]);
        assert!(store.contains(&oldest_kept));
        assert!(!store.contains(&format!("bucket-{}.s3.example", 1001 - MAX_SERVER_NAMES)));
        assert_eq!(store.len(), MAX_SERVER_NAMES);
    }

    #[test]
    fn a_ticket_is_used_once() {
        let store = TicketStore::default();
        store.insert("host.example".to_owned(), vec![7]);
        assert_eq!(store.take("host.example"), Some(vec![7]));
        assert_eq!(store.take("host.example"), None, "a second connection does not reuse it");
        assert_eq!(store.len(), 0);
    }
}
