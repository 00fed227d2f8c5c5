//! A processing item that marks itself done when dropped.

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use crate::engine::Engine;
use crate::ordering::{Fifo, QueueOrdering};

/// An item handed out by [`Queue::get_guarded`](crate::Queue::get_guarded): it derefs to the
/// item and calls the queue's `done` for it when dropped, so a worker that returns early (`?`)
/// or unwinds cannot leave the item processing forever. [`done`](Self::done) says it explicitly.
///
/// Retry before the guard drops: `add_rate_limited(item.clone())` while processing marks the
/// item dirty, and the drop's `done` queues it again — client-go's usual order.
pub struct DoneGuard<T, O = Fifo<T>>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    engine: Arc<Engine<T, O>>,
    item: T,
}

impl<T, O> DoneGuard<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    pub(crate) fn new(engine: Arc<Engine<T, O>>, item: T) -> Self {
        DoneGuard { engine, item }
    }

    /// The item being processed.
    pub fn item(&self) -> &T {
        &self.item
    }

    /// Ends processing now (what dropping the guard does).
    pub fn done(self) {}
}

impl<T, O> Deref for DoneGuard<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    type Target = T;
    fn deref(&self) -> &T {
        &self.item
    }
}

impl<T, O> Drop for DoneGuard<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn drop(&mut self) {
        self.engine.done(&self.item);
    }
}

impl<T, O> fmt::Debug for DoneGuard<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + fmt::Debug + 'static,
    O: QueueOrdering<T>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DoneGuard").field(&self.item).finish()
    }
}
