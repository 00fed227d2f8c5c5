//! The `workqueue` scenario (see the crate README): one producer calls `add` `adds` times on keys
//! `default/object-{i % keys}`; `workers` OS threads loop `get_blocking` → count → `forget` →
//! `done`; after the last add the producer shuts the queue down and waits for every worker to
//! see the shutdown (queued items are still handed out). The queue is a `RateLimitingQueue`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kcache_workqueue::{
    default_controller_rate_limiter, ItemExponentialFailureRateLimiter, RateLimitingQueue,
};
use serde_json::json;

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    /// Total adds.
    #[arg(long, default_value_t = 1_000_000)]
    adds: usize,
    /// Distinct keys.
    #[arg(long, default_value_t = 10_000)]
    keys: usize,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Use the default controller rate limiter (add_rate_limited is not used either way; this
    /// only changes what forget costs), as cgbench's -rate-limited.
    #[arg(long)]
    rate_limited: bool,
}

pub fn run(args: Args) {
    let keys: Vec<Arc<str>> = (0..args.keys.max(1))
        .map(|i| Arc::from(format!("default/object-{i}")))
        .collect();
    // No async runtime: the delaying queue's (idle) timer runs on a thread of its own.
    let queue: RateLimitingQueue<Arc<str>> = if args.rate_limited {
        RateLimitingQueue::new(default_controller_rate_limiter())
    } else {
        RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
            Duration::ZERO,
            Duration::ZERO,
        ))
    };
    let processed = Arc::new(AtomicU64::new(0));

    let start = Instant::now();
    let workers: Vec<_> = (0..args.workers)
        .map(|_| {
            let queue = queue.clone();
            let processed = processed.clone();
            std::thread::spawn(move || {
                while let Some(item) = queue.get_blocking() {
                    processed.fetch_add(1, Ordering::Relaxed);
                    queue.forget(&item);
                    queue.done(&item);
                }
            })
        })
        .collect();
    for i in 0..args.adds {
        queue.add_ref(&keys[i % keys.len()]);
    }
    queue.shut_down();
    for w in workers {
        w.join().expect("worker thread");
    }
    let seconds = start.elapsed().as_secs_f64();

    super::report::emit(
        "workqueue",
        json!({
            "adds": args.adds,
            "keys": args.keys,
            "workers": args.workers,
            "processed": processed.load(Ordering::Relaxed),
            "seconds": seconds,
            "adds_per_sec": args.adds as f64 / seconds,
        }),
    );
}
