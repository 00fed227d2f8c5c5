//! What `add_event_handler` returns (client-go's `ResourceEventHandlerRegistration`).

use std::sync::Arc;
use std::time::Duration;

use kcache_core::Object;

use crate::latency::HandlerLatency;
use crate::listener::Listener;
use crate::sync_signal::SyncSignal;

/// What a registration asks of its informer, whatever the informer's cache type.
pub(crate) trait InformerSync: Send + Sync {
    fn has_synced(&self) -> bool;
    fn is_stopped(&self) -> bool;
    fn signal(&self) -> &SyncSignal;
    fn name(&self) -> &str;
}

/// One handler's registration: its own `has_synced`, and what is waiting for it.
pub struct ResourceEventHandlerRegistration<K> {
    pub(crate) listener: Arc<Listener<K>>,
    pub(crate) informer: Arc<dyn InformerSync>,
}

impl<K> Clone for ResourceEventHandlerRegistration<K> {
    fn clone(&self) -> Self {
        ResourceEventHandlerRegistration {
            listener: self.listener.clone(),
            informer: self.informer.clone(),
        }
    }
}

impl<K: Object> ResourceEventHandlerRegistration<K> {
    /// True once the informer has synced and this handler has received every object of the
    /// initial list (or, for a late handler, every synthetic add). A handler that panics on an
    /// initial add still counts it, so this cannot stay false forever (client-go #129024).
    pub fn has_synced(&self) -> bool {
        self.informer.has_synced() && self.listener.initial_pending() == 0
    }

    /// Waits (without polling) until [`has_synced`](Self::has_synced) or the informer stops;
    /// returns `has_synced()`.
    pub async fn wait_for_sync(&self) -> bool {
        self.informer
            .signal()
            .wait_until(|| self.has_synced() || self.informer.is_stopped())
            .await;
        self.has_synced()
    }

    /// Notifications buffered for this handler and not yet fully delivered.
    pub fn pending(&self) -> usize {
        self.listener.pending()
    }

    /// How long the oldest undelivered notification has waited; `None` when nothing waits.
    pub fn oldest_pending_age(&self) -> Option<Duration> {
        self.listener.oldest_pending_age()
    }

    /// Notifications delivered (panicked ones included).
    pub fn delivered(&self) -> u64 {
        self.listener.delivered()
    }

    /// Notifications whose handler call panicked.
    pub fn panics(&self) -> u64 {
        self.listener.panics()
    }

    /// Whether a bounded buffer overflowed and the handler was disconnected.
    pub fn is_overflowed(&self) -> bool {
        self.listener.is_overflowed()
    }

    /// How long this handler's calls have taken (client-go's processing-latency buckets).
    pub fn processing_latency(&self) -> HandlerLatency {
        self.listener.latency().snapshot()
    }

    /// The resync period this handler actually got (after the informer's adjustments).
    pub fn resync_period(&self) -> Duration {
        self.listener.resync.lock().period
    }
}

impl<K> std::fmt::Debug for ResourceEventHandlerRegistration<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEventHandlerRegistration")
            .field("id", &self.listener.id)
            .finish()
    }
}
