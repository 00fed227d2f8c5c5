//! Which interning tables a decode uses: one set of tables per core, each held by one decoder
//! at a time, for a whole object.
//!
//! Why not one set for the process: the values every object repeats (the key `metadata`, a
//! deployment's container list) are where decoding threads meet. Each decode takes and drops
//! references to the same few `Arc`s and locks the same table shards, and the cores pass those
//! cache lines back and forth. Two threads decoding 10,000 ConfigMaps (`Compact<ConfigMap>`,
//! medians of 5 fresh processes) took 47 ms of wall time and 61 ms of CPU with one shared set,
//! 36 ms and 43 ms with a set each (one thread alone: 61 ms and 57 ms of wall time).
//!
//! Why not one set per thread: every set keeps its own copy of each shared value, and tokio's
//! blocking pool, where kcache-transport decodes, spreads a list over several threads and starts
//! new ones over time (podsync's 100k pods kept 1,784 bytes per pod that way against 1,409 with
//! one set, and 1,463 with a set per core). One set per core bounds the copies to one per core.
//! A decoder tries the set it had last first (its tables are warm in that core's cache), then
//! any free one, and waits for its own only when every set is busy (more decoders than cores).
//! A thread holding a set never waits for another, so claims cannot deadlock.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use parking_lot::{Mutex, MutexGuard};

use super::interner::Interner;
use super::object::{hash_source, StringMap};
use super::value::{hash_items, hash_members, hash_str, CompactMap, CompactValue};

/// The tables of one set: equal values interned in one set are one `Arc`.
pub(crate) struct Tables {
    pub(crate) strings: Interner<str>,
    pub(crate) arrays: Interner<[CompactValue]>,
    pub(crate) objects: Interner<CompactMap>,
    /// Label and annotation maps, one per distinct interned map node.
    pub(crate) string_maps: Interner<StringMap>,
}

impl Tables {
    fn new() -> Self {
        Tables {
            strings: Interner::new(hash_str),
            arrays: Interner::new(hash_items),
            objects: Interner::new(hash_members),
            string_maps: Interner::new(|m| hash_source(&m.source)),
        }
    }
}

/// One set per core.
static SETS: LazyLock<Box<[Mutex<Tables>]>> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..cores).map(|_| Mutex::new(Tables::new())).collect()
});

/// Spreads threads' first choices over the sets.
static NEXT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The set this thread holds while it decodes an object ([`holding`]).
    static HELD: RefCell<Option<MutexGuard<'static, Tables>>> = const { RefCell::new(None) };
    /// The set this thread took last, tried first next time.
    static LAST: Cell<usize> = Cell::new(NEXT.fetch_add(1, Ordering::Relaxed));
}

/// Takes a set: the one this thread had last if free, else any free one, else waits for that
/// one.
fn claim() -> MutexGuard<'static, Tables> {
    let sets = &**SETS;
    let first = LAST.try_with(Cell::get).unwrap_or(0) % sets.len();
    let free = (0..sets.len())
        .map(|i| (first + i) % sets.len())
        .find_map(|i| Some((i, sets[i].try_lock()?)));
    let (taken, guard) = free.unwrap_or_else(|| (first, sets[first].lock()));
    let _ = LAST.try_with(|last| last.set(taken));
    guard
}

/// Runs `f` (the decode of one object) holding one set, so that every value it interns goes to
/// the same tables; a thread that holds one already keeps it.
pub(crate) fn holding<R>(f: impl FnOnce() -> R) -> R {
    if HELD
        .try_with(|held| held.borrow().is_some())
        .unwrap_or(true)
    {
        return f();
    }
    /// Lets the set go when `f` returns or unwinds.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            drop(HELD.try_with(|held| held.borrow_mut().take()));
        }
    }
    let guard = claim();
    let _ = HELD.try_with(|held| *held.borrow_mut() = Some(guard));
    let _release = Release;
    f()
}

/// `f` on the set this thread holds, or on a set taken for this call alone.
pub(crate) fn with<R>(f: impl FnOnce(&mut Tables) -> R) -> R {
    // A thread whose thread-locals are already destroyed (a value built in another
    // thread-local's destructor) takes a set for the call.
    if HELD.try_with(|_| ()).is_err() {
        return f(&mut claim());
    }
    HELD.with(|held| match held.borrow_mut().as_mut() {
        Some(tables) => f(tables),
        None => f(&mut claim()),
    })
}

/// Entries of every set, dead ones included (for tests of the growth bound).
#[cfg(test)]
pub(crate) fn entries() -> (usize, usize, usize) {
    SETS.iter().fold((0, 0, 0), |(s, a, o), set| {
        let t = set.lock();
        (
            s + t.strings.entries(),
            a + t.arrays.entries(),
            o + t.objects.entries(),
        )
    })
}

/// How many sets there are.
#[cfg(test)]
pub(crate) fn sets() -> usize {
    SETS.len()
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;
    use std::sync::{Arc, Barrier};

    use super::*;

    const TEXT: &str = r#"{"metadata":{"name":"a","labels":{"app":"web"}},"spec":{"x":[1,2]}}"#;

    fn decode() -> CompactValue {
        serde_json::from_str(TEXT).unwrap()
    }

    /// The interned key `metadata` of a decoded object.
    fn key(v: &CompactValue) -> Arc<str> {
        v.as_object().unwrap()[0].0.clone()
    }

    #[test]
    fn many_threads_keep_at_most_one_copy_per_set() {
        let threads = 4 * sets();
        let start = Barrier::new(threads);
        let keys: Vec<Arc<str>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        (0..200).map(|_| key(&decode())).collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut copies: Vec<*const u8> = keys.iter().map(|k| Arc::as_ptr(k) as *const u8).collect();
        copies.sort();
        copies.dedup();
        assert!(
            copies.len() <= sets(),
            "{} copies, {} sets",
            copies.len(),
            sets()
        );
        assert!(keys.iter().all(|k| &**k == "metadata"));
    }

    #[test]
    fn one_object_is_interned_in_one_set_and_a_held_set_stalls_no_other_decoder() {
        let (held_tx, held_rx) = channel();
        let (release_tx, release_rx) = channel::<()>();
        let holder = std::thread::spawn(move || {
            holding(|| {
                let (a, b) = (decode(), decode());
                held_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                assert!(
                    Arc::ptr_eq(&key(&a), &key(&b)),
                    "one set for the whole object"
                );
            })
        });
        held_rx.recv().unwrap();
        if sets() > 1 {
            // Another set is free: this decode does not wait for the holder.
            assert_eq!(decode(), decode());
        }
        release_tx.send(()).unwrap();
        holder.join().unwrap();
        assert_eq!(decode(), decode());
    }

    #[test]
    fn a_thread_whose_thread_locals_are_gone_still_decodes() {
        struct DecodesOnExit(std::sync::mpsc::Sender<CompactValue>);
        impl Drop for DecodesOnExit {
            fn drop(&mut self) {
                let _ = self.0.send(decode());
            }
        }
        thread_local! {
            static ON_EXIT: RefCell<Option<DecodesOnExit>> = const { RefCell::new(None) };
        }
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            // Thread-locals are destroyed in the reverse order of their first use (glibc's
            // `__cxa_thread_atexit_impl`): HELD goes first, then ON_EXIT decodes.
            ON_EXIT.with(|slot| *slot.borrow_mut() = Some(DecodesOnExit(tx)));
            let _ = decode();
        })
        .join()
        .unwrap();
        assert_eq!(rx.recv().unwrap(), decode());
    }
}
