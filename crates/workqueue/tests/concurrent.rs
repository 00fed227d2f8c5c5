//! Seeded randomized stress with real threads: many producers, many workers (blocking and
//! async). Asserts that an item is never held by two workers at once and that every add is
//! followed by a processing of that item that starts after it (no lost adds, no lost wake-ups).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use kcache_workqueue::Queue;

const KEYS: usize = 64;

struct Tracker {
    clock: AtomicU64,
    held: Vec<AtomicBool>,
    last_add: Vec<AtomicU64>,
    last_start: Vec<AtomicU64>,
}

impl Tracker {
    fn new() -> Arc<Self> {
        Arc::new(Tracker {
            clock: AtomicU64::new(1),
            held: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            last_add: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            last_start: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
        })
    }
    /// An add, recorded unless shutdown may have dropped it (workers re-add during the drain).
    fn add(&self, q: &Queue<usize>, item: usize) {
        let t = self.clock.fetch_add(1, Ordering::SeqCst);
        if t.is_multiple_of(2) {
            q.add(item);
        } else {
            q.add_ref(&item);
        }
        if !q.shutting_down() {
            self.last_add[item].fetch_max(t, Ordering::SeqCst);
        }
    }
    fn start(&self, item: usize) {
        assert!(
            !self.held[item].swap(true, Ordering::SeqCst),
            "item {item} held by two workers"
        );
        let t = self.clock.fetch_add(1, Ordering::SeqCst);
        self.last_start[item].fetch_max(t, Ordering::SeqCst);
    }
    fn finish(&self, q: &Queue<usize>, item: usize) {
        self.held[item].store(false, Ordering::SeqCst);
        q.done(&item);
    }
    fn check(&self) {
        for k in 0..KEYS {
            let (a, s) = (
                self.last_add[k].load(Ordering::SeqCst),
                self.last_start[k].load(Ordering::SeqCst),
            );
            assert!(
                a == 0 || s > a,
                "item {k}: last add at {a}, last processing started at {s}"
            );
        }
    }
}

/// xorshift64*: deterministic per seed, no dependency.
fn rng(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn run(seed: u64, producers: usize, workers: usize, async_workers: usize, adds: usize) {
    let q = Queue::<usize>::new();
    let t = Tracker::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let async_handles: Vec<_> = (0..async_workers)
        .map(|w| {
            let (q, t) = (q.clone(), t.clone());
            runtime.spawn(async move {
                let mut next = rng(seed ^ (w as u64 + 1000));
                while let Some(item) = q.get().await {
                    t.start(item);
                    if next().is_multiple_of(4) {
                        t.add(&q, item); // re-add while processing
                    }
                    if next().is_multiple_of(3) {
                        tokio::task::yield_now().await;
                    }
                    t.finish(&q, item);
                }
            })
        })
        .collect();
    let worker_handles: Vec<_> = (0..workers)
        .map(|w| {
            let (q, t) = (q.clone(), t.clone());
            thread::spawn(move || {
                let mut next = rng(seed ^ (w as u64 + 1));
                while let Some(item) = q.get_blocking() {
                    t.start(item);
                    if next().is_multiple_of(4) {
                        t.add(&q, item);
                    }
                    if next().is_multiple_of(3) {
                        thread::yield_now();
                    }
                    t.finish(&q, item);
                }
            })
        })
        .collect();
    let producer_handles: Vec<_> = (0..producers)
        .map(|p| {
            let (q, t) = (q.clone(), t.clone());
            thread::spawn(move || {
                let mut next = rng(seed ^ (p as u64 + 500));
                for _ in 0..adds {
                    t.add(&q, next() as usize % KEYS);
                    if next().is_multiple_of(16) {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect();
    producer_handles.into_iter().for_each(|h| h.join().unwrap());
    // Every add has happened: drain, then stop the workers.
    while !q.is_empty() {
        thread::yield_now();
    }
    q.shut_down_with_drain_blocking();
    worker_handles.into_iter().for_each(|h| h.join().unwrap());
    runtime.block_on(async {
        for h in async_handles {
            h.await.unwrap();
        }
    });
    assert_eq!(q.len(), 0);
    t.check();
}

#[test]
fn blocking_workers_never_share_an_item_and_never_lose_an_add() {
    for seed in 1..=8 {
        run(seed, 4, 4, 0, 5_000);
    }
}

#[test]
fn mixed_async_and_blocking_workers() {
    for seed in 100..104 {
        run(seed, 3, 2, 3, 5_000);
    }
}

#[tokio::test]
async fn async_get_futures_are_send_for_borrowed_item_types() {
    let q = Queue::<&'static str>::new();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    let get = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    drain.await.unwrap();
    assert_eq!(get.await.unwrap(), None);
}

/// Waits (bounded) until `cond` holds; the bound only turns a hang into a failure.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !cond() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        thread::yield_now();
    }
}

/// The producer wakes one parked worker per burst; the woken worker passes the turn on while
/// items wait. Every parked worker must still get an item: each one holds its item until all
/// `WORKERS` items are held at once, which only happens if every worker was woken.
#[test]
fn a_burst_wakes_every_parked_worker() {
    const WORKERS: usize = 4;
    let q = Queue::<usize>::new();
    let holding = Arc::new(AtomicU64::new(0));
    for round in 0..20 {
        let handles: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (q, holding) = (q.clone(), holding.clone());
                thread::spawn(move || {
                    let item = q.get_blocking().expect("an item");
                    holding.fetch_add(1, Ordering::SeqCst);
                    wait_until("every worker holds an item", || {
                        holding.load(Ordering::SeqCst) >= (round + 1) * WORKERS as u64
                    });
                    q.done(&item);
                })
            })
            .collect();
        wait_until("every worker parked", || q.waiting_getters() == WORKERS);
        for i in 0..WORKERS {
            q.add(round as usize * WORKERS + i);
        }
        handles.into_iter().for_each(|h| h.join().unwrap());
    }
    assert!(q.is_empty());
}

/// Bursts of adds, each after every worker has parked, so every burst starts with the producer
/// waking a parked worker and the workers passing the turn on: every key added is processed
/// after its last add, and the queue ends empty.
#[test]
fn bursts_after_parking_lose_no_add() {
    for seed in 1..=4 {
        let workers = 1 + seed as usize % 4;
        let q = Queue::<usize>::new();
        let t = Tracker::new();
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (q, t) = (q.clone(), t.clone());
                thread::spawn(move || {
                    while let Some(item) = q.get_blocking() {
                        t.start(item);
                        t.finish(&q, item);
                    }
                })
            })
            .collect();
        let mut next = rng(seed);
        for _ in 0..200 {
            wait_until("every worker parked", || {
                q.waiting_getters() == workers && q.is_empty()
            });
            for _ in 0..next() % 50 {
                t.add(&q, next() as usize % KEYS);
            }
        }
        wait_until("the queue drained", || {
            q.waiting_getters() == workers && q.is_empty()
        });
        q.shut_down();
        handles.into_iter().for_each(|h| h.join().unwrap());
        t.check();
    }
}
