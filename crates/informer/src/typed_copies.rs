//! Typed copies of the objects being delivered, shared by a compact informer's typed handlers:
//! the first handler to reach a notification makes its objects' [`LazyTyped`] handles, the others
//! take the same handles, so an event costs at most one decode per object it carries, not one
//! per handler. A typed handler decodes at once (under the cell's lock, so the others wait for
//! its copy rather than decode their own); a lazy handler only when it reads `K`.
//!
//! The copies hang off the notification's batch ([`Batch::shared`]): one cell per object of
//! each notification, found through the notification the delivery thread is running
//! ([`with_delivering_note`]). A copy is dropped when every typed handler has taken it, or with the
//! batch (a handler that skips the notification — a resync not meant for it, a removed one).
//! A batch only one handler gets (a late handler's initial adds) shares nothing.
//! Handlers run apart in time (each drains its own buffer), so copies made by the first handler
//! wait for the last: at most [`KEPT`] copies per informer are kept at once; past that the
//! oldest is let go (a handler that far behind makes its own), so the copies kept are the
//! ones most handlers are still to take. With one handler nothing is kept.

use std::any::Any;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use kcache_compact::Compact;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

use crate::lazy_typed::LazyTyped;
use crate::notification::{with_delivering_note, Batch};

/// The most typed copies an informer keeps waiting for its other handlers (a few batches).
const KEPT: usize = 2048;

/// Which object of a notification: an add's or delete's object, or an update's old or new.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Old = 0,
    New = 1,
}

/// The shared typed copies of one informer's typed handlers.
pub(crate) struct TypedCopies<K> {
    handlers: AtomicUsize,
    /// Copies kept in the cells of batches this value made, bounded by [`KEPT`].
    kept: Arc<AtomicUsize>,
    /// The cells given a copy, oldest first (some since taken or gone with their batch).
    order: Mutex<VecDeque<Kept<K>>>,
}

/// Where a copy was kept: notification `index` of `batch` (a `Batch<Compact<K>>`), `side`.
struct Kept<K> {
    batch: Weak<dyn Any + Send + Sync>,
    index: usize,
    side: Side,
    of: PhantomData<fn() -> K>,
}

/// One batch's cells: for each notification, its old and new (or only) object's copy.
struct Cells<K> {
    cells: Box<[[Mutex<Cell<K>>; 2]]>,
    /// The count of the `TypedCopies` that made them.
    kept: Arc<AtomicUsize>,
}

enum Cell<K> {
    /// Nobody has shared a copy yet.
    Empty,
    /// A copy (decoded or not yet), and how many handlers are yet to take it.
    Kept {
        copy: Arc<LazyTyped<K>>,
        left: usize,
    },
    /// Every handler expected has taken it, or it was let go to keep others.
    Taken,
}

impl<K> Cell<K> {
    /// Drops a kept copy (counted in `kept`); nothing if none is kept.
    fn let_go(&mut self, kept: &AtomicUsize) {
        if let Cell::Kept { .. } = self {
            *self = Cell::Taken;
            kept.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl<K> Drop for Cells<K> {
    fn drop(&mut self) {
        for cell in self.cells.iter_mut().flatten() {
            cell.get_mut().let_go(&self.kept);
        }
    }
}

impl<K: DeserializeOwned + Send + Sync + 'static> TypedCopies<K> {
    pub(crate) fn new() -> Self {
        TypedCopies {
            handlers: AtomicUsize::new(0),
            kept: Arc::new(AtomicUsize::new(0)),
            order: Mutex::new(VecDeque::new()),
        }
    }

    pub(crate) fn handler_added(&self) {
        self.handlers.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn handler_removed(&self) {
        self.handlers.fetch_sub(1, Ordering::Relaxed);
    }

    /// The typed copy of `obj`, the `side` object of the notification being delivered (shared
    /// with the other handlers); `None`, logged, only if `K`'s decoding is not deterministic.
    pub(crate) fn get(&self, obj: &Arc<Compact<K>>, side: Side) -> Option<Arc<K>> {
        match self.shared(obj, side, true) {
            Some(copy) => decoded(&copy),
            // Nobody to share with: no handle around the copy.
            None => typed(obj),
        }
    }

    /// The lazy handle of `obj`, the `side` object of the notification being delivered (shared
    /// with the other handlers, decoded or not).
    pub(crate) fn get_lazy(&self, obj: &Arc<Compact<K>>, side: Side) -> Arc<LazyTyped<K>> {
        self.shared(obj, side, false)
            .unwrap_or_else(|| Arc::new(LazyTyped::new(obj.clone())))
    }

    /// The handle of `obj` shared with the other handlers, `None` where there is none to share
    /// (one handler, outside a delivery, a copy already let go); with `decode`, a copy kept for
    /// the other handlers is decoded before they may take it.
    fn shared(&self, obj: &Arc<Compact<K>>, side: Side, decode: bool) -> Option<Arc<LazyTyped<K>>> {
        let handlers = self.handlers.load(Ordering::Relaxed);
        if handlers <= 1 {
            return None;
        }
        with_delivering_note::<Compact<K>, _>(|held, batch, index| {
            let cells = self.cells(batch)?;
            let mut cell = cells.cells[index][side as usize].lock();
            let (copy, newly_kept) = match &mut *cell {
                Cell::Kept { copy, left } => {
                    let copy = copy.clone();
                    *left -= 1;
                    if *left == 0 {
                        cell.let_go(&cells.kept);
                    }
                    (copy, false)
                }
                Cell::Taken => return None,
                Cell::Empty => {
                    let copy = Arc::new(LazyTyped::new(obj.clone()));
                    *cell = Cell::Kept {
                        copy: copy.clone(),
                        left: handlers - 1,
                    };
                    cells.kept.fetch_add(1, Ordering::Relaxed);
                    (copy, true)
                }
            };
            if decode {
                // Under the cell's lock, so the other typed handlers wait for this copy instead
                // of decoding their own. An error is logged where the caller asks for the copy.
                let _ = copy.try_typed();
            }
            drop(cell);
            if newly_kept {
                self.kept_in(Kept {
                    batch: Arc::downgrade(held),
                    index,
                    side,
                    of: PhantomData,
                });
            }
            Some(copy)
        })
        .flatten()
    }

    /// Records a kept copy, and lets the oldest go while more than [`KEPT`] are kept. Never
    /// called with a cell locked (this locks cells while holding `order`).
    fn kept_in(&self, at: Kept<K>) {
        let mut order = self.order.lock();
        order.push_back(at);
        while self.kept.load(Ordering::Relaxed) > KEPT || order.len() > 2 * KEPT {
            let Some(old) = order.pop_front() else {
                break;
            };
            let Some(batch) = old.batch.upgrade() else {
                continue;
            };
            let Some(cells) = batch
                .downcast_ref::<Batch<Compact<K>>>()
                .and_then(|b| b.shared.get())
                .and_then(|c| c.downcast_ref::<Cells<K>>())
            else {
                continue;
            };
            cells.cells[old.index][old.side as usize]
                .lock()
                .let_go(&cells.kept);
        }
    }

    /// The batch's cells, made by the first handler to ask.
    fn cells<'b>(&self, batch: &'b Batch<Compact<K>>) -> Option<&'b Cells<K>> {
        batch
            .shared
            .get_or_init(|| {
                let cells = (0..batch.notes.len())
                    .map(|_| [Mutex::new(Cell::Empty), Mutex::new(Cell::Empty)])
                    .collect();
                Box::new(Cells::<K> {
                    cells,
                    kept: self.kept.clone(),
                })
            })
            .downcast_ref::<Cells<K>>()
    }
}

/// A fresh typed copy of a cached object; `None` (logged) only if `K`'s decoding is not
/// deterministic, as every `Compact<K>` was checked to decode when it was built.
pub(crate) fn typed<K: DeserializeOwned>(obj: &Compact<K>) -> Option<Arc<K>> {
    logged(obj.to_typed()).map(Arc::new)
}

/// The handle's typed copy, decoding it if no holder has; `None`, logged, as [`typed`].
fn decoded<K: DeserializeOwned>(copy: &LazyTyped<K>) -> Option<Arc<K>> {
    logged(copy.try_typed().cloned())
}

fn logged<T>(decoded: Result<T, kcache_core::Error>) -> Option<T> {
    decoded
        .inspect_err(|e| tracing::error!("cached object does not decode any more: {e}"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notification::{set_delivering_batch, set_delivering_index, Notification};

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Thing {
        metadata: Meta,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Meta {
        name: String,
    }

    fn compact(name: &str) -> Arc<Compact<Thing>> {
        let json = serde_json::json!({"metadata": {"name": name}});
        Arc::new(serde_json::from_value(json).unwrap())
    }

    /// A batch of updates (`old` → `new` of each object), as a listener delivers it.
    fn batch(objs: &[Arc<Compact<Thing>>]) -> Arc<Batch<Compact<Thing>>> {
        let notes = objs
            .iter()
            .map(|o| {
                let update = Notification::Update {
                    old: o.clone(),
                    new: Arc::new(o.with_resource_version("2")),
                };
                (update, false)
            })
            .collect();
        Arc::new(Batch::new(notes, tokio::time::Instant::now()))
    }

    /// What `handlers` handlers get for note `index`'s new object of `batch`, in turn.
    fn deliver(
        copies: &TypedCopies<Thing>,
        batch: &Arc<Batch<Compact<Thing>>>,
        index: usize,
        handlers: usize,
    ) -> Vec<Arc<Thing>> {
        set_delivering_batch(Some(batch.clone()));
        set_delivering_index(index);
        let Notification::Update { new, .. } = &batch.notes[index].0 else {
            unreachable!()
        };
        let got = (0..handlers)
            .map(|_| copies.get(new, Side::New).unwrap())
            .collect();
        set_delivering_batch(None);
        got
    }

    #[test]
    fn handlers_share_one_copy_which_is_dropped_after_the_last() {
        let copies = TypedCopies::<Thing>::new();
        for _ in 0..3 {
            copies.handler_added();
        }
        let b = batch(&[compact("a"), compact("b")]);
        let got = deliver(&copies, &b, 0, 3);
        assert!(Arc::ptr_eq(&got[0], &got[1]) && Arc::ptr_eq(&got[0], &got[2]));
        assert_eq!(Arc::strong_count(&got[0]), 3, "the cell let its copy go");
        assert_eq!(copies.kept.load(Ordering::Relaxed), 0);
        // A fourth handler (one added meanwhile) decodes its own.
        let late = deliver(&copies, &b, 0, 1);
        assert!(!Arc::ptr_eq(&got[0], &late[0]));
        // The other note's copy is its own.
        let other = deliver(&copies, &b, 1, 1);
        assert_eq!(other[0].metadata.name, "b");
        assert_eq!(copies.kept.load(Ordering::Relaxed), 1);
        drop(b);
        assert_eq!(
            copies.kept.load(Ordering::Relaxed),
            0,
            "freed with the batch"
        );
    }

    #[test]
    fn at_most_kept_copies_wait_the_oldest_go_and_one_handler_keeps_none() {
        let copies = TypedCopies::<Thing>::new();
        copies.handler_added();
        let objs: Vec<_> = (0..KEPT + 10).map(|i| compact(&format!("o{i}"))).collect();
        let b = batch(&objs);
        deliver(&copies, &b, 0, 1);
        assert!(b.shared.get().is_none(), "one handler: no cells at all");

        copies.handler_added();
        // The first of two handlers runs ahead through the whole batch.
        let first: Vec<_> = (0..objs.len())
            .map(|i| deliver(&copies, &b, i, 1).remove(0))
            .collect();
        assert_eq!(copies.kept.load(Ordering::Relaxed), KEPT);
        // The second decodes the ten oldest itself (let go) and takes the others' copies.
        for (i, mine) in first.iter().enumerate() {
            let theirs = deliver(&copies, &b, i, 1).remove(0);
            assert_eq!(theirs.metadata.name, format!("o{i}"));
            assert_eq!(Arc::ptr_eq(mine, &theirs), i >= 10, "note {i}");
        }
        assert_eq!(copies.kept.load(Ordering::Relaxed), 0);
        assert!(copies.order.lock().len() <= 2 * KEPT);
    }

    #[test]
    fn a_batch_for_one_listener_keeps_nothing() {
        let copies = TypedCopies::<Thing>::new();
        copies.handler_added();
        copies.handler_added();
        let Notification::Update { new, .. } = &batch(&[compact("a")]).notes[0].0 else {
            unreachable!()
        };
        let add = Notification::Add {
            obj: new.clone(),
            is_in_initial_list: true,
        };
        let b = Arc::new(Batch::for_one_listener(
            vec![(add, false)],
            tokio::time::Instant::now(),
        ));
        set_delivering_batch(Some(b.clone()));
        set_delivering_index(0);
        assert_eq!(copies.get(new, Side::New).unwrap().metadata.name, "a");
        set_delivering_batch(None);
        assert_eq!(copies.kept.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn outside_a_delivery_each_read_decodes() {
        let copies = TypedCopies::<Thing>::new();
        copies.handler_added();
        copies.handler_added();
        let obj = compact("a");
        let a = copies.get(&obj, Side::New).unwrap();
        assert!(!Arc::ptr_eq(&a, &copies.get(&obj, Side::New).unwrap()));
    }
}
