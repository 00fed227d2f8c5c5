//! What a processor listener buffers for its handler.

use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use tokio::time::Instant;

use crate::handler::{DeletedObject, ResourceEventHandler};

/// One notification for one handler (client-go's add/update/deleteNotification).
pub(crate) enum Notification<K> {
    Add {
        obj: Arc<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<K>,
        new: Arc<K>,
    },
    Delete(DeletedObject<K>),
}

impl<K> Notification<K> {
    /// Whether this is an add of the initial list (counted by the listener's sync tracker).
    pub(crate) fn is_initial_add(&self) -> bool {
        matches!(
            self,
            Notification::Add {
                is_in_initial_list: true,
                ..
            }
        )
    }
}

impl<K: 'static> Notification<K> {
    /// Calls the matching handler method.
    pub(crate) fn deliver(&self, handler: &dyn ResourceEventHandler<K>) {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete(d) => handler.on_delete(d),
        }
    }
}

/// The notifications made from one popped FIFO batch (with whether each is a resync), shared by
/// every listener: a listener buffers a handle to the batch, not its own copies, so handing a
/// batch to ten handlers costs ten reference counts instead of two per notification per handler.
/// The batch, and the objects only it still holds, are freed by whichever handler finishes it last.
pub(crate) struct Batch<K> {
    pub(crate) notes: Vec<(Notification<K>, bool)>,
    pub(crate) enqueued: Instant,
    /// How many notifications are not resyncs.
    pub(crate) plain: u64,
    /// How many are initial adds (never resyncs).
    pub(crate) initial: u64,
    /// What handler adapters share per notification while the batch lives (the compact
    /// informer's typed copies, see `typed_copies`), made by the first adapter that needs it.
    pub(crate) shared: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl<K> Batch<K> {
    pub(crate) fn new(notes: Vec<(Notification<K>, bool)>, enqueued: Instant) -> Self {
        let plain = notes.iter().filter(|(_, sync)| !sync).count() as u64;
        let initial = notes.iter().filter(|(n, _)| n.is_initial_add()).count() as u64;
        Batch {
            notes,
            enqueued,
            plain,
            initial,
            shared: OnceLock::new(),
        }
    }

    /// A batch one listener alone gets (a late handler's initial adds): there is nothing to
    /// share, so handler adapters find no room for it in [`Batch::shared`].
    pub(crate) fn for_one_listener(notes: Vec<(Notification<K>, bool)>, enqueued: Instant) -> Self {
        let batch = Batch::new(notes, enqueued);
        let _ = batch.shared.set(Box::new(NotShared));
        batch
    }

    /// How many notifications a listener gets from this batch: all, or all but the resyncs.
    pub(crate) fn count_for(&self, syncs: bool) -> u64 {
        if syncs {
            self.notes.len() as u64
        } else {
            self.plain
        }
    }
}

/// What [`Batch::shared`] holds in a batch for one listener.
struct NotShared;

thread_local! {
    /// The batch and index of the notification this thread is delivering, so a handler adapter
    /// can find what other handlers of the same notification left for it ([`Batch::shared`]).
    static DELIVERING_NOTE: RefCell<Option<(Arc<dyn Any + Send + Sync>, usize)>> =
        const { RefCell::new(None) };
}

/// Marks `batch` as the one this thread delivers from (`None`: none any more).
pub(crate) fn set_delivering_batch(batch: Option<Arc<dyn Any + Send + Sync>>) {
    DELIVERING_NOTE.with_borrow_mut(|current| *current = batch.map(|b| (b, 0)));
}

/// Marks notification `index` of the delivering batch as the one being delivered.
pub(crate) fn set_delivering_index(index: usize) {
    DELIVERING_NOTE.with_borrow_mut(|current| {
        if let Some((_, i)) = current {
            *i = index;
        }
    });
}

/// Runs `f` on the batch (as the thread holds it, and as `Batch<K>` if it holds
/// `Notification<K>`s) and index of the notification being delivered on this thread; `None`
/// outside a listener's delivery. Borrowed, not cloned: every handler asks for every
/// notification, and a clone's count would be one cache line for all delivery threads.
pub(crate) fn with_delivering_note<K: Send + Sync + 'static, R>(
    f: impl FnOnce(&Arc<dyn Any + Send + Sync>, &Batch<K>, usize) -> R,
) -> Option<R> {
    DELIVERING_NOTE.with_borrow(|current| {
        let (any, index) = current.as_ref()?;
        Some(f(any, any.downcast_ref::<Batch<K>>()?, *index))
    })
}
