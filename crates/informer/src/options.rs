//! How an informer is configured.

use std::time::Duration;

use kcache_delta_fifo::FifoMode;
use kcache_reflector::ReflectorOptions;

use crate::listener::OverflowPolicy;

/// Options of a [`crate::SharedIndexInformer`].
#[derive(Debug, Clone)]
pub struct InformerOptions {
    /// Names the informer (and its reflector) in logs and metrics.
    pub name: String,
    /// The resync period handlers added with `add_event_handler` get, and the initial resync
    /// check period (client-go's `defaultEventHandlerResyncPeriod`); zero: no resync.
    pub resync_period: Duration,
    /// The queue between reflector and cache. RealFIFO by default, as in client-go since 0.33
    /// (feature InOrderInformers, locked on in 1.36): handlers see every event in the order the
    /// API server sent it, and a relist's deletions come before its objects. `FifoMode::Atomic`
    /// adds client-go's AtomicFIFO: a relist reaches the cache as one write and no reader sees
    /// it half applied. `FifoMode::Delta` is client-go's DeltaFIFO (≤ 0.32), which merges a
    /// key's queued deltas and hands keys out in first-queued order.
    pub fifo_mode: FifoMode,
    /// The reflector's options (its name and resync period are set by the informer).
    pub reflector: ReflectorOptions,
    /// What happens when a handler's buffer grows too long (default: unbounded, like client-go).
    pub overflow: OverflowPolicy,
}

impl Default for InformerOptions {
    fn default() -> Self {
        InformerOptions {
            name: "informer".into(),
            resync_period: Duration::ZERO,
            fifo_mode: FifoMode::Real,
            reflector: ReflectorOptions::default(),
            overflow: OverflowPolicy::Unbounded,
        }
    }
}

impl InformerOptions {
    /// Default options with this name.
    pub fn named(name: impl Into<String>) -> Self {
        InformerOptions {
            name: name.into(),
            ..InformerOptions::default()
        }
    }
}
