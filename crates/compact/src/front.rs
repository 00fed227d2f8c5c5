//! Per-thread front caches of the shared interning tables.
//!
//! Decoding repeats the same keys, values and small subtrees over and over (every ConfigMap's
//! `fieldsV1`, every pod's tolerations). A hit in a thread's own direct-mapped slots skips the
//! shared table's shard lock, its probe and the weak upgrade, on the thread that is decoding.
//! Each slot holds a strong reference, so a front keeps at most its slot count of values alive
//! per thread, until they are evicted.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::LocalKey;

use super::interner::Interner;

/// A thread's slots: a value's hash and the canonical value.
pub(crate) type Slots<T> = RefCell<Vec<Option<(u64, Arc<T>)>>>;

/// Empty slots, `n` a power of two.
pub(crate) fn slots<T: ?Sized>(n: usize) -> Slots<T> {
    debug_assert!(n.is_power_of_two());
    RefCell::new(vec![None; n])
}

/// The canonical value equal to `value` (`hash` is its hash, `eq` compares): from this thread's
/// `front` when a slot holds it, else from the shared `table` (which builds it with `make` if it
/// has none). Only values the table already held, i.e. shared ones, take a slot: a value seen
/// for the first time is most often unique (an object's name, uid, its own root and metadata,
/// which would hold its whole tree), and would only evict one that comes back (a key is seen
/// again in the next object, and found in the table the second time).
pub(crate) fn intern<T: ?Sized, V>(
    front: &'static LocalKey<Slots<T>>,
    table: &Interner<T>,
    hash: u64,
    value: V,
    eq: impl Fn(&T, &V) -> bool,
    make: impl FnOnce(V) -> Arc<T>,
) -> Arc<T> {
    front.with(|front| {
        let mut front = front.borrow_mut();
        let slot = (hash as usize) & (front.len() - 1);
        if let Some((h, hit)) = &front[slot] {
            if *h == hash && eq(hit, &value) {
                return hit.clone();
            }
        }
        let mut new = false;
        let interned = table.intern(hash, value, &eq, |value| {
            new = true;
            make(value)
        });
        if !new {
            front[slot] = Some((hash, interned.clone()));
        }
        interned
    })
}
