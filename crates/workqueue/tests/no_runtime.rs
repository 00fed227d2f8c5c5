//! Delaying and rate-limiting queues in a program with threads and no tokio runtime: the timer
//! runs on a thread of its own. Waits are on conditions (a blocking get, a parked getter); the
//! only time assertions are lower bounds, which a loaded machine cannot break.

use std::thread;
use std::time::{Duration, Instant};

use kcache_workqueue::{
    default_controller_rate_limiter, DelayingQueue, PriorityQueue, Queue, QueueConfig,
    RateLimitingQueue,
};

const MS: Duration = Duration::from_millis(1);

fn no_runtime() {
    assert!(tokio::runtime::Handle::try_current().is_err());
}

#[test]
fn default_controller_rate_limited_queue_builds_and_retries_without_a_runtime() {
    no_runtime();
    let q = RateLimitingQueue::new(default_controller_rate_limiter());
    let start = Instant::now();
    q.add_rate_limited("a".to_string()); // 5ms
    q.add_rate_limited("a".to_string()); // 10ms; the earliest wins
    assert_eq!(q.num_requeues(&"a".to_string()), 2);
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.get_blocking().as_deref(), Some("a"));
    assert!(start.elapsed() >= 5 * MS, "{:?}", start.elapsed());
    q.done(&"a".to_string());
    q.shut_down();
    assert_eq!(q.get_blocking(), None);
}

#[test]
fn every_constructor_works_without_a_runtime() {
    no_runtime();
    let named = QueueConfig::named("no-runtime");
    let delaying: DelayingQueue<u32> = DelayingQueue::with_config(named);
    delaying.add_after(1, MS);
    assert_eq!(delaying.get_blocking(), Some(1));
    let wrapped = DelayingQueue::wrap(Queue::new());
    wrapped.add_after(2, Duration::ZERO);
    assert_eq!(wrapped.len(), 1, "a zero delay adds now");
    let _default: DelayingQueue<u32> = DelayingQueue::default();
    let _new: DelayingQueue<u32> = DelayingQueue::new();
}

#[test]
fn an_earlier_add_wakes_the_sleeping_timer_thread() {
    no_runtime();
    let q = DelayingQueue::new();
    q.add_after("late", Duration::from_secs(3600));
    let start = Instant::now();
    q.add_after("soon", 10 * MS);
    assert_eq!(q.get_blocking(), Some("soon"));
    assert!(start.elapsed() >= 10 * MS);
    assert_eq!(q.waiting_len(), 1, "the late one still waits");
}

#[test]
fn a_parked_getter_gets_a_delayed_item() {
    no_runtime();
    let q: DelayingQueue<&str> = DelayingQueue::new();
    let getter = {
        let q = q.clone();
        thread::spawn(move || q.get_blocking())
    };
    while q.waiting_getters() == 0 {
        thread::yield_now();
    }
    q.add_after("x", 5 * MS);
    assert_eq!(getter.join().unwrap(), Some("x"));
}

#[test]
fn shutdown_drops_waiting_items_and_stops_the_timer() {
    no_runtime();
    let q: DelayingQueue<&str> = DelayingQueue::new();
    q.add_after("x", Duration::from_secs(3600));
    assert_eq!(q.waiting_len(), 1);
    q.shut_down();
    assert_eq!(q.waiting_len(), 0);
    q.add_after("y", MS);
    assert_eq!(q.waiting_len(), 0, "dropped while shutting down");
    assert_eq!(q.get_blocking(), None);
}

#[test]
fn a_priority_queue_delays_with_priorities_on_the_timer_thread() {
    no_runtime();
    let q = RateLimitingQueue::wrap(PriorityQueue::default(), default_controller_rate_limiter());
    q.add_with_priority("low", -1);
    q.add_after_with_priority("high", 5 * MS, 10);
    // Wait for the delayed item (the condition), not for a time.
    while q.len() < 2 {
        thread::yield_now();
    }
    assert_eq!(q.get_blocking(), Some("high"));
    assert_eq!(q.get_blocking(), Some("low"));
}
