//! Typed copies of the objects being delivered, shared by a compact informer's typed handlers:
//! the first handler to reach a notification makes its objects' [`LazyTyped`] handles, the others
//! take the same handles, so an event costs at most one decode per object it carries, not one
//! per handler. A typed handler decodes at once (under the cell's lock, so the others wait for
//! its copy rather than decode their own); a lazy handler only when it reads `K`.
//!
//! The informer tells each handler which batch and place a notification comes from
//! ([`Delivery`](crate::Delivery)); the copies are kept in cells per batch ([`Cells`]), one per
//! object of each notification, made by the first handler to reach the batch and found by the
//! others through [`TypedCopies`] (each handler remembers the batch it is in, its [`Cursor`], so
//! only a new batch costs a look-up under the shared lock). A copy is dropped when every typed
//! handler has taken it; the cells, with any copy left (a handler that skipped the notification:
//! a resync not meant for it, a removed one), go when the batch is gone — noticed when the next
//! batch's cells are made — and the handlers that delivered from it have moved on.
//! A batch only one handler gets (a late handler's initial adds) shares nothing.
//! Handlers run apart in time (each drains its own buffer), so copies made by the first handler
//! wait for the last: at most [`KEPT`] copies per informer are kept at once; past that the
//! oldest is let go (a handler that far behind makes its own), so the copies kept are the
//! ones most handlers are still to take. With one handler nothing is kept.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use kcache_compact::Compact;
use parking_lot::{MappedMutexGuard, Mutex, MutexGuard};
use serde::de::DeserializeOwned;

use super::lazy::LazyTyped;
use crate::DeliveryBatch;

/// The most typed copies an informer keeps waiting for its other handlers (a few batches).
const KEPT: usize = 2048;

/// Which object of a notification: an add's or delete's object, or an update's old or new.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Old = 0,
    New = 1,
}

/// Where the object being handed sits: its notification's batch and place in it.
pub(crate) type At<'a> = (&'a Arc<DeliveryBatch>, usize);

/// A batch (noticed gone through its `Weak`) and its cells.
type BatchCells<K> = (Weak<DeliveryBatch>, Arc<Cells<K>>);

/// The shared typed copies of one informer's typed handlers.
pub(crate) struct TypedCopies<K> {
    handlers: AtomicUsize,
    /// Copies kept in the cells this value made, bounded by [`KEPT`].
    kept: Arc<AtomicUsize>,
    /// The cells of the batches handlers deliver from, with their batch (gone ones are
    /// dropped when a new batch's cells are made).
    batches: Mutex<Vec<BatchCells<K>>>,
    /// The cells given a copy, oldest first (some since taken or gone with their batch).
    order: Mutex<VecDeque<Kept<K>>>,
}

/// Where a copy was kept: notification `index` of a batch's `cells`, `side`.
struct Kept<K> {
    cells: Weak<Cells<K>>,
    index: usize,
    side: Side,
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

/// The batch one typed handler delivers from and its cells: the handler's own, so finding a
/// notification's cell takes no lock another handler takes.
pub(crate) struct Cursor<K> {
    current: Mutex<Option<BatchCells<K>>>,
}

impl<K> Cursor<K> {
    pub(crate) fn new() -> Self {
        Cursor {
            current: Mutex::new(None),
        }
    }
}

impl<K: DeserializeOwned + Send + Sync + 'static> TypedCopies<K> {
    pub(crate) fn new() -> Self {
        TypedCopies {
            handlers: AtomicUsize::new(0),
            kept: Arc::new(AtomicUsize::new(0)),
            batches: Mutex::new(Vec::new()),
            order: Mutex::new(VecDeque::new()),
        }
    }

    pub(crate) fn handler_added(&self) {
        self.handlers.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn handler_removed(&self) {
        self.handlers.fetch_sub(1, Ordering::Relaxed);
    }

    /// The typed copy of `obj`, the `side` object of the notification `at` (shared with the
    /// other handlers); `None`, logged, only if `K`'s decoding is not deterministic.
    pub(crate) fn get(
        &self,
        cursor: &Cursor<K>,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
    ) -> Option<Arc<K>> {
        match self.shared(cursor, obj, side, at, true) {
            Some(copy) => decoded(&copy),
            // Nobody to share with: no handle around the copy.
            None => typed(obj),
        }
    }

    /// The lazy handle of `obj`, the `side` object of the notification `at` (shared with the
    /// other handlers, decoded or not).
    pub(crate) fn get_lazy(
        &self,
        cursor: &Cursor<K>,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
    ) -> Arc<LazyTyped<K>> {
        self.shared(cursor, obj, side, at, false)
            .unwrap_or_else(|| Arc::new(LazyTyped::new(obj.clone())))
    }

    /// The handle of `obj` shared with the other handlers, `None` where there is none to share
    /// (one handler, outside a delivery, a batch for one handler, a copy already let go); with
    /// `decode`, a copy kept for the other handlers is decoded before they may take it.
    fn shared(
        &self,
        cursor: &Cursor<K>,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
        decode: bool,
    ) -> Option<Arc<LazyTyped<K>>> {
        let handlers = self.handlers.load(Ordering::Relaxed);
        let (batch, index) = at?;
        if handlers <= 1 || !batch.is_shared() || index >= batch.len() {
            return None;
        }
        let cells = self.cells(cursor, batch);
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
            let kept = Kept {
                cells: Arc::downgrade(&*cells),
                index,
                side,
            };
            drop(cells);
            self.kept_in(kept);
        }
        Some(copy)
    }

    /// The cells of `batch`, as the handler's `cursor` holds them (locked: the cursor is the
    /// handler's own), made by the first handler to reach the batch.
    fn cells<'c>(
        &self,
        cursor: &'c Cursor<K>,
        batch: &Arc<DeliveryBatch>,
    ) -> MappedMutexGuard<'c, Arc<Cells<K>>> {
        let mut current = cursor.current.lock();
        let same =
            matches!(&*current, Some((b, _)) if std::ptr::eq(b.as_ptr(), Arc::as_ptr(batch)));
        if !same {
            *current = Some((Arc::downgrade(batch), self.cells_of(batch)));
        }
        MutexGuard::map(current, |c| match c {
            Some((_, cells)) => cells,
            None => unreachable!("set above"),
        })
    }

    /// The cells of `batch`, made if no handler has yet; drops those of batches gone.
    fn cells_of(&self, batch: &Arc<DeliveryBatch>) -> Arc<Cells<K>> {
        let mut batches = self.batches.lock();
        let found = batches
            .iter()
            .find(|(b, _)| std::ptr::eq(b.as_ptr(), Arc::as_ptr(batch)));
        if let Some((_, cells)) = found {
            return cells.clone();
        }
        batches.retain(|(b, _)| b.strong_count() > 0);
        let cells = Arc::new(Cells {
            cells: (0..batch.len())
                .map(|_| [Mutex::new(Cell::Empty), Mutex::new(Cell::Empty)])
                .collect(),
            kept: self.kept.clone(),
        });
        batches.push((Arc::downgrade(batch), cells.clone()));
        cells
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
            if let Some(cells) = old.cells.upgrade() {
                cells.cells[old.index][old.side as usize]
                    .lock()
                    .let_go(&cells.kept);
            }
        }
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
    use crate::delivery::Notification;
    use crate::notification::Batch;

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
    fn batch(objs: &[Arc<Compact<Thing>>]) -> Batch<Compact<Thing>> {
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
        Batch::new(notes, tokio::time::Instant::now())
    }

    fn new_of(batch: &Batch<Compact<Thing>>, index: usize) -> &Arc<Compact<Thing>> {
        let Notification::Update { new, .. } = &batch.notes[index].0 else {
            unreachable!()
        };
        new
    }

    /// What `handlers` handlers (each with its cursor) get for note `index`'s new object of
    /// `batch`.
    fn deliver(
        copies: &TypedCopies<Thing>,
        cursors: &[Cursor<Thing>],
        batch: &Batch<Compact<Thing>>,
        index: usize,
    ) -> Vec<Arc<Thing>> {
        let at = Some((&batch.seen_as, index));
        cursors
            .iter()
            .map(|c| copies.get(c, new_of(batch, index), Side::New, at).unwrap())
            .collect()
    }

    fn cursors(n: usize) -> Vec<Cursor<Thing>> {
        (0..n).map(|_| Cursor::new()).collect()
    }

    #[test]
    fn handlers_share_one_copy_which_is_dropped_after_the_last() {
        let copies = TypedCopies::<Thing>::new();
        for _ in 0..3 {
            copies.handler_added();
        }
        let handlers = cursors(3);
        let b = batch(&[compact("a"), compact("b")]);
        let got = deliver(&copies, &handlers, &b, 0);
        assert!(Arc::ptr_eq(&got[0], &got[1]) && Arc::ptr_eq(&got[0], &got[2]));
        assert_eq!(Arc::strong_count(&got[0]), 3, "the cell let its copy go");
        assert_eq!(copies.kept.load(Ordering::Relaxed), 0);
        // A fourth handler (one added meanwhile) decodes its own.
        let late = deliver(&copies, &handlers[..1], &b, 0);
        assert!(!Arc::ptr_eq(&got[0], &late[0]));
        // The other note's copy is its own.
        let other = deliver(&copies, &handlers[..1], &b, 1);
        assert_eq!(other[0].metadata.name, "b");
        assert_eq!(copies.kept.load(Ordering::Relaxed), 1);
        // The batch goes; its cells go when the next batch's are made and every handler that
        // delivered from it has moved on.
        drop(b);
        let next = batch(&[compact("c")]);
        deliver(&copies, &handlers, &next, 0);
        assert_eq!(
            copies.kept.load(Ordering::Relaxed),
            0,
            "freed with the batch"
        );
        assert_eq!(copies.batches.lock().len(), 1);
    }

    #[test]
    fn at_most_kept_copies_wait_the_oldest_go_and_one_handler_keeps_none() {
        let copies = TypedCopies::<Thing>::new();
        copies.handler_added();
        let handlers = cursors(2);
        let objs: Vec<_> = (0..KEPT + 10).map(|i| compact(&format!("o{i}"))).collect();
        let b = batch(&objs);
        deliver(&copies, &handlers[..1], &b, 0);
        assert!(
            copies.batches.lock().is_empty(),
            "one handler: no cells at all"
        );

        copies.handler_added();
        // The first of two handlers runs ahead through the whole batch.
        let first: Vec<_> = (0..objs.len())
            .map(|i| deliver(&copies, &handlers[..1], &b, i).remove(0))
            .collect();
        assert_eq!(copies.kept.load(Ordering::Relaxed), KEPT);
        // The second decodes the ten oldest itself (let go) and takes the others' copies.
        for (i, mine) in first.iter().enumerate() {
            let theirs = deliver(&copies, &handlers[1..], &b, i).remove(0);
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
        let obj = compact("a");
        let add = Notification::Add {
            obj: obj.clone(),
            is_in_initial_list: true,
        };
        let b = Batch::for_one_listener(vec![(add, false)], tokio::time::Instant::now());
        let got = copies.get(&Cursor::new(), &obj, Side::New, Some((&b.seen_as, 0)));
        assert_eq!(got.unwrap().metadata.name, "a");
        assert_eq!(copies.kept.load(Ordering::Relaxed), 0);
        assert!(copies.batches.lock().is_empty());
    }

    #[test]
    fn outside_a_delivery_each_read_decodes() {
        let copies = TypedCopies::<Thing>::new();
        copies.handler_added();
        copies.handler_added();
        let (obj, cursor) = (compact("a"), Cursor::new());
        let a = copies.get(&cursor, &obj, Side::New, None).unwrap();
        assert!(!Arc::ptr_eq(
            &a,
            &copies.get(&cursor, &obj, Side::New, None).unwrap()
        ));
    }
}
