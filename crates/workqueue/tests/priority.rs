//! The priority queue extension (controller-runtime's priority queue).

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use kcache_workqueue::{
    DelayingQueue, ItemExponentialFailureRateLimiter, PriorityQueue, RateLimitingQueue,
};
use tokio::time::advance;

#[test]
fn higher_priority_first_fifo_within_a_priority() {
    let q = PriorityQueue::default();
    q.add_with_priority("low-1", -1);
    q.add("zero-1");
    q.add_with_priority("high-1", 10);
    q.add("zero-2");
    q.add_with_priority("high-2", 10);
    q.add_with_priority("low-2", -1);
    let order: Vec<_> = (0..6).map(|_| q.get_blocking().unwrap()).collect();
    assert_eq!(
        order,
        ["high-1", "high-2", "zero-1", "zero-2", "low-1", "low-2"]
    );
}

#[test]
fn re_adding_with_a_higher_priority_raises_a_lower_one_does_not() {
    let q = PriorityQueue::default();
    q.add("a");
    q.add("b");
    q.add("c");
    q.add_with_priority("c", 5); // raised
    q.add_with_priority("a", -5); // not lowered
    assert_eq!(q.len(), 3, "still deduplicated");
    assert_eq!(q.get_blocking(), Some("c"));
    assert_eq!(q.get_blocking(), Some("a"));
    assert_eq!(q.get_blocking(), Some("b"));
}

#[test]
fn raised_items_keep_their_first_add_order_within_the_new_priority() {
    let q = PriorityQueue::default();
    q.add("first");
    q.add_with_priority("second", 1);
    q.add_with_priority("first", 1);
    assert_eq!(q.get_blocking(), Some("first"));
    assert_eq!(q.get_blocking(), Some("second"));
}

#[test]
fn dirty_processing_rules_apply() {
    let q = PriorityQueue::default();
    q.add("x");
    let x = q.get_blocking().unwrap();
    q.add_with_priority("x", 1);
    q.add_with_priority("x", 7);
    assert_eq!(q.len(), 0, "not queued while processing");
    q.add_with_priority("y", 3);
    q.done(&x);
    assert_eq!(q.len(), 2);
    assert_eq!(
        q.get_blocking(),
        Some("x"),
        "re-queued with the highest priority added"
    );
    assert_eq!(q.get_blocking(), Some("y"));
}

#[test]
fn one_worker_at_a_time_and_shutdown() {
    let q = PriorityQueue::default();
    q.add(1);
    let i = q.get_blocking().unwrap();
    q.add(1);
    let (tx, rx) = mpsc::channel();
    let worker = {
        let q = q.clone();
        thread::spawn(move || {
            while let Some(i) = q.get_blocking() {
                tx.send(i).unwrap();
                q.done(&i);
            }
        })
    };
    while q.waiting_getters() == 0 {
        thread::yield_now();
    }
    assert!(rx.try_recv().is_err(), "1 is processing: the worker parked");
    q.done(&i);
    assert_eq!(rx.recv().unwrap(), 1);
    q.shut_down();
    worker.join().unwrap();
}

#[tokio::test]
async fn async_get_and_drain() {
    let q = PriorityQueue::default();
    q.add_with_priority("b", 1);
    q.add_with_priority("a", 2);
    let a = q.get().await.unwrap();
    assert_eq!(a, "a");
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    assert!(q.shutting_down());
    assert_eq!(q.get().await, Some("b"));
    q.done(&a);
    q.done(&"b");
    drain.await.unwrap();
    assert_eq!(q.get().await, None);
}

/// Lets the delaying queue's timer task run after time moved.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn a_delayed_item_keeps_its_priority() {
    let q = DelayingQueue::wrap(PriorityQueue::default());
    q.add_after_with_priority("urgent", 10 * MS, 5);
    q.add_with_priority("low", -1);
    q.add("normal");
    assert_eq!(q.waiting_len(), 1);
    advance(10 * MS).await;
    settle().await;
    assert_eq!(q.len(), 3);
    let order: Vec<_> = (0..3).map(|_| q.get_blocking().unwrap()).collect();
    assert_eq!(order, ["urgent", "normal", "low"]);
}

#[tokio::test(start_paused = true)]
async fn re_adding_a_waiting_item_raises_it_and_keeps_the_earliest_time() {
    // controller-runtime: "it will use the max of the passed priorities and the min of possible
    // durations".
    let q = DelayingQueue::wrap(PriorityQueue::default());
    q.add_after_with_priority("a", 10 * MS, 0);
    q.add_after_with_priority("a", 50 * MS, 3); // higher: raised; later: ignored
    q.add_after_with_priority("a", 5 * MS, -7); // earlier: moved; lower: ignored
    assert_eq!(q.waiting_len(), 1);
    q.add_with_priority("b", 1);
    advance(5 * MS).await;
    settle().await;
    assert_eq!(q.waiting_len(), 0, "fired at the earliest time");
    assert_eq!(q.get().await, Some("a"), "with the highest priority");
    assert_eq!(q.get().await, Some("b"));
}

#[tokio::test(start_paused = true)]
async fn a_delayed_add_raises_the_same_item_already_queued() {
    let q = DelayingQueue::wrap(PriorityQueue::default());
    q.add_with_priority("x", -1);
    q.add("y");
    q.add_after_with_priority("x", 5 * MS, 9);
    advance(5 * MS).await;
    settle().await;
    assert_eq!(q.len(), 2, "still deduplicated");
    assert_eq!(q.get().await, Some("x"), "raised when the wait fired");
    assert_eq!(q.get().await, Some("y"));
}

#[tokio::test(start_paused = true)]
async fn rate_limited_priority_queue() {
    let q = RateLimitingQueue::wrap(
        PriorityQueue::default(),
        ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1)),
    );
    q.add_with_priority("background", -100);
    q.add_rate_limited_with_priority("retry", 0); // waits 1ms
    q.add_rate_limited_with_priority("retry", 0); // waits 2ms: the earliest (1ms) wins
    assert_eq!(q.num_requeues(&"retry"), 2);
    let start = tokio::time::Instant::now();
    assert_eq!(q.get().await, Some("background"), "the only ready item");
    let retry = q.get().await;
    assert_eq!(retry, Some("retry"));
    assert_eq!(start.elapsed(), MS, "paused time jumped to the retry");
    q.add_rate_limited_with_priority("background", -100);
    q.add_rate_limited_with_priority("other", 1);
    q.done(&"background");
    q.done(&"retry");
    advance(4 * MS).await;
    settle().await;
    assert_eq!(q.get().await, Some("other"));
    assert_eq!(q.get().await, Some("background"));
}
