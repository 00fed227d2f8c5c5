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

/// Which values a front remembers after a miss.
#[derive(Clone, Copy)]
pub(crate) enum Remember {
    /// Every value looked up (strings: a key is seen again in the next object).
    All,
    /// Only values the shared table already held, i.e. shared ones (containers: an object's own
    /// root and metadata are never seen again, and would hold its whole tree).
    Shared,
}

/// The canonical value equal to `value` (`hash` is its hash, `eq` compares): from this thread's
/// `front` when a slot holds it, else from the shared `table` (which builds it with `make` if it
/// has none), remembered in the slot as `remember` says.
pub(crate) fn intern<T: ?Sized, V>(
    front: &'static LocalKey<Slots<T>>,
    remember: Remember,
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
        if matches!(remember, Remember::All) || !new {
            front[slot] = Some((hash, interned.clone()));
        }
        interned
    })
}
