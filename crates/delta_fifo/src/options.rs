//! How a FIFO is configured (client-go's `DeltaFIFOOptions` / `RealFIFOOptions`).

use std::fmt;
use std::sync::Arc;

use kcache_core::{BoxError, KnownObjects};

/// A function applied once to every object as it enters the FIFO, e.g. to drop managedFields
/// before the object is cached (client-go's `TransformFunc`). It is never applied to tombstones
/// or to `Sync` deltas of resync, whose objects come from the cache and were transformed already.
pub type TransformFunc<K> = Arc<dyn Fn(Arc<K>) -> Result<Arc<K>, BoxError> + Send + Sync>;

/// Which queueing rules the FIFO follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FifoMode {
    /// client-go's `DeltaFIFO`: deltas grouped per key, a key queued once and keeping its place,
    /// consecutive deletions collapsed.
    #[default]
    Delta,
    /// client-go's `RealFIFO` (`the_real_fifo.go`; the informer default since client-go 0.33, feature
    /// InOrderInformers, locked on in 1.36): every delta is its own queue entry in arrival order,
    /// nothing merged, handed out from the head only; `replace` queues its tombstones before the
    /// listed objects and always uses `Replaced`.
    Real,
    /// `RealFIFO` with client-go's `AtomicEvents` (feature AtomicFIFO, beta and on by default in
    /// 1.36): as [`FifoMode::Real`], but a `replace` queues the whole list as one
    /// [`crate::AtomicEvent::ReplacedAll`] and a `resync` one [`crate::AtomicEvent::SyncAll`],
    /// so the consumer can apply a relist to its cache in one write. Known objects are not
    /// consulted (client-go forbids them in this mode; here they are ignored).
    Atomic,
}

/// The options of [`crate::DeltaFifo::new`].
pub struct DeltaFifoOptions<K> {
    /// The cache downstream (the informer's indexer): consulted for deletes, relist tombstones
    /// and resync. Without it, `resync` is a no-op and a delete of an unqueued key is ignored.
    pub known_objects: Option<Arc<dyn KnownObjects<K>>>,
    /// `replace` emits `Replaced` instead of `Sync` (Delta mode only; the others always do).
    pub emit_delta_type_replaced: bool,
    /// Applied once to each object entering the FIFO.
    pub transformer: Option<TransformFunc<K>>,
    /// The queueing rules.
    pub mode: FifoMode,
}

impl<K> Default for DeltaFifoOptions<K> {
    fn default() -> Self {
        DeltaFifoOptions {
            known_objects: None,
            emit_delta_type_replaced: false,
            transformer: None,
            mode: FifoMode::Delta,
        }
    }
}

impl<K> fmt::Debug for DeltaFifoOptions<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaFifoOptions")
            .field("known_objects", &self.known_objects.is_some())
            .field("emit_delta_type_replaced", &self.emit_delta_type_replaced)
            .field("transformer", &self.transformer.is_some())
            .field("mode", &self.mode)
            .finish()
    }
}
