//! How many connections a client keeps open to one host at a time
//! ([`Builder::max_connections_per_host`](crate::Builder::max_connections_per_host)): a
//! connection takes a slot of its host before it connects and gives it back when it closes; a
//! request that finds every slot taken waits for a pooled connection to come free (hyper's pool
//! hands it one) or for a slot (under the connect timeout).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The open connections per host (`host:port`) of one client, shared by its pools.
#[derive(Debug)]
pub(crate) struct HostLimits {
    max: usize,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// One connection's slot; dropping it (with the connection) frees the slot.
#[derive(Debug)]
pub(crate) struct HostSlot(#[allow(dead_code)] OwnedSemaphorePermit);

impl HostLimits {
    /// At most `max` (at least 1) open connections per host.
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(HostLimits { max: max.max(1), hosts: Mutex::new(HashMap::new()) })
    }

    /// Waits for a free slot for a connection to `authority`.
    pub(crate) async fn acquire(&self, authority: &str) -> HostSlot {
        let semaphore = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // Forget hosts with no open connection and nobody waiting, so that a client that
            // talks to many hosts over its life keeps entries only for the ones in use.
            if hosts.len() > 64 {
                hosts.retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < self.max);
            }
            Arc::clone(hosts.entry(authority.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(self.max))))
        };
        // The semaphore is never closed, so acquiring only waits.
        match semaphore.acquire_owned().await {
            Ok(permit) => HostSlot(permit),
            Err(_) => unreachable!("host semaphores are never closed"),
        }
    }

    /// How many hosts have an entry (for tests).
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.hosts.lock().map(|h| h.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_slot_is_given_back_when_its_connection_goes() {
        let limits = HostLimits::new(2);
        let a = limits.acquire("h:443").await;
        let _b = limits.acquire("h:443").await;
        // A third waits until one is dropped.
        let third = limits.acquire("h:443");
        tokio::pin!(third);
        assert!(tokio::time::timeout(std::time::Duration::from_millis(50), &mut third).await.is_err());
        drop(a);
        tokio::time::timeout(std::time::Duration::from_secs(1), third).await.expect("slot freed");
        // Other hosts are not affected.
        let _other =
            tokio::time::timeout(std::time::Duration::from_secs(1), limits.acquire("g:443")).await.expect("own slots");
    }

    #[tokio::test]
    async fn idle_hosts_are_forgotten() {
        let limits = HostLimits::new(1);
        for i in 0..200 {
            drop(limits.acquire(&format!("host{i}:443")).await);
        }
        assert!(limits.tracked() <= 65, "{}", limits.tracked());
    }
}
