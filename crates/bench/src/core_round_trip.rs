//! How long a cache line takes to go from one core to another and back, measured by two threads
//! handing a counter to each other. On this project's 2-vCPU VMs it is either about 100 ns or
//! about 500 ns, as the host places the vCPUs, and it changes between runs: a queue that hands
//! each item from a producer's core to a worker's runs at the speed of that round trip, so the
//! `workqueue` scenario reports it beside its figures (see kcache-workqueue's engine docs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Hand-overs per measurement: a few tens of milliseconds at the slow placement.
const ROUNDS: u64 = 100_000;

/// The mean of [`ROUNDS`] round trips, in nanoseconds: the counter is odd while the
/// other thread's turn, even while ours. Each thread spins on the counter; with fewer than two
/// free cores the figure measures the scheduler instead (milliseconds).
pub fn nanos() -> f64 {
    let turn = Arc::new(AtomicU64::new(0));
    let other = {
        let turn = turn.clone();
        std::thread::spawn(move || {
            for i in 0..ROUNDS {
                while turn.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                turn.store(2 * i + 2, Ordering::Release);
            }
        })
    };
    let start = Instant::now();
    for i in 0..ROUNDS {
        turn.store(2 * i + 1, Ordering::Release);
        while turn.load(Ordering::Acquire) != 2 * i + 2 {
            std::hint::spin_loop();
        }
    }
    let nanos = start.elapsed().as_nanos() as f64 / ROUNDS as f64;
    other.join().expect("the round-trip thread");
    nanos
}
