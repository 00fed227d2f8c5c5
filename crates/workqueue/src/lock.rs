//! Taking the crate's short-held locks without giving the core away.
//!
//! The engine's locks (the order of queued items and the dirty/processing shards) are held for a
//! few dozen nanoseconds. parking_lot's `lock` spins three short rounds and then calls
//! `sched_yield`; with more threads than cores (a producer and several workers on two cores) each
//! yield handed the core to another worker instead of letting the holder finish. [`lock`] polls
//! first. (The rate limiter's failure memory and the delaying queue's timer keep parking_lot's
//! `lock`: polling there measured no better.)

use parking_lot::{Mutex, MutexGuard};

/// How long [`lock`] polls a held lock before it leaves the wait to parking_lot, in
/// `spin_loop` hints. The engine's locks are held for a few dozen nanoseconds, but a getter that
/// pops an item nearly always finds its shard still locked by the producer that pushed it (the
/// push happens under the shard lock), and parking_lot's `lock` gives up after three short spins
/// and calls `sched_yield`: with more threads than cores that handed the core to another worker
/// and was most of the system calls of a slow run (`perf record -e syscalls:sys_enter_sched_yield`:
/// 58% from marking a popped item processing, 28% from the order lock).
const LOCK_SPINS: u32 = 200;

/// Takes `m`, polling it (reads only, so the holder keeps its cache line) for up to
/// [`LOCK_SPINS`] hints before waiting the way parking_lot does.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    let mut spins = 0;
    loop {
        if let Some(guard) = m.try_lock() {
            return guard;
        }
        if spins >= LOCK_SPINS {
            return m.lock();
        }
        while spins < LOCK_SPINS && m.is_locked() {
            spins += 1;
            std::hint::spin_loop();
        }
    }
}
