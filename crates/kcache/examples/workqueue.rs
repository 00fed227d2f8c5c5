//! A controller-style workqueue: several workers process keys; some keys fail and are retried
//! with rate-limited backoff (up to 5 times, then dropped and forgotten); the queue is then shut
//! down with drain. Runs by itself in well under a few seconds.
//!
//! `cargo run --release --example workqueue`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kcache::workqueue::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimitingQueue,
};
use std::sync::Mutex;

const WORKERS: usize = 3;
const MAX_RETRIES: usize = 5;

#[derive(Default)]
struct Summary {
    succeeded: usize,
    retried: usize,
    dropped: Vec<String>,
    attempts: BTreeMap<String, usize>,
}

/// Pretend reconcile: keys ending in 3 always fail, keys ending in 7 fail twice then succeed.
fn reconcile(key: &str, attempt: usize) -> Result<(), String> {
    match key.chars().last() {
        Some('3') => Err("permanent error".into()),
        Some('7') if attempt < 3 => Err("transient error".into()),
        _ => Ok(()),
    }
}

#[tokio::main]
async fn main() {
    // client-go's default controller limiter, with a faster backoff so the demo is quick:
    // per-item 20ms doubling (20, 40, 80, 160, 320ms), overall 50 qps burst 20.
    let limiter = MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(20),
            Duration::from_secs(1),
        )),
        Box::new(BucketRateLimiter::new(50.0, 20).expect("a valid rate")),
    ]);
    let queue: RateLimitingQueue<String> = RateLimitingQueue::new(limiter);
    let summary = Arc::new(Mutex::new(Summary::default()));
    let start = Instant::now();

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let queue = queue.clone();
            let summary = summary.clone();
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    let attempt = {
                        let mut s = summary.lock().unwrap();
                        let n = s.attempts.entry(key.clone()).or_default();
                        *n += 1;
                        *n
                    };
                    tokio::time::sleep(Duration::from_millis(5)).await; // the "work"
                    match reconcile(&key, attempt) {
                        Ok(()) => {
                            queue.forget(&key);
                            summary.lock().unwrap().succeeded += 1;
                            println!("worker {w}: {key} ok (attempt {attempt})");
                        }
                        Err(e) if queue.num_requeues(&key) < MAX_RETRIES => {
                            let requeues = queue.num_requeues(&key) + 1;
                            println!(
                                "worker {w}: {key} failed ({e}); requeue #{requeues}, per-item backoff {:?}",
                                Duration::from_millis(20) * 2u32.pow(requeues as u32 - 1)
                            );
                            queue.add_rate_limited(key.clone());
                            summary.lock().unwrap().retried += 1;
                        }
                        Err(e) => {
                            println!("worker {w}: {key} failed ({e}); giving up after {MAX_RETRIES} retries");
                            queue.forget(&key);
                            summary.lock().unwrap().dropped.push(key.clone());
                        }
                    }
                    queue.done(&key);
                }
            })
        })
        .collect();

    for i in 0..20 {
        queue.add(format!("default/object-{i}"));
    }
    queue.add("default/object-0".into()); // collapsed: already queued

    // Wait until every key has either succeeded or been dropped, then drain.
    let finished = || {
        let s = summary.lock().unwrap();
        s.succeeded + s.dropped.len() == 20
    };
    while !finished() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    queue.shut_down_with_drain().await;
    for w in workers {
        w.await.expect("worker");
    }

    let s = summary.lock().unwrap();
    println!("---");
    println!(
        "{} keys in {:.2?} with {WORKERS} workers: {} succeeded, {} retries, {} dropped after {MAX_RETRIES} retries ({})",
        s.attempts.len(),
        start.elapsed(),
        s.succeeded,
        s.retried,
        s.dropped.len(),
        s.dropped.join(", ")
    );
}
