//! The workqueue alone, in a program with plain threads and no async runtime: a producer thread
//! adds keys, worker threads process them with `get_guarded_blocking` (the guard calls `done`,
//! also when a worker returns early), failures are retried with client-go's default controller
//! rate limiter up to 5 times, a key asks to be looked at again later with `add_after`, and the
//! queue is shut down with drain. The delaying timer runs on a thread of its own.
//!
//! `cargo run --example workqueue-threads`

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use kcache::workqueue::{default_controller_rate_limiter, RateLimitingQueue};

/// Retries before a key is dropped (client-go's workqueue example uses 5).
pub const MAX_RETRIES: usize = 5;
/// Keys the producer adds.
pub const KEYS: usize = 10;
/// How long `default/object-5` waits before it is looked at again.
pub const RECHECK_AFTER: Duration = Duration::from_millis(30);

/// What the workers did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Keys reconciled successfully.
    pub synced: BTreeSet<String>,
    /// Attempts per key.
    pub attempts: BTreeMap<String, usize>,
    /// Keys dropped after `MAX_RETRIES` retries.
    pub dropped: BTreeSet<String>,
    /// Keys processed again after `add_after`.
    pub rechecked: BTreeSet<String>,
}

/// What a worker tells the main thread.
enum Event {
    Attempt(String),
    Synced(String),
    Dropped(String),
    Rechecked(String),
}

/// Pretend reconcile: keys ending in 3 always fail, keys ending in 7 fail twice.
fn reconcile(key: &str, attempt: usize) -> Result<(), String> {
    match key.chars().last() {
        Some('3') => Err("permanent error".into()),
        Some('7') if attempt < 3 => Err("transient error".into()),
        _ => Ok(()),
    }
}

/// One worker: take keys until the queue is shut down and drained. `asked` holds the keys that
/// already asked to be looked at again.
fn worker(
    id: usize,
    queue: RateLimitingQueue<String>,
    asked: Arc<Mutex<BTreeSet<String>>>,
    events: mpsc::Sender<Event>,
) {
    while let Some(key) = queue.get_guarded_blocking() {
        // `key` derefs to the item; dropping it at the end of the loop body calls `done`.
        let attempt = queue.num_requeues(&key) + 1;
        let _ = events.send(Event::Attempt(key.to_string()));
        match reconcile(&key, attempt) {
            Ok(()) => {
                queue.forget(&key);
                let recheck = key.ends_with('5');
                let first = recheck && asked.lock().unwrap().insert(key.to_string());
                if first {
                    println!("worker {id}: {} ok; look again in {RECHECK_AFTER:?}", *key);
                    queue.add_after(key.to_string(), RECHECK_AFTER);
                } else {
                    println!("worker {id}: {} ok (attempt {attempt})", *key);
                }
                let event = if recheck && !first {
                    Event::Rechecked(key.to_string())
                } else {
                    Event::Synced(key.to_string())
                };
                let _ = events.send(event);
            }
            Err(e) if queue.num_requeues(&key) < MAX_RETRIES => {
                println!("worker {id}: {} failed ({e}); retry {attempt}", *key);
                queue.add_rate_limited(key.to_string());
            }
            Err(e) => {
                println!(
                    "worker {id}: {} failed ({e}); dropped after {MAX_RETRIES} retries",
                    *key
                );
                queue.forget(&key);
                let _ = events.send(Event::Dropped(key.to_string()));
            }
        }
    }
}

/// Runs the producer and `workers` worker threads until every key reached its end state.
pub fn run(workers: usize) -> Summary {
    // The constructor that needed a tokio runtime before: here there is none.
    let queue: RateLimitingQueue<String> =
        RateLimitingQueue::new(default_controller_rate_limiter());
    let (tx, rx) = mpsc::channel();
    let asked = Arc::new(Mutex::new(BTreeSet::new()));
    let handles: Vec<_> = (0..workers)
        .map(|id| {
            let (queue, asked, tx) = (queue.clone(), asked.clone(), tx.clone());
            thread::spawn(move || worker(id, queue, asked, tx))
        })
        .collect();
    drop(tx);
    let producer = {
        let queue = queue.clone();
        thread::spawn(move || {
            for i in 0..KEYS {
                queue.add(format!("default/object-{i}"));
            }
            queue.add("default/object-0".to_string()); // collapsed if still queued
        })
    };
    producer.join().expect("producer");

    let mut summary = Summary::default();
    let finished =
        |s: &Summary| s.synced.len() + s.dropped.len() == KEYS && !s.rechecked.is_empty();
    while !finished(&summary) {
        // A liveness guard only: every key is done within a second.
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Event::Attempt(k)) => *summary.attempts.entry(k).or_default() += 1,
            Ok(Event::Synced(k)) => {
                summary.synced.insert(k);
            }
            Ok(Event::Dropped(k)) => {
                summary.dropped.insert(k);
            }
            Ok(Event::Rechecked(k)) => {
                summary.rechecked.insert(k);
            }
            Err(e) => {
                eprintln!("workers stopped reporting: {e}");
                break;
            }
        }
    }
    queue.shut_down_with_drain_blocking();
    for h in handles {
        h.join().expect("worker");
    }
    summary
}

fn main() {
    let s = run(3);
    println!("---");
    println!(
        "{} keys with 3 threads and no async runtime: {} synced, {} dropped ({:?}), {} rechecked after add_after, {} attempts",
        KEYS,
        s.synced.len(),
        s.dropped.len(),
        s.dropped,
        s.rechecked.len(),
        s.attempts.values().sum::<usize>()
    );
}
