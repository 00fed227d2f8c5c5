//! The `workqueue` scenario (see the crate README), in three modes. One producer makes `adds`
//! adds on keys `default/object-{i % keys}`; `workers` OS threads loop `get_blocking` → count →
//! `forget` → `done`. The queue is a `RateLimitingQueue` in every mode.
//!
//! - `plain`: `add`; after the last add the producer shuts the queue down and waits for every
//!   worker to see the shutdown (queued items are still handed out).
//! - `delaying`: `add_after` with delays cycling over 0, 100 µs, …, 1 ms (add `i` waits
//!   `(i % 11) × 100 µs`).
//! - `rate-limited`: `add_rate_limited` through an `ItemExponentialFailureRateLimiter` of 100 µs
//!   doubling up to 1 ms; the workers' `forget` resets a key's backoff.
//!
//! In the two delayed modes, after its last add the producer adds a sentinel key with a delay of
//! 1 ms + 1 µs, so it is ready strictly after every other add; the timer moves ready items into
//! the queue in ready-time order, so once a worker got the sentinel every add is in the queue (or
//! was processed), and the producer shuts down as in `plain`. The sentinel is not counted.
//! client-go's side is `bench/clientgo-workqueue` (the same three modes).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use kcache_workqueue::{
    default_controller_rate_limiter, ItemExponentialFailureRateLimiter, RateLimitingQueue,
};
use serde_json::json;

/// The delaying mode's delays: `(i % DELAY_STEPS) × DELAY_STEP`.
const DELAY_STEPS: usize = 11;
const DELAY_STEP: Duration = Duration::from_micros(100);
/// The rate-limited mode's limiter: `LIMITER_BASE` doubling per failure up to `LIMITER_MAX`.
const LIMITER_BASE: Duration = Duration::from_micros(100);
const LIMITER_MAX: Duration = Duration::from_millis(1);
/// Ready strictly after every other delayed add (delays are at most `LIMITER_MAX`).
const SENTINEL_DELAY: Duration = Duration::from_micros(1001);
const SENTINEL: &str = "sentinel";

/// What the producer calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// `add`.
    Plain,
    /// `add_after` with delays cycling over 0–1 ms.
    Delaying,
    /// `add_rate_limited` (100 µs doubling up to 1 ms).
    RateLimited,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Delaying => "delaying",
            Mode::RateLimited => "rate-limited",
        }
    }
}

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
    /// What the producer calls: add, add_after or add_rate_limited.
    #[arg(long, value_enum, default_value_t = Mode::Plain)]
    mode: Mode,
    /// Plain mode: use the default controller rate limiter (add_rate_limited is not used; this
    /// only changes what forget costs), as cgbench's -rate-limited.
    #[arg(long)]
    rate_limited: bool,
}

pub fn run(args: Args) {
    let keys: Vec<Arc<str>> = (0..args.keys.max(1))
        .map(|i| Arc::from(format!("default/object-{i}")))
        .collect();
    let sentinel: Arc<str> = Arc::from(SENTINEL);
    // No async runtime: the delaying queue's timer runs on a thread of its own.
    let queue: RateLimitingQueue<Arc<str>> = match args.mode {
        Mode::Plain if args.rate_limited => {
            RateLimitingQueue::new(default_controller_rate_limiter())
        }
        Mode::Plain | Mode::Delaying => RateLimitingQueue::new(
            ItemExponentialFailureRateLimiter::new(Duration::ZERO, Duration::ZERO),
        ),
        Mode::RateLimited => RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
            LIMITER_BASE,
            LIMITER_MAX,
        )),
    };
    // Before the clock: what one hand-over between two cores costs on this run's placement.
    let core_round_trip_ns = super::core_round_trip::nanos();
    let processed = Arc::new(AtomicU64::new(0));
    let (sentinel_seen, sentinel_got) = mpsc::channel::<()>();

    let start = Instant::now();
    let workers: Vec<_> = (0..args.workers)
        .map(|_| {
            let queue = queue.clone();
            let processed = processed.clone();
            let sentinel = sentinel.clone();
            let sentinel_seen = sentinel_seen.clone();
            std::thread::spawn(move || {
                while let Some(item) = queue.get_blocking() {
                    if item == sentinel {
                        let _ = sentinel_seen.send(());
                    } else {
                        processed.fetch_add(1, Ordering::Relaxed);
                    }
                    queue.forget(&item);
                    queue.done(&item);
                }
            })
        })
        .collect();
    drop(sentinel_seen);
    match args.mode {
        Mode::Plain => {
            for i in 0..args.adds {
                queue.add_ref(&keys[i % keys.len()]);
            }
        }
        Mode::Delaying => {
            for i in 0..args.adds {
                let delay = DELAY_STEP * (i % DELAY_STEPS) as u32;
                queue.add_after(keys[i % keys.len()].clone(), delay);
            }
        }
        Mode::RateLimited => {
            for i in 0..args.adds {
                queue.add_rate_limited(keys[i % keys.len()].clone());
            }
        }
    }
    if args.mode != Mode::Plain && args.workers > 0 {
        queue.add_after(sentinel, SENTINEL_DELAY);
        // Err only if every worker ended, which they do only after shutdown.
        let _ = sentinel_got.recv();
    }
    queue.shut_down();
    for w in workers {
        w.join().expect("worker thread");
    }
    let seconds = start.elapsed().as_secs_f64();

    super::report::emit(
        "workqueue",
        json!({
            "mode": args.mode.name(),
            "adds": args.adds,
            "keys": args.keys,
            "workers": args.workers,
            "processed": processed.load(Ordering::Relaxed),
            "seconds": seconds,
            "adds_per_sec": args.adds as f64 / seconds,
            "core_round_trip_ns": core_round_trip_ns,
        }),
    );
}
