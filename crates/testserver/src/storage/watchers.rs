//! The live watchers of one resource and the fan-out of new events to them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::event::{Emit, Event};
use super::filter::Filter;

/// One event as a watcher receives it.
pub(crate) type Delivery = (Arc<Event>, Emit);

/// A registered watcher: its predicate and the sending half of its bounded buffer.
#[derive(Debug)]
pub(crate) struct Slot {
    filter: Arc<Filter>,
    tx: mpsc::Sender<Delivery>,
    /// Set when the buffer overflowed and the watcher was dropped.
    dropped_slow: Arc<AtomicBool>,
}

/// The watchers of one resource, by id.
#[derive(Debug, Default)]
pub(crate) struct Watchers {
    slots: HashMap<u64, Slot>,
}

impl Watchers {
    pub(crate) fn insert(
        &mut self,
        id: u64,
        filter: Arc<Filter>,
        tx: mpsc::Sender<Delivery>,
        dropped_slow: Arc<AtomicBool>,
    ) {
        self.slots.insert(
            id,
            Slot {
                filter,
                tx,
                dropped_slow,
            },
        );
    }

    pub(crate) fn remove(&mut self, id: u64) {
        self.slots.remove(&id);
    }

    /// Hands `event` to every interested watcher without ever waiting: a watcher whose buffer
    /// is full is removed (its stream then ends after what it already has, like the real
    /// server's "forcing watcher close due to unresponsiveness").
    pub(crate) fn dispatch(&mut self, event: &Arc<Event>) {
        self.slots.retain(|_, slot| {
            let Some(emit) = event.emit_for(&slot.filter) else {
                return true;
            };
            match slot.tx.try_send((event.clone(), emit)) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    slot.dropped_slow.store(true, Ordering::Release);
                    tracing::warn!("closing a watcher whose buffer is full");
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
    }

    /// Drops every watcher (their streams end).
    pub(crate) fn clear(&mut self) {
        self.slots.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
}
